//! The study's executor in the binary: each run is one `engine::run_client` against
//! the given server, an embedded loopback server, or a `dualperf server` in a
//! temporary lab (the client then runs inside the lab's client namespace); or one
//! iperf3 client run against an iperf3 server (`--peer iperf3`). For tests of the
//! binary itself, `DUALPERF_STUDY_FAKE=1` swaps in the study crate's fake executor
//! (deterministic results, each run sleeping its duration in real time, capped at 2 s).

use super::iperf3_peer::{self, Iperf3Exec};
use super::lab_target::{in_ns, LabRequest, LabServer, LabTarget};
use super::{connect_timeout, journal::TARGET_KEY, version_and_revision, StudyArgs};
use crate::args::Peer;
use anyhow::bail;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use study::{Attempt, Cell, Executor, RunOutput, Sample, Slot, StudySpec};
use wire::spec::Family;

/// Environment switch for the fake executor (tests of the binary).
pub const FAKE_ENV: &str = "DUALPERF_STUDY_FAKE";

/// Client metadata key: the host's system-wide CPU busy %, measured over half a second
/// before the study's first run (its idle baseline).
pub const IDLE_CPU_KEY: &str = "study.idle_cpu_busy_pct";

/// System-wide CPU busy % over `window` of doing nothing, from /proc/stat (or the
/// platform's equivalent); `None` where the platform gives none.
fn idle_cpu_busy_pct(window: std::time::Duration) -> Option<f64> {
    let before = net::read_proc_stat().ok()?;
    std::thread::sleep(window);
    let after = net::read_proc_stat().ok()?;
    Some(before.usage_until(&after).busy_pct).filter(|b| b.is_finite())
}

/// Client metadata key naming the kind of peer ("dualperf" or "iperf3").
pub const PEER_KEY: &str = "study.peer";

pub enum Exec {
    Engine(Box<EngineExec>),
    Iperf3(Box<Iperf3Exec>),
    /// The fake executor; `true`: each run sleeps its duration (capped at 2 s), as a
    /// real one takes time; `false` (`DUALPERF_STUDY_FAKE=instant`): it returns at once,
    /// for tests that exercise a whole default study's bookkeeping, not its timing.
    Fake(study::fake::FakeExecutor, bool),
}

pub struct EngineExec {
    /// `None`: the embedded server at 127.0.0.1 / ::1, or the lab's server addresses.
    host: Option<String>,
    port: u16,
    connect_timeout: Duration,
    _server: Option<engine::EmbeddedServer>,
    /// How client and embedded server threads are placed (client metadata
    /// `study.cpu_pinning`); `None` with a remote host or a lab.
    pinning: Option<String>,
    /// The lab the study runs in (`--lab`); the client runs in its client namespace.
    lab: Option<LabTarget>,
    /// Client metadata per family, captured once (the engine would otherwise capture
    /// it on every run).
    client_info: BTreeMap<Family, BTreeMap<String, String>>,
    /// `--psk-file` (with a remote host only).
    psk: Option<wire::auth::Psk>,
    /// Ctrl-C: cuts a retry backoff short.
    stop: Arc<AtomicBool>,
    /// How udp-stream cells measure (RFC 2544 search or one fixed rate).
    udp_method: study::UdpMethod,
    /// What rrul cells run.
    rrul: Option<study::RrulPlan>,
}

/// Wait before retry `attempt` (1, 2, ...) of a run: 0.5 s, doubling, at most 4 s, so
/// a server that is restarting (or a link that is flapping) has time to come back
/// instead of the retries all failing within milliseconds.
pub fn retry_backoff(attempt: u32) -> Duration {
    if attempt == 0 {
        return Duration::ZERO;
    }
    let ms = 500u64.saturating_mul(1u64 << (attempt - 1).min(16));
    Duration::from_millis(ms.min(4_000))
}

