//! What `run` and `study` make of the target they are given, through the binary: an IP
//! address decides the family, and a study whose target cannot answer fails at once with
//! the cause and leaves nothing behind (no database file, no campaign).

use crate::support::{stderr, BIN};
use std::path::Path;
use std::process::{Command, Output};

fn dualperf(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the dualperf binary runs")
}

use crate::support::free_port;

/// A port on 127.0.0.1 where nothing listens (outside the ephemeral range, so no
/// parallel test's client socket takes it meanwhile).
fn closed_port() -> u16 {
    free_port()
}

fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read the temporary directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_study_against_a_closed_port_fails_at_once_with_the_cause_and_records_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let port = closed_port().to_string();
    let o = dualperf(tmp.path(), &["study", "127.0.0.1", "--port", &port]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    // The IPv4 address decides the family: the real cause, not an IPv6 resolution error.
    assert!(err.contains("connection refused"), "{err}");
    assert!(err.contains("nothing was recorded"), "{err}");
    assert!(!err.contains("IPv6") && !err.contains("--resume"), "{err}");
    assert!(
        files_in(tmp.path()).is_empty(),
        "{:?}",
        files_in(tmp.path())
    );
}

#[test]
fn a_study_against_an_unresolvable_name_records_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let o = dualperf(tmp.path(), &["study", "no-such-host.invalid"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot resolve host no-such-host.invalid"),
        "{}",
        stderr(&o)
    );
    assert!(
        files_in(tmp.path()).is_empty(),
        "{:?}",
        files_in(tmp.path())
    );
}

#[test]
fn a_study_whose_database_cannot_be_made_says_so_before_anything_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("missing-dir").join("x.db");
    let o = dualperf(
        tmp.path(),
        &["study", "--runs", "1", "--db", &db.to_string_lossy()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("mkdir -p"), "{}", stderr(&o));
    assert!(
        files_in(tmp.path()).is_empty(),
        "{:?}",
        files_in(tmp.path())
    );
}

#[test]
fn an_ip_address_decides_the_study_families() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let o = dualperf(tmp.path(), &["study", "127.0.0.1", "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(plan.contains("cells: 24"), "{plan}");
    assert!(
        plan.contains("IPv4 tcp-stream") && !plan.contains("IPv6 tcp-stream"),
        "{plan}"
    );
    let o = dualperf(
        tmp.path(),
        &["study", "::1", "--families", "4,6", "--dry-run"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("use --families 6"), "{}", stderr(&o));
}

use crate::support::server as server_proc;

/// `dualperf server` on ::1 (port `.1`); killed on drop.
struct Server(#[allow(dead_code)] server_proc::ServerProc, u16);

impl Server {
    fn start() -> Server {
        let p = server_proc::ServerProc::start(BIN, &["--bind", "::1"]);
        let port = p.port_for("::1");
        Server(p, port)
    }
}

#[test]
fn run_takes_the_family_from_an_ipv6_address_and_refuses_a_contradicting_flag() {
    let srv = Server::start();
    let tmp = tempfile::tempdir().expect("tempdir");
    let port = srv.1.to_string();
    let o = dualperf(
        tmp.path(),
        &[
            "run", "::1", "-p", &port, "-t", "tcp-rr", "-n", "10", "--json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["spec"]["family"], "6", "{v}");
    let o = dualperf(tmp.path(), &["run", "::1", "-p", &port, "-f", "4"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("drop -f"), "{}", stderr(&o));
    // A study against the same server passes the check (one handshake per family of
    // the plan, here IPv6 only) and records its runs.
    let o = dualperf(
        tmp.path(),
        &[
            "study", "::1", "--port", &port, "--runs", "1", "--sizes", "128", "--tests", "tcp-rr",
            "-d", "0.1", "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = store::Store::open_read_only(&tmp.path().join("dualperf.db")).expect("database");
    let runs = s.runs(1).expect("runs of campaign 1");
    assert_eq!(runs.len(), 1, "{runs:?}");
}
