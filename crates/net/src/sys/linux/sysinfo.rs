//! Linux host metadata: /proc, /sys, /etc/os-release, getifaddrs and read-only ethtool
//! ioctls (ETHTOOL_GDRVINFO and the legacy offload getters) on a datagram socket.

use crate::metadata::{
    ipv6_enabled, normalise_ws, parse_cpuinfo, parse_if_inet6, parse_meminfo_total_bytes,
    parse_os_release, Capture,
};
use std::net::IpAddr;

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

pub(crate) fn host_name() -> Option<String> {
    read("/proc/sys/kernel/hostname")
}

pub(crate) fn process_alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// The interface fields of the interface holding `addr`.
pub(crate) fn iface_fields_of(c: &mut Capture, addr: IpAddr) {
    match interface_of(addr) {
        Some(name) => iface_fields(c, &name),
        None => c.missing.push(format!("iface (no interface holds {addr})")),
    }
}

pub(crate) fn host_fields(c: &mut Capture) {
    let os = read("/etc/os-release")
        .or_else(|| read("/usr/lib/os-release"))
        .map(|t| parse_os_release(&t))
        .unwrap_or_default();
    c.set("os.name", os.get("NAME").cloned());
    c.set(
        "os.version",
        os.get("VERSION").or_else(|| os.get("VERSION_ID")).cloned(),
    );
    c.set("os.pretty_name", os.get("PRETTY_NAME").cloned());
    c.set("os.id", os.get("ID").cloned());
    c.set("kernel.release", read("/proc/sys/kernel/osrelease"));
    c.set("kernel.version", read("/proc/sys/kernel/version"));
    c.set("host.name", read("/proc/sys/kernel/hostname"));
    c.set(
        crate::metadata::BOOT_ID_KEY,
        read("/proc/sys/kernel/random/boot_id"),
    );
    let cpu = read("/proc/cpuinfo").map(|t| parse_cpuinfo(&t));
    c.set("cpu.model", cpu.as_ref().and_then(|(m, _)| m.clone()));
    let cores = cpu
        .as_ref()
        .map(|(_, n)| *n)
        .filter(|n| *n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()));
    c.set("cpu.cores", cores.map(|n| n.to_string()));
    c.set(
        "cpu.governor",
        read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
    );
    c.set(
        "cpu.max_freq_khz",
        read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"),
    );
    c.set(
        "mem.total_bytes",
        read("/proc/meminfo")
            .and_then(|t| parse_meminfo_total_bytes(&t))
            .map(|b| b.to_string()),
    );
    c.set(
        "tcp.congestion_control",
        read("/proc/sys/net/ipv4/tcp_congestion_control"),
    );
    c.set(
        "tcp.available_congestion_control",
        read("/proc/sys/net/ipv4/tcp_available_congestion_control"),
    );
    c.set("net.rmem_max_bytes", read("/proc/sys/net/core/rmem_max"));
    c.set("net.wmem_max_bytes", read("/proc/sys/net/core/wmem_max"));
    c.set(
        "net.tcp_rmem_bytes",
        read("/proc/sys/net/ipv4/tcp_rmem").map(|t| normalise_ws(&t)),
    );
    c.set(
        "net.tcp_wmem_bytes",
        read("/proc/sys/net/ipv4/tcp_wmem").map(|t| normalise_ws(&t)),
    );
    let v6 = ipv6_enabled(
        std::path::Path::new("/proc/net/if_inet6").exists(),
        read("/proc/sys/net/ipv6/conf/all/disable_ipv6").as_deref(),
    );
    c.set("ipv6.enabled", Some(v6.to_string()));
}

