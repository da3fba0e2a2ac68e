//! Linux clocks: CLOCK_MONOTONIC for durations and pacing (clock_nanosleep with
//! TIMER_ABSTIME), CLOCK_REALTIME for send stamps (kernel receive stamps use it too).

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
pub(crate) fn now_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// Wall-clock time in ns since the Unix epoch (CLOCK_REALTIME), for send timestamps.
pub(crate) fn wall_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// Sleep until the monotonic clock reaches `deadline_ns` (absolute, as from
/// [`now_ns`]); returns at once if it already has. Retries when a signal interrupts.
pub(crate) fn sleep_until_ns(deadline_ns: u64) -> io::Result<()> {
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
