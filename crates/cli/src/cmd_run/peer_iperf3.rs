//! `dualperf run HOST --peer iperf3`: one test against an unmodified iperf3 3.x server,
//! run as every `run` test is, a campaign of one on the runner's iperf3 target. Owns the checks that only apply to an iperf3
//! peer (stream tests only, port 5201 by default), the "server busy" message, and the
//! summary / `--json` output, which lists the metrics a pure iperf3 peer cannot give.

use super::{fmt_value, label, say, RunArgs};
use anyhow::{bail, Context};
use iperf3::{DirectionResult, Iperf3Error, Iperf3Result};
use runner::target::{FullResult, Target, TargetError};
use runner::{Single, SingleError};
use serde_json::{json, Value};
use std::process::ExitCode;
use wire::spec::{Direction, TestKind, TestSpec};

/// `host:port`, with brackets around an IPv6 literal.
fn endpoint(host: &str, port: u16) -> String {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.contains(':') {
        format!("[{bare}]:{port}")
    } else {
        format!("{bare}:{port}")
    }
}

/// The test refused when the user asks for something an iperf3 peer cannot do.
fn check(args: &RunArgs, spec: &TestSpec) -> anyhow::Result<String> {
    if args.target.lab.is_some() {
        bail!("--peer iperf3 cannot be combined with --lab (the lab runs a dualperf server)");
    }
    let Some(host) = &args.target.host else {
        bail!("--peer iperf3 needs the HOST of an iperf3 server (`iperf3 -s` running there)");
    };
    if spec.kind.is_rr() {
        bail!(
            "{} is not possible with --peer iperf3: iperf3 has no request/response test, so \
             RTT, transactions/s and RR loss need a dualperf server. Use --test tcp-stream \
             or --test udp-stream with an iperf3 peer",
            spec.kind
        );
    }
    if matches!(
        spec.kind,
        TestKind::Pmtu | TestKind::Frag | TestKind::ExtHeaders
    ) {
        bail!(
            "{} is not possible with --peer iperf3: each datagram must be acknowledged by a \
             dualperf server",
            spec.kind
        );
    }
    if args.opts.interval.is_some() {
        eprintln!("dualperf: warning: --interval is ignored with --peer iperf3 (totals only)");
    }
    Ok(host.clone())
}

pub fn main(
    args: &RunArgs,
    single: &Single,
    spec: &TestSpec,
    opts: &runner::TargetOptions,
) -> anyhow::Result<ExitCode> {
    let host = check(args, spec)?;
    let server = endpoint(&host, opts.port);
    let mut target = Target::open(opts, &[], &mut super::notice)?;
    let ran = single.run(&mut target);
    target.close()?;
    let result = match ran {
        Ok(runner::SingleRun {
            full: Some(FullResult::Iperf3(r)),
            ..
        }) => r,
        Ok(_) => bail!("the iperf3 target kept no result of the test"),
        Err(SingleError::Target(TargetError::Iperf3(Iperf3Error::Busy))) => {
            bail!("iperf3 server {server} is busy running another test; try again later")
        }
        Err(other) => bail!("test against iperf3 server {server} failed: {other}"),
    };
    if args.json {
        let doc = to_json(&result, spec, &server);
        say(&serde_json::to_string_pretty(&doc).context("cannot encode the result as JSON")?);
    } else {
        say(summary(&result, spec, &server).trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

fn direction_json(d: &Option<DirectionResult>) -> Value {
    match d {
        None => Value::Null,
        Some(d) => json!({
            "streams": d.streams,
            "sent_bytes": d.sent_bytes,
            "recv_bytes": d.recv_bytes,
            "sent_packets": d.sent_packets,
            "highest_seq": d.highest_seq,
            "lost_packets": d.lost_packets,
            "jitter_s": d.jitter_s,
            "reordered_packets": d.reordered_packets,
        }),
    }
}

/// The `--json` document of an iperf3-peer run (schema in docs/guide/iperf3.md).
fn to_json(r: &Iperf3Result, spec: &TestSpec, server: &str) -> Value {
    json!({
        "peer": "iperf3",
        "server_addr": server,
        "spec": spec,
        "duration_s": r.duration_s,
        "metrics": r.metrics,
        "unavailable_metrics": r.unavailable,
        "notes": r.notes,
        "forward": direction_json(&r.forward),
        "reverse": direction_json(&r.reverse),
        "server_results": r.server_json,
    })
}

fn direction_line(name: &str, d: &DirectionResult) -> String {
    let mut line = format!(
        "  {name:<34} sent {} B, received {} B",
        d.sent_bytes, d.recv_bytes
    );
    if let (Some(sent), Some(lost)) = (d.sent_packets, d.lost_packets) {
        line.push_str(&format!(", {lost} of {sent} datagrams lost"));
    }
    line.push('\n');
    line
}

fn summary(r: &Iperf3Result, spec: &TestSpec, server: &str) -> String {
    let dir = match spec.direction {
        Direction::Forward => "client → server",
        Direction::Reverse => "server → client",
        Direction::Bidir => "both directions",
    };
    let mut out = format!(
        "dualperf {} over {} to iperf3 server {server}: {}-byte payload, {dir}, {} stream(s)\n",
        spec.kind, spec.family, spec.payload_bytes, spec.streams
    );
    for x in &r.metrics {
        out.push_str(&format!("  {:<34} {}\n", label(&x.name), fmt_value(x)));
    }
    if let Some(d) = &r.forward {
        out.push_str(&direction_line("client → server", d));
    }
    if let Some(d) = &r.reverse {
        out.push_str(&direction_line("server → client", d));
    }
    out.push_str(&unavailable_line(&r.unavailable));
    for n in &r.notes {
        out.push_str(&format!("  note: {n}\n"));
    }
    out
}

/// Request/response metrics: the ones no iperf3 test can give, whatever the spec.
fn is_rr_metric(name: &str) -> bool {
    name.starts_with("rtt_") || name.starts_with("transactions") || name.starts_with("rr_")
}

/// The summary line naming what this run could not measure: RTT first (the reason a
/// dualperf peer exists), then the other missing names.
fn unavailable_line(unavailable: &[&str]) -> String {
    let others: Vec<&str> = unavailable
        .iter()
        .copied()
        .filter(|n| !is_rr_metric(n))
        .collect();
    let mut line = "  not measurable against a pure iperf3 peer: RTT and transactions/s (iperf3 \
                    has no request/response test)"
        .to_string();
    if !others.is_empty() {
        line.push_str(&format!(
            "; also not given for this test: {}",
            others.join(", ")
        ));
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unavailable_line_names_rtt_first_and_the_rest_after() {
        let line = unavailable_line(&["rtt_mean_ns", "transactions_per_s", "jitter_rfc3550_ns"]);
        assert!(
            line.contains("not measurable against a pure iperf3 peer: RTT"),
            "{line}"
        );
        assert!(
            line.ends_with("also not given for this test: jitter_rfc3550_ns\n"),
            "{line}"
        );
        assert!(!unavailable_line(&["rtt_p50_ns"]).contains("also"));
    }

    #[test]
    fn endpoints_bracket_ipv6_literals() {
        assert_eq!(endpoint("::1", 5201), "[::1]:5201");
        assert_eq!(endpoint("[fd00::2]", 7), "[fd00::2]:7");
        assert_eq!(endpoint("127.0.0.1", 5201), "127.0.0.1:5201");
        assert_eq!(endpoint("example.org", 1), "example.org:1");
    }
}
