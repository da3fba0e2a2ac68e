//! What Linux and the other Unixes share: libc socket options on a raw fd, errno
//! meanings, getrusage and getifaddrs.

use std::ffi::CStr;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::RawFd;

pub(crate) fn set_int(fd: RawFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: `value` lives for the call and its exact size is passed; the kernel copies it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

pub(crate) fn get_int(fd: RawFd, level: i32, name: i32) -> io::Result<i32> {
    let mut value: i32 = 0;
    let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
    // SAFETY: `value` and `len` are valid for writes; `len` holds the buffer's size.
    let rc =
        unsafe { libc::getsockopt(fd, level, name, (&mut value as *mut i32).cast(), &mut len) };
    if rc == 0 {
        Ok(value)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// ENOBUFS: the interface queue is full; a UDP sender retries.
pub(crate) fn is_no_buffer_space(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOBUFS)
}

/// EAFNOSUPPORT: the address family (IPv6) is not supported by the kernel.
pub(crate) fn is_af_unsupported(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EAFNOSUPPORT)
}

/// No route to the host or network, or the address is not local.
pub(crate) fn is_unreachable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EHOSTUNREACH) | Some(libc::ENETUNREACH) | Some(libc::EADDRNOTAVAIL)
    )
}

/// ENOSYS / EOPNOTSUPP: the call or option does not exist here.
pub(crate) fn is_unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
    )
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add((tv.tv_usec.max(0) as u64).saturating_mul(1000))
}

/// getrusage(RUSAGE_SELF): all threads; microsecond resolution.
pub(crate) fn process_cpu_times() -> wire::cpu::ProcessCpuTimes {
    // SAFETY: rusage is a plain C struct for which all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid for writes; RUSAGE_SELF is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        // getrusage(RUSAGE_SELF) cannot fail with a valid pointer.
        return wire::cpu::ProcessCpuTimes::default();
    }
    wire::cpu::ProcessCpuTimes {
        user_ns: timeval_ns(ru.ru_utime),
        system_ns: timeval_ns(ru.ru_stime),
    }
}

/// Name of the interface with address `addr`, from getifaddrs(3).
/// Name of the interface with address `addr`, from getifaddrs(3).
pub(crate) fn interface_name_of(addr: IpAddr) -> Option<String> {
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
