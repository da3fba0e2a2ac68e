//! Sequence tracking of a datagram stream with the RFC 4737 definitions.
//!
//! - *Received*: distinct sequence numbers that arrived (duplicates excluded).
//! - *Duplicate*: a sequence number that arrived before (RFC 4737 §3 considers each
//!   packet once; later copies are duplicates and take no further part).
//! - *Reordered* (RFC 4737 §3.3 "reordered packet"): a packet whose sequence number is
//!   lower than NextExp, the highest sequence number received so far plus one. A packet
//!   that only fills a gap left by loss still counts: it is late.
//! - *Lost*: of the sent count when the sender reports it, otherwise of highest seq + 1
//!   (sequence numbers start at 0). A late packet that arrives later is not lost.
//!
//! Memory is bounded: a bitmap remembers the last [`SEQ_WINDOW`] sequence numbers below
//! the highest seen. A packet older than that cannot be checked for duplication; it is
//! counted as received and reordered (a 64k-late copy is far rarer than a 64k-late
//! original) and also in `beyond_window`, so the report can say so.

use serde::{Deserialize, Serialize};

/// Sequence numbers the duplicate-detection bitmap covers (8 KiB of bits).
pub const SEQ_WINDOW: u64 = 65_536;
const WORDS: usize = (SEQ_WINDOW / 64) as usize;

/// The counts a [`SeqTracker`] has accumulated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeqCounts {
    /// Distinct sequence numbers received.
    pub received: u64,
    pub duplicates: u64,
    /// RFC 4737 reordered packets (arrived with seq < NextExp).
    pub reordered: u64,
    /// Highest sequence number received, if any.
    pub highest_seq: Option<u64>,
    /// Largest reordering distance seen: NextExp − 1 − seq of a reordered packet.
    pub max_reorder_distance: u64,
    /// Arrivals older than the window; counted as received + reordered, unchecked.
    pub beyond_window: u64,
}

impl SeqCounts {
    /// Expected packets: the sender's count if known, else highest seq + 1.
    pub fn expected(&self, sent: Option<u64>) -> u64 {
        sent.unwrap_or_else(|| self.highest_seq.map_or(0, |h| h.saturating_add(1)))
    }
    /// Lost packets: expected − received (never negative; [`crate::loss`]).
    pub fn lost(&self, sent: Option<u64>) -> u64 {
        crate::loss::lost_packets(self.expected(sent), self.received)
    }
    /// Loss as a percentage of expected; `None` when nothing was expected
    /// ([`crate::loss`]).
    pub fn loss_pct(&self, sent: Option<u64>) -> Option<f64> {
        crate::loss::loss_pct(self.expected(sent), self.received)
    }
}

/// Tracks received / duplicate / reordered sequence numbers in bounded memory.
#[derive(Debug, Clone)]
pub struct SeqTracker {
    /// Bit `s % SEQ_WINDOW` set ⇔ seq `s` (within the window below `highest`) arrived.
    bits: Box<[u64; WORDS]>,
    counts: SeqCounts,
}

impl Default for SeqTracker {
    fn default() -> Self {
        Self::new()
    }
}

/// What one arrival was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// seq ≥ NextExp.
    InOrder,
    /// seq < NextExp, first copy (RFC 4737 reordered).
    Reordered,
    /// Seen before.
    Duplicate,
    /// Older than the window: counted as reordered, duplication unknown.
    BeyondWindow,
}

impl SeqTracker {
    pub fn new() -> SeqTracker {
        SeqTracker {
            bits: Box::new([0u64; WORDS]),
            counts: SeqCounts::default(),
        }
    }

    fn bit(seq: u64) -> (usize, u64) {
        let i = seq % SEQ_WINDOW;
        ((i / 64) as usize, 1u64 << (i % 64))
    }

