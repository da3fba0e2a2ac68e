//! From values to axes: round ticks, the choice of a logarithmic axis, tick labels.

use super::series::Series;

/// Round numbers for axis ticks covering [lo, hi]: steps of 1, 2 or 5 × 10^k.
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        let v = if lo.is_finite() { lo } else { 0.0 };
        return vec![v];
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let start = (lo / step).floor() as i64;
    let end = (hi / step).ceil() as i64;
    (start..=end).map(|i| i as f64 * step).collect()
}

pub(crate) fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let s = format!("{v:.decimals$}");
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// A logarithmic y axis is used when the positive values drawn span more than this
/// factor (two systems 30–100× apart, or one slow run beside sub-millisecond means).
pub const LOG_AXIS_SPREAD: f64 = 10.0;

/// `Some(lowest positive value)` when `series` want a logarithmic axis: every mean
/// positive, and the drawn values spanning more than [`LOG_AXIS_SPREAD`] — capped or not
/// (a process at 2 % beside one at 100 % of a core would lie on the floor of a linear
/// 0–100 % axis); the axis then ends at the cap's decade.
pub(super) fn log_axis(series: &[Series], _cap: Option<f64>) -> Option<f64> {
    let means = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    if means.clone().any(|m| m <= 0.0) || means.clone().next().is_none() {
        return None;
    }
    let all = series.iter().flat_map(|s| {
        s.points
            .iter()
            .flat_map(|p| [p.1, p.2, p.3])
            .chain(s.runs.iter().flat_map(|(_, v)| v.iter().copied()))
    });
    let lo = all
        .clone()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let hi = all.fold(0.0_f64, f64::max);
    (lo.is_finite() && hi / lo > LOG_AXIS_SPREAD).then_some(lo)
}

/// The y axis from 0 (or, with `log` = `Some(floor)`, logarithmic from that floor) to
/// `y_hi`, ticks at most `cap`: (ticks, bottom, top, tick texts).
pub(crate) fn y_axis(
    log: Option<f64>,
    y_hi: f64,
    cap: Option<f64>,
) -> (Vec<f64>, f64, f64, Vec<String>) {
    match log {
        Some(lo) => {
            let ticks = log_ticks(lo, y_hi);
            let texts = ticks.iter().map(|&t| log_tick_label(t)).collect();
            let (first, last) = (ticks[0], ticks[ticks.len() - 1]);
            (ticks, first, last, texts)
        }
        None => {
            let mut ticks = nice_ticks(0.0, y_hi, 5);
            if let Some(c) = cap {
                ticks.retain(|t| *t <= c);
            }
            let max = ticks.last().copied().filter(|m| *m > 0.0).unwrap_or(y_hi);
            let step = if ticks.len() > 1 {
                ticks[1] - ticks[0]
            } else {
                1.0
            };
            let texts = ticks.iter().map(|&t| tick_label(t, step)).collect();
            (ticks, 0.0, max, texts)
        }
    }
}

/// Ticks of a logarithmic axis from `lo` to `hi`: every power of ten, with 2 and 5
/// between them when the axis spans at most three decades.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let d1 = d1.max(d0 + 1).min(d0 + 30);
    let mids: &[f64] = if d1 - d0 <= 3 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut out = Vec::new();
    for d in d0..=d1 {
        for &m in mids {
            let t = m * 10f64.powi(d);
            if d == d1 && m > 1.0 {
                break;
            }
            out.push(t);
        }
    }
    out
}

pub(crate) fn log_tick_label(t: f64) -> String {
    if t >= 1.0 {
        format!("{t:.0}")
    } else {
        let decimals = (-t.log10().floor()) as usize;
        format!("{t:.decimals$}")
    }
}
