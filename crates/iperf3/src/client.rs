//! An iperf3-compatible client on std sockets: runs one `wire::spec::TestSpec` against
//! an unmodified iperf3 3.x server (TCP or UDP, forward, `--reverse`, `--bidir`, N
//! streams, IPv4 or IPv6) and returns dualperf metrics. Protocol decisions are
//! `session::ClientSession`'s; turning both sides' counts into metrics is `outcome`'s.

use crate::cpu::CpuSample;
use crate::error::Iperf3Error;
use crate::json::{stream_id, Params, Protocol, Results, StreamResult, MAX_STREAMS};
use crate::json::{MAX_TCP_LEN_BYTES, MAX_UDP_LEN_BYTES, MIN_UDP_LEN_BYTES};
use crate::outcome::{self, Iperf3Result, OurStream};
use crate::proto::{make_cookie, COOKIE_LEN};
use crate::session::{ClientEvent, ClientSession};
use crate::streams::{
    self, mono_now, DataSocket, RecvCfg, SendCfg, Shared, StopGuard, StreamOutcome,
};
use crate::udp::{is_connect_reply, CONNECT_MAGIC};
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wire::spec::{Bound, Direction, Family, TestSpec};

/// How often the client wakes up while the test runs.
const POLL: Duration = Duration::from_millis(20);
/// A count-bounded test whose receiving side saw no data this long is over.
const RECV_QUIET_END: Duration = Duration::from_secs(2);

/// Client settings beyond the test itself.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    pub connect_timeout: Duration,
    /// Longest silence from the server outside the data phase (3.12 itself waits
    /// forever; 3.15+ gives up after 10 s).
    pub control_timeout: Duration,
    /// Send `udp_counters_64bit` (both sides then use 64-bit sequence numbers).
    pub udp_counters_64bit: bool,
    /// Ask for `server_output_text` in the server's results.
    pub get_server_output: bool,
    pub title: Option<String>,
    /// Test hook: drop every Nth UDP datagram we receive (reverse/bidir), as if lost.
    pub drop_every_nth_received: Option<u64>,
    /// iperf3 authentication (`--username`, `--rsa-public-key-path`); `None` = none sent.
    pub auth: Option<crate::auth::ClientAuth>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            connect_timeout: Duration::from_secs(5),
            control_timeout: Duration::from_secs(10),
            udp_counters_64bit: false,
            get_server_output: false,
            title: None,
            drop_every_nth_received: None,
            auth: None,
        }
    }
}

