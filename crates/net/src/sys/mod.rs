//! The one door to the operating system: every system call, `/proc` read and OS
//! constant of dualperf goes through here. One module per platform, chosen at compile
//! time, each offering the same items to the portable code above it:
//!
//! - [`linux`]: the full datapath (sendmmsg/recvmmsg with GSO/GRO, kernel timestamps,
//!   per-socket drop counts) and readings from /proc, /sys and ethtool;
//! - `windows`: Winsock through `windows-sys` (per-processor performance information
//!   for CPU, GetAdaptersAddresses for the interface, the registry for the OS edition);
//! - `unix`: macOS and FreeBSD (sysctl / host processor info, getifaddrs), with the
//!   portable one-datagram-per-call UDP path.
//!
//! [`portable`] holds the std-only pieces the platforms share (a monotonic clock from
//! `Instant`, the one-datagram-per-call UDP path); [`datagram`] the plain data the UDP
//! backends and `crate::udp` above them share (configuration, receive buffers, the
//! socket state the OS calls update).
//!
//! Each platform module provides: `clock::{now_ns, wall_ns, sleep_until_ns}`;
//! `readings::{cpu_snapshot, process_cpu_times, udp_error_counters, ipv6_check,
//! pin_current_thread, fine_timer_slack}`; `errors::{is_no_buffer_space,
//! is_af_unsupported, is_unreachable, is_invalid_argument}`; `sockopt::{…}` (buffers,
//! MSS, congestion control, TOS, don't-fragment, flow labels, the receive low-water
//! mark); `sysinfo::{host_fields, iface_fields, host_name, process_alive}`;
//! `udp::{setup, send, recv_batched, recv_per_call, socket_drops}`.
//! A name missing on one platform is a compile error there, which `cargo check
//! --target …` in CI catches.

use crate::error::NetError;
use std::io;

pub(crate) mod datagram;
pub(crate) mod portable;

#[cfg(unix)]
pub(crate) mod unix_common;

#[cfg(target_os = "linux")]
pub(crate) mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::*;

/// Path-MTU and extension-header options: Linux only (`linux::pathmtu`); elsewhere
/// every call answers "not supported on this system".
#[cfg(not(target_os = "linux"))]
pub(crate) mod pathmtu;

#[cfg(windows)]
pub(crate) mod windows;
#[cfg(windows)]
pub(crate) use self::windows::*;

#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) mod unix;
#[cfg(all(unix, not(target_os = "linux")))]
pub(crate) use self::unix::*;

/// The trait a socket type must implement for the socket-option functions: `AsFd` on
/// Unix, `AsSocket` on Windows (both are what `socket2::SockRef` borrows from).
#[cfg(unix)]
pub use std::os::fd::AsFd as AsOsSocket;
#[cfg(windows)]
pub use std::os::windows::io::AsSocket as AsOsSocket;

/// The name of the OS this build runs on, for error messages ("… on Windows").
pub fn os_name() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "windows" => "Windows",
        "macos" => "macOS",
        "freebsd" => "FreeBSD",
        other => other,
    }
}

/// Address family and transport of a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SockKind {
    pub v6: bool,
    pub tcp: bool,
}

/// A socket option the kernel refused, with the value asked.
pub(crate) fn sockopt_err(
    option: &'static str,
    value: impl ToString,
    source: io::Error,
) -> NetError {
    NetError::SockOpt {
        option,
        value: value.to_string(),
        source,
    }
}

/// The error for an option this OS cannot set, naming the OS.
#[cfg_attr(target_os = "linux", allow(dead_code))]
pub(crate) fn unsupported_here(what: &str, hint: &str) -> NetError {
    NetError::InvalidOption(format!("{what} cannot be set on {}{hint}", os_name()))
}

/// Completions read from the error queue in one go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Completions {
    /// Send calls completed.
    pub sends: u64,
    /// Of those, the ones the kernel copied.
    pub copied: u64,
}

impl Completions {
    /// Add one notification: sends `lo..=hi` (send ids are 32-bit and wrap), copied or
    /// not.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn add_range(&mut self, lo: u32, hi: u32, copied: bool) {
        let n = u64::from(hi.wrapping_sub(lo)) + 1;
        self.sends += n;
        if copied {
            self.copied += n;
        }
    }
}
