//! In-process runs against an EmbeddedServer on 127.0.0.1 and ::1: every test type,
//! both families, checked against what the numbers must be.

use dualperf_engine::{
    run_client, ClientConfig, EmbeddedServer, NullRecorder, RunResult, VecRecorder,
};
use wire::metrics as m;
use wire::spec::{Bound, Direction, Family, Rate, TestKind, TestSpec};

/// Runs in this file take turns: on a 2-core machine a TCP stream at full speed next to
/// a UDP receiver would overflow its socket buffer and fail the exact-count checks.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn families(srv: &EmbeddedServer) -> Vec<(Family, &'static str)> {
    let mut v = vec![(Family::V4, "127.0.0.1")];
    if srv.has_ipv6() {
        v.push((Family::V6, "::1"));
    } else {
        // The IPv6 half is never skipped silently.
        assert!(
            std::env::var_os("DUALPERF_SKIP_IPV6").is_some_and(|v| v == "1"),
            "::1 is not available here; set DUALPERF_SKIP_IPV6=1 to test IPv4 only"
        );
    }
    v
}

fn run(srv: &EmbeddedServer, host: &str, spec: TestSpec) -> RunResult {
    let cfg = ClientConfig::new(host, srv.port(), spec);
    match run_client(&cfg, &mut NullRecorder) {
        Ok(r) => r,
        Err(e) => panic!("run failed: {e}"),
    }
}

fn get(r: &RunResult, name: &str) -> f64 {
    r.metric(name)
        .unwrap_or_else(|| panic!("metric {name} missing from {:?}", r.metrics()))
}

#[test]
fn tcp_stream_bytes_received_equal_bytes_sent_in_every_direction() {
    let _turn = serial();
    let srv = EmbeddedServer::start().unwrap();
    for (fam, host) in families(&srv) {
        for dir in [Direction::Forward, Direction::Reverse, Direction::Bidir] {
            let mut spec = TestSpec::new(TestKind::TcpStream, fam, 1408);
            spec.bound = Bound::DurationNs(150_000_000);
            spec.direction = dir;
            spec.streams = 2;
            let r = run(&srv, host, spec);
            let sent = get(&r, m::SENT_BYTES);
            assert!(sent > 0.0, "{dir:?} {fam}: nothing sent");
            assert_eq!(sent, get(&r, m::RECV_BYTES), "{dir:?} {fam}");
            // Goodput agrees with bytes over time, computed here from the raw numbers:
            // each direction's received bytes over its one time base, the longer of its
            // sender's send span and its receiver's receive span.
            let bps = get(&r, m::THROUGHPUT_BPS);
            let span = |tx: &wire::proto::SideStats, rx: &wire::proto::SideStats| {
                tx.send_elapsed_ns.max(rx.recv_elapsed_ns).max(1) as f64 / 1e9
            };
            let rate = |tx: &wire::proto::SideStats, rx: &wire::proto::SideStats| {
                rx.recv_bytes as f64 * 8.0 / span(tx, rx)
            };
            let (c, s) = (&r.client, &r.server);
            let want = match dir {
                Direction::Forward => rate(c, s),
                Direction::Reverse => rate(s, c),
                Direction::Bidir => rate(s, c) + rate(c, s),
            };
            // Exact relations, true under any load: the same duration the tool used, and
            // the run's duration_s is that span (both directions' longer one for bidir).
            // No tolerance on a rate: only float rounding is allowed.
            assert!(bps > 0.0, "{dir:?} {fam}: no goodput");
            assert!(
                (bps - want).abs() <= 1e-9 * want,
                "{dir:?} {fam}: throughput {bps} vs {want} from bytes and time"
            );
            let span_s = match dir {
                Direction::Forward => span(c, s),
                Direction::Reverse => span(s, c),
                Direction::Bidir => span(c, s).max(span(s, c)),
            };
            assert!(
                (get(&r, m::DURATION_S) - span_s).abs() <= 1e-9 * span_s,
                "{dir:?} {fam}: duration_s {} is not the run's span {span_s}",
                get(&r, m::DURATION_S)
            );
            if dir != Direction::Bidir {
                // The sending rate is on the same time base: received <= sent gives
                // goodput <= sending rate.
                let send_rate = get(&r, m::SEND_RATE_BPS);
                assert!(
                    (send_rate - get(&r, m::SENT_BYTES) * 8.0 / span_s).abs() <= 1e-9 * send_rate,
                    "{dir:?} {fam}: sending rate {send_rate} not over the same span"
                );
                assert!(
                    bps <= send_rate * (1.0 + 1e-12),
                    "{dir:?} {fam}: {bps} > {send_rate}"
                );
            }
            let (c, s) = (&r.client, &r.server);
            match dir {
                Direction::Forward => {
                    assert!(c.sent_bytes > 0 && c.recv_bytes == 0);
                    assert_eq!(s.recv_bytes, c.sent_bytes);
                    assert_eq!(s.sent_bytes, 0);
                }
                Direction::Reverse => {
                    assert!(s.sent_bytes > 0 && s.recv_bytes == 0);
                    assert_eq!(c.recv_bytes, s.sent_bytes);
                    assert_eq!(c.sent_bytes, 0);
                }
                Direction::Bidir => {
                    assert!(c.sent_bytes > 0 && s.sent_bytes > 0);
                    assert_eq!(c.recv_bytes, s.sent_bytes);
                    assert_eq!(s.recv_bytes, c.sent_bytes);
                }
            }
        }
    }
}

