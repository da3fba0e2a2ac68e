//! LaTeX renderings of the report's tables: each table as a `table` environment with
//! booktabs rules and siunitx `S` columns (numbers aligned on the decimal point, the
//! column's width from its own numbers), captioned with the campaigns it describes, ready
//! to `\input`; and a standalone document holding them all (`tables/tables.tex`), which
//! compiles with pdflatex and the booktabs, siunitx and graphicx packages. A table wider
//! than the text is scaled to its width.
//!
//! Text is escaped for LaTeX and keeps every character: the symbols the report uses
//! (±, –, µ, ×, ≤, …) map to LaTeX commands; Latin letters with accents (the UTF-8
//! input the T1 font encoding sets: "Débian Système", "Łódź") and Greek (through
//! `textalpha`, which texlive-science brings in) are written as they are; any other
//! character (Cyrillic, CJK, Hebrew, Arabic, a control character) is written as its code
//! point, "<U+4E2D>", which pdflatex sets with any font, so that two labels that differ
//! still read differently in the PDF. (Setting CJK natively would need CJK fonts, which
//! the TeX packages the tables need do not bring.)

use crate::table::{Cell, Table};
use std::fmt::Write as _;

/// The preamble lines the tables need: UTF-8 input with the T1 font encoding and Greek
/// letters in text (`textalpha`), booktabs rules, siunitx columns, graphicx scaling.
pub const PREAMBLE: &str = "\\usepackage[utf8]{inputenc}\n\\usepackage[T1]{fontenc}\n\
                            \\usepackage{textalpha}\n\\usepackage{booktabs}\n\
                            \\usepackage{siunitx}\n\\usepackage{graphicx}\n";

/// Characters written as they are: the Latin letters the T1 encoding's UTF-8 input
/// declares (LaTeX's `t1enc.dfu`) and the Greek of `textalpha` (monotonic Greek).
const NATIVE: &[(char, char)] = &[
    ('\u{a1}', '\u{a1}'),
    ('\u{a3}', '\u{a3}'),
    ('\u{ab}', '\u{ab}'),
    ('\u{bb}', '\u{bb}'),
    ('\u{bf}', '\u{d6}'),
    ('\u{d8}', '\u{f6}'),
    ('\u{f8}', '\u{125}'),
    ('\u{128}', '\u{137}'),
    ('\u{139}', '\u{13e}'),
    ('\u{141}', '\u{148}'),
    ('\u{14a}', '\u{165}'),
    ('\u{168}', '\u{17e}'),
    ('\u{218}', '\u{21b}'),
    ('\u{386}', '\u{38a}'),
    ('\u{38c}', '\u{38c}'),
    ('\u{38e}', '\u{3a1}'),
    ('\u{3a3}', '\u{3ce}'),
];

/// Whether pdflatex sets `c` from UTF-8 input with [`PREAMBLE`].
fn native(c: char) -> bool {
    NATIVE.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
}

/// Escape `s` for LaTeX text mode.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '{' => out.push_str("\\{"),
            '}' => out.push_str("\\}"),
            '$' => out.push_str("\\$"),
            '&' => out.push_str("\\&"),
            '#' => out.push_str("\\#"),
            '_' => out.push_str("\\_"),
            '%' => out.push_str("\\%"),
            '^' => out.push_str("\\textasciicircum{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            '|' => out.push_str("\\textbar{}"),
            // Braced, so a `\\` or `\\midrule` before them does not read `[…]` as its
            // optional length, or `*` as its starred form (a row starting "[lab] …").
            '[' => out.push_str("{[}"),
            ']' => out.push_str("{]}"),
            '*' => out.push_str("{*}"),
            '±' => out.push_str("\\ensuremath{\\pm}"),
            '–' => out.push_str("--"),
            '—' => out.push_str("---"),
            '−' => out.push('-'),
            'µ' | 'μ' => out.push_str("\\ensuremath{\\mu}"),
            '×' => out.push_str("\\ensuremath{\\times}"),
            '≤' => out.push_str("\\ensuremath{\\le}"),
            '≥' => out.push_str("\\ensuremath{\\ge}"),
            '≈' => out.push_str("\\ensuremath{\\approx}"),
            '≠' => out.push_str("\\ensuremath{\\neq}"),
            '→' => out.push_str("\\ensuremath{\\rightarrow}"),
            '·' => out.push_str("\\ensuremath{\\cdot}"),
            '…' => out.push_str("\\ldots{}"),
            'Δ' => out.push_str("\\ensuremath{\\Delta}"),
            'σ' => out.push_str("\\ensuremath{\\sigma}"),
            'α' => out.push_str("\\ensuremath{\\alpha}"),
            '₀'..='₉' => {
                let d = (c as u32 - '₀' as u32) as u8;
                let _ = write!(out, "\\textsubscript{{{d}}}");
            }
            '²' => out.push_str("\\textsuperscript{2}"),
            '°' => out.push_str("\\ensuremath{^\\circ}"),
            '‰' => out.push_str("\\textperthousand{}"),
            '“' | '”' => out.push('"'),
            '‘' | '’' => out.push('\''),
            '\u{a0}' => out.push('~'),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c if native(c) => out.push(c),
            c if c.is_whitespace() => out.push(' '),
            // Visible and distinct: "中文" and "日本" never both read "??".
            c => {
                let _ = write!(out, "\\textless{{}}U+{:04X}\\textgreater{{}}", c as u32);
            }
        }
    }
    out
}

