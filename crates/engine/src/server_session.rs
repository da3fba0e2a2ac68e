//! One control connection on the server: drives a [`ServerSession`] with real I/O,
//! opens the test's data sockets, runs the server side's workers and returns its
//! measurements. Every wait is bounded; any failure aborts the workers and ends here.

use crate::control::{ControlConn, RecvError};
use crate::cpu::CpuWindow;
use crate::data::{Role, Sampler, Shared, Workers};
use crate::error::{EngineError, IoContext};
use crate::plan::{self, Side};
use crate::server_ctx::{self, BusyGuard, ServerCtx, SessionFailure, TestLog};
use crate::sockopt;
use std::io::Read;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::datagram::HEADER_BYTES;
use wire::proto::{AppliedOpts, ErrorCode, IntervalSample, SideStats};
use wire::session::{ServerEvent, ServerSession};
use wire::spec::{TestKind, TestSpec, Transport};

/// Largest control message accepted before a test is accepted (a hello with the
/// client's metadata and a request are a few KiB); 32 stalled peers then hold at most
/// 2 MiB of frame buffers instead of 128 MiB.
const PRE_TEST_MAX_BODY_BYTES: usize = 64 << 10;

/// How often the session loop wakes while a test runs (sender-done, stop, intervals).
const TICK: Duration = Duration::from_millis(20);

enum DataSock {
    Tcp(TcpListener),
    Udp(UdpSocket),
    Quic(Box<dyn crate::QuicEndpoint>),
}

struct Test<'a> {
    spec: TestSpec,
    binding: crate::DataBinding,
    data: Option<DataSock>,
    shared: Option<Arc<Shared>>,
    workers: Workers,
    cpu: Option<CpuWindow>,
    applied: AppliedOpts,
    sampler: Option<Sampler>,
    intervals: Vec<IntervalSample>,
    sender_done_sent: bool,
    busy: Option<BusyGuard<'a>>,
}