/// The CPUs this process may use, read once, before a study pins its own thread: after
/// that `available_parallelism` reports the pinned thread's one CPU, and a second
/// campaign in the same process (`--profile A,B`) left its server unpinned on the
/// client's CPU (udp-rr RTTs of 13 µs instead of 60 µs).
fn process_cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Whether [`FAKE_ENV`] asks for the fake executor: `Some(true)` for `1` (runs sleep
/// their duration), `Some(false)` for `instant`.
pub fn fake_requested() -> Option<bool> {
    match std::env::var_os(FAKE_ENV) {
        Some(v) if v == "1" => Some(true),
        Some(v) if v == "instant" => Some(false),
        _ => None,
    }
}

/// The executor for these arguments; starts the embedded server when there is no host,
/// or builds the lab (with its server) for `--lab`.
pub fn open(args: &StudyArgs, spec: &StudySpec, stop: &Arc<AtomicBool>) -> anyhow::Result<Exec> {
    if let Some(sleeps) = fake_requested() {
        return Ok(Exec::Fake(Default::default(), sleeps));
    }
    let timeout = connect_timeout(args)?;
    let auth = iperf3_peer::auth_of(args)?;
    if args.target.peer == Peer::Iperf3 {
        if let Some(why) = iperf3_peer::refuse_rr(spec) {
            bail!("{why}");
        }
        let lab = match lab_request_of(args) {
            Some(req) => Some(LabTarget::start(&req, args.target.port(), LabServer::Iperf3)?),
            None if args.target.host.is_none() => bail!(
                "--peer iperf3 needs the HOST of an iperf3 server (`iperf3 -s` running there), or --lab"
            ),
            None => None,
        };
        return Ok(Exec::Iperf3(Box::new(
            Iperf3Exec::new(
                args.target.host.as_deref(),
                lab,
                args.target.port(),
                timeout,
                stop.clone(),
            )
            .with_auth(auth),
        )));
    }
    if let Some(req) = lab_request_of(args) {
        let lab = LabTarget::start(&req, args.target.port(), LabServer::Dualperf)?;
        return Ok(Exec::Engine(Box::new(EngineExec {
            host: None,
            port: lab.port(),
            connect_timeout: timeout,
            _server: None,
            pinning: None,
            lab: Some(lab),
            client_info: BTreeMap::new(),
            psk: None,
            stop: stop.clone(),
            udp_method: spec.udp_method,
            rrul: spec.rrul,
        })));
    }
    let mut pinning = None;
    let (server, port) = match &args.target.host {
        Some(_) => (None, args.target.port()),
        None => {
            let mut cfg = engine::ServerConfig::private();
            pinning = Some(if args.no_pin {
                "none (--no-pin)".to_string()
            } else if process_cpus() < 2 {
                "none (one CPU)".to_string()
            } else {
                // This thread runs the client and starts its data threads.
                match net::pin_current_thread(0) {
                    Ok(()) => {
                        cfg.pin_cpu = Some(1);
                        "client threads on CPU 0, embedded server threads on CPU 1".to_string()
                    }
                    Err(e) => format!("none (cannot pin threads: {e})"),
                }
            });
            let server = engine::EmbeddedServer::start_with(cfg)?;
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
    Ok(Exec::Engine(Box::new(EngineExec {
        host: args.target.host.clone(),
        port,
        connect_timeout: timeout,
        _server: server,
        pinning,
        lab: None,
        client_info: BTreeMap::new(),
        psk: crate::args::load_psk(args.target.psk_file.as_deref())?,
        stop: stop.clone(),
        udp_method: spec.udp_method,
        rrul: spec.rrul,
    })))
}

impl Exec {
    /// The client's host record before any run: this host's metadata, the dualperf
    /// version and revision, and the target (so `--resume` can find it again).
    pub fn initial_client_info(&self, args: &StudyArgs) -> store::HostInfo {
        let mut md = net::sysinfo::capture(None);
        let (version, revision) = version_and_revision();
        md.insert("dualperf.version".into(), version);
        md.insert("dualperf.git_revision".into(), revision);
        let target = match (&args.target.host, self.lab_target()) {
            (_, Some(_)) => "lab".to_string(),
            (Some(h), None) => format!("{h} {}", args.target.port()),
            (None, None) => "embedded".to_string(),
        };
        md.insert(TARGET_KEY.into(), target);
        // The host's idle baseline before the first run: host CPU busy figures include
        // every process's load, so the report flags a host already busy (IDLE_CPU_KEY).
        if let Some(busy) = idle_cpu_busy_pct(std::time::Duration::from_millis(500)) {
            md.insert(IDLE_CPU_KEY.into(), format!("{busy:.1}"));
        }
        if let Exec::Engine(e) = self {
            if let Some(p) = &e.pinning {
                md.insert("study.cpu_pinning".into(), p.clone());
            }
        }
        md.insert(
            PEER_KEY.into(),
            match self {
                Exec::Iperf3(_) => "iperf3",
                _ => "dualperf",
            }
            .into(),
        );
        store::HostInfo {
            role: "client".into(),
            metadata: md,
        }
    }

    fn lab_target(&self) -> Option<&LabTarget> {
        match self {
            Exec::Engine(e) => e.lab.as_ref(),
            Exec::Iperf3(i) => i.lab(),
            Exec::Fake(..) => None,
        }
    }

    /// The campaign's "lab" host record (topology, rate, MTU, namespaces, addresses).
    pub fn lab_host(&self) -> Option<store::HostInfo> {
        self.lab_target().map(|l| store::HostInfo {
            role: "lab".into(),
            metadata: l.describe(),
        })
    }

    /// One line naming where the runs go, for the start message.
    pub fn target_text(&self, args: &StudyArgs) -> String {
        match (self, self.lab_target()) {
            (_, Some(l)) => format!(
                "{}lab {} (client namespace {}, server {} / {} port {})",
                if matches!(self, Exec::Iperf3(_)) {
                    "iperf3 -s in "
                } else {
                    ""
                },
                l.describe().get("lab.name").cloned().unwrap_or_default(),
                l.client_ns(),
                l.server_addr(Family::V4),
                l.server_addr(Family::V6),
                l.port()
            ),
            (Exec::Iperf3(_), _) => format!(
                "iperf3 server {} port {}",
                args.target.host.as_deref().unwrap_or("?"),
                args.target.port()
            ),
            _ => match &args.target.host {
                Some(h) => format!("dualperf server {h} port {}", args.target.port()),
                None => "embedded loopback server".into(),
            },
        }
    }

    /// Busy answers of an iperf3 peer so far (none for other executors).
    pub fn busy_count(&self) -> Option<iperf3_peer::BusyCount> {
        match self {
            Exec::Iperf3(i) => Some(i.busy),
            _ => None,
        }
    }

    /// Stops the lab's server and removes the lab (also done on drop, silently).
    pub fn close(self) -> anyhow::Result<()> {
        let lab = match self {
            Exec::Engine(e) => e.lab,
            Exec::Iperf3(i) => i.into_lab(),
            Exec::Fake(..) => None,
        };
        match lab {
            Some(l) => l.close(),
            None => Ok(()),
        }
    }
}

/// The lab a `--lab` study asks for (flags only; `--resume` fills them from metadata).
pub fn lab_request_of(args: &StudyArgs) -> Option<LabRequest> {
    args.target.lab.map(|topology| LabRequest {
        topology,
        rate_bps: args.target.lab_rate,
        mtu_bytes: args.target.lab_mtu,
        link: args.target.lab_link,
        ampdu: args.target.lab_ampdu,
    })
}

impl Executor for Exec {
    fn execute(&mut self, cell: &Cell, slot: &Slot, attempt: u32) -> Attempt {
        match self {
            Exec::Engine(e) => {
                e.wait_before(attempt);
                e.execute(cell)
            }
            Exec::Iperf3(i) => {
                // A retry waits as with dualperf servers (ending early on Ctrl-C).
                let _ = i.sleep_unless_stopped(retry_backoff(attempt));
                i.execute(cell)
            }
            Exec::Fake(f, sleeps) => {
                let a = f.execute(cell, slot, attempt);
                if *sleeps {
                    let ns = u64::try_from(a.duration_ns).unwrap_or(0).min(2_000_000_000);
                    std::thread::sleep(Duration::from_nanos(ns));
                }
                Attempt {
                    started_unix_ns: now_unix_ns(),
                    ..a
                }
            }
        }
    }
}

pub(super) fn now_unix_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

impl EngineExec {
    /// Sleep the retry backoff of `attempt`, ending early on Ctrl-C.
    fn wait_before(&self, attempt: u32) {
        let end = Instant::now() + retry_backoff(attempt);
        while !self.stop.load(std::sync::atomic::Ordering::Relaxed) {
            let now = Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep(Duration::from_millis(20).min(end - now));
        }
    }

    fn execute(&mut self, cell: &Cell) -> Attempt {
        let started_unix_ns = now_unix_ns();
        let t0 = Instant::now();
        let host = match (&self.host, &self.lab) {
            (Some(h), _) => h.clone(),
            (None, Some(lab)) => lab.server_addr(cell.family).to_string(),
            (None, None) => match cell.family {
                Family::V4 => "127.0.0.1".to_string(),
                Family::V6 => "::1".to_string(),
            },
        };
        let mut cfg = engine::ClientConfig::new(&host, self.port, cell.test.clone());
        cfg.connect_timeout = self.connect_timeout;
        cfg.client_info = self.client_info.get(&cell.family).cloned();
        cfg.psk = self.psk.clone();
        if cell.kind == wire::spec::TestKind::Rrul {
            let result = self.execute_loaded(cell, &cfg);
            return Attempt {
                started_unix_ns,
                duration_ns: t0.elapsed().as_nanos() as i64,
                result,
            };
        }
        let mut rec = engine::VecRecorder::default();
        let search = match self.udp_method {
            study::UdpMethod::Rfc2544(s) if cell.test.kind == wire::spec::TestKind::UdpStream => {
                Some(s)
            }
            _ => None,
        };
        let run = |rec: &mut engine::VecRecorder| {
            match &search {
                Some(s) => engine::run_rate_search(&cfg, s, rec),
                None => engine::run_client(&cfg, rec),
            }
            .map_err(|e| e.to_string())
        };
        let outcome = match &self.lab {
            // Sockets made on a thread inside the client namespace live there.
            Some(lab) => in_ns(&lab.client_ns(), || run(&mut rec)).and_then(|r| r),
            None => run(&mut rec),
        };
        let result = outcome.map(|r| {
            self.client_info
                .entry(cell.family)
                .or_insert_with(|| r.client_info.clone());
            RunOutput {
                metrics: r.metrics().into_iter().map(|m| (m.name, m.value)).collect(),
                samples: rec
                    .samples
                    .iter()
                    .map(to_sample)
                    .chain(window_samples(&r))
                    .collect(),
                server_info: r.server_info.clone(),
                client_info: r.client_info.clone(),
                applied: [("client", &r.client.applied), ("server", &r.server.applied)]
                    .into_iter()
                    .flat_map(|(side, map)| {
                        map.iter()
                            .map(move |(k, v)| (format!("{side}.{k}"), v.clone()))
                    })
                    .collect(),
            }
        });
        Attempt {
            started_unix_ns,
            duration_ns: t0.elapsed().as_nanos() as i64,
            result,
        }
    }
}

impl EngineExec {
    /// One rrul run: the latency-under-load test of the study's plan, the cell's size
    /// as the load's write size, its flat metrics and its parts' interval samples.
    fn execute_loaded(
        &mut self,
        cell: &Cell,
        cfg: &engine::ClientConfig,
    ) -> Result<RunOutput, String> {
        let plan = self
            .rrul
            .ok_or_else(|| "the campaign has rrul cells but no rrul plan".to_string())?;
        let mut spec = engine::LoadedSpec::new(
            cell.family,
            cell.payload_bytes,
            plan.duration_ns,
            &plan.opts,
            cell.test.socket.clone(),
        );
        spec.interval_ns = Some(plan.interval_ns);
        let run = || engine::run_loaded(cfg, &spec).map_err(|e| e.to_string());
        let r = match &self.lab {
            Some(lab) => in_ns(&lab.client_ns(), run).and_then(|r| r),
            None => run(),
        }?;
        let first = &r.idle.tcp;
        self.client_info
            .entry(cell.family)
            .or_insert_with(|| first.client_info.clone());
        let parts = [
            ("idle_udp", &r.idle.udp),
            ("idle_tcp", &r.idle.tcp),
            ("loaded_udp", &r.loaded.udp),
            ("loaded_tcp", &r.loaded.tcp),
        ]
        .into_iter()
        .chain(r.upload.iter().map(|u| ("upload", u)))
        .chain(r.download.iter().map(|d| ("download", d)));
        let mut applied = BTreeMap::new();
        for (part, run) in parts {
            for (side, map) in [
                ("client", &run.client.applied),
                ("server", &run.server.applied),
            ] {
                for (k, v) in map {
                    applied.insert(format!("{side}.{part}.{k}"), v.clone());
                }
            }
        }
        Ok(RunOutput {
            metrics: r.metrics().into_iter().map(|m| (m.name, m.value)).collect(),
            samples: loaded_samples(&r),
            server_info: first.server_info.clone(),
            client_info: first.client_info.clone(),
            applied,
        })
    }
}

/// An rrul run's interval samples as stored: each part's intervals placed on the
/// test's timeline (ns since the idle probes' client threads started), as
/// `report::LoadedSample` keeps them (bytes the client wrote to its upload streams or
/// read from its download streams; the probes' RTT sums and counts per phase).
fn loaded_samples(r: &engine::LoadedResult) -> Vec<Sample> {
    use engine::LoadedPart as P;
    let mut out = Vec::new();
    for iv in &r.intervals {
        for s in &iv.samples {
            let at = |ns: u64| iv.offset_ns.saturating_add(ns).min(i64::MAX as u64) as i64;
            let rtt = Some((s.rtt_sum_ns as f64, s.rtt_count as f64));
            let mut x = report::LoadedSample {
                start_ns: at(s.start_ns),
                end_ns: at(s.end_ns),
                loaded_phase: matches!(iv.part, P::LoadedUdpProbes | P::LoadedTcpProbes),
                ..report::LoadedSample::default()
            };
            match iv.part {
                P::Upload => x.upload_sent_bytes = Some(s.sent_bytes as f64),
                P::Download => x.download_recv_bytes = Some(s.recv_bytes as f64),
                P::IdleUdpProbes | P::LoadedUdpProbes => x.udp_rtt = rtt,
                P::IdleTcpProbes | P::LoadedTcpProbes => x.tcp_rtt = rtt,
            }
            out.push(Sample {
                start_ns: x.start_ns,
                end_ns: x.end_ns,
                metrics: x.to_metrics(),
            });
        }
    }
    out.sort_by_key(|s| s.start_ns);
    out
}

/// `--window` rows as stored: one sample per window (its send-time span), metrics
/// prefixed `window_` so they never mix with the interval samples' own.
fn window_samples(r: &engine::RunResult) -> Vec<Sample> {
    let Some(width) = r.spec.window_ns else {
        return Vec::new();
    };
    r.windows()
        .into_iter()
        .map(|w| {
            let mut metrics = BTreeMap::new();
            let mut put = |k: &str, v: Option<f64>| {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    metrics.insert(format!("window_{k}"), v);
                }
            };
            put("sent_packets", Some(w.sent_packets as f64));
            put("recv_packets", Some(w.recv_packets as f64));
            put("lost_packets", Some(w.lost_packets as f64));
            put("loss_pct", w.loss_pct);
            put("bitrate_bps", Some(w.bitrate_bps));
            put("jitter_ns", w.jitter_ns);
            put("owd_mean_ns", w.owd_mean_ns);
            put("owd_max_ns", w.owd_max_ns);
            let start = i64::from(w.index) * width as i64;
            Sample {
                start_ns: start,
                end_ns: start + width as i64,
                metrics,
            }
        })
        .collect()
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
