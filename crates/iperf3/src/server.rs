//! An iperf3-compatible server on std sockets: one test at a time across all listeners,
//! a busy answer (0xFF) for everyone else, TCP and UDP data streams on the control port,
//! reverse and bidirectional tests. The protocol decisions are `session::ServerSession`'s;
//! this module moves bytes, owns threads and enforces timeouts, so a client that dies
//! mid-test frees the server for the next one.
//!
//! A new control connection gets `handshake_timeout` (2 s) in all to deliver its cookie
//! and parameters, and takes the test slot only once it has, authenticated
//! ([`crate::auth`]) and within the [`Policy`]: a peer trickling bytes holds a handshake
//! place, never the slot, so it cannot keep real clients out. A refusal is sent as
//! SERVER_ERROR with the iperf3 code whose message the client prints.

use crate::auth::{unix_now_s, ServerAuth};
use crate::cpu::CpuSample;
use crate::error::Iperf3Error;
use crate::json::{stream_id, Params, Protocol, Results, StreamResult, DEFAULT_UDP_BANDWIDTH_BPS};
use crate::policy::{code, Policy, Refusal};
use crate::proto::{cookies_match, State, COOKIE_LEN};
use crate::session::{ServerEvent, ServerSession};
use crate::streams::{self, DataSocket, RecvCfg, SendCfg, Shared, StopGuard, StreamOutcome};
use crate::udp::CONNECT_REPLY;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often blocked calls wake up to look at deadlines and the shutdown flag.
const POLL: Duration = Duration::from_millis(100);
/// Receive buffer asked for on UDP data sockets (the kernel caps it at rmem_max).
const UDP_RCVBUF_BYTES: u32 = 4 << 20;
/// Extra time after `time + omit` before a test without TEST_END is dropped (as 3.12).
const TEST_END_GRACE_S: u64 = 40;
/// Extra time after the policy's longest test before a test without TEST_END is ended.
const POLICY_END_GRACE: Duration = Duration::from_secs(5);

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Test hook: drop every Nth received UDP data datagram, as if the network lost it.
    pub drop_every_nth_datagram: Option<u64>,
    /// Longest wait for the client's results and for its data streams.
    pub control_timeout: Duration,
    /// Time a new control connection has, in all, to send its cookie and parameters
    /// (and a data connection its cookie): a deadline, not a per-byte timeout.
    pub handshake_timeout: Duration,
    /// Control connections in their handshake at once; more are told "busy".
    pub max_handshakes: usize,
    /// The server's limits, checked before any stream is opened.
    pub policy: Policy,
    /// iperf3 authentication required of every client; `None` = anyone may test.
    pub auth: Option<Arc<ServerAuth>>,
    /// The admissions this port shares with the rest of the server (`dualperf
    /// server`'s dualperf port): `None` = this port's one test slot only.
    pub shared_admission: Option<SharedAdmission>,
}

/// Admission by the rest of the server: called, after the policy passed, with the
/// IP bit/s the test makes the server send ([`Policy::send_bps`]); the guard it returns
/// is held while the test runs; `Err((flag, reason))`: the server is busy (its
/// `--max-tests` or its `--max-rate` total taken by tests on another port), refused
/// as busy and logged as `refused (FLAG): REASON`.
#[derive(Clone)]
pub struct SharedAdmission(pub SharedAdmitFn);

pub type SharedAdmitFn =
    Arc<dyn Fn(u64) -> Result<Box<dyn Send>, (&'static str, String)> + Send + Sync>;

impl std::fmt::Debug for SharedAdmission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedAdmission")
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            drop_every_nth_datagram: None,
            control_timeout: Duration::from_secs(10),
            handshake_timeout: wire::session::HELLO_TIMEOUT,
            max_handshakes: 32,
            policy: Policy::default(),
            auth: None,
            shared_admission: None,
        }
    }
}

/// What one stream of a finished test did, as the server saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServedStream {
    pub id: i64,
    /// True if the server sent on this stream.
    pub server_sends: bool,
    pub outcome: StreamOutcome,
}

