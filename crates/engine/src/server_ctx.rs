//! What a dualperf server is configured to allow and the state its threads share: the
//! [`ServerConfig`], the limits a test must meet ([`check_limits`]), and the test slots
//! ([`BusyGuard`]). The listener (`server`) and each control session (`server_session`)
//! both build on it.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wire::proto::{SideStats, PROTOCOL_VERSION};
use wire::session::Limits;
use wire::spec::{Bound, Direction, Rate, TestKind, TestSpec, Transport};
use wire::traffic::TrafficError;

/// The default control port (iperf3's 5201 stays free).
pub const DEFAULT_PORT: u16 = 5301;

/// One finished (or failed) control connection, for the server's one log line per test.
#[derive(Debug, Clone)]
pub struct TestLog {
    pub peer: SocketAddr,
    pub spec: Option<TestSpec>,
    /// The server's own measurements, or why the session failed.
    pub outcome: Result<SideStats, SessionFailure>,
    pub elapsed: Duration,
}

/// Why a control connection ended without a result (the server's log line says it).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionFailure {
    /// The peer went away before the session ended.
    #[error("connection closed")]
    Closed,
    #[error(transparent)]
    Session(#[from] wire::session::SessionError),
}

pub type TestLogFn = Arc<dyn Fn(&TestLog) + Send + Sync>;

#[derive(Clone)]
pub struct ServerConfig {
    /// Addresses to listen on; empty = `0.0.0.0:port` and `[::]:port` (IPv6 if available).
    pub binds: Vec<SocketAddr>,
    /// The port of the default binds.
    pub port: u16,
    pub limits: Limits,
    /// Control connections served at once; more are told "busy" and closed.
    pub max_connections: usize,
    /// Tests run at once; a request beyond this is told "busy".
    pub max_tests: usize,
    /// Parallel streams one test may ask for.
    pub max_streams: u16,
    /// UDP datapath of this server's sockets when the client asks for `auto`.
    pub udp_datapath: wire::spec::UdpDatapath,
    /// Longest duration-bound test; count-bound tests end (failed) after this long too.
    pub max_duration: Duration,
    /// Total UDP rate the server may be asked to send (reverse / bidir), bit/s of IP
    /// packets (payload with its UDP and IP headers: what the network carries, not the
    /// payload bits `--rate` counts); `None` = unlimited. Unpaced ("as fast as possible") server
    /// sending is allowed only to a loopback peer while this is set.
    pub max_send_rate_bps: Option<u64>,
    /// Largest payload a test may ask for; `None` = the family's datagram maximum (UDP)
    /// or [`wire::proto::MAX_TCP_PAYLOAD_BYTES`] (TCP).
    pub max_payload_bytes: Option<u32>,
    /// The pre-shared key clients must prove; `None` = no authentication.
    pub psk: Option<wire::auth::Psk>,
    /// Called once per finished control connection.
    pub on_test: Option<TestLogFn>,
    /// Metadata sent to clients; `None` = `net::sysinfo::capture` per test.
    pub server_info: Option<BTreeMap<String, String>>,
    pub protocol_version: u16,
    /// Run every server thread on this CPU (the acceptor binds itself; session and data
    /// threads inherit it). `None`: wherever the scheduler puts them.
    pub pin_cpu: Option<usize>,
    /// Runs QUIC tests; `None`: they are refused ([`crate::NO_QUIC`]).
    pub quic: Option<std::sync::Arc<dyn crate::QuicHook>>,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            binds: Vec::new(),
            port: DEFAULT_PORT,
            limits: Limits::default(),
            max_connections: 32,
            max_tests: 1,
            max_streams: 16,
            udp_datapath: wire::spec::UdpDatapath::Auto,
            max_duration: Duration::from_secs(60),
            max_send_rate_bps: Some(10_000_000_000),
            max_payload_bytes: None,
            psk: None,
            on_test: None,
            server_info: None,
            protocol_version: PROTOCOL_VERSION,
            pin_cpu: None,
            quic: None,
        }
    }
}

impl ServerConfig {
    /// The defaults with the test limits lifted to what the protocol allows (128
    /// streams, 24 h, unlimited rate): for a server only its own user can reach, such as
    /// [`EmbeddedServer`](crate::EmbeddedServer) on loopback or a lab's private namespace.
    pub fn private() -> ServerConfig {
        ServerConfig {
            max_streams: wire::proto::MAX_STREAMS,
            max_duration: Duration::from_nanos(wire::proto::MAX_DURATION_NS),
            max_send_rate_bps: None,
            ..ServerConfig::default()
        }
    }
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("binds", &self.binds)
            .field("limits", &self.limits)
            .field("max_connections", &self.max_connections)
            .field("max_tests", &self.max_tests)
            .field("max_streams", &self.max_streams)
            .field("max_duration", &self.max_duration)
            .field("max_send_rate_bps", &self.max_send_rate_bps)
            .field("max_payload_bytes", &self.max_payload_bytes)
            .field("psk", &self.psk.is_some())
            .finish_non_exhaustive()
    }
}

