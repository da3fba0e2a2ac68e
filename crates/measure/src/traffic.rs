//! Drawing gaps and sizes from a [`wire::traffic::Dist`]: a seeded PCG generator
//! (`rand_pcg::Pcg64Mcg`, a fixed algorithm, so a seed gives the same sequence on every
//! build and platform) and `rand_distr`'s samplers. Draws that a distribution of
//! positive values cannot take (negative Cauchy, normal or Gumbel values) are drawn
//! again.

use rand::RngExt;
use rand::SeedableRng;
use rand_distr::{Distribution, Exp, Gamma, Gumbel, Normal, Pareto, Poisson, Weibull};
use rand_pcg::Pcg64Mcg;
use stats::special::{ln_gamma, normal_cdf, reg_upper_gamma};
use wire::traffic::Dist;

/// A distribution whose parameters the sampler cannot draw from (`rand_distr`'s reason).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{dist:?}: {reason}")]
pub struct SamplerError {
    pub dist: Dist,
    pub reason: String,
}

/// Draws from one distribution.
pub struct Sampler {
    dist: Dist,
    rng: Pcg64Mcg,
    inner: Inner,
}

enum Inner {
    Constant(f64),
    Uniform(f64, f64),
    Exp(Exp<f64>),
    Pareto(Pareto<f64>),
    Cauchy(f64, f64),
    Normal(Normal<f64>),
    Poisson(Poisson<f64>, f64),
    Gamma(Gamma<f64>),
    Weibull(Weibull<f64>),
    Gumbel(Gumbel<f64>),
}

impl Sampler {
    /// A sampler for `dist` seeded with `seed` (`stream` keeps the streams of one run
    /// apart: stream 0 of seed 42 always draws the same sequence).
    pub fn new(dist: Dist, seed: u64, stream: u64) -> Result<Sampler, SamplerError> {
        let bad = |e: &dyn std::fmt::Display| SamplerError {
            dist,
            reason: e.to_string(),
        };
        let inner = match dist {
            Dist::Constant { value } => Inner::Constant(value),
            Dist::Uniform { low, high } => Inner::Uniform(low, high),
            Dist::Exponential { mean } => Inner::Exp(Exp::new(1.0 / mean).map_err(|e| bad(&e))?),
            Dist::Pareto { shape, scale } => {
                Inner::Pareto(Pareto::new(scale, shape).map_err(|e| bad(&e))?)
            }
            Dist::Cauchy { location, scale } => Inner::Cauchy(location, scale),
            Dist::Normal { mean, sd } => Inner::Normal(Normal::new(mean, sd).map_err(|e| bad(&e))?),
            Dist::Poisson { mean, unit } => {
                Inner::Poisson(Poisson::new(mean / unit).map_err(|e| bad(&e))?, unit)
            }
            Dist::Gamma { shape, scale } => {
                Inner::Gamma(Gamma::new(shape, scale).map_err(|e| bad(&e))?)
            }
            Dist::Weibull { shape, scale } => {
                Inner::Weibull(Weibull::new(scale, shape).map_err(|e| bad(&e))?)
            }
            Dist::Gumbel { location, scale } => {
                Inner::Gumbel(Gumbel::new(location, scale).map_err(|e| bad(&e))?)
            }
        };
        let mixed = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Ok(Sampler {
            dist,
            rng: Pcg64Mcg::seed_from_u64(mixed),
            inner,
        })
    }

    pub fn dist(&self) -> Dist {
        self.dist
    }

    /// The next value (≥ 0).
    pub fn sample(&mut self) -> f64 {
        let rng = &mut self.rng;
        match &self.inner {
            Inner::Constant(v) => *v,
            Inner::Uniform(a, b) => rng.random_range(*a..*b),
            Inner::Exp(d) => d.sample(rng),
            Inner::Pareto(d) => d.sample(rng),
            Inner::Cauchy(loc, scale) => loop {
                // Inverse CDF: loc + scale·tan(π(u − ½)); negative draws again.
                let u: f64 = rng.random();
                let v = loc + scale * (std::f64::consts::PI * (u - 0.5)).tan();
                if v >= 0.0 && v.is_finite() {
                    break v;
                }
            },
            Inner::Normal(d) => loop {
                let v = d.sample(rng);
                if v >= 0.0 {
                    break v;
                }
            },
            Inner::Poisson(d, unit) => d.sample(rng) * unit,
            Inner::Gamma(d) => d.sample(rng),
            Inner::Weibull(d) => d.sample(rng),
            Inner::Gumbel(d) => loop {
                let v = d.sample(rng);
                if v >= 0.0 {
                    break v;
                }
            },
        }
    }
}

