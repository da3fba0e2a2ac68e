//! A figure's frame: the `<svg>` element and title, the grid, the axes and their
//! ticks, the note at the bottom.

use super::text::{capitalise_first, text_lines};
use super::{c, ATTR_MAX_CHARS, AXIS_FONT, FONT, NOTE_FONT, RIGHT, TITLE_FONT, WIDTH};
use crate::escape::{svg as svg_escape, truncate_chars};
use std::fmt::Write as _;

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
