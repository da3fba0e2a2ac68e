//! Our client against Debian's `iperf3 -s -1 -J`: what we report must be what the iperf3
//! server counted.

mod common;

use common::{f64_at, free_port, u64_at, Iperf3};
use dualperf_iperf3::{run, ClientOptions, Iperf3Error, Iperf3Result};
use serde_json::Value;
use std::time::Duration;
use wire::metrics as m;
use wire::spec::{Bound, Direction, Family, Rate, TestKind, TestSpec};

const WAIT: Duration = Duration::from_secs(20);

fn spec(kind: TestKind, family: Family, payload: u32, ms: u64) -> TestSpec {
    let mut s = TestSpec::new(kind, family, payload);
    s.bound = Bound::DurationNs(ms * 1_000_000);
    s
}

fn metric(r: &Iperf3Result, name: &str) -> f64 {
    r.metrics
        .iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("no {name} in {:?}", r.metrics))
        .value
}

/// Runs `spec` against a fresh `iperf3 -s -1` and returns our result and its JSON.
fn against_iperf3(spec: &TestSpec, opts: &ClientOptions) -> (Iperf3Result, Value) {
    let port = free_port();
    let server = Iperf3::server(port, &[]);
    let host = match spec.family {
        Family::V4 => "127.0.0.1",
        Family::V6 => "::1",
    };
    let ours = run(host, port, spec, opts);
    let done = server.finish(WAIT);
    let ours = ours.unwrap_or_else(|e| panic!("{e}\n{}\n{}", done.stdout, done.stderr));
    assert!(done.success, "{}\n{}", done.stdout, done.stderr);
    (ours, done.json())
}

/// An iperf3 server stops reading at TEST_END: what sat in the socket buffers is
/// sent by us but never counted by it.
fn sent_covers_received(sent: u64, received: u64) {
    assert!(
        sent >= received && received as f64 > sent as f64 * 0.5,
        "sent {sent}, received {received}"
    );
}

#[test]
fn tcp_forward_v4_bytes_agree_with_iperf3_server() {
    let s = spec(TestKind::TcpStream, Family::V4, 131_072, 500);
    let (r, j) = against_iperf3(&s, &ClientOptions::default());
    let f = r.forward.clone().unwrap();
    assert_eq!(f.recv_bytes, u64_at(&j, &["end", "sum_received", "bytes"]));
    assert!(f.recv_bytes > 1_000_000, "{f:?}");
    sent_covers_received(f.sent_bytes, f.recv_bytes);
    assert_eq!(metric(&r, m::RECV_BYTES), f.recv_bytes as f64);
    // The client ends the test at the requested time, never before; the upper bound
    // only catches a hang (a loaded machine may add any delay before the end is seen).
    assert!(
        r.duration_s >= 0.5 && r.duration_s < 5.0,
        "{}",
        r.duration_s
    );
    assert!(metric(&r, m::THROUGHPUT_BPS) > 0.0);
    assert!(r.unavailable.contains(&m::RTT_MEAN_NS));
    let cpu = f64_at(&j, &["end", "cpu_utilization_percent", "host_total"]);
    assert!(
        (metric(&r, m::PROC_REMOTE_PCT) - cpu).abs() < 1e-6,
        "remote CPU is iperf3's own figure"
    );
}

#[test]
fn tcp_two_streams_v6_bytes_agree_with_iperf3_server() {
    let mut s = spec(TestKind::TcpStream, Family::V6, 65_536, 400);
    s.streams = 2;
    let (r, j) = against_iperf3(&s, &ClientOptions::default());
    let f = r.forward.clone().unwrap();
    assert_eq!(f.streams, 2);
    assert_eq!(j["end"]["streams"].as_array().map(Vec::len), Some(2));
    assert_eq!(f.recv_bytes, u64_at(&j, &["end", "sum_received", "bytes"]));
    sent_covers_received(f.sent_bytes, f.recv_bytes);
    let per_stream: u64 = (0..2)
        .map(|i| u64_at(&j["end"]["streams"][i], &["receiver", "bytes"]))
        .sum();
    assert_eq!(per_stream, f.recv_bytes);
}

