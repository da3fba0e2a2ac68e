//! Text that crosses a trust boundary. Two jobs, one home each:
//! - **Entry limits** ([`check_name`], [`cap_metadata`]): labels, system names and spec
//!   strings typed by a user, read from a spec file or imported from another host's
//!   database are at most [`MAX_NAME_CHARS`] characters and hold no control
//!   characters; a peer's metadata is capped at [`MAX_META_KEYS`] keys of at most
//!   [`MAX_META_BYTES`] bytes each, and what was cut is recorded.
//! - **The terminal** ([`terminal_safe`]): a peer's metadata, a stored label or an
//!   error message quoting a peer may hold escape sequences ("\x1b[2J" clears the
//!   screen, others retitle the window or rewrite what was printed); this is the one
//!   place they are removed. Every other output format has its own escaping function
//!   in its writer, each tested against [`HOSTILE_CORPUS`].

use std::borrow::Cow;
use std::collections::BTreeMap;

/// The longest label, system name or other user-given name, in characters. Long enough
/// for "Fedora 39 on the lab's Intel X710, kernel 6.5, IPv6 via the 2001:db8:1::/64
/// router"; short enough that a figure, a table header or a CSV row stays a few
/// hundred bytes whatever was typed.
pub const MAX_NAME_CHARS: usize = 256;

/// The most keys kept from one peer's (or host's) metadata map.
pub const MAX_META_KEYS: usize = 64;

/// The longest metadata key or value kept, in bytes (cut at a character boundary).
pub const MAX_META_BYTES: usize = 4096;

/// The metadata key under which [`cap_metadata`] records what it cut.
pub const META_TRUNCATED_KEY: &str = "dualperf.truncated";

/// Why a name was refused at entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{field} is {chars} characters long; at most {max} are allowed", max = MAX_NAME_CHARS)]
    TooLong { field: String, chars: usize },
    #[error("{field} contains the control character U+{code:04X} at character {at}; names may not contain control characters (newline, carriage return, NUL, escape …)")]
    Control { field: String, code: u32, at: usize },
}

/// Checks a user-given name (a label, a system name, a spec string) where it enters:
/// at most [`MAX_NAME_CHARS`] characters, no control character (C0, DEL, C1, and the
/// bidirectional overrides [`terminal_safe`] removes). `field` names it in the error
/// ("--label", "label in spec.toml", "campaign 3's label").
pub fn check_name(field: &str, text: &str) -> Result<(), NameError> {
    if let Some((at, c)) = text
        .chars()
        .enumerate()
        .find(|&(_, c)| !allowed(c) || c == '\n' || c == '\t')
    {
        return Err(NameError::Control {
            field: field.to_owned(),
            code: c as u32,
            at,
        });
    }
    let chars = text.chars().count();
    if chars > MAX_NAME_CHARS {
        return Err(NameError::TooLong {
            field: field.to_owned(),
            chars,
        });
    }
    Ok(())
}

