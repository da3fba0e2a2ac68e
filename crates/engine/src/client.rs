//! The client: connect the control channel, drive a [`ClientSession`], open the data
//! sockets the server offered, run this side's workers, report intervals to the
//! [`Recorder`], and merge both sides' measurements into a [`RunResult`].

use crate::control::{ControlConn, RecvError};
use crate::cpu::CpuWindow;
use crate::data::{Sampler, Shared, Workers};
use crate::error::{EngineError, IoContext};
use crate::plan::{self, Side};
use crate::result::{RunResult, RESULT_SCHEMA_VERSION};
use crate::{sockopt, Recorder};
use measure::{ClockOffset, ClockSample};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::proto::{validate_spec, AppliedOpts, ErrorCode, SideStats, WireError, PROTOCOL_VERSION};
use wire::session::{ClientEvent, ClientSession, ClientState, Limits, SessionError};
use wire::spec::{Family, TestKind, TestSpec, Transport};

/// How to run one test against one server.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub host: String,
    pub port: u16,
    pub spec: TestSpec,
    pub connect_timeout: Duration,
    pub limits: Limits,
    /// Metadata about this host; `None` = `net::sysinfo::capture` of the local address.
    pub client_info: Option<BTreeMap<String, String>>,
    /// Control protocol version to speak (tests use another to provoke a mismatch).
    pub protocol_version: u16,
    /// Pre-shared key: prove it, and require the server to prove it too.
    pub psk: Option<wire::auth::Psk>,
    /// Runs QUIC tests; `None`: they fail with the reason.
    pub quic: Option<Arc<dyn crate::QuicHook>>,
}

impl Default for ClientConfig {
    fn default() -> ClientConfig {
        ClientConfig {
            host: "127.0.0.1".into(),
            port: crate::DEFAULT_PORT,
            spec: TestSpec::new(TestKind::TcpStream, Family::V4, 1408),
            connect_timeout: Duration::from_secs(3),
            limits: Limits::default(),
            client_info: None,
            protocol_version: PROTOCOL_VERSION,
            psk: None,
            quic: None,
        }
    }
}

impl ClientConfig {
    pub fn new(host: &str, port: u16, spec: TestSpec) -> ClientConfig {
        ClientConfig {
            host: host.to_string(),
            port,
            spec,
            ..ClientConfig::default()
        }
    }
}

/// This side's data phase.
struct Running {
    shared: Arc<Shared>,
    workers: Workers,
    cpu: CpuWindow,
    sampler: Option<Sampler>,
    applied: AppliedOpts,
}

/// Data sockets opened after `accept`, before `start`.
struct Opened {
    tcp: Vec<TcpStream>,
    udp_out: Vec<UdpSocket>,
    udp_in: Option<UdpSocket>,
    /// Where `udp_in` receives (kept after the socket went to its receiver).
    udp_in_port: Option<u16>,
    applied: AppliedOpts,
    token: u64,
    /// tcp-crr: the server's data address and the bytes each connection starts with
    /// (its connections are opened per transaction, after `start`).
    crr: Option<(SocketAddr, Vec<u8>)>,
    /// QUIC test: the socket, the server's endpoint and its certificate (DER), and the
    /// binding's bytes the request carries.
    quic: Option<OpenedQuic>,
}

struct OpenedQuic {
    socket: UdpSocket,
    server: SocketAddr,
    cert_der: Vec<u8>,
    token: Vec<u8>,
}

/// RR numbers and warnings that stay on the client.
#[derive(Default)]
struct LocalExtra {
    rtt: Option<measure::LatencySummary>,
    connect_time: Option<measure::LatencySummary>,
    transactions: u64,
    rr_timeouts: u64,
    warnings: Vec<String>,
    pmtu: Option<crate::pmtu::PmtuReport>,
}

