//! One-way delay: transit times at the receiver, and the offset between two hosts'
//! wall clocks estimated NTP-style (RFC 5905 §8: offset θ = ((t2 − t1) + (t3 − t4)) / 2,
//! round trip δ = (t4 − t1) − (t3 − t2)) from the exchange with the smallest δ, whose
//! error is at most δ / 2 whatever the asymmetry of the path.
//!
//! A reply is only as good as the server that sent it, so each one is checked before it
//! is used ([`ClockSample::check`]): it must echo the client's own `t1`, the hold it
//! claims (t3 − t2) must be neither negative nor longer than the round trip the client
//! measured, and the client's clock must not have gone back. Rejected exchanges are
//! counted; with fewer than [`MIN_GOOD_EXCHANGES`] good ones there is no offset, and the
//! reason says why. The stated bound is never below [`MIN_UNCERTAINTY_NS`]: the four
//! stamps are read in user space around system calls, so no exchange can place the
//! server's clock closer than that, whatever a reply claims.
//!
//! There is no same-host shortcut: the offset is always estimated and never stated as
//! exact. Both ends on one kernel do read one wall clock, but the client cannot prove
//! it over the network: a server can echo the client's boot id and stamp its replies
//! t2 = t1 + 1 µs, t3 = t1 + 2 µs, which orders as one clock would, and was taken for
//! one ("±0.0 µs" beside a delay off by 5 ms or 2.95 s). A proof the server could not
//! forge (a nonce echoed through a host-local channel) would cost a protocol step and
//! an OS door for one case; measuring costs eight round trips already made. On one host
//! the estimate is within its bound of 0, and one-way delays of a few µs there are
//! reported unavailable (the bound exceeds half of them) rather than exact.
//!
//! A transit time is a datagram's arrival on the receiver's clock minus its send stamp
//! on the sender's clock, each counted from its own side's start; add the difference of
//! the two starts on one clock and it is the one-way delay.

use serde::{Deserialize, Serialize};

/// Transit times of the datagrams one receiver took (min, max, mean).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Transit {
    count: u64,
    min_ns: i64,
    max_ns: i64,
    sum_ns: i128,
}

impl Transit {
    pub fn new() -> Transit {
        Transit::default()
    }

    /// One datagram: sent at `send_ns` on the sender's clock, arrived at `arrival_ns`
    /// on the receiver's (each in ns since its own side's start).
    pub fn record(&mut self, send_ns: u64, arrival_ns: u64) {
        let t = crate::jitter::transit_ns(send_ns, arrival_ns);
        if self.count == 0 {
            self.min_ns = t;
            self.max_ns = t;
        } else {
            self.min_ns = self.min_ns.min(t);
            self.max_ns = self.max_ns.max(t);
        }
        self.sum_ns += i128::from(t);
        self.count += 1;
    }

    pub fn merge(&mut self, o: &Transit) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *o;
            return;
        }
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
        self.count += o.count;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// (min, mean, max) in ns; `None` before the first datagram.
    pub fn summary(&self) -> Option<(i64, f64, i64)> {
        (self.count > 0).then(|| {
            (
                self.min_ns,
                self.sum_ns as f64 / self.count as f64,
                self.max_ns,
            )
        })
    }
}

/// One clock exchange: t1 query sent and t4 reply received on the client's clock, t2
/// query received and t3 reply sent on the server's (ns since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockSample {
    pub t1_ns: u64,
    pub t2_ns: u64,
    pub t3_ns: u64,
    pub t4_ns: u64,
}

/// Why a clock reply was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockReject {
    /// The reply's t1 is not the one the client sent.
    EchoMismatch,
    /// The client's own clock went back between query and reply (t4 < t1).
    ClientClockBackwards,
    /// The server claims it sent the reply before it received the query (t3 < t2).
    NegativeHold,
    /// The server claims it held the query longer than the whole round trip.
    HoldExceedsRoundTrip,
}

impl std::fmt::Display for ClockReject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClockReject::EchoMismatch => "the reply did not echo the query's own send time",
            ClockReject::ClientClockBackwards => "the client's clock went back during the exchange",
            ClockReject::NegativeHold => "the server claims it replied before it was asked",
            ClockReject::HoldExceedsRoundTrip => {
                "the server claims it held the query longer than the whole round trip"
            }
        })
    }
}

/// The fewest good exchanges an offset is estimated from.
pub const MIN_GOOD_EXCHANGES: usize = 3;