/// `text` cut to at most `max_bytes` bytes at a character boundary, and whether it was.
pub fn cut_to_bytes(text: &str, max_bytes: usize) -> (&str, bool) {
    if text.len() <= max_bytes {
        return (text, false);
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// Caps a metadata map received from a peer or read from another host: keys and values
/// of at most [`MAX_META_BYTES`] bytes, NUL characters replaced by U+FFFD (no store or
/// text format takes them), at most [`MAX_META_KEYS`] keys (the first in key order are
/// kept). When anything was cut, [`META_TRUNCATED_KEY`] says what, for example
/// "2 values cut to 4096 bytes; 10 keys dropped of 74".
pub fn cap_metadata(map: BTreeMap<String, String>) -> BTreeMap<String, String> {
    let total = map.len();
    let mut cut_values = 0usize;
    let mut cut_keys = 0usize;
    let mut had_nul = false;
    let mut out = BTreeMap::new();
    for (k, v) in map.into_iter() {
        if out.len() == MAX_META_KEYS {
            break;
        }
        let (k_cut, kc) = cut_to_bytes(&k, MAX_META_BYTES);
        let (v_cut, vc) = cut_to_bytes(&v, MAX_META_BYTES);
        cut_keys += usize::from(kc);
        cut_values += usize::from(vc);
        had_nul |= k_cut.contains('\0') || v_cut.contains('\0');
        out.insert(
            k_cut.replace('\0', "\u{fffd}"),
            v_cut.replace('\0', "\u{fffd}"),
        );
    }
    let dropped = total - out.len();
    let mut notes = Vec::new();
    if cut_values > 0 {
        notes.push(format!("{cut_values} values cut to {MAX_META_BYTES} bytes"));
    }
    if cut_keys > 0 {
        notes.push(format!("{cut_keys} keys cut to {MAX_META_BYTES} bytes"));
    }
    if dropped > 0 {
        notes.push(format!("{dropped} keys dropped of {total}"));
    }
    if had_nul {
        notes.push("NUL characters replaced by U+FFFD".to_owned());
    }
    if !notes.is_empty() {
        out.insert(META_TRUNCATED_KEY.to_owned(), notes.join("; "));
    }
    out
}

/// Hostile text that every output writer's escaping function is tested against (the
/// same corpus for LaTeX, Markdown, CSV, SVG, HTML and the terminal): control
/// characters (carriage return, newline, NUL, escape, bell, DEL, C1), the markup of each
/// format, spreadsheet formula starts, bidirectional overrides, and a very long string
/// ([`hostile_long`]).
pub const HOSTILE_CORPUS: &[&str] = &[
    "x\r\\input{/etc/hostname}\r",
    "x\n\\immediate\\write18{id}\n",
    "a\u{0}b",
    "\x1b[2J\x1b]0;title\x07",
    "\u{7f}\u{85}\u{9b}31m",
    "<script>alert(1)</script>",
    "\"><img src=x onerror=alert(1)>",
    "]]><!-- --><![CDATA[",
    "&amp; &lt; &#x41;",
    "| pipe | in | table |\n|---|",
    "`code` *em* _u_ [link](javascript:alert(1))",
    "=HYPERLINK(\"http://x\")",
    "+1+1",
    "-2+3",
    "@SUM(A1)",
    "\t=cmd",
    "\r=cmd",
    "\n=cmd",
    " =cmd",
    "＝HYPERLINK(\"http://x\")",
    "＠SUM(A1)",
    "\"quoted\",comma",
    "% comment } { $ # _ ^ ~ \\ &",
    "\\end{document}",
    "x\u{202e}gnp.exe",
    "IPv6 über alles — ∞",
    "Débian Système",
    "中文 עברית",
    "[lab] Debian 12",
    "*starred",
];

/// A very long hostile string for the corpus: `n` characters mixing markup and controls.
pub fn hostile_long(n: usize) -> String {
    "<&\\%\r\n\u{0}=x".chars().cycle().take(n).collect()
}

/// Whether `c` may reach a terminal: not a C0 control (except newline and tab), not
/// DEL, not a C1 control, not a bidirectional override or isolate (which reorder what
/// the reader sees).
fn allowed(c: char) -> bool {
    match c {
        '\n' | '\t' => true,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => false,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => false,
        _ => true,
    }
}

/// `text` without control characters; newlines and tabs are kept (multi-line output).
/// Borrows when there is nothing to remove.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if text.chars().all(allowed) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.chars().filter(|&c| allowed(c)).collect())
    }
}

