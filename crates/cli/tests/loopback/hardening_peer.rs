//! Issue 11.5 end to end: a study against a server whose results lie records each run
//! as a failed attempt with the reason, and stores none of its numbers.

use crate::support::shared;
use crate::support::study::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use wire::proto::{encode_frame, FrameDecoder, Msg, PROTOCOL_VERSION};

/// Forward every control connection to `server_port`; from connection number `honest`
/// on (0-based), claim 2^64−1 bytes received. The study's preflight probe is the first
/// connection, so `honest = 1` lets a study start and then lies to every run.
fn lying_proxy(server_port: u16, honest: usize) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for (i, client) in l.incoming().enumerate() {
            let Ok(client) = client else { return };
            let lie = i >= honest;
            thread::spawn(move || relay(client, server_port, lie));
        }
    });
    port
}

fn relay(client: TcpStream, server_port: u16, lie: bool) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", server_port)) else {
        return;
    };
    let (Ok(mut c_rd), Ok(mut s_wr)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n) = c_rd.read(&mut buf) {
            if n == 0 || s_wr.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let (mut s_rd, mut c_wr) = (server, client);
    let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
    let mut buf = [0u8; 65536];
    while let Ok(n) = s_rd.read(&mut buf) {
        if n == 0 {
            break;
        }
        dec.push(&buf[..n]);
        while let Ok(Some(mut msg)) = dec.next_msg() {
            if let Msg::Result { stats } = &mut msg {
                if lie {
                    stats.recv_bytes = u64::MAX;
                }
            }
            if c_wr
                .write_all(&encode_frame(&msg, PROTOCOL_VERSION))
                .is_err()
            {
                return;
            }
        }
    }
}

#[test]
fn a_study_against_a_lying_server_records_failed_attempts_not_data() {
    let _turn = shared();
    let srv = engine::EmbeddedServer::start().unwrap();
    let port = lying_proxy(srv.port(), 1);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lie.db");
    let o = run(
        &[
            "study",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--families",
            "4",
            "--tests",
            "tcp-stream",
            "--sizes",
            "1000",
            "--runs",
            "1",
            "--retries",
            "1",
            "--duration",
            "0.1",
            "--db",
            &db.display().to_string(),
        ],
        false,
    );
    // Exit 4: a cell got no successful run.
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    let s = store::Store::open_read_only(&db).unwrap();
    let runs = s.runs(1).unwrap();
    assert_eq!(runs.len(), 2, "one attempt and one retry: {runs:?}");
    for r in &runs {
        match &r.status {
            store::RunStatus::Failed { reason } => {
                assert!(
                    reason.contains("implausible result from the server"),
                    "{reason}"
                )
            }
            other => panic!("stored as {other:?}"),
        }
        assert!(r.metrics.is_empty(), "numbers stored: {:?}", r.metrics);
    }
}

#[test]
fn a_server_lying_from_the_start_is_refused_before_anything_is_recorded() {
    let _turn = shared();
    let srv = engine::EmbeddedServer::start().unwrap();
    let port = lying_proxy(srv.port(), 0);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lie.db");
    let o = run(
        &[
            "study",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--tests",
            "tcp-stream",
            "--sizes",
            "1000",
            "--runs",
            "1",
            "--db",
            &db.display().to_string(),
        ],
        false,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("implausible result from the server"), "{e}");
    assert!(!db.exists(), "the preflight leaves no database behind");
}
