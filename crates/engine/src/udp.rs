//! UDP data loops: the paced, batched stream sender and receiver (udp-stream, all
//! directions; RFC 4737 loss/dup/reorder, RFC 3550 jitter and RFC 5481 IPDV at the
//! receiver), and the request/response client with a per-transaction timeout and its
//! echo responder (udp-rr). Stream datagrams go through `net::UdpBatch` (sendmmsg /
//! recvmmsg, GSO where the kernel allows; one per call under `DUALPERF_NO_BATCH=1`).
//!
//! Jitter and IPDV need one send stamp and one arrival time per datagram. A stream paced
//! at up to [`PER_DATAGRAM_MAX_PPS`] gives them: its sender stamps each datagram right
//! before the system call that sends it alone (no GSO), and the receiver (no GRO under
//! `auto`) takes each datagram's kernel receive time. Faster paced streams and unpaced
//! ones send batches that share a stamp (GSO super-datagrams, which their receivers take
//! whole with GRO: one arrival time and one socket-queue entry for up to 64 datagrams),
//! so their jitter is reported as unavailable with that reason, never as a number; such
//! a receiver's socket counts dropped buffers, not datagrams, and the result says so
//! instead of showing them as datagrams. Every receiver also counts the
//! datagrams its own socket dropped (full receive buffer) and the host's UDP error
//! counters over the run, so loss can be told apart from the receiver's own drops.
//! On the per-datagram path the receiver of a stream without per-datagram timing reads
//! after short timed waits instead of a socket wake-up per datagram (`net`'s
//! `BatchConfig::coalesce_wakeups`, `+naps` in `udp_datapath_calls`).

use crate::data::{wait_until, ModelSchedule, Outcome, Pace, SendBound, Shared, POLL};
use measure::{Arrival, Ipdv, LatencyHistogram, Rfc3550Jitter, SeqTracker};
use net::{BatchConfig, UdpBatch, Wait};
use std::io;
use std::net::{IpAddr, UdpSocket};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::datagram::{DatagramHeader, DatagramView, FLAG_RESPONSE};
use wire::proto::StreamStats;
use wire::spec::UdpDatapath;

/// Datagrams per sendmmsg / recvmmsg call.
pub(crate) const BATCH: usize = 32;
/// Pacing granularity: datagrams due within this window go out together.
const PACING_QUANTUM: Duration = Duration::from_micros(50);
/// Highest paced rate sent one datagram per system call, each with its own stamp (one
/// datagram per pacing quantum); above it datagrams go out in stamped batches, which
/// keeps 200 kpps and more on schedule but gives no per-datagram jitter.
pub(crate) const PER_DATAGRAM_MAX_PPS: f64 = 20_000.0;
/// After the peer's senders are done, stop once nothing arrived for this long.
const DRAIN_IDLE: Duration = Duration::from_millis(50);
/// …and in any case this long after they are done.
const DRAIN_MAX: Duration = Duration::from_millis(500);

fn transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    ) || net::is_no_buffer_space(e)
}

