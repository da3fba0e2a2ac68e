//! Path-MTU primitives on loopback (their behaviour on a real narrow path is tested
//! through a routed lab in dualperf-lab's `path_lab` tests): typed errors for an IPv6
//! header on IPv4, for the option header without CAP_NET_RAW, and for IP_MTU on an
//! unconnected socket; the path MTU of a connected loopback socket; the sysctls.
#![cfg(target_os = "linux")]

use dualperf_net::pathmtu::{
    drain_queued_errors, enable_error_queue, kernel_path_mtu, set_df_mode, set_ext_header,
    tcp_mtu_sysctls, DfMode, ExtHeader, PathError,
};
use std::net::UdpSocket;

fn ipv6_available() -> bool {
    UdpSocket::bind("[::1]:0").is_ok()
}

#[test]
fn an_ipv6_option_header_on_ipv4_is_not_applicable() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let e = set_ext_header(&sock, ExtHeader::HopByHop).unwrap_err();
    assert!(
        matches!(
            e,
            PathError::NotApplicable {
                what: "IPV6_HOPOPTS"
            }
        ),
        "{e:?}"
    );
}

/// Linux capability sets (linux/capability.h, version 3: two 32-bit words).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}
const CAP_V3: u32 = 0x2008_0522;
const CAP_NET_RAW: u32 = 13;

/// Drops CAP_NET_RAW from this thread's effective set (capabilities are per thread).
fn drop_net_raw_in_this_thread() {
    let mut hdr = CapHeader {
        version: CAP_V3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: `hdr` and the two-element `data` array are what capget(2) version 3 writes.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()) };
    assert_eq!(rc, 0, "capget: {}", std::io::Error::last_os_error());
    data[0].effective &= !(1 << CAP_NET_RAW);
    // SAFETY: as above; capset(2) only reads them, and pid 0 is this thread.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut hdr, data.as_ptr()) };
    assert_eq!(rc, 0, "capset: {}", std::io::Error::last_os_error());
}

#[test]
fn an_option_header_without_cap_net_raw_says_so_and_with_it_is_set() {
    if !ipv6_available() {
        eprintln!("SKIPPED: no IPv6 on this host");
        return;
    }
    let (with, without) = std::thread::spawn(|| {
        let sock = UdpSocket::bind("[::1]:0").unwrap();
        let with = set_ext_header(&sock, ExtHeader::DestOpts);
        drop_net_raw_in_this_thread();
        let sock = UdpSocket::bind("[::1]:0").unwrap();
        (with, set_ext_header(&sock, ExtHeader::HopByHop))
    })
    .join()
    .unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert!(with.is_ok(), "root sets IPV6_DSTOPTS: {with:?}");
    }
    match without {
        Err(PathError::NeedsCapNetRaw {
            option: "IPV6_HOPOPTS",
        }) => {}
        other => panic!("expected NeedsCapNetRaw, got {other:?}"),
    }
}

#[test]
fn the_kernel_path_mtu_needs_a_connected_socket_and_reads_the_loopback_mtu() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let e = kernel_path_mtu(&sock).unwrap_err().to_string();
    assert!(
        e.contains("IP_MTU") && e.contains("must be connected"),
        "{e}"
    );
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(peer.local_addr().unwrap()).unwrap();
    let lo_mtu: u32 = std::fs::read_to_string("/sys/class/net/lo/mtu")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // An IPv4 packet carries at most 65535 bytes, whatever loopback's MTU (65536).
    assert_eq!(kernel_path_mtu(&sock).unwrap(), lo_mtu.min(65535));
    set_df_mode(&sock, DfMode::Probe).unwrap();
    set_df_mode(&sock, DfMode::Fragment).unwrap();
    enable_error_queue(&sock).unwrap();
    assert_eq!(drain_queued_errors(&sock).unwrap(), Vec::new());
}

#[test]
fn a_refused_port_arrives_on_the_error_queue_as_a_typed_event() {
    use dualperf_net::pathmtu::{wait_queued_errors, ErrorOrigin, QueuedErrorKind};
    use std::time::Duration;
    let closed = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(addr).unwrap();
    enable_error_queue(&sock).unwrap();
    sock.send(b"anyone?").unwrap();
    assert!(wait_queued_errors(&sock, Duration::from_secs(2)).unwrap());
    let got = drain_queued_errors(&sock).unwrap();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].kind, QueuedErrorKind::Refused);
    assert_eq!(got[0].origin, ErrorOrigin::Icmp);
    assert_eq!((got[0].icmp_type, got[0].icmp_code), (3, 3));
    assert_eq!(got[0].offender, Some("127.0.0.1".parse().unwrap()));
    assert_eq!(got[0].mtu_bytes, None);
}

#[test]
fn the_plpmtud_sysctls_are_read() {
    let s = tcp_mtu_sysctls();
    let want = |p: &str| -> Option<u32> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    assert_eq!(s.mtu_probing, want("/proc/sys/net/ipv4/tcp_mtu_probing"));
    assert_eq!(s.base_mss_bytes, want("/proc/sys/net/ipv4/tcp_base_mss"));
    assert!(s.mtu_probing.is_some(), "readable on Linux");
}
