//! Hand-written SVG figures: a metric against packet size, one line per (system, IP
//! version), mean with confidence-interval error bars. Deterministic output (fixed
//! number formatting, no randomness) so figures are snapshot-testable.

use crate::analysis::ViewData;
use crate::escape::{svg as svg_escape, truncate_chars};
use std::fmt::Write as _;
use wire::spec::Family;

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
/// One colour per system, from the Okabe–Ito palette (distinct for the common colour
/// vision deficiencies), ordered so the first systems also differ in grey when printed
/// (luminance 0, 162, 87, 119, 151, 106 of 255); each system also has its own marker
/// shape ([`Mark`]), and the IP version is the line style: IPv4 solid with filled
/// markers, IPv6 dashed with hollow ones.
pub(crate) const PALETTE: [&str; 6] = [
    "#000000", "#E69F00", "#0072B2", "#D55E00", "#CC79A7", "#009E73",
];

/// A marker: its shape says the system, a hollow fill says IPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    shape: usize,
    pub(crate) hollow: bool,
}

impl Mark {
    /// The marker of system `sys` (circle, square, triangle, diamond, inverted triangle,
    /// cross) for IPv6 (`v6`: hollow) or IPv4 (filled).
    pub(crate) fn of(sys: usize, v6: bool) -> Mark {
        Mark {
            shape: sys % 6,
            hollow: v6,
        }
    }
}

/// The colour of system `sys`.
pub(crate) fn colour_of(sys: usize) -> &'static str {
    PALETTE[sys % PALETTE.len()]
}
pub(crate) const FONT: &str = "DejaVu Sans, Verdana, sans-serif";

/// Estimated advance width of `text` at `font_px` in a DejaVu-Sans-like face (slightly
/// generous, so that layout computed from it never overflows).
pub fn text_width(text: &str, font_px: f64) -> f64 {
    let em: f64 = text
        .chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | 'I' => 0.32,
            ' ' | 'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' => 0.42,
            'm' | 'w' | 'M' | 'W' | '@' | '%' => 0.95,
            c if c.is_ascii_uppercase() => 0.74,
            c if c.is_ascii_digit() => 0.64,
            c if c.is_ascii() => 0.62,
            _ => 0.8,
        })
        .sum();
    em * font_px
}

/// Break `text` into at most `max_lines` lines no wider than `max_px` (at spaces; a word
/// wider than a line is cut); text that does not fit ends with "…". The work is bounded
/// by what the lines can hold, whatever the length of `text` (a label of a megabyte
/// makes a figure of normal size, fast).
pub fn wrap(text: &str, font_px: f64, max_px: f64, max_lines: usize) -> Vec<String> {
    let max_lines = max_lines.max(1);
    // The narrowest character is 0.32 em: no line holds more than this.
    let per_line = (max_px / (0.32 * font_px)).max(1.0) as usize + 1;
    let text = crate::escape::truncate_chars(text, per_line * (max_lines + 1));
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if lines.len() > max_lines {
            break;
        }
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if text_width(&candidate, font_px) <= max_px {
            line = candidate;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        let mut rest = word.to_string();
        while text_width(&rest, font_px) > max_px && rest.chars().count() > 1 {
            let mut cut = String::new();
            for ch in rest.chars() {
                if text_width(&format!("{cut}{ch}"), font_px) > max_px && !cut.is_empty() {
                    break;
                }
                cut.push(ch);
            }
            rest = rest[cut.len()..].to_string();
            lines.push(cut);
        }
        line = rest;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        if let Some(last) = lines.last_mut() {
            while !last.is_empty() && text_width(&format!("{last}…"), font_px) > max_px {
                last.pop();
            }
            last.push('…');
        }
    }
    lines
}

/// One figure of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// File-name slug, e.g. `tcp-throughput`.
    pub id: String,
    pub title: String,
    pub svg: String,
}

/// Round numbers for axis ticks covering [lo, hi]: steps of 1, 2 or 5 × 10^k.
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        let v = if lo.is_finite() { lo } else { 0.0 };
        return vec![v];
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let start = (lo / step).floor() as i64;
    let end = (hi / step).ceil() as i64;
    (start..=end).map(|i| i as f64 * step).collect()
}

pub(crate) fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let s = format!("{v:.decimals$}");
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
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

