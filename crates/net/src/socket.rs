//! Ready-made sockets for the engine and the iperf3 server: each creates the socket for
//! the address family, sets IPV6_V6ONLY on IPv6 (each family is tested natively, unless
//! [`BindOpts`] asks a `[::]` socket to take IPv4 peers too, as iperf3 does), applies
//! [`SocketOpts`] before bind/connect so that buffers, MSS and congestion control shape
//! the handshake, and returns the settings the kernel applied.

use crate::error::NetError;
use crate::sockopt::{apply_socket_opts, read_applied, register_flowlabel, AppliedOpts};
use crate::sys::sockopt_err;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::time::Duration;
use wire::spec::SocketOpts;

/// Listen backlog of [`tcp_listen`].
pub const LISTEN_BACKLOG: i32 = 128;

/// Which peers a socket bound to an IPv6 address takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum V6Peers {
    /// IPv6 peers only (IPV6_V6ONLY on): each family is tested natively.
    #[default]
    Ipv6Only,
    /// On the unspecified address `[::]`, IPv4 peers too, as v4-mapped addresses
    /// (iperf3's default listener); a specific IPv6 address still takes IPv6 only.
    BothOnUnspecified,
}

/// How [`tcp_listen_with`] and [`udp_bind_with`] bind beyond the [`SocketOpts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BindOpts {
    pub v6_peers: V6Peers,
    /// SO_REUSEADDR: a TCP listener rebinds a port whose old connections linger in
    /// TIME_WAIT; UDP sockets that all set it share one port (iperf3's UDP accept binds
    /// a fresh socket to the port its listener has just connected to a client).
    pub reuse_address: bool,
}

/// Bind `sock` to `addr` as `bind` says, once its options are applied.
fn bind_as(sock: &Socket, addr: SocketAddr, bind: BindOpts) -> Result<(), NetError> {
    let dual = bind.v6_peers == V6Peers::BothOnUnspecified
        && matches!(addr.ip(), IpAddr::V6(ip) if ip.is_unspecified());
    if dual {
        sock.set_only_v6(false)
            .map_err(|e| sockopt_err("IPV6_V6ONLY", 0, e))?;
    }
    if bind.reuse_address {
        sock.set_reuse_address(true)
            .map_err(|e| sockopt_err("SO_REUSEADDR", 1, e))?;
    }
    sock.bind(&SockAddr::from(addr))
        .map_err(|source| NetError::Bind { addr, source })
}

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

/// [`tcp_connect`] without reading the settings back: one connection of many opened
/// with the same `opts` (tcp-crr opens one per transaction and times it; the first is
/// opened with [`tcp_connect`] or read back with [`read_applied`]). No local port is
/// bound: the kernel picks an ephemeral port per connection.
pub fn tcp_connect_again(
    peer: SocketAddr,
    opts: &SocketOpts,
    timeout: Duration,
) -> Result<TcpStream, NetError> {
    let sock = new_socket(peer, Type::STREAM, Protocol::TCP)?;
    crate::sockopt::set_socket_opts(&sock, opts)?;
    let (target, _) = labelled_peer(&sock, peer, opts)?;
    sock.connect_timeout(&SockAddr::from(target), timeout)
        .map_err(|source| NetError::Connect { addr: peer, source })?;
    Ok(sock.into())
}

/// Bind and listen on `addr` (SO_REUSEADDR set; IPv6 only on an IPv6 address) with
/// `opts` applied to the listener, so accepted connections inherit them. Read an
/// accepted stream's settings with [`read_applied`].
pub fn tcp_listen(
    addr: SocketAddr,
    opts: &SocketOpts,
) -> Result<(TcpListener, AppliedOpts), NetError> {
    let bind = BindOpts {
        reuse_address: true,
        ..BindOpts::default()
    };
    tcp_listen_with(addr, opts, bind)
}

/// [`tcp_listen`] with the binding spelled out (e.g. one `[::]` listener for both
/// families, as iperf3 serves).
pub fn tcp_listen_with(
    addr: SocketAddr,
    opts: &SocketOpts,
    bind: BindOpts,
) -> Result<(TcpListener, AppliedOpts), NetError> {
    let sock = new_socket(addr, Type::STREAM, Protocol::TCP)?;
    let mut listen_opts = opts.clone();
    // A flow label needs a peer; accepted sockets send with the kernel's own label.
    listen_opts.flowlabel = None;
    let mut applied = apply_socket_opts(&sock, &listen_opts)?;
    bind_as(&sock, addr, bind)?;
    sock.listen(LISTEN_BACKLOG)
        .map_err(|e| NetError::io(format!("listen on {addr}"), e))?;
    if addr.is_ipv6() {
        applied.v6only = sock.only_v6().ok();
    }
    Ok((sock.into(), applied))
}

