//! iperf3's own authentication (3.x, `--username` / `--rsa-public-key-path` on the client,
//! `--rsa-private-key-path` / `--authorized-users-path` on the server), as Debian's 3.12
//! speaks it (docs/iperf3-protocol.md §5.1):
//!
//! * the client writes `user: U\npwd:  P\nts:   T` (T = Unix seconds), encrypts it with
//!   the server's RSA public key using PKCS#1 v1.5 padding, base64-encodes it (one line,
//!   padded) and sends it as `authtoken` in the parameters;
//! * the server decrypts it, refuses a timestamp more than `skew_s` (10) seconds from its
//!   clock, and looks for a line `U,sha256hex("{U}P")` in its users file.
//!
//! Pure functions over bytes and keys; reading files is the caller's (or [`ServerAuth::
//! from_files`]'s). Untrusted input (the token) is bounded before any allocation that
//! depends on it, and the RSA operation runs only on a ciphertext of the key's exact size.

use base64::Engine as _;
use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey};
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
use rsa::traits::PublicKeyParts;
use rsa::{PrivateKey, PublicKey};
use sha2::{Digest, Sha256};
use std::path::Path;

/// iperf3's default `--time-skew-threshold`, seconds.
pub const DEFAULT_SKEW_S: i64 = 10;
/// Largest users file read (a line per user; iperf3 reads lines of up to 1023 bytes).
pub const MAX_USERS_FILE_BYTES: u64 = 1 << 20;
/// Largest PEM key file read.
pub const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;
/// Largest token looked at: base64 of a 16384-bit modulus, the largest key we load.
pub const MAX_TOKEN_CHARS: usize = 4 * (MAX_KEY_BITS / 8).div_ceil(3);
/// Largest RSA modulus accepted for a key, bits (decryption cost grows with its cube).
pub const MAX_KEY_BITS: usize = 16_384;

/// Why a token was not accepted, or a key or users file not loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("no authentication token in the parameters")]
    Missing,
    #[error("the token is not base64 of one RSA block of this key ({0})")]
    Malformed(String),
    #[error("the token does not decrypt to iperf3 credentials")]
    Undecryptable,
    #[error("the token's timestamp {ts} is {skew_s} s from this host's clock (at most {max_s} s allowed; are the clocks set?)")]
    Skew { ts: i64, skew_s: i64, max_s: i64 },
    #[error("user {0:?} is not in the authorized users file or the password is wrong")]
    Denied(String),
    #[error("{0}")]
    Key(String),
    #[error("{0}")]
    Credentials(String),
}

/// What a decrypted token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: String,
    /// Unix seconds at the client when it made the token.
    pub ts: i64,
}

/// The plaintext iperf3 encrypts (`auth_text_format` in iperf_auth.c).
pub fn token_text(username: &str, password: &str, ts: i64) -> String {
    format!("user: {username}\npwd:  {password}\nts:   {ts}")
}

