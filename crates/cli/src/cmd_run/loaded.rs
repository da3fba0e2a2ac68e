//! `dualperf run -t rrul`: latency under load, run like every `run` test as a campaign
//! of one on the runner's target (a server, the embedded loopback server, or a lab).
//! Here: the check that the peer can serve it, and the text summary or `--json`.

use super::{say, Ran, RunArgs};
use anyhow::{bail, Context};
use engine::{LoadDirection, LoadedResult, Probes};
use std::process::ExitCode;
use wire::spec::TestKind;

/// Refuses an rrul test the peer cannot serve.
pub fn check(args: &RunArgs) -> anyhow::Result<()> {
    if args.target.peer == crate::args::Peer::Iperf3 {
        bail!(
            "-t rrul needs a dualperf server: an iperf3 server runs one test at a time and has \
             no request/response test, so it cannot answer probes beside the load"
        );
    }
    Ok(())
}

/// The result of an rrul run, as text or `--json`.
pub fn show(args: &RunArgs, result: &LoadedResult, ran: &Ran) -> anyhow::Result<ExitCode> {
    if args.json {
        let mut doc = serde_json::to_value(Json::of(result))?;
        if let (Some(md), Some(obj)) = (&ran.lab, doc.as_object_mut()) {
            obj.insert("lab".into(), serde_json::to_value(md)?);
        }
        say(&serde_json::to_string_pretty(&doc).context("cannot encode the result as JSON")?);
    } else {
        say(summary(result, ran.embedded).trim_end());
        if let Some(md) = &ran.lab {
            super::lab_run::say_lab(md);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--json`: the whole result, and the derived figures the text shows.
#[derive(serde::Serialize)]
struct Json<'a> {
    test: &'static str,
    #[serde(flatten)]
    result: &'a LoadedResult,
    derived: Derived,
}

#[derive(serde::Serialize)]
struct Derived {
    /// Loaded p50 minus idle p50 of each probe type, ns.
    added_p50_ns_udp: Option<f64>,
    added_p50_ns_tcp: Option<f64>,
    rpm_idle: Option<f64>,
    rpm_loaded: Option<f64>,
    rpm_method: String,
    upload_bps: Option<f64>,
    download_bps: Option<f64>,
}

impl Json<'_> {
    fn of(r: &LoadedResult) -> Json<'_> {
        Json {
            test: "rrul",
            result: r,
            derived: Derived {
                added_p50_ns_udp: r.added_p50_ns(TestKind::UdpRr),
                added_p50_ns_tcp: r.added_p50_ns(TestKind::TcpRr),
                rpm_idle: LoadedResult::rpm(&r.idle),
                rpm_loaded: LoadedResult::rpm(&r.loaded),
                rpm_method: rpm_method(),
                upload_bps: r.upload.as_ref().and_then(|u| u.throughput_bps()),
                download_bps: r.download.as_ref().and_then(|d| d.throughput_bps()),
            },
        }
    }
}

fn rpm_method() -> String {
    format!(
        "60 s / the 95% trimmed mean RTT of the TCP probes, as {} aggregates probes; from \
         TCP request/response probes on their own connection only (no TLS or HTTP probes, no \
         probes on the loaded connections), so not the same figure as networkQuality's",
        engine::RPM_REFERENCE
    )
}

/// An RTT in the unit that fits: µs below 1 ms, else ms.
fn rtt(ns: f64) -> String {
    if ns.abs() < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{:.2} ms", ns / 1e6)
    }
}

fn probe_lines(out: &mut String, phase: &str, p: &Probes) {
    for (name, r) in [("UDP", &p.udp), ("TCP", &p.tcp)] {
        match r.rtt.filter(|s| s.count > 0) {
            Some(s) => out.push_str(&format!(
                "    {phase:<7} {name}  {:>11} {:>11} {:>11} {:>11}  {:>6}\n",
                rtt(s.min_ns as f64),
                rtt(s.p50_ns as f64),
                rtt(s.p90_ns as f64),
                rtt(s.p99_ns as f64),
                s.count
            )),
            None => out.push_str(&format!(
                "    {phase:<7} {name}  no RTT: 0 of {} probes sent were answered{}\n",
                r.client.sent_packets,
                if r.rr_timeouts > 0 {
                    format!(" ({} timed out)", r.rr_timeouts)
                } else {
                    String::new()
                }
            )),
        }
    }
}

fn summary(r: &LoadedResult, embedded: bool) -> String {
    let s = &r.spec;
    let server = &r.loaded.tcp.server_addr;
    let mut out = format!(
        "dualperf rrul over {} to {server}{}: load {} ({} TCP stream(s) per direction, {}-byte \
         writes) for {:.1} s; probes: UDP and TCP request/response of {} bytes, {}/s each, on \
         their own flows\n",
        s.family,
        if embedded { " (embedded server)" } else { "" },
        match s.load {
            LoadDirection::Upload => "client → server",
            LoadDirection::Download => "server → client",
            LoadDirection::Both => "both ways",
        },
        s.streams,
        s.write_bytes,
        s.duration_ns as f64 / 1e9,
        s.probe_bytes,
        s.probe_rate,
    );
    out.push_str(
        "  RTT (client's monotonic clock, probe request sent → response received)\n\
         \x20   phase   probe         min         p50         p90         p99       n\n",
    );
    probe_lines(&mut out, "idle", &r.idle);
    probe_lines(&mut out, "loaded", &r.loaded);
    out.push_str("  latency added by the load (loaded p50 − idle p50)\n");
    for (name, kind) in [("UDP", TestKind::UdpRr), ("TCP", TestKind::TcpRr)] {
        let v = r
            .added_p50_ns(kind)
            .map_or("unavailable: a phase had no answered probe".into(), |ns| {
                format!("{}{}", if ns >= 0.0 { "+" } else { "−" }, rtt(ns.abs()))
            });
        out.push_str(&format!("    {name} probes                       {v}\n"));
    }
    let lost = |p: &Probes| p.udp.rr_timeouts;
    out.push_str(&format!(
        "    UDP probes without a response    idle {}, loaded {} (waited {} ms each)\n",
        lost(&r.idle),
        lost(&r.loaded),
        r.loaded.udp.spec.rr_timeout_ns / 1_000_000
    ));
    out.push_str("  throughput under load (goodput at the receiver, whole loaded phase)\n");
    for (name, run) in [("upload", &r.upload), ("download", &r.download)] {
        if let Some(bps) = run.as_ref().and_then(|x| x.throughput_bps()) {
            out.push_str(&format!("    {name:<32} {:.1} Mbit/s\n", bps / 1e6));
        }
    }
    let rpm = |p: &Probes| {
        LoadedResult::rpm(p).map_or("unavailable".to_string(), |v| format!("{v:.0} RPM"))
    };
    out.push_str(&format!(
        "  responsiveness                     {} loaded, {} idle\n    ({})\n",
        rpm(&r.loaded),
        rpm(&r.idle),
        rpm_method()
    ));
    out.push_str(&format!(
        "  method: idle probes for {:.1} s, then the load for {:.1} s with probes from {:.1} s \
         after it started to {:.1} s before it ended\n",
        s.idle_ns as f64 / 1e9,
        s.duration_ns as f64 / 1e9,
        s.ramp_ns() as f64 / 1e9,
        s.ramp_ns() as f64 / 1e9,
    ));
    let warnings = [&r.idle.udp, &r.idle.tcp, &r.loaded.udp, &r.loaded.tcp]
        .into_iter()
        .chain(r.upload.iter())
        .chain(r.download.iter())
        .flat_map(|x| x.warnings.iter());
    for w in warnings {
        out.push_str(&format!("  warning: {w}\n"));
    }
    out
}
