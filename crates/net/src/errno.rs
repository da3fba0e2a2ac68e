//! What an OS error means, portably (each OS's numbers are in `sys::errors`): a full
//! send queue, a missing address family, an unreachable peer.

use std::io;

/// The interface's send queue is full (Linux ENOBUFS, Windows WSAENOBUFS): a UDP sender
/// retries rather than failing.
pub fn is_no_buffer_space(e: &io::Error) -> bool {
    crate::sys::errors::is_no_buffer_space(e)
}

/// The address family (IPv6) is not supported by this system.
pub fn is_af_unsupported(e: &io::Error) -> bool {
    crate::sys::errors::is_af_unsupported(e)
}

/// No route to the host or its network, or the address is not available here.
pub fn is_unreachable(e: &io::Error) -> bool {
    crate::sys::errors::is_unreachable(e)
}
