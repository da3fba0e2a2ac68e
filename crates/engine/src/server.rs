//! The dualperf server: one TCP listener per bind address (one per family by default,
//! IPv6 sockets v6-only so each family is tested natively), a thread per control
//! connection (capped), one test at a time ("server busy" otherwise), and a clean stop
//! that wakes and joins every thread. [`EmbeddedServer`] is the in-process loopback one.

use crate::error::{EngineError, IoContext};
use crate::server_session::serve_conn;
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wire::proto::{SideStats, PROTOCOL_VERSION};
use wire::session::Limits;
use wire::spec::{Bound, Direction, Rate, TestKind, TestSpec, Transport};

/// The default control port (iperf3's 5201 stays free).
pub const DEFAULT_PORT: u16 = 5301;

/// One finished (or failed) control connection, for the server's one log line per test.
#[derive(Debug, Clone)]
pub struct TestLog {
    pub peer: SocketAddr,
    pub spec: Option<TestSpec>,
    /// The server's own measurements, or why the session failed.
    pub outcome: Result<SideStats, String>,
    pub elapsed: Duration,
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
    /// [`EmbeddedServer`] on loopback or a lab's private namespace.
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
    handlers: Mutex<Vec<JoinHandle<()>>>,
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

/// A running server; stops (and joins every thread) on [`ServerHandle::stop`] or drop.
pub struct ServerHandle {
    ctx: Arc<ServerCtx>,
    addrs: Vec<SocketAddr>,
    acceptors: Vec<JoinHandle<()>>,
}

impl ServerHandle {
    /// The addresses actually bound (ports resolved).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if self.ctx.stop.swap(true, Ordering::AcqRel) {
            return;
        }
        // Wake each blocking accept with a connection to it.
        for a in &self.addrs {
            let target = match a.ip() {
                IpAddr::V4(ip) if ip.is_unspecified() => {
                    SocketAddr::new(Ipv4Addr::LOCALHOST.into(), a.port())
                }
                IpAddr::V6(ip) if ip.is_unspecified() => {
                    SocketAddr::new(Ipv6Addr::LOCALHOST.into(), a.port())
                }
                _ => *a,
            };
            let _ = TcpStream::connect_timeout(&target, Duration::from_millis(200));
        }
        for h in self.acceptors.drain(..) {
            let _ = h.join();
        }
        let handlers = match self.ctx.handlers.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        };
        for h in handlers {
            let _ = h.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        sock.set_only_v6(true)?;
    }
    sock.set_reuse_address(true)?;
    sock.bind(&addr.into())?;
    sock.listen(128)?;
    Ok(sock.into())
}

/// Bind every address and start serving in background threads.
pub fn start_server(mut cfg: ServerConfig) -> Result<ServerHandle, EngineError> {
    // A count-bound test may not outlast the longest duration-bound one.
    cfg.limits.count_run_max = cfg.limits.count_run_max.min(cfg.max_duration);
    let binds = if cfg.binds.is_empty() {
        default_binds(cfg.port)
    } else {
        cfg.binds.clone()
    };
    let mut listeners = Vec::new();
    for (i, b) in binds.iter().enumerate() {
        match listen(*b) {
            Ok(l) => listeners.push(l),
            // The default IPv6 listener is optional when the host has no IPv6.
            Err(_) if cfg.binds.is_empty() && i > 0 => {}
            Err(e) => return Err(EngineError::io(format!("cannot listen on {b}"), e)),
        }
    }
    let mut addrs = Vec::new();
    for l in &listeners {
        addrs.push(l.local_addr().ctx("cannot read the listening address")?);
    }
    let ctx = Arc::new(ServerCtx {
        cfg,
        stop: AtomicBool::new(false),
        busy: AtomicUsize::new(0),
        groups: Mutex::new(BTreeMap::new()),
        conns: AtomicUsize::new(0),
        handlers: Mutex::new(Vec::new()),
    });
    let mut acceptors = Vec::new();
    for l in listeners {
        let c = ctx.clone();
        let h = std::thread::Builder::new()
            .name("dp-accept".into())
            .spawn(move || accept_loop(l, c))
            .ctx("cannot start the accept thread")?;
        acceptors.push(h);
    }
    Ok(ServerHandle {
        ctx,
        addrs,
        acceptors,
    })
}

