//! The figures of a view: the metric against packet size, and the RTT percentiles.

use super::marks::{colour_of, Mark};
use super::plot::render;
use super::series::{dots_of, Series, MAX_DOTS_PER_CELL};
use super::{capitalise_first, drawable, Figure};
use crate::analysis::ViewData;
use wire::spec::Family;

/// Draw one view. `level` is the confidence level of the error bars. Every metric
/// drawn is non-negative: the axis starts at 0 and an error bar that would cross it is
/// clipped there with a chevron; loss is capped at 100 % the same way.
pub fn figure(vd: &ViewData, level: f64) -> Figure {
    let view = &vd.view;
    let title = if view.kind == wire::spec::TestKind::Rrul {
        format!("{} against the load's write size", view.title())
    } else {
        format!("{} against packet size", view.title())
    };
    // Loss and the host's busy CPU lie within 0–100 %, a process's CPU within 100 % per
    // core: the axis ends there.
    let cap = vd.value_cap;
    let mut series = Vec::new();
    let mut many_runs = false;
    for s in 0..vd.systems.len() {
        for (fi, f) in [Family::V4, Family::V6].into_iter().enumerate() {
            let runs: Vec<(u32, Vec<f64>)> = vd
                .sizes
                .iter()
                .filter_map(|&size| {
                    let cell = vd.cell(s, f, size)?;
                    let vals = cell
                        .values
                        .iter()
                        .copied()
                        .filter(|&v| drawable(view.metric, v))
                        .collect();
                    let (vals, thinned) = dots_of(vals);
                    many_runs |= thinned;
                    Some((size, vals))
                })
                .collect();
            let points: Vec<_> = vd
                .sizes
                .iter()
                .filter_map(|&size| {
                    let cell = vd.cell(s, f, size)?;
                    let m = Some(cell.summary.mean).filter(|&m| drawable(view.metric, m))?;
                    let h = cell.summary.ci_half_width(level);
                    let (lo, hi) = if h.is_finite() {
                        (m - h, m + h)
                    } else {
                        (m, m)
                    };
                    let m = cap.map_or(m, |c| m.min(c));
                    let lo_clip = lo < 0.0;
                    let hi_clip = cap.is_some_and(|c| hi > c);
                    let hi = cap.map_or(hi, |c| hi.min(c));
                    Some((size, m, lo.max(0.0), hi, lo_clip, hi_clip))
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            let label = if vd.systems.len() > 1 {
                format!("{} {f}", vd.systems[s])
            } else {
                f.to_string()
            };
            series.push(Series {
                label,
                colour: colour_of(s),
                dash: if fi == 1 { "7 4" } else { "" },
                mark: Mark::of(s, fi == 1),
                points,
                runs,
            });
        }
    }
    render(
        &view.id,
        title,
        (size_axis(view), view.quantity),
        view.unit,
        &vd.sizes,
        &series,
        cap,
        None,
        &format!(
            "Lines: means. Error bars: {:.0}% confidence interval of the mean (Student t). Small dots: each run's value{}.{}",
            level * 100.0,
            if many_runs {
                format!(" (a cell of more than {MAX_DOTS_PER_CELL} runs: {MAX_DOTS_PER_CELL} evenly spaced quantiles of them, min and max included)")
            } else {
                String::new()
            },
            // The loss of an RFC 2544 search is its criterion: the figure says so itself.
            view.criterion
                .as_ref()
                .map(|c| format!(" {}.", capitalise_first(c)))
                .unwrap_or_default()
        ),
    )
}

/// The x axis of a view's figure: the payload per send, or for rrul the load's writes.
fn size_axis(view: &crate::View) -> &'static str {
    if view.kind == wire::spec::TestKind::Rrul {
        "Load: bytes per write of its TCP streams"
    } else {
        "Packet size: payload per send (bytes)"
    }
}

/// The distribution of RTT behind an RTT view: for each system and IP version, the
/// median over runs of each run's p50 and p99 (p99.9 where stored) against packet size,
/// with each run's value as dots. Descriptive: no test is made on it.
pub fn percentile_figure(
    vd: &ViewData,
    percentiles: &[crate::analysis::PercentileCells],
) -> Option<Figure> {
    let view = &vd.view;
    let wanted = ["p50", "p99", "p99.9"];
    let mut series = Vec::new();
    for s in 0..vd.systems.len() {
        for (fi, f) in [Family::V4, Family::V6].into_iter().enumerate() {
            for (li, (label, cells)) in percentiles
                .iter()
                .filter(|(l, _)| wanted.contains(l))
                .enumerate()
            {
                let mut points = Vec::new();
                let mut runs = Vec::new();
                for &size in &vd.sizes {
                    let Some(vals) = cells.get(&(s, f, size)).filter(|v| !v.is_empty()) else {
                        continue;
                    };
                    let mut sorted = vals.clone();
                    sorted.sort_by(f64::total_cmp);
                    let n = sorted.len();
                    let median = if n % 2 == 1 {
                        sorted[n / 2]
                    } else {
                        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
                    };
                    let (runs_drawn, _) = dots_of(
                        vals.iter()
                            .copied()
                            .filter(|&v| drawable(view.metric, v))
                            .collect(),
                    );
                    if drawable(view.metric, median) {
                        points.push((size, median, median, median, false, false));
                    }
                    runs.push((size, runs_drawn));
                }
                if points.is_empty() {
                    continue;
                }
                let who = if vd.systems.len() > 1 {
                    format!("{} {f}", vd.systems[s])
                } else {
                    f.to_string()
                };
                series.push(Series {
                    label: format!("{who} {label}"),
                    colour: colour_of(s),
                    // p50 solid, p99 dashed, p99.9 dotted; IPv6 hollow markers.
                    dash: ["", "7 4", "2 3"][li.min(2)],
                    mark: Mark::of(s, fi == 1),
                    points,
                    runs,
                });
            }
        }
    }
    if series.is_empty() {
        return None;
    }
    // One slow run must not flatten every line: the axis ends at 1.5 × the highest
    // median, and runs beyond it are marked at the top edge.
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(0.0_f64, f64::max);
    Some(render(
        &format!("{}-percentiles", view.id),
        format!("{} percentiles against packet size", view.title()),
        (size_axis(view), view.quantity),
        view.unit,
        &vd.sizes,
        &series,
        None,
        Some(top * 1.5),
        "Each run stores its RTT percentiles; lines join the median over runs of each run's p50 (solid), p99 (dashed) and p99.9 (dotted); IPv4 filled markers, IPv6 hollow ones; small dots are the runs (a triangle at the top: a run beyond the axis). Descriptive: the tests compare the mean RTT.",
    ))
}
