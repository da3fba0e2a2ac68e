//! Ready-made sockets for the engine: each creates the socket for the address family,
//! sets IPV6_V6ONLY on IPv6 (each family is tested natively), applies [`SocketOpts`]
//! before bind/connect so that buffers, MSS and congestion control shape the handshake,
//! and returns the settings the kernel applied.

use crate::error::NetError;
use crate::sockopt::{apply_socket_opts, read_applied, register_flowlabel, AppliedOpts};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::Duration;
use wire::spec::SocketOpts;

/// Listen backlog of [`tcp_listen`].
pub const LISTEN_BACKLOG: i32 = 128;

fn new_socket(addr: SocketAddr, ty: Type, proto: Protocol) -> Result<Socket, NetError> {
    let domain = Domain::for_address(addr);
    let sock = Socket::new(domain, ty, Some(proto)).map_err(|e| {
        if addr.is_ipv6() && crate::sys::errors::is_af_unsupported(&e) {
            NetError::Ipv6Unavailable {
                reason: "the system has no IPv6 support (socket(AF_INET6) failed)".into(),
            }
        } else {
            NetError::io(format!("socket() for {addr}"), e)
        }
    })?;
    if addr.is_ipv6() {
        sock.set_only_v6(true)
            .map_err(|e| NetError::io("setsockopt(IPV6_V6ONLY)", e))?;
    }
    Ok(sock)
}

/// The IPv6 address to connect to, carrying the flow label when one is asked for.
fn labelled_peer(
    sock: &Socket,
    peer: SocketAddr,
    opts: &SocketOpts,
) -> Result<(SocketAddr, Option<u32>), NetError> {
    match (peer, opts.flowlabel) {
        (SocketAddr::V6(v6), Some(label)) => {
            let with_label = register_flowlabel(sock, v6, label)?;
            Ok((SocketAddr::V6(with_label), Some(label)))
        }
        _ => Ok((peer, None)),
    }
}

/// Connect a TCP socket to `peer` with `opts` applied before the handshake.
pub fn tcp_connect(
    peer: SocketAddr,
    opts: &SocketOpts,
    timeout: Duration,
) -> Result<(TcpStream, AppliedOpts), NetError> {
    let sock = new_socket(peer, Type::STREAM, Protocol::TCP)?;
    let mut applied = apply_socket_opts(&sock, opts)?;
    let (target, label) = labelled_peer(&sock, peer, opts)?;
    sock.connect_timeout(&SockAddr::from(target), timeout)
        .map_err(|source| NetError::Connect { addr: peer, source })?;
    // Re-read: the MSS is only real once connected.
    let notes = std::mem::take(&mut applied.notes);
    applied = read_applied(&sock)?;
    applied.notes = notes;
    applied.flowlabel = label;
    Ok((sock.into(), applied))
}

/// Bind and listen on `addr` (SO_REUSEADDR set) with `opts` applied to the listener, so
/// accepted connections inherit them. Read an accepted stream's settings with
/// [`read_applied`].
pub fn tcp_listen(
    addr: SocketAddr,
    opts: &SocketOpts,
) -> Result<(TcpListener, AppliedOpts), NetError> {
    let sock = new_socket(addr, Type::STREAM, Protocol::TCP)?;
    sock.set_reuse_address(true)
        .map_err(|e| NetError::io("setsockopt(SO_REUSEADDR)", e))?;
    let mut listen_opts = opts.clone();
    // A flow label needs a peer; accepted sockets send with the kernel's own label.
    listen_opts.flowlabel = None;
    let applied = apply_socket_opts(&sock, &listen_opts)?;
    sock.bind(&SockAddr::from(addr))
        .map_err(|source| NetError::Bind { addr, source })?;
    sock.listen(LISTEN_BACKLOG)
        .map_err(|e| NetError::io(format!("listen on {addr}"), e))?;
    Ok((sock.into(), applied))
}

/// Bind a UDP socket to `addr` (port 0 = any) with `opts` applied (TCP-only options
/// are ignored; the flow label is set by [`udp_connect`], which knows the peer).
pub fn udp_bind(addr: SocketAddr, opts: &SocketOpts) -> Result<(UdpSocket, AppliedOpts), NetError> {
    let sock = new_socket(addr, Type::DGRAM, Protocol::UDP)?;
    let mut bind_opts = opts.clone();
    bind_opts.flowlabel = None;
    let applied = apply_socket_opts(&sock, &bind_opts)?;
    sock.bind(&SockAddr::from(addr))
        .map_err(|source| NetError::Bind { addr, source })?;
    Ok((sock.into(), applied))
}

/// Connect a UDP socket to `peer`, registering the flow label of `opts` if any.
/// Returns the settings read back afterwards.
pub fn udp_connect(
    sock: &UdpSocket,
    peer: SocketAddr,
    opts: &SocketOpts,
) -> Result<AppliedOpts, NetError> {
    let s = socket2::SockRef::from(sock);
    let label = match (peer, opts.flowlabel) {
        (SocketAddr::V6(v6), Some(label)) => {
            let target = register_flowlabel(sock, v6, label)?;
            s.connect(&SockAddr::from(SocketAddr::V6(target)))
                .map_err(|source| NetError::Connect { addr: peer, source })?;
            Some(label)
        }
        (SocketAddr::V4(_), Some(_)) => {
            return Err(NetError::InvalidOption(
                "a flow label exists only in IPv6; drop --flowlabel or use -6".into(),
            ))
        }
        _ => {
            sock.connect(peer)
                .map_err(|source| NetError::Connect { addr: peer, source })?;
            None
        }
    };
    let mut applied = read_applied(sock)?;
    applied.flowlabel = label;
    Ok(applied)
}
