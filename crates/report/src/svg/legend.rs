//! The legend: entries flowing in rows under the plot, each a line sample, its marker
//! and a wrapped label.

use super::marks::{marker, Mark};
use super::text::{text_lines, text_width, wrap};
use super::{c, AXIS_FONT, LEGEND_MAX_LINES, WIDTH};
use std::fmt::Write as _;

/// A legend entry's place and wrapped label: (x, y, lines).
pub(crate) type LegendSlot = (f64, f64, Vec<String>);

/// Legend entries flow in rows from `top`, each as wide as its text; a label wider than
/// a row is wrapped. Returns each entry's (x, y, lines) and the bottom of the legend.
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
