//! Requests no client of this crate would send: malformed bytes reach the server and are
//! refused with the reason.

use std::thread;
use std::time::{Duration, Instant};

use wire::spec::{Bound, Direction};

use crate::client::run_with_request;
use crate::{Limits, QuicError, QuicKind, QuicServer, QuicTest};

fn refusal_of(request: &[u8]) -> String {
    refusal_of_with(|_| request.to_vec())
}

/// The refusal of the request `make` builds from the agreed test.
fn refusal_of_with(make: impl FnOnce(&QuicTest) -> Vec<u8>) -> String {
    let bind = || std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let (server, cert) = QuicServer::bind(bind(), Limits::default()).unwrap();
    let addr = server.local_addr().unwrap();
    let test = QuicTest {
        kind: QuicKind::Stream {
            streams: 1,
            direction: Direction::Forward,
        },
        bound: Bound::Count(1),
        payload_bytes: 1_000,
        congestion: crate::Congestion::Cubic,
        rate_bps: None,
        session: [7; 16],
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let served = thread::spawn(move || server.serve_one(&test, deadline));
    let request = make(&test);
    let client = run_with_request(bind(), addr, cert, &test, &request, deadline);
    let server_err = served.join().unwrap().unwrap_err();
    match (client, server_err) {
        (Err(QuicError::Refused(c)), QuicError::Refused(s)) => {
            assert_eq!(c, s);
            c
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn malformed_requests_are_refused_with_what_is_wrong() {
    assert_eq!(
        refusal_of(&[0xff; crate::REQUEST_BYTES]),
        "malformed request: not a dualperf QUIC request (bad magic)"
    );
    assert_eq!(
        refusal_of(b"dQ\x01"),
        "malformed request: it ends after 3 of 48 bytes"
    );
}

#[test]
fn a_request_without_the_control_sessions_token_is_refused() {
    let refusal = refusal_of_with(|agreed| {
        let mut other = *agreed;
        other.session[15] ^= 1;
        other.encode().to_vec()
    });
    assert_eq!(
        refusal,
        "the QUIC connection does not carry the control session's token"
    );
}
