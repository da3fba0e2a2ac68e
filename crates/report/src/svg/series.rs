//! A series (one system and IP version) and how it is drawn: run dots, error bars
//! with their chevrons, the line and its markers.

use super::marks::{marker, Mark};
use super::plot::Plot;
use super::{c, ATTR_MAX_CHARS, RIGHT, WIDTH};
use crate::escape::{svg as svg_escape, truncate_chars};
use std::fmt::Write as _;

pub(super) struct Series {
    pub(super) label: String,
    pub(super) colour: &'static str,
    /// SVG stroke-dasharray; empty = solid.
    pub(super) dash: &'static str,
    pub(super) mark: Mark,
    /// (size, mean, low, high, low clipped, high clipped).
    pub(super) points: Vec<(u32, f64, f64, f64, bool, bool)>,
    /// Each run's value per size, drawn as dots beside the mean (a strip plot), so a
    /// reader sees the spread behind each point.
    pub(super) runs: Vec<(u32, Vec<f64>)>,
}

impl Series {
    /// The series as one `<g>` on `plot`, shifted `dx` sideways (so overlapping bars
    /// of several series stay apart): run dots, error bars, the line, its markers.
    pub(super) fn draw(&self, svg: &mut String, plot: &Plot, dx: f64) {
        let _ = writeln!(
            svg,
            "<g class=\"series\" data-label=\"{}\" data-colour=\"{}\">",
            svg_escape(&truncate_chars(&self.label, ATTR_MAX_CHARS)),
            self.colour
        );
        self.draw_runs(svg, plot, dx);
        svg.push('\n');
        self.draw_intervals(svg, plot, dx);
        self.draw_line(svg, plot, dx);
        svg.push_str("</g>\n");
    }

    /// The runs behind each mean, as faint dots beside it (IPv4 to the left, IPv6 to
    /// the right), spread a little so equal values stay countable; a run beyond the
    /// axis is a small triangle at the top edge.
    fn draw_runs(&self, svg: &mut String, plot: &Plot, dx: f64) {
        let side = if self.mark.hollow { 10.0 } else { -10.0 };
        for (size, vals) in &self.runs {
            for (k, &v) in vals.iter().enumerate() {
                let spread = ((k * 7) % 5) as f64 - 2.0;
                // Inside the plot whatever the offsets (the first size sits near the axis).
                let x = (plot.px(*size as f64) + dx + side + spread * 1.4)
                    .clamp(plot.left + 3.0, WIDTH - RIGHT - 3.0);
                if v > plot.y_max {
                    let y = plot.py(plot.y_max);
                    let _ = write!(
                        svg,
                        "<path class=\"run above\" d=\"M{} {} L{} {} L{} {} Z\" fill=\"{}\" fill-opacity=\"0.7\"/>",
                        c(x - 3.0), c(y + 2.0), c(x), c(y - 4.0), c(x + 3.0), c(y + 2.0),
                        self.colour
                    );
                    continue;
                }
                let _ = write!(
                    svg,
                    "<circle class=\"run\" cx=\"{}\" cy=\"{}\" r=\"2.2\" fill=\"{}\" fill-opacity=\"0.55\"/>",
                    c(x),
                    c(plot.py(v)),
                    self.colour
                );
            }
        }
    }

    /// Error bars, with chevrons pointing past the axis where an interval was cut.
    fn draw_intervals(&self, svg: &mut String, plot: &Plot, dx: f64) {
        for &(size, _, lo, hi, lo_clip, hi_clip) in &self.points {
            let lo_clip = lo_clip || (plot.log.is_some() && lo < plot.y_min);
            let lo = lo.max(plot.y_min);
            let x = plot.px(size as f64) + dx;
            if hi > lo {
                let _ = writeln!(
                    svg,
                    "<path d=\"M{x} {yl} V{yh} M{xl} {yl} H{xr} M{xl} {yh} H{xr}\" stroke=\"{col}\" stroke-width=\"1.2\" fill=\"none\"/>",
                    x = c(x),
                    xl = c(x - 4.0),
                    xr = c(x + 4.0),
                    yl = c(plot.py(lo)),
                    yh = c(plot.py(hi)),
                    col = self.colour
                );
            }
            if lo_clip {
                let y0 = plot.py(lo);
                let _ = writeln!(
                    svg,
                    "<path class=\"clipped\" d=\"M{} {} L{} {} L{} {}\" stroke=\"{col}\" stroke-width=\"1.6\" fill=\"none\"/>",
                    c(x - 5.0), c(y0 - 9.0), c(x), c(y0 - 3.0), c(x + 5.0), c(y0 - 9.0),
                    col = self.colour
                );
            }
            if hi_clip {
                let y1 = plot.py(hi);
                let _ = writeln!(
                    svg,
                    "<path class=\"clipped\" d=\"M{} {} L{} {} L{} {}\" stroke=\"{col}\" stroke-width=\"1.6\" fill=\"none\"/>",
                    c(x - 5.0), c(y1 + 9.0), c(x), c(y1 + 3.0), c(x + 5.0), c(y1 + 9.0),
                    col = self.colour
                );
            }
        }
    }

    /// The line through the means, and a marker on each.
    fn draw_line(&self, svg: &mut String, plot: &Plot, dx: f64) {
        let path: Vec<String> = self
            .points
            .iter()
            .enumerate()
            .map(|(j, p)| {
                format!(
                    "{}{} {}",
                    if j == 0 { "M" } else { "L" },
                    c(plot.px(p.0 as f64) + dx),
                    c(plot.py(p.1))
                )
            })
            .collect();
        let dash = if self.dash.is_empty() {
            String::new()
        } else {
            format!(" stroke-dasharray=\"{}\"", self.dash)
        };
        let _ = writeln!(
            svg,
            "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash}/>",
            path.join(" "),
            self.colour
        );
        for p in &self.points {
            let _ = writeln!(
                svg,
                "{}",
                marker(
                    plot.px(p.0 as f64) + dx,
                    plot.py(p.1),
                    self.colour,
                    self.mark
                )
            );
        }
    }
}

/// The most run dots drawn per cell: beyond it, that many evenly spaced quantiles of the
/// cell's runs stand for them (said in the caption), so a campaign of a million runs
/// makes figures of a few hundred kilobytes, not hundreds of megabytes.
pub const MAX_DOTS_PER_CELL: usize = 100;

/// `vals` as at most [`MAX_DOTS_PER_CELL`] values: all of them, or evenly spaced order
/// statistics (min and max included).
pub(super) fn dots_of(vals: Vec<f64>) -> (Vec<f64>, bool) {
    if vals.len() <= MAX_DOTS_PER_CELL {
        return (vals, false);
    }
    let mut sorted = vals;
    sorted.sort_by(f64::total_cmp);
    let last = sorted.len() - 1;
    let k = MAX_DOTS_PER_CELL - 1;
    ((0..=k).map(|i| sorted[i * last / k]).collect(), true)
}
