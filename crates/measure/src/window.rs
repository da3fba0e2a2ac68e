//! Per-window statistics of a UDP stream, as D-ITG's decoder (ITGDec) gives them: the
//! run is cut into windows of fixed width by each datagram's *send* time, so a window's
//! loss is exact (datagrams sent in it minus those of them that arrived, however late)
//! and its delay figures belong to the traffic sent then. The sender counts what it sent
//! per window, the receiver what arrived; the two are joined by window index.

pub use wire::proto::WindowStats;

/// Windows of one side of one run, bounded: datagrams sent after the last window that
/// fits are not counted per window (counted in `beyond`).
#[derive(Debug, Clone, PartialEq)]
pub struct Windows {
    width_ns: u64,
    windows: Vec<WindowStats>,
    max: usize,
    beyond: u64,
}

impl Windows {
    /// `width_ns` ≥ 1; at most `max` windows are kept.
    pub fn new(width_ns: u64, max: usize) -> Windows {
        Windows {
            width_ns: width_ns.max(1),
            windows: Vec::new(),
            max,
            beyond: 0,
        }
    }

    fn at(&mut self, send_ns: u64) -> Option<&mut WindowStats> {
        let i = send_ns / self.width_ns;
        if i >= self.max as u64 {
            self.beyond += 1;
            return None;
        }
        let i = i as usize;
        while self.windows.len() <= i {
            let index = self.windows.len() as u32;
            self.windows.push(WindowStats {
                index,
                ..WindowStats::default()
            });
        }
        self.windows.get_mut(i)
    }

    /// The sender: `n` datagrams stamped `send_ns`.
    pub fn sent(&mut self, send_ns: u64, n: u64) {
        if let Some(w) = self.at(send_ns) {
            w.sent_packets += n;
        }
    }

    /// The receiver: one datagram of `bytes`, stamped `send_ns`, arrived at
    /// `arrival_ns`; `jitter_ns` is the running RFC 3550 jitter after it.
    pub fn received(&mut self, send_ns: u64, arrival_ns: u64, bytes: u64, jitter_ns: f64) {
        let transit = crate::jitter::transit_ns(send_ns, arrival_ns);
        if let Some(w) = self.at(send_ns) {
            if w.recv_packets == 0 {
                w.transit_max_ns = transit;
            } else {
                w.transit_max_ns = w.transit_max_ns.max(transit);
            }
            w.recv_packets += 1;
            w.recv_bytes += bytes;
            w.transit_sum_ns = w.transit_sum_ns.saturating_add(transit);
            w.jitter_ns = jitter_ns;
        }
    }

    /// Add another stream's windows of the same side (same width).
    pub fn merge(&mut self, o: &Windows) {
        for w in &o.windows {
            let Some(mine) = self.at(u64::from(w.index) * self.width_ns) else {
                continue;
            };
            if w.recv_packets > 0 {
                mine.transit_max_ns = if mine.recv_packets == 0 {
                    w.transit_max_ns
                } else {
                    mine.transit_max_ns.max(w.transit_max_ns)
                };
                // Streams' jitters are averaged, weighted by their datagrams.
                let n = (mine.recv_packets + w.recv_packets) as f64;
                mine.jitter_ns = (mine.jitter_ns * mine.recv_packets as f64
                    + w.jitter_ns * w.recv_packets as f64)
                    / n;
            }
            mine.sent_packets += w.sent_packets;
            mine.recv_packets += w.recv_packets;
            mine.recv_bytes += w.recv_bytes;
            mine.transit_sum_ns = mine.transit_sum_ns.saturating_add(w.transit_sum_ns);
        }
        self.beyond += o.beyond;
    }

    pub fn into_stats(self) -> Vec<WindowStats> {
        self.windows
    }

    /// Datagrams sent after the last window kept.
    pub fn beyond(&self) -> u64 {
        self.beyond
    }
}

/// Sender and receiver windows joined by index (a window either side saw).
pub fn join(sender: &[WindowStats], receiver: &[WindowStats]) -> Vec<WindowStats> {
    let n = sender.len().max(receiver.len());
    (0..n)
        .map(|i| {
            let mut w = receiver.get(i).copied().unwrap_or_default();
            w.index = i as u32;
            w.sent_packets = sender.get(i).map_or(0, |s| s.sent_packets);
            w
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_and_delay_are_counted_by_send_window() {
        let ms = 1_000_000;
        let mut tx = Windows::new(100 * ms, 10);
        let mut rx = Windows::new(100 * ms, 10);
        // 10 datagrams per window for 3 windows; window 1 loses 2; one datagram of
        // window 0 arrives late, during window 1, and still counts for window 0.
        for i in 0..30u64 {
            let send = i * 10 * ms;
            tx.sent(send, 1);
            if i == 12 || i == 15 {
                continue;
            }
            let delay = if i == 9 { 50 * ms } else { ms };
            rx.received(send, send + delay, 100, 1000.0 + i as f64);
        }
        let w = join(&tx.clone().into_stats(), &rx.clone().into_stats());
        assert_eq!(w.len(), 3);
        let lost: Vec<u64> = w.iter().map(|w| w.sent_packets - w.recv_packets).collect();
        assert_eq!(lost, [0, 2, 0]);
        assert_eq!(w[0].transit_max_ns, (50 * ms) as i64);
        assert_eq!(w[0].transit_sum_ns, (9 * ms + 50 * ms) as i64);
        assert_eq!(w[1].recv_bytes, 800);
        assert_eq!(w[2].jitter_ns, 1029.0);
        // Beyond the last window: not kept, counted.
        let mut small = Windows::new(100 * ms, 2);
        small.sent(250 * ms, 3);
        assert_eq!(small.beyond(), 1);
        assert!(small.into_stats().is_empty());
    }

    #[test]
    fn an_arrival_beyond_the_i64_range_saturates_the_transit() {
        let mut rx = Windows::new(10, 5);
        rx.received(0, u64::MAX, 10, 0.0);
        rx.received(1, u64::MAX, 10, 0.0);
        let w = rx.into_stats();
        assert_eq!(
            (w[0].transit_max_ns, w[0].transit_sum_ns),
            (i64::MAX, i64::MAX)
        );
    }

    #[test]
    fn streams_merge_by_window() {
        let mut a = Windows::new(10, 5);
        let mut b = Windows::new(10, 5);
        a.received(0, 5, 10, 2.0);
        b.received(3, 4, 10, 4.0);
        b.received(25, 40, 10, 6.0);
        b.sent(25, 1);
        a.merge(&b);
        let w = a.into_stats();
        assert_eq!(w.len(), 3);
        assert_eq!(
            (w[0].recv_packets, w[0].transit_max_ns, w[0].jitter_ns),
            (2, 5, 3.0)
        );
        assert_eq!(
            (w[2].recv_packets, w[2].sent_packets, w[2].transit_sum_ns),
            (1, 1, 15)
        );
        assert_eq!(
            w[1],
            WindowStats {
                index: 1,
                ..Default::default()
            }
        );
    }
}
