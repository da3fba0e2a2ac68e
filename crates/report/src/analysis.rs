//! From a [`Dataset`] to numbers: which views (transport × metric) have data, the summary
//! of every cell (system × IP version × packet size), and the IPv4-vs-IPv6 and
//! system-vs-system comparisons with their tests and Holm correction across sizes.
//! Produces no text; the tables, figures and findings format what is here.

use crate::dataset::{Dataset, RunRow};
use stats::{
    base_value, hedges_g, holm, outliers, percent_difference, percent_of, smallest_corrected_p,
    HodgesLehmann, MannWhitney, PercentBase, PrimaryTest, Summary, Welch,
};
use std::collections::{BTreeMap, BTreeSet};
use wire::metrics;
use wire::spec::{Direction, Family, TestKind, Transport};

/// One figure / table family: a metric of one transport against packet size.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// File-name slug, e.g. `tcp-throughput`.
    pub id: String,
    pub transport: Transport,
    pub kind: TestKind,
    pub direction: Direction,
    /// Metric name from `wire::metrics`.
    pub metric: &'static str,
    /// Lower-case quantity for sentences: "throughput", "RTT", …
    pub quantity: &'static str,
    /// Display unit after `scale`: "Mbit/s", "ms", "%".
    pub unit: &'static str,
    /// Raw metric value × scale = displayed value.
    pub scale: f64,
    /// Latency-like: Mann-Whitney U is the primary test.
    pub rank_test: bool,
    pub higher_is_better: bool,
    /// Set when the method itself bounds this metric (udp-stream loss under an RFC 2544
    /// search): why its values are a criterion, not a finding. Such a view is shown but
    /// not compared.
    pub criterion: Option<String>,
    /// For CPU: the systems measured with client and server on one host, in words
    /// ("one host: client and server together", or naming the systems when only some
    /// were); part of the title so no reader takes it for one end's CPU.
    pub host_note: Option<String>,
    /// The systems `host_note` is true of (every system when it names none).
    pub host_note_on: Vec<String>,
}

impl View {
    /// "TCP throughput", "UDP RTT (reverse)".
    pub fn title(&self) -> String {
        let dir = match self.direction {
            Direction::Forward => "",
            Direction::Reverse => " (reverse)",
            Direction::Bidir => " (bidirectional)",
        };
        let note = self
            .host_note
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        format!("{} {}{}{note}", self.transport, self.quantity, dir)
    }

    /// The title in a sentence about one system: its own qualifier only ("(one process:
    /// client and built-in server together)" where that is true of it, none where not),
    /// so no sentence about one system carries another's.
    pub fn title_on(&self, system: &str) -> String {
        let mut view = self.clone();
        view.host_note = self
            .host_note
            .as_deref()
            .filter(|_| self.host_note_on.iter().any(|s| s == system))
            .map(|n| match (n.split_once(" for "), n.rsplit_once(':')) {
                // "one process for A, B: client and …" → "one process: client and …"
                (Some((head, _)), Some((_, tail))) => format!("{head}:{tail}"),
                _ => n.to_string(),
            });
        view.title()
    }

    /// Name of the primary significance test.
    pub fn test_name(&self) -> &'static str {
        if self.rank_test {
            "Mann-Whitney U"
        } else {
            "Welch's t-test"
        }
    }
}

struct ViewDef {
    quantity: &'static str,
    metric: &'static str,
    transport: Transport,
    kinds: &'static [TestKind],
    unit: &'static str,
    scale: f64,
    rank_test: bool,
}

use TestKind::{Rrul, TcpRr, TcpStream, UdpRr, UdpStream};