/// Run one test. Callable any number of times in one process: every thread and socket
/// it opens is joined or closed before it returns.
pub fn run_client(
    cfg: &ClientConfig,
    recorder: &mut dyn Recorder,
) -> Result<RunResult, EngineError> {
    let spec = &cfg.spec;
    validate_spec(spec)?;
    if spec.zerocopy.is_some() && crate::plan::stream_roles(spec, crate::plan::Side::Client).0 {
        net::zerocopy::check_supported()?;
    }
    let began = Instant::now();
    let addr = resolve(&cfg.host, cfg.port, spec.family)?;
    let stream = connect(addr, cfg)?;
    let local = stream.local_addr().ctx("control connection")?;
    let link_before = net::wifi::link_keys(local.ip(), "before");
    let client_info = cfg
        .client_info
        .clone()
        .unwrap_or_else(|| net::sysinfo::capture(Some(local.ip())));
    let mut conn = ControlConn::new(stream, cfg.protocol_version);
    let mut sess = ClientSession::new(
        Instant::now(),
        spec.clone(),
        client_info.clone(),
        cfg.limits,
    );
    if let Some(key) = &cfg.psk {
        sess = sess.with_psk(key.clone(), crate::os_nonce()?);
    }
    let mut run: Option<Running> = None;
    let mut clock = ClockLog::default();
    let outcome = drive(
        cfg, addr, &mut conn, &mut sess, &mut run, recorder, &mut clock,
    );
    if let Some(r) = run.take() {
        r.shared.abort.store(true, Relaxed);
        r.workers.join();
    }
    let (mut server, mut client, extra) = outcome?;
    // The server's settings are its text: bounded as any metadata a peer sends.
    server.applied = wire::text::cap_metadata(std::mem::take(&mut server.applied));
    client.applied.extend(link_before);
    client
        .applied
        .extend(net::wifi::link_keys(local.ip(), "after"));
    let (clock, clock_unavailable) = match clock_offset(&clock) {
        None => (None, None),
        Some(Ok(c)) => match server
            .realtime_at_go_ns
            .map(|go| clock.origin_check(&c, go))
        {
            Some(Err(why)) => (None, Some(why)),
            _ => (Some(c), None),
        },
        Some(Err(why)) => (None, Some(why.to_string())),
    };
    // What the server reports is checked before anyone sees or stores it.
    let peer_cores = sess
        .server_info()
        .get("cpu.cores")
        .and_then(|c| c.parse().ok());
    let wall_ns = u64::try_from(began.elapsed().as_nanos()).unwrap_or(u64::MAX);
    wire::plausible::check_peer_side(spec, &client, &server, wall_ns, peer_cores)?;
    let mut result = RunResult {
        schema_version: RESULT_SCHEMA_VERSION,
        spec: spec.clone(),
        server_addr: addr.to_string(),
        client_addr: local.to_string(),
        server_info: sess.server_info().clone(),
        client_info,
        client,
        server,
        rtt: extra.rtt,
        connect_time: extra.connect_time,
        transactions: extra.transactions,
        rr_timeouts: extra.rr_timeouts,
        warnings: extra.warnings,
        rate_search: None,
        clock,
        clock_unavailable,
        pmtu: extra.pmtu,
    };
    let starved = result.starved_streams();
    result.warnings.extend(starved);
    Ok(result)
}

type Sides = (SideStats, SideStats, LocalExtra);

