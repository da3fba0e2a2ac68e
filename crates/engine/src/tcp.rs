//! TCP data loops: bulk sender and receiver (tcp-stream, all directions), the
//! request/response client and its echo responder (tcp-rr). Every blocking call has a
//! timeout and re-checks the abort flag (and drain, after a grace period), so no loop
//! outlives its session even if the peer keeps its data connection open.

use crate::data::{Outcome, Pace, SendBound, Shared, POLL};
use measure::LatencyHistogram;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::proto::StreamStats;
use wire::spec::ZeroCopyMethod;

/// Bytes per read on the receiving side (netperf reads up to the socket buffer): the
/// largest low-water mark, so one read takes what one wake-up finds queued (with 128 KiB
/// reads a 256 KiB mark took two calls per wake-up).
const RECV_CHUNK_BYTES: usize = LOWAT_MARKS[0];

/// A bulk receiver fast enough asks to be woken once per this many bytes (SO_RCVLOWAT)
/// instead of once per arriving segment: the largest of these marks that its stream
/// fills within [`LOWAT_MAX_WAIT`]. Fewer wake-ups, and fewer ACKs sent the moment the
/// queue is drained, so the sender's segments carry more writes each: on loopback, where
/// the sender's CPU runs the receive path, 1408-byte writes went 5-9 % faster with 64
/// KiB and the receiver spent half the CPU per byte (docs/benchmarks/udp-datapath.md, section 5b), and
/// 3-14 % faster again with 256 KiB (section 5e). With 128 KiB writes, waking the
/// receiver was 9-15 % of the sender's CPU; the mark made those wake-ups 2.3-3.1 x rarer
/// and the sender's CPU per GB 14-29 % lower (docs/benchmarks/tcp-bulk.md, section 5).
const LOWAT_MARKS: [usize; 2] = [256 * 1024, 64 * 1024];
/// "Fast enough": the mark's bytes arrive within this long on average over the stream's
/// first [`LOWAT_PROBE`] (64 KiB per ms is 524 Mbit/s, 256 KiB per ms 2.1 Gbit/s), so a
/// read waits about this long for its bytes; if the stream slows down later, at most
/// [`POLL`] (the receive timeout).
const LOWAT_MAX_WAIT: Duration = Duration::from_millis(1);
const LOWAT_PROBE: Duration = Duration::from_millis(50);

/// Decides once, from the stream's first [`LOWAT_PROBE`], whether to set the low-water
/// mark; recorded in the run's applied settings (`tcp_recv_lowat_bytes`) when set.
struct LowWater {
    start: Option<(Instant, u64)>,
    decided: bool,
}

impl LowWater {
    fn new() -> LowWater {
        LowWater {
            start: None,
            decided: false,
        }
    }

    fn observe(&mut self, s: &TcpStream, received: u64, now: Instant, o: &mut Outcome) {
        if let Some(Some(mark)) = self.decide(received, now) {
            if net::set_recv_lowat(s, mark).is_ok() {
                o.io.insert("tcp_recv_lowat_bytes".into(), mark.to_string());
            }
        }
    }

    /// `Some(mark to set, if any)` the one time the probe is over, `None` before and
    /// after. `received`: the stream's bytes so far, after a read that ended at `now`.
    fn decide(&mut self, received: u64, now: Instant) -> Option<Option<usize>> {
        if self.decided {
            return None;
        }
        let Some((t0, b0)) = self.start else {
            self.start = Some((now, received));
            return None;
        };
        let elapsed = now.saturating_duration_since(t0);
        if elapsed < LOWAT_PROBE {
            return None;
        }
        self.decided = true;
        let per_wait = received.saturating_sub(b0) as f64 * LOWAT_MAX_WAIT.as_secs_f64()
            / elapsed.as_secs_f64();
        Some(LOWAT_MARKS.into_iter().find(|&m| per_wait >= m as f64))
    }
}

pub(crate) fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

/// Write all of `buf`, re-checking abort (and drain, after its grace) whenever the
/// socket is full for [`POLL`].
pub(crate) fn write_full(s: &mut TcpStream, buf: &[u8], shared: &Shared) -> io::Result<bool> {
    write_all_by(buf, shared, |b| s.write(b))
}