/// Reads the plaintext as iperf3's `sscanf(text, "user: %s\npwd:  %s\nts:   %ld")` does:
/// literals match exactly, whitespace in the format matches any run of whitespace, `%s`
/// takes a run of non-whitespace, `%ld` a leading decimal integer.
pub fn parse_token_text(text: &[u8]) -> Option<Credentials> {
    let text = std::str::from_utf8(text).ok()?;
    let rest = text.strip_prefix("user:")?;
    let (username, rest) = take_word(rest)?;
    let rest = rest.trim_start().strip_prefix("pwd:")?;
    let (password, rest) = take_word(rest)?;
    let rest = rest.trim_start().strip_prefix("ts:")?.trim_start();
    let sign = usize::from(rest.starts_with(['-', '+']));
    let digits = rest[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let ts = rest[..sign + digits].parse::<i64>().ok()?;
    Some(Credentials {
        username: username.to_string(),
        password: password.to_string(),
        ts,
    })
}

/// Skips whitespace, then takes a run of non-whitespace (empty = no match).
fn take_word(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (end > 0).then(|| (&s[..end], &s[end..]))
}

/// The users-file hash of a password: lowercase hex SHA-256 of `{username}password`.
pub fn password_hash(username: &str, password: &str) -> String {
    let digest = Sha256::digest(format!("{{{username}}}{password}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// One `username,hash` line of a users file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizedUser {
    pub username: String,
    pub hash: String,
}

/// Parses a users file as iperf3 does: a line is cut at its first `\r` or `\n`; empty
/// lines, lines without a comma and lines starting with `#` are skipped; the first two
/// comma-separated fields (empty fields skipped, as `strtok` does) are the user and the
/// hash. A line with a user and no hash matches nobody.
pub fn parse_users(text: &str) -> Vec<AuthorizedUser> {
    text.split('\n')
        .map(|l| l.split('\r').next().unwrap_or(""))
        .filter(|l| !l.is_empty() && l.contains(',') && !l.starts_with('#'))
        .filter_map(|l| {
            let mut fields = l.split(',').filter(|f| !f.is_empty());
            let username = fields.next()?.to_string();
            let hash = fields.next()?.to_string();
            Some(AuthorizedUser { username, hash })
        })
        .collect()
}

/// Compares without an early exit, so the time taken does not tell how much matched.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `creds` name a user of `users` with the right password.
pub fn is_authorized(users: &[AuthorizedUser], creds: &Credentials) -> bool {
    let hash = password_hash(&creds.username, &creds.password);
    users
        .iter()
        .filter(|u| u.username == creds.username)
        .fold(false, |ok, u| {
            ok | same_bytes(u.hash.to_ascii_lowercase().as_bytes(), hash.as_bytes())
        })
}

/// Reads a small text file, refusing one larger than `max` bytes.
fn read_bounded(path: &Path, what: &str, max: u64) -> Result<String, AuthError> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| AuthError::Key(format!("cannot open the {what} {}: {e}", path.display())))?;
    let mut text = String::new();
    file.take(max + 1)
        .read_to_string(&mut text)
        .map_err(|e| AuthError::Key(format!("cannot read the {what} {}: {e}", path.display())))?;
    if text.len() as u64 > max {
        return Err(AuthError::Key(format!(
            "the {what} {} is larger than {max} bytes",
            path.display()
        )));
    }
    Ok(text)
}

fn check_key_bits(bits: usize, what: &str) -> Result<(), AuthError> {
    if !(1024..=MAX_KEY_BITS).contains(&bits) {
        return Err(AuthError::Key(format!(
            "the {what} has {bits} bits; use a key of 1024 to {MAX_KEY_BITS} bits (2048 is usual)"
        )));
    }
    Ok(())
}

/// An RSA private key in PEM: PKCS#8 (`BEGIN PRIVATE KEY`, what OpenSSL 3 writes) or
/// PKCS#1 (`BEGIN RSA PRIVATE KEY`). Encrypted keys are refused, as iperf3 cannot use
/// them unattended either.
pub fn private_key_from_pem(pem: &str) -> Result<PrivateKey, AuthError> {
    if pem.contains("ENCRYPTED") {
        return Err(AuthError::Key(
            "the RSA private key is encrypted; write an unencrypted copy \
             (openssl rsa -in KEY -out PLAIN.pem) and keep it readable only by this user"
                .into(),
        ));
    }
    let key = PrivateKey::from_pkcs8_pem(pem)
        .or_else(|_| PrivateKey::from_pkcs1_pem(pem))
        .map_err(|e| AuthError::Key(format!("not an RSA private key in PEM ({e})")))?;
    check_key_bits(key.size() * 8, "RSA private key")?;
    Ok(key)
}

/// An RSA public key in PEM: `BEGIN PUBLIC KEY` (what `openssl rsa -pubout` writes and
/// iperf3 reads) or `BEGIN RSA PUBLIC KEY`.
pub fn public_key_from_pem(pem: &str) -> Result<PublicKey, AuthError> {
    let key = PublicKey::from_public_key_pem(pem)
        .or_else(|_| PublicKey::from_pkcs1_pem(pem))
        .map_err(|e| AuthError::Key(format!("not an RSA public key in PEM ({e})")))?;
    check_key_bits(key.size() * 8, "RSA public key")?;
    Ok(key)
}

/// Unix seconds now (0 if the clock is before 1970).
pub fn unix_now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A warning when group or others may read the private key at `path` (Unix; `None`
/// elsewhere or when it cannot be inspected, which loading then reports).
pub fn private_key_file_warning(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).ok()?.permissions().mode();
        (mode & 0o077 != 0).then(|| {
            format!(
                "warning: the RSA private key {} has mode {:04o}: group/others can read it; run `chmod 600 {}`",
                path.display(),
                mode & 0o7777,
                path.display()
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// What an iperf3 server needs to check tokens.
pub struct ServerAuth {
    key: PrivateKey,
    users: Vec<AuthorizedUser>,
    pub skew_s: i64,
}

impl std::fmt::Debug for ServerAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerAuth")
            .field("key_bits", &(self.key.size() * 8))
            .field("users", &self.users.len())
            .field("skew_s", &self.skew_s)
            .finish()
    }
}

impl ServerAuth {
    pub fn new(key: PrivateKey, users: Vec<AuthorizedUser>) -> ServerAuth {
        ServerAuth {
            key,
            users,
            skew_s: DEFAULT_SKEW_S,
        }
    }

    /// Loads the private key and the users file (read once, at start). A users file
    /// with no user is refused: it would lock everyone out.
    pub fn from_files(key: &Path, users_path: &Path) -> Result<ServerAuth, AuthError> {
        let pem = read_bounded(key, "RSA private key", MAX_KEY_FILE_BYTES)?;
        let key = private_key_from_pem(&pem)?;
        let text = read_bounded(users_path, "authorized users file", MAX_USERS_FILE_BYTES)?;
        let users = parse_users(&text);
        if users.is_empty() {
            return Err(AuthError::Key(format!(
                "the authorized users file {} names no user; add lines \
                 USER,HASH with HASH = sha256 of {{USER}}PASSWORD (echo -n '{{USER}}PASSWORD' | sha256sum)",
                users_path.display()
            )));
        }
        Ok(ServerAuth::new(key, users))
    }

    /// Decrypts and checks a token at Unix time `now_s`; the credentials on success.
    pub fn check(&self, token: Option<&str>, now_s: i64) -> Result<Credentials, AuthError> {
        let creds = decode_token(token.ok_or(AuthError::Missing)?, &self.key)?;
        let skew_s = now_s.saturating_sub(creds.ts);
        if skew_s.saturating_abs() > self.skew_s {
            return Err(AuthError::Skew {
                ts: creds.ts,
                skew_s,
                max_s: self.skew_s,
            });
        }
        if !is_authorized(&self.users, &creds) {
            return Err(AuthError::Denied(creds.username));
        }
        Ok(creds)
    }
}

/// Decrypts a token with `key` and reads the credentials in it.
pub fn decode_token(token: &str, key: &PrivateKey) -> Result<Credentials, AuthError> {
    let k = key.size();
    if token.len() > MAX_TOKEN_CHARS {
        return Err(AuthError::Malformed(format!(
            "{} characters, more than {MAX_TOKEN_CHARS}",
            token.len()
        )));
    }
    let block = base64::engine::general_purpose::STANDARD
        .decode(token.trim())
        .map_err(|e| AuthError::Malformed(e.to_string()))?;
    if block.len() != k {
        return Err(AuthError::Malformed(format!(
            "{} bytes for a {k}-byte key",
            block.len()
        )));
    }
    let text = key
        .pkcs1v15_decrypt(&block)
        .map_err(|_| AuthError::Undecryptable)?;
    parse_token_text(&text).ok_or(AuthError::Undecryptable)
}

/// What an iperf3 client needs to make tokens.
#[derive(Clone)]
pub struct ClientAuth {
    pub username: String,
    password: String,
    key: PublicKey,
}

impl std::fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientAuth")
            .field("username", &self.username)
            .field("key_bits", &(self.key.size() * 8))
            .finish_non_exhaustive()
    }
}

impl ClientAuth {
    /// Credentials for tokens: neither part may be empty or hold whitespace (the
    /// server's `%s` would cut it there), and the text must fit one RSA block.
    pub fn new(username: &str, password: &str, key: PublicKey) -> Result<ClientAuth, AuthError> {
        for (what, v) in [("username", username), ("password", password)] {
            if v.is_empty() || v.contains(char::is_whitespace) || v.contains('\0') {
                return Err(AuthError::Credentials(format!(
                    "the iperf3 {what} must be non-empty, without spaces or control characters"
                )));
            }
        }
        // PKCS#1 v1.5 carries at most k - 11 bytes; the timestamp takes up to 20.
        let longest = token_text(username, password, i64::MIN).len();
        if longest + 11 > key.size() {
            return Err(AuthError::Credentials(format!(
                "the iperf3 username and password are too long for a {}-bit key \
                 ({longest} bytes of {} that fit)",
                key.size() * 8,
                key.size() - 11
            )));
        }
        Ok(ClientAuth {
            username: username.to_string(),
            password: password.to_string(),
            key,
        })
    }

    /// Loads the public key from a PEM file.
    pub fn from_file(username: &str, password: &str, key: &Path) -> Result<ClientAuth, AuthError> {
        let pem = read_bounded(key, "RSA public key", MAX_KEY_FILE_BYTES)?;
        ClientAuth::new(username, password, public_key_from_pem(&pem)?)
    }

    /// A fresh token stamped `ts` (Unix seconds).
    pub fn token(&self, ts: i64) -> Result<String, AuthError> {
        let text = token_text(&self.username, &self.password, ts);
        let block = self
            .key
            .pkcs1v15_encrypt(text.as_bytes())
            .map_err(|e| AuthError::Key(format!("RSA encryption failed: {e}")))?;
        Ok(base64::engine::general_purpose::STANDARD.encode(block))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2048-bit pair made with `openssl genrsa` / `openssl rsa -pubout` (test only).
    const KEY_PEM: &str = include_str!("testdata/test_key.pem");
    const KEY_PKCS1_PEM: &str = include_str!("testdata/test_key_pkcs1.pem");
    const PUB_PEM: &str = include_str!("testdata/test_key.pub.pem");
    /// `user: mario\npwd:  rossi\nts:   1700000000` encrypted by `openssl pkeyutl
    /// -encrypt -pkeyopt rsa_padding_mode:pkcs1` with PUB_PEM, base64 in one line: a
    /// token from another implementation than ours.
    const OPENSSL_TOKEN: &str = include_str!("testdata/token_mario_1700000000.b64");
    /// `echo -n '{mario}rossi' | sha256sum` (the example of iperf3's documentation).
    const MARIO_HASH: &str = "bf7a49a846d44b454a5d11e7acfaf13d138bbe0b7483aa3e050879700572709b";

    fn server() -> ServerAuth {
        let users = parse_users(&format!("# comment\n\nmario,{MARIO_HASH}\r\n"));
        ServerAuth::new(private_key_from_pem(KEY_PEM).unwrap(), users)
    }

    fn client(user: &str, pwd: &str) -> ClientAuth {
        ClientAuth::new(user, pwd, public_key_from_pem(PUB_PEM).unwrap()).unwrap()
    }

    #[test]
    fn the_users_file_hash_is_iperf3s_salted_sha256() {
        assert_eq!(password_hash("mario", "rossi"), MARIO_HASH);
    }

    #[test]
    fn a_token_made_by_openssl_decrypts_to_its_credentials() {
        let creds = decode_token(
            OPENSSL_TOKEN.trim(),
            &private_key_from_pem(KEY_PEM).unwrap(),
        );
        assert_eq!(
            creds,
            Ok(Credentials {
                username: "mario".into(),
                password: "rossi".into(),
                ts: 1_700_000_000
            })
        );
        // Within the skew window of its timestamp it is accepted, outside it is not.
        assert!(server().check(Some(OPENSSL_TOKEN), 1_700_000_010).is_ok());
        assert!(matches!(
            server().check(Some(OPENSSL_TOKEN), 1_700_000_011),
            Err(AuthError::Skew { skew_s: 11, .. })
        ));
        assert!(server().check(Some(OPENSSL_TOKEN), 1_699_999_990).is_ok());
        assert!(server().check(Some(OPENSSL_TOKEN), 1_699_999_989).is_err());
    }

    #[test]
    fn our_tokens_round_trip_and_wrong_credentials_are_denied() {
        let now = unix_now_s();
        let token = client("mario", "rossi").token(now).unwrap();
        assert!(!token.contains('\n'), "one line, as iperf3 writes it");
        assert_eq!(server().check(Some(&token), now).unwrap().username, "mario");
        // The PKCS#1 form of the same key decrypts it too.
        let pkcs1 = private_key_from_pem(KEY_PKCS1_PEM).unwrap();
        assert_eq!(decode_token(&token, &pkcs1).unwrap().ts, now);

        let wrong = client("mario", "luigi").token(now).unwrap();
        assert_eq!(
            server().check(Some(&wrong), now),
            Err(AuthError::Denied("mario".into()))
        );
        let unknown = client("luigi", "rossi").token(now).unwrap();
        assert!(matches!(
            server().check(Some(&unknown), now),
            Err(AuthError::Denied(_))
        ));
        assert_eq!(server().check(None, now), Err(AuthError::Missing));
    }

    #[test]
    fn tokens_that_are_not_one_rsa_block_are_refused_before_decryption() {
        let s = server();
        let now = unix_now_s();
        for bad in ["", "not base64!", "AAAA", &"A".repeat(MAX_TOKEN_CHARS + 4)] {
            assert!(
                matches!(s.check(Some(bad), now), Err(AuthError::Malformed(_))),
                "{bad:.20}"
            );
        }
        // The right size but random: implicit rejection gives bytes that are no token.
        let noise = base64::engine::general_purpose::STANDARD.encode([0x5a; 256]);
        assert!(s.check(Some(&noise), now).is_err());
        for text in wire::text::HOSTILE_CORPUS {
            assert!(s.check(Some(text), now).is_err(), "{text:?}");
        }
    }

    #[test]
    fn token_text_is_read_like_iperf3s_sscanf() {
        let c = parse_token_text(b"user: a\npwd:  b\nts:   -5xyz").unwrap();
        assert_eq!(
            (c.username.as_str(), c.password.as_str(), c.ts),
            ("a", "b", -5)
        );
        assert!(parse_token_text(b"user:a pwd:b ts:7").is_some());
        for bad in [
            &b""[..],
            b"user: \npwd:  b\nts:   1",
            b"usr: a\npwd:  b\nts:   1",
            b"user: a\npwd:  b\nts:   x",
            b"user: a\npwd:  b",
            b"user: a\xff\npwd:  b\nts:   1",
            b" user: a\npwd:  b\nts:   1",
        ] {
            assert_eq!(parse_token_text(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn users_file_lines_are_read_like_iperf3() {
        let users = parse_users("#x,y\n,,a,,h1,extra\nnocomma\nb,\n\r\nc,h3\rjunk\n");
        assert_eq!(
            users,
            vec![
                AuthorizedUser {
                    username: "a".into(),
                    hash: "h1".into()
                },
                AuthorizedUser {
                    username: "c".into(),
                    hash: "h3".into()
                },
            ]
        );
        let c = |u: &str, p: &str| Credentials {
            username: u.into(),
            password: p.into(),
            ts: 0,
        };
        let upper = vec![AuthorizedUser {
            username: "mario".into(),
            hash: MARIO_HASH.to_uppercase(),
        }];
        assert!(is_authorized(&upper, &c("mario", "rossi")));
        assert!(!is_authorized(&upper, &c("Mario", "rossi")));
        assert!(!is_authorized(&[], &c("mario", "rossi")));
    }

    #[test]
    fn client_credentials_are_checked_before_use() {
        let key = || public_key_from_pem(PUB_PEM).unwrap();
        for (u, p) in [
            ("", "x"),
            ("a b", "x"),
            ("a", ""),
            ("a", "p\tw"),
            ("a\0", "x"),
        ] {
            assert!(ClientAuth::new(u, p, key()).is_err(), "{u:?} {p:?}");
        }
        let long = "x".repeat(300);
        let err = ClientAuth::new("u", &long, key()).unwrap_err();
        assert!(
            err.to_string().contains("too long for a 2048-bit key"),
            "{err}"
        );
        assert!(format!("{:?}", client("mario", "rossi")).contains("mario"));
        assert!(!format!("{:?}", client("mario", "rossi")).contains("rossi"));
    }

    #[test]
    fn keys_in_other_shapes_are_refused_with_a_reason() {
        assert!(private_key_from_pem(PUB_PEM).is_err());
        assert!(public_key_from_pem(KEY_PEM).is_err());
        let enc =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n";
        let err = private_key_from_pem(enc).unwrap_err().to_string();
        assert!(err.contains("encrypted"), "{err}");
        for text in wire::text::HOSTILE_CORPUS {
            assert!(private_key_from_pem(text).is_err());
            assert!(public_key_from_pem(text).is_err());
        }
    }

    #[test]
    fn files_are_loaded_bounded_and_an_empty_users_file_is_refused() {
        let dir = std::env::temp_dir().join(format!("dp-iperf3-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("key.pem");
        let users = dir.join("users.csv");
        std::fs::write(&key, KEY_PEM).unwrap();
        std::fs::write(&users, "# nobody\n").unwrap();
        let err = ServerAuth::from_files(&key, &users)
            .unwrap_err()
            .to_string();
        assert!(err.contains("names no user"), "{err}");
        std::fs::write(&users, format!("mario,{MARIO_HASH}\n")).unwrap();
        let s = ServerAuth::from_files(&key, &users).unwrap();
        assert!(format!("{s:?}").contains("key_bits: 2048"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let set = |m| std::fs::set_permissions(&key, std::fs::Permissions::from_mode(m));
            set(0o600).unwrap();
            assert_eq!(private_key_file_warning(&key), None);
            set(0o644).unwrap();
            let w = private_key_file_warning(&key).unwrap();
            assert!(w.contains("mode 0644") && w.contains("chmod 600"), "{w}");
        }
        let big = dir.join("big.pem");
        std::fs::write(&big, vec![b'A'; MAX_KEY_FILE_BYTES as usize + 1]).unwrap();
        let err = ServerAuth::from_files(&big, &users)
            .unwrap_err()
            .to_string();
        assert!(err.contains("larger than"), "{err}");
        let err = ServerAuth::from_files(&dir.join("absent"), &users).unwrap_err();
        assert!(err.to_string().contains("cannot open"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
