//! Readings of the host: /proc/stat into a [`CpuSnapshot`], the process's own CPU time
//! (getrusage), the UDP error counters of /proc/net/snmp and snmp6, and whether IPv6 can
//! be used here.

use crate::error::NetError;
use measure::cpu::{CpuSnapshot, ProcessCpuTimes};
use std::net::{Ipv6Addr, SocketAddr, UdpSocket};

const PROC_STAT: &str = "/proc/stat";
const DISABLE_IPV6_ALL: &str = "/proc/sys/net/ipv6/conf/all/disable_ipv6";
const DISABLE_IPV6_LO: &str = "/proc/sys/net/ipv6/conf/lo/disable_ipv6";

/// The UDP delivery error counters (`InErrors`, `RcvbufErrors`) of IPv4 and IPv6
/// summed, for the network namespace of the calling thread (`/proc/thread-self/net`, so
/// a lab client thread reads its own namespace). System-wide within that namespace:
/// other programs' datagrams count too. `None` when unreadable (not Linux, no procfs).
#[cfg(target_os = "linux")]
pub fn udp_error_counters() -> Option<measure::UdpErrorCounters> {
    let read = |file: &str| {
        std::fs::read_to_string(format!("/proc/thread-self/net/{file}"))
            .or_else(|_| std::fs::read_to_string(format!("/proc/net/{file}")))
            .ok()
    };
    let v4 = measure::snmp::parse_snmp(&read("snmp")?)?;
    // A kernel without IPv6 has no snmp6: the IPv4 counters are then the whole story.
    let v6 = read("snmp6")
        .and_then(|t| measure::snmp::parse_snmp6(&t))
        .unwrap_or_default();
    Some(v4.plus(&v6))
}

#[cfg(not(target_os = "linux"))]
pub fn udp_error_counters() -> Option<measure::UdpErrorCounters> {
    None
}

/// Read and parse /proc/stat.
pub fn read_proc_stat() -> Result<CpuSnapshot, NetError> {
    let text = std::fs::read_to_string(PROC_STAT).map_err(|e| NetError::ProcStat(e.to_string()))?;
    CpuSnapshot::parse(&text).map_err(|e| NetError::ProcStat(e.to_string()))
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add((tv.tv_usec.max(0) as u64).saturating_mul(1000))
}

/// User and system CPU time this process has used so far (getrusage(RUSAGE_SELF), all
/// threads; microsecond resolution).
pub fn process_cpu_times() -> ProcessCpuTimes {
    // SAFETY: rusage is a plain C struct for which all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid for writes; RUSAGE_SELF is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        // getrusage(RUSAGE_SELF) cannot fail with a valid pointer.
        return ProcessCpuTimes::default();
    }
    ProcessCpuTimes {
        user_ns: timeval_ns(ru.ru_utime),
        system_ns: timeval_ns(ru.ru_stime),
    }
}

fn sysctl_is_one(path: &str) -> bool {
    std::fs::read_to_string(path)
        .map(|t| t.trim() == "1")
        .unwrap_or(false)
}

/// Whether IPv6 is usable on this host: the sysctl does not disable it and a UDP socket
/// binds to ::1. The error says what to do.
pub fn check_ipv6() -> Result<(), NetError> {
    if sysctl_is_one(DISABLE_IPV6_ALL) {
        return Err(NetError::Ipv6Disabled);
    }
    let loopback = SocketAddr::from((Ipv6Addr::LOCALHOST, 0));
    match UdpSocket::bind(loopback) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EAFNOSUPPORT) => Err(NetError::Ipv6Unavailable {
            reason: "the kernel has no IPv6 support (socket(AF_INET6) failed)".into(),
        }),
        Err(e) if sysctl_is_one(DISABLE_IPV6_LO) => Err(NetError::Ipv6Unavailable {
            reason: format!(
                "IPv6 is disabled on the loopback interface (net.ipv6.conf.lo.disable_ipv6=1): {e}"
            ),
        }),
        Err(e) => Err(NetError::Ipv6Unavailable {
            reason: format!("binding [::1]:0 failed: {e}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_reads_every_core() {
        let snap = read_proc_stat().unwrap();
        let online = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(snap.cores.len() >= online.min(1));
        assert!(snap.all.total() > 0);
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

    #[test]
    fn ipv6_check_agrees_with_the_sysctl() {
        let disabled = sysctl_is_one(DISABLE_IPV6_ALL);
        match check_ipv6() {
            Ok(()) => assert!(!disabled),
            Err(NetError::Ipv6Disabled) => {
                assert!(disabled);
                assert!(NetError::Ipv6Disabled.to_string().contains("use -4"));
            }
            Err(e) => println!("IPv6 unavailable here: {e}"),
        }
    }
}

/// Bind the calling thread to one CPU (threads it creates later inherit the binding):
/// the default loopback study keeps the client on one core and the embedded server on
/// another. `Err` where the OS offers no thread affinity or refuses it.
#[cfg(target_os = "linux")]
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("CPU {cpu} is beyond the affinity mask"),
        ));
    }
    // SAFETY: cpu_set_t is plain data; all-zero is the empty set, and CPU_SET writes
    // within it (cpu < CPU_SETSIZE, checked above).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: pid 0 = the calling thread; the pointer and size describe `set`.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Thread affinity is not offered on this OS.
#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(_cpu: usize) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "thread CPU affinity is implemented for Linux only",
    ))
}

#[cfg(all(test, target_os = "linux"))]
mod pin_tests {
    /// A pinned thread runs on that CPU only (read back from /proc), and the CPU
    /// number past the mask is refused.
    #[test]
    fn a_pinned_thread_reports_one_allowed_cpu() {
        let allowed = std::thread::spawn(|| {
            super::pin_current_thread(0).expect("pin to CPU 0");
            let tid = unsafe { libc::gettid() };
            std::fs::read_to_string(format!("/proc/self/task/{tid}/status"))
                .unwrap()
                .lines()
                .find(|l| l.starts_with("Cpus_allowed_list:"))
                .unwrap()
                .split_whitespace()
                .nth(1)
                .unwrap()
                .to_string()
        })
        .join()
        .unwrap();
        assert_eq!(allowed, "0");
        assert!(super::pin_current_thread(1 << 20).is_err());
    }
}
