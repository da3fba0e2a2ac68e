//! The Windows build (`dualperf.exe`) under Wine, on loopback: every test type over
//! IPv4 and IPv6 with the embedded server; a Windows client against a Linux `dualperf
//! server` and a Linux client against a Windows one, both directions, with exact counts
//! (TCP bytes sent equal bytes received; count-bound UDP exactly N received); a short
//! study and its report. Wine is not Windows: these check that the Windows code paths
//! work and interoperate, never how fast Windows is.
//!
//! Ignored in a plain `cargo test` (they need the exe and wine64); `scripts/wine/test`
//! builds the exe, puts the test-only bcryptprimitives.dll stub beside it (Wine 8 lacks
//! that DLL), prepares a Wine prefix, sets DUALPERF_WINDOWS_EXE and runs them with
//! `--ignored`. Built with the other test programs, so that stage compiles nothing for
//! Linux.

mod support;

use std::process::{Command, Output};
use support::server::ServerProc;
use support::{dualperf, metric, serial};

fn exe() -> String {
    std::env::var("DUALPERF_WINDOWS_EXE")
        .expect("DUALPERF_WINDOWS_EXE names dualperf.exe (run scripts/wine/test)")
}

fn wine_bin() -> String {
    std::env::var("DUALPERF_WINE").unwrap_or_else(|_| "/usr/lib/wine/wine64".to_string())
}

/// `wine64 dualperf.exe` with Wine's own chatter off.
fn windows() -> Command {
    let mut c = Command::new(wine_bin());
    c.arg(exe()).env("WINEDEBUG", "-all");
    c
}

/// The Linux build (runs under Wine share two cores with the Wine server: each test
/// holds `serial()`, one measurement at a time).
fn linux() -> Command {
    dualperf()
}

