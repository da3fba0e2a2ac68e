//! The seam through which QUIC tests run: the engine drives their control session
//! (admission, limits, the certificate in `accept`, start, result) like any test's, and
//! a [`QuicHook`] that the binary provides (from `dualperf-quic`) runs the connection
//! itself, so that this crate needs no QUIC or TLS library. A server or client without
//! one refuses QUIC tests with [`NO_QUIC`].

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::Instant;

use wire::proto::QuicSide;
use wire::spec::TestSpec;

use crate::server_ctx::ServerConfig;

/// Why a build without the hook runs no QUIC test.
pub const NO_QUIC: &str = "this server was built without QUIC";

/// What one end of a QUIC test measured (bytes of payload, times since its start).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuicRun {
    pub sent_bytes: u64,
    pub recv_bytes: u64,
    /// Last byte sent / received, ns since the end's start signal.
    pub send_ns: u64,
    pub recv_ns: u64,
    /// Request/response: exchanges completed (client) or answered (server).
    pub transactions: u64,
    /// Request/response client: the exchanges' round-trip times.
    pub rtt: Option<measure::LatencySummary>,
    /// The end's view of its connection.
    pub side: QuicSide,
}

/// Runs QUIC tests for the engine.
pub trait QuicHook: Send + Sync + std::fmt::Debug {
    /// Server: open a QUIC endpoint on `socket` (bound like the test's data sockets) for
    /// `spec`, asked by `peer`, within `cfg`'s limits. Returns the DER of the
    /// certificate the endpoint presents (it goes to the client in `accept`) and the
    /// endpoint; the error is the refusal the client sees.
    fn bind(
        &self,
        socket: UdpSocket,
        spec: &TestSpec,
        cfg: &ServerConfig,
        peer: IpAddr,
    ) -> Result<(Vec<u8>, Box<dyn QuicEndpoint>), String>;

    /// Client: run `spec` against `server` over `socket`, trusting only `cert_der`,
    /// asking with the control session's `token` (the data binding's bytes), by
    /// `deadline`.
    fn run_client(
        &self,
        socket: UdpSocket,
        server: SocketAddr,
        cert_der: Vec<u8>,
        spec: &TestSpec,
        token: &[u8],
        deadline: Instant,
    ) -> Result<QuicRun, String>;
}

/// A server's endpoint for one QUIC test.
pub trait QuicEndpoint: Send {
    /// Serve the test the control connection agreed (`spec`, bound to `token`) to one
    /// client, by `deadline`.
    fn serve(
        self: Box<Self>,
        spec: &TestSpec,
        token: &[u8],
        deadline: Instant,
    ) -> Result<QuicRun, String>;
}

/// A QUIC end's run as a data worker's outcome (its failure as the worker's error).
/// Packets are counted as for TCP: writes of the payload size (stream) or messages
/// (request/response).
pub(crate) fn outcome(spec: &TestSpec, run: Result<QuicRun, String>) -> crate::data::Outcome {
    let mut o = crate::data::Outcome::default();
    let units = |bytes: u64| bytes.div_ceil(u64::from(spec.payload_bytes.max(1)));
    match run {
        Ok(r) => {
            if spec.kind.is_rr() {
                (o.sent_packets, o.recv_packets) = (r.transactions, r.transactions);
            } else {
                (o.sent_packets, o.recv_packets) = (units(r.sent_bytes), units(r.recv_bytes));
            }
            o.sent_bytes = r.sent_bytes;
            o.recv_bytes = r.recv_bytes;
            o.last_send_ns = r.send_ns;
            o.last_recv_ns = r.recv_ns;
            o.transactions = r.transactions;
            o.quic_rtt = r.rtt;
            o.io.insert("quic_congestion".into(), r.side.congestion.clone());
            o.quic = Some(r.side);
        }
        Err(why) => o.errors.push(why),
    }
    o
}

/// How long a QUIC end may take: the test's bound plus the session's slack (as the
/// control session allows the data phase).
pub(crate) fn deadline(spec: &TestSpec, limits: &wire::session::Limits) -> Instant {
    let now = Instant::now();
    match spec.bound {
        wire::spec::Bound::DurationNs(ns) => {
            now + std::time::Duration::from_nanos(ns) + limits.run_slack
        }
        wire::spec::Bound::Count(_) => now + limits.count_run_max,
    }
}
