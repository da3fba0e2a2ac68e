//! Where tests go, and running them there. One [`Target`] for `run` and `study` alike,
//! of one of these kinds, each a `study::Executor`:
//!
//! - the embedded server: a dualperf server in this process on 127.0.0.1 and ::1 (no
//!   HOST given), [`DualperfTarget`] with [`Place::Embedded`];
//! - a remote `dualperf server` (HOST), [`Place::Remote`];
//! - a temporary network-namespace lab with its server ([`lab::LabTarget`]; `--lab`),
//!   [`Place::Lab`], or `iperf3 -s` there;
//! - an unmodified iperf3 server ([`Iperf3Target`], `--peer iperf3`);
//! - the study crate's fake executor (no sockets), for tests of the application.
//!
//! Built from plain [`TargetOptions`]; the binary maps its flags onto them. Nothing here
//! prints: what the user should hear while a target is built goes to a `notice`
//! callback.

pub mod dualperf;
pub mod iperf3;
pub mod lab;
mod lab_server;
pub mod output;
pub mod preflight;

pub use dualperf::{DualperfTarget, Place};
pub use iperf3::{BusyCount, Iperf3Target};
pub use lab::{in_ns, LabRequest, LabServer, LabTarget};
pub use lab_server::LAB_ENV;

use crate::campaign::TARGET_KEY;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use study::{Attempt, Cell, Executor, Slot};
use wire::spec::Family;

/// Client metadata key: the host's system-wide CPU busy %, measured over half a second
/// before the study's first run (its idle baseline).
pub const IDLE_CPU_KEY: &str = "study.idle_cpu_busy_pct";

/// Client metadata key naming the kind of peer ("dualperf" or "iperf3").
pub const PEER_KEY: &str = "study.peer";

/// Client metadata key: how client and embedded server threads are placed.
pub const PINNING_KEY: &str = "study.cpu_pinning";

/// iperf3's default port.
pub const IPERF3_DEFAULT_PORT: u16 = 5201;

/// What kind of server the tests talk to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Peer {
    /// `dualperf server` (every test and metric).
    #[default]
    Dualperf,
    /// An unmodified iperf3 3.x server (`iperf3 -s`): tcp-stream and udp-stream only.
    Iperf3,
}

impl Peer {
    /// The server port when none is given.
    pub fn default_port(self) -> u16 {
        match self {
            Peer::Dualperf => engine::DEFAULT_PORT,
            Peer::Iperf3 => IPERF3_DEFAULT_PORT,
        }
    }
}

/// Where tests go and how to reach it, as plain data.
#[derive(Clone)]
pub struct TargetOptions {
    /// The server's host, per family; none: the embedded server, or the lab's server
    /// with `lab`.
    pub hosts: crate::Hosts,
    /// The server's control port (ignored by the embedded server, which picks one).
    pub port: u16,
    pub peer: Peer,
    /// Build this lab and run the server in it.
    pub lab: Option<LabRequest>,
    /// The dualperf binary a lab runs as its server (`dualperf server`).
    pub server_exe: Option<PathBuf>,
    /// Pre-shared key of a remote dualperf server.
    pub psk: Option<wire::auth::Psk>,
    /// Credentials of an iperf3 server that requires them.
    pub iperf3_auth: Option<::iperf3::auth::ClientAuth>,
    pub connect_timeout: Duration,
    /// Control protocol version to speak (testing only).
    pub protocol_version: Option<u16>,
    /// Embedded server: pin the client's and the server's threads to CPUs 0 and 1.
    pub pin_threads: bool,
    /// Ctrl-C: a study stops after the current run and cuts retry waits short.
    pub stop: Arc<AtomicBool>,
    /// The dualperf client session's waits (handshake, slack after a test, a count-bound
    /// test's longest run); a probe holds them to its scrape's budget.
    pub session_limits: wire::session::Limits,
    /// An iperf3 client's longest silence on the control connection outside the data
    /// phase.
    pub iperf3_control_timeout: Duration,
    /// Longest an attempt that waits waits out a busy iperf3 server.
    pub iperf3_busy_limit: Duration,
    /// Longest an attempt that waits retries an iperf3 server that refuses while it
    /// reopens its listener between two tests.
    pub iperf3_reopen_grace: Duration,
    /// A dualperf test captures this host's metadata (once per family; a probe, which
    /// stores none, skips it).
    pub host_metadata: bool,
}

