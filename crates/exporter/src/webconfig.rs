//! `--web-config FILE`: TLS and basic authentication with the keys of Prometheus'
//! exporter-toolkit web configuration (`tls_server_config.cert_file` / `key_file` /
//! `min_version`, `basic_auth_users` with bcrypt hashes), written as TOML.
//!
//! TLS is native-tls (OpenSSL on Linux, the system's TLS elsewhere, as the store's
//! PostgreSQL client already uses): it has no client-certificate verification, so
//! `client_auth_type` / `client_ca_file` are refused with a message rather than ignored.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Most users one file may list.
pub const MAX_USERS: usize = 1024;

/// Longest password bcrypt reads: it ignores every byte past the 72nd, so a longer
/// password is refused rather than let in on its first 72 bytes.
pub const MAX_PASSWORD_BYTES: usize = 72;

#[derive(Debug, thiserror::Error)]
pub enum WebConfigError {
    /// The OS's reason is part of the message, not also a `source` (see `ConfigError::Read`).
    #[error("cannot read {what} {path}: {error}")]
    Read {
        what: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("web configuration {path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    tls_server_config: Option<TlsFile>,
    #[serde(default)]
    basic_auth_users: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsFile {
    cert_file: PathBuf,
    key_file: PathBuf,
    #[serde(default)]
    min_version: Option<String>,
    #[serde(default)]
    client_auth_type: Option<String>,
    #[serde(default)]
    client_ca_file: Option<PathBuf>,
}

/// A loaded web configuration.
pub struct WebConfig {
    pub tls: Option<native_tls::TlsAcceptor>,
    pub auth: Option<BasicAuth>,
}

impl WebConfig {
    /// No TLS, no authentication (the default without `--web-config`).
    pub fn none() -> WebConfig {
        WebConfig {
            tls: None,
            auth: None,
        }
    }

    pub fn load(path: &Path) -> Result<WebConfig, WebConfigError> {
        let text = read("web configuration", path)?;
        let invalid = |message: String| WebConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let text = String::from_utf8(text).map_err(|_| invalid("not UTF-8 text".into()))?;
        let file: File = toml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        let tls = file
            .tls_server_config
            .map(|t| tls_acceptor(&t, path))
            .transpose()?;
        if file.basic_auth_users.len() > MAX_USERS {
            return Err(invalid(format!("at most {MAX_USERS} basic_auth_users")));
        }
        for (user, hash) in &file.basic_auth_users {
            if user.contains(':') || user.is_empty() {
                return Err(invalid(format!(
                    "user name '{user}' is empty or has a ':' (basic auth cannot carry it)"
                )));
            }
            // A hash that does not parse would refuse every password: say so now.
            if bcrypt::verify("", hash).is_err() {
                return Err(invalid(format!(
                    "the password of '{user}' is not a bcrypt hash ($2y$10$…); make one with `htpasswd -nBC 10 \"\" | tr -d ':\\n'`"
                )));
            }
        }
        let auth = (!file.basic_auth_users.is_empty()).then(|| BasicAuth {
            users: file.basic_auth_users,
            verified: Mutex::new(BTreeMap::new()),
        });
        Ok(WebConfig { tls, auth })
    }
}

fn read(what: &'static str, path: &Path) -> Result<Vec<u8>, WebConfigError> {
    std::fs::read(path).map_err(|error| WebConfigError::Read {
        what,
        path: path.to_path_buf(),
        error,
    })
}

fn tls_acceptor(t: &TlsFile, path: &Path) -> Result<native_tls::TlsAcceptor, WebConfigError> {
    let invalid = |message: String| WebConfigError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    if t.client_ca_file.is_some()
        || t.client_auth_type
            .as_deref()
            .is_some_and(|a| a != "NoClientCert")
    {
        return Err(invalid(
            "client certificates (client_auth_type, client_ca_file) are not supported; use basic_auth_users over TLS".into(),
        ));
    }
    let min = match t.min_version.as_deref().unwrap_or("TLS12") {
        "TLS10" => native_tls::Protocol::Tlsv10,
        "TLS11" => native_tls::Protocol::Tlsv11,
        "TLS12" => native_tls::Protocol::Tlsv12,
        other => {
            return Err(invalid(format!(
                "min_version '{other}' is not supported: use TLS12 (the default), TLS11 or TLS10"
            )))
        }
    };
    let cert = read("TLS certificate", &t.cert_file)?;
    let key = read("TLS key", &t.key_file)?;
    let id = native_tls::Identity::from_pkcs8(&cert, &key).map_err(|e| {
        invalid(format!(
            "cert_file and key_file must be PEM, the key PKCS#8 (`openssl pkcs8 -topk8 -nocrypt`): {e}"
        ))
    })?;
    native_tls::TlsAcceptor::builder(id)
        .min_protocol_version(Some(min))
        .build()
        .map_err(|e| invalid(format!("cannot set up TLS: {e}")))
}

/// `basic_auth_users`: user → bcrypt hash. A password that verified once is remembered
/// (bcrypt costs tens of milliseconds by design, and Prometheus sends it every scrape).
pub struct BasicAuth {
    users: BTreeMap<String, String>,
    verified: Mutex<BTreeMap<String, String>>,
}

impl BasicAuth {
    /// Whether the header carries a user and the password that already verified for it
    /// (no bcrypt: cheap, never blocks). `false` means "not known yet", not "wrong".
    pub fn remembered(&self, header: Option<&str>) -> bool {
        let Some((user, password)) = header.and_then(basic_credentials) else {
            return false;
        };
        if password.len() > MAX_PASSWORD_BYTES {
            return false;
        }
        self.verified.lock().is_ok_and(|v| {
            v.get(&user)
                .is_some_and(|p| constant_time_eq(p.as_bytes(), password.as_bytes()))
        })
    }

    /// Whether an `Authorization` header value carries a listed user and its password.
    /// Blocking (bcrypt) on a first success or on failure.
    pub fn check(&self, header: Option<&str>) -> bool {
        let Some((user, password)) = header.and_then(basic_credentials) else {
            return false;
        };
        let (user, password) = (user.as_str(), password.as_str());
        if password.len() > MAX_PASSWORD_BYTES {
            // bcrypt would check its first 72 bytes only: whatever followed would pass.
            return false;
        }
        let Some(hash) = self.users.get(user) else {
            // Spend the same work as a known user, so timing does not tell names apart.
            let _ = bcrypt::verify(password, dummy_hash());
            return false;
        };
        if let Ok(v) = self.verified.lock() {
            if v.get(user)
                .is_some_and(|p| constant_time_eq(p.as_bytes(), password.as_bytes()))
            {
                return true;
            }
        }
        let ok = bcrypt::verify(password, hash).unwrap_or(false);
        if ok {
            if let Ok(mut v) = self.verified.lock() {
                v.insert(user.to_string(), password.to_string());
            }
        }
        ok
    }
}

/// The user and password of a `Basic` `Authorization` header value (RFC 7617): base64
/// of UTF-8 `user:password`, the user without a colon. `None` for anything else. Pure:
/// fuzzed as `exporter_request`.
pub fn basic_credentials(header: &str) -> Option<(String, String)> {
    use base64::Engine as _;
    let b64 = header.strip_prefix("Basic ")?;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}

/// A hash of nothing at the usual cost, made once, for unknown users.
fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| bcrypt::hash("", 10).unwrap_or_default())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;

    fn header(user: &str, pw: &str) -> String {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pw}"))
        )
    }

    #[test]
    fn basic_auth_checks_bcrypt_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.toml");
        let hash = bcrypt::hash("s3cret", 4).unwrap();
        std::fs::write(&path, format!("[basic_auth_users]\nalice = \"{hash}\"\n")).unwrap();
        let w = WebConfig::load(&path).unwrap();
        let auth = w.auth.unwrap();
        // Nothing remembered before a check: the server must run bcrypt (off-thread).
        assert!(!auth.remembered(Some(&header("alice", "s3cret"))));
        assert!(auth.check(Some(&header("alice", "s3cret"))));
        // Again, from the remembered success (no bcrypt, so no blocking thread needed).
        assert!(auth.remembered(Some(&header("alice", "s3cret"))));
        assert!(!auth.remembered(Some(&header("alice", "wrong"))));
        assert!(!auth.remembered(Some(&header("bob", "s3cret"))));
        assert!(!auth.remembered(None));
        assert!(auth.check(Some(&header("alice", "s3cret"))));
        assert!(!auth.check(Some(&header("alice", "wrong"))));
        assert!(!auth.check(Some(&header("bob", "s3cret"))));
        assert!(!auth.check(Some("Basic !!!")));
        assert!(!auth.check(Some("Bearer x")));
        assert!(!auth.check(None));
    }

    #[test]
    fn a_password_longer_than_bcrypt_reads_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.toml");
        let first72 = "p".repeat(MAX_PASSWORD_BYTES);
        let hash = bcrypt::hash(&first72, 4).unwrap();
        std::fs::write(&path, format!("[basic_auth_users]\nalice = \"{hash}\"\n")).unwrap();
        let auth = WebConfig::load(&path).unwrap().auth.unwrap();
        // bcrypt itself takes anything after the 72nd byte.
        let longer = format!("{first72}anything");
        assert!(bcrypt::verify(&longer, &hash).unwrap());
        // The exporter does not: 80 bytes are refused, whatever they start with …
        assert!(!auth.check(Some(&header("alice", &longer))));
        assert!(!auth.remembered(Some(&header("alice", &longer))));
        // … also once the 72-byte password verified.
        assert!(auth.check(Some(&header("alice", &first72))));
        assert!(!auth.remembered(Some(&header("alice", &longer))));
        assert!(!auth.check(Some(&header("alice", &longer))));
        // Bytes, not characters: 36 two-byte characters are 72 bytes, 37 are 74.
        let hash = bcrypt::hash("é".repeat(36), 4).unwrap();
        std::fs::write(&path, format!("[basic_auth_users]\nbob = \"{hash}\"\n")).unwrap();
        let auth = WebConfig::load(&path).unwrap().auth.unwrap();
        assert!(auth.check(Some(&header("bob", &"é".repeat(36)))));
        assert!(!auth.check(Some(&header("bob", &"é".repeat(37)))));
    }

    #[test]
    fn web_config_errors_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("web.toml");
        let cases = [
            ("[basic_auth_users]\nalice = \"plain\"", "not a bcrypt hash"),
            (
                "[tls_server_config]\ncert_file = \"/nonexistent.crt\"\nkey_file = \"/k\"",
                "cannot read TLS certificate",
            ),
            (
                "[tls_server_config]\ncert_file = \"a\"\nkey_file = \"b\"\nclient_ca_file = \"c\"",
                "not supported",
            ),
            (
                "[tls_server_config]\ncert_file = \"a\"\nkey_file = \"b\"\nmin_version = \"TLS13\"",
                "min_version",
            ),
            ("colour = 1", "unknown field"),
        ];
        for (text, want) in cases {
            std::fs::write(&path, text).unwrap();
            let e = WebConfig::load(&path)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
