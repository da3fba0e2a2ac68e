//! System metadata of the host under test: OS, kernel, CPU, memory, the interface a
//! test uses (driver, firmware, MTU, speed, offloads), TCP congestion control and socket
//! buffer limits. Read from /proc, /sys and /etc, plus read-only ethtool ioctls
//! (ETHTOOL_GDRVINFO and the legacy offload getters) on a datagram socket; no external
//! binaries. Every field that cannot be read is absent, and its key is listed in
//! `sysinfo.unreadable`. Never panics.
//!
//! Keys (all values are text): `os.name`, `os.version`, `os.pretty_name`, `os.id`,
//! `kernel.release`, `kernel.version`, `host.name`, `cpu.model`, `cpu.cores`,
//! `cpu.governor`, `cpu.max_freq_khz`, `mem.total_bytes`, `iface.name`,
//! `iface.driver`, `iface.driver_version`, `iface.firmware`, `iface.bus`,
//! `iface.speed_mbps`, `iface.mtu_ipv4`, `iface.mtu_ipv6`, `iface.operstate`,
//! `iface.offload.{rx_checksum,tx_checksum,scatter_gather,tso,gso,gro}` ("on"/"off"),
//! `tcp.congestion_control`, `tcp.available_congestion_control`,
//! `net.rmem_max_bytes`, `net.wmem_max_bytes`, `net.tcp_rmem_bytes`,
//! `net.tcp_wmem_bytes` ("min default max"), `ipv6.enabled` ("yes"/"no"),
//! `ipv6.iface_enabled`, `sysinfo.unreadable`.

use std::collections::BTreeMap;
use std::net::IpAddr;

/// Capture what is known about this host. `local_addr` is the address the test uses
/// on this host (to find its interface); `None` describes the host only.
pub fn capture(local_addr: Option<IpAddr>) -> BTreeMap<String, String> {
    let mut c = Capture::default();
    host_fields(&mut c);
    if let Some(addr) = local_addr {
        match interface_of(addr) {
            Some(name) => iface_fields(&mut c, &name),
            None => c.missing.push(format!("iface (no interface holds {addr})")),
        }
    }
    c.finish()
}

#[derive(Default)]
struct Capture {
    out: BTreeMap<String, String>,
    missing: Vec<String>,
}

impl Capture {
    fn set(&mut self, key: &str, value: Option<String>) {
        match value
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
        {
            Some(v) => {
                self.out.insert(key.to_string(), v);
            }
            None => self.missing.push(key.to_string()),
        }
    }
    fn finish(mut self) -> BTreeMap<String, String> {
        if !self.missing.is_empty() {
            self.out
                .insert("sysinfo.unreadable".into(), self.missing.join(", "));
        }
        self.out
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// This host's name ("unknown" if unreadable), as campaign locks record it.
pub fn host_name() -> String {
    read("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}

/// Whether a process with this PID exists on this host (`/proc/PID`).
pub fn process_alive(pid: u32) -> bool {
    pid != 0 && std::path::Path::new(&format!("/proc/{pid}")).exists()
}

fn host_fields(c: &mut Capture) {
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

/// `KEY=value` lines of os-release(5), quotes removed.
pub fn parse_os_release(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                .unwrap_or(v);
            (k.trim().to_string(), v.to_string())
        })
        .collect()
}

/// (model name, logical CPU count) from /proc/cpuinfo (x86 `model name`, ARM
/// `Model`/`CPU part` fallbacks).
pub fn parse_cpuinfo(text: &str) -> (Option<String>, usize) {
    let mut model = None;
    let mut count = 0;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let k = k.trim();
        if k == "processor" {
            count += 1;
        } else if model.is_none() && (k == "model name" || k == "Model" || k == "cpu model") {
            model = Some(v.trim().to_string());
        }
    }
    (model, count)
}

/// MemTotal in bytes from /proc/meminfo.
pub fn parse_meminfo_total_bytes(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut parts = line.split_whitespace().skip(1);
    let n: u64 = parts.next()?.parse().ok()?;
    let mult = match parts.next() {
        Some("kB") | Some("KB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    n.checked_mul(mult)
}

/// The interface names of /proc/net/if_inet6 lines holding `addr`.
pub fn parse_if_inet6(text: &str, addr: std::net::Ipv6Addr) -> Option<String> {
    let want: String = addr.octets().iter().map(|b| format!("{b:02x}")).collect();
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() >= 6 && f[0].eq_ignore_ascii_case(&want)).then(|| f[5].to_string())
    })
}

fn normalise_ws(t: &str) -> String {
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// "yes" when the kernel has IPv6 and it is not disabled globally.
fn ipv6_enabled(proc_present: bool, disable_all: Option<&str>) -> &'static str {
    match (proc_present, disable_all.map(str::trim)) {
        (false, _) => "no",
        (true, Some("1")) => "no",
        _ => "yes",
    }
}

/// The interface that holds `addr` (loopback addresses: `lo`).
fn interface_of(addr: IpAddr) -> Option<String> {
    if let IpAddr::V6(v6) = addr {
        if let Some(name) = read("/proc/net/if_inet6").and_then(|t| parse_if_inet6(&t, v6)) {
            return Some(name);
        }
    }
    if let Some(name) = ifaddrs::name_of(addr) {
        return Some(name);
    }
    addr.is_loopback().then(|| "lo".to_string())
}

mod ifaddrs {
    use std::ffi::CStr;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    /// Name of the interface with address `addr`, from getifaddrs(3).
    pub fn name_of(addr: IpAddr) -> Option<String> {
        let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
        // SAFETY: getifaddrs writes a list head we free below with freeifaddrs.
        if unsafe { libc::getifaddrs(&mut head) } != 0 {
            return None;
        }
        let mut found = None;
        let mut cur = head;
        while !cur.is_null() {
            // SAFETY: cur is a node of the list getifaddrs returned, not yet freed.
            let ifa = unsafe { &*cur };
            cur = ifa.ifa_next;
            if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
                continue;
            }
            // SAFETY: ifa_addr points to a sockaddr whose family says its real type.
            let family = i32::from(unsafe { (*ifa.ifa_addr).sa_family });
            let a = if family == libc::AF_INET {
                // SAFETY: family is AF_INET, so this is a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                IpAddr::V4(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)))
            } else if family == libc::AF_INET6 {
                // SAFETY: family is AF_INET6, so this is a sockaddr_in6.
                let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr))
            } else {
                continue;
            };
            if a == addr {
                // SAFETY: ifa_name is a NUL-terminated string owned by the list.
                let name = unsafe { CStr::from_ptr(ifa.ifa_name) };
                found = Some(name.to_string_lossy().into_owned());
                break;
            }
        }
        // SAFETY: head came from a successful getifaddrs and is freed once.
        unsafe { libc::freeifaddrs(head) };
        found
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
