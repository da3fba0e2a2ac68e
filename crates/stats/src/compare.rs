//! Two-group comparisons of one cell (IPv4 vs IPv6, system A vs system B): difference of
//! means with its Welch confidence interval, Welch's unequal-variance t-test, the
//! Mann-Whitney U rank test, effect sizes, and Holm's step-down correction.
//!
//! Sources: Welch (1947) and the Welch–Satterthwaite degrees of freedom, as in
//! `scipy.stats.ttest_ind(equal_var=False)`; Mann & Whitney (1947) with the normal
//! approximation, tie correction and continuity correction, or the exact null
//! distribution whenever there are no ties and its cost is bounded ([`EXACT_MAX_WORK`]:
//! up to 271 runs per side), as `scipy.stats.mannwhitneyu(method="exact")` — wider than
//! SciPy's `method="auto"`, which stops at 8 —, and with ties the exact distribution
//! conditional on them (the permutation distribution of the midrank sum, as SciPy's
//! `mannwhitneyu(method=PermutationMethod(n_resamples=inf))`) up to 39 runs per side
//! ([`exact_with_ties_is_computable`]); Cohen's d with the pooled sd and
//! Hedges' g with the exact small-sample factor (Hedges 1981); the rank-biserial
//! correlation r = 2·U₁/(n₁n₂) − 1 (Kerby 2014); Holm (1979).

use crate::special::{ln_gamma, normal_sf, student_t_quantile, student_t_sf};
use crate::summary::Summary;
use serde::{Deserialize, Serialize};

/// Welch's t-test of mean(a) − mean(b).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// mean(a) − mean(b).
    pub diff: f64,
    /// Standard error of the difference, √(s²ₐ/nₐ + s²_b/n_b).
    pub se: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    pub t: f64,
    /// Two-sided p-value.
    pub p: f64,
}

impl Welch {
    /// Welch test from two summaries. NaN fields when either group has n < 2.
    pub fn of(a: &Summary, b: &Summary) -> Welch {
        let diff = a.mean - b.mean;
        if a.n < 2 || b.n < 2 {
            return Welch {
                diff,
                se: f64::NAN,
                df: f64::NAN,
                t: f64::NAN,
                p: f64::NAN,
            };
        }
        let va = a.sd * a.sd / a.n as f64;
        let vb = b.sd * b.sd / b.n as f64;
        let se = (va + vb).sqrt();
        if se == 0.0 {
            // Both groups constant: the difference is exact.
            let p = if diff == 0.0 { 1.0 } else { 0.0 };
            let t = if diff == 0.0 {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            };
            return Welch {
                diff,
                se,
                df: (a.n + b.n - 2) as f64,
                t,
                p,
            };
        }
        let df = (va + vb).powi(2) / (va * va / (a.n - 1) as f64 + vb * vb / (b.n - 1) as f64);
        let t = diff / se;
        let p = (2.0 * student_t_sf(t.abs(), df)).min(1.0);
        Welch { diff, se, df, t, p }
    }

    /// Welch confidence interval of the difference of means at `level` (e.g. 0.95).
    pub fn ci(&self, level: f64) -> (f64, f64) {
        if self.se == 0.0 {
            return (self.diff, self.diff);
        }
        let h = student_t_quantile(1.0 - (1.0 - level) / 2.0, self.df) * self.se;
        (self.diff - h, self.diff + h)
    }
}

/// Mann-Whitney U test of a against b (two-sided; exact or normal approximation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U statistic of sample a: the number of pairs (x in a, y in b) with x > y, ties ½.
    pub u1: f64,
    /// Standardised statistic with tie and continuity correction (sign: a larger > 0).
    pub z: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Rank-biserial correlation 2·U₁/(n₁n₂) − 1, in [−1, 1]; > 0 when a tends larger.
    pub rank_biserial: f64,
    /// Whether p comes from an exact distribution — without ties the null distribution
    /// of U ([`exact_is_computable`]), with ties the permutation distribution of the
    /// midrank sum given those ties ([`exact_with_ties_is_computable`]) — rather than the
    /// normal approximation with tie and continuity correction (samples beyond those
    /// bounds).
    pub exact: bool,
}

/// The Hodges–Lehmann shift of a against b: the median of all n₁·n₂ differences
/// a_i − b_j, the effect that goes with the Mann–Whitney test, and its
/// distribution-free confidence interval [D₍k₎, D₍n₁n₂+1−k₎] over the sorted
/// differences (Hollander & Wolfe, *Nonparametric Statistical Methods*, §4.3; R's
/// `wilcox.test(conf.int = TRUE)`): k is the smallest count with P(U ≤ k) ≥ α/2 under
/// the exact null distribution (no ties, cost within [`EXACT_MAX_WORK`]), else
/// ⌊n₁n₂/2 − z·√(n₁n₂(n₁+n₂+1)/12)⌋ from the normal approximation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HodgesLehmann {
    /// Median of the pairwise differences a_i − b_j.
    pub shift: f64,
    /// The interval, and the confidence it achieves: with few runs the exact interval
    /// cannot reach the level asked (3 against 3 reaches 90 % at most), and then it is
    /// the widest one, [min, max] of the differences, with the level it has.
    pub ci: (f64, f64),
    pub level_achieved: f64,
    /// Whether k came from the exact distribution.
    pub exact: bool,
}

