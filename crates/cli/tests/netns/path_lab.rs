//! Path health through a routed lab (`dualperf run --lab routed --lab-path-mtu N
//! --lab-drop WHAT`): pmtu finds the path MTU to the byte and names the router that
//! signalled it, and with Packet Too Big dropped reports a black hole instead of a
//! clean MTU. Every lab is removed at the end (checked). Needs root (skips with a reason
//! outside CI).

use crate::support::lab::assert_nothing_left;
use crate::support::{labs_or_skip, metric, shared, text, BIN};
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The router's addresses on the client's link: who sends Packet Too Big.
const ROUTER: [(&str, &str); 2] = [("4", "10.231.1.1"), ("6", "fd00:231:1::1")];

/// Runs `dualperf ARGS` (which builds a temporary lab) to its end and checks that it
/// left nothing behind; returns its output and how long it took.
fn run_lab(args: &[&str]) -> (Output, Duration) {
    let t0 = Instant::now();
    let child = Command::new(BIN)
        .args(args)
        .env_remove("DUALPERF_STUDY_FAKE")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the dualperf binary starts");
    let pid = child.id();
    let o = child.wait_with_output().expect("dualperf finishes");
    let took = t0.elapsed();
    assert_nothing_left(pid);
    (o, took)
}

/// `dualperf run --lab routed ARGS --json`: the parsed result of a successful run.
fn run_json(args: &[&str]) -> Value {
    let mut all = vec!["run", "--lab", "routed"];
    all.extend(args);
    all.push("--json");
    let (o, _) = run_lab(&all);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

/// A pmtu run over a path of MTU 1400. Each probe waits up to 1 s for its
/// acknowledgement (a loaded machine does not turn a slow answer into a lost size) and
/// the test may take 30 s (a black hole costs 3 tries of each vanished size).
fn pmtu(family: &str, drops: &[&str]) -> Value {
    let mut args = vec![
        "--lab-path-mtu",
        "1400",
        "-t",
        "pmtu",
        "-f",
        family,
        "--rr-timeout-ms",
        "1000",
        "-d",
        "30",
    ];
    for d in drops {
        args.extend(["--lab-drop", d]);
    }
    run_json(&args)
}

/// The path MTU, the kernel's, Packet Too Big received and black hole, as `want`, and
/// the verdict in words.
fn check_pmtu(doc: &Value, want: [f64; 4], verdict: &str) {
    let names = [
        "path_mtu_bytes",
        "kernel_path_mtu_bytes",
        "ptb_received",
        "black_hole",
    ];
    let got = names.map(|n| metric(doc, n));
    assert_eq!(got, want, "{names:?} in {doc}");
    assert_eq!(doc["pmtu_verdict"], verdict, "{doc}");
}

#[test]
fn pmtu_finds_the_path_mtu_to_the_byte_and_who_signalled_it() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    for (family, router) in ROUTER {
        let doc = pmtu(family, &[]);
        // Path MTU, kernel's MTU, Packet Too Big, black hole.
        let verdict = format!("path MTU 1400, signalled by {router}");
        check_pmtu(&doc, [1400.0, 1400.0, 1.0, 0.0], &verdict);
    }
}

#[test]
fn pmtu_reports_a_black_hole_not_a_clean_mtu_when_packet_too_big_is_dropped() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    for (family, _) in ROUTER {
        let doc = pmtu(family, &["icmp-too-big"]);
        // The probes still find where datagrams stop; the kernel learned nothing.
        let ptb = if family == "6" {
            "Packet Too Big"
        } else {
            "fragmentation-needed"
        };
        let verdict = format!("black hole: datagrams above 1400 B vanish and no {ptb} arrives");
        check_pmtu(&doc, [1400.0, 1500.0, 0.0, 1.0], &verdict);
    }
}

/// What `dualperf run -t tcp-stream` over a path-MTU black hole says, and when.
#[test]
fn tcp_stream_over_a_black_hole_ends_with_the_black_hole_message_within_its_timeout() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    for (family, _) in ROUTER {
        let (o, took) = run_lab(&[
            "run",
            "--lab",
            "routed",
            "--lab-path-mtu",
            "1400",
            "--lab-drop",
            "icmp-too-big",
            "-t",
            "tcp-stream",
            "-d",
            "3",
            "-f",
            family,
        ]);
        assert!(!o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        // The control connection answers, the data does not move: the black hole is
        // named, not the server (before: "the server … did not answer (waiting in state
        // Running)" at the session's deadline, the duration + 10 s).
        assert!(
            err.contains("s after")
                && err.contains(
                    "bytes while the server still answers: a path MTU black hole is likely; \
                     `dualperf run -t pmtu -f"
                ),
            "{err}"
        );
        assert!(
            err.contains("no data for 1"),
            "a stall of 10 s or more: {err}"
        );
        assert!(!err.contains("did not answer"), "{err}");
        // A generous bound: the stall is named after 10 s, the session's own deadline
        // (3 s + 10 s) is never needed; lab set-up and removal come on top.
        assert!(took.as_secs() < 60, "took {took:?}");
    }
}

