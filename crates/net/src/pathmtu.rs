//! Path-MTU and extension-header primitives for the path-health tests: how a UDP socket
//! treats don't-fragment ([`set_df_mode`]), the path MTU the kernel has learned
//! ([`kernel_path_mtu`]), the socket error queue that carries ICMP Packet Too Big /
//! fragmentation-needed and other errors as typed events ([`enable_error_queue`],
//! [`wait_queued_errors`], [`drain_queued_errors`]), the host's TCP PLPMTUD sysctls
//! ([`tcp_mtu_sysctls`]) and IPv6 Hop-by-Hop / Destination Options headers
//! ([`set_ext_header`]). Linux only (IP_RECVERR, IP_MTU, IP_PMTUDISC_PROBE and the
//! sticky IPv6 option headers are Linux's); elsewhere every call fails with
//! [`PathError::Unsupported`]. The per-OS calls are in `sys::pathmtu`.

use crate::sys::{self, AsOsSocket};
use serde::{Deserialize, Serialize};
use std::io;
use std::net::IpAddr;
use std::time::Duration;

/// What went wrong with a path-MTU or extension-header call.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The OS has no such option (everything here is Linux's).
    #[error("{what} is not supported on this system ({os}); the path-MTU and extension-header tests need Linux")]
    Unsupported {
        what: &'static str,
        os: &'static str,
    },
    /// The option needs a privilege the process lacks.
    #[error("{option} needs CAP_NET_RAW on Linux; run as root or grant the capability (setcap cap_net_raw+ep on the binary)")]
    NeedsCapNetRaw { option: &'static str },
    /// The option does not exist for this socket's family (IPv6 headers on IPv4).
    #[error("{what} applies to IPv6 sockets only")]
    NotApplicable { what: &'static str },
    /// A system call failed; `op` says which.
    #[error("{op}: {source}")]
    Os {
        op: String,
        #[source]
        source: io::Error,
    },
}

impl PathError {
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn os(op: impl Into<String>, source: io::Error) -> PathError {
        PathError::Os {
            op: op.into(),
            source,
        }
    }
}

/// How a UDP socket sends datagrams larger than the path MTU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DfMode {
    /// DF set (IPv4) / IPV6_DONTFRAG, ignoring the path MTU the kernel has cached
    /// (IP_PMTUDISC_PROBE / IPV6_PMTUDISC_PROBE): every probe size goes on the wire, up
    /// to the interface MTU, and a hop that cannot forward it answers (or not).
    Probe,
    /// Fragment at the source when needed (IP_PMTUDISC_DONT / IPV6_PMTUDISC_DONT;
    /// IPv4 sends without DF, so routers may fragment too).
    Fragment,
}

/// Sets how `sock` (a UDP socket) treats don't-fragment.
pub fn set_df_mode<S: AsOsSocket>(sock: &S, mode: DfMode) -> Result<(), PathError> {
    sys::pathmtu::set_df_mode(sock, mode)
}

/// The path MTU the kernel holds for a connected socket's peer (IP_MTU / IPV6_MTU),
/// bytes of IP packet. Fails when the socket is not connected.
pub fn kernel_path_mtu<S: AsOsSocket>(sock: &S) -> Result<u32, PathError> {
    sys::pathmtu::kernel_path_mtu(sock)
}

/// Queues ICMP errors and local send errors on the socket's error queue (IP_RECVERR /
/// IPV6_RECVERR), where [`drain_queued_errors`] reads them.
pub fn enable_error_queue<S: AsOsSocket>(sock: &S) -> Result<(), PathError> {
    sys::pathmtu::enable_error_queue(sock)
}

/// Waits up to `wait` for the error queue to hold something; true when it does.
pub fn wait_queued_errors<S: AsOsSocket>(sock: &S, wait: Duration) -> Result<bool, PathError> {
    sys::pathmtu::wait_queued_errors(sock, wait)
}

/// Reads every error queued now (never waits; at most [`MAX_QUEUED_ERRORS_PER_READ`]).
pub fn drain_queued_errors<S: AsOsSocket>(sock: &S) -> Result<Vec<QueuedError>, PathError> {
    sys::pathmtu::drain_queued_errors(sock)
}

/// Whether a send failed because the datagram exceeds what this host may send with
/// don't-fragment (EMSGSIZE: above the interface MTU in [`DfMode::Probe`]).
pub fn is_message_too_big(e: &io::Error) -> bool {
    sys::pathmtu::is_message_too_big(e)
}

/// Errors read per [`drain_queued_errors`] call at most: bounds the loop whatever the
/// kernel queues meanwhile.
pub const MAX_QUEUED_ERRORS_PER_READ: usize = 256;

/// Where a queued error came from (`ee_origin`, linux/errqueue.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorOrigin {
    /// This host (e.g. a send larger than the known path MTU).
    Local,
    /// An ICMP (IPv4) message.
    Icmp,
    /// An ICMPv6 message.
    Icmp6,
    /// Another origin (timestamping, zero-copy), by number.
    Other(u8),
}