/// Most pairwise differences [`HodgesLehmann::of`] sorts (32 MB of them); beyond, it
/// finds the few it needs by counting, in memory linear in the runs.
pub const HL_MAX_PAIRS: usize = 4_000_000;

/// The pairwise differences a_i − b_j in ascending order: sorted when there are at most
/// [`HL_MAX_PAIRS`], otherwise each one asked for is found by bisecting the f64 values
/// (at most 64 steps, one per bit) and counting the differences at or below each — a
/// count is O(m log n) over the sorted samples, and nothing of size m·n is stored.
enum Diffs {
    Sorted(Vec<f64>),
    Counted { a: Vec<f64>, b: Vec<f64> },
}

/// f64 → u64 in the same order (finite values; −0 just below +0).
fn order_key(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

fn from_order_key(k: u64) -> f64 {
    if k >> 63 == 1 {
        f64::from_bits(k & !(1 << 63))
    } else {
        f64::from_bits(!k)
    }
}

impl Diffs {
    fn new(a: &[f64], b: &[f64]) -> Diffs {
        let mut a = a.to_vec();
        let mut b = b.to_vec();
        if a.len().saturating_mul(b.len()) <= HL_MAX_PAIRS {
            let mut d: Vec<f64> = Vec::with_capacity(a.len() * b.len());
            for x in &a {
                d.extend(b.iter().map(|y| x - y));
            }
            d.sort_by(f64::total_cmp);
            return Diffs::Sorted(d);
        }
        a.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        Diffs::Counted { a, b }
    }

    /// The i-th smallest difference (from 0); the samples are non-empty and finite.
    fn nth(&self, i: usize) -> f64 {
        let (a, b) = match self {
            Diffs::Sorted(d) => return d[i],
            Diffs::Counted { a, b } => (a, b),
        };
        // For each x, fl(x − y) falls as y grows (rounding is monotone): the y with
        // x − y ≤ t are a suffix of the sorted b.
        let at_or_below = |t: f64| -> usize {
            a.iter()
                .map(|x| b.len() - b.partition_point(|y| x - y > t))
                .sum()
        };
        let (first, last) = (a[0] - b[b.len() - 1], a[a.len() - 1] - b[0]);
        // The smallest t with more than i differences at or below it is a difference.
        let (mut lo, mut hi) = (order_key(first), order_key(last));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if at_or_below(from_order_key(mid)) > i {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        from_order_key(lo) + 0.0
    }
}

impl HodgesLehmann {
    /// The shift and its CI at `level` (e.g. 0.95). `None` when a side has no finite
    /// value.
    pub fn of(a: &[f64], b: &[f64], level: f64) -> Option<HodgesLehmann> {
        let a: Vec<f64> = a.iter().copied().filter(|v| v.is_finite()).collect();
        let b: Vec<f64> = b.iter().copied().filter(|v| v.is_finite()).collect();
        let (m, n) = (a.len(), b.len());
        let mn = m.checked_mul(n).filter(|&p| p > 0)?;
        let d = Diffs::new(&a, &b);
        let shift = if mn % 2 == 1 {
            d.nth(mn / 2)
        } else {
            (d.nth(mn / 2 - 1) + d.nth(mn / 2)) / 2.0
        };
        let alpha = 1.0 - level;
        let mut all: Vec<f64> = a.iter().chain(&b).copied().collect();
        all.sort_by(f64::total_cmp);
        let ties = all.windows(2).any(|w| w[0] == w[1]);
        let exact = !ties && exact_is_computable(m, n);
        // P(U ≤ k) = P(U ≥ mn − k): the null distribution is symmetric.
        let cdf = |k: usize| exact_upper_tail(m, n, mn - k);
        let k = if exact {
            (0..=mn).find(|&k| cdf(k) >= alpha / 2.0).unwrap_or(mn / 2)
        } else {
            let z = crate::special::normal_quantile(1.0 - alpha / 2.0);
            let (mf, nf) = (m as f64, n as f64);
            let k = mf * nf / 2.0 - z * (mf * nf * (mf + nf + 1.0) / 12.0).sqrt();
            k.floor().max(0.0) as usize
        };
        // k = 0: the level is out of reach; the widest interval, with what it achieves.
        let k = k.clamp(1, mn.div_ceil(2));
        // With ties, no more than without them: 1 − 2 / C(m + n, m) at most, which the
        // normal approximation would not say (3 tied against 3 is no 95 % interval).
        let level_achieved = if exact {
            1.0 - 2.0 * cdf(k - 1)
        } else if exact_is_computable(m, n) {
            level.min(1.0 - 2.0 * cdf(0))
        } else {
            level
        };
        Some(HodgesLehmann {
            shift,
            ci: (d.nth(k - 1), d.nth(mn - k)),
            level_achieved,
            exact,
        })
    }
}

/// Work bound of the exact distribution: its cost is about min(n₁, n₂) · n₁ · n₂
/// multiply-adds (the Gaussian-binomial product below). 2·10⁷ is ~20 ms in a release
/// build and covers every study plan up to 271 runs per side (and e.g. 20 against
/// 1,000 runs); beyond it the normal approximation is used (and said so).
pub const EXACT_MAX_WORK: u64 = 20_000_000;

/// Whether the exact null distribution is computed for samples of n₁ and n₂ (without
/// ties): when its cost is within [`EXACT_MAX_WORK`].
pub fn exact_is_computable(n1: usize, n2: usize) -> bool {
    let (lo, hi) = (n1.min(n2) as u64, n1.max(n2) as u64);
    lo > 0 && lo.saturating_mul(hi).saturating_mul(lo) <= EXACT_MAX_WORK
}

/// Whether the exact distribution with ties is computed for samples of n₁ and n₂: its
/// cost, about 2·m²·N² additions (m = min(n₁, n₂), N = n₁ + n₂: N values, m sizes of
/// subset, doubled rank sums up to 2·m·N), within [`EXACT_MAX_WORK`] — up to 39 runs per
/// side, or e.g. 10 against 150. Beyond it the normal approximation with tie correction.
pub fn exact_with_ties_is_computable(n1: usize, n2: usize) -> bool {
    let m = n1.min(n2) as u64;
    let total = (n1 as u64).saturating_add(n2 as u64);
    m > 0
        && 2u64
            .saturating_mul(m)
            .saturating_mul(m)
            .saturating_mul(total)
            .saturating_mul(total)
            <= EXACT_MAX_WORK
}

/// Exact two-sided p of the rank sum given the ties: of the C(N, m) ways to pick m of
/// the N values, the share whose doubled midrank sum is at most `observed` (the doubled
/// midrank sum of the m values of one sample), or at least it, whichever is smaller,
/// doubled and capped at 1 — as the untied branch, and as SciPy's
/// `mannwhitneyu(method=PermutationMethod(n_resamples=inf))`. Doubled midranks are
/// integers, so the distribution is counted exactly by a subset-sum table (counts as
/// f64: C(N, m) stays far below 10³⁰⁸ within [`exact_with_ties_is_computable`]).
fn exact_tied_p(doubled_ranks: &[u64], m: usize, observed: u64) -> f64 {
    let top: u64 = {
        let mut r = doubled_ranks.to_vec();
        r.sort_unstable_by(|x, y| y.cmp(x));
        r.iter().take(m).sum()
    };
    let width = top as usize + 1;
    // ways[k · width + s]: subsets of k values so far with doubled rank sum s.
    let mut ways = vec![0.0_f64; (m + 1) * width];
    ways[0] = 1.0;
    for (i, &r) in doubled_ranks.iter().enumerate() {
        let r = r as usize;
        for k in (1..=m.min(i + 1)).rev() {
            let (below, here) = ways.split_at_mut(k * width);
            let from = &below[(k - 1) * width..];
            for s in (r..width).rev() {
                here[s] += from[s - r];
            }
        }
    }
    let row = &ways[m * width..];
    let (mut at_most, mut at_least, mut all) = (0.0, 0.0, 0.0);
    for (s, &w) in row.iter().enumerate() {
        all += w;
        if s as u64 <= observed {
            at_most += w;
        }
        if s as u64 >= observed {
            at_least += w;
        }
    }
    (2.0 * f64::min(at_most, at_least) / all).min(1.0)
}

/// Exact upper tail P(U ≥ u) under the null for samples of m and n without ties, from
/// the generating function of U, the Gaussian binomial [m+n choose m]_q =
/// Π_{i=1..m} (1 − q^(n+i)) / (1 − q^i) (Mann & Whitney 1947), whose coefficient j
/// counts the arrangements with U = j out of C(m+n, m).
///
/// The distribution is symmetric, so P(U ≥ u) = P(U ≤ mn − u): only the coefficients
/// up to mn − u are computed. Each depends on lower ones only, and the small ones are
/// small exact integers, so a tiny tail does not drown in the rounding of the middle
/// of the distribution (computing the upper coefficients directly loses ~0.5 % at
/// p ≈ 10⁻⁶ for 150 against 100). Coefficients are rescaled when they grow large (the
/// steps are linear), and C(m+n, m) is taken in logarithms, so nothing overflows.
fn exact_upper_tail(m: usize, n: usize, u: usize) -> f64 {
    let (m, n) = if m <= n { (m, n) } else { (n, m) };
    let mn = m * n;
    if u == 0 {
        return 1.0;
    }
    if u > mn {
        return 0.0;
    }
    let len = mn - u + 1;
    let mut poly = vec![0.0_f64; len];
    poly[0] = 1.0;
    let mut ln_scale = 0.0_f64;
    for i in 1..=m {
        // × (1 − q^(n+i)), from the top so each coefficient is used before it changes.
        let k = n + i;
        for j in (k..len).rev() {
            poly[j] -= poly[j - k];
        }
        // ÷ (1 − q^i): Q[j] = P[j] + Q[j − i].
        for j in i..len {
            poly[j] += poly[j - i];
        }
        let top = poly.iter().fold(0.0_f64, |a, &v| a.max(v.abs()));
        if top > 1e200 {
            poly.iter_mut().for_each(|v| *v /= top);
            ln_scale += top.ln();
        }
    }
    let lower: f64 = poly.iter().map(|v| v.max(0.0)).sum();
    let ln_total: f64 = (1..=m).map(|i| ((n + i) as f64 / i as f64).ln()).sum();
    (lower.ln() + ln_scale - ln_total).exp().min(1.0)
}

impl MannWhitney {
    /// The test; NaN fields when either sample is empty. NaN values are ignored.
    pub fn of(a: &[f64], b: &[f64]) -> MannWhitney {
        let a: Vec<f64> = a.iter().copied().filter(|v| !v.is_nan()).collect();
        let b: Vec<f64> = b.iter().copied().filter(|v| !v.is_nan()).collect();
        let (n1, n2) = (a.len(), b.len());
        if n1 == 0 || n2 == 0 {
            return MannWhitney {
                u1: f64::NAN,
                z: f64::NAN,
                p: f64::NAN,
                rank_biserial: f64::NAN,
                exact: false,
            };
        }
        let mut all: Vec<(f64, bool)> = a
            .iter()
            .map(|&v| (v, true))
            .chain(b.iter().map(|&v| (v, false)))
            .collect();
        all.sort_by(|x, y| x.0.total_cmp(&y.0));
        let n = all.len();
        // Midranks (doubled: i + j + 2 for the group at sorted places i..=j, an integer);
        // sum of t³ − t over tie groups.
        let mut rank_sum_a = 0.0;
        let mut tie_term = 0.0;
        let mut doubled: Vec<(u64, bool)> = Vec::with_capacity(n);
        let mut i = 0;
        while i < n {
            let mut j = i;
            while j + 1 < n && all[j + 1].0 == all[i].0 {
                j += 1;
            }
            let midrank = (i + j) as f64 / 2.0 + 1.0;
            let count = (j - i + 1) as f64;
            tie_term += count * count * count - count;
            rank_sum_a += all[i..=j].iter().filter(|x| x.1).count() as f64 * midrank;
            doubled.extend(all[i..=j].iter().map(|x| ((i + j + 2) as u64, x.1)));
            i = j + 1;
        }
        let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
        let u1 = rank_sum_a - n1f * (n1f + 1.0) / 2.0;
        let mu = n1f * n2f / 2.0;
        let sigma = if n > 1 {
            (n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)))).sqrt()
        } else {
            0.0
        };
        let rank_biserial = 2.0 * u1 / (n1f * n2f) - 1.0;
        if sigma == 0.0 {
            return MannWhitney {
                u1,
                z: 0.0,
                p: 1.0,
                rank_biserial,
                exact: false,
            };
        }
        // Continuity correction toward the mean, as SciPy does with U = max(U1, U2).
        let dev = (u1 - mu).abs();
        let z_abs = ((dev - 0.5).max(0.0)) / sigma;
        let z = if u1 >= mu { z_abs } else { -z_abs };
        let tied_exact = tie_term > 0.0 && exact_with_ties_is_computable(n1, n2);
        let exact = tied_exact || (tie_term == 0.0 && exact_is_computable(n1, n2));
        let p = if tied_exact {
            // The smaller sample's doubled midrank sum (either gives the same p).
            let small = n1 > n2;
            let observed: u64 = doubled.iter().filter(|x| x.1 != small).map(|x| x.0).sum();
            let ranks: Vec<u64> = doubled.iter().map(|x| x.0).collect();
            exact_tied_p(&ranks, n1.min(n2), observed)
        } else if exact {
            let u_big = u1.max(n1f * n2f - u1).round() as usize;
            (2.0 * exact_upper_tail(n1, n2, u_big)).min(1.0)
        } else {
            (2.0 * normal_sf(z_abs)).min(1.0)
        };
        MannWhitney {
            u1,
            z,
            p,
            rank_biserial,
            exact,
        }
    }
}

