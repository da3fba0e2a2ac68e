//! Hand-written SVG figures: a metric against packet size, one line per (system, IP
//! version), mean with confidence-interval error bars. Deterministic output (fixed
//! number formatting, no randomness) so figures are snapshot-testable.

mod figures;
mod frame;
mod legend;
mod marks;
mod plot;
mod scale;
mod series;
mod text;

pub use figures::{figure, percentile_figure};
pub(crate) use frame::{axes, figure_close, figure_open, y_grid};
pub(crate) use legend::{legend_entry, legend_layout};
pub(crate) use marks::{colour_of, marker, Mark};
pub use scale::{nice_ticks, LOG_AXIS_SPREAD};
pub(crate) use scale::{tick_label, y_axis};
pub use series::MAX_DOTS_PER_CELL;
pub(crate) use text::capitalise_first;
pub use text::{text_width, wrap};

/// Design width. Small on purpose: the page scales a figure to its column, and at a
/// 400 px phone page (~360 px of column) the 16-unit axis text still reads at ≥ 11 px.
pub const WIDTH: f64 = 480.0;
pub(crate) const RIGHT: f64 = 14.0;
pub(crate) const PLOT_HEIGHT: f64 = 230.0;
/// Axis and legend text size (viewBox units).
pub const AXIS_FONT: f64 = 16.0;
// At a 400 px page the figure column is about 360 px wide: axis text ≥ 11 px there.
const _: () = assert!(AXIS_FONT * 360.0 / WIDTH >= 11.0);
pub(crate) const TITLE_FONT: f64 = 17.0;
pub(crate) const NOTE_FONT: f64 = 15.0;
pub(crate) const FONT: &str = "DejaVu Sans, Verdana, sans-serif";

/// One figure of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// File-name slug, e.g. `tcp-throughput`.
    pub id: String,
    pub title: String,
    pub svg: String,
}

/// Fixed two-decimal coordinates keep the output stable and small. A coordinate is
/// always a finite number well outside any figure at most: whatever a caller computed,
/// no path or attribute says `inf` or `NaN` (values that are not drawable are left out
/// before, by [`drawable`]; this is the last guard).
pub(crate) fn c(v: f64) -> String {
    let v = if v.is_finite() {
        v.clamp(-MAX_COORD, MAX_COORD)
    } else {
        0.0
    };
    format!("{v:.2}")
}

/// The farthest a coordinate goes from the figure (viewBox units).
const MAX_COORD: f64 = 1e5;

/// The largest value any figure draws, in the view's unit (Mbit/s, µs, …): beyond it a
/// stored value is garbage (a corrupt row, an import), and its axis labels would not fit.
pub const MAX_DRAWN: f64 = 1e12;

/// The most CPUs a host is taken to have: a CPU percentage (100 per busy core) above
/// 100 × this is impossible and not drawn.
pub const MAX_CPUS: f64 = 8192.0;

/// Whether a value of `metric` can be drawn: finite, not negative (every metric drawn
/// is a count, rate, time or share), a percentage of loss or of one core at most 100,
/// a CPU percentage at most 100 × [`MAX_CPUS`], anything else at most [`MAX_DRAWN`].
/// What is not drawable is left out of the figure (the tables still show it).
pub fn drawable(metric: &str, v: f64) -> bool {
    let max = if metric == wire::metrics::LOSS_PCT || metric.ends_with("busiest_core_pct") {
        100.0
    } else if metric.starts_with("cpu_") {
        100.0 * MAX_CPUS
    } else {
        MAX_DRAWN
    };
    v.is_finite() && (0.0..=max).contains(&v)
}

