//! The errors of the OS layer, each worded so a user knows what to do.

use std::io;
use std::net::SocketAddr;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum NetError {
    /// A system call failed; `op` says which and on what.
    #[error("{op}: {source}")]
    Io {
        op: String,
        #[source]
        source: io::Error,
    },
    /// The kernel refused a socket option.
    #[error("cannot set {option} to {value}: {source}")]
    SockOpt {
        option: &'static str,
        value: String,
        #[source]
        source: io::Error,
    },
    #[error(
        "TCP congestion control '{name}' is not available on this host (available: {}); \
         load its module (modprobe tcp_{name}) or pick one of those",
        available.join(", ")
    )]
    UnknownCongestion {
        name: String,
        available: Vec<String>,
    },
    /// An option that does not fit the socket or is out of range.
    #[error("{0}")]
    InvalidOption(String),
    #[error("connecting to {addr}: {source}")]
    Connect {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
    #[error("binding {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: io::Error,
    },
    #[error(
        "IPv6 is disabled on this host (net.ipv6.conf.all.disable_ipv6=1); use -4 or enable it"
    )]
    Ipv6Disabled,
    #[error("IPv6 is not usable on this host ({reason}); use -4")]
    Ipv6Unavailable { reason: String },
    #[error("reading /proc/stat: {0}")]
    ProcStat(String),
}

impl NetError {
    pub(crate) fn io(op: impl Into<String>, source: io::Error) -> NetError {
        NetError::Io {
            op: op.into(),
            source,
        }
    }

    /// The underlying I/O error kind, if there is one (e.g. `ConnectionRefused`).
    pub fn io_kind(&self) -> Option<io::ErrorKind> {
        match self {
            NetError::Io { source, .. }
            | NetError::SockOpt { source, .. }
            | NetError::Connect { source, .. }
            | NetError::Bind { source, .. } => Some(source.kind()),
            _ => None,
        }
    }

    /// The OS's error number behind this error, if there is one (iperf3's SERVER_ERROR
    /// carries it).
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            NetError::Io { source, .. }
            | NetError::SockOpt { source, .. }
            | NetError::Connect { source, .. }
            | NetError::Bind { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }
}
