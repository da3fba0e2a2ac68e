//! Packet sizes as a user writes them: lists, ranges with a step, or both.

use super::*;
use wire::spec::Family;

/// Parse `"128,384,640"`, `"128..1408/256"` (inclusive range with step; `/step`
/// defaults to 128) or a mix of both, comma-separated. Duplicates are an error.
pub fn parse_sizes(text: &str) -> Result<Vec<u32>, SpecError> {
    let err = |m: &str| SpecError::Sizes(text.to_string(), m.to_string());
    let max_bytes = Family::V4.max_udp_payload_bytes();
    let in_range = |s: u32| {
        if s == 0 || s > max_bytes {
            Err(err(&format!("{s} is out of range (1..={max_bytes} bytes)")))
        } else {
            Ok(s)
        }
    };
    let too_many = || {
        err(&format!(
            "more than {MAX_SIZES} sizes; use a larger step (FROM..TO/STEP)"
        ))
    };
    let mut out: Vec<u32> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let num = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| err(&format!("'{s}' is not a whole number of bytes")))
        };
        if let Some((a, rest)) = item.split_once("..") {
            let (b, step) = match rest.split_once('/') {
                Some((b, s)) => (b, s),
                None => (rest, "128"),
            };
            // Range-check the ends and count the sizes before expanding anything.
            let (a, b, step) = (in_range(num(a)?)?, in_range(num(b)?)?, num(step)?);
            if step == 0 || b < a {
                return Err(err("a range is FROM..TO/STEP with FROM ≤ TO and STEP > 0"));
            }
            let n = ((b - a) / step) as usize + 1;
            if out.len() + n > MAX_SIZES {
                return Err(too_many());
            }
            out.extend((0..n as u32).map(|i| a + i * step));
        } else {
            if out.len() >= MAX_SIZES {
                return Err(too_many());
            }
            out.push(in_range(num(item)?)?);
        }
    }
    if out.is_empty() {
        return Err(err("no sizes given"));
    }
    for (i, s) in out.iter().enumerate() {
        if out[..i].contains(s) {
            return Err(err(&format!("{s} is listed twice")));
        }
    }
    Ok(out)
}