/// The most lines a legend entry takes; a longer label ends with "…".
pub const LEGEND_MAX_LINES: usize = 2;
/// The most lines of a figure's title.
pub const TITLE_MAX_LINES: usize = 3;
/// The most lines of the note under a figure.
pub const NOTE_MAX_LINES: usize = 12;
/// The most characters of a label kept in an attribute (`data-label`) or `<title>`.
pub const ATTR_MAX_CHARS: usize = 300;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            nice_ticks(0.0, 97.3, 6),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        let t = nice_ticks(0.0, 0.043, 5);
        assert!(t.first().is_some_and(|v| *v <= 0.0));
        assert!(t.last().is_some_and(|v| *v >= 0.043));
        assert_eq!(tick_label(0.01, 0.01), "0.01");
        assert_eq!(nice_ticks(5.0, 5.0, 6), vec![5.0]);
    }
}

#[cfg(test)]
mod figure_tests {
    use super::series::dots_of;
    use super::*;
    use crate::analysis::{analyse, AnalysisOptions};
    use crate::fixture::crafted;
    use wire::metrics::{CPU_LOCAL_PCT, LOSS_PCT, THROUGHPUT_BPS};
    use wire::spec::{Family::V4, Family::V6, TestKind::TcpStream, TestKind::UdpStream};

