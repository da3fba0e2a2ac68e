//! Text from the database (labels, system names, metadata, failure reasons) reaches
//! every file the report and the export write; each format has its one escaping
//! function, here or in its writer, and each is tested against
//! [`crate::text::HOSTILE_CORPUS`]. Here, below both the report and the application
//! layer, so that the report's tables and `dualperf export` neutralise text the same way:
//!
//! | format | function |
//! | --- | --- |
//! | Markdown | [`markdown`] |
//! | CSV | [`csv_cell`] (spreadsheet formulas neutralised) |
//! | HTML | [`html`] |
//! | SVG | [`svg`] |
//! | LaTeX | `report::latex::escape` (text), `report::latex::comment` (a `%` comment) |
//! | terminal | [`crate::text::terminal_safe`] |
//!
//! None lets a control character through that its format would act on: a newline in a
//! Markdown cell would end the table row, a NUL makes an SVG invalid XML, an escape
//! sequence in a CSV file reaches the terminal of whoever runs `cat`.

use crate::text::{terminal_safe, terminal_safe_line};
use std::borrow::Cow;

/// `s` for Markdown text and table cells, one line: controls removed (newlines and tabs
/// become spaces), Markdown punctuation backslash-escaped (no emphasis, code span or
/// link can start, a `|` does not end a cell), and `<`, `>`, `&` as entities (no raw
/// HTML or autolink, no entity of the input's own).
pub fn markdown(s: &str) -> String {
    let line = terminal_safe_line(s);
    let mut out = String::with_capacity(line.len() + 8);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' | '|' | '`' | '*' | '_' => {
                out.push('\\');
                out.push(c);
            }
            // "[text](url)", "[text][ref]" and "[ref]: url" need a "]" followed by
            // one of these; "95% CI [1.2, 3.4]" stays as it reads.
            ']' if matches!(chars.peek(), Some('(' | '[' | ':')) => out.push_str("\\]"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` for HTML element content and attribute values: `& < > " '` as entities, control
/// characters and bidirectional overrides removed, newlines and tabs as spaces.
pub fn html(s: &str) -> String {
    markup(s)
}

/// `s` for SVG (XML) text and attribute values: as [`html`]; the characters XML 1.0
/// forbids (NUL and the other C0 controls) never reach the file, so every figure parses.
pub fn svg(s: &str) -> String {
    markup(s)
}

fn markup(s: &str) -> String {
    let line = terminal_safe_line(s);
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Not a control, but not allowed in XML either.
            '\u{fffe}' | '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

/// Whether `s` is a plain number a spreadsheet reads as a value ("-12.5", "3e-4").
fn is_plain_number(s: &str) -> bool {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && body.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Whether a spreadsheet may read a cell starting with `t` as a formula: `=`, `+`, `-`,
/// `@`, their full-width (`＝`, `＋`, `－`, `＠`) and small (`﹦`, `﹢`, `﹣`, `﹫`) forms,
/// which spreadsheets in East Asian locales fold to ASCII, and any leading white space
/// (space, tab, carriage return, newline, the ideographic space), which a spreadsheet
/// may skip before reading the formula behind it.
fn starts_formula(t: &str) -> bool {
    t.starts_with(|c: char| {
        matches!(
            c,
            '=' | '+' | '-' | '@' | '＝' | '＋' | '－' | '＠' | '﹦' | '﹢' | '﹣' | '﹫'
        ) || c.is_whitespace()
    })
}

/// A text cell of a CSV file, safe to open in a spreadsheet (OWASP, "CSV Injection"):
/// control characters other than newline and tab removed, and a cell that starts with
/// a formula character or white space (see [`starts_formula`]) prefixed with `'` so
/// that it is shown as text, not run as a formula. A plain number ("-12.5") is left as
/// it is. Quoting is the CSV writer's (the `csv` crate). `dualperf export --raw-text`
/// skips this.
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    // Controls go first, so what follows a removed carriage return is checked too.
    let clean = terminal_safe(s);
    if starts_formula(&clean) && !is_plain_number(&clean) {
        return Cow::Owned(format!("'{clean}"));
    }
    clean
}

/// `s` cut to at most `max_chars` characters, ending with "…" when it was cut: what a
/// figure draws of a label, whatever its length.
pub fn truncate_chars(s: &str, max_chars: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max_chars) {
        None => Cow::Borrowed(s),
        Some(_) => {
            let keep = max_chars.saturating_sub(1);
            let end = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
            Cow::Owned(format!("{}…", &s[..end]))
        }
    }
}

/// A row (any `Serialize` struct) whose text fields are written through [`csv_cell`]
/// and whose numbers, booleans and empty options are untouched: what `dualperf export`
/// hands the `csv` crate, so that its cells are neutralised by the same function as
/// the report's tables.
pub struct CsvSafe<'a, T: ?Sized>(pub &'a T);

