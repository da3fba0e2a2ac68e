//! `dualperf run -t tcp-crr` (netperf's TCP_CRR) against a `dualperf server` on
//! 127.0.0.1 and ::1: the figures of one run agree with each other (transactions =
//! connections the server answered, connections/s = transactions / duration, percentiles
//! in order, connect time within transaction time), where TIME_WAIT goes is stated, the
//! server's limits hold as for tcp-rr, and a study with tcp-crr cells gives report rows.
//! Every check is a count or a relation between figures of one run: no rate or time is
//! compared with a bound that load could break.

use crate::support::engine::families;
use crate::support::server::ServerProc;
use crate::support::study;
use crate::support::{dualperf, metric, output_within, shared, text, BIN};
use std::time::Duration;
use wire::metrics as m;

/// Transactions of each run: bounded count, a fraction of a second on loopback.
const COUNT: u64 = 300;

fn server(extra: &[&str]) -> (ServerProc, Vec<(&'static str, &'static str, u16)>) {
    let fams = families();
    let mut args = Vec::new();
    for (_, host) in &fams {
        args.extend(["--bind", host]);
    }
    args.extend_from_slice(extra);
    let p = ServerProc::start(BIN, &args);
    let with_ports = fams
        .into_iter()
        .map(|(f, host)| (f, host, p.port_for(host)))
        .collect();
    (p, with_ports)
}

fn run_json(host: &str, port: u16, args: &[&str]) -> serde_json::Value {
    let o = output_within(
        dualperf()
            .args(["run", "-t", "tcp-crr", host, "--port", &port.to_string()])
            .args(args)
            .arg("--json"),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).expect("--json prints JSON")
}

#[test]
fn tcp_crr_figures_of_one_run_agree_over_both_families() {
    let _turn = shared();
    let (_server, fams) = server(&[]);
    for (family, host, port) in fams {
        let count = COUNT.to_string();
        let doc = run_json(host, port, &["-n", &count, "-s", "64"]);
        let what = format!("IPv{family}");
        assert_eq!(doc["spec"]["kind"], "tcp-crr", "{what}");
        // One connection per transaction, each answered by the server: the server
        // received and sent one request and one response per connection.
        let tx = metric(&doc, m::TRANSACTIONS);
        assert_eq!(tx, COUNT as f64, "{what}");
        assert_eq!(doc["transactions"], COUNT, "{what}");
        assert_eq!(doc["server"]["recv_packets"], COUNT, "{what}: server");
        assert_eq!(doc["server"]["sent_packets"], COUNT, "{what}: server");
        assert_eq!(doc["server"]["recv_bytes"], COUNT * 64, "{what}: server");
        assert_eq!(doc["connect_time"]["count"], COUNT, "{what}");
        assert_eq!(doc["rtt"]["count"], COUNT, "{what}");
        // connections/s is transactions over the run's duration.
        let rate = metric(&doc, m::CONNECTIONS_PER_S);
        let dur = metric(&doc, m::DURATION_S);
        assert!(
            (rate * dur - tx).abs() <= 1e-6 * tx,
            "{what}: {rate}/s × {dur} s ≠ {tx}"
        );
        // tcp-crr says connections, not a transaction rate or an RTT.
        for absent in [m::TRANSACTIONS_PER_S, m::RTT_MEAN_NS, m::RTT_P50_NS] {
            assert!(
                crate::support::metric_opt(&doc, absent).is_none(),
                "{what}: {absent}"
            );
        }
        // Percentiles in order, and each connect within its own transaction.
        let get = |n: &str| metric(&doc, n);
        let connect = [
            get(m::CONNECT_TIME_P50_NS),
            get(m::CONNECT_TIME_P90_NS),
            get(m::CONNECT_TIME_P99_NS),
        ];
        let txn = [
            get(m::TRANSACTION_TIME_P50_NS),
            get(m::TRANSACTION_TIME_P90_NS),
            get(m::TRANSACTION_TIME_P99_NS),
        ];
        for q in [connect, txn] {
            assert!(q[0] > 0.0 && q[0] <= q[1] && q[1] <= q[2], "{what}: {q:?}");
        }
        for (c, t) in connect.iter().zip(&txn) {
            assert!(c <= t, "{what}: connect {c} > transaction {t}");
        }
        assert!(
            get(m::CONNECT_TIME_MEAN_NS) <= get(m::TRANSACTION_TIME_MEAN_NS),
            "{what}"
        );
        // Where TIME_WAIT goes is part of the run's record.
        assert_eq!(
            doc["client"]["applied"]["tcp_crr.time_wait"],
            "held by the server; the client's ports are reusable at once",
            "{what}"
        );
    }
}

