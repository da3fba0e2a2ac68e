//! The server against hostile or broken peers: garbage, truncated, oversized,
//! out-of-order and other-version control messages get an error reply and a close; a
//! silent or vanished peer neither blocks nor wedges it; it keeps serving afterwards; a
//! test group (what a loaded-latency client sends, here added by hand) cannot multiply
//! its limits.

use dualperf_engine::{
    run_client, start_server, ClientConfig, EngineError, Limits, NullRecorder, ServerConfig,
    ServerHandle,
};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};
use wire::proto::{encode_frame, ErrorCode, FrameDecoder, Msg, PROTOCOL_VERSION};
use wire::spec::{Bound, Direction, Family, Rate, TestKind, TestSpec};

fn server() -> (ServerHandle, SocketAddr) {
    server_with(ServerConfig {
        limits: Limits {
            handshake: Duration::from_millis(300),
            ..Limits::default()
        },
        ..ServerConfig::default()
    })
}

fn quick_run(addr: SocketAddr) {
    let mut spec = TestSpec::new(TestKind::TcpRr, Family::V4, 64);
    spec.bound = Bound::Count(50);
    let cfg = ClientConfig::new("127.0.0.1", addr.port(), spec);
    let r = run_client(&cfg, &mut NullRecorder).expect("the server still serves");
    assert_eq!(r.transactions, 50);
}

/// `quick_run`, allowing the server up to 5 s to close the connections a test just
/// dropped (over its connection cap it answers "busy" meanwhile, which is correct).
fn quick_run_within_5s(addr: SocketAddr) {
    let mut spec = TestSpec::new(TestKind::TcpRr, Family::V4, 64);
    spec.bound = Bound::Count(50);
    let cfg = ClientConfig::new("127.0.0.1", addr.port(), spec);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match run_client(&cfg, &mut NullRecorder) {
            Ok(r) => {
                assert_eq!(r.transactions, 50);
                return;
            }
            Err(e) if std::time::Instant::now() < deadline => {
                eprintln!("server not serving yet ({e}); retrying");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("the server no longer serves after 5 s: {e}"),
        }
    }
}

/// Everything the server sends until it closes (bounded wait), decoded with `version`.
fn replies(mut s: TcpStream, version: u16) -> (Vec<Msg>, bool) {
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut dec = FrameDecoder::new(version);
    let mut msgs = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = loop {
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => dec.push(&buf[..n]),
            Err(e) => break e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    };
    while let Ok(Some(m)) = dec.next_msg() {
        msgs.push(m);
    }
    (msgs, closed)
}

fn error_code(msgs: &[Msg]) -> Option<ErrorCode> {
    msgs.iter().find_map(|m| match m {
        Msg::Error { code, .. } => Some(*code),
        _ => None,
    })
}

fn send_raw(addr: SocketAddr, bytes: &[u8]) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(bytes).unwrap();
    s
}