/// The cumulative distribution function of `dist` at `x` (for the Kolmogorov-Smirnov
/// checks; Cauchy, normal and Gumbel conditioned on x ≥ 0, as sampled; `None` for Poisson,
/// which is discrete).
pub fn cdf(dist: &Dist, x: f64) -> Option<f64> {
    use std::f64::consts::PI;
    let x = x.max(0.0);
    Some(match *dist {
        Dist::Constant { value } => f64::from(u8::from(x >= value)),
        Dist::Uniform { low, high } => ((x - low) / (high - low)).clamp(0.0, 1.0),
        Dist::Exponential { mean } => 1.0 - (-x / mean).exp(),
        Dist::Pareto { shape, scale } => {
            if x < scale {
                0.0
            } else {
                1.0 - (scale / x).powf(shape)
            }
        }
        Dist::Cauchy { location, scale } => {
            let f = |v: f64| 0.5 + ((v - location) / scale).atan() / PI;
            (f(x) - f(0.0)) / (1.0 - f(0.0))
        }
        Dist::Normal { mean, sd } => {
            let f = |v: f64| normal_cdf((v - mean) / sd);
            (f(x) - f(0.0)) / (1.0 - f(0.0))
        }
        Dist::Weibull { shape, scale } => 1.0 - (-(x / scale).powf(shape)).exp(),
        Dist::Gumbel { location, scale } => {
            let f = |v: f64| (-(-(v - location) / scale).exp()).exp();
            (f(x) - f(0.0)) / (1.0 - f(0.0))
        }
        Dist::Gamma { shape, scale } => 1.0 - reg_upper_gamma(shape, x / scale),
        Dist::Poisson { .. } => return None,
    })
}

/// The mean of `dist`, where it exists (`None` for Cauchy, and for Pareto with shape
/// ≤ 1). Normal and Gumbel are the untruncated means (the redraw of negative values
/// shifts them up, negligibly when the spread is small beside the location).
pub fn mean(dist: &Dist) -> Option<f64> {
    match *dist {
        Dist::Constant { value } => Some(value),
        Dist::Uniform { low, high } => Some((low + high) / 2.0),
        Dist::Exponential { mean } | Dist::Poisson { mean, .. } => Some(mean),
        Dist::Pareto { shape, scale } => (shape > 1.0).then(|| shape * scale / (shape - 1.0)),
        Dist::Cauchy { .. } => None,
        Dist::Normal { mean, .. } => Some(mean),
        Dist::Gamma { shape, scale } => Some(shape * scale),
        Dist::Weibull { shape, scale } => Some(scale * ln_gamma(1.0 + 1.0 / shape).exp()),
        Dist::Gumbel { location, scale } => Some(location + EULER_GAMMA * scale),
    }
}

/// The largest value `dist` draws, where that is bounded (constant, uniform); `None` for
/// the distributions without an upper bound.
pub fn upper_bound(dist: &Dist) -> Option<f64> {
    match *dist {
        Dist::Constant { value } => Some(value),
        Dist::Uniform { high, .. } => Some(high),
        _ => None,
    }
}