/// The smallest ± bound ever stated, ns: each of the four stamps is a user-space clock
/// read beside a system call (send or receive on the control connection), so it is off
/// the event it marks by at least a clock read and a system-call return, each well above
/// 100 ns; 1 µs covers the two stamps of a side with room.
pub const MIN_UNCERTAINTY_NS: u64 = 1_000;

impl ClockSample {
    /// Whether this reply can be used: `sent_t1_ns` is the t1 the client put in its
    /// query. See [`ClockReject`].
    pub fn check(&self, sent_t1_ns: u64) -> Result<(), ClockReject> {
        if self.t1_ns != sent_t1_ns {
            return Err(ClockReject::EchoMismatch);
        }
        if self.t4_ns < self.t1_ns {
            return Err(ClockReject::ClientClockBackwards);
        }
        if self.t3_ns < self.t2_ns {
            return Err(ClockReject::NegativeHold);
        }
        if self.t3_ns - self.t2_ns > self.t4_ns - self.t1_ns {
            return Err(ClockReject::HoldExceedsRoundTrip);
        }
        Ok(())
    }

    /// Round trip without the server's turnaround, ns (0 if the stamps are inconsistent).
    pub fn delay_ns(&self) -> u64 {
        let total = self.t4_ns as i128 - self.t1_ns as i128;
        let turnaround = self.t3_ns as i128 - self.t2_ns as i128;
        (total - turnaround).max(0) as u64
    }

    /// Server clock minus client clock, ns.
    pub fn offset_ns(&self) -> i64 {
        let a = self.t2_ns as i128 - self.t1_ns as i128;
        let b = self.t3_ns as i128 - self.t4_ns as i128;
        // Stamps centuries apart do not fit: saturate rather than wrap, so the
        // one-way-delay checks see the absurd offset for what it is.
        i64::try_from((a + b) / 2).unwrap_or(if a + b < 0 { i64::MIN } else { i64::MAX })
    }
}

/// Why there is no clock offset: too few exchanges passed the checks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the server's clock offset is unknown: {good} of {total} clock exchanges passed the checks (replies must echo the query's send time and claim a hold between 0 and the round trip); {MIN_GOOD_EXCHANGES} are needed")]
pub struct NoClockOffset {
    /// Exchanges that passed the checks.
    pub good: usize,
    /// Exchanges made.
    pub total: usize,
}

/// The offset of the server's wall clock from the client's and how far it can be off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockOffset {
    /// Server clock minus client clock, ns.
    pub offset_ns: i64,
    /// The true offset lies within ± this: half the best exchange's round trip, at
    /// least [`MIN_UNCERTAINTY_NS`]; never 0 (a bound that cannot be computed is no
    /// offset at all).
    pub uncertainty_ns: u64,
    /// How it was found, for the output.
    pub method: String,
    /// Exchanges whose replies were rejected ([`ClockSample::check`]); they are not in
    /// the estimate.
    #[serde(default)]
    pub rejected_exchanges: u32,
}

