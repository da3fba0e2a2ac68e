//! Unit newtypes: durations in nanoseconds, byte counts and rates. They keep a byte
//! count from being added to a duration; arithmetic stays on the inner value.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Nanoseconds.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    pub const PER_SEC: u64 = 1_000_000_000;

    pub fn from_secs_f64(secs: f64) -> Nanos {
        if secs.is_finite() && secs > 0.0 {
            Nanos((secs * Self::PER_SEC as f64).round() as u64)
        } else {
            Nanos(0)
        }
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / Self::PER_SEC as f64
    }
    pub fn saturating_sub(self, other: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(other.0))
    }
}

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}

/// A byte count.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    pub fn bits(self) -> u64 {
        self.0.saturating_mul(8)
    }
    /// Rate of moving these bytes in `elapsed` (0 when `elapsed` is zero).
    pub fn rate_over(self, elapsed: Nanos) -> BitsPerSec {
        if elapsed.0 == 0 {
            return BitsPerSec(0.0);
        }
        BitsPerSec(self.0 as f64 * 8.0 / elapsed.as_secs_f64())
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", self.0)
    }
}

/// Bits per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BitsPerSec(pub f64);

/// Packets (datagrams, transactions, writes) per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PacketsPerSec(pub f64);

impl PacketsPerSec {
    /// Rate of `count` events in `elapsed` (0 when `elapsed` is zero).
    pub fn of(count: u64, elapsed: Nanos) -> PacketsPerSec {
        if elapsed.0 == 0 {
            return PacketsPerSec(0.0);
        }
        PacketsPerSec(count as f64 / elapsed.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_over_one_second_is_bits_per_second() {
        assert_eq!(Bytes(125).rate_over(Nanos(1_000_000_000)).0, 1000.0);
        assert_eq!(Bytes(125).rate_over(Nanos(500_000_000)).0, 2000.0);
        assert_eq!(Bytes(125).rate_over(Nanos(0)).0, 0.0);
    }

    #[test]
    fn seconds_round_trip_and_reject_negative() {
        assert_eq!(Nanos::from_secs_f64(1.5), Nanos(1_500_000_000));
        assert_eq!(Nanos::from_secs_f64(-1.0), Nanos(0));
        assert_eq!(Nanos::from_secs_f64(f64::NAN), Nanos(0));
        assert_eq!(Nanos(2_500_000_000).as_secs_f64(), 2.5);
        assert_eq!(PacketsPerSec::of(10, Nanos(2_000_000_000)).0, 5.0);
    }
}