pub(crate) fn serve_conn(stream: TcpStream, ctx: &ServerCtx) {
    let started = Instant::now();
    let Ok(peer) = stream.peer_addr() else {
        return;
    };
    let local_ip = match stream.local_addr() {
        Ok(a) => a.ip(),
        Err(_) => return,
    };
    let mut info = ctx
        .cfg
        .server_info
        .clone()
        .unwrap_or_else(|| net::sysinfo::capture(Some(local_ip)));
    // This server answers clock queries (one-way delay); a test hook may shift its
    // wall clock, and then it no longer claims the client's clock as its own.
    info.insert(plan::CLOCK_QUERY_KEY.into(), "1".into());
    let clock_shift_ns = clock_shift_from_env();
    if clock_shift_ns != 0 {
        info.remove(net::sysinfo::BOOT_ID_KEY);
        info.insert("clock.test_shift_ns".into(), clock_shift_ns.to_string());
    }
    let wall = || net::clock::wall_ns().saturating_add_signed(clock_shift_ns);
    let mut conn = ControlConn::new(stream, ctx.cfg.protocol_version);
    let mut sess = ServerSession::new(Instant::now(), info, ctx.cfg.limits);
    if let Some(key) = &ctx.cfg.psk {
        match crate::os_nonce() {
            Ok(nonce) => sess = sess.with_psk(key.clone(), nonce),
            // Without a nonce we cannot authenticate: serve nobody rather than everybody.
            Err(_) => return,
        }
    }
    let mut test: Option<Test<'_>> = None;
    let mut link_before = std::collections::BTreeMap::new();
    let mut outcome: Result<SideStats, SessionFailure> = Err(SessionFailure::Closed);
    'session: loop {
        while let Some(m) = sess.poll_msg() {
            if conn.send(&m).is_err() {
                break 'session;
            }
        }
        while let Some(ev) = sess.poll_event() {
            match ev {
                ServerEvent::TestRequested { mut spec, .. } => {
                    let cost = match server_ctx::check_limits(&ctx.cfg, &spec, peer.ip()) {
                        Ok(c) => c,
                        Err(why) => {
                            sess.reject(ErrorCode::LimitExceeded, &why.to_string());
                            continue;
                        }
                    };
                    match ctx.try_admit(spec.group, peer.ip(), cost, Instant::now()) {
                        Err(why) => sess.reject(why.code(), &why.to_string()),
                        Ok(guard) => match prepare(&spec, local_ip, peer.ip(), &ctx.cfg) {
                            Ok((data, port, token, quic_cert)) => {
                                // Keyed: streams carry the session token, which never goes
                                // on the control connection, so `accept` carries none.
                                let (binding, sent) = match sess.session_token() {
                                    Some(t) => (crate::DataBinding::keyed(&t), 0),
                                    None => (crate::DataBinding::keyless(token), token),
                                };
                                sess.accept_with_cert(Instant::now(), port, sent, quic_cert);
                                // The client's choice wins; `auto` takes the server's default.
                                if spec.udp_datapath.is_auto() {
                                    spec.udp_datapath = ctx.cfg.udp_datapath;
                                }
                                link_before = net::wifi::link_keys(local_ip, "before");
                                test = Some(Test::new(spec, binding, data, guard));
                            }
                            Err(PrepareError::Refused(why)) => {
                                sess.reject(ErrorCode::LimitExceeded, &why)
                            }
                            Err(PrepareError::Engine(e)) => {
                                sess.reject(ErrorCode::Internal, &e.to_string())
                            }
                        },
                    }
                }
                ServerEvent::ClockQuery { t1_ns } => {
                    let t2 = wall();
                    sess.clock_reply(t1_ns, t2, wall());
                }
                ServerEvent::StartRequested { udp_port } => {
                    let Some(t) = test.as_mut() else {
                        sess.reject(ErrorCode::Internal, "no test");
                        continue;
                    };
                    match t.start(peer.ip(), udp_port, ctx) {
                        Ok(()) => {
                            sess.started(Instant::now());
                            if let Some(at) = t.busy.as_ref().and_then(BusyGuard::end_by) {
                                sess.end_run_by(at);
                            }
                        }
                        Err(e) => sess.reject(ErrorCode::Internal, &e.to_string()),
                    }
                }
                ServerEvent::PeerFinished(_) => {
                    if let Some(t) = test.take() {
                        let mut stats = t.finish(clock_shift_ns);
                        stats.applied.append(&mut link_before);
                        stats
                            .applied
                            .extend(net::wifi::link_keys(local_ip, "after"));
                        outcome = Ok(stats.clone());
                        // `t` (and its busy slot) is gone before the result goes out, so
                        // a client that has its result can start the next test at once.
                        sess.result(stats);
                    }
                }
                ServerEvent::Failed(e) => outcome = Err(e.into()),
            }
        }
        // After the events, so the log line carries a failure's reason.
        if sess.is_closed() {
            break;
        }
        if sess.has_output() {
            continue;
        }
        if ctx.stopping() {
            sess.reject(ErrorCode::Internal, "the server is shutting down");
            continue;
        }
        let mut deadline = sess.poll_timeout().unwrap_or_else(|| Instant::now() + TICK);
        if let Some(t) = test.as_mut() {
            t.tick(&mut sess);
            deadline = deadline.min(Instant::now() + TICK);
        } else {
            deadline = deadline.min(Instant::now() + Duration::from_millis(100));
        }
        // Before a test is accepted only small messages (hello, request) are expected.
        conn.set_max_body_bytes(if test.is_some() {
            wire::proto::MAX_BODY_BYTES
        } else {
            PRE_TEST_MAX_BODY_BYTES
        });
        match conn.recv_until(deadline) {
            Ok(Some(m)) => sess.handle_msg(Instant::now(), m),
            Ok(None) => sess.handle_timeout(Instant::now()),
            Err(RecvError::Wire(e)) => sess.handle_decode_error(e),
            Err(RecvError::Closed) | Err(RecvError::Io(_)) => break,
        }
    }
    if let Some(t) = test.take() {
        t.abort();
    }
    conn.close();
    if let Some(f) = &ctx.cfg.on_test {
        f(&TestLog {
            peer,
            spec: sess.spec().cloned(),
            outcome,
            elapsed: started.elapsed(),
        });
    }
}