    /// Clear the bits of seqs `from..=to_inclusive` (`from <= to_inclusive`). Counts
    /// steps instead of stepping `s` past `to_inclusive`, so u64::MAX is safe.
    fn clear_range(&mut self, from: u64, to_inclusive: u64) {
        let span = to_inclusive - from;
        if span >= SEQ_WINDOW - 1 {
            self.bits.fill(0);
            return;
        }
        let count = span + 1; // ≤ SEQ_WINDOW - 1: no overflow
        let mut k = 0;
        while k < count {
            let s = from + k; // ≤ to_inclusive
            let (w, m) = Self::bit(s);
            if s & 63 == 0 && count - k >= 64 {
                self.bits[w] = 0;
                k += 64;
            } else {
                self.bits[w] &= !m;
                k += 1;
            }
        }
    }

    /// Record one arrival of sequence number `seq`.
    pub fn record(&mut self, seq: u64) -> Arrival {
        let c = &mut self.counts;
        match c.highest_seq {
            None => {
                self.bits.fill(0);
                let (w, m) = Self::bit(seq);
                self.bits[w] |= m;
                self.counts.highest_seq = Some(seq);
                self.counts.received = 1;
                Arrival::InOrder
            }
            Some(high) if seq > high => {
                self.clear_range(high + 1, seq);
                let (w, m) = Self::bit(seq);
                self.bits[w] |= m;
                self.counts.highest_seq = Some(seq);
                self.counts.received += 1;
                Arrival::InOrder
            }
            Some(high) => {
                let distance = high - seq;
                if distance >= SEQ_WINDOW {
                    c.received += 1;
                    c.reordered += 1;
                    c.beyond_window += 1;
                    c.max_reorder_distance = c.max_reorder_distance.max(distance);
                    return Arrival::BeyondWindow;
                }
                let (w, m) = Self::bit(seq);
                if self.bits[w] & m != 0 {
                    c.duplicates += 1;
                    return Arrival::Duplicate;
                }
                self.bits[w] |= m;
                c.received += 1;
                c.reordered += 1;
                c.max_reorder_distance = c.max_reorder_distance.max(distance);
                Arrival::Reordered
            }
        }
    }

    pub fn counts(&self) -> SeqCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(seqs: &[u64]) -> SeqCounts {
        let mut t = SeqTracker::new();
        for &s in seqs {
            t.record(s);
        }
        t.counts()
    }

    #[test]
    fn in_order_stream_has_no_loss_dup_or_reorder() {
        let c = run(&(0..1000).collect::<Vec<_>>());
        assert_eq!(c.received, 1000);
        assert_eq!((c.duplicates, c.reordered), (0, 0));
        assert_eq!(c.lost(None), 0);
        assert_eq!(c.lost(Some(1000)), 0);
        assert_eq!(c.loss_pct(Some(1000)), Some(0.0));
    }

    #[test]
    fn nothing_expected_has_no_loss_figure() {
        let c = run(&[]);
        assert_eq!(c.lost(None), 0);
        assert_eq!(c.loss_pct(None), None);
        assert_eq!(c.loss_pct(Some(0)), None);
    }

    #[test]
    fn gaps_are_lost_of_highest_plus_one_or_of_sent() {
        let c = run(&[0, 1, 3, 4, 7]);
        assert_eq!(c.received, 5);
        assert_eq!(c.lost(None), 3); // 2, 5, 6
        assert_eq!(c.lost(Some(10)), 5); // and 8, 9 at the tail
        assert_eq!(c.loss_pct(Some(10)), Some(50.0));
        assert_eq!(c.reordered, 0);
    }

    #[test]
    fn every_tenth_dropped_is_exactly_ten_percent() {
        let seqs: Vec<u64> = (0..1000).filter(|s| s % 10 != 9).collect();
        let c = run(&seqs);
        assert_eq!(c.lost(Some(1000)), 100);
        assert_eq!(c.loss_pct(Some(1000)), Some(10.0));
    }

    #[test]
    fn duplicates_are_counted_once_and_not_as_received() {
        let c = run(&[0, 1, 1, 2, 0, 2, 3]);
        assert_eq!(c.received, 4);
        assert_eq!(c.duplicates, 3);
        assert_eq!(c.reordered, 0, "a duplicate is not a reordered packet");
        assert_eq!(c.lost(None), 0);
    }

    #[test]
    fn a_swap_is_one_reordered_packet() {
        // 0 1 3 2 4: only 2 arrives with seq < NextExp (4)
        let c = run(&[0, 1, 3, 2, 4]);
        assert_eq!(c.reordered, 1);
        assert_eq!(c.max_reorder_distance, 1);
        assert_eq!(c.lost(None), 0);
    }

