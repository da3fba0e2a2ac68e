//! iperf3 authentication (`iperf3::auth`): the decrypted token text as iperf3's sscanf
//! reads it, the authorized-users file, and whole base64 tokens through decryption with
//! a fixed test key. Properties: no panic; credentials read from a text are written
//! back to a text that reads the same; users have a non-empty name and hash without
//! commas or line ends; a token of attacker bytes is never accepted for a user whose
//! password the fuzzer cannot know.
#![no_main]

use iperf3::auth::{
    parse_token_text, parse_users, private_key_from_pem, token_text, AuthorizedUser, ServerAuth,
};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const KEY_PEM: &str = include_str!("../../crates/iperf3/src/testdata/test_key.pem");

fn server() -> &'static ServerAuth {
    static AUTH: OnceLock<ServerAuth> = OnceLock::new();
    AUTH.get_or_init(|| {
        let Ok(key) = private_key_from_pem(KEY_PEM) else {
            panic!("the test key does not load");
        };
        // A hash no password has (not hex): nothing may authenticate.
        let users = vec![AuthorizedUser {
            username: "mario".into(),
            hash: "not-a-sha256".into(),
        }];
        ServerAuth::new(key, users)
    })
}

fuzz_target!(|data: &[u8]| {
    if let Some(c) = parse_token_text(data) {
        let again = parse_token_text(token_text(&c.username, &c.password, c.ts).as_bytes());
        assert_eq!(again.as_ref(), Some(&c));
        assert!(!c.username.is_empty() && !c.username.contains(char::is_whitespace));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        for u in parse_users(text) {
            for field in [&u.username, &u.hash] {
                assert!(!field.is_empty());
                assert!(!field.contains([',', '\n', '\r']));
            }
        }
        let now = 1_700_000_000;
        assert!(server().check(Some(text), now).is_err());
    }
});
