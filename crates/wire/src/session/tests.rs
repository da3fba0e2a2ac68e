//! Both session ends in memory on virtual time (quinn's `Pair` harness): every message
//! goes through the real frame encoder and decoder, with a fixed one-way delay.

use super::*;
use crate::proto::{encode_frame, FrameDecoder, PROTOCOL_VERSION};
use crate::spec::{Family, TestKind};

const DELAY: Duration = Duration::from_millis(1);

struct Pair {
    now: Instant,
    client: ClientSession,
    server: ServerSession,
    /// Bytes in flight (arrival time, bytes), per direction.
    to_server: VecDeque<(Instant, Vec<u8>)>,
    to_client: VecDeque<(Instant, Vec<u8>)>,
    server_dec: FrameDecoder,
    client_dec: FrameDecoder,
    client_events: Vec<ClientEvent>,
    server_events: Vec<ServerEvent>,
}

impl Pair {
    fn new(spec: TestSpec) -> Pair {
        let now = Instant::now();
        let limits = Limits {
            handshake: Duration::from_secs(5),
            run_slack: Duration::from_secs(2),
            count_run_max: Duration::from_secs(60),
        };
        Pair {
            now,
            client: ClientSession::new(now, spec, BTreeMap::new(), limits),
            server: ServerSession::new(now, BTreeMap::from([("os".into(), "test".into())]), limits),
            to_server: VecDeque::new(),
            to_client: VecDeque::new(),
            server_dec: FrameDecoder::new(PROTOCOL_VERSION),
            client_dec: FrameDecoder::new(PROTOCOL_VERSION),
            client_events: Vec::new(),
            server_events: Vec::new(),
        }
    }

    /// Move messages until nothing is in flight; advance time to each arrival.
    fn drive(&mut self) {
        loop {
            while let Some(m) = self.client.poll_msg() {
                let at = self.now + DELAY;
                self.to_server
                    .push_back((at, encode_frame(&m, PROTOCOL_VERSION)));
            }
            while let Some(m) = self.server.poll_msg() {
                let at = self.now + DELAY;
                self.to_client
                    .push_back((at, encode_frame(&m, PROTOCOL_VERSION)));
            }
            self.collect_events();
            let next_s = self.to_server.front().map(|x| x.0);
            let next_c = self.to_client.front().map(|x| x.0);
            match (next_s, next_c) {
                (None, None) => return,
                (Some(s), c) if c.is_none_or(|c| s <= c) => {
                    let (at, bytes) = self.to_server.pop_front().unwrap();
                    self.now = self.now.max(at);
                    self.feed_server(&bytes);
                }
                _ => {
                    let (at, bytes) = self.to_client.pop_front().unwrap();
                    self.now = self.now.max(at);
                    self.client_dec.push(&bytes);
                    loop {
                        match self.client_dec.next_msg() {
                            Ok(Some(m)) => self.client.handle_msg(self.now, m),
                            Ok(None) => break,
                            Err(e) => {
                                self.client.handle_decode_error(e);
                                break;
                            }
                        }
                    }
                }
            }
        }
    }

    fn feed_server(&mut self, bytes: &[u8]) {
        self.server_dec.push(bytes);
        loop {
            match self.server_dec.next_msg() {
                Ok(Some(m)) => self.server.handle_msg(self.now, m),
                Ok(None) => break,
                Err(e) => {
                    self.server.handle_decode_error(e);
                    break;
                }
            }
        }
    }

    fn collect_events(&mut self) {
        while let Some(e) = self.client.poll_event() {
            self.client_events.push(e);
        }
        while let Some(e) = self.server.poll_event() {
            self.server_events.push(e);
        }
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        self.drive();
    }
}

fn spec() -> TestSpec {
    let mut s = TestSpec::new(TestKind::UdpStream, Family::V6, 128);
    s.bound = Bound::DurationNs(1_000_000_000);
    s
}