/// State every connection thread of one server shares.
pub(crate) struct ServerCtx {
    pub cfg: ServerConfig,
    pub stop: AtomicBool,
    /// The tests admitted now and what they take of the server's budgets.
    admitted: Mutex<Admissions>,
    pub conns: AtomicUsize,
    /// Session threads to join when the server stops.
    pub handlers: Mutex<Vec<JoinHandle<()>>>,
}

impl ServerCtx {
    pub(crate) fn new(cfg: ServerConfig) -> ServerCtx {
        ServerCtx {
            cfg,
            stop: AtomicBool::new(false),
            admitted: Mutex::new(Admissions::default()),
            conns: AtomicUsize::new(0),
            handlers: Mutex::new(Vec::new()),
        }
    }
}

/// Tests of one group (one client's loaded-latency test: its load streams and its
/// probes) that may run together in the group's one admission.
pub const MAX_GROUP_TESTS: usize = 8;

/// What an admitted test takes of the server's budgets while it runs (from
/// [`check_limits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestCost {
    pub streams: u16,
    /// UDP bit/s the server sends, IP packets (0 when it sends none, or with no
    /// `--max-rate`); an unpaced stream to a loopback peer takes the whole `--max-rate`.
    pub send_bps: u64,
    /// How long the test holds its place: its duration; `None` for a count-bound test,
    /// which ends when its count is done, or is ended at `--max-duration` (in a group:
    /// at the group's end, [`BusyGuard::end_by`]).
    pub duration: Option<Duration>,
}

/// The admissions held now. A lone test is one admission; a group's tests share one:
/// one of `--max-tests`, and together the budget one test has (their streams summed
/// against `--max-streams`, their send rates against `--max-rate`, and the group's span,
/// from its first admission to its last test's end, against `--max-duration`). The send
/// rate of every test running is also summed against `--max-rate`: the limit is the
/// server's total, however many tests or groups run.
#[derive(Default)]
struct Admissions {
    /// Admissions held (a group counts once).
    held: usize,
    /// UDP bit/s (IP packets) every running test has been allowed to send.
    send_bps: u64,
    groups: BTreeMap<u64, Group>,
}

/// One running group: the peer that opened it and the budget its running tests hold.
struct Group {
    owner: IpAddr,
    members: usize,
    streams: u32,
    send_bps: u64,
    /// The group's first admission plus `--max-duration`: no test of it may end later.
    until: Instant,
    opened: Instant,
}

/// Why a test within [`check_limits`] is not admitted now.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AdmitError {
    /// Every admission is held, or the group is another peer's or full.
    #[error("server busy: another test is running; try again when it has finished")]
    Busy,
    /// The tests running now hold the server's send budget.
    #[error("server busy: the tests running now send {held_mbps} of the {max_mbps} Mbit/s it sends in total (--max-rate); {asked_mbps} Mbit/s asked for; try again when they have finished")]
    RateTaken {
        max_mbps: u64,
        held_mbps: u64,
        asked_mbps: u64,
    },
    /// The test would take its group over the budget of one test.
    #[error(transparent)]
    Group(#[from] LimitError),
}

impl AdmitError {
    /// The wire code: busy when waiting helps, the limit otherwise.
    pub fn code(&self) -> wire::proto::ErrorCode {
        match self {
            AdmitError::Busy | AdmitError::RateTaken { .. } => wire::proto::ErrorCode::Busy,
            AdmitError::Group(_) => wire::proto::ErrorCode::LimitExceeded,
        }
    }
}

/// Holds one admission (or a place in a running group) and its share of the budgets;
/// released on drop, the group's admission when its last test ends.
pub(crate) struct BusyGuard<'a> {
    ctx: &'a ServerCtx,
    group: Option<u64>,
    cost: TestCost,
    end_by: Option<Instant>,
}

impl BusyGuard<'_> {
    /// When a count-bound test of a group must be ended: the end of the group's
    /// `--max-duration` (a duration-bound one was admitted only if it ends before).
    pub(crate) fn end_by(&self) -> Option<Instant> {
        self.end_by.filter(|_| self.cost.duration.is_none())
    }
}

