//! QUIC tests on loopback over both families: exact byte counts in every direction,
//! request/response counts and ordered percentiles, the pinned certificate, the
//! server's limits, and a server that goes away mid-test. Every test is bounded in bytes
//! (count-bound) or time (a deadline), and none depends on speed.

use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

use dualperf_quic::{
    run_client, sha256_hex, Congestion, Limits, QuicError, QuicKind, QuicResult, QuicServer,
    QuicTest, ServerSide,
};
use wire::spec::{Bound, Direction, Family, SocketOpts};

const V4: &str = "127.0.0.1:0";
const V6: &str = "[::1]:0";
const FAMILIES: [&str; 2] = [V4, V6];

fn socket(addr: &str) -> UdpSocket {
    let opts = SocketOpts {
        sndbuf_bytes: Some(2 << 20),
        rcvbuf_bytes: Some(2 << 20),
        ..SocketOpts::default()
    };
    net::udp_bind(addr.parse().unwrap(), &opts).unwrap().0
}

fn stream(streams: u16, direction: Direction, bound: Bound) -> QuicTest {
    QuicTest {
        kind: QuicKind::Stream { streams, direction },
        bound,
        payload_bytes: 16_384,
        congestion: Congestion::Cubic,
        rate_bps: None,
        session: [0; 16],
    }
}

/// A server on `family` serving `agreed` and a client asking `asked`, both by a 60 s
/// deadline (a generous bound: nothing here takes more than a few seconds).
fn run(
    family: &str,
    limits: Limits,
    agreed: QuicTest,
    asked: QuicTest,
) -> (
    Result<QuicResult, QuicError>,
    Result<ServerSide, QuicError>,
    Duration,
) {
    let (server, cert) = QuicServer::bind(socket(family), limits).unwrap();
    let addr = server.local_addr().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let served = thread::spawn(move || server.serve_one(&agreed, deadline));
    let t = Instant::now();
    let client = run_client(socket(family), addr, cert, &asked, deadline);
    let took = t.elapsed();
    (client, served.join().unwrap(), took)
}

fn check_path(r: &QuicResult) {
    for path in [r.client_path, r.server_path] {
        assert!(path.smoothed_rtt_ns > 0 && path.min_rtt_ns <= path.smoothed_rtt_ns);
        assert!(path.cwnd_bytes > 0);
        // QUIC's smallest datagram; DPLPMTUD only goes up from there.
        assert!(path.current_mtu_bytes >= 1200, "{path:?}");
        assert!(path.sent_packets > 0 && path.udp_tx_datagrams > 0);
        assert!(path.udp_tx_calls > 0 && path.udp_tx_calls <= path.udp_tx_datagrams);
        assert!(path.udp_rx_datagrams > 0);
    }
    assert!(r.handshake_ns > 0);
    assert!(r.client_offload.max_gso_segments >= 1 && r.client_offload.gro_segments >= 1);
    assert!(r.server_offload.max_gso_segments >= 1 && r.server_offload.gro_segments >= 1);
}

#[test]
fn every_byte_sent_is_received_in_every_direction_over_both_families() {
    for family in FAMILIES {
        for direction in [Direction::Forward, Direction::Reverse, Direction::Bidir] {
            let test = stream(3, direction, Bound::Count(64));
            let (client, server, _) = run(family, Limits::default(), test, test);
            let r = client.unwrap_or_else(|e| panic!("{family} {direction:?}: {e}"));
            let served = server.unwrap();
            assert_eq!(served.test, test);
            // 3 streams × 64 writes × 16 KiB each way that sends.
            let expected = 3 * 64 * 16_384;
            let ways = [
                (r.forward, direction != Direction::Reverse),
                (r.reverse, direction != Direction::Forward),
            ];
            for (goodput, sends) in ways {
                match (goodput, sends) {
                    (Some(g), true) => {
                        assert_eq!((g.sent_bytes, g.received_bytes), (expected, expected));
                        assert!(g.receive_ns > 0 && g.bps() > 0.0);
                    }
                    (None, false) => {}
                    other => panic!("{family} {direction:?}: {other:?}"),
                }
            }
            assert_eq!(
                served.figures.received_bytes,
                r.forward.map_or(0, |g| g.received_bytes)
            );
            assert_eq!(
                served.figures.sent_bytes,
                r.reverse.map_or(0, |g| g.sent_bytes)
            );
            assert_eq!(r.family, if family == V6 { Family::V6 } else { Family::V4 });
            check_path(&r);
        }
    }
}

