//! Windows socket options: what Winsock sets and reads, and what it cannot do (flow
//! labels, TOS, the MSS, congestion control per socket) refused with a message.

use crate::error::NetError;
use crate::sys::{sockopt_err, unsupported_here, SockKind};
use socket2::SockRef;
use std::io;
use std::net::SocketAddrV6;
use std::os::windows::io::AsRawSocket;
use windows_sys::Win32::Networking::WinSock::{
    getsockopt, setsockopt, IPPROTO_IP, IPPROTO_IPV6, IPPROTO_TCP, IPV6_DONTFRAG, IP_DONTFRAGMENT,
    SOCKET, SOCKET_ERROR, SOL_SOCKET, SO_PROTOCOL_INFOW, TCP_MAXSEG, WSAPROTOCOL_INFOW,
};

/// Windows reports SO_SNDBUF/SO_RCVBUF as set.
pub(crate) const BUFFER_READBACK_FACTOR: u64 = 1;

fn raw(s: &SockRef<'_>) -> SOCKET {
    s.as_raw_socket() as SOCKET
}

fn get_raw<T>(s: &SockRef<'_>, level: i32, name: i32, value: &mut T) -> io::Result<()> {
    let mut len = std::mem::size_of::<T>() as i32;
    // SAFETY: `value` is valid for writes of `len` bytes, `len` for writes.
    let rc = unsafe { getsockopt(raw(s), level, name, (value as *mut T).cast(), &mut len) };
    if rc == SOCKET_ERROR {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn get_int(s: &SockRef<'_>, level: i32, name: i32) -> io::Result<i32> {
    let mut v: i32 = 0;
    get_raw(s, level, name, &mut v)?;
    Ok(v)
}

fn set_int(s: &SockRef<'_>, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: `value` lives for the call and its exact size is passed.
    let rc = unsafe {
        setsockopt(
            raw(s),
            level,
            name,
            (&value as *const i32).cast(),
            std::mem::size_of::<i32>() as i32,
        )
    };
    if rc == SOCKET_ERROR {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The socket's address family from SO_PROTOCOL_INFOW (works before bind).
pub(crate) fn is_ipv6(s: &SockRef<'_>) -> io::Result<bool> {
    // SAFETY: WSAPROTOCOL_INFOW is plain data; all-zero is a valid value.
    let mut info: WSAPROTOCOL_INFOW = unsafe { std::mem::zeroed() };
    get_raw(s, SOL_SOCKET, SO_PROTOCOL_INFOW, &mut info)?;
    Ok(info.iAddressFamily == i32::from(windows_sys::Win32::Networking::WinSock::AF_INET6))
}

pub(crate) fn buffer_limit_name(_send: bool) -> &'static str {
    "the Winsock buffer limit"
}

pub(crate) fn force_buffer(_s: &SockRef<'_>, _send: bool, _value: i32) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "Windows has no forced buffer size",
    ))
}

pub(crate) fn set_mss(_s: &SockRef<'_>, _mss: u32) -> Result<(), NetError> {
    Err(unsupported_here(
        "the TCP MSS",
        " (TCP_MAXSEG is read-only there); drop --mss",
    ))
}

pub(crate) fn mss(s: &SockRef<'_>) -> Option<u32> {
    get_int(s, IPPROTO_TCP, TCP_MAXSEG)
        .ok()
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| *v > 0)
}

pub(crate) fn available_congestion_controls() -> Vec<String> {
    Vec::new()
}

pub(crate) fn set_congestion(_s: &SockRef<'_>, _name: &str) -> Result<(), NetError> {
    Err(unsupported_here(
        "a TCP congestion control per socket",
        " (it is chosen per system with `netsh int tcp set supplemental`); drop --congestion",
    ))
}

pub(crate) fn congestion(_s: &SockRef<'_>) -> Option<String> {
    None
}

pub(crate) fn set_tos(_s: &SockRef<'_>, _kind: SockKind, _tos: u8) -> Result<(), NetError> {
    Err(unsupported_here(
        "TOS / traffic class",
        " (Windows ignores IP_TOS from applications; a QoS policy sets DSCP); drop --tos",
    ))
}

pub(crate) fn tos(_s: &SockRef<'_>, _kind: SockKind) -> Option<u8> {
    None
}

pub(crate) fn tos_note(_kind: SockKind) -> &'static str {
    ""
}

/// Winsock accepts SO_RCVLOWAT only as a read-only option: nothing to set.
pub(crate) fn set_recv_lowat(_s: &SockRef<'_>, _bytes: i32) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

pub(crate) fn set_dont_fragment(s: &SockRef<'_>, kind: SockKind) -> Result<(), NetError> {
    if kind.v6 {
        set_int(s, IPPROTO_IPV6, IPV6_DONTFRAG, 1).map_err(|e| sockopt_err("IPV6_DONTFRAG", 1, e))
    } else {
        set_int(s, IPPROTO_IP, IP_DONTFRAGMENT, 1).map_err(|e| sockopt_err("IP_DONTFRAGMENT", 1, e))
    }
}

pub(crate) fn dont_fragment(s: &SockRef<'_>, kind: SockKind) -> Option<bool> {
    let v = if kind.v6 {
        get_int(s, IPPROTO_IPV6, IPV6_DONTFRAG)
    } else {
        get_int(s, IPPROTO_IP, IP_DONTFRAGMENT)
    };
    v.ok().map(|v| v != 0)
}

pub(crate) fn enable_flowinfo_send(_s: &SockRef<'_>) -> Result<(), NetError> {
    Err(unsupported_here(
        "an IPv6 flow label",
        " (it has no flow label manager); drop --flowlabel",
    ))
}

pub(crate) fn register_flowlabel(
    s: &SockRef<'_>,
    _peer: SocketAddrV6,
    _label: u32,
) -> Result<SocketAddrV6, NetError> {
    enable_flowinfo_send(s).map(|_| unreachable!("refused above"))
}