impl ServerCtx {
    /// Admit a test that passed [`check_limits`] with `cost`, at `now`. A test of a
    /// running group joins it (from the peer that opened it, up to
    /// [`MAX_GROUP_TESTS`]) only within the group's budget; any other test takes a free
    /// admission. Either way the server's total send rate stays within `--max-rate`.
    pub(crate) fn try_admit(
        &self,
        group: Option<u64>,
        peer: IpAddr,
        cost: TestCost,
        now: Instant,
    ) -> Result<BusyGuard<'_>, AdmitError> {
        let cfg = &self.cfg;
        let mut adm = self.admitted.lock().unwrap_or_else(|e| e.into_inner());
        let rate_taken = |held: u64| match cfg.max_send_rate_bps {
            Some(max) if held.saturating_add(cost.send_bps) > max => Some(AdmitError::RateTaken {
                max_mbps: max / 1_000_000,
                held_mbps: held / 1_000_000,
                asked_mbps: cost.send_bps / 1_000_000,
            }),
            _ => None,
        };
        let total_bps = adm.send_bps;
        if let Some(g) = group.and_then(|g| adm.groups.get_mut(&g)) {
            if g.owner != peer || g.members >= MAX_GROUP_TESTS {
                return Err(AdmitError::Busy);
            }
            let streams = g.streams + u32::from(cost.streams);
            if streams > u32::from(cfg.max_streams) {
                return Err(LimitError::GroupStreams {
                    max: cfg.max_streams,
                    held: g.streams,
                    asked: cost.streams,
                }
                .into());
            }
            let asked = cost.duration.unwrap_or(Duration::ZERO);
            if now + asked > g.until || now >= g.until {
                return Err(LimitError::GroupDuration {
                    max_s: cfg.max_duration.as_secs_f64(),
                    ran_s: round_ms(now.saturating_duration_since(g.opened)),
                    asked_s: round_ms(asked),
                }
                .into());
            }
            let end_by = g.until;
            if let Some(max) = cfg.max_send_rate_bps {
                if g.send_bps.saturating_add(cost.send_bps) > max {
                    return Err(LimitError::GroupSendRate {
                        max_mbps: max / 1_000_000,
                        held_mbps: g.send_bps / 1_000_000,
                        asked_mbps: cost.send_bps / 1_000_000,
                    }
                    .into());
                }
            }
            if let Some(e) = rate_taken(total_bps) {
                return Err(e);
            }
            g.members += 1;
            g.streams = streams;
            g.send_bps += cost.send_bps;
            adm.send_bps = total_bps.saturating_add(cost.send_bps);
            return Ok(BusyGuard {
                ctx: self,
                group,
                cost,
                end_by: Some(end_by),
            });
        } else {
            if adm.held >= cfg.max_tests {
                return Err(AdmitError::Busy);
            }
            if let Some(e) = rate_taken(total_bps) {
                return Err(e);
            }
            adm.held += 1;
            if let Some(id) = group {
                let g = Group {
                    owner: peer,
                    members: 1,
                    streams: u32::from(cost.streams),
                    send_bps: cost.send_bps,
                    until: now + cfg.max_duration,
                    opened: now,
                };
                adm.groups.insert(id, g);
            }
        }
        adm.send_bps = total_bps.saturating_add(cost.send_bps);
        Ok(BusyGuard {
            ctx: self,
            group,
            cost,
            end_by: group.map(|_| now + cfg.max_duration),
        })
    }
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// Seconds to the millisecond, for a refusal's words.
fn round_ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e3).round() / 1e3
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.ctx.release(self.group, self.cost);
    }
}

impl ServerCtx {
    /// Give back what an admitted test took: its share of the budgets, and its
    /// admission (a group's when its last test ends).
    fn release(&self, group: Option<u64>, cost: TestCost) {
        let mut adm = self.admitted.lock().unwrap_or_else(|e| e.into_inner());
        adm.send_bps = adm.send_bps.saturating_sub(cost.send_bps);
        if let Some(id) = group {
            if let Some(g) = adm.groups.get_mut(&id) {
                g.members = g.members.saturating_sub(1);
                g.streams = g.streams.saturating_sub(u32::from(cost.streams));
                g.send_bps = g.send_bps.saturating_sub(cost.send_bps);
                if g.members > 0 {
                    return;
                }
                adm.groups.remove(&id);
            }
        }
        adm.held = adm.held.saturating_sub(1);
    }
}

/// The admissions of a running server, for another port of the same server (the
/// iperf3 port of `dualperf server`): a test there takes one of `--max-tests` and its
/// send rate counts in the `--max-rate` total, so two ports do not double the limits.
#[derive(Clone)]
pub struct Admission(pub(crate) std::sync::Arc<ServerCtx>);

/// One admission taken through [`Admission::try_admit`]; given back on drop.
pub struct AdmissionGuard {
    ctx: std::sync::Arc<ServerCtx>,
    cost: TestCost,
}

