//! `dualperf study --lab`: short studies in a temporary p2p and client-server lab fill
//! the database with every run and the lab's metadata; afterwards no namespace, veth
//! or lab server process of that study is left — after a normal end, a failed server
//! start, one Ctrl-C (the run in progress is finished; `--resume` re-creates the lab)
//! and two Ctrl-Cs (abort at once); a lab left by a SIGKILLed study is removed by the
//! next lab study (here its --resume). Needs root (skips with a reason outside CI).

use crate::support::shared;
use crate::support::study::*;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use wire::metrics as m;
use wire::spec::{Family, TestKind};

use crate::support::lab::{assert_nothing_left, leftovers};
use crate::support::labs_or_skip;

fn spawn_study(args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut c = Command::new(BIN);
    c.args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("DUALPERF_STUDY_FAKE");
    for (k, v) in env {
        c.env(k, v);
    }
    c.spawn().expect("the dualperf binary starts")
}

/// Runs a study to its end; returns its pid (the lab names carry it) and output.
fn run_study(args: &[&str], env: &[(&str, &str)]) -> (u32, Output) {
    let child = spawn_study(args, env);
    let pid = child.id();
    (pid, child.wait_with_output().expect("study finishes"))
}

/// Every cell of a stream study has all its runs, each with a positive goodput.
fn check_stream_runs(db: &Path, cells: usize, runs_per_cell: usize) -> Vec<store::RunRecord> {
    let s = store::Store::open_read_only(db).expect("database opens");
    let c = &s.campaigns().unwrap()[0];
    assert!(c.finished);
    assert_eq!(s.cells(c.id).unwrap().len(), cells);
    assert_eq!(measured_slots(db, c.id).len(), cells * runs_per_cell);
    let runs: Vec<_> = s
        .runs(c.id)
        .unwrap()
        .into_iter()
        .filter(|r| r.status.is_ok() && !r.warmup)
        .collect();
    for r in &runs {
        let bps = r.metrics.get(m::THROUGHPUT_BPS).copied().unwrap_or(0.0);
        assert!(
            bps > 0.0,
            "{} {} {} B: goodput {bps}",
            r.family,
            r.kind,
            r.payload_bytes
        );
    }
    runs
}

const STREAMS_2X2: [&str; 8] = [
    "--families",
    "4,6",
    "--tests",
    "tcp-stream,udp-stream",
    "--sizes",
    "128,1408",
    "--duration",
    "0.3",
];

#[test]
fn p2p_lab_study_records_runs_and_lab_metadata_and_leaves_nothing() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("p2p.db");
    let dbs = db.display().to_string();
    let mut args = vec!["study", "--lab", "p2p", "--lab-rate", "100mbit"];
    args.extend(STREAMS_2X2);
    // Unpaced (not the default RFC 2544 search), so the sender fills the shaper.
    args.extend([
        "--runs",
        "2",
        "--interval",
        "0.1",
        "--udp-method",
        "fixed",
        "--db",
        &dbs,
    ]);
    let (pid, o) = run_study(&args, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_nothing_left(pid);
    let runs = check_stream_runs(&db, 8, 2);
    // The shaper is really in the path: UDP at 1408 B cannot beat 100 Mbit/s by much
    // (the 64 KiB bucket adds < 2 Mbit/s over 0.3 s) and an unpaced sender fills it.
    for r in runs
        .iter()
        .filter(|r| r.kind == TestKind::UdpStream && r.payload_bytes == 1408)
    {
        let bps = r.metrics[m::THROUGHPUT_BPS];
        assert!(
            (40e6..104e6).contains(&bps),
            "{} UDP 1408 B goodput {bps} on a 100 Mbit/s lab",
            r.family
        );
    }
    let lab = host_md(&db, 1, "lab");
    assert_eq!(lab["lab.topology"], "p2p");
    assert_eq!(lab["lab.rate_bps"], "100000000");
    assert_eq!(lab["lab.mtu_bytes"], "1500");
    assert!(
        lab["lab.shaping"].starts_with("tbf rate 100Mbit"),
        "{lab:?}"
    );
    assert!(
        lab["lab.name"].starts_with(&format!("tmp{pid}-")),
        "{lab:?}"
    );
    assert!(lab["lab.client_ns"].starts_with("dpl-tmp"), "{lab:?}");
    assert!(lab["lab.server_addr_v4"]
        .parse::<std::net::Ipv4Addr>()
        .is_ok());
    assert!(lab["lab.server_addr_v6"]
        .parse::<std::net::Ipv6Addr>()
        .is_ok());
    let client = host_md(&db, 1, "client");
    assert_eq!(client["study.target"], "lab");
    // The server (another process, in the server namespace) reported its own metadata.
    let server = host_md(&db, 1, "server");
    assert!(!server.is_empty());
    assert_ne!(server, client);
}

