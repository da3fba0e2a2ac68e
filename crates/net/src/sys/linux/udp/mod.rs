//! The Linux UDP datapath: sendmmsg/recvmmsg with GSO/GRO ([`mmsg`]), recvmsg one
//! datagram at a time ([`single`]), control messages ([`cmsg`]), per-socket drop counts
//! ([`drops`]) and ppoll.

mod cmsg;
mod drops;
mod mmsg;
mod single;

pub(crate) use mmsg::{recv, send};
pub(crate) use single::{recv as recv_single, recv_per_call};

use super::sockopt::{get_int, set_int};
use crate::udp::{BatchConfig, Caps, Datapath, Wait, MAX_GSO_SEGMENTS};
use std::io;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;

/// Switch on what `cfg` asks for and the kernel offers; a refusal becomes a note.
pub(crate) fn setup(
    sock: &UdpSocket,
    cfg: &BatchConfig,
    path: Datapath,
    notes: &mut Vec<String>,
) -> Caps {
    let fd = sock.as_raw_fd();
    let batched = path == Datapath::Batched;
    let gso_segments = if batched && cfg.gso {
        match get_int(fd, libc::SOL_UDP, libc::UDP_SEGMENT) {
            Ok(_) => MAX_GSO_SEGMENTS,
            Err(e) => {
                notes.push(format!("UDP GSO unavailable ({e}); sending without it"));
                0
            }
        }
    } else {
        0
    };
    let gro = batched
        && cfg.gro
        && match set_int(fd, libc::SOL_UDP, libc::UDP_GRO, 1) {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!("UDP GRO unavailable ({e}); receiving without it"));
                false
            }
        };
    let timestamps = cfg.kernel_timestamps
        && match set_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1) {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!("kernel receive timestamps unavailable ({e})"));
                false
            }
        };
    // SO_MEMINFO reads the socket's drop counter whenever asked, at no cost per
    // datagram; SO_RXQ_OVFL (the same counter in a control message on every datagram
    // received, which costs the receive path a put_cmsg each) only where SO_MEMINFO has
    // no drop count (kernels before 4.7).
    let count_drops = cfg.count_drops
        && (drops::socket_drops(fd).is_some()
            || match drops::enable(fd) {
                Ok(()) => true,
                Err(e) => {
                    notes.push(format!("receive drop counts unavailable ({e})"));
                    false
                }
            });
    Caps {
        batched: true,
        gso_segments,
        gro,
        timestamps,
        count_drops,
    }
}

/// The calls a path makes, compact: `linux:sendmmsg/recvmmsg+gso`.
pub(crate) fn describe(path: Datapath, gso: bool, gro: bool) -> String {
    match path {
        Datapath::Batched => {
            let mut s = "linux:sendmmsg/recvmmsg".to_string();
            if gso {
                s.push_str("+gso");
            }
            if gro {
                s.push_str("+gro");
            }
            s
        }
        Datapath::PerCall => "linux:send/recvmsg".to_string(),
    }
}

pub(crate) fn socket_drops(sock: &UdpSocket) -> Option<u64> {
    drops::socket_drops(sock.as_raw_fd())
}

/// The batched path calls recvmmsg with MSG_DONTWAIT: it never blocks (the per-call
/// path waits in its own call, [`single::recv_per_call`]).
pub(crate) const RECV_NEVER_BLOCKS: bool = true;

/// Wait until the socket is readable. `Ok(false)` on timeout or signal.
pub(crate) fn poll_readable(sock: &UdpSocket, wait: Wait) -> io::Result<bool> {
    let ts;
    let ts_ptr: *const libc::timespec = match wait {
        Wait::NonBlocking => return Ok(true), // the receive call itself does not block
        Wait::Forever => std::ptr::null(),
        Wait::Timeout(d) => {
            ts = libc::timespec {
                tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: d.subsec_nanos() as libc::c_long,
            };
            &ts
        }
    };
    let mut pfd = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `pfd` is one valid pollfd (nfds 1); `ts_ptr` is null or points to `ts`,
    // which outlives the call; a null sigmask leaves the signal mask alone.
    let rc = unsafe { libc::ppoll(&mut pfd, 1, ts_ptr, std::ptr::null()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(rc > 0)
}
