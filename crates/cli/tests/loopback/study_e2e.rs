//! `dualperf study` end to end on loopback with the real engine and the embedded server:
//! a small study fills the database with the expected cells, runs and metrics; a study
//! killed with SIGKILL and resumed ends with every run exactly once.

use crate::support::shared;
use crate::support::study::*;
use std::time::Duration;
use wire::metrics as m;
use wire::spec::TestKind;

#[test]
fn small_real_study_records_every_cell_run_and_metric() {
    let _turn = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("real.db").display().to_string();
    let o = run(
        &[
            "study",
            "--sizes",
            "128,1024",
            "--runs",
            "2",
            "--duration",
            "0.2",
            "--interval",
            "0.1",
            "--label",
            "loopback e2e",
            "--db",
            &db,
        ],
        false,
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let c = &s.campaigns().unwrap()[0];
    assert!(c.finished);
    assert_eq!(c.label, "loopback e2e");
    assert_eq!(s.cells(c.id).unwrap().len(), 4 * 2 * 2);
    let slots = measured_slots(db.as_ref(), c.id);
    assert_eq!(slots.len(), 32, "every cell has both runs");
    let runs = s.runs(c.id).unwrap();
    for r in runs.iter().filter(|r| r.status.is_ok()) {
        let want: &[&str] = match r.kind {
            TestKind::TcpStream | TestKind::UdpStream | TestKind::QuicStream => {
                &[m::THROUGHPUT_BPS, m::DURATION_S]
            }
            TestKind::TcpRr | TestKind::UdpRr | TestKind::QuicRr => {
                &[m::RTT_MEAN_NS, m::TRANSACTIONS_PER_S]
            }
            TestKind::Rrul => &[m::RPM_LOADED, m::UPLOAD_BPS, m::DOWNLOAD_BPS],
            TestKind::TcpCrr => &[m::CONNECTIONS_PER_S, m::CONNECT_TIME_MEAN_NS],
            TestKind::Pmtu => &[m::PATH_MTU_BYTES],
            TestKind::Frag => &[m::DELIVERED_PCT],
            TestKind::ExtHeaders => &[m::PLAIN_DELIVERED_PCT],
        };
        for name in want {
            let v = r.metrics.get(*name).copied().unwrap_or(f64::NAN);
            assert!(
                v > 0.0,
                "{} {} {} B: {name} = {v}",
                r.family,
                r.kind,
                r.payload_bytes
            );
        }
    }
    // What each run applied is stored per side: buffers as the kernel read them back,
    // and for UDP streams the system calls that ran.
    let applied = s.applied_of_campaign(c.id).unwrap();
    for r in runs.iter().filter(|r| r.status.is_ok()) {
        let a = &applied[&r.id];
        let buf: u64 = a["client.sndbuf_bytes"].parse().unwrap();
        assert!(buf > 0, "{a:?}");
        if r.kind == TestKind::UdpStream {
            assert!(
                a["client.udp_datapath_calls"].starts_with("linux:"),
                "{a:?}"
            );
            assert!(
                a["server.udp_datapath_calls"].starts_with("linux:"),
                "{a:?}"
            );
        }
    }
    // Interval samples are stored (0.2 s runs at 100 ms intervals).
    let with_samples = runs
        .iter()
        .filter(|r| !s.samples(r.id).unwrap().is_empty())
        .count();
    assert!(with_samples > 0, "no run stored interval samples");
    let client = c.hosts.iter().find(|h| h.role == "client").unwrap();
    assert_eq!(
        client.metadata.get("iface.name").map(String::as_str),
        Some("lo")
    );
    assert!(c
        .hosts
        .iter()
        .any(|h| h.role == "server" && !h.metadata.is_empty()));
    // The default loopback study places client and embedded server on separate CPUs.
    assert_eq!(
        client.metadata.get("study.cpu_pinning").map(String::as_str),
        Some(expected_pinning())
    );
}

/// What a loopback study records of its thread placement on this machine.
fn expected_pinning() -> &'static str {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus >= 2 {
        "client threads on CPU 0, embedded server threads on CPU 1"
    } else {
        "none (one CPU)"
    }
}