impl<T: serde::Serialize + ?Sized> serde::Serialize for CsvSafe<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(CsvSafeSer(s))
    }
}

/// The serializer behind [`CsvSafe`]: strings neutralised, structs' fields wrapped,
/// everything else passed through.
struct CsvSafeSer<S>(S);

/// A struct's fields, each wrapped in [`CsvSafe`].
struct CsvSafeStruct<S>(S);

impl<S: serde::ser::SerializeStruct> serde::ser::SerializeStruct for CsvSafeStruct<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_field<T: serde::Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S::Error> {
        self.0.serialize_field(key, &CsvSafe(value))
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

macro_rules! pass {
    ($($name:ident($t:ty)),* $(,)?) => {
        $(fn $name(self, v: $t) -> Result<S::Ok, S::Error> { self.0.$name(v) })*
    };
}

impl<S: serde::Serializer> serde::Serializer for CsvSafeSer<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = S::SerializeSeq;
    type SerializeTuple = S::SerializeTuple;
    type SerializeTupleStruct = S::SerializeTupleStruct;
    type SerializeTupleVariant = S::SerializeTupleVariant;
    type SerializeMap = S::SerializeMap;
    type SerializeStruct = CsvSafeStruct<S::SerializeStruct>;
    type SerializeStructVariant = S::SerializeStructVariant;