impl ClockOffset {
    /// From checked exchanges (`good`, each passed [`ClockSample::check`]): the one
    /// with the smallest round trip, its bound half that round trip but at least
    /// [`MIN_UNCERTAINTY_NS`]. `rejected` counts the replies that failed the check. With
    /// fewer than [`MIN_GOOD_EXCHANGES`] good exchanges: the reason there is no offset.
    pub fn estimate(good: &[ClockSample], rejected: u32) -> Result<ClockOffset, NoClockOffset> {
        let best = match good.iter().min_by_key(|s| s.delay_ns()) {
            Some(b) if good.len() >= MIN_GOOD_EXCHANGES => b,
            _ => {
                return Err(NoClockOffset {
                    good: good.len(),
                    total: good.len().saturating_add(rejected as usize),
                })
            }
        };
        let rejected_note = if rejected > 0 {
            format!(" ({rejected} replies rejected by the checks)")
        } else {
            String::new()
        };
        Ok(ClockOffset {
            offset_ns: best.offset_ns(),
            uncertainty_ns: best.delay_ns().div_ceil(2).max(MIN_UNCERTAINTY_NS),
            method: format!(
                "NTP-style over the control connection: the smallest-round-trip exchange of {}{}",
                good.len(),
                rejected_note
            ),
            rejected_exchanges: rejected,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transit_keeps_min_mean_max_and_merges() {
        let mut t = Transit::new();
        assert_eq!(t.summary(), None);
        t.record(1_000, 1_500); // 500
        t.record(2_000, 1_900); // −100: the receiver started later
        let mut u = Transit::new();
        u.record(0, 300);
        t.merge(&u);
        assert_eq!(t.count(), 3);
        assert_eq!(t.summary(), Some((-100, 700.0 / 3.0, 500)));
        let mut e = Transit::new();
        e.merge(&t);
        assert_eq!(e, t);
    }

    #[test]
    fn a_send_stamp_beyond_the_i64_range_saturates_instead_of_overflowing() {
        // A peer's stamp is whatever it says: 2^63 and u64::MAX once overflowed i64.
        let mut t = Transit::new();
        t.record(1 << 63, 5);
        t.record(u64::MAX, 0);
        t.record(0, u64::MAX);
        let (min, _, max) = t.summary().unwrap();
        assert_eq!((min, max), (i64::MIN, i64::MAX));
    }

    #[test]
    fn offset_is_found_within_half_the_best_round_trip() {
        // Server clock 5 ms ahead; paths 100 µs each way, server turnaround 20 µs.
        let shift = 5_000_000u64;
        let sample = |t1: u64, out: u64, back: u64| ClockSample {
            t1_ns: t1,
            t2_ns: t1 + out + shift,
            t3_ns: t1 + out + shift + 20_000,
            t4_ns: t1 + out + 20_000 + back,
        };
        let symmetric = sample(1_000_000_000, 100_000, 100_000);
        assert_eq!(symmetric.offset_ns(), shift as i64);
        assert_eq!(symmetric.delay_ns(), 200_000);
        // A slower, asymmetric exchange is not the one used.
        let skewed = sample(2_000_000_000, 900_000, 100_000);
        let slow = sample(4_000_000_000, 500_000, 500_000);
        let est = ClockOffset::estimate(&[skewed, symmetric, slow], 0).unwrap();
        assert_eq!(est.offset_ns, shift as i64);
        assert_eq!(est.uncertainty_ns, 100_000);
        // Even a fully asymmetric best exchange stays within its stated uncertainty.
        let lopsided = sample(3_000_000_000, 190_000, 10_000);
        let est = ClockOffset::estimate(&[lopsided, skewed, slow], 2).unwrap();
        assert!((est.offset_ns - shift as i64).unsigned_abs() <= est.uncertainty_ns);
        assert_eq!(est.rejected_exchanges, 2);
        assert!(est.method.contains("2 replies rejected"), "{}", est.method);
        let none = ClockOffset::estimate(&[symmetric, skewed], 6).unwrap_err();
        assert_eq!(
            none.to_string(),
            "the server's clock offset is unknown: 2 of 8 clock exchanges passed the checks \
             (replies must echo the query's send time and claim a hold between 0 and the round \
             trip); 3 are needed"
        );
        assert!(ClockOffset::estimate(&[], 0).is_err());
    }

    #[test]
    fn forged_replies_are_rejected_and_the_bound_has_a_floor() {
        let t1 = 1_000_000_000u64;
        let honest = ClockSample {
            t1_ns: t1,
            t2_ns: 9_000,
            t3_ns: 9_500,
            t4_ns: t1 + 3_000,
        };
        assert_eq!(honest.check(t1), Ok(()));
        // The proxy's forgery: a hold longer than the whole round trip, which would
        // otherwise clamp the round trip to 0 and state the offset as exact.
        let forged = ClockSample {
            t3_ns: 9_000 + 50_000_000,
            ..honest
        };
        assert_eq!(forged.check(t1), Err(ClockReject::HoldExceedsRoundTrip));
        assert_eq!(honest.check(t1 + 1), Err(ClockReject::EchoMismatch));
        let backwards = ClockSample {
            t3_ns: 8_000,
            ..honest
        };
        assert_eq!(backwards.check(t1), Err(ClockReject::NegativeHold));
        let stepped = ClockSample {
            t4_ns: t1 - 1,
            ..honest
        };
        assert_eq!(stepped.check(t1), Err(ClockReject::ClientClockBackwards));
        // A hold of exactly the round trip passes the check, but the bound keeps its floor.
        let exact = ClockSample {
            t3_ns: 9_000 + 3_000,
            ..honest
        };
        assert_eq!(exact.check(t1), Ok(()));
        let est = ClockOffset::estimate(&[exact, exact, exact], 0).unwrap();
        assert_eq!(est.uncertainty_ns, MIN_UNCERTAINTY_NS);
        let far = ClockSample {
            t1_ns: 0,
            t2_ns: u64::MAX - 1,
            t3_ns: u64::MAX,
            t4_ns: 10,
        };
        assert_eq!(far.offset_ns(), i64::MAX, "saturates, does not wrap");
    }
}
