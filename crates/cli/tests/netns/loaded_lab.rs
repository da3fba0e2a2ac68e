//! `dualperf run -t rrul` in a tbf-shaped p2p lab (20 Mbit/s): the latency the load
//! adds is the queueing delay of the shaper's backlog, sampled from `tc -s qdisc` on the
//! client's egress while the loaded probes run (backlog bytes / rate); the idle RTT
//! stays that of an unloaded veth; the upload goodput matches the header-overhead model.
//! Needs root (skips with a reason outside CI).
//!
//! Why the backlog and not only tbf's `latency` setting: TCP small queues and pacing
//! keep each sender's bytes in the qdisc small (2 streams held 50–100 KB of the 190 KB
//! limit at 20 Mbit/s, and the probes then met 12–22 % less than that backlog); 8 streams
//! keep the queue near its limit, where the probes' added RTT came within 3–6 % of the
//! sampled backlog. The limit itself (rate × latency + burst) bounds the added RTT.

use crate::support::labs_or_skip;
use crate::support::serial;
use crate::support::BIN;
use model::OverheadModel;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wire::spec::{Family, TestKind};

const RATE_BPS: f64 = 20e6;
const LOAD_S: f64 = 6.0;
/// The loaded probes run from one ramp after the load starts to one ramp before its end
/// (engine::LoadedSpec::ramp_ns: a fifth of the loaded phase).
const RAMP_S: f64 = LOAD_S / 5.0;

/// Backlog of the tbf on the client's egress, as the delay a packet arriving now would
/// wait, in bytes at the shaper's rate: everything queued, less half a packet (the head
/// packet has on average half its tokens already). `None` if the lab is not up.
fn backlog(ns: &str) -> Option<u64> {
    let o = Command::new("ip")
        .args([
            "netns", "exec", ns, "tc", "-s", "qdisc", "show", "dev", "dp-c",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("backlog"))?;
    let bytes = line.split_whitespace().nth(1)?.trim_end_matches('b');
    // tc prints large backlogs with a unit (e.g. 97002b, or 1.2Mb on some versions).
    if let Some(k) = bytes.strip_suffix('K') {
        return k.parse::<f64>().ok().map(|v| (v * 1024.0) as u64);
    }
    if let Some(m) = bytes.strip_suffix('M') {
        return m.parse::<f64>().ok().map(|v| (v * 1024.0 * 1024.0) as u64);
    }
    bytes.parse().ok()
}

/// One run: its JSON result and the backlog samples (bytes) taken while the loaded
/// probes ran.
fn attempt() -> (Value, Vec<u64>) {
    let child = Command::new(BIN)
        .args(["run", "-t", "rrul", "--lab", "p2p", "--lab-rate", "20mbit"])
        .args([
            "--load", "upload", "-P", "8", "-d", "6", "--idle", "1", "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dualperf starts");
    let ns = format!("dpl-tmp{}-0-client", child.id());
    let began = Instant::now();
    let limit = Duration::from_secs(60);
    // The load starts when the queue first holds more than a few probes' worth.
    let mut load_start = None;
    let mut samples = Vec::new();
    while began.elapsed() < limit {
        let now = Instant::now();
        match (load_start, backlog(&ns)) {
            (None, Some(b)) if b > 10_000 => load_start = Some(now),
            (Some(t0), Some(b)) => {
                let t = now.duration_since(t0).as_secs_f64();
                if t > LOAD_S - RAMP_S {
                    break;
                }
                if t >= RAMP_S {
                    samples.push(b);
                }
            }
            (_, None) if load_start.is_some() => break,
            _ => {}
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().expect("dualperf finishes");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON result");
    (doc, samples)
}

fn rtt(doc: &Value, phase: &str, probe: &str, field: &str) -> f64 {
    doc[phase][probe]["rtt"][field]
        .as_f64()
        .unwrap_or_else(|| panic!("no {phase}.{probe}.rtt.{field}"))
}

/// What one attempt got wrong (empty = right).
fn check(doc: &Value, samples: &[u64]) -> Vec<String> {
    let mut wrong = Vec::new();
    if samples.len() < 10 {
        wrong.push(format!("only {} backlog samples", samples.len()));
        return wrong;
    }
    let mean_backlog = samples.iter().sum::<u64>() as f64 / samples.len() as f64;
    let queue_ms = mean_backlog * 8.0 / RATE_BPS * 1e3;
    // `samples` are what a probe arriving then would wait behind.
    for probe in ["udp", "tcp"] {
        let idle = rtt(doc, "idle", probe, "mean_ns") / 1e6;
        let loaded = rtt(doc, "loaded", probe, "mean_ns") / 1e6;
        let added = loaded - idle;
        eprintln!(
            "{probe}: idle {idle:.3} ms, loaded {loaded:.3} ms, added {added:.2} ms; queue {queue_ms:.2} ms ({} samples, mean wait behind {mean_backlog:.0} B)",
            samples.len()
        );
        if (added - queue_ms).abs() > 0.2 * queue_ms {
            wrong.push(format!(
                "{probe}: added {added:.2} ms, queue {queue_ms:.2} ms"
            ));
        }
        // No probe can wait longer than a full queue: tbf's limit is rate × latency +
        // burst (lab::plan: latency 50 ms, burst 64 KiB).
        let full_ms = (RATE_BPS / 8.0 * 0.050 + 65536.0) * 8.0 / RATE_BPS * 1e3;
        if added > full_ms + 2.0 {
            wrong.push(format!(
                "{probe}: added {added:.2} ms > full queue {full_ms:.2} ms"
            ));
        }
        // Idle: an unloaded veth pair answers in well under a millisecond.
        if idle >= 1.0 {
            wrong.push(format!("{probe}: idle RTT {idle:.3} ms"));
        }
    }
    let model = OverheadModel::tbf_veth()
        .cost(Family::V4, TestKind::TcpStream, 128 * 1024)
        .max_goodput_bps(RATE_BPS);
    let up = doc["derived"]["upload_bps"].as_f64().unwrap_or(0.0);
    eprintln!(
        "upload {:.3} Mbit/s, model {:.3} Mbit/s",
        up / 1e6,
        model / 1e6
    );
    // The whole loaded phase counts: slow start at its beginning, the bucket's burst,
    // and the probes' share of the link (40 × 64 B/s) — within 5 %.
    if (up / model - 1.0).abs() > 0.05 {
        wrong.push(format!(
            "upload {:.3} Mbit/s vs model {:.3}",
            up / 1e6,
            model / 1e6
        ));
    }
    wrong
}

#[test]
fn loaded_rtt_rises_by_the_shapers_queueing_delay() {
    let _turn = serial();
    if !labs_or_skip() {
        return;
    }
    // Best of 3: a busy 2-core machine can starve the polling of `tc` or a probe.
    let mut failures = Vec::new();
    for n in 0..3 {
        let (doc, samples) = attempt();
        let wrong = check(&doc, &samples);
        if wrong.is_empty() {
            // The probes ran on their grid in both phases.
            for phase in ["idle", "loaded"] {
                for probe in ["udp", "tcp"] {
                    assert!(rtt(&doc, phase, probe, "count") >= 10.0, "{phase} {probe}");
                }
            }
            return;
        }
        failures.push(format!("attempt {n}: {wrong:?}"));
    }
    panic!("{failures:#?}");
}