/// The session loop: returns (server stats, client stats, client extras).
fn drive(
    cfg: &ClientConfig,
    addr: SocketAddr,
    conn: &mut ControlConn,
    sess: &mut ClientSession,
    run: &mut Option<Running>,
    recorder: &mut dyn Recorder,
    clock: &mut ClockLog,
) -> Result<Sides, EngineError> {
    let spec = &cfg.spec;
    let mut opened: Option<Opened> = None;
    let mut mine: Option<(SideStats, LocalExtra)> = None;
    let mut stall = StallWatch::of(spec, Instant::now());
    let mut accepted: Option<(u16, u64)> = None;
    // The wall clock when the last control message arrived (t4 of a clock reply).
    let mut last_rx_wall = 0u64;
    loop {
        while let Some(msg) = sess.poll_msg() {
            conn.send(&msg).ctx("sending to the server")?;
        }
        while let Some(ev) = sess.poll_event() {
            match ev {
                ClientEvent::Accepted {
                    data_port,
                    token,
                    quic_cert,
                } => {
                    if wants_clock(spec, sess.server_info()) {
                        accepted = Some((data_port, token));
                        clock.query(sess);
                    } else {
                        let data = (data_port, token, quic_cert.as_deref());
                        connect_data(cfg, addr, conn, sess, run, &mut opened, data)?;
                    }
                }
                ClientEvent::Clock {
                    t1_ns,
                    t2_ns,
                    t3_ns,
                } => {
                    clock.reply(ClockSample {
                        t1_ns,
                        t2_ns,
                        t3_ns,
                        t4_ns: last_rx_wall,
                    });
                    if clock.exchanges() < CLOCK_QUERIES {
                        clock.query(sess);
                    } else if let Some((data_port, token)) = accepted.take() {
                        let data = (data_port, token, None);
                        connect_data(cfg, addr, conn, sess, run, &mut opened, data)?;
                    }
                }
                ClientEvent::Started => {
                    clock.started_wall_ns = Some(net::clock::wall_ns());
                    if let Some(o) = opened.take() {
                        match start(cfg, o, run.take()) {
                            Ok(r) => *run = Some(r),
                            Err(e) => return Err(abort(sess, conn, e)),
                        }
                    }
                }
                ClientEvent::PeerSenderDone { .. } => {
                    if let Some(r) = run.as_ref() {
                        r.shared.drain.store(true, Relaxed);
                    }
                }
                ClientEvent::Alive => {
                    if let Some(e) = stall.as_ref().and_then(|w| w.verdict(Instant::now(), cfg)) {
                        return Err(abort(sess, conn, e));
                    }
                }
                ClientEvent::Result(server) => {
                    let (client, extra) = mine.take().unwrap_or_default();
                    return Ok((server, client, extra));
                }
                ClientEvent::Failed(e) => return Err(map_session_error(e, cfg)),
            }
        }
        if sess.has_output() {
            continue;
        }
        let now = Instant::now();
        let mut deadline = sess.poll_timeout().unwrap_or(now + Duration::from_secs(1));
        if let Some(r) = run.as_mut() {
            r.cpu.tick(&r.shared);
            if let Some(s) = r.sampler.as_mut() {
                if let Some(sample) = s.poll(&r.shared, now, false) {
                    recorder.on_interval(&sample);
                }
                deadline = deadline.min(s.next_due(r.shared.go));
            }
            if let Some(w) = stall.as_mut() {
                if w.observe(&r.shared, now) {
                    sess.liveness_query(net::clock::wall_ns());
                    continue;
                }
                if let Some(at) = w.next_check() {
                    deadline = deadline.min(at);
                }
            }
            if sess.state() == ClientState::Running && r.workers.all_done() {
                if let Some(r) = run.take() {
                    let (stats, extra) = finish_local(r, recorder);
                    if spec.kind.is_quic() && !extra.warnings.is_empty() {
                        let why = extra.warnings.join("; ");
                        return Err(abort(sess, conn, EngineError::Quic(why)));
                    }
                    sess.finish(Instant::now(), stats.clone());
                    mine = Some((stats, extra));
                }
                continue;
            }
            deadline = deadline.min(now + Duration::from_millis(5));
        }
        match conn.recv_until(deadline) {
            Ok(Some(m)) => {
                last_rx_wall = net::clock::wall_ns();
                sess.handle_msg(Instant::now(), m)
            }
            Ok(None) => sess.handle_timeout(Instant::now()),
            Err(RecvError::Wire(e)) => sess.handle_decode_error(e),
            Err(RecvError::Closed) => {
                return Err(EngineError::Protocol(format!(
                    "the server at {addr} closed the control connection before sending a result"
                )))
            }
            Err(RecvError::Io(e)) => return Err(EngineError::io("reading from the server", e)),
        }
    }
}

/// Data that has not moved for this long, while the server answers a query on the
/// control connection, is a stalled data path: small control messages cross, the
/// data does not (a path-MTU black hole, most often).
pub(crate) const DATA_STALL: Duration = Duration::from_secs(10);

/// Watches a TCP test's data for a stall ([`DATA_STALL`]); when there is one the client
/// asks whether the server still answers, and its answer turns the stall into
/// [`EngineError::DataStalled`] instead of a time-out that blames the server. TCP only:
/// a UDP stream may legitimately be paced slower than one datagram per 10 s.
struct StallWatch {
    /// Bytes this side's workers had sent and received at the last change.
    moved_bytes: u64,
    since: Instant,
    asked: bool,
}