impl Admission {
    /// Admit a test of another port that sends `send_bps` (IP bit/s, as `--max-rate`
    /// counts them; 0 if the server sends nothing), or say why not.
    pub fn try_admit(&self, send_bps: u64) -> Result<AdmissionGuard, AdmitError> {
        let cost = TestCost {
            streams: 0,
            send_bps,
            duration: None,
        };
        let peer = IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED);
        let guard = self.0.try_admit(None, peer, cost, Instant::now())?;
        // The guard's release moves to an owner that outlives this borrow.
        std::mem::forget(guard);
        Ok(AdmissionGuard {
            ctx: self.0.clone(),
            cost,
        })
    }
}

impl Drop for AdmissionGuard {
    fn drop(&mut self) {
        self.ctx.release(None, self.cost);
    }
}

/// Why a test is over one of the server's limits, in words naming the flag (the client
/// shows it as the server's rejection).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitError {
    #[error("a traffic model (--idt, --size-dist, --profile) needs udp-stream or tcp-stream")]
    TrafficNeedsStream,
    #[error("traffic model: {0}")]
    Traffic(#[from] TrafficError),
    #[error("the server allows at most {max} streams per test (--max-streams); {asked} asked for")]
    Streams { max: u16, asked: u16 },
    #[error("the server allows at most {max} streams per test, a group's tests together (--max-streams); the group's running tests hold {held}, {asked} more asked for")]
    GroupStreams { max: u16, held: u32, asked: u16 },
    #[error("the server allows tests of at most {max_s} s (--max-duration), a group's tests together from its first; the group has run {ran_s} s, {asked_s} s more asked for")]
    GroupDuration {
        max_s: f64,
        ran_s: f64,
        asked_s: f64,
    },
    #[error("the server sends UDP at most at {max_mbps} Mbit/s in total (--max-rate), a group's tests together; the group's running tests hold {held_mbps} Mbit/s, {asked_mbps} Mbit/s more asked for")]
    GroupSendRate {
        max_mbps: u64,
        held_mbps: u64,
        asked_mbps: u64,
    },
    #[error(
        "the server allows payloads of at most {max} bytes (--max-payload); {asked} asked for"
    )]
    Payload { max: u32, asked: u32 },
    #[error(
        "the server allows tests of at most {max_s} s (--max-duration); {asked_s} s asked for"
    )]
    Duration { max_s: f64, asked_s: f64 },
    #[error("the server allows tests of at most {max_s} s (--max-duration); {count} datagrams at {pps}/s take longer")]
    CountDuration { max_s: f64, count: u64, pps: u64 },
    #[error("the server sends UDP at most at {max_mbps} Mbit/s in total (--max-rate); {asked_mbps} Mbit/s asked for (payload with its UDP and IP headers)")]
    SendRate { max_mbps: u64, asked_mbps: u64 },
    #[error(
        "the server sends UDP at most at {max_mbps} Mbit/s in total (--max-rate): ask for a --rate"
    )]
    UnpacedSend { max_mbps: u64 },
    #[error("the server allows payloads of at most {max} bytes (--max-payload); the size model draws up to {largest}")]
    ModelPayload { max: u32, largest: u32 },
    #[error("the server sends UDP at most at {max_mbps} Mbit/s in total (--max-rate); the traffic model's gaps have no mean, so its rate has no bound")]
    UnboundedModel { max_mbps: u64 },
}

/// What a traffic model makes a stream send, for the server's limits: the largest payload
/// it can draw (`Some` only with a size model) and its mean IP rate in bit/s, the mean
/// size with its headers over the mean gap (`None`: unpaced, or gaps without a mean). Sizes are
/// drawn within the sender's bounds (a datagram's header up to 65 507 bytes), so those
/// bound the largest and the mean; with a size model but no `--idt` the gap is the
/// test's rate in packets.
fn model_bounds(
    spec: &TestSpec,
    m: &wire::traffic::TrafficModel,
) -> Result<(Option<u32>, Option<u64>), TrafficError> {
    use measure::traffic::{mean, upper_bound};
    let ceiling = crate::udp::MAX_MODEL_PAYLOAD as f64;
    let floor = match spec.kind.transport() {
        Transport::Udp => wire::datagram::HEADER_BYTES as f64,
        Transport::Tcp => 1.0,
    };
    let (largest, mean_size) = match m.size_dist()? {
        Some(d) => {
            let largest = upper_bound(&d).map_or(ceiling, |v| v.clamp(floor, ceiling));
            let mean_size = mean(&d).map_or(largest, |v| v.clamp(floor, largest));
            (Some(largest as u32), mean_size)
        }
        None => (None, f64::from(spec.payload_bytes).max(floor)),
    };
    let gap_ns = match m.idt_dist()? {
        Some(d) => mean(&d).filter(|g| *g > 0.0),
        None => spec.rate_pps().map(|p| 1e9 / p),
    };
    let per_byte = ip_bytes_per_payload_byte(spec, mean_size);
    // Saturating: f64 → u64 `as` clamps at u64::MAX.
    let bps = gap_ns.map(|g| (mean_size * per_byte * 8.0 * 1e9 / g) as u64);
    Ok((largest, bps))
}