/// A study records the black hole as the run's failure reason.
#[test]
fn a_study_over_a_black_hole_records_it_as_the_failure_reason() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hole.db");
    let dbs = db.display().to_string();
    let (o, _) = run_lab(&[
        "study",
        "--lab",
        "routed",
        "--lab-path-mtu",
        "1400",
        "--lab-drop",
        "icmp-too-big",
        "--families",
        "6",
        "--tests",
        "tcp-stream",
        "--sizes",
        "65000",
        "--duration",
        "1",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--retries",
        "0",
        "--quiet",
        "--db",
        &dbs,
    ]);
    let s = store::Store::open_read_only(db.as_ref()).expect("database opens");
    let c = &s.campaigns().unwrap()[0];
    let runs = s.runs(c.id).unwrap();
    assert!(!runs.is_empty(), "{}", text(&o));
    for r in &runs {
        let store::RunStatus::Failed { reason } = &r.status else {
            panic!("a run over a black hole succeeded: {:?}", r.metrics);
        };
        assert!(
            reason.contains("a path MTU black hole is likely"),
            "{reason}"
        );
    }
}

/// `frag` (3000-byte datagrams without don't-fragment, fragmented at the source on the
/// lab's 1500-byte links) over the routed lab: every datagram acknowledged, and none
/// with the router dropping fragments. Each waits up to 1 s for its acknowledgement (a
/// loaded machine does not turn a slow answer into a loss); `-n` bounds the traffic.
#[test]
fn fragments_are_delivered_unless_the_router_drops_them_on_both_families() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    for (family, _) in ROUTER {
        for (drops, count, want_pct) in [(&[][..], "100", 100.0), (&["fragments"][..], "5", 0.0)] {
            let mut args = vec!["-t", "frag", "-s", "3000", "-f", family, "-n", count];
            args.extend(["--rr-timeout-ms", "1000"]);
            for d in drops {
                args.extend(["--lab-drop", d]);
            }
            let doc = run_json(&args);
            assert_eq!(metric(&doc, "sent_packets"), count.parse::<f64>().unwrap());
            assert_eq!(metric(&doc, "delivered_pct"), want_pct, "{drops:?}: {doc}");
            let (lo, hi) = (
                metric(&doc, "delivered_ci_low_pct"),
                metric(&doc, "delivered_ci_high_pct"),
            );
            assert!(
                lo <= want_pct && want_pct <= hi && hi - lo > 0.0,
                "{lo}..{hi}"
            );
        }
    }
}

/// `ext-headers` over the routed lab: with Hop-by-Hop dropped by the router, plain
/// datagrams and those with a Destination Options header arrive and those with a
/// Hop-by-Hop header do not; IPv4 says the test does not apply and sends plain ones.
#[test]
fn hop_by_hop_is_dropped_while_destination_options_pass() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let base = ["-t", "ext-headers", "-s", "64", "-n", "10"];
    let mut args = base.to_vec();
    args.extend([
        "-f",
        "6",
        "--lab-drop",
        "hop-by-hop",
        "--rr-timeout-ms",
        "1000",
    ]);
    let doc = run_json(&args);
    let got = [
        "plain_delivered_pct",
        "dest_opts_delivered_pct",
        "hop_by_hop_delivered_pct",
    ]
    .map(|n| metric(&doc, n));
    assert_eq!(got, [100.0, 100.0, 0.0], "{doc}");
    let mut args = base.to_vec();
    args.extend(["-f", "4", "--rr-timeout-ms", "1000"]);
    let doc = run_json(&args);
    assert_eq!(metric(&doc, "plain_delivered_pct"), 100.0, "{doc}");
    assert!(doc.to_string().contains("not applicable"), "{doc}");
    assert_eq!(
        crate::support::metric_opt(&doc, "hop_by_hop_delivered_pct"),
        None
    );
}

/// Without CAP_NET_RAW (dropped with setpriv) the headers cannot be set: the run still
/// measures plain IPv6 and says why the rest is missing, instead of failing.
#[test]
fn ext_headers_without_cap_net_raw_say_so_instead_of_failing() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let o = Command::new("setpriv")
        .args(["--inh-caps=-net_raw", "--bounding-set=-net_raw", BIN])
        .args(["run", "-t", "ext-headers", "-f", "6", "-s", "64", "-n", "5"])
        .arg("--json")
        .output()
        .expect("setpriv runs the binary");
    assert!(o.status.success(), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(metric(&doc, "plain_delivered_pct"), 100.0, "{doc}");
    assert_eq!(
        crate::support::metric_opt(&doc, "dest_opts_delivered_pct"),
        None
    );
    let why = doc["client"]["applied"]["ext_headers"]
        .as_str()
        .unwrap_or("");
    assert!(why.contains("needs CAP_NET_RAW"), "{doc}");
}
