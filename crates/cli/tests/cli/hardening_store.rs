//! Issue 11.3 and 11.4 through the binary (fake executor): studies started together on
//! one new database all finish with every run stored; `--resume N` while N runs is
//! refused naming host and PID; after a kill -9 the stale lock is taken over.

use crate::support::study::*;
use std::time::{Duration, Instant};

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

/// A fake study of 4 runs (tcp-stream, 128 B, IPv4 and IPv6, 2 runs) into `db`.
fn small_study(db: &str, label: &str) {
    let o = run(
        &[
            "study",
            "--tests",
            "tcp-stream",
            "--sizes",
            "128",
            "--runs",
            "2",
            "--duration",
            "0.01",
            "--quiet",
            "--label",
            label,
            "--db",
            db,
        ],
        true,
    );
    assert!(o.status.success(), "{}", text(&o));
}

/// Issue 28.8: importing again a campaign that grew at its source adds the runs the
/// copy lacks and says how many (before: "skipped campaign 1: already in", the new
/// runs silently left behind); `--campaign` names what to import.
#[test]
fn reimport_of_a_grown_campaign_adds_its_new_runs_and_says_how_many() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.db").display().to_string();
    let dst = dir.path().join("dst.db").display().to_string();
    small_study(&src, "grows");
    let first = run(&["import", &src, "--db", &dst], false);
    assert!(first.status.success(), "{}", text(&first));
    assert!(
        text(&first).contains("1 campaigns, 4 runs imported"),
        "{}",
        text(&first)
    );
    {
        let mut s = store::Store::open(src.as_ref()).unwrap();
        let template = s.run_details(1).unwrap().pop().unwrap();
        for cell in 0..2 {
            s.record_run(&store::NewRun {
                campaign_id: 1,
                cell_index: cell,
                repetition: 2,
                warmup: false,
                attempt: 0,
                status: store::RunStatus::Ok,
                metrics: template.run.metrics.clone(),
                samples: Vec::new(),
                applied: template.applied.clone(),
                started_unix_ns: template.run.started_unix_ns + 1_000_000_000,
                duration_ns: template.duration_ns,
            })
            .unwrap();
        }
    }
    let again = run(&["import", &src, "--db", &dst], false);
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        text(&again).contains(&format!(
            "merged campaign 1 of {src} into campaign 1: 2 runs added"
        )),
        "{}",
        text(&again)
    );
    let s = store::Store::open_read_only(dst.as_ref()).unwrap();
    assert_eq!(s.runs(1).unwrap().len(), 6);
    drop(s);
    let third = run(&["import", &src, "--db", &dst], false);
    assert!(text(&third).contains("0 runs added"), "{}", text(&third));
    // A subset by id; an id the source lacks is an error naming it.
    let other = dir.path().join("other.db").display().to_string();
    small_study(&src, "second");
    let some = run(&["import", &src, "--campaign", "2", "--db", &other], false);
    assert!(some.status.success(), "{}", text(&some));
    assert!(
        text(&some).contains("imported campaign 2 of"),
        "{}",
        text(&some)
    );
    let s = store::Store::open_read_only(other.as_ref()).unwrap();
    let labels: Vec<String> = s
        .campaigns()
        .unwrap()
        .into_iter()
        .map(|c| c.label)
        .collect();
    assert_eq!(labels, vec!["second"]);
    drop(s);
    let missing = run(&["import", &src, "--campaign", "7", "--db", &other], false);
    assert!(!missing.status.success());
    assert!(
        text(&missing).contains("no campaign 7"),
        "{}",
        text(&missing)
    );
}

/// A copy of `db` as `sqlite3 db .dump | sqlite3 copy` makes it: the tables and rows
/// without the schema version. With the sqlite3 CLI when installed; otherwise the file
/// copied with the version field of its header (bytes 60..64, "user version") zeroed,
/// which is the state a dump leaves.
fn dump_copy(db: &str, copy: &str) {
    let dumped = std::process::Command::new("sqlite3")
        .arg(db)
        .arg(".dump")
        .output();
    if let Some(d) = dumped.ok().filter(|d| d.status.success()) {
        let mut load = std::process::Command::new("sqlite3")
            .arg(copy)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        load.stdin.take().unwrap().write_all(&d.stdout).unwrap();
        assert!(load.wait().unwrap().success());
        return;
    }
    eprintln!("sqlite3 not installed: the copy is made by zeroing the header's user version");
    let mut bytes = std::fs::read(db).unwrap();
    bytes[60..64].copy_from_slice(&[0, 0, 0, 0]);
    std::fs::write(copy, bytes).unwrap();
}