/// IP bytes per payload byte of this test's datagrams of `payload` bytes (UDP and IP
/// headers from the overhead model); 1 for TCP, whose rate the limit does not bound.
fn ip_bytes_per_payload_byte(spec: &TestSpec, payload: f64) -> f64 {
    // QUIC: payload bits (its packet overhead is not in the overhead model yet).
    if spec.kind.is_quic() {
        return 1.0;
    }
    match spec.kind.transport() {
        Transport::Udp => {
            let payload = payload.round().clamp(1.0, f64::from(u32::MAX)) as u32;
            model::OverheadModel::udp_ip_bytes_per_payload_byte(spec.family, payload)
        }
        Transport::Tcp => 1.0,
    }
}

/// Whether `spec` is within the server's limits, and if so what it takes of the
/// server's budgets while it runs; `peer` is the client's address (unpaced sending is
/// allowed to a loopback peer only).
pub fn check_limits(
    cfg: &ServerConfig,
    spec: &TestSpec,
    peer: IpAddr,
) -> Result<TestCost, LimitError> {
    // A traffic model's gaps and sizes replace the test's rate and payload size.
    let model = match &spec.traffic {
        Some(m) => {
            if !matches!(spec.kind, TestKind::UdpStream | TestKind::TcpStream) {
                return Err(LimitError::TrafficNeedsStream);
            }
            m.check()?;
            Some(model_bounds(spec, m)?)
        }
        None => None,
    };
    if spec.streams > cfg.max_streams {
        return Err(LimitError::Streams {
            max: cfg.max_streams,
            asked: spec.streams,
        });
    }
    let max_payload = cfg
        .max_payload_bytes
        .unwrap_or(match spec.kind.transport() {
            // A QUIC write is a stream write, as TCP's.
            Transport::Udp if spec.kind.is_quic() => wire::proto::MAX_TCP_PAYLOAD_BYTES,
            Transport::Udp => spec.family.max_udp_payload_bytes(),
            Transport::Tcp => wire::proto::MAX_TCP_PAYLOAD_BYTES,
        });
    if spec.payload_bytes > max_payload {
        return Err(LimitError::Payload {
            max: max_payload,
            asked: spec.payload_bytes,
        });
    }
    if let Some((Some(largest), _)) = model {
        if largest > max_payload {
            return Err(LimitError::ModelPayload {
                max: max_payload,
                largest,
            });
        }
    }
    let max_s = cfg.max_duration.as_secs_f64();
    if let Bound::DurationNs(ns) = spec.bound {
        if Duration::from_nanos(ns) > cfg.max_duration {
            return Err(LimitError::Duration {
                max_s,
                asked_s: ns as f64 / 1e9,
            });
        }
    }
    let server_sends = matches!(spec.kind, TestKind::UdpStream | TestKind::QuicStream)
        && spec.direction != Direction::Forward;
    // What the network carries: IP packets, payload with its UDP and IP headers (the
    // payload bits `--rate` counts times the overhead model's factor).
    let streams = u64::from(spec.streams);
    let total_bps = match model {
        Some((_, bps)) => bps,
        None => spec.rate_bps().map(|b| {
            let per_byte = ip_bytes_per_payload_byte(spec, f64::from(spec.payload_bytes));
            // Saturating: f64 → u64 `as` clamps at u64::MAX.
            (b as f64 * per_byte) as u64
        }),
    }
    .map(|b| b.saturating_mul(streams));
    if let (Bound::Count(count), Some(Rate::PacketsPerSec(pps))) = (spec.bound, spec.rate) {
        if pps > 0 && count / pps > cfg.max_duration.as_secs() {
            return Err(LimitError::CountDuration { max_s, count, pps });
        }
    }
    let mut send_bps = 0;
    if let (true, Some(max_bps)) = (server_sends, cfg.max_send_rate_bps) {
        let max_mbps = max_bps / 1_000_000;
        // Unpaced (loopback only) takes the whole budget.
        send_bps = total_bps.unwrap_or(max_bps);
        match total_bps {
            Some(bps) if bps > max_bps => {
                return Err(LimitError::SendRate {
                    max_mbps,
                    asked_mbps: bps / 1_000_000,
                })
            }
            None if !peer.is_loopback()
                && spec.traffic.as_ref().is_some_and(|m| m.idt.is_some()) =>
            {
                return Err(LimitError::UnboundedModel { max_mbps })
            }
            None if !peer.is_loopback() => return Err(LimitError::UnpacedSend { max_mbps }),
            _ => {}
        }
    }
    let duration = match spec.bound {
        Bound::DurationNs(ns) => Some(Duration::from_nanos(ns)),
        Bound::Count(_) => None,
    };
    Ok(TestCost {
        streams: spec.streams,
        send_bps,
        duration,
    })
}

