//! Linux's one-datagram-per-call receive: `recvmsg` when the socket delivers control
//! messages (kernel timestamps, SO_RXQ_OVFL), else `recvfrom`, which copies no message
//! header or iovec in and out of the kernel (as nuttcp's and iperf3's receivers call).
//! Used when asked for (`--udp-datapath per-datagram`, `DUALPERF_NO_BATCH=1`) or when
//! the batched calls fail.

use super::cmsg::{self, CmsgBuf};
use crate::sys::datagram::{Meta, RecvBatch};
use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;

/// Receive one datagram per `recvmsg` call (non-blocking) until the batch is full or
/// the queue is empty.
pub(crate) fn recv(
    sock: &UdpSocket,
    batch: &mut RecvBatch,
    control: bool,
    gro_buffers: &mut u64,
) -> io::Result<usize> {
    for i in 0..batch.bufs.len() {
        match recv_one(sock, batch, i, libc::MSG_DONTWAIT, control, gro_buffers) {
            Ok(_) => {}
            Err(e) if is_empty_or_interrupted(&e) => break,
            Err(_) if !batch.metas.is_empty() => break,
            Err(e) => return Err(e),
        }
    }
    Ok(batch.metas.len())
}

/// One datagram with one blocking `recvmsg` (bounded by the socket's SO_RCVTIMEO, which
/// the caller armed); 0 on timeout or signal.
pub(crate) fn recv_one_waiting(
    sock: &UdpSocket,
    batch: &mut RecvBatch,
    control: bool,
    gro_buffers: &mut u64,
) -> io::Result<usize> {
    match recv_one(sock, batch, 0, 0, control, gro_buffers) {
        Ok(_) => Ok(batch.metas.len()),
        Err(e) if is_empty_or_interrupted(&e) => Ok(0),
        Err(e) => Err(e),
    }
}

/// EAGAIN (nothing queued, or SO_RCVTIMEO expired) or a signal: not an error.
fn is_empty_or_interrupted(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

/// One receive into buffer `i` with `flags` (`recvmsg` when `control` messages are
/// wanted, else `recvfrom`); what arrived is appended to `batch.metas` — one datagram,
/// or several that GRO coalesced (counted in `gro_buffers`) — (`Ok(false)`: it came
/// from an address family we cannot name, and was skipped).
fn recv_one(
    sock: &UdpSocket,
    batch: &mut RecvBatch,
    i: usize,
    flags: i32,
    control: bool,
    gro_buffers: &mut u64,
) -> io::Result<bool> {
    if !control {
        return recv_one_from(sock, batch, i, flags);
    }
    let buf = &mut batch.bufs[i];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut addr = cmsg::empty_storage();
    let mut cbuf: CmsgBuf = [0u64; 16];
    // SAFETY: msghdr is plain data; zero is a valid empty header.
    let mut h: libc::msghdr = unsafe { std::mem::zeroed() };
    h.msg_name = (&mut addr as *mut libc::sockaddr_storage).cast();
    h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    h.msg_iov = &mut iov;
    h.msg_iovlen = 1;
    h.msg_control = cbuf.as_mut_ptr().cast();
    h.msg_controllen = cmsg::CMSG_BUF_BYTES as _;
    // SAFETY: `h` points at `iov` (into `buf`), `addr` and `cbuf`, all alive for the
    // call; without MSG_DONTWAIT it blocks at most the socket's SO_RCVTIMEO.
    let rc = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut h, flags) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let Some(src) = cmsg::to_socket_addr(&addr) else {
        return Ok(false);
    };
    if super::take_message(batch, i, &h, rc as usize, src) {
        *gro_buffers += 1;
    }
    Ok(true)
}

/// [`recv_one`] without control messages: `recvfrom` with MSG_TRUNC, which returns the
/// datagram's real length, so a cut datagram is still flagged.
fn recv_one_from(
    sock: &UdpSocket,
    batch: &mut RecvBatch,
    i: usize,
    flags: i32,
) -> io::Result<bool> {
    let buf = &mut batch.bufs[i];
    let mut addr = cmsg::empty_storage();
    let mut addr_len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `buf` and `addr` are alive and writable for the call, their lengths are
    // what is passed; without MSG_DONTWAIT it blocks at most the socket's SO_RCVTIMEO.
    let rc = unsafe {
        libc::recvfrom(
            sock.as_raw_fd(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            flags | libc::MSG_TRUNC,
            (&mut addr as *mut libc::sockaddr_storage).cast(),
            &mut addr_len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let Some(src) = cmsg::to_socket_addr(&addr) else {
        return Ok(false);
    };
    let full = rc as usize;
    batch.metas.push(Meta {
        buf: i,
        offset: 0,
        len: full.min(buf.len()),
        src,
        rx_ns: None,
        truncated: full > buf.len(),
    });
    Ok(true)
}
