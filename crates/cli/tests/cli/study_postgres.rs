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

/// One IPv4 tcp-stream cell of 128 bytes, `runs` runs of `duration` s each.
fn one_cell_args<'a>(label: &'a str, runs: &'a str, duration: &'a str) -> Vec<&'a str> {
    vec![
        "study",
        "--tests",
        "tcp-stream",
        "--sizes",
        "128",
        "--families",
        "4",
        "--runs",
        runs,
        "--duration",
        duration,
        "--label",
        label,
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
            wire::escape::markdown(&DbTarget::from(url.as_str()).to_string())
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
    let mut args = one_cell_args("cut", "30", "0.05");
    args.extend(["--db", &url]);
    let mut child = spawn(&args);
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

/// Issue 38: a password holding `/`, `#`, `?` and `:` (which the client reads up to the
/// `@`), in the URL's credentials and in a `password=` parameter given through
/// `DUALPERF_DB`, never reaches an output: not the stored command line (read with psql,
/// past dualperf's own reading), not `show`, `show N`, `export`, the report's files, nor
/// the error of a failed connection (a closed port on 127.0.0.1), with `PGPASSWORD` set.
#[test]
fn a_password_with_url_delimiters_is_never_shown_stored_or_reported() {
    let Some(pg) = Cluster::start_or_skip("a_password_with_url_delimiters") else {
        return;
    };
    pg.create_db("perf");
    pg.add_password_user("alice", "pa/ss#wo?rd:x");
    pg.add_password_user("bob", "b0b/s#cr?t");
    let secrets = ["pa/ss", "ss#wo", "wo?rd", "rd:x", "b0b/s", "cr?t"];
    let assert_hidden = |what: &str, text: &str| {
        for s in secrets {
            assert!(!text.contains(s), "{what} shows {s:?}: {text}");
        }
    };
    let alice = format!("postgres://alice:pa/ss#wo?rd:x@127.0.0.1:{}/perf", pg.port);
    let bob = format!(
        "postgresql://bob@127.0.0.1:{}/perf?application_name=t&password=b0b/s#cr?t",
        pg.port
    );
    let mut args = one_cell_args("alice", "2", "0.05");
    args.extend(["--db", &alice]);
    let a = run(&args);
    assert!(a.status.success(), "{}", text(&a));
    assert_hidden("study", &text(&a));
    let b = dualperf(&one_cell_args("bob", "2", "0.05"))
        .env("DUALPERF_DB", &bob)
        .output()
        .unwrap();
    assert!(b.status.success(), "{}", text(&b));
    assert_hidden("study through DUALPERF_DB", &text(&b));

    // As stored, read past dualperf.
    let stored = pg.psql(
        "perf",
        "SELECT command_line || ' ' || coalesce(imported_from, '') FROM campaigns",
    );
    assert_hidden("the stored command line", &stored);
    assert!(stored.contains("alice:***@127.0.0.1"), "{stored}");

    let show = run(&["show", "--db", &alice]);
    assert!(show.status.success(), "{}", text(&show));
    assert_hidden("show", &text(&show));
    let ids: Vec<String> = Store::open_target_read_only(&DbTarget::from(alice.as_str()))
        .unwrap()
        .campaign_ids()
        .unwrap()
        .iter()
        .map(i64::to_string)
        .collect();
    assert_eq!(ids.len(), 2);
    for id in &ids {
        let show = run(&["show", id, "--db", &alice]);
        assert!(show.status.success(), "{}", text(&show));
        let out = text(&show);
        assert!(out.contains("command: "), "{out}");
        assert_hidden("show N", &out);
    }
    let export = run(&["export", "--db", &bob]);
    assert!(export.status.success(), "{}", text(&export));
    assert_hidden("export", &text(&export));

    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("report");
    let report = run(&[
        "report",
        "--db",
        &alice,
        "--campaign",
        &ids[0],
        &ids[1],
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(
        report.status.code() == Some(0) || report.status.code() == Some(2),
        "{}",
        text(&report)
    );
    assert_hidden("report", &text(&report));
    let mut files = 0;
    let mut dirs = vec![out_dir.clone()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let body = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            assert_hidden(&path.display().to_string(), &body);
            files += 1;
        }
    }
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(
        html.contains("alice:***@127.0.0.1"),
        "the command line is in the report"
    );
    assert!(files >= 2, "{files}");

    // A failed connection: the same URLs at a port where nothing listens.
    let closed = testkit::free_port();
    for url in [&alice, &bob] {
        let wrong = url.replace(&format!(":{}/", pg.port), &format!(":{closed}/"));
        let o = dualperf(&["show", "--db", &wrong])
            .env("PGPASSWORD", "cr?t-from-env")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let err = text(&o);
        assert!(err.contains("cannot connect"), "{err}");
        assert!(err.contains(&format!("127.0.0.1:{closed}/perf")), "{err}");
        assert_hidden("a failed connection", &err);
        assert!(!err.contains("from-env"), "{err}");
    }
}

/// Issue 38: a run whose values changed at the source after an import is named when
/// imported again (PostgreSQL → SQLite), and the copy here is kept.
#[test]
fn reimport_names_a_run_changed_at_the_source_and_keeps_the_copy() {
    let Some(pg) = Cluster::start_or_skip("reimport_names_a_run_changed") else {
        return;
    };
    pg.create_db("perf");
    let url = pg.url("perf");
    let mut args = one_cell_args("src", "2", "0.01");
    args.extend(["--db", &url]);
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.db").display().to_string();
    let first = run(&["import", &url, "--db", &copy]);
    assert!(first.status.success(), "{}", text(&first));
    let export = |db: &str| {
        let o = run(&["export", "--db", db]);
        assert!(o.status.success(), "{}", text(&o));
        o.stdout
    };
    let before = export(&copy);
    pg.psql(
        "perf",
        "UPDATE run_metrics SET value = value * 2 + 1
         WHERE run_id = (SELECT min(id) FROM runs WHERE ok = 1 AND warmup = 0)",
    );
    let again = run(&["import", &url, "--db", &copy]);
    assert!(again.status.success(), "{}", text(&again));
    let out = String::from_utf8_lossy(&again.stdout);
    assert!(
        out.contains(
            "0 runs added; 1 runs campaign 1 already holds differ there (kept as they were here)"
        ),
        "{out}"
    );
    assert!(
        out.contains("  differs: IPv4 tcp-stream 128 B cell 0, repetition 0: ")
            && out.contains(" here, ")
            && out.contains(" there\n"),
        "{out}"
    );
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("1 runs already here differ in"), "{err}");
    assert_eq!(export(&copy), before, "the copy here is kept");
}
