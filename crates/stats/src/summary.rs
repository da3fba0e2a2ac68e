//! Per-cell descriptive statistics: n, mean, sample standard deviation, median, min, max,
//! and the Student-t confidence interval of the mean.

use crate::special::student_t_quantile;
use serde::{Deserialize, Serialize};

/// Descriptive statistics of one cell (one metric of one family × test × size × system).
///
/// Undefined values are NaN: every field for n = 0, `sd` for n = 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (divisor n − 1).
    pub sd: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Summary {
    /// Summarise `values`; NaN entries are ignored (a metric a run could not measure).
    pub fn of(values: &[f64]) -> Summary {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        if n == 0 {
            return Summary {
                n: 0,
                mean: f64::NAN,
                sd: f64::NAN,
                median: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        let mean = sorted.iter().sum::<f64>() / n as f64;
        // Two-pass variance with the compensation term (Chan, Golub & LeVeque 1983).
        let (sq, comp) = sorted.iter().fold((0.0, 0.0), |(sq, comp), v| {
            let d = v - mean;
            (sq + d * d, comp + d)
        });
        let sd = if n > 1 {
            ((sq - comp * comp / n as f64) / (n - 1) as f64)
                .max(0.0)
                .sqrt()
        } else {
            f64::NAN
        };
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            0.5 * (sorted[n / 2 - 1] + sorted[n / 2])
        };
        Summary {
            n,
            mean,
            sd,
            median,
            min: sorted[0],
            max: sorted[n - 1],
        }
    }

    /// Standard error of the mean, sd / √n (NaN for n < 2).
    pub fn sem(&self) -> f64 {
        if self.n < 2 {
            f64::NAN
        } else {
            self.sd / (self.n as f64).sqrt()
        }
    }

    /// Half-width of the Student-t confidence interval of the mean at `level` (e.g. 0.95):
    /// t(1 − (1 − level)/2, n − 1) · sd / √n. Infinite for n < 2 (one run says nothing
    /// about spread), NaN for n = 0 or a level outside (0, 1).
    pub fn ci_half_width(&self, level: f64) -> f64 {
        if self.n == 0 || !(level > 0.0 && level < 1.0) {
            return f64::NAN;
        }
        if self.n < 2 {
            return f64::INFINITY;
        }
        let t = student_t_quantile(1.0 - (1.0 - level) / 2.0, (self.n - 1) as f64);
        t * self.sem()
    }

    /// Student-t confidence interval of the mean at `level` (e.g. 0.95): (low, high).
    /// (−∞, +∞) for n = 1; (NaN, NaN) for n = 0.
    pub fn ci(&self, level: f64) -> (f64, f64) {
        let h = self.ci_half_width(level);
        (self.mean - h, self.mean + h)
    }

    /// Coefficient of variation sd / |mean| (NaN when undefined).
    pub fn cv(&self) -> f64 {
        if self.mean == 0.0 {
            f64::NAN
        } else {
            self.sd / self.mean.abs()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, rel: f64) {
        let err = (got - want).abs() / want.abs().max(1e-300);
        assert!(err < rel, "got {got}, want {want} (rel err {err:e})");
    }

    #[test]
    fn summary_of_ten_values_matches_numpy_and_scipy() {
        let x = [93.1, 94.7, 92.8, 95.0, 93.9, 94.2, 93.3, 96.1, 94.4, 93.6];
        let s = Summary::of(&x);
        assert_eq!(s.n, 10);
        // numpy.mean(x), numpy.std(x, ddof=1), numpy.median(x) (NumPy 2.4.6)
        close(s.mean, 94.11, 1e-13);
        close(s.sd, 0.993_814_201_280_434_4, 1e-12);
        close(s.median, 94.05, 1e-13);
        assert_eq!(s.min, 92.8);
        assert_eq!(s.max, 96.1);
        // scipy.stats.t.interval(0.95, 9, loc=mean, scale=sd/sqrt(10)) (SciPy 1.17.1)
        let (lo, hi) = s.ci(0.95);
        close(lo, 93.399_068_147_862_32, 1e-12);
        close(hi, 94.820_931_852_137_68, 1e-12);
    }

    #[test]
    fn summary_handles_small_and_empty_inputs() {
        let empty = Summary::of(&[]);
        assert_eq!(empty.n, 0);
        assert!(empty.mean.is_nan());
        assert!(empty.ci(0.95).0.is_nan());
        let one = Summary::of(&[5.0]);
        assert_eq!(one.mean, 5.0);
        assert!(one.sd.is_nan());
        assert_eq!(one.ci(0.95), (f64::NEG_INFINITY, f64::INFINITY));
        let with_nan = Summary::of(&[1.0, f64::NAN, 3.0]);
        assert_eq!(with_nan.n, 2);
        assert_eq!(with_nan.median, 2.0);
    }

    #[test]
    fn identical_values_have_zero_spread() {
        let s = Summary::of(&[1e9, 1e9, 1e9]);
        assert_eq!(s.sd, 0.0);
        assert_eq!(s.ci(0.95), (1e9, 1e9));
    }
}
