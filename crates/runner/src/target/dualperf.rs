//! The dualperf kinds of target: the embedded loopback server (started here, in this
//! process), a remote `dualperf server`, or one in a temporary lab (the client then runs
//! on a thread inside the lab's client namespace). One test is one `engine::run_client`
//! (or an RFC 2544 search, or an rrul test); as a study's executor each run is one such
//! test, retried after a backoff.

use super::lab::{in_ns, LabTarget};
use super::output::{loaded_output, run_output};
use super::{
    now_unix_ns, open_lab, retry_backoff, FullResult, IntervalObserver, Peer, TargetError,
    TargetOptions,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use study::{Attempt, Cell, Executor, RunOutput, Slot};
use wire::spec::{Family, TestKind, TestSpec};

/// Where the dualperf server is.
pub enum Place {
    /// In this process on 127.0.0.1 and ::1; with how its threads and the client's are
    /// placed (client metadata `study.cpu_pinning`).
    Embedded {
        server: engine::EmbeddedServer,
        pinning: String,
    },
    /// `dualperf server` at these hosts (one per family, or one for both).
    Remote { hosts: crate::Hosts },
    /// In the server namespace of a lab made for this target.
    Lab(Box<LabTarget>),
}

/// Tests against a dualperf server.
pub struct DualperfTarget {
    place: Place,
    port: u16,
    connect_timeout: Duration,
    protocol_version: Option<u16>,
    psk: Option<wire::auth::Psk>,
    session_limits: wire::session::Limits,
    /// Capture this host's metadata with a family's first test.
    host_metadata: bool,
    /// Client metadata per family, captured once by a study's first run there (the
    /// engine would otherwise capture it on every run).
    client_info: BTreeMap<Family, BTreeMap<String, String>>,
    /// Ctrl-C: cuts a retry backoff short.
    stop: Arc<AtomicBool>,
    /// How a study's udp-stream cells measure (RFC 2544 search or one fixed rate).
    udp_method: study::UdpMethod,
    /// What a study's rrul cells run.
    rrul: Option<study::RrulPlan>,
    /// The whole result (or error) of the last attempt, until taken.
    last: Option<Result<FullResult, TargetError>>,
    /// Hears each interval sample as it ends.
    observer: Option<IntervalObserver>,
}

/// Keeps every interval sample and hands each to the observer, if any.
struct Observed<'a> {
    kept: Vec<engine::IntervalSample>,
    observer: Option<&'a mut IntervalObserver>,
}

impl engine::Recorder for Observed<'_> {
    fn on_interval(&mut self, sample: &engine::IntervalSample) {
        self.kept.push(*sample);
        if let Some(o) = self.observer.as_mut() {
            o(sample);
        }
    }
}