/// The Euler-Mascheroni constant (the mean of the standard Gumbel distribution).
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// The Kolmogorov-Smirnov statistic D = sup |F_n(x) − F(x)| of `sample` against `cdf`.
pub fn ks_statistic(sample: &[f64], cdf: impl Fn(f64) -> f64) -> f64 {
    let mut v: Vec<f64> = sample.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    v.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::traffic::Quantity;

    const N: usize = 20_000;
    /// KS critical value at the 1 % level: 1.628 / √n (asymptotic).
    fn ks_critical(n: usize) -> f64 {
        1.628 / (n as f64).sqrt()
    }

    fn draws(text: &str, q: Quantity, seed: u64, n: usize) -> (Dist, Vec<f64>) {
        let d = Dist::parse(text, q).unwrap();
        let mut s = Sampler::new(d, seed, 0).unwrap();
        (d, (0..n).map(|_| s.sample()).collect())
    }

    /// Each continuous distribution: 20 000 draws pass a KS test against the target at
    /// the 1 % level, and where the mean exists and the tail is light the sample mean
    /// is within 1 % of it.
    #[test]
    fn draws_follow_their_distribution() {
        for (text, q, mean_check) in [
            ("uniform:64..1400", Quantity::Size, true),
            ("exp:1ms", Quantity::Gap, true),
            ("pareto:shape=3,mean=1ms", Quantity::Gap, true),
            ("pareto:shape=1.5,mean=1ms", Quantity::Gap, false), // infinite variance
            ("cauchy:loc=1ms,scale=100us", Quantity::Gap, false), // no mean
            ("normal:mean=1ms,sd=100us", Quantity::Gap, true),
            ("gamma:shape=2,scale=500us", Quantity::Gap, true),
            ("weibull:shape=1.5,scale=1ms", Quantity::Gap, true),
            ("gumbel:loc=55ms,scale=6ms", Quantity::Gap, true),
            ("gumbel:loc=45,scale=5.7", Quantity::Size, true),
            ("gumbel:loc=120,scale=36", Quantity::Size, true),
            // Location near 0: a fifth of the draws would be negative and are drawn
            // again; the CDF is the conditioned one.
            ("gumbel:loc=1ms,scale=1ms", Quantity::Gap, false),
        ] {
            let (d, v) = draws(text, q, 7, N);
            assert!(v.iter().all(|x| *x >= 0.0 && x.is_finite()), "{text}");
            let ks = ks_statistic(&v, |x| cdf(&d, x).unwrap());
            assert!(ks < ks_critical(N), "{text}: D = {ks:.5}");
            if mean_check {
                let m = v.iter().sum::<f64>() / N as f64;
                let want = mean(&d).unwrap();
                // Within 1 %: the standard error at 20 000 draws is ≤ 0.7 % for these.
                assert!((m / want - 1.0).abs() < 0.01, "{text}: mean {m} vs {want}");
            }
        }
    }

    /// Poisson (discrete): mean and variance both equal the mean in units.
    #[test]
    fn poisson_counts_have_equal_mean_and_variance() {
        let (_, v) = draws("poisson:50us", Quantity::Gap, 3, N);
        let units: Vec<f64> = v.iter().map(|x| x / 1e3).collect();
        let m = units.iter().sum::<f64>() / N as f64;
        let var = units.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (N - 1) as f64;
        assert!((m / 50.0 - 1.0).abs() < 0.01, "mean {m}");
        assert!((var / 50.0 - 1.0).abs() < 0.05, "variance {var}");
        assert!(units.iter().all(|u| u.fract() == 0.0));
    }

    /// A seed fixes the sequence (Pcg64Mcg is a fixed algorithm): the same draws on
    /// every build, different seeds and streams differ.
    #[test]
    fn a_seed_gives_the_same_sequence() {
        let (_, a) = draws("exp:1ms", Quantity::Gap, 42, 5);
        let (_, b) = draws("exp:1ms", Quantity::Gap, 42, 5);
        let (_, c) = draws("exp:1ms", Quantity::Gap, 43, 5);
        assert_eq!(a, b);
        assert_ne!(a, c);
        // The first draw of seed 42, as this build computes it: a change of generator
        // or sampler algorithm (which would break reproducing recorded runs) fails here.
        assert_eq!(format!("{:.3}", a[0]), GOLDEN_EXP_SEED_42);
        let d = Dist::parse("exp:1ms", Quantity::Gap).unwrap();
        let mut s0 = Sampler::new(d, 42, 0).unwrap();
        let mut s1 = Sampler::new(d, 42, 1).unwrap();
        assert_ne!(s0.sample(), s1.sample());
    }
    const GOLDEN_EXP_SEED_42: &str = "775138.432";

    #[test]
    fn means_follow_the_parameters() {
        use wire::traffic::Quantity::Gap;
        let w = Dist::parse("weibull:shape=1,scale=1ms", Gap).unwrap();
        assert!(
            (mean(&w).unwrap() - 1e6).abs() < 1e-3,
            "Weibull shape 1 = exponential"
        );
        let p = Dist::parse("pareto:shape=1.5,mean=1ms", Gap).unwrap();
        assert!(
            (mean(&p).unwrap() - 1e6).abs() <= 1.0,
            "scale rounded to whole ns"
        );
        assert!(mean(&Dist::parse("cauchy:loc=1ms,scale=1ms", Gap).unwrap()).is_none());
    }

    #[test]
    fn cdfs_are_proper() {
        for text in [
            "gamma:shape=2,scale=1ms",
            "normal:mean=1ms,sd=300us",
            "cauchy:loc=1ms,scale=1ms",
            "gumbel:loc=1ms,scale=300us",
        ] {
            let d = Dist::parse(text, Quantity::Gap).unwrap();
            assert!(cdf(&d, 0.0).unwrap() < 1e-6, "{text}");
            assert!((cdf(&d, 1e12).unwrap() - 1.0).abs() < 1e-3, "{text}");
            let mid = cdf(&d, 1e6).unwrap();
            assert!(mid > 0.0 && mid < 1.0);
        }
        // Gumbel CDF at the location: 1/e (the conditioning on x ≥ 0 is negligible
        // 20 scales above 0).
        let g = Dist::parse("gumbel:loc=120,scale=6", Quantity::Size).unwrap();
        assert!((cdf(&g, 120.0).unwrap() - (-1.0f64).exp()).abs() < 1e-9);
        assert!((mean(&g).unwrap() - (120.0 + 6.0 * 0.5772156649)).abs() < 1e-6);
        // Γ(2) CDF at x = scale: 1 − 2/e.
        let g = Dist::parse("gamma:shape=2,scale=1ms", Quantity::Gap).unwrap();
        assert!((cdf(&g, 1e6).unwrap() - (1.0 - 2.0 / std::f64::consts::E)).abs() < 1e-9);
    }
}
