//! The limits every study keeps however it arrived: range checks of single fields and
//! [`StudySpec::validate`].

use super::*;
use wire::spec::{Bound, Family, Rate, TestKind};

/// A range check as a spec error (the message names the key and the valid range).
pub(super) fn check<T: PartialOrd + std::fmt::Display + Copy>(
    key: &str,
    value: T,
    min: T,
    max: T,
    unit: &str,
) -> Result<T, SpecError> {
    wire::bounds::in_range(key, value, min, max, unit)
        .map_err(|e| SpecError::Invalid(e.to_string()))
}

/// A run's duration, seconds, within 1 ms and one day.
pub(super) fn check_duration_s(d: f64) -> Result<(), SpecError> {
    if d.is_finite() && (0.001..=86_400.0).contains(&d) {
        Ok(())
    } else {
        Err(SpecError::Invalid(format!(
            "duration {d} s is out of range (0.001 ≤ duration ≤ 86400)"
        )))
    }
}

/// An interval between samples: at least the protocol's shortest, at most a day, and
/// at most [`wire::proto::MAX_INTERVAL_SAMPLES`] samples per run.
pub(super) fn check_interval_ns(ns: u64, bound: Bound) -> Result<(), SpecError> {
    let min_ms = wire::proto::MIN_INTERVAL_NS / 1_000_000;
    let ms = ns / 1_000_000;
    check(
        "interval_ms (--interval)",
        ms,
        min_ms,
        86_400_000,
        "ms (or 0 for none)",
    )?;
    if let Bound::DurationNs(d) = bound {
        if d / ns.max(1) > wire::proto::MAX_INTERVAL_SAMPLES {
            return Err(SpecError::Invalid(format!(
                "interval_ms {ms} gives more than {} samples per run; use a longer interval",
                wire::proto::MAX_INTERVAL_SAMPLES
            )));
        }
    }
    Ok(())
}

/// A statistics window: 1 ms to a day, at most [`wire::proto::MAX_INTERVAL_SAMPLES`]
/// windows per run.
pub(super) fn check_window_ns(ns: u64, bound: Bound) -> Result<(), SpecError> {
    let ms = check(
        "window_ms (--stats-window)",
        ns / 1_000_000,
        1,
        86_400_000,
        "ms",
    )?;
    if let Bound::DurationNs(d) = bound {
        if d / ns.max(1) > wire::proto::MAX_INTERVAL_SAMPLES {
            return Err(SpecError::Invalid(format!(
                "window_ms {ms} gives more than {} windows per run; use a longer window",
                wire::proto::MAX_INTERVAL_SAMPLES
            )));
        }
    }
    Ok(())
}

pub(super) fn check_repetition(r: &Repetition) -> Result<(), SpecError> {
    match *r {
        Repetition::Fixed { runs } => {
            check("runs (--runs)", runs, 1, MAX_RUNS_PER_CELL, "")?;
        }
        Repetition::Confidence {
            level_pct,
            width_pct,
            min_runs,
            max_runs,
        } => {
            if !(50.0..100.0).contains(&level_pct) {
                return Err(SpecError::Invalid(format!(
                    "--confidence {level_pct} must be a percentage from 50 to below 100 (e.g. 95)"
                )));
            }
            if !(width_pct > 0.0 && width_pct <= 1000.0) {
                return Err(SpecError::Invalid(format!(
                    "--ci-width {width_pct} must be a positive percentage of the mean up to 1000 (e.g. 5)"
                )));
            }
            if min_runs < 2 || max_runs < min_runs || max_runs > MAX_RUNS_PER_CELL {
                return Err(SpecError::Invalid(format!(
                    "need 2 ≤ --min-runs ({min_runs}) ≤ --max-runs ({max_runs}) ≤ {MAX_RUNS_PER_CELL}: an interval needs two runs"
                )));
            }
        }
    }
    Ok(())
}

