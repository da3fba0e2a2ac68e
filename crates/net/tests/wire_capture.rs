//! What the kernel puts on the wire, seen by a packet socket on `lo` (needs root /
//! CAP_NET_RAW; skipped with a printed reason otherwise): the IPv6 flow label and traffic
//! class of a TCP connection made with `tcp_connect`, and the IPv4 TOS and DF bit.
//! (Linux sets DF on unfragmented packets by default too; what `dont_fragment` adds is
//! that a datagram above the path MTU fails with EMSGSIZE instead of being fragmented
//! locally, which loopback's 64 KiB MTU cannot show.)
#![cfg(target_os = "linux")]

use dualperf_net::{check_ipv6, tcp_connect, tcp_listen};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};
use wire::spec::SocketOpts;

const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86DD;

/// A packet socket receiving `ethertype` packets (network header first) on `lo`.
fn capture(ethertype: u16) -> Option<OwnedFd> {
    // SAFETY: plain socket(2) call; the result is checked before use.
    let fd = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_DGRAM,
            i32::from(ethertype.to_be()),
        )
    };
    if fd < 0 {
        println!(
            "packet capture unavailable ({}), skipped",
            std::io::Error::last_os_error()
        );
        return None;
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: the name is a valid NUL-terminated string.
    let ifindex = unsafe { libc::if_nametoindex(c"lo".as_ptr()) };
    // SAFETY: sockaddr_ll is plain data; zero is a valid start.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = ethertype.to_be();
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a valid sockaddr_ll and its size is passed.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    assert_eq!(rc, 0, "bind packet socket to lo");
    let tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 100_000,
    };
    // SAFETY: `tv` lives for the call and its size is passed.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as u32,
        )
    };
    assert_eq!(rc, 0);
    Some(fd)
}

/// The first captured packet (network header first) for which `pick` returns Some.
fn find<T>(fd: &OwnedFd, mut pick: impl FnMut(&[u8]) -> Option<T>) -> Option<T> {
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        // SAFETY: `buf` is valid for writes of its length.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n <= 0 {
            continue;
        }
        if let Some(t) = pick(&buf[..n as usize]) {
            return Some(t);
        }
    }
    None
}

#[test]
fn tcp_over_ipv6_carries_the_flow_label_and_traffic_class() {
    if check_ipv6().is_err() {
        println!("IPv6 unavailable, skipped");
        return;
    }
    let Some(cap) = capture(ETH_P_IPV6) else {
        return;
    };
    let opts = SocketOpts {
        tos: Some(0x28),
        flowlabel: Some(0x3_1337),
        ..SocketOpts::default()
    };
    let (listener, _) = tcp_listen("[::1]:0".parse().unwrap(), &SocketOpts::default()).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_stream, applied) = tcp_connect(
        listener.local_addr().unwrap(),
        &opts,
        Duration::from_secs(2),
    )
    .unwrap();
    assert_eq!(applied.flowlabel, Some(0x3_1337));
    // IPv6 header: version 4 bits, traffic class 8, flow label 20; next header at 6;
    // TCP destination port at 40 + 2.
    let first_word = find(&cap, |p| {
        let is_tcp_to_port = p.len() >= 44
            && p[6] == libc::IPPROTO_TCP as u8
            && u16::from_be_bytes([p[42], p[43]]) == port;
        is_tcp_to_port.then(|| u32::from_be_bytes([p[0], p[1], p[2], p[3]]))
    })
    .expect("no IPv6 TCP packet to the listener captured");
    assert_eq!(first_word & 0xF_FFFF, 0x3_1337, "flow label on the wire");
    assert_eq!(
        (first_word >> 20) & 0xFC,
        0x28,
        "traffic class (ECN bits aside)"
    );
}

#[test]
fn ipv4_carries_tos_and_the_dont_fragment_bit() {
    let Some(cap) = capture(ETH_P_IP) else {
        return;
    };
    let opts = SocketOpts {
        tos: Some(0x48),
        dont_fragment: true,
        ..SocketOpts::default()
    };
    let (listener, _) = tcp_listen("127.0.0.1:0".parse().unwrap(), &SocketOpts::default()).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_stream, _) = tcp_connect(
        listener.local_addr().unwrap(),
        &opts,
        Duration::from_secs(2),
    )
    .unwrap();
    // IPv4 header: TOS at 1, flags/fragment at 6, protocol at 9; TCP dst port after IHL.
    let (tos, flags) = find(&cap, |p| {
        let ihl = usize::from(p.first()? & 0x0F) * 4;
        let ok = p.len() >= ihl + 4
            && p[9] == libc::IPPROTO_TCP as u8
            && u16::from_be_bytes([p[ihl + 2], p[ihl + 3]]) == port;
        ok.then(|| (p[1], u16::from_be_bytes([p[6], p[7]])))
    })
    .expect("no IPv4 TCP packet to the listener captured");
    assert_eq!(tos & 0xFC, 0x48);
    assert!(flags & 0x4000 != 0, "DF bit not set: {flags:#06x}");
}