#[cfg(test)]
mod limit_tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};
    use wire::spec::Family;

    /// [`check_limits`] without the cost.
    fn check(cfg: &ServerConfig, spec: &TestSpec, peer: IpAddr) -> Result<(), LimitError> {
        check_limits(cfg, spec, peer).map(|_| ())
    }

    #[test]
    fn unpaced_server_sending_is_for_loopback_peers_only() {
        let cfg = ServerConfig::default();
        let mut spec = TestSpec::new(TestKind::UdpStream, Family::V4, 1000);
        spec.bound = Bound::DurationNs(1_000_000_000);
        spec.direction = Direction::Reverse;
        let lan: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(check(&cfg, &spec, Ipv4Addr::LOCALHOST.into()), Ok(()));
        let err = check(&cfg, &spec, lan).unwrap_err().to_string();
        assert!(err.contains("ask for a --rate"), "{err}");
        spec.rate = Some(Rate::BitsPerSec(1_000_000_000));
        assert_eq!(check(&cfg, &spec, lan), Ok(()));
        spec.streams = 11;
        let err = check(&cfg, &spec, lan).unwrap_err().to_string();
        assert_eq!(
            err,
            "the server sends UDP at most at 10000 Mbit/s in total (--max-rate); 11308 Mbit/s asked for (payload with its UDP and IP headers)"
        );
        let unlimited = ServerConfig {
            max_send_rate_bps: None,
            ..ServerConfig::default()
        };
        assert_eq!(check(&unlimited, &spec, lan), Ok(()));
        // Forward: the client sends, the server only receives.
        spec.direction = Direction::Forward;
        spec.rate = None;
        assert_eq!(check(&cfg, &spec, lan), Ok(()));
    }

    /// A traffic model's gaps and sizes are what the server sends, so they, not the
    /// test's `--rate` and payload size, are held to `--max-rate` and `--max-payload`.
    #[test]
    fn a_traffic_model_is_held_to_the_rate_and_payload_limits() {
        let cfg = ServerConfig {
            max_payload_bytes: Some(1472),
            ..ServerConfig::default()
        };
        let lan: IpAddr = "192.0.2.7".parse().unwrap();
        let reverse = |idt: Option<&str>, size: Option<&str>, rate: Option<Rate>| {
            let mut spec = TestSpec::new(TestKind::UdpStream, Family::V4, 1400);
            spec.bound = Bound::DurationNs(1_000_000_000);
            spec.direction = Direction::Reverse;
            spec.rate = rate;
            spec.traffic = Some(wire::traffic::TrafficModel {
                idt: idt.map(str::to_owned),
                size: size.map(str::to_owned),
                seed: 1,
                profile: None,
                on_time: None,
                off_time: None,
            });
            spec
        };
        let err = |spec: &TestSpec| check(&cfg, spec, lan).unwrap_err().to_string();
        // 1 bit/s asked for, 1 400-byte datagrams every ns drawn: 11 424 Gbit/s with
        // their 28 bytes of UDP and IPv4 headers.
        let flood = reverse(Some("constant:1ns"), None, Some(Rate::BitsPerSec(1)));
        assert_eq!(
            err(&flood),
            "the server sends UDP at most at 10000 Mbit/s in total (--max-rate); 11424000 Mbit/s asked for (payload with its UDP and IP headers)"
        );
        // Sizes up to 65 507 bytes at a 1 bit/s rate: above --max-payload.
        let big = reverse(None, Some("constant:65507"), Some(Rate::BitsPerSec(1)));
        assert_eq!(
            err(&big),
            "the server allows payloads of at most 1472 bytes (--max-payload); the size model draws up to 65507"
        );
        // Unbounded sizes can reach the sender's largest datagram.
        let exp = reverse(Some("constant:1ms"), Some("exp:500"), None);
        assert!(err(&exp).contains("draws up to 65507"), "{}", err(&exp));
        let within = reverse(Some("constant:1ms"), Some("uniform:64..1400"), None);
        assert_eq!(check(&cfg, &within, lan), Ok(()));
        // Paced by its gaps alone (no --rate): 1 400 bytes every 1 ms is 11.2 Mbit/s.
        let paced = reverse(Some("exp:1ms"), None, None);
        assert_eq!(check(&cfg, &paced, lan), Ok(()));
        // Gaps without a mean bound no rate.
        let cauchy = reverse(Some("cauchy:loc=1ms,scale=100us"), None, None);
        assert!(err(&cauchy).contains("have no mean"), "{}", err(&cauchy));
        assert_eq!(check(&cfg, &cauchy, Ipv4Addr::LOCALHOST.into()), Ok(()));
        // A size model without --idt sends at the test's packet rate, at the model's sizes.
        let sized = reverse(
            None,
            Some("constant:1000"),
            Some(Rate::PacketsPerSec(2_000_000)),
        );
        assert!(
            err(&sized).contains("16448 Mbit/s asked for"),
            "{}",
            err(&sized)
        );
    }

    /// `--max-rate` bounds what the network carries: 64-byte payloads at 100 Mbit/s
    /// of payload are 143.75 Mbit/s of IPv4 packets (28 bytes of headers each) and 175
    /// of IPv6 (48): within 150M on IPv4, over it on IPv6. Counting payload only, both
    /// passed.
    #[test]
    fn the_rate_limit_counts_each_datagrams_udp_and_ip_headers() {
        let cfg = ServerConfig {
            max_send_rate_bps: Some(150_000_000),
            ..ServerConfig::default()
        };
        let lan: IpAddr = "192.0.2.7".parse().unwrap();
        let small = |family| {
            let mut spec = TestSpec::new(TestKind::UdpStream, family, 64);
            spec.bound = Bound::DurationNs(1_000_000_000);
            spec.direction = Direction::Reverse;
            spec.rate = Some(Rate::BitsPerSec(100_000_000));
            spec
        };
        let v4 = check_limits(&cfg, &small(Family::V4), lan).unwrap();
        assert_eq!(v4.send_bps, 143_750_000);
        assert_eq!(
            check(&cfg, &small(Family::V6), lan)
                .unwrap_err()
                .to_string(),
            "the server sends UDP at most at 150 Mbit/s in total (--max-rate); 175 Mbit/s \
             asked for (payload with its UDP and IP headers)"
        );
    }

    #[test]
    fn count_bound_tests_are_held_to_the_duration_limit() {
        let cfg = ServerConfig {
            max_duration: Duration::from_secs(10),
            ..ServerConfig::default()
        };
        let mut spec = TestSpec::new(TestKind::UdpStream, Family::V6, 1000);
        spec.bound = Bound::Count(1000);
        spec.rate = Some(Rate::PacketsPerSec(10));
        let err = check(&cfg, &spec, Ipv6Addr::LOCALHOST.into())
            .unwrap_err()
            .to_string();
        assert!(err.contains("at most 10 s (--max-duration)"), "{err}");
        spec.rate = Some(Rate::PacketsPerSec(1000));
        assert_eq!(check(&cfg, &spec, Ipv6Addr::LOCALHOST.into()), Ok(()));
    }

    #[test]
    fn a_failed_session_logs_the_words_it_logged_as_a_string() {
        assert_eq!(SessionFailure::Closed.to_string(), "connection closed");
        let timeout = wire::session::SessionError::Timeout("waiting for the test".into());
        assert_eq!(
            SessionFailure::from(timeout).to_string(),
            "timed out while waiting for the test"
        );
    }

    #[test]
    fn private_servers_allow_what_the_protocol_allows() {
        let cfg = ServerConfig::private();
        let mut spec = TestSpec::new(TestKind::UdpStream, Family::V4, 65_507);
        spec.streams = wire::proto::MAX_STREAMS;
        spec.direction = Direction::Bidir;
        spec.bound = Bound::DurationNs(wire::proto::MAX_DURATION_NS);
        let lab_peer: IpAddr = "10.0.0.2".parse().unwrap();
        assert_eq!(check(&cfg, &spec, lab_peer), Ok(()));
        let err = check(&ServerConfig::default(), &spec, lab_peer)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--max-streams"), "{err}");
    }
}

