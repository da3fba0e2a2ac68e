//! Number formatting shared by tables, figures and sentences, so one value reads the
//! same everywhere.

use crate::table::Cell;

/// Decimals for a value of this magnitude: 2 from 100 up, 3 from 1, else 4 significant.
fn decimals(v: f64) -> usize {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        2
    } else if a >= 1.0 {
        3
    } else {
        let lg = a.log10().floor() as i32;
        (3 - lg).clamp(4, 8) as usize
    }
}

/// A measured value: "94.11", "0.1234"; NaN/∞ as "–".
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    format!("{:.*}", decimals(v), v)
}

/// A value rounded like `other` (e.g. a CI half-width like its mean).
pub fn num_like(v: f64, other: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let d = if other.is_finite() {
        decimals(other)
    } else {
        decimals(v)
    };
    format!("{v:.d$}")
}

/// A signed percentage: "7.2", "-0.35".
pub fn pct(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A p-value: "< 0.001", "0.042".
pub fn p_value(p: f64) -> String {
    if !p.is_finite() {
        "–".to_string()
    } else if p < 0.001 {
        "< 0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// "p below 0.001" / "p = 0.042" for sentences (in words: a sentence is escaped for
/// Markdown as a whole, and "&lt;" is what a terminal would then show).
pub fn p_phrase(p: f64) -> String {
    if !p.is_finite() {
        "p not available".to_string()
    } else if p < 0.001 {
        "p below 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    }
}

pub fn num_cell(v: f64) -> Cell {
    Cell::Num {
        text: num(v),
        value: v,
    }
}

/// A whole number (sizes, byte counts), right-aligned like other numbers.
pub fn int_cell(v: u32) -> Cell {
    Cell::Num {
        text: v.to_string(),
        value: f64::from(v),
    }
}

pub fn pct_cell(v: f64) -> Cell {
    Cell::Num {
        text: pct(v),
        value: v,
    }
}

pub fn p_cell(p: f64) -> Cell {
    Cell::Num {
        text: p_value(p),
        value: p,
    }
}

/// "128 bytes", "128 and 640 bytes", "128, 640 and 1408 bytes".
pub fn sizes_list(sizes: &[u32]) -> String {
    let list: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    match list.split_last() {
        None => String::new(),
        Some((last, [])) => format!("{last} bytes"),
        Some((last, rest)) => format!("{} and {last} bytes", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_by_magnitude() {
        assert_eq!(num(941.234), "941.23");
        assert_eq!(num(94.1234), "94.123");
        assert_eq!(num(0.012346), "0.01235");
        assert_eq!(num(f64::NAN), "–");
        assert_eq!(pct(7.24), "7.24");
        assert_eq!(pct(-12.34), "-12.3");
        assert_eq!(p_value(0.0004), "< 0.001");
        assert_eq!(p_phrase(0.0421), "p = 0.042");
        assert_eq!(num_like(0.71234, 94.1), "0.712");
    }
}
