//! `dualperf report` (and `show`) on what a newcomer may hand them: an empty or foreign
//! file as the database, a campaign without one successful run, a campaign with nothing
//! to compare; and the confidence level a campaign was repeated to.

use crate::support::{stderr, BIN};
use std::path::Path;
use std::process::{Command, Output};

fn dualperf(dir: &Path, args: &[&str], fake: bool) -> Output {
    let mut c = Command::new(BIN);
    c.current_dir(dir).args(args);
    if fake {
        c.env("DUALPERF_STUDY_FAKE", "1");
    }
    c.output().expect("the dualperf binary runs")
}

#[test]
fn an_empty_or_foreign_file_is_named_for_what_it_is() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("empty.db"), b"").expect("write");
    std::fs::write(tmp.path().join("notes.db"), b"hello, not a database\n").expect("write");
    for cmd in [&["report"][..], &["show"], &["export"]] {
        let mut args = cmd.to_vec();
        args.extend(["--db", "empty.db"]);
        let o = dualperf(tmp.path(), &args, false);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).contains("empty.db is empty: not a dualperf database"),
            "{args:?}: {}",
            stderr(&o)
        );
        let mut args = cmd.to_vec();
        args.extend(["--db", "notes.db"]);
        let o = dualperf(tmp.path(), &args, false);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&o).contains("notes.db is not an SQLite database"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // Neither file was touched.
    assert_eq!(
        std::fs::read(tmp.path().join("empty.db"))
            .expect("read")
            .len(),
        0
    );
}

#[test]
fn the_campaigns_confidence_level_is_the_reports_unless_told_otherwise() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let study = dualperf(
        tmp.path(),
        &[
            "study",
            "--confidence",
            "99",
            "--ci-width",
            "50",
            "--max-runs",
            "3",
            "--sizes",
            "128",
            "--tests",
            "tcp-rr",
            "--quiet",
        ],
        true,
    );
    assert!(study.status.success(), "{}", stderr(&study));
    let o = dualperf(tmp.path(), &["report", "--format", "markdown"], false);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("99% CI") && !md.contains("95% CI"), "{md}");
    assert!(stderr(&o).contains("intervals at 99%"), "{}", stderr(&o));
    let o = dualperf(
        tmp.path(),
        &["report", "--format", "markdown", "--confidence", "95"],
        false,
    );
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("95% CI") && !md.contains("99% CI"), "{md}");
}

#[test]
fn a_campaign_with_one_family_has_nothing_to_compare_and_exits_5() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let study = dualperf(
        tmp.path(),
        &[
            "study",
            "--families",
            "4",
            "--runs",
            "2",
            "--sizes",
            "128",
            "--tests",
            "tcp-rr",
            "--quiet",
        ],
        true,
    );
    assert!(study.status.success(), "{}", stderr(&study));
    let o = dualperf(tmp.path(), &["report", "--format", "text"], false);
    // 5: written, but nothing to compare (not 2, a usage error).
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nothing to compare") && stderr(&o).contains("--families 4,6"),
        "{}",
        stderr(&o)
    );
}

use crate::support::server as server_proc;

/// `dualperf server` allowing 0.1 s tests on 127.0.0.1 (port `.1`); killed on drop.
struct ShortServer(#[allow(dead_code)] server_proc::ServerProc, u16);

fn short_server() -> ShortServer {
    let p = server_proc::ServerProc::start(BIN, &["--bind", "127.0.0.1", "--max-duration", "0.1"]);
    let port = p.port();
    ShortServer(p, port)
}

#[test]
fn a_campaign_without_a_successful_run_is_an_error_with_its_first_failure() {
    let srv = short_server();
    let tmp = tempfile::tempdir().expect("tempdir");
    // The server refuses 0.5 s runs; its handshake still answers, so the study starts.
    let study = dualperf(
        tmp.path(),
        &[
            "study",
            "127.0.0.1",
            "--port",
            &srv.1.to_string(),
            "-d",
            "0.5",
            "--runs",
            "1",
            "--sizes",
            "128",
            "--tests",
            "tcp-rr",
            "--retries",
            "0",
            "--quiet",
        ],
        false,
    );
    // 4: the study finished, but a cell got no run.
    assert_eq!(study.status.code(), Some(4), "{}", stderr(&study));
    let o = dualperf(tmp.path(), &["report", "--format", "text"], false);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("campaign 1 has no successful run (1 failed"),
        "{e}"
    );
    assert!(
        e.contains("--max-duration") && e.contains("--resume 1"),
        "{e}"
    );
}
