//! Errors of the iperf3 client and server, and the iperf3 error-code table that turns a
//! peer's SERVER_ERROR (`fe`, code, errno) into a readable message.

use std::io;

/// Anything that can go wrong talking to an iperf3 peer.
#[derive(Debug, thiserror::Error)]
pub enum Iperf3Error {
    /// The server answered ACCESS_DENIED (0xFF) before the parameter exchange: it is
    /// running another test. A study waits this out with backoff; it is not a result.
    #[error("the iperf3 server is busy running a test; try again later")]
    Busy,
    /// The server sent SERVER_ERROR with an iperf3 error code and an errno.
    #[error("the iperf3 server reported an error: {message} (iperf3 error {code}, errno {errno})")]
    ServerError {
        code: i32,
        errno: i32,
        message: String,
    },
    /// The server was interrupted (SERVER_TERMINATE).
    #[error("the iperf3 server was terminated during the test")]
    ServerTerminated,
    /// The peer spoke something that is not the iperf3 protocol.
    #[error("iperf3 protocol error: {0}")]
    Protocol(String),
    /// The peer's results document lacks what iperf3 requires.
    #[error("iperf3 protocol error: {0}")]
    Results(#[from] crate::json::ResultsError),
    /// The server's results hold numbers that cannot be true; the run has no result.
    #[error("implausible result from the iperf3 server: {0}")]
    Implausible(wire::plausible::Violation),
    /// The peer stayed silent longer than allowed.
    #[error("timed out {0}")]
    Timeout(String),
    /// iperf3 authentication could not be set up (key, credentials).
    #[error("iperf3 authentication: {0}")]
    Auth(#[from] crate::auth::AuthError),
    /// Our server refused the test before it started (a limit, or authentication).
    #[error("refused: {0}")]
    Refused(String),
    /// The requested test cannot be run against an iperf3 peer.
    #[error("not possible with an iperf3 peer: {0}")]
    Unsupported(String),
    /// The OS layer could not set up a socket as asked.
    #[error("{context}: {source}")]
    Net {
        context: String,
        #[source]
        source: net::NetError,
    },
    /// A socket operation failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl Iperf3Error {
    /// Wraps an I/O error with what we were doing; timeouts become [`Iperf3Error::Timeout`].
    pub fn io(context: impl Into<String>, source: io::Error) -> Iperf3Error {
        let context = context.into();
        match source.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Iperf3Error::Timeout(context),
            _ => Iperf3Error::Io { context, source },
        }
    }

    /// Builds the SERVER_ERROR variant with the message for `code`.
    pub fn server_error(code: i32, errno: i32) -> Iperf3Error {
        let mut message = error_code_message(code).to_string();
        if errno != 0 {
            let os = io::Error::from_raw_os_error(errno);
            message = format!("{message}: {os}");
        }
        Iperf3Error::ServerError {
            code,
            errno,
            message,
        }
    }
}

/// iperf3's error codes (src/iperf_api.h) that a server can send in SERVER_ERROR, with
/// the meaning iperf3 prints. 1–40 parameter errors, 100–160 test errors, 200–208 stream
/// errors.
pub fn error_code_message(code: i32) -> &'static str {
    match code {
        5 => "test duration too long",
        6 => "number of parallel streams too large",
        7 => "block size too large",
        8 => "socket buffer size too large",
        10 => "MSS too large",
        12 => "bogus value for --omit",
        13 => "not implemented yet",
        15 => "invalid burst count",
        16 => "only one test end condition (-t, -n, -k) may be specified",
        18 => "no SCTP support available",
        20 => "block size invalid",
        21 => "bad TOS value",
        25 => "cannot be both reverse and bidirectional",
        27 => "total required bandwidth is larger than the server limit",
        37 => "client's requested duration exceeds the server's maximum test duration",
        100 => "unable to create a new test",
        101 => "test initialization failed",
        102 => "unable to start listener for connections",
        106 => "unable to receive cookie",
        107 => "unable to write to the control socket",
        108 => "unable to read from the control socket",
        109 => "the control socket has closed unexpectedly",
        110 => "received an unknown control message",
        111 => "unable to send control message",
        112 => "unable to receive control message",
        113 => "unable to send parameters",
        114 => "unable to receive parameters from client",
        115 => "unable to package results",
        116 => "unable to send results",
        117 => "unable to receive results",
        119 => "the client has terminated",
        120 => "the server has terminated",
        121 => "the server is busy running a test; try again later",
        122 => "unable to set TCP NODELAY",
        123 => "unable to set TCP MSS",
        124 => "unable to set socket buffer size",
        125 => "unable to set IP TOS",
        126 => "unable to set IPv6 traffic class",
        127 => "unable to set IPv6 flow label",
        128 => "unable to reuse address on socket",
        129 => "unable to set socket to non-blocking",
        130 => "unable to set socket window size",
        131 => "protocol does not exist",
        134 => "unable to set TCP congestion control",
        136 => "unable to set/reset IPV6_V6ONLY",
        140 => "unable to set socket pacing rate",
        141 => "socket buffer size not set correctly",
        142 => "test authorization failed",
        160 => "the server's maximum test duration expired",
        200 => "unable to create a new stream",
        201 => "unable to initialize stream",
        202 => "unable to start stream listener",
        203 => "unable to connect stream",
        204 => "unable to accept stream connection",
        205 => "unable to write to stream socket",
        206 => "unable to read from stream socket",
        207 => "stream has closed unexpectedly",
        208 => "stream has an invalid id",
        _ => "unknown iperf3 error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_listener_error_reads_like_iperf3() {
        // The capture of §9.1: fe 000000ca 00000062 = 202, EADDRINUSE.
        let err = Iperf3Error::server_error(202, 98);
        let text = err.to_string();
        assert!(text.contains("unable to start stream listener"), "{text}");
        assert!(
            text.to_lowercase().contains("address already in use"),
            "{text}"
        );
    }

    #[test]
    fn unknown_codes_still_have_a_message() {
        assert_eq!(error_code_message(9999), "unknown iperf3 error");
        let text = Iperf3Error::server_error(142, 0).to_string();
        assert!(text.contains("authorization"), "{text}");
        assert!(!text.contains("errno 0:"), "{text}");
    }

    #[test]
    fn timeouts_are_their_own_variant() {
        let e = Iperf3Error::io("reading", io::Error::from(io::ErrorKind::WouldBlock));
        assert!(matches!(e, Iperf3Error::Timeout(_)));
    }
}