#[test]
fn client_server_lab_study_runs_through_the_router_and_leaves_nothing() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cs.db");
    let dbs = db.display().to_string();
    let mut args = vec!["study", "--lab", "client-server", "--lab-mtu", "1400"];
    args.extend(STREAMS_2X2);
    args.extend(["--runs", "1", "--quiet", "--db", &dbs]);
    let (pid, o) = run_study(&args, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_nothing_left(pid);
    let runs = check_stream_runs(&db, 8, 1);
    for fam in [Family::V4, Family::V6] {
        assert_eq!(runs.iter().filter(|r| r.family == fam).count(), 4);
    }
    let lab = host_md(&db, 1, "lab");
    assert_eq!(lab["lab.topology"], "client-server");
    assert_eq!(lab["lab.rate_bps"], "unshaped");
    assert_eq!(lab["lab.mtu_bytes"], "1400");
    assert!(lab.contains_key("lab.router_ns"), "{lab:?}");
    assert_ne!(lab["lab.client_addr_v4"], lab["lab.server_addr_v4"]);
    // The report is made from the lab study's database alone.
    let o = run(&["report", "--db", &dbs, "--format", "markdown"], false);
    assert!(o.status.success(), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("UDP throughput") && md.contains("IPv6"), "{md}");
}

#[test]
fn ctrl_c_finishes_the_run_removes_the_lab_and_resume_recreates_it() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("int.db");
    let dbs = db.display().to_string();
    let args = [
        "study",
        "--lab",
        "p2p",
        "--lab-rate",
        "50mbit",
        "--lab-mtu",
        "1450",
        "--families",
        "4,6",
        "--tests",
        "udp-stream",
        "--sizes",
        "256",
        "--runs",
        "4",
        "--duration",
        "0.3",
        "--db",
        &dbs,
    ];
    let mut child = spawn_study(&args, &[]);
    let pid = child.id();
    let t0 = Instant::now();
    while recorded_runs(&db) < 2 {
        assert!(t0.elapsed() < Duration::from_secs(30), "no runs recorded");
        if let Ok(Some(s)) = child.try_wait() {
            panic!("study ended early: {s:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(text(&o).contains("--resume 1"), "{}", text(&o));
    assert_nothing_left(pid);
    let at_stop = recorded_runs(&db);
    assert!((2..8).contains(&at_stop), "{at_stop}");
    let first_lab = host_md(&db, 1, "lab");

    let (pid2, o) = run_study(&["study", "--resume", "1", "--db", &dbs], &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_nothing_left(pid2);
    assert_eq!(measured_slots(&db, 1).len(), 8);
    let lab = host_md(&db, 1, "lab");
    assert!(
        lab["lab.name"].starts_with(&format!("tmp{pid2}-")),
        "{lab:?}"
    );
    for k in ["lab.topology", "lab.rate_bps", "lab.mtu_bytes"] {
        assert_eq!(lab[k], first_lab[k], "{k}");
    }
    assert_eq!(lab["lab.rate_bps"], "50000000");
    assert_eq!(lab["lab.mtu_bytes"], "1450");
}

#[test]
fn second_ctrl_c_aborts_at_once_and_still_removes_the_lab() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("abort.db");
    let dbs = db.display().to_string();
    let args = [
        "study",
        "--lab",
        "client-server",
        "--tests",
        "tcp-stream",
        "--sizes",
        "1024",
        "--runs",
        "20",
        "--duration",
        "1",
        "--db",
        &dbs,
    ];
    let mut child = spawn_study(&args, &[]);
    let pid = child.id();
    let t0 = Instant::now();
    while recorded_runs(&db) < 1 {
        assert!(t0.elapsed() < Duration::from_secs(30), "no runs recorded");
        if let Ok(Some(s)) = child.try_wait() {
            panic!("study ended early: {s:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Well inside the second 1 s run, so the first Ctrl-C has a run to wait for.
    std::thread::sleep(Duration::from_millis(300));
    let sigint = || {
        Command::new("kill")
            .args(["-INT", &pid.to_string()])
            .status()
            .unwrap()
    };
    assert!(sigint().success());
    std::thread::sleep(Duration::from_millis(50));
    assert!(sigint().success());
    let t1 = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(
        t1.elapsed() < Duration::from_secs(5),
        "abort took {:?}",
        t1.elapsed()
    );
    assert!(text(&o).contains("removed"), "{}", text(&o));
    assert_nothing_left(pid);
}

#[test]
fn a_lab_server_that_does_not_start_is_an_error_and_the_lab_is_removed() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let dbs = dir.path().join("err.db").display().to_string();
    let (pid, o) = run_study(
        &[
            "study",
            "--lab",
            "p2p",
            "--tests",
            "tcp-stream",
            "--db",
            &dbs,
        ],
        &[("DUALPERF_LAB_SERVER_EXE", "/bin/false")],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did not start"), "{err}");
    assert!(err.contains("/bin/false"), "{err}");
    assert_nothing_left(pid);
}

#[test]
fn lab_flags_are_checked_before_anything_is_built() {
    let _turn = shared();
    let (_, o) = run_study(&["study", "--lab", "star", "--dry-run"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("p2p or client-server"), "{}", text(&o));
    let (_, o) = run_study(&["study", "--lab-rate", "10mbit", "--dry-run"], &[]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--lab-rate needs --lab: {}",
        text(&o)
    );
    let (_, o) = run_study(&["study", "localhost", "--lab", "p2p", "--dry-run"], &[]);
    assert_eq!(o.status.code(), Some(2), "HOST and --lab: {}", text(&o));
    let (_, o) = run_study(
        &[
            "study",
            "--lab",
            "p2p",
            "--lab-rate",
            "20mbit",
            "--tests",
            "udp-stream",
            "--dry-run",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("target: temporary p2p lab (tbf 20Mbit, MTU 1500 B"),
        "{out}"
    );
}

#[test]
fn a_lab_left_by_a_killed_study_is_removed_by_the_resume() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kill.db");
    let dbs = db.display().to_string();
    let args = [
        "study",
        "--lab",
        "p2p",
        "--families",
        "4",
        "--tests",
        "tcp-stream",
        "--sizes",
        "512",
        "--runs",
        "4",
        "--duration",
        "0.3",
        "--db",
        &dbs,
    ];
    let child = spawn_study(&args, &[]);
    let pid = child.id();
    let at_kill = kill_after_runs(child, &db, 1, Duration::from_secs(30));
    assert!((1..4).contains(&at_kill), "{at_kill}");
    // SIGKILL runs no handler: the lab and its server are still there.
    assert!(
        !leftovers(pid).is_empty(),
        "a SIGKILLed study cannot clean up"
    );
    let (pid2, o) = run_study(&["study", "--resume", "1", "--db", &dbs], &[]);
    assert!(o.status.success(), "{}", text(&o));
    // (Any lab study's start may have removed it; this one says so when it did.)
    assert_nothing_left(pid);
    assert_nothing_left(pid2);
    assert_eq!(measured_slots(&db, 1).len(), 4);
}

#[test]
fn lab_study_with_an_iperf3_peer_runs_debian_iperf3_in_the_server_namespace() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    if !Path::new("/usr/bin/iperf3").exists() {
        assert!(std::env::var_os("CI").is_none(), "CI installs iperf3");
        eprintln!("SKIPPED: /usr/bin/iperf3 is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("li.db");
    let dbs = db.display().to_string();
    let mut args = vec!["study", "--lab", "p2p", "--peer", "iperf3"];
    args.extend(STREAMS_2X2);
    args.extend(["--runs", "1", "--quiet", "--db", &dbs]);
    let (pid, o) = run_study(&args, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_nothing_left(pid);
    check_stream_runs(&db, 8, 1);
    let lab = host_md(&db, 1, "lab");
    assert!(lab["lab.server"].starts_with("iperf3 -s"), "{lab:?}");
    assert_eq!(lab["lab.server_port"], "5201");
    assert_eq!(host_md(&db, 1, "server")["peer.software"], "iperf3");
    let client = host_md(&db, 1, "client");
    assert_eq!(client["study.peer"], "iperf3");
    assert_eq!(client["study.target"], "lab");
}
