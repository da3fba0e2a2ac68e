//! Windows host metadata: the registry (edition, build, CPU model), GlobalMemoryStatusEx
//! and the interface under test from GetAdaptersAddresses.

use crate::metadata::Capture;
use std::net::IpAddr;
use windows_sys::Win32::Foundation::{CloseHandle, ERROR_BUFFER_OVERFLOW, NO_ERROR};
use windows_sys::Win32::NetworkManagement::IpHelper::{
    GetAdaptersAddresses, GAA_FLAG_SKIP_ANYCAST, GAA_FLAG_SKIP_DNS_SERVER, GAA_FLAG_SKIP_MULTICAST,
    IP_ADAPTER_ADDRESSES_LH,
};
use windows_sys::Win32::NetworkManagement::Ndis::IfOperStatusUp;
use windows_sys::Win32::Networking::WinSock::{
    AF_INET, AF_INET6, AF_UNSPEC, SOCKADDR_IN, SOCKADDR_IN6,
};
use windows_sys::Win32::System::Registry::{
    RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD, RRF_RT_REG_SZ,
};
use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
};

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

pub(crate) fn from_wide(p: *const u16) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut len = 0;
    // SAFETY: `p` is a NUL-terminated UTF-16 string owned by the caller's buffer.
    while unsafe { *p.add(len) } != 0 && len < 4096 {
        len += 1;
    }
    // SAFETY: `len` units before the terminator were just read.
    let units = unsafe { std::slice::from_raw_parts(p, len) };
    Some(String::from_utf16_lossy(units))
}

fn reg_string(key: &str, value: &str) -> Option<String> {
    let (k, v) = (wide(key), wide(value));
    let mut buf = vec![0u16; 512];
    let mut bytes = (buf.len() * 2) as u32;
    // SAFETY: key and value are NUL-terminated; `buf` holds `bytes` bytes.
    let rc = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            k.as_ptr(),
            v.as_ptr(),
            RRF_RT_REG_SZ,
            std::ptr::null_mut(),
            buf.as_mut_ptr().cast(),
            &mut bytes,
        )
    };
    (rc == 0).then(|| from_wide(buf.as_ptr())).flatten()
}

fn reg_dword(key: &str, value: &str) -> Option<u32> {
    let (k, v) = (wide(key), wide(value));
    let mut out = 0u32;
    let mut bytes = 4u32;
    // SAFETY: key and value are NUL-terminated; `out` holds 4 bytes.
    let rc = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            k.as_ptr(),
            v.as_ptr(),
            RRF_RT_REG_DWORD,
            std::ptr::null_mut(),
            (&mut out as *mut u32).cast(),
            &mut bytes,
        )
    };
    (rc == 0).then_some(out)
}

pub(crate) fn host_name() -> Option<String> {
    std::env::var("COMPUTERNAME").ok()
}

pub(crate) fn process_alive(pid: u32) -> bool {
    const STILL_ACTIVE: u32 = 259;
    // SAFETY: OpenProcess returns null or a handle we close below.
    let h = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if h.is_null() {
        // Access denied means it exists.
        return std::io::Error::last_os_error().raw_os_error() == Some(5);
    }
    let mut code = 0u32;
    // SAFETY: `h` is a valid process handle; `code` is valid for writes.
    let ok = unsafe { GetExitCodeProcess(h, &mut code) };
    // SAFETY: `h` is closed once.
    unsafe { CloseHandle(h) };
    ok != 0 && code == STILL_ACTIVE
}

const CURRENT_VERSION: &str = r"SOFTWARE\Microsoft\Windows NT\CurrentVersion";
const CPU0: &str = r"HARDWARE\DESCRIPTION\System\CentralProcessor\0";

pub(crate) fn host_fields(c: &mut Capture) {
    c.set("os.name", Some("Windows".to_string()));
    c.set("os.pretty_name", reg_string(CURRENT_VERSION, "ProductName"));
    c.set("os.edition", reg_string(CURRENT_VERSION, "EditionID"));
    c.set(
        "os.version",
        reg_string(CURRENT_VERSION, "DisplayVersion")
            .or_else(|| reg_string(CURRENT_VERSION, "ReleaseId")),
    );
    c.set("os.id", Some("windows".to_string()));
    let build = reg_string(CURRENT_VERSION, "CurrentBuild").map(|b| {
        match reg_dword(CURRENT_VERSION, "UBR") {
            Some(ubr) => format!("{b}.{ubr}"),
            None => b,
        }
    });
    c.set("kernel.release", build);
    c.set("host.name", host_name());
    c.set("cpu.model", reg_string(CPU0, "ProcessorNameString"));
    c.set(
        "cpu.cores",
        std::thread::available_parallelism()
            .ok()
            .map(|n| n.get().to_string()),
    );
    c.set(
        "cpu.max_freq_khz",
        reg_dword(CPU0, "~MHz").map(|mhz| (u64::from(mhz) * 1000).to_string()),
    );
    // SAFETY: MEMORYSTATUSEX is plain data; dwLength must be set before the call.
    let mut mem: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
    mem.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
    // SAFETY: `mem` is valid for writes with its length set.
    let ok = unsafe { GlobalMemoryStatusEx(&mut mem) };
    c.set(
        "mem.total_bytes",
        (ok != 0).then(|| mem.ullTotalPhys.to_string()),
    );
    let v6 = std::net::UdpSocket::bind("[::1]:0").is_ok();
    c.set(
        "ipv6.enabled",
        Some(if v6 { "yes" } else { "no" }.to_string()),
    );
}

