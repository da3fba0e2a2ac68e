//! System metadata of the host under test: OS, kernel, CPU, memory, the interface a
//! test uses (driver, firmware, MTU, speed, offloads), TCP congestion control and socket
//! buffer limits. Each OS's readings are in `sys` (Linux: /proc, /sys, /etc and
//! read-only ethtool ioctls; Windows: the registry, GlobalMemoryStatusEx and
//! GetAdaptersAddresses; macOS and FreeBSD: sysctl and getifaddrs); no external
//! binaries. Every field that cannot be read is absent, and its key is listed in
//! `sysinfo.unreadable`. Never panics.
//!
//! Keys (all values are text): `os.family` (linux, windows, macos, freebsd), `os.name`, `os.version`, `os.pretty_name`, `os.id`,
//! `kernel.release`, `kernel.version`, `host.name`, `cpu.model`, `cpu.cores`,
//! `cpu.governor`, `cpu.max_freq_khz`, `mem.total_bytes`, `iface.name`,
//! `iface.driver`, `iface.driver_version`, `iface.firmware`, `iface.bus`,
//! `iface.speed_mbps`, `iface.mtu_ipv4`, `iface.mtu_ipv6`, `iface.operstate`,
//! `iface.offload.{rx_checksum,tx_checksum,scatter_gather,tso,gso,gro}` ("on"/"off"),
//! `tcp.congestion_control`, `tcp.available_congestion_control`,
//! `net.rmem_max_bytes`, `net.wmem_max_bytes`, `net.tcp_rmem_bytes`,
//! `net.tcp_wmem_bytes` ("min default max"), `ipv6.enabled` ("yes"/"no"),
//! `ipv6.iface_enabled`, `sysinfo.unreadable`.

use crate::metadata::Capture;
pub use crate::metadata::{
    parse_cpuinfo, parse_if_inet6, parse_meminfo_total_bytes, parse_os_release, BOOT_ID_KEY,
};
use crate::sys;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// Capture what is known about this host. `local_addr` is the address the test uses
/// on this host (to find its interface); `None` describes the host only.
pub fn capture(local_addr: Option<IpAddr>) -> BTreeMap<String, String> {
    let mut c = Capture::default();
    c.set("os.family", Some(std::env::consts::OS.to_string()));
    sys::sysinfo::host_fields(&mut c);
    if let Some(addr) = local_addr {
        sys::sysinfo::iface_fields_of(&mut c, addr);
    }
    c.finish()
}

/// This host's name ("unknown" if unreadable), as campaign locks record it.
pub fn host_name() -> String {
    sys::sysinfo::host_name()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Whether a process with this PID exists on this host.
pub fn process_alive(pid: u32) -> bool {
    pid != 0 && sys::sysinfo::process_alive(pid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::ipv6_enabled;

    #[test]
    fn os_release_quotes_and_comments() {
        let t = "# comment\nNAME=\"Ubuntu\"\nVERSION_ID='24.04'\nID=ubuntu\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n";
        let m = parse_os_release(t);
        assert_eq!(m["NAME"], "Ubuntu");
        assert_eq!(m["VERSION_ID"], "24.04");
        assert_eq!(m["ID"], "ubuntu");
        assert_eq!(m["PRETTY_NAME"], "Ubuntu 24.04.1 LTS");
        assert!(!m.contains_key("# comment"));
    }

    #[test]
    fn cpuinfo_model_and_count() {
        let t = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        let (m, n) = parse_cpuinfo(t);
        assert_eq!(m.as_deref(), Some("Intel(R) Xeon(R) CPU @ 2.20GHz"));
        assert_eq!(n, 2);
        assert_eq!(parse_cpuinfo("garbage"), (None, 0));
    }

    #[test]
    fn meminfo_total_in_bytes() {
        let t = "MemTotal:        8025424 kB\nMemFree:  1 kB\n";
        assert_eq!(parse_meminfo_total_bytes(t), Some(8_025_424 * 1024));
        assert_eq!(parse_meminfo_total_bytes("MemFree: 1 kB"), None);
        assert_eq!(parse_meminfo_total_bytes("MemTotal: x kB"), None);
    }

    #[test]
    fn if_inet6_finds_the_interface_of_an_address() {
        let t = "00000000000000000000000000000001 01 80 10 80       lo\nfe800000000000000a0027fffe123456 02 40 20 80     eth0\n";
        assert_eq!(
            parse_if_inet6(t, "::1".parse().unwrap()).as_deref(),
            Some("lo")
        );
        assert_eq!(
            parse_if_inet6(t, "fe80::a00:27ff:fe12:3456".parse().unwrap()).as_deref(),
            Some("eth0")
        );
        assert_eq!(parse_if_inet6(t, "2001:db8::1".parse().unwrap()), None);
    }

    #[test]
    fn ipv6_enabled_reads_disable_flag() {
        assert_eq!(ipv6_enabled(true, Some("0\n")), "yes");
        assert_eq!(ipv6_enabled(true, Some("1\n")), "no");
        assert_eq!(ipv6_enabled(false, None), "no");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn capture_on_loopback_names_lo_and_reads_host_fields() {
        let m = capture(Some("127.0.0.1".parse().unwrap()));
        assert_eq!(m.get("iface.name").map(String::as_str), Some("lo"));
        assert!(m.get("kernel.release").is_some_and(|k| !k.is_empty()));
        assert!(m
            .get("cpu.cores")
            .is_some_and(|c| c.parse::<u32>().unwrap() >= 1));
        assert!(m.contains_key("mem.total_bytes"));
        assert!(m.contains_key("iface.mtu_ipv4"));
        // Host-only capture has no interface fields.
        let h = capture(None);
        assert!(!h.contains_key("iface.name"));
    }

    /// Windows: the OS from the registry, memory, CPU count and the loopback adapter
    /// (name and MTU from GetAdaptersAddresses); what is not read is listed.
    #[cfg(windows)]
    #[test]
    fn capture_on_windows_reads_the_registry_memory_and_the_adapter() {
        for addr in ["127.0.0.1", "::1"] {
            let m = capture(Some(addr.parse().unwrap()));
            assert_eq!(m.get("os.family").map(String::as_str), Some("windows"));
            assert!(m
                .get("os.pretty_name")
                .is_some_and(|n| n.contains("Windows")));
            assert!(m
                .get("mem.total_bytes")
                .is_some_and(|b| b.parse::<u64>().unwrap() > 0));
            assert!(m
                .get("cpu.cores")
                .is_some_and(|c| c.parse::<u32>().unwrap() >= 1));
            assert!(m.contains_key("iface.name"), "{addr}: {m:?}");
            assert!(m
                .get("iface.mtu_ipv4")
                .is_some_and(|b| b.parse::<u32>().unwrap() >= 1280));
            assert!(m["sysinfo.unreadable"].contains("iface.offload"));
        }
        assert!(!capture(None).contains_key("iface.name"));
    }
}