/// The figures the studies publish, in display order. For each, the first test kind
/// with data supplies the metric (RTT from request/response tests when there are any).
const VIEW_DEFS: &[ViewDef] = &[
    ViewDef {
        quantity: "throughput",
        metric: metrics::THROUGHPUT_BPS,
        transport: Transport::Tcp,
        kinds: &[TcpStream],
        unit: "Mbit/s",
        scale: 1e-6,
        rank_test: false,
    },
    ViewDef {
        quantity: "throughput",
        metric: metrics::THROUGHPUT_BPS,
        transport: Transport::Udp,
        kinds: &[UdpStream],
        unit: "Mbit/s",
        scale: 1e-6,
        rank_test: false,
    },
    ViewDef {
        quantity: "RTT",
        metric: metrics::RTT_MEAN_NS,
        transport: Transport::Tcp,
        kinds: &[TcpRr, TcpStream],
        unit: "ms",
        scale: 1e-6,
        rank_test: true,
    },
    ViewDef {
        quantity: "RTT",
        metric: metrics::RTT_MEAN_NS,
        transport: Transport::Udp,
        kinds: &[UdpRr, UdpStream],
        unit: "ms",
        scale: 1e-6,
        rank_test: true,
    },
    ViewDef {
        quantity: "jitter",
        metric: metrics::JITTER_RFC3550_NS,
        transport: Transport::Tcp,
        kinds: &[TcpStream, TcpRr],
        unit: "ms",
        scale: 1e-6,
        rank_test: true,
    },
    ViewDef {
        quantity: "jitter",
        metric: metrics::JITTER_RFC3550_NS,
        transport: Transport::Udp,
        kinds: &[UdpStream, UdpRr],
        unit: "ms",
        scale: 1e-6,
        rank_test: true,
    },
    ViewDef {
        quantity: "loss",
        metric: metrics::LOSS_PCT,
        transport: Transport::Udp,
        kinds: &[UdpStream, UdpRr],
        unit: "%",
        scale: 1.0,
        rank_test: false,
    },
    // Two different CPU figures, never one for the other: the host's busy time (all
    // cores, every process's load included) and the dualperf client process's own
    // (user + system, % of one core).
    ViewDef {
        quantity: "host CPU busy",
        metric: metrics::CPU_LOCAL_PCT,
        transport: Transport::Tcp,
        kinds: &[TcpStream, TcpRr],
        unit: "%",
        scale: 1.0,
        rank_test: false,
    },
    ViewDef {
        quantity: "client process CPU",
        metric: metrics::PROC_LOCAL_PCT,
        transport: Transport::Tcp,
        kinds: &[TcpStream, TcpRr],
        unit: "% of one core",
        scale: 1.0,
        rank_test: false,
    },
    // Two different CPU figures, never one for the other: the host's busy time (all
    // cores, every process's load included) and the dualperf client process's own
    // (user + system, % of one core).
    ViewDef {
        quantity: "host CPU busy",
        metric: metrics::CPU_LOCAL_PCT,
        transport: Transport::Udp,
        kinds: &[UdpStream, UdpRr],
        unit: "%",
        scale: 1.0,
        rank_test: false,
    },
    ViewDef {
        quantity: "client process CPU",
        metric: metrics::PROC_LOCAL_PCT,
        transport: Transport::Udp,
        kinds: &[UdpStream, UdpRr],
        unit: "% of one core",
        scale: 1.0,
        rank_test: false,
    },
    // Latency under load (rrul): the probes' median RTT beside the load, its
    // responsiveness, and the load's goodput per direction.
    ViewDef {
        quantity: "RTT under load (p50 of probes)",
        metric: metrics::LOADED_TCP_RTT_P50_NS,
        transport: Transport::Tcp,
        kinds: &[Rrul],
        unit: "ms",
        scale: 1e-6,
        rank_test: true,
    },
    ViewDef {
        quantity: "RTT under load (p50 of probes)",
        metric: metrics::LOADED_UDP_RTT_P50_NS,
        transport: Transport::Udp,
        kinds: &[Rrul],
        unit: "ms",
        scale: 1e-6,
        rank_test: true,
    },
    ViewDef {
        quantity: "responsiveness under load",
        metric: metrics::RPM_LOADED,
        transport: Transport::Tcp,
        kinds: &[Rrul],
        unit: "RPM",
        scale: 1.0,
        rank_test: false,
    },
    ViewDef {
        quantity: "upload goodput under load",
        metric: metrics::UPLOAD_BPS,
        transport: Transport::Tcp,
        kinds: &[Rrul],
        unit: "Mbit/s",
        scale: 1e-6,
        rank_test: false,
    },
    ViewDef {
        quantity: "download goodput under load",
        metric: metrics::DOWNLOAD_BPS,
        transport: Transport::Tcp,
        kinds: &[Rrul],
        unit: "Mbit/s",
        scale: 1e-6,
        rank_test: false,
    }, // QUIC runs over UDP: its views read "UDP … over QUIC".
    ViewDef {
        quantity: "goodput over QUIC",
        metric: metrics::THROUGHPUT_BPS,
        transport: Transport::Udp,
        kinds: &[TestKind::QuicStream],
        unit: "Mbit/s",
        scale: 1e-6,
        rank_test: false,
    },
    ViewDef {
        quantity: "RTT over QUIC",
        metric: metrics::RTT_MEAN_NS,
        transport: Transport::Udp,
        kinds: &[TestKind::QuicRr],
        unit: "ms",
        scale: 1e-6,
        rank_test: true,
    },
];

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