/// The iperf3 parameters that ask for `spec`.
pub fn params_for(spec: &TestSpec, opts: &ClientOptions) -> Result<Params, Iperf3Error> {
    if spec.kind.is_quic() {
        return Err(Iperf3Error::Unsupported(format!(
            "iperf3 has no QUIC test ({}); QUIC needs a dualperf peer",
            spec.kind
        )));
    }
    if spec.kind.is_rr() {
        return Err(Iperf3Error::Unsupported(format!(
            "iperf3 has no request/response test ({}); RR latency needs a dualperf peer",
            spec.kind
        )));
    }
    let protocol = if spec.kind.is_udp() {
        Protocol::Udp
    } else {
        Protocol::Tcp
    };
    let mut p = Params::new(protocol, 0);
    let (min_len, max_len) = match protocol {
        Protocol::Udp => (MIN_UDP_LEN_BYTES, MAX_UDP_LEN_BYTES),
        _ => (1, MAX_TCP_LEN_BYTES),
    };
    if !(min_len..=max_len).contains(&spec.payload_bytes) {
        return Err(Iperf3Error::Unsupported(format!(
            "payload of {} bytes (iperf3 {} takes {min_len}..={max_len})",
            spec.payload_bytes,
            spec.kind.transport()
        )));
    }
    p.len_bytes = spec.payload_bytes;
    if !(1..=MAX_STREAMS).contains(&u32::from(spec.streams)) {
        return Err(Iperf3Error::Unsupported(format!(
            "{} streams (iperf3 takes 1..=128)",
            spec.streams
        )));
    }
    p.parallel = u32::from(spec.streams);
    match spec.bound {
        // iperf3's `time` is whole seconds; we end the test ourselves at the exact time.
        Bound::DurationNs(ns) => {
            p.time_s = i64::try_from(ns.div_ceil(1_000_000_000).max(1)).unwrap_or(i64::MAX)
        }
        Bound::Count(n) => p.blockcount = n,
    }
    p.reverse = spec.direction == Direction::Reverse;
    p.bidirectional = spec.direction == Direction::Bidir;
    p.bandwidth_bps = match (spec.rate_bps(), protocol) {
        (Some(b), _) => Some(b),
        (None, Protocol::Udp) => Some(0), // 0 = unlimited; absent would mean 1 Mbit/s
        (None, _) => None,
    };
    let s = &spec.socket;
    p.window_bytes = s.sndbuf_bytes.max(s.rcvbuf_bytes);
    p.nodelay = s.nodelay;
    p.mss_bytes = s.mss_bytes;
    p.tos = s.tos.map(i64::from);
    p.flowlabel = s.flowlabel.map(i64::from);
    p.congestion = s.congestion.clone();
    p.udp_counters_64bit = opts.udp_counters_64bit;
    p.get_server_output = opts.get_server_output;
    p.title = opts.title.clone();
    Ok(p)
}

/// Runs `spec` against the iperf3 server at `host:port`.
pub fn run(
    host: &str,
    port: u16,
    spec: &TestSpec,
    opts: &ClientOptions,
) -> Result<Iperf3Result, Iperf3Error> {
    let mut params = params_for(spec, opts)?;
    if let Some(auth) = &opts.auth {
        params.authtoken = Some(auth.token(crate::auth::unix_now_s())?);
    }
    let server = resolve(host, port, spec.family)?;
    let conn = TcpStream::connect_timeout(&server, opts.connect_timeout)
        .map_err(|e| Iperf3Error::io(format!("connecting to iperf3 server {server}"), e))?;
    let ctx = |e| Iperf3Error::io("setting up the control connection", e);
    conn.set_nodelay(true).map_err(ctx)?;
    conn.set_read_timeout(Some(POLL)).map_err(ctx)?;
    conn.set_write_timeout(Some(opts.control_timeout))
        .map_err(ctx)?;
    let cookie = make_cookie(&random_bytes());
    let mut ctl = Control {
        conn,
        session: ClientSession::new(&cookie, params.to_json()),
        pending: VecDeque::new(),
    };
    ctl.flush()?;
    let mut test = Test {
        spec,
        opts,
        params: &params,
        server,
        cookie,
        ctl,
    };
    test.drive()
}

fn resolve(host: &str, port: u16, family: Family) -> Result<SocketAddr, Iperf3Error> {
    use net::host::HostError;
    match net::host::address_in(host, family) {
        Ok(ip) => Ok(SocketAddr::new(ip, port)),
        Err(HostError::Resolve { source, .. }) => Err(Iperf3Error::io(
            format!("resolving {}", net::host::bare(host)),
            source,
        )),
        Err(
            e @ HostError::NoAddress {
                has_other: true, ..
            },
        ) => Err(Iperf3Error::Unsupported(format!(
            "{e}; use -f {}",
            family.other().number()
        ))),
        Err(HostError::NoAddress { .. }) => Err(Iperf3Error::Unsupported(format!(
            "host {} resolved to no address",
            net::host::bare(host)
        ))),
    }
}

/// 36 bytes from /dev/urandom, or from the clock if it cannot be read.
fn random_bytes() -> [u8; COOKIE_LEN - 1] {
    let mut out = [0u8; COOKIE_LEN - 1];
    let ok = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut out))
        .is_ok();
    if !ok {
        let mut x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9e37_79b9, |d| d.as_nanos() as u64)
            ^ u64::from(std::process::id());
        for b in &mut out {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            *b = (x >> 33) as u8;
        }
    }
    out
}

