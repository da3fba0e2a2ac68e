//! Latency under load on loopback: probes paced on a fixed grid, the load's bytes
//! counted exactly, the phases in their order, and a test group admitted together while
//! any other test is told "busy". (The rise of RTT under a known queue is checked in a
//! shaped lab: crates/cli/tests/loaded_lab.rs.)

use dualperf_engine::{
    run_client, run_loaded, ClientConfig, EmbeddedServer, EngineError, LoadDirection, LoadedResult,
    LoadedSpec, NullRecorder, RunResult,
};
use std::time::{Duration, Instant};
use wire::metrics as m;
use wire::spec::{Bound, Family, Rate, TestKind, TestSpec};

fn spec(load: LoadDirection) -> LoadedSpec {
    LoadedSpec {
        family: Family::V4,
        streams: 2,
        load,
        duration_ns: 1_500_000_000,
        idle_ns: 400_000_000,
        probe_rate: 50,
        probe_bytes: 64,
        write_bytes: 16 * 1024,
        load_socket: Default::default(),
    }
}

/// A probe run never exceeds its schedule: one transaction per slot of the grid.
fn check_paced(r: &RunResult, window_ns: u64, rate: u64, what: &str) {
    let slots = (window_ns as f64 * rate as f64 / 1e9).ceil() as u64 + 1;
    assert!(r.transactions >= 1, "{what}: no probe answered");
    assert!(
        r.transactions + r.rr_timeouts <= slots,
        "{what}: {} transactions + {} timeouts in {slots} slots",
        r.transactions,
        r.rr_timeouts
    );
    let rtt = r.rtt.expect("probe RTT");
    assert_eq!(rtt.count, r.transactions, "{what}");
    assert!(rtt.min_ns <= rtt.p50_ns && rtt.p50_ns <= rtt.p99_ns && rtt.p99_ns <= rtt.max_ns);
    assert!(
        rtt.trimmed_mean_95_ns >= rtt.min_ns as f64 && rtt.trimmed_mean_95_ns <= rtt.max_ns as f64
    );
}

fn check(res: &LoadedResult, s: &LoadedSpec) {
    check_paced(&res.idle.udp, s.idle_ns, s.probe_rate, "idle UDP");
    check_paced(&res.idle.tcp, s.idle_ns, s.probe_rate, "idle TCP");
    let w = s.loaded_probe_ns();
    check_paced(&res.loaded.udp, w, s.probe_rate, "loaded UDP");
    check_paced(&res.loaded.tcp, w, s.probe_rate, "loaded TCP");
    // TCP load: every byte sent was received, in each direction asked for.
    for load in res.upload.iter().chain(res.download.iter()) {
        let sent = load.metric(m::SENT_BYTES).unwrap();
        assert!(sent > 0.0);
        assert_eq!(
            Some(sent),
            load.metric(m::RECV_BYTES),
            "{:?}",
            load.spec.direction
        );
        assert_eq!(load.spec.streams, s.streams);
    }
    // RPM is 60 s over the TCP probes' trimmed mean.
    let tm = res.loaded.tcp.rtt.unwrap().trimmed_mean_95_ns;
    let rpm = LoadedResult::rpm(&res.loaded).unwrap();
    assert!((rpm * tm - 60e9).abs() < 1.0, "{rpm} × {tm}");
    let added = res.added_p50_ns(TestKind::TcpRr).unwrap();
    let want = res.loaded.tcp.rtt.unwrap().p50_ns as f64 - res.idle.tcp.rtt.unwrap().p50_ns as f64;
    assert_eq!(added, want);
}

#[test]
fn upload_download_and_both_measure_paced_probes_and_exact_load_bytes() {
    let srv = EmbeddedServer::start().unwrap();
    let base = ClientConfig::new(
        "127.0.0.1",
        srv.port(),
        TestSpec::new(TestKind::TcpRr, Family::V4, 64),
    );
    for load in [
        LoadDirection::Upload,
        LoadDirection::Download,
        LoadDirection::Both,
    ] {
        let s = spec(load);
        let res = run_loaded(&base, &s).unwrap_or_else(|e| panic!("{load:?}: {e}"));
        assert_eq!(res.upload.is_some(), load != LoadDirection::Download);
        assert_eq!(res.download.is_some(), load != LoadDirection::Upload);
        check(&res, &s);
    }
}

