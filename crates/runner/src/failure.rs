//! Why a test at a target failed, in a few stable kinds (for alert rules, counts and
//! labels: the exporter's `reason`), from the target's own typed error.

use crate::target::TargetError;
use engine::EngineError;

/// Why a test gave no figures, as a stable kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The target has no address of this family (no A / AAAA record).
    NoAddress,
    /// The server refused the connection (nothing listening).
    Refused,
    /// A step took longer than allowed (connect, handshake, the test, or the caller's
    /// budget).
    Timeout,
    /// No route, or IPv6 disabled on this host.
    Unreachable,
    /// The server wants a pre-shared key, or the key did not match.
    Auth,
    /// The server is running another test or is at its connection limit.
    Busy,
    /// Anything else (protocol error, rejected test, socket option refused).
    Error,
}

impl FailureKind {
    /// Its name: a label value.
    pub fn label(self) -> &'static str {
        match self {
            FailureKind::NoAddress => "no_address",
            FailureKind::Refused => "refused",
            FailureKind::Timeout => "timeout",
            FailureKind::Unreachable => "unreachable",
            FailureKind::Auth => "auth",
            FailureKind::Busy => "busy",
            FailureKind::Error => "error",
        }
    }

    /// The kind of an iperf3 client's error.
    pub fn of_iperf3(e: &iperf3::Iperf3Error) -> FailureKind {
        use iperf3::Iperf3Error as E;
        match e {
            E::Busy => FailureKind::Busy,
            E::Timeout(_) => FailureKind::Timeout,
            E::Auth(_) => FailureKind::Auth,
            E::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::ConnectionRefused => FailureKind::Refused,
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
                    FailureKind::Timeout
                }
                std::io::ErrorKind::HostUnreachable | std::io::ErrorKind::NetworkUnreachable => {
                    FailureKind::Unreachable
                }
                _ => FailureKind::Error,
            },
            _ => FailureKind::Error,
        }
    }

    /// The kind of a dualperf client's error.
    pub fn of_engine(e: &EngineError) -> FailureKind {
        match e {
            EngineError::ConnectionRefused { .. } => FailureKind::Refused,
            EngineError::HostUnreachable { .. } | EngineError::Ipv6Unavailable { .. } => {
                FailureKind::Unreachable
            }
            EngineError::Resolve { .. } => FailureKind::NoAddress,
            EngineError::ServerBusy { .. } | EngineError::ServerFull { .. } => FailureKind::Busy,
            EngineError::AuthRequired { .. } | EngineError::AuthFailed(_) => FailureKind::Auth,
            EngineError::Timeout(_) => FailureKind::Timeout,
            EngineError::Io { source, .. }
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) =>
            {
                FailureKind::Timeout
            }
            EngineError::Phase(_, inner) => FailureKind::of_engine(inner),
            _ => FailureKind::Error,
        }
    }

    /// The kind of a target's error (its engine's or iperf3 client's, or another).
    pub fn of(e: &TargetError) -> FailureKind {
        match e {
            TargetError::Engine(e) => FailureKind::of_engine(e),
            TargetError::Iperf3(e) => FailureKind::of_iperf3(e),
            _ => FailureKind::Error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_map_to_stable_kinds() {
        let refused = EngineError::ConnectionRefused {
            host: "h".into(),
            port: 1,
        };
        assert_eq!(FailureKind::of_engine(&refused), FailureKind::Refused);
        assert_eq!(
            FailureKind::of_engine(&EngineError::Timeout("x".into())),
            FailureKind::Timeout
        );
        let io = EngineError::Io {
            context: "c".into(),
            source: std::io::ErrorKind::TimedOut.into(),
        };
        assert_eq!(FailureKind::of_engine(&io), FailureKind::Timeout);
        assert_eq!(
            FailureKind::of(&TargetError::Engine(EngineError::Phase(
                "p",
                Box::new(refused)
            ))),
            FailureKind::Refused
        );
        assert_eq!(
            FailureKind::of(&TargetError::Iperf3(iperf3::Iperf3Error::Busy)),
            FailureKind::Busy
        );
    }
}
