//! Pre-shared-key authentication primitives: an HMAC-SHA256 (RFC 2104, FIPS 180-4)
//! challenge-response with mutual proofs, and the per-session token that binds data
//! streams and datagrams to an authenticated control session. The key never crosses
//! the wire: only fresh nonces and HMAC outputs do.
//!
//! This module draws no random numbers: callers pass the nonces. The engine must fill
//! them from the OS (`getrandom::fill`, i.e. getrandom(2)), one fresh nonce per side per
//! connection; a predictable or repeated server nonce allows replaying a recorded client
//! proof. The only I/O here is [`Psk::load`] / [`psk_file_warning`], which read the key
//! file the user named (the rest of the crate stays I/O-free).
//!
//! Handshake (both nonces are [`NONCE_BYTES`] random bytes, sent as hex in JSON):
//!
//! ```text
//!  client                                   server
//!  hello { client_nonce }            ──▶
//!                                    ◀──    welcome { server_nonce, server_proof }
//!  check server_proof, then
//!  request { spec, client_proof }    ──▶    check client_proof before anything else
//!  both: token = session_token(key, server_nonce, client_nonce)
//! ```
//!
//! `proof(role) = HMAC-SHA256(key, "dualperf-auth-v1" ‖ server_nonce ‖ client_nonce ‖ role)`
//! with `role` = `"server"` or `"client"`, so a proof can never be reflected back as the
//! other side's. `session_token = HMAC-SHA256(key, "dualperf-session-v1" ‖ server_nonce ‖
//! client_nonce)` truncated to 16 bytes (truncation as in RFC 2104 §5 / RFC 4231 §4.6).
//!
//! What this does not do: it authenticates the two endpoints; it does not encrypt or
//! integrity-protect the control stream, so an active on-path attacker can still relay
//! or cut it (as with iperf3's own authentication).

use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::Sha256;
use std::fmt;
use std::path::{Path, PathBuf};

type HmacSha256 = Hmac<Sha256>;

/// Domain-separation label of the challenge-response proofs.
pub const AUTH_LABEL: &[u8] = b"dualperf-auth-v1";
/// Domain-separation label of the session-token derivation.
pub const SESSION_LABEL: &[u8] = b"dualperf-session-v1";
/// Bytes of each nonce (256 bits: collisions are out of reach for any server lifetime).
pub const NONCE_BYTES: usize = 32;
/// Bytes of a proof: one full HMAC-SHA256 output.
pub const PROOF_BYTES: usize = 32;
/// Bytes of the session token carried at the start of every data stream.
pub const SESSION_TOKEN_BYTES: usize = 16;
/// Shortest key accepted (128 bits).
pub const MIN_KEY_BYTES: usize = 16;
/// Largest key file read; anything bigger is not a key file.
pub const MAX_KEY_FILE_BYTES: u64 = 4096;

/// Why authentication or loading a key failed; messages are shown to the user as is.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("the pre-shared key in {path} is empty; put at least {MIN_KEY_BYTES} random bytes in it (e.g. `openssl rand -hex 32 > {path}`)")]
    EmptyKey { path: String },
    #[error("the pre-shared key in {path} is {len_bytes} bytes; at least {MIN_KEY_BYTES} are required (e.g. `openssl rand -hex 32 > {path}`)")]
    KeyTooShort { path: String, len_bytes: usize },
    #[error(
        "{path} is {len_bytes} bytes, too large for a key file (at most {MAX_KEY_FILE_BYTES})"
    )]
    KeyFileTooLarge { path: String, len_bytes: u64 },
    #[error("cannot read the pre-shared key file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("authentication failed: the peer's {role} proof does not match (different pre-shared key, or the proof was altered)")]
    BadProof { role: Role },
    #[error("bad {what}: expected {expected_bytes} bytes as {hex_chars} hex digits")]
    BadEncoding {
        what: &'static str,
        expected_bytes: usize,
        hex_chars: usize,
    },
}

/// Which side a proof speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