#[test]
fn sigkill_mid_study_then_resume_completes_with_the_right_run_count() {
    let _turn = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kill.db").display().to_string();
    let child = spawn(
        &[
            "study",
            "--tests",
            "tcp-stream,udp-rr",
            "--sizes",
            "128,1408",
            "--runs",
            "3",
            "--duration",
            "0.2",
            "--db",
            &db,
        ],
        false,
    );
    let at_kill = kill_after_runs(child, db.as_ref(), 6, Duration::from_secs(60));
    assert!((6..24).contains(&at_kill), "killed after {at_kill} runs");
    let before = measured_slots(db.as_ref(), 1);
    let o = run(&["study", "--resume", "1", "--db", &db], false);
    assert!(o.status.success(), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(&format!("{at_kill} runs already recorded")));
    // What is left is replayed from the recorded runs, timed at their pace. Every slot
    // before the kill has a successful run unless one used up its retries (then more
    // slots are done than succeeded, and fewer are left).
    let warmups = store::Store::open_read_only(db.as_ref())
        .unwrap()
        .run_details(1)
        .unwrap()
        .iter()
        .filter(|d| d.run.warmup && d.run.status.is_ok())
        .count();
    let done = before.len() + warmups;
    let left_line = stderr
        .lines()
        .find(|l| l.starts_with("dualperf: left: "))
        .unwrap_or_else(|| panic!("no line of what is left: {stderr}"));
    let done_said: usize = left_line["dualperf: left: ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{left_line}"));
    assert!(done_said >= done, "{left_line}: {done} slots succeeded");
    assert!(
        left_line.contains(" runs left, about ")
            && left_line.contains(" left at the recorded runs' pace (one every "),
        "{left_line}"
    );
    let after = measured_slots(db.as_ref(), 1);
    assert_eq!(after.len(), 24, "2 families x 2 tests x 2 sizes x 3 runs");
    assert!(before.is_subset(&after), "a completed run was lost");
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    assert!(s.campaign(1).unwrap().finished);
}

/// A server that answers the study's preflight handshake but refuses every run (it
/// allows 0.05 s tests, the study asks for 0.1 s): each failure is recorded with its
/// reason, and ten in a row stop the study. (A port where nothing listens is refused
/// before any campaign exists: `targets_e2e.rs`.)
use crate::support::server as server_proc;

#[test]
fn failed_runs_are_recorded_with_reason_and_ten_failures_in_a_row_stop_the_study() {
    let _turn = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("dead.db").display().to_string();
    let server =
        server_proc::ServerProc::start(BIN, &["--bind", "127.0.0.1", "--max-duration", "0.05"]);
    let port = server.port().to_string();
    let o = run(
        &[
            "study",
            "127.0.0.1",
            "--port",
            &port,
            "--families",
            "4",
            "--tests",
            "tcp-rr",
            "--sizes",
            "128,256,512",
            "--runs",
            "3",
            "--duration",
            "0.1",
            "--connect-timeout",
            "1",
            "--db",
            &db,
        ],
        false,
    );
    drop(server);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("runs in a row failed") && err.contains("--resume"),
        "{err}"
    );
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let details = s.run_details(1).unwrap();
    assert_eq!(details.len(), 10, "stops at the 10th failure in a row");
    // Each slot was tried 1 + 2 retries times before the next.
    let attempts: Vec<u32> = details.iter().map(|d| d.attempt).collect();
    assert_eq!(&attempts[..6], &[0, 1, 2, 0, 1, 2]);
    for d in &details {
        match &d.run.status {
            store::RunStatus::Failed { reason } => {
                assert!(reason.contains("--max-duration"), "{reason}")
            }
            store::RunStatus::Ok => panic!("a run the server refuses succeeded"),
        }
    }
    assert!(!s.campaign(1).unwrap().finished);
}