/// Cohen's d: (mean(a) − mean(b)) / pooled sd (NaN when undefined).
pub fn cohens_d(a: &Summary, b: &Summary) -> f64 {
    if a.n < 2 || b.n < 2 {
        return f64::NAN;
    }
    let df = (a.n + b.n - 2) as f64;
    let pooled = (((a.n - 1) as f64 * a.sd * a.sd + (b.n - 1) as f64 * b.sd * b.sd) / df).sqrt();
    if pooled == 0.0 {
        return f64::NAN;
    }
    (a.mean - b.mean) / pooled
}

/// Hedges' g: Cohen's d times the exact small-sample bias factor
/// J(ν) = Γ(ν/2) / (√(ν/2) · Γ((ν−1)/2)), ν = nₐ + n_b − 2.
pub fn hedges_g(a: &Summary, b: &Summary) -> f64 {
    let d = cohens_d(a, b);
    if d.is_nan() {
        return d;
    }
    let nu = (a.n + b.n - 2) as f64;
    let j = (ln_gamma(nu / 2.0) - ln_gamma((nu - 1.0) / 2.0)).exp() / (nu / 2.0).sqrt();
    d * j
}

/// Holm–Bonferroni step-down adjusted p-values, in the input order. NaN inputs stay NaN
/// and do not count toward the number of tests.
pub fn holm(p_values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p_values.len())
        .filter(|&i| !p_values[i].is_nan())
        .collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    let m = order.len();
    let mut adjusted = vec![f64::NAN; p_values.len()];
    let mut running_max = 0.0_f64;
    for (rank, &i) in order.iter().enumerate() {
        let adj = ((m - rank) as f64 * p_values[i]).min(1.0);
        running_max = running_max.max(adj);
        adjusted[i] = running_max;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) {
        let err = (got - want).abs() / want.abs().max(1e-300);
        assert!(err < rel, "got {got}, want {want} (rel err {err:e})");
    }

    const A: [f64; 8] = [95.2, 94.8, 96.1, 95.5, 94.9, 95.7, 96.0, 95.1];
    const B: [f64; 10] = [93.9, 94.6, 94.1, 95.0, 93.5, 94.4, 94.8, 93.7, 94.2, 95.3];

    #[test]
    fn hodges_lehmann_matches_r_wilcox_conf_int() {
        // No ties: a = A[..5], b = [93.9, 94.6, 94.1, 95.0, 93.5]. R's
        // wilcox.test(a, b, conf.int = TRUE): diffs = sort(outer(a, b, "-")),
        // qu = qwilcox(0.025, 5, 5) = 3, cint = c(diffs[3], diffs[25 - 3 + 1]) = (0.2,
        // 2.0), estimate median(diffs) = 1.1 (recomputed here with numpy and the exact
        // Mann-Whitney counts).
        let b5 = [93.9, 94.6, 94.1, 95.0, 93.5];
        let hl = HodgesLehmann::of(&A[..5], &b5, 0.95).unwrap();
        close(hl.shift, 1.1, 1e-12);
        close(hl.ci.0, 0.2, 1e-12);
        close(hl.ci.1, 2.0, 1e-12);
        // 1 − 2 · P(U ≤ 2) = 1 − 2 · 4/252.
        assert!(hl.exact, "{hl:?}");
        close(hl.level_achieved, 1.0 - 8.0 / 252.0, 1e-12);
        // A and B share 94.8: the normal approximation, k = ⌊40 − 1.96·√(80·19/12)⌋ = 17.
        let hl = HodgesLehmann::of(&A, &B, 0.95).unwrap();
        assert!(!hl.exact);
        let mut d: Vec<f64> = A
            .iter()
            .flat_map(|x| B.iter().map(move |y| x - y))
            .collect();
        d.sort_by(f64::total_cmp);
        assert_eq!(hl.ci, (d[16], d[63]));
        // 3 against 3 cannot reach 95 %: the widest interval, which achieves 90 %
        // (1 − 2 · P(U ≤ 0) = 1 − 2/20).
        let hl = HodgesLehmann::of(&[1.0, 2.0, 3.0], &[4.0, 5.0, 7.0], 0.95).unwrap();
        assert_eq!(hl.ci, (-6.0, -1.0));
        close(hl.level_achieved, 0.9, 1e-12);
        assert_eq!(hl.shift, -3.0);
        assert!(HodgesLehmann::of(&[], &[1.0], 0.95).is_none());
        // Ties do not lift the level past what these sizes reach: 3 against 3 gives at
        // most 1 − 2/20 = 90 %, tied or not.
        let hl = HodgesLehmann::of(&[1.0, 1.0, 2.0], &[3.0, 3.0, 4.0], 0.95).unwrap();
        assert!(!hl.exact);
        close(hl.level_achieved, 0.9, 1e-12);
        let hl = HodgesLehmann::of(&[1.0, 2.0, 3.0], &[4.0, 5.0, 7.0], 0.95).unwrap();
        close(hl.level_achieved, 0.9, 1e-12);
        // Ties: the normal approximation, said so.
        let hl =
            HodgesLehmann::of(&[1.0, 1.0, 2.0, 3.0, 3.0], &[1.0, 2.0, 2.0, 4.0], 0.95).unwrap();
        assert!(
            !hl.exact && hl.ci.0 <= hl.shift && hl.shift <= hl.ci.1,
            "{hl:?}"
        );
    }

    #[test]
    fn welch_matches_scipy() {
        let w = Welch::of(&Summary::of(&A), &Summary::of(&B));
        // scipy.stats.ttest_ind(A, B, equal_var=False) (SciPy 1.17.1):
        // statistic, pvalue, df; and res.confidence_interval(0.95)
        close(w.t, 4.207_554_172_608_777, 1e-11);
        close(w.p, 0.000_674_722_688_094_829_2, 1e-9);
        close(w.df, 15.918_889_974_981_452, 1e-11);
        let (lo, hi) = w.ci(0.95);
        close(lo, 0.526_955_508_067_640_8, 1e-10);
        close(hi, 1.598_044_491_932_387_5, 1e-10);
    }

    #[test]
    fn mann_whitney_matches_scipy_with_ties() {
        let a = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0, 9.0];
        let b = [2.0, 3.0, 6.0, 7.0, 7.0, 8.0, 10.0, 11.0, 12.0];
        let m = MannWhitney::of(&a, &b);
        // scipy.stats.mannwhitneyu(a, b, alternative="two-sided",
        // method=PermutationMethod(n_resamples=np.inf)) (SciPy 1.17.1): statistic (U of
        // a), pvalue; method="asymptotic" gives 0.04241253405700955.
        assert!(m.exact);
        close(m.u1, 14.5, 1e-15);
        close(m.p, 0.036_528_177_704_648_29, 1e-9);
        assert!(m.z < 0.0);
        close(m.rank_biserial, 2.0 * 14.5 / 72.0 - 1.0, 1e-15);
    }

    #[test]
    fn counted_order_statistics_equal_the_sorted_differences() {
        // The counting path of Diffs against sorting, on samples with ties, negative
        // values, −0 and a wide spread (a fixed LCG: the same values every run).
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) % 2001) as f64 / 8.0 - 120.0
        };
        let mut a: Vec<f64> = (0..37).map(|_| next()).collect();
        let b: Vec<f64> = (0..23).map(|_| next() * 3.0).collect();
        a[0] = -0.0;
        a[1] = b[4];
        let Diffs::Sorted(sorted) = Diffs::new(&a, &b) else {
            panic!("37 × 23 pairs are sorted");
        };
        let (mut sa, mut sb) = (a.clone(), b.clone());
        sa.sort_by(f64::total_cmp);
        sb.sort_by(f64::total_cmp);
        let counted = Diffs::Counted { a: sa, b: sb };
        for (i, want) in sorted.iter().enumerate() {
            assert_eq!(counted.nth(i), *want + 0.0, "{i}");
        }
        // Past the sorting bound the shift and interval are still given.
        let big_a: Vec<f64> = (0..2100).map(|i| (i % 97) as f64 * 1.5).collect();
        let big_b: Vec<f64> = (0..2100).map(|i| (i % 89) as f64 * 1.5 - 2.0).collect();
        let hl = HodgesLehmann::of(&big_a, &big_b, 0.95).unwrap();
        // NumPy over all 4,410,000 sorted differences: median 8.0; k = 2,127,988 from
        // the normal approximation (ties), d[k − 1] = 5.0 and d[mn − k] = 11.0.
        assert_eq!((hl.shift, hl.ci), (8.0, (5.0, 11.0)), "{hl:?}");
    }

    #[test]
    fn mann_whitney_with_one_tie_matches_scipy() {
        let m = MannWhitney::of(&A, &B);
        // scipy.stats.mannwhitneyu(A, B, method=PermutationMethod(n_resamples=np.inf))
        // (SciPy 1.17.1): the exact distribution given the tie; "asymptotic" gives
        // 0.003350113615676186.
        assert!(m.exact);
        close(m.u1, 73.5, 1e-15);
        close(m.p, 0.001_508_295_625_942_684_8, 1e-9);
    }

    #[test]
    fn large_tied_samples_keep_the_normal_approximation_and_match_scipy() {
        // 40 against 40 with ties: beyond the tied exact bound. scipy.stats.mannwhitneyu(
        // a, b, method="asymptotic") (SciPy 1.17.1).
        let a: Vec<f64> = (0..40).map(|i| (i / 2) as f64).collect();
        let b: Vec<f64> = (0..40).map(|i| (i / 2) as f64 + 3.0).collect();
        assert!(exact_with_ties_is_computable(39, 39));
        assert!(!exact_with_ties_is_computable(40, 40));
        assert!(exact_with_ties_is_computable(10, 150));
        let m = MannWhitney::of(&a, &b);
        assert!(!m.exact);
        close(m.p, 0.032_876_645_288_427_24, 1e-9);
    }

    /// Brute force: every way to pick n₁ of the pooled values as sample a, the doubled
    /// midrank sum of each, and SciPy's two-sided rule 2·min(P(≤), P(≥)).
    fn enumerated_p(a: &[f64], b: &[f64]) -> f64 {
        let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
        let doubled: Vec<u64> = pooled
            .iter()
            .map(|x| {
                let below = pooled.iter().filter(|y| *y < x).count() as u64;
                let equal = pooled.iter().filter(|y| *y == x).count() as u64;
                2 * below + equal + 1
            })
            .collect();
        let observed: u64 = doubled[..a.len()].iter().sum();
        let (mut le, mut ge, mut all) = (0u64, 0u64, 0u64);
        for mask in 0u32..1 << pooled.len() {
            if mask.count_ones() as usize != a.len() {
                continue;
            }
            let s: u64 = (0..pooled.len())
                .filter(|i| mask >> i & 1 == 1)
                .map(|i| doubled[i])
                .sum();
            all += 1;
            le += u64::from(s <= observed);
            ge += u64::from(s >= observed);
        }
        (2.0 * le.min(ge) as f64 / all as f64).min(1.0)
    }

    #[test]
    fn small_tied_samples_use_the_exact_distribution_given_the_ties() {
        // Complete separation of 3 against 3 can do no better than 2 / C(6, 3) = 0.1,
        // ties or not (the normal approximation said 0.0469, "significant").
        let m = MannWhitney::of(&[1.0, 1.0, 1.0], &[2.0, 2.0, 2.0]);
        assert!(m.exact);
        close(m.p, 0.1, 1e-12);
        assert_eq!(
            m.p,
            crate::smallest_p(crate::PrimaryTest::MannWhitney, 3, 3)
        );
        // Ties within and across the samples, checked by enumeration here and against
        // scipy.stats.mannwhitneyu(x, y, method=PermutationMethod(n_resamples=np.inf))
        // (SciPy 1.17.1): 19/143 (asymptotic: 0.12500621852933796).
        let x = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 5.0];
        let y = [2.0, 3.0, 4.0, 4.0, 5.0, 6.0];
        let m = MannWhitney::of(&x, &y);
        assert!(m.exact);
        close(m.p, enumerated_p(&x, &y), 1e-12);
        close(m.p, 19.0 / 143.0, 1e-12);
        // Either order gives the same p, from the smaller sample's side.
        close(MannWhitney::of(&y, &x).p, m.p, 1e-12);
        // Loaded-RTT p50s at three significant figures (ms): SciPy 1/42 (asymptotic
        // 0.01887).
        let a = [1.23, 1.24, 1.24, 1.25, 1.23];
        let b = [1.25, 1.26, 1.25, 1.27, 1.26];
        let m = MannWhitney::of(&a, &b);
        close(m.p, enumerated_p(&a, &b), 1e-12);
        close(m.p, 1.0 / 42.0, 1e-12);
        // Unequal sizes, heavy ties: enumeration only.
        let a = [5.0, 5.0, 6.0, 7.0, 7.0, 7.0, 9.0, 9.0, 10.0];
        let b = [4.0, 5.0, 5.0, 6.0, 6.0, 7.0];
        let m = MannWhitney::of(&a, &b);
        assert!(m.exact);
        close(m.p, enumerated_p(&a, &b), 1e-12);
    }

    #[test]
    fn small_samples_without_ties_use_the_exact_distribution_like_scipy() {
        // scipy.stats.mannwhitneyu(x, y) with the default method="auto" (SciPy 1.17.1)
        // picks "exact" here: no ties, a sample of at most 8.
        let x = [1.1, 2.3, 3.2, 4.8, 5.5];
        let y = [3.9, 6.1, 7.4, 8.8, 9.2, 10.5];
        let m = MannWhitney::of(&x, &y);
        assert!(m.exact);
        close(m.u1, 2.0, 1e-15);
        close(m.p, 0.017_316_017_316_017_316, 1e-12);
        // Five against five, completely separated: p = 2 / C(10, 5) = 2/252.
        let m = MannWhitney::of(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
        close(m.p, 2.0 / 252.0, 1e-12);
        // Larger: 8 against 30, scipy p = 0.049648683574579903 (U = 175).
        let a: Vec<f64> = (0..8).map(|i| 10.0 + i as f64 * 1.5).collect();
        let b: Vec<f64> = (0..30).map(|i| 0.25 + i as f64 * 0.7).collect();
        let m = MannWhitney::of(&a, &b);
        assert!(m.exact);
        close(m.u1, 175.0, 1e-15);
        close(m.p, 0.049_648_683_574_579_903, 1e-9);
    }

    #[test]
    fn larger_samples_without_ties_stay_exact_and_match_scipy() {
        // scipy.stats.mannwhitneyu(a, b, method="exact") (SciPy 1.17.1); SciPy's
        // method="auto" would switch to the normal approximation above 8 per side.
        let a = [
            1.1, 2.3, 3.2, 4.8, 5.5, 6.6, 7.7, 8.15, 9.9, 10.25, 11.4, 12.5,
        ];
        let b = [3.9, 6.1, 7.4, 8.8, 9.2, 10.5, 11.1, 12.2, 13.3, 14.4];
        let m = MannWhitney::of(&a, &b);
        assert!(m.exact);
        close(m.u1, 35.0, 1e-15);
        close(m.p, 0.107_202_395_128_091_72, 1e-10);
        let a: Vec<f64> = (0..30).map(|i| 10.0 + i as f64 * 1.5).collect();
        let b: Vec<f64> = (0..30).map(|i| 0.25 + i as f64 * 0.7).collect();
        let m = MannWhitney::of(&a, &b);
        assert!(m.exact);
        close(m.u1, 835.0, 1e-15);
        close(m.p, 2.307_665_037_062_018_5e-10, 1e-9);
        // 150 against 100 runs (beyond the old 8-per-side limit by far).
        let a: Vec<f64> = (0..150).map(|i| 1000.0 + i as f64 * 0.37).collect();
        let b: Vec<f64> = (0..100).map(|i| 1003.001 + i as f64 * 0.29).collect();
        let m = MannWhitney::of(&a, &b);
        assert!(m.exact);
        close(m.u1, 10_258.0, 1e-15);
        close(m.p, 5.933_976_407_097_025e-7, 1e-9);
    }

    #[test]
    fn exact_stops_at_its_work_bound_and_says_so() {
        assert!(exact_is_computable(271, 271));
        assert!(!exact_is_computable(272, 272));
        assert!(exact_is_computable(20, 1000));
        assert!(!exact_is_computable(0, 5));
        // 300 per side without ties: normal approximation, flagged.
        let a: Vec<f64> = (0..300).map(|i| i as f64 * 2.0).collect();
        let b: Vec<f64> = (0..300).map(|i| i as f64 * 2.0 + 1.0).collect();
        let m = MannWhitney::of(&a, &b);
        assert!(!m.exact);
        assert!(m.p > 0.5, "{}", m.p);
    }

    #[test]
    fn effect_sizes_match_hand_formulae() {
        let (sa, sb) = (Summary::of(&A), Summary::of(&B));
        // d = (mean(A) − mean(B)) / sqrt(((nA−1)sA² + (nB−1)sB²)/(nA+nB−2)), computed
        // with NumPy 2.4.6; g = d · gamma(ν/2)/(sqrt(ν/2)·gamma((ν−1)/2)), scipy.special.
        close(cohens_d(&sa, &sb), 1.957_517_518_251_520_3, 1e-11);
        close(hedges_g(&sa, &sb), 1.864_053_563_451_708_6, 1e-11);
    }

    #[test]
    fn holm_matches_statsmodels_rule() {
        // Holm step-down by hand: sorted p (0.01, 0.02, 0.03, 0.04) × (4, 3, 2, 1)
        // = (0.04, 0.06, 0.06, 0.04) → running max (0.04, 0.06, 0.06, 0.06).
        let adj = holm(&[0.03, 0.01, 0.04, 0.02]);
        let want = [0.06, 0.04, 0.06, 0.06];
        for (g, w) in adj.iter().zip(want) {
            close(*g, w, 1e-12);
        }
        let with_nan = holm(&[0.5, f64::NAN, 0.9]);
        assert!(with_nan[1].is_nan());
        close(with_nan[0], 1.0, 1e-12);
        close(with_nan[2], 1.0, 1e-12);
    }

    #[test]
    fn degenerate_groups_are_explicit() {
        let same = Summary::of(&[1.0, 1.0, 1.0]);
        let other = Summary::of(&[2.0, 2.0]);
        let w = Welch::of(&same, &other);
        assert_eq!(w.p, 0.0);
        assert_eq!(w.ci(0.95), (-1.0, -1.0));
        assert!(Welch::of(&Summary::of(&[1.0]), &other).p.is_nan());
        assert_eq!(MannWhitney::of(&[1.0, 1.0], &[1.0]).p, 1.0);
    }
}
