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

/// Socket buffer sizes a test may ask for: 1 KiB to the largest `int` the kernel takes
/// (it clamps to `net.core.{w,r}mem_max` and doubles what it keeps).
pub const SOCKET_BUFFER_BYTES: (u32, u32) = (1024, i32::MAX as u32);
/// TCP maximum segment sizes Linux accepts (`TCP_MIN_MSS` 88 to `MAX_TCP_WINDOW`).
pub const MSS_BYTES: (u32, u32) = (88, 32_767);
/// IPv6 flow labels are 20 bits.
pub const MAX_FLOWLABEL: u32 = 0xf_ffff;

/// Range-check the numeric socket options of a test (every flag and spec key that
/// sets them ends here, on the client and on the server alike).
pub fn check_socket_opts(o: &crate::spec::SocketOpts) -> Result<(), RangeError> {
    let (lo, hi) = SOCKET_BUFFER_BYTES;
    if let Some(b) = o.sndbuf_bytes {
        in_range("send buffer (--sndbuf)", b, lo, hi, "bytes")?;
    }
    if let Some(b) = o.rcvbuf_bytes {
        in_range("receive buffer (--rcvbuf)", b, lo, hi, "bytes")?;
    }
    if let Some(m) = o.mss_bytes {
        in_range("--mss", m, MSS_BYTES.0, MSS_BYTES.1, "bytes")?;
    }
    if let Some(f) = o.flowlabel {
        in_range("--flowlabel", f, 1, MAX_FLOWLABEL, "")?;
    }
    Ok(())
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

    #[test]
    fn socket_options_outside_what_the_kernel_takes_are_refused() {
        use crate::spec::SocketOpts;
        assert!(check_socket_opts(&SocketOpts::default()).is_ok());
        for o in [
            SocketOpts {
                sndbuf_bytes: Some(0),
                ..SocketOpts::default()
            },
            SocketOpts {
                rcvbuf_bytes: Some(u32::MAX),
                ..SocketOpts::default()
            },
            SocketOpts {
                mss_bytes: Some(0),
                ..SocketOpts::default()
            },
            SocketOpts {
                flowlabel: Some(1 << 20),
                ..SocketOpts::default()
            },
        ] {
            assert!(check_socket_opts(&o).is_err(), "{o:?}");
        }
    }
}