#[test]
fn a_timed_test_receives_what_was_sent_with_each_congestion_controller() {
    for (family, congestion) in [
        (V4, Congestion::NewReno),
        (V6, Congestion::Bbr),
        (V6, Congestion::Cubic),
    ] {
        let mut test = stream(2, Direction::Bidir, Bound::DurationNs(300_000_000));
        test.congestion = congestion;
        let (client, server, _) = run(family, Limits::default(), test, test);
        let r = client.unwrap();
        assert_eq!(r.congestion, congestion);
        for g in [r.forward.unwrap(), r.reverse.unwrap()] {
            assert!(g.sent_bytes > 0);
            assert_eq!(g.sent_bytes, g.received_bytes);
        }
        assert!(server.is_ok());
    }
}

#[test]
fn a_paced_sender_never_runs_ahead_of_its_rate() {
    // 8 Mbit/s for 0.5 s over 2 streams: each stream writes only while it is behind its
    // half of the rate, so at most 500 000 bytes plus one write per stream go out (a
    // slow machine sends less, never more).
    for family in FAMILIES {
        for direction in [Direction::Forward, Direction::Reverse] {
            let mut test = stream(2, direction, Bound::DurationNs(500_000_000));
            test.rate_bps = Some(8_000_000);
            let (client, _, _) = run(family, Limits::default(), test, test);
            let r = client.unwrap();
            let g = r.forward.or(r.reverse).unwrap();
            assert!(g.sent_bytes > 0);
            assert!(
                g.sent_bytes <= 500_000 + 2 * 16_384,
                "{family} {direction:?}: {g:?}"
            );
            assert_eq!(g.sent_bytes, g.received_bytes);
        }
    }
}

#[test]
fn request_response_counts_every_exchange_and_orders_its_percentiles() {
    for family in FAMILIES {
        let test = QuicTest {
            kind: QuicKind::Rr,
            bound: Bound::Count(200),
            payload_bytes: 1_000,
            congestion: Congestion::Cubic,
            rate_bps: None,
            session: [0; 16],
        };
        let (client, server, _) = run(family, Limits::default(), test, test);
        let r = client.unwrap();
        let rr = r.rr.unwrap();
        assert_eq!(rr.transactions, 200);
        assert_eq!(rr.server_transactions, 200);
        assert_eq!(server.unwrap().figures.transactions, 200);
        let s = rr.rtt;
        assert_eq!(s.count, 200);
        assert!(s.min_ns > 0);
        assert!(s.min_ns <= s.p50_ns && s.p50_ns <= s.p90_ns && s.p90_ns <= s.p99_ns);
        assert!(s.p99_ns <= s.p999_ns && s.p999_ns <= s.max_ns);
        assert!(r.forward.is_none() && r.reverse.is_none());
        check_path(&r);
    }
}

#[test]
fn a_certificate_other_than_the_pinned_one_is_refused_by_name() {
    for family in FAMILIES {
        let (server, cert) = QuicServer::bind(socket(family), Limits::default()).unwrap();
        let (_other_server, other_cert) =
            QuicServer::bind(socket(family), Limits::default()).unwrap();
        let addr: SocketAddr = server.local_addr().unwrap();
        let test = stream(1, Direction::Forward, Bound::Count(1));
        let deadline = Instant::now() + Duration::from_secs(30);
        let served = thread::spawn(move || server.serve_one(&test, deadline));
        let err =
            run_client(socket(family), addr, other_cert.clone(), &test, deadline).unwrap_err();
        match &err {
            QuicError::CertificateMismatch {
                pinned_sha256,
                presented_sha256,
            } => {
                assert_eq!(pinned_sha256, &sha256_hex(&other_cert));
                assert_eq!(presented_sha256, &sha256_hex(&cert));
            }
            other => panic!("{family}: {other}"),
        }
        assert!(err.to_string().contains("refusing to talk to it"));
        // The server learns of the refusal from the client's close, not from its deadline.
        match served.join().unwrap() {
            Err(QuicError::PeerClosed(_)) => {}
            other => panic!("{family}: {other:?}"),
        }
    }
}