/// Issue 28.11: a `.dump` copy (schema version 0, tables present) is shown, reported,
/// exported and imported as it is, and resumed (adopted at its version); before, each
/// failed or advised `study --resume` / `import`, which failed on "table campaigns
/// already exists".
#[test]
fn a_dump_copy_is_shown_reported_imported_and_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.db").display().to_string();
    let copy = dir.path().join("copy.db").display().to_string();
    let new = dir.path().join("new.db").display().to_string();
    small_study(&db, "dumped");
    dump_copy(&db, &copy);
    for args in [
        vec!["show", "--db", &copy],
        vec!["show", "--db", &copy, "1"],
        vec!["export", "--db", &copy],
        vec!["report", "--db", &copy, "--format", "text"],
        vec!["import", &copy, "--db", &new],
    ] {
        let o = run(&args, false);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
    }
    let s = store::Store::open_read_only(new.as_ref()).unwrap();
    assert_eq!(s.runs(1).unwrap().len(), 4);
    drop(s);
    let o = run(&["study", "--resume", "1", "--db", &copy], true);
    assert!(o.status.success(), "{}", text(&o));
    let s = store::Store::open_read_only(copy.as_ref()).unwrap();
    assert_eq!(s.schema_version().unwrap(), store::schema::CURRENT_VERSION);
}

/// Stored values are checked when a report reads them: a run with a negative or
/// infinite throughput (written behind dualperf's back) is counted nowhere and listed
/// with why; before, it went into the means and figures.
#[test]
fn a_report_leaves_out_runs_with_impossible_values_and_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bad.db").display().to_string();
    small_study(&db, "bad");
    let clean = run(&["report", "--db", &db, "--format", "text"], false);
    assert!(clean.status.success(), "{}", text(&clean));
    assert!(!text(&clean).contains("Runs left out"));
    let mut ids = Vec::new();
    {
        let mut s = store::Store::open(db.as_ref()).unwrap();
        let template = s.run_details(1).unwrap().pop().unwrap();
        for (rep, tput) in [(2, -1.0e9), (3, f64::INFINITY)] {
            let mut metrics = template.run.metrics.clone();
            metrics.insert("throughput_bps".into(), tput);
            ids.push(
                s.record_run(&store::NewRun {
                    campaign_id: 1,
                    cell_index: template.cell_index,
                    repetition: rep,
                    warmup: false,
                    attempt: 0,
                    status: store::RunStatus::Ok,
                    metrics,
                    samples: Vec::new(),
                    applied: Default::default(),
                    started_unix_ns: template.run.started_unix_ns + i64::from(rep),
                    duration_ns: template.duration_ns,
                })
                .unwrap(),
            );
        }
    }
    let o = run(&["report", "--db", &db, "--format", "text"], false);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Runs left out"), "{out}");
    assert!(
        out.contains("throughput_bps = -1000000000 (must be a finite number ≥ 0)"),
        "{out}"
    );
    assert!(
        out.contains("throughput_bps = inf (not a finite number)"),
        "{out}"
    );
    for id in ids {
        assert!(out.contains(&id.to_string()), "{out}");
    }
}

/// Issue 38: a FIFO given as the database is refused at once by show, report, export,
/// import and `--resume` (it used to block in the file check until a writer came), and
/// a study given `/dev/null` refuses it without creating `/dev/null-journal`.
#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_as_the_database_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.db");
    testkit::make_fifo(&fifo);
    let fifo = fifo.display().to_string();
    let good = dir.path().join("good.db").display().to_string();
    let journal = std::path::Path::new("/dev/null-journal");
    let there_before = journal.exists();
    let is_fifo = "fifo.db is a FIFO (named pipe), not a dualperf database";
    for (args, says) in [
        (vec!["show", "--db", &fifo], is_fifo),
        (vec!["show", "1", "--db", &fifo], is_fifo),
        (vec!["report", "--db", &fifo, "--format", "text"], is_fifo),
        (vec!["export", "--db", &fifo], is_fifo),
        (vec!["import", &fifo, "--db", &good], is_fifo),
        (vec!["study", "--resume", "1", "--db", &fifo], is_fifo),
        (vec!["study", "--runs", "1", "--db", &fifo], is_fifo),
        (
            vec!["study", "--runs", "1", "--db", "/dev/null"],
            "/dev/null is a character device, not a dualperf database",
        ),
    ] {
        let mut c = std::process::Command::new(BIN);
        c.args(&args)
            .env_remove("DUALPERF_DB")
            .env("DUALPERF_STUDY_FAKE", "1");
        let o = crate::support::output_within(&mut c, Duration::from_secs(60));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert_eq!(journal.exists(), there_before);
}

/// A `--db` path that is not UTF-8 (a path may hold any bytes): the study runs and
/// stores its command line with U+FFFD in their place (capturing it used to panic, after
/// the database was made).
#[cfg(unix)]
#[test]
fn a_study_into_a_path_that_is_not_utf8_runs_and_stores_its_command_line() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"r\xffsults.db"));
    let o = std::process::Command::new(BIN)
        .args([
            "study",
            "--sizes",
            "128",
            "--runs",
            "1",
            "--duration",
            "0.01",
            "--db",
        ])
        .arg(&db)
        .env_remove("DUALPERF_DB")
        .env("DUALPERF_STUDY_FAKE", "1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let s = store::Store::open_read_only(&db).unwrap();
    let c = &s.campaigns().unwrap()[0];
    assert!(
        c.command_line.contains("r\u{fffd}sults.db"),
        "{}",
        c.command_line
    );
}
