//! The confidence interval of a proportion (delivered of sent): Wilson's score interval
//! (E. B. Wilson, "Probable inference, the law of succession, and statistical
//! inference", JASA 22, 1927; recommended over the Wald interval by Brown, Cai and
//! DasGupta, Statistical Science 16, 2001). Unlike the Wald interval it stays inside
//! [0, 1] and is not empty at 0 or n successes: 0 of 50 delivered gives [0 %, 7.1 %] at
//! 95 %, not [0, 0].

/// The two-sided Wilson score interval of `successes` of `trials` at confidence `level`
/// (e.g. 0.95), as fractions in [0, 1]; `None` for no trials, more successes than
/// trials, or a level outside (0, 1).
pub fn wilson_interval(successes: u64, trials: u64, level: f64) -> Option<(f64, f64)> {
    if trials == 0 || successes > trials || !(level > 0.0 && level < 1.0) {
        return None;
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z = crate::special::normal_quantile(0.5 + level / 2.0);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // At 0 or n successes the bound is exactly 0 or 1 (rounding aside).
    let lo = if successes == 0 { 0.0 } else { centre - half };
    let hi = if successes == trials {
        1.0
    } else {
        centre + half
    };
    Some((lo.clamp(0.0, 1.0), hi.clamp(0.0, 1.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_hand_computed_values() {
        // 8 of 10 at 95 % (z = 1.959964): centre = (0.8 + 0.192073) / 1.384146 =
        // 0.716740; half = 1.959964 / 1.384146 × sqrt(0.016 + 0.009604) = 0.226571.
        let (lo, hi) = wilson_interval(8, 10, 0.95).unwrap();
        assert!((lo - 0.490169).abs() < 1e-5, "{lo}");
        assert!((hi - 0.943311).abs() < 1e-5, "{hi}");
        // 0 of 50: [0, z² / (n + z²)] = [0, 3.841459 / 53.841459] = [0, 0.071348].
        let (lo, hi) = wilson_interval(0, 50, 0.95).unwrap();
        assert_eq!(lo, 0.0);
        assert!((hi - 0.071348).abs() < 1e-5, "{hi}");
        // n of n mirrors it.
        let (lo, hi) = wilson_interval(50, 50, 0.95).unwrap();
        assert!((lo - (1.0 - 0.071348)).abs() < 1e-5, "{lo}");
        assert_eq!(hi, 1.0);
    }

    #[test]
    fn wilson_refuses_what_has_no_interval() {
        assert_eq!(wilson_interval(0, 0, 0.95), None);
        assert_eq!(wilson_interval(3, 2, 0.95), None);
        assert_eq!(wilson_interval(1, 2, 1.0), None);
        assert_eq!(wilson_interval(1, 2, f64::NAN), None);
    }
}