/// Paced sender on a connected socket. `pps = None` sends as fast as possible, in
/// batches (sendmmsg + GSO) stamped once per batch; a paced sender stamps and sends
/// each datagram on its own, so the receiver can measure jitter.
/// The socket-layer choice for a user's `--udp-datapath`: (datapath, GSO allowed).
/// `auto` leaves the datapath to `net` (batched, or `DUALPERF_NO_BATCH=1`) with GSO as
/// the caller's default.
pub(crate) fn datapath_choice(d: UdpDatapath, gso_default: bool) -> (Option<net::Datapath>, bool) {
    match d {
        UdpDatapath::Auto => (None, gso_default),
        UdpDatapath::PerDatagram => (Some(net::Datapath::PerCall), false),
        UdpDatapath::Batched => (Some(net::Datapath::Batched), false),
        UdpDatapath::Gso => (Some(net::Datapath::Batched), true),
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn send(
    sock: UdpSocket,
    stream_id: u16,
    payload_bytes: usize,
    pps: Option<f64>,
    bound: SendBound,
    datapath: UdpDatapath,
    shared: Arc<Shared>,
) -> Outcome {
    let _ = sock.set_write_timeout(Some(POLL));
    if pps.is_some() {
        // A paced sender sleeps between datagrams; Linux's default 50 µs timer slack
        // lets those sleeps overshoot by a whole datagram gap at 20 kpps, so datagrams
        // bunch up. This thread only.
        net::fine_timer_slack();
    }
    let per_datagram = RxTiming::of(pps) == RxTiming::PerDatagram;
    // GSO segments reach the receiver with one shared arrival time: off by default for
    // a per-datagram paced sender.
    let (path, gso) = datapath_choice(datapath, !per_datagram);
    let mut tx = UdpBatch::new(
        sock,
        BatchConfig {
            datapath: path,
            max_batch: BATCH,
            gso,
            gro: false,
            kernel_timestamps: false,
            count_drops: false,
            ..BatchConfig::default()
        },
    );
    // Datagrams per call: at least a batch, and with segmentation offload as many as one
    // offloaded send carries (64 of 128 bytes, 46 of 1408), so a call leaves as one
    // buffer and wakes the receiver at most once.
    let batch = BATCH.max(tx.offload_segments(payload_bytes));
    let mut bufs = vec![vec![0u8; payload_bytes]; batch];
    let mut o = Outcome::default();
    let mut windows = shared.windows();
    // The schedule starts at the data phase's start, so a late thread start catches up.
    let start = shared.data_start();
    let mut seq = 0u64;
    // Datagrams sent per wake-up when paced: what falls due in PACING_QUANTUM (1 at
    // low rates, so their spacing is kept; up to a batch at high rates).
    let quantum = pps.map_or(1, |p| {
        ((p * PACING_QUANTUM.as_secs_f64()) as u64).clamp(1, batch as u64)
    });
    // A paced duration-bound run sends at most the datagrams its schedule holds; the
    // deadline stays a hard stop, so a rate the host cannot reach never overruns it.
    let mut bound = bound;
    if let (Some(pps), Some(deadline)) = (pps, bound.deadline) {
        let secs = deadline.saturating_duration_since(start).as_secs_f64();
        let scheduled = ((secs * pps).round() as u64).max(1);
        bound.count = Some(bound.count.map_or(scheduled, |c| c.min(scheduled)));
    }
    'run: loop {
        let now = Instant::now();
        if bound.done(seq, now) || shared.aborted() {
            break;
        }
        // How many datagrams are due now (pacing against the schedule, not the last send).
        let mut due = match pps {
            Some(pps) => {
                let allowed = (now.duration_since(start).as_secs_f64() * pps) as u64 + 1;
                allowed.saturating_sub(seq)
            }
            None => batch as u64,
        };
        let mut quantum = quantum;
        if let Some(c) = bound.count {
            due = due.min(c - seq);
            quantum = quantum.min(c - seq);
        }
        // Wait until a whole pacing quantum is due: one wake-up and one system call per
        // quantum instead of per datagram.
        if due < quantum {
            if let Some(pps) = pps {
                let next = seq + quantum - 1;
                wait_until(start + Duration::from_secs_f64(next as f64 / pps));
            }
            continue;
        }
        let n = due.min(batch as u64) as usize;
        let mut done = 0;
        while done < n {
            // (Re)stamp what is left right before each attempt: time spent waiting on a
            // full socket (ENOBUFS / EAGAIN) is the sender's, not transit. Paced: one
            // datagram per attempt, so each carries its own send time.
            let first_seq = seq + done as u64;
            let end = if per_datagram { done + 1 } else { n };
            let mut send_ns = shared.ns_since_go(Instant::now());
            if per_datagram {
                send_ns = send_ns.saturating_sub(held_back_ns(&shared.send_delay_ns, first_seq));
            }
            stamp(
                &mut bufs[done..end],
                first_seq,
                send_ns,
                stream_id,
                shared.token,
            );
            let refs: Vec<&[u8]> = bufs[done..end].iter().map(|b| &b[..]).collect();
            match tx.send_batch(&refs) {
                Ok(k) => {
                    done += k;
                    if let Some(w) = windows.as_mut() {
                        // By the stamp the receiver will see, so both sides agree.
                        w.sent(send_ns, k as u64);
                    }
                    o.sent_packets += k as u64;
                    o.sent_bytes += (k * payload_bytes) as u64;
                    shared.add_sent((k * payload_bytes) as u64, k as u64);
                }
                Err(e) if transient(&e) => {
                    if shared.aborted() {
                        break 'run;
                    }
                    std::thread::yield_now();
                }
                Err(e) => {
                    o.errors
                        .push(format!("udp send on stream {stream_id}: {e}"));
                    break 'run;
                }
            }
        }
        seq += n as u64;
    }
    o.last_send_ns = shared.ns_since_go(Instant::now());
    o.windows = windows;
    note_datapath(&tx, &mut o);
    o.io.insert(
        "udp_send_stamps".into(),
        if per_datagram {
            "per-datagram"
        } else {
            "per-batch"
        }
        .into(),
    );
    o.streams.push(StreamStats {
        stream_id,
        sent_bytes: o.sent_bytes,
        sent_packets: o.sent_packets,
        ..StreamStats::default()
    });
    o
}

/// Largest UDP payload a model may draw (IPv4's limit; IPv6 allows 20 bytes more).
pub(crate) const MAX_MODEL_PAYLOAD: usize = 65_507;

/// Sender of a D-ITG-style traffic model: each gap and each size drawn from the model's
/// distributions (seeded; stream `i` draws its own sequences), one datagram per system
/// call, stamped as it leaves. The schedule is absolute (the sum of the drawn gaps from
/// the data phase's start), so a late wake-up never shifts what follows; how late each
/// datagram left against its schedule is recorded (`schedule_late_*_us` in applied).
/// Without an IDT the gaps are the stream's rate (or none: as fast as possible); without
/// a size distribution every datagram has the test's payload size.
#[allow(clippy::too_many_arguments)]
pub(crate) fn send_model(
    sock: UdpSocket,
    stream_id: u16,
    payload_bytes: usize,
    model: &wire::traffic::TrafficModel,
    pps: Option<f64>,
    bound: SendBound,
    datapath: UdpDatapath,
    shared: Arc<Shared>,
) -> Outcome {
    let mut o = Outcome::default();
    let _ = sock.set_write_timeout(Some(POLL));
    let lens = (wire::datagram::HEADER_BYTES, MAX_MODEL_PAYLOAD);
    let flow = (stream_id, payload_bytes, pps);
    let Some(mut schedule) = ModelSchedule::start(model, flow, lens, &shared, &mut o) else {
        return o;
    };
    let (path, _) = datapath_choice(datapath, false);
    let mut tx = UdpBatch::new(
        sock,
        BatchConfig {
            datapath: path,
            max_batch: 1,
            gso: false,
            gro: false,
            kernel_timestamps: false,
            count_drops: false,
            ..BatchConfig::default()
        },
    );
    let mut buf = vec![0u8; schedule.max_len()];
    let mut windows = shared.windows();
    let mut seq = 0u64;
    'run: while let Some(len) = schedule.next(&bound, seq, &shared) {
        loop {
            let send_ns = shared.ns_since_go(Instant::now());
            stamp(
                std::slice::from_mut(&mut buf),
                seq,
                send_ns,
                stream_id,
                shared.token,
            );
            match tx.send_batch(&[&buf[..len]]) {
                Ok(_) => {
                    if let Some(w) = windows.as_mut() {
                        w.sent(send_ns, 1);
                    }
                    o.sent_packets += 1;
                    o.sent_bytes += len as u64;
                    shared.add_sent(len as u64, 1);
                    break;
                }
                Err(e) if transient(&e) => {
                    if shared.aborted() {
                        break 'run;
                    }
                    std::thread::yield_now();
                }
                Err(e) => {
                    o.errors
                        .push(format!("udp send on stream {stream_id}: {e}"));
                    break 'run;
                }
            }
        }
        seq += 1;
    }
    o.windows = windows;
    o.last_send_ns = shared.ns_since_go(Instant::now());
    note_datapath(&tx, &mut o);
    o.io.insert("traffic_model".into(), model.to_string());
    o.io.insert("udp_send_stamps".into(), "per-datagram".into());
    schedule.note(&mut o);
    o.streams.push(StreamStats {
        stream_id,
        sent_bytes: o.sent_bytes,
        sent_packets: o.sent_packets,
        ..StreamStats::default()
    });
    o
}