#[test]
fn tcp_reverse_v4_we_receive_every_byte_iperf3_sent() {
    let mut s = spec(TestKind::TcpStream, Family::V4, 131_072, 400);
    s.direction = Direction::Reverse;
    let (r, j) = against_iperf3(&s, &ClientOptions::default());
    let rev = r.reverse.clone().unwrap();
    assert!(r.forward.is_none());
    assert_eq!(rev.sent_bytes, u64_at(&j, &["end", "sum_sent", "bytes"]));
    // iperf3 closes its data sockets at TEST_END; we read to EOF.
    assert_eq!(rev.recv_bytes, rev.sent_bytes);
}

#[test]
fn tcp_bidir_v4_both_directions_agree() {
    let mut s = spec(TestKind::TcpStream, Family::V4, 131_072, 400);
    s.direction = Direction::Bidir;
    let (r, j) = against_iperf3(&s, &ClientOptions::default());
    let (f, rev) = (r.forward.clone().unwrap(), r.reverse.clone().unwrap());
    // The server's -J is written from its side: its sum_received is our forward direction.
    assert_eq!(f.recv_bytes, u64_at(&j, &["end", "sum_received", "bytes"]));
    assert_eq!(
        rev.sent_bytes,
        u64_at(&j, &["end", "sum_sent_bidir_reverse", "bytes"])
    );
    assert_eq!(rev.recv_bytes, rev.sent_bytes, "we read to EOF");
    sent_covers_received(f.sent_bytes, f.recv_bytes);
}

#[test]
fn udp_forward_v4_loss_and_jitter_are_the_iperf3_server_figures() {
    let mut s = spec(TestKind::UdpStream, Family::V4, 400, 500);
    s.rate = Some(Rate::BitsPerSec(8_000_000));
    let (r, j) = against_iperf3(&s, &ClientOptions::default());
    let f = r.forward.clone().unwrap();
    let sum = &j["end"]["sum_received"];
    assert_eq!(f.recv_bytes, u64_at(sum, &["bytes"]));
    assert_eq!(f.lost_packets, Some(u64_at(sum, &["lost_packets"]) as i64));
    assert_eq!(f.highest_seq, Some(u64_at(sum, &["packets"])));
    let jitter_ms = f64_at(sum, &["jitter_ms"]);
    assert!((metric(&r, m::JITTER_RFC3550_NS) / 1e6 - jitter_ms).abs() < 1e-9);
    // 8 Mbit/s of 400-byte datagrams is 2500/s. Load-proof relations only: the pacer
    // never sends ahead of its schedule (a starved sender sends fewer, never more), and
    // the offered rate is the bytes sent over the same duration the client reports.
    let sent = f.sent_packets.unwrap();
    assert!(sent > 0, "nothing sent");
    assert!(
        sent as f64 <= 2500.0 * r.duration_s + 64.0,
        "{sent} datagrams in {} s: ahead of the schedule",
        r.duration_s
    );
    let rate = metric(&r, m::SEND_RATE_BPS);
    let want = f.sent_bytes as f64 * 8.0 / r.duration_s;
    assert!(
        (rate - want).abs() <= 1e-9 * want,
        "offered {rate} vs {want} bit/s"
    );
    // iperf3 stops counting at TEST_END: it may miss the last few datagrams in flight.
    assert!(f.highest_seq.unwrap() <= sent && f.highest_seq.unwrap() + 20 >= sent);
}

#[test]
fn udp_reverse_v6_with_64bit_counters_and_our_drop_hook() {
    let mut s = spec(TestKind::UdpStream, Family::V6, 500, 500);
    s.rate = Some(Rate::BitsPerSec(8_000_000));
    s.direction = Direction::Reverse;
    let opts = ClientOptions {
        udp_counters_64bit: true,
        drop_every_nth_received: Some(20),
        ..ClientOptions::default()
    };
    let (r, j) = against_iperf3(&s, &opts);
    let rev = r.reverse.clone().unwrap();
    let lost = rev.lost_packets.unwrap();
    let sent = rev.sent_packets.unwrap();
    assert_eq!(sent, u64_at(&j, &["end", "sum_sent", "packets"]));
    // The hook drops 1 in 20; iperf3's loss rule turns each into one lost datagram.
    let expected = rev.highest_seq.unwrap() / 20;
    assert!(
        lost as u64 >= expected.saturating_sub(1) && lost as u64 <= expected + 3,
        "lost {lost}, expected ~{expected}"
    );
    assert_eq!(rev.sent_bytes, u64_at(&j, &["end", "sum_sent", "bytes"]));
    assert!(metric(&r, m::LOSS_PCT) > 4.0 && metric(&r, m::LOSS_PCT) < 6.0);
}