struct Series {
    label: String,
    colour: &'static str,
    /// SVG stroke-dasharray; empty = solid.
    dash: &'static str,
    mark: Mark,
    /// (size, mean, low, high, low clipped, high clipped).
    points: Vec<(u32, f64, f64, f64, bool, bool)>,
    /// Each run's value per size, drawn as dots beside the mean (a strip plot), so a
    /// reader sees the spread behind each point.
    runs: Vec<(u32, Vec<f64>)>,
}

/// `<text>` with one `<tspan>` per line.
pub(crate) fn text_lines(x: f64, y: f64, lines: &[String], line_h: f64, attrs: &str) -> String {
    let mut out = format!("<text x=\"{}\" y=\"{}\"{attrs}>", c(x), c(y));
    for (i, l) in lines.iter().enumerate() {
        let dy = if i == 0 { 0.0 } else { line_h };
        let _ = write!(
            out,
            "<tspan x=\"{}\" dy=\"{}\">{}</tspan>",
            c(x),
            c(dy),
            svg_escape(l)
        );
    }
    out.push_str("</text>");
    out
}

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

/// The most run dots drawn per cell: beyond it, that many evenly spaced quantiles of the
/// cell's runs stand for them (said in the caption), so a campaign of a million runs
/// makes figures of a few hundred kilobytes, not hundreds of megabytes.
pub const MAX_DOTS_PER_CELL: usize = 100;

/// `vals` as at most [`MAX_DOTS_PER_CELL`] values: all of them, or evenly spaced order
/// statistics (min and max included).
fn dots_of(vals: Vec<f64>) -> (Vec<f64>, bool) {
    if vals.len() <= MAX_DOTS_PER_CELL {
        return (vals, false);
    }
    let mut sorted = vals;
    sorted.sort_by(f64::total_cmp);
    let last = sorted.len() - 1;
    let k = MAX_DOTS_PER_CELL - 1;
    ((0..=k).map(|i| sorted[i * last / k]).collect(), true)
}

/// A logarithmic y axis is used when the positive values drawn span more than this
/// factor (two systems 30–100× apart, or one slow run beside sub-millisecond means).
pub const LOG_AXIS_SPREAD: f64 = 10.0;

/// `Some(lowest positive value)` when `series` want a logarithmic axis: every mean
/// positive, and the drawn values spanning more than [`LOG_AXIS_SPREAD`] — capped or not
/// (a process at 2 % beside one at 100 % of a core would lie on the floor of a linear
/// 0–100 % axis); the axis then ends at the cap's decade.
fn log_axis(series: &[Series], _cap: Option<f64>) -> Option<f64> {
    let means = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    if means.clone().any(|m| m <= 0.0) || means.clone().next().is_none() {
        return None;
    }
    let all = series.iter().flat_map(|s| {
        s.points
            .iter()
            .flat_map(|p| [p.1, p.2, p.3])
            .chain(s.runs.iter().flat_map(|(_, v)| v.iter().copied()))
    });
    let lo = all
        .clone()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let hi = all.fold(0.0_f64, f64::max);
    (lo.is_finite() && hi / lo > LOG_AXIS_SPREAD).then_some(lo)
}

/// The y axis from 0 (or, with `log` = `Some(floor)`, logarithmic from that floor) to
/// `y_hi`, ticks at most `cap`: (ticks, bottom, top, tick texts).
pub(crate) fn y_axis(
    log: Option<f64>,
    y_hi: f64,
    cap: Option<f64>,
) -> (Vec<f64>, f64, f64, Vec<String>) {
    match log {
        Some(lo) => {
            let ticks = log_ticks(lo, y_hi);
            let texts = ticks.iter().map(|&t| log_tick_label(t)).collect();
            let (first, last) = (ticks[0], ticks[ticks.len() - 1]);
            (ticks, first, last, texts)
        }
        None => {
            let mut ticks = nice_ticks(0.0, y_hi, 5);
            if let Some(c) = cap {
                ticks.retain(|t| *t <= c);
            }
            let max = ticks.last().copied().filter(|m| *m > 0.0).unwrap_or(y_hi);
            let step = if ticks.len() > 1 {
                ticks[1] - ticks[0]
            } else {
                1.0
            };
            let texts = ticks.iter().map(|&t| tick_label(t, step)).collect();
            (ticks, 0.0, max, texts)
        }
    }
}

/// Ticks of a logarithmic axis from `lo` to `hi`: every power of ten, with 2 and 5
/// between them when the axis spans at most three decades.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let d1 = d1.max(d0 + 1).min(d0 + 30);
    let mids: &[f64] = if d1 - d0 <= 3 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut out = Vec::new();
    for d in d0..=d1 {
        for &m in mids {
            let t = m * 10f64.powi(d);
            if d == d1 && m > 1.0 {
                break;
            }
            out.push(t);
        }
    }
    out
}