/// Test hook ([`crate::data::SEND_DELAY_ENV`]): how long datagram `seq` counts as
/// held back after its stamp, by the repeating pattern. The stamp is moved back by
/// that much rather than the send delayed by a sleep: for every figure computed from
/// (send stamp, arrival) pairs the two are the same, and a stamp is exact where a sleep
/// overshoots by whole scheduler time slices on a loaded host.
fn held_back_ns(pattern_ns: &[u64], seq: u64) -> u64 {
    if pattern_ns.is_empty() {
        return 0;
    }
    let i = (seq % pattern_ns.len() as u64) as usize;
    pattern_ns.get(i).copied().unwrap_or(0)
}

/// Write the header of consecutive datagrams from `first_seq`, all sent at `send_ns`.
fn stamp(bufs: &mut [Vec<u8>], first_seq: u64, send_ns: u64, stream_id: u16, token: u32) {
    for (i, buf) in bufs.iter_mut().enumerate() {
        if let Ok(mut v) = DatagramView::new_checked(&mut buf[..]) {
            v.set_header(&DatagramHeader {
                seq: first_seq + i as u64,
                send_time_ns: send_ns,
                stream_id,
                flags: 0,
                token,
            });
        }
    }
}

/// The receiver's one clock domain: ns since `go` on the monotonic clock. Kernel
/// receive stamps (CLOCK_REALTIME) are converted with the realtime − monotonic offset
/// sampled once when the side started ([`Shared::realtime_at_go_ns`], also what the
/// peer uses to put these arrivals on one clock with its stamps), so stamped and
/// unstamped arrivals never mix clocks.
struct RxClock {
    realtime_at_go_ns: u64,
}

