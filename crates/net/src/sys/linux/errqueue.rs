//! The socket error queue (ip(7) IP_RECVERR, ipv6(7) IPV6_RECVERR, recvmsg with
//! MSG_ERRQUEUE): waiting for it, reading it without blocking, and decoding each
//! `sock_extended_err` (linux/errqueue.h) and the offender address after it. Shared by
//! MSG_ZEROCOPY completions (`zerocopy`) and ICMP errors (`pathmtu`).

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

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

/// One `sock_extended_err`, decoded from bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExtendedErr {
    pub errno: u32,
    pub origin: u8,
    pub ee_type: u8,
    pub code: u8,
    pub info: u32,
    pub data: u32,
}

/// Size of `struct sock_extended_err`; SO_EE_OFFENDER's sockaddr follows it.
const EE_BYTES: usize = 16;

impl ExtendedErr {
    /// The struct at the start of a control message's payload, and the bytes after it
    /// (the offender's sockaddr); `None` when the payload is too short.
    pub(crate) fn parse(payload: &[u8]) -> Option<(ExtendedErr, &[u8])> {
        let u32_at = |at: usize| -> Option<u32> {
            Some(u32::from_ne_bytes(
                payload.get(at..at + 4)?.try_into().ok()?,
            ))
        };
        let ee = ExtendedErr {
            errno: u32_at(0)?,
            origin: *payload.get(4)?,
            ee_type: *payload.get(5)?,
            code: *payload.get(6)?,
            info: u32_at(8)?,
            data: u32_at(12)?,
        };
        Some((ee, payload.get(EE_BYTES..).unwrap_or(&[])))
    }
}

/// Reads up to `max_messages` messages queued now (never waits) and hands `each` the
/// payload of every IP_RECVERR / IPV6_RECVERR control message among them.
pub(crate) fn read_error_queue(
    fd: RawFd,
    max_messages: usize,
    mut each: impl FnMut(&[u8]),
) -> io::Result<()> {
    for _ in 0..max_messages {
        // Aligned for cmsghdr; holds the header, one sock_extended_err and the
        // offender's address (at most a sockaddr_in6) with room to spare.
        let mut control = [0u64; 16];
        // The offending datagram's payload is not needed: a small buffer, truncated.
        let mut data = [0u8; 64];
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: data.len(),
        };
        // SAFETY: an all-zero msghdr is valid (no name, no data, no control).
        let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
        hdr.msg_iov = &mut iov;
        hdr.msg_iovlen = 1;
        hdr.msg_control = control.as_mut_ptr().cast();
        hdr.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: `hdr` points only at `iov` (which points at `data`) and `control`,
        // all of which live for the call and whose sizes are given; MSG_ERRQUEUE with
        // MSG_DONTWAIT never blocks.
        let rc = unsafe { libc::recvmsg(fd, &mut hdr, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(()),
                _ => Err(e),
            };
        }
        for_each_recverr(&hdr, &mut each);
    }
    Ok(())
}

/// Calls `each` with the payload of every IP_RECVERR / IPV6_RECVERR control message.
fn for_each_recverr(hdr: &libc::msghdr, each: &mut impl FnMut(&[u8])) {
    // SAFETY: `hdr.msg_control`/`msg_controllen` describe the buffer the kernel filled;
    // CMSG_FIRSTHDR/NXTHDR stay inside it and return null at its end.
    let mut c = unsafe { libc::CMSG_FIRSTHDR(hdr) };
    while !c.is_null() {
        // SAFETY: `c` is non-null and points to a complete cmsghdr inside the buffer.
        let (level, ty, len) = unsafe { ((*c).cmsg_level, (*c).cmsg_type, (*c).cmsg_len) };
        let recverr = (level == libc::SOL_IP && ty == libc::IP_RECVERR)
            || (level == libc::SOL_IPV6 && ty == libc::IPV6_RECVERR);
        // SAFETY: CMSG_LEN only computes a length.
        let header = unsafe { libc::CMSG_LEN(0) } as usize;
        // cmsg_len is a size_t with glibc, a socklen_t with musl.
        #[allow(clippy::unnecessary_cast)]
        let len = len as usize;
        if recverr && len > header {
            // SAFETY: the cmsg's payload runs from CMSG_DATA for `len - header` bytes,
            // inside the control buffer (the kernel set cmsg_len; CMSG_NXTHDR relies
            // on the same bound).
            let payload = unsafe { std::slice::from_raw_parts(libc::CMSG_DATA(c), len - header) };
            each(payload);
        }
        // SAFETY: `c` came from this header's buffer.
        c = unsafe { libc::CMSG_NXTHDR(hdr, c) };
    }
}
