//! Linux readings: /proc/stat, getrusage, /proc/net/snmp(6), the IPv6 sysctls, thread
//! affinity and timer slack.

use crate::error::NetError;
use std::net::{Ipv6Addr, SocketAddr, UdpSocket};
use wire::cpu::CpuSnapshot;

const PROC_STAT: &str = "/proc/stat";
pub(crate) const DISABLE_IPV6_ALL: &str = "/proc/sys/net/ipv6/conf/all/disable_ipv6";
const DISABLE_IPV6_LO: &str = "/proc/sys/net/ipv6/conf/lo/disable_ipv6";

/// Where the system-wide CPU figures come from, for the report's method text.
pub(crate) const CPU_SOURCE: &str =
    "/proc/stat (user nice system idle iowait irq softirq steal; busy = all but idle)";

pub(crate) fn udp_error_counters() -> Option<wire::snmp::UdpErrorCounters> {
    let read = |file: &str| {
        std::fs::read_to_string(format!("/proc/thread-self/net/{file}"))
            .or_else(|_| std::fs::read_to_string(format!("/proc/net/{file}")))
            .ok()
    };
    let v4 = wire::snmp::parse_snmp(&read("snmp")?)?;
    // A kernel without IPv6 has no snmp6: the IPv4 counters are then the whole story.
    let v6 = read("snmp6")
        .and_then(|t| wire::snmp::parse_snmp6(&t))
        .unwrap_or_default();
    Some(v4.plus(&v6))
}

pub(crate) fn cpu_snapshot() -> Result<CpuSnapshot, NetError> {
    let text = std::fs::read_to_string(PROC_STAT).map_err(|e| NetError::ProcStat(e.to_string()))?;
    CpuSnapshot::parse(&text).map_err(|e| NetError::ProcStat(e.to_string()))
}

pub(crate) use crate::sys::unix_common::process_cpu_times;

pub(crate) fn sysctl_is_one(path: &str) -> bool {
    std::fs::read_to_string(path)
        .map(|t| t.trim() == "1")
        .unwrap_or(false)
}

pub(crate) fn ipv6_check() -> Result<(), NetError> {
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

pub(crate) fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
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

/// PR_SET_TIMERSLACK 1 ns for the calling thread (the default 50 µs lets a paced
/// sender's sleeps overshoot by a whole datagram gap at 20 kpps).
pub(crate) fn fine_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// The calling thread's allowed CPUs as the kernel lists them (for tests).
#[cfg(test)]
pub(crate) fn allowed_cpus_of_this_thread() -> String {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    std::fs::read_to_string(format!("/proc/self/task/{tid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_default()
        .to_string()
}