#[test]
fn happy_path_runs_every_state_in_order() {
    let mut p = Pair::new(spec());
    p.drive();
    assert_eq!(p.client.state(), ClientState::AwaitAccept);
    assert_eq!(
        p.client.server_info().get("os").map(String::as_str),
        Some("test")
    );
    assert!(matches!(
        p.server_events.as_slice(),
        [ServerEvent::TestRequested { spec: s, .. }] if *s == spec()
    ));
    p.server.accept(p.now, 4242, 99);
    p.drive();
    assert_eq!(
        p.client_events,
        vec![ClientEvent::Accepted {
            data_port: 4242,
            token: 99,
            quic_cert: None,
        }]
    );
    p.client.connected(p.now, Some(5000));
    p.drive();
    assert!(matches!(
        p.server_events.last(),
        Some(ServerEvent::StartRequested {
            udp_port: Some(5000)
        })
    ));
    assert_eq!(p.server.state(), ServerState::Starting);
    p.server.started(p.now);
    p.drive();
    assert_eq!(p.client.state(), ClientState::Running);
    assert_eq!(p.client_events.last(), Some(&ClientEvent::Started));

    p.advance(Duration::from_secs(1));
    p.server.sender_done(10, 1280);
    let mine = SideStats {
        sent_packets: 3,
        ..SideStats::default()
    };
    p.client.finish(p.now, mine.clone());
    p.drive();
    assert_eq!(
        p.server_events.last(),
        Some(&ServerEvent::PeerFinished(mine))
    );
    let theirs = SideStats {
        recv_packets: 3,
        ..SideStats::default()
    };
    p.server.result(theirs.clone());
    p.drive();
    assert_eq!(p.client_events.last(), Some(&ClientEvent::Result(theirs)));
    assert!(p.client_events.contains(&ClientEvent::PeerSenderDone {
        sent_packets: 10,
        sent_bytes: 1280
    }));
    assert_eq!(p.client.state(), ClientState::Done);
    assert!(p.server.is_closed());
    assert_eq!(p.server.poll_timeout(), None);
}

#[test]
fn silent_client_times_out_with_an_error_reply() {
    let now = Instant::now();
    let mut s = ServerSession::new(now, BTreeMap::new(), Limits::default());
    s.handle_timeout(now + Duration::from_secs(1));
    assert_eq!(s.state(), ServerState::AwaitHello);
    let deadline = s.poll_timeout().unwrap_or(now);
    s.handle_timeout(deadline);
    assert_eq!(s.state(), ServerState::Failed);
    assert!(matches!(
        s.poll_msg(),
        Some(Msg::Error {
            code: ErrorCode::Timeout,
            ..
        })
    ));
    assert!(s.is_closed());
}

#[test]
fn out_of_order_message_gets_an_error_reply_and_closes() {
    let now = Instant::now();
    let mut s = ServerSession::new(now, BTreeMap::new(), Limits::default());
    s.handle_msg(now, Msg::Start { udp_port: None });
    assert_eq!(s.state(), ServerState::Failed);
    match s.poll_msg() {
        Some(Msg::Error { code, message }) => {
            assert_eq!(code, ErrorCode::UnexpectedMessage);
            assert!(message.contains("start"), "{message}");
        }
        other => panic!("expected an error reply, got {other:?}"),
    }
    // Nothing more is accepted after failure.
    s.handle_msg(
        now,
        Msg::Hello {
            client_info: BTreeMap::new(),
            client_nonce: None,
        },
    );
    assert_eq!(s.poll_msg(), None);
}

#[test]
fn request_before_hello_is_rejected() {
    let mut p = Pair::new(spec());
    // Drop the client's hello; inject a request directly.
    let _ = p.client.poll_msg();
    p.feed_server(&encode_frame(
        &Msg::Request {
            spec: spec(),
            client_proof: None,
        },
        PROTOCOL_VERSION,
    ));
    assert_eq!(p.server.state(), ServerState::Failed);
}