/// Why `spec` is over one of the server's limits, in words naming the flag; `peer` is
/// the client's address (unpaced sending is allowed to a loopback peer only).
pub fn check_limits(cfg: &ServerConfig, spec: &TestSpec, peer: IpAddr) -> Result<(), String> {
    if let Some(m) = &spec.traffic {
        if !matches!(
            spec.kind,
            wire::spec::TestKind::UdpStream | wire::spec::TestKind::TcpStream
        ) {
            return Err(
                "a traffic model (--idt, --size-dist, --profile) needs udp-stream or tcp-stream"
                    .into(),
            );
        }
        m.check().map_err(|e| format!("traffic model: {e}"))?;
    }
    if spec.streams > cfg.max_streams {
        return Err(format!(
            "the server allows at most {} streams per test (--max-streams); {} asked for",
            cfg.max_streams, spec.streams
        ));
    }
    let max_payload = cfg
        .max_payload_bytes
        .unwrap_or(match spec.kind.transport() {
            Transport::Udp => spec.family.max_udp_payload_bytes(),
            Transport::Tcp => wire::proto::MAX_TCP_PAYLOAD_BYTES,
        });
    if spec.payload_bytes > max_payload {
        return Err(format!(
            "the server allows payloads of at most {max_payload} bytes (--max-payload); {} asked for",
            spec.payload_bytes
        ));
    }
    let max_secs = cfg.max_duration.as_secs_f64();
    if let Bound::DurationNs(ns) = spec.bound {
        if Duration::from_nanos(ns) > cfg.max_duration {
            return Err(format!(
                "the server allows tests of at most {max_secs} s (--max-duration); {} s asked for",
                ns as f64 / 1e9
            ));
        }
    }
    let server_sends = spec.kind == TestKind::UdpStream && spec.direction != Direction::Forward;
    // Payload bits, as `--rate` means them (engine::plan's pacing): one meaning of a bit
    // rate for what a client asks and what the server allows.
    let streams = u64::from(spec.streams);
    let total_bps = match spec.rate {
        Some(Rate::BitsPerSec(b)) => Some(b.saturating_mul(streams)),
        Some(Rate::PacketsPerSec(p)) => Some(
            p.saturating_mul(u64::from(spec.payload_bytes) * 8)
                .saturating_mul(streams),
        ),
        None => None,
    };
    if let (Bound::Count(n), Some(Rate::PacketsPerSec(p))) = (spec.bound, spec.rate) {
        if p > 0 && n / p > cfg.max_duration.as_secs() {
            return Err(format!(
                "the server allows tests of at most {max_secs} s (--max-duration); {n} datagrams at {p}/s take longer"
            ));
        }
    }
    if let (true, Some(max_bps)) = (server_sends, cfg.max_send_rate_bps) {
        match total_bps {
            Some(bps) if bps > max_bps => {
                return Err(format!(
                    "the server sends UDP at most at {} Mbit/s in total (--max-rate); {} Mbit/s asked for",
                    max_bps / 1_000_000,
                    bps / 1_000_000
                ))
            }
            None if !peer.is_loopback() => {
                return Err(format!(
                    "the server sends UDP at most at {} Mbit/s in total (--max-rate): ask for a --rate",
                    max_bps / 1_000_000
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Serve until `stop` becomes true (the CLI's Ctrl-C handler sets it).
pub fn run_server(cfg: ServerConfig, stop: &AtomicBool) -> Result<(), EngineError> {
    let handle = start_server(cfg)?;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    handle.stop();
    Ok(())
}

pub fn default_binds(port: u16) -> Vec<SocketAddr> {
    vec![
        SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), port),
        SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), port),
    ]
}

/// Connections turned away at the cap, kept open a little so that our "busy" reply is
/// read before the close (closing with unread input would reset the connection).
const LINGERING_MAX: usize = 64;

/// Tell a connection over the cap that the server is busy, without blocking: the reply
/// is small enough for any socket buffer.
fn refuse_busy(
    mut stream: TcpStream,
    ctx: &ServerCtx,
    lingering: &mut VecDeque<(Instant, TcpStream)>,
) {
    let _ = stream.set_nonblocking(true);
    let reply = wire::proto::encode_frame(
        &wire::proto::Msg::Error {
            code: wire::proto::ErrorCode::ConnectionLimit,
            message: "server busy: too many control connections open; try again shortly".into(),
        },
        ctx.cfg.protocol_version,
    );
    let _ = stream.write_all(&reply);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    if lingering.len() >= LINGERING_MAX {
        lingering.pop_front();
    }
    lingering.push_back((Instant::now(), stream));
}

fn accept_loop(listener: TcpListener, ctx: Arc<ServerCtx>) {
    if let Some(cpu) = ctx.cfg.pin_cpu {
        // Checked by whoever asked (the study pins its own thread first); a refusal
        // here leaves the server unpinned, which its caller records.
        let _ = net::pin_current_thread(cpu);
    }
    let mut lingering = VecDeque::new();
    loop {
        let accepted = listener.accept();
        if ctx.stopping() {
            return;
        }
        let Ok((stream, _)) = accepted else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if ctx.conns.load(Ordering::Acquire) >= ctx.cfg.max_connections {
            refuse_busy(stream, &ctx, &mut lingering);
            continue;
        }
        // A turned-away peer has had a second to read its reply.
        lingering.retain(|(at, _)| at.elapsed() < Duration::from_secs(1));
        ctx.conns.fetch_add(1, Ordering::AcqRel);
        let c = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("dp-session".into())
            .spawn(move || {
                serve_conn(stream, &c);
                c.conns.fetch_sub(1, Ordering::AcqRel);
            });
        match spawned {
            Ok(h) => {
                if let Ok(mut g) = ctx.handlers.lock() {
                    g.retain(|h| !h.is_finished());
                    g.push(h);
                }
            }
            Err(_) => {
                ctx.conns.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

/// An in-process server on 127.0.0.1 and ::1 (when IPv6 works) sharing one ephemeral
/// port; stops on drop.
pub struct EmbeddedServer {
    handle: ServerHandle,
    port: u16,
    has_ipv6: bool,
}

impl EmbeddedServer {
    pub fn start() -> Result<EmbeddedServer, EngineError> {
        EmbeddedServer::start_with(ServerConfig::private())
    }

    /// Start with `cfg` (its `binds` are replaced by the loopback pair).
    pub fn start_with(cfg: ServerConfig) -> Result<EmbeddedServer, EngineError> {
        let mut last_err = None;
        for _ in 0..8 {
            let v4 = listen(SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0))
                .ctx("cannot listen on 127.0.0.1")?;
            let port = v4
                .local_addr()
                .ctx("cannot read the listening address")?
                .port();
            drop(v4);
            let v6_addr = SocketAddr::new(Ipv6Addr::LOCALHOST.into(), port);
            let has_ipv6 = match listen(v6_addr) {
                Ok(_) => true,
                Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
                Err(_) => false,
            };
            let mut c = cfg.clone();
            c.binds = vec![SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port)];
            if has_ipv6 {
                c.binds.push(v6_addr);
            }
            match start_server(c) {
                Ok(handle) => {
                    return Ok(EmbeddedServer {
                        handle,
                        port,
                        has_ipv6,
                    })
                }
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.unwrap_or_else(|| {
            EngineError::io(
                "cannot find a free loopback port for the embedded server",
                std::io::ErrorKind::AddrInUse.into(),
            )
        }))
    }

    pub fn port(&self) -> u16 {
        self.port
    }
    pub fn has_ipv6(&self) -> bool {
        self.has_ipv6
    }
    pub fn local_addrs(&self) -> &[SocketAddr] {
        self.handle.local_addrs()
    }
}

#[cfg(test)]
mod limit_tests {
    use super::*;
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
        let err = check_limits(&cfg, &spec, lan).unwrap_err();
        assert!(err.contains("ask for a --rate"), "{err}");
        spec.rate = Some(Rate::BitsPerSec(1_000_000_000));
        assert_eq!(check_limits(&cfg, &spec, lan), Ok(()));
        spec.streams = 11;
        let err = check_limits(&cfg, &spec, lan).unwrap_err();
        assert!(err.contains("10000 Mbit/s in total (--max-rate)"), "{err}");
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

    #[test]
    fn count_bound_tests_are_held_to_the_duration_limit() {
        let cfg = ServerConfig {
            max_duration: Duration::from_secs(10),
            ..ServerConfig::default()
        };
        let mut spec = TestSpec::new(TestKind::UdpStream, Family::V6, 1000);
        spec.bound = Bound::Count(1000);
        spec.rate = Some(Rate::PacketsPerSec(10));
        let err = check_limits(&cfg, &spec, Ipv6Addr::LOCALHOST.into()).unwrap_err();
        assert!(err.contains("at most 10 s (--max-duration)"), "{err}");
        spec.rate = Some(Rate::PacketsPerSec(1000));
        assert_eq!(
            check_limits(&cfg, &spec, Ipv6Addr::LOCALHOST.into()),
            Ok(())
        );
        let h = start_server(ServerConfig {
            binds: vec![SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0)],
            ..cfg
        })
        .unwrap();
        assert_eq!(h.ctx.cfg.limits.count_run_max, Duration::from_secs(10));
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
        let err = check_limits(&ServerConfig::default(), &spec, lab_peer).unwrap_err();
        assert!(err.contains("--max-streams"), "{err}");
    }
}
