//! Time-series figures of selected runs, as flent draws them: what one run did interval
//! by interval, one figure per (test, direction, packet size) with a step line per
//! system and IP version. Also which runs to draw ([`select`]): by default, for each test
//! its smallest and largest packet size, and in each such cell the run with the median
//! of what the figure shows.
//!
//! The samples are the client's own counters (the engine's interval sampler on the
//! client), over windows of the client's clock counted from when its data workers
//! started; the figures say so, and say what that means for each test.

use crate::dataset::{CampaignData, Dataset, IntervalCounts, RunRow, RunSeries};
use crate::escape::{svg as svg_escape, truncate_chars};
use crate::svg::{
    axes, c, figure_close, figure_open, legend_entry, legend_layout, marker, nice_ticks,
    text_width, tick_label, wrap, y_grid, Figure, ATTR_MAX_CHARS, AXIS_FONT, MAX_DRAWN, NOTE_FONT,
    NOTE_MAX_LINES, PLOT_HEIGHT, RIGHT, TITLE_FONT, TITLE_MAX_LINES, WIDTH,
};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use wire::metrics;
use wire::spec::{Direction, Family, TestKind};

/// Most steps drawn per line; longer runs have adjacent intervals merged (their counts
/// summed over their summed length), which the figure says.
pub const MAX_STEPS: usize = 240;

/// Which packet sizes get a time-series figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeChoice {
    /// None (only the cells of runs asked for by id).
    None,
    /// Each test's smallest and largest size.
    Ends,
    /// Every size.
    All,
    /// These sizes (where measured).
    List(Vec<u32>),
}

/// Which runs to draw over time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Tests to draw; empty = every test.
    pub tests: Vec<TestKind>,
    pub sizes: SizeChoice,
    /// Cells (test, direction, packet size) drawn whatever `tests` and `sizes` say, e.g.
    /// those of runs asked for in another campaign, so that every system is drawn there.
    pub cells: Vec<(TestKind, Direction, u32)>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            tests: Vec::new(),
            sizes: SizeChoice::Ends,
            cells: Vec::new(),
        }
    }
}

impl Selection {
    /// No time-series figures (unless runs are asked for by id).
    pub fn none() -> Self {
        Selection {
            tests: Vec::new(),
            sizes: SizeChoice::None,
            cells: Vec::new(),
        }
    }
}

/// What a test's time series shows, from the client's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// Client → server stream: the client only sends.
    SendRate,
    /// Server → client (or both ways): what the client received.
    Goodput,
    /// Request/response: responses the client received, per second.
    Transactions,
}

fn shown(kind: TestKind, direction: Direction) -> Shown {
    match (kind.is_rr(), direction) {
        (true, _) => Shown::Transactions,
        (false, Direction::Forward) => Shown::SendRate,
        (false, _) => Shown::Goodput,
    }
}

impl Shown {
    /// The run-level metric whose median run is drawn, and its name in the note.
    fn run_metric(self) -> (&'static str, &'static str) {
        match self {
            Shown::SendRate | Shown::Goodput => (metrics::THROUGHPUT_BPS, "throughput"),
            Shown::Transactions => (metrics::TRANSACTIONS_PER_S, "transaction rate"),
        }
    }
    /// Value of one window: the counted quantity over the window's length.
    fn value(self, s: &IntervalCounts, dt_s: f64) -> Option<f64> {
        let (count, scale) = match self {
            Shown::SendRate => (s.sent_bytes?, 8e-6),
            Shown::Goodput => (s.recv_bytes?, 8e-6),
            Shown::Transactions => (s.recv_packets?, 1.0),
        };
        (dt_s > 0.0).then(|| count * scale / dt_s)
    }
    fn axis(self) -> (&'static str, &'static str) {
        match self {
            Shown::SendRate => ("sending rate at the client", "Mbit/s"),
            Shown::Goodput => ("goodput received by the client", "Mbit/s"),
            Shown::Transactions => ("transactions per second", "1/s"),
        }
    }
    fn note(self) -> &'static str {
        match self {
            Shown::SendRate => "The client only sends in this test: this is the rate it handed data to its sockets, not what arrived (the throughput figure has the receiver's goodput).",
            Shown::Goodput => "The client is the receiver here: this is the payload it received.",
            Shown::Transactions => "Transactions: responses the client received. The samples hold no RTT (the RTT figures have each run's percentiles).",
        }
    }
}

pub(crate) fn test_title(kind: TestKind, direction: Direction) -> String {
    let test = match kind {
        TestKind::TcpStream => "TCP stream",
        TestKind::UdpStream => "UDP stream",
        TestKind::TcpRr => "TCP request/response",
        TestKind::UdpRr => "UDP request/response",
        TestKind::Rrul => "Latency under load (rrul)",
        TestKind::TcpCrr => "TCP connect/request/response (crr)",
        TestKind::Pmtu => "Path MTU",
        TestKind::Frag => "Fragment delivery",
        TestKind::ExtHeaders => "IPv6 extension-header delivery",
        TestKind::QuicStream => "QUIC stream",
        TestKind::QuicRr => "QUIC request/response",
    };
    match direction {
        Direction::Forward => test.to_string(),
        Direction::Reverse => format!("{test} (reverse)"),
        Direction::Bidir => format!("{test} (bidirectional)"),
    }
}

fn kind_order(k: TestKind) -> usize {
    TestKind::ALL.iter().position(|&x| x == k).unwrap_or(0)
}

