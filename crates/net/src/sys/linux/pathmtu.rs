//! Linux path-MTU options (ip(7), ipv6(7)): IP_MTU_DISCOVER / IPV6_MTU_DISCOVER with
//! PMTUDISC_PROBE or PMTUDISC_DONT, IPV6_DONTFRAG, IP_MTU / IPV6_MTU, IP_RECVERR /
//! IPV6_RECVERR and the error queue (recvmsg with MSG_ERRQUEUE: one
//! `sock_extended_err` followed by the offender's address, SO_EE_OFFENDER), the
//! tcp_mtu_probing / tcp_base_mss sysctls, and the sticky IPV6_HOPOPTS / IPV6_DSTOPTS
//! headers (which need CAP_NET_RAW).

use super::errqueue::{read_error_queue, wait_error_queue, ExtendedErr};
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
    let probe = mode == DfMode::Probe;
    if v6 {
        let (discover, dontfrag) = if probe {
            (libc::IPV6_PMTUDISC_PROBE, 1)
        } else {
            (libc::IPV6_PMTUDISC_DONT, 0)
        };
        let ipv6 = libc::IPPROTO_IPV6;
        set(
            fd,
            ipv6,
            libc::IPV6_MTU_DISCOVER,
            discover,
            "IPV6_MTU_DISCOVER",
        )?;
        set(fd, ipv6, libc::IPV6_DONTFRAG, dontfrag, "IPV6_DONTFRAG")
    } else {
        let discover = if probe {
            libc::IP_PMTUDISC_PROBE
        } else {
            libc::IP_PMTUDISC_DONT
        };
        set(
            fd,
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            discover,
            "IP_MTU_DISCOVER",
        )
    }
}

pub(crate) fn is_message_too_big(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EMSGSIZE)
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
    wait_error_queue(&sock.as_fd(), wait).map_err(|e| PathError::os("poll(POLLERR)", e))
}

pub(crate) fn drain_queued_errors<S: AsFd>(sock: &S) -> Result<Vec<QueuedError>, PathError> {
    let mut got = Vec::new();
    read_error_queue(
        sock.as_fd().as_raw_fd(),
        MAX_QUEUED_ERRORS_PER_READ,
        |payload| got.extend(decode(payload)),
    )
    .map_err(|e| PathError::os("recvmsg(MSG_ERRQUEUE)", e))?;
    Ok(got)
}

/// Decodes one `sock_extended_err` and the offender's address after it (SO_EE_OFFENDER:
/// AF_UNSPEC for local errors). `None` when the payload is too short for the struct.
fn decode(payload: &[u8]) -> Option<QueuedError> {
    let (ee, addr) = ExtendedErr::parse(payload)?;
    let origin = match ee.origin {
        libc::SO_EE_ORIGIN_LOCAL => ErrorOrigin::Local,
        libc::SO_EE_ORIGIN_ICMP => ErrorOrigin::Icmp,
        libc::SO_EE_ORIGIN_ICMP6 => ErrorOrigin::Icmp6,
        other => ErrorOrigin::Other(other),
    };
    let errno = i32::try_from(ee.errno).unwrap_or(i32::MAX);
    let kind = match errno {
        libc::EMSGSIZE => QueuedErrorKind::MessageTooBig,
        libc::EHOSTUNREACH | libc::ENETUNREACH | libc::EACCES => QueuedErrorKind::Unreachable,
        libc::ECONNREFUSED => QueuedErrorKind::Refused,
        _ => QueuedErrorKind::Other,
    };
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
        icmp_type: ee.ee_type,
        icmp_code: ee.code,
        mtu_bytes: (kind == QueuedErrorKind::MessageTooBig).then_some(ee.info),
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