/// [`write_full`] through `write`, which takes what it can of the bytes left.
fn write_all_by(
    buf: &[u8],
    shared: &Shared,
    mut write: impl FnMut(&[u8]) -> io::Result<usize>,
) -> io::Result<bool> {
    let mut off = 0;
    let mut drain_seen = None;
    while off < buf.len() {
        match write(&buf[off..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => off += n,
            Err(e) if timed_out(&e) => {
                if shared.should_quit(&mut drain_seen) {
                    return Ok(false);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Fill `buf`. `Ok(false)`: clean EOF before the first byte, or abort.
pub(crate) fn read_full(s: &mut TcpStream, buf: &mut [u8], shared: &Shared) -> io::Result<bool> {
    let mut off = 0;
    let mut drain_seen = None;
    while off < buf.len() {
        match s.read(&mut buf[off..]) {
            Ok(0) if off == 0 => return Ok(false),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => off += n,
            Err(e) if timed_out(&e) => {
                if shared.should_quit(&mut drain_seen) {
                    return Ok(false);
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

pub(crate) fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// Bulk buffers start on this boundary (the page size of every platform we build for).
const BUF_ALIGN: usize = 4096;

/// A bulk send or receive buffer that starts on a page boundary. The allocator puts a
/// 128 KiB buffer 16 or 32 bytes past one (a header before the block), so every
/// cache line of the kernel's copy to or from it straddled two; page-aligned, each
/// copy moves whole lines, and zero-copy sending pins no page it does not use.
pub(crate) struct AlignedBuf {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    pub(crate) fn zeroed(len: usize) -> AlignedBuf {
        let storage = vec![0u8; len + BUF_ALIGN];
        let addr = storage.as_ptr() as usize;
        let start = (BUF_ALIGN - addr % BUF_ALIGN) % BUF_ALIGN;
        AlignedBuf {
            storage,
            start,
            len,
        }
    }

    /// [`pattern`] in an aligned buffer.
    pub(crate) fn pattern(len: usize) -> AlignedBuf {
        let mut b = AlignedBuf::zeroed(len);
        b.as_mut_slice().copy_from_slice(&pattern(len));
        b
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// How long a zero-copy sender waits, after its last send, for the completions of the
/// sends still outstanding (they come once the peer has acknowledged the bytes).
const ZEROCOPY_DRAIN: Duration = Duration::from_secs(2);

/// Writes between two looks at the clock and the shared counters, in bytes.
const CHECK_BYTES: usize = 16 * 1024;

/// How a bulk sender hands its bytes to the socket.
enum Sending {
    /// write(2): the kernel copies them into the socket buffer.
    Copy,
    /// MSG_ZEROCOPY, its completions read as they come.
    Msg(net::ZeroCopy),
    /// sendfile(2) from a memory file holding the pattern.
    File(net::SendFile),
}

impl Sending {
    fn new(
        s: &TcpStream,
        method: Option<ZeroCopyMethod>,
        pattern: &[u8],
    ) -> Result<Sending, net::NetError> {
        Ok(match method {
            None => Sending::Copy,
            Some(ZeroCopyMethod::Msg) => Sending::Msg(net::ZeroCopy::enable(
                s,
                net::zerocopy::DEFAULT_MAX_OUTSTANDING,
            )?),
            Some(ZeroCopyMethod::Sendfile) => Sending::File(net::SendFile::new(pattern)?),
        })
    }

    /// Write all of `buf` (the pattern) as [`write_full`] does.
    fn write(&mut self, s: &mut TcpStream, buf: &[u8], shared: &Shared) -> io::Result<bool> {
        match self {
            Sending::Copy => write_full(s, buf, shared),
            Sending::Msg(z) => write_all_by(buf, shared, |b| z.send(s, b, POLL)),
            Sending::File(f) => write_all_by(buf, shared, |b| f.send(s, buf.len() - b.len())),
        }
    }

    /// After the last write: read the outstanding completions (MSG_ZEROCOPY) and record
    /// what the method did in `o`.
    fn finish(self, s: &TcpStream, stream_id: u16, o: &mut Outcome) {
        match self {
            Sending::Copy => {}
            Sending::Msg(mut z) => {
                match z.drain(s, ZEROCOPY_DRAIN) {
                    Ok(true) => {}
                    Ok(false) => o.errors.push(format!(
                        "stream {stream_id}: {} zero-copy completions did not come within {} s",
                        z.outstanding(),
                        ZEROCOPY_DRAIN.as_secs()
                    )),
                    Err(e) => o.errors.push(format!(
                        "stream {stream_id}: reading zero-copy completions: {e}"
                    )),
                }
                o.zerocopy = Some((ZeroCopyMethod::Msg, z.stats()));
            }
            Sending::File(f) => {
                let stats = net::ZeroCopyStats {
                    sends: f.calls(),
                    ..net::ZeroCopyStats::default()
                };
                o.zerocopy = Some((ZeroCopyMethod::Sendfile, stats));
            }
        }
    }
}

/// Bulk sender: `payload_bytes` per write until the bound, then half-close. With a
/// zero-copy method, each write goes out by it (see [`Sending`]); MSG_ZEROCOPY reads its
/// completions as they come (at most [`net::zerocopy::DEFAULT_MAX_OUTSTANDING`] sends
/// wait for theirs) and the rest after the last write; what the method did goes into
/// the applied settings.
pub(crate) fn send(
    mut s: TcpStream,
    stream_id: u16,
    payload_bytes: usize,
    bound: SendBound,
    zerocopy: Option<ZeroCopyMethod>,
    shared: Arc<Shared>,
) -> Outcome {
    let _ = s.set_write_timeout(Some(POLL));
    let buf = AlignedBuf::pattern(payload_bytes);
    let buf = buf.as_slice();
    let mut o = Outcome::default();
    let mut sending = match Sending::new(&s, zerocopy, buf) {
        Ok(m) => m,
        Err(e) => {
            o.errors
                .push(format!("tcp send on stream {stream_id}: {e}"));
            let _ = s.shutdown(Shutdown::Write);
            return o;
        }
    };
    // The clock, the abort flag and the shared live counters once per CHECK_BYTES of
    // writes rather than per write (they were ~3 % of a 1408-byte sender's time); a count
    // bound is still checked at every write, and a deadline is overshot by at most
    // those few writes (µs).
    let every = (CHECK_BYTES / payload_bytes.max(1)).clamp(1, 64) as u64;
    let mut until_check = 0u64;
    let mut unreported = 0u64;
    loop {
        if bound.count.is_some_and(|c| o.sent_packets >= c) {
            break;
        }
        if until_check == 0 {
            until_check = every;
            shared.add_sent(unreported * payload_bytes as u64, unreported);
            unreported = 0;
            if bound.deadline.is_some_and(|d| Instant::now() >= d) || shared.aborted() {
                break;
            }
        }
        until_check -= 1;
        match sending.write(&mut s, buf, &shared) {
            Ok(true) => {
                o.sent_packets += 1;
                o.sent_bytes += payload_bytes as u64;
                unreported += 1;
            }
            Ok(false) => break,
            Err(e) => {
                o.errors
                    .push(format!("tcp send on stream {stream_id}: {e}"));
                break;
            }
        }
    }
    shared.add_sent(unreported * payload_bytes as u64, unreported);
    o.last_send_ns = shared.ns_since_go(Instant::now());
    let _ = s.shutdown(Shutdown::Write);
    sending.finish(&s, stream_id, &mut o);
    o.streams.push(StreamStats {
        stream_id,
        sent_bytes: o.sent_bytes,
        sent_packets: o.sent_packets,
        ..StreamStats::default()
    });
    o
}

/// Bulk receiver: read until the peer half-closes. `recv_packets` counts payload-size
/// units delivered (bytes / payload), which is what a "packet" means for a stream.
pub(crate) fn recv(
    mut s: TcpStream,
    stream_id: u16,
    payload_bytes: usize,
    shared: Arc<Shared>,
) -> Outcome {
    let _ = s.set_read_timeout(Some(POLL));
    let mut buf = AlignedBuf::zeroed(RECV_CHUNK_BYTES);
    let buf = buf.as_mut_slice();
    let mut o = Outcome::default();
    let mut units_reported = 0u64;
    let mut drain_seen = None;
    let mut low_water = LowWater::new();
    loop {
        // Checked before every read: a peer that finished but keeps sending is cut off.
        if shared.should_quit(&mut drain_seen) {
            break;
        }
        match s.read(buf) {
            Ok(0) => break,
            Ok(n) => {
                o.recv_bytes += n as u64;
                let units = o.recv_bytes / payload_bytes.max(1) as u64;
                shared.add_recv(n as u64, units - units_reported);
                units_reported = units;
                let now = Instant::now();
                o.last_recv_ns = shared.ns_since_go(now);
                low_water.observe(&s, o.recv_bytes, now, &mut o);
            }
            Err(e) if timed_out(&e) => {}
            Err(e) => {
                o.errors
                    .push(format!("tcp receive on stream {stream_id}: {e}"));
                break;
            }
        }
    }
    o.recv_packets = o.recv_bytes / payload_bytes.max(1) as u64;
    o.streams.push(StreamStats {
        stream_id,
        recv_bytes: o.recv_bytes,
        recv_packets: o.recv_packets,
        ..StreamStats::default()
    });
    o
}

/// Request/response client: one transaction at a time, RTT per transaction.
pub(crate) fn rr_client(
    mut s: TcpStream,
    stream_id: u16,
    payload_bytes: usize,
    bound: SendBound,
    mut pace: Option<Pace>,
    shared: Arc<Shared>,
) -> Outcome {
    let _ = s.set_write_timeout(Some(POLL));
    let _ = s.set_read_timeout(Some(POLL));
    let req = pattern(payload_bytes);
    let mut resp = vec![0u8; payload_bytes];
    let mut o = Outcome::default();
    let mut rtt = LatencyHistogram::new();
    loop {
        if let Some(p) = pace.as_mut() {
            if !p.wait(&bound, &shared) {
                break;
            }
        }
        let t0 = Instant::now();
        if bound.done(o.transactions, t0) || shared.aborted() {
            break;
        }
        let r = write_full(&mut s, &req, &shared).and_then(|ok| {
            if ok {
                read_full(&mut s, &mut resp, &shared)
            } else {
                Ok(false)
            }
        });
        match r {
            Ok(true) => {
                let t1 = Instant::now();
                let ns = t1.duration_since(t0).as_nanos().max(1) as u64;
                rtt.record(ns);
                count_transaction(&mut o, &shared, payload_bytes, ns, t1);
            }
            Ok(false) => break,
            Err(e) => {
                o.errors.push(format!("tcp-rr on stream {stream_id}: {e}"));
                break;
            }
        }
    }
    o.last_send_ns = o.last_recv_ns;
    let _ = s.shutdown(Shutdown::Write);
    o.rtt = Some(rtt);
    o
}

/// One transaction of `payload_bytes` each way completed at `end`, taking `ns`: in a
/// client's counts and the live counters (the interval samples' RTT).
pub(crate) fn count_transaction(
    o: &mut Outcome,
    shared: &Shared,
    payload_bytes: usize,
    ns: u64,
    end: Instant,
) {
    shared.add_rtt(ns);
    o.transactions += 1;
    o.sent_packets += 1;
    o.recv_packets += 1;
    o.sent_bytes += payload_bytes as u64;
    o.recv_bytes += payload_bytes as u64;
    shared.add_sent(payload_bytes as u64, 1);
    shared.add_recv(payload_bytes as u64, 1);
    o.last_recv_ns = shared.ns_since_go(end);
}

/// Request/response responder: read one request, write one response, until EOF.
pub(crate) fn rr_server(mut s: TcpStream, payload_bytes: usize, shared: Arc<Shared>) -> Outcome {
    let _ = s.set_write_timeout(Some(POLL));
    let _ = s.set_read_timeout(Some(POLL));
    let mut buf = vec![0u8; payload_bytes];
    let mut o = Outcome::default();
    let mut drain_seen = None;
    loop {
        if shared.should_quit(&mut drain_seen) {
            break;
        }
        match read_full(&mut s, &mut buf, &shared) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                o.errors.push(format!("tcp-rr responder: {e}"));
                break;
            }
        }
        o.recv_packets += 1;
        o.recv_bytes += payload_bytes as u64;
        match write_full(&mut s, &buf, &shared) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                o.errors.push(format!("tcp-rr responder: {e}"));
                break;
            }
        }
        o.sent_packets += 1;
        o.sent_bytes += payload_bytes as u64;
        o.transactions += 1;
        let now_ns = shared.ns_since_go(Instant::now());
        o.last_recv_ns = now_ns;
        o.last_send_ns = now_ns;
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The low-water mark is decided once, after the probe, from the bytes that arrived
    /// after the first read: 256 KiB at 256 KiB per ms or more, 64 KiB at 64 KiB per ms
    /// or more, none below, whatever the write size.
    #[test]
    fn the_low_water_mark_is_decided_once_from_the_probe_rate() {
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut fast = LowWater::new();
        assert_eq!(
            fast.decide(1 << 20, ms(0)),
            None,
            "the first read starts the probe"
        );
        assert_eq!(fast.decide(20 << 20, ms(49)), None, "the probe lasts 50 ms");
        // 50 ms at exactly 64 KiB per ms after the first read.
        assert_eq!(
            fast.decide((1 << 20) + 50 * 65_536, ms(50)),
            Some(Some(65_536))
        );
        assert_eq!(fast.decide(u64::MAX, ms(60)), None, "decided once");
        // Just below and at 256 KiB per ms.
        let mut faster = LowWater::new();
        faster.decide(0, ms(0));
        assert_eq!(faster.decide(50 * 262_144 - 1, ms(50)), Some(Some(65_536)));
        let mut fastest = LowWater::new();
        fastest.decide(0, ms(0));
        assert_eq!(fastest.decide(50 * 262_144, ms(50)), Some(Some(262_144)));

        let mut slow = LowWater::new();
        slow.decide(0, ms(0));
        assert_eq!(slow.decide(50 * 65_536 - 1, ms(50)), Some(None));
        assert_eq!(slow.decide(u64::MAX, ms(500)), None);

        // A clock that does not advance, or bytes that do not (a stalled stream).
        let mut stalled = LowWater::new();
        stalled.decide(5, ms(10));
        assert_eq!(stalled.decide(5, ms(0)), None);
        assert_eq!(stalled.decide(5, ms(70)), Some(None));
    }
}
