//! Linux socket options: raw setsockopt/getsockopt for what socket2 does not cover
//! (SO_*BUFFORCE, path-MTU discovery, the flow label manager), with Linux's errno
//! meanings turned into words.

use crate::error::NetError;
pub(crate) use crate::sys::unix_common::{get_int, set_int};
use crate::sys::{sockopt_err, SockKind};
use socket2::SockRef;
use std::io;
use std::net::SocketAddrV6;
use std::os::fd::AsRawFd;

const AVAILABLE_CC_PATH: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// Linux reports SO_SNDBUF/SO_RCVBUF as twice what was asked (the kernel's bookkeeping
/// overhead): a read-back below this factor × the request means the request was capped.
pub(crate) const BUFFER_READBACK_FACTOR: u64 = 2;

/// SO_RCVLOWAT: a blocked reader is woken once this many bytes are queued (or its
/// receive timeout expires, or the peer closes).
pub(crate) fn set_recv_lowat(s: &SockRef<'_>, bytes: i32) -> io::Result<()> {
    set_int(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVLOWAT, bytes)
}

/// Whether the socket is AF_INET6 (SO_DOMAIN).
pub(crate) fn is_ipv6(s: &SockRef<'_>) -> io::Result<bool> {
    Ok(s.domain()? == socket2::Domain::IPV6)
}

/// The sysctl that caps a buffer request.
pub(crate) fn buffer_limit_name(send: bool) -> &'static str {
    if send {
        "net.core.wmem_max"
    } else {
        "net.core.rmem_max"
    }
}

/// Set a buffer past the sysctl cap (SO_SNDBUFFORCE / SO_RCVBUFFORCE, CAP_NET_ADMIN).
pub(crate) fn force_buffer(s: &SockRef<'_>, send: bool, value: i32) -> io::Result<()> {
    let name = if send {
        libc::SO_SNDBUFFORCE
    } else {
        libc::SO_RCVBUFFORCE
    };
    set_int(s.as_raw_fd(), libc::SOL_SOCKET, name, value)
}

pub(crate) fn set_mss(s: &SockRef<'_>, mss: u32) -> Result<(), NetError> {
    s.set_tcp_mss(mss).map_err(|e| match e.raw_os_error() {
        Some(libc::EINVAL) => NetError::InvalidOption(format!(
            "MSS {mss} is out of range: Linux accepts 88 to 32767 bytes"
        )),
        _ => sockopt_err("TCP_MAXSEG", mss, e),
    })
}

pub(crate) fn mss(s: &SockRef<'_>) -> Option<u32> {
    s.tcp_mss().ok()
}

pub(crate) fn available_congestion_controls() -> Vec<String> {
    std::fs::read_to_string(AVAILABLE_CC_PATH)
        .map(|t| t.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

pub(crate) fn set_congestion(s: &SockRef<'_>, name: &str) -> Result<(), NetError> {
    match s.set_tcp_congestion(name.as_bytes()) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Err(NetError::UnknownCongestion {
            name: name.to_string(),
            available: available_congestion_controls(),
        }),
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => Err(NetError::InvalidOption(format!(
            "TCP congestion control '{name}' is not in net.ipv4.tcp_allowed_congestion_control; \
             add it there or run as root"
        ))),
        Err(e) => Err(sockopt_err("TCP_CONGESTION", name, e)),
    }
}

pub(crate) fn congestion(s: &SockRef<'_>) -> Option<String> {
    s.tcp_congestion().ok().map(|b| {
        String::from_utf8_lossy(&b)
            .trim_end_matches('\0')
            .to_string()
    })
}

pub(crate) fn set_tos(s: &SockRef<'_>, kind: SockKind, tos: u8) -> Result<(), NetError> {
    let r = if kind.v6 {
        s.set_tclass_v6(u32::from(tos))
    } else {
        s.set_tos_v4(u32::from(tos))
    };
    r.map_err(|e| sockopt_err(if kind.v6 { "IPV6_TCLASS" } else { "IP_TOS" }, tos, e))
}

pub(crate) fn tos(s: &SockRef<'_>, kind: SockKind) -> Option<u8> {
    if kind.v6 {
        s.tclass_v6().ok().map(|t| t as u8)
    } else {
        s.tos_v4().ok().map(|t| t as u8)
    }
}

/// Why the applied TOS can differ from the asked one on this OS.
pub(crate) fn tos_note(kind: SockKind) -> &'static str {
    if kind.tcp {
        " (Linux keeps the ECN bits of a TCP socket for itself)"
    } else {
        ""
    }
}