/// One served control connection: what was asked, counted and exchanged.
#[derive(Debug, Clone, Default)]
pub struct SessionReport {
    pub peer: Option<SocketAddr>,
    pub params: Option<Params>,
    pub streams: Vec<ServedStream>,
    /// Our results document as sent to the client.
    pub server_results: Option<Results>,
    /// The client's results document.
    pub client_results: Option<Results>,
    /// Why the session ended abnormally, if it did.
    pub error: Option<String>,
    /// The limit or check that refused the test before it started, if one did.
    pub refusal: Option<Refusal>,
    /// The user that authenticated, when the server requires authentication.
    pub user: Option<String>,
    /// What the server set up other than it meant to, without failing the test (the
    /// UDP receive buffer the kernel capped or refused), in words.
    pub notes: Vec<String>,
}

/// The single test slot shared by all listeners.
#[derive(Default)]
struct Slot {
    busy: bool,
    /// Set while a TCP test waits for its data connections.
    stream_tx: Option<Sender<TcpStream>>,
}

/// Frees the slot when a session ends, however it ends, and with it the admission
/// taken from the rest of the server, if any.
struct SlotGuard(Arc<Mutex<Slot>>, Option<Box<dyn Send>>);

/// Holds one handshake place until dropped.
struct HandshakeGuard<'a>(&'a AtomicUsize);

impl Drop for HandshakeGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = Slot::default();
        }
    }
}

/// An iperf3-compatible server bound to one or more addresses.
pub struct Server {
    listeners: Vec<(TcpListener, SocketAddr)>,
    opts: ServerOptions,
    slot: Arc<Mutex<Slot>>,
    /// Control connections in their handshake now.
    handshakes: AtomicUsize,
    reports: Arc<Mutex<Vec<SessionReport>>>,
}

/// How the server's sockets bind: `[::]` serves IPv4 and IPv6 like iperf3 (a specific
/// IPv6 address only IPv6); the address is shared, as a UDP accept needs.
const BIND: net::BindOpts = net::BindOpts {
    v6_peers: net::V6Peers::BothOnUnspecified,
    reuse_address: true,
};