/// One size of a two-group comparison: a − b.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub payload_bytes: u32,
    pub a: Summary,
    pub b: Summary,
    pub welch: Welch,
    /// Present for rank-tested (latency-like) views.
    pub mann_whitney: Option<MannWhitney>,
    /// The effect that goes with Mann-Whitney: the Hodges-Lehmann shift of a against b
    /// with its distribution-free CI (rank-tested views only).
    pub hodges_lehmann: Option<HodgesLehmann>,
    /// Outlying runs in each side's cell.
    pub outliers_a: Vec<f64>,
    pub outliers_b: Vec<f64>,
    pub hedges_g: f64,
    /// p of the view's primary test, before correction.
    pub p: f64,
    /// Holm-adjusted across the sizes of this comparison.
    pub p_holm: f64,
    /// Receiver-limited runs left out of each side at this size (loss views only).
    pub left_out_a: usize,
    pub left_out_b: usize,
}

impl Point {
    /// mean(a) − mean(b) as a percentage of the report's base.
    pub fn diff_pct(&self, options: &AnalysisOptions) -> f64 {
        options.percent(self.a.mean, self.b.mean)
    }

    /// The effect that matches the primary test, with its CI at `level`: the
    /// Hodges-Lehmann shift for a rank-tested view, the difference of means (Welch CI)
    /// otherwise; and its name.
    pub fn effect(&self, level: f64) -> (f64, (f64, f64), &'static str) {
        match &self.hodges_lehmann {
            Some(hl) => (hl.shift, hl.ci, "Hodges-Lehmann shift"),
            None => (self.welch.diff, self.welch.ci(level), "difference of means"),
        }
    }

    /// The primary test's effect ([`Point::effect`]) as a percentage of the report's
    /// base side's mean, and its CI the same way (`None` where the base is zero or a
    /// bound is not finite): what the summary quotes.
    pub fn effect_pct(&self, options: &AnalysisOptions) -> Option<(f64, Option<(f64, f64)>)> {
        let (e, (lo, hi), _) = self.effect(options.confidence);
        let over = base_value(self.a.mean, self.b.mean, options.percent_base);
        let ci = percent_of(lo, over).zip(percent_of(hi, over));
        Some((percent_of(e, over)?, ci))
    }
}

/// Which side of a comparison a point favours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
    /// Neither side ahead (equal means; for a rank test, as many pairs either way):
    /// credited to neither side.
    Tie,
}

impl Point {
    /// The direction of the primary test, a against b (> 0: a higher, 0: neither):
    /// for a rank-tested view Mann-Whitney's own, U₁ − n₁n₂/2 (as the sign of the
    /// rank-biserial r: which side's runs were higher in most pairs — never opposite
    /// to the Hodges-Lehmann shift), else the difference of means. A rank test's
    /// significance never takes its side from the means: one slow run can move the
    /// mean across while the other side's runs stay ahead.
    pub fn direction(&self) -> f64 {
        match &self.mann_whitney {
            Some(m) => m.rank_biserial,
            None => self.welch.diff,
        }
    }

