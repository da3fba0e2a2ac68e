//! PSK authentication (`wire::auth`): key-file parsing, hex decoding of nonces and
//! proofs, and proof / token verification on attacker-chosen bytes. Properties: no
//! panic; a proof verifies iff it equals the real one; a token matches iff equal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wire::auth::{Handshake, Nonce, Proof, Psk, Role, SessionToken, MIN_KEY_BYTES};

fuzz_target!(|data: &[u8]| {
    if let Ok(key) = Psk::parse(data, "fuzz") {
        assert!(key.len_bytes() >= MIN_KEY_BYTES);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(n) = Nonce::from_hex(text) {
            assert!(text.eq_ignore_ascii_case(&n.to_hex()));
        }
        let _ = Proof::from_hex(text);
        let _ = SessionToken::from_hex(text);
        let _ = serde_json::from_str::<Nonce>(text);
    }
    let Ok(key) = Psk::parse(b"fuzzing-key-0123456789", "fixed") else {
        panic!("fixed key refused");
    };
    let mut sn = [0u8; 32];
    let mut cn = [0u8; 32];
    for (i, b) in data.iter().take(64).enumerate() {
        if i < 32 {
            sn[i] = *b
        } else {
            cn[i - 32] = *b
        }
    }
    let hs = Handshake::new(&key, Nonce(sn), Nonce(cn));
    let candidate = data.get(64..).unwrap_or(&[]);
    for role in [Role::Client, Role::Server] {
        let real = hs.proof(role);
        assert_eq!(
            hs.verify(role, candidate).is_ok(),
            candidate == real.0.as_slice()
        );
    }
    let token = hs.session_token();
    assert_eq!(token.matches(candidate), candidate == token.0.as_slice());
});