#[test]
fn tcp_crr_text_output_names_connections_and_time_wait() {
    let _turn = shared();
    let (_server, fams) = server(&[]);
    let (_, host, port) = fams[0];
    let o = output_within(
        dualperf().args([
            "run",
            "-t",
            "tcp-crr",
            host,
            "--port",
            &port.to_string(),
            "-n",
            "50",
        ]),
        Duration::from_secs(60),
    );
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    for want in [
        "dualperf tcp-crr over IPv4",
        "connections/s",
        "connect time p99",
        "transaction time p50",
        "TIME_WAIT: held by the server; the client's ports are reusable at once",
    ] {
        assert!(t.contains(want), "{want} missing: {t}");
    }
}

#[test]
fn the_servers_limits_hold_for_tcp_crr_as_for_tcp_rr() {
    let _turn = shared();
    let (_server, fams) = server(&["--max-duration", "1"]);
    let (_, host, port) = fams[0];
    let port = port.to_string();
    for test in ["tcp-rr", "tcp-crr"] {
        let o = output_within(
            dualperf().args(["run", "-t", test, host, "--port", &port, "-d", "2"]),
            Duration::from_secs(60),
        );
        assert!(!o.status.success(), "{test}: {}", text(&o));
        assert!(
            text(&o).contains("the server allows tests of at most 1 s (--max-duration)"),
            "{test}: {}",
            text(&o)
        );
    }
    // Options that make no sense for one connection at a time are refused before any
    // traffic, with the reason.
    for (args, why) in [
        (&["-P", "2"][..], "-P does not apply to -t tcp-crr"),
        (
            &["--bidir"][..],
            "--reverse/--bidir do not apply to -t tcp-crr",
        ),
        (&["-b", "10M"][..], "--rate does not apply to -t tcp-crr"),
    ] {
        let o = output_within(
            dualperf()
                .args(["run", "-t", "tcp-crr", host, "--port", &port])
                .args(args),
            Duration::from_secs(60),
        );
        assert!(!o.status.success(), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(why), "{args:?}: {}", text(&o));
    }
}

#[test]
fn a_study_with_tcp_crr_cells_gives_report_rows() {
    let _turn = shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crr.db").display().to_string();
    let o = study::run(
        &[
            "study", "--tests", "tcp-crr", "--sizes", "64", "--runs", "3", "--count", "200",
            "--db", &db,
        ],
        false,
    );
    assert!(o.status.success(), "{}", text(&o));
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let c = &s.campaigns().unwrap()[0];
    let runs = s.runs(c.id).unwrap();
    let ok: Vec<_> = runs.iter().filter(|r| r.status.is_ok()).collect();
    assert!(ok.len() >= 6, "3 runs × 2 families: {}", text(&o));
    for r in &ok {
        assert_eq!(r.metrics.get(m::TRANSACTIONS), Some(&200.0), "{r:?}");
        assert!(r.metrics[m::CONNECTIONS_PER_S] > 0.0, "{r:?}");
    }
    let out = dir.path().join("report");
    let rep = study::run(
        &[
            "report",
            "--db",
            &db,
            "--no-png",
            "--no-pdf",
            "--out",
            out.to_str().unwrap(),
        ],
        false,
    );
    assert!(rep.status.success(), "{}", text(&rep));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for view in [
        "TCP connect rate",
        "TCP connect time (p50)",
        "TCP connect time (p99)",
    ] {
        assert!(md.contains(view), "{view} missing from the report:\n{md}");
    }
    assert!(md.contains("Mann-Whitney"), "{md}");
}
