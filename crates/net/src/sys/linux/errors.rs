//! Which errno an `io::Error` carries, for the portable code's error messages.

use std::io;

/// ENOBUFS: the interface queue is full; a UDP sender retries.
pub(crate) fn is_no_buffer_space(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOBUFS)
}

/// EAFNOSUPPORT: the address family (IPv6) is not supported by the kernel.
pub(crate) fn is_af_unsupported(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EAFNOSUPPORT)
}

/// No route to the host or network, or the address is not local.
pub(crate) fn is_unreachable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EHOSTUNREACH) | Some(libc::ENETUNREACH) | Some(libc::EADDRNOTAVAIL)
    )
}

/// ENOSYS / EOPNOTSUPP: the call or option does not exist here.
pub(crate) fn is_unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
    )
}
