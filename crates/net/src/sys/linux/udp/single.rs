//! Linux's one-datagram-per-call receive (`recvmsg`, with the control messages the
//! batched path reads). Used when `DUALPERF_NO_BATCH=1`, when asked for, or when the
//! batched calls fail.

use super::cmsg::{self, CmsgBuf};
use crate::udp::{Meta, RecvBatch};
use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;

/// Receive one datagram per `recvmsg` call (non-blocking) until the batch is full or
/// the queue is empty.
pub(crate) fn recv(sock: &UdpSocket, batch: &mut RecvBatch) -> io::Result<usize> {
    for i in 0..batch.bufs.len() {
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
        // call; MSG_DONTWAIT keeps it from blocking.
        let rc = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut h, libc::MSG_DONTWAIT) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(batch.metas.len()),
                _ if !batch.metas.is_empty() => Ok(batch.metas.len()),
                _ => Err(e),
            };
        }
        let Some(src) = cmsg::to_socket_addr(&addr) else {
            continue;
        };
        let info = cmsg::parse(&h);
        batch.drops_seen = batch.drops_seen.max(info.drops);
        batch.metas.push(Meta {
            buf: i,
            offset: 0,
            len: (rc as usize).min(buf.len()),
            src,
            rx_ns: info.rx_ns,
            truncated: h.msg_flags & libc::MSG_TRUNC != 0,
        });
    }
    Ok(batch.metas.len())
}