#[test]
fn count_based_udp_delivers_exactly_n_datagrams() {
    let _turn = serial();
    let srv = EmbeddedServer::start().unwrap();
    for (fam, host) in families(&srv) {
        for dir in [Direction::Forward, Direction::Reverse] {
            let mut spec = TestSpec::new(TestKind::UdpStream, fam, 128);
            spec.bound = Bound::Count(1000);
            spec.rate = Some(Rate::PacketsPerSec(10_000));
            // Room for 100 ms of datagrams: a busy 2-core box may keep the receiver off
            // the CPU for a few ms, and kernel drops are not what this test is about.
            spec.socket.rcvbuf_bytes = Some(4 << 20);
            spec.direction = dir;
            let r = run(&srv, host, spec);
            assert_eq!(get(&r, m::SENT_PACKETS), 1000.0, "{fam} {dir:?}");
            assert_eq!(get(&r, m::RECV_PACKETS), 1000.0, "{fam} {dir:?}");
            assert_eq!(get(&r, m::LOST_PACKETS), 0.0);
            assert_eq!(get(&r, m::LOSS_PCT), 0.0);
            assert!(r.metric(m::JITTER_RFC3550_NS).is_some());
            assert!(r.metric(m::IPDV_P99_NS).is_some());
        }
    }
}

#[test]
fn rr_round_trips_are_positive_and_ordered() {
    let _turn = serial();
    let srv = EmbeddedServer::start().unwrap();
    for (fam, host) in families(&srv) {
        for kind in [TestKind::TcpRr, TestKind::UdpRr] {
            let mut spec = TestSpec::new(kind, fam, 128);
            spec.bound = Bound::Count(500);
            let r = run(&srv, host, spec);
            assert_eq!(r.transactions, 500, "{kind} {fam}");
            let (p50, p99, max) = (
                get(&r, m::RTT_P50_NS),
                get(&r, m::RTT_P99_NS),
                get(&r, m::RTT_MAX_NS),
            );
            assert!(get(&r, m::RTT_MIN_NS) > 0.0);
            assert!(p50 <= p99 && p99 <= max, "{p50} {p99} {max}");
            assert!(get(&r, m::TRANSACTIONS_PER_S) > 100.0);
        }
    }
}

#[test]
fn intervals_reach_the_recorder() {
    let _turn = serial();
    let srv = EmbeddedServer::start().unwrap();
    let mut spec = TestSpec::new(TestKind::TcpStream, Family::V4, 1408);
    spec.bound = Bound::DurationNs(300_000_000);
    spec.interval_ns = Some(100_000_000);
    let cfg = ClientConfig::new("127.0.0.1", srv.port(), spec);
    let mut rec = VecRecorder::default();
    let r = run_client(&cfg, &mut rec).unwrap();
    assert!((3..=4).contains(&rec.samples.len()), "{:?}", rec.samples);
    let total: u64 = rec.samples.iter().map(|s| s.sent_bytes).sum();
    assert_eq!(total, r.client.sent_bytes);
}
