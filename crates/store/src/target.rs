//! Where the results live: the value of `--db` (or `DUALPERF_DB`).
//!
//! A plain path names an SQLite file, the embedded default. A `postgres://` or
//! `postgresql://` URL names a PostgreSQL database; its password is kept only to
//! connect, never shown: [`DbTarget`]'s `Display` and `Debug` print the URL with the
//! password replaced by `***`.

use std::path::PathBuf;

/// The environment variable read when `--db` is not given.
pub const DB_ENV: &str = "DUALPERF_DB";

/// A parsed `--db` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbTarget {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL.
    Postgres(PgUrl),
}

/// A PostgreSQL URL: the whole of it to connect, and the form without the password
/// for everything shown or stored.
#[derive(Clone, PartialEq, Eq)]
pub struct PgUrl {
    url: String,
    redacted: String,
}

impl PgUrl {
    pub fn new(url: &str) -> PgUrl {
        PgUrl {
            url: url.trim().to_string(),
            redacted: redact_conninfo(url.trim()),
        }
    }

    /// The URL with its password replaced by `***`.
    pub fn redacted(&self) -> &str {
        &self.redacted
    }

    /// The URL as given, password included: only for connecting.
    pub(crate) fn secret(&self) -> &str {
        &self.url
    }
}

impl std::fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgUrl({:?})", self.redacted)
    }
}

/// True when `s` is a PostgreSQL connection URL rather than a file name.
pub fn is_postgres_url(s: &str) -> bool {
    let lower = s.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

impl DbTarget {
    /// Reads a `--db` value. Never fails: what is not a PostgreSQL URL is a file path.
    pub fn parse(value: &std::ffi::OsStr) -> DbTarget {
        match value.to_str() {
            Some(s) if is_postgres_url(s) => DbTarget::Postgres(PgUrl::new(s)),
            _ => DbTarget::Sqlite(PathBuf::from(value)),
        }
    }

    /// The SQLite file, if this names one.
    pub fn sqlite_path(&self) -> Option<&std::path::Path> {
        match self {
            DbTarget::Sqlite(p) => Some(p),
            DbTarget::Postgres(_) => None,
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, DbTarget::Postgres(_))
    }
}

/// An empty SQLite path, as `PathBuf::default()` was.
impl Default for DbTarget {
    fn default() -> DbTarget {
        DbTarget::Sqlite(PathBuf::new())
    }
}

impl From<&str> for DbTarget {
    fn from(s: &str) -> DbTarget {
        DbTarget::parse(std::ffi::OsStr::new(s))
    }
}

/// The file, or the URL without its password.
impl std::fmt::Display for DbTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbTarget::Sqlite(p) => write!(f, "{}", p.display()),
            DbTarget::Postgres(u) => f.write_str(u.redacted()),
        }
    }
}

/// `text` with every PostgreSQL password in it replaced by `***`: the one redaction
/// function for whatever is shown or stored (command lines, `--db` values, errors).
///
/// `text` is read as shell words (as a command line is stored: `'…'` with `'\''`
/// for a quote, `"…"` with backslash escapes, or bare words); a word that holds a
/// connection string is redacted as a whole and written back single-quoted; every
/// other word is kept byte for byte. Within a word, the rules are those of the
/// `postgres` crate's parser (`tokio-postgres` `config.rs`), taken on the safe side:
///
/// - `postgres://` or `postgresql://` (any case): the client reads the credentials up
///   to the first `@` and the password after the first `:` in them. Everything from
///   that `:` to the LAST `@` of the URL is hidden, so that a `@`, `/`, `?`, `#` or `:`
///   typed unencoded in the user or the password is hidden too (an `@` in a query
///   value then hides the host as well: more is hidden, never less).
/// - A `password` or `sslpassword` query parameter (key percent-decoded, any case):
///   its value up to the next `&` (`#` does not end it).
/// - Key-value connection strings (`host=h password='a b\'c'`): the value of the
///   `password` / `sslpassword` keyword, quoted or bare, with backslash escapes.
///
/// It never reads `PGPASSWORD` (a password in the environment is never in the text).
/// Redacting twice changes nothing.
pub fn redact_password(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let ws = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..ws]);
        rest = &rest[ws..];
        if rest.is_empty() {
            break;
        }
        let (raw_len, value) = shell_word(rest);
        let raw = &rest[..raw_len];
        let redacted = redact_conninfo(&value);
        if redacted == value {
            out.push_str(raw);
        } else if redacted.chars().all(is_bare) {
            out.push_str(&redacted);
        } else {
            out.push('\'');
            out.push_str(&redacted.replace('\'', "'\\''"));
            out.push('\'');
        }
        rest = &rest[raw_len..];
    }
    out
}

