//! Text from the network or from a results database on its way to a terminal. A peer's
//! metadata, a stored label or an error message quoting a peer may hold escape
//! sequences ("\x1b[2J" clears the screen, others retitle the window or rewrite what
//! was printed); [`terminal_safe`] is the one place they are removed.

use std::borrow::Cow;

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
