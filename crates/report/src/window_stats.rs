//! Per-window statistics over time (`--stats-window`, as D-ITG's ITGDec decodes its
//! logs): for the runs drawn over time that have them, one figure per cell and quantity
//! — goodput, loss and mean one-way delay per window — with a step line per system and
//! IP version, styled as the interval time series ([`crate::timeseries`]).
//!
//! A window is a span of the sender's send time: its datagrams are counted there however
//! late they arrived, so loss per window is exact, and the goodput of a window is the
//! bytes of its datagrams that arrived over its width. A quantity no window of a run has
//! (one-way delay where the clocks could not be tied, loss where nothing was sent) draws
//! no line for that run; a figure with no line is left out.

use crate::dataset::{Dataset, RunRow, RunSeries, WindowSample};
use crate::svg::Figure;
use crate::timeseries::{cell_key, render, runs_direction, test_title, CellKey, LineSet};
use std::collections::BTreeMap;
use wire::spec::{Direction, Family, TestKind};

/// What one figure shows of each window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    Goodput,
    Loss,
    Delay,
}

impl Quantity {
    const ALL: [Quantity; 3] = [Quantity::Goodput, Quantity::Loss, Quantity::Delay];
    fn value(self, w: &WindowSample) -> Option<f64> {
        match self {
            Quantity::Goodput => w.bitrate_bps.map(|b| b / 1e6),
            Quantity::Loss => w.loss_pct,
            Quantity::Delay => w.owd_mean_ns.map(|d| d / 1e3),
        }
    }
    /// (id part, axis quantity, unit).
    fn axis(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Quantity::Goodput => ("goodput", "Goodput per window", "Mbit/s"),
            Quantity::Loss => ("loss", "Loss per window", "%"),
            Quantity::Delay => ("owd", "Mean one-way delay per window", "µs"),
        }
    }
    fn note(self) -> &'static str {
        match self {
            Quantity::Goodput => "Goodput: the bytes of the window's datagrams that arrived, over the window's width.",
            Quantity::Loss => "Loss: the share of the window's datagrams that never arrived (RFC 4737 counting), exact per window.",
            Quantity::Delay => "One-way delay: arrival on the receiver's clock minus the send stamp, corrected by the clock offset measured before the run (measured even with both ends on one host); a window without a figure has no step.",
        }
    }
}

/// A run's windows as steps (start s, end s, value) of `q`, windows without a value
/// left out.
fn steps(windows: &[WindowSample], q: Quantity) -> Vec<(f64, f64, f64)> {
    windows
        .iter()
        .filter(|w| w.end_ns > w.start_ns)
        .filter_map(|w| Some((w.start_ns as f64 / 1e9, w.end_ns as f64 / 1e9, q.value(w)?)))
        .collect()
}

/// The per-window figures of `data`'s drawn runs; `systems` are the campaigns' display
/// names (as in [`crate::Analysis::systems`]).
pub fn figures(data: &Dataset, systems: &[String]) -> Vec<Figure> {
    type Member<'a> = (usize, &'a RunRow, &'a RunSeries);
    let mut groups: BTreeMap<CellKey, Vec<Member>> = BTreeMap::new();
    for (sys, campaign) in data.campaigns.iter().enumerate() {
        for series in campaign.series.iter().filter(|s| !s.windows.is_empty()) {
            if let Some(run) = campaign.runs.get(series.run_index) {
                groups
                    .entry(cell_key(run))
                    .or_default()
                    .push((sys, run, series));
            }
        }
    }
    let mut out = Vec::new();
    for ((k, d, size), mut members) in groups {
        members.sort_by_key(|(sys, run, s)| (*sys, run.family == Family::V6, s.run_id));
        let (kind, direction) = (TestKind::ALL[k], runs_direction(d));
        for q in Quantity::ALL {
            out.extend(figure(kind, direction, size, q, &members, systems));
        }
    }
    out
}

