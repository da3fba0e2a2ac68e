//! Two-group comparisons (IPv4 vs IPv6 on a system, system vs system per IP version):
//! the tests at each size, Holm's correction, the direction tally, and why two sides are
//! not compared when their metric is not like with like.

use super::{AnalysisOptions, ViewData};
use stats::{
    base_value, hedges_g, holm, percent_of, smallest_corrected_p, HodgesLehmann, MannWhitney,
    PrimaryTest, Summary, Welch,
};
use std::collections::BTreeSet;
use wire::metrics;
use wire::spec::Family;

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

/// Holm's correction over every test of the report (every compared comparison's sizes
/// with a p), replacing each comparison's own; returns the number of tests.
pub(super) fn correct_over_report(views: &mut [ViewData]) -> usize {
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

/// Why the two sides of a comparison are not like with like, or `None` when they are: the
/// method's criterion bounds the metric (loss under an RFC 2544 search); a client
/// process's CPU where one system's process also ran the built-in server and the other's
/// did not (`embedded` per side: (system, whether its server ran in the client process));
/// a CPU figure where a side sat at its ceiling (every size's mean within 1 % of the
/// most the quantity can take: a saturated host says nothing of the test's load).
pub(super) fn unlike(
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
pub(super) fn compare(
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
