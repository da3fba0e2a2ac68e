//! Socket settings from [`wire::spec::SocketOpts`]: set what the user asked for, then
//! read back what the kernel actually applied ([`AppliedOpts`]). Linux doubles
//! SO_SNDBUF/SO_RCVBUF, caps them at net.core.{w,r}mem_max, masks the ECN bits of a TCP
//! socket's TOS, and keeps its own MSS until the connection exists: the read-back shows it.
//! An option an OS cannot set (a flow label off Linux, TOS on Windows, a congestion
//! control where the OS has no per-socket choice) is refused with a message naming the
//! OS; the per-OS calls are in `sys`.
//!
//! Order matters for TCP: buffers, MSS and congestion control must be set before
//! `connect` (client) or on the listener before `listen` (inherited by accepted
//! sockets) to shape the handshake (window scale, advertised MSS). The IPv6 flow label
//! needs the peer address, so it is set by [`register_flowlabel`] just before connect.

use crate::error::NetError;
use crate::sys::{self, AsOsSocket};
use crate::sys::{sockopt_err, SockKind};
use serde::{Deserialize, Serialize};
use socket2::{SockRef, Type};
use std::io;
use std::net::SocketAddrV6;
use wire::spec::SocketOpts;

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

pub(crate) fn sock_kind(sock: &SockRef<'_>) -> Result<SockKind, NetError> {
    let v6 = sys::sockopt::is_ipv6(sock)
        .map_err(|e| NetError::io("reading the socket's address family", e))?;
    let ty = sock
        .r#type()
        .map_err(|e| NetError::io("getsockopt(SO_TYPE)", e))?;
    Ok(SockKind {
        v6,
        tcp: ty == Type::STREAM,
    })
}

/// The TCP congestion control algorithms this host offers (empty where the OS has no
/// per-socket choice).
pub fn available_congestion_controls() -> Vec<String> {
    sys::sockopt::available_congestion_controls()
}

/// Set every option in `opts` that applies to this socket (TCP options are skipped on
/// UDP sockets) except the flow label, then read back what the kernel applied.
pub fn apply_socket_opts<S: AsOsSocket>(
    sock: &S,
    opts: &SocketOpts,
) -> Result<AppliedOpts, NetError> {
    let notes = set_socket_opts(sock, opts)?;
    let s = SockRef::from(sock);
    let kind = sock_kind(&s)?;
    let mut notes = notes;
    let mut applied = read_applied(sock)?;
    if let Some(tos) = opts.tos {
        if applied.tos != Some(tos) {
            notes.push(format!(
                "TOS/traffic class {tos:#04x} requested, kernel applied {:#04x}{}",
                applied.tos.unwrap_or(0),
                sys::sockopt::tos_note(kind)
            ));
        }
    }
    applied.notes = notes;
    Ok(applied)
}

/// Set every option of [`apply_socket_opts`] without reading anything back (for a
/// socket whose twin was already read back: tcp-crr's per-transaction connections).
/// Returns the notes on buffer sizes the kernel changed.
pub(crate) fn set_socket_opts<S: AsOsSocket>(
    sock: &S,
    opts: &SocketOpts,
) -> Result<Vec<String>, NetError> {
    let s = SockRef::from(sock);
    let kind = sock_kind(&s)?;
    let mut notes = Vec::new();

    if kind.v6 {
        // Fails once bound; the read-back shows what holds.
        let _ = s.set_only_v6(true);
    }
    if let Some(want) = opts.sndbuf_bytes {
        set_buffer(&s, want, true, &mut notes)?;
    }
    if let Some(want) = opts.rcvbuf_bytes {
        set_buffer(&s, want, false, &mut notes)?;
    }
    if kind.tcp {
        if opts.nodelay {
            s.set_tcp_nodelay(true)
                .map_err(|e| sockopt_err("TCP_NODELAY", 1, e))?;
        }
        if let Some(mss) = opts.mss_bytes {
            sys::sockopt::set_mss(&s, mss)?;
        }
        if let Some(cc) = &opts.congestion {
            sys::sockopt::set_congestion(&s, cc)?;
        }
    }
    if let Some(tos) = opts.tos {
        sys::sockopt::set_tos(&s, kind, tos)?;
    }
    if opts.dont_fragment {
        sys::sockopt::set_dont_fragment(&s, kind)?;
    }
    if let Some(label) = opts.flowlabel {
        check_flowlabel(kind, label)?;
        sys::sockopt::enable_flowinfo_send(&s)?;
    }
    Ok(notes)
}

