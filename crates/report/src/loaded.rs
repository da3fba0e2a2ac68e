//! Latency under load (rrul): what the probes saw idle and beside the load, drawn as
//! flent draws an RRUL test, and a table of each cell's medians.
//!
//! - RTT CDFs, idle against loaded, per probe type and load write size: one curve per
//!   system, IP version and phase, from the quantile ladder every run stores
//!   (`{idle|loaded}_{udp|tcp}_rtt_qNNN_ns`), averaged rung by rung over the cell's
//!   counted runs (Vincentisation: the mean of each quantile, so the curve is the
//!   distribution of a typical run, not of the pooled probes).
//! - Over time, for the runs drawn over time (the median loaded TCP RTT run of each system
//!   and IP version, or those chosen with `--timeseries`): the probes' mean RTT per
//!   interval through the idle and the loaded phase, and the load's bytes per interval
//!   in each direction, on the test's timeline (the client's clock from when its idle
//!   probes started).
//!
//! The comparisons of IPv4 and IPv6 (loaded median RTT per probe type, RPM, goodput
//! per direction) are ordinary views of [`crate::analysis`], with the same tests and
//! corrections as every other metric.

use crate::dataset::{Dataset, LoadedSample, RunRow, RunSeries};
use crate::format::num;
use crate::svg::Figure;
use crate::table::{Cell, Table};
use crate::timeseries::{cell_id, render, Line, LineSet};
use std::collections::BTreeSet;
use wire::metrics as m;
use wire::spec::{Direction, Family, TestKind};

/// The probe types, as (stored name part, display name).
const PROBES: [(bool, &str); 2] = [(false, "TCP"), (true, "UDP")];

fn is_rrul(r: &RunRow) -> bool {
    r.kind == TestKind::Rrul && r.direction == Direction::Forward
}

/// The rrul figures of `data`: per load write size, the two RTT CDFs, then the runs
/// drawn over time. `systems` are the campaigns' display names.
pub fn figures(data: &Dataset, systems: &[String]) -> Vec<Figure> {
    let sizes: BTreeSet<u32> = data
        .campaigns
        .iter()
        .flat_map(|c| c.runs.iter())
        .filter(|r| r.counts() && is_rrul(r))
        .map(|r| r.payload_bytes)
        .collect();
    let mut out = Vec::new();
    for &size in &sizes {
        for (udp, name) in PROBES {
            out.extend(cdf_figure(data, systems, size, udp, name));
        }
        out.extend(over_time(data, systems, size));
    }
    out
}

/// The mean of each rung of the ladders of the counted runs of one cell and phase, in
/// ms, with the number of runs; `None` when no run stored the whole ladder.
fn mean_ladder(runs: &[&RunRow], loaded: bool, udp: bool) -> Option<(Vec<f64>, usize)> {
    let ladders: Vec<Vec<f64>> = runs
        .iter()
        .filter_map(|r| {
            m::RTT_LADDER_PCT
                .iter()
                .map(|&p| {
                    r.metrics
                        .get(&m::rtt_ladder_name(loaded, udp, p))
                        .copied()
                        .filter(|v| v.is_finite() && *v >= 0.0)
                })
                .collect::<Option<Vec<f64>>>()
        })
        .collect();
    if ladders.is_empty() {
        return None;
    }
    let n = ladders.len() as f64;
    let mean = (0..m::RTT_LADDER_PCT.len())
        .map(|i| ladders.iter().map(|l| l[i]).sum::<f64>() / n / 1e6)
        .collect();
    Some((mean, ladders.len()))
}

/// A ladder as CDF steps: from each rung's RTT to the next one's, at the rung's
/// percentage (the share of probes at or below it), then the last rung at 100 %.
fn cdf_steps(ladder: &[f64]) -> Vec<(f64, f64, f64)> {
    let mut steps: Vec<(f64, f64, f64)> = ladder
        .windows(2)
        .zip(m::RTT_LADDER_PCT)
        .map(|(w, pct)| (w[0], w[1].max(w[0]), f64::from(pct)))
        .collect();
    if let Some(&last) = ladder.last() {
        steps.push((last, last, 100.0));
    }
    steps
}