#[test]
fn invalid_spec_is_a_bad_request() {
    let mut bad = spec();
    bad.payload_bytes = 70_000;
    let mut p = Pair::new(bad);
    p.drive();
    assert_eq!(p.server.state(), ServerState::Failed);
    match p.client_events.as_slice() {
        [ClientEvent::Failed(SessionError::Remote { code, message })] => {
            assert_eq!(*code, ErrorCode::BadRequest);
            assert!(message.contains("65527"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn busy_server_rejection_reaches_the_client() {
    let mut p = Pair::new(spec());
    p.drive();
    p.server.reject(ErrorCode::Busy, "server busy");
    p.drive();
    assert_eq!(p.client.state(), ClientState::Failed);
    assert!(matches!(
        p.client_events.last(),
        Some(ClientEvent::Failed(SessionError::Remote {
            code: ErrorCode::Busy,
            ..
        }))
    ));
}

#[test]
fn garbage_truncated_and_oversized_input_fail_the_server_with_a_reply() {
    let oversized = {
        let mut f = b"dP".to_vec();
        f.extend(PROTOCOL_VERSION.to_be_bytes());
        f.extend(u32::MAX.to_be_bytes());
        f
    };
    let other_version = encode_frame(&Msg::Started, PROTOCOL_VERSION + 1);
    let cases: [(&[u8], ErrorCode); 3] = [
        (b"GET / HTTP/1.1\r\n", ErrorCode::Malformed),
        (&oversized, ErrorCode::Malformed),
        (&other_version, ErrorCode::VersionMismatch),
    ];
    for (bytes, want) in cases {
        let mut p = Pair::new(spec());
        let _ = p.client.poll_msg();
        p.feed_server(bytes);
        assert_eq!(p.server.state(), ServerState::Failed, "{bytes:?}");
        match p.server.poll_msg() {
            Some(Msg::Error { code, .. }) => assert_eq!(code, want),
            other => panic!("{other:?}"),
        }
    }
    // A truncated frame alone is not an error yet; the handshake timer ends it.
    let mut p = Pair::new(spec());
    let _ = p.client.poll_msg();
    let hello = encode_frame(
        &Msg::Hello {
            client_info: BTreeMap::new(),
            client_nonce: None,
        },
        PROTOCOL_VERSION,
    );
    p.feed_server(&hello[..hello.len() - 3]);
    assert_eq!(p.server.state(), ServerState::AwaitHello);
    p.advance(Duration::from_secs(6));
    assert_eq!(p.server.state(), ServerState::Failed);
}

#[test]
fn client_times_out_when_the_result_never_comes() {
    let mut p = Pair::new(spec());
    p.drive();
    p.server.accept(p.now, 1, 1);
    p.drive();
    p.client.connected(p.now, None);
    p.drive();
    p.server.started(p.now);
    p.drive();
    p.client.finish(p.now, SideStats::default());
    p.drive();
    assert_eq!(p.client.state(), ClientState::AwaitResult);
    p.advance(Duration::from_secs(6));
    assert_eq!(p.client.state(), ClientState::Failed);
    assert!(matches!(
        p.client_events.last(),
        Some(ClientEvent::Failed(SessionError::Timeout(_)))
    ));
}

#[test]
fn running_deadline_follows_the_test_duration() {
    let mut p = Pair::new(spec());
    p.drive();
    p.server.accept(p.now, 1, 1);
    p.drive();
    p.client.connected(p.now, None);
    p.drive();
    p.server.started(p.now);
    p.drive();
    let deadline = p.server.poll_timeout().unwrap_or(p.now);
    // 1 s test + 2 s slack.
    assert!(deadline >= p.now + Duration::from_millis(2_900));
    p.advance(Duration::from_millis(2_500));
    assert_eq!(p.server.state(), ServerState::Running);
    p.advance(Duration::from_secs(1));
    assert_eq!(p.server.state(), ServerState::Failed);
    assert_eq!(p.client.state(), ClientState::Failed);
}

// ---------------------------------------------------------------- pre-shared keys

fn key(byte: u8) -> Psk {
    Psk::parse(&[byte; 32], "test").unwrap()
}

/// A pair where each side may have a key (`None` = keyless).
fn keyed_pair(client_key: Option<Psk>, server_key: Option<Psk>) -> Pair {
    let mut p = Pair::new(spec());
    if let Some(k) = client_key {
        let c = std::mem::replace(
            &mut p.client,
            ClientSession::new(p.now, spec(), BTreeMap::new(), Limits::default()),
        );
        p.client = c.with_psk(k, Nonce([0xc1; crate::auth::NONCE_BYTES]));
    }
    if let Some(k) = server_key {
        let s = std::mem::replace(
            &mut p.server,
            ServerSession::new(p.now, BTreeMap::new(), Limits::default()),
        );
        p.server = s.with_psk(k, Nonce([0x5e; crate::auth::NONCE_BYTES]));
    }
    p
}

#[test]
fn same_key_authenticates_both_ways_and_derives_one_token() {
    let mut p = keyed_pair(Some(key(1)), Some(key(1)));
    p.drive();
    assert!(
        matches!(
            p.server_events.as_slice(),
            [ServerEvent::TestRequested { .. }]
        ),
        "{:?}",
        p.server_events
    );
    let t = p.client.session_token().expect("client token");
    assert_eq!(Some(t), p.server.session_token());
    // The token is never sent on the control connection: the handshake above carried
    // only nonces and proofs (checked by the Pair's encoder round trip).
}

#[test]
fn keyless_client_is_told_the_server_requires_a_key() {
    let mut p = keyed_pair(None, Some(key(1)));
    p.drive();
    assert_eq!(p.server.state(), ServerState::Failed);
    match p.client_events.as_slice() {
        [ClientEvent::Failed(SessionError::Remote { code, message })] => {
            assert_eq!(*code, ErrorCode::AuthRequired);
            assert_eq!(message, AUTH_REQUIRED_MESSAGE);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn wrong_key_fails_at_the_client_before_any_request() {
    let mut p = keyed_pair(Some(key(2)), Some(key(1)));
    p.drive();
    assert_eq!(p.client.state(), ClientState::Failed);
    assert!(p
        .server_events
        .iter()
        .all(|e| !matches!(e, ServerEvent::TestRequested { .. })));
    match p.client_events.as_slice() {
        [ClientEvent::Failed(SessionError::Auth(m))] => {
            assert_eq!(*m, AuthFailure::ServerProof);
            assert!(m.to_string().contains("the pre-shared keys differ"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_forged_client_proof_is_refused_before_the_spec_is_looked_at() {
    let mut s = ServerSession::new(Instant::now(), BTreeMap::new(), Limits::default())
        .with_psk(key(1), Nonce([9; crate::auth::NONCE_BYTES]));
    let now = Instant::now();
    s.handle_msg(
        now,
        Msg::Hello {
            client_info: BTreeMap::new(),
            client_nonce: Some(Nonce([8; crate::auth::NONCE_BYTES])),
        },
    );
    assert!(matches!(
        s.poll_msg(),
        Some(Msg::Welcome {
            server_proof: Some(_),
            ..
        })
    ));
    let mut bad = spec();
    bad.payload_bytes = 1 << 30;
    s.handle_msg(
        now,
        Msg::Request {
            spec: bad,
            client_proof: Some(crate::auth::Proof([0; crate::auth::PROOF_BYTES])),
        },
    );
    match s.poll_msg() {
        Some(Msg::Error { code, message }) => {
            assert_eq!(code, ErrorCode::AuthFailed);
            assert_eq!(message, AUTH_FAILED_MESSAGE);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s.session_token(), None);
    assert!(matches!(
        s.poll_event(),
        Some(ServerEvent::Failed(SessionError::Auth(_)))
    ));
}

#[test]
fn keyed_client_refuses_a_server_that_sends_no_proof() {
    let mut p = keyed_pair(Some(key(1)), None);
    p.drive();
    assert_eq!(p.client.state(), ClientState::Failed);
    assert!(p
        .server_events
        .iter()
        .all(|e| !matches!(e, ServerEvent::TestRequested { .. })));
    match p.client_events.as_slice() {
        [ClientEvent::Failed(SessionError::Auth(m))] => {
            assert_eq!(*m, AuthFailure::ServerUnproven);
            assert!(m.to_string().contains("did not prove"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(p.client.session_token(), None);
}

#[test]
fn a_silent_peer_is_dropped_after_the_hello_timeout() {
    let t0 = Instant::now();
    let mut s = ServerSession::new(t0, BTreeMap::new(), Limits::default());
    assert_eq!(s.poll_timeout(), Some(t0 + HELLO_TIMEOUT));
    assert!(HELLO_TIMEOUT < Limits::default().handshake);
    s.handle_timeout(t0 + HELLO_TIMEOUT - Duration::from_millis(1));
    assert_eq!(s.state(), ServerState::AwaitHello);
    s.handle_timeout(t0 + HELLO_TIMEOUT);
    assert_eq!(s.state(), ServerState::Failed);
    // A shorter configured handshake still wins.
    let short = Limits {
        handshake: Duration::from_millis(300),
        ..Limits::default()
    };
    let s = ServerSession::new(t0, BTreeMap::new(), short);
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_millis(300)));
}

#[test]
fn a_keyed_server_reveals_its_host_only_after_the_client_proved_the_key() {
    // Regression (issue 11.6): the welcome carried host name, OS, CPU and interfaces to
    // anyone who said hello.
    let info = BTreeMap::from([("host.name".to_string(), "secret-host".to_string())]);
    let now = Instant::now();
    let mut s = ServerSession::new(now, info.clone(), Limits::default())
        .with_psk(key(1), Nonce([9; crate::auth::NONCE_BYTES]));
    s.handle_msg(
        now,
        Msg::Hello {
            client_info: BTreeMap::new(),
            client_nonce: Some(Nonce([8; crate::auth::NONCE_BYTES])),
        },
    );
    match s.poll_msg() {
        Some(Msg::Welcome { server_info, .. }) => {
            assert!(server_info.is_empty(), "{server_info:?}")
        }
        other => panic!("{other:?}"),
    }
    // With the key proven, the client learns it with the accept.
    let mut p = keyed_pair(Some(key(1)), Some(key(1)));
    p.server = ServerSession::new(p.now, info.clone(), Limits::default())
        .with_psk(key(1), Nonce([0x5e; crate::auth::NONCE_BYTES]));
    p.drive();
    assert!(p.client.server_info().is_empty(), "nothing before accept");
    p.server.accept(p.now, 40000, 7);
    p.drive();
    assert_eq!(p.client.server_info(), &info);
    // A keyless server still introduces itself in its welcome.
    let mut open = ServerSession::new(now, info.clone(), Limits::default());
    open.handle_msg(
        now,
        Msg::Hello {
            client_info: BTreeMap::new(),
            client_nonce: None,
        },
    );
    assert!(
        matches!(open.poll_msg(), Some(Msg::Welcome { server_info, .. }) if server_info == info)
    );
}

#[test]
fn clock_queries_are_answered_while_connecting_and_bounded() {
    let mut p = Pair::new(spec());
    p.drive();
    p.server.accept(p.now, 4242, 99);
    p.drive();
    // Before `accept` a query would be unexpected; while connecting it is answered.
    for i in 0..3u64 {
        p.client.clock_query(100 + i);
        p.drive();
        let Some(ServerEvent::ClockQuery { t1_ns }) = p.server_events.last().cloned() else {
            panic!("{:?}", p.server_events);
        };
        assert_eq!(t1_ns, 100 + i);
        p.server.clock_reply(t1_ns, 1000 + i, 1001 + i);
        p.drive();
        assert_eq!(
            p.client_events.last(),
            Some(&ClientEvent::Clock {
                t1_ns: 100 + i,
                t2_ns: 1000 + i,
                t3_ns: 1001 + i
            })
        );
    }
    // The session goes on as usual.
    p.client.connected(p.now, None);
    p.drive();
    assert_eq!(p.server.state(), ServerState::Starting);

    // A client that keeps asking is cut off after MAX_CLOCK_QUERIES.
    let mut p = Pair::new(spec());
    p.drive();
    p.server.accept(p.now, 4242, 99);
    p.drive();
    for i in 0..=u64::from(crate::proto::MAX_CLOCK_QUERIES) {
        p.client.clock_query(i);
        p.drive();
        if let Some(ServerEvent::ClockQuery { t1_ns }) = p.server_events.last().cloned() {
            p.server.clock_reply(t1_ns, 1, 2);
            p.drive();
        }
    }
    assert_eq!(p.server.state(), ServerState::Failed);
    assert_eq!(p.client.state(), ClientState::Failed);
}

#[test]
fn a_running_server_answers_a_liveness_query_and_the_test_goes_on() {
    let mut p = Pair::new(spec());
    p.drive();
    p.server.accept(p.now, 4242, 99);
    p.drive();
    p.client.connected(p.now, None);
    p.drive();
    p.server.started(p.now);
    p.drive();
    assert_eq!(p.client.state(), ClientState::Running);
    // A stalled data path: the client asks whether the server is still there.
    p.client.liveness_query(7);
    p.drive();
    let Some(ServerEvent::ClockQuery { t1_ns }) = p.server_events.last().cloned() else {
        panic!("{:?}", p.server_events);
    };
    assert_eq!(t1_ns, 7);
    p.server.clock_reply(t1_ns, 1, 2);
    p.drive();
    assert_eq!(p.client_events.last(), Some(&ClientEvent::Alive));
    assert_eq!(p.client.state(), ClientState::Running);
    assert_eq!(p.server.state(), ServerState::Running);
    // The test ends as usual.
    p.client.finish(p.now, SideStats::default());
    p.drive();
    p.server.result(SideStats::default());
    p.drive();
    assert_eq!(p.client.state(), ClientState::Done);
}
