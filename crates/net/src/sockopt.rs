//! Socket settings from [`wire::spec::SocketOpts`]: set what the user asked for, then
//! read back what the kernel actually applied ([`AppliedOpts`]). Linux doubles
//! SO_SNDBUF/SO_RCVBUF, caps them at net.core.{w,r}mem_max, masks the ECN bits of a TCP
//! socket's TOS, and keeps its own MSS until the connection exists: the read-back shows it.
//!
//! Order matters for TCP: buffers, MSS and congestion control must be set before
//! `connect` (client) or on the listener before `listen` (inherited by accepted
//! sockets) to shape the handshake (window scale, advertised MSS). The IPv6 flow label
//! needs the peer address, so it is set by [`register_flowlabel`] just before connect.

use crate::error::NetError;
use serde::{Deserialize, Serialize};
use socket2::{Domain, SockRef, Type};
use std::io;
use std::net::SocketAddrV6;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use wire::spec::SocketOpts;

const AVAILABLE_CC_PATH: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// What the kernel applied, as read back after setting. `None` = not applicable to this
/// socket (e.g. TCP options on UDP) or not readable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedOpts {
    /// SO_SNDBUF as the kernel reports it (Linux: twice the requested size).
    pub sndbuf_bytes: Option<u32>,
    /// SO_RCVBUF as the kernel reports it (Linux: twice the requested size).
    pub rcvbuf_bytes: Option<u32>,
    /// TCP_NODELAY (TCP only).
    pub nodelay: Option<bool>,
    /// TCP_MAXSEG (TCP only): the user's clamp before connect, the real MSS after.
    pub mss_bytes: Option<u32>,
    /// IP_TOS (IPv4) or IPV6_TCLASS (IPv6).
    pub tos: Option<u8>,
    /// The IPv6 flow label registered for sending, if one was asked for.
    pub flowlabel: Option<u32>,
    /// TCP_CONGESTION (TCP only).
    pub congestion: Option<String>,
    /// Path-MTU discovery set to "do" (DF on IPv4; no fragmentation on IPv6).
    pub dont_fragment: Option<bool>,
    /// IPV6_V6ONLY (IPv6 only).
    pub v6only: Option<bool>,
    /// Where the kernel did something other than asked, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

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

/// Address family and transport of a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SockKind {
    pub v6: bool,
    pub tcp: bool,
}

pub(crate) fn sock_kind(sock: &SockRef<'_>) -> Result<SockKind, NetError> {
    let domain = sock
        .domain()
        .map_err(|e| NetError::io("getsockopt(SO_DOMAIN)", e))?;
    let ty = sock
        .r#type()
        .map_err(|e| NetError::io("getsockopt(SO_TYPE)", e))?;
    Ok(SockKind {
        v6: domain == Domain::IPV6,
        tcp: ty == Type::STREAM,
    })
}