impl RxClock {
    fn new(shared: &Shared) -> RxClock {
        RxClock {
            realtime_at_go_ns: shared.realtime_at_go_ns,
        }
    }
    /// Arrival time in ns since go: the kernel's stamp when there is one, else `now_ns`.
    fn arrival_ns(&self, kernel_rx_ns: Option<u64>, now_ns: u64) -> u64 {
        match kernel_rx_ns {
            Some(k) if self.realtime_at_go_ns > 0 => k.saturating_sub(self.realtime_at_go_ns),
            _ => now_ns,
        }
    }
}

struct StreamRx {
    seq: SeqTracker,
    jitter: Rfc3550Jitter,
    ipdv: Ipdv,
    transit: measure::Transit,
    windows: Option<measure::Windows>,
    bytes: u64,
    packets: u64,
    /// Distinct datagrams that arrived, kept or dropped by the test hook (count stop).
    seen: u64,
}

/// What timing a stream receiver can get from its sender (both sides derive it from
/// the spec's rate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RxTiming {
    /// Paced at most [`PER_DATAGRAM_MAX_PPS`]: one stamp per datagram; measure jitter.
    PerDatagram,
    /// Paced faster: stamps shared by a batch; no jitter.
    FastPaced,
    /// Unpaced: stamps shared by a batch; no jitter.
    Unpaced,
}

impl RxTiming {
    pub(crate) fn of(pps: Option<f64>) -> RxTiming {
        match pps {
            Some(p) if p <= PER_DATAGRAM_MAX_PPS => RxTiming::PerDatagram,
            Some(_) => RxTiming::FastPaced,
            None => RxTiming::Unpaced,
        }
    }
}

/// Why an unpaced stream has no jitter figure.
pub(crate) const JITTER_UNPACED: &str = "unpaced stream: the sender stamps each batch of \
     datagrams once (and on the batched path GSO segments share one arrival time), so \
     per-datagram delay variation cannot be measured; give a rate of at most 20 kpps (-b) \
     to measure jitter and IPDV";
/// Why a stream paced above [`PER_DATAGRAM_MAX_PPS`] has no jitter figure.
pub(crate) const JITTER_FAST_PACED: &str = "paced above 20 kpps: datagrams leave in \
     batches that share one send stamp (one system call per 50 µs), so per-datagram delay \
     variation cannot be measured; pace at 20 kpps or less to measure jitter and IPDV";

/// Whether a receiver asks for GRO: `gso` always (offloads at both ends), `auto` for
/// streams without per-datagram timing (their datagrams share arrival times anyway),
/// never on `batched` or `per-datagram`.
pub(crate) fn gro_wanted(datapath: UdpDatapath, timing: RxTiming) -> bool {
    match datapath {
        UdpDatapath::Gso => true,
        UdpDatapath::Auto => timing != RxTiming::PerDatagram,
        UdpDatapath::Batched | UdpDatapath::PerDatagram => false,
    }
}