fn figure(
    kind: TestKind,
    direction: Direction,
    size: u32,
    q: Quantity,
    members: &[(usize, &RunRow, &RunSeries)],
    systems: &[String],
) -> Option<Figure> {
    let many_systems = members.iter().any(|m| m.0 != members[0].0);
    let mut set = LineSet::new(many_systems, systems);
    let mut width_ms = None;
    for &(sys, run, series) in members {
        let drawn = steps(&series.windows, q);
        if drawn.is_empty() {
            continue;
        }
        width_ms = width_ms.or_else(|| {
            let w = series.windows.first()?;
            Some((w.end_ns - w.start_ns) as f64 / 1e6)
        });
        set.push((sys, run, series.run_id), drawn);
    }
    let lines = set.lines;
    if lines.is_empty() {
        return None;
    }
    let (id_part, quantity, unit) = q.axis();
    let id = format!(
        "{}-windows-{id_part}",
        crate::timeseries::cell_id(kind, direction, size)
    );
    let title = format!(
        "{} at {size} bytes: {} per window of send time",
        test_title(kind, direction),
        quantity.trim_end_matches(" per window").to_lowercase()
    );
    let note = format!(
        "Each step is one window of {} ms of the sender's send time (--stats-window), for the datagrams sent in it, however late they arrived. {} Runs (ids in the legend): those drawn over time (the median run of each system and IP version, or those chosen with --timeseries).",
        width_ms.map_or("?".to_string(), |w| format!("{w}")),
        q.note()
    );
    Some(render(
        &id,
        title,
        ("Send time since the data phase started (s)", quantity, unit),
        &lines,
        &note,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::CampaignData;

    fn windows(n: usize, owd: bool) -> Vec<WindowSample> {
        (0..n)
            .map(|i| WindowSample {
                start_ns: i as i64 * 100_000_000,
                end_ns: (i as i64 + 1) * 100_000_000,
                bitrate_bps: Some(8e6 + i as f64 * 1e5),
                loss_pct: Some(if i == 2 { 10.0 } else { 0.0 }),
                jitter_ns: Some(500.0),
                owd_mean_ns: owd.then_some(20_000.0 + i as f64),
            })
            .collect()
    }

    fn dataset(with_owd: [bool; 2]) -> Dataset {
        let mut c: CampaignData = crate::fixture::crafted(
            &["S"],
            &[
                (
                    0,
                    Family::V4,
                    TestKind::UdpStream,
                    640,
                    "throughput_bps",
                    &[1e7],
                ),
                (
                    0,
                    Family::V6,
                    TestKind::UdpStream,
                    640,
                    "throughput_bps",
                    &[1e7],
                ),
            ],
        )
        .campaigns
        .remove(0);
        let v4 = c.runs.iter().position(|r| r.family == Family::V4).unwrap();
        let v6 = c.runs.iter().position(|r| r.family == Family::V6).unwrap();
        c.series = [(v4, with_owd[0]), (v6, with_owd[1])]
            .into_iter()
            .map(|(i, owd)| RunSeries {
                run_index: i,
                run_id: 10 + i as i64,
                samples: Vec::new(),
                windows: windows(5, owd),
                loaded: Vec::new(),
            })
            .collect();
        Dataset { campaigns: vec![c] }
    }

    #[test]
    fn one_figure_per_quantity_with_a_line_per_ip_version() {
        let figs = figures(&dataset([true, true]), &["S".into()]);
        let ids: Vec<&str> = figs.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "udp-stream-640-windows-goodput",
                "udp-stream-640-windows-loss",
                "udp-stream-640-windows-owd",
            ]
        );
        for f in &figs {
            assert_eq!(f.svg.matches("<g class=\"series\"").count(), 2, "{}", f.id);
            assert!(f.svg.contains("Send time since the data phase started (s)"));
            assert!(f.svg.contains("one window of 100 ms"), "{}", f.svg);
        }
    }

    #[test]
    fn a_run_without_a_quantity_draws_no_line_for_it_and_no_empty_figure() {
        // IPv6 has no one-way delay: its delay figure has one line (IPv4's).
        let figs = figures(&dataset([true, false]), &["S".into()]);
        let owd = figs.iter().find(|f| f.id.ends_with("owd")).unwrap();
        assert_eq!(owd.svg.matches("<g class=\"series\"").count(), 1);
        // Neither has it: no delay figure at all.
        let figs = figures(&dataset([false, false]), &["S".into()]);
        assert!(figs.iter().all(|f| !f.id.ends_with("owd")));
        assert_eq!(figs.len(), 2);
    }

    #[test]
    fn loss_never_draws_above_100_percent() {
        let m: BTreeMap<String, f64> = [
            ("window_loss_pct".to_string(), 250.0),
            ("window_bitrate_bps".to_string(), -1.0),
        ]
        .into();
        let w = WindowSample::from_metrics(0, 100, &m).unwrap();
        assert_eq!(w.loss_pct, Some(100.0));
        assert_eq!(w.bitrate_bps, None, "a negative count is not a figure");
        let interval: BTreeMap<String, f64> = [("sent_bytes".to_string(), 1.0)].into();
        assert_eq!(WindowSample::from_metrics(0, 100, &interval), None);
    }
}
