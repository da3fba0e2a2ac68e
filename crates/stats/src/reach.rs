//! What a plan can show at best: the smallest p-value, after Holm's correction, that
//! each test can reach with n runs per side. A study whose smallest reachable corrected
//! p is above alpha cannot call any difference significant, however large it is — the
//! plan must be told so before it runs, and the report must say so after.
//!
//! - Mann-Whitney U (exact, no ties): the most extreme outcome, complete separation,
//!   has two-sided p = 2 / C(n₁ + n₂, n₁) (Mann & Whitney 1947); 3 against 3 runs give
//!   2/20 = 0.1. With ties the exact p given them cannot go lower: each tail holds at
//!   least the one arrangement observed. Beyond the exact range, the normal approximation at complete
//!   separation (with continuity correction), as [`crate::MannWhitney`] computes it.
//! - Welch's t-test: p approaches 0 as the difference grows against the spread, so any
//!   alpha is reachable — given at least 2 runs per side (a variance needs two) and
//!   spread in at least one group (with none, the difference is exact).
//! - Holm over k tests: the smallest adjusted p is k × the smallest raw p (all k tests
//!   at their extreme give k·p each), capped at 1.

use crate::compare::exact_is_computable;
use crate::special::normal_sf;
use serde::{Deserialize, Serialize};

/// The primary test of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PrimaryTest {
    Welch,
    MannWhitney,
}

impl PrimaryTest {
    pub fn name(self) -> &'static str {
        match self {
            PrimaryTest::Welch => "Welch's t-test",
            PrimaryTest::MannWhitney => "Mann-Whitney U",
        }
    }
}

/// The smallest corrected p a test can reach with a plan.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Reach {
    /// The test cannot go below this corrected p (in (0, 1]).
    AtLeast(f64),
    /// Any p > 0 is reachable (Welch with ≥ 2 runs per side and some spread).
    Unbounded,
    /// No p at all: fewer than the test needs per side.
    NoTest,
}

impl Reach {
    /// Whether a corrected p below `alpha` is possible.
    pub fn can_reach(self, alpha: f64) -> bool {
        match self {
            Reach::AtLeast(p) => p < alpha,
            Reach::Unbounded => true,
            Reach::NoTest => false,
        }
    }
}

/// C(a + b, a) in floating point (∞ past ~10^308, which then gives p = 0).
fn binomial(a: usize, b: usize) -> f64 {
    let (lo, hi) = (a.min(b), a.max(b));
    (1..=lo).fold(1.0_f64, |acc, i| acc * (hi + i) as f64 / i as f64)
}

/// Smallest two-sided raw p of the test with `n_a` and `n_b` runs (NaN: no test).
pub fn smallest_p(test: PrimaryTest, n_a: usize, n_b: usize) -> f64 {
    match test {
        PrimaryTest::Welch if n_a >= 2 && n_b >= 2 => 0.0,
        PrimaryTest::Welch => f64::NAN,
        PrimaryTest::MannWhitney if n_a == 0 || n_b == 0 => f64::NAN,
        PrimaryTest::MannWhitney if exact_is_computable(n_a, n_b) => {
            (2.0 / binomial(n_a, n_b)).min(1.0)
        }
        PrimaryTest::MannWhitney => {
            // Complete separation: |U − mn/2| = mn/2; no ties.
            let (m, n) = (n_a as f64, n_b as f64);
            let sigma = (m * n * (m + n + 1.0) / 12.0).sqrt();
            (2.0 * normal_sf((m * n / 2.0 - 0.5) / sigma)).min(1.0)
        }
    }
}

/// Smallest Holm-corrected p of the test with `n_a` and `n_b` runs per side when Holm
/// corrects over `comparisons` tests (e.g. the sizes of one IPv4-vs-IPv6 comparison).
pub fn smallest_corrected_p(
    test: PrimaryTest,
    n_a: usize,
    n_b: usize,
    comparisons: usize,
) -> Reach {
    let p = smallest_p(test, n_a, n_b);
    if p.is_nan() {
        Reach::NoTest
    } else if p == 0.0 && test == PrimaryTest::Welch {
        Reach::Unbounded
    } else {
        Reach::AtLeast((p * comparisons.max(1) as f64).min(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{holm, MannWhitney};

    #[test]
    fn three_runs_per_side_over_six_sizes_cannot_reach_five_percent() {
        // 2 / C(6, 3) = 0.1 raw; Holm over 6 sizes: 0.6.
        assert_eq!(smallest_p(PrimaryTest::MannWhitney, 3, 3), 0.1);
        let r = smallest_corrected_p(PrimaryTest::MannWhitney, 3, 3, 6);
        assert_eq!(r, Reach::AtLeast(0.6000000000000001));
        assert!(!r.can_reach(0.05));
        // Five per side over two sizes: 2/252 · 2 = 0.0159 < 0.05.
        let r = smallest_corrected_p(PrimaryTest::MannWhitney, 5, 5, 2);
        assert!(matches!(r, Reach::AtLeast(p) if (p - 4.0 / 252.0).abs() < 1e-15));
        assert!(r.can_reach(0.05));
        // Five per side over six sizes: 12/252 = 0.0476, just below 0.05.
        assert!(smallest_corrected_p(PrimaryTest::MannWhitney, 5, 5, 6).can_reach(0.05));
        assert!(!smallest_corrected_p(PrimaryTest::MannWhitney, 4, 4, 6).can_reach(0.05));
    }

    #[test]
    fn the_bound_is_what_the_test_gives_at_complete_separation() {
        // Complete separation at every one of k sizes: the corrected p equals the bound.
        for (n, k) in [(3usize, 6usize), (5, 2), (7, 4), (12, 3)] {
            let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let b: Vec<f64> = (0..n).map(|i| 100.0 + i as f64).collect();
            let p = MannWhitney::of(&a, &b).p;
            let adjusted = holm(&vec![p; k]);
            match smallest_corrected_p(PrimaryTest::MannWhitney, n, n, k) {
                Reach::AtLeast(bound) => {
                    assert!((adjusted[0] - bound).abs() <= 1e-12 * bound, "{n} {k}")
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn welch_needs_two_runs_per_side() {
        assert_eq!(
            smallest_corrected_p(PrimaryTest::Welch, 2, 2, 6),
            Reach::Unbounded
        );
        assert_eq!(
            smallest_corrected_p(PrimaryTest::Welch, 1, 5, 6),
            Reach::NoTest
        );
        assert!(!Reach::NoTest.can_reach(0.05));
        assert_eq!(
            smallest_corrected_p(PrimaryTest::MannWhitney, 0, 5, 1),
            Reach::NoTest
        );
    }

    #[test]
    fn large_plans_reach_tiny_p_without_overflow() {
        let p = smallest_p(PrimaryTest::MannWhitney, 2000, 2000);
        assert!((0.0..1e-30).contains(&p), "{p}");
        let p = smallest_p(PrimaryTest::MannWhitney, 200, 200);
        assert!((0.0..1e-100).contains(&p), "{p}");
    }
}