/// How long a run waits for its control connection unless told (`run` and `study`
/// `--connect-timeout`): 5 s lets a lost SYN be sent again twice (Linux retries after
/// 1 s and 3 s) before the run is given up.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

impl Default for TargetOptions {
    /// The embedded server, unpinned, with the default connect timeout.
    fn default() -> TargetOptions {
        TargetOptions {
            hosts: crate::Hosts::default(),
            port: engine::DEFAULT_PORT,
            peer: Peer::Dualperf,
            lab: None,
            server_exe: None,
            psk: None,
            iperf3_auth: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            protocol_version: None,
            pin_threads: false,
            stop: Arc::new(AtomicBool::new(false)),
            session_limits: wire::session::Limits::default(),
            iperf3_control_timeout: ::iperf3::ClientOptions::default().control_timeout,
            iperf3_busy_limit: iperf3::BUSY_LIMIT,
            iperf3_reopen_grace: iperf3::REOPEN_GRACE,
            host_metadata: true,
        }
    }
}

/// Why a target could not be built or a test could not run there, worded for the user.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// Options that cannot work together, with what to do.
    #[error("{0}")]
    Refused(String),
    #[error("cannot start the embedded loopback server")]
    Embedded(#[source] engine::EngineError),
    #[error(
        "IPv6 is not available on loopback here (cannot listen on ::1); run with --families 4, \
         or enable IPv6 (sysctl net.ipv6.conf.all.disable_ipv6=0)"
    )]
    NoLoopbackIpv6,
    #[error("{what}")]
    Lab {
        what: &'static str,
        #[source]
        source: ::lab::LabError,
    },
    #[error("{what}")]
    LabServerSpawn {
        what: String,
        #[source]
        source: ::lab::LabError,
    },
    #[error("{0}")]
    LabServerDidNotStart(String),
    #[error("cannot find the dualperf binary to run as the lab's server")]
    NoServerExe,
    /// A resumed campaign's stored lab cannot be read back.
    #[error("{0}")]
    LabMetadata(String),
    /// Entering the lab's client namespace failed, or its client thread died.
    #[error("{0}")]
    Namespace(String),
    /// The test itself failed (the engine's own words).
    #[error("{0}")]
    Engine(engine::EngineError),
    /// A test against an iperf3 peer failed (the iperf3 client's own words).
    #[error("{0}")]
    Iperf3(::iperf3::Iperf3Error),
}

/// A test's whole result as `dualperf run` shows it; a study keeps only its
/// `study::RunOutput`.
#[derive(Debug)]
pub enum FullResult {
    /// A stream or request/response test (or an RFC 2544 search), with the interval
    /// samples the client reported.
    Test {
        result: Box<engine::RunResult>,
        intervals: Vec<engine::IntervalSample>,
    },
    /// Latency under load (rrul).
    Loaded(Box<engine::LoadedResult>),
    /// A stream test against an iperf3 peer.
    Iperf3(Box<::iperf3::Iperf3Result>),
}

/// Hears each interval sample of a dualperf test as it ends (`dualperf run` prints it).
pub type IntervalObserver = Box<dyn FnMut(&engine::IntervalSample) + Send>;

