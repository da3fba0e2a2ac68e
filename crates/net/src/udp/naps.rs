//! Timed waits for a one-datagram-per-call receiver of a fast stream.
//!
//! A receiver that sleeps on its socket whenever the queue is empty is woken once per
//! datagram when it keeps up, and on loopback the sender pays for each of those
//! wake-ups inside its own `send` (the receiving softirq runs there): 15 % of a
//! 128-byte sender's samples (iperf3's, whose receiver is slower per datagram and so
//! sleeps less often, 8 %). With [`Naps`] the receiver, once
//! datagrams are arriving, sleeps on a timer for about the time the stream takes to
//! queue half a batch and then reads what queued, still one datagram per call; while
//! it sleeps it is on no socket wait queue, so no send wakes it. When a read finds
//! nothing it waits on the socket again. Nothing about the datagrams changes, only
//! when they are read: the socket must hold what queues during a nap, so a nap lets at
//! most a quarter of the receive buffer fill (by a conservative estimate of the
//! kernel's accounting per queued datagram), and none is taken when the buffer is too
//! small for that. Linux only (timers with 1 ns slack; other OSes wait as before).

use std::time::{Duration, Instant};

/// Longest nap.
pub(crate) const MAX_NAP: Duration = Duration::from_micros(100);
/// The first nap after a wake-up, before the stream's rate has been measured.
pub(crate) const FIRST_NAP: Duration = Duration::from_micros(10);

/// Receive-buffer bytes one queued datagram of `bytes` may take in the kernel's
/// accounting (its truesize): an upper estimate. Measured on Linux 6.x loopback: 832 for
/// 16 to 128 bytes, 2304 for 1408, 8448 for 4000, 16640 for 9000.
fn queued_bytes(bytes: usize) -> usize {
    2 * bytes + 1024
}

/// The nap state of one receiving socket.
#[derive(Debug, Clone)]
pub(crate) struct Naps {
    /// Datagrams to let queue per nap.
    target: u32,
    batch: usize,
    /// When the last read that found datagrams returned.
    last: Option<Instant>,
    /// The stream's time per datagram, from the last two reads.
    per_datagram: Option<Duration>,
    /// The last read filled the batch: the queue may hold more.
    full: bool,
}

impl Naps {
    /// Naps for a receiver reading up to `batch` datagrams per call, of at most
    /// `datagram_bytes` each, from a socket whose receive buffer is `rcvbuf_bytes` (as
    /// the kernel reports it); `None` when that buffer holds too few datagrams to nap.
    pub(crate) fn new(batch: usize, datagram_bytes: usize, rcvbuf_bytes: usize) -> Option<Naps> {
        let holds = rcvbuf_bytes / queued_bytes(datagram_bytes);
        let target = (batch / 2).min(holds / 4);
        (target >= 2).then_some(Naps {
            target: target as u32,
            batch,
            last: None,
            per_datagram: None,
            full: false,
        })
    }

    /// How long to sleep before the next read, which then must not wait (`Some(0)`: read
    /// at once); `None`: wait on the socket as the caller asked.
    pub(crate) fn before_read(&self, now: Instant) -> Option<Duration> {
        let last = self.last?;
        if self.full {
            return Some(Duration::ZERO);
        }
        let nap = self
            .per_datagram
            .map_or(FIRST_NAP, |p| p.saturating_mul(self.target).min(MAX_NAP));
        Some(nap.saturating_sub(now.duration_since(last)))
    }

    /// A read that returned at `done` with `n` datagrams (0: nothing queued, a timeout or
    /// an error; the next read waits on the socket).
    pub(crate) fn after_read(&mut self, done: Instant, n: usize) {
        if n == 0 {
            self.last = None;
            self.per_datagram = None;
            self.full = false;
            return;
        }
        if let Some(last) = self.last {
            // What this read found queued since the last one returned.
            self.per_datagram = Some(done.duration_since(last) / n as u32);
        }
        self.last = Some(done);
        self.full = n >= self.batch;
    }

    /// Datagrams a nap lets queue.
    #[cfg(test)]
    pub(crate) fn target(&self) -> usize {
        self.target as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    #[test]
    fn a_nap_lets_half_a_batch_queue_and_never_more_than_a_quarter_of_the_buffer() {
        // 208 KiB (the kernel's default, as reported) holds 166 queued 128-byte datagrams
        // by the estimate: half a batch of 32 it is.
        assert_eq!(Naps::new(32, 128, 212_992).unwrap().target(), 16);
        // 1408 bytes: 55 by the estimate (the kernel fits 92), so 13 per nap.
        assert_eq!(Naps::new(32, 1408, 212_992).unwrap().target(), 13);
        // A buffer that holds fewer than 8 datagrams: no naps.
        assert!(Naps::new(32, 1408, 30_000).is_none());
        assert!(Naps::new(2, 128, 212_992).is_none());
    }

    #[test]
    fn naps_follow_the_measured_rate_and_end_when_a_read_finds_nothing() {
        let mut n = Naps::new(32, 128, 212_992).unwrap();
        let t0 = Instant::now();
        assert_eq!(
            n.before_read(t0),
            None,
            "no datagram yet: wait on the socket"
        );
        n.after_read(t0, 1);
        // Rate unknown yet: the first nap, less what has passed since.
        assert_eq!(n.before_read(t0), Some(FIRST_NAP));
        assert_eq!(n.before_read(t0 + 4 * US), Some(FIRST_NAP - 4 * US));
        assert_eq!(n.before_read(t0 + 50 * US), Some(Duration::ZERO));
        // 5 datagrams in 15 µs: 3 µs each, so 16 take 48 µs.
        n.after_read(t0 + 15 * US, 5);
        assert_eq!(n.before_read(t0 + 15 * US), Some(48 * US));
        // A slow stream: 1 in 80 µs would want 1280 µs; capped.
        n.after_read(t0 + 95 * US, 1);
        assert_eq!(n.before_read(t0 + 95 * US), Some(MAX_NAP));
        // A full batch: read again at once.
        n.after_read(t0 + 100 * US, 32);
        assert_eq!(n.before_read(t0 + 100 * US), Some(Duration::ZERO));
        // Nothing queued: back to waiting on the socket.
        n.after_read(t0 + 101 * US, 0);
        assert_eq!(n.before_read(t0 + 101 * US), None);
    }
}
