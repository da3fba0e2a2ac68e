//! The confidence interval of a ratio of two means (IPv6 / IPv4 throughput in the
//! report's header-overhead check).

use crate::compare::Welch;
use crate::special::student_t_quantile;
use crate::summary::Summary;

/// A ratio of two means with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioCi {
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
}

/// mean(`num`) / mean(`den`) with its two-sided CI at `level` (0.95 for 95 %): the delta
/// method over both means (each side's standard error, relative), with the Welch
/// degrees of freedom of the pair (n₁ + n₂ − 2 when both sides are constant). `None`
/// when `den`'s mean is not positive, `num`'s is not finite, or a side has < 2 runs.
pub fn ratio_ci(num: &Summary, den: &Summary, level: f64) -> Option<RatioCi> {
    let (a, b) = (den, num);
    if !(a.mean > 0.0 && b.mean.is_finite()) || a.n < 2 || b.n < 2 {
        return None;
    }
    let r = b.mean / a.mean;
    let rel2 = (a.sd * a.sd / a.n as f64) / (a.mean * a.mean)
        + if b.mean != 0.0 {
            (b.sd * b.sd / b.n as f64) / (b.mean * b.mean)
        } else {
            0.0
        };
    let se = r.abs() * rel2.sqrt();
    let df = Welch::of(a, b).df;
    let df = if df.is_finite() {
        df
    } else {
        (a.n + b.n - 2) as f64
    };
    let t = student_t_quantile(1.0 - (1.0 - level) / 2.0, df.max(1.0));
    Some(RatioCi {
        ratio: r,
        lo: r - t * se,
        hi: r + t * se,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(n: usize, mean: f64, sd: f64) -> Summary {
        Summary {
            n,
            mean,
            sd,
            median: mean,
            min: mean,
            max: mean,
        }
    }

    #[test]
    fn ratio_ci_matches_the_delta_method_by_hand() {
        // 110 ± 10 over 100 ± 10, 4 runs each: se = 1.1 · √(25/100² + 25/110²)
        // = 0.0743303437..., Welch df = 50² / (2 · 25² / 3) = 6, t(0.975, 6) =
        // 2.4469118511..., so 1.1 ∓ 0.1818797...
        let ci = ratio_ci(&summary(4, 110.0, 10.0), &summary(4, 100.0, 10.0), 0.95).unwrap();
        assert!((ci.ratio - 1.1).abs() < 1e-12);
        assert!((ci.lo - 0.9181202010).abs() < 1e-6, "{ci:?}");
        assert!((ci.hi - 1.2818797990).abs() < 1e-6, "{ci:?}");
        // Unequal spreads (110 ± 20): se = 1.1 · √(25/100² + 100/110²) = 0.1141271221...,
        // Welch df = 125² / ((25² + 100²) / 3) = 4.4117647..., t(0.975, df) =
        // 2.6771735785... (scipy), so 1.1 ∓ 0.3055381159...
        let ci = ratio_ci(&summary(4, 110.0, 20.0), &summary(4, 100.0, 10.0), 0.95).unwrap();
        assert!((ci.lo - 0.7944618841).abs() < 1e-6, "{ci:?}");
        assert!((ci.hi - 1.4055381159).abs() < 1e-6, "{ci:?}");
    }

    #[test]
    fn constant_sides_give_a_point_and_too_few_runs_none() {
        let ci = ratio_ci(&summary(3, 90.0, 0.0), &summary(3, 100.0, 0.0), 0.95).unwrap();
        assert_eq!((ci.ratio, ci.lo, ci.hi), (0.9, 0.9, 0.9));
        assert_eq!(
            ratio_ci(&summary(1, 90.0, 1.0), &summary(3, 100.0, 1.0), 0.95),
            None
        );
        assert_eq!(
            ratio_ci(&summary(3, 90.0, 1.0), &summary(3, 0.0, 1.0), 0.95),
            None
        );
        assert_eq!(
            ratio_ci(&summary(3, f64::NAN, 1.0), &summary(3, 100.0, 1.0), 0.95),
            None
        );
    }
}