impl Role {
    /// The bytes appended to the proof input.
    pub fn label(self) -> &'static [u8] {
        match self {
            Role::Client => b"client",
            Role::Server => b"server",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Client => "client",
            Role::Server => "server",
        })
    }
}

/// A pre-shared key. `Debug` never prints it; the bytes are zeroed on drop.
#[derive(Clone, PartialEq, Eq)]
pub struct Psk(Vec<u8>);

impl Psk {
    /// The key from a key file's contents: surrounding ASCII whitespace (a trailing
    /// newline from `echo` or `openssl rand -hex`) is trimmed; the rest is used as is.
    /// `origin` names the source in error messages.
    pub fn parse(contents: &[u8], origin: &str) -> Result<Psk, AuthError> {
        let key = contents.trim_ascii();
        if key.is_empty() {
            return Err(AuthError::EmptyKey {
                path: origin.to_string(),
            });
        }
        if key.len() < MIN_KEY_BYTES {
            return Err(AuthError::KeyTooShort {
                path: origin.to_string(),
                len_bytes: key.len(),
            });
        }
        Ok(Psk(key.to_vec()))
    }

    /// Read and check a key file (at most [`MAX_KEY_FILE_BYTES`]).
    pub fn load(path: &Path) -> Result<Psk, AuthError> {
        let io_err = |source| AuthError::Io {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(io_err)?;
        if meta.len() > MAX_KEY_FILE_BYTES {
            return Err(AuthError::KeyFileTooLarge {
                path: path.display().to_string(),
                len_bytes: meta.len(),
            });
        }
        // Read at most one byte over the limit: a device or a growing file (`/dev/zero`)
        // reports length 0 and would otherwise be read without end.
        let mut contents = Vec::new();
        {
            use std::io::Read;
            let file = std::fs::File::open(path).map_err(io_err)?;
            file.take(MAX_KEY_FILE_BYTES + 1)
                .read_to_end(&mut contents)
                .map_err(io_err)?;
        }
        if contents.len() as u64 > MAX_KEY_FILE_BYTES {
            contents.fill(0);
            return Err(AuthError::KeyFileTooLarge {
                path: path.display().to_string(),
                len_bytes: MAX_KEY_FILE_BYTES + 1,
            });
        }
        let key = Psk::parse(&contents, &path.display().to_string());
        contents.fill(0);
        key
    }

    pub fn len_bytes(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Debug for Psk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Psk(<{} bytes redacted>)", self.0.len())
    }
}

impl Drop for Psk {
    fn drop(&mut self) {
        self.0.fill(0);
        std::hint::black_box(&self.0);
    }
}

/// A warning worth printing when a key file's mode lets group or others read or write
/// it (`mode` as from `st_mode`), or `None` when only the owner can.
pub fn permission_warning(path: &Path, mode: u32) -> Option<String> {
    let loose = mode & 0o077;
    (loose != 0).then(|| {
        format!(
            "warning: the pre-shared key file {} has mode {:04o}: group/others can access it; run `chmod 600 {}`",
            path.display(),
            mode & 0o7777,
            path.display()
        )
    })
}

/// [`permission_warning`] for a file on disk (Unix only; `None` elsewhere or if the
/// file cannot be inspected, since [`Psk::load`] reports that).
pub fn psk_file_warning(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).ok()?;
        permission_warning(path, meta.permissions().mode())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// HMAC-SHA256 of the concatenation of `parts` (RFC 2104 with SHA-256); every
/// derivation here goes through this one function.
pub fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    mac_finalize(new_mac(key, parts))
}

fn new_mac(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    // HMAC accepts keys of any length (RFC 2104 §2), so this cannot fail.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC takes keys of any length"),
    };
    for part in parts {
        mac.update(part);
    }
    mac
}

fn mac_finalize(mac: HmacSha256) -> [u8; 32] {
    let bytes = mac.finalize().into_bytes();
    let mut out = [0u8; 32];
    out.copy_from_slice(&bytes);
    out
}