impl StallWatch {
    fn of(spec: &TestSpec, now: Instant) -> Option<StallWatch> {
        let watched = match spec.kind {
            TestKind::TcpStream => spec.traffic.is_none(),
            TestKind::TcpRr => true,
            _ => false,
        };
        watched.then_some(StallWatch {
            moved_bytes: 0,
            since: now,
            asked: false,
        })
    }

    /// Takes in what the workers moved by `now`; true when the data has stalled for
    /// [`DATA_STALL`] and the server should be asked (once per stall).
    fn observe(&mut self, shared: &Shared, now: Instant) -> bool {
        let moved = shared
            .live
            .sent_bytes
            .load(Relaxed)
            .saturating_add(shared.live.recv_bytes.load(Relaxed));
        if moved != self.moved_bytes {
            self.moved_bytes = moved;
            self.since = now;
            self.asked = false;
        }
        let due = !self.asked && now.saturating_duration_since(self.since) >= DATA_STALL;
        self.asked |= due;
        due
    }

    /// When the stall is due, while the server has not been asked yet (once asked, the
    /// loop waits for its answer on the control connection).
    fn next_check(&self) -> Option<Instant> {
        (!self.asked).then(|| self.since + DATA_STALL)
    }

    /// The server answered: the stall, if the data still has not moved.
    fn verdict(&self, now: Instant, cfg: &ClientConfig) -> Option<EngineError> {
        let stalled = now.saturating_duration_since(self.since);
        (self.asked && stalled >= DATA_STALL).then(|| EngineError::DataStalled {
            stalled_s: stalled.as_secs(),
            moved_bytes: self.moved_bytes,
            host: cfg.host.clone(),
            family_number: cfg.spec.family.number(),
        })
    }
}

/// Clock exchanges per run when the server answers them: enough that one of them
/// meets an idle path (the smallest round trip bounds the offset's error).
const CLOCK_QUERIES: usize = 8;

/// One-way delay is measured for UDP streams, against a server that answers.
fn wants_clock(spec: &TestSpec, server_info: &BTreeMap<String, String>) -> bool {
    spec.kind == TestKind::UdpStream && server_info.contains_key(plan::CLOCK_QUERY_KEY)
}

/// Open the data sockets the server offered and tell it they are ready.
#[allow(clippy::too_many_arguments)]
fn connect_data(
    cfg: &ClientConfig,
    addr: SocketAddr,
    conn: &mut ControlConn,
    sess: &mut ClientSession,
    run: &mut Option<Running>,
    opened: &mut Option<Opened>,
    (data_port, token, quic_cert): (u16, u64, Option<&str>),
) -> Result<(), EngineError> {
    let spec = &cfg.spec;
    let binding = match sess.session_token() {
        Some(t) => crate::DataBinding::keyed(&t),
        None => crate::DataBinding::keyless(token),
    };
    let early = open_data(spec, addr.ip(), data_port, &binding, quic_cert)
        .and_then(|mut o| Ok((start_receiver_early(spec, &mut o)?, o)));
    match early {
        Ok((r, o)) => {
            let port = o.udp_in_port;
            *run = r;
            *opened = Some(o);
            sess.connected(Instant::now(), port);
            Ok(())
        }
        Err(e) => Err(abort(sess, conn, e)),
    }
}

/// The clock exchanges of one run: each reply checked against the query it answers
/// ([`ClockSample::check`]) before it counts.
#[derive(Default)]
struct ClockLog {
    /// The t1 of the query waiting for its reply.
    sent_t1_ns: Option<u64>,
    good: Vec<ClockSample>,
    rejected: u32,
    /// The client's wall clock when the server's `started` arrived: the server's data
    /// phase began before it.
    started_wall_ns: Option<u64>,
}

impl ClockLog {
    fn query(&mut self, sess: &mut ClientSession) {
        let t1 = net::clock::wall_ns();
        self.sent_t1_ns = Some(t1);
        sess.clock_query(t1);
    }