struct Control {
    conn: TcpStream,
    session: ClientSession,
    pending: VecDeque<ClientEvent>,
}

impl Control {
    fn flush(&mut self) -> Result<(), Iperf3Error> {
        let out = self.session.take_output();
        if !out.is_empty() {
            self.conn
                .write_all(&out)
                .map_err(|e| Iperf3Error::io("writing to the iperf3 server", e))?;
        }
        Ok(())
    }

    /// The next event, or `None` if nothing arrived within `wait`.
    fn poll(&mut self, wait: Duration) -> Result<Option<ClientEvent>, Iperf3Error> {
        let until = Instant::now() + wait;
        let mut buf = [0u8; 4096];
        loop {
            if let Some(ev) = self.pending.pop_front() {
                self.flush()?;
                return Ok(Some(ev));
            }
            if Instant::now() >= until {
                return Ok(None);
            }
            match self.conn.read(&mut buf) {
                Ok(0) => {
                    self.session.feed_eof()?;
                    return Err(Iperf3Error::Protocol(
                        "the server closed the connection".into(),
                    ));
                }
                Ok(n) => {
                    let events = self.session.feed(&buf[..n])?;
                    self.pending.extend(events);
                    self.flush()?;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(Iperf3Error::io("reading from the iperf3 server", e)),
            }
        }
    }

    /// The next event, which must come within `wait`.
    fn expect(&mut self, wait: Duration, what: &str) -> Result<ClientEvent, Iperf3Error> {
        self.poll(wait)?
            .ok_or_else(|| Iperf3Error::Timeout(format!("waiting for the iperf3 server ({what})")))
    }
}

struct Test<'a> {
    spec: &'a TestSpec,
    opts: &'a ClientOptions,
    params: &'a Params,
    server: SocketAddr,
    cookie: [u8; COOKIE_LEN],
    ctl: Control,
}

