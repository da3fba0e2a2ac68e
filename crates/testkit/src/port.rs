//! A free port for a test's server that no other socket on this host can be handed
//! while the server starts: picked below the kernel's ephemeral range
//! (`ip_local_port_range`), where only explicit binds land, and checked free for TCP
//! and UDP on both families. (A port from binding port 0 and releasing it is in the
//! ephemeral range: a parallel test's client socket could take it before the server
//! binds it — an iperf3 server then failed to re-open its UDP listener and exited.)

use std::hash::{BuildHasher, Hasher};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};

/// Lowest port handed out; below it sit well-known services.
const LOWEST: u16 = 10_000;

/// The first port of the kernel's ephemeral range (32768 by default).
fn ephemeral_low() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// Whether `port` is free for TCP and UDP on the IPv6 wildcard (dual-stack) and on
/// 127.0.0.1.
fn free_everywhere(port: u16) -> bool {
    let v6 = SocketAddr::from((Ipv6Addr::UNSPECIFIED, port));
    let v4 = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let tcp6 = TcpListener::bind(v6);
    let udp6 = UdpSocket::bind(v6);
    tcp6.is_ok() && udp6.is_ok() && {
        drop((tcp6, udp6));
        TcpListener::bind(v4).is_ok() && UdpSocket::bind(v4).is_ok()
    }
}

/// A port free for TCP and UDP on both families, outside the ephemeral range.
pub fn free_port() -> u16 {
    static DRAWS: AtomicU64 = AtomicU64::new(0);
    let high = ephemeral_low().max(LOWEST + 1000);
    let span = u64::from(high - LOWEST);
    for _ in 0..1000 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(DRAWS.fetch_add(1, Ordering::Relaxed));
        h.write_u32(std::process::id());
        let port = LOWEST + (h.finish() % span) as u16;
        if free_everywhere(port) {
            return port;
        }
    }
    panic!("no free port in {LOWEST}..{high} after 1000 tries");
}