/// Receiver for `streams` flows on one socket. Stops on abort, when every expected
/// datagram was seen (count-bound), or after draining once the peer's senders are done.
pub(crate) fn recv(
    sock: UdpSocket,
    streams: u16,
    payload_bytes: usize,
    expected_per_stream: Option<u64>,
    timing: RxTiming,
    datapath: UdpDatapath,
    shared: Arc<Shared>,
) -> Outcome {
    let host_before = net::udp_error_counters();
    let mut sock = UdpBatch::new(
        sock,
        BatchConfig {
            datapath: datapath_choice(datapath, false).0,
            max_batch: BATCH,
            max_datagram_bytes: payload_bytes.max(wire::datagram::HEADER_BYTES),
            gso: false,
            // GRO (receive coalescing) where no per-datagram arrival time is needed: one
            // buffer per GSO send instead of one socket-queue entry per datagram, which
            // takes most of the per-datagram work off both ends on loopback. Its cost,
            // said in the result: the socket's drop counter then counts buffers.
            gro: gro_wanted(datapath, timing),
            // Arrival stamps serve jitter, IPDV and transit, which only a per-datagram
            // stamped stream has; elsewhere they would cost a control message per
            // datagram (and a clock read per packet in the kernel) for nothing.
            kernel_timestamps: timing == RxTiming::PerDatagram,
            count_drops: true,
            // Per call, a stream without per-datagram timing is read after short timed
            // waits, not one socket wake-up per datagram (which on loopback its sender
            // pays for): `+naps` in udp_datapath_calls.
            coalesce_wakeups: timing != RxTiming::PerDatagram,
        },
    );
    // Datagrams counted without a kernel receive time of their own.
    let mut unstamped = 0u64;
    let mut rx: Vec<StreamRx> = (0..streams)
        .map(|_| StreamRx {
            seq: SeqTracker::new(),
            jitter: Rfc3550Jitter::new(),
            ipdv: Ipdv::new(),
            transit: measure::Transit::new(),
            windows: shared.windows(),
            bytes: 0,
            packets: 0,
            seen: 0,
        })
        .collect();
    // The count comes from the peer's spec: saturate rather than overflow.
    let expected_total = expected_per_stream.map(|n| n.saturating_mul(u64::from(streams)));
    let mut o = Outcome::default();
    let mut batch = sock.recv_buffers();
    let mut drain_since: Option<Instant> = None;
    let mut last_rx = Instant::now();
    let clock = RxClock::new(&shared);
    let timed = timing == RxTiming::PerDatagram;
    loop {
        match sock.recv_batch(&mut batch, Wait::Timeout(Duration::from_millis(10))) {
            Ok(0) => {}
            Ok(_) => {
                let now = Instant::now();
                let now_ns = shared.ns_since_go(now);
                last_rx = now;
                let (mut bytes, mut packets) = (0u64, 0u64);
                for d in batch.iter() {
                    // Kernel receive time when the socket gives one, in our one clock
                    // domain (jitter and IPDV use differences of transit times, so it
                    // need not match the sender's clock, only stay the same clock).
                    let arrival_ns = clock.arrival_ns(d.kernel_rx_ns, now_ns);
                    if take(d.payload, arrival_ns, timed, &mut rx, &shared) {
                        bytes += d.payload.len() as u64;
                        packets += 1;
                        unstamped += u64::from(d.kernel_rx_ns.is_none());
                    }
                }
                if packets > 0 {
                    shared.add_recv(bytes, packets);
                    o.last_recv_ns = now_ns;
                }
            }
            Err(e) if transient(&e) => {}
            Err(e) => {
                o.errors.push(format!("udp receive: {e}"));
                break;
            }
        }
        if shared.aborted() {
            break;
        }
        if expected_total.is_some_and(|t| rx.iter().map(|s| s.seen).sum::<u64>() >= t) {
            break;
        }
        if shared.drain.load(Relaxed) {
            let now = Instant::now();
            let since = *drain_since.get_or_insert(now);
            if now.duration_since(last_rx) >= DRAIN_IDLE || now.duration_since(since) >= DRAIN_MAX {
                break;
            }
        }
    }
    o.rx_socket_drops = sock.socket_drops();
    o.rx_coalesced = sock.gro_enabled();
    o.rx_host_udp_errors = host_before
        .zip(net::udp_error_counters())
        .map(|(before, after)| after.since(&before));
    let gro_buffers = sock.stats().gro_buffers;
    o.jitter_unavailable = match timing {
        RxTiming::Unpaced => Some(JITTER_UNPACED.to_string()),
        RxTiming::FastPaced => Some(JITTER_FAST_PACED.to_string()),
        RxTiming::PerDatagram if gro_buffers > 0 => Some(format!(
            "{gro_buffers} receive buffers held several datagrams coalesced (GRO) under one \
             arrival time"
        )),
        RxTiming::PerDatagram if unstamped > 0 => Some(format!(
            "{unstamped} datagrams came without a kernel receive timestamp (SO_TIMESTAMPNS), \
             so their arrival times are shared by a receive batch"
        )),
        RxTiming::PerDatagram => None,
    };
    note_datapath(&sock, &mut o);
    for (id, s) in rx.into_iter().enumerate() {
        let c = s.seq.counts();
        o.recv_bytes += s.bytes;
        o.recv_packets += c.received;
        o.dup_packets += c.duplicates;
        o.reordered_packets += c.reordered;
        if s.jitter.samples() > 0 {
            o.jitter_weighted_ns += s.jitter.jitter_ns() * s.jitter.samples() as f64;
            o.jitter_samples += s.jitter.samples();
        }
        let mut h = o.ipdv.take().unwrap_or_default();
        h.merge(s.ipdv.histogram());
        o.ipdv = Some(h);
        o.transit.merge(&s.transit);
        match (&mut o.windows, s.windows) {
            (Some(a), Some(b)) => a.merge(&b),
            (a @ None, b) => *a = b,
            _ => {}
        }
        o.streams.push(StreamStats {
            stream_id: id as u16,
            recv_bytes: s.bytes,
            recv_packets: s.packets,
            ..StreamStats::default()
        });
    }
    o
}