fn cdf_figure(
    data: &Dataset,
    systems: &[String],
    size: u32,
    udp: bool,
    probe: &str,
) -> Option<Figure> {
    let many_systems = data.campaigns.len() > 1;
    let mut lines = Vec::new();
    let mut counts = Vec::new();
    for (sys, campaign) in data.campaigns.iter().enumerate() {
        for family in [Family::V4, Family::V6] {
            let runs: Vec<&RunRow> = campaign
                .runs
                .iter()
                .filter(|r| r.counts() && is_rrul(r) && r.payload_bytes == size)
                .filter(|r| r.family == family)
                .collect();
            for loaded in [false, true] {
                let Some((ladder, n)) = mean_ladder(&runs, loaded, udp) else {
                    continue;
                };
                let v6 = family == Family::V6;
                let who = match (many_systems, systems.get(sys)) {
                    (true, Some(name)) => format!("{name} {family}"),
                    _ => family.to_string(),
                };
                let phase = if loaded { "loaded" } else { "idle" };
                counts.push(n);
                lines.push(Line {
                    label: format!("{who} {phase} · {n} runs"),
                    colour: crate::svg::colour_of(sys),
                    dash: match (loaded, v6) {
                        (false, _) => "2 3",
                        (true, false) => "",
                        (true, true) => "7 4",
                    },
                    mark: crate::svg::Mark::of(sys, v6),
                    steps: cdf_steps(&ladder),
                });
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    let rungs: Vec<String> = m::RTT_LADDER_PCT.iter().map(|p| p.to_string()).collect();
    let note = format!(
        "The share of {probe} request/response probes (on their own flows, paced) answered within each RTT: idle (dotted) before the load started, loaded (solid for IPv4, dashed for IPv6) while it ran. Each curve is the mean over the cell's counted runs of each run's RTT quantiles at {} % (0 = min, 100 = max), drawn as steps: between two quantiles the curve stays at the lower one's share. RTT on the client's monotonic clock, request sent to response received.",
        rungs.join(", ")
    );
    Some(render(
        &format!(
            "{}-rtt-cdf-{}",
            cell_id(TestKind::Rrul, Direction::Forward, size),
            probe.to_ascii_lowercase()
        ),
        format!("Latency under load, load writes of {size} bytes: RTT of the {probe} probes, idle against loaded"),
        ("RTT (ms)", "probes answered within", "%"),
        &lines,
        &note,
    ))
}

/// What an over-time figure draws of each sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trace {
    Rtt { udp: bool },
    Upload,
    Download,
}

impl Trace {
    const ALL: [Trace; 4] = [
        Trace::Rtt { udp: false },
        Trace::Rtt { udp: true },
        Trace::Upload,
        Trace::Download,
    ];
    fn value(self, s: &LoadedSample) -> Option<f64> {
        let dt_s = (s.end_ns - s.start_ns) as f64 / 1e9;
        match self {
            Trace::Rtt { udp } => {
                let (sum, n) = if udp { s.udp_rtt? } else { s.tcp_rtt? };
                (n > 0.0).then(|| sum / n / 1e6)
            }
            Trace::Upload => Some(s.upload_sent_bytes? * 8e-6 / dt_s).filter(|_| dt_s > 0.0),
            Trace::Download => Some(s.download_recv_bytes? * 8e-6 / dt_s).filter(|_| dt_s > 0.0),
        }
    }
    fn id(self) -> &'static str {
        match self {
            Trace::Rtt { udp: false } => "rtt-tcp-timeseries",
            Trace::Rtt { udp: true } => "rtt-udp-timeseries",
            Trace::Upload => "upload-timeseries",
            Trace::Download => "download-timeseries",
        }
    }
    fn axis(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Trace::Rtt { udp: false } => ("TCP probes' RTT", "mean RTT of the TCP probes", "ms"),
            Trace::Rtt { udp: true } => ("UDP probes' RTT", "mean RTT of the UDP probes", "ms"),
            Trace::Upload => ("upload", "bytes written by the client", "Mbit/s"),
            Trace::Download => ("download", "goodput received by the client", "Mbit/s"),
        }
    }
    fn note(self) -> &'static str {
        match self {
            Trace::Rtt { .. } => "Each step is one sampling interval: the mean RTT of the probes answered in it (intervals with no answer are left out), through the idle phase and then beside the load.",
            Trace::Upload => "Each step is one sampling interval of the upload streams: the bytes the client handed to its sockets (the client only sends there; the run's upload goodput, counted at the server, is in the tables).",
            Trace::Download => "Each step is one sampling interval of the download streams: the payload the client received.",
        }
    }
}

