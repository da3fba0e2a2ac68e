//! The one grammar for quantities a user types (flags, spec keys) and the one way they
//! are written back: byte counts, bit rates, packet rates and durations.
//!
//! - **Bytes**: `1408`, `64K` / `64KiB` / `64k` (K = 1024), `4M` / `4MiB`, `1G` / `1GiB`,
//!   `B` optional. Socket buffers and payloads are binary sizes, as in iperf and the
//!   kernel. `KB`/`MB`/`GB` are refused (kilo- or kibibytes?): the message names `64KiB`.
//! - **Bit rates**: `100M`, `100m`, `100mbit`, `100Mbit/s`, `1.5G`, `500k`, `2000000`
//!   (SI: k = 1000; case does not matter, there are no milli-bits).
//! - **Packet rates**: `50kpps`, `1Mpps`, `1000pps`.
//! - **Durations**: `10` (seconds), `10s`, `1.5s`, `500ms`, `250us`/`250µs`, `2min`, `1h`.
//!
//! `100mbps`, `100MB/s` and `100MBps` are refused everywhere with the same answer:
//! "bps" means megabits to some tools and megabytes to others (tc reads `mbps` as
//! megabytes per second), so dualperf asks which was meant: "did you mean 100mbit
//! (megabits per second) or 800mbit (megabytes per second)?".

use serde::{Deserialize, Serialize};

/// A requested sending rate (per stream): bits or packets per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    BitsPerSec(u64),
    PacketsPerSec(u64),
}

/// A quantity that does not parse: what was typed, what was expected, and what to type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{input}' is not {expected}: {hint}")]
pub struct QuantityError {
    pub input: String,
    pub expected: &'static str,
    pub hint: String,
}

fn err(input: &str, expected: &'static str, hint: impl Into<String>) -> QuantityError {
    QuantityError {
        input: input.to_string(),
        expected,
        hint: hint.into(),
    }
}

