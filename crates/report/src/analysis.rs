//! From a [`Dataset`] to numbers: which views (transport × metric) have data, the summary
//! of every cell (system × IP version × packet size), and the IPv4-vs-IPv6 and
//! system-vs-system comparisons with their tests and Holm correction across sizes.
//! Produces no text; the tables, figures and findings format what is here.

mod compare;
mod views;

pub use compare::{Comparison, Emptied, Point, Side, Tally};
pub use views::View;

use crate::dataset::{Dataset, RunRow};
use compare::{compare, correct_over_report, unlike};
use stats::{outliers, percent_difference, PercentBase, Summary};
use std::collections::{BTreeMap, BTreeSet};
use views::{def_quantity, view_id, view_unit, VIEW_DEFS};
use wire::metrics;
use wire::spec::{Direction, Family, TestKind};

/// Analysis settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnalysisOptions {
    /// Confidence level of intervals, e.g. 0.95.
    pub confidence: f64,
    /// Significance level applied to Holm-adjusted p-values, e.g. 0.05.
    pub alpha: f64,
    /// What every percentage difference A − B is taken over (A = IPv4 or the first
    /// system): one base for every table, sentence and figure, stated with it.
    pub percent_base: PercentBase,
    /// Which p-values Holm's correction runs over.
    pub holm_family: HolmFamily,
}

/// The family of tests Holm's correction runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HolmFamily {
    /// The sizes of one comparison (one view, one pair of sides): the default.
    #[default]
    Comparison,
    /// Every test the report makes (every view, comparison and size compared): wider,
    /// so fewer calls survive.
    Report,
}

impl HolmFamily {
    /// "across the sizes of each comparison" / "across all N tests of the report", for
    /// the notes; `tests` is the report's count.
    pub fn words(self, tests: usize) -> String {
        match self {
            HolmFamily::Comparison => "across the sizes of each comparison".to_string(),
            HolmFamily::Report => format!("across all {tests} tests of the report"),
        }
    }
}

impl Default for AnalysisOptions {
    fn default() -> Self {
        AnalysisOptions {
            confidence: 0.95,
            alpha: 0.05,
            percent_base: PercentBase::Second,
            holm_family: HolmFamily::Comparison,
        }
    }
}

impl AnalysisOptions {
    /// "IPv4 − IPv6, as % of IPv6" for these names under this report's base.
    pub fn percent_words(&self, a: &str, b: &str) -> String {
        stats::base_words(a, b, self.percent_base)
    }

    /// The name of the side the base is, of `a` and `b`.
    pub fn base_name<'a>(&self, a: &'a str, b: &'a str) -> &'a str {
        match self.percent_base {
            PercentBase::First => a,
            PercentBase::Second => b,
        }
    }

    /// A − B as a percentage of this report's base (NaN where it has none).
    pub fn percent(&self, a: f64, b: f64) -> f64 {
        percent_difference(a, b, self.percent_base).unwrap_or(f64::NAN)
    }
}

/// One cell: the displayed values of one system × family × size.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub values: Vec<f64>,
    pub summary: Summary,
    /// Per value, whether it lies beyond [`stats::OUTLIER_SCALED_MADS`] scaled MADs of
    /// the cell's median. Outliers stay in every statistic; they are marked and named.
    pub outlier: Vec<bool>,
    /// The mean length of the cell's runs, s (the `duration_s` they stored), for link
    /// ceilings that depend on it (a tbf bucket).
    pub mean_duration_s: Option<f64>,
}

impl Cell {
    pub fn new(values: Vec<f64>) -> Cell {
        Cell {
            summary: Summary::of(&values),
            outlier: outliers(&values),
            values,
            mean_duration_s: None,
        }
    }

    /// The outlying values, in run order.
    pub fn outliers(&self) -> Vec<f64> {
        self.values
            .iter()
            .zip(&self.outlier)
            .filter(|(_, o)| **o)
            .map(|(v, _)| *v)
            .collect()
    }