#[test]
fn busy_iperf3_server_is_reported_as_busy() {
    let port = free_port();
    let _server = Iperf3::server(port, &[]);
    let port_s = port.to_string();
    let first = Iperf3::spawn(&["-c", "127.0.0.1", "-p", &port_s, "-t", "2", "-b", "10M"]);
    std::thread::sleep(Duration::from_millis(400));
    let s = spec(TestKind::TcpStream, Family::V4, 1000, 100);
    let err = run("127.0.0.1", port, &s, &ClientOptions::default()).unwrap_err();
    assert!(matches!(err, Iperf3Error::Busy), "{err}");
    drop(first);
}

#[test]
fn taken_udp_port_comes_back_as_a_readable_server_error() {
    let port = free_port();
    let server = Iperf3::server(port, &[]);
    // Hold the UDP port without SO_REUSEADDR: iperf3 cannot bind its stream listener.
    let _blocker = std::net::UdpSocket::bind(("::", port)).unwrap();
    let s = spec(TestKind::UdpStream, Family::V4, 400, 100);
    let err = run("127.0.0.1", port, &s, &ClientOptions::default()).unwrap_err();
    assert!(
        matches!(err, Iperf3Error::ServerError { code: 202, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("unable to start stream listener"),
        "{err}"
    );
    drop(server);
}

#[test]
fn rr_tests_are_refused_with_a_reason() {
    let s = spec(TestKind::TcpRr, Family::V4, 64, 100);
    let err = run("127.0.0.1", 1, &s, &ClientOptions::default()).unwrap_err();
    assert!(matches!(err, Iperf3Error::Unsupported(_)), "{err}");
    assert!(err.to_string().contains("RR latency"), "{err}");
}

#[test]
fn quic_tests_are_refused_not_run_as_tcp() {
    for kind in [TestKind::QuicStream, TestKind::QuicRr] {
        let s = spec(kind, Family::V4, 64, 100);
        let err = run("127.0.0.1", 1, &s, &ClientOptions::default()).unwrap_err();
        assert!(matches!(err, Iperf3Error::Unsupported(_)), "{err}");
        assert!(
            err.to_string().contains("QUIC needs a dualperf peer"),
            "{err}"
        );
    }
}

#[test]
fn killed_iperf3_server_ends_our_test_with_an_error_at_once() {
    for direction in [Direction::Forward, Direction::Reverse] {
        let port = free_port();
        let mut server = Iperf3::server(port, &[]);
        let mut s = spec(TestKind::UdpStream, Family::V4, 400, 10_000);
        s.rate = Some(Rate::BitsPerSec(4_000_000));
        s.direction = direction;
        let client =
            std::thread::spawn(move || run("127.0.0.1", port, &s, &ClientOptions::default()));
        std::thread::sleep(Duration::from_millis(500));
        let killed_at = std::time::Instant::now();
        server.kill();
        let result = client.join().unwrap();
        assert!(
            result.is_err(),
            "{direction:?}: a dead server is not a result"
        );
        assert!(
            killed_at.elapsed() < Duration::from_secs(2),
            "{direction:?}: noticed late"
        );
    }
}

#[test]
fn count_bounded_tests_end_on_their_own_against_iperf3() {
    // Forward UDP: exactly 300 datagrams at 4 Mbit/s.
    let mut s = spec(TestKind::UdpStream, Family::V4, 500, 0);
    s.bound = Bound::Count(300);
    s.rate = Some(Rate::BitsPerSec(4_000_000));
    let (r, j) = against_iperf3(&s, &ClientOptions::default());
    assert_eq!(r.forward.clone().unwrap().sent_packets, Some(300));
    assert_eq!(u64_at(&j, &["end", "sum_received", "packets"]), 300);
    assert_eq!(metric(&r, m::SENT_PACKETS), 300.0);
    // Reverse TCP: iperf3 sends 200 blocks of 10000 bytes; we end when they arrived.
    let mut s = spec(TestKind::TcpStream, Family::V6, 10_000, 0);
    s.bound = Bound::Count(200);
    s.direction = Direction::Reverse;
    let (r, j) = against_iperf3(&s, &ClientOptions::default());
    let rev = r.reverse.unwrap();
    assert_eq!(rev.sent_bytes, u64_at(&j, &["end", "sum_sent", "bytes"]));
    assert!(rev.recv_bytes >= 200 * 10_000, "{rev:?}");
    assert!(r.duration_s < 3.0, "{}", r.duration_s);
}