    fn ticks(svg: &str, class: &str) -> Vec<String> {
        svg.split(&format!("<text class=\"{class}\""))
            .skip(1)
            .filter_map(|t| t.split('>').nth(1))
            .filter_map(|t| t.split('<').next())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn an_interval_crossing_zero_is_clipped_at_the_axis_with_a_mark() {
        // Loss 0,0,0,0,5 %: mean 1, CI half-width ≈ 2.8 → would reach −1.8.
        let d = crafted(
            &["S"],
            &[
                (0, V4, UdpStream, 128, LOSS_PCT, &[0.0, 0.0, 0.0, 0.0, 5.0]),
                (0, V6, UdpStream, 128, LOSS_PCT, &[0.0, 0.0, 0.0, 0.0, 0.0]),
            ],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let vd = a.views.iter().find(|v| v.view.metric == LOSS_PCT);
        let svg = figure(vd.unwrap_or(&a.views[0]), 0.95).svg;
        let y = ticks(&svg, "ytick");
        assert_eq!(y.first().map(String::as_str), Some("0"), "{y:?}");
        assert!(y.iter().all(|t| !t.starts_with('-')), "{y:?}");
        assert!(svg.contains("class=\"clipped\""), "no clip mark");
        // The note may wrap anywhere: look for its words.
        assert!(
            svg.contains("chevron") && svg.contains("cut at the axis"),
            "no note on the mark"
        );
    }

    /// A process's CPU lies within 100 % per core of its host: with 2-core clients the
    /// axis ends at 200 and an error bar reaching past it is cut there; when a campaign
    /// does not record its cores, the axis has no cap.
    #[test]
    fn process_cpu_axis_ends_at_cores_times_100() {
        use wire::metrics::PROC_LOCAL_PCT;
        let cells: &[crate::fixture::CraftedCell] = &[
            (
                0,
                V4,
                TcpStream,
                128,
                PROC_LOCAL_PCT,
                &[199.0, 180.0, 170.0],
            ),
            (
                0,
                V6,
                TcpStream,
                128,
                PROC_LOCAL_PCT,
                &[190.0, 195.0, 199.0],
            ),
        ];
        let mut d = crafted(&["S"], cells);
        d.campaigns[0]
            .hosts
            .entry("client".into())
            .or_default()
            .insert("cpu.cores".into(), "2".into());
        let a = analyse(&d, AnalysisOptions::default());
        let vd = a
            .views
            .iter()
            .find(|v| v.view.metric == PROC_LOCAL_PCT)
            .unwrap();
        assert_eq!(vd.value_cap, Some(200.0));
        let svg = figure(vd, 0.95).svg;
        let top: f64 = ticks(&svg, "ytick").last().unwrap().parse().unwrap();
        assert!((150.0..=200.0).contains(&top), "{top}");
        assert!(
            svg.contains("class=\"clipped\""),
            "the IPv4 bar passes 200: no clip mark"
        );

        let d = crafted(&["S"], cells);
        let a = analyse(&d, AnalysisOptions::default());
        let vd = a
            .views
            .iter()
            .find(|v| v.view.metric == PROC_LOCAL_PCT)
            .unwrap();
        assert_eq!(vd.value_cap, None, "no cores recorded: no cap");
        assert!(!figure(vd, 0.95).svg.contains("class=\"clipped\""));
    }

    /// Every run's value is drawn as a dot (strip plot) at its own height: a cell of
    /// runs 10, 20, 30 has three dots, and the axis reaches the highest run.
    #[test]
    fn each_run_is_a_dot_and_the_axis_covers_the_highest_run() {
        let d = crafted(
            &["S"],
            &[
                (0, V4, UdpStream, 128, LOSS_PCT, &[10.0, 20.0, 30.0]),
                (0, V6, UdpStream, 128, LOSS_PCT, &[1.0, 1.0, 90.0]),
            ],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let vd = a.views.iter().find(|v| v.view.metric == LOSS_PCT).unwrap();
        let svg = figure(vd, 0.95).svg;
        assert_eq!(svg.matches("class=\"run\"").count(), 6);
        let top: f64 = ticks(&svg, "ytick").last().unwrap().parse().unwrap();
        assert!((90.0..=100.0).contains(&top), "{top}");
        assert!(svg.contains("each run"));
    }

    /// The percentile figure: p50, p99 and p99.9 lines per IP version (solid, dashed,
    /// dotted), one dot per run, and a run far beyond the medians marked at the top
    /// instead of flattening the lines.
    #[test]
    fn rtt_percentiles_draw_three_lines_per_version_and_mark_an_outlier() {
        use wire::metrics::{RTT_MEAN_NS, RTT_P50_NS, RTT_P999_NS, RTT_P99_NS};
        let mut d = crafted(
            &["S"],
            &[
                (
                    0,
                    V4,
                    wire::spec::TestKind::UdpRr,
                    128,
                    RTT_MEAN_NS,
                    &[50e3, 52e3, 54e3],
                ),
                (
                    0,
                    V6,
                    wire::spec::TestKind::UdpRr,
                    128,
                    RTT_MEAN_NS,
                    &[60e3, 61e3, 62e3],
                ),
            ],
        );
        for (i, run) in d.campaigns[0].runs.iter_mut().enumerate() {
            let mean = run.metrics[RTT_MEAN_NS];
            run.metrics.insert(RTT_P50_NS.into(), mean * 0.9);
            run.metrics.insert(RTT_P99_NS.into(), mean * 2.0);
            let p999 = if i == 0 { mean * 100.0 } else { mean * 3.0 };
            run.metrics.insert(RTT_P999_NS.into(), p999);
        }
        let a = analyse(&d, AnalysisOptions::default());
        let vd = a
            .views
            .iter()
            .find(|v| v.view.metric == RTT_MEAN_NS)
            .unwrap();
        let pct = crate::analysis::rtt_percentiles(&d, vd);
        assert_eq!(pct.len(), 3, "p50, p99, p99.9 (no p90 stored)");
        let fig = percentile_figure(vd, &pct).unwrap();
        assert_eq!(fig.svg.matches("<g class=\"series\"").count(), 6);
        // p50 to p99.9 span far more than 10x (and one run's p99.9 is 100x its mean):
        // a logarithmic axis shows every line and every run, p50 off the floor.
        assert!(
            fig.svg.contains("<desc>The y axis is logarithmic.</desc>"),
            "{}",
            fig.svg
        );
        assert_eq!(fig.svg.matches("class=\"run above\"").count(), 0);
        assert_eq!(fig.svg.matches("class=\"run\"").count(), 18, "18 runs");
        assert!(fig.svg.contains("stroke-dasharray=\"2 3\""), "p99.9 dotted");
        let ticks: Vec<f64> = ticks(&fig.svg, "ytick")
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        // Medians in µs from 0.9 × 50 = 45 to the 5 ms outlier: decades 10 … 10 000.
        assert_eq!(ticks.first(), Some(&10.0), "{ticks:?}");
        assert_eq!(ticks.last(), Some(&10_000.0), "{ticks:?}");
    }

    #[test]
    fn series_an_order_of_magnitude_apart_get_a_log_axis_said_in_the_caption() {
        // Issue 29: two systems 30-100x apart shared a linear axis, one lying flat on 0.
        let fast = [7000e6, 7100e6, 6900e6];
        let slow = [100e6, 101e6, 99e6];
        let d = crafted(
            &["fast", "slow"],
            &[
                (0, V4, TcpStream, 128, THROUGHPUT_BPS, &fast),
                (0, V6, TcpStream, 128, THROUGHPUT_BPS, &fast),
                (1, V4, TcpStream, 128, THROUGHPUT_BPS, &slow),
                (1, V6, TcpStream, 128, THROUGHPUT_BPS, &slow),
            ],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let svg = figure(&a.views[0], 0.95).svg;
        assert!(
            svg.contains("<desc>The y axis is logarithmic.</desc>"),
            "{svg}"
        );
        assert!(
            svg.replace("</tspan>", "").contains("logarithmic"),
            "said in the note"
        );
        // Within a factor of 10: linear from 0.
        let d = crafted(
            &["S"],
            &[
                (0, V4, TcpStream, 128, THROUGHPUT_BPS, &fast),
                (0, V6, TcpStream, 128, THROUGHPUT_BPS, &fast),
            ],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let svg = figure(&a.views[0], 0.95).svg;
        assert!(!svg.contains("logarithmic"));
        assert_eq!(ticks(&svg, "ytick").first().map(String::as_str), Some("0"));
    }

    #[test]
    fn capped_series_an_order_of_magnitude_apart_get_a_log_axis_too() {
        // Issue 41: process CPU at ~2 % on one system and ~100 % on the other kept a
        // linear 0–100 % axis (capped axes were exempt), one system's lines on the floor.
        let d = crafted(
            &["a", "b"],
            &[
                (0, V4, TcpStream, 128, CPU_LOCAL_PCT, &[2.0, 2.1, 1.9]),
                (0, V6, TcpStream, 128, CPU_LOCAL_PCT, &[2.0, 2.2, 1.8]),
                (1, V4, TcpStream, 128, CPU_LOCAL_PCT, &[99.0, 98.0, 97.0]),
                (1, V6, TcpStream, 128, CPU_LOCAL_PCT, &[99.0, 98.5, 97.5]),
            ],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let vd = &a.views[0];
        assert_eq!(vd.value_cap, Some(100.0));
        let svg = figure(vd, 0.95).svg;
        assert!(svg.contains("<desc>The y axis is logarithmic.</desc>"));
        assert!(svg.replace("</tspan>", "").contains("logarithmic"));
        let top: Vec<f64> = ticks(&svg, "ytick")
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        assert_eq!(top.last(), Some(&100.0), "{top:?}");
    }

    #[test]
    fn a_cell_of_many_runs_draws_a_bounded_number_of_dots() {
        // Issue 28: a report of a million runs drew every run (784 MB of figures).
        let many: Vec<f64> = (0..50_000).map(|i| 100e6 + (i % 97) as f64 * 1e5).collect();
        let d = crafted(
            &["S"],
            &[
                (0, V4, TcpStream, 128, THROUGHPUT_BPS, &many),
                (0, V6, TcpStream, 128, THROUGHPUT_BPS, &many),
            ],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let svg = figure(&a.views[0], 0.95).svg;
        assert_eq!(svg.matches("class=\"run\"").count(), 2 * MAX_DOTS_PER_CELL);
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
        assert!(
            svg.replace("</tspan><tspan", " ").contains("evenly") || svg.contains("quantiles"),
            "the caption says so"
        );
        let (dots, thinned) = dots_of((0..1000).map(f64::from).collect());
        assert!(thinned && dots.len() == MAX_DOTS_PER_CELL);
        assert_eq!(
            (dots[0], dots[MAX_DOTS_PER_CELL - 1]),
            (0.0, 999.0),
            "min and max kept"
        );
    }

    #[test]
    fn host_cpu_axes_end_at_100_percent() {
        let busy = [99.0, 99.5, 98.7];
        let d = crafted(
            &["S"],
            &[
                (0, V4, TcpStream, 128, wire::metrics::CPU_LOCAL_PCT, &busy),
                (0, V6, TcpStream, 128, wire::metrics::CPU_LOCAL_PCT, &busy),
            ],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let svg = figure(&a.views[0], 0.95).svg;
        let ticks: Vec<f64> = ticks(&svg, "ytick")
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        assert_eq!(ticks.last(), Some(&100.0), "{ticks:?}");
    }

    #[test]
    fn loss_never_goes_above_100_percent() {
        let d = crafted(
            &["S"],
            &[
                (
                    0,
                    V4,
                    UdpStream,
                    128,
                    LOSS_PCT,
                    &[100.0, 100.0, 40.0, 100.0],
                ),
                (0, V6, UdpStream, 128, LOSS_PCT, &[90.0, 99.0, 98.0, 97.0]),
            ],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let svg = figure(&a.views[0], 0.95).svg;
        let y: Vec<f64> = ticks(&svg, "ytick")
            .iter()
            .filter_map(|t| t.parse().ok())
            .collect();
        assert!(y.iter().all(|v| *v <= 100.0) && y.contains(&100.0), "{y:?}");
        assert!(svg.contains("class=\"clipped\""));
    }

    #[test]
    fn six_systems_get_six_colours_six_markers_and_long_legends_stay_inside() {
        let long = "A system with a remarkably long label that no legend row can hold in one line";
        let labels: Vec<String> = (0..6)
            .map(|i| {
                if i == 2 {
                    long.to_string()
                } else {
                    format!("System {i}")
                }
            })
            .collect();
        let label_refs: Vec<&str> = labels.iter().map(String::as_str).collect();
        let v = [1e8, 1.1e8, 0.9e8];
        let cells: Vec<_> = (0..6)
            .flat_map(|s| {
                [
                    (s, V4, TcpStream, 128, THROUGHPUT_BPS, &v[..]),
                    (s, V6, TcpStream, 128, THROUGHPUT_BPS, &v[..]),
                ]
            })
            .collect();
        let a = analyse(&crafted(&label_refs, &cells), AnalysisOptions::default());
        let svg = figure(&a.views[0], 0.95).svg;
        let colours: std::collections::BTreeSet<&str> = svg
            .split("data-colour=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .collect();
        // One colour and one marker shape per system; the IP version is the line style.
        assert_eq!(colours.len(), 6, "{colours:?}");
        assert_eq!(svg.matches("<g class=\"legend\">").count(), 12);
        let shapes: std::collections::BTreeSet<String> = svg
            .split("<g class=\"legend\">")
            .skip(1)
            .filter_map(|g| g.split("class=\"marker\"").nth(1))
            .map(|m| {
                m.split('"')
                    .nth(1)
                    .unwrap_or("")
                    .chars()
                    .filter(|c| c.is_alphabetic())
                    .collect()
            })
            .collect();
        assert!(shapes.len() >= 4, "marker shapes per system: {shapes:?}");
        // Every legend text line fits in the width; the figure is tall enough for all.
        let height: f64 = svg
            .split("height=\"")
            .nth(1)
            .and_then(|h| h.split('"').next())
            .and_then(|h| h.parse().ok())
            .unwrap_or(0.0);
        for g in svg.split("<g class=\"legend\">").skip(1) {
            let g = g.split("</g>").next().unwrap_or("");
            for span in g.split("<tspan x=\"").skip(1) {
                let x: f64 = span
                    .split('"')
                    .next()
                    .and_then(|x| x.parse().ok())
                    .unwrap_or(-1.0);
                let text = span
                    .split('>')
                    .nth(1)
                    .and_then(|t| t.split('<').next())
                    .unwrap_or("");
                assert!(
                    x >= 0.0 && x + text_width(text, AXIS_FONT) <= WIDTH,
                    "{text} at {x}"
                );
            }
            let y: f64 = g
                .split("y1=\"")
                .nth(1)
                .and_then(|y| y.split('"').next())
                .and_then(|y| y.parse().ok())
                .unwrap_or(f64::INFINITY);
            assert!(
                y < height,
                "legend entry at {y} below the figure ({height})"
            );
        }
        assert!(svg.contains("no legend row"), "the long label was lost");
    }

    /// A stored CPU of 1e308 % (and of −5 %, and ∞) and an infinite or negative
    /// throughput are not drawn: no path or coordinate says inf or NaN, the axis stays
    /// at the sane runs' scale, and the sane runs are all drawn.
    #[test]
    fn impossible_and_non_finite_values_are_not_drawn() {
        use wire::metrics::CPU_LOCAL_PCT;
        let cpu = [30.0, 1e308, 31.0, -5.0, f64::INFINITY, 32.0];
        let bps = [9e8, f64::INFINITY, 9.1e8, -1e8, f64::NAN, 9.2e8];
        let d = crafted(
            &["S"],
            &[
                (0, V4, TcpStream, 128, CPU_LOCAL_PCT, &cpu[..]),
                (0, V6, TcpStream, 128, CPU_LOCAL_PCT, &[40.0, 41.0, 42.0]),
                (0, V4, UdpStream, 128, THROUGHPUT_BPS, &bps[..]),
                (
                    0,
                    V6,
                    UdpStream,
                    128,
                    THROUGHPUT_BPS,
                    &[f64::NEG_INFINITY, -1.0],
                ),
            ],
        );
        let a = analyse(&d, AnalysisOptions::default());
        assert!(a.views.len() >= 2);
        for vd in &a.views {
            let svg = figure(vd, 0.95).svg;
            for bad in ["inf", "NaN"] {
                assert!(!svg.contains(bad), "{} has {bad}:\n{svg}", vd.view.id);
            }
            let top: f64 = ticks(&svg, "ytick").last().unwrap().parse().unwrap();
            // The axis follows the sane values and their intervals, not 1e308.
            assert!(top <= 10_000.0, "{}: axis to {top}", vd.view.id);
            // The three sane runs of each drawn IPv4 cell are dots.
            assert!(svg.matches("class=\"run\"").count() >= 3, "{}", vd.view.id);
        }
        assert_eq!(c(f64::NEG_INFINITY), "0.00");
        assert_eq!(c(f64::NAN), "0.00");
        assert_eq!(c(-1e300), "-100000.00");
        assert!(drawable(CPU_LOCAL_PCT, 400.0) && !drawable(CPU_LOCAL_PCT, 1e308));
        assert!(!drawable(LOSS_PCT, 100.5) && !drawable(THROUGHPUT_BPS, -1.0));
    }

    #[test]
    fn a_megabyte_label_is_wrapped_to_two_lines_fast() {
        let long = wire::text::hostile_long(1_000_000);
        let lines = wrap(&long, AXIS_FONT, 300.0, LEGEND_MAX_LINES);
        assert_eq!(lines.len(), LEGEND_MAX_LINES, "{lines:?}");
        assert!(lines.iter().all(|l| text_width(l, AXIS_FONT) <= 300.0));
        assert!(lines.last().is_some_and(|l| l.ends_with('…')), "{lines:?}");
    }

    #[test]
    fn wrapping_keeps_every_character() {
        let lines = wrap("abcdefghijklmnopqrstuvwxyz short", 16.0, 100.0, 10);
        assert!(lines.len() > 2, "{lines:?}");
        assert_eq!(
            lines.concat().replace(' ', ""),
            "abcdefghijklmnopqrstuvwxyzshort"
        );
        assert!(lines.iter().all(|l| text_width(l, 16.0) <= 100.0));
    }
}