    fn reply(&mut self, sample: ClockSample) {
        // A reply nobody asked for echoes no query: rejected like a wrong echo.
        let checked = match self.sent_t1_ns.take() {
            Some(t1) => sample.check(t1),
            None => Err(measure::ClockReject::EchoMismatch),
        };
        match checked {
            Ok(()) => self.good.push(sample),
            Err(_) => self.rejected += 1,
        }
    }

    fn exchanges(&self) -> usize {
        self.good.len() + self.rejected as usize
    }

    /// Whether the server's start (`server_go_ns`, on its own wall clock) put on the
    /// client's clock with `c` lies where it can: after the last clock exchange (the
    /// client sends `start` only then) and before its `started` arrived, within the
    /// offset's bound and 1 ms for the stamps. A server whose replies and start
    /// disagree (replies forged to look like one clock while its clock runs 2.95 s off)
    /// gives no offset rather than a delay of 2949949 ms.
    fn origin_check(&self, c: &ClockOffset, server_go_ns: u64) -> Result<(), String> {
        const STAMP_SLACK_NS: i128 = 1_000_000;
        let (Some(after), Some(before)) = (
            self.good.iter().map(|s| s.t4_ns).max(),
            self.started_wall_ns,
        ) else {
            return Ok(());
        };
        let slack = i128::from(c.uncertainty_ns) + STAMP_SLACK_NS;
        let go = i128::from(server_go_ns) - i128::from(c.offset_ns);
        let (lo, hi) = (i128::from(after) - slack, i128::from(before) + slack);
        if (lo..=hi).contains(&go) {
            return Ok(());
        }
        let off_ms = if go < lo { go - lo } else { go - hi } as f64 / 1e6;
        Err(format!(
            "the server's clock contradicts its replies: with the offset they give, its data \
             phase began {off_ms:+.3} ms outside the time it can have begun (between the last \
             clock exchange and its `started`); no offset is trusted"
        ))
    }
}

/// The server's clock offset for this run (`None` when no exchange took place): always
/// estimated from the checked exchanges, or the reason there is none. Equal boot ids
/// are not taken as one clock: a server can copy the client's boot id (it is in the
/// client's `hello`) and stamp its replies to look like one clock, and nothing the
/// client can check over the network tells that apart from a real one; the estimate's
/// bound (half the best round trip, at least 1 µs) holds for any honest server.
fn clock_offset(log: &ClockLog) -> Option<Result<ClockOffset, measure::NoClockOffset>> {
    if log.exchanges() == 0 {
        return None;
    }
    Some(ClockOffset::estimate(&log.good, log.rejected))
}

/// Tell the server we give up, then return `e`.
fn abort(sess: &mut ClientSession, conn: &mut ControlConn, e: EngineError) -> EngineError {
    sess.abort(&e.to_string());
    while let Some(m) = sess.poll_msg() {
        let _ = conn.send(&m);
    }
    e
}

/// Join this side's (finished) workers and turn them into stats.
fn finish_local(r: Running, recorder: &mut dyn Recorder) -> (SideStats, LocalExtra) {
    let Running {
        shared,
        workers,
        cpu,
        mut sampler,
        applied,
    } = r;
    let mut outcome = workers.join();
    // The data phase ends with the last send or receive (ns since go), not after drain.
    let end_ns = outcome.last_send_ns.max(outcome.last_recv_ns);
    let end = (shared.go + Duration::from_nanos(end_ns)).min(Instant::now());
    let offset = shared.start_offset_ns.load(Relaxed);
    outcome.last_send_ns = outcome.last_send_ns.saturating_sub(offset);
    outcome.last_recv_ns = outcome.last_recv_ns.saturating_sub(offset);
    let cpu = cpu.finish(&shared);
    if let Some(s) = sampler.as_mut() {
        if let Some(sample) = s.poll(&shared, end, true) {
            recorder.on_interval(&sample);
        }
    }
    let extra = LocalExtra {
        rtt: outcome
            .rtt
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| h.summary())
            .or(outcome.quic_rtt),
        connect_time: outcome
            .connect
            .as_ref()
            .filter(|h| !h.is_empty())
            .map(|h| h.summary()),
        transactions: outcome.transactions,
        rr_timeouts: outcome.rr_timeouts,
        warnings: outcome.errors.clone(),
        pmtu: outcome.pmtu.take(),
    };
    let mut stats = outcome.into_side_stats(cpu, applied, Vec::new());
    stats.realtime_at_go_ns = Some(shared.realtime_at_go_ns);
    (stats, extra)
}

