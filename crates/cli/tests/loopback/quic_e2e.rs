//! QUIC tests through the real binary on 127.0.0.1 and ::1: every byte sent is
//! received in each direction, request/response counts and percentiles, a server's
//! `--max-duration` holds, a server killed mid-test is an error (not a hang), and a
//! study's QUIC cells reach the report.

use crate::support::engine::*;
use crate::support::server::ServerProc;
use crate::support::{text, wait_with_limit, BIN};
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn quic_stream_receives_every_byte_sent_in_each_direction() {
    let _turn = serial();
    for (fam, _) in families() {
        for dir in [&[][..], &["--reverse"], &["--bidir"]] {
            let mut args = vec!["-t", "quic-stream", "-f", fam, "-d", "0.3", "-P", "2"];
            args.extend_from_slice(dir);
            let v = run_json(&args, &[]);
            let sent = metric(&v, "sent_bytes");
            assert!(sent > 0.0, "{args:?}");
            assert_eq!(sent, metric(&v, "recv_bytes"), "{args:?}");
            assert!(metric(&v, "throughput_bps") > 0.0, "{args:?}");
            each_side_moved_what_the_other_counted(&v, dir.first().copied());
            // The connection's own figures: a handshake, a path MTU at least QUIC's
            // minimum datagram, the congestion controller recorded.
            assert!(metric(&v, "quic_handshake_ns") > 0.0, "{args:?}");
            assert!(metric(&v, "quic_path_mtu_bytes") >= 1200.0, "{args:?}");
            assert_eq!(
                v["client"]["applied"]["quic_congestion"], "cubic",
                "{args:?}"
            );
        }
    }
}

#[test]
fn quic_rr_counts_every_transaction_with_percentiles_in_order() {
    let _turn = serial();
    for (fam, _) in families() {
        let v = run_json(&["-t", "quic-rr", "-f", fam, "-n", "300", "-s", "100"], &[]);
        assert_eq!(metric(&v, "transactions"), 300.0);
        assert_eq!(metric(&v, "sent_bytes"), 30_000.0);
        assert_eq!(metric(&v, "recv_bytes"), 30_000.0);
        let p = |n: &str| metric(&v, n);
        assert!(p("rtt_min_ns") > 0.0);
        assert!(p("rtt_min_ns") <= p("rtt_p50_ns"));
        assert!(p("rtt_p50_ns") <= p("rtt_p90_ns"));
        assert!(p("rtt_p90_ns") <= p("rtt_p99_ns"));
        assert!(p("rtt_p99_ns") <= p("rtt_max_ns"));
        assert!(p("transactions_per_s") > 0.0);
    }
}

#[test]
fn a_server_with_max_duration_1_refuses_a_2_s_quic_test_as_it_does_tcp() {
    let _turn = shared();
    let server = ServerProc::start(BIN, &["--bind", "127.0.0.1", "--max-duration", "1"]);
    let port = server.port().to_string();
    for kind in ["tcp-stream", "quic-stream", "quic-rr"] {
        let out = Command::new(BIN)
            .args(["run", "127.0.0.1", "--port", &port, "-t", kind, "-d", "2"])
            .output()
            .expect("dualperf run");
        assert!(!out.status.success(), "{kind}: {}", text(&out));
        assert!(
            stderr(&out).contains("the server allows tests of at most 1 s (--max-duration)"),
            "{kind}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn a_server_killed_mid_quic_test_is_an_error_not_a_hang() {
    let _turn = shared();
    let server = ServerProc::start(BIN, &["--bind", "127.0.0.1"]);
    let port = server.port().to_string();
    let client = Command::new(BIN)
        .args([
            "run",
            "127.0.0.1",
            "--port",
            &port,
            "-t",
            "quic-stream",
            "-d",
            "20",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn dualperf run");
    // The test is under way once the server has a QUIC peer; then the server goes.
    std::thread::sleep(Duration::from_secs(2));
    let _ = server.stop();
    // Well before the 20 s the test asked for: the control connection's end is news.
    let out = wait_with_limit(client, Duration::from_secs(18));
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("closed the control connection"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_short_quic_study_reaches_the_report() {
    let _turn = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("quic.db").display().to_string();
    let study = Command::new(BIN)
        .args([
            "study",
            "--tests",
            "quic-stream,quic-rr",
            "--sizes",
            "1024",
            "--runs",
            "1",
            "--duration",
            "0.2",
            "--db",
            &db,
        ])
        .output()
        .expect("dualperf study");
    assert!(study.status.success(), "{}", text(&study));
    let report = Command::new(BIN)
        .args(["report", "--db", &db, "--format", "markdown"])
        .output()
        .expect("dualperf report");
    assert!(report.status.success(), "{}", text(&report));
    let md = String::from_utf8_lossy(&report.stdout);
    for view in ["UDP goodput over QUIC", "UDP RTT over QUIC"] {
        assert!(
            md.lines().any(|l| l.contains(view)),
            "no {view} table in:\n{md}"
        );
    }
}

#[test]
fn a_keyed_server_runs_quic_for_its_key_holders_only() {
    let _turn = shared();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key");
    std::fs::write(&key, "0123456789abcdef0123456789abcdef\n").unwrap();
    let key = key.display().to_string();
    let server = ServerProc::start(BIN, &["--bind", "127.0.0.1", "--psk-file", &key]);
    let port = server.port().to_string();
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .args(["run", "127.0.0.1", "--port", &port, "-t", "quic-stream"])
            .args(["-n", "50", "-s", "1000", "--json"])
            .args(extra)
            .output()
            .expect("dualperf run")
    };
    let keyed = run(&["--psk-file", &key]);
    assert!(keyed.status.success(), "{}", text(&keyed));
    let v: serde_json::Value = serde_json::from_slice(&keyed.stdout).unwrap();
    assert_eq!(metric(&v, "sent_bytes"), 50_000.0);
    assert_eq!(metric(&v, "recv_bytes"), 50_000.0);
    let keyless = run(&[]);
    assert!(!keyless.status.success(), "{}", text(&keyless));
    assert!(
        stderr(&keyless).contains("requires a pre-shared key"),
        "{}",
        stderr(&keyless)
    );
}
