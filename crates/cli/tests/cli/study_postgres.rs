//! The binary against a shared PostgreSQL store (issue 16), on a throwaway cluster on
//! 127.0.0.1 (skipped with the reason when PostgreSQL is absent and CI is unset), with
//! the study crate's fake executor (`DUALPERF_STUDY_FAKE=1`: no sockets, runs that take
//! their duration in real time):
//! - two studies in parallel into one database, one SIGKILLed and resumed (through
//!   `DUALPERF_DB`) with nothing lost or doubled; the password never stored;
//! - `import` PostgreSQL → SQLite, twice; the report from PostgreSQL equals the report
//!   from the SQLite copy;
//! - the connection cut mid-study (`pg_terminate_backend`): the study stops naming the
//!   run in progress, and `--resume` completes it.

use crate::support::{text, BIN};
use std::collections::BTreeSet;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use store::{DbTarget, Store};
use testkit::pg::Cluster;

fn dualperf(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("DUALPERF_DB")
        .env("DUALPERF_STUDY_FAKE", "1");
    c
}

fn run(args: &[&str]) -> Output {
    dualperf(args).output().expect("the dualperf binary runs")
}

fn spawn(args: &[&str]) -> Child {
    dualperf(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the dualperf binary starts")
}

/// The campaign labelled `label` and its recorded runs (None while it does not exist).
fn campaign_runs(db: &DbTarget, label: &str) -> Option<(i64, usize)> {
    let s = Store::open_target_read_only(db).ok()?;
    let c = s.campaigns().ok()?.into_iter().find(|c| c.label == label)?;
    Some((c.id, s.runs(c.id).ok()?.len()))
}

/// Wait until campaign `label` has at least `n` runs; its id.
fn wait_for_runs(db: &DbTarget, label: &str, n: usize, child: &mut Child) -> i64 {
    let t0 = Instant::now();
    loop {
        if let Some((id, runs)) = campaign_runs(db, label) {
            if runs >= n {
                return id;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "{label} did not record {n} runs in 120 s"
        );
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{label} ended before {n} runs: {status:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// (cell, repetition) of every successful measured run; panics on a duplicate.
fn measured_slots(db: &DbTarget, campaign: i64) -> BTreeSet<(u32, u32)> {
    let s = Store::open_target_read_only(db).expect("database opens");
    crate::support::study::slots_in(&s, campaign)
}

fn study_args<'a>(label: &'a str, runs: &'a str, db: &'a str) -> Vec<&'a str> {
    vec![
        "study",
        "--tests",
        "tcp-stream,udp-rr",
        "--sizes",
        "128,1408",
        "--runs",
        runs,
        "--duration",
        "0.05",
        "--label",
        label,
        "--db",
        db,
    ]
}

#[test]
fn parallel_studies_into_one_database_one_killed_and_resumed_report_equals_sqlite_copy() {
    let Some(pg) = Cluster::start_or_skip("parallel_studies_into_one_database") else {
        return;
    };
    pg.create_db("perf");
    // Trust authentication: the password is accepted and must never be stored.
    let url = format!("postgres://dualperf:s3cret@127.0.0.1:{}/perf", pg.port);
    let db = DbTarget::from(url.as_str());

    let a = spawn(&study_args("A", "3", &url));
    let mut b = spawn(&study_args("B", "5", &url));
    let b_id = wait_for_runs(&db, "B", 6, &mut b);
    b.kill().expect("SIGKILL study B");
    b.wait().expect("reap study B");
    let at_kill = measured_slots(&db, b_id).len();
    assert!((6..40).contains(&at_kill), "{at_kill}");

    let a_out = a.wait_with_output().expect("study A");
    assert!(a_out.status.success(), "{}", text(&a_out));
    let (a_id, _) = campaign_runs(&db, "A").unwrap();
    assert_eq!(measured_slots(&db, a_id).len(), 24);

    // Resume B from the environment variable, as another controller would.
    let resumed = dualperf(&["study", "--resume", &b_id.to_string()])
        .env("DUALPERF_DB", &url)
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{}", text(&resumed));
    let err = String::from_utf8_lossy(&resumed.stderr);
    assert!(err.contains("taking it over"), "{err}");
    assert_eq!(measured_slots(&db, b_id).len(), 40);
    let s = Store::open_target_read_only(&db).unwrap();
    assert!(s.campaign(b_id).unwrap().finished);
    for c in s.campaigns().unwrap() {
        assert!(
            c.command_line.contains("dualperf:***@127.0.0.1"),
            "{}",
            c.command_line
        );
        assert!(!c.command_line.contains("s3cret"), "{}", c.command_line);
    }
    drop(s);
    for o in [&a_out, &resumed] {
        assert!(!text(o).contains("s3cret"), "{}", text(o));
    }

    // show and export read PostgreSQL.
    let show = run(&["show", "--db", &url]);
    assert!(show.status.success(), "{}", text(&show));
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains('A') && shown.contains('B') && !shown.contains("s3cret"),
        "{shown}"
    );
    let export = run(&["export", "--db", &url]);
    assert!(export.status.success(), "{}", text(&export));

    // A copy into SQLite, twice: the second adds nothing.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db").display().to_string();
    let first = run(&["import", &url, "--db", &copy]);
    assert!(first.status.success(), "{}", text(&first));
    assert!(
        String::from_utf8_lossy(&first.stdout).contains("2 campaigns, "),
        "{}",
        text(&first)
    );
    let second = run(&["import", &url, "--db", &copy]);
    assert!(
        String::from_utf8_lossy(&second.stdout).contains("0 campaigns, 0 runs imported"),
        "{}",
        text(&second)
    );

    // The same report from both: campaigns compared by label.
    let ids = [a_id.min(b_id).to_string(), a_id.max(b_id).to_string()];
    for format in ["markdown", "text"] {
        let report = |db: &str| {
            let o = run(&[
                "report",
                "--db",
                db,
                "--format",
                format,
                "--campaign",
                &ids[0],
                &ids[1],
            ]);
            assert!(
                o.status.code() == Some(0) || o.status.code() == Some(5),
                "{}",
                text(&o)
            );
            String::from_utf8(o.stdout).unwrap()
        };
        let from_pg = report(&url);
        assert!(from_pg.len() > 200, "{from_pg}");
        // The copy says where its campaigns came from; nothing else may differ.
        let from_copy = report(&copy);
        // The fact's value as the Markdown writer escapes it (the URL holds `_`, `&`…).
        let imported = format!(
            "imported from | {}",
            report::escape::markdown(&DbTarget::from(url.as_str()).to_string())
        );
        if format == "markdown" {
            assert_eq!(from_copy.matches(&imported).count(), 2, "{from_copy}");
        }
        let from_copy: String = from_copy
            .lines()
            .filter(|l| !l.contains("imported from"))
            .map(|l| format!("{l}\n"))
            .collect();
        let differing: Vec<(&str, &str)> = from_pg
            .lines()
            .zip(from_copy.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert!(
            differing.is_empty(),
            "{format} reports differ: {differing:#?}"
        );
        assert_eq!(from_pg.lines().count(), from_copy.lines().count());
    }
}

#[test]
fn a_connection_cut_mid_study_stops_naming_the_run_and_resume_completes() {
    let Some(pg) = Cluster::start_or_skip("a_connection_cut_mid_study") else {
        return;
    };
    pg.create_db("perf");
    let url = pg.url("perf");
    let db = DbTarget::from(url.as_str());
    // One cell: the only store write between runs is the run itself.
    let mut child = spawn(&[
        "study",
        "--tests",
        "tcp-stream",
        "--sizes",
        "128",
        "--families",
        "4",
        "--runs",
        "30",
        "--duration",
        "0.05",
        "--label",
        "cut",
        "--db",
        &url,
    ]);
    let id = wait_for_runs(&db, "cut", 3, &mut child);
    assert!(pg.terminate_sessions("perf") >= 1);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{err}");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        err.contains("could not record IPv4 tcp-stream") || err.contains("could not record"),
        "{err}"
    );
    assert!(
        err.contains("lost the connection to the PostgreSQL results database"),
        "{err}"
    );
    assert!(err.contains(&format!("--resume {id}")), "{err}");
    let before = measured_slots(&db, id).len();
    assert!(before < 30, "{before}");

    let resumed = run(&["study", "--resume", &id.to_string(), "--db", &url]);
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert_eq!(measured_slots(&db, id).len(), 30);
}

/// A password from PGPASSWORD (kept out of the command line) is used; a wrong one is a
/// clear error that names neither it nor the URL's.
#[test]
fn password_from_pgpassword_or_the_url_and_a_wrong_one_explained() {
    let Some(pg) = Cluster::start_or_skip("password_from_pgpassword") else {
        return;
    };
    pg.create_db("perf");
    pg.add_password_user("alice", "right");
    let url = format!("postgres://alice@127.0.0.1:{}/perf", pg.port);
    let ok = dualperf(&["show", "--db", &url])
        .env("PGPASSWORD", "right")
        .output()
        .unwrap();
    // Past authentication: the database simply holds nothing yet.
    let err = String::from_utf8_lossy(&ok.stderr);
    assert!(
        err.contains("holds no dualperf results yet"),
        "{}",
        text(&ok)
    );
    let wrong = dualperf(&["show", "--db", &url])
        .env("PGPASSWORD", "wrong")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert_eq!(wrong.status.code(), Some(1), "{err}");
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(err.contains("check USER and PASSWORD"), "{err}");
    let in_url = format!("postgres://alice:wrong@127.0.0.1:{}/perf", pg.port);
    let wrong = run(&["export", "--db", &in_url]);
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        err.contains("alice:***@") && !err.contains("wrong@"),
        "{err}"
    );
}