/// The TCP congestion control algorithms this host offers.
pub fn available_congestion_controls() -> Vec<String> {
    std::fs::read_to_string(AVAILABLE_CC_PATH)
        .map(|t| t.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Set every option in `opts` that applies to this socket (TCP options are skipped on
/// UDP sockets) except the flow label, then read back what the kernel applied.
pub fn apply_socket_opts<S: AsFd>(sock: &S, opts: &SocketOpts) -> Result<AppliedOpts, NetError> {
    let s = SockRef::from(sock);
    let kind = sock_kind(&s)?;
    let fd = sock.as_fd().as_raw_fd();
    let mut notes = Vec::new();

    if kind.v6 {
        // Fails once bound; the read-back shows what holds.
        let _ = s.set_only_v6(true);
    }
    if let Some(want) = opts.sndbuf_bytes {
        set_buffer(fd, &s, want, true, &mut notes)?;
    }
    if let Some(want) = opts.rcvbuf_bytes {
        set_buffer(fd, &s, want, false, &mut notes)?;
    }
    if kind.tcp {
        if opts.nodelay {
            s.set_tcp_nodelay(true)
                .map_err(|e| sockopt_err("TCP_NODELAY", 1, e))?;
        }
        if let Some(mss) = opts.mss_bytes {
            s.set_tcp_mss(mss).map_err(|e| match e.raw_os_error() {
                Some(libc::EINVAL) => NetError::InvalidOption(format!(
                    "MSS {mss} is out of range: Linux accepts 88 to 32767 bytes"
                )),
                _ => sockopt_err("TCP_MAXSEG", mss, e),
            })?;
        }
        if let Some(cc) = &opts.congestion {
            set_congestion(&s, cc)?;
        }
    }
    if let Some(tos) = opts.tos {
        let r = if kind.v6 {
            s.set_tclass_v6(u32::from(tos))
        } else {
            s.set_tos_v4(u32::from(tos))
        };
        r.map_err(|e| sockopt_err(if kind.v6 { "IPV6_TCLASS" } else { "IP_TOS" }, tos, e))?;
    }
    if opts.dont_fragment {
        set_dont_fragment(fd, kind)?;
    }
    if let Some(label) = opts.flowlabel {
        check_flowlabel(kind, label)?;
        set_int(fd, libc::IPPROTO_IPV6, libc::IPV6_FLOWINFO_SEND, 1)
            .map_err(|e| sockopt_err("IPV6_FLOWINFO_SEND", 1, e))?;
    }

    let mut applied = read_applied(sock)?;
    if let Some(tos) = opts.tos {
        if applied.tos != Some(tos) {
            notes.push(format!(
                "TOS/traffic class {tos:#04x} requested, kernel applied {:#04x}{}",
                applied.tos.unwrap_or(0),
                if kind.tcp {
                    " (Linux keeps the ECN bits of a TCP socket for itself)"
                } else {
                    ""
                }
            ));
        }
    }
    applied.notes = notes;
    Ok(applied)
}

fn sockopt_err(option: &'static str, value: impl ToString, source: io::Error) -> NetError {
    NetError::SockOpt {
        option,
        value: value.to_string(),
        source,
    }
}

fn set_buffer(
    fd: RawFd,
    s: &SockRef<'_>,
    want: u32,
    send: bool,
    notes: &mut Vec<String>,
) -> Result<(), NetError> {
    let (name, force, sysctl) = if send {
        ("SO_SNDBUF", libc::SO_SNDBUFFORCE, "net.core.wmem_max")
    } else {
        ("SO_RCVBUF", libc::SO_RCVBUFFORCE, "net.core.rmem_max")
    };
    let set = if send {
        s.set_send_buffer_size(want as usize)
    } else {
        s.set_recv_buffer_size(want as usize)
    };
    set.map_err(|e| sockopt_err(name, want, e))?;
    let got = if send {
        s.send_buffer_size()
    } else {
        s.recv_buffer_size()
    }
    .map_err(|e| NetError::io(format!("getsockopt({name})"), e))?;
    // Linux reports twice what it granted; less than twice the request means capped.
    if (got as u64) < 2 * u64::from(want) {
        // Capped by the sysctl; with CAP_NET_ADMIN the *FORCE variant goes past it.
        let value = i32::try_from(want).unwrap_or(i32::MAX);
        match set_int(fd, libc::SOL_SOCKET, force, value) {
            Ok(()) => notes.push(format!(
                "{name} {want} is above {sysctl}; set with {name}FORCE"
            )),
            Err(_) => notes.push(format!(
                "{name} {want} capped by {sysctl}: kernel applied {got} \
                 (raise {sysctl} or run as root)"
            )),
        }
    }
    Ok(())
}

fn set_congestion(s: &SockRef<'_>, name: &str) -> Result<(), NetError> {
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

fn set_dont_fragment(fd: RawFd, kind: SockKind) -> Result<(), NetError> {
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

fn check_flowlabel(kind: SockKind, label: u32) -> Result<(), NetError> {
    if !kind.v6 {
        return Err(NetError::InvalidOption(
            "a flow label exists only in IPv6; drop --flowlabel or use -6".into(),
        ));
    }
    if label == 0 || label > 0xF_FFFF {
        return Err(NetError::InvalidOption(format!(
            "flow label {label:#x} is out of range: use 1 to 0xfffff (20 bits)"
        )));
    }
    Ok(())
}

/// Read back the settings of a socket (e.g. one returned by `accept`).
pub fn read_applied<S: AsFd>(sock: &S) -> Result<AppliedOpts, NetError> {
    let s = SockRef::from(sock);
    let kind = sock_kind(&s)?;
    let fd = sock.as_fd().as_raw_fd();
    let to_u32 = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    let mut a = AppliedOpts {
        sndbuf_bytes: s.send_buffer_size().ok().map(to_u32),
        rcvbuf_bytes: s.recv_buffer_size().ok().map(to_u32),
        ..AppliedOpts::default()
    };
    if kind.tcp {
        a.nodelay = s.tcp_nodelay().ok();
        a.mss_bytes = s.tcp_mss().ok();
        a.congestion = s.tcp_congestion().ok().map(|b| {
            String::from_utf8_lossy(&b)
                .trim_end_matches('\0')
                .to_string()
        });
    }
    if kind.v6 {
        a.tos = s.tclass_v6().ok().map(|t| t as u8);
        a.v6only = s.only_v6().ok();
        a.dont_fragment = get_int(fd, libc::IPPROTO_IPV6, libc::IPV6_MTU_DISCOVER)
            .ok()
            .map(|v| v == libc::IPV6_PMTUDISC_DO);
    } else {
        a.tos = s.tos_v4().ok().map(|t| t as u8);
        a.dont_fragment = get_int(fd, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER)
            .ok()
            .map(|v| v == libc::IP_PMTUDISC_DO);
    }
    Ok(a)
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

/// Register IPv6 flow label `label` for packets this socket sends to `peer` (Linux flow
/// label manager: IPV6_FLOWLABEL_MGR with IPV6_FL_F_CREATE, shared with sockets of the
/// same user, then IPV6_FLOWINFO_SEND). Returns the address to `connect` (or send) to:
/// `peer` with the label in its flowinfo, which is how Linux picks the label up.
///
/// Labels 0x80000 and above are reserved for stateless labels while
/// net.ipv6.flowlabel_state_ranges=1 (the default) and are refused.
pub fn register_flowlabel<S: AsFd>(
    sock: &S,
    peer: SocketAddrV6,
    label: u32,
) -> Result<SocketAddrV6, NetError> {
    let s = SockRef::from(sock);
    check_flowlabel(sock_kind(&s)?, label)?;
    let fd = sock.as_fd().as_raw_fd();
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
            fd,
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
    set_int(fd, libc::IPPROTO_IPV6, libc::IPV6_FLOWINFO_SEND, 1)
        .map_err(|e| sockopt_err("IPV6_FLOWINFO_SEND", 1, e))?;
    Ok(SocketAddrV6::new(
        *peer.ip(),
        peer.port(),
        label.to_be(),
        peer.scope_id(),
    ))
}
