//! Sans-I/O control-channel state machines for both ends of an iperf3 test (§4). They
//! take the bytes read from the control socket (in any split or coalescing) and give
//! back events plus the bytes to write; the socket layer in `client`/`server` moves
//! bytes and data, and decides nothing about the protocol.

use crate::error::Iperf3Error;
use crate::json::{Params, Results};
use crate::proto::{
    decode_json_frame, encode_json, FrameError, State, COOKIE_LEN, MAX_PARAMS_JSON_BYTES,
    MAX_RESULTS_JSON_BYTES,
};
use serde_json::Value;

fn frame_err(what: &str, e: FrameError) -> Iperf3Error {
    Iperf3Error::Protocol(format!("{what}: {e}"))
}

/// What the server told the client.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent {
    /// Parameters were requested and have been queued for sending.
    ParamsQueued,
    /// Open the data streams now.
    CreateStreams,
    /// Streams are ready; start the timers.
    TestStart,
    /// Start moving data.
    TestRunning,
    /// Send our results with [`ClientSession::send_results`].
    ExchangeResults,
    /// The server's results document.
    ServerResults(Value),
    /// The test is over; IPERF_DONE has been queued. Close after writing it.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientPhase {
    AwaitParamExchange,
    Setup,
    Running,
    AwaitOwnResults,
    AwaitServerResults,
    AwaitDisplay,
    Done,
}

/// The client end of the control connection.
#[derive(Debug)]
pub struct ClientSession {
    phase: ClientPhase,
    params: Value,
    inbuf: Vec<u8>,
    out: Vec<u8>,
}

impl ClientSession {
    /// Starts a session: the cookie is queued at once.
    pub fn new(cookie: &[u8; COOKIE_LEN], params: Value) -> ClientSession {
        ClientSession {
            phase: ClientPhase::AwaitParamExchange,
            params,
            inbuf: Vec::new(),
            out: cookie.to_vec(),
        }
    }