/// Bind a UDP socket to `addr` (port 0 = any) with `opts` applied (TCP-only options
/// are ignored; the flow label is set by [`udp_connect`], which knows the peer).
pub fn udp_bind(addr: SocketAddr, opts: &SocketOpts) -> Result<(UdpSocket, AppliedOpts), NetError> {
    udp_bind_with(addr, opts, BindOpts::default())
}

/// [`udp_bind`] with the binding spelled out (a shared port, both families on `[::]`).
pub fn udp_bind_with(
    addr: SocketAddr,
    opts: &SocketOpts,
    bind: BindOpts,
) -> Result<(UdpSocket, AppliedOpts), NetError> {
    let sock = new_socket(addr, Type::DGRAM, Protocol::UDP)?;
    let mut bind_opts = opts.clone();
    bind_opts.flowlabel = None;
    let mut applied = apply_socket_opts(&sock, &bind_opts)?;
    bind_as(&sock, addr, bind)?;
    if addr.is_ipv6() {
        applied.v6only = sock.only_v6().ok();
    }
    Ok((sock.into(), applied))
}

/// Wake a thread blocked in `accept` on `listener` after `timeout` (SO_RCVTIMEO; Linux
/// honours it on accept, so an accept loop can notice a shutdown flag). `None` blocks.
pub fn set_accept_timeout(
    listener: &TcpListener,
    timeout: Option<Duration>,
) -> Result<(), NetError> {
    socket2::SockRef::from(listener)
        .set_read_timeout(timeout)
        .map_err(|e| NetError::io("setsockopt(SO_RCVTIMEO) on a listener", e))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;

    fn any6() -> SocketAddr {
        "[::]:0".parse().unwrap()
    }

    #[test]
    fn a_dual_stack_listener_takes_ipv4_peers_and_a_native_one_says_it_is_v6_only() {
        if crate::check_ipv6().is_err() {
            eprintln!("skipped: no IPv6 on this host");
            return;
        }
        let none = SocketOpts::default();
        let (native, applied) = tcp_listen(any6(), &none).unwrap();
        assert_eq!(applied.v6only, Some(true));
        drop(native);
        let dual = BindOpts {
            v6_peers: V6Peers::BothOnUnspecified,
            reuse_address: true,
        };
        let (l, applied) = tcp_listen_with(any6(), &none, dual).unwrap();
        assert_eq!(applied.v6only, Some(false));
        let port = l.local_addr().unwrap().port();
        let v4: SocketAddr = SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), port);
        let (_c, _) = tcp_connect(v4, &none, Duration::from_secs(5)).unwrap();
        let (_, peer) = l.accept().unwrap();
        let mapped = match peer.ip() {
            IpAddr::V6(ip) => ip.to_ipv4_mapped(),
            IpAddr::V4(_) => None,
        };
        assert_eq!(mapped, Some(std::net::Ipv4Addr::LOCALHOST), "{peer}");
        // A specific IPv6 address stays IPv6-only even when both are asked for.
        let (_, applied) = tcp_listen_with("[::1]:0".parse().unwrap(), &none, dual).unwrap();
        assert_eq!(applied.v6only, Some(true));
    }

    #[test]
    fn udp_sockets_share_a_port_only_when_each_asks_to() {
        let none = SocketOpts::default();
        let shared = BindOpts {
            reuse_address: true,
            ..BindOpts::default()
        };
        let (a, _) = udp_bind_with("127.0.0.1:0".parse().unwrap(), &none, shared).unwrap();
        let at = a.local_addr().unwrap();
        let (b, _) = udp_bind_with(at, &none, shared).unwrap();
        assert_eq!(b.local_addr().unwrap(), at);
        let (c, _) = udp_bind("127.0.0.1:0".parse().unwrap(), &none).unwrap();
        match udp_bind(c.local_addr().unwrap(), &none) {
            Err(e @ NetError::Bind { .. }) => {
                assert_eq!(e.io_kind(), Some(ErrorKind::AddrInUse), "{e}");
                assert!(e.raw_os_error().is_some(), "{e}");
            }
            other => panic!("a second socket took a port without SO_REUSEADDR: {other:?}"),
        }
    }

    #[test]
    fn an_accept_timeout_wakes_a_listener_with_no_peer() {
        let (l, _) = tcp_listen("127.0.0.1:0".parse().unwrap(), &SocketOpts::default()).unwrap();
        set_accept_timeout(&l, Some(Duration::from_millis(50))).unwrap();
        if cfg!(target_os = "linux") {
            let e = l.accept().unwrap_err();
            assert!(
                matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
                "{e}"
            );
        }
    }
}
