//! Fault: the server of a study is SIGKILLed mid-study and restarted on the same port
//! a second later. The study must record the failed attempt (with its reason), retry
//! with backoff, and continue to the full number of successful runs once the server is
//! back.

use crate::support::shared;
use crate::support::BIN;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::server as server_proc;
use server_proc::ServerProc;

/// Start `dualperf server` on 127.0.0.1 (port 0: the kernel's choice) and wait until it
/// listens.
fn start_server(port: u16) -> ServerProc {
    ServerProc::start_on(BIN, port, &["--bind", "127.0.0.1"])
}

#[test]
fn server_killed_mid_study_is_recorded_and_the_study_continues_after_it_returns() {
    let _turn = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let server = start_server(0);
    let port = server.port();
    let t0 = Instant::now();
    let study = Command::new(BIN)
        .args([
            "study",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--families",
            "4",
            "--tests",
            "tcp-stream",
            "--sizes",
            "128",
            "--runs",
            "8",
            "--duration",
            "0.3",
            "--retries",
            "2",
            "--connect-timeout",
            "2",
            "--db",
            db.to_str().unwrap(),
            "--quiet",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("study starts");
    // Killed once a run has been served (not before the study's preflight, not after
    // its last run, however slow this machine is).
    let log = server.wait_log(" ok: ", 1, Duration::from_secs(30));
    assert!(log.contains(" ok: "), "no run served in 30 s: {log}");
    drop(server); // SIGKILL, reaped
    std::thread::sleep(Duration::from_millis(1000));
    let _server = start_server(port);
    let out = study.wait_with_output().expect("study ends");
    let elapsed = t0.elapsed();
    let all = format!(
        "{:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(4),
        "study exit {code:?} (want 0, or 4: a cell got no run): {all}"
    );
    assert!(elapsed < Duration::from_secs(30), "took {elapsed:?}");
    check_db(&db, &all);
    eprintln!("study with a server restart took {elapsed:?}");
}

fn check_db(db: &Path, all: &str) {
    let s = store::Store::open_read_only(db).expect("database opens");
    let details = s.run_details(1).expect("runs readable");
    let failed: Vec<&str> = details
        .iter()
        .filter_map(|d| match &d.run.status {
            store::RunStatus::Failed { reason } => Some(reason.as_str()),
            store::RunStatus::Ok => None,
        })
        .collect();
    let ok = details
        .iter()
        .filter(|d| d.run.status.is_ok() && !d.run.warmup)
        .count();
    assert!(
        !failed.is_empty(),
        "no failed attempt recorded across a server kill: {all}"
    );
    assert!(
        failed.iter().all(|r| !r.trim().is_empty()),
        "a failed attempt without a reason: {failed:?}"
    );
    assert_eq!(ok, 8, "successful runs (failed: {failed:?}): {all}");
    // The failure is followed by successes: the study went on after the restart.
    let last_fail = details
        .iter()
        .rposition(|d| !d.run.status.is_ok())
        .unwrap_or(0);
    assert!(
        details[last_fail..].iter().any(|d| d.run.status.is_ok()),
        "no successful run after the last failure: {failed:?}"
    );
    // The same through the export, failed attempts included with their reason.
    let exp = Command::new(BIN)
        .args([
            "export",
            "--format",
            "json",
            "--include-failed",
            "--db",
            db.to_str().unwrap(),
        ])
        .output()
        .expect("export runs");
    assert!(exp.status.success(), "export failed");
    let rows: serde_json::Value = serde_json::from_slice(&exp.stdout).expect("export is JSON");
    let failed_rows = rows
        .as_array()
        .expect("a JSON array")
        .iter()
        .filter(|r| r["status"] != "ok")
        .filter(|r| r["failure_reason"].as_str().is_some_and(|s| !s.is_empty()))
        .count();
    assert_eq!(failed_rows, failed.len(), "export of failed attempts");
}