    /// The summary without the outliers (`None` when there are none).
    pub fn without_outliers(&self) -> Option<Summary> {
        self.outlier.iter().any(|o| *o).then(|| {
            let kept: Vec<f64> = self
                .values
                .iter()
                .zip(&self.outlier)
                .filter(|(_, o)| !**o)
                .map(|(v, _)| *v)
                .collect();
            Summary::of(&kept)
        })
    }
}

/// Everything known about one view.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewData {
    pub view: View,
    pub sizes: Vec<u32>,
    /// Systems (campaign labels) with data in this view, in campaign order.
    pub systems: Vec<String>,
    pub cells: BTreeMap<(usize, Family, u32), Cell>,
    /// Per cell, the counted runs left out because they were receiver-limited (loss
    /// views only); a cell whose runs were all left out is here and not in `cells`.
    pub left_out: BTreeMap<(usize, Family, u32), usize>,
    /// IPv4 vs IPv6, one per system.
    pub family_cmp: Vec<Comparison>,
    /// Every pair of systems (each in campaign order), per IP version.
    pub system_cmp: Vec<Comparison>,
    /// The largest value the quantity can take, where it has one: 100 for loss and the
    /// host's busy CPU; 100 × the most cores any system's host records for a process's
    /// CPU (a process can keep every core busy, no more). A figure's axis ends there.
    pub value_cap: Option<f64>,
}

impl ViewData {
    pub fn cell(&self, system: usize, family: Family, size: u32) -> Option<&Cell> {
        self.cells.get(&(system, family, size))
    }

    /// The sizes at which every one of `who` (system, IP version) has a cell: a mean over
    /// sizes is only comparable over the sizes both sides have.
    pub fn common_sizes(&self, who: &[(usize, Family)]) -> Vec<u32> {
        self.sizes
            .iter()
            .copied()
            .filter(|&s| {
                who.iter()
                    .all(|&(sys, f)| self.cell(sys, f, s).is_some_and(|c| c.summary.n > 0))
            })
            .collect()
    }

    /// "A vs B (context): why" for every comparison not made because its sides are not
    /// like with like (the method's criterion aside: the view says that once).
    pub fn not_compared_notes(&self) -> Vec<String> {
        self.family_cmp
            .iter()
            .chain(&self.system_cmp)
            .filter(|_| self.view.criterion.is_none())
            .filter_map(|c| {
                let why = c.not_compared.as_ref()?;
                Some(format!("{} vs {} ({}): {why}", c.a, c.b, c.context))
            })
            .collect()
    }

    /// Mean over `sizes` of the per-size means (as the studies' mean tables); `None`
    /// when a size has no cell (use [`ViewData::common_sizes`]) or `sizes` is empty.
    pub fn mean_over(&self, system: usize, family: Family, sizes: &[u32]) -> Option<f64> {
        if sizes.is_empty() {
            return None;
        }
        let mut sum = 0.0;
        for &s in sizes {
            let m = self.cell(system, family, s)?.summary.mean;
            if !m.is_finite() {
                return None;
            }
            sum += m;
        }
        Some(sum / sizes.len() as f64)
    }
}

/// The whole analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct Analysis {
    pub options: AnalysisOptions,
    pub systems: Vec<String>,
    pub views: Vec<ViewData>,
    /// Counted UDP runs left out of the loss views because they were receiver-limited
    /// (`wire::metrics::RECEIVER_LIMITED`): their loss describes the receiving host.
    pub receiver_limited_runs: usize,
    /// Per system: the stream tests whose throughput is the offered load, with why
    /// ([`crate::CampaignData::offered_load`]).
    pub offered_load: Vec<BTreeMap<TestKind, String>>,
    /// With [`HolmFamily::Report`], how many tests the correction ran over.
    pub holm_report_tests: Option<usize>,
}

impl Analysis {
    /// What Holm's correction ran over, in words for the notes.
    pub fn holm_words(&self) -> String {
        self.options
            .holm_family
            .words(self.holm_report_tests.unwrap_or(0))
    }
}

/// System labels made unique (a repeated label gets " #id").
fn system_labels(data: &Dataset) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &data.campaigns {
        *seen.entry(c.label.as_str()).or_default() += 1;
    }
    data.campaigns
        .iter()
        .map(|c| {
            let base = if c.label.trim().is_empty() {
                format!("campaign {}", c.id)
            } else {
                c.label.clone()
            };
            if seen.get(c.label.as_str()).copied().unwrap_or(0) > 1 {
                format!("{base} #{}", c.id)
            } else {
                base
            }
        })
        .collect()
}