fn iface_fields(c: &mut Capture, name: &str) {
    c.set("iface.name", Some(name.to_string()));
    let sys = format!("/sys/class/net/{name}");
    let driver = std::fs::read_link(format!("{sys}/device/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()));
    let drv = ethtool::drvinfo(name);
    c.set(
        "iface.driver",
        driver
            .or_else(|| drv.as_ref().map(|d| d.driver.clone()))
            .or_else(|| (name == "lo").then(|| "loopback (virtual)".to_string())),
    );
    if let Some(d) = &drv {
        c.set("iface.driver_version", Some(d.version.clone()));
        c.set("iface.firmware", Some(d.fw_version.clone()));
        c.set("iface.bus", Some(d.bus_info.clone()));
    } else {
        c.missing
            .push("iface.firmware (ETHTOOL_GDRVINFO refused)".into());
    }
    c.set(
        "iface.speed_mbps",
        read(&format!("{sys}/speed"))
            .and_then(|s| s.trim().parse::<i64>().ok())
            .filter(|s| *s > 0)
            .map(|s| s.to_string()),
    );
    c.set("iface.mtu_ipv4", read(&format!("{sys}/mtu")));
    c.set(
        "iface.mtu_ipv6",
        read(&format!("/proc/sys/net/ipv6/conf/{name}/mtu")),
    );
    c.set("iface.operstate", read(&format!("{sys}/operstate")));
    if let Some(dis) = read(&format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6")) {
        let on = if dis.trim() == "0" { "yes" } else { "no" };
        c.set("ipv6.iface_enabled", Some(on.to_string()));
    }
    for (key, cmd) in ethtool::OFFLOADS {
        let v = ethtool::get_value(name, *cmd).map(|on| if on { "on" } else { "off" }.to_string());
        c.set(&format!("iface.offload.{key}"), v);
    }
}

/// The interface that holds `addr` (loopback addresses: `lo`).
fn interface_of(addr: IpAddr) -> Option<String> {
    if let IpAddr::V6(v6) = addr {
        if let Some(name) = read("/proc/net/if_inet6").and_then(|t| parse_if_inet6(&t, v6)) {
            return Some(name);
        }
    }
    if let Some(name) = crate::sys::unix_common::interface_name_of(addr) {
        return Some(name);
    }
    addr.is_loopback().then(|| "lo".to_string())
}

/// Read-only ethtool ioctls (no `ethtool` binary needed).
mod ethtool {
    const SIOCETHTOOL: libc::c_ulong = 0x8946;
    const ETHTOOL_GDRVINFO: u32 = 0x0000_0003;
    /// (key, legacy ETHTOOL_G* command) of the offloads we report.
    pub const OFFLOADS: &[(&str, u32)] = &[
        ("rx_checksum", 0x0000_0014),
        ("tx_checksum", 0x0000_0016),
        ("scatter_gather", 0x0000_0018),
        ("tso", 0x0000_001e),
        ("gso", 0x0000_0023),
        ("gro", 0x0000_002b),
    ];

    #[repr(C)]
    struct DrvInfo {
        cmd: u32,
        driver: [u8; 32],
        version: [u8; 32],
        fw_version: [u8; 32],
        bus_info: [u8; 32],
        erom_version: [u8; 32],
        reserved2: [u8; 12],
        n_priv_flags: u32,
        n_stats: u32,
        testinfo_len: u32,
        eedump_len: u32,
        regdump_len: u32,
    }

    #[repr(C)]
    struct Value {
        cmd: u32,
        data: u32,
    }

    #[repr(C)]
    struct IfReq {
        name: [u8; libc::IFNAMSIZ],
        data: *mut libc::c_void,
        _pad: [u8; 16],
    }

    pub struct Driver {
        pub driver: String,
        pub version: String,
        pub fw_version: String,
        pub bus_info: String,
    }

    fn cstr(b: &[u8]) -> String {
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).into_owned()
    }

    /// Issue one SIOCETHTOOL request with `data` as the command block.
    fn ioctl<T>(iface: &str, data: &mut T) -> bool {
        let bytes = iface.as_bytes();
        if bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
            return false;
        }
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            data: (data as *mut T).cast(),
            _pad: [0; 16],
        };
        req.name[..bytes.len()].copy_from_slice(bytes);
        // SAFETY: plain socket(2) call; the fd is closed below.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return false;
        }
        // SAFETY: req is a valid ifreq whose data points to a command block of the
        // layout the kernel expects for the command in its first word; both outlive
        // the call.
        let rc = unsafe { libc::ioctl(fd, SIOCETHTOOL as _, &mut req as *mut IfReq) };
        // SAFETY: fd was opened above and is closed once.
        unsafe { libc::close(fd) };
        rc == 0
    }

    pub fn drvinfo(iface: &str) -> Option<Driver> {
        // SAFETY: DrvInfo is plain old data; all-zero is a valid value.
        let mut d: DrvInfo = unsafe { std::mem::zeroed() };
        d.cmd = ETHTOOL_GDRVINFO;
        if !ioctl(iface, &mut d) {
            return None;
        }
        Some(Driver {
            driver: cstr(&d.driver),
            version: cstr(&d.version),
            fw_version: cstr(&d.fw_version),
            bus_info: cstr(&d.bus_info),
        })
    }

    pub fn get_value(iface: &str, cmd: u32) -> Option<bool> {
        let mut v = Value { cmd, data: 0 };
        ioctl(iface, &mut v).then_some(v.data != 0)
    }
}
