//! `dualperf run -t rrul` from the command line on loopback: the text names every
//! figure with its clock and method, `--json` carries the phases and the derived
//! figures consistently, and what does not apply is refused before any traffic.

use serde_json::Value;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_dualperf");

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("run")
        .args(args)
        .output()
        .expect("dualperf runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn text_output_names_phases_clock_and_method() {
    let o = run(&[
        "-t",
        "rrul",
        "-d",
        "1.5",
        "--idle",
        "0.4",
        "-P",
        "1",
        "--probe-rate",
        "40",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    for needle in [
        "dualperf rrul over IPv4",
        "(embedded server)",
        "client's monotonic clock, probe request sent → response received",
        "    idle    UDP",
        "    idle    TCP",
        "    loaded  UDP",
        "    loaded  TCP",
        "latency added by the load (loaded p50 − idle p50)",
        "upload",
        "download",
        "RPM loaded",
        "draft-ietf-ippm-responsiveness-09",
        "not the same figure as networkQuality's",
        "method: idle probes for 0.4 s, then the load for 1.5 s",
    ] {
        assert!(t.contains(needle), "{needle}:\n{t}");
    }
}

#[test]
fn json_carries_phases_and_derived_figures() {
    let o = run(&[
        "-t",
        "rrul",
        "-f",
        "6",
        "-d",
        "1.5",
        "--idle",
        "0.4",
        "-P",
        "2",
        "--load",
        "download",
        "--probe-rate",
        "40",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["test"], "rrul");
    assert_eq!(doc["spec"]["family"], "6");
    assert_eq!(doc["spec"]["load"], "download");
    assert!(doc["upload"].is_null());
    assert_eq!(doc["download"]["spec"]["streams"], 2);
    assert_eq!(doc["download"]["spec"]["direction"], "reverse");
    let d = &doc["derived"];
    assert!(d["upload_bps"].is_null());
    assert!(d["download_bps"].as_f64().unwrap() > 0.0);
    // The derived figures are the phases' own numbers.
    let p50 = |phase: &str, probe: &str| doc[phase][probe]["rtt"]["p50_ns"].as_f64().unwrap();
    assert_eq!(
        d["added_p50_ns_tcp"].as_f64().unwrap(),
        p50("loaded", "tcp") - p50("idle", "tcp")
    );
    assert_eq!(
        d["added_p50_ns_udp"].as_f64().unwrap(),
        p50("loaded", "udp") - p50("idle", "udp")
    );
    let tm = doc["loaded"]["tcp"]["rtt"]["trimmed_mean_95_ns"]
        .as_f64()
        .unwrap();
    assert!((d["rpm_loaded"].as_f64().unwrap() * tm - 60e9).abs() < 1.0);
    // Probes kept to their grid: 40/s over the loaded window (1.5 s less two 0.3 s ramps).
    let n = doc["loaded"]["tcp"]["transactions"].as_u64().unwrap();
    assert!((1..=38).contains(&n), "{n}");
}

#[test]
fn what_does_not_apply_is_refused_before_any_traffic() {
    for (args, says) in [
        (
            vec!["-t", "rrul", "--peer", "iperf3", "127.0.0.1"],
            "needs a dualperf server",
        ),
        (vec!["-t", "rrul", "-R"], "--reverse/--bidir (use --load)"),
        (vec!["-t", "rrul", "-n", "10"], "--count does not apply"),
        (vec!["-t", "rrul", "-d", "0.5"], "at least 1 s"),
        (
            vec!["-t", "rrul", "--probe-rate", "0"],
            "probe rate must be between 1 and",
        ),
        (
            vec!["-t", "rrul", "-d", "2", "--probe-rate", "2"],
            "fewer than 10 probes",
        ),
        (
            vec!["-t", "tcp-stream", "--probe-rate", "10"],
            "apply to -t rrul only",
        ),
        (
            vec!["-t", "udp-rr", "--load", "upload"],
            "apply to -t rrul only",
        ),
        (
            vec!["-t", "sctp"],
            "use tcp-stream, udp-stream, tcp-rr, udp-rr or rrul",
        ),
    ] {
        let o = run(&args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
}
