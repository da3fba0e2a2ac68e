//! Winsock error codes as the kinds of failure the crate asks about.

use std::io;
use windows_sys::Win32::Networking::WinSock::{
    WSAEADDRNOTAVAIL, WSAEAFNOSUPPORT, WSAEHOSTUNREACH, WSAENETUNREACH, WSAENOBUFS, WSAEOPNOTSUPP,
};

pub(crate) fn is_no_buffer_space(e: &io::Error) -> bool {
    e.raw_os_error() == Some(WSAENOBUFS)
}
pub(crate) fn is_af_unsupported(e: &io::Error) -> bool {
    e.raw_os_error() == Some(WSAEAFNOSUPPORT)
}
pub(crate) fn is_unreachable(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(WSAEHOSTUNREACH) | Some(WSAENETUNREACH) | Some(WSAEADDRNOTAVAIL)
    )
}
pub(crate) fn is_unsupported(e: &io::Error) -> bool {
    e.raw_os_error() == Some(WSAEOPNOTSUPP) || e.kind() == io::ErrorKind::Unsupported
}
