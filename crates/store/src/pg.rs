//! The PostgreSQL side: connecting (URL, TLS by `sslmode`, timeouts, keepalives),
//! reading a column into a [`Value`], and turning the client's errors into
//! [`StoreError`]s that say what to do.
//!
//! `sslmode` follows libpq: `disable` (plain TCP), `prefer` (TLS when the server offers
//! it; the default), `require` (TLS or nothing). As with libpq, `prefer` and `require`
//! encrypt without checking the server's certificate unless `sslrootcert=FILE` names
//! the CA to check it against; `verify-full` checks the certificate and host name
//! against `sslrootcert` or the system's CAs.

use crate::value::Value;
use crate::StoreError;
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

/// How long to wait for a server before saying it cannot be reached (unless the URL
/// sets `connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

const URL_FORM: &str = "the form is postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-full]";

/// Connect to `url` (with its password); `shown` is the URL without it, for messages.
pub(crate) fn connect(url: &str, shown: &str, read_only: bool) -> Result<PgConn, StoreError> {
    let connect_err = |cause: String, advice: &str| StoreError::Connect {
        url: shown.to_string(),
        cause,
        advice: advice.to_string(),
    };
    let (url, extra) = split_extra_params(url);
    let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| {
        connect_err(crate::redact_password(&e.to_string()), URL_FORM)
    })?;
    if config.get_password().is_none() {
        if let Some(pw) = std::env::var_os("PGPASSWORD") {
            config.password(pw.as_encoded_bytes());
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    // A server that vanishes without closing the connection is noticed in about a
    // minute instead of hanging the study.
    config.keepalives(true);
    config.keepalives_idle(Duration::from_secs(30));
    config.keepalives_interval(Duration::from_secs(5));
    config.keepalives_retries(3);
    if config.get_application_name().is_none() {
        config.application_name("dualperf");
    }
    if read_only {
        config.options("-c default_transaction_read_only=on");
    }
    let mut tls = native_tls::TlsConnector::builder();
    if let Some(file) = &extra.root_cert {
        let pem = std::fs::read(file).map_err(|e| {
            connect_err(
                format!("cannot read sslrootcert {file}: {e}"),
                "name a readable PEM file holding the CA certificate",
            )
        })?;
        let cert = native_tls::Certificate::from_pem(&pem).map_err(|e| {
            connect_err(
                format!("sslrootcert {file} is not a PEM certificate: {e}"),
                "name a PEM file holding the CA certificate",
            )
        })?;
        tls.add_root_certificate(cert);
    } else if !extra.verify {
        // libpq's prefer/require: encrypted, the certificate not checked.
        tls.danger_accept_invalid_certs(true);
        tls.danger_accept_invalid_hostnames(true);
    }
    let tls = tls.build().map_err(|e| {
        connect_err(
            format!("cannot set up TLS: {e}"),
            "check the system's TLS library",
        )
    })?;
    let client = config
        .connect(postgres_native_tls::MakeTlsConnector::new(tls))
        .map_err(|e| connect_error(e, shown))?;
    Ok(PgConn::new(client, shown.to_string()))
}

/// Parameters the client library does not know, taken out of the URL.
#[derive(Debug, Default, PartialEq)]
struct Extra {
    root_cert: Option<String>,
    /// `sslmode=verify-ca` or `verify-full`: TLS required, certificate checked.
    verify: bool,
}

/// Also writes the scheme in lower case (the client knows only `postgres://` and
/// `postgresql://`; it would read `POSTGRES://…` as a key-value string, and its error
/// would quote the URL).
fn split_extra_params(url: &str) -> (String, Extra) {
    let mut extra = Extra::default();
    let url = match url.split_once("://") {
        Some((scheme, rest)) => format!("{}://{rest}", scheme.to_ascii_lowercase()),
        None => url.to_string(),
    };
    // The query starts at the first '?' after the credentials, which the client reads
    // up to the first '@' (a '?' in a password is not the query).
    let after_creds = url.find("://").map_or(0, |i| i + 3);
    let after_creds = url[after_creds..]
        .find('@')
        .map_or(after_creds, |at| after_creds + at + 1);
    let Some(q) = url[after_creds..].find('?').map(|q| after_creds + q) else {
        return (url, extra);
    };
    let (base, query) = (&url[..q], &url[q + 1..]);
    let mut kept = Vec::new();
    for pair in query.split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match (k, v) {
            ("sslrootcert", file) => extra.root_cert = Some(crate::target::percent_decode(file)),
            ("sslmode", "verify-ca" | "verify-full") => {
                extra.verify = true;
                kept.push("sslmode=require".to_string());
            }
            _ => kept.push(pair.to_string()),
        }
    }
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (url, extra)
}

