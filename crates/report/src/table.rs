//! A plain table (title, column headers, rows of cells, a note) and its renderings as
//! aligned text, Markdown, CSV and an HTML fragment. Cells that hold numbers keep the
//! full-precision value for CSV beside the rounded text shown elsewhere.

use crate::escape;
use std::borrow::Cow;
use std::fmt::Write as _;
use wire::text::terminal_safe_line;

/// One table cell.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    /// A number: the rounded text to show and the value CSV writes.
    Num {
        text: String,
        value: f64,
    },
}

impl Cell {
    pub fn text(&self) -> &str {
        match self {
            Cell::Text(t) => t,
            Cell::Num { text, .. } => text,
        }
    }
    fn csv(&self) -> Cow<'_, str> {
        match self {
            Cell::Text(t) => escape::csv_cell(t),
            Cell::Num { value, .. } if value.is_finite() => Cow::Owned(format!("{value}")),
            Cell::Num { .. } => Cow::Borrowed(""),
        }
    }
    fn is_num(&self) -> bool {
        matches!(self, Cell::Num { .. })
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.to_string())
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}

/// A cell in Markdown: text through [`escape::markdown`]; a number's text is the
/// report's own ("941.23", "< 0.001", "–"), never stored text, and goes as it is, so a
/// terminal shows "< 0.001" and not "&lt; 0.001" (a `<` before a space or digit opens no
/// HTML in Markdown).
fn markdown_cell(c: &Cell) -> String {
    match c {
        Cell::Num { text, .. } if !text.contains(['|', '\\', '`', '*', '_', '&', '>', '\n']) => {
            text.clone()
        }
        c => escape::markdown(c.text()),
    }
}

/// A table of the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// File-name slug, e.g. `tcp-throughput-sd`.
    pub id: String,
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Shown under the table (method, units, legend of marks).
    pub note: Option<String>,
}

impl Table {
    /// GitHub-flavoured Markdown, title as a level-3 heading.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("### {}\n\n", escape::markdown(&self.title));
        let _ = writeln!(
            out,
            "| {} |",
            self.columns
                .iter()
                .map(|c| escape::markdown(c))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let align: Vec<&str> = (0..self.columns.len())
            .map(|i| {
                if self.rows.iter().any(|r| r.get(i).is_some_and(Cell::is_num)) {
                    "---:"
                } else {
                    "---"
                }
            })
            .collect();
        let _ = writeln!(out, "|{}|", align.join("|"));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(markdown_cell).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if let Some(note) = &self.note {
            let _ = writeln!(out, "\n{}", escape::markdown(note));
        }
        out
    }

    /// RFC 4180 CSV (the `csv` crate): header row, then rows; numbers at full
    /// precision, text cells made safe for spreadsheets ([`escape::csv_cell`]).
    pub fn to_csv(&self) -> String {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(Vec::new());
        let header = self
            .columns
            .iter()
            .map(|c| escape::csv_cell(c).into_owned());
        // Writing to memory cannot fail.
        let _ = w.write_record(header);
        for row in &self.rows {
            let _ = w.write_record(row.iter().map(|c| c.csv().into_owned()));
        }
        let bytes = w.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }

    /// Aligned plain text for a terminal.
    pub fn to_text(&self) -> String {
        // Each cell one line without control characters (the terminal's escaping).
        let line = |s: &str| terminal_safe_line(s).into_owned();
        let ncol = self.columns.len();
        let columns: Vec<String> = self.columns.iter().map(|c| line(c)).collect();
        let rows: Vec<Vec<(String, bool)>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| (line(c.text()), c.is_num())).collect())
            .collect();
        let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
        for row in &rows {
            for (i, (c, _)) in row.iter().enumerate().take(ncol) {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        let pad = |s: &str, w: usize, right: bool| {
            let n = w.saturating_sub(s.chars().count());
            if right {
                format!("{}{s}", " ".repeat(n))
            } else {
                format!("{s}{}", " ".repeat(n))
            }
        };
        let mut out = format!("{}\n", line(&self.title));
        let head: Vec<String> = columns
            .iter()
            .zip(&widths)
            .map(|(c, &w)| pad(c, w, false))
            .collect();
        let _ = writeln!(out, "{}", head.join("  ").trim_end());
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        let _ = writeln!(out, "{}", rule.join("  "));
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|((c, num), &w)| pad(c, w, *num))
                .collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
        if let Some(note) = &self.note {
            let _ = writeln!(out, "{}", wire::text::terminal_safe(note));
        }
        out
    }

    /// An HTML `<table>` fragment with caption; numeric cells carry class `num`.
    pub fn to_html(&self) -> String {
        let mut out = format!(
            "<div class=\"table-wrap\"><table id=\"t-{}\">\n<caption>{}</caption>\n<thead><tr>",
            escape::html(&self.id),
            escape::html(&self.title)
        );
        for c in &self.columns {
            let _ = write!(out, "<th scope=\"col\">{}</th>", escape::html(c));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (i, c) in row.iter().enumerate() {
                let tag = if i == 0 { "th scope=\"row\"" } else { "td" };
                let end = if i == 0 { "th" } else { "td" };
                let class = if c.is_num() { " class=\"num\"" } else { "" };
                let _ = write!(out, "<{tag}{class}>{}</{end}>", escape::html(c.text()));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
        if let Some(note) = &self.note {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", escape::html(note));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        Table {
            id: "t".into(),
            title: "Sample | pipes".into(),
            columns: vec!["size".into(), "a, b".into()],
            rows: vec![vec![
                "128".into(),
                Cell::Num {
                    text: "1.50".into(),
                    value: 1.4999,
                },
            ]],
            note: Some("note <b>".into()),
        }
    }

    #[test]
    fn csv_quotes_and_keeps_precision() {
        assert_eq!(sample().to_csv(), "size,\"a, b\"\r\n128,1.4999\r\n");
    }

    #[test]
    fn markdown_escapes_pipes_and_right_aligns_numbers() {
        let md = sample().to_markdown();
        assert!(md.starts_with("### Sample \\| pipes\n"), "{md}");
        assert!(md.contains("|---|---:|"), "{md}");
    }

    #[test]
    fn html_escapes_text() {
        let html = sample().to_html();
        assert!(html.contains("note &lt;b&gt;"), "{html}");
        assert!(html.contains("<td class=\"num\">1.50</td>"), "{html}");
    }
}
