//! Range checks for numbers a user typed, a spec file holds or a flag carries, applied
//! after parsing and before anything is allocated or run, and the one checked
//! conversion from seconds to a [`Duration`] (`Duration::from_secs_f64` panics on
//! `inf`, `NaN`, negative and too-large values, so no caller uses it on user input).

use std::time::Duration;

/// A number outside its valid range; the message names the option and the range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {value} is out of range: give {range}")]
pub struct RangeError {
    /// The option or spec key, as the user wrote it (e.g. `--connect-timeout`).
    pub what: String,
    /// The value as given.
    pub value: String,
    /// The valid range in words ("between 0.01 and 3600 seconds").
    pub range: String,
}

/// `secs` as a [`Duration`] if it is finite and within `min..=max`.
pub fn secs_to_duration(
    what: &str,
    secs: f64,
    min: Duration,
    max: Duration,
) -> Result<Duration, RangeError> {
    if secs.is_finite() && secs >= min.as_secs_f64() && secs <= max.as_secs_f64() {
        // In range, so finite, non-negative and far below u64::MAX seconds.
        Ok(Duration::from_secs_f64(secs).clamp(min, max))
    } else {
        Err(RangeError {
            what: what.to_string(),
            value: format!("{secs}"),
            range: format!(
                "between {} and {} seconds",
                min.as_secs_f64(),
                max.as_secs_f64()
            ),
        })
    }
}

/// `value` if it is within `min..=max`; `unit` names what is counted ("bytes").
pub fn in_range<T: PartialOrd + std::fmt::Display + Copy>(
    what: &str,
    value: T,
    min: T,
    max: T,
    unit: &str,
) -> Result<T, RangeError> {
    if value >= min && value <= max {
        Ok(value)
    } else {
        Err(RangeError {
            what: what.to_string(),
            value: value.to_string(),
            range: format!("between {min} and {max} {unit}")
                .trim_end()
                .to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_seconds_are_refused_not_panicked_on() {
        let (lo, hi) = (Duration::from_millis(10), Duration::from_secs(3600));
        for bad in [1e30, f64::INFINITY, f64::NAN, -1.0, 0.0, 1e-320, 3600.5] {
            let e = secs_to_duration("--connect-timeout", bad, lo, hi).unwrap_err();
            assert!(
                e.to_string().contains("between 0.01 and 3600 seconds"),
                "{e}"
            );
        }
        assert_eq!(
            secs_to_duration("--x", 1.5, lo, hi).unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(secs_to_duration("--x", 3600.0, lo, hi).unwrap(), hi);
    }

    #[test]
    fn integer_ranges_name_the_option_and_the_range() {
        assert_eq!(
            in_range("--max-payload", 1408u32, 1, 65_535, "bytes"),
            Ok(1408)
        );
        let e = in_range("--max-payload", 0u32, 1, 65_535, "bytes").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--max-payload 0 is out of range: give between 1 and 65535 bytes"
        );
    }
}
