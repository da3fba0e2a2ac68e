//! quinn's configuration for both ends (TLS 1.3 with the ring provider, the pinned
//! verifier, the congestion controller, idle timeout and stream counts), the close codes
//! of a test's connection, and how a closed connection becomes a [`QuicError`].

use std::sync::Arc;
use std::time::Duration;

use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::{ConnectionError, TransportConfig, VarInt};

use crate::cert::{provider, PinnedCertVerifier, ServerIdentity};
use crate::spec::Congestion;
use crate::QuicError;

/// ALPN of a dualperf QUIC test.
const ALPN: &[u8] = b"dualperf-quic/1";

/// A peer silent this long has gone (keep-alives keep a live but idle peer talking).
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
const KEEP_ALIVE: Duration = Duration::from_secs(1);

/// Application close codes.
pub(crate) const CLOSE_DONE: u32 = 0;
pub(crate) const CLOSE_REFUSED: u32 = 1;
pub(crate) const CLOSE_SHUTDOWN: u32 = 2;
pub(crate) const CLOSE_FAILED: u32 = 3;

/// The server's one-byte answer to an accepted request: start now.
pub(crate) const GO: u8 = 0x01;

fn transport(congestion: Congestion) -> Arc<TransportConfig> {
    let mut t = TransportConfig::default();
    let factory: Arc<dyn quinn::congestion::ControllerFactory + Send + Sync> = match congestion {
        Congestion::Cubic => Arc::new(quinn::congestion::CubicConfig::default()),
        Congestion::NewReno => Arc::new(quinn::congestion::NewRenoConfig::default()),
        Congestion::Bbr => Arc::new(quinn::congestion::BbrConfig::default()),
    };
    t.congestion_controller_factory(factory);
    // The constant is well inside QUIC's idle-timeout range (2^62 ms).
    t.max_idle_timeout(quinn::IdleTimeout::try_from(IDLE_TIMEOUT).ok());
    t.keep_alive_interval(Some(KEEP_ALIVE));
    t.max_concurrent_uni_streams(VarInt::from(wire::proto::MAX_STREAMS));
    // The control stream and the request/response stream.
    t.max_concurrent_bidi_streams(VarInt::from_u32(2));
    Arc::new(t)
}

fn tls_error(e: impl std::fmt::Display) -> QuicError {
    QuicError::Setup(format!("TLS configuration: {e}"))
}

/// The client's configuration: TLS 1.3 that accepts only `verifier`'s certificate.
pub(crate) fn client_config(
    verifier: Arc<PinnedCertVerifier>,
    congestion: Congestion,
) -> Result<quinn::ClientConfig, QuicError> {
    let mut tls = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_error)?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = QuicClientConfig::try_from(tls).map_err(tls_error)?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(transport(congestion));
    Ok(config)
}

/// The server's configuration for one test.
pub(crate) fn server_config(
    identity: &ServerIdentity,
    congestion: Congestion,
) -> Result<quinn::ServerConfig, QuicError> {
    let mut tls = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_error)?
        .with_no_client_auth()
        .with_single_cert(vec![identity.cert.clone()], identity.key.clone_key())
        .map_err(tls_error)?;
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = QuicServerConfig::try_from(tls).map_err(tls_error)?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(transport(congestion));
    Ok(config)
}

/// What a closed connection means for the test.
pub(crate) fn closed_error(e: &ConnectionError) -> QuicError {
    match e {
        ConnectionError::ApplicationClosed(close) => {
            let reason = String::from_utf8_lossy(&close.reason).into_owned();
            if close.error_code == VarInt::from_u32(CLOSE_REFUSED) {
                QuicError::Refused(reason)
            } else {
                QuicError::PeerClosed(reason)
            }
        }
        ConnectionError::ConnectionClosed(close) => QuicError::PeerClosed(close.to_string()),
        ConnectionError::Reset => QuicError::PeerClosed(
            "the peer reset the connection (it no longer knows it: restarted or closed)".into(),
        ),
        ConnectionError::TimedOut => QuicError::PeerVanished {
            idle_s: IDLE_TIMEOUT.as_secs(),
        },
        other => QuicError::Connection(other.to_string()),
    }
}

/// The error of a failed stream operation: the connection's close reason when the
/// connection has closed (what the user needs to know), else the stream's own error.
pub(crate) fn stream_error(conn: &quinn::Connection, e: impl std::fmt::Display) -> QuicError {
    match conn.close_reason() {
        Some(reason) => closed_error(&reason),
        None => QuicError::Connection(e.to_string()),
    }
}
