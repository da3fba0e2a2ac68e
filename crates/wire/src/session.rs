//! The client and server control sessions as sans-I/O state machines (the quinn-proto
//! shape): feed them messages with `handle_msg(now, msg)` and timer expiries with
//! `handle_timeout(now)`, then drain `poll_msg()` (messages to send) and `poll_event()`
//! (what the application must do). `poll_timeout()` says when to call back. They own
//! no sockets and read no clock, so both ends run in memory on virtual time in tests.
//!
//! Message order (client → server, ← server → client):
//! `hello ← welcome, request ← accept, start ← started, [← sender_done], finished ← result`.
//! Any `error` ends the session. Anything out of order gets an error reply and ends it.
//!
//! With a pre-shared key (`with_psk`), `hello` / `welcome` carry the nonces, `welcome`
//! the server's proof and `request` the client's (see [`crate::auth`]): the client
//! checks the server before sending its request and refuses a server without a proof;
//! the server checks the client before it looks at the request. The caller draws the
//! nonces from the OS.

use crate::auth::{Handshake, Nonce, Psk, Role, SessionToken};
use crate::proto::{validate_spec, ErrorCode, Msg, SideStats, WireError};
use crate::spec::{Bound, TestSpec};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// Time limits of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest wait for any handshake message (hello … started, and the result).
    pub handshake: Duration,
    /// Extra time allowed beyond a duration-bound test before the peer counts as gone.
    pub run_slack: Duration,
    /// Longest data phase of a count-bound test.
    pub count_run_max: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            handshake: Duration::from_secs(5),
            run_slack: Duration::from_secs(10),
            count_run_max: Duration::from_secs(3600),
        }
    }
}

impl Limits {
    fn run_deadline(&self, now: Instant, spec: &TestSpec) -> Instant {
        match spec.bound {
            Bound::DurationNs(ns) => now + Duration::from_nanos(ns) + self.run_slack,
            Bound::Count(_) => now + self.count_run_max,
        }
    }
}

/// Longest a server waits for the first message (a client sends `hello` as soon as it
/// has connected): a peer that connects and says nothing holds a connection slot this
/// long at most.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a session ended without a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    #[error("the peer reported an error ({code:?}): {message}")]
    Remote { code: ErrorCode, message: String },
    #[error("unexpected '{got}' message while {state}")]
    Unexpected { got: &'static str, state: String },
    #[error("timed out while {0}")]
    Timeout(String),
    #[error(transparent)]
    Wire(#[from] WireError),
    #[error("{0}")]
    Local(String),
    /// Authentication failed on this side (the peer's proof is wrong or missing).
    #[error("{0}")]
    Auth(AuthFailure),
}

/// Why authentication failed on this side of a keyed session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthFailure {
    /// Server: the client's hello carries no nonce, but the server has a key.
    #[error("{}", AUTH_REQUIRED_MESSAGE)]
    KeyRequired,
    /// Server: the client's proof is missing or does not match the key.
    #[error("{}", AUTH_FAILED_MESSAGE)]
    ClientProof,
    /// Client: the server sent no proof.
    #[error(
        "authentication failed: the server did not prove it holds the pre-shared key (it runs \
         without --psk-file, or it is not the server you meant)"
    )]
    ServerUnproven,
    /// Client: the server's proof does not match this key.
    #[error("{} (the server's proof does not match this key)", AUTH_FAILED_MESSAGE)]
    ServerProof,
}

/// The server's reply to a hello without a nonce when it has a key.
pub const AUTH_REQUIRED_MESSAGE: &str = "the server requires a pre-shared key: use --psk-file";
/// The reply to a wrong proof (a missing client proof reads the same).
pub const AUTH_FAILED_MESSAGE: &str = "authentication failed: the pre-shared keys differ";

/// One side's key and its own nonce for this connection.
#[derive(Debug, Clone)]
struct KeyState {
    key: Psk,
    own_nonce: Nonce,
    /// Set once the peer's nonce is known (and, on the client, the server's proof checked).
    token: Option<SessionToken>,
}

