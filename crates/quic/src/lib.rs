//! dualperf-quic: QUIC tests over IPv4 and IPv6 — bulk transfer on one or more streams
//! of one connection (forward, reverse, both at once) and request/response on one
//! stream — with goodput at the receiver, handshake time, RTT percentiles and each end's
//! view of the path (smoothed RTT, congestion window, lost packets, the path MTU the
//! connection settled on, GSO/GRO use).
//!
//! # Why quinn
//!
//! [quinn](https://github.com/quinn-rs/quinn) with rustls is the QUIC implementation
//! the Rust ecosystem maintains most actively (regular releases, several maintainers,
//! used in production), and it covers what a measurement needs: RFC 9000 transport,
//! RFC 9001 TLS, RFC 9002 loss detection and congestion control (CUBIC, NewReno and an
//! experimental BBR, chosen per connection), DPLPMTUD (RFC 8899) so the path MTU a
//! connection settles on is a figure of its own, and `quinn-udp`, a datapath with
//! `sendmmsg`, GSO and GRO that degrades by itself when the kernel refuses an offload.
//! Its protocol core (`quinn-proto`) has no I/O, and `Connection::stats()` exposes the
//! path figures this crate reports. TLS uses the `ring` provider explicitly (no
//! process-wide default).
//!
//! # Trust
//!
//! The server makes a fresh self-signed certificate when it starts
//! ([`QuicServer::bind`] returns it); the client accepts that certificate and nothing
//! else ([`run_client`] takes it as the pin: byte-for-byte equality of the DER, and the
//! handshake signature verified with its key). The certificate is meant to reach the
//! client through dualperf's authenticated control connection. There is no switch that
//! skips the check.
//!
//! # A test's life
//!
//! The client connects, opens a bidirectional control stream and writes the request
//! ([`QuicTest::encode`], 48 bytes, carrying the control session's token). The server checks it ([`check`] against its
//! [`Limits`], and equality with the test the control connection agreed) and answers
//! with a start byte or closes the connection with the reason, which the client reports
//! as [`QuicError::Refused`]. The data then flows on unidirectional streams (stream
//! test) or a second bidirectional stream (rr); each stream is read to its end, so bytes
//! received equal bytes sent, and every sender waits until its peer has acknowledged
//! every byte before its figures are taken. The server ends by
//! writing its figures on the control stream; the client closes the connection.
//!
//! The sockets come from the caller (dualperf's `net` crate is the one door to the OS):
//!
//! ```no_run
//! use dualperf_quic::{run_client, Congestion, Limits, QuicKind, QuicServer, QuicTest};
//! use std::time::{Duration, Instant};
//! use wire::spec::{Bound, Direction};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (server, cert) = QuicServer::bind(std::net::UdpSocket::bind("[::1]:0")?, Limits::default())?;
//! let test = QuicTest {
//!     kind: QuicKind::Stream { streams: 1, direction: Direction::Forward },
//!     bound: Bound::DurationNs(1_000_000_000),
//!     payload_bytes: 65_536,
//!     congestion: Congestion::Cubic,
//!     rate_bps: None,
//!     session: [0; 16],
//! };
//! let addr = server.local_addr()?;
//! let deadline = Instant::now() + Duration::from_secs(10);
//! let served = std::thread::spawn(move || server.serve_one(&test, deadline));
//! let socket = std::net::UdpSocket::bind("[::1]:0")?;
//! let result = run_client(socket, addr, cert, &test, deadline)?;
//! println!("{:.0} bit/s", result.forward.map(|g| g.bps()).unwrap_or(0.0));
//! # let _ = served.join();
//! # Ok(())
//! # }
//! ```

mod cert;
mod client;
mod codec;
mod data;
mod figures;
mod server;
mod spec;
mod transport;

pub use cert::sha256_hex;
pub use client::run_client;
pub use figures::{
    Goodput, PathFigures, QuicResult, RrFigures, ServerFigures, ServerSide, SocketOffload,
    RETRANSMITTED_PACKETS_UNAVAILABLE,
};
pub use rustls::pki_types::CertificateDer;
pub use server::{QuicServer, ServerCloser};
pub use spec::{check, Congestion, Limits, QuicKind, QuicTest, REQUEST_BYTES, SESSION_BYTES};

/// Why a QUIC test did not give a result.
#[derive(Debug, thiserror::Error)]
pub enum QuicError {
    /// The server refused the test (limits, a malformed or unexpected request).
    #[error("the server refused the test: {0}")]
    Refused(String),
    #[error(
        "the server presented a certificate (SHA-256 {presented_sha256}) that is not the one \
         it published (SHA-256 {pinned_sha256}); refusing to talk to it"
    )]
    CertificateMismatch {
        pinned_sha256: String,
        presented_sha256: String,
    },
    #[error("the peer closed the connection: {0}")]
    PeerClosed(String),
    #[error("the peer stopped answering ({idle_s} s without a packet)")]
    PeerVanished { idle_s: u64 },
    #[error("the test did not end by its deadline ({after_s:.1} s)")]
    Deadline { after_s: f64 },
    #[error("QUIC connection: {0}")]
    Connection(String),
    #[error("the peer broke the test's protocol: {0}")]
    Protocol(String),
    #[error("QUIC setup: {0}")]
    Setup(String),
    #[error("socket: {0}")]
    Io(#[from] std::io::Error),
}

#[cfg(test)]
mod tests;