    /// Bytes to write to the control socket now.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    pub fn is_done(&self) -> bool {
        self.phase == ClientPhase::Done
    }

    /// Our duration, byte or block limit was reached: queue TEST_END.
    pub fn test_end(&mut self) {
        self.out.push(State::TestEnd.byte());
    }

    /// We were interrupted: queue CLIENT_TERMINATE.
    pub fn terminate(&mut self) {
        self.out.push(State::ClientTerminate.byte());
        self.phase = ClientPhase::Done;
    }

    /// Answer EXCHANGE_RESULTS with our results document.
    pub fn send_results(&mut self, results: &Value) {
        self.out.extend_from_slice(&encode_json(results));
        self.phase = ClientPhase::AwaitServerResults;
    }

    /// The server closed the control connection.
    pub fn feed_eof(&mut self) -> Result<(), Iperf3Error> {
        if self.phase == ClientPhase::Done {
            return Ok(());
        }
        // 3.12 reports IEAUTHTEST with a lone int32 after `fe`, then closes.
        if self.inbuf.first() == Some(&State::ServerError.byte()) && self.inbuf.len() >= 5 {
            let code =
                i32::from_be_bytes([self.inbuf[1], self.inbuf[2], self.inbuf[3], self.inbuf[4]]);
            return Err(Iperf3Error::server_error(code, 0));
        }
        Err(Iperf3Error::Protocol(
            "the server closed the control connection unexpectedly".into(),
        ))
    }

    /// Feeds bytes read from the control socket.
    pub fn feed(&mut self, data: &[u8]) -> Result<Vec<ClientEvent>, Iperf3Error> {
        self.inbuf.extend_from_slice(data);
        let mut events = Vec::new();
        loop {
            match self.phase {
                ClientPhase::Done => {
                    self.inbuf.clear();
                    break;
                }
                ClientPhase::AwaitServerResults => {
                    match decode_json_frame(&self.inbuf, MAX_RESULTS_JSON_BYTES)
                        .map_err(|e| frame_err("server results", e))?
                    {
                        None => break,
                        Some((value, used)) => {
                            self.inbuf.drain(..used);
                            self.phase = ClientPhase::AwaitDisplay;
                            events.push(ClientEvent::ServerResults(value));
                        }
                    }
                }
                _ => {
                    let Some(&byte) = self.inbuf.first() else {
                        break;
                    };
                    if byte == State::ServerError.byte() {
                        let Some(codes) = self.inbuf.get(1..9) else {
                            break;
                        };
                        let code = i32::from_be_bytes([codes[0], codes[1], codes[2], codes[3]]);
                        let errno = i32::from_be_bytes([codes[4], codes[5], codes[6], codes[7]]);
                        if code == crate::policy::code::BUSY {
                            // Our server's "busy" after the handshake: waited out like 0xFF.
                            return Err(Iperf3Error::Busy);
                        }
                        return Err(Iperf3Error::server_error(code, errno));
                    }
                    self.inbuf.remove(0);
                    if let Some(ev) = self.on_state_byte(byte)? {
                        events.push(ev);
                    }
                }
            }
        }
        Ok(events)
    }

    fn on_state_byte(&mut self, byte: u8) -> Result<Option<ClientEvent>, Iperf3Error> {
        let state = State::from_byte(byte).ok_or_else(|| {
            Iperf3Error::Protocol(format!("received an unknown control message ({byte:#04x})"))
        })?;
        Ok(Some(match state {
            State::ParamExchange => {
                self.out.extend_from_slice(&encode_json(&self.params));
                self.phase = ClientPhase::Setup;
                ClientEvent::ParamsQueued
            }
            State::CreateStreams => ClientEvent::CreateStreams,
            State::TestStart => ClientEvent::TestStart,
            State::TestRunning => {
                self.phase = ClientPhase::Running;
                ClientEvent::TestRunning
            }
            State::ExchangeResults => {
                self.phase = ClientPhase::AwaitOwnResults;
                ClientEvent::ExchangeResults
            }
            State::DisplayResults => {
                self.out.push(State::IperfDone.byte());
                self.phase = ClientPhase::Done;
                ClientEvent::Done
            }
            State::IperfDone => return Ok(None),
            State::ServerTerminate => return Err(Iperf3Error::ServerTerminated),
            State::AccessDenied if self.phase == ClientPhase::AwaitParamExchange => {
                return Err(Iperf3Error::Busy)
            }
            State::AccessDenied => {
                return Err(Iperf3Error::Protocol(
                    "the server denied access during the test".into(),
                ))
            }
            other => {
                return Err(Iperf3Error::Protocol(format!(
                    "unexpected control message {other:?} from the server"
                )))
            }
        }))
    }
}

/// What the client told the server.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent {
    /// The control cookie (stored to check the data connections); PARAM_EXCHANGE queued.
    Cookie([u8; COOKIE_LEN]),
    /// The test parameters. Prepare the streams, then call [`ServerSession::create_streams`].
    Params(Params),
    /// The client ended the test: stop data, then call [`ServerSession::exchange_results`].
    TestEnd,
    /// The client was interrupted; the test is over.
    ClientTerminate,
    /// The client's results; answer with [`ServerSession::send_results`].
    ClientResults(Results),
    /// IPERF_DONE (or EOF after our DISPLAY_RESULTS): the session is over.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerPhase {
    AwaitCookie,
    AwaitParams,
    Test,
    AwaitClientResults,
    AwaitDone,
    Done,
}

/// The server end of the control connection.
#[derive(Debug)]
pub struct ServerSession {
    phase: ServerPhase,
    inbuf: Vec<u8>,
    out: Vec<u8>,
}

impl Default for ServerSession {
    fn default() -> Self {
        ServerSession::new()
    }
}

impl ServerSession {
    pub fn new() -> ServerSession {
        ServerSession {
            phase: ServerPhase::AwaitCookie,
            inbuf: Vec::new(),
            out: Vec::new(),
        }
    }

    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    pub fn is_done(&self) -> bool {
        self.phase == ServerPhase::Done
    }

    /// Streams are prepared: queue CREATE_STREAMS.
    pub fn create_streams(&mut self) {
        self.out.push(State::CreateStreams.byte());
    }