    #[test]
    fn a_late_arrival_is_reordered_once_and_fills_its_gap() {
        // 1 arrives after 2..=5: RFC 4737 counts only 1 as reordered
        let c = run(&[0, 2, 3, 4, 5, 1, 6]);
        assert_eq!(c.reordered, 1);
        assert_eq!(c.max_reorder_distance, 4);
        assert_eq!(c.lost(None), 0);
        assert_eq!(c.received, 7);
    }

    #[test]
    fn reorder_after_loss_counts_only_the_late_packets() {
        // 2 is lost for good; 4 and 3 arrive after 5
        let c = run(&[0, 1, 5, 4, 3, 6]);
        assert_eq!(c.reordered, 2);
        assert_eq!(c.lost(None), 1);
        assert_eq!(c.lost(Some(8)), 2); // 2 and 7
    }

    #[test]
    fn the_window_slides_and_old_slots_are_reused() {
        let mut t = SeqTracker::new();
        for s in 0..3 * SEQ_WINDOW {
            t.record(s);
        }
        // inside the window and seen before: a duplicate
        assert_eq!(t.record(3 * SEQ_WINDOW - 10), Arrival::Duplicate);
        // a jump far ahead clears the window
        assert_eq!(t.record(10 * SEQ_WINDOW), Arrival::InOrder);
        assert_eq!(t.record(10 * SEQ_WINDOW - 5), Arrival::Reordered);
        // older than the window: counted but flagged
        assert_eq!(t.record(5), Arrival::BeyondWindow);
        let c = t.counts();
        assert_eq!(c.beyond_window, 1);
        assert_eq!(c.duplicates, 1);
        assert_eq!(c.received, 3 * SEQ_WINDOW + 3);
    }

    #[test]
    fn a_jump_smaller_than_the_window_clears_only_the_new_slots() {
        let mut t = SeqTracker::new();
        t.record(0);
        t.record(100);
        // slots 1..=99 were cleared, 0 was kept
        assert_eq!(t.record(50), Arrival::Reordered);
        assert_eq!(t.record(0), Arrival::Duplicate);
        // jump by W-1 + something: slot of 100 reused by 100 + W
        t.record(100 + SEQ_WINDOW);
        assert_eq!(t.record(100 + SEQ_WINDOW - 1), Arrival::Reordered);
        assert_eq!(t.record(100), Arrival::BeyondWindow);
    }

    /// A deterministic mix of loss, duplication and local reordering, checked against a
    /// plain set-based implementation of the same RFC 4737 definitions.
    #[test]
    fn agrees_with_a_reference_on_a_scrambled_stream() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut arrivals: Vec<u64> = Vec::new();
        for s in 0..20_000u64 {
            match rand(100) {
                0..=4 => {}                       // lost
                5..=7 => arrivals.extend([s, s]), // duplicated
                _ => arrivals.push(s),
            }
        }
        // local reordering: swap neighbours up to 40 apart
        for i in 0..arrivals.len() {
            if rand(10) == 0 {
                let j = (i + 1 + rand(40) as usize).min(arrivals.len() - 1);
                arrivals.swap(i, j);
            }
        }
        let mut seen = std::collections::HashSet::new();
        let (mut reordered, mut dups, mut highest) = (0u64, 0u64, None::<u64>);
        let mut t = SeqTracker::new();
        for &s in &arrivals {
            t.record(s);
            if !seen.insert(s) {
                dups += 1;
                continue;
            }
            match highest {
                Some(h) if s < h => reordered += 1,
                _ => highest = Some(s),
            }
        }
        let c = t.counts();
        assert_eq!(c.received, seen.len() as u64);
        assert_eq!(c.duplicates, dups);
        assert_eq!(c.reordered, reordered);
        assert_eq!(c.highest_seq, highest);
        assert_eq!(c.lost(Some(20_000)), 20_000 - seen.len() as u64);
        assert!(
            c.reordered > 100 && c.duplicates > 100,
            "the mix exercises both"
        );
    }
}
