//! The Linux batched datapath: `sendmmsg` with UDP GSO for runs of equal-size datagrams,
//! `recvmmsg` with optional UDP GRO, kernel timestamps read from control messages.

use super::cmsg::{self, CmsgBuf};
use crate::sys::datagram::{BatchIo, RecvBatch, MAX_GSO_BYTES};
use socket2::SockAddr;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

/// Most messages one sendmmsg/recvmmsg call takes (UIO_MAXIOV).
const MAX_MMSG: usize = 1024;

/// One message of a send: `count` datagrams from `start`, GSO when `count > 1`.
#[derive(Debug, Clone, Copy)]
struct Plan {
    start: usize,
    count: usize,
    segment_bytes: usize,
}

fn plan<B: AsRef<[u8]>>(b: &BatchIo, datagrams: &[B]) -> Vec<Plan> {
    let mut plans = Vec::new();
    let mut i = 0;
    while i < datagrams.len() && plans.len() < MAX_MMSG {
        let seg = datagrams[i].as_ref().len();
        let gso_ok = b.gso_segments > 1
            && seg > 0
            && seg <= usize::from(u16::MAX)
            && b.gso_refused_bytes.is_none_or(|refused| seg < refused);
        let mut count = 1;
        if gso_ok {
            while i + count < datagrams.len()
                && count < b.gso_segments
                && datagrams[i + count].as_ref().len() == seg
                && (count + 1) * seg <= MAX_GSO_BYTES
            {
                count += 1;
            }
        }
        plans.push(Plan {
            start: i,
            count,
            segment_bytes: seg,
        });
        i += count;
    }
    plans
}

/// Send with sendmmsg (+ GSO); returns datagrams sent.
pub(crate) fn send<B: AsRef<[u8]>>(
    b: &mut BatchIo,
    datagrams: &[B],
    dst: Option<SocketAddr>,
) -> io::Result<usize> {
    loop {
        let plans = plan(b, datagrams);
        match send_plans(b, datagrams, &plans, dst) {
            Ok(sent) => return Ok(sent),
            Err(e) => {
                let gso_used = plans.iter().any(|p| p.count > 1);
                if !gso_used {
                    return Err(e);
                }
                match e.raw_os_error() {
                    // The device cannot checksum-offload: GSO is not possible at all.
                    Some(libc::EIO) => {
                        b.gso_segments = 0;
                        b.notes
                            .push(format!("UDP GSO refused by the kernel ({e}); switched off"));
                    }
                    // Segment larger than the path MTU allows (or too many segments).
                    Some(libc::EINVAL) | Some(libc::EMSGSIZE) => {
                        let smallest = plans
                            .iter()
                            .filter(|p| p.count > 1)
                            .map(|p| p.segment_bytes)
                            .min()
                            .unwrap_or(0);
                        b.gso_refused_bytes = Some(smallest);
                        b.notes.push(format!(
                            "UDP GSO refused for {smallest}-byte datagrams ({e}); \
                             sending those without it"
                        ));
                    }
                    _ => return Err(e),
                }
            }
        }
    }
}

