//! `dualperf run --lab`: one test in a temporary p2p or client-server lab. UDP goodput
//! on a 50 Mbit/s tbf p2p link matches the header-overhead model; the lab metadata is in
//! the output; afterwards no namespace, root-namespace veth or lab server process of
//! that run is left — after a normal end, a failed test and a Ctrl-C. Needs root (skips
//! with a reason outside CI).

use crate::support::shared;
use crate::support::{metric, text, BIN};
use serde_json::Value;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::lab::{assert_nothing_left, leftovers};
use crate::support::labs_or_skip;

fn spawn_run(args: &[&str]) -> Child {
    Command::new(BIN)
        .arg("run")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the dualperf binary starts")
}

/// Runs `dualperf run ARGS` to its end; returns its pid (lab names carry it) and output.
fn run(args: &[&str]) -> (u32, Output) {
    let child = spawn_run(args);
    let pid = child.id();
    (
        pid,
        child.wait_with_output().expect("dualperf run finishes"),
    )
}

#[test]
fn p2p_udp_goodput_matches_the_tbf_model_and_nothing_is_left() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    // IPv4 over Ethernet as tbf counts it: 1408 + 8 UDP + 20 IP + 14 Ethernet = 1450 B.
    let model_bps: f64 = 50e6 * 1408.0 / 1450.0;
    assert!((model_bps - 48.55e6).abs() < 0.01e6, "{model_bps}");
    // Best of three (the attempt closest to the model counts): on a loaded 2-core
    // machine one 1 s run can be starved (measured -8.6% with a busy loop on one core);
    // an undisturbed run is within 1.1% (the 64 KiB tbf burst). Every attempt must
    // succeed and leave nothing behind.
    let mut best: Option<(f64, Value)> = None;
    for _ in 0..3 {
        let (pid, o) = run(&[
            "--lab",
            "p2p",
            "-t",
            "udp-stream",
            "-s",
            "1408",
            "-d",
            "1",
            "--lab-rate",
            "50mbit",
            // A receiver descheduled on a loaded machine reads late instead of dropping.
            "--rcvbuf",
            "4M",
            "--json",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        assert_nothing_left(pid);
        let doc: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
        let goodput_bps = metric(&doc, "throughput_bps");
        let err = goodput_bps / model_bps - 1.0;
        eprintln!(
            "p2p udp 1408 B at 50mbit: goodput {:.3} Mbit/s, model {:.3}, error {:+.2} %",
            goodput_bps / 1e6,
            model_bps / 1e6,
            err * 100.0
        );
        if best.as_ref().is_none_or(|(e, _)| err.abs() < e.abs()) {
            best = Some((err, doc));
        }
        if err.abs() < 0.02 {
            break;
        }
    }
    let Some((err, doc)) = best else {
        unreachable!("three attempts ran")
    };
    assert!(
        err.abs() < 0.02,
        "goodput {:+.2} % off the model {model_bps}",
        err * 100.0
    );
    let lab = &doc["lab"];
    assert_eq!(lab["lab.topology"], "p2p", "{doc}");
    assert_eq!(lab["lab.rate_bps"], "50000000", "{doc}");
    let server_v4 = lab["lab.server_addr_v4"].as_str().expect("server address");
    assert!(
        doc.to_string().contains(server_v4),
        "the result names the lab server"
    );
}

#[test]
fn client_server_tcp_over_ipv6_goes_through_the_router_and_nothing_is_left() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let (pid, o) = run(&[
        "--lab",
        "client-server",
        "--lab-mtu",
        "1400",
        "-t",
        "tcp-stream",
        "-f",
        "6",
        "-d",
        "0.5",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("lab.topology"), "{out}");
    assert!(out.contains("client-server"), "{out}");
    assert!(
        out.contains("lab.mtu_bytes                      1400"),
        "{out}"
    );
    assert!(out.contains("(the lab was removed)"), "{out}");
    // The server address is the lab's IPv6 ULA, not loopback.
    assert!(out.contains("to [fd00:"), "{out}");
    assert_nothing_left(pid);
}

#[test]
fn a_failing_test_still_removes_the_lab_and_its_server() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    // A protocol version no server speaks: the lab and server start, the test fails.
    let (pid, o) = run(&[
        "--lab",
        "p2p",
        "-t",
        "tcp-stream",
        "-d",
        "0.2",
        "--protocol-version",
        "999",
    ]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("dualperf: error:"), "{}", text(&o));
    assert_nothing_left(pid);
}

#[test]
fn ctrl_c_during_the_test_removes_the_lab_and_its_server() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let mut child = spawn_run(&["--lab", "p2p", "-t", "udp-stream", "-d", "10", "-b", "20M"]);
    let pid = child.id();
    // Wait until the lab's server runs (the test is under way), then interrupt.
    let mark = format!("DUALPERF_LAB=tmp{pid}-");
    let t0 = Instant::now();
    while !leftovers(pid).iter().any(|l| l.starts_with("lab server")) {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "no lab server ({mark}) appeared"
        );
        if let Ok(Some(s)) = child.try_wait() {
            panic!("dualperf run ended early: {s:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    let killed = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let t1 = Instant::now();
    let o = child.wait_with_output().expect("dualperf run ends");
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(
        t1.elapsed() < Duration::from_secs(5),
        "stopping took {:?}",
        t1.elapsed()
    );
    assert_nothing_left(pid);
}

#[test]
fn lab_flags_need_lab_and_exclude_a_host() {
    let _turn = shared();
    for args in [
        &["--lab-rate", "50mbit"][..],
        &["127.0.0.1", "--lab", "p2p"][..],
        &["--lab", "ring"][..],
        &["--lab", "p2p", "--lab-rate", "50mbps"][..],
        &["--lab", "p2p", "--peer", "iperf3"][..],
    ] {
        let (pid, o) = run(args);
        assert!(!o.status.success(), "{args:?} accepted: {}", text(&o));
        assert!(!o.stderr.is_empty(), "{args:?}: no message");
        assert_nothing_left(pid);
    }
}

/// A Poisson stream through an unshaped p2p lab (exponential gaps, mean 20 µs, 100 000
/// datagrams) keeps its target mean rate within 1 %, as on loopback (traffic_e2e):
/// the sender's schedule does not depend on the path. Best of three, as there.
#[test]
fn a_poisson_stream_keeps_its_mean_rate_in_a_lab() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let (pid, o) = run(&[
            "--lab",
            "p2p",
            "-t",
            "udp-stream",
            "-n",
            "100000",
            "--idt",
            "exp:20us",
            "--seed",
            "11",
            "-s",
            "64",
            "--rcvbuf",
            "4M",
            "--json",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        assert_nothing_left(pid);
        let doc: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
        assert_eq!(metric(&doc, "sent_packets"), 100_000.0);
        assert!(metric(&doc, "recv_packets") > 0.0);
        let send_s = doc["client"]["send_elapsed_ns"].as_f64().unwrap() / 1e9;
        let err = 99_999.0 / send_s / 50_000.0 - 1.0;
        eprintln!(
            "lab Poisson 50 kpps: achieved {:+.3} % off the target",
            err * 100.0
        );
        best = best.min(err.abs());
        if best < 0.01 {
            break;
        }
    }
    assert!(best < 0.01, "achieved mean rate {:.2} % off", best * 100.0);
}
