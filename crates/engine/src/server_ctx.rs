//! What a dualperf server is configured to allow and the state its threads share: the
//! [`ServerConfig`], the limits a test must meet ([`check_limits`]), and the test slots
//! ([`BusyGuard`]). The listener (`server`) and each control session (`server_session`)
//! both build on it.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
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
    /// Total UDP rate the server may be asked to send (reverse / bidir), payload bit/s
    /// (as `--rate` counts them); `None` = unlimited. Unpaced ("as fast as possible") server
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
    /// Tests running now (a group of tests counts once).
    pub busy: AtomicUsize,
    /// Groups running now: id → (the peer that opened it, members running).
    groups: Mutex<BTreeMap<u64, (IpAddr, usize)>>,
    pub conns: AtomicUsize,
    /// Session threads to join when the server stops.
    pub handlers: Mutex<Vec<JoinHandle<()>>>,
}

impl ServerCtx {
    pub(crate) fn new(cfg: ServerConfig) -> ServerCtx {
        ServerCtx {
            cfg,
            stop: AtomicBool::new(false),
            busy: AtomicUsize::new(0),
            groups: Mutex::new(BTreeMap::new()),
            conns: AtomicUsize::new(0),
            handlers: Mutex::new(Vec::new()),
        }
    }
}

/// Tests of one group (one client's loaded-latency test: its load streams and its
/// probes) that may run together while they hold one test slot.
pub const MAX_GROUP_TESTS: usize = 8;

/// Holds one of the server's test slots (or a place in a running group); released on
/// drop, the group's slot when its last member ends.
pub(crate) struct BusyGuard<'a> {
    ctx: &'a ServerCtx,
    group: Option<u64>,
}

impl ServerCtx {
    /// A test slot, or `None` when the server is busy. A test of a group joins the
    /// group's slot while the group runs, from the same peer, up to
    /// [`MAX_GROUP_TESTS`]; an unknown group takes a free slot like any test.
    pub(crate) fn try_busy(&self, group: Option<u64>, peer: IpAddr) -> Option<BusyGuard<'_>> {
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = group {
            if let Some((owner, n)) = groups.get_mut(&g) {
                if *owner != peer || *n >= MAX_GROUP_TESTS {
                    return None;
                }
                *n += 1;
                return Some(BusyGuard { ctx: self, group });
            }
        }
        let max = self.cfg.max_tests;
        self.busy
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()?;
        if let Some(g) = group {
            groups.insert(g, (peer, 1));
        }
        Some(BusyGuard { ctx: self, group })
    }
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        if let Some(g) = self.group {
            let mut groups = self.ctx.groups.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, n)) = groups.get_mut(&g) {
                *n -= 1;
                if *n > 0 {
                    return;
                }
                groups.remove(&g);
            }
        }
        self.ctx.busy.fetch_sub(1, Ordering::AcqRel);
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
    #[error("the server sends UDP at most at {max_mbps} Mbit/s in total (--max-rate); {asked_mbps} Mbit/s asked for")]
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
/// it can draw (`Some` only with a size model) and its mean payload rate in bit/s, the
/// mean size over the mean gap (`None`: unpaced, or gaps without a mean). Sizes are
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
    // Saturating: f64 → u64 `as` clamps at u64::MAX.
    let bps = gap_ns.map(|g| (mean_size * 8.0 * 1e9 / g) as u64);
    Ok((largest, bps))
}