/// Open the data sockets for `spec` towards the server's data port.
fn open_data(
    spec: &TestSpec,
    ip: IpAddr,
    port: u16,
    binding: &crate::DataBinding,
    quic_cert: Option<&str>,
) -> Result<Opened, EngineError> {
    let server = SocketAddr::new(ip, port);
    let transport = spec.kind.transport();
    let mut o = Opened {
        tcp: Vec::new(),
        udp_out: Vec::new(),
        udp_in: None,
        udp_in_port: None,
        applied: AppliedOpts::new(),
        token: binding.token,
        crr: None,
        quic: None,
    };
    let socket = plan::effective_opts(spec);
    if spec.kind.is_quic() {
        let hex = quic_cert.ok_or_else(|| {
            EngineError::Protocol(
                "the server accepted a QUIC test without sending its certificate".into(),
            )
        })?;
        let cert_der = wire::proto::quic_cert_der(hex).map_err(EngineError::Protocol)?;
        let any: SocketAddr = match ip {
            IpAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
            IpAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
        };
        let (s, applied) = net::udp_bind(any, &socket)?;
        o.applied = sockopt::to_map(&applied);
        o.quic = Some(OpenedQuic {
            socket: s,
            server,
            cert_der,
            token: binding.prefix.clone(),
        });
        return Ok(o);
    }
    match transport {
        Transport::Tcp if spec.kind == TestKind::TcpCrr => {
            o.crr = Some((server, binding.prefix.clone()));
        }
        Transport::Tcp => {
            for _ in 0..spec.streams {
                let (mut s, applied) = net::tcp_connect(server, &socket, Duration::from_secs(3))?;
                o.applied = sockopt::to_map(&applied);
                s.write_all(&binding.prefix)
                    .ctx("cannot start a TCP data connection")?;
                o.tcp.push(s);
            }
        }
        Transport::Udp => {
            let (sends, recvs) = match spec.kind {
                TestKind::UdpRr | TestKind::Pmtu | TestKind::Frag | TestKind::ExtHeaders => {
                    (true, false)
                }
                _ => plan::stream_roles(spec, Side::Client),
            };
            let any: SocketAddr = match ip {
                IpAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
                IpAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
            };
            if spec.kind == TestKind::ExtHeaders {
                let (socks, applied) = crate::ext::open(spec, any, server, &socket)?;
                o.applied = applied;
                o.udp_out = socks;
            } else if sends {
                for _ in 0..spec.streams {
                    let (s, _) = net::udp_bind(any, &socket)?;
                    let applied = net::udp_connect(&s, server, &socket)?;
                    o.applied = sockopt::to_map(&applied);
                    if spec.kind == TestKind::Pmtu {
                        crate::pmtu::prepare(&s)?;
                        o.applied
                            .insert("dont_fragment".into(), "probe (PMTUDISC_PROBE)".into());
                    }
                    if spec.kind == TestKind::Frag {
                        net::pathmtu::set_df_mode(&s, net::pathmtu::DfMode::Fragment)?;
                        o.applied
                            .insert("dont_fragment".into(), "off (PMTUDISC_DONT)".into());
                    }
                    o.udp_out.push(s);
                }
            }
            if recvs {
                let (s, applied) = net::udp_bind(any, &socket)?;
                if !sends {
                    o.applied = sockopt::to_map(&applied);
                }
                o.udp_in_port = s.local_addr().ok().map(|a| a.port());
                o.udp_in = Some(s);
            }
        }
    }
    Ok(o)
}

/// A UDP receiver starts before the client says `start`, so that nothing the server
/// sends the moment it has started finds no reader; elapsed times still count from the
/// data phase proper (see `Shared::start_offset_ns`).
fn start_receiver_early(spec: &TestSpec, o: &mut Opened) -> Result<Option<Running>, EngineError> {
    let Some(s) = o.udp_in.take() else {
        return Ok(None);
    };
    let shared = Shared::new(Instant::now(), o.token, spec.window_ns);
    let mut w = Workers::default();
    let cpu = CpuWindow::start();
    plan::start_udp_receiver(spec, s, &shared, &mut w)?;
    Ok(Some(Running {
        sampler: None,
        shared,
        workers: w,
        cpu,
        applied: AppliedOpts::new(),
    }))
}

