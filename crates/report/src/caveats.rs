//! What limits the conclusions, said before them: the smallest corrected p each
//! comparison could reach with its runs (a plan too small to show any difference is
//! a warning, not a finding of "no difference"), and the cells that missed their
//! confidence target with the runs the target would roughly need.

use crate::analysis::{Analysis, Comparison, ViewData};
use crate::dataset::Dataset;
use stats::{smallest_corrected_p, PrimaryTest, Reach};

/// What one comparison could reach at best.
#[derive(Debug, Clone, PartialEq)]
pub struct ReachLine {
    pub view: String,
    pub comparison: String,
    pub test: PrimaryTest,
    /// Fewest runs on either side at any size.
    pub runs_a: usize,
    pub runs_b: usize,
    /// Tests Holm corrects over (the sizes compared).
    pub sizes: usize,
    pub reach: Reach,
}

impl ReachLine {
    pub fn text(&self) -> String {
        let bound = match self.reach {
            Reach::AtLeast(p) => format!("smallest reachable corrected p = {}", p_short(p)),
            Reach::Unbounded => "any corrected p reachable (runs vary)".to_string(),
            Reach::NoTest => "no test (fewer than 2 runs on a side)".to_string(),
        };
        format!(
            "{}, {} ({}, at least {} and {} runs, Holm over {} size{}): {bound}",
            self.view,
            self.comparison,
            self.test.name(),
            self.runs_a,
            self.runs_b,
            self.sizes,
            if self.sizes == 1 { "" } else { "s" }
        )
    }
}

/// A corrected p bound as warnings and findings write it: "0.2", "1.6e-4".
pub(crate) fn p_short(p: f64) -> String {
    if p >= 0.001 {
        let s = format!("{p:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{p:.1e}")
    }
}

fn reach_of(vd: &ViewData, cmp: &Comparison) -> ReachLine {
    let test = if vd.view.rank_test {
        PrimaryTest::MannWhitney
    } else {
        PrimaryTest::Welch
    };
    let runs_a = cmp.points.iter().map(|p| p.a.n).min().unwrap_or(0);
    let runs_b = cmp.points.iter().map(|p| p.b.n).min().unwrap_or(0);
    let sizes = cmp.points.len();
    ReachLine {
        view: vd.view.title(),
        comparison: format!("{} vs {} on {}", cmp.a, cmp.b, cmp.context),
        test,
        runs_a,
        runs_b,
        sizes,
        reach: smallest_corrected_p(test, runs_a, runs_b, sizes),
    }
}

/// Every comparison's reach, in report order.
pub fn reach_lines(analysis: &Analysis) -> Vec<ReachLine> {
    analysis
        .views
        .iter()
        .flat_map(|vd| {
            vd.family_cmp
                .iter()
                .chain(&vd.system_cmp)
                .filter(|c| !c.points.is_empty())
                .map(move |c| reach_of(vd, c))
        })
        .collect()
}

/// Runs per side at which `test` could reach `alpha` over `sizes` tests.
fn runs_needed(test: PrimaryTest, sizes: usize, alpha: f64) -> Option<usize> {
    (2..=1000).find(|&n| smallest_corrected_p(test, n, n, sizes).can_reach(alpha))
}

/// The warnings of the report: comparisons that cannot reach alpha, then cells that
/// missed their confidence target.
pub fn warnings(data: &Dataset, analysis: &Analysis) -> Vec<String> {
    let alpha = analysis.options.alpha;
    let mut out: Vec<String> = reach_lines(analysis)
        .into_iter()
        .filter(|r| !r.reach.can_reach(alpha))
        .map(|r| {
            let need = runs_needed(r.test, r.sizes, alpha)
                .map(|n| format!(" About {n} runs per side would be needed."))
                .unwrap_or_default();
            let limit = match r.reach {
                Reach::AtLeast(p) => format!("cannot go below a corrected p of {}", p_short(p)),
                _ => "has no p at all (fewer than 2 runs on a side)".to_string(),
            };
            format!(
                "{}, {}: with at least {} and {} runs over {} size{}, {} {limit} (alpha = {alpha}), so no difference can be called significant; \"no difference\" there means too few runs to tell.{need}",
                r.view,
                r.comparison,
                r.runs_a,
                r.runs_b,
                r.sizes,
                if r.sizes == 1 { "" } else { "s" },
                r.test.name(),
            )
        })
        .collect();
    for (c, label) in data.campaigns.iter().zip(&analysis.systems) {
        let Some(target) = c.target else { continue };
        if c.missed.is_empty() {
            continue;
        }
        let cells: Vec<String> = c
            .missed
            .iter()
            .take(8)
            .map(|m| {
                let need = m
                    .runs_needed(target.width_pct)
                    .map(|n| format!(", about {n} runs would reach it"))
                    .unwrap_or_default();
                format!(
                    "{} {} {} B: {} interval {:.1}% of the mean after {} runs{need}",
                    m.family,
                    m.kind.name(),
                    m.payload_bytes,
                    metric_words(&m.metric),
                    m.width_pct,
                    m.runs
                )
            })
            .collect();
        let more = if c.missed.len() > 8 {
            format!("; and {} more", c.missed.len() - 8)
        } else {
            String::new()
        };
        out.push(format!(
            "{label}: {} cell{} missed the confidence target ({}% interval within {}% of the mean): {}{more}. Their means are less certain than the target promised; rerun with more --max-runs or longer runs.",
            c.missed.len(),
            if c.missed.len() == 1 { "" } else { "s" },
            target.level_pct,
            target.width_pct,
            cells.join("; ")
        ));
    }
    out
}

/// A counted metric in words.
fn metric_words(name: &str) -> &str {
    use wire::metrics as m;
    match name {
        n if n == m::THROUGHPUT_BPS => "throughput",
        n if n == m::JITTER_RFC3550_NS => "jitter",
        n if n == m::RTT_MEAN_NS => "mean RTT",
        n if n == m::TRANSACTIONS_PER_S => "transaction rate",
        n if n == m::CPU_LOCAL_PCT => "local CPU",
        n if n == m::CPU_REMOTE_PCT => "remote CPU",
        other => other,
    }
}
