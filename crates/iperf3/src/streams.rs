//! The data-stream loops both ends share: TCP and UDP senders (paced, limited by bytes
//! or blocks) and receivers (TCP byte counting; UDP header, jitter and loss via
//! `udp::UdpRecvStats`). One thread per stream; every blocking call has a timeout so a
//! loop notices its stop flag, and receivers drain what is queued after the stop.

use crate::udp::{pacing_delay, DatagramHeader, UdpRecvStats};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a blocked loop looks at its stop flag, and the quiet time that ends a drain.
const POLL: Duration = Duration::from_millis(20);
/// Longest a receiver keeps draining after its stop flag is set.
const MAX_DRAIN: Duration = Duration::from_secs(2);

/// Seconds on a monotonic clock shared by this process (datagram timestamps).
pub fn mono_now() -> Duration {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed()
}

/// State shared by the streams of one test.
#[derive(Debug, Default)]
pub struct Shared {
    /// Senders stop at once; receivers drain and stop.
    pub stop_send: AtomicBool,
    pub stop_recv: AtomicBool,
    /// Blocks and bytes claimed by senders (iperf3's -k and -n count over all streams).
    pub blocks_claimed: AtomicU64,
    pub bytes_claimed: AtomicU64,
    /// Receivers' progress in blocks (TCP bytes / len; UDP highest sequence advances).
    pub blocks_received: AtomicU64,
    /// When a receiver last got data, ms since `mono_now`'s origin.
    pub last_recv_ms: AtomicU64,
}

/// Stops every stream of a test when dropped, so no error path leaves threads running.
pub struct StopGuard(pub Arc<Shared>);

impl Drop for StopGuard {
    fn drop(&mut self) {
        self.0.stop_send.store(true, Ordering::Relaxed);
        self.0.stop_recv.store(true, Ordering::Relaxed);
    }
}

/// What a sender does.
#[derive(Debug, Clone, Copy)]
pub struct SendCfg {
    pub len_bytes: usize,
    /// bit/s; 0 = as fast as possible.
    pub rate_bps: u64,
    /// Total blocks over all streams; 0 = no limit.
    pub max_blocks: u64,
    /// Total bytes over all streams; 0 = no limit.
    pub max_bytes: u64,
    pub counters_64bit: bool,
    /// End of iperf3's `--omit` period: bytes sent before it go to `omitted_bytes`.
    pub omit_end: Option<Instant>,
}

/// What a receiver does.
#[derive(Debug, Clone, Copy, Default)]
pub struct RecvCfg {
    pub len_bytes: usize,
    pub counters_64bit: bool,
    /// Test hook: ignore every Nth data datagram received, as if it were lost.
    pub drop_every_nth: Option<u64>,
    /// End of iperf3's `--omit` period: bytes and jitter start again from zero there
    /// (UDP packet and loss counts stay cumulative, as in iperf3 3.12).
    pub omit_end: Option<Instant>,
}

/// What one stream did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamOutcome {
    pub bytes: u64,
    /// Sender: bytes sent during the omit period (included in `bytes`).
    pub omitted_bytes: u64,
    /// Datagrams sent (UDP sender); 0 otherwise.
    pub sent_packets: u64,
    /// Receiver-side UDP counts.
    pub udp: Option<UdpRecvStats>,
    /// Datagrams removed by the drop hook.
    pub dropped_by_hook: u64,
    /// Why the loop ended early, if it did.
    pub error: Option<String>,
}