fn over_time(data: &Dataset, systems: &[String], size: u32) -> Vec<Figure> {
    let mut members: Vec<(usize, &RunRow, &RunSeries)> = Vec::new();
    for (sys, c) in data.campaigns.iter().enumerate() {
        for s in &c.series {
            if let Some(r) = c.runs.get(s.run_index) {
                if is_rrul(r) && r.payload_bytes == size && !s.loaded.is_empty() {
                    members.push((sys, r, s));
                }
            }
        }
    }
    members.sort_by_key(|(sys, r, s)| (*sys, r.family == Family::V6, s.run_id));
    let many_systems = members.iter().any(|m| m.0 != members[0].0);
    let mut out = Vec::new();
    for trace in Trace::ALL {
        let mut set = LineSet::new(many_systems, systems);
        let mut load_from: Vec<f64> = Vec::new();
        for &(sys, run, series) in &members {
            let steps: Vec<(f64, f64, f64)> = series
                .loaded
                .iter()
                .filter(|s| s.end_ns > s.start_ns)
                .filter_map(|s| {
                    let v = trace.value(s)?;
                    v.is_finite()
                        .then(|| (s.start_ns as f64 / 1e9, s.end_ns as f64 / 1e9, v))
                })
                .collect();
            if steps.is_empty() {
                continue;
            }
            if let Some(first) = series
                .loaded
                .iter()
                .filter(|s| s.upload_sent_bytes.is_some() || s.download_recv_bytes.is_some())
                .map(|s| s.start_ns)
                .min()
            {
                load_from.push(first as f64 / 1e9);
            }
            set.push((sys, run, series.run_id), steps);
        }
        let lines = set.lines;
        if lines.is_empty() {
            continue;
        }
        let (what, quantity, unit) = trace.axis();
        let load = match (
            load_from.iter().copied().reduce(f64::min),
            load_from.iter().copied().reduce(f64::max),
        ) {
            (Some(lo), Some(hi)) if hi - lo < 0.05 => format!(" The load started at {lo:.2} s."),
            (Some(lo), Some(hi)) => format!(" The load started at {lo:.2}–{hi:.2} s."),
            _ => String::new(),
        };
        let note = format!(
            "{}{load} Time runs from when the client started its idle probes, on its clock; each part's samples start when its client thread started (its control handshake, a few round trips, follows). Runs (ids in the legend): the median run (by the TCP probes' loaded median RTT) of each system and IP version, or those chosen with --timeseries.",
            trace.note()
        );
        out.push(render(
            &format!(
                "{}-{}",
                cell_id(TestKind::Rrul, Direction::Forward, size),
                trace.id()
            ),
            format!("Latency under load, load writes of {size} bytes: {what} over time"),
            ("Time since the idle probes started (s)", quantity, unit),
            &lines,
            &note,
        ));
    }
    out
}