#[test]
fn garbage_gets_an_error_reply_and_a_close() {
    let (_h, addr) = server();
    let s = send_raw(addr, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let (msgs, closed) = replies(s, PROTOCOL_VERSION);
    assert_eq!(error_code(&msgs), Some(ErrorCode::Malformed));
    assert!(closed);
    quick_run(addr);
}

#[test]
fn oversized_and_malformed_frames_are_refused() {
    let (_h, addr) = server();
    let mut oversized = b"dP".to_vec();
    oversized.extend(PROTOCOL_VERSION.to_be_bytes());
    oversized.extend(u32::MAX.to_be_bytes());
    let mut bad_json = b"dP".to_vec();
    bad_json.extend(PROTOCOL_VERSION.to_be_bytes());
    bad_json.extend(5u32.to_be_bytes());
    bad_json.extend(b"{\"ty");
    bad_json.push(b'}');
    for bytes in [oversized, bad_json] {
        let (msgs, closed) = replies(send_raw(addr, &bytes), PROTOCOL_VERSION);
        assert_eq!(error_code(&msgs), Some(ErrorCode::Malformed), "{bytes:?}");
        assert!(closed);
    }
    quick_run(addr);
}

#[test]
fn out_of_order_messages_are_refused() {
    let (_h, addr) = server();
    let start = encode_frame(&Msg::Start { udp_port: None }, PROTOCOL_VERSION);
    let (msgs, closed) = replies(send_raw(addr, &start), PROTOCOL_VERSION);
    assert_eq!(error_code(&msgs), Some(ErrorCode::UnexpectedMessage));
    assert!(closed);
    // A second hello after the first.
    let hello = encode_frame(
        &Msg::Hello {
            client_info: Default::default(),
            client_nonce: None,
        },
        PROTOCOL_VERSION,
    );
    let (msgs, _) = replies(
        send_raw(addr, &[hello.clone(), hello].concat()),
        PROTOCOL_VERSION,
    );
    assert!(matches!(msgs.first(), Some(Msg::Welcome { .. })));
    assert_eq!(error_code(&msgs), Some(ErrorCode::UnexpectedMessage));
    quick_run(addr);
}

#[test]
fn another_protocol_version_is_told_so_in_a_frame_it_can_read() {
    let (_h, addr) = server();
    let hello = encode_frame(
        &Msg::Hello {
            client_info: Default::default(),
            client_nonce: None,
        },
        7,
    );
    let s = send_raw(addr, &hello);
    // Read with the server's version: the reply carries it in its header.
    let (msgs, closed) = replies(s, PROTOCOL_VERSION);
    assert_eq!(error_code(&msgs), Some(ErrorCode::VersionMismatch));
    assert!(closed);
}

#[test]
fn a_truncated_or_silent_peer_times_out_without_blocking_others() {
    let (_h, addr) = server();
    let hello = encode_frame(
        &Msg::Hello {
            client_info: Default::default(),
            client_nonce: None,
        },
        PROTOCOL_VERSION,
    );
    let t0 = Instant::now();
    let truncated = send_raw(addr, &hello[..hello.len() - 2]);
    let silent = TcpStream::connect(addr).unwrap();
    // Others are served while those two hang.
    quick_run(addr);
    for s in [truncated, silent] {
        let (msgs, closed) = replies(s, PROTOCOL_VERSION);
        assert_eq!(error_code(&msgs), Some(ErrorCode::Timeout));
        assert!(closed);
    }
    assert!(t0.elapsed() < Duration::from_secs(3));
}

#[test]
fn a_client_that_vanishes_mid_test_frees_the_server() {
    let (_h, addr) = server();
    let mut spec = TestSpec::new(TestKind::UdpStream, Family::V4, 128);
    spec.bound = Bound::DurationNs(60_000_000_000);
    let s = request_by_hand(addr, spec);
    std::thread::sleep(Duration::from_millis(50));
    drop(s); // accepted, holding the test slot, then gone
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let mut spec = TestSpec::new(TestKind::TcpRr, Family::V4, 64);
        spec.bound = Bound::Count(10);
        let cfg = ClientConfig::new("127.0.0.1", addr.port(), spec);
        match run_client(&cfg, &mut NullRecorder) {
            Ok(r) => {
                assert_eq!(r.transactions, 10);
                break;
            }
            Err(e) => {
                assert!(Instant::now() < deadline, "server still busy: {e}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

#[test]
fn random_bytes_never_take_the_server_down() {
    let (_h, addr) = server();
    // A fixed xorshift stream: reproducible, no dependency.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..40 {
        let len = 1 + (i * 37) % 300;
        let mut bytes = Vec::with_capacity(len);
        if i % 2 == 0 {
            bytes.extend_from_slice(b"dP");
            bytes.extend(PROTOCOL_VERSION.to_be_bytes());
            bytes.extend(((len as u32).saturating_sub(8)).to_be_bytes());
        }
        while bytes.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            bytes.push(x as u8);
        }
        let mut s = TcpStream::connect(addr).unwrap();
        let _ = s.write_all(&bytes);
        drop(s);
    }
    quick_run_within_5s(addr);
}

#[test]
fn many_runs_in_a_row_leak_no_threads() {
    let (_h, addr) = server();
    let threads = || {
        std::fs::read_dir("/proc/self/task")
            .map(|d| d.count())
            .unwrap_or(0)
    };
    let fds = || {
        std::fs::read_dir("/proc/self/fd")
            .map(|d| d.count())
            .unwrap_or(0)
    };
    quick_run(addr);
    std::thread::sleep(Duration::from_millis(50));
    let (threads_before, fds_before) = (threads(), fds());
    for _ in 0..30 {
        quick_run(addr);
    }
    // The server side of the last session may still be closing politely.
    std::thread::sleep(Duration::from_millis(300));
    let (threads_after, fds_after) = (threads(), fds());
    // Other tests in this binary run in parallel; allow their few threads and sockets.
    assert!(
        threads_after <= threads_before + 8,
        "threads grew from {threads_before} to {threads_after}"
    );
    assert!(
        fds_after <= fds_before + 16,
        "file descriptors grew from {fds_before} to {fds_after} over 30 runs"
    );
}

#[test]
fn connections_over_the_cap_are_told_busy() {
    let cfg = ServerConfig {
        binds: vec!["127.0.0.1:0".parse().unwrap()],
        max_connections: 2,
        server_info: Some(Default::default()),
        ..ServerConfig::default()
    };
    let h = start_server(cfg).unwrap();
    let addr = h.local_addrs()[0];
    let hold: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(100));
    let hello = encode_frame(
        &Msg::Hello {
            client_info: Default::default(),
            client_nonce: None,
        },
        PROTOCOL_VERSION,
    );
    let (msgs, closed) = replies(send_raw(addr, &hello), PROTOCOL_VERSION);
    // Its own code (issue 11.8): not the "another test is running" busy.
    assert_eq!(
        error_code(&msgs),
        Some(ErrorCode::ConnectionLimit),
        "{msgs:?}"
    );
    assert!(closed);
    // The engine's client words it for the user.
    let mut spec = TestSpec::new(TestKind::TcpRr, Family::V4, 64);
    spec.bound = Bound::Count(5);
    let err = run_client(
        &ClientConfig::new("127.0.0.1", addr.port(), spec),
        &mut NullRecorder,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("server busy"), "{err}");
    assert!(err.contains("too many control connections"), "{err}");
    assert!(!err.contains("another test"), "{err}");
    drop(hold);
}

/// A peer speaking the wire protocol by hand: `hello`, then a `request` for `spec`.
fn request_by_hand(addr: SocketAddr, spec: TestSpec) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    for m in [
        Msg::Hello {
            client_info: Default::default(),
            client_nonce: None,
        },
        Msg::Request {
            spec,
            client_proof: None,
        },
    ] {
        s.write_all(&encode_frame(&m, PROTOCOL_VERSION)).unwrap();
    }
    s
}

/// Read control messages until `want` matches one (bounded wait); that message.
fn read_until(s: &mut TcpStream, dec: &mut FrameDecoder, want: fn(&Msg) -> bool) -> Msg {
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        while let Ok(Some(m)) = dec.next_msg() {
            if want(&m) {
                return m;
            }
            assert!(!matches!(m, Msg::Error { .. }), "{m:?}");
        }
        let n = s.read(&mut buf).expect("a reply within 3 s");
        assert!(n > 0, "server closed the control connection");
        dec.push(&buf[..n]);
    }
}

