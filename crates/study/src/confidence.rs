//! The confidence stopping rule: a cell has run enough when, for every metric its test
//! measures that counts, the Student-t confidence interval of the mean at the chosen
//! level is at most `width_pct` % of the mean — the full width, as netperf's `-I
//! level,width` (so `-I 95,5` means mean ± 2.5 %). Student-t at any n ≥ 2 (one run
//! has no spread), via `stats::Summary`.
//!
//! Metrics that count, per test (each only if the runs report it):
//! - tcp-stream: throughput, local and remote CPU (as netperf -I with -c -C);
//! - udp-stream: throughput, local and remote CPU;
//! - tcp-rr, udp-rr: transaction rate, mean RTT, local and remote CPU;
//! - tcp-crr: connection rate, mean connect time, local and remote CPU;
//! - rrul: responsiveness under load (RPM, from the TCP probes' trimmed mean RTT) and
//!   the goodput of each loaded direction.
//!
//! Loss, jitter, counts and percentiles do not count: loss is usually 0 with rare
//! bursts, and jitter on a fast path is a fraction of a microsecond of scheduling noise,
//! so an interval relative to their mean never settles (on loopback the 95 % interval
//! of RFC 3550 jitter stayed at 80–280 % of its mean after 10 runs); RTT percentiles
//! follow the mean.

use std::collections::BTreeMap;
use wire::metrics as m;
use wire::spec::TestKind;

/// The metrics whose interval must be narrow enough, per test.
pub fn counted_metrics(kind: TestKind) -> &'static [&'static str] {
    match kind {
        TestKind::TcpStream => &[m::THROUGHPUT_BPS, m::CPU_LOCAL_PCT, m::CPU_REMOTE_PCT],
        TestKind::UdpStream => &[m::THROUGHPUT_BPS, m::CPU_LOCAL_PCT, m::CPU_REMOTE_PCT],
        TestKind::TcpRr | TestKind::UdpRr => &[
            m::TRANSACTIONS_PER_S,
            m::RTT_MEAN_NS,
            m::CPU_LOCAL_PCT,
            m::CPU_REMOTE_PCT,
        ],
        TestKind::Rrul => &[m::RPM_LOADED, m::UPLOAD_BPS, m::DOWNLOAD_BPS],
        TestKind::TcpCrr => &[
            m::CONNECTIONS_PER_S,
            m::CONNECT_TIME_MEAN_NS,
            m::CPU_LOCAL_PCT,
            m::CPU_REMOTE_PCT,
        ],
        // A path MTU repeats exactly on a stable path: its interval closes at once.
        TestKind::Pmtu => &[m::PATH_MTU_BYTES],
        TestKind::Frag => &[m::DELIVERED_PCT],
        TestKind::ExtHeaders => &[m::PLAIN_DELIVERED_PCT],
        TestKind::QuicStream => &[m::THROUGHPUT_BPS, m::CPU_LOCAL_PCT, m::CPU_REMOTE_PCT],
        TestKind::QuicRr => &[
            m::TRANSACTIONS_PER_S,
            m::RTT_MEAN_NS,
            m::CPU_LOCAL_PCT,
            m::CPU_REMOTE_PCT,
        ],
    }
}

/// Interval of one metric over a cell's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricWidth {
    pub metric: &'static str,
    pub n: usize,
    pub mean: f64,
    /// Full interval width as % of |mean|; infinite when undefined (n < 2, mean 0
    /// with spread).
    pub width_pct: f64,
}

/// Full width of the Student-t interval of `values` at `level_pct`, as % of |mean|.
pub fn width_pct(values: &[f64], level_pct: f64) -> (stats::Summary, f64) {
    let s = stats::Summary::of(values);
    if s.n < 2 {
        return (s, f64::INFINITY);
    }
    let (lo, hi) = s.ci(level_pct / 100.0);
    let width = hi - lo;
    let pct = if width == 0.0 || (s.sd == 0.0) {
        0.0
    } else if s.mean == 0.0 || !width.is_finite() {
        f64::INFINITY
    } else {
        width / s.mean.abs() * 100.0
    };
    (s, pct)
}

/// The interval width of each counted metric present in `runs`.
pub fn widths(kind: TestKind, runs: &[&BTreeMap<String, f64>], level_pct: f64) -> Vec<MetricWidth> {
    let mut out = Vec::new();
    for &metric in counted_metrics(kind) {
        let values: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.get(metric).copied())
            .filter(|v| v.is_finite())
            .collect();
        if values.is_empty() {
            continue;
        }
        let (s, pct) = width_pct(&values, level_pct);
        out.push(MetricWidth {
            metric,
            n: s.n,
            mean: s.mean,
            width_pct: pct,
        });
    }
    out
}

/// Whether every counted metric's interval is within `target_pct`. A cell whose runs
/// report none of the counted metrics never meets its target.
pub fn target_met(
    kind: TestKind,
    runs: &[&BTreeMap<String, f64>],
    level_pct: f64,
    target_pct: f64,
) -> bool {
    let w = widths(kind, runs, level_pct);
    !w.is_empty() && w.iter().all(|w| w.width_pct <= target_pct)
}

/// Most runs [`runs_to_reach`] reports; beyond that a target is out of reach.
pub const MAX_RUNS_TO_REACH: usize = 100_000;

