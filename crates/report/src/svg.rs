//! Hand-written SVG figures: a metric against packet size, one line per (system, IP
//! version), mean with confidence-interval error bars. Deterministic output (fixed
//! number formatting, no randomness) so figures are snapshot-testable.

use crate::analysis::ViewData;
use crate::table::html_escape;
use std::fmt::Write as _;
use wire::spec::Family;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 450.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 44.0;
const PLOT_BOTTOM: f64 = 330.0;
/// Okabe–Ito colour-blind-safe palette.
const COLOURS: [&str; 6] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
];
const FONT: &str = "DejaVu Sans, Verdana, sans-serif";

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

fn tick_label(v: f64, step: f64) -> String {
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

/// Fixed two-decimal coordinates keep the output stable and small.
fn c(v: f64) -> String {
    format!("{v:.2}")
}

struct Series {
    label: String,
    colour: &'static str,
    dashed: bool,
    square: bool,
    points: Vec<(u32, f64, f64, f64)>,
}

/// Draw one view. `level` is the confidence level of the error bars.
pub fn figure(vd: &ViewData, level: f64) -> Figure {
    let view = &vd.view;
    let title = format!("{} against packet size", view.title());
    let mut series = Vec::new();
    for s in 0..vd.systems.len() {
        for (fi, f) in [Family::V4, Family::V6].into_iter().enumerate() {
            let points: Vec<_> = vd
                .sizes
                .iter()
                .filter_map(|&size| {
                    let cell = vd.cell(s, f, size)?;
                    let m = cell.summary.mean;
                    let h = cell.summary.ci_half_width(level);
                    let (lo, hi) = if h.is_finite() {
                        (m - h, m + h)
                    } else {
                        (m, m)
                    };
                    Some((size, m, lo, hi))
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
                colour: COLOURS[s % COLOURS.len()],
                dashed: fi == 1,
                square: fi == 1,
                points,
            });
        }
    }
    let all_y = series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.2, p.3]));
    let (mut y_lo, mut y_hi) = all_y.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if !y_lo.is_finite() {
        (y_lo, y_hi) = (0.0, 1.0);
    }
    // Quantities that are naturally ≥ 0 start at zero, as the studies' figures do.
    if y_lo >= 0.0 {
        y_lo = 0.0;
    }
    if y_hi <= y_lo {
        y_hi = y_lo + 1.0;
    }
    let y_ticks = nice_ticks(y_lo, y_hi, 6);
    let y_min = y_ticks.first().copied().unwrap_or(y_lo);
    let y_max = y_ticks.last().copied().unwrap_or(y_hi);
    let y_step = if y_ticks.len() > 1 {
        y_ticks[1] - y_ticks[0]
    } else {
        1.0
    };
    let x_lo = vd.sizes.first().copied().unwrap_or(0) as f64;
    let x_hi = vd.sizes.last().copied().unwrap_or(1) as f64;
    let x_pad = ((x_hi - x_lo) * 0.05).max(16.0);
    let (x_min, x_max) = (x_lo - x_pad, x_hi + x_pad);
    let px = |x: f64| LEFT + (x - x_min) / (x_max - x_min) * (WIDTH - LEFT - RIGHT);
    let py = |y: f64| PLOT_BOTTOM - (y - y_min) / (y_max - y_min) * (PLOT_BOTTOM - TOP);

    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"figure\" id=\"fig-{id}\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"{t}\" font-family=\"{FONT}\" font-size=\"13\">\n<title>{t}</title>\n<rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n",
        id = html_escape(&view.id),
        w = WIDTH,
        h = HEIGHT,
        t = html_escape(&title),
    );
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\">{}</text>",
        c(WIDTH / 2.0),
        html_escape(&title)
    );
    // Grid and y ticks.
    for &t in &y_ticks {
        let y = py(t);
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#dddddd\" stroke-width=\"1\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            c(LEFT),
            c(WIDTH - RIGHT),
            c(LEFT - 8.0),
            c(y + 4.5),
            tick_label(t, y_step),
            y = c(y)
        );
    }
    // x ticks at the measured sizes (or round numbers when there are many).
    let x_ticks: Vec<f64> = if vd.sizes.len() <= 12 {
        vd.sizes.iter().map(|&s| s as f64).collect()
    } else {
        nice_ticks(x_lo, x_hi, 8)
            .into_iter()
            .filter(|t| *t >= x_min && *t <= x_max)
            .collect()
    };
    for &t in &x_ticks {
        let x = px(t);
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#333333\"/><text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            c(PLOT_BOTTOM),
            c(PLOT_BOTTOM + 5.0),
            c(PLOT_BOTTOM + 20.0),
            t as i64,
            x = c(x)
        );
    }
    // Axes and their labels.
    let _ = writeln!(
        svg,
        "<path d=\"M{l} {t} V{b} H{r}\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1.2\"/>",
        l = c(LEFT),
        t = c(TOP),
        b = c(PLOT_BOTTOM),
        r = c(WIDTH - RIGHT)
    );
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">Packet size: payload per send (bytes)</text>",
        c((LEFT + WIDTH - RIGHT) / 2.0),
        c(PLOT_BOTTOM + 42.0)
    );
    let y_mid = (TOP + PLOT_BOTTOM) / 2.0;
    let _ = writeln!(
        svg,
        "<text x=\"18\" y=\"{y}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {y})\">{} ({})</text>",
        html_escape(&capitalise_first(view.quantity)),
        html_escape(view.unit),
        y = c(y_mid)
    );
    // Series: error bars, line, markers. Offsets keep overlapping bars apart.
    let n_series = series.len().max(1) as f64;
    for (i, s) in series.iter().enumerate() {
        let dx = (i as f64 - (n_series - 1.0) / 2.0) * 3.0;
        let _ = writeln!(
            svg,
            "<g class=\"series\" data-label=\"{}\">",
            html_escape(&s.label)
        );
        for &(size, _, lo, hi) in &s.points {
            if hi > lo {
                let x = px(size as f64) + dx;
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
        }
        let path: Vec<String> = s
            .points
            .iter()
            .enumerate()
            .map(|(j, &(size, m, _, _))| {
                format!(
                    "{}{} {}",
                    if j == 0 { "M" } else { "L" },
                    c(px(size as f64) + dx),
                    c(py(m))
                )
            })
            .collect();
        let dash = if s.dashed {
            " stroke-dasharray=\"7 4\""
        } else {
            ""
        };
        let _ = writeln!(
            svg,
            "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash}/>",
            path.join(" "),
            s.colour
        );
        for &(size, m, _, _) in &s.points {
            let _ = writeln!(
                svg,
                "{}",
                marker(px(size as f64) + dx, py(m), s.colour, s.square)
            );
        }
        svg.push_str("</g>\n");
    }
    // Legend below the plot, two entries per row.
    let legend_top = PLOT_BOTTOM + 66.0;
    for (i, s) in series.iter().enumerate() {
        let col = (i % 2) as f64;
        let row = (i / 2) as f64;
        let x = LEFT + col * 300.0;
        let y = legend_top + row * 20.0;
        let dash = if s.dashed {
            " stroke-dasharray=\"7 4\""
        } else {
            ""
        };
        let _ = writeln!(
            svg,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{col}\" stroke-width=\"2\"{dash}/>{}<text x=\"{}\" y=\"{}\">{}</text>",
            c(x),
            c(x + 34.0),
            marker(x + 17.0, y, s.colour, s.square),
            c(x + 42.0),
            c(y + 4.5),
            html_escape(&s.label),
            y = c(y),
            col = s.colour
        );
    }
    let legend_rows = series.len().div_ceil(2) as f64;
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#555555\">Error bars: {:.0}% confidence interval of the mean (Student t).</text>",
        c(LEFT),
        c(legend_top + legend_rows * 20.0 + 4.0),
        level * 100.0
    );
    svg.push_str("</svg>\n");
    Figure {
        id: view.id.clone(),
        title,
        svg,
    }
}

fn marker(x: f64, y: f64, colour: &str, square: bool) -> String {
    if square {
        format!(
            "<rect x=\"{}\" y=\"{}\" width=\"8\" height=\"8\" fill=\"#ffffff\" stroke=\"{colour}\" stroke-width=\"2\"/>",
            c(x - 4.0),
            c(y - 4.0)
        )
    } else {
        format!(
            "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{colour}\"/>",
            c(x),
            c(y)
        )
    }
}

fn capitalise_first(s: &str) -> String {
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