fn send_plans<B: AsRef<[u8]>>(
    b: &mut BatchIo,
    datagrams: &[B],
    plans: &[Plan],
    dst: Option<SocketAddr>,
) -> io::Result<usize> {
    let covered = plans.last().map_or(0, |p| p.start + p.count);
    let mut iovecs: Vec<libc::iovec> = datagrams[..covered]
        .iter()
        .map(|d| libc::iovec {
            // The kernel only reads send buffers; the cast to *mut is what iovec wants.
            iov_base: d.as_ref().as_ptr() as *mut libc::c_void,
            iov_len: d.as_ref().len(),
        })
        .collect();
    let mut cmsgs: Vec<CmsgBuf> = vec![[0u64; 16]; plans.len()];
    let name = dst.map(SockAddr::from);
    // One base pointer per array, offset per message, so that no later borrow of the
    // array invalidates a pointer already stored in a header.
    let iov_base = iovecs.as_mut_ptr();
    let mut hdrs: Vec<libc::mmsghdr> = Vec::with_capacity(plans.len());
    for (p, cbuf) in plans.iter().zip(cmsgs.iter_mut()) {
        // SAFETY: msghdr is plain data; zero is a valid empty header.
        let mut h: libc::msghdr = unsafe { std::mem::zeroed() };
        if let Some(n) = &name {
            h.msg_name = n.as_ptr() as *mut libc::c_void;
            h.msg_namelen = n.len();
        }
        h.msg_iov = iov_base.wrapping_add(p.start);
        h.msg_iovlen = p.count as _;
        if p.count > 1 {
            // plan() only groups segments that fit in u16.
            cmsg::set_gso_segment(&mut h, cbuf, p.segment_bytes as u16);
        }
        hdrs.push(libc::mmsghdr {
            msg_hdr: h,
            msg_len: 0,
        });
    }
    // SAFETY: `hdrs` holds `hdrs.len()` initialised mmsghdrs whose iovec, name and
    // control pointers point into `iovecs`, `name`, `cmsgs` and the caller's datagrams,
    // all alive and unmoved until the call returns.
    let rc = unsafe {
        libc::sendmmsg(
            b.sock.as_raw_fd(),
            hdrs.as_mut_ptr(),
            hdrs.len() as libc::c_uint,
            0,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let done = &plans[..(rc as usize).min(plans.len())];
    let sent: usize = done.iter().map(|p| p.count).sum();
    b.stats.send_calls += 1;
    b.stats.sent_datagrams += sent as u64;
    b.stats.gso_sends += done.iter().filter(|p| p.count > 1).count() as u64;
    Ok(sent)
}

/// Receive with recvmmsg (`flags`: MSG_DONTWAIT, or MSG_WAITFORONE to wait for the first
/// datagram as long as the socket's SO_RCVTIMEO says); GRO buffers are split into
/// datagrams. 0 when nothing came (EAGAIN: empty, or the timeout) or on a signal.
pub(crate) fn recv(
    b: &mut BatchIo,
    batch: &mut RecvBatch,
    flags: libc::c_int,
) -> io::Result<usize> {
    let n = batch.bufs.len().min(MAX_MMSG);
    let mut iovecs: Vec<libc::iovec> = batch.bufs[..n]
        .iter_mut()
        .map(|buf| libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        })
        .collect();
    let mut addrs: Vec<libc::sockaddr_storage> = (0..n).map(|_| cmsg::empty_storage()).collect();
    let mut cmsgs: Vec<CmsgBuf> = vec![[0u64; 16]; n];
    let (iov_base, addr_base, cmsg_base) =
        (iovecs.as_mut_ptr(), addrs.as_mut_ptr(), cmsgs.as_mut_ptr());
    let mut hdrs: Vec<libc::mmsghdr> = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: msghdr is plain data; zero is a valid empty header.
        let mut h: libc::msghdr = unsafe { std::mem::zeroed() };
        h.msg_name = addr_base.wrapping_add(i).cast();
        h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        h.msg_iov = iov_base.wrapping_add(i);
        h.msg_iovlen = 1;
        h.msg_control = cmsg_base.wrapping_add(i).cast();
        h.msg_controllen = cmsg::CMSG_BUF_BYTES as _;
        hdrs.push(libc::mmsghdr {
            msg_hdr: h,
            msg_len: 0,
        });
    }
    // SAFETY: `hdrs` holds `n` initialised mmsghdrs pointing into `iovecs`, `addrs`,
    // `cmsgs` and `batch.bufs`, all alive and unmoved until the call returns; a null
    // timeout leaves the wait to `flags` and SO_RCVTIMEO (recvmmsg's own timeout is only
    // checked between datagrams).
    let rc = unsafe {
        libc::recvmmsg(
            b.sock.as_raw_fd(),
            hdrs.as_mut_ptr(),
            n as libc::c_uint,
            flags,
            std::ptr::null_mut(),
        )
    };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
            _ => Err(e),
        };
    }
    for (i, h) in hdrs.iter().take(rc as usize).enumerate() {
        let Some(src) = cmsg::to_socket_addr(&addrs[i]) else {
            continue;
        };
        if super::take_message(batch, i, &h.msg_hdr, h.msg_len as usize, src) {
            b.stats.gro_buffers += 1;
        }
    }
    if rc > 0 {
        b.stats.recv_calls += 1;
        b.stats.recv_datagrams += batch.metas.len() as u64;
    }
    Ok(batch.metas.len())
}