#[test]
fn a_client_that_finishes_but_holds_its_data_connection_does_not_wedge_the_server() {
    let (_h, addr) = server();
    let mut ctl = TcpStream::connect(addr).unwrap();
    let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
    let mut spec = TestSpec::new(TestKind::TcpStream, Family::V4, 1000);
    spec.bound = Bound::DurationNs(60_000_000_000);
    let send = |s: &mut TcpStream, m: Msg| s.write_all(&encode_frame(&m, PROTOCOL_VERSION));
    send(
        &mut ctl,
        Msg::Hello {
            client_info: Default::default(),
            client_nonce: None,
        },
    )
    .unwrap();
    send(
        &mut ctl,
        Msg::Request {
            spec,
            client_proof: None,
        },
    )
    .unwrap();
    let Msg::Accept {
        data_port, token, ..
    } = read_until(&mut ctl, &mut dec, |m| matches!(m, Msg::Accept { .. }))
    else {
        unreachable!()
    };
    let mut data = TcpStream::connect(("127.0.0.1", data_port)).unwrap();
    data.write_all(&token.to_be_bytes()).unwrap();
    send(&mut ctl, Msg::Start { udp_port: None }).unwrap();
    read_until(&mut ctl, &mut dec, |m| matches!(m, Msg::Started));
    data.write_all(&[0u8; 10_000]).unwrap();
    // Finished, but the data connection stays open (no half-close): the server's
    // receiver never sees EOF.
    send(
        &mut ctl,
        Msg::Finished {
            stats: Default::default(),
        },
    )
    .unwrap();
    let t0 = Instant::now();
    read_until(&mut ctl, &mut dec, |m| matches!(m, Msg::Result { .. }));
    let waited = t0.elapsed();
    assert!(waited < Duration::from_secs(3), "result after {waited:?}");
    // The next real client is served while the first still holds both connections.
    quick_run(addr);
    assert!(t0.elapsed() < Duration::from_secs(4));
    drop((ctl, data));
}

