//! Readings of the host: system-wide CPU per core into a [`CpuSnapshot`] (Linux:
//! /proc/stat; Windows: per-processor performance information; macOS: host processor
//! info; FreeBSD: kern.cp_times), the process's own CPU time, the UDP receive-error
//! counters (Linux only), whether IPv6 can be used here, and thread affinity.

use crate::error::NetError;
use crate::sys;
use wire::cpu::{CpuSnapshot, ProcessCpuTimes};

/// The UDP delivery error counters (`InErrors`, `RcvbufErrors`) of IPv4 and IPv6
/// summed, for the network namespace of the calling thread (Linux:
/// `/proc/thread-self/net`, so a lab client thread reads its own namespace).
/// System-wide within that namespace: other programs' datagrams count too. `None` when
/// unreadable (not Linux, no procfs).
pub fn udp_error_counters() -> Option<wire::snmp::UdpErrorCounters> {
    sys::readings::udp_error_counters()
}

/// System-wide CPU times, all cores and each core. The fields are those of Linux's
/// /proc/stat; other systems fill the ones they have (Windows: user, system, idle,
/// irq = interrupt time, softirq = DPC time), in their own tick unit, which cancels in
/// every ratio. `Err` says why it could not be read.
pub fn cpu_snapshot() -> Result<CpuSnapshot, NetError> {
    sys::readings::cpu_snapshot()
}

/// The same as [`cpu_snapshot`] (its name from when only /proc/stat was read).
pub fn read_proc_stat() -> Result<CpuSnapshot, NetError> {
    cpu_snapshot()
}

/// Where [`cpu_snapshot`] reads on this OS and what counts as busy, in words.
pub fn cpu_source() -> &'static str {
    sys::readings::CPU_SOURCE
}

/// User and system CPU time this process has used so far, all threads (Linux and other
/// Unixes: getrusage; Windows: GetProcessTimes).
pub fn process_cpu_times() -> ProcessCpuTimes {
    sys::readings::process_cpu_times()
}

/// Whether IPv6 is usable on this host: the OS does not disable it and a UDP socket
/// binds to ::1. The error says what to do.
pub fn check_ipv6() -> Result<(), NetError> {
    sys::readings::ipv6_check()
}

/// Bind the calling thread to one CPU (threads it creates later inherit the binding on
/// Linux): the default loopback study keeps the client on one core and the embedded
/// server on another. `Err` where the OS offers no thread affinity or refuses it.
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    sys::readings::pin_current_thread(cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_snapshot_reads_every_core() {
        let snap = cpu_snapshot().unwrap();
        let online = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(snap.cores.len() >= online.min(1));
        assert!(snap.all.total() > 0);
        let sum: u64 = snap.cores.iter().map(|c| c.times.total()).sum();
        assert!(sum > 0);
    }

    #[test]
    fn process_cpu_time_grows_with_work() {
        let before = process_cpu_times();
        let t0 = crate::clock::now_ns();
        let mut x = 0u64;
        while crate::clock::now_ns() - t0 < 30_000_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let after = process_cpu_times();
        assert!(after.total_ns() > before.total_ns(), "{before:?} {after:?}");
        let pct = before.pct_of_one_core_until(&after, crate::clock::now_ns() - t0);
        assert!(pct > 10.0, "{pct}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn udp_error_counters_are_readable_and_never_decrease() {
        let a = udp_error_counters().expect("/proc/net/snmp readable on Linux");
        let b = udp_error_counters().expect("/proc/net/snmp readable on Linux");
        assert!(b.in_errors >= a.in_errors && b.rcvbuf_errors >= a.rcvbuf_errors);
        assert!(
            a.in_errors >= a.rcvbuf_errors,
            "InErrors includes RcvbufErrors"
        );
    }

    #[cfg(not(target_os = "linux"))]
    #[test]
    fn udp_error_counters_are_unavailable_off_linux() {
        assert!(udp_error_counters().is_none());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn ipv6_check_agrees_with_the_sysctl() {
        let disabled = sys::readings::sysctl_is_one(sys::readings::DISABLE_IPV6_ALL);
        match check_ipv6() {
            Ok(()) => assert!(!disabled),
            Err(NetError::Ipv6Disabled) => {
                assert!(disabled);
                assert!(NetError::Ipv6Disabled.to_string().contains("use -4"));
            }
            Err(e) => println!("IPv6 unavailable here: {e}"),
        }
    }

    #[cfg(not(target_os = "linux"))]
    #[test]
    fn ipv6_check_matches_binding_the_loopback() {
        let binds = std::net::UdpSocket::bind("[::1]:0").is_ok();
        assert_eq!(check_ipv6().is_ok(), binds);
    }

    /// A pinned thread runs on that CPU only (read back from the OS), and a CPU number
    /// past the mask is refused.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_pinned_thread_reports_one_allowed_cpu() {
        let allowed = std::thread::spawn(|| {
            pin_current_thread(0).expect("pin to CPU 0");
            sys::readings::allowed_cpus_of_this_thread()
        })
        .join()
        .unwrap();
        assert_eq!(allowed, "0");
        assert!(pin_current_thread(1 << 20).is_err());
    }

    /// Windows threads do not inherit a thread's affinity: pinning is refused, so the
    /// study records "none" with the reason instead of a placement that did not hold.
    #[cfg(windows)]
    #[test]
    fn pinning_is_refused_with_the_reason_on_windows() {
        let e = pin_current_thread(0).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::Unsupported);
        assert!(e.to_string().contains("not inherited"), "{e}");
    }
}
