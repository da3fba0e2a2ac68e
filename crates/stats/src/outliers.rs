//! Runs far outside their cell: more than [`OUTLIER_SCALED_MADS`] scaled median absolute
//! deviations from the cell's median (the MAD scaled by 1.4826 estimates the standard
//! deviation of normal data; Leys et al. 2013 recommend 2.5–3, as MATLAB's `isoutlier`
//! and `scipy.stats.median_abs_deviation(scale="normal")` do), and more than
//! [`OUTLIER_MIN_RELATIVE`] of the median away from it: with the five runs a cell often
//! has, the MAD of a tight cell is tiny, and a run 5 % off would otherwise be "far". A
//! report marks outliers and gives its statistics with and without them; it never drops
//! them silently.

/// How many scaled MADs from the median make a run an outlier.
pub const OUTLIER_SCALED_MADS: f64 = 3.0;

/// How far from the median, as a fraction of it, a run must also be.
pub const OUTLIER_MIN_RELATIVE: f64 = 0.2;

/// 1 / Φ⁻¹(3/4): the MAD of normal data times this estimates its standard deviation.
pub const MAD_TO_SD: f64 = 1.482_602_218_505_602;

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The median and the scaled MAD of the finite values; `None` when there are none.
pub fn median_and_scaled_mad(values: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let med = median(&v);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - med).abs()).collect();
    dev.sort_by(f64::total_cmp);
    Some((med, median(&dev) * MAD_TO_SD))
}

/// Which values are outliers by the rules above (in input order). A non-finite value is
/// always one. With fewer than 3 finite values nothing is (there is no spread to judge
/// by); with a MAD of zero, every value off the median is (the rest are identical).
pub fn outliers(values: &[f64]) -> Vec<bool> {
    let finite = values.iter().filter(|x| x.is_finite()).count();
    let Some((med, mad)) = median_and_scaled_mad(values).filter(|_| finite >= 3) else {
        return values.iter().map(|x| !x.is_finite()).collect();
    };
    values
        .iter()
        .map(|&x| {
            let d = (x - med).abs();
            !x.is_finite()
                || (d > OUTLIER_SCALED_MADS * mad && d > OUTLIER_MIN_RELATIVE * med.abs())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_matches_scipy_scaled_mad() {
        // x = [1, 2, 3, 4, 100]: numpy.median 3.0, and
        // scipy.stats.median_abs_deviation(x, scale="normal") = 1.482602218505602.
        let x = [1.0, 2.0, 3.0, 4.0, 100.0];
        let (med, mad) = median_and_scaled_mad(&x).unwrap();
        assert_eq!(med, 3.0);
        assert!((mad - 1.482_602_218_505_602).abs() < 1e-12);
        assert_eq!(outliers(&x), [false, false, false, false, true]);
    }

    #[test]
    fn the_issue_s_anomalous_run_is_flagged_and_small_cells_are_not_judged() {
        // One IPv6 tcp-stream run at 10.1 Mbit/s, ~700x below its neighbours.
        let cell = [7061.0, 7102.0, 6998.0, 10.1, 7050.0, 7077.0];
        assert_eq!(outliers(&cell), [false, false, false, true, false, false]);
        assert_eq!(outliers(&[1.0, 1000.0]), [false, false]);
        assert_eq!(outliers(&[1.0, f64::NAN]), [false, true]);
        assert_eq!(outliers(&[0.0, 0.0, 0.0, 0.1]), [false, false, false, true]);
        // A tight cell's run 10 % off is beyond 3 scaled MADs but not far: not marked.
        let tight = [100.0, 100.1, 99.9, 100.05, 90.0];
        assert_eq!(outliers(&tight), [false; 5]);
        assert!(outliers(&[100.0, 100.1, 99.9, 100.05, 70.0])[4]);
        assert!(outliers(&[]).is_empty());
    }
}