fn refusal(family: &str, limits: Limits, agreed: QuicTest, asked: QuicTest) -> String {
    let (client, server, _) = run(family, limits, agreed, asked);
    let reason = match client {
        Err(QuicError::Refused(reason)) => reason,
        other => panic!("{other:?}"),
    };
    match server {
        Err(QuicError::Refused(r)) => assert_eq!(r, reason),
        other => panic!("{other:?}"),
    }
    reason
}

#[test]
fn a_test_beyond_the_servers_limits_is_refused_with_the_reason() {
    let limits = Limits {
        max_streams: 2,
        max_duration: Duration::from_secs(5),
        max_payload_bytes: 65_536,
        max_send_rate_bps: Some(1_000_000),
    };
    let agreed = stream(2, Direction::Forward, Bound::Count(1));
    let more_streams = stream(3, Direction::Forward, Bound::Count(1));
    assert_eq!(
        refusal(V4, limits, agreed, more_streams),
        "3 streams asked; this server allows at most 2"
    );
    let longer = stream(1, Direction::Forward, Bound::DurationNs(6_000_000_000));
    assert_eq!(
        refusal(V6, limits, agreed, longer),
        "a test of 6.000 s asked; this server allows at most 5.000 s"
    );
    let mut faster = stream(1, Direction::Reverse, Bound::Count(1));
    faster.rate_bps = Some(2_000_000);
    assert_eq!(
        refusal(V6, limits, agreed, faster),
        "the server was asked to send at 2000000 bit/s; it allows at most 1000000 bit/s"
    );
    // Within the limits, but not the test the control connection agreed.
    let other = stream(1, Direction::Forward, Bound::Count(1));
    assert!(refusal(V4, limits, agreed, other).contains("not the one agreed"));
}

#[test]
fn absurd_requests_are_refused_not_served() {
    let agreed = stream(1, Direction::Forward, Bound::Count(1));
    let huge = stream(u16::MAX, Direction::Forward, Bound::Count(1));
    assert_eq!(
        refusal(V4, Limits::default(), agreed, huge),
        "65535 streams asked; this server allows at most 16"
    );
    let instant = stream(1, Direction::Forward, Bound::DurationNs(0));
    assert_eq!(
        refusal(V6, Limits::default(), agreed, instant),
        "a test of zero duration measures nothing"
    );
    let mut empty = stream(1, Direction::Forward, Bound::Count(1));
    empty.payload_bytes = 0;
    assert!(refusal(V4, Limits::default(), agreed, empty).starts_with("a payload of 0 bytes"));
}

#[test]
fn a_count_bound_test_ends_at_the_servers_longest_test() {
    // A count no sender reaches: the server ends the test after its 1 s limit and 5 s
    // of drain time, and says why.
    let limits = Limits {
        max_duration: Duration::from_secs(1),
        ..Limits::default()
    };
    let endless = stream(1, Direction::Forward, Bound::Count(u64::MAX));
    let (client, server, took) = run(V4, limits, endless, endless);
    let why = "the test ran past the server's longest test (1 s) and its drain time";
    match client {
        Err(QuicError::PeerClosed(reason)) => assert_eq!(reason, why),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        server.unwrap_err().to_string(),
        format!("QUIC connection: {why}")
    );
    assert!(took < Duration::from_secs(60));
}

#[test]
fn a_server_that_goes_away_mid_test_is_an_error_within_the_deadline() {
    for family in FAMILIES {
        let (server, cert) = QuicServer::bind(socket(family), Limits::default()).unwrap();
        let addr = server.local_addr().unwrap();
        let closer = server.closer();
        // Long enough that only the server's going away can end it early.
        let test = stream(1, Direction::Forward, Bound::DurationNs(30_000_000_000));
        let deadline = Instant::now() + Duration::from_secs(60);
        let served = thread::spawn(move || server.serve_one(&test, deadline));
        let killer = thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(20);
            while closer.open_connections() == 0 && Instant::now() < until {
                thread::sleep(Duration::from_millis(10));
            }
            thread::sleep(Duration::from_millis(300));
            closer.close();
        });
        let t = Instant::now();
        let err = run_client(socket(family), addr, cert, &test, deadline).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(30), "{family}: {err}");
        match &err {
            QuicError::PeerClosed(reason) => {
                assert_eq!(reason, "the server is shutting down", "{family}")
            }
            other => panic!("{family}: {other}"),
        }
        killer.join().unwrap();
        assert!(served.join().unwrap().is_err());
    }
}