/// Test hook: this server's wall clock reads this many ns off (clock replies and the
/// origin it reports), as a server on a host with a wrong clock would
/// (`DUALPERF_TEST_CLOCK_SHIFT_NS`, at most ± 1 day; anything else is ignored).
pub const CLOCK_SHIFT_ENV: &str = "DUALPERF_TEST_CLOCK_SHIFT_NS";

fn clock_shift_from_env() -> i64 {
    const DAY_NS: i64 = 86_400_000_000_000;
    crate::data::test_hook(CLOCK_SHIFT_ENV)
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|v| v.abs() <= DAY_NS)
        .unwrap_or(0)
}

/// Why a test's data socket was not opened.
enum PrepareError {
    /// The QUIC endpoint refused the test (no QUIC in this build, a limit).
    Refused(String),
    Engine(EngineError),
}

impl From<EngineError> for PrepareError {
    fn from(e: EngineError) -> PrepareError {
        PrepareError::Engine(e)
    }
}

impl From<net::NetError> for PrepareError {
    fn from(e: net::NetError) -> PrepareError {
        PrepareError::Engine(e.into())
    }
}

type Prepared = (DataSock, u16, u64, Option<String>);

/// Bind the test's data socket on the control connection's local address, with the
/// test's socket options (a TCP listener passes them on to the accepted connections);
/// a QUIC test's endpoint on it, with its certificate (hex DER) for `accept`.
fn prepare(
    spec: &TestSpec,
    ip: IpAddr,
    peer: IpAddr,
    cfg: &server_ctx::ServerConfig,
) -> Result<Prepared, PrepareError> {
    let addr = SocketAddr::new(ip, 0);
    if spec.kind.is_quic() {
        let hook = cfg
            .quic
            .as_ref()
            .ok_or_else(|| PrepareError::Refused(crate::NO_QUIC.into()))?;
        let (s, _) = net::udp_bind(addr, &plan::effective_opts(spec))?;
        let port = s.local_addr().ctx("data socket address")?.port();
        let (der, endpoint) = hook
            .bind(s, spec, cfg, peer)
            .map_err(PrepareError::Refused)?;
        let cert = wire::auth::to_hex(&der);
        return Ok((
            DataSock::Quic(endpoint),
            port,
            crate::random_token(),
            Some(cert),
        ));
    }
    let opts = plan::effective_opts(spec);
    if spec.zerocopy.is_some() && crate::plan::stream_roles(spec, crate::plan::Side::Server).0 {
        net::zerocopy::check_supported()?;
    }
    let (data, port) = match spec.kind.transport() {
        Transport::Tcp => {
            let (l, _) = net::tcp_listen(addr, &opts)?;
            let port = l.local_addr().ctx("data listener address")?.port();
            (DataSock::Tcp(l), port)
        }
        Transport::Udp => {
            let (s, _) = net::udp_bind(addr, &opts)?;
            let port = s.local_addr().ctx("data socket address")?.port();
            (DataSock::Udp(s), port)
        }
    };
    Ok((data, port, crate::random_token(), None))
}