fn ok(o: Output, what: &str) -> Output {
    assert!(
        o.status.success(),
        "{what} failed ({}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// `run ARGS --json` through `cmd`; the parsed result.
fn run_json(mut cmd: Command, args: &[&str]) -> serde_json::Value {
    let o = cmd
        .arg("run")
        .args(args)
        .arg("--json")
        .output()
        .expect("spawn");
    let o = ok(o, &format!("run {args:?}"));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "--json prints JSON ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}

/// One side's applied setting (`side` = "client" or "server").
fn applied(v: &serde_json::Value, side: &str, key: &str) -> String {
    v[side]["applied"][key]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The OS family a side recorded (`side` = "client_info" or "server_info").
fn os_of(v: &serde_json::Value, side: &str) -> String {
    v[side]["os.family"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// TCP: every byte sent arrives. UDP: exactly `n` datagrams sent and received.
fn check_exact(v: &serde_json::Value, test: &str, n: u64, what: &str) {
    match test {
        "tcp-stream" => {
            let sent = metric(v, "sent_bytes");
            assert!(sent > 0.0, "{what}");
            assert_eq!(sent, metric(v, "recv_bytes"), "{what}");
        }
        "udp-stream" => {
            assert_eq!(metric(v, "sent_packets"), n as f64, "{what}");
            assert_eq!(metric(v, "recv_packets"), n as f64, "{what}");
            assert_eq!(metric(v, "lost_packets"), 0.0, "{what}");
        }
        _ => {
            assert_eq!(metric(v, "transactions"), n as f64, "{what}");
            let (min, p50, max) = (
                metric(v, "rtt_min_ns"),
                metric(v, "rtt_p50_ns"),
                metric(v, "rtt_max_ns"),
            );
            assert!(
                0.0 < min && min <= p50 && p50 <= max,
                "{what}: {min} {p50} {max}"
            );
        }
    }
}

/// Count-bound arguments for one test: UDP paced slowly enough for Wine's
/// one-datagram-per-call path to deliver every datagram.
fn bounded(test: &'static str, n: &'static str) -> Vec<&'static str> {
    let mut a = vec!["-t", test, "-s", "256", "-n", n];
    if test == "udp-stream" {
        a.extend(["-b", "2kpps", "--rcvbuf", "4M"]);
    }
    a
}

#[test]
#[ignore = "needs the Windows build under Wine: scripts/wine/test runs it"]
fn the_windows_build_runs_every_test_over_both_families_with_the_embedded_server() {
    let _turn = serial();
    for fam in ["4", "6"] {
        for test in ["tcp-stream", "udp-stream", "tcp-rr", "udp-rr"] {
            let mut args = bounded(test, "400");
            args.extend(["-f", fam]);
            let v = run_json(windows(), &args);
            check_exact(&v, test, 400, &format!("windows embedded {test} -f {fam}"));
            assert_eq!(os_of(&v, "client_info"), "windows");
            if test == "udp-stream" {
                for side in ["client", "server"] {
                    assert_eq!(applied(&v, side, "udp_datapath"), "per-call");
                    assert_eq!(
                        applied(&v, side, "udp_datapath_calls"),
                        "windows:send/recvfrom"
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs the Windows build under Wine: scripts/wine/test runs it"]
fn a_windows_client_and_a_linux_server_interoperate_both_ways() {
    let _turn = serial();
    let srv = ServerProc::start(support::BIN, &["--bind", "127.0.0.1", "--bind", "::1"]);
    for host in ["127.0.0.1", "::1"] {
        let port = srv.port_for(host).to_string();
        for test in ["tcp-stream", "udp-stream", "tcp-rr", "udp-rr"] {
            for dir in [&[][..], &["--reverse"]] {
                if test.ends_with("-rr") && !dir.is_empty() {
                    continue; // request/response has no direction
                }
                let mut args = vec![host, "-p", &port];
                args.extend(bounded(test, "500"));
                args.extend_from_slice(dir);
                let v = run_json(windows(), &args);
                check_exact(&v, test, 500, &format!("windows → linux {args:?}"));
                assert_eq!(os_of(&v, "client_info"), "windows");
                assert_eq!(os_of(&v, "server_info"), "linux");
            }
        }
    }
}

#[test]
#[ignore = "needs the Windows build under Wine: scripts/wine/test runs it"]
fn a_linux_client_and_a_windows_server_interoperate_both_ways() {
    let _turn = serial();
    let srv = ServerProc::start_command(windows(), 0, &["--bind", "127.0.0.1", "--bind", "::1"]);
    for host in ["127.0.0.1", "::1"] {
        let port = srv.port_for(host).to_string();
        for test in ["tcp-stream", "udp-stream", "tcp-rr", "udp-rr"] {
            for dir in [&[][..], &["--reverse"]] {
                if test.ends_with("-rr") && !dir.is_empty() {
                    continue; // request/response has no direction
                }
                let mut args = vec![host, "-p", &port];
                args.extend(bounded(test, "500"));
                args.extend_from_slice(dir);
                let v = run_json(linux(), &args);
                check_exact(&v, test, 500, &format!("linux → windows {args:?}"));
                assert_eq!(os_of(&v, "client_info"), "linux");
                assert_eq!(os_of(&v, "server_info"), "windows", "{args:?}");
            }
        }
    }
}

#[test]
#[ignore = "needs the Windows build under Wine: scripts/wine/test runs it"]
fn an_option_windows_cannot_apply_is_refused_naming_windows() {
    let _turn = serial();
    for (args, what) in [
        (&["-f", "6", "--flowlabel", "0x12345"][..], "flow label"),
        (&["--tos", "0x10"][..], "TOS"),
        (&["--congestion", "cubic"][..], "congestion control"),
    ] {
        let o = windows()
            .arg("run")
            .args(["-n", "10"])
            .args(args)
            .output()
            .expect("spawn");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} was accepted");
        assert!(err.contains("Windows"), "{what}: {err}");
    }
}

#[test]
#[ignore = "needs the Windows build under Wine: scripts/wine/test runs it"]
fn a_short_study_and_its_report_under_wine() {
    let _turn = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = format!("Z:{}", dir.path().join("wine.db").display());
    let out = format!("Z:{}", dir.path().join("report").display());
    ok(
        windows()
            .args([
                "study",
                "--tests",
                "tcp-stream,udp-rr",
                "--sizes",
                "128",
                "--runs",
                "2",
                "--duration",
                "0.2",
                "--label",
                "wine",
                "--db",
                &db,
                "--quiet",
            ])
            .output()
            .expect("spawn"),
        "study under wine",
    );
    let shown = ok(
        windows()
            .args(["show", "--db", &db])
            .output()
            .expect("spawn"),
        "show",
    );
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("wine"), "{text}");
    ok(
        windows()
            .args(["report", "--db", &db, "--out", &out])
            .output()
            .expect("spawn"),
        "report under wine",
    );
    let html = std::fs::read_to_string(dir.path().join("report").join("report.html"))
        .expect("the report wrote report.html");
    assert!(html.contains("IPv6") && html.contains("IPv4"));
    // The Linux build reads the database the Windows build wrote.
    let o = ok(
        linux()
            .args(["export", "--db"])
            .arg(dir.path().join("wine.db"))
            .args(["--format", "csv"])
            .output()
            .expect("spawn"),
        "export on linux",
    );
    let mut r = csv::Reader::from_reader(o.stdout.as_slice());
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|c| c == name).unwrap();
    let (run, os, status) = (col("run_id"), col("client_os"), col("status"));
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    let runs: std::collections::BTreeSet<&str> = rows.iter().map(|x| &x[run]).collect();
    assert_eq!(runs.len(), 2 * 2 * 2, "2 families x 2 tests x 2 runs");
    assert!(
        rows.iter().all(|x| &x[status] == "ok"),
        "every run measured"
    );
    assert!(
        rows.iter().all(|x| x[os].contains("Windows")),
        "the client OS recorded is Windows: {:?}",
        rows.first().map(|x| x[os].to_string())
    );
}