/// The lab `opts` ask for, built with `server` in it (`None` without a lab).
fn open_lab(
    opts: &TargetOptions,
    server: Peer,
    notice: &mut dyn FnMut(&str),
) -> Result<Option<LabTarget>, TargetError> {
    let Some(req) = &opts.lab else {
        return Ok(None);
    };
    let server = match (server, &opts.server_exe) {
        (Peer::Iperf3, _) => LabServer::Iperf3,
        (Peer::Dualperf, Some(exe)) => LabServer::Dualperf(exe.clone()),
        (Peer::Dualperf, None) => return Err(TargetError::NoServerExe),
    };
    LabTarget::start(req, opts.port, server, notice).map(Some)
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

pub(crate) fn now_unix_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// System-wide CPU busy % over `window` of doing nothing, from /proc/stat (or the
/// platform's equivalent); `None` where the platform gives none.
fn idle_cpu_busy_pct(window: Duration) -> Option<f64> {
    let before = net::read_proc_stat().ok()?;
    std::thread::sleep(window);
    let after = net::read_proc_stat().ok()?;
    Some(before.usage_until(&after).busy_pct).filter(|b| b.is_finite())
}

/// Where tests go: one kind of server, ready to test.
pub enum Target {
    Dualperf(Box<DualperfTarget>),
    Iperf3(Box<Iperf3Target>),
    /// The fake executor; `true`: each run sleeps its duration (capped at 2 s), as a
    /// real one takes time; `false`: it returns at once, for tests that exercise a
    /// whole study's bookkeeping, not its timing.
    Fake(study::fake::FakeExecutor, bool),
}

impl Target {
    /// The target `opts` describe, ready for tests in `families`: starts the embedded
    /// server when there is no host, or builds the lab (with its server) for a lab.
    /// `notice` hears what the user should know meanwhile (stale labs removed, the
    /// lab's warnings).
    pub fn open(
        opts: &TargetOptions,
        families: &[Family],
        notice: &mut dyn FnMut(&str),
    ) -> Result<Target, TargetError> {
        Ok(match opts.peer {
            Peer::Iperf3 => Target::Iperf3(Box::new(Iperf3Target::open(opts, notice)?)),
            Peer::Dualperf => {
                Target::Dualperf(Box::new(DualperfTarget::open(opts, families, notice)?))
            }
        })
    }

    /// The fake executor (`sleeps`: each run takes its duration, at most 2 s).
    pub fn fake(sleeps: bool) -> Target {
        Target::Fake(study::fake::FakeExecutor::default(), sleeps)
    }

    /// The whole result (or the error) of the last attempt, taken: what `run` shows.
    /// `None` before any attempt, and for the fake executor (which keeps only the
    /// study's output).
    pub fn take_last(&mut self) -> Option<Result<FullResult, TargetError>> {
        match self {
            Target::Dualperf(d) => d.take_last(),
            Target::Iperf3(i) => i.take_last(),
            Target::Fake(..) => None,
        }
    }

    /// Whether an attempt waits out a busy server and one reopening between tests (a
    /// study, the default) or fails at once with the server's answer (`dualperf run`).
    /// Only an iperf3 peer waits; other kinds ignore this.
    pub fn set_waits(&mut self, waits: bool) {
        if let Target::Iperf3(i) = self {
            i.set_waits(waits);
        }
    }

    /// Hand each interval sample of the coming dualperf tests to `observer` as it
    /// ends (no effect on other kinds, which report no intervals while they run).
    pub fn observe_intervals(&mut self, observer: IntervalObserver) {
        if let Target::Dualperf(d) = self {
            d.observe_intervals(observer);
        }
    }

    /// The dualperf server kinds (embedded, remote, lab).
    pub fn dualperf(&self) -> Option<&DualperfTarget> {
        match self {
            Target::Dualperf(d) => Some(d),
            _ => None,
        }
    }

    /// The iperf3 peer.
    pub fn iperf3(&self) -> Option<&Iperf3Target> {
        match self {
            Target::Iperf3(i) => Some(i),
            _ => None,
        }
    }

    /// Tells the executor what a study's cells need beyond their test.
    pub fn set_study(&mut self, spec: &study::StudySpec) {
        if let Target::Dualperf(d) = self {
            d.set_study(spec);
        }
    }

    pub fn lab(&self) -> Option<&LabTarget> {
        match self {
            Target::Dualperf(d) => d.lab(),
            Target::Iperf3(i) => i.lab(),
            Target::Fake(..) => None,
        }
    }

    /// The client's host record before any run: this host's metadata, the dualperf
    /// `version` and `revision`, and where the tests go (so `--resume` can find it
    /// again: [`TARGET_KEY`] "embedded", "lab" or "HOST PORT").
    pub fn initial_client_info(
        &self,
        opts: &TargetOptions,
        version: &str,
        revision: &str,
    ) -> store::HostInfo {
        let mut md = net::sysinfo::capture(None);
        md.insert("dualperf.version".into(), version.to_string());
        md.insert("dualperf.git_revision".into(), revision.to_string());
        let target = match (opts.hosts.text(), self.lab()) {
            (_, Some(_)) => "lab".to_string(),
            (Some(_), None) => {
                // Each family's server as given (--host4 / --host6 or HOST).
                for (f, key) in [
                    (Family::V4, crate::hosts::TARGET_HOST4_KEY),
                    (Family::V6, crate::hosts::TARGET_HOST6_KEY),
                ] {
                    if let Some(h) = opts.hosts.for_family(f) {
                        md.insert(key.into(), h.to_string());
                    }
                }
                let main = opts.hosts.host.as_deref();
                let first = main.or(opts.hosts.host4.as_deref());
                format!(
                    "{} {}",
                    first.or(opts.hosts.host6.as_deref()).unwrap_or("-"),
                    opts.port
                )
            }
            (None, None) => "embedded".to_string(),
        };
        md.insert(TARGET_KEY.into(), target);
        // The host's idle baseline before the first run: host CPU busy figures include
        // every process's load, so the report flags a host already busy (IDLE_CPU_KEY).
        if let Some(busy) = idle_cpu_busy_pct(Duration::from_millis(500)) {
            md.insert(IDLE_CPU_KEY.into(), format!("{busy:.1}"));
        }
        if let Some(Place::Embedded { pinning, .. }) = self.dualperf().map(|d| d.place()) {
            md.insert(PINNING_KEY.into(), pinning.clone());
        }
        md.insert(
            PEER_KEY.into(),
            match self {
                Target::Iperf3(_) => "iperf3",
                _ => "dualperf",
            }
            .into(),
        );
        store::HostInfo {
            role: "client".into(),
            metadata: md,
        }
    }

    /// The campaign's "lab" host record (topology, rate, MTU, namespaces, addresses).
    pub fn lab_host(&self) -> Option<store::HostInfo> {
        self.lab().map(|l| store::HostInfo {
            role: "lab".into(),
            metadata: l.describe(),
        })
    }

    /// One line naming where the runs go, for the start message.
    pub fn describe(&self, opts: &TargetOptions) -> String {
        match (self, self.lab()) {
            (_, Some(l)) => format!(
                "{}lab {} (client namespace {}, server {} / {} port {})",
                if matches!(self, Target::Iperf3(_)) {
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
            (Target::Iperf3(_), _) => format!(
                "iperf3 server {} port {}",
                opts.hosts.text().unwrap_or_else(|| "?".into()),
                opts.port
            ),
            _ => match opts.hosts.text() {
                Some(h) => format!("dualperf server {h} port {}", opts.port),
                None => "embedded loopback server".into(),
            },
        }
    }

    /// Busy answers of an iperf3 peer so far (none for other kinds).
    pub fn busy_count(&self) -> Option<BusyCount> {
        self.iperf3().map(|i| i.busy)
    }

    /// Stops the lab's server and removes the lab (also done on drop, silently); the
    /// embedded server stops when dropped.
    pub fn close(self) -> Result<(), TargetError> {
        match self {
            Target::Dualperf(d) => d.close(),
            Target::Iperf3(i) => i.close(),
            Target::Fake(..) => Ok(()),
        }
    }
}

impl Executor for Target {
    fn execute(&mut self, cell: &Cell, slot: &Slot, attempt: u32) -> Attempt {
        match self {
            Target::Dualperf(d) => d.execute(cell, slot, attempt),
            Target::Iperf3(i) => i.execute(cell, slot, attempt),
            Target::Fake(f, sleeps) => {
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

/// The metadata of `role` in a campaign's hosts (empty if none).
pub fn host_metadata(hosts: &[store::HostInfo], role: &str) -> BTreeMap<String, String> {
    hosts
        .iter()
        .find(|h| h.role == role)
        .map(|h| h.metadata.clone())
        .unwrap_or_default()
}
