//! Delay variation of a datagram stream, from (send time, receive time) pairs.
//!
//! - [`Rfc3550Jitter`]: RFC 3550 §6.4.1 interarrival jitter, the smoothed mean of the
//!   transit-time difference between packets in *arrival* order:
//!   D(i,j) = (Rj − Ri) − (Sj − Si) = (Rj − Sj) − (Ri − Si), J += (|D(i−1,i)| − J)/16.
//! - [`Ipdv`]: RFC 5481 §1.2 / RFC 3393 IP Packet Delay Variation, the delay difference
//!   between packets consecutive in *sending sequence* (seq n and n+1), kept as the
//!   absolute value in a histogram for percentiles. A pair with a lost member has no IPDV
//!   (RFC 3393 §2.5); a reordered pair is still paired by sequence.
//!
//! Sender and receiver clocks need not agree: a constant offset cancels in both. Transit
//! times are signed (the offset can make them negative).

use crate::latency::LatencyHistogram;

/// One-way transit time R − S in ns, signed, saturating at the i64 range (a peer's send
/// stamp is whatever it says).
pub(crate) fn transit_ns(send_ns: u64, recv_ns: u64) -> i64 {
    let t = i128::from(recv_ns) - i128::from(send_ns);
    t.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// RFC 3550 §6.4.1 interarrival jitter estimator. Feed packets in arrival order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rfc3550Jitter {
    last_transit_ns: Option<i64>,
    jitter_ns: f64,
    samples: u64,
}

impl Rfc3550Jitter {
    pub fn new() -> Rfc3550Jitter {
        Self::default()
    }

    /// One received packet: its sender timestamp and its receive time, in ns.
    pub fn record(&mut self, send_ns: u64, recv_ns: u64) {
        let transit = transit_ns(send_ns, recv_ns);
        if let Some(last) = self.last_transit_ns {
            let d = (i128::from(transit) - i128::from(last)).unsigned_abs() as f64;
            // RFC 3550 §6.4.1: J(i) = J(i-1) + (|D(i-1,i)| - J(i-1))/16
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
            self.samples += 1;
        }
        self.last_transit_ns = Some(transit);
    }

    /// Current jitter estimate in ns (0 before the second packet).
    pub fn jitter_ns(&self) -> f64 {
        self.jitter_ns
    }

    /// Start the estimate again from 0, keeping the last transit time, so the next
    /// packet still yields a difference (iperf3 does this when its omit period ends).
    pub fn restart(&mut self) {
        self.jitter_ns = 0.0;
        self.samples = 0;
    }

    /// How many differences D went into the estimate (packets − 1).
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

/// Slots of recent (seq, transit) kept to pair packets that arrive out of order.
const IPDV_RING: usize = 1024;

/// RFC 5481 IPDV: |delay(n+1) − delay(n)| for consecutive sequence numbers, into a
/// histogram. Pairs whose members arrive more than 1024 sequence numbers apart in
/// arrival order are not paired (memory stays bounded).
#[derive(Debug, Clone)]
pub struct Ipdv {
    ring: Vec<Option<(u64, i64)>>,
    hist: LatencyHistogram,
}

impl Default for Ipdv {
    fn default() -> Self {
        Self::new()
    }
}

impl Ipdv {
    pub fn new() -> Ipdv {
        Ipdv {
            ring: vec![None; IPDV_RING],
            hist: LatencyHistogram::new(),
        }
    }

    /// One received packet: its sequence number, sender timestamp and receive time.
    /// Duplicates (a seq already in the ring) are ignored.
    pub fn record(&mut self, seq: u64, send_ns: u64, recv_ns: u64) {
        let transit = transit_ns(send_ns, recv_ns);
        let slot = (seq % IPDV_RING as u64) as usize;
        if matches!(self.ring[slot], Some((s, _)) if s == seq) {
            return;
        }
        self.ring[slot] = Some((seq, transit));
        if let Some(prev) = seq.checked_sub(1).and_then(|p| self.lookup(p)) {
            self.hist.record(abs_diff(transit, prev));
        }
        if let Some(next) = seq.checked_add(1).and_then(|n| self.lookup(n)) {
            self.hist.record(abs_diff(next, transit));
        }
    }