#[test]
fn ipv6_loaded_latency_runs_natively() {
    let srv = EmbeddedServer::start().unwrap();
    if !srv.has_ipv6() {
        assert!(
            std::env::var_os("DUALPERF_SKIP_IPV6").is_some_and(|v| v == "1"),
            "::1 is not available here; set DUALPERF_SKIP_IPV6=1 to test IPv4 only"
        );
        return;
    }
    let base = ClientConfig::new(
        "::1",
        srv.port(),
        TestSpec::new(TestKind::TcpRr, Family::V6, 64),
    );
    let mut s = spec(LoadDirection::Upload);
    s.family = Family::V6;
    let res = run_loaded(&base, &s).unwrap();
    assert!(
        res.loaded.udp.server_addr.starts_with('['),
        "{}",
        res.loaded.udp.server_addr
    );
    check(&res, &s);
}

#[test]
fn a_paced_rr_test_keeps_to_its_grid() {
    let srv = EmbeddedServer::start().unwrap();
    for kind in [TestKind::UdpRr, TestKind::TcpRr] {
        let mut t = TestSpec::new(kind, Family::V4, 64);
        t.bound = Bound::DurationNs(500_000_000);
        t.rate = Some(Rate::PacketsPerSec(40));
        let began = Instant::now();
        let r = run_client(
            &ClientConfig::new("127.0.0.1", srv.port(), t),
            &mut NullRecorder,
        )
        .unwrap();
        // 40/s for 0.5 s: at most 21 slots; back to back it would be thousands.
        check_paced(&r, 500_000_000, 40, kind.name());
        assert!(
            began.elapsed() >= Duration::from_millis(450),
            "{:?}",
            began.elapsed()
        );
    }
}

#[test]
fn bad_plans_are_refused_before_any_traffic() {
    let base = ClientConfig::new(
        "127.0.0.1",
        9,
        TestSpec::new(TestKind::TcpRr, Family::V4, 64),
    );
    let mut s = spec(LoadDirection::Upload);
    s.duration_ns = 500_000_000;
    let e = run_loaded(&base, &s).unwrap_err().to_string();
    assert!(e.contains("at least 1 s"), "{e}");
    let mut s = spec(LoadDirection::Upload);
    s.probe_rate = 1;
    let e = run_loaded(&base, &s).unwrap_err().to_string();
    assert!(e.contains("fewer than 10 probes"), "{e}");
    // A bit rate is no probe rate.
    let mut t = TestSpec::new(TestKind::UdpRr, Family::V4, 64);
    t.rate = Some(Rate::BitsPerSec(1000));
    let e = run_client(&ClientConfig::new("127.0.0.1", 9, t), &mut NullRecorder).unwrap_err();
    assert!(e.to_string().contains("transactions per second"), "{e}");
}

/// While a group runs, a test of another group (or of none) is told busy; a member of
/// the running group is admitted.
#[test]
fn a_running_group_admits_its_members_and_refuses_others() {
    let srv = EmbeddedServer::start().unwrap();
    let port = srv.port();
    let mut long = TestSpec::new(TestKind::TcpRr, Family::V4, 64);
    long.bound = Bound::DurationNs(1_500_000_000);
    long.rate = Some(Rate::PacketsPerSec(20));
    long.group = Some(7);
    let holder = std::thread::spawn(move || {
        run_client(
            &ClientConfig::new("127.0.0.1", port, long),
            &mut NullRecorder,
        )
    });
    std::thread::sleep(Duration::from_millis(300));
    let short = |group| {
        let mut t = TestSpec::new(TestKind::UdpRr, Family::V4, 64);
        t.bound = Bound::Count(5);
        t.group = group;
        run_client(&ClientConfig::new("127.0.0.1", port, t), &mut NullRecorder)
    };
    assert!(matches!(short(None), Err(EngineError::ServerBusy { .. })));
    assert!(matches!(
        short(Some(8)),
        Err(EngineError::ServerBusy { .. })
    ));
    let member = short(Some(7)).expect("a member of the running group is admitted");
    assert_eq!(member.transactions + member.rr_timeouts, 5);
    let held = holder.join().unwrap().expect("the group's first test");
    assert!(held.transactions >= 1);
    // The slot is free again once the group has ended.
    assert!(short(None).is_ok());
}
