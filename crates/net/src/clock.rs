//! Clocks for the measuring code above: a monotonic clock for durations, pacing and RTT,
//! and the wall clock (CLOCK_REALTIME) for datagram send timestamps, which a receiver
//! compares with its own wall clock or with kernel receive timestamps (also
//! CLOCK_REALTIME). The pure crates read no clock; they get these numbers.

use std::io;

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; clock_gettime only writes into it.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        // Only fails for an invalid clock id; the ids used here exist on every Linux.
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// Monotonic time in ns (CLOCK_MONOTONIC; arbitrary origin, never goes back).
pub fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Wall-clock time in ns since the Unix epoch (CLOCK_REALTIME), for send timestamps.
pub fn wall_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// Sleep until the monotonic clock reaches `deadline_ns` (absolute, as from
/// [`now_ns`]); returns at once if it already has. Retries when a signal interrupts.
pub fn sleep_until_ns(deadline_ns: u64) -> io::Result<()> {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec; with TIMER_ABSTIME the remainder pointer may
        // be null.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        match rc {
            0 => return Ok(()),
            libc::EINTR => continue,
            err => return Err(io::Error::from_raw_os_error(err)),
        }
    }
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