fn direction_order(d: Direction) -> u8 {
    match d {
        Direction::Forward => 0,
        Direction::Reverse => 1,
        Direction::Bidir => 2,
    }
}

/// A figure's cell: (test's place in `TestKind::ALL`, direction order, packet size).
pub(crate) type CellKey = (usize, u8, u32);

pub(crate) fn cell_key(r: &RunRow) -> CellKey {
    (
        kind_order(r.kind),
        direction_order(r.direction),
        r.payload_bytes,
    )
}

/// The runs of `campaign` to draw over time (indexes into its `runs`, ascending): in each
/// chosen cell and IP version, the counted run with the median of what the figure shows
/// (the lower middle one of an even count, so it is a real run), or the runs in `asked`
/// (indexes, e.g. from run ids the user gave) where there are some; the cells of asked
/// runs and `sel.cells` are drawn whatever `sel.tests` and `sel.sizes` say.
pub fn select(campaign: &CampaignData, sel: &Selection, asked: &[usize]) -> Vec<usize> {
    let runs = &campaign.runs;
    let asked: BTreeSet<usize> = asked.iter().copied().filter(|&i| i < runs.len()).collect();
    // Sizes of each (test, direction), over both IP versions.
    let mut sizes: BTreeMap<(usize, u8), BTreeSet<u32>> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.counts()) {
        let (k, d, s) = cell_key(r);
        sizes.entry((k, d)).or_default().insert(s);
    }
    let mut cells: BTreeSet<CellKey> = BTreeSet::new();
    for (&(k, d), set) in &sizes {
        let kind = TestKind::ALL[k];
        if !sel.tests.is_empty() && !sel.tests.contains(&kind) {
            continue;
        }
        let chosen: Vec<u32> = match &sel.sizes {
            SizeChoice::None => Vec::new(),
            SizeChoice::All => set.iter().copied().collect(),
            SizeChoice::Ends => set.first().into_iter().chain(set.last()).copied().collect(),
            SizeChoice::List(l) => set.iter().copied().filter(|s| l.contains(s)).collect(),
        };
        cells.extend(chosen.into_iter().map(|s| (k, d, s)));
    }
    cells.extend(asked.iter().map(|&i| cell_key(&runs[i])));
    cells.extend(
        sel.cells
            .iter()
            .map(|&(k, d, size)| (kind_order(k), direction_order(d), size)),
    );
    let mut out: BTreeSet<usize> = BTreeSet::new();
    for &cell in &cells {
        for family in [Family::V4, Family::V6] {
            let in_cell = |r: &RunRow| cell_key(r) == cell && r.family == family;
            let mine: Vec<usize> = asked
                .iter()
                .copied()
                .filter(|&i| in_cell(&runs[i]))
                .collect();
            if !mine.is_empty() {
                out.extend(mine);
                continue;
            }
            let kind = TestKind::ALL[cell.0];
            // rrul: the run with the median loaded TCP probe RTT.
            let by = if kind == TestKind::Rrul {
                metrics::LOADED_TCP_RTT_P50_NS
            } else {
                shown(kind, runs_direction(cell.1)).run_metric().0
            };
            let value = |r: &RunRow| r.metrics.get(by).copied().filter(|v| v.is_finite());
            let mut candidates: Vec<(f64, u32, usize)> = runs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.counts() && in_cell(r))
                .filter_map(|(i, r)| Some((value(r)?, r.repetition, i)))
                .collect();
            candidates.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            if let Some(&(_, _, i)) = candidates.get(candidates.len().saturating_sub(1) / 2) {
                out.insert(i);
            }
        }
    }
    out.into_iter().collect()
}

pub(crate) fn runs_direction(order: u8) -> Direction {
    match order {
        1 => Direction::Reverse,
        2 => Direction::Bidir,
        _ => Direction::Forward,
    }
}

/// One drawn line: a run's windows as (start s, end s, value).
pub(crate) struct Line {
    pub(crate) label: String,
    pub(crate) colour: &'static str,
    pub(crate) dash: &'static str,
    pub(crate) mark: crate::svg::Mark,
    pub(crate) steps: Vec<(f64, f64, f64)>,
}

/// Two windows as one: counts summed, from the first's start to the second's end.
fn join(a: &IntervalCounts, b: &IntervalCounts) -> IntervalCounts {
    let add = |x: Option<f64>, y: Option<f64>| Some(x? + y?);
    IntervalCounts {
        start_ns: a.start_ns,
        end_ns: b.end_ns,
        sent_bytes: add(a.sent_bytes, b.sent_bytes),
        recv_bytes: add(a.recv_bytes, b.recv_bytes),
        sent_packets: add(a.sent_packets, b.sent_packets),
        recv_packets: add(a.recv_packets, b.recv_packets),
    }
}

/// A run's windows drawn as steps of what `show` counts.
struct Steps {
    /// (start s, end s, value).
    steps: Vec<(f64, f64, f64)>,
    /// Adjacent windows merged this many at a time (more than [`MAX_STEPS`]).
    merged: usize,
    /// A last window shorter than a quarter of the others was merged into the one
    /// before it: the few ms in which a receiver drains its buffer would read as a spike.
    short_tail: bool,
}

