//! Socket options set through the helpers are read back as the kernel applied them, on
//! 127.0.0.1 and ::1; bad options give typed errors that say what to do.
#![cfg(target_os = "linux")]

use dualperf_net::{
    available_congestion_controls, check_ipv6, tcp_connect, tcp_listen, udp_bind, udp_connect,
    NetError,
};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;
use wire::spec::SocketOpts;

fn ipv6_ok() -> bool {
    match check_ipv6() {
        Ok(()) => true,
        Err(e) => {
            println!("skipping the IPv6 half: {e}");
            false
        }
    }
}

fn tcp_opts() -> SocketOpts {
    SocketOpts {
        sndbuf_bytes: Some(65_536),
        rcvbuf_bytes: Some(65_536),
        nodelay: true,
        mss_bytes: Some(1000),
        tos: Some(0x10),
        flowlabel: None,
        congestion: available_congestion_controls().into_iter().next(),
        dont_fragment: true,
    }
}

fn check_tcp(listen: SocketAddr, opts: &SocketOpts) {
    let (listener, lapplied) = tcp_listen(listen, opts).unwrap();
    assert_eq!(
        lapplied.sndbuf_bytes,
        Some(2 * 65_536),
        "Linux doubles SO_SNDBUF"
    );
    let addr = listener.local_addr().unwrap();
    let (stream, applied) = tcp_connect(addr, opts, Duration::from_secs(2)).unwrap();
    let (_server_side, _) = listener.accept().unwrap();
    assert_eq!(applied.sndbuf_bytes, Some(131_072));
    assert_eq!(applied.rcvbuf_bytes, Some(131_072));
    assert_eq!(applied.nodelay, Some(true));
    let mss = applied.mss_bytes.unwrap();
    assert!((900..=1000).contains(&mss), "MSS clamp not applied: {mss}");
    assert_eq!(applied.tos, Some(0x10));
    assert_eq!(applied.congestion, opts.congestion);
    assert_eq!(applied.dont_fragment, Some(true));
    assert_eq!(applied.v6only, listen.is_ipv6().then_some(true));
    drop(stream);
}

#[test]
fn tcp_options_are_applied_and_read_back_v4() {
    check_tcp("127.0.0.1:0".parse().unwrap(), &tcp_opts());
}

#[test]
fn tcp_options_are_applied_and_read_back_v6_with_flowlabel() {
    if !ipv6_ok() {
        return;
    }
    let mut opts = tcp_opts();
    check_tcp("[::1]:0".parse().unwrap(), &opts);
    opts.flowlabel = Some(0x1_2345);
    let (listener, _) = tcp_listen("[::1]:0".parse().unwrap(), &opts).unwrap();
    let (_s, applied) = tcp_connect(
        listener.local_addr().unwrap(),
        &opts,
        Duration::from_secs(2),
    )
    .unwrap();
    assert_eq!(applied.flowlabel, Some(0x1_2345));
}

#[test]
fn defaults_leave_kernel_values_and_report_them() {
    let (sock, applied) = udp_bind("127.0.0.1:0".parse().unwrap(), &SocketOpts::default()).unwrap();
    assert!(applied.sndbuf_bytes.unwrap() > 0);
    assert_eq!(applied.nodelay, None, "TCP options do not apply to UDP");
    assert_eq!(applied.congestion, None);
    assert_eq!(applied.dont_fragment, Some(false));
    assert!(applied.notes.is_empty());
    // AppliedOpts is serialisable for the result JSON
    let json = serde_json::to_string(&applied).unwrap();
    assert!(json.contains("sndbuf_bytes"));
    drop(sock);
}

#[test]
fn udp_buffer_of_8k_is_doubled_and_tcp_options_are_ignored() {
    let opts = SocketOpts {
        sndbuf_bytes: Some(8192),
        rcvbuf_bytes: Some(8192),
        nodelay: true,
        mss_bytes: Some(1000),
        dont_fragment: true,
        ..SocketOpts::default()
    };
    let (_sock, applied) = udp_bind("127.0.0.1:0".parse().unwrap(), &opts).unwrap();
    assert_eq!(applied.rcvbuf_bytes, Some(16_384));
    assert_eq!(applied.sndbuf_bytes, Some(16_384));
    assert_eq!(applied.mss_bytes, None);
    assert_eq!(applied.dont_fragment, Some(true));
}