/// Characters a shell word needs no quotes for (as the stored command line quotes).
fn is_bare(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_./=,:+@%*".contains(c)
}

/// The shell word at the start of `s` (no leading whitespace): its length in `s` and
/// its value. An unclosed quote is taken as a literal character.
fn shell_word(s: &str) -> (usize, String) {
    let mut value = String::new();
    let mut chars = s.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            return (i, value);
        }
        chars.next();
        match c {
            '\'' if s[i + 1..].contains('\'') => {
                for (_, q) in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    value.push(q);
                }
            }
            '"' if closing_double_quote(&s[i + 1..]).is_some() => {
                while let Some((_, q)) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => {
                            if let Some((_, e)) = chars.next() {
                                value.push(e);
                            }
                        }
                        _ => value.push(q),
                    }
                }
            }
            '\\' => {
                if let Some((_, e)) = chars.next() {
                    value.push(e);
                }
            }
            _ => value.push(c),
        }
    }
    (s.len(), value)
}

/// Where the `"` closing a double-quoted string starts in `s`, past backslash escapes.
fn closing_double_quote(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// One connection string (or a word holding one, as `--db=postgres://…`), redacted.
fn redact_conninfo(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some((start, prefix_len)) = find_url_prefix(rest) {
        out.push_str(&rest[..start + prefix_len]);
        let url = &rest[start + prefix_len..];
        // The URL runs to the next URL, or to the end of the word.
        let end = find_url_prefix(url).map_or(url.len(), |(i, _)| i);
        out.push_str(&redact_url_body(&url[..end]));
        rest = &url[end..];
    }
    out.push_str(rest);
    redact_keywords(&out)
}

/// The first `postgres://` or `postgresql://` in `s`, any case: (offset, length).
fn find_url_prefix(s: &str) -> Option<(usize, usize)> {
    let lower = s.to_ascii_lowercase();
    let i = lower.find("postgres")?;
    let after = &lower[i + "postgres".len()..];
    if after.starts_with("://") {
        Some((i, "postgres://".len()))
    } else if after.starts_with("ql://") {
        Some((i, "postgresql://".len()))
    } else {
        let skip = i + "postgres".len();
        find_url_prefix(&s[skip..]).map(|(j, n)| (skip + j, n))
    }
}

/// A URL after its `scheme://`: the password in the credentials and in the query hidden.
fn redact_url_body(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let rest = match body.rfind('@') {
        Some(at) => {
            let creds = &body[..at];
            match creds.find(':') {
                Some(colon) => {
                    out.push_str(&creds[..colon]);
                    out.push_str(":***");
                }
                None => out.push_str(creds),
            }
            out.push('@');
            &body[at + 1..]
        }
        None => body,
    };
    let Some(q) = rest.find('?') else {
        out.push_str(rest);
        return out;
    };
    out.push_str(&rest[..=q]);
    // As the client reads parameters: key up to '=', value up to '&'.
    let mut params = &rest[q + 1..];
    while !params.is_empty() {
        let Some(eq) = params.find('=') else {
            out.push_str(params);
            break;
        };
        let key = &params[..eq];
        let value_end = params[eq + 1..]
            .find('&')
            .map_or(params.len(), |i| eq + 1 + i);
        out.push_str(&params[..=eq]);
        if is_password_key(&percent_decode(key)) {
            out.push_str("***");
        } else {
            out.push_str(&params[eq + 1..value_end]);
        }
        out.push_str(&params[value_end..(value_end + 1).min(params.len())]);
        params = &params[(value_end + 1).min(params.len())..];
    }
    out
}

fn is_password_key(key: &str) -> bool {
    key.eq_ignore_ascii_case("password") || key.eq_ignore_ascii_case("sslpassword")
}

/// The value of every `password` / `sslpassword` keyword of a key-value connection
/// string (`keyword = value`, the value bare or single-quoted, backslash escapes; a
/// keyword starts the text or follows whitespace, a quote or `=`, as in `--db=…`).
fn redact_keywords(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let b = s.as_bytes();
    while i < b.len() {
        let at_boundary =
            i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r' | b'\'' | b'"' | b'=');
        let key_len = if !at_boundary {
            0
        } else if starts_with_ci(&s[i..], "sslpassword") {
            "sslpassword".len()
        } else if starts_with_ci(&s[i..], "password") {
            "password".len()
        } else {
            0
        };
        if key_len == 0 {
            let c = s[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&s[i..i + c]);
            i += c;
            continue;
        }
        let mut j = i + key_len;
        while j < b.len() && (b[j] as char).is_ascii_whitespace() {
            j += 1;
        }
        if j >= b.len() || b[j] != b'=' {
            out.push_str(&s[i..i + key_len]);
            i += key_len;
            continue;
        }
        j += 1;
        while j < b.len() && (b[j] as char).is_ascii_whitespace() {
            j += 1;
        }
        out.push_str(&s[i..j]);
        let value_end = keyword_value_end(&s[j..]);
        out.push_str("***");
        i = j + value_end;
    }
    out
}

