//! The `--dry-run` lines on what the plan can show at best: the smallest Holm-corrected
//! p each test of the report can reach with the planned runs per side, and a warning
//! when that cannot go below the report's default alpha (the numbers come from
//! `stats::reach`; this only words them).

use stats::{smallest_corrected_p, PrimaryTest, Reach};
use study::StudySpec;
use wire::spec::Family;

/// The report's default significance level (`dualperf report --alpha`).
pub const REPORT_ALPHA: f64 = 0.05;

/// Smallest equal runs per side at which the test can reach `alpha` over `k` sizes.
fn runs_needed(test: PrimaryTest, k: usize, alpha: f64) -> Option<usize> {
    (2..=1000).find(|&n| smallest_corrected_p(test, n, n, k).can_reach(alpha))
}

/// The lines, each ending in a newline.
pub fn reach_text(spec: &StudySpec) -> String {
    let both = spec.families.contains(&Family::V4) && spec.families.contains(&Family::V6);
    if !both {
        return "smallest corrected p: no IPv4-vs-IPv6 comparison (one IP version only)\n"
            .to_string();
    }
    let (min_runs, max_runs) = spec.runs_range();
    let runs = min_runs as usize;
    let at_least = if min_runs == max_runs {
        ""
    } else {
        "at least "
    };
    let k = spec.sizes_bytes.len();
    let mut out = format!(
        "smallest corrected p (IPv4 vs IPv6 with {at_least}{runs} runs per side, Holm over {k} size{}):\n",
        if k == 1 { "" } else { "s" }
    );
    let mut warn = Vec::new();
    for (test, what, what_or) in [
        (PrimaryTest::MannWhitney, "RTT, jitter", "RTT or jitter"),
        (
            PrimaryTest::Welch,
            "throughput, loss, CPU",
            "throughput, loss or CPU",
        ),
    ] {
        let reach = smallest_corrected_p(test, runs, runs, k);
        let text = match reach {
            Reach::AtLeast(p) => stats_p(p),
            Reach::Unbounded => {
                "any (needs ≥ 2 runs per side and some spread between runs)".to_string()
            }
            Reach::NoTest => "none (needs ≥ 2 runs per side)".to_string(),
        };
        out.push_str(&format!("  {} ({what}): {text}\n", test.name()));
        if !reach.can_reach(REPORT_ALPHA) {
            let need = runs_needed(test, k, REPORT_ALPHA)
                .map(|n| format!("; use at least {n} runs per cell (--runs {n} or --min-runs {n})"))
                .unwrap_or_default();
            warn.push(format!(
                "warning: {} cannot go below alpha = {REPORT_ALPHA} with this plan, so no {what_or} difference can be called significant{need}\n",
                test.name()
            ));
        }
    }
    for w in warn {
        out.push_str(&w);
    }
    out
}

/// "0.6", "0.0476", "1.2e-9".
fn stats_p(p: f64) -> String {
    if p >= 0.001 {
        let s = format!("{p:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{p:.1e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use study::SpecFile;

    fn spec(toml: &str) -> StudySpec {
        SpecFile::from_toml(toml)
            .and_then(|f| f.resolve(0))
            .unwrap()
    }

    #[test]
    fn three_runs_over_six_sizes_warn_and_say_how_many_runs_would_do() {
        let t = reach_text(&spec(
            "runs = 3\nsizes = [128, 384, 640, 896, 1152, 1408]\n",
        ));
        assert!(t.contains("3 runs per side, Holm over 6 sizes"), "{t}");
        // 2 / C(6, 3) × 6 = 0.6.
        assert!(t.contains("Mann-Whitney U (RTT, jitter): 0.6\n"), "{t}");
        assert!(
            t.contains("warning: Mann-Whitney U cannot go below alpha = 0.05"),
            "{t}"
        );
        // 5 per side: 2/252 × 6 = 0.0476 < 0.05.
        assert!(t.contains("use at least 5 runs per cell"), "{t}");
        assert!(!t.contains("warning: Welch"), "{t}");
    }

    #[test]
    fn a_confidence_plan_is_judged_at_its_minimum_runs() {
        let t = reach_text(&spec(
            "confidence = 95\nmin_runs = 3\nmax_runs = 30\nsizes = [128, 1408]\n",
        ));
        assert!(
            t.contains("with at least 3 runs per side, Holm over 2 sizes"),
            "{t}"
        );
        assert!(t.contains("use at least 5 runs per cell"), "{t}");
    }

    #[test]
    fn five_runs_over_two_sizes_can_reach_alpha() {
        let t = reach_text(&spec("runs = 5\nsizes = [128, 1408]\n"));
        assert!(t.contains("Mann-Whitney U (RTT, jitter): 0.0159\n"), "{t}");
        assert!(!t.contains("warning"), "{t}");
        let t = reach_text(&spec("runs = 1\nsizes = [128]\n"));
        assert!(
            t.contains("Welch's t-test (throughput, loss, CPU): none"),
            "{t}"
        );
        assert!(t.contains("warning: Welch's t-test cannot go below"), "{t}");
    }
}