    /// The side the primary test favours ([`Point::direction`]; higher, or lower where
    /// lower is better).
    pub fn better_side(&self, higher_is_better: bool) -> Side {
        let d = self.direction();
        if d == 0.0 || !d.is_finite() {
            Side::Tie
        } else if (d > 0.0) == higher_is_better {
            Side::A
        } else {
            Side::B
        }
    }

    /// Fewer than 2 runs on a side: no spread to test against, so no conclusion.
    pub fn too_few(&self) -> bool {
        self.a.n < 2 || self.b.n < 2
    }

    /// Significant after Holm's correction, with at least 2 runs per side.
    pub fn significant(&self, alpha: f64) -> bool {
        !self.too_few() && self.p_holm < alpha
    }
}

/// A size both sides measured where a side kept no run: every run it had there was
/// receiver-limited and left out, so there is nothing to compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Emptied {
    pub payload_bytes: u32,
    /// Runs kept per side.
    pub n_a: usize,
    pub n_b: usize,
    /// Receiver-limited runs left out per side.
    pub left_out_a: usize,
    pub left_out_b: usize,
}

/// Direction counts of one comparison: ties are ties, and significance is per side.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Sizes compared (with a finite difference).
    pub n: usize,
    /// Sizes where the primary test's direction ([`Point::direction`]) favoured A, B,
    /// or neither (equal means; for a rank test, as many pairs either way).
    pub a_better: usize,
    pub b_better: usize,
    pub ties: usize,
    /// Sizes (bytes) where A, or B, was significantly better after correction.
    pub sig_a: Vec<u32>,
    pub sig_b: Vec<u32>,
    /// Sizes without a significant difference.
    pub not_sig: Vec<u32>,
}

impl Tally {
    /// The side that won the comparison as a whole: significantly better at more than
    /// half of the sizes compared, and significantly worse at none. (One significant
    /// size out of six is a finding about that size, not about the whole range.)
    pub fn winner(&self) -> Option<Side> {
        let most = |k: usize| 2 * k > self.n;
        match (self.sig_a.len(), self.sig_b.len()) {
            (a, 0) if most(a) => Some(Side::A),
            (0, b) if most(b) => Some(Side::B),
            _ => None,
        }
    }
}

/// a vs b across sizes, within one context (a system, or an IP version).
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    /// The system (for IPv4 vs IPv6) or the IP version (for system vs system).
    pub context: String,
    pub points: Vec<Point>,
    /// Sizes left without a point because a side's runs were all left out.
    pub emptied: Vec<Emptied>,
    /// How many tests the Holm correction of these points ran over: the sizes tested
    /// here, or every test of the report ([`HolmFamily::Report`]).
    pub holm_tests: usize,
    /// Why the two sides are not compared although both have runs (their metric means
    /// something different on each side, or both sit at the quantity's ceiling): the
    /// points are kept for the per-campaign tables, but no test is reported or counted.
    pub not_compared: Option<String>,
}

impl Comparison {
    /// Sizes significant after correction (none when the sides are not compared).
    pub fn significant(&self, alpha: f64) -> usize {
        if self.not_compared.is_some() {
            return 0;
        }
        self.points.iter().filter(|p| p.significant(alpha)).count()
    }

    /// Whether any size of this comparison could have shown a significant difference:
    /// at least 2 runs per side, and a complete separation of that many runs able to
    /// reach `alpha` after Holm's correction over the sizes tested. When none could,
    /// "no difference" would claim more than the runs can: they cannot tell.
    pub fn could_show(&self, rank_test: bool, alpha: f64) -> bool {
        let test = if rank_test {
            PrimaryTest::MannWhitney
        } else {
            PrimaryTest::Welch
        };
        let tests = self.holm_tests;
        self.points.iter().any(|p| {
            !p.too_few() && smallest_corrected_p(test, p.a.n, p.b.n, tests).can_reach(alpha)
        })
    }

