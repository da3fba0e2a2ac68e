//! `dualperf study HOST --peer iperf3` against Debian's `iperf3 -s` (spawned here on a
//! free port): short studies on 127.0.0.1 and ::1 fill the database with every run;
//! a server kept busy by another iperf3 client is waited out and counted, not recorded;
//! RR tests are refused with the reason. Skips when /usr/bin/iperf3 is missing outside CI.

use crate::support::shared;
use crate::support::study::*;
use crate::support::{free_port, iperf3_or_skip, spawn_iperf3_server, IPERF3};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use wire::metrics as m;
use wire::spec::{Family, TestKind};

/// `iperf3 -s -p PORT --logfile LOG`, killed on drop.
struct Iperf3Server(Child, tempfile::NamedTempFile);

impl Iperf3Server {
    fn start(port: u16) -> Iperf3Server {
        let log = tempfile::NamedTempFile::new().expect("a log file");
        let path = log.path().display().to_string();
        // Listening when spawned: checked without a probe connection, which iperf3
        // would take for a client.
        let child = spawn_iperf3_server(port, &["--logfile", &path], false);
        Iperf3Server(child, log)
    }

    /// What it said so far (and whether it is still running), for a failure message.
    fn said(&mut self) -> String {
        let running = matches!(self.0.try_wait(), Ok(None));
        let log = std::fs::read_to_string(self.1.path()).unwrap_or_default();
        format!("iperf3 -s running: {running}; its log:\n{log}")
    }
}

impl Drop for Iperf3Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn study_against_iperf3_on_both_loopbacks_fills_the_database() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let port = free_port();
    let mut server = Iperf3Server::start(port);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("iperf3.db");
    let dbs = db.display().to_string();
    let ports = port.to_string();
    for (campaign, host, fam) in [(1, "127.0.0.1", "4"), (2, "::1", "6")] {
        // No --tests: with an iperf3 peer the default tests are the stream tests.
        let o = run(
            &[
                "study",
                host,
                "--peer",
                "iperf3",
                "--port",
                &ports,
                "--families",
                fam,
                "--sizes",
                "128,1408",
                "--runs",
                "2",
                "--duration",
                "0.3",
                "--db",
                &dbs,
            ],
            false,
        );
        assert!(
            o.status.success(),
            "{host}: {}\n{}",
            text(&o),
            server.said()
        );
        let s = store::Store::open_read_only(&db).unwrap();
        assert!(s.campaign(campaign).unwrap().finished);
        assert_eq!(s.cells(campaign).unwrap().len(), 4, "2 tests x 2 sizes");
        let runs = s.runs(campaign).unwrap();
        let failed: Vec<_> = runs.iter().filter(|r| !r.status.is_ok()).collect();
        assert_eq!(
            measured_slots(&db, campaign).len(),
            8,
            "{host}: failed attempts {failed:#?}\n{}",
            text(&o)
        );
        let want_family = if fam == "4" { Family::V4 } else { Family::V6 };
        for r in runs.iter().filter(|r| r.status.is_ok()) {
            assert_eq!(r.family, want_family);
            let bps = r.metrics.get(m::THROUGHPUT_BPS).copied().unwrap_or(0.0);
            assert!(bps > 0.0, "{host} {} {} B: {bps}", r.kind, r.payload_bytes);
            if r.kind == TestKind::UdpStream {
                for name in [m::LOSS_PCT, m::JITTER_RFC3550_NS] {
                    assert!(
                        r.metrics.get(name).is_some_and(|v| *v >= 0.0),
                        "{host} UDP {} B has no {name}: {:?}",
                        r.payload_bytes,
                        r.metrics
                    );
                }
            }
        }
        let client = host_md(&db, campaign, "client");
        assert_eq!(client["study.peer"], "iperf3");
        assert_eq!(client["study.target"], format!("{host} {port}"));
        assert_eq!(host_md(&db, campaign, "server")["peer.software"], "iperf3");
    }
}

