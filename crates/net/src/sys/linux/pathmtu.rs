//! Linux path-MTU options (ip(7), ipv6(7)): IP_MTU_DISCOVER / IPV6_MTU_DISCOVER with
//! PMTUDISC_PROBE or PMTUDISC_DONT, IPV6_DONTFRAG, IP_MTU / IPV6_MTU, IP_RECVERR /
//! IPV6_RECVERR and the error queue (recvmsg with MSG_ERRQUEUE: one
//! `sock_extended_err` followed by the offender's address, SO_EE_OFFENDER), the
//! tcp_mtu_probing / tcp_base_mss sysctls, and the sticky IPV6_HOPOPTS / IPV6_DSTOPTS
//! headers (which need CAP_NET_RAW).

use crate::pathmtu::{
    DfMode, ErrorOrigin, ExtHeader, PathError, QueuedError, QueuedErrorKind, TcpMtuSysctls,
    MAX_QUEUED_ERRORS_PER_READ, PADN_HEADER,
};
use crate::sys::unix_common::{get_int, set_int};
use socket2::SockRef;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::time::Duration;

const TCP_MTU_PROBING: &str = "/proc/sys/net/ipv4/tcp_mtu_probing";
const TCP_BASE_MSS: &str = "/proc/sys/net/ipv4/tcp_base_mss";

fn fd_and_family<S: AsFd>(sock: &S) -> Result<(RawFd, bool), PathError> {
    let s = SockRef::from(sock);
    let v6 = crate::sys::sockopt::is_ipv6(&s)
        .map_err(|e| PathError::os("reading the socket's address family", e))?;
    Ok((sock.as_fd().as_raw_fd(), v6))
}

fn set(fd: RawFd, level: i32, name: i32, value: i32, what: &str) -> Result<(), PathError> {
    set_int(fd, level, name, value)
        .map_err(|e| PathError::os(format!("setsockopt({what}, {value})"), e))
}

pub(crate) fn set_df_mode<S: AsFd>(sock: &S, mode: DfMode) -> Result<(), PathError> {
    let (fd, v6) = fd_and_family(sock)?;
    match (v6, mode) {
        (true, DfMode::Probe) => {
            set(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_MTU_DISCOVER,
                libc::IPV6_PMTUDISC_PROBE,
                "IPV6_MTU_DISCOVER",
            )?;
            set(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_DONTFRAG,
                1,
                "IPV6_DONTFRAG",
            )
        }
        (true, DfMode::Fragment) => {
            set(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_MTU_DISCOVER,
                libc::IPV6_PMTUDISC_DONT,
                "IPV6_MTU_DISCOVER",
            )?;
            set(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_DONTFRAG,
                0,
                "IPV6_DONTFRAG",
            )
        }
        (false, DfMode::Probe) => set(
            fd,
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_PROBE,
            "IP_MTU_DISCOVER",
        ),
        (false, DfMode::Fragment) => set(
            fd,
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_DONT,
            "IP_MTU_DISCOVER",
        ),
    }
}

pub(crate) fn kernel_path_mtu<S: AsFd>(sock: &S) -> Result<u32, PathError> {
    let (fd, v6) = fd_and_family(sock)?;
    let (level, name, what) = if v6 {
        (libc::IPPROTO_IPV6, libc::IPV6_MTU, "IPV6_MTU")
    } else {
        (libc::IPPROTO_IP, libc::IP_MTU, "IP_MTU")
    };
    let mtu = get_int(fd, level, name).map_err(|e| {
        let hint = if e.raw_os_error() == Some(libc::ENOTCONN) {
            " (the socket must be connected to its peer)"
        } else {
            ""
        };
        PathError::os(format!("getsockopt({what}){hint}"), e)
    })?;
    u32::try_from(mtu).map_err(|_| {
        PathError::os(
            format!("getsockopt({what})"),
            io::Error::new(io::ErrorKind::InvalidData, format!("negative MTU {mtu}")),
        )
    })
}

pub(crate) fn enable_error_queue<S: AsFd>(sock: &S) -> Result<(), PathError> {
    let (fd, v6) = fd_and_family(sock)?;
    if v6 {
        set(
            fd,
            libc::IPPROTO_IPV6,
            libc::IPV6_RECVERR,
            1,
            "IPV6_RECVERR",
        )
    } else {
        set(fd, libc::IPPROTO_IP, libc::IP_RECVERR, 1, "IP_RECVERR")
    }
}

pub(crate) fn wait_queued_errors<S: AsFd>(sock: &S, wait: Duration) -> Result<bool, PathError> {
    crate::sys::zerocopy::wait_error_queue(&sock.as_fd(), wait)
        .map_err(|e| PathError::os("poll(POLLERR)", e))
}