fn steps(samples: &[IntervalCounts], show: Shown) -> Steps {
    let mut windows: Vec<IntervalCounts> = samples
        .iter()
        .filter(|s| s.end_ns > s.start_ns && show.value(s, 1.0).is_some())
        .copied()
        .collect();
    let len = |s: &IntervalCounts| s.end_ns - s.start_ns;
    let mut short_tail = false;
    if windows.len() >= 3 {
        let mut others: Vec<i64> = windows[..windows.len() - 1].iter().map(len).collect();
        others.sort_unstable();
        let typical = others[others.len() / 2];
        if let [.., before, last] = windows.as_slice() {
            if len(last) * 4 < typical && before.end_ns == last.start_ns {
                let joined = join(before, last);
                windows.truncate(windows.len() - 2);
                windows.push(joined);
                short_tail = true;
            }
        }
    }
    let merged = windows.len().div_ceil(MAX_STEPS).max(1);
    let steps = windows
        .chunks(merged)
        .filter_map(|group| {
            let first = group.first()?;
            let last = group.last()?;
            let all = IntervalCounts {
                start_ns: first.start_ns,
                end_ns: last.end_ns,
                sent_bytes: group.iter().map(|s| s.sent_bytes).sum(),
                recv_bytes: group.iter().map(|s| s.recv_bytes).sum(),
                sent_packets: group.iter().map(|s| s.sent_packets).sum(),
                recv_packets: group.iter().map(|s| s.recv_packets).sum(),
            };
            // The length counted is the windows' own, not any gap between them.
            let dt_ns: i64 = group.iter().map(len).sum();
            let v = show.value(&all, dt_ns as f64 / 1e9)?;
            Some((first.start_ns as f64 / 1e9, last.end_ns as f64 / 1e9, v))
        })
        .collect();
    Steps {
        steps,
        merged,
        short_tail,
    }
}

/// The time-series figures of `data`'s selected runs; `systems` are the campaigns'
/// display names (as in [`crate::Analysis::systems`]).
/// The fewest samples a run needs for its time series to show anything over time.
pub const MIN_SAMPLES: usize = 3;

/// Why selected runs were not drawn over time: their samples are too few (the interval
/// was as long as the run). `None` when every selected run has enough.
pub fn too_few_samples(data: &Dataset) -> Option<String> {
    let (short, total) = data
        .campaigns
        .iter()
        .flat_map(|c| c.series.iter().map(move |s| (c, s)))
        .filter(|(c, s)| {
            c.runs
                .get(s.run_index)
                .is_some_and(|r| r.kind != TestKind::Rrul)
        })
        .fold((0, 0), |(short, total), (_, s)| {
            (
                short + usize::from(s.samples.len() < MIN_SAMPLES),
                total + 1,
            )
        });
    (short > 0).then(|| {
        format!(
            "{short} of {total} runs selected for the time series have fewer than {MIN_SAMPLES} \
             interval samples (their sampling interval was about as long as the run), so they are \
             not drawn over time: run the study with a shorter --interval (the default samples \
             each run ten times)."
        )
    })
}

pub fn figures(data: &Dataset, systems: &[String]) -> Vec<Figure> {
    type Member<'a> = (usize, &'a RunRow, &'a RunSeries);
    let mut groups: BTreeMap<CellKey, Vec<Member>> = BTreeMap::new();
    for (sys, campaign) in data.campaigns.iter().enumerate() {
        for series in &campaign.series {
            let Some(run) = campaign.runs.get(series.run_index) else {
                continue;
            };
            // rrul runs are drawn by crate::loaded, from their own samples. A run with
            // fewer than MIN_SAMPLES samples is one flat step over time: not drawn
            // ([`too_few_samples`] says why).
            if series.samples.len() >= MIN_SAMPLES && run.kind != TestKind::Rrul {
                groups
                    .entry(cell_key(run))
                    .or_default()
                    .push((sys, run, series));
            }
        }
    }
    groups
        .into_iter()
        .filter_map(|((k, d, size), mut members)| {
            members.sort_by_key(|(sys, run, s)| (*sys, run.family == Family::V6, s.run_id));
            figure(TestKind::ALL[k], runs_direction(d), size, &members, systems)
        })
        .collect()
}

fn figure(
    kind: TestKind,
    direction: Direction,
    size: u32,
    members: &[(usize, &RunRow, &RunSeries)],
    systems: &[String],
) -> Option<Figure> {
    let show = shown(kind, direction);
    let many_systems = members.iter().any(|m| m.0 != members[0].0);
    let mut set = LineSet::new(many_systems, systems);
    let mut merged = 1;
    let mut short_tail = false;
    for &(sys, run, series) in members {
        let drawn = steps(&series.samples, show);
        if drawn.steps.is_empty() {
            continue;
        }
        merged = merged.max(drawn.merged);
        short_tail |= drawn.short_tail;
        set.push((sys, run, series.run_id), drawn.steps);
    }
    let lines = set.lines;
    if lines.is_empty() {
        return None;
    }
    let searched = kind == TestKind::UdpStream
        && members.iter().any(|m| {
            m.1.metrics
                .get(metrics::RATE_SEARCH_TRIALS)
                .is_some_and(|t| *t > 0.0)
        });
    let (quantity, unit) = show.axis();
    let mut note = format!(
        "Each step is one sampling interval of one run: the client's own count over the interval's length. Time runs from when the client's data workers started, on its clock; the last interval can be shorter. {} Runs (ids in the legend): the median-{} run of each system and IP version, or those chosen with --timeseries.",
        show.note(),
        show.run_metric().1,
    );
    if searched {
        note.push_str(" UDP throughput searched per RFC 2544: the samples are those of the trial the search chose, at its offered rate.");
    }
    if short_tail {
        note.push_str(" A last interval shorter than a quarter of the others is drawn merged into the one before it (a few ms of draining would read as a spike).");
    }
    if merged > 1 {
        let _ = write!(
            note,
            " Intervals merged {merged} at a time to draw at most {MAX_STEPS} steps."
        );
    }
    let id = format!("{}-timeseries", cell_id(kind, direction, size));
    let title = format!(
        "{} at {size} bytes: {quantity} over time",
        test_title(kind, direction)
    );
    Some(render(
        &id,
        title,
        (
            "Time since the client's data workers started (s)",
            quantity,
            unit,
        ),
        &lines,
        &note,
    ))
}