/// Bytes that fill a block: pseudo-random, made once per stream (as iperf3 does).
fn filler(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// True once, the first time it is called after `omit_end`.
fn omit_over(omit_end: &mut Option<Instant>) -> bool {
    if omit_end.is_some_and(|t| Instant::now() >= t) {
        *omit_end = None;
        return true;
    }
    false
}

/// Claims one block of `len` bytes against the test's limits; false = limit reached.
fn claim_block(shared: &Shared, cfg: &SendCfg) -> bool {
    if cfg.max_blocks > 0 && shared.blocks_claimed.fetch_add(1, Ordering::Relaxed) >= cfg.max_blocks
    {
        return false;
    }
    if cfg.max_bytes > 0
        && shared
            .bytes_claimed
            .fetch_add(cfg.len_bytes as u64, Ordering::Relaxed)
            >= cfg.max_bytes
    {
        return false;
    }
    true
}

fn pace(cfg: &SendCfg, sent_bytes: u64, started: Instant, shared: &Shared) {
    if let Some(wait) = pacing_delay(cfg.rate_bps, sent_bytes, started.elapsed()) {
        if !shared.stop_send.load(Ordering::Relaxed) {
            std::thread::sleep(wait.min(POLL));
        }
    }
}

/// One data connection of a test: a TCP stream or a connected UDP socket.
pub(crate) enum DataSocket {
    Tcp(TcpStream),
    Udp(UdpSocket),
}

/// Starts the sending or receiving loop of one data connection on a clone of its
/// socket (the caller keeps the original to close it).
pub(crate) fn spawn(
    sock: &DataSocket,
    sending: bool,
    send: SendCfg,
    recv: RecvCfg,
    shared: Arc<Shared>,
) -> std::io::Result<JoinHandle<StreamOutcome>> {
    Ok(match (sock, sending) {
        (DataSocket::Tcp(s), true) => spawn_tcp_send(s.try_clone()?, send, shared),
        (DataSocket::Tcp(s), false) => spawn_tcp_recv(s.try_clone()?, recv, shared),
        (DataSocket::Udp(s), true) => spawn_udp_send(s.try_clone()?, send, shared),
        (DataSocket::Udp(s), false) => spawn_udp_recv(s.try_clone()?, recv, shared),
    })
}

/// TCP sender: writes blocks until stopped or a limit is reached.
pub fn spawn_tcp_send(
    mut sock: TcpStream,
    cfg: SendCfg,
    shared: Arc<Shared>,
) -> JoinHandle<StreamOutcome> {
    std::thread::spawn(move || {
        let mut out = StreamOutcome::default();
        if let Err(e) = sock.set_write_timeout(Some(POLL * 5)) {
            out.error = Some(format!("setting write timeout: {e}"));
            return out;
        }
        let block = filler(cfg.len_bytes.max(1), mono_now().as_nanos() as u64);
        let started = Instant::now();
        let mut omit_end = cfg.omit_end;
        while !shared.stop_send.load(Ordering::Relaxed) {
            if omit_over(&mut omit_end) {
                out.omitted_bytes = out.bytes;
            }
            if pacing_delay(cfg.rate_bps, out.bytes, started.elapsed()).is_some() {
                pace(&cfg, out.bytes, started, &shared);
                continue;
            }
            if !claim_block(&shared, &cfg) {
                break;
            }
            let mut off = 0;
            while off < block.len() && !shared.stop_send.load(Ordering::Relaxed) {
                match sock.write(&block[off..]) {
                    Ok(0) => break,
                    Ok(n) => {
                        off += n;
                        out.bytes += n as u64;
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                        ) => {}
                    Err(e) => {
                        out.error = Some(format!("writing TCP stream: {e}"));
                        return out;
                    }
                }
            }
        }
        out
    })
}

/// Whether a receiver should leave its loop after a read timeout.
fn drain_over(shared: &Shared, stop_seen: &mut Option<Instant>) -> bool {
    if !shared.stop_recv.load(Ordering::Relaxed) {
        return false;
    }
    // A quiet POLL after the stop ends the drain.
    stop_seen.get_or_insert_with(Instant::now);
    true
}

fn note_recv(shared: &Shared) {
    shared
        .last_recv_ms
        .store(mono_now().as_millis() as u64, Ordering::Relaxed);
}

/// TCP receiver: counts bytes until EOF, or until stopped and quiet.
pub fn spawn_tcp_recv(
    mut sock: TcpStream,
    cfg: RecvCfg,
    shared: Arc<Shared>,
) -> JoinHandle<StreamOutcome> {
    std::thread::spawn(move || {
        let mut out = StreamOutcome::default();
        if let Err(e) = sock.set_read_timeout(Some(POLL)) {
            out.error = Some(format!("setting read timeout: {e}"));
            return out;
        }
        let mut buf = vec![0u8; cfg.len_bytes.clamp(16 * 1024, 1024 * 1024)];
        let unit = cfg.len_bytes.max(1) as u64;
        let mut stop_seen = None;
        let mut omit_end = cfg.omit_end;
        loop {
            match sock.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if omit_over(&mut omit_end) {
                        out.bytes = 0;
                    }
                    let before = out.bytes / unit;
                    out.bytes += n as u64;
                    shared
                        .blocks_received
                        .fetch_add(out.bytes / unit - before, Ordering::Relaxed);
                    note_recv(&shared);
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if drain_over(&shared, &mut stop_seen) {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    if !shared.stop_recv.load(Ordering::Relaxed) {
                        out.error = Some(format!("reading TCP stream: {e}"));
                    }
                    break;
                }
            }
            if shared.stop_recv.load(Ordering::Relaxed)
                && stop_seen.get_or_insert_with(Instant::now).elapsed() > MAX_DRAIN
            {
                break;
            }
        }
        out
    })
}