impl<'a> Test<'a> {
    fn new(
        spec: TestSpec,
        binding: crate::DataBinding,
        data: DataSock,
        busy: BusyGuard<'a>,
    ) -> Test<'a> {
        Test {
            spec,
            binding,
            data: Some(data),
            shared: None,
            workers: Workers::default(),
            cpu: None,
            applied: AppliedOpts::new(),
            sampler: None,
            intervals: Vec::new(),
            sender_done_sent: false,
            busy: Some(busy),
        }
    }

    fn start(
        &mut self,
        peer_ip: IpAddr,
        udp_port: Option<u16>,
        ctx: &ServerCtx,
    ) -> Result<(), EngineError> {
        let spec = self.spec.clone();
        let data = self.data.take();
        let mut tcp_conns = Vec::new();
        let mut udp_sock = None;
        let mut crr_listener = None;
        let mut quic = None;
        match data {
            Some(DataSock::Quic(endpoint)) => quic = Some(endpoint),
            // tcp-crr: its connections come one per transaction, after `started`.
            Some(DataSock::Tcp(l)) if spec.kind == TestKind::TcpCrr => {
                self.applied = sockopt::to_map(&net::read_applied(&l)?);
                crr_listener = Some(l);
            }
            Some(DataSock::Tcp(l)) => {
                tcp_conns = accept_data(&l, spec.streams, &self.binding, ctx)?;
                if let Some(c) = tcp_conns.first() {
                    self.applied = sockopt::to_map(&net::read_applied(c)?);
                }
            }
            Some(DataSock::Udp(s)) => {
                self.applied = sockopt::to_map(&net::read_applied(&s)?);
                udp_sock = Some(s);
            }
            None => {}
        }
        self.cpu = Some(CpuWindow::start());
        let shared = Shared::new(Instant::now(), self.binding.token, spec.window_ns);
        let w = &mut self.workers;
        match spec.kind {
            TestKind::TcpStream | TestKind::TcpRr => {
                plan::start_tcp(&spec, Side::Server, tcp_conns, &shared, w)?
            }
            TestKind::UdpRr => {
                if let Some(s) = udp_sock {
                    let sh = shared.clone();
                    w.spawn(Role::Rr, "dp-udp-echo", move || {
                        crate::udp::rr_server(s, peer_ip, None, sh)
                    })
                    .ctx("cannot start a data thread")?;
                }
            }
            // pmtu probes are acknowledged by their header alone: the reply crosses any
            // return path whatever the probe's size.
            TestKind::Pmtu | TestKind::Frag | TestKind::ExtHeaders => {
                if let Some(s) = udp_sock {
                    let sh = shared.clone();
                    w.spawn(Role::Rr, "dp-pmtu-ack", move || {
                        crate::udp::rr_server(s, peer_ip, Some(HEADER_BYTES), sh)
                    })
                    .ctx("cannot start a data thread")?;
                }
            }
            TestKind::UdpStream => {
                let (sends, recvs) = plan::stream_roles(&spec, Side::Server);
                if sends {
                    let port = udp_port.ok_or_else(|| {
                        EngineError::Protocol("reverse UDP needs the client's port".into())
                    })?;
                    let mut socks = Vec::new();
                    for _ in 0..spec.streams {
                        socks.push(connected_udp(peer_ip, port, &spec)?);
                    }
                    plan::start_udp_senders(&spec, socks, &shared, w)?;
                }
                if let (true, Some(s)) = (recvs, udp_sock) {
                    plan::start_udp_receiver(&spec, s, &shared, w)?;
                }
            }
            TestKind::TcpCrr => {
                let l = crr_listener
                    .ok_or_else(|| EngineError::Protocol("tcp-crr has no data listener".into()))?;
                plan::start_crr_server(&spec, l, self.binding.clone(), &shared, w)?
            }
            TestKind::QuicStream | TestKind::QuicRr => {
                if let Some(endpoint) = quic {
                    let token = self.binding.prefix.clone();
                    let deadline = crate::quic_hook::deadline(&spec, &ctx.cfg.limits);
                    let spec = spec.clone();
                    w.spawn(Role::Rr, "dp-quic-server", move || {
                        crate::quic_hook::outcome(&spec, endpoint.serve(&spec, &token, deadline))
                    })
                    .ctx("cannot start a data thread")?;
                }
            }
            // Refused by validate_spec when the test was offered.
            TestKind::Rrul => {
                return Err(EngineError::Protocol(
                    "rrul is not a test a server runs".into(),
                ))
            }
        }
        self.sampler = spec.interval_ns.map(Sampler::new);
        self.shared = Some(shared);
        Ok(())
    }

    /// Called while running: report our senders done, take interval samples.
    fn tick(&mut self, sess: &mut ServerSession) {
        let Some(shared) = &self.shared else {
            return;
        };
        if let Some(w) = self.cpu.as_mut() {
            w.tick(shared);
        }
        if !self.sender_done_sent && self.workers.has(Role::Send) && self.workers.done(Role::Send) {
            self.sender_done_sent = true;
            let l = &shared.live;
            sess.sender_done(l.sent_packets.load(Relaxed), l.sent_bytes.load(Relaxed));
        }
        if let Some(s) = self.sampler.as_mut() {
            if let Some(sample) = s.poll(shared, Instant::now(), false) {
                self.intervals.push(sample);
            }
        }
    }

    /// The client is done: drain, join, measure. `clock_shift_ns`: the test hook's
    /// shift of this server's wall clock.
    fn finish(mut self, clock_shift_ns: i64) -> SideStats {
        let Some(shared) = self.shared.take() else {
            return SideStats::default();
        };
        shared.drain.store(true, Relaxed);
        let workers = std::mem::take(&mut self.workers);
        let outcome = workers.join_within(&shared, crate::data::JOIN_GRACE);
        let cpu = self.cpu.take().and_then(|w| w.finish(&shared));
        // The last interval ends with the last send or receive, not after the drain.
        let end_ns = outcome.last_send_ns.max(outcome.last_recv_ns);
        let end = (shared.go + Duration::from_nanos(end_ns)).min(Instant::now());
        if let Some(s) = self.sampler.as_mut() {
            if let Some(sample) = s.poll(&shared, end, true) {
                self.intervals.push(sample);
            }
        }
        self.busy.take();
        let intervals = std::mem::take(&mut self.intervals);
        let mut stats = outcome.into_side_stats(cpu, std::mem::take(&mut self.applied), intervals);
        stats.realtime_at_go_ns = Some(
            shared
                .realtime_at_go_ns
                .saturating_add_signed(clock_shift_ns),
        );
        stats
    }

    fn abort(mut self) {
        if let Some(shared) = self.shared.take() {
            shared.abort.store(true, Relaxed);
        }
        std::mem::take(&mut self.workers).join();
    }
}