/// `--profile A,B` is an axis: every profile is checked before anything runs, then one
/// campaign per profile runs, labelled with it, its model recorded, and the command
/// that reports them together is printed.
#[test]
fn a_list_of_profiles_runs_one_labelled_campaign_each() {
    let _turn = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("axis.db");
    let db_s = db.display().to_string();
    let base = [
        "study",
        "--tests",
        "udp-stream",
        "--runs",
        "2",
        "--duration",
        "0.3",
        "--label",
        "lo",
        "--db",
        &db_s,
    ];
    for (list, why) in [
        ("voip-g729,skype", "unknown profile"),
        ("voip-g729,,dns", "empty name"),
        ("voip-g729,VOIP-G729", "listed twice"),
    ] {
        let o = run(&[&base[..], &["--profile", list]].concat(), false);
        assert!(!o.status.success(), "{list} was accepted");
        assert!(text(&o).contains(why), "{list}: {}", text(&o));
        assert!(
            !db.exists(),
            "{list}: nothing may be created before all are checked"
        );
    }
    let dry = run(
        &[
            &base[..],
            &["--profile", "voip-g729,game-client", "--dry-run"],
        ]
        .concat(),
        false,
    );
    assert!(dry.status.success(), "{}", text(&dry));
    let t = text(&dry);
    assert!(t.contains("campaign 1 of 2 (profile voip-g729)"), "{t}");
    assert!(t.contains("campaign 2 of 2 (profile game-client)"), "{t}");
    assert!(
        t.contains("traffic model (udp-stream and tcp-stream cells): voip-g729: gaps constant:20ms, sizes constant:32,"),
        "{t}"
    );
    assert!(!db.exists(), "a dry run creates nothing");

    let o = run(
        &[&base[..], &["--profile", "voip-g729,game-client"]].concat(),
        false,
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let cs = s.campaigns().unwrap();
    let got: Vec<(&str, bool)> = cs.iter().map(|c| (c.label.as_str(), c.finished)).collect();
    assert_eq!(
        got,
        [("lo voip-g729", true), ("lo game-client", true)],
        "in the order given"
    );
    for (c, (profile, size)) in cs.iter().zip([("voip-g729", 32), ("game-client", 48)]) {
        let spec = study::StudySpec::from_json(&c.spec_json).unwrap();
        let model = spec.traffic.expect("the model is recorded");
        assert_eq!(model.profile.as_deref(), Some(profile));
        assert_eq!(
            spec.sizes_bytes,
            [size],
            "{profile}: its mean size labels the cells"
        );
        assert_eq!(measured_slots(db.as_ref(), c.id).len(), 2 * 2, "{profile}");
        // Every campaign is placed as a campaign of its own would be (the first one's
        // pinning of this process's thread must not leave the next one's server on
        // the client's CPU).
        let client = c.hosts.iter().find(|h| h.role == "client").unwrap();
        assert_eq!(
            client.metadata.get("study.cpu_pinning").map(String::as_str),
            Some(expected_pinning()),
            "{profile}"
        );
    }
    let ids: Vec<String> = cs.iter().map(|c| c.id.to_string()).collect();
    assert!(
        text(&o).contains(&format!("--campaign {}", ids.join(" "))),
        "{}",
        text(&o)
    );
    // The report says which model each compared campaign ran.
    let out = dir.path().join("report");
    let r = run(
        &[
            &["report", "--db", &db_s, "--no-png", "--no-pdf", "--out"][..],
            &[out.to_str().unwrap(), "--campaign"],
            &ids.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
        false,
    );
    assert!(r.status.success(), "{}", text(&r));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for want in [
        "| traffic model | voip-g729: gaps constant:20ms, sizes constant:32, seed",
        "| traffic model | game-client: gaps constant:40ms, sizes gumbel:loc=45,scale=5.7, seed",
    ] {
        assert!(md.contains(want), "{want}");
    }
}

#[test]
fn a_host_busy_before_the_first_run_is_warned_about_on_the_terminal_and_in_the_summary() {
    let _turn = crate::support::serial();
    // Other load on every core while the study measures its idle baseline: spinning
    // threads of this process, stopped when the study has ended.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let spinners: Vec<_> = (0..cores)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            })
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.db").display().to_string();
    let o = run(
        &[
            "study",
            "--families",
            "4",
            "--tests",
            "tcp-rr",
            "--sizes",
            "128",
            "--runs",
            "1",
            "--warmup",
            "0",
            "-n",
            "10",
            "--db",
            &db,
        ],
        false,
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for s in spinners {
        s.join().unwrap();
    }
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    // The baseline recorded is the one the warnings quote.
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let hosts = s.campaign(1).unwrap().hosts;
    let busy: f64 = hosts.iter().find(|h| h.role == "client").unwrap().metadata
        ["study.idle_cpu_busy_pct"]
        .parse()
        .unwrap();
    assert!(busy >= 10.0, "{cores} spinning threads, yet {busy} % busy");
    let said = format!("this host was {busy:.0} % busy (all cores) before the first run");
    assert!(err.contains(&said), "stderr: {err}");
    assert!(out.contains(&said), "summary: {out}");
}
