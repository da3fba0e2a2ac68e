//! Issue 11.7: text from a database or a peer reaches the terminal without control
//! characters ("\x1b[2J" would clear the screen): `show`, `report --format
//! markdown|text`, and errors quoting a peer.

mod study_common;

use std::io::{Read, Write};
use std::net::TcpListener;
use study_common::*;
use wire::proto::{encode_frame, ErrorCode, FrameDecoder, Msg, PROTOCOL_VERSION};

const EVIL: &str = "evil\x1b[2J\x1b]0;owned\x07\u{9b}label";

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{what} printed a control character: {text:?}"
    );
}

#[test]
fn a_label_with_escape_sequences_is_printed_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db").display().to_string();
    let o = run(
        &[
            "study",
            "--tests",
            "tcp-stream",
            "--sizes",
            "128",
            "--runs",
            "2",
            "--duration",
            "0.01",
            "--label",
            EVIL,
            "--db",
            &db,
        ],
        true,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_clean("study", &o.stdout);
    for args in [
        vec!["show", "--db", &db],
        vec!["show", "--db", &db, "1"],
        vec!["report", "--db", &db, "--format", "markdown"],
        vec!["report", "--db", &db, "--format", "text"],
    ] {
        let o = run(&args, false);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        assert_clean(&format!("{args:?}"), &o.stdout);
        assert_clean(&format!("{args:?} stderr"), &o.stderr);
        // The words survive; only the controls go.
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("evil[2J]0;owned"),
            "{args:?}: {}",
            text(&o)
        );
    }
}

#[test]
fn an_error_message_from_a_peer_is_printed_without_controls() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
        let mut buf = [0u8; 4096];
        while dec.next_msg().ok().flatten().is_none() {
            let n = s.read(&mut buf).unwrap();
            dec.push(&buf[..n]);
        }
        let reply = Msg::Error {
            code: ErrorCode::BadRequest,
            message: EVIL.to_string(),
        };
        s.write_all(&encode_frame(&reply, PROTOCOL_VERSION))
            .unwrap();
    });
    let o = run(
        &[
            "run",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--duration",
            "1",
        ],
        false,
    );
    peer.join().unwrap();
    assert!(!o.status.success());
    assert_clean("run stderr", &o.stderr);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("evil[2J"),
        "{}",
        text(&o)
    );
}