/// UDP sender on a connected socket: datagrams with header and sequence from 1.
pub fn spawn_udp_send(
    sock: UdpSocket,
    cfg: SendCfg,
    shared: Arc<Shared>,
) -> JoinHandle<StreamOutcome> {
    std::thread::spawn(move || {
        let mut out = StreamOutcome::default();
        let hdr_len = DatagramHeader::len(cfg.counters_64bit);
        let mut datagram = filler(cfg.len_bytes.max(hdr_len), mono_now().as_nanos() as u64);
        let started = Instant::now();
        let mut seq = 0u64;
        let mut omit_end = cfg.omit_end;
        while !shared.stop_send.load(Ordering::Relaxed) {
            if omit_over(&mut omit_end) {
                out.omitted_bytes = out.bytes;
            }
            if pacing_delay(cfg.rate_bps, out.bytes, started.elapsed()).is_some() {
                pace(&cfg, out.bytes, started, &shared);
                continue;
            }
            if !claim_block(&shared, &cfg) {
                break;
            }
            seq += 1;
            DatagramHeader::stamped(mono_now(), seq).write(&mut datagram, cfg.counters_64bit);
            match sock.send(&datagram) {
                Ok(n) => {
                    out.bytes += n as u64;
                    out.sent_packets += 1;
                }
                // A full buffer or an ICMP error from the path: the datagram is lost,
                // its sequence number stays used (the receiver counts it as lost).
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock
                            | ErrorKind::Interrupted
                            | ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) if net::is_no_buffer_space(&e) => {}
                Err(e) => {
                    out.error = Some(format!("sending UDP datagram: {e}"));
                    break;
                }
            }
        }
        out
    })
}