/// The runs a metric's interval would need to come within `target_pct` if its runs kept
/// their spread: the smallest n' ≥ n with width · t(n' − 1)/t(n − 1) · √(n/n') ≤ target
/// (the Student-t width, its standard deviation unchanged). `None` when the width is
/// undefined (fewer than 2 runs, a zero mean with spread) or n' would pass
/// [`MAX_RUNS_TO_REACH`].
pub fn runs_to_reach(w: &MetricWidth, level_pct: f64, target_pct: f64) -> Option<usize> {
    if w.n < 2 || !w.width_pct.is_finite() || target_pct.is_nan() || target_pct <= 0.0 {
        return None;
    }
    if w.width_pct <= target_pct {
        return Some(w.n);
    }
    let p = 1.0 - (1.0 - level_pct / 100.0) / 2.0;
    let t = |n: usize| stats::special::student_t_quantile(p, (n - 1) as f64);
    let width_at = |n: usize| w.width_pct * t(n) / t(w.n) * (w.n as f64 / n as f64).sqrt();
    // The width falls with n: double to an upper bound, then bisect.
    let mut hi = w.n;
    while width_at(hi) > target_pct {
        if hi >= MAX_RUNS_TO_REACH {
            return None;
        }
        hi = (hi * 2).min(MAX_RUNS_TO_REACH);
    }
    let mut lo = w.n;
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if width_at(mid) <= target_pct {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(v: &[f64]) -> Vec<BTreeMap<String, f64>> {
        v.iter()
            .map(|x| [(m::THROUGHPUT_BPS.to_string(), *x)].into())
            .collect()
    }

    #[test]
    fn width_matches_hand_computed_student_t_interval() {
        // 100, 102, 100: mean 100.667, sd 1.1547, t(0.975, 2) = 4.3027
        // → full width 2 * 4.3027 * 1.1547 / √3 = 5.7369, i.e. 5.699 % of the mean.
        let (_, pct) = width_pct(&[100.0, 102.0, 100.0], 95.0);
        assert!((pct - 5.699).abs() < 0.01, "{pct}");
        // n = 4 adds 102: mean 101, sd 1.1547, t(0.975, 3) = 3.1824 → 3.639 %.
        let (_, pct) = width_pct(&[100.0, 102.0, 100.0, 102.0], 95.0);
        assert!((pct - 3.639).abs() < 0.01, "{pct}");
        // 99 % is wider than 95 %.
        let (_, pct99) = width_pct(&[100.0, 102.0, 100.0, 102.0], 99.0);
        assert!(pct99 > pct);
    }

    #[test]
    fn runs_to_reach_a_target_follow_the_student_t_width_at_the_same_spread() {
        // 100, 102, 100, 102: 3.639 % at n = 4 (95 %). At n' runs of the same spread the
        // width is 2 t(n' − 1) sd / √n' / mean: the count is the first n' within 1 %.
        let (s, pct) = width_pct(&[100.0, 102.0, 100.0, 102.0], 95.0);
        let w = MetricWidth {
            metric: m::THROUGHPUT_BPS,
            n: s.n,
            mean: s.mean,
            width_pct: pct,
        };
        let n = runs_to_reach(&w, 95.0, 1.0).unwrap();
        let width_with = |k: usize| {
            let t = stats::special::student_t_quantile(0.975, (k - 1) as f64);
            2.0 * t * s.sd / (k as f64).sqrt() / s.mean * 100.0
        };
        assert!(width_with(n) <= 1.0, "{n}: {}", width_with(n));
        assert!(
            width_with(n - 1) > 1.0,
            "{n} is the first: {}",
            width_with(n - 1)
        );
        // A target already met needs no more; an undefined width gives no number.
        assert_eq!(runs_to_reach(&w, 95.0, 5.0), Some(4));
        let one = MetricWidth {
            n: 1,
            width_pct: f64::INFINITY,
            ..w
        };
        assert_eq!(runs_to_reach(&one, 95.0, 5.0), None);
        let hopeless = MetricWidth {
            width_pct: 500.0,
            ..w
        };
        assert_eq!(runs_to_reach(&hopeless, 95.0, 0.001), None);
    }

    #[test]
    fn one_run_or_zero_mean_with_spread_never_meets_a_target() {
        assert_eq!(width_pct(&[5.0], 95.0).1, f64::INFINITY);
        assert_eq!(width_pct(&[-1.0, 1.0], 95.0).1, f64::INFINITY);
        assert_eq!(width_pct(&[0.0, 0.0, 0.0], 95.0).1, 0.0);
    }

    #[test]
    fn every_counted_metric_must_be_narrow() {
        let mut rs = runs(&[100.0, 100.5, 100.0, 100.5]);
        assert!(target_met(
            TestKind::TcpStream,
            &rs.iter().collect::<Vec<_>>(),
            95.0,
            5.0
        ));
        // A noisy CPU metric holds the cell back.
        for (i, r) in rs.iter_mut().enumerate() {
            r.insert(
                m::CPU_LOCAL_PCT.into(),
                if i % 2 == 0 { 10.0 } else { 30.0 },
            );
        }
        let refs: Vec<_> = rs.iter().collect();
        assert!(!target_met(TestKind::TcpStream, &refs, 95.0, 5.0));
        assert_eq!(widths(TestKind::TcpStream, &refs, 95.0).len(), 2);
        // Metrics a test does not count are ignored.
        assert!(widths(TestKind::TcpRr, &refs, 95.0).len() == 1);
        let empty: Vec<&BTreeMap<String, f64>> = Vec::new();
        assert!(!target_met(TestKind::UdpRr, &empty, 95.0, 5.0));
    }
}