/// Whether `spec` is within the server's limits; `peer` is the client's address
/// (unpaced sending is allowed to a loopback peer only).
pub fn check_limits(cfg: &ServerConfig, spec: &TestSpec, peer: IpAddr) -> Result<(), LimitError> {
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
    let server_sends = spec.kind == TestKind::UdpStream && spec.direction != Direction::Forward;
    // Payload bits, as `--rate` means them (`TestSpec::rate_bps`).
    let streams = u64::from(spec.streams);
    let total_bps = match model {
        Some((_, bps)) => bps,
        None => spec.rate_bps(),
    }
    .map(|b| b.saturating_mul(streams));
    if let (Bound::Count(count), Some(Rate::PacketsPerSec(pps))) = (spec.bound, spec.rate) {
        if pps > 0 && count / pps > cfg.max_duration.as_secs() {
            return Err(LimitError::CountDuration { max_s, count, pps });
        }
    }
    if let (true, Some(max_bps)) = (server_sends, cfg.max_send_rate_bps) {
        let max_mbps = max_bps / 1_000_000;
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
    Ok(())
}

#[cfg(test)]
mod limit_tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};
    use wire::spec::Family;

    #[test]
    fn unpaced_server_sending_is_for_loopback_peers_only() {
        let cfg = ServerConfig::default();
        let mut spec = TestSpec::new(TestKind::UdpStream, Family::V4, 1000);
        spec.bound = Bound::DurationNs(1_000_000_000);
        spec.direction = Direction::Reverse;
        let lan: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(
            check_limits(&cfg, &spec, Ipv4Addr::LOCALHOST.into()),
            Ok(())
        );
        let err = check_limits(&cfg, &spec, lan).unwrap_err().to_string();
        assert!(err.contains("ask for a --rate"), "{err}");
        spec.rate = Some(Rate::BitsPerSec(1_000_000_000));
        assert_eq!(check_limits(&cfg, &spec, lan), Ok(()));
        spec.streams = 11;
        let err = check_limits(&cfg, &spec, lan).unwrap_err().to_string();
        assert_eq!(
            err,
            "the server sends UDP at most at 10000 Mbit/s in total (--max-rate); 11000 Mbit/s asked for"
        );
        let unlimited = ServerConfig {
            max_send_rate_bps: None,
            ..ServerConfig::default()
        };
        assert_eq!(check_limits(&unlimited, &spec, lan), Ok(()));
        // Forward: the client sends, the server only receives.
        spec.direction = Direction::Forward;
        spec.rate = None;
        assert_eq!(check_limits(&cfg, &spec, lan), Ok(()));
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
        let err = |spec: &TestSpec| check_limits(&cfg, spec, lan).unwrap_err().to_string();
        // 1 bit/s asked for, 1 400-byte datagrams every ns drawn: 11 200 Gbit/s.
        let flood = reverse(Some("constant:1ns"), None, Some(Rate::BitsPerSec(1)));
        assert_eq!(
            err(&flood),
            "the server sends UDP at most at 10000 Mbit/s in total (--max-rate); 11200000 Mbit/s asked for"
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
        assert_eq!(check_limits(&cfg, &within, lan), Ok(()));
        // Paced by its gaps alone (no --rate): 1 400 bytes every 1 ms is 11.2 Mbit/s.
        let paced = reverse(Some("exp:1ms"), None, None);
        assert_eq!(check_limits(&cfg, &paced, lan), Ok(()));
        // Gaps without a mean bound no rate.
        let cauchy = reverse(Some("cauchy:loc=1ms,scale=100us"), None, None);
        assert!(err(&cauchy).contains("have no mean"), "{}", err(&cauchy));
        assert_eq!(
            check_limits(&cfg, &cauchy, Ipv4Addr::LOCALHOST.into()),
            Ok(())
        );
        // A size model without --idt sends at the test's packet rate, at the model's sizes.
        let sized = reverse(
            None,
            Some("constant:1000"),
            Some(Rate::PacketsPerSec(2_000_000)),
        );
        assert!(
            err(&sized).contains("16000 Mbit/s asked for"),
            "{}",
            err(&sized)
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
        let err = check_limits(&cfg, &spec, Ipv6Addr::LOCALHOST.into())
            .unwrap_err()
            .to_string();
        assert!(err.contains("at most 10 s (--max-duration)"), "{err}");
        spec.rate = Some(Rate::PacketsPerSec(1000));
        assert_eq!(
            check_limits(&cfg, &spec, Ipv6Addr::LOCALHOST.into()),
            Ok(())
        );
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
        assert_eq!(check_limits(&cfg, &spec, lab_peer), Ok(()));
        let err = check_limits(&ServerConfig::default(), &spec, lab_peer)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--max-streams"), "{err}");
    }
}
