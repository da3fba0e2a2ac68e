//! Latency histogram: nanosecond values into an HDR histogram (3 significant digits,
//! auto-resizing) for quantiles, with exact count, min, max, mean and standard deviation
//! kept alongside (Welford's online algorithm; merged with Chan et al.'s formula).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Significant decimal digits the histogram keeps: quantiles are within 0.1 %.
const SIGFIG: u8 = 3;

/// Recorded latencies (or any non-negative ns quantity).
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    count: u64,
    min_ns: u64,
    max_ns: u64,
    sum_ns: u128,
    /// Welford running mean and sum of squared deviations.
    mean_ns: f64,
    m2: f64,
}

/// The numbers a report needs from a [`LatencyHistogram`]; all zero when empty.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ns: f64,
    /// Sample standard deviation (n − 1); 0 for fewer than two values.
    pub stddev_ns: f64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    /// Mean of the lowest 95 % of the values (the top 5 % trimmed), as the IETF
    /// responsiveness draft aggregates its probes; 0 when absent (older results).
    #[serde(default)]
    pub trimmed_mean_95_ns: f64,
    /// The quantiles at [`wire::metrics::RTT_LADDER_PCT`] (0 = min, 100 = max), for
    /// drawing the distribution; all zero when absent (older results).
    #[serde(default)]
    pub ladder_ns: [u64; wire::metrics::RTT_LADDER_PCT.len()],
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> LatencyHistogram {
        // 1 ns .. 1 s to start; auto-resize grows the top as larger values arrive.
        let mut hist = match Histogram::new_with_bounds(1, 1_000_000_000, SIGFIG) {
            Ok(h) => h,
            Err(_) => unreachable!("constant bounds 1..1e9 with 3 sigfig are valid"),
        };
        hist.auto(true);
        LatencyHistogram {
            hist,
            count: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            sum_ns: 0,
            mean_ns: 0.0,
            m2: 0.0,
        }
    }

    /// Record one value in ns.
    pub fn record(&mut self, value_ns: u64) {
        // record() grows the histogram (auto-resize); only values beyond its resize limit
        // (i64::MAX / 2 ns, ~146 years) are clamped. The exact max is kept separately.
        if self.hist.record(value_ns).is_err() {
            self.hist.saturating_record(value_ns);
        }
        self.count += 1;
        self.min_ns = self.min_ns.min(value_ns);
        self.max_ns = self.max_ns.max(value_ns);
        self.sum_ns += u128::from(value_ns);
        let x = value_ns as f64;
        let delta = x - self.mean_ns;
        self.mean_ns += delta / self.count as f64;
        self.m2 += delta * (x - self.mean_ns);
    }

    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// Exact minimum; `None` when empty.
    pub fn min_ns(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min_ns)
    }
    /// Exact maximum; `None` when empty.
    pub fn max_ns(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max_ns)
    }
    /// Exact sum of all values.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }
    /// Exact arithmetic mean; 0 when empty.
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }
    /// Sample standard deviation (n − 1 denominator); 0 for fewer than two values.
    pub fn stddev_ns(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            (self.m2 / (self.count - 1) as f64).max(0.0).sqrt()
        }
    }

    /// Value at quantile `q` in [0, 1] (0.5 = p50, 0.999 = p99.9), within the
    /// histogram's 0.1 % resolution and clamped to the exact min and max; 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let q = if q.is_nan() { 0.5 } else { q.clamp(0.0, 1.0) };
        self.hist
            .value_at_quantile(q)
            .clamp(self.min_ns, self.max_ns)
    }

    /// Mean of the lowest `keep` fraction of the values (e.g. 0.95: the top 5 %
    /// trimmed), each value taken as the midpoint of its histogram bucket (within
    /// 0.1 %) and kept within the exact min and max.
    pub fn trimmed_mean_ns(&self, keep: f64) -> f64 {
        if self.count == 0 || keep.is_nan() || keep <= 0.0 {
            return 0.0;
        }
        let want = ((self.count as f64 * keep.min(1.0)).ceil() as u64).max(1);
        let (mut taken, mut sum) = (0u64, 0f64);
        for v in self.hist.iter_recorded() {
            let n = v.count_at_value().min(want - taken);
            let value = self
                .hist
                .median_equivalent(v.value_iterated_to())
                .clamp(self.min_ns, self.max_ns);
            sum += n as f64 * value as f64;
            taken += n;
            if taken >= want {
                break;
            }
        }
        sum / taken.max(1) as f64
    }

    /// Add every value of `other` to this histogram.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.count == 0 {
            return;
        }
        // Both auto-resize, so addition cannot fail on range; fall back to re-recording
        // bucket by bucket if it ever does.
        if self.hist.add(&other.hist).is_err() {
            for v in other.hist.iter_recorded() {
                let (value, n) = (v.value_iterated_to(), v.count_at_value());
                if self.hist.record_n(value, n).is_err() {
                    self.hist.saturating_record_n(value, n);
                }
            }
        }
        let n_a = self.count as f64;
        let n_b = other.count as f64;
        let n = n_a + n_b;
        let delta = other.mean_ns - self.mean_ns;
        self.mean_ns += delta * n_b / n;
        self.m2 += other.m2 + delta * delta * n_a * n_b / n;
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    pub fn summary(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary::default();
        }
        LatencySummary {
            count: self.count,
            mean_ns: self.mean_ns(),
            stddev_ns: self.stddev_ns(),
            min_ns: self.min_ns,
            p50_ns: self.quantile_ns(0.5),
            p90_ns: self.quantile_ns(0.9),
            p99_ns: self.quantile_ns(0.99),
            p999_ns: self.quantile_ns(0.999),
            max_ns: self.max_ns,
            trimmed_mean_95_ns: self.trimmed_mean_ns(0.95),
            ladder_ns: wire::metrics::RTT_LADDER_PCT.map(|p| match p {
                0 => self.min_ns,
                100 => self.max_ns,
                p => self.quantile_ns(f64::from(p) / 100.0),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1.0)
    }

    #[test]
    fn quantiles_of_one_to_ten_thousand_are_within_resolution() {
        let mut h = LatencyHistogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        assert_eq!(h.count(), 10_000);
        assert_eq!(h.min_ns(), Some(1000));
        assert_eq!(h.max_ns(), Some(10_000_000));
        assert!(close(h.quantile_ns(0.5) as f64, 5_000_000.0, 0.001));
        assert!(close(h.quantile_ns(0.9) as f64, 9_000_000.0, 0.001));
        assert!(close(h.quantile_ns(0.99) as f64, 9_900_000.0, 0.001));
        assert!(close(h.quantile_ns(0.999) as f64, 9_990_000.0, 0.001));
        assert_eq!(h.quantile_ns(1.0), 10_000_000);
        assert_eq!(h.quantile_ns(0.0), 1000);
    }

    #[test]
    fn trimmed_mean_drops_the_top_five_percent() {
        let mut h = LatencyHistogram::new();
        // 95 values of 1 ms and 5 of 1 s: the trimmed mean is 1 ms, the mean is not.
        for _ in 0..95 {
            h.record(1_000_000);
        }
        for _ in 0..5 {
            h.record(1_000_000_000);
        }
        assert!(close(h.trimmed_mean_ns(0.95), 1_000_000.0, 0.001));
        assert!(h.mean_ns() > 50_000_000.0);
        // 1..=100 µs: the lowest 95 average 48 µs.
        let mut h = LatencyHistogram::new();
        for v in 1..=100u64 {
            h.record(v * 1000);
        }
        assert!(close(h.trimmed_mean_ns(0.95), 48_000.0, 0.002));
        assert!(close(h.summary().trimmed_mean_95_ns, 48_000.0, 0.002));
        assert_eq!(LatencyHistogram::new().trimmed_mean_ns(0.95), 0.0);
    }

    #[test]
    fn mean_and_stddev_are_exact() {
        let mut h = LatencyHistogram::new();
        for v in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            h.record(v);
        }
        assert_eq!(h.mean_ns(), 5.0);
        // Sample variance of this classic set: 32 / 7.
        assert!(close(h.stddev_ns(), (32.0f64 / 7.0).sqrt(), 1e-12));
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 0..500u64 {
            let x = v * v * 37 + 11;
            if v % 3 == 0 {
                a.record(x);
            } else {
                b.record(x);
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a.count(), all.count());
        assert_eq!(a.min_ns(), all.min_ns());
        assert_eq!(a.max_ns(), all.max_ns());
        assert_eq!(a.sum_ns(), all.sum_ns());
        assert!(close(a.stddev_ns(), all.stddev_ns(), 1e-9));
        assert_eq!(a.quantile_ns(0.99), all.quantile_ns(0.99));
        assert_eq!(a.summary(), all.summary());
    }

    #[test]
    fn empty_histogram_reports_nothing_and_values_beyond_one_second_are_kept() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.summary(), LatencySummary::default());
        assert_eq!(h.min_ns(), None);
        h.record(0);
        h.record(30_000_000_000);
        assert_eq!(h.max_ns(), Some(30_000_000_000));
        assert!(close(h.quantile_ns(1.0) as f64, 30e9, 0.001));
        let s = h.summary();
        assert!(s.p50_ns <= s.p99_ns && s.p99_ns <= s.max_ns);
    }
}
