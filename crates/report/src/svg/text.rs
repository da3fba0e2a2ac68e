//! Text in a figure: estimated widths, wrapping to a width, lines as `<tspan>`s.

use super::c;
use crate::escape::svg as svg_escape;
use std::fmt::Write as _;

/// Estimated advance width of `text` at `font_px` in a DejaVu-Sans-like face (slightly
/// generous, so that layout computed from it never overflows).
pub fn text_width(text: &str, font_px: f64) -> f64 {
    let em: f64 = text
        .chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | 'I' => 0.32,
            ' ' | 'f' | 't' | 'r' | '(' | ')' | '[' | ']' | '-' | '/' => 0.42,
            'm' | 'w' | 'M' | 'W' | '@' | '%' => 0.95,
            c if c.is_ascii_uppercase() => 0.74,
            c if c.is_ascii_digit() => 0.64,
            c if c.is_ascii() => 0.62,
            _ => 0.8,
        })
        .sum();
    em * font_px
}

/// Break `text` into at most `max_lines` lines no wider than `max_px` (at spaces; a word
/// wider than a line is cut); text that does not fit ends with "…". The work is bounded
/// by what the lines can hold, whatever the length of `text` (a label of a megabyte
/// makes a figure of normal size, fast).
pub fn wrap(text: &str, font_px: f64, max_px: f64, max_lines: usize) -> Vec<String> {
    let max_lines = max_lines.max(1);
    // The narrowest character is 0.32 em: no line holds more than this.
    let per_line = (max_px / (0.32 * font_px)).max(1.0) as usize + 1;
    let text = crate::escape::truncate_chars(text, per_line * (max_lines + 1));
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if lines.len() > max_lines {
            break;
        }
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if text_width(&candidate, font_px) <= max_px {
            line = candidate;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        let mut rest = word.to_string();
        while text_width(&rest, font_px) > max_px && rest.chars().count() > 1 {
            let mut cut = String::new();
            for ch in rest.chars() {
                if text_width(&format!("{cut}{ch}"), font_px) > max_px && !cut.is_empty() {
                    break;
                }
                cut.push(ch);
            }
            rest = rest[cut.len()..].to_string();
            lines.push(cut);
        }
        line = rest;
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        if let Some(last) = lines.last_mut() {
            while !last.is_empty() && text_width(&format!("{last}…"), font_px) > max_px {
                last.pop();
            }
            last.push('…');
        }
    }
    lines
}

/// `<text>` with one `<tspan>` per line.
pub(crate) fn text_lines(x: f64, y: f64, lines: &[String], line_h: f64, attrs: &str) -> String {
    let mut out = format!("<text x=\"{}\" y=\"{}\"{attrs}>", c(x), c(y));
    for (i, l) in lines.iter().enumerate() {
        let dy = if i == 0 { 0.0 } else { line_h };
        let _ = write!(
            out,
            "<tspan x=\"{}\" dy=\"{}\">{}</tspan>",
            c(x),
            c(dy),
            svg_escape(l)
        );
    }
    out.push_str("</text>");
    out
}

pub(crate) fn capitalise_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(f) => f.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}