fn set_buffer(
    s: &SockRef<'_>,
    want: u32,
    send: bool,
    notes: &mut Vec<String>,
) -> Result<(), NetError> {
    let name = if send { "SO_SNDBUF" } else { "SO_RCVBUF" };
    let limit = sys::sockopt::buffer_limit_name(send);
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
    // Less than the OS's read-back factor × the request means capped.
    if (got as u64) < sys::sockopt::BUFFER_READBACK_FACTOR * u64::from(want) {
        // Capped by the OS limit; Linux with CAP_NET_ADMIN can go past it.
        let value = i32::try_from(want).unwrap_or(i32::MAX);
        match sys::sockopt::force_buffer(s, send, value) {
            Ok(()) => notes.push(format!(
                "{name} {want} is above {limit}; set with {name}FORCE"
            )),
            Err(_) => notes.push(format!(
                "{name} {want} capped by {limit}: kernel applied {got} \
                 (raise {limit} or run as root)"
            )),
        }
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

/// Wake a reader blocked on this stream socket only once `bytes` are queued, its
/// receive timeout expires, or the peer closes (SO_RCVLOWAT). A bulk receiver that sets
/// it is woken (and, on loopback, makes the sender's softirq wake it) once per `bytes`
/// instead of once per arriving segment. `Err` where the OS cannot set it (Windows).
pub fn set_recv_lowat<S: AsOsSocket>(sock: &S, bytes: usize) -> io::Result<()> {
    let s = SockRef::from(sock);
    sys::sockopt::set_recv_lowat(&s, i32::try_from(bytes).unwrap_or(i32::MAX))
}

/// Read back the settings of a socket (e.g. one returned by `accept`).
pub fn read_applied<S: AsOsSocket>(sock: &S) -> Result<AppliedOpts, NetError> {
    let s = SockRef::from(sock);
    let kind = sock_kind(&s)?;
    let to_u32 = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    let mut a = AppliedOpts {
        sndbuf_bytes: s.send_buffer_size().ok().map(to_u32),
        rcvbuf_bytes: s.recv_buffer_size().ok().map(to_u32),
        ..AppliedOpts::default()
    };
    if kind.tcp {
        a.nodelay = s.tcp_nodelay().ok();
        a.mss_bytes = sys::sockopt::mss(&s);
        a.congestion = sys::sockopt::congestion(&s);
    }
    if kind.v6 {
        a.v6only = s.only_v6().ok();
    }
    a.tos = sys::sockopt::tos(&s, kind);
    a.dont_fragment = sys::sockopt::dont_fragment(&s, kind);
    Ok(a)
}

/// Register IPv6 flow label `label` for packets this socket sends to `peer` (Linux flow
/// label manager: IPV6_FLOWLABEL_MGR with IPV6_FL_F_CREATE, shared with sockets of the
/// same user, then IPV6_FLOWINFO_SEND). Returns the address to `connect` (or send) to:
/// `peer` with the label in its flowinfo, which is how Linux picks the label up. Other
/// systems refuse a flow label, naming themselves.
///
/// Labels 0x80000 and above are reserved for stateless labels while
/// net.ipv6.flowlabel_state_ranges=1 (the default) and are refused.
pub fn register_flowlabel<S: AsOsSocket>(
    sock: &S,
    peer: SocketAddrV6,
    label: u32,
) -> Result<SocketAddrV6, NetError> {
    let s = SockRef::from(sock);
    check_flowlabel(sock_kind(&s)?, label)?;
    sys::sockopt::register_flowlabel(&s, peer, label)
}