/// The length of a key-value connection string's value at the start of `s`.
fn keyword_value_end(s: &str) -> usize {
    let b = s.as_bytes();
    let quoted = b.first() == Some(&b'\'');
    let mut i = usize::from(quoted);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'\'' if quoted => return i + 1,
            c if !quoted && (c as char).is_ascii_whitespace() => return i,
            _ => i += 1,
        }
    }
    b.len()
}

fn starts_with_ci(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// `%XX` decoded (invalid escapes kept as they are; invalid UTF-8 replaced).
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn paths_stay_sqlite() {
        for p in ["dualperf.db", "/tmp/x.db", "postgres.db", "./postgres:/x"] {
            assert_eq!(
                DbTarget::parse(OsStr::new(p)),
                DbTarget::Sqlite(PathBuf::from(p)),
                "{p}"
            );
        }
    }

    #[test]
    fn urls_are_postgres_and_redacted() {
        let t = DbTarget::parse(OsStr::new("postgres://alice:s3cret@db.lab:5433/perf"));
        let DbTarget::Postgres(url) = &t else {
            panic!("{t:?}")
        };
        assert_eq!(url.redacted(), "postgres://alice:***@db.lab:5433/perf");
        assert_eq!(url.secret(), "postgres://alice:s3cret@db.lab:5433/perf");
        for shown in [t.to_string(), format!("{t:?}")] {
            assert!(!shown.contains("s3cret"), "{shown}");
            assert!(shown.contains("alice:***@db.lab"), "{shown}");
        }
        assert!(t.sqlite_path().is_none());
        assert!(matches!(
            DbTarget::parse(OsStr::new("POSTGRESQL://bob@h/d")),
            DbTarget::Postgres(_)
        ));
    }

    /// Every form the client accepts, with the password in the places that broke the
    /// old rule: (connection string, what must be hidden, what is shown).
    pub(crate) const HOSTILE: &[(&str, &[&str], &str)] = &[
        (
            "postgres://u:se/cr3t@db.lab/perf",
            &["se/cr3t", "cr3t"],
            "postgres://u:***@db.lab/perf",
        ),
        (
            "postgres://u:se#cr3t@db.lab/perf",
            &["se#cr3t", "cr3t"],
            "postgres://u:***@db.lab/perf",
        ),
        (
            "postgres://u:se?cr3t@db.lab/perf?sslmode=disable",
            &["se?cr3t", "cr3t"],
            "postgres://u:***@db.lab/perf?sslmode=disable",
        ),
        (
            "postgres://u:se:cr3t@db.lab/perf",
            &["se:cr3t", "cr3t"],
            "postgres://u:***@db.lab/perf",
        ),
        (
            "postgres://u:s3%2Fcr%40t%3F@db.lab:5433/perf",
            &["s3%2Fcr%40t%3F", "cr%40t"],
            "postgres://u:***@db.lab:5433/perf",
        ),
        (
            "postgresql://u:se@cr3t@db.lab/perf",
            &["se@cr3t", "cr3t"],
            "postgresql://u:***@db.lab/perf",
        ),
        (
            "postgres://me@corp:cr3t@db.lab/perf",
            &["cr3t"],
            "postgres://me@corp:***@db.lab/perf",
        ),
        (
            "postgres://u%3Ax:se/cr3t@db.lab/perf",
            &["cr3t"],
            "postgres://u%3Ax:***@db.lab/perf",
        ),
        (
            "postgres://:cr3t@db.lab/perf",
            &["cr3t"],
            "postgres://:***@db.lab/perf",
        ),
        (
            "POSTGRESQL://u:cr3t@db.lab/perf",
            &["cr3t"],
            "POSTGRESQL://u:***@db.lab/perf",
        ),
        (
            "postgres://u:cr3t@h1:5432,h2:5433,[::1]:5434/perf?target_session_attrs=read-write",
            &["cr3t"],
            "postgres://u:***@h1:5432,h2:5433,[::1]:5434/perf?target_session_attrs=read-write",
        ),
        (
            "postgres://u:a b#cr3t@db.lab/perf",
            &["a b", "cr3t"],
            "postgres://u:***@db.lab/perf",
        ),
        (
            "postgres://u@db.lab/perf?sslmode=require&password=se#cr3t",
            &["se#cr3t", "cr3t"],
            "postgres://u@db.lab/perf?sslmode=require&password=***",
        ),
        (
            "postgres://u@db.lab/perf?password=se/cr3t?x&application_name=dp",
            &["cr3t"],
            "postgres://u@db.lab/perf?password=***&application_name=dp",
        ),
        (
            "postgres://u@db.lab/perf?pass%77ord=cr3t&sslmode=disable",
            &["cr3t"],
            "postgres://u@db.lab/perf?pass%77ord=***&sslmode=disable",
        ),
        (
            "postgres://u@db.lab/perf?PASSWORD=cr3t",
            &["cr3t"],
            "postgres://u@db.lab/perf?PASSWORD=***",
        ),
        (
            "postgres://u@db.lab/perf?sslpassword=cr3t",
            &["cr3t"],
            "postgres://u@db.lab/perf?sslpassword=***",
        ),
        (
            "postgres://u:cr3t@db.lab/perf?password=k3y",
            &["cr3t", "k3y"],
            "postgres://u:***@db.lab/perf?password=***",
        ),
        (
            "postgres://db.lab/perf?user=u&password=cr3t",
            &["cr3t"],
            "postgres://db.lab/perf?user=u&password=***",
        ),
        // An '@' after the host hides the host too: more than the password, never less.
        (
            "postgres://u:cr3t@db.lab/perf?application_name=me@box",
            &["cr3t"],
            "postgres://u:***@box",
        ),
        (
            "host=db.lab user=u password=cr3t dbname=perf",
            &["cr3t"],
            "host=db.lab user=u password=*** dbname=perf",
        ),
        (
            "host=db.lab password = 'se cr\\'3t' dbname=perf",
            &["se cr", "3t"],
            "host=db.lab password = *** dbname=perf",
        ),
        (
            "password=se\\ cr3t host=db.lab",
            &["se\\ cr3t", "cr3t"],
            "password=*** host=db.lab",
        ),
        (
            "host=db.lab sslpassword='k3y phrase' PASSWORD=cr3t",
            &["k3y", "phrase", "cr3t"],
            "host=db.lab sslpassword=*** PASSWORD=***",
        ),
    ];

    /// The same form shell-quoted as the stored command line quotes a word.
    fn shell_quoted(s: &str) -> String {
        format!("'{}'", s.replace('\'', "'\\''"))
    }

    #[test]
    fn every_form_of_password_is_hidden_and_the_rest_kept() {
        for (given, secrets, shown) in HOSTILE {
            let url = PgUrl::new(given);
            assert_eq!(url.redacted(), *shown, "{given}");
            assert_eq!(redact_conninfo(shown), *shown, "redacting twice: {given}");
            for line in [
                format!("dualperf study --db {} --sizes 64", shell_quoted(given)),
                format!(
                    "dualperf study \"--db={}\" --sizes 64",
                    given.replace('\\', "\\\\").replace('"', "\\\"")
                ),
            ] {
                let out = redact_password(&line);
                for secret in *secrets {
                    assert!(
                        !out.contains(secret),
                        "{secret:?} in {out:?} (from {line:?})"
                    );
                }
                assert!(out.starts_with("dualperf study "), "{out}");
                assert!(out.ends_with(" --sizes 64"), "{out}");
                assert_eq!(redact_password(&out), out, "redacting twice: {line}");
                // What is shown is the connection string without the secret.
                let middle = &out["dualperf study ".len()..out.len() - " --sizes 64".len()];
                let (_, word) = shell_word(middle.strip_prefix("--db ").unwrap_or(middle));
                assert!(word.ends_with(shown), "{word} / {shown}");
            }
        }
    }

    #[test]
    fn redaction_of_command_lines() {
        assert_eq!(
            redact_password("dualperf study --db postgres://u:p%40ss@h/db --sizes 1"),
            "dualperf study --db postgres://u:***@h/db --sizes 1"
        );
        assert_eq!(
            redact_password("--db 'postgresql://u@h/db?sslmode=require&password=hunter2' -q"),
            "--db 'postgresql://u@h/db?sslmode=require&password=***' -q"
        );
        assert_eq!(
            redact_password("dualperf study --db 'postgres://u:it'\\''s@h/db' -q"),
            "dualperf study --db postgres://u:***@h/db -q"
        );
        // No password, no URL, an '@' in a path, words that only look alike: unchanged.
        for s in [
            "postgres://u@h/db",
            "postgres://h:5432/db",
            "postgres://h/db?application_name=a:b",
            "dualperf study --db a.db",
            "--db /tmp/a:b@c.db",
            "http://u:p@h:8080/x",
            "--label password --db my_password=1.db",
            "the server's certificate isn't trusted",
            "host=h port=5432",
        ] {
            assert_eq!(redact_password(s), s);
        }
    }
}