/// Splits "12.5 Mbit/s" into (12.5, "mbit/s"): the number, then the lower-case unit.
fn split<'a>(
    input: &str,
    lower: &'a str,
    expected: &'static str,
    examples: &str,
) -> Result<(f64, &'a str), QuantityError> {
    let mantissa_end = lower
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(lower.len());
    // An exponent ("1e300", "2.5e-3") belongs to the number, so that a huge value is
    // answered with its range, not as an unknown unit "e300".
    let rest = &lower.as_bytes()[mantissa_end..];
    let at = match rest {
        [b'e', b'+' | b'-', d, ..] | [b'e', d, ..] if d.is_ascii_digit() && mantissa_end > 0 => {
            let sign = usize::from(matches!(rest[1], b'+' | b'-'));
            let digits = rest[1 + sign..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            mantissa_end + 1 + sign + digits
        }
        _ => mantissa_end,
    };
    let (number, unit) = lower.split_at(at);
    let value: f64 = number.parse().map_err(|_| {
        err(
            input,
            expected,
            format!("write a non-negative number and an optional unit, {examples}"),
        )
    })?;
    if !value.is_finite() {
        return Err(err(input, expected, "the number is out of range"));
    }
    Ok((value, unit.trim()))
}

const BYTES: &str = "a byte count";
const BYTES_EXAMPLES: &str = "e.g. 1408, 64K or 64KiB (K = 1024 bytes), 4M, 1G";

/// A byte count: `1408`, `64K`/`64KiB` (1024), `4M`/`4MiB`, `1G`/`1GiB`, optional `B`.
pub fn parse_bytes(input: &str) -> Result<u64, QuantityError> {
    let lower = input.trim().to_ascii_lowercase();
    let (value, unit) = split(input, &lower, BYTES, BYTES_EXAMPLES)?;
    let scale: f64 = match unit {
        "" | "b" => 1.0,
        "k" | "ki" | "kib" => 1024.0,
        "m" | "mi" | "mib" => 1024.0 * 1024.0,
        "g" | "gi" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "kb" | "mb" | "gb" => {
            return Err(err(
                input,
                BYTES,
                format!("KB/MB/GB is ambiguous (1000 or 1024 bytes? bits?); write KiB/MiB/GiB or K/M/G (1024), {BYTES_EXAMPLES}"),
            ))
        }
        _ => return Err(err(input, BYTES, format!("unknown unit; {BYTES_EXAMPLES}"))),
    };
    let bytes = value * scale;
    if bytes.fract() != 0.0 {
        return Err(err(input, BYTES, "that is not a whole number of bytes"));
    }
    if bytes >= u64::MAX as f64 {
        return Err(err(input, BYTES, "too large"));
    }
    Ok(bytes as u64)
}

/// A byte count that must fit 32 bits (socket options, payload sizes).
pub fn parse_bytes_u32(input: &str) -> Result<u32, QuantityError> {
    let n = parse_bytes(input)?;
    u32::try_from(n).map_err(|_| err(input, BYTES, "too large (at most 4GiB - 1)"))
}

const RATE: &str = "a rate";
const RATE_EXAMPLES: &str =
    "e.g. 100M or 100mbit (bits per second, k/M/G = 1000), 50kpps (packets per second)";

/// The answer to `100mbps`, `100MB/s`, `100MBps`: which of the two was meant?
fn ambiguous_bps(input: &str, value: f64, prefix: &str) -> QuantityError {
    let n = |v: f64| {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    err(
        input,
        RATE,
        format!(
            "'bps' means bits to some tools and bytes to others (tc reads it as bytes); \
             did you mean {}{prefix}bit (megabits per second) or {}{prefix}bit (megabytes per second)?",
            n(value),
            n(value * 8.0)
        )
        .replace("megabits", &format!("{}bits", si_word(prefix)))
        .replace("megabytes", &format!("{}bytes", si_word(prefix))),
    )
}

fn si_word(prefix: &str) -> &'static str {
    match prefix {
        "k" => "kilo",
        "m" => "mega",
        "g" => "giga",
        "t" => "tera",
        _ => "",
    }
}

fn si_scale(prefix: &str) -> Option<f64> {
    Some(match prefix {
        "" => 1.0,
        "k" => 1e3,
        "m" => 1e6,
        "g" => 1e9,
        "t" => 1e12,
        _ => return None,
    })
}

/// A sending rate: bits per second (`100M`, `100mbit`, `1.5Gbit/s`) or packets per
/// second (`50kpps`). Zero and negative rates are refused.
pub fn parse_rate(input: &str) -> Result<Rate, QuantityError> {
    let lower = input.trim().to_ascii_lowercase();
    let (value, unit) = split(input, &lower, RATE, RATE_EXAMPLES)?;
    let (prefix, packets) = if let Some(p) = unit.strip_suffix("pps") {
        (p, true)
    } else if let Some(p) = unit
        .strip_suffix("bps")
        .or_else(|| unit.strip_suffix("b/s"))
        .or_else(|| unit.strip_suffix("byte/s"))
        .or_else(|| unit.strip_suffix("bytes/s"))
    {
        return Err(ambiguous_bps(input, value, p));
    } else {
        let p = unit.strip_suffix("/s").unwrap_or(unit);
        (p.strip_suffix("bit").unwrap_or(p), false)
    };
    let Some(scale) = si_scale(prefix) else {
        return Err(err(input, RATE, format!("unknown unit; {RATE_EXAMPLES}")));
    };
    let v = value * scale;
    if v < 1.0 {
        return Err(err(
            input,
            RATE,
            format!("a rate must be at least 1; {RATE_EXAMPLES}"),
        ));
    }
    if v >= 1.8e19 {
        return Err(err(input, RATE, "too large"));
    }
    let v = v.round() as u64;
    Ok(if packets {
        Rate::PacketsPerSec(v)
    } else {
        Rate::BitsPerSec(v)
    })
}

/// A rate that must be in bits per second (link rates, shaping, server limits).
pub fn parse_bit_rate(input: &str) -> Result<u64, QuantityError> {
    match parse_rate(input)? {
        Rate::BitsPerSec(b) => Ok(b),
        Rate::PacketsPerSec(_) => Err(err(
            input,
            "a bit rate",
            "this takes bits per second, not packets (e.g. 100mbit, 1G)",
        )),
    }
}

const DURATION: &str = "a duration";
const DURATION_EXAMPLES: &str = "e.g. 10 or 10s (seconds), 500ms, 2min";

/// A duration: `10` (seconds), `10s`, `1.5s`, `500ms`, `250us`/`250µs`, `2min`, `1h`.
/// Returns nanoseconds; zero is allowed (callers that need more say so).
pub fn parse_duration_ns(input: &str) -> Result<u64, QuantityError> {
    let lower = input.trim().to_lowercase();
    let (value, unit) = split(input, &lower, DURATION, DURATION_EXAMPLES)?;
    let scale = match unit {
        "" | "s" | "sec" | "secs" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        "min" => 60e9,
        "h" => 3600e9,
        "m" => {
            return Err(err(
                input,
                DURATION,
                "'m' could be minutes or milliseconds; write min or ms",
            ))
        }
        _ => {
            return Err(err(
                input,
                DURATION,
                format!("unknown unit; {DURATION_EXAMPLES}"),
            ))
        }
    };
    let ns = value * scale;
    if ns >= 1.8e19 {
        return Err(err(input, DURATION, "too long"));
    }
    Ok(ns.round() as u64)
}

/// [`parse_duration_ns`] in seconds, for flags kept as `f64` seconds.
pub fn parse_duration_s(input: &str) -> Result<f64, QuantityError> {
    parse_duration_ns(input).map(|ns| ns as f64 / 1e9)
}

/// A byte count the way [`parse_bytes`] reads it back: `64KiB`, `4MiB`, `1408B`.
pub fn format_bytes(bytes: u64) -> String {
    for (div, unit) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")] {
        if bytes >= div && bytes.is_multiple_of(div) {
            return format!("{}{unit}", bytes / div);
        }
    }
    format!("{bytes}B")
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A bit rate as [`parse_rate`] reads it back (and as tc reads it): `100Mbit`,
/// `1.5Gbit`, `500Kbit`, `999bit`.
pub fn format_bit_rate(bps: u64) -> String {
    for (div, unit) in [(1e9, "Gbit"), (1e6, "Mbit"), (1e3, "Kbit")] {
        let v = bps as f64 / div;
        if v >= 1.0 {
            return format!("{}{unit}", trim_float(v));
        }
    }
    format!("{bps}bit")
}

/// A measured bit rate for people: `941.23 Mbit/s`, `12.00 kbit/s`, `800 bit/s`.
pub fn display_bit_rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.2} Mbit/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.2} kbit/s", bps / 1e3)
    } else {
        format!("{bps:.0} bit/s")
    }
}