/// UDP receiver on a connected socket: iperf3's jitter and loss, plus the drop hook.
pub fn spawn_udp_recv(
    sock: UdpSocket,
    cfg: RecvCfg,
    shared: Arc<Shared>,
) -> JoinHandle<StreamOutcome> {
    std::thread::spawn(move || {
        let mut out = StreamOutcome::default();
        if let Err(e) = sock.set_read_timeout(Some(POLL)) {
            out.error = Some(format!("setting read timeout: {e}"));
            return out;
        }
        let mut stats = UdpRecvStats::default();
        let mut buf = vec![0u8; 65_536];
        let mut seen = 0u64;
        let mut stop_seen = None;
        let mut omit_end = cfg.omit_end;
        loop {
            match sock.recv(&mut buf) {
                Ok(n) => {
                    let Some(hdr) = DatagramHeader::parse(&buf[..n], cfg.counters_64bit) else {
                        continue; // a stray connect datagram, not data
                    };
                    if let Some(every) = cfg.drop_every_nth.filter(|&e| e > 0) {
                        seen += 1;
                        if seen == every {
                            seen = 0;
                            out.dropped_by_hook += 1;
                            continue;
                        }
                    }
                    if omit_over(&mut omit_end) {
                        stats.bytes = 0;
                        stats.jitter.restart();
                    }
                    let before = stats.max_seq;
                    stats.on_datagram(n, &hdr, mono_now().as_secs_f64());
                    let advance = stats.max_seq - before;
                    shared.blocks_received.fetch_add(advance, Ordering::Relaxed);
                    note_recv(&shared);
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if drain_over(&shared, &mut stop_seen) {
                        break;
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Interrupted | ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) => {
                    out.error = Some(format!("receiving UDP datagram: {e}"));
                    break;
                }
            }
            if shared.stop_recv.load(Ordering::Relaxed)
                && stop_seen.get_or_insert_with(Instant::now).elapsed() > MAX_DRAIN
            {
                break;
            }
        }
        out.bytes = stats.bytes;
        out.udp = Some(stats);
        out
    })
}

/// Joins a stream thread; a panicked thread becomes an outcome with an error.
pub fn join(handle: JoinHandle<StreamOutcome>) -> StreamOutcome {
    handle.join().unwrap_or_else(|_| StreamOutcome {
        error: Some("stream thread panicked".into()),
        ..StreamOutcome::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_sender_and_receiver_agree_and_the_hook_drops_every_nth() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        rx.connect(tx.local_addr().unwrap()).unwrap();
        // Room for all 1000 datagrams (~1.3 MB of kernel buffer): a receiver thread
        // descheduled on a loaded machine reads them late instead of the kernel dropping
        // them (92 of 100 hook drops were seen once with the default buffer), so the
        // counts below stay exact. The kernel caps this at net.core.rmem_max.
        let roomy = wire::spec::SocketOpts {
            rcvbuf_bytes: Some(4 << 20),
            ..wire::spec::SocketOpts::default()
        };
        net::apply_socket_opts(&rx, &roomy).unwrap();
        let shared = Arc::new(Shared::default());
        let recv = spawn_udp_recv(
            rx,
            RecvCfg {
                len_bytes: 200,
                counters_64bit: true,
                drop_every_nth: Some(10),
                omit_end: None,
            },
            shared.clone(),
        );
        let cfg = SendCfg {
            len_bytes: 200,
            rate_bps: 8_000_000,
            max_blocks: 1000,
            max_bytes: 0,
            counters_64bit: true,
            omit_end: None,
        };
        let sent = join(spawn_udp_send(tx, cfg, shared.clone()));
        shared.stop_recv.store(true, Ordering::Relaxed);
        let got = join(recv);
        assert_eq!(sent.sent_packets, 1000);
        let udp = got.udp.unwrap();
        assert_eq!(got.dropped_by_hook, 100);
        assert_eq!(udp.received, 900);
        assert_eq!(udp.bytes, 900 * 200);
        // Datagram 1000 is the 100th dropped: the highest seen is 999.
        assert_eq!(udp.max_seq, 999);
        assert_eq!(udp.errors, 99);
        assert!(udp.jitter_s() < 0.01);
    }

    #[test]
    fn tcp_sender_respects_the_byte_limit_and_receiver_counts_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tx = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (rx, _) = listener.accept().unwrap();
        let shared = Arc::new(Shared::default());
        let recv = spawn_tcp_recv(
            rx,
            RecvCfg {
                len_bytes: 1000,
                ..RecvCfg::default()
            },
            shared.clone(),
        );
        let cfg = SendCfg {
            len_bytes: 1000,
            rate_bps: 0,
            max_blocks: 0,
            max_bytes: 50_500,
            counters_64bit: false,
            omit_end: None,
        };
        let sent = join(spawn_tcp_send(tx, cfg, shared.clone()));
        assert_eq!(
            sent.bytes, 51_000,
            "iperf3 sends whole blocks until bytes >= num"
        );
        shared.stop_recv.store(true, Ordering::Relaxed);
        let got = join(recv);
        assert_eq!(got.bytes, 51_000);
        assert_eq!(shared.blocks_received.load(Ordering::Relaxed), 51);
    }
}