#[test]
fn a_buffer_above_rmem_max_is_forced_or_explained() {
    let max: u32 = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let want = max.saturating_mul(2).min(64 << 20);
    let opts = SocketOpts {
        rcvbuf_bytes: Some(want),
        ..SocketOpts::default()
    };
    let (_sock, applied) = udp_bind("127.0.0.1:0".parse().unwrap(), &opts).unwrap();
    assert_eq!(applied.notes.len(), 1, "{:?}", applied.notes);
    assert!(applied.notes[0].contains("net.core.rmem_max"));
    let got = applied.rcvbuf_bytes.unwrap();
    if applied.notes[0].contains("FORCE") {
        assert_eq!(got, want * 2);
    } else {
        assert!(got < want * 2);
    }
}

#[test]
fn unknown_congestion_control_names_the_available_ones() {
    let opts = SocketOpts {
        congestion: Some("no-such-cc".into()),
        ..SocketOpts::default()
    };
    let err = tcp_listen("127.0.0.1:0".parse().unwrap(), &opts).unwrap_err();
    match &err {
        NetError::UnknownCongestion { name, available } => {
            assert_eq!(name, "no-such-cc");
            assert!(!available.is_empty());
            assert!(err.to_string().contains(&available[0]), "{err}");
        }
        other => panic!("wrong error: {other}"),
    }
}

#[test]
fn flowlabel_on_ipv4_and_out_of_range_are_refused() {
    let opts = SocketOpts {
        flowlabel: Some(5),
        ..SocketOpts::default()
    };
    let err = tcp_connect(
        "127.0.0.1:9".parse().unwrap(),
        &opts,
        Duration::from_millis(100),
    )
    .unwrap_err();
    assert!(matches!(err, NetError::InvalidOption(_)), "{err}");
    assert!(err.to_string().contains("IPv6"));
    let (sock, _) = udp_bind("127.0.0.1:0".parse().unwrap(), &SocketOpts::default()).unwrap();
    assert!(udp_connect(&sock, "127.0.0.1:9".parse().unwrap(), &opts).is_err());
    if ipv6_ok() {
        let opts = SocketOpts {
            flowlabel: Some(0x10_0000),
            ..SocketOpts::default()
        };
        let (sock, _) = udp_bind("[::1]:0".parse().unwrap(), &SocketOpts::default()).unwrap();
        let err = udp_connect(&sock, "[::1]:9".parse().unwrap(), &opts).unwrap_err();
        assert!(err.to_string().contains("20 bits"), "{err}");
    }
}

#[test]
fn connection_refused_is_a_typed_error() {
    // Bind then drop to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let err = tcp_connect(addr, &SocketOpts::default(), Duration::from_secs(1)).unwrap_err();
    assert!(matches!(err, NetError::Connect { .. }));
    assert_eq!(err.io_kind(), Some(std::io::ErrorKind::ConnectionRefused));
}

/// Ask for IPV6_FLOWINFO and IPV6_TCLASS ancillary data on received datagrams.
fn enable_flowinfo_reception(sock: &UdpSocket) {
    let fd = sock.as_raw_fd();
    let one: i32 = 1;
    for opt in [libc::IPV6_FLOWINFO, libc::IPV6_RECVTCLASS] {
        // SAFETY: `one` lives for the call and its size is passed.
        let rc = unsafe {
            libc::setsockopt(fd, libc::IPPROTO_IPV6, opt, (&one as *const i32).cast(), 4)
        };
        assert_eq!(rc, 0);
    }
}

/// Receive one datagram; returns (flowinfo in host order, traffic class) from its
/// control messages.
fn recvmsg_flowinfo(sock: &UdpSocket) -> (Option<u32>, Option<i32>) {
    let fd = sock.as_raw_fd();
    let mut buf = [0u8; 64];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut cbuf = [0u64; 16];
    // SAFETY: msghdr is plain data; zero is a valid empty header.
    let mut h: libc::msghdr = unsafe { std::mem::zeroed() };
    h.msg_iov = &mut iov;
    h.msg_iovlen = 1;
    h.msg_control = cbuf.as_mut_ptr().cast();
    h.msg_controllen = std::mem::size_of_val(&cbuf) as _;
    // SAFETY: `h` points at live buffers for the duration of the call.
    let rc = unsafe { libc::recvmsg(fd, &mut h, 0) };
    assert!(rc > 0);
    let (mut flow, mut tclass) = (None, None);
    // SAFETY: walking the control buffer the kernel filled, within its length.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::IPPROTO_IPV6 && (*c).cmsg_type == libc::IPV6_FLOWINFO {
                let be: u32 = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                flow = Some(u32::from_be(be));
            }
            if (*c).cmsg_level == libc::IPPROTO_IPV6 && (*c).cmsg_type == libc::IPV6_TCLASS {
                tclass = Some(std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<i32>()));
            }
            c = libc::CMSG_NXTHDR(&h, c);
        }
    }
    (flow, tclass)
}