pub(crate) fn set_dont_fragment(s: &SockRef<'_>, kind: SockKind) -> Result<(), NetError> {
    let fd = s.as_raw_fd();
    if kind.v6 {
        set_int(
            fd,
            libc::IPPROTO_IPV6,
            libc::IPV6_MTU_DISCOVER,
            libc::IPV6_PMTUDISC_DO,
        )
        .map_err(|e| sockopt_err("IPV6_MTU_DISCOVER", "IPV6_PMTUDISC_DO", e))?;
        if !kind.tcp {
            set_int(fd, libc::IPPROTO_IPV6, libc::IPV6_DONTFRAG, 1)
                .map_err(|e| sockopt_err("IPV6_DONTFRAG", 1, e))?;
        }
    } else {
        set_int(
            fd,
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_DO,
        )
        .map_err(|e| sockopt_err("IP_MTU_DISCOVER", "IP_PMTUDISC_DO", e))?;
    }
    Ok(())
}

pub(crate) fn dont_fragment(s: &SockRef<'_>, kind: SockKind) -> Option<bool> {
    let fd = s.as_raw_fd();
    if kind.v6 {
        get_int(fd, libc::IPPROTO_IPV6, libc::IPV6_MTU_DISCOVER)
            .ok()
            .map(|v| v == libc::IPV6_PMTUDISC_DO)
    } else {
        get_int(fd, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER)
            .ok()
            .map(|v| v == libc::IP_PMTUDISC_DO)
    }
}

/// IPV6_FLOWINFO_SEND: send with the flow label of the destination's flowinfo.
pub(crate) fn enable_flowinfo_send(s: &SockRef<'_>) -> Result<(), NetError> {
    set_int(
        s.as_raw_fd(),
        libc::IPPROTO_IPV6,
        libc::IPV6_FLOWINFO_SEND,
        1,
    )
    .map_err(|e| sockopt_err("IPV6_FLOWINFO_SEND", 1, e))
}

// <linux/in6.h> flow label manager (not in the libc crate).
const IPV6_FL_A_GET: u8 = 0;
const IPV6_FL_S_USER: u8 = 3;
const IPV6_FL_F_CREATE: u16 = 1;

/// `struct in6_flowlabel_req` from <linux/in6.h>.
#[repr(C)]
struct In6FlowlabelReq {
    flr_dst: [u8; 16],
    /// Network byte order.
    flr_label: u32,
    flr_action: u8,
    flr_share: u8,
    flr_flags: u16,
    flr_expires: u16,
    flr_linger: u16,
    flr_pad: u32,
}

/// Linux flow label manager: IPV6_FLOWLABEL_MGR with IPV6_FL_F_CREATE, shared with
/// sockets of the same user, then IPV6_FLOWINFO_SEND. Returns `peer` with the label in
/// its flowinfo, which is how Linux picks the label up on connect or send.
pub(crate) fn register_flowlabel(
    s: &SockRef<'_>,
    peer: SocketAddrV6,
    label: u32,
) -> Result<SocketAddrV6, NetError> {
    let req = In6FlowlabelReq {
        flr_dst: peer.ip().octets(),
        flr_label: label.to_be(),
        flr_action: IPV6_FL_A_GET,
        flr_share: IPV6_FL_S_USER,
        flr_flags: IPV6_FL_F_CREATE,
        flr_expires: 0,
        flr_linger: 0,
        flr_pad: 0,
    };
    // SAFETY: `req` is a properly laid-out in6_flowlabel_req that lives for the call and
    // its exact size is passed; the kernel only reads it for IPV6_FL_A_GET.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_IPV6,
            libc::IPV6_FLOWLABEL_MGR,
            (&req as *const In6FlowlabelReq).cast(),
            std::mem::size_of::<In6FlowlabelReq>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ERANGE) | Some(libc::EINVAL) if label >= 0x8_0000 => {
                NetError::InvalidOption(format!(
                    "flow label {label:#x} is in the stateless range (0x80000 and above) \
                     reserved by net.ipv6.flowlabel_state_ranges=1; use 1 to 0x7ffff"
                ))
            }
            Some(libc::EPERM) => NetError::InvalidOption(format!(
                "flow label {label:#x} is held by another user's socket; pick another"
            )),
            _ => sockopt_err("IPV6_FLOWLABEL_MGR", format!("{label:#x}"), e),
        });
    }
    enable_flowinfo_send(s)?;
    Ok(SocketAddrV6::new(
        *peer.ip(),
        peer.port(),
        label.to_be(),
        peer.scope_id(),
    ))
}