pub(crate) fn log_tick_label(t: f64) -> String {
    if t >= 1.0 {
        format!("{t:.0}")
    } else {
        let decimals = (-t.log10().floor()) as usize;
        format!("{t:.decimals$}")
    }
}

/// Draw `series` against packet size: the frame, ticks, error bars (where a series has
/// an interval), run dots, lines, markers, a legend that wraps, and `note` under it.
#[allow(clippy::too_many_arguments)]
fn render(
    id: &str,
    title: String,
    (x_label, quantity): (&str, &str),
    unit: &str,
    sizes: &[u32],
    series: &[Series],
    cap: Option<f64>,
    y_limit: Option<f64>,
    note: &str,
) -> Figure {
    let y_hi = series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.3)
                .chain(s.runs.iter().flat_map(|(_, v)| v.iter().copied()))
        })
        .fold(0.0_f64, f64::max);
    let log = log_axis(series, cap);
    let y_hi = if log.is_some() {
        y_hi
    } else {
        y_limit.map_or(y_hi, |l| y_hi.min(l))
    };
    let y_hi = if y_hi > 0.0 && y_hi.is_finite() {
        y_hi
    } else {
        1.0
    };
    let (y_ticks, y_min, y_max, tick_texts) = y_axis(log, y_hi, cap);
    let tick_texts: Vec<String> = tick_texts;
    let widest_tick = tick_texts
        .iter()
        .map(|t| text_width(t, AXIS_FONT))
        .fold(0.0_f64, f64::max);
    let left = 34.0 + widest_tick + 10.0;

    // Title, wrapped to the width.
    // Bold runs about 10 % wider than the regular face the estimate is for.
    let title_lines = wrap(&title, TITLE_FONT * 1.1, WIDTH - 20.0, TITLE_MAX_LINES);
    let top = 14.0 + title_lines.len() as f64 * (TITLE_FONT + 4.0) + 14.0;
    let plot_bottom = top + PLOT_HEIGHT;

    let x_lo = sizes.first().copied().unwrap_or(0) as f64;
    let x_hi = sizes.last().copied().unwrap_or(1) as f64;
    let x_pad = ((x_hi - x_lo) * 0.06).max(16.0);
    let (x_min, x_max) = (x_lo - x_pad, x_hi + x_pad);
    let px = |x: f64| left + (x - x_min) / (x_max - x_min) * (WIDTH - left - RIGHT);
    let py = |y: f64| {
        let frac = if log.is_some() {
            (y.max(y_min).log10() - y_min.log10()) / (y_max.log10() - y_min.log10())
        } else {
            (y - y_min) / (y_max - y_min)
        };
        plot_bottom - frac * (plot_bottom - top)
    };

    let (legend, legend_bottom) =
        legend_layout(series.iter().map(|s| s.label.as_str()), plot_bottom + 76.0);
    let any_clip = series.iter().any(|s| s.points.iter().any(|p| p.4 || p.5));
    let note = format!(
        "{note}{}",
        if any_clip {
            " A chevron marks an interval cut at the axis (the metric cannot go below 0)."
        } else {
            ""
        }
    );
    let note = if cap.is_some() && any_clip {
        note.replace("(the metric cannot go below 0)", "(it lies within 0–100%)")
    } else if log.is_some() && any_clip {
        note.replace(
            "(the metric cannot go below 0)",
            "(the logarithmic axis has no 0)",
        )
    } else {
        note
    };
    let note = if log.is_some() {
        format!(
            "{note} The y axis is logarithmic: the values span more than a factor of {LOG_AXIS_SPREAD}, which a linear axis would flatten."
        )
    } else {
        note
    };
    let note_lines = wrap(&note, NOTE_FONT, WIDTH - 20.0, NOTE_MAX_LINES);
    let note_top = legend_bottom + 14.0;
    let height = (note_top + note_lines.len() as f64 * (NOTE_FONT + 3.0) + 8.0).ceil();

    let mut svg = figure_open(id, &title, &title_lines, height);
    if log.is_some() {
        // Said in the note too; here for readers and checks that take the SVG whole.
        svg.push_str("<desc>The y axis is logarithmic.</desc>\n");
    }
    // Grid and y ticks.
    y_grid(&mut svg, &y_ticks, &tick_texts, left, &py);
    // x ticks at the measured sizes (or round numbers when there are many); labels
    // that would touch are thinned to every second (third, …) one.
    let x_ticks: Vec<f64> = if sizes.len() <= 12 {
        sizes.iter().map(|&s| s as f64).collect()
    } else {
        nice_ticks(x_lo, x_hi, 6)
            .into_iter()
            .filter(|t| *t >= x_min && *t <= x_max)
            .collect()
    };
    let min_gap = x_ticks
        .windows(2)
        .map(|w| px(w[1]) - px(w[0]))
        .fold(f64::INFINITY, f64::min);
    let widest_x = x_ticks
        .iter()
        .map(|t| text_width(&(*t as i64).to_string(), AXIS_FONT))
        .fold(0.0_f64, f64::max);
    let every = if min_gap.is_finite() && min_gap > 0.0 {
        ((widest_x + 6.0) / min_gap).ceil().max(1.0) as usize
    } else {
        1
    };
    for (i, &t) in x_ticks.iter().enumerate() {
        let x = px(t);
        let label = if i % every == 0 {
            format!(
                "<text class=\"xtick\" x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                c(plot_bottom + 6.0 + AXIS_FONT),
                t as i64,
                x = c(x)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#333333\"/>{label}",
            c(plot_bottom),
            c(plot_bottom + 5.0),
            x = c(x)
        );
    }
    // Axes and their labels.
    axes(&mut svg, (left, top, plot_bottom), x_label, quantity, unit);
    // Series: error bars, line, markers. Offsets keep overlapping bars apart.
    let n_series = series.len().max(1) as f64;
    for (i, s) in series.iter().enumerate() {
        let dx = (i as f64 - (n_series - 1.0) / 2.0) * 3.0;
        let _ = writeln!(
            svg,
            "<g class=\"series\" data-label=\"{}\" data-colour=\"{}\">",
            svg_escape(&truncate_chars(&s.label, ATTR_MAX_CHARS)),
            s.colour
        );
        // The runs behind each mean, as faint dots beside it (IPv4 to the left, IPv6 to
        // the right), spread a little so equal values stay countable.
        let side = if s.mark.hollow { 10.0 } else { -10.0 };
        for (size, vals) in &s.runs {
            for (k, &v) in vals.iter().enumerate() {
                let spread = ((k * 7) % 5) as f64 - 2.0;
                // Inside the plot whatever the offsets (the first size sits near the axis).
                let x = (px(*size as f64) + dx + side + spread * 1.4)
                    .clamp(left + 3.0, WIDTH - RIGHT - 3.0);
                if v > y_max {
                    // Beyond the axis: a small triangle at the top edge.
                    let y = py(y_max);
                    let _ = write!(
                        svg,
                        "<path class=\"run above\" d=\"M{} {} L{} {} L{} {} Z\" fill=\"{}\" fill-opacity=\"0.7\"/>",
                        c(x - 3.0), c(y + 2.0), c(x), c(y - 4.0), c(x + 3.0), c(y + 2.0),
                        s.colour
                    );
                    continue;
                }
                let _ = write!(
                    svg,
                    "<circle class=\"run\" cx=\"{}\" cy=\"{}\" r=\"2.2\" fill=\"{}\" fill-opacity=\"0.55\"/>",
                    c(x),
                    c(py(v)),
                    s.colour
                );
            }
        }
        svg.push('\n');
        for &(size, _, lo, hi, lo_clip, hi_clip) in &s.points {
            let lo_clip = lo_clip || (log.is_some() && lo < y_min);
            let lo = lo.max(y_min);
            let x = px(size as f64) + dx;
            if hi > lo {
                let _ = writeln!(
                    svg,
                    "<path d=\"M{x} {yl} V{yh} M{xl} {yl} H{xr} M{xl} {yh} H{xr}\" stroke=\"{col}\" stroke-width=\"1.2\" fill=\"none\"/>",
                    x = c(x),
                    xl = c(x - 4.0),
                    xr = c(x + 4.0),
                    yl = c(py(lo)),
                    yh = c(py(hi)),
                    col = s.colour
                );
            }
            // Chevrons pointing past the axis where the interval was cut.
            if lo_clip {
                let y0 = py(lo);
                let _ = writeln!(
                    svg,
                    "<path class=\"clipped\" d=\"M{} {} L{} {} L{} {}\" stroke=\"{col}\" stroke-width=\"1.6\" fill=\"none\"/>",
                    c(x - 5.0), c(y0 - 9.0), c(x), c(y0 - 3.0), c(x + 5.0), c(y0 - 9.0),
                    col = s.colour
                );
            }
            if hi_clip {
                let y1 = py(hi);
                let _ = writeln!(
                    svg,
                    "<path class=\"clipped\" d=\"M{} {} L{} {} L{} {}\" stroke=\"{col}\" stroke-width=\"1.6\" fill=\"none\"/>",
                    c(x - 5.0), c(y1 + 9.0), c(x), c(y1 + 3.0), c(x + 5.0), c(y1 + 9.0),
                    col = s.colour
                );
            }
        }
        let path: Vec<String> = s
            .points
            .iter()
            .enumerate()
            .map(|(j, p)| {
                format!(
                    "{}{} {}",
                    if j == 0 { "M" } else { "L" },
                    c(px(p.0 as f64) + dx),
                    c(py(p.1))
                )
            })
            .collect();
        let dash = if s.dash.is_empty() {
            String::new()
        } else {
            format!(" stroke-dasharray=\"{}\"", s.dash)
        };
        let _ = writeln!(
            svg,
            "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash}/>",
            path.join(" "),
            s.colour
        );
        for p in &s.points {
            let _ = writeln!(
                svg,
                "{}",
                marker(px(p.0 as f64) + dx, py(p.1), s.colour, s.mark)
            );
        }
        svg.push_str("</g>\n");
    }
    for (s, entry) in series.iter().zip(&legend) {
        legend_entry(&mut svg, entry, s.colour, s.dash, s.mark);
    }
    figure_close(&mut svg, &note_lines, note_top);
    Figure {
        id: id.to_string(),
        title,
        svg,
    }
}