/// Record the datapath a socket used and any offload it had to give up.
fn note_datapath(b: &UdpBatch, o: &mut Outcome) {
    let path = match b.datapath() {
        net::Datapath::Batched => "batched",
        net::Datapath::PerCall => "per-call",
    };
    o.io.insert("udp_datapath".into(), path.into());
    o.io.insert("udp_datapath_calls".into(), b.datapath_calls());
    if b.gso_enabled() {
        o.io.insert("udp_gso".into(), "true".into());
    }
    if b.gro_enabled() {
        o.io.insert("udp_gro".into(), "true".into());
    }
    let st = b.stats();
    let (calls, dgrams) = if st.send_calls > 0 {
        (st.send_calls, st.sent_datagrams)
    } else {
        (st.recv_calls, st.recv_datagrams)
    };
    if calls > 0 {
        o.io.insert(
            "udp_datagrams_per_call".into(),
            format!("{:.2}", dgrams as f64 / calls as f64),
        );
    }
    if st.naps > 0 {
        o.io.insert(
            "udp_datagrams_per_nap".into(),
            format!("{:.2}", st.recv_datagrams as f64 / st.naps as f64),
        );
    }
    for n in b.notes() {
        o.errors.push(format!("note: {n}"));
    }
}

/// Account one datagram; `true` if it counts as received (valid, ours, not a duplicate,
/// not dropped by the test hook). `timed`: the stream stamps each datagram, so its delay
/// variation and transit are recorded (else they are unavailable and not computed).
fn take(dg: &[u8], arrival_ns: u64, timed: bool, rx: &mut [StreamRx], shared: &Shared) -> bool {
    let Ok(v) = DatagramView::new_checked(dg) else {
        return false;
    };
    if v.token() != shared.token {
        return false;
    }
    let Some(s) = rx.get_mut(usize::from(v.stream_id())) else {
        return false;
    };
    let seq = v.seq();
    if shared
        .drop_every
        .is_some_and(|n| seq.wrapping_add(1).is_multiple_of(n))
    {
        s.seen += 1;
        return false;
    }
    if s.seq.record(seq) == Arrival::Duplicate {
        return false;
    }
    // Counted after the duplicate check: duplicates must not end a count-bound run early.
    s.seen += 1;
    s.bytes += dg.len() as u64;
    s.packets += 1;
    if timed {
        s.jitter.record(v.send_time_ns(), arrival_ns);
        s.ipdv.record(seq, v.send_time_ns(), arrival_ns);
        s.transit.record(v.send_time_ns(), arrival_ns);
    }
    if let Some(w) = s.windows.as_mut() {
        w.received(
            v.send_time_ns(),
            arrival_ns,
            dg.len() as u64,
            s.jitter.jitter_ns(),
        );
    }
    true
}

/// Request/response client on a connected socket: each request waits at most
/// `timeout` for its response; a late or lost one is counted and the run moves on.
pub(crate) fn rr_client(
    sock: UdpSocket,
    stream_id: u16,
    payload_bytes: usize,
    timeout: Duration,
    bound: SendBound,
    mut pace: Option<Pace>,
    shared: Arc<Shared>,
) -> Outcome {
    let mut req = vec![0u8; payload_bytes];
    let mut resp = vec![0u8; payload_bytes.max(2048)];
    let mut o = Outcome::default();
    let mut rtt = LatencyHistogram::new();
    let mut seq = 0u64;
    // The full per-transaction timeout is set once; only after a stale reply or an early
    // wake-up is it shortened to what is left, and then restored for the next request.
    let full_timeout = Some(timeout.max(Duration::from_micros(1)));
    let _ = sock.set_read_timeout(full_timeout);
    let mut current_timeout = full_timeout;
    loop {
        if let Some(p) = pace.as_mut() {
            if !p.wait(&bound, &shared) {
                break;
            }
        }
        let t0 = Instant::now();
        if bound.done(seq, t0) || shared.aborted() {
            break;
        }
        if let Ok(mut v) = DatagramView::new_checked(&mut req[..]) {
            v.set_header(&DatagramHeader {
                seq,
                send_time_ns: shared.ns_since_go(t0),
                stream_id,
                flags: 0,
                token: shared.token,
            });
        }
        seq += 1;
        match sock.send(&req) {
            Ok(_) => {
                o.sent_packets += 1;
                o.sent_bytes += payload_bytes as u64;
                shared.add_sent(payload_bytes as u64, 1);
            }
            Err(e) if transient(&e) || e.kind() == io::ErrorKind::ConnectionRefused => {
                o.rr_timeouts += 1;
                continue;
            }
            Err(e) => {
                o.errors.push(format!("udp-rr send: {e}"));
                break;
            }
        }
        let deadline = t0 + timeout;
        if current_timeout != full_timeout {
            let _ = sock.set_read_timeout(full_timeout);
            current_timeout = full_timeout;
        }
        let mut first_wait = true;
        loop {
            let now = Instant::now();
            if now >= deadline {
                o.rr_timeouts += 1;
                break;
            }
            if !first_wait {
                let wait = Some((deadline - now).max(Duration::from_micros(1)));
                let _ = sock.set_read_timeout(wait);
                current_timeout = wait;
            }
            first_wait = false;
            match sock.recv(&mut resp) {
                Ok(n) => {
                    let Ok(v) = DatagramView::new_checked(&resp[..n]) else {
                        continue;
                    };
                    if v.seq() != seq - 1 || v.flags() & FLAG_RESPONSE == 0 {
                        continue; // a late response to an earlier request
                    }
                    let t1 = Instant::now();
                    let ns = t1.duration_since(t0).as_nanos().max(1) as u64;
                    rtt.record(ns);
                    shared.add_rtt(ns);
                    o.transactions += 1;
                    o.recv_packets += 1;
                    o.recv_bytes += n as u64;
                    shared.add_recv(n as u64, 1);
                    o.last_recv_ns = shared.ns_since_go(t1);
                    break;
                }
                Err(e) if transient(&e) => {
                    // Timed out: the loop head counts it once the deadline has passed.
                }
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
                Err(e) => {
                    o.errors.push(format!("udp-rr receive: {e}"));
                    return finish_rr(o, rtt, &shared);
                }
            }
            if shared.aborted() {
                return finish_rr(o, rtt, &shared);
            }
        }
    }
    finish_rr(o, rtt, &shared)
}

