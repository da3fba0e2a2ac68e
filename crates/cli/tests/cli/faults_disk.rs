//! Faults of the results database's storage, with the fake executor (no network): a
//! disk that fills up mid-study, and a database on a read-only file system. Each must
//! end the study with a clear error and a non-zero exit and leave the database intact
//! (integrity check ok, the runs recorded before the fault readable, the campaign
//! resumable once space is freed). Needs root for the tmpfs mounts (skips outside CI).

use crate::support::root_or_skip;
use crate::support::{text, BIN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A tmpfs of a given size, unmounted on drop (also when the test panics).
struct Tmpfs {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().to_path_buf();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .status()
            .expect("mount runs");
        assert!(st.success(), "mount tmpfs at {}", path.display());
        Tmpfs { _dir: dir, path }
    }

    fn remount(&self, opts: &str) {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(&self.path)
            .status()
            .expect("mount runs");
        assert!(st.success(), "remount {opts}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

fn dualperf(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("DUALPERF_STUDY_FAKE", "1")
        .output()
        .expect("dualperf runs")
}

/// `PRAGMA integrity_check` through the sqlite3 shell when it is installed (None
/// otherwise); the store opening and reading every run is checked either way.
fn integrity(db: &Path) -> Option<String> {
    let o = Command::new("sqlite3")
        .arg(db)
        .arg("PRAGMA integrity_check;")
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn runs_in(db: &Path) -> usize {
    let s = store::Store::open_read_only(db).expect("database opens after the fault");
    s.runs(1).expect("runs readable after the fault").len()
}

const STUDY: &[&str] = &[
    "study",
    "--families",
    "4,6",
    "--tests",
    "tcp-stream,udp-rr",
    "--sizes",
    "128..1408/256",
    "--runs",
    "10",
    "--duration",
    "0.01",
    "--quiet",
];
/// 2 families × 2 tests × 6 sizes × 10 runs.
const STUDY_RUNS: usize = 240;

#[test]
fn full_disk_mid_study_is_a_clear_error_and_the_database_stays_intact() {
    if !root_or_skip("disk fault tests (tmpfs mounts)") {
        return;
    }
    let fs = Tmpfs::mount("256k");
    let db = fs.path.join("x.db");
    let db_s = db.to_str().unwrap();
    let o = dualperf(&[STUDY, &["--db", db_s]].concat());
    let err = String::from_utf8_lossy(&o.stderr).to_lowercase();
    assert!(
        !o.status.success(),
        "a study on a full disk succeeded: {}",
        text(&o)
    );
    assert!(
        err.contains("full") && err.contains("database"),
        "no clear 'database full' error: {}",
        text(&o)
    );
    assert!(
        err.contains("--resume"),
        "no way forward named: {}",
        text(&o)
    );
    if let Some(ic) = integrity(&db) {
        assert_eq!(ic, "ok", "integrity after the disk filled");
    }
    let before = runs_in(&db);
    assert!(before < STUDY_RUNS, "the disk never filled ({before} runs)");
    // Free space, resume: the campaign completes with every run.
    fs.remount("size=8m");
    let o = dualperf(&["study", "--db", db_s, "--resume", "1", "--quiet"]);
    assert!(
        o.status.success(),
        "resume after freeing space: {}",
        text(&o)
    );
    if let Some(ic) = integrity(&db) {
        assert_eq!(ic, "ok", "integrity after the resume");
    }
    let s = store::Store::open_read_only(&db).expect("database opens");
    let ok = s
        .runs(1)
        .expect("runs readable")
        .iter()
        .filter(|r| r.status.is_ok() && !r.warmup)
        .count();
    assert_eq!(ok, STUDY_RUNS, "runs after the resume");
    assert!(s.campaign(1).expect("campaign").finished);
    eprintln!("disk full after {before} runs; resume completed {ok}");
}

#[test]
fn read_only_database_is_a_clear_error_and_stays_intact() {
    if !root_or_skip("disk fault tests (tmpfs mounts)") {
        return;
    }
    let fs = Tmpfs::mount("4m");
    let db = fs.path.join("x.db");
    let db_s = db.to_str().unwrap();
    let o = dualperf(&[
        "study",
        "--families",
        "4",
        "--tests",
        "tcp-stream",
        "--sizes",
        "128",
        "--runs",
        "3",
        "--duration",
        "0.01",
        "--quiet",
        "--db",
        db_s,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read(&db).expect("db readable");
    // Root ignores file modes: make the whole file system read-only instead.
    fs.remount("ro");
    for args in [
        [STUDY, &["--db", db_s]].concat(),
        vec!["study", "--db", db_s, "--resume", "1", "--quiet"],
    ] {
        let o = dualperf(&args);
        let err = String::from_utf8_lossy(&o.stderr).to_lowercase();
        assert!(
            !o.status.success(),
            "a study wrote to a read-only db: {}",
            text(&o)
        );
        assert!(
            err.contains("database") && err.contains(&db_s.to_lowercase()),
            "error does not name the database: {}",
            text(&o)
        );
        assert!(
            err.contains("read-only"),
            "error does not say read-only: {}",
            text(&o)
        );
    }
    assert_eq!(
        std::fs::read(&db).expect("db readable"),
        before,
        "the read-only database changed"
    );
    fs.remount("rw");
    if let Some(ic) = integrity(&db) {
        assert_eq!(ic, "ok");
    }
    assert_eq!(runs_in(&db), 3);
}

#[test]
fn show_and_export_read_a_database_on_a_read_only_file_system() {
    if !root_or_skip("disk fault tests (tmpfs mounts)") {
        return;
    }
    let fs = Tmpfs::mount("4m");
    let db = fs.path.join("x.db");
    let db_s = db.to_str().unwrap();
    let o = dualperf(&[
        "study",
        "--families",
        "4",
        "--tests",
        "tcp-stream",
        "--sizes",
        "128",
        "--runs",
        "1",
        "--duration",
        "0.01",
        "--quiet",
        "--db",
        db_s,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    fs.remount("ro");
    let o = dualperf(&["export", "--format", "json", "--db", db_s]);
    assert!(o.status.success(), "export on a read-only fs: {}", text(&o));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("export is JSON");
    assert!(!rows.as_array().expect("array").is_empty());
    let o = dualperf(&["show", "1", "--db", db_s]);
    assert!(o.status.success(), "show on a read-only fs: {}", text(&o));
}
