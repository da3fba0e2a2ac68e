//! The study's executor in the binary: each run is one `engine::run_client` against
//! the given server or an embedded loopback server. For tests of the binary itself,
//! `DUALPERF_STUDY_FAKE=1` swaps in the study crate's fake executor (deterministic
//! results, each run sleeping its duration in real time, capped at 2 s).

use super::{connect_timeout, journal::TARGET_KEY, version_and_revision, StudyArgs};
use anyhow::bail;
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use study::{Attempt, Cell, Executor, RunOutput, Sample, Slot, StudySpec};
use wire::spec::Family;

/// Environment switch for the fake executor (tests of the binary).
pub const FAKE_ENV: &str = "DUALPERF_STUDY_FAKE";

pub enum Exec {
    Engine(EngineExec),
    Fake(study::fake::FakeExecutor),
}

pub struct EngineExec {
    /// `None`: the embedded server, reached at 127.0.0.1 / ::1.
    host: Option<String>,
    port: u16,
    connect_timeout: Duration,
    _server: Option<engine::EmbeddedServer>,
    /// Client metadata per family, captured once (the engine would otherwise capture
    /// it on every run).
    client_info: BTreeMap<Family, BTreeMap<String, String>>,
}

/// The executor for these arguments; starts the embedded server when there is no host.
pub fn open(args: &StudyArgs, spec: &StudySpec) -> anyhow::Result<Exec> {
    if std::env::var_os(FAKE_ENV).is_some_and(|v| v == "1") {
        return Ok(Exec::Fake(study::fake::FakeExecutor::default()));
    }
    let timeout = connect_timeout(args)?;
    let (server, port) = match &args.host {
        Some(_) => (None, args.port),
        None => {
            let server = engine::EmbeddedServer::start()?;
            if spec.families.contains(&Family::V6) && !server.has_ipv6() {
                bail!(
                    "IPv6 is not available on loopback here (cannot listen on ::1); \
                     run with --families 4, or enable IPv6 (sysctl net.ipv6.conf.all.disable_ipv6=0)"
                );
            }
            let port = server.port();
            (Some(server), port)
        }
    };
    Ok(Exec::Engine(EngineExec {
        host: args.host.clone(),
        port,
        connect_timeout: timeout,
        _server: server,
        client_info: BTreeMap::new(),
    }))
}

impl Exec {
    /// The client's host record before any run: this host's metadata, the dualperf
    /// version and revision, and the target (so `--resume` can find it again).
    pub fn initial_client_info(&self, args: &StudyArgs) -> store::HostInfo {
        let mut md = net::sysinfo::capture(None);
        let (version, revision) = version_and_revision();
        md.insert("dualperf.version".into(), version);
        md.insert("dualperf.git_revision".into(), revision);
        let target = match &args.host {
            Some(h) => format!("{h} {}", args.port),
            None => "embedded".to_string(),
        };
        md.insert(TARGET_KEY.into(), target);
        store::HostInfo {
            role: "client".into(),
            metadata: md,
        }
    }
}

impl Executor for Exec {
    fn execute(&mut self, cell: &Cell, slot: &Slot, attempt: u32) -> Attempt {
        match self {
            Exec::Engine(e) => e.execute(cell),
            Exec::Fake(f) => {
                let a = f.execute(cell, slot, attempt);
                let ns = u64::try_from(a.duration_ns).unwrap_or(0).min(2_000_000_000);
                std::thread::sleep(Duration::from_nanos(ns));
                Attempt {
                    started_unix_ns: now_unix_ns(),
                    ..a
                }
            }
        }
    }
}

fn now_unix_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

impl EngineExec {
    fn execute(&mut self, cell: &Cell) -> Attempt {
        let started_unix_ns = now_unix_ns();
        let t0 = Instant::now();
        let host = match &self.host {
            Some(h) => h.clone(),
            None => match cell.family {
                Family::V4 => "127.0.0.1".to_string(),
                Family::V6 => "::1".to_string(),
            },
        };
        let mut cfg = engine::ClientConfig::new(&host, self.port, cell.test.clone());
        cfg.connect_timeout = self.connect_timeout;
        cfg.client_info = self.client_info.get(&cell.family).cloned();
        let mut rec = engine::VecRecorder::default();
        let result = engine::run_client(&cfg, &mut rec)
            .map(|r| {
                self.client_info
                    .entry(cell.family)
                    .or_insert_with(|| r.client_info.clone());
                RunOutput {
                    metrics: r.metrics().into_iter().map(|m| (m.name, m.value)).collect(),
                    samples: rec.samples.iter().map(to_sample).collect(),
                    server_info: r.server_info.clone(),
                    client_info: r.client_info.clone(),
                }
            })
            .map_err(|e| e.to_string());
        Attempt {
            started_unix_ns,
            duration_ns: t0.elapsed().as_nanos() as i64,
            result,
        }
    }
}

/// An engine interval sample as stored: this side's counts and rates over the window.
fn to_sample(s: &engine::IntervalSample) -> Sample {
    use wire::metrics as m;
    let mut metrics = BTreeMap::new();
    metrics.insert(m::SENT_BYTES.to_string(), s.sent_bytes as f64);
    metrics.insert(m::SENT_PACKETS.to_string(), s.sent_packets as f64);
    metrics.insert(m::RECV_BYTES.to_string(), s.recv_bytes as f64);
    metrics.insert(m::RECV_PACKETS.to_string(), s.recv_packets as f64);
    let dt_s = s.end_ns.saturating_sub(s.start_ns) as f64 / 1e9;
    // This side's rates only where it did that: a sender has no goodput of its own.
    if dt_s > 0.0 && s.sent_bytes > 0 {
        metrics.insert(
            m::SEND_RATE_BPS.to_string(),
            s.sent_bytes as f64 * 8.0 / dt_s,
        );
    }
    if dt_s > 0.0 && s.recv_bytes > 0 {
        metrics.insert(
            m::THROUGHPUT_BPS.to_string(),
            s.recv_bytes as f64 * 8.0 / dt_s,
        );
    }
    Sample {
        start_ns: s.start_ns as i64,
        end_ns: s.end_ns as i64,
        metrics,
    }
}