/// Start this side's workers (the server has started its own).
fn start(
    cfg: &ClientConfig,
    mut o: Opened,
    early: Option<Running>,
) -> Result<Running, EngineError> {
    let spec = &cfg.spec;
    let now = Instant::now();
    let mut r = match early {
        Some(mut r) => {
            let offset = r.shared.ns_since_go(now);
            r.shared.start_offset_ns.store(offset, Relaxed);
            // CPU is measured over the data phase proper, not the start handshake.
            r.cpu.restart();
            r
        }
        None => Running {
            sampler: None,
            shared: Shared::new(now, o.token, spec.window_ns),
            workers: Workers::default(),
            cpu: CpuWindow::start(),
            applied: AppliedOpts::new(),
        },
    };
    r.applied = o.applied;
    r.sampler = spec.interval_ns.map(Sampler::new);
    let (shared, w) = (&r.shared, &mut r.workers);
    match spec.kind {
        TestKind::TcpStream | TestKind::TcpRr => {
            plan::start_tcp(spec, Side::Client, o.tcp, shared, w)?
        }
        TestKind::UdpRr | TestKind::Frag | TestKind::ExtHeaders => {
            plan::start_udp_rr_clients(spec, o.udp_out, shared, w)?
        }
        TestKind::UdpStream => plan::start_udp_senders(spec, o.udp_out, shared, w)?,
        TestKind::TcpCrr => match o.crr {
            Some((server, prefix)) => plan::start_crr_client(spec, server, prefix, shared, w)?,
            None => {
                return Err(EngineError::Protocol(
                    "tcp-crr started without the server's data address".into(),
                ))
            }
        },
        TestKind::Pmtu => plan::start_pmtu_client(spec, o.udp_out, shared, w)?,
        TestKind::QuicStream | TestKind::QuicRr => {
            let hook = cfg
                .quic
                .clone()
                .ok_or_else(|| EngineError::Quic("this client was built without QUIC".into()))?;
            let q = o.quic.take().ok_or_else(|| {
                EngineError::Protocol("the QUIC test's socket was not opened".into())
            })?;
            let deadline = crate::quic_hook::deadline(spec, &cfg.limits);
            let spec = spec.clone();
            w.spawn(crate::data::Role::Rr, "dp-quic-client", move || {
                crate::quic_hook::outcome(
                    &spec,
                    hook.run_client(q.socket, q.server, q.cert_der, &spec, &q.token, deadline),
                )
            })
            .ctx("cannot start a data thread")?;
        }
        // Refused by validate_spec before any socket: run_loaded runs its parts.
        TestKind::Rrul => {
            return Err(EngineError::Spec(wire::proto::TestSpecError::Invalid(
                "rrul runs through run_loaded".into(),
            )))
        }
    }
    Ok(r)
}

/// The server's address for `host` in the requested family (`localhost` is 127.0.0.1
/// and ::1: `net::host`).
fn resolve(host: &str, port: u16, family: Family) -> Result<SocketAddr, EngineError> {
    if family == Family::V6 {
        ipv6_available()?;
    }
    if let Ok(ip) = net::host::bare(host).parse::<IpAddr>() {
        if !net::host::is_family(&ip, family) {
            return Err(EngineError::Resolve {
                host: host.to_string(),
                family,
                detail: format!(
                    " ({ip} is not an {family} address; use --family {})",
                    if ip.is_ipv4() { 4 } else { 6 }
                ),
            });
        }
        return Ok(SocketAddr::new(ip, port));
    }
    match net::host::address_in(host, family) {
        Ok(ip) => Ok(SocketAddr::new(ip, port)),
        Err(net::host::HostError::Resolve { source, .. }) => Err(EngineError::Resolve {
            host: host.to_string(),
            family,
            detail: format!(" ({source})"),
        }),
        Err(net::host::HostError::NoAddress { has_other, .. }) => Err(EngineError::Resolve {
            host: host.to_string(),
            family,
            detail: no_family_detail(host, family, has_other),
        }),
    }
}