pub(crate) fn drain_queued_errors<S: AsFd>(sock: &S) -> Result<Vec<QueuedError>, PathError> {
    let fd = sock.as_fd().as_raw_fd();
    let mut got = Vec::new();
    for _ in 0..MAX_QUEUED_ERRORS_PER_READ {
        // Aligned for cmsghdr; holds the header, one sock_extended_err and the
        // offender's address (at most a sockaddr_in6) with room to spare.
        let mut control = [0u64; 16];
        // The offending datagram's payload is not needed: a small buffer, truncated.
        let mut data = [0u8; 64];
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: data.len(),
        };
        // SAFETY: an all-zero msghdr is valid (no name, no data, no control).
        let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
        hdr.msg_iov = &mut iov;
        hdr.msg_iovlen = 1;
        hdr.msg_control = control.as_mut_ptr().cast();
        hdr.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: `hdr` points only at `iov` (which points at `data`) and `control`,
        // all of which live for the call and whose sizes are given; MSG_ERRQUEUE with
        // MSG_DONTWAIT never blocks.
        let rc = unsafe { libc::recvmsg(fd, &mut hdr, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(got),
                _ => Err(PathError::os("recvmsg(MSG_ERRQUEUE)", e)),
            };
        }
        got.extend(parse(&hdr));
    }
    Ok(got)
}

/// The IP_RECVERR / IPV6_RECVERR control messages among `hdr`'s, decoded.
fn parse(hdr: &libc::msghdr) -> Vec<QueuedError> {
    let mut out = Vec::new();
    // SAFETY: `hdr.msg_control`/`msg_controllen` describe the buffer the kernel filled;
    // CMSG_FIRSTHDR/NXTHDR stay inside it and return null at its end.
    let mut c = unsafe { libc::CMSG_FIRSTHDR(hdr) };
    while !c.is_null() {
        // SAFETY: `c` is non-null and points to a complete cmsghdr inside the buffer.
        let (level, ty, len) = unsafe { ((*c).cmsg_level, (*c).cmsg_type, (*c).cmsg_len) };
        let recverr = (level == libc::SOL_IP && ty == libc::IP_RECVERR)
            || (level == libc::SOL_IPV6 && ty == libc::IPV6_RECVERR);
        // SAFETY: CMSG_LEN only computes a length.
        let header = unsafe { libc::CMSG_LEN(0) } as usize;
        // cmsg_len is a size_t with glibc, a socklen_t with musl.
        #[allow(clippy::unnecessary_cast)]
        let len = len as usize;
        if recverr && len > header {
            // SAFETY: the cmsg's payload runs from CMSG_DATA for `len - header` bytes,
            // inside the control buffer (the kernel set cmsg_len; CMSG_NXTHDR relies
            // on the same bound).
            let payload = unsafe { std::slice::from_raw_parts(libc::CMSG_DATA(c), len - header) };
            out.extend(decode(payload));
        }
        // SAFETY: `c` came from this header's buffer.
        c = unsafe { libc::CMSG_NXTHDR(hdr, c) };
    }
    out
}

/// Decodes one `sock_extended_err` and the offender's address after it (linux/errqueue.h:
/// SO_EE_OFFENDER is the sockaddr right after the 16-byte struct; AF_UNSPEC for local
/// errors). `None` when the payload is too short for the struct.
fn decode(payload: &[u8]) -> Option<QueuedError> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_ne_bytes(
            payload.get(at..at + 4)?.try_into().ok()?,
        ))
    };
    let errno = u32_at(0)?;
    let (origin, icmp_type, icmp_code) = (*payload.get(4)?, *payload.get(5)?, *payload.get(6)?);
    let info = u32_at(8)?;
    let origin = match origin {
        libc::SO_EE_ORIGIN_LOCAL => ErrorOrigin::Local,
        libc::SO_EE_ORIGIN_ICMP => ErrorOrigin::Icmp,
        libc::SO_EE_ORIGIN_ICMP6 => ErrorOrigin::Icmp6,
        other => ErrorOrigin::Other(other),
    };
    let errno = i32::try_from(errno).unwrap_or(i32::MAX);
    let kind = match errno {
        libc::EMSGSIZE => QueuedErrorKind::MessageTooBig,
        libc::EHOSTUNREACH | libc::ENETUNREACH | libc::EACCES => QueuedErrorKind::Unreachable,
        libc::ECONNREFUSED => QueuedErrorKind::Refused,
        _ => QueuedErrorKind::Other,
    };
    let addr = payload.get(16..).unwrap_or(&[]);
    let family = addr
        .get(..2)
        .and_then(|b| b.try_into().ok())
        .map(u16::from_ne_bytes);
    let offender = match family.map(i32::from) {
        Some(libc::AF_INET) => addr
            .get(4..8)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(|o| IpAddr::V4(Ipv4Addr::from(o))),
        Some(libc::AF_INET6) => addr
            .get(8..24)
            .and_then(|b| <[u8; 16]>::try_from(b).ok())
            .map(|o| IpAddr::V6(Ipv6Addr::from(o))),
        _ => None,
    };
    Some(QueuedError {
        errno,
        kind,
        origin,
        icmp_type,
        icmp_code,
        mtu_bytes: (kind == QueuedErrorKind::MessageTooBig).then_some(info),
        offender,
    })
}

