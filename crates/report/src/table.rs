//! A plain table (title, column headers, rows of cells, a note) and its renderings as
//! aligned text, Markdown, CSV and an HTML fragment. Cells that hold numbers keep the
//! full-precision value for CSV beside the rounded text shown elsewhere.

use std::fmt::Write as _;

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
    fn csv(&self) -> String {
        match self {
            Cell::Text(t) => t.clone(),
            Cell::Num { value, .. } if value.is_finite() => format!("{value}"),
            Cell::Num { .. } => String::new(),
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

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Escape text for HTML element content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

impl Table {
    /// GitHub-flavoured Markdown, title as a level-3 heading.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("### {}\n\n", md_escape(&self.title));
        let _ = writeln!(
            out,
            "| {} |",
            self.columns
                .iter()
                .map(|c| md_escape(c))
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
            let cells: Vec<String> = row.iter().map(|c| md_escape(c.text())).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        if let Some(note) = &self.note {
            let _ = writeln!(out, "\n{note}");
        }
        out
    }

    /// RFC 4180 CSV: header row, then rows; numbers at full precision.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|c| csv_field(c)).collect();
        out.push_str(&header.join(","));
        out.push_str("\r\n");
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| csv_field(&c.csv())).collect();
            out.push_str(&cells.join(","));
            out.push_str("\r\n");
        }
        out
    }

    /// Aligned plain text for a terminal.
    pub fn to_text(&self) -> String {
        let ncol = self.columns.len();
        let mut widths: Vec<usize> = self.columns.iter().map(|c| c.chars().count()).collect();
        for row in &self.rows {
            for (i, c) in row.iter().enumerate().take(ncol) {
                widths[i] = widths[i].max(c.text().chars().count());
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
        let mut out = format!("{}\n", self.title);
        let head: Vec<String> = self
            .columns
            .iter()
            .zip(&widths)
            .map(|(c, &w)| pad(c, w, false))
            .collect();
        let _ = writeln!(out, "{}", head.join("  ").trim_end());
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        let _ = writeln!(out, "{}", rule.join("  "));
        for row in &self.rows {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(c, &w)| pad(c.text(), w, c.is_num()))
                .collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
        if let Some(note) = &self.note {
            let _ = writeln!(out, "{note}");
        }
        out
    }

    /// An HTML `<table>` fragment with caption; numeric cells carry class `num`.
    pub fn to_html(&self) -> String {
        let mut out = format!(
            "<div class=\"table-wrap\"><table id=\"t-{}\">\n<caption>{}</caption>\n<thead><tr>",
            html_escape(&self.id),
            html_escape(&self.title)
        );
        for c in &self.columns {
            let _ = write!(out, "<th scope=\"col\">{}</th>", html_escape(c));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (i, c) in row.iter().enumerate() {
                let tag = if i == 0 { "th scope=\"row\"" } else { "td" };
                let end = if i == 0 { "th" } else { "td" };
                let class = if c.is_num() { " class=\"num\"" } else { "" };
                let _ = write!(out, "<{tag}{class}>{}</{end}>", html_escape(c.text()));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
        if let Some(note) = &self.note {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", html_escape(note));
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