// ---------------------------------------------------------------- client

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientState {
    AwaitWelcome,
    AwaitAccept,
    /// The application is opening data connections.
    Connecting,
    AwaitStarted,
    Running,
    AwaitResult,
    Done,
    Failed,
}

/// What the client application must act on.
// One event per test, moved once: the size of `Result` costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent {
    /// Open data connections to `data_port`, then call [`ClientSession::connected`].
    Accepted {
        data_port: u16,
        token: u64,
        /// QUIC tests: the server's certificate, hex DER (`proto::quic_cert_der`).
        quic_cert: Option<String>,
    },
    /// The server answered a clock query (stamp t4 on receipt).
    Clock {
        t1_ns: u64,
        t2_ns: u64,
        t3_ns: u64,
    },
    /// The server answered a liveness query ([`ClientSession::liveness_query`]) while
    /// the test ran: the control connection carries messages both ways.
    Alive,
    /// Start sending / receiving.
    Started,
    /// The server's senders are done (drain, then finish).
    PeerSenderDone {
        sent_packets: u64,
        sent_bytes: u64,
    },
    /// The server's measurements; the session is over.
    Result(SideStats),
    Failed(SessionError),
}

#[derive(Debug)]
pub struct ClientSession {
    state: ClientState,
    spec: TestSpec,
    limits: Limits,
    deadline: Option<Instant>,
    out: VecDeque<Msg>,
    events: VecDeque<ClientEvent>,
    server_info: BTreeMap<String, String>,
    auth: Option<KeyState>,
}

impl ClientSession {
    /// Start a session: queues `hello`.
    pub fn new(
        now: Instant,
        spec: TestSpec,
        client_info: BTreeMap<String, String>,
        limits: Limits,
    ) -> ClientSession {
        let mut s = ClientSession {
            state: ClientState::AwaitWelcome,
            spec,
            limits,
            deadline: Some(now + limits.handshake),
            out: VecDeque::new(),
            events: VecDeque::new(),
            server_info: BTreeMap::new(),
            auth: None,
        };
        s.out.push_back(Msg::Hello {
            client_info,
            client_nonce: None,
        });
        s
    }

    /// Authenticate with `key`; `client_nonce` must be fresh OS randomness. Call right
    /// after [`ClientSession::new`], before polling the hello.
    pub fn with_psk(mut self, key: Psk, client_nonce: Nonce) -> ClientSession {
        for m in self.out.iter_mut() {
            if let Msg::Hello {
                client_nonce: n, ..
            } = m
            {
                *n = Some(client_nonce);
            }
        }
        self.auth = Some(KeyState {
            key,
            own_nonce: client_nonce,
            token: None,
        });
        self
    }

    /// The session token, once the server has proven the key (keyed sessions only).
    pub fn session_token(&self) -> Option<SessionToken> {
        self.auth.as_ref().and_then(|a| a.token)
    }

    /// Check the server's proof; the client's proof for the request on success.
    fn authenticate_server(
        &mut self,
        server_nonce: Option<Nonce>,
        server_proof: Option<crate::auth::Proof>,
    ) -> Result<Option<crate::auth::Proof>, AuthFailure> {
        let Some(a) = self.auth.as_mut() else {
            return Ok(None);
        };
        let (Some(sn), Some(proof)) = (server_nonce, server_proof) else {
            return Err(AuthFailure::ServerUnproven);
        };
        let hs = Handshake::new(&a.key, sn, a.own_nonce);
        if hs.verify(Role::Server, &proof.0).is_err() {
            return Err(AuthFailure::ServerProof);
        }
        a.token = Some(hs.session_token());
        Ok(Some(hs.proof(Role::Client)))
    }

    pub fn state(&self) -> ClientState {
        self.state
    }
    pub fn server_info(&self) -> &BTreeMap<String, String> {
        &self.server_info
    }

    fn set_state(&mut self, state: ClientState, deadline: Option<Instant>) {
        self.state = state;
        self.deadline = deadline;
    }

    fn fail(&mut self, err: SessionError) {
        self.set_state(ClientState::Failed, None);
        self.events.push_back(ClientEvent::Failed(err));
    }

