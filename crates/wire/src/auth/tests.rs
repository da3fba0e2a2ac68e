use super::*;

fn unhex(s: &str) -> Vec<u8> {
    let mut out = vec![0u8; s.len() / 2];
    assert!(from_hex(s, &mut out), "bad hex in test: {s}");
    out
}

fn key() -> Psk {
    Psk::parse(b"0123456789abcdef0123456789abcdef\n", "test").unwrap()
}

fn nonces() -> (Nonce, Nonce) {
    let mut sn = [0u8; NONCE_BYTES];
    let mut cn = [0u8; NONCE_BYTES];
    for i in 0..NONCE_BYTES {
        sn[i] = i as u8;
        cn[i] = (i + 32) as u8;
    }
    (Nonce(sn), Nonce(cn))
}

/// RFC 4231 §4.2–4.8: HMAC-SHA-256 test cases 1–7 (case 5 truncated to 128 bits).
/// The data is split into several parts to check that `parts` are concatenated.
#[test]
fn hmac_sha256_matches_rfc4231_test_vectors() {
    let aa131 = vec![0xaa; 131];
    let key4: Vec<u8> = (1..=25).collect();
    let cases: Vec<(&[u8], Vec<u8>, &str)> = vec![
        (&[0x0b; 20], b"Hi There".to_vec(), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (b"Jefe", b"what do ya want for nothing?".to_vec(), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (&[0xaa; 20], vec![0xdd; 50], "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (&key4, vec![0xcd; 50], "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (&aa131, b"Test Using Larger Than Block-Size Key - Hash Key First".to_vec(), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (&aa131, b"This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".to_vec(), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ];
    for (k, data, want) in cases {
        let (a, b) = data.split_at(data.len() / 3);
        assert_eq!(hmac_sha256(k, &[a, &[], b]).to_vec(), unhex(want), "{want}");
    }
    // Case 5: output truncated to 128 bits, as the session token is.
    let full = hmac_sha256(&[0x0c; 20], &[b"Test With Truncation"]);
    assert_eq!(
        full[..16].to_vec(),
        unhex("a3b6167473100ee06e0c796c2955552b")
    );
}

/// RFC 4231 keys that survive whitespace trimming go through `Psk` unchanged.
#[test]
fn psk_keeps_binary_keys_and_feeds_them_to_hmac_unchanged() {
    let psk = Psk::parse(&[0xaa; 131], "rfc4231").unwrap();
    assert_eq!(psk.len_bytes(), 131);
    let got = hmac_sha256(
        &psk.0,
        &[b"Test Using Larger Than Block-Size Key - Hash Key First"],
    );
    assert_eq!(
        got.to_vec(),
        unhex("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    );
}

/// Expected values computed independently (Python's hmac module) from the documented
/// construction: label ‖ server_nonce ‖ client_nonce ‖ role.
#[test]
fn proofs_and_token_follow_the_documented_construction() {
    let key = key();
    let (sn, cn) = nonces();
    let hs = Handshake::new(&key, sn, cn);
    assert_eq!(
        hs.proof(Role::Server).to_hex(),
        "3d3e29808b52562b3bebcaa63e3a584c2f85f09b17f5ffda8ff3fd8e11cc3b88"
    );
    assert_eq!(
        hs.proof(Role::Client).to_hex(),
        "4ab9bdbb2af88ad7d1385c20dda5ec0e4754ee9ed7d59fe8a1872107a609fc40"
    );
    assert_eq!(
        hs.session_token().to_hex(),
        "874e2d55b6a0aa0eeddefedfaa2d14d7"
    );
    assert_eq!(hs.session_token().datagram_tag(), 0x874e_2d55);
}

#[test]
fn mutual_handshake_succeeds_with_the_same_key() {
    let (sn, cn) = nonces();
    let server_key = key();
    let client_key = key();
    let server = Handshake::new(&server_key, sn, cn);
    let client = Handshake::new(&client_key, sn, cn);
    assert!(client
        .verify(Role::Server, &server.proof(Role::Server).0)
        .is_ok());
    assert!(server
        .verify(Role::Client, &client.proof(Role::Client).0)
        .is_ok());
    assert_eq!(server.session_token(), client.session_token());
}

#[test]
fn wrong_key_is_rejected_both_ways() {
    let (sn, cn) = nonces();
    let good = key();
    let bad = Psk::parse(b"0123456789abcdef0123456789abcdeX", "bad").unwrap();
    let server = Handshake::new(&good, sn, cn);
    let impostor = Handshake::new(&bad, sn, cn);
    let err = server
        .verify(Role::Client, &impostor.proof(Role::Client).0)
        .unwrap_err();
    assert!(matches!(err, AuthError::BadProof { role: Role::Client }));
    assert!(err.to_string().contains("pre-shared key"), "{err}");
    assert!(impostor
        .verify(Role::Server, &server.proof(Role::Server).0)
        .is_err());
    assert_ne!(server.session_token(), impostor.session_token());
}

#[test]
fn tampered_truncated_or_reflected_proofs_are_rejected() {
    let key = key();
    let (sn, cn) = nonces();
    let hs = Handshake::new(&key, sn, cn);
    let proof = hs.proof(Role::Client);
    for i in [0, 13, PROOF_BYTES - 1] {
        let mut t = proof.0;
        t[i] ^= 0x01;
        assert!(hs.verify(Role::Client, &t).is_err(), "bit flip at {i}");
    }
    assert!(hs.verify(Role::Client, &proof.0[..16]).is_err());
    assert!(hs.verify(Role::Client, &[]).is_err());
    let mut long = proof.0.to_vec();
    long.push(0);
    assert!(hs.verify(Role::Client, &long).is_err());
    // A server proof sent back as a client proof (reflection) fails: roles differ.
    assert!(hs.verify(Role::Client, &hs.proof(Role::Server).0).is_err());
    assert!(hs.verify(Role::Client, &proof.0).is_ok());
}

#[test]
fn proofs_depend_on_both_nonces_so_old_proofs_do_not_replay() {
    let key = key();
    let (sn, cn) = nonces();
    let recorded = Handshake::new(&key, sn, cn).proof(Role::Client);
    let mut sn2 = sn;
    sn2.0[31] ^= 0x80;
    assert!(Handshake::new(&key, sn2, cn)
        .verify(Role::Client, &recorded.0)
        .is_err());
    let mut cn2 = cn;
    cn2.0[0] ^= 0x01;
    assert!(Handshake::new(&key, sn, cn2)
        .verify(Role::Client, &recorded.0)
        .is_err());
    // Swapping the nonces changes everything too (fixed-length fields, fixed order).
    let swapped = Handshake::new(&key, cn, sn);
    assert_ne!(
        swapped.session_token(),
        Handshake::new(&key, sn, cn).session_token()
    );
}

#[test]
fn session_token_matches_only_itself_in_full() {
    let key = key();
    let (sn, cn) = nonces();
    let token = Handshake::new(&key, sn, cn).session_token();
    assert!(token.matches(&token.0));
    assert!(!token.matches(&token.0[..15]));
    assert!(!token.matches(&[]));
    let mut other = token.0;
    other[15] ^= 1;
    assert!(!token.matches(&other));
}

#[test]
fn key_files_are_trimmed_and_short_or_empty_keys_are_refused() {
    assert_eq!(
        Psk::parse(b"  \t0123456789abcdef\r\n", "k")
            .unwrap()
            .len_bytes(),
        16
    );
    let err = Psk::parse(b" \n\n", "/etc/dp.key").unwrap_err();
    assert!(matches!(err, AuthError::EmptyKey { .. }));
    assert!(err.to_string().contains("/etc/dp.key"), "{err}");
    let err = Psk::parse(b"short-key\n", "k").unwrap_err();
    assert!(
        matches!(err, AuthError::KeyTooShort { len_bytes: 9, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("at least 16"), "{err}");
    assert!(Psk::parse(b"0123456789abcde", "k").is_err());
}

#[test]
fn debug_output_never_shows_the_key() {
    let psk = Psk::parse(b"supersecretsupersecret", "k").unwrap();
    let shown = format!("{psk:?}");
    assert!(!shown.contains("supersecret"), "{shown}");
    assert!(shown.contains("22 bytes"), "{shown}");
}

#[test]
fn load_reads_a_key_file_and_reports_missing_or_huge_files() {
    let dir = std::env::temp_dir().join(format!("dualperf-auth-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("psk");
    std::fs::write(&path, b"abcdefghijklmnopqrstuvwxyz012345\n").unwrap();
    assert_eq!(Psk::load(&path).unwrap().len_bytes(), 32);
    let missing = dir.join("nope");
    let err = Psk::load(&missing).unwrap_err();
    assert!(matches!(err, AuthError::Io { .. }));
    assert!(err.to_string().contains("nope"), "{err}");
    let huge = dir.join("huge");
    std::fs::write(&huge, vec![b'a'; 5000]).unwrap();
    assert!(matches!(
        Psk::load(&huge),
        Err(AuthError::KeyFileTooLarge {
            len_bytes: 5000,
            ..
        })
    ));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let warning = psk_file_warning(&path).expect("0644 must warn");
        assert!(
            warning.contains("0644") && warning.contains("chmod 600"),
            "{warning}"
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(psk_file_warning(&path), None);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn permission_warning_flags_any_group_or_other_bit() {
    let p = Path::new("/k");
    assert_eq!(permission_warning(p, 0o100600), None);
    assert_eq!(permission_warning(p, 0o400), None);
    for mode in [0o640, 0o604, 0o602, 0o660, 0o777] {
        assert!(permission_warning(p, mode).is_some(), "{mode:o}");
    }
}

#[test]
fn nonces_and_proofs_round_trip_as_hex_in_json() {
    let (sn, _) = nonces();
    let json = serde_json::to_string(&sn).unwrap();
    assert_eq!(
        json,
        "\"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\""
    );
    assert_eq!(serde_json::from_str::<Nonce>(&json).unwrap(), sn);
    assert_eq!(Nonce::from_hex(&sn.to_hex().to_uppercase()).unwrap(), sn);
    for bad in ["\"00\"", "\"zz\"", "17", &format!("\"{}0\"", sn.to_hex())] {
        assert!(serde_json::from_str::<Nonce>(bad).is_err(), "{bad}");
    }
    let err = Proof::from_hex("abc").unwrap_err();
    assert!(err.to_string().contains("64 hex digits"), "{err}");
}