/// Legend entries flow in rows from `top`, each as wide as its text; a label wider than
/// a row is wrapped. Returns each entry's (x, y, lines) and the bottom of the legend.
pub(crate) type LegendSlot = (f64, f64, Vec<String>);

/// A figure's `<svg>` element, its accessible title and white background, and the
/// wrapped bold title at the top: what every figure starts with.
pub(crate) fn figure_open(id: &str, title: &str, title_lines: &[String], height: f64) -> String {
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"figure\" id=\"fig-{id}\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{t}\" font-family=\"{FONT}\" font-size=\"{AXIS_FONT}\">\n<title>{t}</title>\n<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n",
        id = svg_escape(id),
        w = WIDTH,
        h = height,
        t = svg_escape(&truncate_chars(title, ATTR_MAX_CHARS)),
    );
    let _ = writeln!(
        svg,
        "{}",
        text_lines(
            WIDTH / 2.0,
            14.0 + TITLE_FONT,
            title_lines,
            TITLE_FONT + 4.0,
            &format!(" text-anchor=\"middle\" font-size=\"{TITLE_FONT}\" font-weight=\"bold\"")
        )
    );
    svg
}

/// Horizontal grid lines across the plot at `ticks`, each with its label on the left.
pub(crate) fn y_grid(
    svg: &mut String,
    ticks: &[f64],
    texts: &[String],
    left: f64,
    py: &dyn Fn(f64) -> f64,
) {
    for (&t, text) in ticks.iter().zip(texts) {
        let y = py(t);
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#dddddd\" stroke-width=\"1\"/><text class=\"ytick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{text}</text>",
            c(left),
            c(WIDTH - RIGHT),
            c(left - 8.0),
            c(y + AXIS_FONT * 0.35),
            y = c(y)
        );
    }
}

