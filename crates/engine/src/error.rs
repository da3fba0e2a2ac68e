//! The engine's errors. `Display` is the message a user sees: what went wrong and,
//! where there is one, what to do about it.

use std::io;
use wire::proto::TestSpecError;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("connection refused by {host}:{port}: is `dualperf server` running on {host}:{port}?")]
    ConnectionRefused { host: String, port: u16 },
    #[error("host unreachable: cannot reach {host}:{port} ({detail})")]
    HostUnreachable {
        host: String,
        port: u16,
        detail: String,
    },
    #[error("IPv6 is not available on this host ({detail}); use --family 4, or enable IPv6 (sysctl net.ipv6.conf.all.disable_ipv6=0)")]
    Ipv6Unavailable { detail: String },
    #[error("cannot resolve '{host}' to an {family} address{detail}")]
    Resolve {
        host: String,
        family: wire::spec::Family,
        detail: String,
    },
    #[error(transparent)]
    Spec(#[from] TestSpecError),
    #[error("server busy: {host}:{port} is running another test; try again when it has finished")]
    ServerBusy { host: String, port: u16 },
    /// The server is at its `--max-connections` limit (not necessarily running a test).
    #[error("server busy: {host}:{port} has too many control connections open (its --max-connections limit); try again shortly")]
    ServerFull { host: String, port: u16 },
    #[error("protocol version mismatch: the server speaks dualperf protocol version {server}, this client speaks version {client}; run the same dualperf version on both hosts")]
    VersionMismatch { server: u16, client: u16 },
    #[error("the server at {host}:{port} requires a pre-shared key: use --psk-file")]
    AuthRequired { host: String, port: u16 },
    /// Either side found the other's proof of the key wrong or missing.
    #[error("{0}")]
    AuthFailed(String),
    #[error("the server rejected the test: {0}")]
    Rejected(String),
    /// The server reported numbers that cannot be true; the run has no result.
    #[error(transparent)]
    Implausible(#[from] wire::plausible::Implausible),
    /// A QUIC test's connection failed or was refused (the reason is the QUIC end's).
    #[error("QUIC test failed: {0}")]
    Quic(String),
    #[error("control protocol error: {0}")]
    Protocol(String),
    #[error("timed out: {0}")]
    Timeout(String),
    /// The data stopped moving while the server still answered on the control
    /// connection: small packets cross the path, full-size ones do not.
    #[error("no data for {stalled_s} s after {moved_bytes} bytes while the server still answers: a path MTU black hole is likely; `dualperf run -t pmtu -f {family_number} {host}` checks")]
    DataStalled {
        stalled_s: u64,
        /// Bytes the client had written to and read from its data sockets.
        moved_bytes: u64,
        host: String,
        family_number: u8,
    },
    /// A socket could not be set up as asked (e.g. an unknown congestion control).
    #[error(transparent)]
    Net(#[from] net::NetError),
    /// A path-MTU option the pmtu test needs is missing or refused.
    #[error(transparent)]
    Path(#[from] net::pathmtu::PathError),
    /// One part of a compound test (e.g. a loaded-latency test's download streams).
    #[error("{0}: {1}")]
    Phase(&'static str, Box<EngineError>),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl EngineError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> EngineError {
        EngineError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Attach context to an `io::Result`.
pub(crate) trait IoContext<T> {
    fn ctx(self, context: &str) -> Result<T, EngineError>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn ctx(self, context: &str) -> Result<T, EngineError> {
        self.map_err(|e| EngineError::io(context, e))
    }
}