fn has_metric(run: &RunRow, kind: TestKind, direction: Direction, metric: &str) -> bool {
    measured(run, kind, direction, metric) && !left_out(run, metric)
}

/// A counted run of this test with a finite value of `metric`.
fn measured(run: &RunRow, kind: TestKind, direction: Direction, metric: &str) -> bool {
    run.counts()
        && run.kind == kind
        && run.direction == direction
        && run.metrics.get(metric).is_some_and(|v| v.is_finite())
}

/// A run whose value of `metric` is left out: the loss of a receiver-limited run.
fn left_out(run: &RunRow, metric: &str) -> bool {
    metric == metrics::LOSS_PCT && receiver_limited(run)
}

/// The receiving host dropped datagrams itself in this run: its loss is no network
/// figure, so no loss comparison uses it.
fn receiver_limited(run: &RunRow) -> bool {
    run.metrics
        .get(metrics::RECEIVER_LIMITED)
        .is_some_and(|v| *v > 0.0)
}

/// The RTT percentiles stored with every request/response run, as (label, metric).
pub const RTT_PERCENTILES: [(&str, &str); 4] = [
    ("p50", metrics::RTT_P50_NS),
    ("p90", metrics::RTT_P90_NS),
    ("p99", metrics::RTT_P99_NS),
    ("p99.9", metrics::RTT_P999_NS),
];