/// The L of the axes around the plot `(left, top, bottom)`, the x-axis title under it
/// and the y-axis title ("Quantity (unit)") turned along the left edge.
pub(crate) fn axes(
    svg: &mut String,
    (left, top, bottom): (f64, f64, f64),
    x_title: &str,
    quantity: &str,
    unit: &str,
) {
    let _ = writeln!(
        svg,
        "<path d=\"M{l} {t} V{b} H{r}\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1.2\"/>",
        l = c(left),
        t = c(top),
        b = c(bottom),
        r = c(WIDTH - RIGHT)
    );
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        c((left + WIDTH - RIGHT) / 2.0),
        c(bottom + 12.0 + 2.0 * AXIS_FONT),
        svg_escape(x_title)
    );
    let y_mid = c((top + bottom) / 2.0);
    let _ = writeln!(
        svg,
        "<text x=\"20\" y=\"{y_mid}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {y_mid})\">{} ({})</text>",
        svg_escape(&capitalise_first(quantity)),
        svg_escape(unit),
    );
}

/// The wrapped note under the legend, and the end of the figure.
pub(crate) fn figure_close(svg: &mut String, note_lines: &[String], note_top: f64) {
    let _ = writeln!(
        svg,
        "{}",
        text_lines(
            10.0,
            note_top + NOTE_FONT,
            note_lines,
            NOTE_FONT + 3.0,
            &format!(" font-size=\"{NOTE_FONT}\" fill=\"#444444\"")
        )
    );
    svg.push_str("</svg>\n");
}