    pass!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str),
    );
    fn serialize_char(self, v: char) -> Result<S::Ok, S::Error> {
        self.0.serialize_str(&csv_cell(v.encode_utf8(&mut [0; 4])))
    }
    fn serialize_str(self, v: &str) -> Result<S::Ok, S::Error> {
        self.0.serialize_str(&csv_cell(v))
    }
    fn serialize_none(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_none()
    }
    fn serialize_some<T: serde::Serialize + ?Sized>(self, v: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&CsvSafe(v))
    }
    fn serialize_unit(self) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_unit_variant(name, index, variant)
    }
    fn serialize_newtype_struct<T: serde::Serialize + ?Sized>(
        self,
        name: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &CsvSafe(v))
    }
    fn serialize_newtype_variant<T: serde::Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0
            .serialize_newtype_variant(name, index, variant, &CsvSafe(v))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<S::SerializeSeq, S::Error> {
        self.0.serialize_seq(len)
    }
    fn serialize_tuple(self, len: usize) -> Result<S::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len)
    }
    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<S::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len)
    }
    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<S::SerializeTupleVariant, S::Error> {
        self.0.serialize_tuple_variant(name, index, variant, len)
    }
    fn serialize_map(self, len: Option<usize>) -> Result<S::SerializeMap, S::Error> {
        self.0.serialize_map(len)
    }
    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        self.0.serialize_struct(name, len).map(CsvSafeStruct)
    }
    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<S::SerializeStructVariant, S::Error> {
        self.0.serialize_struct_variant(name, index, variant, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::{hostile_long, HOSTILE_CORPUS};

    fn corpus() -> Vec<String> {
        HOSTILE_CORPUS
            .iter()
            .map(|s| s.to_string())
            .chain([hostile_long(10_000)])
            .collect()
    }

    #[test]
    fn markdown_is_one_line_without_raw_markup() {
        for s in corpus() {
            let m = markdown(&s);
            assert!(!m.chars().any(char::is_control), "{s:?} → {m:?}");
            assert!(!m.contains('<') && !m.contains('>'), "{s:?} → {m:?}");
            // Every `|` is escaped: it cannot end a table cell.
            let unescaped = m
                .char_indices()
                .filter(|&(i, c)| c == '|' && !m[..i].ends_with('\\'))
                .count();
            assert_eq!(unescaped, 0, "{s:?} → {m:?}");
        }
        assert_eq!(
            markdown("a|b\nc <d> & e_f"),
            "a\\|b c &lt;d&gt; &amp; e\\_f"
        );
        assert_eq!(markdown("[x](javascript:1)"), "[x\\](javascript:1)");
        assert_eq!(markdown("CI [1, 2]; [r]: u"), "CI [1, 2]; [r\\]: u");
    }

    #[test]
    fn html_and_svg_have_no_markup_and_no_xml_illegal_character() {
        for s in corpus() {
            for e in [html(&s), svg(&s)] {
                assert!(!e.contains(['<', '>', '"', '\'']), "{s:?} → {e:?}");
                assert!(!e.chars().any(char::is_control), "{s:?} → {e:?}");
                // Every `&` starts one of our entities.
                for (i, _) in e.match_indices('&') {
                    let rest = &e[i..];
                    assert!(
                        ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                            .iter()
                            .any(|ent| rest.starts_with(ent)),
                        "{s:?} → {e:?}"
                    );
                }
            }
        }
        assert_eq!(html("a\u{0}b<"), "ab&lt;");
    }

    #[test]
    fn csv_cells_that_start_a_formula_are_neutralised_and_numbers_are_not() {
        for (s, want) in [
            ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"),
            ("+1+1", "'+1+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=cmd", "'\t=cmd"),
            ("\r=cmd", "'=cmd"),
            ("\x1b=x", "'=x"),
            ("-12.5", "-12.5"),
            ("+3e-4", "+3e-4"),
            ("-inf", "'-inf"),
            ("Linux 6.8", "Linux 6.8"),
            ("a\u{0}b", "ab"),
            ("\n=cmd", "'\n=cmd"),
            (" =cmd", "' =cmd"),
            ("\u{3000}=cmd", "'\u{3000}=cmd"),
            ("＝HYPERLINK(\"http://x\")", "'＝HYPERLINK(\"http://x\")"),
            ("＋1＋1", "'＋1＋1"),
            ("－2＋3", "'－2＋3"),
            ("＠SUM(A1)", "'＠SUM(A1)"),
            ("﹦1", "'﹦1"),
            ("Débian ＝ 1", "Débian ＝ 1"),
        ] {
            assert_eq!(csv_cell(s), want, "{s:?}");
        }
        for s in corpus() {
            let c = csv_cell(&s);
            assert!(
                !c.starts_with(|c: char| "=+-@＝＋－＠﹦﹢﹣﹫".contains(c) || c.is_whitespace()),
                "{s:?}"
            );
            assert!(
                !c.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
                "{s:?}"
            );
        }
    }

    #[test]
    fn truncation_keeps_short_text_and_ends_long_text_with_an_ellipsis() {
        assert!(matches!(truncate_chars("abc", 3), Cow::Borrowed("abc")));
        assert_eq!(truncate_chars("abcd", 3), "ab…");
        assert_eq!(truncate_chars("ééééé", 4), "ééé…");
        assert_eq!(
            truncate_chars(&hostile_long(1_000_000), 64).chars().count(),
            64
        );
    }

    #[test]
    fn a_csv_safe_row_neutralises_its_text_and_keeps_its_numbers() {
        #[derive(serde::Serialize)]
        struct Row<'a> {
            label: &'a str,
            value: Option<f64>,
            reason: Option<&'a str>,
            n: i64,
        }
        let row = Row {
            label: "=1+1",
            value: Some(-2.5),
            reason: Some("@x"),
            n: -3,
        };
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.serialize(CsvSafe(&row)).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text, "'=1+1,-2.5,'@x,-3\n");
    }
}