    /// All streams are connected: queue TEST_START and TEST_RUNNING.
    pub fn start(&mut self) {
        self.out
            .extend_from_slice(&[State::TestStart.byte(), State::TestRunning.byte()]);
    }

    /// Data has stopped after TEST_END: queue EXCHANGE_RESULTS.
    pub fn exchange_results(&mut self) {
        self.out.push(State::ExchangeResults.byte());
        self.phase = ServerPhase::AwaitClientResults;
    }

    /// Queue our results and DISPLAY_RESULTS.
    pub fn send_results(&mut self, results: &Results) {
        self.out.extend_from_slice(&encode_json(&results.to_json()));
        self.out.push(State::DisplayResults.byte());
        self.phase = ServerPhase::AwaitDone;
    }

    /// Queue SERVER_ERROR with an iperf3 error code and errno; the session is over.
    pub fn server_error(&mut self, code: i32, errno: i32) {
        self.out.push(State::ServerError.byte());
        self.out.extend_from_slice(&code.to_be_bytes());
        self.out.extend_from_slice(&errno.to_be_bytes());
        self.phase = ServerPhase::Done;
    }

    /// The client closed the control connection.
    pub fn feed_eof(&mut self) -> Result<ServerEvent, Iperf3Error> {
        match self.phase {
            ServerPhase::AwaitDone | ServerPhase::Done => {
                self.phase = ServerPhase::Done;
                Ok(ServerEvent::Done)
            }
            _ => Err(Iperf3Error::Protocol(
                "the client has unexpectedly closed the connection".into(),
            )),
        }
    }