/// `text` quoted in a one-line message, every character [`terminal_safe`] would remove
/// (and newline and tab) written visibly as its escape (`\u{1b}`, `\n`, `\u{202e}`),
/// so that the reader sees what was typed, and a backslash doubled so that an escape
/// cannot be typed to look like another. Borrows when there is nothing to escape.
pub fn visible(text: &str) -> Cow<'_, str> {
    if text
        .chars()
        .all(|c| allowed(c) && !matches!(c, '\n' | '\t' | '\\'))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if !allowed(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One line of `text` for a table cell or a one-line message: controls removed as by
/// [`terminal_safe`], newlines and tabs become spaces.
pub fn terminal_safe_line(text: &str) -> Cow<'_, str> {
    match terminal_safe(text) {
        Cow::Borrowed(t) if !t.contains(['\n', '\t']) => Cow::Borrowed(t),
        t => Cow::Owned(t.replace(['\n', '\t'], " ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_quotes_show_every_control_as_its_escape() {
        assert!(matches!(visible("tbf:100M über"), Cow::Borrowed(_)));
        assert_eq!(visible("tbf:\x1b[31m"), "tbf:\\u{1b}[31m");
        assert_eq!(visible("a\nb\tc\\d"), "a\\nb\\tc\\\\d");
        assert_eq!(visible("x\u{202e}y\u{85}"), "x\\u{202e}y\\u{85}");
        for h in HOSTILE_CORPUS {
            let v = visible(h);
            assert_eq!(terminal_safe_line(&v), v, "{h:?}");
        }
    }

    #[test]
    fn names_with_controls_or_too_long_are_refused_with_the_field() {
        assert!(check_name("--label", "Fedora 39, kernel 6.5 — über").is_ok());
        let e = check_name("--label", "x\r\\input{/etc/hostname}").unwrap_err();
        assert_eq!(
            e,
            NameError::Control {
                field: "--label".into(),
                code: 0x0d,
                at: 1
            }
        );
        assert!(e.to_string().contains("U+000D"), "{e}");
        for bad in [
            "a\nb",
            "a\tb",
            "a\u{0}b",
            "\x1b[2J",
            "a\u{85}",
            "x\u{202e}y",
        ] {
            assert!(check_name("label", bad).is_err(), "{bad:?}");
        }
        assert!(check_name("label", &"é".repeat(MAX_NAME_CHARS)).is_ok());
        let e = check_name("label", &"é".repeat(MAX_NAME_CHARS + 1)).unwrap_err();
        assert!(e.to_string().contains("257 characters"), "{e}");
        for h in HOSTILE_CORPUS
            .iter()
            .filter(|h| h.chars().any(|c| c.is_control()))
        {
            assert!(check_name("label", h).is_err(), "{h:?}");
        }
    }

    #[test]
    fn metadata_is_capped_and_the_cut_recorded() {
        let mut m = BTreeMap::new();
        m.insert("os.pretty_name".to_owned(), "é".repeat(3_000_000));
        m.insert("nul".to_owned(), "a\u{0}b".to_owned());
        for i in 0..100 {
            m.insert(format!("z{i:03}"), "v".to_owned());
        }
        let capped = cap_metadata(m);
        assert_eq!(capped.len(), MAX_META_KEYS + 1);
        assert!(capped.values().all(|v| v.len() <= MAX_META_BYTES));
        assert!(capped
            .keys()
            .chain(capped.values())
            .all(|t| !t.contains('\0')));
        assert_eq!(
            capped[META_TRUNCATED_KEY],
            "1 values cut to 4096 bytes; 38 keys dropped of 102; NUL characters replaced by U+FFFD"
        );
        assert_eq!(capped["os.pretty_name"].len(), 4096);
        let small: BTreeMap<_, _> = [("a".to_owned(), "b".to_owned())].into();
        assert_eq!(
            cap_metadata(small.clone()),
            small,
            "nothing cut, nothing recorded"
        );
        assert_eq!(cut_to_bytes("aé", 2), ("a", true));
        assert!(hostile_long(10_000).chars().count() == 10_000);
    }

    #[test]
    fn escape_sequences_and_other_controls_are_removed() {
        assert_eq!(terminal_safe("lab\x1b[2J one"), "lab[2J one");
        assert_eq!(terminal_safe("a\x07b\rc\x7fd\u{9b}31me"), "abcd31me");
        assert_eq!(terminal_safe("x\u{202e}gnp.exe"), "xgnp.exe");
        assert_eq!(terminal_safe("two\nlines\tand tab"), "two\nlines\tand tab");
        assert!(matches!(terminal_safe("IPv6 über alles"), Cow::Borrowed(_)));
        assert_eq!(
            terminal_safe_line("a\nb\tc\x1b]0;title\x07"),
            "a b c]0;title"
        );
    }
}