/// A failed connection: what happened and what to do.
fn connect_error(e: postgres::Error, shown: &str) -> StoreError {
    let (cause, advice) = if let Some(db) = e.as_db_error() {
        let advice = match db.code().code() {
            "28P01" | "28000" => {
                "the server refused this user or password: check USER and PASSWORD in the URL (or PGPASSWORD), and the server's pg_hba.conf"
            }
            "3D000" => "create the database (createdb NAME) or name an existing one in the URL",
            "53300" => "the server has no free connection slots: raise max_connections or run fewer studies at once",
            "57P03" => "the server is starting up or shutting down: try again in a moment",
            _ => "check the URL and the server's log",
        };
        (db.message().to_string(), advice)
    } else {
        let text = error_text(&e);
        let advice = if text.contains("does not support TLS") {
            "the server does not offer TLS: turn ssl on in its postgresql.conf, or use sslmode=prefer (TLS when offered) or sslmode=disable"
        } else if text.contains("certificate") {
            "the server's certificate is not signed by a CA this host trusts, or does not name this host: give the CA with sslrootcert=FILE, or use sslmode=require (encrypted, certificate not checked)"
        } else if text.contains("TLS") || text.contains("ssl") {
            "the TLS handshake failed: check the server's ssl settings, or use sslmode=disable on a trusted network"
        } else if text.contains("timed out") || text.contains("timeout") {
            "the server did not answer in time: check the host and port, that PostgreSQL runs and listens there (listen_addresses), and any firewall"
        } else {
            "check the host and port, that PostgreSQL runs and listens there (listen_addresses, pg_hba.conf), and any firewall"
        };
        (text, advice)
    };
    StoreError::Connect {
        url: shown.to_string(),
        cause: crate::redact_password(&cause),
        advice: advice.to_string(),
    }
}

/// The error and its causes in one line (the client's Display shows only the first).
fn error_text(e: &postgres::Error) -> String {
    let mut text = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        src = s.source();
    }
    text
}

/// An error from a statement on an open connection.
pub(crate) fn error(e: postgres::Error, url: &str) -> StoreError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        let text = match db.detail() {
            Some(d) => format!("{} ({d})", db.message()),
            None => db.message().to_string(),
        };
        return match code {
            // unique_violation, exclusion_violation
            "23505" | "23P01" => StoreError::Duplicate(text),
            "53100" => StoreError::Full,
            "25006" => StoreError::ReadOnly("write"),
            // admin_shutdown (pg_terminate_backend, server stopped), crash_shutdown.
            "57P01" | "57P02" => StoreError::ConnectionLost {
                url: url.to_string(),
                cause: text,
            },
            _ => StoreError::Postgres(text),
        };
    }
    if e.is_closed() || io_error(&e) {
        return StoreError::ConnectionLost {
            url: url.to_string(),
            cause: error_text(&e),
        };
    }
    StoreError::Postgres(error_text(&e))
}

/// An error from a statement, naming the table and the column it concerns where the
/// server or the client's encoder does not: "(writing campaigns.label)" when the
/// failing parameter is known, "(writing table campaigns: uuid, label, …)" otherwise.
pub(crate) fn statement_error(e: postgres::Error, url: &str, sql: &str) -> StoreError {
    let param = parameter_index(&e);
    match error(e, url) {
        StoreError::Postgres(text) => match statement_target(sql, param) {
            Some(target) => StoreError::Postgres(format!("{text} (writing {target})")),
            None => StoreError::Postgres(text),
        },
        other => other,
    }
}

/// The 1-based parameter a client-side encoding error is about ("error serializing
/// parameter 3": the client counts from 0).
fn parameter_index(e: &postgres::Error) -> Option<usize> {
    let text = e.to_string();
    let rest = text.split("error serializing parameter ").nth(1)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<usize>().ok().map(|i| i + 1)
}