/// A duration as [`parse_duration_ns`] reads it back: `10s`, `1.5s`, `500ms`, `250us`.
pub fn format_duration_ns(ns: u64) -> String {
    if ns >= 1_000_000_000 || ns == 0 {
        format!("{}s", trim_float(ns as f64 / 1e9))
    } else if ns >= 1_000_000 {
        format!("{}ms", trim_float(ns as f64 / 1e6))
    } else if ns >= 1_000 {
        format!("{}us", trim_float(ns as f64 / 1e3))
    } else {
        format!("{ns}ns")
    }
}

/// A rate as [`parse_rate`] reads it back.
pub fn format_rate(rate: Rate) -> String {
    match rate {
        Rate::BitsPerSec(b) => format_bit_rate(b),
        Rate::PacketsPerSec(p) if p >= 1_000_000 && p.is_multiple_of(1_000_000) => {
            format!("{}Mpps", p / 1_000_000)
        }
        Rate::PacketsPerSec(p) if p >= 1000 && p.is_multiple_of(1000) => {
            format!("{}kpps", p / 1000)
        }
        Rate::PacketsPerSec(p) => format!("{p}pps"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_take_binary_multiples() {
        assert_eq!(parse_bytes("1408"), Ok(1408));
        assert_eq!(parse_bytes(" 64K "), Ok(65_536));
        assert_eq!(parse_bytes("64k"), Ok(65_536));
        assert_eq!(parse_bytes("64KiB"), Ok(65_536));
        assert_eq!(parse_bytes("64kib"), Ok(65_536));
        assert_eq!(parse_bytes("1.5M"), Ok(1_572_864));
        assert_eq!(parse_bytes("4MiB"), Ok(4 << 20));
        assert_eq!(parse_bytes("1G"), Ok(1 << 30));
        assert_eq!(parse_bytes("1408B"), Ok(1408));
        assert_eq!(parse_bytes_u32("8K"), Ok(8192));
    }

    #[test]
    fn bytes_refuse_nonsense_and_say_what_to_type() {
        for bad in [
            "",
            "x",
            "-5",
            "8X",
            "1.5",
            "64 kbit",
            "nan",
            "inf",
            "99999999999G",
        ] {
            let e = parse_bytes(bad).expect_err(bad);
            assert!(e.to_string().contains("byte count"), "{bad}: {e}");
        }
        let e = parse_bytes("64KB").unwrap_err().to_string();
        assert!(e.contains("KiB"), "{e}");
        let e = parse_bytes("10MB").unwrap_err().to_string();
        assert!(e.contains("ambiguous"), "{e}");
        assert!(parse_bytes_u32("4G").is_err());
    }

    /// NaN and the infinities are refused here, once, for every caller (link rates,
    /// lab rates, sizes, durations): no caller parses a number of its own.
    #[test]
    fn nan_and_infinities_are_refused_by_every_parser() {
        for bad in [
            "nan", "NaN", "inf", "-inf", "infinity", "1e999", "1e999M", "NaNM",
        ] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
            assert!(parse_rate(bad).is_err(), "{bad}");
            assert!(parse_bit_rate(bad).is_err(), "{bad}");
            assert!(parse_duration_ns(bad).is_err(), "{bad}");
        }
        let e = parse_bit_rate("1e999").unwrap_err().to_string();
        assert!(e.contains("out of range"), "{e}");
    }

    #[test]
    fn bit_rates_are_si_and_case_blind() {
        for (text, bps) in [
            ("100M", 100_000_000),
            ("100m", 100_000_000),
            ("100mbit", 100_000_000),
            ("100Mbit/s", 100_000_000),
            ("50 Mbit", 50_000_000),
            ("1.5G", 1_500_000_000),
            ("1.5gbit/s", 1_500_000_000),
            ("500k", 500_000),
            ("500kbit", 500_000),
            ("2000000", 2_000_000),
            ("1T", 1_000_000_000_000),
        ] {
            assert_eq!(parse_rate(text), Ok(Rate::BitsPerSec(bps)), "{text}");
            assert_eq!(parse_bit_rate(text), Ok(bps), "{text}");
        }
    }

    #[test]
    fn packet_rates() {
        assert_eq!(parse_rate("50kpps"), Ok(Rate::PacketsPerSec(50_000)));
        assert_eq!(parse_rate("1Mpps"), Ok(Rate::PacketsPerSec(1_000_000)));
        assert_eq!(parse_rate("1000pps"), Ok(Rate::PacketsPerSec(1000)));
        let e = parse_bit_rate("50kpps").unwrap_err().to_string();
        assert!(e.contains("not packets"), "{e}");
    }

    #[test]
    fn bps_is_refused_everywhere_with_both_readings() {
        let e = parse_rate("100mbps").unwrap_err().to_string();
        assert!(
            e.contains(
                "did you mean 100mbit (megabits per second) or 800mbit (megabytes per second)?"
            ),
            "{e}"
        );
        for bad in ["100Mbps", "100MB/s", "100MBps", "12kbps", "1bps"] {
            let e = parse_rate(bad).expect_err(bad).to_string();
            assert!(e.contains("did you mean"), "{bad}: {e}");
            assert!(parse_bit_rate(bad).is_err());
        }
    }

    #[test]
    fn rates_refuse_nonsense() {
        for bad in [
            "",
            "fast",
            "-5M",
            "0",
            "0.1",
            "10q",
            "1e20",
            "100 Mi",
            "99999999999T",
        ] {
            assert!(parse_rate(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("10"), Ok(10_000_000_000));
        assert_eq!(parse_duration_ns("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration_ns("500ms"), Ok(500_000_000));
        assert_eq!(parse_duration_ns("250us"), Ok(250_000));
        assert_eq!(parse_duration_ns("250µs"), Ok(250_000));
        assert_eq!(parse_duration_ns("2min"), Ok(120_000_000_000));
        assert_eq!(parse_duration_ns("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse_duration_s("0.3"), Ok(0.3));
        assert!(parse_duration_ns("2m")
            .unwrap_err()
            .to_string()
            .contains("min or ms"));
        for bad in ["", "soon", "-1", "1 day", "1e30"] {
            assert!(parse_duration_ns(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn formatting_reads_back_through_the_parser() {
        for b in [1408u64, 65_536, 4 << 20, 1 << 30, 1500, 0] {
            assert_eq!(parse_bytes(&format_bytes(b)), Ok(b), "{}", format_bytes(b));
        }
        assert_eq!(format_bytes(65_536), "64KiB");
        for r in [100_000_000u64, 1_500_000_000, 500_000, 999, 12_345_000] {
            assert_eq!(
                parse_bit_rate(&format_bit_rate(r)),
                Ok(r),
                "{}",
                format_bit_rate(r)
            );
        }
        assert_eq!(format_bit_rate(100_000_000), "100Mbit");
        for r in [
            Rate::PacketsPerSec(50_000),
            Rate::PacketsPerSec(2_000_000),
            Rate::PacketsPerSec(1234),
            Rate::BitsPerSec(10_000_000_000),
        ] {
            assert_eq!(parse_rate(&format_rate(r)), Ok(r), "{}", format_rate(r));
        }
        for ns in [10_000_000_000u64, 1_500_000_000, 500_000_000, 250_000, 17] {
            assert_eq!(
                parse_duration_ns(&format_duration_ns(ns)),
                Ok(ns),
                "{}",
                format_duration_ns(ns)
            );
        }
        assert_eq!(display_bit_rate(941_234_000.0), "941.23 Mbit/s");
        assert_eq!(display_bit_rate(800.0), "800 bit/s");
    }
}

#[cfg(test)]
mod exponent_tests {
    use super::*;

    #[test]
    fn an_exponent_belongs_to_the_number() {
        assert_eq!(parse_duration_s("1e1").ok(), Some(10.0));
        assert_eq!(parse_bit_rate("1e6").ok(), Some(1_000_000));
        assert_eq!(parse_bytes("1e3").ok(), Some(1000));
        assert!(parse_duration_s("1e300").is_err());
        assert_eq!(parse_duration_s("2.5e-3").ok(), Some(0.0025));
    }
}