    /// Direction and significance counts over the sizes compared.
    pub fn tally(&self, higher_is_better: bool, alpha: f64) -> Tally {
        let mut t = Tally::default();
        if self.not_compared.is_some() {
            return t;
        }
        for p in self.points.iter().filter(|p| p.welch.diff.is_finite()) {
            t.n += 1;
            let side = p.better_side(higher_is_better);
            match side {
                Side::A => t.a_better += 1,
                Side::B => t.b_better += 1,
                Side::Tie => t.ties += 1,
            }
            match (p.significant(alpha), side) {
                (true, Side::A) => t.sig_a.push(p.payload_bytes),
                (true, Side::B) => t.sig_b.push(p.payload_bytes),
                _ => t.not_sig.push(p.payload_bytes),
            }
        }
        t
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
                let view = View {
                    id: view_id(def, dir),
                    transport: def.transport,
                    kind,
                    direction: dir,
                    metric: def.metric,
                    quantity: def.quantity,
                    unit: def.unit,
                    scale: def.scale,
                    rank_test: def.rank_test,
                    higher_is_better: metrics::higher_is_better(def.metric),
                    criterion: (def.metric == metrics::LOSS_PCT && kind == UdpStream)
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

/// Holm's correction over every test of the report (every compared comparison's sizes
/// with a p), replacing each comparison's own; returns the number of tests.
fn correct_over_report(views: &mut [ViewData]) -> usize {
    let compared = |c: &Comparison| c.not_compared.is_none();
    let raw: Vec<f64> = views
        .iter()
        .flat_map(|vd| vd.family_cmp.iter().chain(&vd.system_cmp))
        .filter(|c| compared(c))
        .flat_map(|c| c.points.iter().map(|p| p.p))
        .collect();
    let tests = raw.iter().filter(|p| !p.is_nan()).count();
    let mut adjusted = holm(&raw).into_iter();
    for vd in views.iter_mut() {
        for c in vd.family_cmp.iter_mut().chain(vd.system_cmp.iter_mut()) {
            if !compared(c) {
                continue;
            }
            c.holm_tests = tests;
            for p in &mut c.points {
                p.p_holm = adjusted.next().unwrap_or(f64::NAN);
            }
        }
    }
    tests
}

/// When every campaign with udp-stream runs measured them as an RFC 2544 search, their
/// loss is at or below the search's threshold by construction: the sentence that says so.
fn loss_criterion(data: &Dataset) -> Option<String> {
    let with_udp: Vec<_> = data
        .campaigns
        .iter()
        .filter(|c| c.runs.iter().any(|r| r.kind == UdpStream))
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

fn view_id(def: &ViewDef, dir: Direction) -> String {
    let transport = match def.transport {
        Transport::Tcp => "tcp",
        Transport::Udp => "udp",
    };
    let suffix = match dir {
        Direction::Forward => "",
        Direction::Reverse => "-reverse",
        Direction::Bidir => "-bidir",
    };
    // "RTT under load (p50 of probes)" → "rtt-under-load-p50-of-probes".
    let slug = def
        .quantity
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    format!("{transport}-{slug}{suffix}")
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

/// Why the two sides of a comparison are not like with like, or `None` when they are: the
/// method's criterion bounds the metric (loss under an RFC 2544 search); a client
/// process's CPU where one system's process also ran the built-in server and the other's
/// did not (`embedded` per side: (system, whether its server ran in the client process));
/// a CPU figure where a side sat at its ceiling (every size's mean within 1 % of the
/// most the quantity can take: a saturated host says nothing of the test's load).
fn unlike(
    vd: &ViewData,
    cmp: &Comparison,
    who: &[(usize, Family)],
    embedded: &[(usize, bool)],
) -> Option<String> {
    if vd.view.criterion.is_some() {
        return Some("the method's criterion".to_string());
    }
    let metric = vd.view.metric;
    if metric == metrics::PROC_LOCAL_PCT {
        if let [(x, true), (y, false)] | [(y, false), (x, true)] = embedded {
            return Some(format!(
                "{}'s process also ran the built-in server, {}'s did not",
                vd.systems[*x], vd.systems[*y]
            ));
        }
    }
    let cpu = [metrics::CPU_LOCAL_PCT, metrics::PROC_LOCAL_PCT].contains(&metric);
    let cap = vd.value_cap.filter(|_| cpu)?;
    let sizes: Vec<u32> = cmp.points.iter().map(|p| p.payload_bytes).collect();
    let pinned: Vec<(usize, Family)> = who
        .iter()
        .copied()
        .filter(|&(sys, f)| {
            !sizes.is_empty()
                && sizes.iter().all(|&z| {
                    vd.cell(sys, f, z)
                        .is_some_and(|c| c.summary.mean >= 0.99 * cap)
                })
        })
        .collect();
    let same_system = who.iter().all(|w| w.0 == who[0].0);
    let names: Vec<String> = if same_system {
        // IPv4 vs IPv6 on one system: "sysB (IPv4 and IPv6)".
        let fams: Vec<String> = pinned.iter().map(|w| w.1.to_string()).collect();
        pinned
            .first()
            .map(|w| format!("{} ({})", vd.systems[w.0], fams.join(" and ")))
            .into_iter()
            .collect()
    } else {
        pinned.iter().map(|w| vd.systems[w.0].clone()).collect()
    };
    (!names.is_empty()).then(|| {
        format!(
            "{} at the {cap} % ceiling at every size, a saturated host, not a finding",
            names.join(" and ")
        )
    })
}

/// a − b at every size both measured: a point where both kept runs, an [`Emptied`]
/// size where a side's runs were all left out. `None` when there is neither.
fn compare(
    vd: &ViewData,
    (a, who_a): (&str, (usize, Family)),
    (b, who_b): (&str, (usize, Family)),
    context: &str,
    rank: bool,
    level: f64,
) -> Option<Comparison> {
    let left =
        |(sys, f): (usize, Family), s: u32| vd.left_out.get(&(sys, f, s)).copied().unwrap_or(0);
    let sizes: BTreeSet<u32> = vd
        .cells
        .keys()
        .chain(vd.left_out.keys())
        .map(|k| k.2)
        .collect();
    let mut points = Vec::new();
    let mut emptied = Vec::new();
    for s in sizes {
        let (ca, cb) = (vd.cell(who_a.0, who_a.1, s), vd.cell(who_b.0, who_b.1, s));
        let (left_out_a, left_out_b) = (left(who_a, s), left(who_b, s));
        match (ca, cb) {
            (Some(ca), Some(cb)) => {
                let welch = Welch::of(&ca.summary, &cb.summary);
                let mann_whitney = rank.then(|| MannWhitney::of(&ca.values, &cb.values));
                let hodges_lehmann = rank
                    .then(|| HodgesLehmann::of(&ca.values, &cb.values, level))
                    .flatten();
                points.push(Point {
                    payload_bytes: s,
                    a: ca.summary,
                    b: cb.summary,
                    welch,
                    mann_whitney,
                    hodges_lehmann,
                    outliers_a: ca.outliers(),
                    outliers_b: cb.outliers(),
                    hedges_g: hedges_g(&ca.summary, &cb.summary),
                    p: mann_whitney.map_or(welch.p, |m| m.p),
                    p_holm: f64::NAN,
                    left_out_a,
                    left_out_b,
                });
            }
            (ca, cb) if (ca.is_some() || left_out_a > 0) && (cb.is_some() || left_out_b > 0) => {
                emptied.push(Emptied {
                    payload_bytes: s,
                    n_a: ca.map_or(0, |c| c.summary.n),
                    n_b: cb.map_or(0, |c| c.summary.n),
                    left_out_a,
                    left_out_b,
                });
            }
            _ => {}
        }
    }
    if points.is_empty() && emptied.is_empty() {
        return None;
    }
    let adjusted = holm(&points.iter().map(|p| p.p).collect::<Vec<_>>());
    for (p, adj) in points.iter_mut().zip(adjusted) {
        p.p_holm = adj;
    }
    Some(Comparison {
        a: a.to_string(),
        b: b.to_string(),
        context: context.to_string(),
        holm_tests: points.iter().filter(|p| !p.p.is_nan()).count(),
        points,
        emptied,
        not_compared: None,
    })
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
