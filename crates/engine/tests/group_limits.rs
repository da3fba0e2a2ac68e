//! A test group (what a loaded-latency client sends) cannot multiply the server's
//! limits: its tests share one admission and the budget of one test. A raw wire peer
//! opens the group and holds it; a client naming the same group is held to what is
//! left. A genuine loaded-latency test still runs against a server with the defaults.

use dualperf_engine::{
    run_client, run_loaded, start_server, ClientConfig, EngineError, LoadDirection, LoadedSpec,
    NullRecorder, ServerConfig, ServerHandle,
};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use wire::proto::{encode_frame, FrameDecoder, Msg, PROTOCOL_VERSION};
use wire::spec::{Bound, Direction, Family, Rate, TestKind, TestSpec};

fn server(cfg: ServerConfig) -> (ServerHandle, SocketAddr) {
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
    let mut ctl = TcpStream::connect(addr).unwrap();
    ctl.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
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
        ctl.write_all(&encode_frame(&m, PROTOCOL_VERSION)).unwrap();
    }
    let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
    let mut buf = [0u8; 4096];
    loop {
        while let Ok(Some(m)) = dec.next_msg() {
            match m {
                Msg::Accept { .. } => return ctl,
                Msg::Error { .. } => panic!("the group's first test was refused: {m:?}"),
                _ => {}
            }
        }
        let n = ctl.read(&mut buf).expect("a reply within 3 s");
        assert!(n > 0, "the server closed the control connection");
        dec.push(&buf[..n]);
    }
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
    let (_h, addr) = server(ServerConfig {
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
    let (_h2, addr2) = server(ServerConfig {
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

/// `run -t rrul` (both directions of load and both probe types: four tests of one group
/// at once) against a server with `dualperf server`'s default limits.
#[test]
fn a_genuine_loaded_latency_test_runs_against_the_default_limits() {
    let (_h, addr) = server(ServerConfig::default());
    let spec = LoadedSpec {
        family: Family::V4,
        streams: 4,
        load: LoadDirection::Both,
        duration_ns: 1_500_000_000,
        idle_ns: 400_000_000,
        probe_rate: 50,
        probe_bytes: 64,
        write_bytes: 16 * 1024,
        load_socket: Default::default(),
        interval_ns: None,
    };
    let base = ClientConfig::new(
        "127.0.0.1",
        addr.port(),
        TestSpec::new(TestKind::TcpRr, Family::V4, 64),
    );
    let r = run_loaded(&base, &spec).expect("rrul within the default limits");
    assert!(r.upload.is_some() && r.download.is_some());
    assert!(r.loaded.tcp.transactions >= 1 && r.loaded.udp.transactions >= 1);
}
