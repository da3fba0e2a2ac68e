//! The Linux UDP datapath: sendmmsg/recvmmsg with GSO/GRO ([`mmsg`]), recvmsg one
//! datagram at a time ([`single`]), control messages ([`cmsg`]), per-socket drop counts
//! ([`drops`]). Both receive paths wait inside their own call, bounded by SO_RCVTIMEO
//! ([`arm_wait`]): one system call per wake-up.

mod cmsg;
mod drops;
mod mmsg;
mod single;

pub(crate) use mmsg::send;

use crate::sys::datagram::{
    BatchConfig, BatchIo, Caps, Datapath, Meta, RecvBatch, Wait, MAX_GSO_SEGMENTS,
};
use crate::sys::unix_common::{get_int, set_int};
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

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
    let meminfo = cfg.count_drops && drops::socket_drops(fd).is_some();
    let rxq_ovfl = cfg.count_drops
        && !meminfo
        && match drops::enable(fd) {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!("receive drop counts unavailable ({e})"));
                false
            }
        };
    Caps {
        batched: true,
        gso_segments,
        gro,
        timestamps,
        count_drops: meminfo || rxq_ovfl,
        // hrtimers with the thread's slack at 1 ns: a nap of tens of µs lasts about that.
        naps: cfg.coalesce_wakeups,
        // GRO too: a per-call receive (the batched one refused at run time) must read the
        // segment size to split a coalesced buffer.
        rx_control: timestamps || rxq_ovfl || gro,
    }
}

/// Take what one `recvmsg`/`recvmmsg` slot received into buffer `buf` (`received`
/// bytes, header `h`, from `src`): its control messages (drop count, kernel stamp, GRO
/// segment size), truncation flag and datagram(s), as [`push_received`]. `true` when
/// the buffer was coalesced.
fn take_message(
    batch: &mut RecvBatch,
    buf: usize,
    h: &libc::msghdr,
    received: usize,
    src: SocketAddr,
) -> bool {
    let info = cmsg::parse(h);
    batch.drops_seen = batch.drops_seen.max(info.drops);
    let len = received.min(batch.bufs[buf].len());
    let truncated = h.msg_flags & libc::MSG_TRUNC != 0;
    push_received(
        batch,
        buf,
        len,
        info.gro_segment_bytes,
        src,
        info.rx_ns,
        truncated,
    )
}

/// Append what one receive call put in buffer `buf` (`len` bytes) to `batch.metas`: one
/// datagram, or one per `gro_segment` bytes when GRO coalesced several (the last may be
/// shorter). `true` when the buffer was coalesced.
fn push_received(
    batch: &mut RecvBatch,
    buf: usize,
    len: usize,
    gro_segment: Option<usize>,
    src: SocketAddr,
    rx_ns: Option<u64>,
    truncated: bool,
) -> bool {
    let seg = gro_segment.filter(|&s| s > 0 && s < len).unwrap_or(len);
    let mut offset = 0;
    loop {
        let piece = seg.min(len - offset);
        batch.metas.push(Meta {
            buf,
            offset,
            len: piece,
            src,
            rx_ns,
            truncated,
        });
        offset += piece;
        if offset >= len || piece == 0 {
            break;
        }
    }
    seg < len
}

/// The calls a path makes, compact: `linux:sendmmsg/recvmmsg+gso`.
pub(crate) fn describe(path: Datapath, gso: bool, gro: bool, rx_control: bool) -> String {
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
        Datapath::PerCall if rx_control => "linux:send/recvmsg".to_string(),
        Datapath::PerCall => "linux:send/recvfrom".to_string(),
    }
}

pub(crate) fn socket_drops(sock: &UdpSocket) -> Option<u64> {
    drops::socket_drops(sock.as_raw_fd())
}

/// Arm the socket's receive timeout (SO_RCVTIMEO) for `wait`, setting it only when it
/// changes; `false` when the call must not wait (non-blocking, or a zero wait, which
/// SO_RCVTIMEO cannot express: 0 means for ever there).
fn arm_wait(b: &mut BatchIo, wait: Wait) -> io::Result<bool> {
    let timeout = match wait {
        Wait::NonBlocking => return Ok(false),
        Wait::Timeout(d) if d.is_zero() => return Ok(false),
        Wait::Timeout(d) => Some(d.max(Duration::from_micros(1))),
        Wait::Forever => None,
    };
    if b.recv_timeout != Some(timeout) {
        b.sock.set_read_timeout(timeout)?;
        b.recv_timeout = Some(timeout);
    }
    Ok(true)
}

/// The batched path: one recvmmsg that waits for the first datagram (MSG_WAITFORONE,
/// bounded by SO_RCVTIMEO) and then takes what else is queued, up to the batch, where it
/// used to make a failed non-blocking try, a `ppoll` and a second try whenever the queue
/// was empty.
pub(crate) fn recv_batched(
    b: &mut BatchIo,
    batch: &mut RecvBatch,
    wait: Wait,
) -> io::Result<usize> {
    let flags = if arm_wait(b, wait)? {
        libc::MSG_WAITFORONE
    } else {
        libc::MSG_DONTWAIT
    };
    mmsg::recv(b, batch, flags)
}

/// The per-call path: one datagram per call, the wait inside the call itself (a
/// blocking `recvmsg`), so a receiver that keeps up makes one system call per datagram,
/// as the C tools' `read` loops do. A call that must not wait drains what is queued, up
/// to the batch.
pub(crate) fn recv_per_call(
    b: &mut BatchIo,
    batch: &mut RecvBatch,
    wait: Wait,
) -> io::Result<usize> {
    if arm_wait(b, wait)? {
        single::recv_one_waiting(&b.sock, batch, b.rx_control, &mut b.stats.gro_buffers)
    } else {
        single::recv(&b.sock, batch, b.rx_control, &mut b.stats.gro_buffers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(len: usize, seg: Option<usize>) -> (bool, Vec<(usize, usize)>) {
        let mut batch = RecvBatch::new(2, 4096);
        let src: SocketAddr = "127.0.0.1:9".parse().unwrap();
        batch.metas.push(Meta {
            buf: 0,
            offset: 0,
            len: 1,
            src,
            rx_ns: None,
            truncated: false,
        });
        let coalesced = push_received(&mut batch, 1, len, seg, src, Some(5), false);
        assert_eq!(batch.metas[0].buf, 0, "what was there stays");
        let got = batch.metas[1..]
            .iter()
            .inspect(|m| assert_eq!((m.buf, m.rx_ns), (1, Some(5))))
            .map(|m| (m.offset, m.len))
            .collect();
        (coalesced, got)
    }

    #[test]
    fn a_coalesced_buffer_is_split_at_its_segment_size_and_nothing_else_is() {
        // Three 128-byte datagrams and a 40-byte one behind them.
        assert_eq!(
            pieces(424, Some(128)),
            (true, vec![(0, 128), (128, 128), (256, 128), (384, 40)])
        );
        assert_eq!(pieces(256, Some(128)), (true, vec![(0, 128), (128, 128)]));
        // No GRO segment size, one as long as the buffer, or a nonsensical 0: one datagram.
        assert_eq!(pieces(300, None), (false, vec![(0, 300)]));
        assert_eq!(pieces(300, Some(300)), (false, vec![(0, 300)]));
        assert_eq!(pieces(300, Some(0)), (false, vec![(0, 300)]));
        // An empty datagram is one datagram.
        assert_eq!(pieces(0, Some(128)), (false, vec![(0, 0)]));
    }
}