/// The CPUs this process may use, read once, before a study pins its own thread: after
/// that `available_parallelism` reports the pinned thread's one CPU, and a second
/// campaign in the same process (`--profile A,B`) left its server unpinned on the
/// client's CPU (udp-rr RTTs of 13 µs instead of 60 µs).
fn process_cpus() -> usize {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl DualperfTarget {
    /// The dualperf target `opts` describe, ready for tests in `families`: the lab
    /// (built, with its server), the remote host, or the embedded server (started).
    pub fn open(
        opts: &TargetOptions,
        families: &[Family],
        notice: &mut dyn FnMut(&str),
    ) -> Result<DualperfTarget, TargetError> {
        if let Some(lab) = open_lab(opts, Peer::Dualperf, notice)? {
            let port = lab.port();
            return Ok(DualperfTarget::new(Place::Lab(Box::new(lab)), port, opts));
        }
        if opts.hosts.is_remote() {
            return Ok(DualperfTarget::new(
                Place::Remote {
                    hosts: opts.hosts.clone(),
                },
                opts.port,
                opts,
            ));
        }
        DualperfTarget::embedded(opts, families)
    }

    fn new(place: Place, port: u16, opts: &TargetOptions) -> DualperfTarget {
        DualperfTarget {
            place,
            port,
            connect_timeout: opts.connect_timeout,
            protocol_version: opts.protocol_version,
            psk: opts.psk.clone(),
            session_limits: opts.session_limits,
            host_metadata: opts.host_metadata,
            client_info: BTreeMap::new(),
            stop: opts.stop.clone(),
            udp_method: study::UdpMethod::default(),
            rrul: None,
            last: None,
            observer: None,
        }
    }

    /// Starts the embedded server; with `pin_threads` on 2 or more CPUs, this thread
    /// (the client's, which starts its data threads) goes to CPU 0 and the server's
    /// threads to CPU 1. Refuses IPv6 in `families` when loopback has none.
    fn embedded(opts: &TargetOptions, families: &[Family]) -> Result<DualperfTarget, TargetError> {
        let mut cfg = engine::ServerConfig::private();
        cfg.quic = Some(crate::quic::hook());
        let pinning = if !opts.pin_threads {
            "none (--no-pin)".to_string()
        } else if process_cpus() < 2 {
            "none (one CPU)".to_string()
        } else {
            match net::pin_current_thread(0) {
                Ok(()) => {
                    cfg.pin_cpu = Some(1);
                    "client threads on CPU 0, embedded server threads on CPU 1".to_string()
                }
                Err(e) => format!("none (cannot pin threads: {e})"),
            }
        };
        let server = engine::EmbeddedServer::start_with(cfg).map_err(TargetError::Embedded)?;
        if families.contains(&Family::V6) && !server.has_ipv6() {
            return Err(TargetError::NoLoopbackIpv6);
        }
        let port = server.port();
        Ok(DualperfTarget::new(
            Place::Embedded { server, pinning },
            port,
            opts,
        ))
    }

    pub fn place(&self) -> &Place {
        &self.place
    }

    pub fn lab(&self) -> Option<&LabTarget> {
        match &self.place {
            Place::Lab(l) => Some(l),
            _ => None,
        }
    }

    /// Stops the lab's server and removes the lab (also done on drop, silently); the
    /// embedded server stops when dropped.
    pub fn close(self) -> Result<(), TargetError> {
        match self.place {
            Place::Lab(l) => (*l).close(),
            _ => Ok(()),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// What a study's cells need beyond their test: the udp-stream method and the rrul
    /// plan.
    pub fn set_study(&mut self, spec: &study::StudySpec) {
        self.udp_method = spec.udp_method;
        self.rrul = spec.rrul;
    }

    /// The whole result (or the error) of the last attempt, taken.
    pub fn take_last(&mut self) -> Option<Result<FullResult, TargetError>> {
        self.last.take()
    }

    /// Hand each interval sample of the coming tests to `observer` as it ends.
    pub fn observe_intervals(&mut self, observer: IntervalObserver) {
        self.observer = Some(observer);
    }

    /// The server's address for a test in `family`.
    pub fn host_for(&self, family: Family) -> String {
        match &self.place {
            // A family with no host given fails in the engine, naming the family.
            Place::Remote { hosts } => hosts.for_family(family).unwrap_or_default().to_string(),
            Place::Lab(lab) => lab.server_addr(family).to_string(),
            Place::Embedded { .. } => match family {
                Family::V4 => "127.0.0.1".to_string(),
                Family::V6 => "::1".to_string(),
            },
        }
    }

    /// The client's configuration for `spec`.
    fn config(&self, spec: TestSpec) -> engine::ClientConfig {
        let family = spec.family;
        let mut cfg = engine::ClientConfig::new(&self.host_for(family), self.port, spec);
        cfg.quic = Some(crate::quic::hook());
        cfg.connect_timeout = self.connect_timeout;
        cfg.client_info = match self.host_metadata {
            true => self.client_info.get(&family).cloned(),
            // An empty map: the engine captures none.
            false => Some(BTreeMap::new()),
        };
        cfg.limits = self.session_limits;
        cfg.psk = self.psk.clone();
        if let Some(v) = self.protocol_version {
            cfg.protocol_version = v;
        }
        cfg
    }

    /// Runs `f` where the client belongs: here, or in the lab's client namespace
    /// (sockets made on a thread there live there).
    fn client_side<T: Send>(
        &self,
        f: impl FnOnce() -> Result<T, engine::EngineError> + Send,
    ) -> Result<T, TargetError> {
        match &self.place {
            Place::Lab(lab) => in_ns(&lab.client_ns(), f)?.map_err(TargetError::Engine),
            _ => f().map_err(TargetError::Engine),
        }
    }

    /// One test (`search`: an RFC 2544 search of a udp-stream), its intervals reported
    /// to `rec` as they end.
    pub fn run_test<R: engine::Recorder + Send>(
        &self,
        spec: &TestSpec,
        search: Option<&engine::RateSearch>,
        rec: &mut R,
    ) -> Result<engine::RunResult, TargetError> {
        let cfg = self.config(spec.clone());
        self.client_side(|| match search {
            Some(s) => engine::run_rate_search(&cfg, s, rec),
            None => engine::run_client(&cfg, rec),
        })
    }

    /// One latency-under-load (rrul) test.
    pub fn run_loaded(
        &self,
        spec: &engine::LoadedSpec,
    ) -> Result<engine::LoadedResult, TargetError> {
        let cfg = self.config(TestSpec::new(TestKind::TcpRr, spec.family, 1));
        self.client_side(|| engine::run_loaded(&cfg, spec))
    }

    /// One 1-byte TCP transaction in `family`: the whole control handshake, key
    /// included. Busy and "rejected" are answers from a working server (a study waits
    /// out the one and records the other as each run's failure reason, e.g. a
    /// --max-duration shorter than the runs, or the handshake's own test outlasting it
    /// on a loaded machine); any other error means no run can succeed.
    pub fn hello(&self, family: Family) -> Result<(), TargetError> {
        let mut spec = TestSpec::new(TestKind::TcpRr, family, 1);
        spec.bound = wire::spec::Bound::Count(1);
        let mut cfg = self.config(spec);
        cfg.client_info = Some(BTreeMap::new());
        match self.client_side(|| engine::run_client(&cfg, &mut engine::NullRecorder)) {
            Ok(_)
            | Err(TargetError::Engine(engine::EngineError::ServerBusy { .. }))
            | Err(TargetError::Engine(engine::EngineError::Rejected(_))) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Sleep the retry backoff of `attempt`, ending early on Ctrl-C.
    fn wait_before(&self, attempt: u32) {
        let end = Instant::now() + retry_backoff(attempt);
        while !self.stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now >= end {
                break;
            }
            std::thread::sleep(Duration::from_millis(20).min(end - now));
        }
    }

    /// One study run of `cell`: its output as a study stores it, and the whole result.
    fn execute_cell(&mut self, cell: &Cell) -> Result<(RunOutput, FullResult), TargetError> {
        let (out, full, client_info) = if cell.kind == TestKind::Rrul {
            let plan = self.rrul.ok_or_else(|| {
                TargetError::Refused("the campaign has rrul cells but no rrul plan".into())
            })?;
            let mut spec = engine::LoadedSpec::new(
                cell.family,
                cell.payload_bytes,
                plan.duration_ns,
                &plan.opts,
                cell.test.socket.clone(),
            );
            spec.interval_ns = Some(plan.interval_ns);
            let r = self.run_loaded(&spec)?;
            let client_info = r.idle.tcp.client_info.clone();
            (
                loaded_output(&r),
                FullResult::Loaded(Box::new(r)),
                client_info,
            )
        } else {
            let search = match self.udp_method {
                study::UdpMethod::Rfc2544(s) if cell.test.kind == TestKind::UdpStream => Some(s),
                _ => None,
            };
            let mut observer = self.observer.take();
            let mut rec = Observed {
                kept: Vec::new(),
                observer: observer.as_mut(),
            };
            let r = self.run_test(&cell.test, search.as_ref(), &mut rec);
            let intervals = rec.kept;
            self.observer = observer;
            let r = r?;
            let client_info = r.client_info.clone();
            let out = run_output(&r, &intervals);
            let full = FullResult::Test {
                result: Box::new(r),
                intervals,
            };
            (out, full, client_info)
        };
        self.client_info.entry(cell.family).or_insert(client_info);
        Ok((out, full))
    }
}

impl Executor for DualperfTarget {
    fn execute(&mut self, cell: &Cell, _slot: &Slot, attempt: u32) -> Attempt {
        self.wait_before(attempt);
        let started_unix_ns = now_unix_ns();
        let t0 = Instant::now();
        let result = match self.execute_cell(cell) {
            Ok((out, full)) => {
                self.last = Some(Ok(full));
                Ok(out)
            }
            Err(e) => {
                let why = e.to_string().into();
                self.last = Some(Err(e));
                Err(why)
            }
        };
        Attempt {
            started_unix_ns,
            duration_ns: t0.elapsed().as_nanos() as i64,
            result,
        }
    }
}