#[cfg(test)]
mod admission_tests {
    use super::*;

    fn ctx() -> ServerCtx {
        ServerCtx::new(ServerConfig {
            max_streams: 4,
            max_send_rate_bps: Some(100_000_000),
            max_duration: Duration::from_secs(5),
            max_tests: 2,
            ..ServerConfig::default()
        })
    }

    fn cost(streams: u16, send_mbps: u64, secs: u64) -> TestCost {
        TestCost {
            streams,
            send_bps: send_mbps * 1_000_000,
            duration: Some(Duration::from_secs(secs)),
        }
    }

    const PEER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    /// The attack of issue 38: 8 tests of one group, 4 streams at 96 Mbit/s each,
    /// against `--max-streams 4 --max-rate 100M`. Only the first is admitted; the group
    /// may add tests only while their sum stays within one test's budget.
    #[test]
    fn a_group_shares_one_admission_and_budget() {
        let ctx = ctx();
        let t0 = Instant::now();
        let g = Some(4242);
        let first = ctx.try_admit(g, PEER, cost(4, 96, 2), t0).unwrap();
        for _ in 1..8 {
            let e = ctx.try_admit(g, PEER, cost(4, 96, 2), t0).err().unwrap();
            assert_eq!(
                e.to_string(),
                "the server allows at most 4 streams per test, a group's tests together \
                 (--max-streams); the group's running tests hold 4, 4 more asked for"
            );
            assert_eq!(e.code(), wire::proto::ErrorCode::LimitExceeded);
        }
        drop(first);
        // Streams that fit, a rate that does not.
        let a = ctx.try_admit(g, PEER, cost(2, 60, 2), t0).unwrap();
        let e = ctx.try_admit(g, PEER, cost(1, 60, 2), t0).err().unwrap();
        assert_eq!(
            e.to_string(),
            "the server sends UDP at most at 100 Mbit/s in total (--max-rate), a group's tests \
             together; the group's running tests hold 60 Mbit/s, 60 Mbit/s more asked for"
        );
        // Within both: admitted, in the group's one admission.
        let b = ctx.try_admit(g, PEER, cost(1, 40, 2), t0).unwrap();
        // The duration budget runs from the group's first admission: 3 s later only
        // 2 s are left of --max-duration 5.
        let later = t0 + Duration::from_secs(3);
        let e = ctx.try_admit(g, PEER, cost(0, 0, 3), later).err().unwrap();
        assert_eq!(
            e.to_string(),
            "the server allows tests of at most 5 s (--max-duration), a group's tests together \
             from its first; the group has run 3 s, 3 s more asked for"
        );
        let c = ctx.try_admit(g, PEER, cost(0, 0, 2), later).unwrap();
        assert_eq!(c.end_by(), None, "a duration-bound test ends by itself");
        // A count-bound test joins while time is left, and is ended at the group's end.
        let count = TestCost {
            duration: None,
            ..cost(0, 0, 0)
        };
        let d = ctx.try_admit(g, PEER, count, later).unwrap();
        assert_eq!(d.end_by(), Some(t0 + Duration::from_secs(5)));
        let at_end = t0 + Duration::from_secs(5);
        assert!(matches!(
            ctx.try_admit(g, PEER, count, at_end),
            Err(AdmitError::Group(LimitError::GroupDuration { .. }))
        ));
        // Another peer cannot join the group.
        let other: IpAddr = "127.0.0.2".parse().unwrap();
        assert_eq!(
            ctx.try_admit(g, other, cost(0, 0, 1), t0).err(),
            Some(AdmitError::Busy)
        );
        // The group held one of the 2 admissions: one other test fits, a third does not.
        let lone = ctx.try_admit(None, other, cost(1, 0, 1), t0).unwrap();
        assert_eq!(
            ctx.try_admit(None, other, cost(1, 0, 1), t0).err(),
            Some(AdmitError::Busy)
        );
        drop((a, b, c, d, lone));
        let adm = ctx.admitted.lock().unwrap();
        assert_eq!((adm.held, adm.send_bps, adm.groups.len()), (0, 0, 0));
    }

    /// `--max-rate` is the server's total: two tests (no group) of 60 Mbit/s each
    /// against 100M are not both admitted, even with `--max-tests 2`.
    #[test]
    fn the_send_rate_limit_holds_in_total_across_tests() {
        let ctx = ctx();
        let t0 = Instant::now();
        let first = ctx.try_admit(None, PEER, cost(1, 60, 1), t0).unwrap();
        let e = ctx.try_admit(None, PEER, cost(1, 60, 1), t0).err().unwrap();
        assert_eq!(
            e.to_string(),
            "server busy: the tests running now send 60 of the 100 Mbit/s it sends in total \
             (--max-rate); 60 Mbit/s asked for; try again when they have finished"
        );
        assert_eq!(e.code(), wire::proto::ErrorCode::Busy);
        // A test that sends nothing is admitted beside it.
        let quiet = ctx.try_admit(None, PEER, cost(4, 0, 1), t0).unwrap();
        drop((first, quiet));
        ctx.try_admit(None, PEER, cost(1, 100, 1), t0).unwrap();
    }
}