/// Why a name gave no address of `family`, and what to do: "host X has no IPv6 address
/// (AAAA); use -f 4" when it has addresses of the other family only.
fn no_family_detail(host: &str, family: Family, has_other: bool) -> String {
    let other = family.other().number();
    if has_other {
        format!(
            ": host {host} has no {family} address ({}); use -f {other}",
            net::host::record(family)
        )
    } else {
        format!(": host {host} resolved to no address")
    }
}

/// Fail early, with the reason, when this host cannot use IPv6 at all.
fn ipv6_available() -> Result<(), EngineError> {
    net::check_ipv6().map_err(|e| EngineError::Ipv6Unavailable {
        detail: match e {
            net::NetError::Ipv6Disabled => "net.ipv6.conf.all.disable_ipv6=1".into(),
            net::NetError::Ipv6Unavailable { reason } => reason,
            other => other.to_string(),
        },
    })
}

fn connect(addr: SocketAddr, cfg: &ClientConfig) -> Result<TcpStream, EngineError> {
    TcpStream::connect_timeout(&addr, cfg.connect_timeout).map_err(|e| {
        let host = cfg.host.clone();
        let port = cfg.port;
        match e.kind() {
            io::ErrorKind::ConnectionRefused => EngineError::ConnectionRefused { host, port },
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => EngineError::HostUnreachable {
                host,
                port,
                detail: format!("no answer within {:?}", cfg.connect_timeout),
            },
            _ if net::is_af_unsupported(&e) => EngineError::Ipv6Unavailable {
                detail: e.to_string(),
            },
            _ if net::is_unreachable(&e) => EngineError::HostUnreachable {
                host,
                port,
                detail: e.to_string(),
            },
            _ => EngineError::io(format!("cannot connect to {addr}"), e),
        }
    })
}

fn map_session_error(e: SessionError, cfg: &ClientConfig) -> EngineError {
    let (host, port) = (cfg.host.clone(), cfg.port);
    match e {
        SessionError::Remote { code, message } => match code {
            ErrorCode::Busy => EngineError::ServerBusy { host, port },
            ErrorCode::ConnectionLimit => EngineError::ServerFull { host, port },
            ErrorCode::AuthRequired => EngineError::AuthRequired { host, port },
            ErrorCode::AuthFailed => EngineError::AuthFailed(message),
            _ => EngineError::Rejected(message),
        },
        SessionError::Wire(WireError::VersionMismatch { peer, ours }) => {
            EngineError::VersionMismatch {
                server: peer,
                client: ours,
            }
        }
        SessionError::Wire(w) => EngineError::Protocol(format!(
            "{host}:{port} does not speak the dualperf control protocol ({w})"
        )),
        SessionError::Timeout(what) => EngineError::Timeout(format!(
            "the server at {host}:{port} did not answer ({what})"
        )),
        SessionError::Auth(why) => EngineError::AuthFailed(why.to_string()),
        other => EngineError::Protocol(other.to_string()),
    }
}

#[cfg(test)]
mod resolve_tests {
    use super::*;

    #[test]
    fn a_name_of_one_family_says_which_record_is_missing_and_the_fix() {
        let e = EngineError::Resolve {
            host: "h.example".into(),
            family: Family::V6,
            detail: no_family_detail("h.example", Family::V6, true),
        };
        assert!(
            e.to_string()
                .contains("host h.example has no IPv6 address (AAAA); use -f 4"),
            "{e}"
        );
        assert!(no_family_detail("h", Family::V4, true).contains("(A); use -f 6"));
        assert!(no_family_detail("h", Family::V4, false).contains("no address"));
    }

    #[test]
    fn a_literal_of_the_other_family_is_refused_with_the_fix() {
        let e = resolve("::1", 5301, Family::V4).unwrap_err().to_string();
        assert!(e.contains("use --family 6"), "{e}");
        assert_eq!(
            resolve("127.0.0.1", 5301, Family::V4).unwrap(),
            "127.0.0.1:5301".parse().unwrap()
        );
    }
}
