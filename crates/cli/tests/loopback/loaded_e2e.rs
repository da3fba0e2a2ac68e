//! `dualperf run -t rrul` from the command line on loopback: the text names every
//! figure with its clock and method, `--json` carries the phases and the derived
//! figures consistently, and what does not apply is refused before any traffic.

use crate::support::shared;
use crate::support::{stderr, BIN};
use serde_json::Value;
use std::process::{Command, Output};

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

#[test]
fn text_output_names_phases_clock_and_method() {
    let _turn = shared();
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
    let _turn = shared();
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
    let _turn = shared();
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
            "(--probe-rate) 0 is out of range: give between 1 and",
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
            "use tcp-stream, udp-stream, tcp-rr, udp-rr, rrul, tcp-crr, pmtu, frag, ext-headers, quic-stream or quic-rr",
        ),
    ] {
        let o = run(&args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
}

/// `dualperf study --tests rrul` on loopback: every run stores the loaded-latency
/// metrics (consistent with each other) and its parts' samples on one timeline, and
/// the report draws the IPv4-vs-IPv6 views, the CDFs and the runs over time.
#[test]
fn a_study_of_rrul_is_stored_compared_and_drawn() {
    let _turn = shared();
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("rrul.db");
    let db = db.to_str().unwrap();
    let o = Command::new(BIN)
        .args([
            "study",
            "--tests",
            "rrul",
            "--sizes",
            "1408",
            "--runs",
            "2",
            "--load-duration",
            "1",
            "--idle",
            "0.3",
            "--probe-rate",
            "40",
            "--load-streams",
            "2",
            "--db",
            db,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("RTT p50 of TCP probes under load"),
        "{}",
        stdout(&o)
    );
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let c = &s.campaigns().unwrap()[0];
    let spec = study::StudySpec::from_json(&c.spec_json).unwrap();
    let plan = spec.rrul.expect("the rrul plan is recorded");
    assert_eq!(plan.opts.streams, 2);
    assert_eq!(plan.duration_ns, 1_000_000_000);
    let runs = s.runs(c.id).unwrap();
    assert_eq!(runs.len(), 4, "2 runs × IPv4 and IPv6");
    for r in &runs {
        assert!(r.status.is_ok(), "{:?}", r.status);
        let get = |n: &str| r.metrics.get(n).copied().unwrap_or(f64::NAN);
        // What holds whatever the load: every phase and probe type records how many
        // probes it sent and how many were answered (a CPU-starved loaded phase may
        // answer none: that is a measured outcome, 0 of N, not a missing number); a
        // median exists exactly when something was answered, and is consistent with the
        // ladder and with the added latency.
        for p in ["udp", "tcp"] {
            for phase in ["idle", "loaded"] {
                let sent = get(&format!("{phase}_{p}_probes_sent_count"));
                let answered = get(&format!("{phase}_{p}_probes_answered_count"));
                assert!(
                    sent >= answered && answered >= 0.0,
                    "{phase} {p}: {answered} of {sent}"
                );
                let p50 = r.metrics.get(&format!("{phase}_{p}_rtt_p50_ns")).copied();
                assert_eq!(
                    p50.is_some(),
                    answered > 0.0,
                    "{phase} {p}: {p50:?}, {answered} answered"
                );
                if let Some(p50) = p50 {
                    assert!(p50 > 0.0, "{phase} {p}");
                    let ladder: Vec<f64> = wire::metrics::RTT_LADDER_PCT
                        .iter()
                        .map(|&q| {
                            get(&wire::metrics::rtt_ladder_name(
                                phase == "loaded",
                                p == "udp",
                                q,
                            ))
                        })
                        .collect();
                    assert!(ladder.windows(2).all(|w| w[0] <= w[1]), "{ladder:?}");
                    assert_eq!(ladder[6], p50, "the 50 % rung is the median");
                }
            }
            if p == "udp" {
                for phase in ["idle", "loaded"] {
                    let (sent, answered, lost) = (
                        get(&format!("{phase}_udp_probes_sent_count")),
                        get(&format!("{phase}_udp_probes_answered_count")),
                        get(&format!("{phase}_udp_probe_timeouts")),
                    );
                    // A UDP probe is answered or times out; the last may be cut by the end.
                    assert!(
                        answered + lost <= sent && sent <= answered + lost + 1.0,
                        "{phase}: {sent} {answered} {lost}"
                    );
                }
            }
            let (idle, loaded) = (
                r.metrics.get(&format!("idle_{p}_rtt_p50_ns")),
                r.metrics.get(&format!("loaded_{p}_rtt_p50_ns")),
            );
            let added = r.metrics.get(&format!("added_{p}_rtt_p50_ns"));
            match (idle, loaded) {
                (Some(i), Some(l)) => assert_eq!(added, Some(&(l - i)), "{p}"),
                _ => assert_eq!(added, None, "{p}: no added latency without both medians"),
            }
        }
        assert!(get(wire::metrics::UPLOAD_BPS) > 0.0 && get(wire::metrics::DOWNLOAD_BPS) > 0.0);
        // Samples: both phases of both probe types, then the load; the idle probes'
        // samples all end before the first load sample starts.
        let samples: Vec<report::LoadedSample> = s
            .samples(r.id)
            .unwrap()
            .iter()
            .filter_map(|x| report::LoadedSample::from_metrics(x.start_ns, x.end_ns, &x.metrics))
            .collect();
        let load_from = samples
            .iter()
            .filter(|x| x.upload_sent_bytes.is_some() || x.download_recv_bytes.is_some())
            .map(|x| x.start_ns)
            .min()
            .expect("load samples");
        let idle_to = samples
            .iter()
            .filter(|x| x.tcp_rtt.is_some() && !x.loaded_phase)
            .map(|x| x.end_ns)
            .max()
            .expect("idle probe samples");
        assert!(
            idle_to <= load_from,
            "idle ends {idle_to}, load starts {load_from}"
        );
        // The interval samples of each phase count the same TCP probes as its total.
        let probes = |loaded: bool| -> f64 {
            samples
                .iter()
                .filter(|x| x.loaded_phase == loaded)
                .filter_map(|x| x.tcp_rtt.map(|t| t.1))
                .sum()
        };
        assert_eq!(probes(false), get("idle_tcp_probes_answered_count"));
        assert_eq!(probes(true), get("loaded_tcp_probes_answered_count"));
    }
    let out = tmp.path().join("report");
    let rep = Command::new(BIN)
        .args(["report", "--db", db, "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(rep.status.success(), "{}", stderr(&rep));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for id in [
        "id=\"under-load\"",
        "id=\"v-tcp-rtt-under-load-p50-of-probes\"",
        "id=\"fig-rrul-1408-rtt-cdf-tcp\"",
        "id=\"fig-rrul-1408-rtt-udp-timeseries\"",
        "id=\"fig-rrul-1408-upload-timeseries\"",
    ] {
        assert!(html.contains(id), "{id} missing");
    }
}

#[test]
fn a_study_of_rrul_against_iperf3_is_refused_with_the_reason() {
    let _turn = shared();
    let o = Command::new(BIN)
        .args([
            "study",
            "--tests",
            "rrul",
            "--peer",
            "iperf3",
            "127.0.0.1",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot run rrul"), "{}", stderr(&o));
}
