//! Latency under load on loopback: probes paced on a fixed grid, the load's bytes
//! counted exactly, the phases in their order, and a test group admitted together while
//! any other test is told "busy". (The rise of RTT under a known queue is checked in a
//! shaped lab: crates/cli/tests/loaded_lab.rs.)

use dualperf_engine::{
    run_client, run_loaded, start_server, ClientConfig, EmbeddedServer, EngineError, LoadDirection,
    LoadedPart, LoadedResult, LoadedSpec, NullRecorder, RunResult, ServerConfig,
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
        interval_ns: None,
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
    // The flat metrics say the same as the result, and each RTT ladder rises.
    let flat: std::collections::BTreeMap<String, f64> = res
        .metrics()
        .into_iter()
        .map(|x| (x.name, x.value))
        .collect();
    assert_eq!(flat[m::ADDED_TCP_RTT_P50_NS], added);
    assert_eq!(flat[m::RPM_LOADED], rpm);
    assert_eq!(
        flat[m::LOADED_UDP_RTT_P50_NS],
        res.loaded.udp.rtt.unwrap().p50_ns as f64
    );
    for loaded in [false, true] {
        for udp in [false, true] {
            let ladder: Vec<f64> = m::RTT_LADDER_PCT
                .iter()
                .map(|&p| flat[&m::rtt_ladder_name(loaded, udp, p)])
                .collect();
            assert!(ladder.windows(2).all(|w| w[0] <= w[1]), "{ladder:?}");
        }
    }
    assert!(
        res.load_start_ns >= s.idle_ns,
        "the load follows the idle phase"
    );
    assert!(res.loaded_probes_start_ns >= res.load_start_ns + s.ramp_ns());
    if s.interval_ns.is_none() {
        assert!(res.intervals.is_empty());
        return;
    }
    // Interval samples: the probes' RTT sums count every transaction once, and the
    // load's samples add up to its bytes.
    for iv in &res.intervals {
        let run = match iv.part {
            LoadedPart::IdleUdpProbes => &res.idle.udp,
            LoadedPart::IdleTcpProbes => &res.idle.tcp,
            LoadedPart::LoadedUdpProbes => &res.loaded.udp,
            LoadedPart::LoadedTcpProbes => &res.loaded.tcp,
            LoadedPart::Upload => res.upload.as_ref().unwrap(),
            LoadedPart::Download => res.download.as_ref().unwrap(),
        };
        let sum =
            |f: fn(&wire::proto::IntervalSample) -> u64| iv.samples.iter().map(f).sum::<u64>();
        if iv.part.probe().is_some() {
            assert_eq!(sum(|x| x.rtt_count), run.transactions, "{:?}", iv.part);
            let rtt = run.rtt.unwrap();
            let mean = sum(|x| x.rtt_sum_ns) as f64 / run.transactions as f64;
            assert!(
                (mean - rtt.mean_ns).abs() <= 1.0,
                "{:?}: {mean} against {}",
                iv.part,
                rtt.mean_ns
            );
        } else if iv.part == LoadedPart::Upload {
            assert_eq!(
                sum(|x| x.sent_bytes) as f64,
                run.metric(m::SENT_BYTES).unwrap()
            );
        } else {
            assert_eq!(
                sum(|x| x.recv_bytes) as f64,
                run.metric(m::RECV_BYTES).unwrap()
            );
        }
    }
    let parts: Vec<LoadedPart> = res.intervals.iter().map(|iv| iv.part).collect();
    assert_eq!(
        parts.len(),
        2 + 2 + usize::from(res.upload.is_some()) + usize::from(res.download.is_some()),
        "{parts:?}"
    );
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
        let mut s = spec(load);
        // One run records interval samples of every part.
        if load == LoadDirection::Both {
            s.interval_ns = Some(200_000_000);
        }
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

/// Tells the test when the holder's first interval arrives: its test was admitted and
/// is running.
struct Started(Option<std::sync::mpsc::Sender<()>>);

impl dualperf_engine::Recorder for Started {
    fn on_interval(&mut self, _: &wire::proto::IntervalSample) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

/// While a group runs, a test of another group (or of none) is told busy; a member of
/// the running group is admitted. The holder runs long enough (4 s) for three short
/// tests even on a loaded machine, and the checks start once it reports its first
/// interval, not after a guessed sleep.
#[test]
fn a_running_group_admits_its_members_and_refuses_others() {
    let srv = EmbeddedServer::start().unwrap();
    let port = srv.port();
    let mut long = TestSpec::new(TestKind::TcpRr, Family::V4, 64);
    long.bound = Bound::DurationNs(4_000_000_000);
    long.rate = Some(Rate::PacketsPerSec(20));
    long.interval_ns = Some(100_000_000);
    long.group = Some(7);
    let (tx, started) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        run_client(
            &ClientConfig::new("127.0.0.1", port, long),
            &mut Started(Some(tx)),
        )
    });
    started
        .recv_timeout(Duration::from_secs(30))
        .expect("the group's first test reports an interval");
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
    // The slot is free again once the group has ended: the server's side of the
    // holder's session may still be closing when its client returns, so a test told
    // busy then tries again (bounded).
    let deadline = Instant::now() + Duration::from_secs(10);
    let freed = loop {
        match short(None) {
            Err(EngineError::ServerBusy { .. }) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            other => break other,
        }
    };
    assert!(freed.is_ok(), "{freed:?}");
}

/// `run -t rrul` with both loads (four tests of one group at once: 4 + 4 load streams
/// and a stream per probe type) against `dualperf server`'s default limits: the group's
/// streams, rate and span fit the budget of one test.
#[test]
fn a_loaded_latency_test_runs_against_the_default_limits() {
    let h = start_server(ServerConfig {
        binds: vec!["127.0.0.1:0".parse().unwrap()],
        server_info: Some(Default::default()),
        ..ServerConfig::default()
    })
    .unwrap();
    let s = LoadedSpec {
        streams: 4,
        ..spec(LoadDirection::Both)
    };
    let base = ClientConfig::new(
        "127.0.0.1",
        h.local_addrs()[0].port(),
        TestSpec::new(TestKind::TcpRr, Family::V4, 64),
    );
    let res = run_loaded(&base, &s).expect("rrul within the default limits");
    check(&res, &s);
}