fn connected_udp(ip: IpAddr, port: u16, spec: &TestSpec) -> Result<UdpSocket, EngineError> {
    let local: SocketAddr = match ip {
        IpAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
        IpAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let opts = plan::effective_opts(spec);
    let (s, _) = net::udp_bind(local, &opts)?;
    net::udp_connect(&s, SocketAddr::new(ip, port), &opts)?;
    Ok(s)
}

/// Accept `n` data connections that start with our binding's bytes; others are closed.
fn accept_data(
    l: &TcpListener,
    n: u16,
    binding: &crate::DataBinding,
    ctx: &ServerCtx,
) -> Result<Vec<TcpStream>, EngineError> {
    l.set_nonblocking(true).ctx("data listener")?;
    let deadline = Instant::now() + ctx.cfg.limits.handshake;
    let mut conns = Vec::new();
    while conns.len() < usize::from(n) {
        if Instant::now() >= deadline || ctx.stopping() {
            return Err(EngineError::Timeout(
                "waiting for the client's data connections".into(),
            ));
        }
        match l.accept() {
            Ok((mut s, _)) => {
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
                let mut buf = vec![0u8; binding.prefix.len()];
                if s.read_exact(&mut buf).is_ok() && binding.matches(&buf) {
                    conns.push(s);
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    Ok(conns)
}