pub(super) fn check_axes(
    families: &[Family],
    tests: &[TestKind],
    sizes: &[u32],
) -> Result<(), SpecError> {
    if sizes.len() > MAX_SIZES {
        return Err(SpecError::Invalid(format!(
            "{} packet sizes; a study may have at most {MAX_SIZES}",
            sizes.len()
        )));
    }
    if families.is_empty() || tests.is_empty() || sizes.is_empty() {
        return Err(SpecError::Invalid(
            "a study needs at least one family, one test and one size".into(),
        ));
    }
    for (i, f) in families.iter().enumerate() {
        if families[..i].contains(f) {
            return Err(SpecError::Invalid(format!("family {f} is listed twice")));
        }
    }
    for (i, t) in tests.iter().enumerate() {
        if tests[..i].contains(t) {
            return Err(SpecError::Invalid(format!("test {t} is listed twice")));
        }
    }
    for &s in sizes {
        if s == 0 || s > Family::V4.max_udp_payload_bytes() {
            return Err(SpecError::Invalid(format!(
                "packet size {s} is out of range (1..={} bytes)",
                Family::V4.max_udp_payload_bytes()
            )));
        }
    }
    Ok(())
}

impl StudySpec {
    /// Every limit a study keeps, however its spec arrived: flags, a spec file and a
    /// preset ([`SpecFile::resolve`] ends here) or a stored campaign
    /// (`--resume`). The one place these limits are checked.
    pub fn validate(&self) -> Result<(), SpecError> {
        check_axes(&self.families, &self.tests, &self.sizes_bytes)?;
        match self.bound {
            Bound::Count(n) => {
                check("count (--count)", n, 1, MAX_COUNT_PACKETS, "packets")?;
            }
            Bound::DurationNs(ns) => check_duration_s(ns as f64 / 1e9)?,
        }
        match self.rate {
            Some(Rate::BitsPerSec(b)) => {
                check("rate_bps (--rate)", b, 1, MAX_RATE_BPS, "bit/s")?;
            }
            Some(Rate::PacketsPerSec(p)) => {
                check("rate_pps (--rate)", p, 1, MAX_RATE_PPS, "packets/s")?;
            }
            None => {}
        }
        check(
            "streams (--streams)",
            self.streams,
            1,
            wire::proto::MAX_STREAMS,
            "",
        )?;
        if let Some(ns) = self.interval_ns {
            check_interval_ns(ns, self.bound)?;
        }
        if let Some(ns) = self.window_ns {
            check_window_ns(ns, self.bound)?;
        }
        check(
            "rr_timeout_ms (--rr-timeout-ms)",
            self.rr_timeout_ns / 1_000_000,
            1,
            MAX_RR_TIMEOUT_MS,
            "ms",
        )?;
        check(
            "warmup (--warmup)",
            self.warmup_runs,
            0,
            MAX_WARMUP_RUNS,
            "runs",
        )?;
        check("retries (--retries)", self.retries, 0, MAX_RETRIES, "")?;
        for opts in std::iter::once(&self.socket).chain(self.udp_socket.iter()) {
            wire::bounds::check_socket_opts(opts).map_err(|e| SpecError::Invalid(e.to_string()))?;
        }
        if let UdpMethod::Rfc2544(search) = &self.udp_method {
            search
                .check()
                .map_err(|e| SpecError::Invalid(e.to_string()))?;
        }
        if let Some(plan) = &self.rrul {
            plan.check()?;
        }
        if let Some(cv) = self.cv_target_pct.filter(|c| !(*c > 0.0 && *c <= 1000.0)) {
            return Err(SpecError::Invalid(format!(
                "cv_target_pct {cv} is out of range: give a percentage above 0 and at most 1000"
            )));
        }
        if let Some(p) = self
            .percent_of
            .as_deref()
            .filter(|p| !matches!(*p, "first" | "second"))
        {
            return Err(SpecError::Invalid(format!(
                "unknown percent_of '{p}' (use first: over IPv4 or the first system, as the studies do; or second)"
            )));
        }
        check_repetition(&self.repetition)?;
        let cells = (self.families.len() * self.tests.len() * self.sizes_bytes.len()) as u64;
        let per_cell = u64::from(self.warmup_runs)
            + match self.repetition {
                Repetition::Fixed { runs } => u64::from(runs),
                Repetition::Confidence { max_runs, .. } => u64::from(max_runs),
            };
        let planned = cells.saturating_mul(per_cell);
        if planned > MAX_PLANNED_RUNS {
            return Err(SpecError::Invalid(format!(
                "the study plans up to {planned} runs ({cells} cells); at most {MAX_PLANNED_RUNS}: use fewer sizes or runs"
            )));
        }
        Ok(())
    }
}