#[test]
fn busy_iperf3_server_is_waited_out_and_counted_not_recorded() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let port = free_port();
    let _server = Iperf3Server::start(port);
    // Another client keeps the server busy for about 2 s.
    let mut other = Command::new(IPERF3)
        .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3 -c starts");
    std::thread::sleep(Duration::from_millis(400));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("busy.db");
    let dbs = db.display().to_string();
    let o = run(
        &[
            "study",
            "127.0.0.1",
            "--peer",
            "iperf3",
            "--port",
            &port.to_string(),
            "--families",
            "4",
            "--tests",
            "tcp-stream",
            "--sizes",
            "1024",
            "--runs",
            "1",
            "--duration",
            "0.3",
            "--db",
            &dbs,
        ],
        false,
    );
    let _ = other.wait();
    assert!(o.status.success(), "{}", text(&o));
    let s = store::Store::open_read_only(&db).unwrap();
    let runs = s.runs(1).unwrap();
    assert_eq!(runs.len(), 1, "busy answers are not runs: {runs:?}");
    assert!(runs[0].status.is_ok());
    let client = host_md(&db, 1, "client");
    let answers: u64 = client["study.iperf3_busy_answers"].parse().unwrap();
    let waited_s: f64 = client["study.iperf3_busy_wait_s"].parse().unwrap();
    assert!(answers >= 1, "{client:?}");
    // 0.2 + 0.4 + 0.8 + … : at least the first step per answer after the first.
    assert!(waited_s >= 0.2 * answers as f64 - 1e-9, "{client:?}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("answered \"busy\""),
        "{}",
        text(&o)
    );
}

#[test]
fn rr_tests_are_refused_with_an_iperf3_peer() {
    let _turn = shared();
    let dir = tempfile::tempdir().unwrap();
    let dbs = dir.path().join("rr.db").display().to_string();
    let o = run(
        &[
            "study",
            "127.0.0.1",
            "--peer",
            "iperf3",
            "--port",
            "9",
            "--tests",
            "tcp-stream,udp-rr",
            "--db",
            &dbs,
        ],
        false,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("request/response"), "{err}");
    assert!(err.contains("udp-rr"), "{err}");
    assert!(err.contains("--tests tcp-stream,udp-stream"), "{err}");
    // And without a HOST there is nothing to test against.
    let o = run(&["study", "--peer", "iperf3", "--db", &dbs], false);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("needs the HOST"), "{}", text(&o));
}

#[test]
fn study_authenticates_to_an_iperf3_server_that_requires_it() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (private, public, users) = (path("private.pem"), path("public.pem"), path("users.csv"));
    for args in [
        vec!["genrsa", "-out", &private, "2048"],
        vec!["rsa", "-in", &private, "-pubout", "-out", &public],
    ] {
        let o = Command::new("openssl")
            .args(&args)
            .output()
            .expect("these tests need openssl (apt-get install openssl)");
        assert!(o.status.success(), "openssl {args:?}: {}", text(&o));
    }
    let hash = iperf3::auth::password_hash("peach", "t0adst00l");
    std::fs::write(&users, format!("peach,{hash}\n")).unwrap();
    let port = free_port();
    let mut server = spawn_iperf3_server(
        port,
        &[
            "--rsa-private-key-path",
            &private,
            "--authorized-users-path",
            &users,
        ],
        false,
    );
    let db = path("auth.db");
    let study = |password: &str| {
        Command::new(crate::support::BIN)
            .args([
                "study",
                "127.0.0.1",
                "--peer",
                "iperf3",
                "--port",
                &port.to_string(),
            ])
            .args([
                "--families",
                "4",
                "--tests",
                "tcp-stream",
                "--sizes",
                "1408",
            ])
            .args(["--runs", "2", "--duration", "0.3", "--db", &db])
            .args([
                "--iperf3-username",
                "peach",
                "--iperf3-rsa-public-key",
                &public,
            ])
            .env("IPERF3_PASSWORD", password)
            .stdin(Stdio::null())
            .output()
            .expect("the dualperf binary runs")
    };
    let good = study("t0adst00l");
    let wrong = study("bowser");
    let _ = server.kill();
    let _ = server.wait();
    assert!(good.status.success(), "{}", text(&good));
    assert_eq!(
        measured_slots(Path::new(&db), 1).len(),
        2,
        "{}",
        text(&good)
    );
    assert!(
        measured_slots(Path::new(&db), 2).is_empty(),
        "a wrong password measured nothing: {}",
        text(&wrong)
    );
    let runs = store::Store::open_read_only(Path::new(&db))
        .unwrap()
        .runs(2)
        .unwrap();
    assert!(!runs.is_empty(), "{}", text(&wrong));
    for r in &runs {
        assert!(
            matches!(&r.status, store::RunStatus::Failed { reason } if reason.contains("test authorization failed")),
            "{r:?}"
        );
    }
}
