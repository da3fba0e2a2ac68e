//! A dualperf test's result as a study run stores it: the flat metrics, interval
//! samples (and `--window` rows), what each side applied, and an rrul run's parts placed
//! on one timeline. Pure conversions, no I/O.

use std::collections::BTreeMap;
use study::{RunOutput, Sample};

/// A stream or RR test's result as a study run (the recorder's interval samples, then
/// the `--window` rows).
pub fn run_output(r: &engine::RunResult, intervals: &[engine::IntervalSample]) -> RunOutput {
    RunOutput {
        metrics: r.metrics().into_iter().map(|m| (m.name, m.value)).collect(),
        samples: intervals
            .iter()
            .map(to_sample)
            .chain(window_samples(r))
            .collect(),
        server_info: r.server_info.clone(),
        client_info: r.client_info.clone(),
        applied: [("client", &r.client.applied), ("server", &r.server.applied)]
            .into_iter()
            .flat_map(|(side, map)| {
                map.iter()
                    .map(move |(k, v)| (format!("{side}.{k}"), v.clone()))
            })
            .collect(),
    }
}

/// An rrul result as a study run: its flat metrics, its parts' interval samples, and
/// what each side of each part applied (`client.loaded_udp.KEY`).
pub fn loaded_output(r: &engine::LoadedResult) -> RunOutput {
    let first = &r.idle.tcp;
    let parts = [
        ("idle_udp", &r.idle.udp),
        ("idle_tcp", &r.idle.tcp),
        ("loaded_udp", &r.loaded.udp),
        ("loaded_tcp", &r.loaded.tcp),
    ]
    .into_iter()
    .chain(r.upload.iter().map(|u| ("upload", u)))
    .chain(r.download.iter().map(|d| ("download", d)));
    let mut applied = BTreeMap::new();
    for (part, run) in parts {
        for (side, map) in [
            ("client", &run.client.applied),
            ("server", &run.server.applied),
        ] {
            for (k, v) in map {
                applied.insert(format!("{side}.{part}.{k}"), v.clone());
            }
        }
    }
    RunOutput {
        metrics: r.metrics().into_iter().map(|m| (m.name, m.value)).collect(),
        samples: loaded_samples(r),
        server_info: first.server_info.clone(),
        client_info: first.client_info.clone(),
        applied,
    }
}

/// An rrul run's interval samples as stored: each part's intervals placed on the
/// test's timeline (ns since the idle probes' client threads started), as
/// `store::dataset::LoadedSample` keeps them (bytes the client wrote to its upload streams or
/// read from its download streams; the probes' RTT sums and counts per phase).
fn loaded_samples(r: &engine::LoadedResult) -> Vec<Sample> {
    use engine::LoadedPart as P;
    let mut out = Vec::new();
    for iv in &r.intervals {
        for s in &iv.samples {
            let at = |ns: u64| iv.offset_ns.saturating_add(ns).min(i64::MAX as u64) as i64;
            let rtt = Some((s.rtt_sum_ns as f64, s.rtt_count as f64));
            let mut x = store::dataset::LoadedSample {
                start_ns: at(s.start_ns),
                end_ns: at(s.end_ns),
                loaded_phase: matches!(iv.part, P::LoadedUdpProbes | P::LoadedTcpProbes),
                ..store::dataset::LoadedSample::default()
            };
            match iv.part {
                P::Upload => x.upload_sent_bytes = Some(s.sent_bytes as f64),
                P::Download => x.download_recv_bytes = Some(s.recv_bytes as f64),
                P::IdleUdpProbes | P::LoadedUdpProbes => x.udp_rtt = rtt,
                P::IdleTcpProbes | P::LoadedTcpProbes => x.tcp_rtt = rtt,
            }
            out.push(Sample {
                start_ns: x.start_ns,
                end_ns: x.end_ns,
                metrics: x.to_metrics(),
            });
        }
    }
    out.sort_by_key(|s| s.start_ns);
    out
}

/// `--window` rows as stored: one sample per window (its send-time span), metrics
/// prefixed `window_` so they never mix with the interval samples' own.
fn window_samples(r: &engine::RunResult) -> Vec<Sample> {
    let Some(width) = r.spec.window_ns else {
        return Vec::new();
    };
    r.windows()
        .into_iter()
        .map(|w| {
            let mut metrics = BTreeMap::new();
            let mut put = |k: &str, v: Option<f64>| {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    metrics.insert(format!("window_{k}"), v);
                }
            };
            put("sent_packets", Some(w.sent_packets as f64));
            put("recv_packets", Some(w.recv_packets as f64));
            put("lost_packets", Some(w.lost_packets as f64));
            put("loss_pct", w.loss_pct);
            put("bitrate_bps", Some(w.bitrate_bps));
            put("jitter_ns", w.jitter_ns);
            put("owd_mean_ns", w.owd_mean_ns);
            put("owd_max_ns", w.owd_max_ns);
            let start = i64::from(w.index) * width as i64;
            Sample {
                start_ns: start,
                end_ns: start + width as i64,
                metrics,
            }
        })
        .collect()
}

/// An engine interval sample as stored: this side's counts and rates over the window.
fn to_sample(s: &engine::IntervalSample) -> Sample {
    use wire::metrics as m;
    let mut metrics = BTreeMap::new();
    metrics.insert(m::SENT_BYTES.to_string(), s.sent_bytes as f64);
    metrics.insert(m::SENT_PACKETS.to_string(), s.sent_packets as f64);
    metrics.insert(m::RECV_BYTES.to_string(), s.recv_bytes as f64);
    metrics.insert(m::RECV_PACKETS.to_string(), s.recv_packets as f64);
    let dt_s = s.end_ns.saturating_sub(s.start_ns) as f64 / 1e9;
    // This side's rates only where it did that: a sender has no goodput of its own.
    if dt_s > 0.0 && s.sent_bytes > 0 {
        metrics.insert(
            m::SEND_RATE_BPS.to_string(),
            s.sent_bytes as f64 * 8.0 / dt_s,
        );
    }
    if dt_s > 0.0 && s.recv_bytes > 0 {
        metrics.insert(
            m::THROUGHPUT_BPS.to_string(),
            s.recv_bytes as f64 * 8.0 / dt_s,
        );
    }
    Sample {
        start_ns: s.start_ns as i64,
        end_ns: s.end_ns as i64,
        metrics,
    }
}