/// What a write statement writes: `table.column` for parameter `param` when the
/// statement says, else the table and its columns. `None` for a read.
fn statement_target(sql: &str, param: Option<usize>) -> Option<String> {
    let words: Vec<&str> = sql.split_whitespace().collect();
    let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
    let at = |w: &str| upper.iter().position(|u| u == w);
    if let Some(i) = at("INTO") {
        let table = words.get(i + 1)?.trim_end_matches('(');
        let open = sql.find('(')?;
        let close = open + sql[open..].find(')')?;
        let columns: Vec<&str> = sql[open + 1..close].split(',').map(str::trim).collect();
        return Some(match param {
            Some(p) if !columns.is_empty() => {
                format!("{table}.{}", columns[(p - 1) % columns.len()])
            }
            _ => format!("table {table}: {}", columns.join(", ")),
        });
    }
    let table = words.get(at("UPDATE")? + 1)?;
    let column = param.and_then(|p| {
        let mark = format!("?{p}");
        let pos = sql.match_indices(&mark).find_map(|(i, _)| {
            let after = sql[i + mark.len()..].chars().next();
            (!after.is_some_and(|c| c.is_ascii_digit())).then_some(i)
        })?;
        let before = sql[..pos].trim_end().strip_suffix('=')?.trim_end();
        before.split_whitespace().last().map(str::to_string)
    });
    Some(match column {
        Some(c) => format!("{table}.{c}"),
        None => format!("table {table}"),
    })
}

fn io_error(e: &postgres::Error) -> bool {
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        if s.is::<std::io::Error>() {
            return true;
        }
        src = s.source();
    }
    false
}

/// Column `i` of a row as a [`Value`], by the column's type.
pub(crate) fn value(row: &postgres::Row, i: usize) -> Result<Value, StoreError> {
    use postgres::types::Type;
    let col = &row.columns()[i];
    let bad = |e: postgres::Error| {
        StoreError::BadValue(format!("column '{}' cannot be read: {e}", col.name()))
    };
    let ty = col.type_();
    Ok(if *ty == Type::INT8 {
        row.try_get::<_, Option<i64>>(i).map_err(bad)?.into()
    } else if *ty == Type::INT4 {
        row.try_get::<_, Option<i32>>(i)
            .map_err(bad)?
            .map(i64::from)
            .into()
    } else if *ty == Type::INT2 {
        row.try_get::<_, Option<i16>>(i)
            .map_err(bad)?
            .map(i64::from)
            .into()
    } else if *ty == Type::BOOL {
        row.try_get::<_, Option<bool>>(i).map_err(bad)?.into()
    } else if *ty == Type::FLOAT8 {
        row.try_get::<_, Option<f64>>(i).map_err(bad)?.into()
    } else if *ty == Type::FLOAT4 {
        row.try_get::<_, Option<f32>>(i)
            .map_err(bad)?
            .map(f64::from)
            .into()
    } else if <&str as postgres::types::FromSql>::accepts(ty) {
        row.try_get::<_, Option<String>>(i)
            .map_err(bad)?
            .map(Value::Text)
            .unwrap_or(Value::Null)
    } else {
        return Err(StoreError::BadValue(format!(
            "column '{}' has PostgreSQL type {ty}, which dualperf does not store; {}",
            col.name(),
            crate::CHANGED_OUTSIDE
        )));
    })
}

/// Prepared statements kept per PostgreSQL connection.
const MAX_PREPARED: usize = 256;

/// A PostgreSQL session: the client (behind a RefCell: reads take `&self`, as with
/// SQLite) and its prepared statements.
pub(crate) struct PgConn {
    pub(crate) client: RefCell<postgres::Client>,
    statements: RefCell<HashMap<String, postgres::Statement>>,
    /// The URL without its password, for messages.
    pub(crate) url: String,
}

impl PgConn {
    pub(crate) fn new(client: postgres::Client, url: String) -> PgConn {
        PgConn {
            client: RefCell::new(client),
            statements: RefCell::new(HashMap::new()),
            url,
        }
    }

    pub(crate) fn statement(&self, sql: &str) -> Result<postgres::Statement, StoreError> {
        if let Some(st) = self.statements.borrow().get(sql) {
            return Ok(st.clone());
        }
        let st = self
            .client
            .borrow_mut()
            .prepare(&dollar_placeholders(sql))
            .map_err(|e| error(e, &self.url))?;
        let mut cache = self.statements.borrow_mut();
        // Multi-row inserts differ by their row count: keep the cache (and the
        // server's prepared statements, closed when dropped) bounded.
        if cache.len() >= MAX_PREPARED {
            cache.clear();
        }
        cache.insert(sql.to_string(), st.clone());
        Ok(st)
    }
}