/// A UDP socket listening for a stream's first datagram on `local`, with a roomy
/// receive buffer (it becomes the stream's socket). What the kernel did with the buffer
/// (capped, refused) goes to `notes` once.
fn udp_listener(local: SocketAddr, notes: &mut Vec<String>) -> Result<UdpSocket, net::NetError> {
    let (udp, _) = net::udp_bind_with(local, &wire::spec::SocketOpts::default(), BIND)?;
    let roomy = wire::spec::SocketOpts {
        rcvbuf_bytes: Some(UDP_RCVBUF_BYTES),
        ..wire::spec::SocketOpts::default()
    };
    // A busy host drops fewer datagrams with it; without it the test still runs. Notes
    // only when the buffer is smaller than asked (Linux reads back twice the request).
    let note = match net::apply_socket_opts(&udp, &roomy) {
        Ok(a) if a.rcvbuf_bytes.is_some_and(|got| got < UDP_RCVBUF_BYTES) => a.notes,
        Ok(_) => Vec::new(),
        Err(e) => vec![format!(
            "the UDP receive buffer stays at the system's default: {e}"
        )],
    };
    for n in note {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    Ok(udp)
}

impl Server {
    /// Listens on every address. A port 0 after the first address reuses the port the
    /// first one got, so `[127.0.0.1:0, [::1]:0]` serves one port on both families.
    pub fn bind(addrs: &[SocketAddr]) -> Result<Server, Iperf3Error> {
        if addrs.is_empty() {
            return Err(Iperf3Error::Unsupported("no address to listen on".into()));
        }
        let mut listeners = Vec::new();
        let mut first_port = None;
        for &requested in addrs {
            let mut addr = requested;
            if let (0, Some(p)) = (addr.port(), first_port) {
                addr.set_port(p);
            }
            let ctx = || format!("listening on {addr}");
            let net_ctx = |source| Iperf3Error::Net {
                context: ctx(),
                source,
            };
            let (listener, _) =
                net::tcp_listen_with(addr, &wire::spec::SocketOpts::default(), BIND)
                    .map_err(net_ctx)?;
            // The accept loop wakes to see the shutdown flag (Linux honours it on accept).
            net::set_accept_timeout(&listener, Some(POLL)).map_err(net_ctx)?;
            let local = listener
                .local_addr()
                .map_err(|e| Iperf3Error::io(ctx(), e))?;
            first_port.get_or_insert(local.port());
            listeners.push((listener, local));
        }
        Ok(Server {
            listeners,
            opts: ServerOptions::default(),
            slot: Arc::default(),
            handshakes: AtomicUsize::new(0),
            reports: Arc::default(),
        })
    }

    pub fn with_options(mut self, opts: ServerOptions) -> Server {
        self.opts = opts;
        self
    }

    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.listeners.iter().map(|(_, a)| *a).collect()
    }

    /// Reports of finished sessions, oldest first (shared; the server appends).
    pub fn reports(&self) -> Arc<Mutex<Vec<SessionReport>>> {
        self.reports.clone()
    }

    /// Serves until `shutdown` is set; returns once every session has ended.
    pub fn serve(&self, shutdown: &AtomicBool) -> Result<(), Iperf3Error> {
        std::thread::scope(|scope| {
            for (listener, local) in &self.listeners {
                scope.spawn(move || self.accept_loop(scope, listener, *local, shutdown));
            }
        });
        Ok(())
    }

    fn accept_loop<'s>(
        &'s self,
        scope: &'s std::thread::Scope<'s, '_>,
        listener: &'s TcpListener,
        local: SocketAddr,
        shutdown: &'s AtomicBool,
    ) {
        while !shutdown.load(Ordering::Relaxed) {
            let (conn, peer) = match listener.accept() {
                Ok(c) => c,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    continue
                }
                Err(_) => {
                    // EMFILE and friends: back off instead of spinning.
                    std::thread::sleep(POLL);
                    continue;
                }
            };
            let Ok(slot) = self.slot.lock() else {
                return;
            };
            if let Some(tx) = &slot.stream_tx {
                let _ = tx.send(conn);
                continue;
            }
            let busy = slot.busy;
            drop(slot);
            // The slot is taken after the handshake; until then a place is held.
            let places = self.handshakes.fetch_add(1, Ordering::SeqCst);
            let guard = HandshakeGuard(&self.handshakes);
            if busy || places >= self.opts.max_handshakes {
                drop(guard);
                deny(conn);
                continue;
            }
            scope.spawn(move || {
                let report = self.run_session(conn, peer, local, shutdown, guard);
                if let Ok(mut reports) = self.reports.lock() {
                    reports.push(report);
                }
            });
        }
    }

    fn run_session(
        &self,
        conn: TcpStream,
        peer: SocketAddr,
        local: SocketAddr,
        shutdown: &AtomicBool,
        handshake: HandshakeGuard<'_>,
    ) -> SessionReport {
        let mut report = SessionReport {
            peer: Some(peer),
            ..SessionReport::default()
        };
        let mut ctl = Control {
            conn,
            session: ServerSession::new(),
            shutdown,
            pending: Default::default(),
        };
        if let Err(e) = self.session_body(&mut ctl, local, &mut report, handshake) {
            report.error = Some(e.to_string());
        }
        report
    }

    /// Cookie and parameters within the handshake deadline, then authentication, the
    /// policy and the slot; the cookie and parameters of an admitted test.
    fn admit(
        &self,
        ctl: &mut Control<'_>,
        peer: SocketAddr,
        report: &mut SessionReport,
    ) -> Result<([u8; COOKIE_LEN], Params, SlotGuard), Iperf3Error> {
        let deadline = Instant::now() + self.opts.handshake_timeout;
        let mut cookie = [0u8; COOKIE_LEN];
        let params = loop {
            match ctl.next_event(deadline)? {
                ServerEvent::Cookie(c) => cookie = c,
                ServerEvent::Params(p) => break p,
                other => return Err(unexpected(&other)),
            }
        };
        let mut checked = params.clone();
        // The token is a credential: kept out of reports and logs.
        checked.authtoken = None;
        report.params = Some(checked);
        if let Some(auth) = &self.opts.auth {
            match auth.check(params.authtoken.as_deref(), unix_now_s()) {
                Ok(creds) => report.user = Some(creds.username),
                Err(e) => {
                    let refusal = Refusal {
                        code: code::AUTH,
                        flag: "--iperf3-authorized-users",
                        message: format!("test authorization failed: {e}"),
                    };
                    return Err(self.refuse(ctl, report, refusal));
                }
            }
        }
        if let Err(refusal) = self.opts.policy.check(&params, peer.ip()) {
            return Err(self.refuse(ctl, report, refusal));
        }
        let Ok(mut slot) = self.slot.lock() else {
            return Err(Iperf3Error::Protocol(
                "the server's test slot is unusable".into(),
            ));
        };
        if slot.busy {
            drop(slot);
            ctl.session.server_error(code::BUSY, 0);
            ctl.flush()?;
            return Err(Iperf3Error::Busy);
        }
        slot.busy = true;
        drop(slot);
        let mut slot = SlotGuard(self.slot.clone(), None);
        if let Some(SharedAdmission(admit)) = &self.opts.shared_admission {
            match admit(self.opts.policy.send_bps(&params, peer.ip())) {
                Ok(guard) => slot.1 = Some(guard),
                Err((flag, message)) => {
                    drop(slot);
                    let refusal = Refusal {
                        code: code::BUSY,
                        flag,
                        message,
                    };
                    return Err(self.refuse(ctl, report, refusal));
                }
            }
        }
        Ok((cookie, params, slot))
    }

    /// Sends the refusal as SERVER_ERROR and records it.
    fn refuse(
        &self,
        ctl: &mut Control<'_>,
        report: &mut SessionReport,
        refusal: Refusal,
    ) -> Iperf3Error {
        ctl.session.server_error(refusal.code, 0);
        let err = match ctl.flush() {
            Ok(()) => Iperf3Error::Refused(refusal.message.clone()),
            Err(e) => e,
        };
        report.refusal = Some(refusal);
        err
    }

    fn session_body(
        &self,
        ctl: &mut Control<'_>,
        local: SocketAddr,
        report: &mut SessionReport,
        handshake: HandshakeGuard<'_>,
    ) -> Result<(), Iperf3Error> {
        let ctx =
            |what: &'static str| move |e| Iperf3Error::io(format!("control connection: {what}"), e);
        ctl.conn.set_nodelay(true).map_err(ctx("nodelay"))?;
        ctl.conn
            .set_read_timeout(Some(POLL))
            .map_err(ctx("read timeout"))?;
        ctl.conn
            .set_write_timeout(Some(self.opts.control_timeout))
            .map_err(ctx("write timeout"))?;

        let peer = report.peer.unwrap_or(local);
        let admitted = self.admit(ctl, peer, report);
        drop(handshake);
        // Held until the session body returns: the slot is free before the report is out.
        let (cookie, params, _slot) = admitted?;
        let n_streams = params.total_streams() as usize;
        let mut roles = vec![!params.reverse; n_streams]; // true = we receive
        if params.bidirectional {
            roles[params.parallel as usize..]
                .iter_mut()
                .for_each(|r| *r = false);
        }

        let sockets = match params.protocol {
            Protocol::Tcp => {
                let (tx, rx) = mpsc::channel();
                if let Ok(mut slot) = self.slot.lock() {
                    slot.stream_tx = Some(tx);
                }
                ctl.session.create_streams();
                ctl.flush()?;
                let got = self.accept_tcp_streams(&rx, &cookie, n_streams, &ctl.conn, ctl.shutdown);
                if let Ok(mut slot) = self.slot.lock() {
                    slot.stream_tx = None;
                }
                got?.into_iter().map(DataSocket::Tcp).collect::<Vec<_>>()
            }
            Protocol::Udp => {
                let listener = match udp_listener(local, &mut report.notes) {
                    Ok(s) => s,
                    Err(e) => {
                        // §9.1: IESTREAMLISTEN with the errno, as 3.12 does.
                        ctl.session.server_error(202, e.raw_os_error().unwrap_or(0));
                        ctl.flush()?;
                        return Err(Iperf3Error::Net {
                            context: format!("binding UDP {local}"),
                            source: e,
                        });
                    }
                };
                ctl.session.create_streams();
                ctl.flush()?;
                let notes = &mut report.notes;
                self.accept_udp_streams(listener, local, n_streams, ctl, notes)?
                    .into_iter()
                    .map(DataSocket::Udp)
                    .collect()
            }
            Protocol::Sctp => {
                ctl.session.server_error(18, 0);
                ctl.flush()?;
                return Err(Iperf3Error::Unsupported("SCTP tests".into()));
            }
        };

        ctl.session.start();
        ctl.flush()?;
        let cpu = CpuSample::now();
        let started = Instant::now();
        let shared = Arc::new(Shared::default());
        let _stop_on_exit = StopGuard(shared.clone());
        let handles = self.spawn_streams(&params, &sockets, &roles, &shared)?;

        let test_s = u64::try_from(params.time_s + params.omit_s).unwrap_or(0);
        let max = self.opts.policy.max_duration;
        // A bytes- or blocks-bound test is ended at the policy's longest test; a timed
        // one gets iperf3's grace after its time, within the policy's.
        let limit = if params.time_s > 0 {
            Duration::from_secs(test_s + TEST_END_GRACE_S).min(max + POLICY_END_GRACE)
        } else {
            max
        };
        let end = ctl.next_event(Instant::now() + limit);
        if let Err(Iperf3Error::Timeout(_)) = end {
            // Before the data sockets close, so the client reads why ("the server has
            // terminated") rather than a broken pipe; it then closes (1 s at most here).
            let _ = ctl.conn.write_all(&[State::ServerTerminate.byte()]);
            let until = Instant::now() + Duration::from_secs(1);
            while !control_closed(&ctl.conn) && Instant::now() < until {
                std::thread::sleep(POLL);
            }
        }
        shared.stop_send.store(true, Ordering::Relaxed);
        shared.stop_recv.store(true, Ordering::Relaxed);
        let elapsed_s = started.elapsed().as_secs_f64();
        let outcomes: Vec<StreamOutcome> = handles.into_iter().map(streams::join).collect();
        // §4 step 9: close the data connections before EXCHANGE_RESULTS. A 3.12 client
        // may sit in a blocking read of a whole block until it sees EOF.
        for sock in &sockets {
            if let DataSocket::Tcp(s) = sock {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
        report.streams = outcomes
            .into_iter()
            .enumerate()
            .map(|(i, outcome)| ServedStream {
                id: stream_id(i),
                server_sends: !roles[i],
                outcome,
            })
            .collect();
        let end = match end {
            Err(Iperf3Error::Timeout(_)) => {
                return Err(Iperf3Error::Timeout(format!(
                    "for the end of the test: ended by the server after {:.1} s \
                     (--max-duration {:.1} s)",
                    limit.as_secs_f64(),
                    max.as_secs_f64()
                )));
            }
            other => other?,
        };
        match end {
            ServerEvent::TestEnd => {}
            ServerEvent::ClientTerminate => {
                return Err(Iperf3Error::Protocol(
                    "the client terminated the test".into(),
                ))
            }
            other => return Err(unexpected(&other)),
        }

        let (cpu_total, cpu_user, cpu_system) = cpu.util_since();
        ctl.session.exchange_results();
        ctl.flush()?;
        let deadline = Instant::now() + self.opts.control_timeout;
        match ctl.next_event(deadline)? {
            ServerEvent::ClientResults(r) => report.client_results = Some(r),
            other => return Err(unexpected(&other)),
        }
        let mut ours = Results {
            cpu_util_total: cpu_total,
            cpu_util_user: cpu_user,
            cpu_util_system: cpu_system,
            sender_has_retransmits: if roles.iter().all(|&r| r) { -1 } else { 0 },
            streams: report
                .streams
                .iter()
                .map(|s| stream_result(s, (elapsed_s - params.omit_s as f64).max(0.0)))
                .collect(),
            congestion_used: congestion_used(&sockets),
            ..Results::default()
        };
        if params.get_server_output {
            let text = server_output_text(&report.streams, elapsed_s);
            ours.extra.insert("server_output_text".into(), text.into());
        }
        ctl.session.send_results(&ours);
        report.server_results = Some(ours);
        ctl.flush()?;
        // IPERF_DONE or EOF ends it; the client may close first.
        let _ = ctl.next_event(Instant::now() + self.opts.control_timeout);
        Ok(())
    }

    fn spawn_streams(
        &self,
        params: &Params,
        sockets: &[DataSocket],
        roles: &[bool],
        shared: &Arc<Shared>,
    ) -> Result<Vec<std::thread::JoinHandle<StreamOutcome>>, Iperf3Error> {
        for sock in sockets {
            apply_socket_params(sock, params);
        }
        let default_rate = match params.protocol {
            Protocol::Udp => DEFAULT_UDP_BANDWIDTH_BPS,
            _ => 0,
        };
        // iperf3's omit timer starts with the test; numbers restart from zero after it.
        let omit_end = u64::try_from(params.omit_s)
            .ok()
            .filter(|&s| s > 0)
            .map(|s| Instant::now() + Duration::from_secs(s));
        let send = SendCfg {
            len_bytes: params.len_bytes as usize,
            rate_bps: params.bandwidth_bps.unwrap_or(default_rate),
            max_blocks: params.blockcount,
            max_bytes: params.num_bytes,
            counters_64bit: params.udp_counters_64bit,
            omit_end,
        };
        let recv = RecvCfg {
            len_bytes: params.len_bytes as usize,
            counters_64bit: params.udp_counters_64bit,
            drop_every_nth: self.opts.drop_every_nth_datagram,
            omit_end,
        };
        let mut handles = Vec::new();
        for (sock, &receive) in sockets.iter().zip(roles) {
            let handle = streams::spawn(sock, !receive, send, recv, shared.clone())
                .map_err(|e| Iperf3Error::io("cloning a data socket", e))?;
            handles.push(handle);
        }
        Ok(handles)
    }

    /// Takes data connections from the accept loops until `n` carry the right cookie.
    fn accept_tcp_streams(
        &self,
        rx: &Receiver<TcpStream>,
        cookie: &[u8; COOKIE_LEN],
        n: usize,
        ctl: &TcpStream,
        shutdown: &AtomicBool,
    ) -> Result<Vec<TcpStream>, Iperf3Error> {
        let deadline = Instant::now() + self.opts.control_timeout;
        let mut got = Vec::with_capacity(n);
        while got.len() < n {
            if control_closed(ctl) {
                return Err(Iperf3Error::Protocol(
                    "the client closed the connection while opening streams".into(),
                ));
            }
            if shutdown.load(Ordering::Relaxed) || Instant::now() > deadline {
                return Err(Iperf3Error::Timeout(format!(
                    "waiting for data connections ({} of {n} arrived)",
                    got.len()
                )));
            }
            let Ok(mut conn) = rx.recv_timeout(POLL) else {
                continue;
            };
            let mut theirs = [0u8; COOKIE_LEN];
            let by = Instant::now() + self.opts.handshake_timeout;
            let ok = read_exact_by(&mut conn, &mut theirs, by) && cookies_match(&theirs, cookie);
            if ok {
                got.push(conn);
            } else {
                deny(conn); // §6.1: bad cookie gets 0xFF, the test goes on
            }
        }
        Ok(got)
    }

    /// §6.2: each stream's first datagram connects the listening socket to its sender,
    /// a fresh socket takes over the port, then the reply goes out. Only a datagram from
    /// the control connection's host counts: iperf3 checks neither source nor content,
    /// so any host could otherwise have a reverse test's data sent to it (or to a
    /// forged source address).
    fn accept_udp_streams(
        &self,
        mut listener: UdpSocket,
        local: SocketAddr,
        n: usize,
        ctl: &Control<'_>,
        notes: &mut Vec<String>,
    ) -> Result<Vec<UdpSocket>, Iperf3Error> {
        let (ctl, shutdown) = (&ctl.conn, ctl.shutdown);
        let client_ip = ctl
            .peer_addr()
            .map_err(|e| Iperf3Error::io("the control connection's address", e))?
            .ip()
            .to_canonical();
        let deadline = Instant::now() + self.opts.control_timeout;
        let mut got = Vec::with_capacity(n);
        let mut strays = 0u64;
        while got.len() < n {
            let udp = listener;
            udp.set_read_timeout(Some(POLL))
                .map_err(|e| Iperf3Error::io("UDP timeout", e))?;
            let mut buf = [0u8; 65_536];
            let peer = loop {
                if control_closed(ctl) {
                    return Err(Iperf3Error::Protocol(
                        "the client closed the connection while opening streams".into(),
                    ));
                }
                if shutdown.load(Ordering::Relaxed) || Instant::now() > deadline {
                    return Err(Iperf3Error::Timeout("waiting for UDP streams".into()));
                }
                match udp.recv_from(&mut buf) {
                    Ok((_, peer)) if peer.ip().to_canonical() == client_ip => break peer,
                    Ok((_, peer)) => {
                        strays += 1;
                        if strays == 1 {
                            notes.push(format!(
                                "ignored UDP datagrams from {peer}: not the client's host {client_ip}"
                            ));
                        }
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                        ) => {}
                    Err(e) => return Err(Iperf3Error::io("receiving a UDP connect datagram", e)),
                }
            };
            udp.connect(peer)
                .map_err(|e| Iperf3Error::io(format!("connecting UDP to {peer}"), e))?;
            listener = udp_listener(local, notes).map_err(|source| Iperf3Error::Net {
                context: format!("re-binding UDP {local}"),
                source,
            })?;
            udp.send(&CONNECT_REPLY)
                .map_err(|e| Iperf3Error::io("sending the UDP reply", e))?;
            got.push(udp);
        }
        Ok(got)
    }
}

/// Applies what the client asked for (`window`, `nodelay`, `congestion`, `TOS`) to a
/// data socket, best effort: on an accepted socket some settings may not take, and the
/// results report the congestion control actually used.
fn apply_socket_params(sock: &DataSocket, params: &Params) {
    // One setting at a time, through the OS layer, so one refusal skips only itself.
    let one = |opts: wire::spec::SocketOpts| {
        let _ = match sock {
            DataSocket::Tcp(s) => net::apply_socket_opts(s, &opts),
            DataSocket::Udp(s) => net::apply_socket_opts(s, &opts),
        };
    };
    let none = wire::spec::SocketOpts::default;
    if let Some(w) = params.window_bytes {
        one(wire::spec::SocketOpts {
            sndbuf_bytes: Some(w),
            rcvbuf_bytes: Some(w),
            ..none()
        });
    }
    if let Some(tos) = params.tos.and_then(|t| u8::try_from(t).ok()) {
        one(wire::spec::SocketOpts {
            tos: Some(tos),
            ..none()
        });
    }
    if let DataSocket::Tcp(_) = sock {
        if params.nodelay {
            one(wire::spec::SocketOpts {
                nodelay: true,
                ..none()
            });
        }
        if let Some(cc) = &params.congestion {
            one(wire::spec::SocketOpts {
                congestion: Some(cc.clone()),
                ..none()
            });
        }
    }
}

/// The TCP congestion control of the first TCP data socket, as iperf3 reports it.
fn congestion_used(sockets: &[DataSocket]) -> Option<String> {
    sockets.iter().find_map(|sock| match sock {
        DataSocket::Tcp(t) => net::read_applied(t).ok().and_then(|a| a.congestion),
        DataSocket::Udp(_) => None,
    })
}

/// Whether the client has closed the control connection (checked without blocking and
/// without consuming anything).
fn control_closed(ctl: &TcpStream) -> bool {
    if ctl.set_nonblocking(true).is_err() {
        return false;
    }
    let closed = match ctl.peek(&mut [0u8; 1]) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted),
    };
    let _ = ctl.set_nonblocking(false);
    closed
}