/// The longest text [`comment`] keeps, in characters.
pub const COMMENT_MAX_CHARS: usize = 200;

/// `s` for the rest of a `%` comment line: printable ASCII only (every control
/// character, carriage return and newline included, becomes a space, so nothing after
/// it leaves the comment), other characters as `?`, at most [`COMMENT_MAX_CHARS`].
pub fn comment(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(COMMENT_MAX_CHARS + 1)
        .map(|c| match c {
            ' '..='~' => c,
            c if c.is_control() || c.is_whitespace() => ' ',
            _ => '?',
        })
        .collect();
    if out.len() > COMMENT_MAX_CHARS {
        out.truncate(COMMENT_MAX_CHARS - 3);
        out.push_str("...");
    }
    out
}

/// The digits of a plain decimal number ("-12.345" → (2, 3)); `None` if the text is
/// anything else (siunitx would not parse it).
fn number_shape(t: &str) -> Option<(usize, usize)> {
    let t = t.strip_prefix('-').unwrap_or(t);
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || !(frac.is_empty() || digits(frac)) {
        return None;
    }
    Some((int.len(), frac.len()))
}

/// One table as a booktabs `table` environment. `context` (e.g. the campaigns) goes
/// into the caption after the title.
pub fn table(t: &Table, context: &str) -> String {
    let ncol = t.columns.len();
    // A column is an S column when every cell in it is a plain number or empty/"–".
    let mut formats: Vec<Option<(usize, usize, bool)>> = vec![None; ncol];
    for (i, f) in formats.iter_mut().enumerate() {
        let mut shape = (1usize, 0usize, false);
        let mut any = false;
        let mut ok = true;
        for row in &t.rows {
            let Some(c) = row.get(i) else { continue };
            let text = c.text().trim();
            match c {
                Cell::Num { .. } => match number_shape(text) {
                    Some((int, frac)) => {
                        any = true;
                        shape.0 = shape.0.max(int);
                        shape.1 = shape.1.max(frac);
                        shape.2 |= text.starts_with('-');
                    }
                    None if text == "–" || text.is_empty() => {}
                    None => ok = false,
                },
                Cell::Text(_) if text == "–" || text.is_empty() => {}
                Cell::Text(_) => ok = false,
            }
        }
        if ok && any && i > 0 {
            *f = Some(shape);
        }
    }
    let spec: String = formats
        .iter()
        .map(|f| match f {
            Some((int, frac, neg)) => format!(
                "S[table-format={}{int}.{frac}]",
                if *neg { "-" } else { "" }
            )
            .replace(".0]", "]"),
            None => "l".to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "% dualperf table {}: {}",
        comment(&t.id),
        comment(&t.title)
    );
    out.push_str("\\begin{table}[htbp]\n\\centering\n\\small\n");
    let caption = if context.is_empty() {
        escape(&t.title)
    } else {
        format!("{} ({})", escape(&t.title), escape(context))
    };
    let _ = writeln!(out, "\\caption{{{caption}}}");
    let _ = writeln!(out, "\\label{{tab:dualperf-{}}}", label_safe(&t.id));
    // Wider than the text: scaled down to fit (graphicx), never cut off.
    out.push_str("\\sbox0{%\n");
    let _ = writeln!(out, "\\begin{{tabular}}{{{spec}}}");
    out.push_str("\\toprule\n");
    let head: Vec<String> = t
        .columns
        .iter()
        .map(|c| format!("{{{}}}", escape(c)))
        .collect();
    let _ = writeln!(out, "{} \\\\", head.join(" & "));
    out.push_str("\\midrule\n");
    for row in &t.rows {
        let cells: Vec<String> = (0..ncol)
            .map(|i| {
                let text = row.get(i).map_or("", |c| c.text()).trim();
                match formats[i] {
                    Some(_) if number_shape(text).is_some() => text.to_string(),
                    // Not a number in an S column: braces make siunitx print it as text.
                    Some(_) => format!("{{{}}}", escape(text)),
                    None => escape(text),
                }
            })
            .collect();
        let _ = writeln!(out, "{} \\\\", cells.join(" & "));
    }
    out.push_str("\\bottomrule\n\\end{tabular}}\n");
    out.push_str(
        "\\ifdim\\wd0>\\linewidth\\resizebox{\\linewidth}{!}{\\usebox0}\\else\\usebox0\\fi\n",
    );
    if let Some(note) = &t.note {
        let _ = writeln!(
            out,
            "\\par\\smallskip\\parbox{{\\linewidth}}{{\\footnotesize {}}}",
            escape(note)
        );
    }
    out.push_str("\\end{table}\n");
    out
}

fn label_safe(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// A standalone document with every table, each `\input` from its own file.
pub fn document(tables: &[Table], title: &str) -> String {
    let mut out = String::from(
        "% Every table of the dualperf report; compile with pdflatex (booktabs, siunitx, graphicx).\n\
         \\documentclass{article}\n\\usepackage[margin=2cm,landscape]{geometry}\n",
    );
    out.push_str(PREAMBLE);
    // Times (psnfss, in texlive-latex-base): a scalable font in the T1 encoding, so that
    // accented letters are outlines with their Unicode in the PDF, not bitmaps.
    out.push_str("\\usepackage{mathptmx}\n");
    out.push_str("\\begin{document}\n");
    let _ = writeln!(out, "\\section*{{{}}}", escape(title));
    for t in tables {
        let _ = writeln!(out, "\\input{{{}.tex}}\n\\clearpage", t.id);
    }
    out.push_str("\\end{document}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::num_cell;

    fn sample() -> Table {
        Table {
            id: "tcp_throughput".into(),
            title: "TCP throughput, Mbit/s & more".into(),
            columns: vec!["size (B)".into(), "IPv4 mean".into(), "IPv6 ± CI".into()],
            rows: vec![
                vec!["128".into(), num_cell(1234.5), "12.3 ± 0.4".into()],
                vec!["1408".into(), num_cell(-0.25), "–".into()],
                vec!["note_x".into(), Cell::from("–"), "5 µs".into()],
            ],
            note: Some("50% of runs; p < 0.05".into()),
        }
    }

    #[test]
    fn a_table_is_booktabs_with_siunitx_columns_sized_by_their_numbers() {
        let tex = table(&sample(), "campaign A vs B");
        assert!(
            tex.contains("\\toprule") && tex.contains("\\midrule") && tex.contains("\\bottomrule")
        );
        // Column 2 holds numbers (one negative, up to 4 integer digits, 4 decimals);
        // column 3 is text; column 1 is the row header.
        assert!(
            tex.contains("\\begin{tabular}{l S[table-format=-4.4] l}"),
            "{tex}"
        );
        assert!(tex.contains("\\caption{TCP throughput, Mbit/s \\& more (campaign A vs B)}"));
        assert!(tex.contains("\\label{tab:dualperf-tcp-throughput}"));
        // A dash in an S column is braced text; symbols become LaTeX commands.
        assert!(tex.contains("{--}"), "{tex}");
        assert!(tex.contains("12.3 \\ensuremath{\\pm} 0.4"));
        assert!(tex.contains("5 \\ensuremath{\\mu}s"));
        assert!(tex.contains("note\\_x"));
        assert!(tex.contains("50\\% of runs; p \\textless{} 0.05"));
    }

    #[test]
    fn escaping_keeps_every_character_as_itself_or_its_code_point() {
        let e = escape("a\\b{c}$d&e#f_g%h^i~j ≤ ≥ ≈ → · … Δ σ n₁ ✓ 日本");
        assert!(e.is_ascii(), "{e}");
        assert!(e.contains("\\textbackslash{}") && e.contains("\\textsubscript{1}"));
        assert!(
            e.ends_with(
                "\\textless{}U+2713\\textgreater{} \\textless{}U+65E5\\textgreater{}\\textless{}U+672C\\textgreater{}"
            ),
            "{e}"
        );
        // Accented Latin and Greek as they are; two CJK labels stay apart.
        assert_eq!(escape("Débian Système Łódź"), "Débian Système Łódź");
        assert_eq!(escape("Ελληνικά"), "Ελληνικά");
        assert_ne!(escape("中文"), escape("日本"));
        assert_eq!(
            escape("\u{5e2}\u{1b}"),
            "\\textless{}U+05E2\\textgreater{}\\textless{}U+001B\\textgreater{}"
        );
        assert!(!escape(&wire::text::hostile_long(2_000)).contains('?'));
    }

    #[test]
    fn a_comment_holds_no_line_end_and_is_bounded() {
        let c = comment("x\r\\input{/etc/hostname}\r\n\u{0}über");
        assert_eq!(c, "x \\input{/etc/hostname}   ?ber");
        let long = comment(&wire::text::hostile_long(100_000));
        assert_eq!(long.len(), COMMENT_MAX_CHARS);
        assert!(long.ends_with("...") && !long.chars().any(|c| c.is_control()));
        let t = Table {
            title: "System under test: a\rb".into(),
            ..sample()
        };
        let first = table(&t, "").lines().next().unwrap_or_default().to_string();
        assert_eq!(
            first,
            "% dualperf table tcp_throughput: System under test: a b"
        );
    }

    #[test]
    fn number_shapes() {
        assert_eq!(number_shape("12.345"), Some((2, 3)));
        assert_eq!(number_shape("-7"), Some((1, 0)));
        assert_eq!(number_shape("< 0.001"), None);
        assert_eq!(number_shape("1e5"), None);
        assert_eq!(number_shape("."), None);
    }
}