/// `?1` → `$1` (the statements hold no string literal with a `?`).
fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_params_are_taken_out_and_verify_modes_require_tls() {
        assert_eq!(
            split_extra_params("postgres://u@h/db"),
            ("postgres://u@h/db".to_string(), Extra::default())
        );
        let (url, extra) =
            split_extra_params("postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem");
        assert_eq!(url, "postgres://u@h/db?sslmode=require");
        assert_eq!(
            extra,
            Extra {
                root_cert: Some("/etc/ca.pem".into()),
                verify: true
            }
        );
        let (url, extra) =
            split_extra_params("postgres://u@h/db?sslmode=require&application_name=x");
        assert_eq!(url, "postgres://u@h/db?sslmode=require&application_name=x");
        assert_eq!(extra, Extra::default());
    }

    #[test]
    fn write_statements_name_their_table_and_column() {
        let insert = "INSERT INTO campaigns (uuid, label, created_unix_s)
             VALUES (?1, ?2, ?3) RETURNING id";
        assert_eq!(
            statement_target(insert, Some(2)).as_deref(),
            Some("campaigns.label")
        );
        assert_eq!(
            statement_target(insert, None).as_deref(),
            Some("table campaigns: uuid, label, created_unix_s")
        );
        // A multi-row insert: parameter 5 of a 3-column row is the second column.
        let rows =
            "INSERT INTO host_metadata (host_id, key, value) VALUES (?1, ?2, ?3), (?4, ?5, ?6)";
        assert_eq!(
            statement_target(rows, Some(5)).as_deref(),
            Some("host_metadata.key")
        );
        let update = "UPDATE cells SET target_met = ?3 WHERE campaign_id = ?1 AND cell_index = ?2";
        assert_eq!(
            statement_target(update, Some(3)).as_deref(),
            Some("cells.target_met")
        );
        assert_eq!(
            statement_target(update, None).as_deref(),
            Some("table cells")
        );
        assert_eq!(
            statement_target("SELECT id FROM runs WHERE id = ?1", Some(1)),
            None
        );
    }

    /// Every hostile form of `target::tests`, its host made 127.0.0.1 port 1 (nothing
    /// listens: refused at once): the error names neither the password nor any part of
    /// it. Forms whose misread host would need a name lookup are left out (no traffic
    /// off the loopback); forms the client cannot parse fail before connecting.
    #[test]
    fn a_failed_connection_never_shows_the_password() {
        let mut tried = 0;
        for (given, secrets, _) in crate::target::tests::HOSTILE {
            let url = given
                .replace("db.lab:5433", "db.lab")
                .replace("host=db.lab", "host=127.0.0.1 port=1")
                .replace("db.lab", "127.0.0.1:1");
            let (plain, _) = split_extra_params(&url);
            if let Ok(config) = plain.parse::<postgres::Config>() {
                let loopback = config
                    .get_hosts()
                    .iter()
                    .all(|h| matches!(h, postgres::config::Host::Tcp(name) if name == "127.0.0.1"));
                if !loopback {
                    continue;
                }
            }
            let target = crate::PgUrl::new(&url);
            let e = connect(target.secret(), target.redacted(), false)
                .err()
                .expect("nothing listens on port 1");
            let msg = e.to_string();
            assert!(msg.starts_with("cannot connect"), "{msg}");
            for secret in *secrets {
                assert!(
                    !msg.contains(secret),
                    "{secret:?} in {msg:?} (from {url:?})"
                );
            }
            tried += 1;
        }
        assert!(tried >= 15, "{tried}");
    }

    #[test]
    fn a_question_mark_in_the_password_is_not_the_query() {
        let (url, extra) = split_extra_params(
            "POSTGRES://u:a?sslrootcert=x@h/db?sslmode=verify-full&application_name=y",
        );
        assert_eq!(
            url,
            "postgres://u:a?sslrootcert=x@h/db?sslmode=require&application_name=y"
        );
        assert_eq!(
            extra,
            Extra {
                root_cert: None,
                verify: true
            }
        );
    }

    #[test]
    fn bad_urls_are_a_connect_error_with_the_form() {
        for url in [
            "postgres://u@h/db?sslmode=sometimes",
            "postgres://u@h:notaport/db",
        ] {
            let e = connect(url, url, false).err().unwrap();
            let msg = e.to_string();
            assert!(matches!(e, StoreError::Connect { .. }), "{msg}");
            assert!(msg.contains("postgres://USER"), "{msg}");
        }
    }
}

#[cfg(test)]
mod placeholder_tests {
    #[test]
    fn placeholders_become_dollars() {
        assert_eq!(
            super::dollar_placeholders("SELECT a FROM t WHERE b = ?1 AND c = ?12 OR d ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $12 OR d ?"
        );
    }
}
