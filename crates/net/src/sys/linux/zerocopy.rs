//! Linux MSG_ZEROCOPY (Documentation/networking/msg_zerocopy.rst): SO_ZEROCOPY on the
//! socket, send(2) with MSG_ZEROCOPY, and the completions read from the error queue
//! (recvmsg with MSG_ERRQUEUE; one `sock_extended_err` of origin
//! SO_EE_ORIGIN_ZEROCOPY per notification, naming the range of send calls it completes).

use super::errqueue::{read_error_queue, ExtendedErr};
use crate::error::NetError;
use crate::sys::sockopt_err;
use crate::sys::unix_common::set_int;
use crate::sys::Completions;
use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

/// <linux/errqueue.h>: the notification comes from MSG_ZEROCOPY.
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// <linux/errqueue.h>: the kernel copied the data after all (`ee_code` bit).
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;
/// Notifications read per call at most (each one may cover many sends): bounds the
/// loop whatever the kernel queues meanwhile.
const MAX_NOTIFICATIONS_PER_READ: usize = 4096;

pub(crate) fn check_supported() -> Result<(), NetError> {
    Ok(())
}

pub(crate) fn enable(sock: &TcpStream) -> Result<(), NetError> {
    set_int(sock.as_raw_fd(), libc::SOL_SOCKET, libc::SO_ZEROCOPY, 1).map_err(|e| {
        match e.raw_os_error() {
            Some(libc::ENOPROTOOPT) | Some(libc::EINVAL) | Some(libc::EOPNOTSUPP) => {
                NetError::InvalidOption(
                    "this kernel cannot send with MSG_ZEROCOPY (SO_ZEROCOPY needs Linux 4.14 \
                     or later); drop --zerocopy"
                        .into(),
                )
            }
            _ => sockopt_err("SO_ZEROCOPY", 1, e),
        }
    })
}

pub(crate) fn send(sock: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes for the call; with
    // MSG_ZEROCOPY the kernel keeps references to its pages (not to the slice) until the
    // completion, and the caller keeps the memory alive and unchanged until then.
    let n = unsafe {
        libc::send(
            sock.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_ZEROCOPY | libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

pub(crate) use super::errqueue::wait_error_queue;

/// Read every completion queued now (never waits).
pub(crate) fn read_completions(sock: &TcpStream) -> io::Result<Completions> {
    let mut got = Completions::default();
    read_error_queue(sock.as_raw_fd(), MAX_NOTIFICATIONS_PER_READ, |payload| {
        if let Some((ee, _)) = ExtendedErr::parse(payload) {
            if ee.errno == 0 && ee.origin == SO_EE_ORIGIN_ZEROCOPY {
                let copied = ee.code & SO_EE_CODE_ZEROCOPY_COPIED != 0;
                got.add_range(ee.info, ee.data, copied);
            }
        }
    })?;
    Ok(got)
}

pub(crate) fn memory_file(bytes: &[u8]) -> io::Result<std::fs::File> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: the name is a NUL-terminated C string literal; the call only reads it.
    let fd = unsafe { libc::memfd_create(c"dualperf-pattern".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor this function owns; the File closes it.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    f.write_all(bytes)?;
    Ok(f)
}

/// Send `len` bytes of `file` from `offset` on `sock` (sendfile(2)); the file's own
/// position is left alone.
pub(crate) fn sendfile(
    sock: &TcpStream,
    file: &std::fs::File,
    offset: usize,
    len: usize,
) -> io::Result<usize> {
    let mut off = libc::off_t::try_from(offset)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
    // SAFETY: both descriptors are open for the call; `off` is a valid off_t the kernel
    // reads and updates.
    let n = unsafe { libc::sendfile(sock.as_raw_fd(), file.as_raw_fd(), &mut off, len) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
