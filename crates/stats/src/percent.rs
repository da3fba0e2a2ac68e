//! The one percentage function: a difference between two values as a percentage of a
//! stated base, and the words that state it. Tables, findings and figures all go
//! through [`percent_difference`] and [`base_words`], so a report can never show one
//! figure computed over one base beside a sentence computed over another.
//!
//! The studies compute "IPv4 higher than IPv6 by x %" over the IPv4 value (seed 004,
//! Table II: 438.68 against 411.83 Mbit/s is 6.1 %), which is [`PercentBase::First`]
//! with IPv4 first; over the IPv6 value the same pair is 6.5 %.

use serde::{Deserialize, Serialize};

/// Which of the two compared values a percentage difference is taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PercentBase {
    /// (a − b) / a: the studies' convention with IPv4 (or the first system) as a.
    First,
    /// (a − b) / b: "a is x % above b".
    #[default]
    Second,
}

/// (a − b) as a percentage of the base, or `None` where it has no meaning (a base of
/// zero, or a value that is not finite).
pub fn percent_difference(a: f64, b: f64, base: PercentBase) -> Option<f64> {
    if !(a.is_finite() && b.is_finite()) {
        return None;
    }
    percent_of(a - b, base_value(a, b, base))
}

/// Which of `a` and `b` is the base.
pub fn base_value(a: f64, b: f64, base: PercentBase) -> f64 {
    match base {
        PercentBase::First => a,
        PercentBase::Second => b,
    }
}

/// `value` (a difference, an effect or a bound of its interval) as a percentage of the
/// base value `over`, or `None` where that has no meaning (a base of zero, or a value
/// that is not finite). The sign is `value`'s: a negative base does not flip it.
pub fn percent_of(value: f64, over: f64) -> Option<f64> {
    let pct = value / over.abs() * 100.0;
    (value.is_finite() && over.is_finite() && over != 0.0 && pct.is_finite()).then_some(pct)
}

/// The words that state what a percentage difference is: "IPv4 − IPv6, as % of IPv6".
pub fn base_words(a_name: &str, b_name: &str, base: PercentBase) -> String {
    let over = match base {
        PercentBase::First => a_name,
        PercentBase::Second => b_name,
    };
    format!("{a_name} − {b_name}, as % of {over}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_004_table_ii_is_reproduced_over_the_ipv4_value() {
        // Seed 004, Table II: IPv4 438.68, IPv6 411.83 Mbit/s; the paper says 6.1 %.
        let over_v4 = percent_difference(438.68, 411.83, PercentBase::First).unwrap();
        assert_eq!(format!("{over_v4:.1}"), "6.1");
        let over_v6 = percent_difference(438.68, 411.83, PercentBase::Second).unwrap();
        assert_eq!(format!("{over_v6:.1}"), "6.5");
        assert_eq!(
            base_words("IPv4", "IPv6", PercentBase::First),
            "IPv4 − IPv6, as % of IPv4"
        );
        assert_eq!(
            base_words("IPv4", "IPv6", PercentBase::Second),
            "IPv4 − IPv6, as % of IPv6"
        );
    }

    #[test]
    fn a_zero_or_non_finite_base_has_no_percentage() {
        assert_eq!(percent_difference(1.0, 0.0, PercentBase::Second), None);
        assert_eq!(percent_difference(0.0, 1.0, PercentBase::First), None);
        assert_eq!(
            percent_difference(f64::INFINITY, 1.0, PercentBase::Second),
            None
        );
        assert_eq!(percent_difference(f64::NAN, 1.0, PercentBase::Second), None);
        // A negative base keeps the sign of a − b.
        assert_eq!(
            percent_difference(-1.0, -2.0, PercentBase::Second),
            Some(50.0)
        );
    }
}
