//! Interval meter: bytes and packets counted into fixed intervals of a run, each closed
//! interval becoming one rate sample. The caller passes `now_ns` with every event and can
//! call [`IntervalMeter::advance`] without traffic so that silent intervals appear as
//! zero samples.

use crate::units::{BitsPerSec, Bytes, Nanos, PacketsPerSec};
use serde::{Deserialize, Serialize};

/// One interval's totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalSample {
    /// Interval start, ns since the meter's start.
    pub start_ns: u64,
    /// Interval length in ns (the last one may be shorter).
    pub duration_ns: u64,
    pub bytes: u64,
    pub packets: u64,
}

impl IntervalSample {
    pub fn bits_per_sec(&self) -> BitsPerSec {
        Bytes(self.bytes).rate_over(Nanos(self.duration_ns))
    }
    pub fn packets_per_sec(&self) -> PacketsPerSec {
        PacketsPerSec::of(self.packets, Nanos(self.duration_ns))
    }
}

/// Splits a run into intervals of `interval_ns` starting at `start_ns`.
#[derive(Debug, Clone)]
pub struct IntervalMeter {
    start_ns: u64,
    interval_ns: u64,
    /// Index of the open interval.
    current: u64,
    bytes: u64,
    packets: u64,
    total_bytes: u64,
    total_packets: u64,
    samples: Vec<IntervalSample>,
}

impl IntervalMeter {
    /// `interval_ns` of 0 is treated as 1 ns.
    pub fn new(start_ns: u64, interval_ns: u64) -> IntervalMeter {
        IntervalMeter {
            start_ns,
            interval_ns: interval_ns.max(1),
            current: 0,
            bytes: 0,
            packets: 0,
            total_bytes: 0,
            total_packets: 0,
            samples: Vec::new(),
        }
    }

    /// Close every interval that ended at or before `now_ns`.
    pub fn advance(&mut self, now_ns: u64) {
        let index = now_ns.saturating_sub(self.start_ns) / self.interval_ns;
        while self.current < index {
            self.samples.push(IntervalSample {
                start_ns: self.current * self.interval_ns,
                duration_ns: self.interval_ns,
                bytes: self.bytes,
                packets: self.packets,
            });
            self.bytes = 0;
            self.packets = 0;
            self.current += 1;
        }
    }

    /// Count `packets` packets totalling `bytes` at `now_ns`.
    pub fn record(&mut self, now_ns: u64, bytes: u64, packets: u64) {
        self.advance(now_ns);
        self.bytes += bytes;
        self.packets += packets;
        self.total_bytes += bytes;
        self.total_packets += packets;
    }

    /// Close the open interval at `end_ns` (shorter than a full interval if the run
    /// ended inside it; dropped when it would be empty and zero-length) and return all
    /// samples.
    pub fn finish(mut self, end_ns: u64) -> Vec<IntervalSample> {
        self.advance(end_ns);
        let open_start = self.current * self.interval_ns;
        let duration_ns = end_ns
            .saturating_sub(self.start_ns)
            .saturating_sub(open_start);
        if duration_ns > 0 || self.bytes > 0 || self.packets > 0 {
            self.samples.push(IntervalSample {
                start_ns: open_start,
                duration_ns,
                bytes: self.bytes,
                packets: self.packets,
            });
        }
        self.samples
    }

    /// Closed samples so far.
    pub fn samples(&self) -> &[IntervalSample] {
        &self.samples
    }
    /// Take the closed samples so far (e.g. to send them in an interval report).
    pub fn drain_samples(&mut self) -> Vec<IntervalSample> {
        std::mem::take(&mut self.samples)
    }
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }
    pub fn total_packets(&self) -> u64 {
        self.total_packets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn events_land_in_their_intervals_and_rates_follow() {
        let mut m = IntervalMeter::new(1_000 * MS, 100 * MS);
        m.record(1_000 * MS, 1000, 1);
        m.record(1_050 * MS, 1000, 1);
        m.record(1_150 * MS, 500, 1);
        let s = m.finish(1_250 * MS);
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].start_ns, s[0].bytes, s[0].packets), (0, 2000, 2));
        assert_eq!((s[1].start_ns, s[1].bytes), (100 * MS, 500));
        assert_eq!(
            (s[2].start_ns, s[2].duration_ns, s[2].bytes),
            (200 * MS, 50 * MS, 0)
        );
        assert_eq!(s[0].bits_per_sec().0, 2000.0 * 8.0 * 10.0);
        assert_eq!(s[0].packets_per_sec().0, 20.0);
    }

    #[test]
    fn silent_intervals_become_zero_samples() {
        let mut m = IntervalMeter::new(0, 10);
        m.record(5, 1, 1);
        m.advance(45);
        assert_eq!(m.samples().len(), 4);
        assert_eq!(m.samples()[3].bytes, 0);
        m.record(46, 7, 1);
        assert_eq!(m.total_bytes(), 8);
        assert_eq!(m.drain_samples().len(), 4);
        assert!(m.samples().is_empty());
        let rest = m.finish(50);
        assert_eq!(rest.len(), 1);
        assert_eq!((rest[0].bytes, rest[0].duration_ns), (7, 10));
    }

    #[test]
    fn finishing_exactly_on_a_boundary_adds_no_empty_sample() {
        let mut m = IntervalMeter::new(0, 10);
        m.record(1, 1, 1);
        let s = m.finish(20);
        assert_eq!(s.len(), 2);
        assert_eq!(s.iter().map(|x| x.bytes).sum::<u64>(), 1);
    }
}