/// What a queued error means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum QueuedErrorKind {
    /// EMSGSIZE: ICMPv6 Packet Too Big, ICMP fragmentation-needed, or a local send above
    /// the known path MTU; the MTU is in [`QueuedError::mtu_bytes`].
    MessageTooBig,
    /// EHOSTUNREACH / ENETUNREACH / EACCES: destination unreachable.
    Unreachable,
    /// ECONNREFUSED: port unreachable.
    Refused,
    /// Any other errno.
    Other,
}

/// One error from the socket error queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedError {
    /// The errno the kernel attached (`ee_errno`, e.g. EMSGSIZE).
    pub errno: i32,
    pub kind: QueuedErrorKind,
    pub origin: ErrorOrigin,
    /// The ICMP type and code (`ee_type`, `ee_code`; 0 for local errors).
    pub icmp_type: u8,
    pub icmp_code: u8,
    /// For [`QueuedErrorKind::MessageTooBig`]: the MTU the ICMP message (or the local
    /// route) carried (`ee_info`), bytes; `None` for other kinds.
    pub mtu_bytes: Option<u32>,
    /// The host that sent the ICMP message (SO_EE_OFFENDER); `None` for local errors.
    pub offender: Option<IpAddr>,
}

/// The host's TCP Packetization-Layer PMTUD settings (RFC 4821), which decide whether
/// TCP recovers from a path-MTU black hole. Linux's `net.ipv4` sysctls also govern
/// IPv6 TCP. `None` = unreadable (or not Linux).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpMtuSysctls {
    /// net.ipv4.tcp_mtu_probing: 0 off, 1 after a black hole is suspected, 2 always.
    pub mtu_probing: Option<u32>,
    /// net.ipv4.tcp_base_mss: the MSS probing starts from, bytes.
    pub base_mss_bytes: Option<u32>,
}

impl TcpMtuSysctls {
    /// Metadata keys and values (`net.tcp_mtu_probing`, `net.tcp_base_mss_bytes`); an
    /// unreadable value reads "unavailable".
    pub fn fields(&self) -> [(&'static str, String); 2] {
        let probing = match self.mtu_probing {
            Some(0) => "0 (off)".to_string(),
            Some(1) => "1 (on after a black hole is suspected)".to_string(),
            Some(2) => "2 (always)".to_string(),
            Some(n) => n.to_string(),
            None => "unavailable".to_string(),
        };
        let mss = self
            .base_mss_bytes
            .map_or("unavailable".to_string(), |b| b.to_string());
        [
            ("net.tcp_mtu_probing", probing),
            ("net.tcp_base_mss_bytes", mss),
        ]
    }
}

/// Reads `net.ipv4.tcp_mtu_probing` and `net.ipv4.tcp_base_mss` (of the calling thread's
/// network namespace).
pub fn tcp_mtu_sysctls() -> TcpMtuSysctls {
    sys::pathmtu::tcp_mtu_sysctls()
}

/// An IPv6 extension header to attach to every datagram a socket sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExtHeader {
    /// A Hop-by-Hop Options header (IPV6_HOPOPTS), examined by every router.
    HopByHop,
    /// A Destination Options header (IPV6_DSTOPTS), for the destination only.
    DestOpts,
}

impl ExtHeader {
    /// The socket option that sets it.
    pub fn option_name(self) -> &'static str {
        match self {
            ExtHeader::HopByHop => "IPV6_HOPOPTS",
            ExtHeader::DestOpts => "IPV6_DSTOPTS",
        }
    }
}

/// The 8-byte options header attached by [`set_ext_header`]: next header and length
/// (filled in / 0 = 8 bytes), then one PadN option (type 1, RFC 8200 §4.2) padding the
/// header to 8 bytes.
pub const PADN_HEADER: [u8; 8] = [0, 0, 1, 4, 0, 0, 0, 0];

/// Makes `sock` (an IPv6 UDP socket) send every datagram with `header`, holding one PadN
/// option ([`PADN_HEADER`], 8 bytes more per packet). Without CAP_NET_RAW the answer is
/// [`PathError::NeedsCapNetRaw`]; on an IPv4 socket [`PathError::NotApplicable`].
pub fn set_ext_header<S: AsOsSocket>(sock: &S, header: ExtHeader) -> Result<(), PathError> {
    sys::pathmtu::set_ext_header(sock, header)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_fields_say_what_the_values_mean_and_unavailable_when_unread() {
        let s = TcpMtuSysctls {
            mtu_probing: Some(1),
            base_mss_bytes: Some(1024),
        };
        assert_eq!(
            s.fields(),
            [
                (
                    "net.tcp_mtu_probing",
                    "1 (on after a black hole is suspected)".to_string()
                ),
                ("net.tcp_base_mss_bytes", "1024".to_string()),
            ]
        );
        let none = TcpMtuSysctls::default().fields();
        assert!(none.iter().all(|(_, v)| v == "unavailable"), "{none:?}");
    }

    #[test]
    fn the_padn_header_is_one_well_formed_8_byte_option_header() {
        // Hdr Ext Len counts 8-octet units after the first 8: 0. PadN's length covers
        // the rest of the header: 8 - 2 (header) - 2 (option type and length) = 4.
        assert_eq!(PADN_HEADER.len(), 8);
        assert_eq!(PADN_HEADER[1], 0);
        assert_eq!((PADN_HEADER[2], PADN_HEADER[3]), (1, 4));
    }
}