    /// Feeds bytes read from the control socket.
    pub fn feed(&mut self, data: &[u8]) -> Result<Vec<ServerEvent>, Iperf3Error> {
        self.inbuf.extend_from_slice(data);
        let mut events = Vec::new();
        loop {
            match self.phase {
                ServerPhase::Done => {
                    self.inbuf.clear();
                    break;
                }
                ServerPhase::AwaitCookie => {
                    let Some(bytes) = self.inbuf.get(..COOKIE_LEN) else {
                        break;
                    };
                    let mut cookie = [0u8; COOKIE_LEN];
                    cookie.copy_from_slice(bytes);
                    self.inbuf.drain(..COOKIE_LEN);
                    self.out.push(State::ParamExchange.byte());
                    self.phase = ServerPhase::AwaitParams;
                    events.push(ServerEvent::Cookie(cookie));
                }
                ServerPhase::AwaitParams => {
                    let Some((value, used)) = decode_json_frame(&self.inbuf, MAX_PARAMS_JSON_BYTES)
                        .map_err(|e| frame_err("client parameters", e))?
                    else {
                        break;
                    };
                    self.inbuf.drain(..used);
                    let params = match Params::from_json(&value) {
                        Ok(p) => p,
                        Err(e) => {
                            // Tell the client why, as 3.21+ does (a 3.12 client prints it).
                            self.server_error(e.code, 0);
                            return Err(Iperf3Error::Protocol(format!("client parameters: {e}")));
                        }
                    };
                    self.phase = ServerPhase::Test;
                    events.push(ServerEvent::Params(params));
                }
                ServerPhase::AwaitClientResults => {
                    let Some((value, used)) =
                        decode_json_frame(&self.inbuf, MAX_RESULTS_JSON_BYTES)
                            .map_err(|e| frame_err("client results", e))?
                    else {
                        break;
                    };
                    self.inbuf.drain(..used);
                    let results = Results::from_json(&value)?;
                    // Until we answer, anything more is a protocol error; park in Test.
                    self.phase = ServerPhase::Test;
                    events.push(ServerEvent::ClientResults(results));
                }
                ServerPhase::Test | ServerPhase::AwaitDone => {
                    let Some(&byte) = self.inbuf.first() else {
                        break;
                    };
                    self.inbuf.remove(0);
                    match State::from_byte(byte) {
                        Some(State::TestStart) => {}
                        Some(State::TestEnd) => events.push(ServerEvent::TestEnd),
                        Some(State::ClientTerminate) => {
                            self.phase = ServerPhase::Done;
                            events.push(ServerEvent::ClientTerminate);
                        }
                        Some(State::IperfDone) => {
                            self.phase = ServerPhase::Done;
                            events.push(ServerEvent::Done);
                        }
                        _ => {
                            return Err(Iperf3Error::Protocol(format!(
                                "received an unknown control message ({byte:#04x})"
                            )))
                        }
                    }
                }
            }
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Protocol, StreamResult};
    use crate::proto::make_cookie;

    fn cookie() -> [u8; COOKIE_LEN] {
        make_cookie(&[7u8; 36])
    }

    fn results(bytes: u64) -> Results {
        Results {
            sender_has_retransmits: -1,
            streams: vec![StreamResult {
                id: 1,
                bytes,
                retransmits: -1,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    /// Runs a client and a server session against each other in memory, delivering the
    /// bytes `chunk` at a time, like the quinn `Pair` harness.
    fn run_pair(chunk: usize) -> (Vec<ClientEvent>, Vec<ServerEvent>) {
        let params = Params::new(Protocol::Udp, 1);
        let mut c = ClientSession::new(&cookie(), params.to_json());
        let mut s = ServerSession::new();
        let (mut cev, mut sev) = (Vec::new(), Vec::new());
        for _round in 0..50 {
            let to_server = c.take_output();
            for piece in to_server.chunks(chunk.max(1)) {
                for ev in s.feed(piece).unwrap() {
                    match &ev {
                        ServerEvent::Params(_) => s.create_streams(),
                        ServerEvent::TestEnd => s.exchange_results(),
                        ServerEvent::ClientResults(_) => s.send_results(&results(976)),
                        _ => {}
                    }
                    sev.push(ev);
                }
            }
            let to_client = s.take_output();
            for piece in to_client.chunks(chunk.max(1)) {
                for ev in c.feed(piece).unwrap() {
                    match &ev {
                        ClientEvent::CreateStreams => s.start(),
                        ClientEvent::TestRunning => c.test_end(),
                        ClientEvent::ExchangeResults => c.send_results(&results(1000).to_json()),
                        _ => {}
                    }
                    cev.push(ev);
                }
            }
            if c.is_done() && s.is_done() {
                break;
            }
        }
        (cev, sev)
    }

    #[test]
    fn a_whole_test_runs_in_memory_whatever_the_segmentation() {
        for chunk in [1, 3, 4096] {
            let (cev, sev) = run_pair(chunk);
            assert_eq!(cev.first(), Some(&ClientEvent::ParamsQueued));
            assert!(cev.contains(&ClientEvent::TestRunning));
            assert_eq!(cev.last(), Some(&ClientEvent::Done));
            let server_json = cev.iter().find_map(|e| match e {
                ClientEvent::ServerResults(v) => Some(v.clone()),
                _ => None,
            });
            assert_eq!(server_json.unwrap()["streams"][0]["bytes"], 976);
            assert!(matches!(sev[0], ServerEvent::Cookie(c) if c == cookie()));
            assert!(matches!(&sev[1], ServerEvent::Params(p) if p.protocol == Protocol::Udp));
            assert!(sev
                .iter()
                .any(|e| matches!(e, ServerEvent::ClientResults(r) if r.streams[0].bytes == 1000)));
            assert_eq!(sev.last(), Some(&ServerEvent::Done));
        }
    }

    #[test]
    fn client_sees_busy_and_server_errors() {
        let mut c = ClientSession::new(&cookie(), Value::Null);
        assert_eq!(c.take_output().len(), COOKIE_LEN);
        assert!(matches!(c.feed(&[0xff]), Err(Iperf3Error::Busy)));

        let mut c = ClientSession::new(&cookie(), Value::Null);
        assert!(
            c.feed(&[0xfe, 0, 0, 0]).unwrap().is_empty(),
            "waits for all 8 bytes"
        );
        let err = c.feed(&[0xca, 0, 0, 0, 0x62]).unwrap_err();
        assert!(
            matches!(
                err,
                Iperf3Error::ServerError {
                    code: 202,
                    errno: 98,
                    ..
                }
            ),
            "{err}"
        );

        // Our server's "busy" after the handshake (IEACCESSDENIED) is waited out as 0xFF.
        let mut c = ClientSession::new(&cookie(), Value::Null);
        assert!(matches!(
            c.feed(&[0xfe, 0, 0, 0, 121, 0, 0, 0, 0]),
            Err(Iperf3Error::Busy)
        ));

        let mut c = ClientSession::new(&cookie(), Value::Null);
        c.feed(&[0xfe, 0, 0, 0, 142]).unwrap();
        assert!(matches!(
            c.feed_eof(),
            Err(Iperf3Error::ServerError { code: 142, .. })
        ));

        let mut c = ClientSession::new(&cookie(), Value::Null);
        assert!(matches!(c.feed(&[0x63]), Err(Iperf3Error::Protocol(_))));
        assert!(matches!(
            c.feed(&[0x0b]),
            Err(Iperf3Error::ServerTerminated)
        ));
    }

    #[test]
    fn server_refuses_garbage_without_allocating() {
        let mut s = ServerSession::new();
        let request = b"GET / HTTP/1.1\r\nHost: example.org\r\nUser-Agent: curl";
        let events = s.feed(&request[..COOKIE_LEN]).unwrap();
        assert_eq!(
            events.len(),
            1,
            "the first 37 bytes are taken as the cookie"
        );
        assert_eq!(s.take_output(), vec![9]);
        let err = s.feed(&request[COOKIE_LEN..]).unwrap_err();
        assert!(err.to_string().contains("exceeds the limit"), "{err}");
    }

    #[test]
    fn server_sees_unknown_state_bytes_and_early_eof() {
        let mut s = ServerSession::new();
        s.feed(&cookie()).unwrap();
        let params = encode_json(&Params::new(Protocol::Tcp, 1).to_json());
        assert!(matches!(
            s.feed(&params).unwrap()[0],
            ServerEvent::Params(_)
        ));
        assert!(s.feed_eof().is_err(), "EOF mid-test is an error");
        assert!(matches!(s.feed(&[0x63]), Err(Iperf3Error::Protocol(_))));
        let mut s = ServerSession::new();
        s.feed(&cookie()).unwrap();
        s.feed(&params).unwrap();
        assert_eq!(s.feed(&[12]).unwrap(), vec![ServerEvent::ClientTerminate]);
        assert!(s.is_done());
    }

    #[test]
    fn refused_parameters_are_answered_with_server_error() {
        let mut s = ServerSession::new();
        s.feed(&cookie()).unwrap();
        assert_eq!(s.take_output(), vec![9]);
        let mut p = Params::new(Protocol::Tcp, 1);
        p.parallel = 500;
        assert!(s.feed(&encode_json(&p.to_json())).is_err());
        assert_eq!(s.take_output(), vec![0xfe, 0, 0, 0, 6, 0, 0, 0, 0]);
        assert!(s.is_done());
    }

    #[test]
    fn server_error_encoding_matches_the_capture() {
        let mut s = ServerSession::new();
        s.server_error(202, 98);
        assert_eq!(s.take_output(), vec![0xfe, 0, 0, 0, 0xca, 0, 0, 0, 0x62]);
    }

    /// Deterministic xorshift, so a failure reproduces.
    fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn random_bytes_never_panic_either_machine() {
        let mut errors = 0;
        for seed in 0..2000u64 {
            let data = noise(seed, (seed % 97) as usize + 1);
            let mut c = ClientSession::new(&cookie(), Value::Null);
            errors += usize::from(c.feed(&data).is_err() || c.feed_eof().is_err());
            let mut s = ServerSession::new();
            // A valid cookie first, so the noise reaches the JSON and state decoders.
            let mut fed = cookie().to_vec();
            fed.extend_from_slice(&data);
            for piece in fed.chunks((seed % 7) as usize + 1) {
                if s.feed(piece).is_err() {
                    errors += 1;
                    break;
                }
            }
        }
        assert!(
            errors > 1000,
            "noise is mostly refused, not accepted ({errors})"
        );
    }
}