    pub fn handle_msg(&mut self, now: Instant, msg: Msg) {
        use ClientState as S;
        let hs = Some(now + self.limits.handshake);
        match (self.state, msg) {
            (S::Done | S::Failed, _) => {}
            (_, Msg::Error { code, message }) => self.fail(SessionError::Remote { code, message }),
            (
                S::AwaitWelcome,
                Msg::Welcome {
                    server_info,
                    server_nonce,
                    server_proof,
                },
            ) => match self.authenticate_server(server_nonce, server_proof) {
                Ok(client_proof) => {
                    self.server_info = crate::text::cap_metadata(server_info);
                    self.out.push_back(Msg::Request {
                        spec: self.spec.clone(),
                        client_proof,
                    });
                    self.set_state(S::AwaitAccept, hs);
                }
                Err(why) => {
                    self.out.push_back(Msg::Error {
                        code: ErrorCode::AuthFailed,
                        message: why.to_string(),
                    });
                    self.fail(SessionError::Auth(why));
                }
            },
            (
                S::AwaitAccept,
                Msg::Accept {
                    data_port,
                    token,
                    server_info,
                    quic_cert,
                },
            ) => {
                if !server_info.is_empty() {
                    // A keyed server tells who it is only after the key was proven.
                    self.server_info = crate::text::cap_metadata(server_info);
                }
                self.set_state(S::Connecting, hs);
                self.events.push_back(ClientEvent::Accepted {
                    data_port,
                    token,
                    quic_cert,
                });
            }
            (
                S::Connecting,
                Msg::ClockReply {
                    t1_ns,
                    t2_ns,
                    t3_ns,
                },
            ) => self.events.push_back(ClientEvent::Clock {
                t1_ns,
                t2_ns,
                t3_ns,
            }),
            (S::AwaitStarted, Msg::Started) => {
                let d = self.limits.run_deadline(now, &self.spec);
                self.set_state(S::Running, Some(d));
                self.events.push_back(ClientEvent::Started);
            }
            (
                S::Running | S::AwaitResult,
                Msg::SenderDone {
                    sent_packets,
                    sent_bytes,
                },
            ) => self.events.push_back(ClientEvent::PeerSenderDone {
                sent_packets,
                sent_bytes,
            }),
            (S::Running | S::AwaitResult, Msg::ClockReply { .. }) => {
                self.events.push_back(ClientEvent::Alive)
            }
            (S::AwaitResult, Msg::Result { stats }) => {
                self.set_state(S::Done, None);
                self.events.push_back(ClientEvent::Result(stats));
            }
            (state, other) => {
                let err = SessionError::Unexpected {
                    got: other.name(),
                    state: format!("{state:?}"),
                };
                self.out.push_back(Msg::Error {
                    code: ErrorCode::UnexpectedMessage,
                    message: err.to_string(),
                });
                self.fail(err);
            }
        }
    }

    /// The control stream could not be decoded.
    pub fn handle_decode_error(&mut self, err: WireError) {
        if !matches!(self.state, ClientState::Done | ClientState::Failed) {
            self.fail(SessionError::Wire(err));
        }
    }

    /// Ask the server's wall clock (while connecting); `t1_ns` is this client's wall
    /// clock now. The reply comes as [`ClientEvent::Clock`].
    pub fn clock_query(&mut self, t1_ns: u64) {
        if self.state == ClientState::Connecting {
            self.out.push_back(Msg::ClockQuery { t1_ns });
        }
    }

    /// Ask whether the server still answers while the test runs (a clock query, which
    /// a server answers in any state of the test); the answer is [`ClientEvent::Alive`].
    /// For telling a stalled data path from a server that is gone.
    pub fn liveness_query(&mut self, t1_ns: u64) {
        if matches!(self.state, ClientState::Running | ClientState::AwaitResult) {
            self.out.push_back(Msg::ClockQuery { t1_ns });
        }
    }

    /// Data connections are open; `udp_port` is where this client receives datagrams.
    pub fn connected(&mut self, now: Instant, udp_port: Option<u16>) {
        if self.state == ClientState::Connecting {
            self.out.push_back(Msg::Start { udp_port });
            self.set_state(ClientState::AwaitStarted, Some(now + self.limits.handshake));
        }
    }