/// Reads exactly `buf.len()` bytes before `deadline` (a total, not a per-read, limit).
fn read_exact_by(conn: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> bool {
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || conn.set_read_timeout(Some(left.min(POLL))).is_err() {
            return false;
        }
        match conn.read(&mut buf[got..]) {
            Ok(0) => return false,
            Ok(n) => got += n,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            Err(_) => return false,
        }
    }
    true
}

/// Writes ACCESS_DENIED and closes, without reading (§9.2).
fn deny(mut conn: TcpStream) {
    let _ = conn.set_write_timeout(Some(POLL));
    let _ = conn.write_all(&[State::AccessDenied.byte()]);
}

fn unexpected(ev: &ServerEvent) -> Iperf3Error {
    Iperf3Error::Protocol(format!("unexpected {ev:?} from the client"))
}

fn stream_result(s: &ServedStream, elapsed_s: f64) -> StreamResult {
    let udp = s.outcome.udp.as_ref();
    StreamResult {
        id: s.id,
        bytes: s.outcome.bytes.saturating_sub(s.outcome.omitted_bytes),
        retransmits: -1,
        jitter_s: udp.map_or(0.0, |u| u.jitter_s()),
        errors: udp.map_or(0, |u| u.errors),
        packets: match udp {
            Some(u) => i64::try_from(u.max_seq).unwrap_or(i64::MAX),
            None => i64::try_from(s.outcome.sent_packets).unwrap_or(i64::MAX),
        },
        start_time_s: 0.0,
        end_time_s: elapsed_s,
    }
}

