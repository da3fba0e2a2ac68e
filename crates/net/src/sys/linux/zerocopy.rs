//! Linux MSG_ZEROCOPY (Documentation/networking/msg_zerocopy.rst): SO_ZEROCOPY on the
//! socket, send(2) with MSG_ZEROCOPY, and the completions read from the error queue
//! (recvmsg with MSG_ERRQUEUE; one `sock_extended_err` of origin
//! SO_EE_ORIGIN_ZEROCOPY per notification, naming the range of send calls it completes).

use crate::error::NetError;
use crate::sys::sockopt_err;
use crate::sys::unix_common::set_int;
use crate::sys::Completions;
use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::Duration;

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

/// Wait up to `wait` for the error queue to hold something (poll reports POLLERR).
pub(crate) fn wait_error_queue(sock: &impl AsRawFd, wait: Duration) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: 0,
        revents: 0,
    };
    let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX).max(1);
    // SAFETY: `p` is one valid pollfd for the call, and 1 is its count.
    let rc = unsafe { libc::poll(&mut p, 1, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(rc > 0 && p.revents & libc::POLLERR != 0)
}

/// Read every completion queued now (never waits).
pub(crate) fn read_completions(sock: &TcpStream) -> io::Result<Completions> {
    let fd = sock.as_raw_fd();
    let mut got = Completions::default();
    for _ in 0..MAX_NOTIFICATIONS_PER_READ {
        // Aligned for cmsghdr; holds the header, one sock_extended_err and the
        // offender's address (at most a sockaddr_in6) with room to spare.
        let mut control = [0u64; 16];
        // SAFETY: an all-zero msghdr is valid (no name, no data, no control).
        let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
        hdr.msg_control = control.as_mut_ptr().cast();
        hdr.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: `hdr` points only at `control`, which lives for the call and whose
        // size is given; MSG_ERRQUEUE reads never block.
        let rc = unsafe { libc::recvmsg(fd, &mut hdr, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(got),
                _ => Err(e),
            };
        }
        parse(&hdr, &mut got);
    }
    Ok(got)
}

/// Add the zero-copy notifications among `hdr`'s control messages to `got`.
fn parse(hdr: &libc::msghdr, got: &mut Completions) {
    // SAFETY: `hdr.msg_control`/`msg_controllen` describe the buffer the kernel filled;
    // CMSG_FIRSTHDR/NXTHDR stay inside it and return null at its end.
    let mut c = unsafe { libc::CMSG_FIRSTHDR(hdr) };
    while !c.is_null() {
        // SAFETY: `c` is non-null and points to a complete cmsghdr inside the buffer.
        let (level, ty, len) = unsafe { ((*c).cmsg_level, (*c).cmsg_type, (*c).cmsg_len) };
        let recverr = (level == libc::SOL_IP && ty == libc::IP_RECVERR)
            || (level == libc::SOL_IPV6 && ty == libc::IPV6_RECVERR);
        // SAFETY: CMSG_LEN only computes a length.
        let need = unsafe { libc::CMSG_LEN(std::mem::size_of::<libc::sock_extended_err>() as u32) };
        // cmsg_len is a size_t with glibc, a socklen_t with musl.
        if recverr && len as u64 >= u64::from(need) {
            // SAFETY: the payload holds at least one sock_extended_err (checked just
            // above); it may be unaligned.
            let ee: libc::sock_extended_err = unsafe {
                std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::sock_extended_err>())
            };
            if ee.ee_errno == 0 && ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY {
                let copied = ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0;
                got.add_range(ee.ee_info, ee.ee_data, copied);
            }
        }
        // SAFETY: `c` came from this header's buffer.
        c = unsafe { libc::CMSG_NXTHDR(hdr, c) };
    }
}

/// A memory-backed file (memfd) holding `bytes`, for [`sendfile`].
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