fn finish_rr(mut o: Outcome, rtt: LatencyHistogram, shared: &Shared) -> Outcome {
    o.last_send_ns = shared.ns_since_go(Instant::now());
    o.last_recv_ns = o.last_recv_ns.max(o.last_send_ns);
    o.rtt = Some(rtt);
    o
}

/// Echo responder: every request with our token from the client's host (`client_ip`, the
/// control connection's peer) comes back with the response flag, until the client has
/// finished (drain) or abort. Requests from elsewhere are not answered: the token is in
/// every datagram in clear, so a forged source address could otherwise have the echo
/// reflected at any host. With `reply_bytes` the reply is cut to that many bytes (pmtu
/// acknowledges a probe by its header).
pub(crate) fn rr_server(
    sock: UdpSocket,
    client_ip: IpAddr,
    reply_bytes: Option<usize>,
    shared: Arc<Shared>,
) -> Outcome {
    let client_ip = client_ip.to_canonical();
    let _ = sock.set_read_timeout(Some(POLL));
    let mut buf = vec![0u8; 65_536];
    let mut o = Outcome::default();
    let mut seen = 0u64;
    while !shared.aborted() && !shared.drain.load(Relaxed) {
        let (n, from) = match sock.recv_from(&mut buf) {
            Ok(x) => x,
            Err(_) => continue,
        };
        let Ok(mut v) = DatagramView::new_checked(&mut buf[..n]) else {
            continue;
        };
        if v.token() != shared.token || from.ip().to_canonical() != client_ip {
            continue;
        }
        seen += 1;
        if shared.drop_every.is_some_and(|d| seen.is_multiple_of(d)) {
            continue;
        }
        o.recv_packets += 1;
        o.recv_bytes += n as u64;
        v.set_flags(v.flags() | FLAG_RESPONSE);
        let reply = reply_bytes.map_or(n, |r| r.min(n));
        if sock.send_to(&buf[..reply], from).is_ok() {
            o.sent_packets += 1;
            o.sent_bytes += reply as u64;
            o.transactions += 1;
        }
        let now_ns = shared.ns_since_go(Instant::now());
        o.last_recv_ns = now_ns;
        o.last_send_ns = now_ns;
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64};

    fn shared(drop_every: Option<u64>) -> Shared {
        Shared {
            live: Default::default(),
            abort: AtomicBool::new(false),
            drain: AtomicBool::new(false),
            go: Instant::now(),
            start_offset_ns: AtomicU64::new(0),
            drop_every,
            send_delay_ns: Vec::new(),
            token: 7,
            realtime_at_go_ns: net::clock::wall_ns(),
            window_ns: None,
        }
    }

    fn rx(n: usize) -> Vec<StreamRx> {
        (0..n)
            .map(|_| StreamRx {
                seq: SeqTracker::new(),
                jitter: Rfc3550Jitter::new(),
                ipdv: Ipdv::new(),
                transit: measure::Transit::new(),
                windows: None,
                bytes: 0,
                packets: 0,
                seen: 0,
            })
            .collect()
    }

    fn dg(seq: u64, stream_id: u16, token: u32, send_time_ns: u64) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        if let Ok(mut v) = DatagramView::new_checked(&mut b[..]) {
            v.set_header(&DatagramHeader {
                seq,
                send_time_ns,
                stream_id,
                flags: 0,
                token,
            });
        }
        b
    }

    /// A request from another host (its source forged, or a stranger that read the token
    /// off the wire) gets no echo; the client's host does. The stranger's request is
    /// queued first, so it was handled when the client's reply comes back.
    #[test]
    fn the_echo_answers_the_clients_host_only() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let sh = Arc::new(shared(None));
        let echo = {
            let sh = sh.clone();
            std::thread::spawn(move || rr_server(server, "127.0.0.1".parse().unwrap(), None, sh))
        };
        let stranger = UdpSocket::bind("127.0.0.2:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stranger.send_to(&dg(1, 0, 7, 0), addr).unwrap();
        client.send_to(&dg(2, 0, 7, 0), addr).unwrap();
        let mut buf = [0u8; 128];
        let (n, _) = client.recv_from(&mut buf).unwrap();
        let v = DatagramView::new_checked(&mut buf[..n]).unwrap();
        assert_eq!((v.seq(), v.flags() & FLAG_RESPONSE), (2, FLAG_RESPONSE));
        stranger.set_nonblocking(true).unwrap();
        assert!(
            stranger.recv_from(&mut buf).is_err(),
            "the stranger got an echo"
        );
        sh.drain.store(true, Relaxed);
        let o = echo.join().unwrap();
        assert_eq!((o.recv_packets, o.sent_packets), (1, 1));
    }

    #[test]
    fn kernel_stamped_and_unstamped_arrivals_share_one_clock() {
        let sh = shared(None);
        let clock = RxClock::new(&sh);
        let now_ns = sh.ns_since_go(Instant::now());
        let realtime_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let stamped = clock.arrival_ns(Some(realtime_ns), now_ns);
        let unstamped = clock.arrival_ns(None, now_ns);
        assert!(
            stamped.abs_diff(unstamped) < 1_000_000,
            "{stamped} vs {unstamped}"
        );
        // Alternating sources over a steady 100 µs stream: jitter stays tiny.
        let mut j = Rfc3550Jitter::new();
        for i in 0..100u64 {
            let send_ns = i * 100_000;
            let t = now_ns + send_ns + 20_000;
            let kernel = (i % 2 == 0).then_some(realtime_ns + send_ns + 20_000);
            j.record(send_ns, clock.arrival_ns(kernel, t));
        }
        assert!(j.jitter_ns() < 1_000_000.0, "jitter {} ns", j.jitter_ns());
    }

    #[test]
    fn hostile_datagrams_are_ignored_or_counted_without_panicking() {
        let sh = shared(Some(10));
        let mut r = rx(1);
        assert!(!take(&[1, 2, 3], 0, true, &mut r, &sh), "short");
        assert!(
            !take(&dg(1, 0, 8, 0), 0, true, &mut r, &sh),
            "foreign token"
        );
        assert!(
            !take(&dg(1, 9, 7, 0), 0, true, &mut r, &sh),
            "stream id out of range"
        );
        assert!(take(&dg(0, 0, 7, 0), u64::MAX, true, &mut r, &sh));
        assert!(take(&dg(1, 0, 7, u64::MAX), 0, true, &mut r, &sh));
        assert!(!take(&dg(1, 0, 7, 0), 5, true, &mut r, &sh), "duplicate");
        assert!(
            !take(&dg(9, 0, 7, 0), 5, true, &mut r, &sh),
            "every 10th dropped by the hook"
        );
        assert!(take(&dg(u64::MAX - 1, 0, 7, 3), 9, true, &mut r, &sh));
        // seq + 1 wraps to 0, a multiple of 10: the hook drops it, nothing overflows.
        assert!(!take(&dg(u64::MAX, 0, 7, 3), 9, true, &mut r, &sh));
        assert_eq!(r[0].packets, 3);
        assert_eq!(r[0].seq.counts().duplicates, 1);
    }

    #[test]
    fn a_huge_peer_chosen_count_does_not_overflow() {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("bind loopback");
        let sh = Arc::new(shared(None));
        sh.abort.store(true, Relaxed);
        let o = recv(
            sock,
            2,
            128,
            Some(u64::MAX),
            RxTiming::PerDatagram,
            UdpDatapath::Auto,
            sh,
        );
        assert_eq!(o.recv_packets, 0);
        assert_eq!(o.streams.len(), 2);
    }

    #[test]
    fn duplicates_do_not_count_towards_the_count_stop() {
        let sh = shared(None);
        let mut r = rx(1);
        for _ in 0..3 {
            take(&dg(0, 0, 7, 0), 1, true, &mut r, &sh);
        }
        take(&dg(1, 0, 7, 0), 1, true, &mut r, &sh);
        assert_eq!(r[0].seen, 2, "two distinct datagrams arrived");
        assert_eq!(r[0].seq.counts().duplicates, 2);
    }
}
