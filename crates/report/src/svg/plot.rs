//! Drawing series against packet size, in named steps: the y scale, the plot's place
//! in the figure, the note, the x ticks, then the series and the legend.

use super::frame::{axes, figure_close, figure_open, y_grid};
use super::legend::{legend_entry, legend_layout};
use super::scale::{log_axis, nice_ticks, y_axis, LOG_AXIS_SPREAD};
use super::series::Series;
use super::text::{text_width, wrap};
use super::{
    c, Figure, AXIS_FONT, NOTE_FONT, NOTE_MAX_LINES, PLOT_HEIGHT, RIGHT, TITLE_FONT,
    TITLE_MAX_LINES, WIDTH,
};
use std::fmt::Write as _;

/// Draw `series` against packet size: the frame, ticks, error bars (where a series has
/// an interval), run dots, lines, markers, a legend that wraps, and `note` under it.
#[allow(clippy::too_many_arguments)]
pub(super) fn render(
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
    let scale = YScale::of(series, cap, y_limit);
    // Title, wrapped to the width.
    // Bold runs about 10 % wider than the regular face the estimate is for.
    let title_lines = wrap(&title, TITLE_FONT * 1.1, WIDTH - 20.0, TITLE_MAX_LINES);
    let plot = Plot::new(&scale, title_lines.len(), sizes);

    let (legend, legend_bottom) =
        legend_layout(series.iter().map(|s| s.label.as_str()), plot.bottom + 76.0);
    let note = full_note(note, series, cap, scale.log);
    let note_lines = wrap(&note, NOTE_FONT, WIDTH - 20.0, NOTE_MAX_LINES);
    let note_top = legend_bottom + 14.0;
    let height = (note_top + note_lines.len() as f64 * (NOTE_FONT + 3.0) + 8.0).ceil();

    let mut svg = figure_open(id, &title, &title_lines, height);
    if scale.log.is_some() {
        // Said in the note too; here for readers and checks that take the SVG whole.
        svg.push_str("<desc>The y axis is logarithmic.</desc>\n");
    }
    // Grid and y ticks.
    y_grid(&mut svg, &scale.ticks, &scale.texts, plot.left, &|y| {
        plot.py(y)
    });
    x_ticks(&mut svg, sizes, &plot);
    // Axes and their labels.
    axes(
        &mut svg,
        (plot.left, plot.top, plot.bottom),
        x_label,
        quantity,
        unit,
    );
    // Series: error bars, line, markers. Offsets keep overlapping bars apart.
    let n_series = series.len().max(1) as f64;
    for (i, s) in series.iter().enumerate() {
        let dx = (i as f64 - (n_series - 1.0) / 2.0) * 3.0;
        s.draw(&mut svg, &plot, dx);
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

/// The y axis the series need: logarithmic (`log` = `Some(floor)`) or from 0, its
/// ticks with their texts, and its ends.
struct YScale {
    log: Option<f64>,
    ticks: Vec<f64>,
    texts: Vec<String>,
    min: f64,
    max: f64,
}

impl YScale {
    /// The scale up to the highest value drawn (at most `y_limit` on a linear axis),
    /// ticks at most `cap`.
    fn of(series: &[Series], cap: Option<f64>, y_limit: Option<f64>) -> YScale {
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
        let (ticks, min, max, texts) = y_axis(log, y_hi, cap);
        YScale {
            log,
            ticks,
            texts,
            min,
            max,
        }
    }
}

/// Where the plot lies in the figure (left edge after the widest y tick, top under
/// the title) and how sizes and values map onto it.
pub(super) struct Plot {
    pub(super) left: f64,
    pub(super) top: f64,
    pub(super) bottom: f64,
    x_min: f64,
    x_max: f64,
    pub(super) log: Option<f64>,
    pub(super) y_min: f64,
    pub(super) y_max: f64,
}

impl Plot {
    /// The plot of `scale` under a title of `title_lines` lines, over `sizes` (padded).
    fn new(scale: &YScale, title_lines: usize, sizes: &[u32]) -> Plot {
        let widest_tick = scale
            .texts
            .iter()
            .map(|t| text_width(t, AXIS_FONT))
            .fold(0.0_f64, f64::max);
        let left = 34.0 + widest_tick + 10.0;
        let top = 14.0 + title_lines as f64 * (TITLE_FONT + 4.0) + 14.0;
        let (x_lo, x_hi) = x_range(sizes);
        let x_pad = ((x_hi - x_lo) * 0.06).max(16.0);
        Plot {
            left,
            top,
            bottom: top + PLOT_HEIGHT,
            x_min: x_lo - x_pad,
            x_max: x_hi + x_pad,
            log: scale.log,
            y_min: scale.min,
            y_max: scale.max,
        }
    }

    /// The x coordinate of size `x`.
    pub(super) fn px(&self, x: f64) -> f64 {
        self.left + (x - self.x_min) / (self.x_max - self.x_min) * (WIDTH - self.left - RIGHT)
    }

    /// The y coordinate of value `y`.
    pub(super) fn py(&self, y: f64) -> f64 {
        let (y_min, y_max) = (self.y_min, self.y_max);
        let frac = if self.log.is_some() {
            (y.max(y_min).log10() - y_min.log10()) / (y_max.log10() - y_min.log10())
        } else {
            (y - y_min) / (y_max - y_min)
        };
        self.bottom - frac * (self.bottom - self.top)
    }
}

/// The smallest and largest size drawn (0 and 1 when there are none).
fn x_range(sizes: &[u32]) -> (f64, f64) {
    (
        sizes.first().copied().unwrap_or(0) as f64,
        sizes.last().copied().unwrap_or(1) as f64,
    )
}

/// The caller's note, with what the figure itself needs said: chevrons where an
/// interval was cut at the axis (and why it was cut), and a logarithmic axis.
fn full_note(note: &str, series: &[Series], cap: Option<f64>, log: Option<f64>) -> String {
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
    if log.is_some() {
        format!(
            "{note} The y axis is logarithmic: the values span more than a factor of {LOG_AXIS_SPREAD}, which a linear axis would flatten."
        )
    } else {
        note
    }
}

/// x ticks at the measured sizes (or round numbers when there are many); labels that
/// would touch are thinned to every second (third, …) one.
fn x_ticks(svg: &mut String, sizes: &[u32], plot: &Plot) {
    let (x_lo, x_hi) = x_range(sizes);
    let x_ticks: Vec<f64> = if sizes.len() <= 12 {
        sizes.iter().map(|&s| s as f64).collect()
    } else {
        nice_ticks(x_lo, x_hi, 6)
            .into_iter()
            .filter(|t| *t >= plot.x_min && *t <= plot.x_max)
            .collect()
    };
    let min_gap = x_ticks
        .windows(2)
        .map(|w| plot.px(w[1]) - plot.px(w[0]))
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
        let x = plot.px(t);
        let label = if i % every == 0 {
            format!(
                "<text class=\"xtick\" x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                c(plot.bottom + 6.0 + AXIS_FONT),
                t as i64,
                x = c(x)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#333333\"/>{label}",
            c(plot.bottom),
            c(plot.bottom + 5.0),
            x = c(x)
        );
    }
}