/// One row per system, load write size and IP version: the means over the counted
/// runs of the probes' idle and loaded medians, the latency the load added, RPM and
/// the load's goodput. `None` without rrul runs.
pub fn table(data: &Dataset, systems: &[String]) -> Option<Table> {
    let cols: [(&str, &str, f64); 9] = [
        ("TCP idle p50 (ms)", m::IDLE_TCP_RTT_P50_NS, 1e-6),
        ("TCP loaded p50 (ms)", m::LOADED_TCP_RTT_P50_NS, 1e-6),
        ("TCP added (ms)", m::ADDED_TCP_RTT_P50_NS, 1e-6),
        ("UDP idle p50 (ms)", m::IDLE_UDP_RTT_P50_NS, 1e-6),
        ("UDP loaded p50 (ms)", m::LOADED_UDP_RTT_P50_NS, 1e-6),
        ("UDP added (ms)", m::ADDED_UDP_RTT_P50_NS, 1e-6),
        ("RPM loaded", m::RPM_LOADED, 1.0),
        ("Upload (Mbit/s)", m::UPLOAD_BPS, 1e-6),
        ("Download (Mbit/s)", m::DOWNLOAD_BPS, 1e-6),
    ];
    let mut rows = Vec::new();
    for (sys, campaign) in data.campaigns.iter().enumerate() {
        let sizes: BTreeSet<u32> = campaign
            .runs
            .iter()
            .filter(|r| r.counts() && is_rrul(r))
            .map(|r| r.payload_bytes)
            .collect();
        for size in sizes {
            for family in [Family::V4, Family::V6] {
                let runs: Vec<&RunRow> = campaign
                    .runs
                    .iter()
                    .filter(|r| r.counts() && is_rrul(r))
                    .filter(|r| r.payload_bytes == size && r.family == family)
                    .collect();
                if runs.is_empty() {
                    continue;
                }
                let mut row: Vec<Cell> = vec![
                    systems.get(sys).cloned().unwrap_or_default().into(),
                    size.to_string().into(),
                    family.to_string().into(),
                    runs.len().to_string().into(),
                ];
                for (_, metric, scale) in cols {
                    let v: Vec<f64> = runs
                        .iter()
                        .filter_map(|r| r.metrics.get(metric).copied())
                        .filter(|v| v.is_finite())
                        .collect();
                    row.push(if v.is_empty() {
                        Cell::from("–")
                    } else {
                        let mean = v.iter().sum::<f64>() / v.len() as f64 * scale;
                        Cell::Num {
                            text: num(mean),
                            value: mean,
                        }
                    });
                }
                rows.push(row);
            }
        }
    }
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        id: "rrul".into(),
        title: "Latency under load (rrul): means over the counted runs".into(),
        columns: ["System", "Load write (bytes)", "IP", "Runs"]
            .into_iter()
            .map(String::from)
            .chain(cols.iter().map(|c| c.0.to_string()))
            .collect(),
        rows,
        note: Some(format!(
            "Per run: the median RTT of the UDP and TCP request/response probes (on their own flows) idle and beside the load, the latency the load added (loaded median − idle median; negative when the load added less than the idle spread), responsiveness in round trips per minute (60 s / the TCP probes' 95 % trimmed mean RTT, as {} aggregates probes, from TCP request/response probes only: not networkQuality's figure), and the goodput of the load streams at their receivers. IPv4 and IPv6 are compared with significance tests in the sections of the loaded RTT, RPM and goodput.",
            m::RPM_REFERENCE
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn run_with_ladder(loaded: bool, udp: bool, ladder_ns: &[f64]) -> RunRow {
        let mut r = fixture::dataset().campaigns[0]
            .runs
            .iter()
            .find(|r| r.kind == TestKind::Rrul)
            .unwrap()
            .clone();
        for (&p, &v) in m::RTT_LADDER_PCT.iter().zip(ladder_ns) {
            r.metrics.insert(m::rtt_ladder_name(loaded, udp, p), v);
        }
        r
    }

    #[test]
    fn the_cdf_is_the_rung_by_rung_mean_of_the_runs_ladders() {
        let n = m::RTT_LADDER_PCT.len();
        let a: Vec<f64> = (0..n).map(|i| 1e6 * (i + 1) as f64).collect();
        let b: Vec<f64> = (0..n).map(|i| 3e6 * (i + 1) as f64).collect();
        let (ra, rb) = (
            run_with_ladder(true, false, &a),
            run_with_ladder(true, false, &b),
        );
        // A run without a whole ladder is left out, not counted as zeros.
        let mut partial = ra.clone();
        partial.metrics.remove(&m::rtt_ladder_name(true, false, 50));
        let (mean, runs) = mean_ladder(&[&ra, &rb, &partial], true, false).unwrap();
        assert_eq!(runs, 2);
        for (i, v) in mean.iter().enumerate() {
            assert!((v - 2.0 * (i + 1) as f64).abs() < 1e-12, "rung {i}: {v} ms");
        }
        let steps = cdf_steps(&mean);
        assert_eq!(steps.len(), n);
        // Steps join end to start, rise in share, and end at 100 % at the maximum.
        for w in steps.windows(2) {
            assert_eq!(w[0].1, w[1].0);
            assert!(w[0].2 < w[1].2);
        }
        assert_eq!(steps.last().unwrap().2, 100.0);
        assert_eq!(steps.last().unwrap().0, mean[n - 1]);
    }

    #[test]
    fn fixture_figures_draw_both_phases_for_every_system_and_family() {
        let data = fixture::dataset_with_series();
        let systems = vec!["Linux".to_string(), "Windows".to_string()];
        let figs = figures(&data, &systems);
        for size in fixture::SIZES {
            for probe in ["tcp", "udp"] {
                let id = format!("rrul-{size}-rtt-cdf-{probe}");
                let f = figs.iter().find(|f| f.id == id).expect(&id);
                // 2 systems × 2 IP versions × idle and loaded.
                assert_eq!(f.svg.matches("<g class=\"series\"").count(), 8, "{id}");
                assert!(f.svg.contains("IPv6 idle · 5 runs"), "{id}");
            }
        }
        // Over time: the default selection's sizes (the smallest and the largest).
        for trace in ["rtt-tcp", "rtt-udp", "upload", "download"] {
            assert!(figs
                .iter()
                .any(|f| f.id == format!("rrul-128-{trace}-timeseries")));
            assert!(figs
                .iter()
                .any(|f| f.id == format!("rrul-1408-{trace}-timeseries")));
            assert!(!figs
                .iter()
                .any(|f| f.id == format!("rrul-640-{trace}-timeseries")));
        }
    }

    #[test]
    fn over_time_values_are_the_samples_rates_and_mean_rtts() {
        let s = LoadedSample {
            start_ns: 1_000_000_000,
            end_ns: 1_200_000_000,
            upload_sent_bytes: Some(2_500_000.0),
            tcp_rtt: Some((9_000_000.0, 3.0)),
            udp_rtt: Some((0.0, 0.0)),
            ..LoadedSample::default()
        };
        assert_eq!(Trace::Upload.value(&s), Some(100.0), "2.5 MB in 0.2 s");
        assert_eq!(Trace::Download.value(&s), None);
        assert_eq!(Trace::Rtt { udp: false }.value(&s), Some(3.0), "ms");
        assert_eq!(
            Trace::Rtt { udp: true }.value(&s),
            None,
            "no probe answered"
        );
    }

    #[test]
    fn the_table_has_a_row_per_cell_and_added_is_loaded_minus_idle() {
        let data = fixture::dataset();
        let systems = vec!["Linux".to_string(), "Windows".to_string()];
        let t = table(&data, &systems).unwrap();
        assert_eq!(t.rows.len(), 2 * fixture::SIZES.len() * 2);
        let col = |name: &str| t.columns.iter().position(|c| c == name).unwrap();
        let num = |c: &Cell| match c {
            Cell::Num { value, .. } => *value,
            Cell::Text(t) => panic!("not a number: {t}"),
        };
        for row in &t.rows {
            assert_eq!(row[col("Runs")].text(), "5", "warm-ups are not counted");
            for p in ["TCP", "UDP"] {
                let idle = num(&row[col(&format!("{p} idle p50 (ms)"))]);
                let loaded = num(&row[col(&format!("{p} loaded p50 (ms)"))]);
                let added = num(&row[col(&format!("{p} added (ms)"))]);
                assert!((loaded - idle - added).abs() < 1e-9, "{row:?}");
            }
        }
        let mut none = data.clone();
        for c in &mut none.campaigns {
            c.runs.retain(|r| r.kind != TestKind::Rrul);
        }
        assert!(table(&none, &systems).is_none());
        assert!(figures(&none, &systems).is_empty());
    }
}
