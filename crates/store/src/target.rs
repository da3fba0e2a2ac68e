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
            redacted: redact_password(url.trim()),
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

/// `s` with the password of any `scheme://user:password@host` URL in it replaced by
/// `***` (in the authority part, and in a `password=` query parameter). Text that holds
/// no URL comes back unchanged.
pub fn redact_password(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        // The authority ends at the first '/', '?', '#' or whitespace/quote.
        let end = tail
            .find(|c: char| matches!(c, '/' | '?' | '#' | '\'' | '"') || c.is_whitespace())
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match (authority.rfind('@'), authority.find(':')) {
            (Some(at), Some(colon)) if colon < at => {
                out.push_str(&authority[..colon]);
                out.push_str(":***");
                out.push_str(&authority[at..]);
            }
            _ => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    redact_query_password(&out)
}

/// Replaces the value of every `password=` parameter (libpq keyword or URL query).
fn redact_query_password(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let lower = rest.to_ascii_lowercase();
        let Some(i) = lower.find("password=") else {
            out.push_str(rest);
            return out;
        };
        let before_ok = i == 0
            || matches!(
                rest.as_bytes()[i - 1],
                b'?' | b'&' | b' ' | b'\t' | b'\'' | b'"'
            );
        let cut = i + "password=".len();
        out.push_str(&rest[..cut]);
        rest = &rest[cut..];
        if before_ok {
            let end = rest
                .find(|c: char| matches!(c, '&' | '#' | '\'' | '"') || c.is_whitespace())
                .unwrap_or(rest.len());
            out.push_str("***");
            rest = &rest[end..];
        }
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn redaction_of_command_lines() {
        assert_eq!(
            redact_password(
                "dualperf study --db postgres://u:p%40ss@h/db?sslmode=require --sizes 1"
            ),
            "dualperf study --db postgres://u:***@h/db?sslmode=require --sizes 1"
        );
        assert_eq!(
            redact_password("--db 'postgresql://u@h/db?sslmode=require&password=hunter2' -q"),
            "--db 'postgresql://u@h/db?sslmode=require&password=***' -q"
        );
        // No password, no URL, an '@' in a path: unchanged.
        for s in [
            "postgres://u@h/db",
            "dualperf study --db a.db",
            "--db /tmp/a:b@c.db",
            "http://h:8080/x",
        ] {
            assert_eq!(redact_password(s), s);
        }
        // A user:password without '@' is a host:port, kept.
        assert_eq!(
            redact_password("postgres://h:5432/db"),
            "postgres://h:5432/db"
        );
    }
}