/// One percentile of an RTT view: its label ("p99") and, per cell (system, IP version,
/// size), each run's value.
pub type PercentileCells = (&'static str, BTreeMap<(usize, Family, u32), Vec<f64>>);

/// Each run's stored RTT percentiles for the cells of an RTT view (same runs, same
/// system index, the view's display unit). Empty for a view that is not RTT or whose
/// runs stored no percentiles.
pub fn rtt_percentiles(data: &Dataset, vd: &ViewData) -> Vec<PercentileCells> {
    let view = &vd.view;
    if view.metric != metrics::RTT_MEAN_NS {
        return Vec::new();
    }
    // The view's scale turns ns into its unit (ms or µs).
    RTT_PERCENTILES
        .iter()
        .filter_map(|&(label, metric)| {
            let mut cells: BTreeMap<(usize, Family, u32), Vec<f64>> = BTreeMap::new();
            for (sys, campaign) in data.campaigns.iter().enumerate() {
                for run in &campaign.runs {
                    if !has_metric(run, view.kind, view.direction, view.metric) {
                        continue;
                    }
                    if let Some(v) = run.metrics.get(metric).filter(|v| v.is_finite()) {
                        cells
                            .entry((sys, run.family, run.payload_bytes))
                            .or_default()
                            .push(v * view.scale);
                    }
                }
            }
            (!cells.is_empty()).then_some((label, cells))
        })
        .collect()
}

/// Analyse a dataset.
pub fn analyse(data: &Dataset, options: AnalysisOptions) -> Analysis {
    let systems = system_labels(data);
    let directions: BTreeSet<u8> = data
        .campaigns
        .iter()
        .flat_map(|c| c.runs.iter())
        .map(|r| direction_order(r.direction))
        .collect();
    let mut views = Vec::new();
    for dir in directions.iter().map(|&d| direction_from_order(d)) {
        for def in VIEW_DEFS {
            let kind = def.kinds.iter().copied().find(|&k| {
                data.campaigns
                    .iter()
                    .any(|c| c.runs.iter().any(|r| has_metric(r, k, dir, def.metric)))
            });
            if let Some(kind) = kind {
                let (unit, scale) = view_unit(def.metric);
                let view = View {
                    id: view_id(def, dir),
                    transport: def.transport,
                    kind,
                    direction: dir,
                    metric: def.metric,
                    quantity: def_quantity(def),
                    unit,
                    scale,
                    rank_test: def.rank_test,
                    higher_is_better: metrics::higher_is_better(def.metric),
                    criterion: (def.metric == metrics::LOSS_PCT && kind == TestKind::UdpStream)
                        .then(|| loss_criterion(data))
                        .flatten(),
                    host_note: match def.metric {
                        metrics::CPU_LOCAL_PCT => one_host_note(data, &systems, false),
                        metrics::PROC_LOCAL_PCT => one_host_note(data, &systems, true),
                        _ => None,
                    },
                    host_note_on: match def.metric {
                        metrics::CPU_LOCAL_PCT => one_host_systems(data, &systems, false),
                        metrics::PROC_LOCAL_PCT => one_host_systems(data, &systems, true),
                        _ => Vec::new(),
                    },
                };
                views.push(view_data(data, &systems, view, options.confidence));
            }
        }
    }
    let holm_tests = match options.holm_family {
        HolmFamily::Comparison => None,
        HolmFamily::Report => Some(correct_over_report(&mut views)),
    };
    let receiver_limited_runs = data
        .campaigns
        .iter()
        .flat_map(|c| c.runs.iter())
        .filter(|r| r.counts() && r.metrics.contains_key(metrics::LOSS_PCT) && receiver_limited(r))
        .count();
    Analysis {
        options,
        systems,
        views,
        receiver_limited_runs,
        holm_report_tests: holm_tests,
        offered_load: data
            .campaigns
            .iter()
            .map(|c| c.offered_load.clone())
            .collect(),
    }
}

/// When every campaign with udp-stream runs measured them as an RFC 2544 search, their
/// loss is at or below the search's threshold by construction: the sentence that says so.
fn loss_criterion(data: &Dataset) -> Option<String> {
    let with_udp: Vec<_> = data
        .campaigns
        .iter()
        .filter(|c| c.runs.iter().any(|r| r.kind == TestKind::UdpStream))
        .collect();
    let bounds: Vec<f64> = with_udp.iter().filter_map(|c| c.loss_bound_pct).collect();
    if with_udp.is_empty() || bounds.len() != with_udp.len() {
        return None;
    }
    let max = bounds.iter().copied().fold(0.0_f64, f64::max);
    Some(format!(
        "UDP loss is the RFC 2544 search's criterion, not a finding: each run's loss was kept \
         at or below {max} % by the search itself, so IPv4 and IPv6 (and the systems) are not \
         compared on it; compare the throughput the search found (UDP throughput) instead"
    ))
}

/// For the host's CPU: "one host: client and server together" when every campaign ran
/// both ends on one host, naming the systems when only some did. For the client
/// process's CPU (`process`): "one process: client and built-in server together" for
/// the campaigns whose server ran inside the client's process. `None` when none did.
fn one_host_note(data: &Dataset, systems: &[String], process: bool) -> Option<String> {
    let what = if process {
        "one process: client and built-in server together"
    } else {
        "one host: client and server together"
    };
    let one = one_host_systems(data, systems, process);
    if one.is_empty() {
        None
    } else if one.len() == data.campaigns.len() {
        Some(what.to_string())
    } else {
        let (head, tail) = what.split_once(':').unwrap_or((what, ""));
        Some(format!("{head} for {}:{tail}", one.join(", ")))
    }
}

/// The systems whose campaigns ran both ends on one host (or, for `process`, the
/// server inside the client's process).
fn one_host_systems(data: &Dataset, systems: &[String], process: bool) -> Vec<String> {
    data.campaigns
        .iter()
        .zip(systems)
        .filter(|(c, _)| if process { c.embedded() } else { c.one_host() })
        .map(|(_, s)| s.clone())
        .collect()
}

fn direction_order(d: Direction) -> u8 {
    match d {
        Direction::Forward => 0,
        Direction::Reverse => 1,
        Direction::Bidir => 2,
    }
}

fn direction_from_order(o: u8) -> Direction {
    match o {
        0 => Direction::Forward,
        1 => Direction::Reverse,
        _ => Direction::Bidir,
    }
}

/// See [`ViewData::value_cap`]. A process-CPU view is capped only when every campaign
/// records its host's cores (the role whose process it is: client for `_local`).
fn value_cap(data: &Dataset, metric: &str) -> Option<f64> {
    match metric {
        metrics::LOSS_PCT | metrics::CPU_LOCAL_PCT | metrics::CPU_REMOTE_PCT => Some(100.0),
        metrics::PROC_LOCAL_PCT | metrics::PROC_REMOTE_PCT => {
            let role = if metric == metrics::PROC_LOCAL_PCT {
                "client"
            } else {
                "server"
            };
            let mut most = 0_u32;
            for c in &data.campaigns {
                let cores = c
                    .hosts
                    .get(role)
                    .and_then(|m| m.get("cpu.cores"))
                    .and_then(|v| v.trim().parse::<u32>().ok())
                    .filter(|&n| n > 0)?;
                most = most.max(cores);
            }
            (most > 0).then(|| 100.0 * f64::from(most))
        }
        _ => None,
    }
}

fn view_data(data: &Dataset, labels: &[String], view: View, level: f64) -> ViewData {
    let mut raw: BTreeMap<(usize, Family, u32), Vec<f64>> = BTreeMap::new();
    let mut durations: BTreeMap<(usize, Family, u32), Vec<f64>> = BTreeMap::new();
    let mut left_out_runs: BTreeMap<(usize, Family, u32), usize> = BTreeMap::new();
    for (sys, campaign) in data.campaigns.iter().enumerate() {
        for run in &campaign.runs {
            if !measured(run, view.kind, view.direction, view.metric) {
                continue;
            }
            let key = (sys, run.family, run.payload_bytes);
            if left_out(run, view.metric) {
                *left_out_runs.entry(key).or_default() += 1;
            } else if let Some(v) = run.metrics.get(view.metric) {
                raw.entry(key).or_default().push(v * view.scale);
                if let Some(d) = run
                    .metrics
                    .get(metrics::DURATION_S)
                    .filter(|d| d.is_finite() && **d > 0.0)
                {
                    durations.entry(key).or_default().push(*d);
                }
            }
        }
    }
    // Sub-millisecond latencies (loopback, LAN) read better in microseconds.
    let mut view = view;
    let largest = raw.values().flatten().fold(0.0_f64, |m, v| m.max(v.abs()));
    if view.unit == "ms" && largest < 1.0 {
        view.unit = "µs";
        view.scale *= 1e3;
        for values in raw.values_mut() {
            for v in values.iter_mut() {
                *v *= 1e3;
            }
        }
    }
    let sizes: Vec<u32> = raw
        .keys()
        .map(|k| k.2)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let present: BTreeSet<usize> = raw
        .keys()
        .chain(left_out_runs.keys())
        .map(|k| k.0)
        .collect();
    let system_idx: Vec<usize> = present.iter().copied().collect();
    let cells: BTreeMap<_, _> = raw
        .into_iter()
        .map(|(k, values)| {
            let mut cell = Cell::new(values);
            cell.mean_duration_s = durations
                .get(&k)
                .filter(|d| d.len() == cell.values.len())
                .map(|d| d.iter().sum::<f64>() / d.len() as f64);
            (k, cell)
        })
        .collect();
    let value_cap = value_cap(data, view.metric);
    let mut vd = ViewData {
        view,
        sizes,
        systems: labels.to_vec(),
        cells,
        left_out: left_out_runs,
        family_cmp: Vec::new(),
        system_cmp: Vec::new(),
        value_cap,
    };
    let rank = vd.view.rank_test;
    let embedded: Vec<bool> = data.campaigns.iter().map(|c| c.embedded()).collect();
    for &sys in &system_idx {
        let cmp = compare(
            &vd,
            ("IPv4", (sys, Family::V4)),
            ("IPv6", (sys, Family::V6)),
            &labels[sys],
            rank,
            level,
        )
        .map(|mut c| {
            c.not_compared = unlike(&vd, &c, &[(sys, Family::V4), (sys, Family::V6)], &[]);
            c
        });
        vd.family_cmp.extend(cmp);
    }
    // Every pair of systems, each in campaign order, per IP version.
    for family in [Family::V4, Family::V6] {
        for (i, &first) in system_idx.iter().enumerate() {
            for &other in &system_idx[i + 1..] {
                let a = (labels[first].as_str(), (first, family));
                let b = (labels[other].as_str(), (other, family));
                let cmp = compare(&vd, a, b, &family.to_string(), rank, level).map(|mut c| {
                    let own = [(first, embedded[first]), (other, embedded[other])];
                    c.not_compared = unlike(&vd, &c, &[(first, family), (other, family)], &own);
                    c
                });
                vd.system_cmp.extend(cmp);
            }
        }
    }
    vd
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{CampaignData, RunOutcome};

    fn run(family: Family, size: u32, rtt_ns: f64, warmup: bool, ok: bool) -> RunRow {
        RunRow {
            family,
            kind: TestKind::UdpRr,
            direction: Direction::Forward,
            payload_bytes: size,
            repetition: 0,
            warmup,
            outcome: if ok {
                RunOutcome::Ok
            } else {
                RunOutcome::Failed("x".into())
            },
            metrics: [(metrics::RTT_MEAN_NS.to_string(), rtt_ns)].into(),
        }
    }

    fn dataset(label_a: &str, label_b: &str) -> Dataset {
        let mut runs = Vec::new();
        for (i, size) in [128u32, 1408].into_iter().enumerate() {
            for k in 0..4 {
                let jitter = k as f64 * 1_000.0;
                runs.push(run(
                    Family::V4,
                    size,
                    50_000.0 + jitter + i as f64,
                    false,
                    true,
                ));
                runs.push(run(Family::V6, size, 60_000.0 + jitter, false, true));
            }
            // Neither a warm-up nor a failed run may count.
            runs.push(run(Family::V4, size, 9e9, true, true));
            runs.push(run(Family::V6, size, 9e9, false, false));
        }
        let a = CampaignData {
            id: 1,
            label: label_a.into(),
            runs: runs.clone(),
            ..Default::default()
        };
        let b = CampaignData {
            id: 2,
            label: label_b.into(),
            runs,
            ..Default::default()
        };
        Dataset {
            campaigns: vec![a, b],
        }
    }

    #[test]
    fn warmup_and_failed_runs_are_excluded_and_units_follow_magnitude() {
        let a = analyse(&dataset("A", "B"), AnalysisOptions::default());
        assert_eq!(a.views.len(), 1);
        let vd = &a.views[0];
        assert_eq!(vd.view.id, "udp-rtt");
        assert_eq!(vd.view.unit, "µs");
        let cell = vd.cell(0, Family::V4, 128).map(|c| c.summary);
        assert_eq!(cell.map(|s| s.n), Some(4));
        // (50 + 51 + 52 + 53) / 4 µs
        assert_eq!(cell.map(|s| s.mean), Some(51.5));
    }

    #[test]
    fn comparisons_use_the_rank_test_and_holm_across_sizes() {
        let a = analyse(&dataset("A", "B"), AnalysisOptions::default());
        let vd = &a.views[0];
        assert_eq!(vd.family_cmp.len(), 2);
        let cmp = &vd.family_cmp[0];
        assert_eq!(
            (cmp.a.as_str(), cmp.b.as_str(), cmp.context.as_str()),
            ("IPv4", "IPv6", "A")
        );
        for p in &cmp.points {
            let mw = p.mann_whitney.map(|m| m.p).unwrap_or(f64::NAN);
            assert_eq!(p.p, mw);
        }
        let raw: Vec<f64> = cmp.points.iter().map(|p| p.p).collect();
        let adjusted: Vec<f64> = cmp.points.iter().map(|p| p.p_holm).collect();
        assert_eq!(adjusted, stats::holm(&raw));
        // Identical systems: the system comparison finds nothing.
        assert!(vd.system_cmp.iter().all(|c| c.significant(0.05) == 0));
    }

    #[test]
    fn repeated_labels_are_made_unique() {
        let a = analyse(&dataset("Same", "Same"), AnalysisOptions::default());
        assert_eq!(
            a.systems,
            vec!["Same #1".to_string(), "Same #2".to_string()]
        );
    }

    #[test]
    fn receiver_limited_runs_are_left_out_of_the_loss_view_and_counted() {
        let udp = |family, loss: f64, limited: f64| RunRow {
            family,
            kind: TestKind::UdpStream,
            direction: Direction::Forward,
            payload_bytes: 128,
            repetition: 0,
            warmup: false,
            outcome: RunOutcome::Ok,
            metrics: [
                (metrics::LOSS_PCT.to_string(), loss),
                (metrics::THROUGHPUT_BPS.to_string(), 1e6),
                (metrics::RECEIVER_LIMITED.to_string(), limited),
            ]
            .into(),
        };
        let mut runs = Vec::new();
        for _ in 0..3 {
            runs.push(udp(Family::V4, 0.0, 0.0));
            runs.push(udp(Family::V6, 0.0, 0.0));
        }
        // The receiving socket overflowed: 40 % loss that says nothing of the network.
        runs.push(udp(Family::V6, 40.0, 1.0));
        runs.push(udp(Family::V6, 45.0, 1.0));
        let data = Dataset {
            campaigns: vec![CampaignData {
                id: 1,
                label: "A".into(),
                runs,
                ..Default::default()
            }],
        };
        let a = analyse(&data, AnalysisOptions::default());
        assert_eq!(a.receiver_limited_runs, 2);
        let loss = a.views.iter().find(|v| v.view.metric == metrics::LOSS_PCT);
        let cell = loss
            .and_then(|v| v.cell(0, Family::V6, 128))
            .map(|c| c.summary);
        assert_eq!(cell.map(|s| (s.n, s.mean)), Some((3, 0.0)));
        // Their throughput still counts: only the loss conclusion is withheld.
        let tput = a
            .views
            .iter()
            .find(|v| v.view.metric == metrics::THROUGHPUT_BPS);
        let n = tput
            .and_then(|v| v.cell(0, Family::V6, 128))
            .map(|c| c.summary.n);
        assert_eq!(n, Some(5));
        let f = crate::findings::findings(
            &a,
            &[crate::headers::CampaignLink::new(
                model::OverheadModel::loopback(),
                None,
            )],
        );
        assert!(
            f.iter()
                .any(|f| f.text.starts_with("2 UDP runs were receiver-limited")),
            "{f:?}"
        );
    }

    /// A size where one side's runs were all receiver-limited is kept as an emptied
    /// size with both sides' counts, not dropped as if it had never been measured.
    #[test]
    fn a_side_with_every_run_left_out_is_an_emptied_size_not_a_missing_one() {
        let udp = |family, size, limited: f64| RunRow {
            family,
            kind: TestKind::UdpStream,
            direction: Direction::Forward,
            payload_bytes: size,
            repetition: 0,
            warmup: false,
            outcome: RunOutcome::Ok,
            metrics: [
                (metrics::LOSS_PCT.to_string(), 10.0 * limited),
                (metrics::RECEIVER_LIMITED.to_string(), limited),
            ]
            .into(),
        };
        let mut runs = vec![udp(Family::V4, 128, 0.0), udp(Family::V4, 128, 0.0)];
        runs.extend([udp(Family::V6, 128, 0.0), udp(Family::V6, 128, 1.0)]);
        runs.extend([udp(Family::V4, 1408, 0.0), udp(Family::V4, 1408, 0.0)]);
        runs.extend([udp(Family::V6, 1408, 1.0), udp(Family::V6, 1408, 1.0)]);
        let data = Dataset {
            campaigns: vec![CampaignData {
                id: 1,
                label: "A".into(),
                runs,
                ..Default::default()
            }],
        };
        let a = analyse(&data, AnalysisOptions::default());
        let loss = a.views.iter().find(|v| v.view.metric == metrics::LOSS_PCT);
        let cmp = loss.and_then(|v| v.family_cmp.first());
        let point = cmp.and_then(|c| c.points.first());
        assert_eq!(
            point.map(|p| (p.payload_bytes, p.b.n, p.left_out_b, p.too_few())),
            Some((128, 1, 1, true))
        );
        assert_eq!(
            cmp.map(|c| c.emptied.clone()),
            Some(vec![Emptied {
                payload_bytes: 1408,
                n_a: 2,
                n_b: 0,
                left_out_a: 0,
                left_out_b: 2,
            }])
        );
    }
}
