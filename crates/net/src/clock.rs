//! Clocks for the measuring code above: a monotonic clock for durations, pacing and RTT,
//! and the wall clock for datagram send timestamps, which a receiver compares with its
//! own wall clock or with kernel receive timestamps (Linux: CLOCK_REALTIME). The pure
//! crates read no clock; they get these numbers. Each OS's clock is in `sys`.

use crate::sys;
use std::io;

/// Monotonic time in ns (arbitrary origin, never goes back; Linux: CLOCK_MONOTONIC).
pub fn now_ns() -> u64 {
    sys::clock::now_ns()
}

/// Wall-clock time in ns since the Unix epoch, for send timestamps.
pub fn wall_ns() -> u64 {
    sys::clock::wall_ns()
}

/// Sleep until the monotonic clock reaches `deadline_ns` (absolute, as from
/// [`now_ns`]); returns at once if it already has. Retries when a signal interrupts.
pub fn sleep_until_ns(deadline_ns: u64) -> io::Result<()> {
    sys::clock::sleep_until_ns(deadline_ns)
}

/// Make this thread's timed sleeps as precise as the OS allows (Linux: 1 ns timer
/// slack instead of 50 µs, for this thread only): a paced sender's gaps then do not
/// overshoot. Best effort; does nothing where the OS has no such setting.
pub fn fine_timer_slack() {
    sys::readings::fine_timer_slack();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_advances_and_sleep_until_waits() {
        let t0 = now_ns();
        sleep_until_ns(t0 + 2_000_000).unwrap();
        let t1 = now_ns();
        assert!(t1 >= t0 + 2_000_000, "slept {} ns", t1 - t0);
        assert!(t1 - t0 < 500_000_000);
        // a deadline in the past returns at once
        sleep_until_ns(t0).unwrap();
    }

    #[test]
    fn wall_clock_is_after_2020_and_agrees_with_std() {
        let w = wall_ns();
        assert!(w > 1_577_836_800_000_000_000);
        let std_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        assert!(std_ns.abs_diff(w) < 1_000_000_000);
    }
}