/// A server on 127.0.0.1 with `cfg`'s limits.
fn server_with(cfg: ServerConfig) -> (ServerHandle, SocketAddr) {
    let h = start_server(ServerConfig {
        binds: vec!["127.0.0.1:0".parse().unwrap()],
        server_info: Some(Default::default()),
        ..cfg
    })
    .unwrap();
    let addr = h.local_addrs()[0];
    (h, addr)
}

/// `run -t udp-stream -R -s 1400 -b 24M -P 4 -d 2` with the group id a proxy added.
fn grouped_reverse_udp(group: u64) -> TestSpec {
    let mut s = TestSpec::new(TestKind::UdpStream, Family::V4, 1400);
    s.direction = Direction::Reverse;
    s.rate = Some(Rate::BitsPerSec(24_000_000));
    s.streams = 4;
    s.bound = Bound::DurationNs(2_000_000_000);
    s.group = Some(group);
    s
}

/// A raw peer that asks for `spec` and holds the accepted test (it never starts it):
/// the connection, once the server has accepted.
fn hold_accepted(addr: SocketAddr, spec: TestSpec) -> TcpStream {
    let mut ctl = request_by_hand(addr, spec);
    let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
    read_until(&mut ctl, &mut dec, |m| matches!(m, Msg::Accept { .. }));
    ctl
}

fn rejection(addr: SocketAddr, spec: TestSpec) -> String {
    match run_client(
        &ClientConfig::new("127.0.0.1", addr.port(), spec),
        &mut NullRecorder,
    ) {
        Err(EngineError::Rejected(why)) => why,
        other => panic!("expected a refusal naming the limit, got {other:?}"),
    }
}

/// Issue 38: through a proxy that added `"group": 4242`, 8 such tests against
/// `--max-streams 4 --max-rate 100M` all ran at once (32 streams, ~770 Mbit/s).
#[test]
fn a_group_shares_one_admission_and_budget() {
    let (_h, addr) = server_with(ServerConfig {
        max_streams: 4,
        max_send_rate_bps: Some(100_000_000),
        ..ServerConfig::default()
    });
    let held = hold_accepted(addr, grouped_reverse_udp(4242));
    assert_eq!(
        rejection(addr, grouped_reverse_udp(4242)),
        "the server allows at most 4 streams per test, a group's tests together \
         (--max-streams); the group's running tests hold 4, 4 more asked for"
    );
    // With streams to spare (--max-streams 8), the group's rate is what refuses it.
    drop(held);
    let (_h2, addr2) = server_with(ServerConfig {
        max_streams: 8,
        max_send_rate_bps: Some(100_000_000),
        ..ServerConfig::default()
    });
    let _held = hold_accepted(addr2, grouped_reverse_udp(4242));
    let mut one = grouped_reverse_udp(4242);
    one.streams = 1;
    assert_eq!(
        rejection(addr2, one),
        "the server sends UDP at most at 100 Mbit/s in total (--max-rate), a group's tests \
         together; the group's running tests hold 97 Mbit/s, 24 Mbit/s more asked for"
    );
}