    fn lookup(&self, seq: u64) -> Option<i64> {
        match self.ring[(seq % IPDV_RING as u64) as usize] {
            Some((s, t)) if s == seq => Some(t),
            _ => None,
        }
    }

    /// The histogram of |IPDV| values in ns (count, quantiles, mean, max).
    pub fn histogram(&self) -> &LatencyHistogram {
        &self.hist
    }

    pub fn p50_ns(&self) -> u64 {
        self.hist.quantile_ns(0.5)
    }
    pub fn p99_ns(&self) -> u64 {
        self.hist.quantile_ns(0.99)
    }
}

fn abs_diff(a: i64, b: i64) -> u64 {
    let d = (i128::from(a) - i128::from(b)).unsigned_abs();
    u64::try_from(d).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3550_jitter_on_a_hand_computed_sequence() {
        // transits 500, 600, 500, 700 → |D| = 100, 100, 200
        // J1 = 0 + (100 - 0)/16            = 6.25
        // J2 = 6.25 + (100 - 6.25)/16      = 12.109375
        // J3 = 12.109375 + (200 - 12.109375)/16 = 23.8525390625
        let mut j = Rfc3550Jitter::new();
        j.record(0, 500);
        assert_eq!(j.jitter_ns(), 0.0);
        j.record(1000, 1600);
        assert_eq!(j.jitter_ns(), 6.25);
        j.record(2000, 2500);
        assert_eq!(j.jitter_ns(), 12.109375);
        j.record(3000, 3700);
        assert_eq!(j.jitter_ns(), 23.8525390625);
        assert_eq!(j.samples(), 3);
    }

    #[test]
    fn rfc3550_jitter_ignores_clock_offset_and_tolerates_negative_transit() {
        let mut a = Rfc3550Jitter::new();
        let mut b = Rfc3550Jitter::new();
        let pairs = [(1_000u64, 1_500u64), (2_000, 2_700), (3_000, 3_400)];
        for (s, r) in pairs {
            a.record(s, r);
            // receiver clock 1 ms behind the sender: transit is negative
            b.record(s + 1_000_000, r);
        }
        assert_eq!(a.jitter_ns(), b.jitter_ns());
        assert!(a.jitter_ns() > 0.0);
    }

    #[test]
    fn constant_delay_has_zero_jitter_and_ipdv() {
        let mut j = Rfc3550Jitter::new();
        let mut ipdv = Ipdv::new();
        for seq in 0..100u64 {
            j.record(seq * 1000, seq * 1000 + 42);
            ipdv.record(seq, seq * 1000, seq * 1000 + 42);
        }
        assert_eq!(j.jitter_ns(), 0.0);
        assert_eq!(ipdv.histogram().count(), 99);
        assert_eq!(ipdv.p99_ns(), 0);
    }

    #[test]
    fn ipdv_pairs_by_sequence_skips_lost_and_pairs_reordered() {
        let mut ipdv = Ipdv::new();
        // delays: seq0 100, seq1 300, seq2 lost, seq3 150, seq4 250; seq4 arrives before 3
        ipdv.record(0, 0, 100);
        ipdv.record(1, 10, 310);
        ipdv.record(4, 40, 290);
        ipdv.record(3, 30, 180);
        // pairs: (0,1) = 200; (3,4) = 100; (1,2),(2,3) undefined
        let h = ipdv.histogram();
        assert_eq!(h.count(), 2);
        assert_eq!(h.min_ns(), Some(100));
        assert_eq!(h.max_ns(), Some(200));
        // a duplicate adds nothing
        ipdv.record(3, 30, 999);
        assert_eq!(ipdv.histogram().count(), 2);
    }
}