    /// This client's part is done; send its measurements and wait for the server's.
    pub fn finish(&mut self, now: Instant, stats: SideStats) {
        if self.state == ClientState::Running {
            self.out.push_back(Msg::Finished { stats });
            self.set_state(ClientState::AwaitResult, Some(now + self.limits.handshake));
        }
    }

    /// A local failure: tell the server, end the session.
    pub fn abort(&mut self, message: &str) {
        if !matches!(self.state, ClientState::Done | ClientState::Failed) {
            self.out.push_back(Msg::Error {
                code: ErrorCode::Internal,
                message: message.to_string(),
            });
            self.fail(SessionError::Local(message.to_string()));
        }
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(d) = self.deadline {
            if now >= d {
                let what = format!("waiting in state {:?}", self.state);
                self.fail(SessionError::Timeout(what));
            }
        }
    }

    /// Messages or events are waiting to be polled.
    pub fn has_output(&self) -> bool {
        !self.out.is_empty() || !self.events.is_empty()
    }
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }
    pub fn poll_msg(&mut self) -> Option<Msg> {
        self.out.pop_front()
    }
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }
}

// ---------------------------------------------------------------- server

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerState {
    AwaitHello,
    AwaitRequest,
    /// The application decides whether it can run the request.
    Deciding,
    AwaitStart,
    /// The application is starting its receivers / senders.
    Starting,
    Running,
    /// The client has finished; the application is collecting the result.
    Finishing,
    Done,
    Failed,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent {
    /// Call [`ServerSession::accept`] or [`ServerSession::reject`].
    TestRequested {
        spec: TestSpec,
        client_info: BTreeMap<String, String>,
    },
    /// Answer with [`ServerSession::clock_reply`], stamping the wall clock.
    ClockQuery {
        t1_ns: u64,
    },
    /// Start the data phase, then call [`ServerSession::started`].
    StartRequested {
        udp_port: Option<u16>,
    },
    /// Stop, drain, and call [`ServerSession::result`].
    PeerFinished(SideStats),
    Failed(SessionError),
}

#[derive(Debug)]
pub struct ServerSession {
    state: ServerState,
    limits: Limits,
    deadline: Option<Instant>,
    out: VecDeque<Msg>,
    events: VecDeque<ServerEvent>,
    server_info: BTreeMap<String, String>,
    client_info: BTreeMap<String, String>,
    spec: Option<TestSpec>,
    auth: Option<KeyState>,
    /// The client's nonce (keyed sessions), kept to check its proof.
    client_nonce: Option<Nonce>,
    clock_queries: u32,
}

impl ServerSession {
    pub fn new(now: Instant, server_info: BTreeMap<String, String>, limits: Limits) -> Self {
        ServerSession {
            state: ServerState::AwaitHello,
            limits,
            deadline: Some(now + limits.handshake.min(HELLO_TIMEOUT)),
            out: VecDeque::new(),
            events: VecDeque::new(),
            server_info,
            client_info: BTreeMap::new(),
            spec: None,
            auth: None,
            client_nonce: None,
            clock_queries: 0,
        }
    }

    /// Require clients to prove `key`; `server_nonce` must be fresh OS randomness.
    pub fn with_psk(mut self, key: Psk, server_nonce: Nonce) -> ServerSession {
        self.auth = Some(KeyState {
            key,
            own_nonce: server_nonce,
            token: None,
        });
        self
    }

    /// The session token, once the client has proven the key (keyed sessions only).
    pub fn session_token(&self) -> Option<SessionToken> {
        self.auth.as_ref().and_then(|a| a.token)
    }

    /// Check a keyed client's proof (no key: always fine).
    fn authenticate_client(&mut self, proof: Option<crate::auth::Proof>) -> bool {
        let Some(a) = self.auth.as_mut() else {
            return true;
        };
        let (Some(cn), Some(proof)) = (self.client_nonce, proof) else {
            return false;
        };
        let hs = Handshake::new(&a.key, a.own_nonce, cn);
        if hs.verify(Role::Client, &proof.0).is_err() {
            return false;
        }
        a.token = Some(hs.session_token());
        true
    }

    pub fn state(&self) -> ServerState {
        self.state
    }
    pub fn spec(&self) -> Option<&TestSpec> {
        self.spec.as_ref()
    }

    fn set_state(&mut self, state: ServerState, deadline: Option<Instant>) {
        self.state = state;
        self.deadline = deadline;
    }

    fn fail_with_reply(&mut self, code: ErrorCode, err: SessionError) {
        self.out.push_back(Msg::Error {
            code,
            message: err.to_string(),
        });
        self.set_state(ServerState::Failed, None);
        self.events.push_back(ServerEvent::Failed(err));
    }

    pub fn handle_msg(&mut self, now: Instant, msg: Msg) {
        use ServerState as S;
        let hs = Some(now + self.limits.handshake);
        match (self.state, msg) {
            (S::Done | S::Failed, _) => {}
            (_, Msg::Error { code, message }) => {
                self.set_state(S::Failed, None);
                self.events
                    .push_back(ServerEvent::Failed(SessionError::Remote { code, message }));
            }
            (
                S::AwaitHello,
                Msg::Hello {
                    client_info,
                    client_nonce,
                },
            ) => {
                let (server_nonce, server_proof) = match (&self.auth, client_nonce) {
                    (None, _) => (None, None),
                    (Some(_), None) => {
                        return self.fail_with_reply(
                            ErrorCode::AuthRequired,
                            SessionError::Auth(AuthFailure::KeyRequired),
                        )
                    }
                    (Some(a), Some(cn)) => {
                        let hs = Handshake::new(&a.key, a.own_nonce, cn);
                        (Some(a.own_nonce), Some(hs.proof(Role::Server)))
                    }
                };
                self.client_nonce = client_nonce;
                self.client_info = crate::text::cap_metadata(client_info);
                // A keyed server says nothing about its host before the client has
                // proven the key: its metadata goes with `accept`.
                let server_info = if self.auth.is_some() {
                    BTreeMap::new()
                } else {
                    self.server_info.clone()
                };
                self.out.push_back(Msg::Welcome {
                    server_info,
                    server_nonce,
                    server_proof,
                });
                self.set_state(S::AwaitRequest, hs);
            }
            (S::AwaitRequest, Msg::Request { client_proof, .. })
                if !self.authenticate_client(client_proof) =>
            {
                self.fail_with_reply(
                    ErrorCode::AuthFailed,
                    SessionError::Auth(AuthFailure::ClientProof),
                )
            }
            (S::AwaitRequest, Msg::Request { spec, .. }) => match validate_spec(&spec) {
                Ok(()) => {
                    self.spec = Some(spec.clone());
                    self.set_state(S::Deciding, hs);
                    self.events.push_back(ServerEvent::TestRequested {
                        spec,
                        client_info: self.client_info.clone(),
                    });
                }
                Err(e) => self.fail_with_reply(
                    ErrorCode::BadRequest,
                    SessionError::Local(format!("bad test request: {e}")),
                ),
            },
            (S::AwaitStart | S::Running | S::Finishing, Msg::ClockQuery { t1_ns }) => {
                self.clock_queries += 1;
                if self.clock_queries > crate::proto::MAX_CLOCK_QUERIES {
                    return self.fail_with_reply(
                        ErrorCode::LimitExceeded,
                        SessionError::Local(format!(
                            "more than {} clock queries in one session",
                            crate::proto::MAX_CLOCK_QUERIES
                        )),
                    );
                }
                self.events.push_back(ServerEvent::ClockQuery { t1_ns });
            }
            (S::AwaitStart, Msg::Start { udp_port }) => {
                self.set_state(S::Starting, hs);
                self.events
                    .push_back(ServerEvent::StartRequested { udp_port });
            }
            (S::Running, Msg::Finished { stats }) => {
                self.set_state(S::Finishing, hs);
                self.events.push_back(ServerEvent::PeerFinished(stats));
            }
            (state, other) => {
                let err = SessionError::Unexpected {
                    got: other.name(),
                    state: format!("{state:?}"),
                };
                self.fail_with_reply(ErrorCode::UnexpectedMessage, err);
            }
        }
    }

    /// Bytes from the client could not be decoded: reply with an error and end.
    pub fn handle_decode_error(&mut self, err: WireError) {
        if matches!(self.state, ServerState::Done | ServerState::Failed) {
            return;
        }
        let code = match err {
            WireError::VersionMismatch { .. } => ErrorCode::VersionMismatch,
            _ => ErrorCode::Malformed,
        };
        self.fail_with_reply(code, SessionError::Wire(err));
    }

    pub fn accept(&mut self, now: Instant, data_port: u16, token: u64) {
        self.accept_with_cert(now, data_port, token, None);
    }

    /// [`ServerSession::accept`] for a QUIC test: `quic_cert` is the hex DER of the
    /// certificate its endpoint presents.
    pub fn accept_with_cert(
        &mut self,
        now: Instant,
        data_port: u16,
        token: u64,
        quic_cert: Option<String>,
    ) {
        if self.state == ServerState::Deciding {
            let server_info = if self.auth.is_some() {
                self.server_info.clone()
            } else {
                BTreeMap::new()
            };
            self.out.push_back(Msg::Accept {
                data_port,
                token,
                server_info,
                quic_cert,
            });
            self.set_state(ServerState::AwaitStart, Some(now + self.limits.handshake));
        }
    }

    /// Answer a clock query: `t2_ns` when it arrived, `t3_ns` now (wall clock).
    pub fn clock_reply(&mut self, t1_ns: u64, t2_ns: u64, t3_ns: u64) {
        if matches!(
            self.state,
            ServerState::AwaitStart | ServerState::Running | ServerState::Finishing
        ) {
            self.out.push_back(Msg::ClockReply {
                t1_ns,
                t2_ns,
                t3_ns,
            });
        }
    }

    pub fn reject(&mut self, code: ErrorCode, message: &str) {
        if !matches!(self.state, ServerState::Done | ServerState::Failed) {
            self.fail_with_reply(code, SessionError::Local(message.to_string()));
        }
    }

    pub fn started(&mut self, now: Instant) {
        if self.state == ServerState::Starting {
            let d = match &self.spec {
                Some(spec) => self.limits.run_deadline(now, spec),
                None => now + self.limits.handshake,
            };
            self.out.push_back(Msg::Started);
            self.set_state(ServerState::Running, Some(d));
        }
    }

    /// End the running test (failed, timed out) at `at` if its own deadline is later:
    /// for a test whose end the server bounds from outside, such as a count-bound test
    /// of a group that must end with the group's budget.
    pub fn end_run_by(&mut self, at: Instant) {
        if matches!(self.state, ServerState::Running | ServerState::Finishing) {
            self.deadline = Some(self.deadline.map_or(at, |d| d.min(at)));
        }
    }

    pub fn sender_done(&mut self, sent_packets: u64, sent_bytes: u64) {
        if matches!(self.state, ServerState::Running | ServerState::Finishing) {
            self.out.push_back(Msg::SenderDone {
                sent_packets,
                sent_bytes,
            });
        }
    }

    pub fn result(&mut self, stats: SideStats) {
        if self.state == ServerState::Finishing {
            self.out.push_back(Msg::Result { stats });
            self.set_state(ServerState::Done, None);
        }
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(d) = self.deadline {
            if now >= d {
                let what = format!("waiting in state {:?}", self.state);
                self.fail_with_reply(ErrorCode::Timeout, SessionError::Timeout(what));
            }
        }
    }

    /// Messages or events are waiting to be polled.
    pub fn has_output(&self) -> bool {
        !self.out.is_empty() || !self.events.is_empty()
    }
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.deadline
    }
    pub fn poll_msg(&mut self) -> Option<Msg> {
        self.out.pop_front()
    }
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }
    /// Done or failed, with every reply drained: close the connection.
    pub fn is_closed(&self) -> bool {
        matches!(self.state, ServerState::Done | ServerState::Failed) && self.out.is_empty()
    }
}

#[cfg(test)]
mod tests;
