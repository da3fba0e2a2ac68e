//! Packet loss: the one home of lost packets and loss % for every peer kind (the
//! engine's runs and windows, the iperf3 port, a [`crate::SeqCounts`]).
//!
//! - Lost = sent − received, never negative: more received than sent (a sender count
//!   that lags the receiver's, or copies counted as received) is clamped to no loss,
//!   0 %; duplicates are reported on their own, loss is not gain.
//! - Loss % = lost × 100 / sent, absent (`None`) when nothing was sent: the loss of
//!   nothing is not 0 %, it is no figure.

/// Packets lost of `sent` when `received` arrived: `sent − received`, 0 when more
/// arrived than were sent.
pub fn lost_packets(sent: u64, received: u64) -> u64 {
    sent.saturating_sub(received)
}

/// Loss as a percentage of `sent` (0–100 %), `None` when nothing was sent.
pub fn loss_pct(sent: u64, received: u64) -> Option<f64> {
    (sent > 0).then(|| lost_packets(sent, received) as f64 * 100.0 / sent as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_lost_over_sent() {
        assert_eq!(lost_packets(1000, 900), 100);
        assert_eq!(loss_pct(1000, 900), Some(10.0));
        assert_eq!(loss_pct(976, 936), Some(40.0 * 100.0 / 976.0));
        assert_eq!(loss_pct(1000, 1000), Some(0.0));
    }

    #[test]
    fn nothing_sent_has_no_loss_figure() {
        assert_eq!(lost_packets(0, 0), 0);
        assert_eq!(loss_pct(0, 0), None);
        assert_eq!(loss_pct(0, 5), None);
    }

    #[test]
    fn nothing_received_is_all_lost() {
        assert_eq!(lost_packets(7, 0), 7);
        assert_eq!(loss_pct(7, 0), Some(100.0));
    }

    #[test]
    fn more_received_than_sent_is_clamped_to_no_loss() {
        assert_eq!(lost_packets(10, 12), 0);
        assert_eq!(loss_pct(10, 12), Some(0.0));
        assert_eq!(loss_pct(1, u64::MAX), Some(0.0));
    }
}
