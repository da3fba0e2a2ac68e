//! Issue 11.3 and 11.4 through the binary (fake executor): studies started together on
//! one new database all finish with every run stored; `--resume N` while N runs is
//! refused naming host and PID; after a kill -9 the stale lock is taken over.

mod study_common;

use std::time::{Duration, Instant};
use study_common::*;

#[test]
fn three_studies_at_once_on_one_new_database_all_store_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("shared.db").display().to_string();
    let args = [
        "study",
        "--tests",
        "tcp-stream,udp-rr",
        "--sizes",
        "128,256",
        "--runs",
        "3",
        "--duration",
        "0.01",
        "--quiet",
        "--db",
        &db,
    ];
    let children: Vec<_> = (0..3)
        .map(|_| {
            let mut c = std::process::Command::new(BIN);
            c.args(args)
                .env("DUALPERF_STUDY_FAKE", "1")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let camps = s.campaigns().unwrap();
    assert_eq!(camps.len(), 3);
    for c in camps {
        assert!(c.finished);
        // 2 tests × 2 sizes × 2 families × 3 runs.
        assert_eq!(s.runs(c.id).unwrap().len(), 24, "campaign {}", c.id);
    }
}

#[test]
fn resume_of_a_running_campaign_is_refused_and_a_dead_holders_lock_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("l.db");
    let db = db_path.display().to_string();
    let first = spawn(
        &[
            "study",
            "--tests",
            "tcp-stream",
            "--sizes",
            "128",
            "--runs",
            "40",
            "--duration",
            "0.05",
            "--db",
            &db,
        ],
        true,
    );
    let t0 = Instant::now();
    while recorded_runs(&db_path) < 1 {
        assert!(t0.elapsed() < Duration::from_secs(60), "no run recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = run(&["study", "--db", &db, "--resume", "1"], true);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{}", text(&o));
    let who = format!("process {} on host", first.id());
    assert!(
        e.contains("campaign 1 is being run by") && e.contains(&who),
        "{e}"
    );
    assert!(!e.contains("UNIQUE"), "{e}");

    let before = recorded_runs(&db_path);
    kill_after_runs(first, &db_path, before, Duration::from_secs(30));
    let o = run(&["study", "--db", &db, "--resume", "1"], true);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("which is gone; taking it over"),
        "{}",
        text(&o)
    );
    let s = store::Store::open_read_only(&db_path).unwrap();
    let ok = s
        .runs(1)
        .unwrap()
        .iter()
        .filter(|r| r.status.is_ok())
        .count();
    assert_eq!(ok, 80);
    assert_eq!(
        s.campaign_lock(1).unwrap(),
        None,
        "lock released at the end"
    );
}
