//! `dualperf run` as a campaign of one test with no store: the one-cell study through
//! the fake executor (no sockets) and on the embedded loopback server.

use runner::target::FullResult;
use runner::{OneTest, RunTest, SingleError, Target, TargetOptions, TestOptions};
use std::sync::{Arc, Mutex};
use wire::metrics as m;
use wire::spec::{Family, TestKind};

fn one(kind: TestKind, size_bytes: Option<u32>) -> OneTest {
    OneTest {
        test: RunTest::One(kind),
        family: Family::V4,
        size_bytes,
        traffic_seed: None,
        rate_search: false,
    }
}

/// The fake executor's calls: (cell index, warm-up, repetition, attempt).
fn calls(target: &Target) -> Vec<(u32, bool, u32, u32)> {
    match target {
        Target::Fake(f, _) => f
            .calls
            .iter()
            .map(|(c, s, a)| (*c, s.warmup, s.repetition, *a))
            .collect(),
        _ => panic!("not the fake target"),
    }
}

#[test]
fn a_run_is_one_attempt_of_one_cell_without_warm_up_or_retry() {
    let single = runner::resolve_single(&TestOptions::default(), &one(TestKind::UdpRr, None))
        .expect("the run resolves");
    let spec = single.spec();
    assert_eq!(spec.repetition, study::Repetition::Fixed { runs: 1 });
    assert_eq!((spec.warmup_runs, spec.retries), (0, 0));
    let mut target = Target::fake(false);
    let ran = single.run(&mut target).expect("the fake run succeeds");
    assert_eq!(calls(&target), vec![(0, false, 0, 0)]);
    assert!(ran.output.metrics.contains_key(m::RTT_MEAN_NS), "{ran:?}");
    assert!(ran.full.is_none(), "the fake target keeps no full result");
}

#[test]
fn a_failed_run_is_not_retried_and_says_why() {
    let single = runner::resolve_single(&TestOptions::default(), &one(TestKind::TcpRr, None))
        .expect("the run resolves");
    let fake = study::fake::FakeExecutor::new(|_, _, _| Err("peer vanished".into()));
    let mut target = Target::Fake(fake, false);
    match single.run(&mut target) {
        Err(SingleError::Failed(why)) => assert_eq!(why.reason, "peer vanished"),
        other => panic!("expected the executor's failure, got {other:?}"),
    }
    assert_eq!(calls(&target).len(), 1, "no retry");
}

#[test]
fn a_write_beyond_the_study_size_axis_is_the_cell_that_runs() {
    // TCP writes go up to 1 MiB, beyond a study's size axis (the largest UDP payload).
    let single = runner::resolve_single(
        &TestOptions::default(),
        &one(TestKind::TcpStream, Some(131_072)),
    )
    .expect("the run resolves");
    assert_eq!(single.cell().test.payload_bytes, 131_072);
    assert_eq!(single.cell().payload_bytes, 131_072);
    match single.run_spec() {
        runner::RunSpec::One(t) => assert_eq!(t, &single.cell().test),
        other => panic!("expected one test, got {other:?}"),
    }
}

#[test]
fn a_run_on_the_embedded_server_hands_over_its_intervals_and_whole_result() {
    let opts = TestOptions {
        duration_s: Some(0.3),
        interval_s: Some(0.1),
        ..TestOptions::default()
    };
    let single = runner::resolve_single(&opts, &one(TestKind::TcpStream, Some(1408)))
        .expect("the run resolves");
    let mut target = Target::open(&TargetOptions::default(), &[Family::V4], &mut |n| {
        panic!("unexpected notice: {n}")
    })
    .expect("the embedded server starts");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    target.observe_intervals(Box::new(move |s| {
        sink.lock().expect("not poisoned").push(*s)
    }));
    let ran = single.run(&mut target).expect("the test runs");
    target.close().expect("the target closes");
    let Some(FullResult::Test { result, intervals }) = ran.full else {
        panic!("expected a stream test's whole result");
    };
    // TCP is reliable: what the client wrote, the server read, whatever the load.
    assert!(result.client.sent_bytes > 0);
    assert_eq!(result.client.sent_bytes, result.server.recv_bytes);
    assert_eq!(
        ran.output.metrics.get(m::SENT_BYTES),
        Some(&(result.client.sent_bytes as f64))
    );
    // The last interval is reported when the data phase ends, so there is one at least.
    let seen = seen.lock().expect("not poisoned").clone();
    assert!(!intervals.is_empty());
    assert_eq!(seen, intervals, "the observer heard every kept interval");
}

#[test]
fn a_run_against_no_server_fails_with_the_targets_own_error() {
    let single = runner::resolve_single(&TestOptions::default(), &one(TestKind::TcpRr, None))
        .expect("the run resolves");
    // A port nothing listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let opts = TargetOptions {
        hosts: runner::Hosts::one("127.0.0.1"),
        port,
        connect_timeout: std::time::Duration::from_secs(2),
        ..TargetOptions::default()
    };
    let mut target = Target::open(&opts, &[Family::V4], &mut |_| {}).expect("a remote target");
    match single.run(&mut target) {
        Err(SingleError::Target(runner::TargetError::Engine(_))) => {}
        other => panic!("expected the engine's error, got {other:?}"),
    }
}

#[test]
fn a_waiting_run_waits_out_a_busy_iperf3_server_for_its_limit_and_names_it_busy() {
    let (port, seen) = testkit::busy_iperf3_server(50);
    let opts = TargetOptions {
        hosts: runner::Hosts {
            host: Some("127.0.0.1".into()),
            ..runner::Hosts::default()
        },
        port,
        peer: runner::Peer::Iperf3,
        iperf3_busy_limit: std::time::Duration::from_millis(300),
        ..TargetOptions::default()
    };
    let single = runner::resolve_single(&TestOptions::default(), &one(TestKind::TcpStream, None))
        .unwrap()
        .waiting();
    let mut target = Target::open(&opts, &[Family::V4], &mut |_| {}).expect("an iperf3 target");
    let tried = single.attempt(&mut target).expect("an attempt");
    let why = tried
        .attempt
        .result
        .expect_err("a busy server gives no result");
    assert!(why.reason.contains("stayed busy"), "{}", why.reason);
    assert!(
        matches!(
            tried.last,
            Some(Err(runner::TargetError::Iperf3(iperf3::Iperf3Error::Busy)))
        ),
        "{:?}",
        tried.last
    );
    // Waits of 200 ms, then the 100 ms left: the limit exactly, three answers.
    let busy = target.busy_count().unwrap();
    assert_eq!(busy.waited, std::time::Duration::from_millis(300));
    assert_eq!(busy.answers, 3);
    assert_eq!(*seen.lock().unwrap(), 3);
    // A run that does not wait fails at the first answer.
    let single =
        runner::resolve_single(&TestOptions::default(), &one(TestKind::TcpStream, None)).unwrap();
    match single.run(&mut target) {
        Err(SingleError::Target(runner::TargetError::Iperf3(iperf3::Iperf3Error::Busy))) => {}
        other => panic!("expected busy, got {other:?}"),
    }
    assert_eq!(target.busy_count().unwrap().answers, 4);
}