fn server_output_text(streams: &[ServedStream], elapsed_s: f64) -> String {
    let mut text = String::from("dualperf iperf3-compatible server\n");
    for s in streams {
        let role = if s.server_sends { "sender" } else { "receiver" };
        let mbps = s.outcome.bytes as f64 * 8.0 / elapsed_s.max(1e-9) / 1e6;
        text += &format!(
            "[{:3}] {role}: {} bytes in {elapsed_s:.3} s = {mbps:.2} Mbit/s\n",
            s.id, s.outcome.bytes
        );
    }
    text
}

/// The control connection and its session machine.
struct Control<'a> {
    conn: TcpStream,
    session: ServerSession,
    shutdown: &'a AtomicBool,
    /// Events decoded but not yet handed out (several can arrive in one read).
    pending: std::collections::VecDeque<ServerEvent>,
}

impl Control<'_> {
    fn flush(&mut self) -> Result<(), Iperf3Error> {
        let out = self.session.take_output();
        if !out.is_empty() {
            self.conn
                .write_all(&out)
                .map_err(|e| Iperf3Error::io("writing to the control connection", e))?;
        }
        Ok(())
    }

    /// Reads until the session yields an event, writing what it queues; fails on EOF
    /// (unless the session is over), on shutdown and at `deadline`.
    fn next_event(&mut self, deadline: Instant) -> Result<ServerEvent, Iperf3Error> {
        let mut buf = [0u8; 4096];
        loop {
            if let Some(ev) = self.pending.pop_front() {
                self.flush()?;
                return Ok(ev);
            }
            if self.shutdown.load(Ordering::Relaxed) {
                let _ = self.conn.write_all(&[State::ServerTerminate.byte()]);
                return Err(Iperf3Error::ServerTerminated);
            }
            if Instant::now() > deadline {
                return Err(Iperf3Error::Timeout("waiting for the iperf3 client".into()));
            }
            match self.conn.read(&mut buf) {
                Ok(0) => return self.session.feed_eof(),
                Ok(n) => {
                    // Write what was queued before an error too (e.g. PARAM_EXCHANGE).
                    let events = self.session.feed(&buf[..n]);
                    self.flush()?;
                    self.pending.extend(events?);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(Iperf3Error::io("reading the control connection", e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The roomy UDP receive buffer is asked through `net`: when the kernel gives less,
    /// the session's notes say so (once however many streams ask); when it gives all,
    /// they stay empty.
    #[test]
    fn a_udp_listener_notes_a_receive_buffer_smaller_than_asked() {
        let mut notes = Vec::new();
        let a = udp_listener("127.0.0.1:0".parse().unwrap(), &mut notes).unwrap();
        let local = a.local_addr().unwrap();
        // A second listener on the same port, as the UDP accept binds one per stream.
        let b = udp_listener(local, &mut notes).unwrap();
        assert_eq!(b.local_addr().unwrap(), local);
        let got = net::read_applied(&a).unwrap().rcvbuf_bytes.unwrap();
        if got < UDP_RCVBUF_BYTES {
            assert_eq!(notes.len(), 1, "{got}: {notes:?}");
            assert!(notes[0].contains("SO_RCVBUF"), "{notes:?}");
        } else {
            assert!(notes.is_empty(), "{got}: {notes:?}");
        }
    }
}