/// The adapter holding `addr`, from GetAdaptersAddresses: name, MTU, link speed and
/// state (driver, firmware and offloads are not read on Windows).
pub(crate) fn iface_fields_of(c: &mut Capture, addr: IpAddr) {
    let found = with_adapter_of(addr, |a| {
        c.set("iface.name", from_wide(a.FriendlyName));
        c.set("iface.driver", from_wide(a.Description));
        c.set("iface.mtu_ipv4", Some(a.Mtu.to_string()));
        c.set("iface.mtu_ipv6", Some(a.Mtu.to_string()));
        c.set(
            "iface.speed_mbps",
            (a.TransmitLinkSpeed > 0 && a.TransmitLinkSpeed != u64::MAX)
                .then(|| (a.TransmitLinkSpeed / 1_000_000).to_string()),
        );
        c.set(
            "iface.operstate",
            Some(
                if a.OperStatus == IfOperStatusUp {
                    "up"
                } else {
                    "down"
                }
                .to_string(),
            ),
        );
        c.missing
            .push("iface.firmware, iface.offload.* (not read on Windows)".to_string());
    });
    match found {
        Ok(Some(())) => {}
        Ok(None) => c.missing.push(format!("iface (no interface holds {addr})")),
        Err(rc) => c
            .missing
            .push(format!("iface (GetAdaptersAddresses failed: error {rc})")),
    }
}

/// `f` applied to the adapter (from GetAdaptersAddresses) that holds `addr`;
/// `Ok(None)` if none does, `Err(code)` if the call failed.
pub(crate) fn with_adapter_of<R>(
    addr: IpAddr,
    f: impl FnOnce(&IP_ADAPTER_ADDRESSES_LH) -> R,
) -> Result<Option<R>, u32> {
    let mut size: u32 = 16 * 1024;
    let mut buf: Vec<u64> = Vec::new();
    let flags = GAA_FLAG_SKIP_ANYCAST | GAA_FLAG_SKIP_MULTICAST | GAA_FLAG_SKIP_DNS_SERVER;
    let mut rc = ERROR_BUFFER_OVERFLOW;
    for _ in 0..3 {
        buf = vec![0u64; (size as usize).div_ceil(8)];
        // SAFETY: `buf` holds `size` bytes, 8-byte aligned as the structures need.
        rc = unsafe {
            GetAdaptersAddresses(
                u32::from(AF_UNSPEC),
                flags,
                std::ptr::null(),
                buf.as_mut_ptr().cast(),
                &mut size,
            )
        };
        if rc != ERROR_BUFFER_OVERFLOW {
            break;
        }
    }
    if rc != NO_ERROR {
        return Err(rc);
    }
    let mut cur = buf.as_ptr() as *const IP_ADAPTER_ADDRESSES_LH;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list GetAdaptersAddresses wrote into `buf`.
        let a = unsafe { &*cur };
        cur = a.Next;
        let mut u = a.FirstUnicastAddress;
        let mut holds = false;
        while !u.is_null() {
            // SAFETY: `u` is a node of this adapter's unicast list inside `buf`.
            let ua = unsafe { &*u };
            u = ua.Next;
            if let Some(ip) = sockaddr_ip(ua.Address.lpSockaddr) {
                holds |= ip == addr;
            }
        }
        if holds {
            return Ok(Some(f(a)));
        }
    }
    Ok(None)
}

fn sockaddr_ip(p: *const windows_sys::Win32::Networking::WinSock::SOCKADDR) -> Option<IpAddr> {
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` points to a SOCKADDR whose family says its real type.
    let family = unsafe { (*p).sa_family };
    if family == AF_INET {
        // SAFETY: AF_INET: a SOCKADDR_IN.
        let sin = unsafe { &*(p as *const SOCKADDR_IN) };
        // SAFETY: every view of the IN_ADDR union is 4 plain bytes.
        let raw = unsafe { sin.sin_addr.S_un.S_addr };
        Some(IpAddr::from(u32::from_be(raw).to_be_bytes()))
    } else if family == AF_INET6 {
        // SAFETY: AF_INET6: a SOCKADDR_IN6.
        let sin6 = unsafe { &*(p as *const SOCKADDR_IN6) };
        // SAFETY: every view of the IN6_ADDR union is 16 plain bytes.
        let bytes = unsafe { sin6.sin6_addr.u.Byte };
        Some(IpAddr::from(bytes))
    } else {
        None
    }
}
