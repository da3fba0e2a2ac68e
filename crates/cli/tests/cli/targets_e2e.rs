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

/// The client metadata a study recorded for campaign 1 of `db`.
fn client_metadata(db: &Path) -> std::collections::BTreeMap<String, String> {
    let s = store::Store::open_read_only(db).expect("database");
    let c = s.campaign(1).expect("campaign 1");
    c.hosts
        .into_iter()
        .find(|h| h.role == "client")
        .map(|h| h.metadata)
        .unwrap_or_default()
}

#[test]
fn localhost_is_both_loopback_addresses_for_server_dry_run_and_study() {
    if !crate::support::engine::has_ipv6() {
        eprintln!("skipped: ::1 is not available here");
        return;
    }
    // One port in both families (`--bind localhost` is 127.0.0.1 and ::1), whatever
    // /etc/hosts says: a study of `localhost` tests both and records where each went.
    let port = crate::support::free_port();
    let _srv = server_proc::ServerProc::start_on(BIN, port, &["--bind", "localhost"]);
    let port = port.to_string();
    let tmp = tempfile::tempdir().expect("tempdir");
    let o = dualperf(tmp.path(), &["study", "localhost", "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(
        plan.contains("  IPv4: localhost = 127.0.0.1\n  IPv6: localhost = ::1\n"),
        "{plan}"
    );
    let study = [
        "--port", &port, "--runs", "1", "--sizes", "128", "--tests", "tcp-rr", "-d", "0.1",
        "--quiet",
    ];
    let mut args = vec!["study", "localhost"];
    args.extend(study);
    let o = dualperf(tmp.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let db = tmp.path().join("dualperf.db");
    let s = store::Store::open_read_only(&db).expect("database");
    assert_eq!(s.runs(1).expect("runs").len(), 2, "one run per family");
    let md = client_metadata(&db);
    assert_eq!(md["study.target_ipv4"], "localhost");
    assert_eq!(md["study.target_ipv6"], "localhost");
    // One address per family, recorded with the campaign.
    let mut args = vec![
        "study",
        "--host4",
        "127.0.0.1",
        "--host6",
        "::1",
        "--db",
        "two.db",
    ];
    args.extend(study);
    let o = dualperf(tmp.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let db = tmp.path().join("two.db");
    let s = store::Store::open_read_only(&db).expect("database");
    assert_eq!(s.runs(1).expect("runs").len(), 2, "one run per family");
    let md = client_metadata(&db);
    assert_eq!(md["study.target_ipv4"], "127.0.0.1");
    assert_eq!(md["study.target_ipv6"], "::1");
}

#[test]
fn a_dry_run_says_why_a_family_cannot_run_and_fails() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // A host given for IPv6 that has only an IPv4 address: the dry run names the family
    // and the fix, and does not pretend the study can start.
    let o = dualperf(
        tmp.path(),
        &[
            "study",
            "--host4",
            "127.0.0.1",
            "--host6",
            "127.0.0.1",
            "--dry-run",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(plan.contains("  IPv4: 127.0.0.1\n"), "{plan}");
    assert!(
        plan.contains("  IPv6: cannot run: host 127.0.0.1 has no IPv6 address (AAAA); give its IPv6 address with --host6"),
        "{plan}"
    );
    assert!(
        stderr(&o).contains("the study cannot start as given: IPv6"),
        "{}",
        stderr(&o)
    );
    // A key is for a remote server: without HOST or --host4/--host6 it is refused.
    let o = dualperf(tmp.path(), &["run", "--psk-file", "k.key", "-n", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--psk-file is the key of a remote"),
        "{}",
        stderr(&o)
    );
    // --host6 alone makes the study IPv6 only.
    let o = dualperf(tmp.path(), &["study", "--host6", "::1", "--dry-run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan = String::from_utf8_lossy(&o.stdout);
    assert!(
        plan.contains("IPv6 tcp-stream") && !plan.contains("IPv4 tcp-stream"),
        "{plan}"
    );
    assert!(!files_in(tmp.path()).iter().any(|f| f.ends_with(".db")));
}