pub(crate) fn legend_layout<'a>(
    labels: impl Iterator<Item = &'a str>,
    top: f64,
) -> (Vec<LegendSlot>, f64) {
    let row_w = WIDTH - 2.0 * 10.0;
    let mut legend: Vec<LegendSlot> = Vec::new();
    let (mut x, mut y, mut row_h) = (10.0, top, 0.0_f64);
    for label in labels {
        let lines = wrap(
            label,
            AXIS_FONT,
            row_w - LEGEND_SAMPLE_W - 8.0,
            LEGEND_MAX_LINES,
        );
        let w = LEGEND_SAMPLE_W
            + 8.0
            + lines
                .iter()
                .map(|l| text_width(l, AXIS_FONT))
                .fold(0.0_f64, f64::max);
        if x > 10.0 && x + w > 10.0 + row_w {
            x = 10.0;
            y += row_h;
            row_h = 0.0;
        }
        legend.push((x, y, lines.clone()));
        row_h = row_h.max(lines.len() as f64 * (AXIS_FONT + 3.0) + 8.0);
        x += w + 18.0;
    }
    (legend, y + row_h)
}

const LEGEND_SAMPLE_W: f64 = 38.0;

/// One legend entry: a line sample with its marker, then the label.
pub(crate) fn legend_entry(
    svg: &mut String,
    (x, y, lines): &LegendSlot,
    colour: &str,
    dash: &str,
    mark: Mark,
) {
    let dash = if dash.is_empty() {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{dash}\"")
    };
    let _ = writeln!(
        svg,
        "<g class=\"legend\"><line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/>{}{}</g>",
        c(*x),
        c(x + LEGEND_SAMPLE_W),
        marker(x + LEGEND_SAMPLE_W / 2.0, *y, colour, mark),
        text_lines(x + LEGEND_SAMPLE_W + 8.0, y + AXIS_FONT * 0.35, lines, AXIS_FONT + 3.0, ""),
        y = c(*y),
    );
}

pub(crate) fn marker(x: f64, y: f64, colour: &str, mark: Mark) -> String {
    let fill = if mark.hollow { "#ffffff" } else { colour };
    let style = format!("fill=\"{fill}\" stroke=\"{colour}\" stroke-width=\"1.8\"");
    let poly = |pts: &[(f64, f64)]| {
        let d: Vec<String> = pts
            .iter()
            .enumerate()
            .map(|(i, (dx, dy))| {
                format!(
                    "{}{} {}",
                    if i == 0 { "M" } else { "L" },
                    c(x + dx),
                    c(y + dy)
                )
            })
            .collect();
        format!("<path class=\"marker\" d=\"{} Z\" {style}/>", d.join(" "))
    };
    match mark.shape {
        0 => format!(
            "<circle class=\"marker\" cx=\"{}\" cy=\"{}\" r=\"4.2\" {style}/>",
            c(x),
            c(y)
        ),
        1 => poly(&[(-4.0, -4.0), (4.0, -4.0), (4.0, 4.0), (-4.0, 4.0)]),
        2 => poly(&[(0.0, -5.0), (4.6, 3.5), (-4.6, 3.5)]),
        3 => poly(&[(0.0, -5.2), (5.2, 0.0), (0.0, 5.2), (-5.2, 0.0)]),
        4 => poly(&[(0.0, 5.0), (4.6, -3.5), (-4.6, -3.5)]),
        _ => poly(&[
            (-1.6, -5.0),
            (1.6, -5.0),
            (1.6, -1.6),
            (5.0, -1.6),
            (5.0, 1.6),
            (1.6, 1.6),
            (1.6, 5.0),
            (-1.6, 5.0),
            (-1.6, 1.6),
            (-5.0, 1.6),
            (-5.0, -1.6),
            (-1.6, -1.6),
        ]),
    }
}

pub(crate) fn capitalise_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(f) => f.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

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