/// The lines of one figure over time, styled as they are added ([`styled_line`]): the
/// second run of one system and IP version (asked for by id) is dotted.
pub(crate) struct LineSet<'a> {
    pub(crate) lines: Vec<Line>,
    seen: BTreeMap<(usize, Family), usize>,
    many_systems: bool,
    systems: &'a [String],
}

impl<'a> LineSet<'a> {
    pub(crate) fn new(many_systems: bool, systems: &'a [String]) -> LineSet<'a> {
        LineSet {
            lines: Vec::new(),
            seen: BTreeMap::new(),
            many_systems,
            systems,
        }
    }
    /// Add run `run_id` (of campaign `sys`) drawn as `steps`.
    pub(crate) fn push(
        &mut self,
        (sys, run, run_id): (usize, &RunRow, i64),
        steps: Vec<(f64, f64, f64)>,
    ) {
        let nth = self.seen.entry((sys, run.family)).or_default();
        self.lines.push(styled_line(
            (sys, run, run_id),
            *nth,
            self.many_systems,
            self.systems,
            steps,
        ));
        *nth += 1;
    }
}

/// A run's line as every figure over time draws it: its system's colour pair (IPv4 the
/// first, IPv6 the second, with a dash and square markers), a second run of the same
/// system and IP version (asked for by id) dotted, labelled with system (when several),
/// IP version and run id.
pub(crate) fn styled_line(
    (sys, run, run_id): (usize, &RunRow, i64),
    nth: usize,
    many_systems: bool,
    systems: &[String],
    steps: Vec<(f64, f64, f64)>,
) -> Line {
    let v6 = run.family == Family::V6;
    let who = match (many_systems, systems.get(sys)) {
        (true, Some(name)) => format!("{name} {}", run.family),
        _ => run.family.to_string(),
    };
    Line {
        label: format!("{who} · run {run_id}"),
        colour: crate::svg::colour_of(sys),
        dash: match (nth, v6) {
            (0, false) => "",
            (0, true) => "7 4",
            _ => "2 3",
        },
        mark: crate::svg::Mark::of(sys, v6),
        steps,
    }
}

/// Draw the lines against time: frame, ticks, step lines with a marker on every few
/// steps, a legend that wraps, and the note. `axes` = (time axis label, quantity, unit).
pub(crate) fn render(
    id: &str,
    title: String,
    (x_label, quantity, unit): (&str, &str, &str),
    lines: &[Line],
    note: &str,
) -> Figure {
    // A step that is not a finite, non-negative value at finite times is not drawn.
    let sane = |x: f64| x.is_finite() && (0.0..=MAX_DRAWN).contains(&x);
    let lines: Vec<Line> = lines
        .iter()
        .map(|l| Line {
            label: l.label.clone(),
            steps: l
                .steps
                .iter()
                .copied()
                .filter(|&(t0, t1, v)| sane(t0) && sane(t1) && t1 >= t0 && sane(v))
                .collect(),
            ..*l
        })
        .collect();
    let lines = lines.as_slice();
    let y_hi = lines
        .iter()
        .flat_map(|l| l.steps.iter().map(|s| s.2))
        .fold(0.0_f64, f64::max);
    let y_hi = if y_hi > 0.0 && y_hi.is_finite() {
        y_hi
    } else {
        1.0
    };
    // Lines whose typical levels differ by more than LOG_AXIS_SPREAD (two systems 30 to
    // 100x apart) get a logarithmic axis, as the figures against packet size do: on a
    // linear one the slower lines lie on the floor. A stall (0) is drawn at the floor.
    let log = log_floor(lines, y_hi);
    let (y_ticks, y_min, y_max, y_texts) = crate::svg::y_axis(log, y_hi, None);
    let note = if log.is_some() {
        format!(
            "{note} The y axis is logarithmic: the lines differ by more than a factor of {}, which a linear axis would flatten; a stall (0) is drawn at its floor.",
            crate::svg::LOG_AXIS_SPREAD
        )
    } else {
        note.to_string()
    };
    let note = note.as_str();
    let widest = y_texts
        .iter()
        .map(|t| text_width(t, AXIS_FONT))
        .fold(0.0_f64, f64::max);
    let left = 34.0 + widest + 10.0;
    let t_hi = lines
        .iter()
        .flat_map(|l| l.steps.iter().map(|s| s.1))
        .fold(0.0_f64, f64::max);
    let t_hi = if t_hi > 0.0 && t_hi.is_finite() {
        t_hi
    } else {
        1.0
    };
    // The axis ends where the last run does (no empty stretch after it).
    let mut x_ticks = nice_ticks(0.0, t_hi, 6);
    let x_step = if x_ticks.len() > 1 {
        x_ticks[1] - x_ticks[0]
    } else {
        1.0
    };
    x_ticks.retain(|&t| t <= t_hi * (1.0 + 1e-9));
    let x_max = t_hi;

    let title_lines = wrap(&title, TITLE_FONT * 1.1, WIDTH - 20.0, TITLE_MAX_LINES);
    let top = 14.0 + title_lines.len() as f64 * (TITLE_FONT + 4.0) + 14.0;
    let bottom = top + PLOT_HEIGHT;
    let px = |t: f64| left + t / x_max * (WIDTH - left - RIGHT);
    let py = |v: f64| {
        let frac = if log.is_some() {
            (v.max(y_min).log10() - y_min.log10()) / (y_max.log10() - y_min.log10())
        } else {
            v / y_max
        };
        bottom - frac * (bottom - top)
    };
    let (legend, legend_bottom) =
        legend_layout(lines.iter().map(|l| l.label.as_str()), bottom + 76.0);
    let note_lines = wrap(note, NOTE_FONT, WIDTH - 20.0, NOTE_MAX_LINES);
    let note_top = legend_bottom + 14.0;
    let height = (note_top + note_lines.len() as f64 * (NOTE_FONT + 3.0) + 8.0).ceil();

    let mut svg = figure_open(id, &title, &title_lines, height);
    if log.is_some() {
        svg.push_str("<desc>The y axis is logarithmic.</desc>\n");
    }
    y_grid(&mut svg, &y_ticks, &y_texts, left, &py);
    // Time labels that would touch are thinned to every second (third, …) one.
    let x_texts: Vec<String> = x_ticks.iter().map(|&t| tick_label(t, x_step)).collect();
    let widest_x = x_texts
        .iter()
        .map(|t| text_width(t, AXIS_FONT))
        .fold(0.0_f64, f64::max);
    let gap = px(x_step) - px(0.0);
    let every = if gap > 0.0 {
        ((widest_x + 6.0) / gap).ceil().max(1.0) as usize
    } else {
        1
    };
    for (i, (&t, text)) in x_ticks.iter().zip(&x_texts).enumerate() {
        let x = c(px(t));
        let label = if i % every == 0 {
            // A label centred on the right edge would stick out: it ends there instead.
            let anchor = if px(t) + text_width(text, AXIS_FONT) / 2.0 > WIDTH - 6.0 {
                "end"
            } else {
                "middle"
            };
            format!(
                "<text class=\"xtick\" x=\"{x}\" y=\"{}\" text-anchor=\"{anchor}\">{text}</text>",
                c(bottom + 6.0 + AXIS_FONT)
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            svg,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"#333333\"/>{label}",
            c(bottom),
            c(bottom + 5.0),
        );
    }
    axes(&mut svg, (left, top, bottom), x_label, quantity, unit);
    for l in lines {
        draw_line(&mut svg, l, &px, &py);
    }
    for (l, slot) in lines.iter().zip(&legend) {
        legend_entry(&mut svg, slot, l.colour, l.dash, l.mark);
    }
    figure_close(&mut svg, &note_lines, note_top);
    Figure {
        id: id.to_string(),
        title,
        svg,
    }
}

/// `Some(floor)` when the medians of the lines' positive steps differ by more than
/// [`crate::svg::LOG_AXIS_SPREAD`]: the lowest positive step, at most four decades below
/// the top, where a logarithmic axis starts.
fn log_floor(lines: &[Line], y_hi: f64) -> Option<f64> {
    let medians: Vec<f64> = lines
        .iter()
        .filter_map(|l| {
            let mut v: Vec<f64> = l.steps.iter().map(|s| s.2).filter(|v| *v > 0.0).collect();
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        })
        .collect();
    let lo_med = medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi_med = medians.iter().copied().fold(0.0_f64, f64::max);
    if !(medians.len() > 1 && lo_med > 0.0 && hi_med / lo_med > crate::svg::LOG_AXIS_SPREAD) {
        return None;
    }
    let lowest = lines
        .iter()
        .flat_map(|l| l.steps.iter().map(|s| s.2))
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    Some(lowest.max(y_hi / 1e4))
}

/// One line as steps (a horizontal segment per window, joined where windows meet), with
/// a marker at the middle of about every fifteenth window.
fn draw_line(svg: &mut String, l: &Line, px: &dyn Fn(f64) -> f64, py: &dyn Fn(f64) -> f64) {
    let _ = writeln!(
        svg,
        "<g class=\"series\" data-label=\"{}\" data-colour=\"{}\">",
        svg_escape(&truncate_chars(&l.label, ATTR_MAX_CHARS)),
        l.colour
    );
    let mut d = String::new();
    let mut end: Option<f64> = None;
    for &(t0, t1, v) in &l.steps {
        let joined = end.is_some_and(|e| (e - t0).abs() < 1e-9);
        let _ = write!(
            d,
            "{}{} {} H{} ",
            if joined { "L" } else { "M" },
            c(px(t0)),
            c(py(v)),
            c(px(t1))
        );
        end = Some(t1);
    }
    let dash = if l.dash.is_empty() {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{}\"", l.dash)
    };
    let _ = writeln!(
        svg,
        "<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{dash}/>",
        d.trim_end(),
        l.colour
    );
    let every = l.steps.len().div_ceil(15).max(1);
    for &(t0, t1, v) in l.steps.iter().step_by(every) {
        let _ = writeln!(
            svg,
            "{}",
            marker(px((t0 + t1) / 2.0), py(v), l.colour, l.mark)
        );
    }
    svg.push_str("</g>\n");
}

/// The figure-id stem of one cell: test kind, direction (nothing for forward) and size,
/// as `tcp-stream-reverse-1408`; every per-cell figure's id starts with it.
pub(crate) fn cell_id(kind: TestKind, direction: Direction, size: u32) -> String {
    format!(
        "{}{}-{size}",
        kind.name(),
        match direction {
            Direction::Forward => "",
            Direction::Reverse => "-reverse",
            Direction::Bidir => "-bidir",
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::RunOutcome;
    use wire::spec::TestKind::{TcpRr, TcpStream, UdpStream};

    /// Steps with an infinite, NaN or negative value or time are not drawn; the sane
    /// steps are, and no coordinate says inf or NaN.
    #[test]
    fn non_finite_and_negative_steps_are_not_drawn() {
        let line = |steps: Vec<(f64, f64, f64)>| Line {
            label: "S IPv4 · run 1".into(),
            colour: "#000000",
            dash: "",
            mark: crate::svg::Mark::of(0, false),
            steps,
        };
        let lines = [
            line(vec![
                (0.0, 1.0, 10.0),
                (1.0, 2.0, f64::INFINITY),
                (2.0, 3.0, f64::NAN),
                (3.0, 4.0, -5.0),
                (4.0, f64::INFINITY, 10.0),
                (5.0, 6.0, 1e308),
                (6.0, 7.0, 12.0),
            ]),
            line(vec![(f64::NEG_INFINITY, 1.0, 3.0)]),
        ];
        let fig = render(
            "t",
            "T".into(),
            ("Time (s)", "throughput", "Mbit/s"),
            &lines,
            "n",
        );
        assert!(
            !fig.svg.contains("inf") && !fig.svg.contains("NaN"),
            "{}",
            fig.svg
        );
        // Two sane steps, not joined (a gap between them): two moves in the path.
        let series = fig
            .svg
            .split("<g class=\"series\"")
            .nth(1)
            .unwrap_or_default();
        assert_eq!(series.matches(" H").count(), 2, "{series}");
        let top: f64 = fig
            .svg
            .split("<text class=\"ytick\"")
            .filter_map(|t| t.split('>').nth(1)?.split('<').next()?.parse().ok())
            .fold(0.0, f64::max);
        assert!(top <= 20.0, "axis to {top}");
    }

    fn run(kind: TestKind, family: Family, size: u32, rep: u32, bps: f64) -> RunRow {
        RunRow {
            family,
            kind,
            direction: Direction::Forward,
            payload_bytes: size,
            repetition: rep,
            warmup: false,
            outcome: RunOutcome::Ok,
            metrics: BTreeMap::from([
                (metrics::THROUGHPUT_BPS.to_string(), bps),
                (metrics::TRANSACTIONS_PER_S.to_string(), bps),
            ])
            .into(),
        }
    }

    /// Cells at 128, 640 and 1408 bytes, IPv4 and IPv6, runs of 3, 1 and 2 Mbit/s.
    fn campaign(kind: TestKind) -> CampaignData {
        let mut runs = Vec::new();
        for size in [640, 128, 1408] {
            for family in [Family::V4, Family::V6] {
                for (rep, v) in [3e6, 1e6, 2e6].into_iter().enumerate() {
                    runs.push(run(kind, family, size, rep as u32, v));
                }
            }
        }
        CampaignData {
            id: 1,
            label: "S".into(),
            runs,
            ..Default::default()
        }
    }

    fn picked(c: &CampaignData, idx: &[usize]) -> Vec<(u32, Family, f64)> {
        idx.iter()
            .map(|&i| {
                let r = &c.runs[i];
                (
                    r.payload_bytes,
                    r.family,
                    r.metrics[metrics::THROUGHPUT_BPS],
                )
            })
            .collect()
    }

    #[test]
    fn default_selection_is_the_median_run_at_the_smallest_and_largest_size() {
        let c = campaign(TcpStream);
        let got = picked(&c, &select(&c, &Selection::default(), &[]));
        assert_eq!(
            got,
            vec![
                (128, Family::V4, 2e6),
                (128, Family::V6, 2e6),
                (1408, Family::V4, 2e6),
                (1408, Family::V6, 2e6),
            ]
        );
    }

    #[test]
    fn an_even_count_takes_the_lower_middle_run_and_warmups_never_count() {
        let mut c = campaign(TcpStream);
        c.runs.push(run(TcpStream, Family::V4, 128, 3, 4e6));
        c.runs.push(RunRow {
            warmup: true,
            ..run(TcpStream, Family::V4, 128, 4, 2.5e6)
        });
        let sel = Selection {
            sizes: SizeChoice::List(vec![128]),
            ..Selection::default()
        };
        // IPv4 at 128: 1, 2, 3, 4 Mbit/s counted → 2 (a real run, not 2.5).
        let got = picked(&c, &select(&c, &sel, &[]));
        assert_eq!(got[0], (128, Family::V4, 2e6));
    }

    #[test]
    fn a_run_asked_for_replaces_the_median_of_its_cell_and_adds_its_cell() {
        let c = campaign(TcpStream);
        // The 3 Mbit/s IPv6 run at 640 bytes.
        let asked = c
            .runs
            .iter()
            .position(|r| r.payload_bytes == 640 && r.family == Family::V6)
            .unwrap_or(0);
        let got = picked(&c, &select(&c, &Selection::none(), &[asked]));
        assert_eq!(
            got,
            vec![(640, Family::V4, 2e6), (640, Family::V6, 3e6)],
            "IPv4 beside it is still the median run"
        );
        assert!(select(&c, &Selection::none(), &[]).is_empty());
        assert!(
            select(&c, &Selection::none(), &[999]).is_empty(),
            "no such run"
        );
    }

    #[test]
    fn tests_narrow_the_selection() {
        let mut c = campaign(TcpStream);
        c.runs.extend(campaign(UdpStream).runs);
        let sel = Selection {
            tests: vec![UdpStream],
            sizes: SizeChoice::All,
            cells: vec![],
        };
        let idx = select(&c, &sel, &[]);
        assert_eq!(idx.len(), 6, "3 sizes × 2 IP versions");
        assert!(idx.iter().all(|&i| c.runs[i].kind == UdpStream));
    }

    fn samples(bytes: &[f64]) -> Vec<IntervalCounts> {
        bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| IntervalCounts {
                start_ns: i as i64 * 1_000_000_000,
                end_ns: (i as i64 + 1) * 1_000_000_000,
                sent_bytes: Some(b),
                recv_bytes: Some(b / 2.0),
                sent_packets: Some(b / 1000.0),
                recv_packets: Some(b / 1000.0),
            })
            .collect()
    }

    fn with_series(mut c: CampaignData, bytes: &[f64]) -> Dataset {
        c.series = select(&c, &Selection::default(), &[])
            .into_iter()
            .map(|i| RunSeries {
                run_index: i,
                run_id: 100 + i as i64,
                samples: samples(bytes),
                windows: Vec::new(),
                loaded: Vec::new(),
            })
            .collect();
        Dataset { campaigns: vec![c] }
    }

    /// The figure's words, tags removed (notes wrap anywhere).
    fn words(svg: &str) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        for ch in svg.chars() {
            match ch {
                '<' => in_tag = true,
                '>' => {
                    in_tag = false;
                    out.push(' ');
                }
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn path_of(svg: &str) -> String {
        svg.split("<g class=\"series\"")
            .nth(1)
            .and_then(|g| g.split("<path d=\"").nth(1))
            .and_then(|p| p.split('"').next())
            .unwrap_or_default()
            .to_string()
    }

    /// 125 MB in a 1 s window is 1000 Mbit/s; a window with nothing sent is drawn at 0,
    /// not left out; each window is one horizontal step.
    #[test]
    fn each_window_is_a_step_at_its_rate_and_a_stall_is_drawn_at_zero() {
        let data = with_series(campaign(TcpStream), &[125e6, 0.0, 62.5e6]);
        let figs = figures(&data, &["S".to_string()]);
        assert_eq!(figs.len(), 2, "128 and 1408 bytes");
        let fig = &figs[0];
        assert_eq!(fig.id, "tcp-stream-128-timeseries");
        assert!(
            fig.title.contains("sending rate at the client"),
            "{}",
            fig.title
        );
        assert!(fig.svg.contains("IPv4 · run 1"), "run id in the legend");
        let d = path_of(&fig.svg);
        assert_eq!(d.matches('H').count(), 3, "{d}");
        assert_eq!(d.matches('M').count(), 1, "contiguous windows joined: {d}");
        let ticks: Vec<&str> = fig
            .svg
            .split("class=\"ytick\"")
            .skip(1)
            .filter_map(|t| t.split('>').nth(1))
            .filter_map(|t| t.split('<').next())
            .collect();
        assert_eq!(ticks.last().copied(), Some("1000"), "{ticks:?}");
        // The plot's bottom (y of the 0 tick's grid line) is where the stall is drawn.
        let zero_y = fig
            .svg
            .split("<line x1=")
            .nth(1)
            .and_then(|l| l.split("y1=\"").nth(1))
            .and_then(|y| y.split('"').next())
            .unwrap_or("?");
        assert!(
            d.contains(&format!(" {zero_y} H")),
            "no step at 0 ({zero_y}): {d}"
        );
        assert!(words(&fig.svg).contains("client only sends"));
        assert!(fig.svg.contains("Time since the client"));
    }

    #[test]
    fn reverse_shows_what_the_client_received_and_rr_its_transaction_rate() {
        let mut c = campaign(TcpStream);
        for r in &mut c.runs {
            r.direction = Direction::Reverse;
        }
        let figs = figures(&with_series(c, &[125e6, 125e6, 125e6]), &["S".to_string()]);
        assert_eq!(figs[0].id, "tcp-stream-reverse-128-timeseries");
        assert!(figs[0].title.contains("goodput received by the client"));
        // Received half the bytes sent: 500 Mbit/s.
        assert!(figs[0].svg.contains(">500<"), "{}", figs[0].svg);
        let figs = figures(
            &with_series(campaign(TcpRr), &[125e6, 125e6, 125e6]),
            &["S".into()],
        );
        assert_eq!(figs[0].id, "tcp-rr-128-timeseries");
        assert!(figs[0].title.contains("transactions per second"));
        assert!(words(&figs[0].svg).contains("hold no RTT"));
    }

    #[test]
    fn long_runs_are_merged_into_at_most_max_steps_and_the_figure_says_so() {
        let bytes = vec![1e6; MAX_STEPS * 3 + 1];
        let drawn = steps(&samples(&bytes), Shown::SendRate);
        assert_eq!(drawn.merged, 4);
        let st = drawn.steps;
        assert!(st.len() <= MAX_STEPS, "{}", st.len());
        assert!(st.iter().all(|s| (s.2 - 8.0).abs() < 1e-9), "8 Mbit/s kept");
        let figs = figures(&with_series(campaign(TcpStream), &bytes), &["S".into()]);
        assert!(words(&figs[0].svg).contains("merged 4 at a time"));
    }

    /// A 2 ms last window holding 1 MB (a receiver draining its buffer: 4 Gbit/s over
    /// it) is drawn together with the window before it, and the figure says so; a last
    /// window of half an interval is drawn as it is.
    #[test]
    fn a_very_short_last_window_is_merged_into_the_one_before() {
        let mut s = samples(&[1e6, 1e6, 1e6]);
        s.push(IntervalCounts {
            start_ns: 3_000_000_000,
            end_ns: 3_002_000_000,
            sent_bytes: Some(1e6),
            ..s[0]
        });
        let drawn = steps(&s, Shown::SendRate);
        assert!(drawn.short_tail);
        assert_eq!(drawn.steps.len(), 3);
        let last = drawn.steps[2];
        assert!((last.1 - 3.002).abs() < 1e-9, "{last:?}");
        // 2 MB over 1.002 s.
        assert!((last.2 - 16.0 / 1.002).abs() < 1e-6, "{last:?}");
        s[3].end_ns = 3_500_000_000;
        let drawn = steps(&s, Shown::SendRate);
        assert!(!drawn.short_tail);
        assert_eq!(drawn.steps.len(), 4);
        let mut c = campaign(TcpStream);
        c.series = vec![RunSeries {
            run_index: 0,
            run_id: 1,
            samples: {
                s[3].end_ns = 3_002_000_000;
                s
            },
            windows: Vec::new(),
            loaded: Vec::new(),
        }];
        let figs = figures(&Dataset { campaigns: vec![c] }, &["S".into()]);
        assert!(words(&figs[0].svg).contains("merged into the one before it"));
    }

    #[test]
    fn runs_of_fewer_than_three_samples_are_not_drawn_and_the_report_says_why() {
        // Issue 29: the default study's 0.5 s runs sampled every second drew one flat
        // step under a ten-line caption.
        let two = with_series(campaign(TcpStream), &[1e6, 2e6]);
        assert!(figures(&two, &["S".into()]).is_empty());
        let why = too_few_samples(&two).expect("a reason");
        assert!(why.contains("have fewer than 3 interval samples"), "{why}");
        let three = with_series(campaign(TcpStream), &[1e6, 2e6, 3e6]);
        assert!(!figures(&three, &["S".into()]).is_empty());
        assert_eq!(too_few_samples(&three), None);
    }

    /// Issue 41: time series of two systems 30-100x apart were drawn on a linear axis,
    /// the slower system's lines on the floor. They get a logarithmic axis, said in the
    /// note; lines within a factor of 10 stay linear from 0.
    #[test]
    fn time_series_an_order_of_magnitude_apart_get_a_log_axis() {
        let line = |label: &str, level: f64| Line {
            label: label.to_string(),
            colour: "#000000",
            dash: "",
            mark: crate::svg::Mark::of(0, false),
            steps: (0..10)
                .map(|i| {
                    (
                        f64::from(i) * 0.1,
                        f64::from(i + 1) * 0.1,
                        level * (1.0 + 0.01 * f64::from(i)),
                    )
                })
                .collect(),
        };
        let axes = ("Time (s)", "throughput", "Mbit/s");
        let fig = render(
            "t",
            "T".into(),
            axes,
            &[line("fast", 9000.0), line("slow", 180.0)],
            "n.",
        );
        assert!(fig.svg.contains("<desc>The y axis is logarithmic.</desc>"));
        assert!(
            words(&fig.svg).contains("logarithmic"),
            "{}",
            words(&fig.svg)
        );
        let fig = render(
            "t",
            "T".into(),
            axes,
            &[line("a", 900.0), line("b", 180.0)],
            "n.",
        );
        assert!(!fig.svg.contains("logarithmic"));
    }

    #[test]
    fn runs_without_samples_make_no_figure() {
        let mut data = with_series(campaign(TcpStream), &[]);
        assert!(figures(&data, &["S".into()]).is_empty());
        data.campaigns[0].series.clear();
        assert!(figures(&data, &["S".into()]).is_empty());
    }

    /// Six systems × two IP versions: six colours (one per system), and every legend
    /// line inside the figure (a long label wraps).
    #[test]
    fn six_systems_get_six_colours_and_legends_inside() {
        let long = "A system with a remarkably long label that no legend row holds";
        let labels = ["Linux", "Windows", long, "FreeBSD", "macOS", "OpenBSD"];
        let data = crate::fixture::with_series(crate::fixture::systems(&labels));
        let names: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
        let figs = figures(&data, &names);
        assert_eq!(figs.len(), 8, "4 tests × 2 sizes");
        for fig in &figs {
            let colours: BTreeSet<&str> = fig
                .svg
                .split("data-colour=\"")
                .skip(1)
                .filter_map(|s| s.split('"').next())
                .collect();
            // One colour per system (the IP version and the run are the line style).
            assert_eq!(colours.len(), 6, "{}: {colours:?}", fig.id);
            let height: f64 = fig
                .svg
                .split("height=\"")
                .nth(1)
                .and_then(|h| h.split('"').next())
                .and_then(|h| h.parse().ok())
                .unwrap_or(0.0);
            for g in fig.svg.split("<g class=\"legend\">").skip(1) {
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
                        "{}: {text} at {x}",
                        fig.id
                    );
                }
                let y: f64 = g
                    .split("y1=\"")
                    .nth(1)
                    .and_then(|y| y.split('"').next())
                    .and_then(|y| y.parse().ok())
                    .unwrap_or(f64::INFINITY);
                assert!(y < height, "{}: legend at {y} below {height}", fig.id);
            }
            assert!(
                words(&fig.svg).contains("no legend row holds"),
                "label lost"
            );
        }
    }
}