pub(crate) fn tcp_mtu_sysctls() -> TcpMtuSysctls {
    let read =
        |path: &str| -> Option<u32> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    TcpMtuSysctls {
        mtu_probing: read(TCP_MTU_PROBING),
        base_mss_bytes: read(TCP_BASE_MSS),
    }
}

pub(crate) fn set_ext_header<S: AsFd>(sock: &S, header: ExtHeader) -> Result<(), PathError> {
    let (fd, v6) = fd_and_family(sock)?;
    let option = header.option_name();
    if !v6 {
        return Err(PathError::NotApplicable { what: option });
    }
    let name = match header {
        ExtHeader::HopByHop => libc::IPV6_HOPOPTS,
        ExtHeader::DestOpts => libc::IPV6_DSTOPTS,
    };
    // SAFETY: PADN_HEADER is a constant that outlives the call, and its exact size is
    // passed; the kernel copies it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IPV6,
            name,
            PADN_HEADER.as_ptr().cast(),
            PADN_HEADER.len() as libc::socklen_t,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EPERM) => Err(PathError::NeedsCapNetRaw { option }),
        _ => Err(PathError::os(format!("setsockopt({option})"), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extended_err(errno: i32, origin: u8, ty: u8, info: u32) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend((errno as u32).to_ne_bytes());
        b.extend([origin, ty, 0, 0]);
        b.extend(info.to_ne_bytes());
        b.extend(0u32.to_ne_bytes());
        b
    }

    #[test]
    fn a_packet_too_big_names_its_mtu_and_sender() {
        let mut b = extended_err(libc::EMSGSIZE, libc::SO_EE_ORIGIN_ICMP6, 2, 1280);
        b.extend((libc::AF_INET6 as u16).to_ne_bytes());
        b.extend([0u8; 6]); // port, flowinfo
        b.extend("fd00:231:2::1".parse::<Ipv6Addr>().unwrap().octets());
        b.extend([0u8; 4]); // scope id
        let e = decode(&b).unwrap();
        assert_eq!(e.kind, QueuedErrorKind::MessageTooBig);
        assert_eq!((e.origin, e.icmp_type), (ErrorOrigin::Icmp6, 2));
        assert_eq!(e.mtu_bytes, Some(1280));
        assert_eq!(e.offender, Some("fd00:231:2::1".parse().unwrap()));
    }

    #[test]
    fn a_frag_needed_names_its_ipv4_sender_and_a_local_error_none() {
        let mut b = extended_err(libc::EMSGSIZE, libc::SO_EE_ORIGIN_ICMP, 3, 1280);
        b.extend((libc::AF_INET as u16).to_ne_bytes());
        b.extend([0u8; 2]);
        b.extend([10, 231, 1, 1]);
        b.extend([0u8; 8]);
        let e = decode(&b).unwrap();
        assert_eq!(e.offender, Some(IpAddr::V4(Ipv4Addr::new(10, 231, 1, 1))));
        let mut local = extended_err(libc::ECONNREFUSED, libc::SO_EE_ORIGIN_LOCAL, 0, 7);
        local.extend([0u8; 16]); // AF_UNSPEC
        let e = decode(&local).unwrap();
        assert_eq!(
            (e.kind, e.origin),
            (QueuedErrorKind::Refused, ErrorOrigin::Local)
        );
        assert_eq!((e.mtu_bytes, e.offender), (None, None));
    }

    #[test]
    fn a_short_or_truncated_payload_is_refused_or_has_no_offender() {
        assert_eq!(decode(&[0u8; 15]), None);
        let mut b = extended_err(libc::EMSGSIZE, libc::SO_EE_ORIGIN_ICMP6, 2, 1280);
        b.extend((libc::AF_INET6 as u16).to_ne_bytes());
        b.extend([0u8; 10]); // cut inside the address
        assert_eq!(decode(&b).unwrap().offender, None);
    }
}