#[test]
fn ipv6_flow_label_and_traffic_class_are_on_the_wire() {
    if !ipv6_ok() {
        return;
    }
    let (rx, _) = udp_bind("[::1]:0".parse().unwrap(), &SocketOpts::default()).unwrap();
    enable_flowinfo_reception(&rx);
    let opts = SocketOpts {
        tos: Some(0x28),
        flowlabel: Some(0x5_4321),
        ..SocketOpts::default()
    };
    let (tx, applied) = udp_bind("[::1]:0".parse().unwrap(), &opts).unwrap();
    assert_eq!(applied.tos, Some(0x28));
    let applied = udp_connect(&tx, rx.local_addr().unwrap(), &opts).unwrap();
    assert_eq!(applied.flowlabel, Some(0x5_4321));
    tx.send(b"label").unwrap();
    let (flow, tclass) = recvmsg_flowinfo(&rx);
    let flow = flow.expect("no IPV6_FLOWINFO control message");
    assert_eq!(flow & 0xF_FFFF, 0x5_4321, "flowinfo {flow:#x}");
    assert_eq!(tclass, Some(0x28));
}

#[test]
fn accepted_streams_inherit_the_listeners_settings() {
    let available = available_congestion_controls();
    let default_cc =
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control").unwrap_or_default();
    // Pick an algorithm that is not the default, so inheritance is visible.
    let Some(cc) = available.iter().find(|c| c.as_str() != default_cc.trim()) else {
        println!("only one congestion control available, skipped");
        return;
    };
    let opts = SocketOpts {
        rcvbuf_bytes: Some(65_536),
        congestion: Some(cc.clone()),
        nodelay: true,
        ..SocketOpts::default()
    };
    let (listener, _) = tcp_listen("127.0.0.1:0".parse().unwrap(), &opts).unwrap();
    let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (accepted, _) = listener.accept().unwrap();
    let applied = dualperf_net::read_applied(&accepted).unwrap();
    assert_eq!(applied.congestion.as_deref(), Some(cc.as_str()));
    assert_eq!(applied.rcvbuf_bytes, Some(131_072));
    assert_eq!(applied.nodelay, Some(true));
}

/// SO_RCVLOWAT as the TCP bulk receiver sets it: the kernel keeps the value, a reader
/// with fewer bytes queued than the mark still gets them once its receive timeout
/// expires (nothing held back for ever), and a closing peer wakes it at once.
#[test]
fn a_receive_low_water_mark_delays_a_read_but_never_loses_bytes() {
    use dualperf_net::set_recv_lowat;
    use std::io::{Read, Write};
    let (listener, _) = tcp_listen("127.0.0.1:0".parse().unwrap(), &SocketOpts::default()).unwrap();
    let addr = listener.local_addr().unwrap();
    let (mut tx, _) = tcp_connect(addr, &SocketOpts::default(), Duration::from_secs(2)).unwrap();
    let (mut rx, _) = listener.accept().unwrap();
    set_recv_lowat(&rx, 64 * 1024).unwrap();
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid for writes; `len` holds `v`'s size.
    let rc = unsafe {
        libc::getsockopt(
            rx.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVLOWAT,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    assert_eq!((rc, v), (0, 64 * 1024));
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    tx.write_all(b"ten bytes!").unwrap();
    let mut buf = [0u8; 1024];
    let t0 = std::time::Instant::now();
    let n = rx.read(&mut buf).unwrap();
    assert_eq!(
        &buf[..n],
        b"ten bytes!",
        "the partial read comes back after the timeout"
    );
    // Below the mark the reader is not woken by the arrival, only by its timeout (a
    // lower bound: load can only make it later).
    assert!(
        t0.elapsed() >= Duration::from_millis(80),
        "{:?}",
        t0.elapsed()
    );
    tx.write_all(b"tail").unwrap();
    drop(tx);
    let mut rest = Vec::new();
    rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    rx.read_to_end(&mut rest).unwrap();
    assert_eq!(rest, b"tail");
}