macro_rules! hex_bytes {
    ($(#[$doc:meta])* $name:ident, $len:expr, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name(pub [u8; $len]);

        impl $name {
            /// Lower-case hex, as carried in JSON control messages.
            pub fn to_hex(&self) -> String {
                to_hex(&self.0)
            }
            /// Parse exactly `2 × len` hex digits.
            pub fn from_hex(s: &str) -> Result<$name, AuthError> {
                let mut out = [0u8; $len];
                if from_hex(s, &mut out) {
                    Ok($name(out))
                } else {
                    Err(AuthError::BadEncoding {
                        what: $what,
                        expected_bytes: $len,
                        hex_chars: 2 * $len,
                    })
                }
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.to_hex())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_hex())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s = String::deserialize(d)?;
                $name::from_hex(&s).map_err(serde::de::Error::custom)
            }
        }
    };
}

hex_bytes!(
    /// A nonce from the OS random source (see the module header).
    Nonce,
    NONCE_BYTES,
    "nonce"
);
hex_bytes!(
    /// One side's proof that it holds the key.
    Proof,
    PROOF_BYTES,
    "proof"
);
hex_bytes!(
    /// Binds data streams to their control session: the first bytes of every TCP data
    /// connection, and (via [`SessionToken::datagram_tag`]) every test datagram.
    SessionToken,
    SESSION_TOKEN_BYTES,
    "session token"
);

impl SessionToken {
    /// Constant-time comparison with bytes a peer sent (any length; wrong length fails).
    pub fn matches(&self, candidate: &[u8]) -> bool {
        ct_eq(&self.0, candidate)
    }

    /// The 32-bit tag for the `token` field of the datagram header (first 4 bytes of
    /// the token, big-endian). A blind off-path injector guesses it with chance 2^-32
    /// per datagram; the receiver drops datagrams whose tag differs.
    pub fn datagram_tag(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }
}

/// The key and both nonces of one control connection.
#[derive(Debug, Clone)]
pub struct Handshake<'k> {
    key: &'k Psk,
    pub server_nonce: Nonce,
    pub client_nonce: Nonce,
}

impl<'k> Handshake<'k> {
    pub fn new(key: &'k Psk, server_nonce: Nonce, client_nonce: Nonce) -> Handshake<'k> {
        Handshake {
            key,
            server_nonce,
            client_nonce,
        }
    }

    fn proof_mac(&self, role: Role) -> HmacSha256 {
        new_mac(
            &self.key.0,
            &[
                AUTH_LABEL,
                &self.server_nonce.0,
                &self.client_nonce.0,
                role.label(),
            ],
        )
    }

    /// This side's proof for `role`.
    pub fn proof(&self, role: Role) -> Proof {
        Proof(mac_finalize(self.proof_mac(role)))
    }

    /// Check the peer's proof for `role` in constant time (`hmac`'s `verify_slice`).
    /// Takes raw bytes so a proof of the wrong length is simply rejected.
    pub fn verify(&self, role: Role, proof: &[u8]) -> Result<(), AuthError> {
        self.proof_mac(role)
            .verify_slice(proof)
            .map_err(|_| AuthError::BadProof { role })
    }

    /// The session token both sides derive once both proofs check out.
    pub fn session_token(&self) -> SessionToken {
        let full = hmac_sha256(
            &self.key.0,
            &[SESSION_LABEL, &self.server_nonce.0, &self.client_nonce.0],
        );
        let mut token = [0u8; SESSION_TOKEN_BYTES];
        token.copy_from_slice(&full[..SESSION_TOKEN_BYTES]);
        SessionToken(token)
    }
}

/// Equal length and equal bytes, without an early exit on the first difference.
fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// Lower-case hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

/// Fill `out` from exactly `2 × out.len()` hex digits; false on anything else.
pub fn from_hex(s: &str, out: &mut [u8]) -> bool {
    let digits = s.as_bytes();
    if digits.len() != out.len() * 2 {
        return false;
    }
    let val = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    for (o, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        match (val(pair[0]), val(pair[1])) {
            (Some(hi), Some(lo)) => *o = (hi << 4) | lo,
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests;