impl Test<'_> {
    fn drive(&mut self) -> Result<Iperf3Result, Iperf3Error> {
        let wait = self.opts.control_timeout;
        // PARAM_EXCHANGE, CREATE_STREAMS, TEST_START, TEST_RUNNING.
        match self.ctl.expect(wait, "parameter exchange")? {
            ClientEvent::ParamsQueued => {}
            other => return Err(unexpected(&other)),
        }
        match self.ctl.expect(wait, "stream creation")? {
            ClientEvent::CreateStreams => {}
            other => return Err(unexpected(&other)),
        }
        let n = self.params.total_streams() as usize;
        // true = we send on this stream (bidir: our senders connect first).
        let mut we_send = vec![!self.params.reverse; n];
        if self.params.bidirectional {
            we_send[self.params.parallel as usize..]
                .iter_mut()
                .for_each(|s| *s = false);
        }
        let sockets = (0..n)
            .map(|_| self.open_stream())
            .collect::<Result<Vec<_>, _>>()?;
        loop {
            match self.ctl.expect(wait, "test start")? {
                ClientEvent::TestStart => {}
                ClientEvent::TestRunning => break,
                other => return Err(unexpected(&other)),
            }
        }
        let cpu = CpuSample::now();
        let started = Instant::now();
        let shared = Arc::new(Shared::default());
        let _stop_on_exit = StopGuard(shared.clone());
        shared
            .last_recv_ms
            .store(mono_now().as_millis() as u64, Ordering::Relaxed);
        let mut handles: Vec<Option<JoinHandle<StreamOutcome>>> = Vec::new();
        for (sock, &send) in sockets.iter().zip(&we_send) {
            handles.push(Some(self.spawn(sock, send, &shared)?));
        }

        self.run_until_done(&shared, &handles, &we_send, started)?;
        shared.stop_send.store(true, Ordering::Relaxed);
        let duration_s = started.elapsed().as_secs_f64();
        let mut outcomes: Vec<Option<StreamOutcome>> = vec![None; n];
        for i in (0..n).filter(|&i| we_send[i]) {
            outcomes[i] = handles[i].take().map(streams::join);
        }
        self.ctl.session.test_end();
        self.ctl.flush()?;

        match self.ctl.expect(wait, "results exchange")? {
            ClientEvent::ExchangeResults => {}
            other => return Err(unexpected(&other)),
        }
        shared.stop_recv.store(true, Ordering::Relaxed);
        for i in 0..n {
            if let Some(h) = handles[i].take() {
                outcomes[i] = Some(streams::join(h));
            }
        }
        let (cpu_total, cpu_user, cpu_system) = cpu.util_since();
        let ours: Vec<OurStream> = outcomes
            .into_iter()
            .enumerate()
            .map(|(i, o)| OurStream {
                id: stream_id(i),
                we_send: we_send[i],
                outcome: o.unwrap_or_default(),
            })
            .collect();
        let our_results = Results {
            cpu_util_total: cpu_total,
            cpu_util_user: cpu_user,
            cpu_util_system: cpu_system,
            sender_has_retransmits: if we_send.iter().any(|&s| s) { 0 } else { -1 },
            streams: ours
                .iter()
                .map(|s| our_stream_result(s, duration_s))
                .collect(),
            ..Results::default()
        };
        let client_json = our_results.to_json();
        self.ctl.session.send_results(&client_json);
        self.ctl.flush()?;
        let server_json = match self.ctl.expect(wait, "server results")? {
            ClientEvent::ServerResults(v) => v,
            other => return Err(unexpected(&other)),
        };
        match self.ctl.expect(wait, "display results")? {
            ClientEvent::Done => {}
            other => return Err(unexpected(&other)),
        }
        self.ctl.flush()?; // IPERF_DONE
        drop(sockets);
        let server = Results::from_json(&server_json)?;
        outcome::build(
            self.spec,
            &ours,
            &server,
            server_json,
            client_json,
            duration_s,
            cpu_total,
        )
    }

    /// Waits for the end condition of the spec while data flows.
    fn run_until_done(
        &mut self,
        shared: &Shared,
        handles: &[Option<JoinHandle<StreamOutcome>>],
        we_send: &[bool],
        started: Instant,
    ) -> Result<(), Iperf3Error> {
        let senders_done = || {
            handles
                .iter()
                .zip(we_send)
                .filter(|(_, s)| **s)
                .all(|(h, _)| h.as_ref().is_none_or(|h| h.is_finished()))
        };
        let we_receive = we_send.iter().any(|s| !s);
        loop {
            if let Some(ev) = self.ctl.poll(POLL)? {
                return Err(unexpected(&ev));
            }
            let done = match self.spec.bound {
                Bound::DurationNs(ns) => started.elapsed() >= Duration::from_nanos(ns),
                Bound::Count(count) => {
                    let quiet_ms = (mono_now().as_millis() as u64)
                        .saturating_sub(shared.last_recv_ms.load(Ordering::Relaxed));
                    let received_all = shared.blocks_received.load(Ordering::Relaxed) >= count
                        || quiet_ms >= RECV_QUIET_END.as_millis() as u64;
                    senders_done() && (!we_receive || received_all)
                }
            };
            // Senders that all failed (peer gone) also end the test.
            let all_senders_gone = we_send.iter().all(|&s| s) && senders_done();
            if done || all_senders_gone {
                return Ok(());
            }
        }
    }

    fn open_stream(&mut self) -> Result<DataSocket, Iperf3Error> {
        let net_err = |what: &'static str| {
            move |e: net::NetError| {
                let kind = e.io_kind().unwrap_or(ErrorKind::Other);
                Iperf3Error::io(
                    format!("data stream: {what}"),
                    std::io::Error::new(kind, e.to_string()),
                )
            }
        };
        let ctx = |what: &'static str| move |e| Iperf3Error::io(format!("data stream: {what}"), e);
        let so = &self.spec.socket;
        if self.params.protocol == Protocol::Udp {
            let any: SocketAddr = match self.server {
                SocketAddr::V4(_) => (std::net::Ipv4Addr::UNSPECIFIED, 0).into(),
                SocketAddr::V6(_) => (std::net::Ipv6Addr::UNSPECIFIED, 0).into(),
            };
            // iperf3 asks for a large receive buffer on its UDP sockets unless told.
            let opts = wire::spec::SocketOpts {
                rcvbuf_bytes: so.rcvbuf_bytes.or(Some(4 << 20)),
                ..so.clone()
            };
            let (udp, _) = net::udp_bind(any, &opts).map_err(net_err("socket"))?;
            net::udp_connect(&udp, self.server, &opts).map_err(net_err("connect"))?;
            udp.send(&CONNECT_MAGIC)
                .map_err(ctx("sending the connect datagram"))?;
            udp.set_read_timeout(Some(POLL)).map_err(ctx("timeout"))?;
            let deadline = Instant::now() + self.opts.control_timeout;
            let mut buf = [0u8; 65_536];
            loop {
                if Instant::now() > deadline {
                    return Err(Iperf3Error::Timeout(
                        "waiting for the server's UDP connect reply".into(),
                    ));
                }
                match udp.recv(&mut buf) {
                    Ok(len) if is_connect_reply(&buf[..len]) => return Ok(DataSocket::Udp(udp)),
                    Ok(_) => {}
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                        ) => {}
                    Err(e) => return Err(Iperf3Error::io("waiting for the UDP connect reply", e)),
                }
            }
        }
        let (mut tcp, _) = net::tcp_connect(self.server, so, self.opts.connect_timeout)
            .map_err(net_err("connect"))?;
        tcp.set_write_timeout(Some(self.opts.control_timeout))
            .map_err(ctx("timeout"))?;
        tcp.write_all(&self.cookie)
            .map_err(ctx("sending the cookie"))?;
        Ok(DataSocket::Tcp(tcp))
    }

    fn spawn(
        &self,
        sock: &DataSocket,
        send: bool,
        shared: &Arc<Shared>,
    ) -> Result<JoinHandle<StreamOutcome>, Iperf3Error> {
        let p = self.params;
        let send_cfg = SendCfg {
            len_bytes: p.len_bytes as usize,
            rate_bps: p.bandwidth_bps.unwrap_or(0),
            max_blocks: p.blockcount,
            max_bytes: p.num_bytes,
            counters_64bit: p.udp_counters_64bit,
            omit_end: None, // we always send omit 0
        };
        let recv_cfg = RecvCfg {
            len_bytes: p.len_bytes as usize,
            counters_64bit: p.udp_counters_64bit,
            drop_every_nth: self.opts.drop_every_nth_received,
            omit_end: None,
        };
        streams::spawn(sock, send, send_cfg, recv_cfg, shared.clone())
            .map_err(|e| Iperf3Error::io("cloning a data socket", e))
    }
}

fn unexpected(ev: &ClientEvent) -> Iperf3Error {
    Iperf3Error::Protocol(format!("unexpected {ev:?} from the server"))
}

fn our_stream_result(s: &OurStream, duration_s: f64) -> StreamResult {
    let udp = s.outcome.udp.as_ref();
    StreamResult {
        id: s.id,
        bytes: s.outcome.bytes,
        retransmits: -1,
        jitter_s: udp.map_or(0.0, |u| u.jitter_s()),
        errors: udp.map_or(0, |u| u.errors),
        packets: match udp {
            Some(u) => i64::try_from(u.max_seq).unwrap_or(i64::MAX),
            None => i64::try_from(s.outcome.sent_packets).unwrap_or(i64::MAX),
        },
        start_time_s: 0.0,
        end_time_s: duration_s,
    }
}
