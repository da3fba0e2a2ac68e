//! Windows UDP: with USO (UDP send segmentation offload, Windows 10 2004+ and
//! Server 2022; probed per socket with UDP_SEND_MSG_SIZE), runs of equal-size
//! datagrams leave as one WSASendMsg whose buffers the stack cuts into datagrams
//! (the UDP_SEND_MSG_SIZE control message); without it, one `send` per datagram.
//! Receive is one datagram per `recvfrom`; asked for GRO, receive coalescing (URO,
//! UDP_RECV_MAX_COALESCED_SIZE) is switched on and WSARecvMsg reads coalesced
//! buffers, split again with the UDP_COALESCED_INFO segment size. No kernel receive
//! timestamps or per-socket drop counts: receive times are taken in user space.
use crate::sys::datagram::{
    BatchConfig, BatchIo, Caps, Datapath, Meta, RecvBatch, Wait, MAX_GSO_BYTES,
};
use crate::sys::portable;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::windows::io::AsRawSocket;
use std::sync::OnceLock;
use windows_sys::Win32::Networking::WinSock::{
    closesocket, setsockopt, socket, WSAIoctl, WSAPoll, WSASendMsg, AF_INET, CMSGHDR,
    INVALID_SOCKET, IPPROTO_UDP, LPFN_WSARECVMSG, POLLRDNORM, SIO_GET_EXTENSION_FUNCTION_POINTER,
    SOCKADDR, SOCKADDR_STORAGE, SOCKET, SOCKET_ERROR, SOCK_DGRAM, UDP_COALESCED_INFO,
    UDP_RECV_MAX_COALESCED_SIZE, UDP_SEND_MSG_SIZE, WSABUF, WSAEMSGSIZE, WSAID_WSARECVMSG, WSAMSG,
    WSAPOLLFD,
};

/// Most datagrams one USO send carries (quinn-udp found 512 on Windows 11; the
/// byte limit MAX_GSO_BYTES binds first for all but the smallest datagrams).
const MAX_USO_SEGMENTS: usize = 512;
/// Control buffer: one CMSGHDR (16 bytes on x64) and a u32, padded; room for two.
const CMSG_BUF: usize = 64;
const CMSG_HDR: usize = std::mem::size_of::<CMSGHDR>();

fn raw(sock: &UdpSocket) -> SOCKET {
    sock.as_raw_socket() as SOCKET
}

fn set_u32(sock: &UdpSocket, level: i32, name: i32, value: u32) -> io::Result<()> {
    // SAFETY: `value` lives for the call and its exact size is passed.
    let rc = unsafe {
        setsockopt(
            raw(sock),
            level,
            name,
            (&value as *const u32).cast(),
            std::mem::size_of::<u32>() as i32,
        )
    };
    if rc == SOCKET_ERROR {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// WSARecvMsg is an extension function: its pointer comes from WSAIoctl.
fn wsa_recvmsg() -> LPFN_WSARECVMSG {
    static PTR: OnceLock<LPFN_WSARECVMSG> = OnceLock::new();
    *PTR.get_or_init(|| {
        // SAFETY: a plain socket() call; the handle is closed below.
        let s = unsafe { socket(i32::from(AF_INET), SOCK_DGRAM, 0) };
        if s == INVALID_SOCKET {
            return None;
        }
        let guid = WSAID_WSARECVMSG;
        let mut f: LPFN_WSARECVMSG = None;
        let mut len = 0u32;
        // SAFETY: in and out buffers are valid with their sizes; no overlapped I/O.
        let rc = unsafe {
            WSAIoctl(
                s,
                SIO_GET_EXTENSION_FUNCTION_POINTER,
                (&guid as *const windows_sys::core::GUID).cast(),
                std::mem::size_of_val(&guid) as u32,
                (&mut f as *mut LPFN_WSARECVMSG).cast(),
                std::mem::size_of::<LPFN_WSARECVMSG>() as u32,
                &mut len,
                std::ptr::null_mut(),
                None,
            )
        };
        // SAFETY: `s` is a socket we opened.
        unsafe { closesocket(s) };
        if rc == SOCKET_ERROR || len as usize != std::mem::size_of::<LPFN_WSARECVMSG>() {
            None
        } else {
            f
        }
    })
}

pub(crate) fn setup(
    sock: &UdpSocket,
    cfg: &BatchConfig,
    path: Datapath,
    notes: &mut Vec<String>,
) -> Caps {
    let batched = path == Datapath::Batched;
    // USO: the option exists where the stack offers it; 0 = off until a send asks.
    let uso = batched
        && cfg.gso
        && match set_u32(sock, IPPROTO_UDP, UDP_SEND_MSG_SIZE, 0) {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!("UDP USO unavailable ({e}); one datagram per send"));
                false
            }
        };
    let uro = batched
        && cfg.gro
        && match (
            wsa_recvmsg(),
            set_u32(
                sock,
                IPPROTO_UDP,
                UDP_RECV_MAX_COALESCED_SIZE,
                u32::from(u16::MAX),
            ),
        ) {
            (Some(_), Ok(())) => true,
            (None, _) => {
                notes.push("WSARecvMsg unavailable; receiving without coalescing".into());
                false
            }
            (_, Err(e)) => {
                notes.push(format!("UDP URO unavailable ({e}); receiving without it"));
                false
            }
        };
    Caps {
        batched: uso || uro,
        gso_segments: if uso { MAX_USO_SEGMENTS } else { 0 },
        gro: uro,
        timestamps: false,
        count_drops: false,
        rx_control: false,
        naps: false,
    }
}

pub(crate) fn describe(path: Datapath, gso: bool, gro: bool, _rx_control: bool) -> String {
    match path {
        Datapath::Batched => format!(
            "windows:{}/{}",
            if gso { "wsasendmsg+uso" } else { "send" },
            if gro { "wsarecvmsg+uro" } else { "recvfrom" }
        ),
        Datapath::PerCall => "windows:send/recvfrom".to_string(),
    }
}

/// Send `datagrams`: runs of equal size (up to the segment and byte limits) as one
/// WSASendMsg with UDP_SEND_MSG_SIZE, others one `send` each. Returns how many
/// datagrams went out; an error only if none did.
pub(crate) fn send<B: AsRef<[u8]>>(
    b: &mut BatchIo,
    datagrams: &[B],
    dst: Option<SocketAddr>,
) -> io::Result<usize> {
    let mut i = 0;
    while i < datagrams.len() {
        let seg = datagrams[i].as_ref().len();
        let mut count = 1;
        if b.gso_segments > 1 && seg > 0 && seg <= MAX_GSO_BYTES {
            while i + count < datagrams.len()
                && count < b.gso_segments
                && datagrams[i + count].as_ref().len() == seg
                && (count + 1) * seg <= MAX_GSO_BYTES
            {
                count += 1;
            }
        }
        let r = if count > 1 {
            send_uso(&b.sock, &datagrams[i..i + count], seg, dst).map(|_| count)
        } else {
            match dst {
                Some(a) => b.sock.send_to(datagrams[i].as_ref(), a),
                None => b.sock.send(datagrams[i].as_ref()),
            }
            .map(|_| 1)
        };
        match r {
            Ok(n) => {
                b.stats.send_calls += 1;
                b.stats.sent_datagrams += n as u64;
                if n > 1 {
                    b.stats.gso_sends += 1;
                }
                i += n;
            }
            Err(e) if i > 0 => {
                let _ = e;
                return Ok(i);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(i)
}

fn send_uso<B: AsRef<[u8]>>(
    sock: &UdpSocket,
    datagrams: &[B],
    segment: usize,
    dst: Option<SocketAddr>,
) -> io::Result<()> {
    let mut bufs: Vec<WSABUF> = datagrams
        .iter()
        .map(|d| WSABUF {
            len: d.as_ref().len() as u32,
            buf: d.as_ref().as_ptr() as *mut u8,
        })
        .collect();
    let mut control = [0u64; CMSG_BUF / 8];
    let ctrl = control.as_mut_ptr().cast::<u8>();
    let data_len = std::mem::size_of::<u32>();
    // SAFETY: `control` is 8-byte aligned and longer than one header + a u32.
    unsafe {
        let h = ctrl.cast::<CMSGHDR>();
        (*h).cmsg_len = CMSG_HDR + data_len;
        (*h).cmsg_level = IPPROTO_UDP;
        (*h).cmsg_type = UDP_SEND_MSG_SIZE;
        std::ptr::write_unaligned(ctrl.add(CMSG_HDR).cast::<u32>(), segment as u32);
    }
    let to = dst.map(socket2::SockAddr::from);
    let msg = WSAMSG {
        name: to
            .as_ref()
            .map_or(std::ptr::null_mut(), |a| a.as_ptr() as *mut SOCKADDR),
        namelen: to.as_ref().map_or(0, |a| a.len()),
        lpBuffers: bufs.as_mut_ptr(),
        dwBufferCount: bufs.len() as u32,
        Control: WSABUF {
            len: (CMSG_HDR + data_len.next_multiple_of(8)) as u32,
            buf: ctrl,
        },
        dwFlags: 0,
    };
    let mut sent = 0u32;
    // SAFETY: `msg` points at `bufs` (into the caller's datagrams), `to` and
    // `control`, all alive for this synchronous call.
    let rc = unsafe { WSASendMsg(raw(sock), &msg, 0, &mut sent, std::ptr::null_mut(), None) };
    if rc == SOCKET_ERROR {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Receive with WSARecvMsg into each buffer until the batch is full or nothing is
/// queued, splitting a coalesced buffer by its UDP_COALESCED_INFO segment size.
fn recv(b: &mut BatchIo, batch: &mut RecvBatch) -> io::Result<usize> {
    let Some(f) = wsa_recvmsg() else {
        return recv_single(&b.sock, batch);
    };
    for i in 0..batch.bufs.len() {
        if i > 0 && !poll_ms(&b.sock, 0)? {
            break;
        }
        let buf = &mut batch.bufs[i];
        let mut data = WSABUF {
            len: buf.len() as u32,
            buf: buf.as_mut_ptr(),
        };
        let mut control = [0u64; CMSG_BUF / 8];
        // SAFETY: SOCKADDR_STORAGE is plain data; zero is a valid value.
        let mut from: SOCKADDR_STORAGE = unsafe { std::mem::zeroed() };
        let mut msg = WSAMSG {
            name: (&mut from as *mut SOCKADDR_STORAGE).cast(),
            namelen: std::mem::size_of::<SOCKADDR_STORAGE>() as i32,
            lpBuffers: &mut data,
            dwBufferCount: 1,
            Control: WSABUF {
                len: CMSG_BUF as u32,
                buf: control.as_mut_ptr().cast(),
            },
            dwFlags: 0,
        };
        let mut got = 0u32;
        // SAFETY: `msg` points at `data` (into `buf`), `from` and `control`, all
        // alive for this synchronous call.
        let rc = unsafe { f(raw(&b.sock), &mut msg, &mut got, std::ptr::null_mut(), None) };
        if rc == SOCKET_ERROR {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(batch.metas.len()),
                _ if !batch.metas.is_empty() => Ok(batch.metas.len()),
                _ => Err(e),
            };
        }
        // SAFETY: the stack wrote a socket address of `namelen` bytes into `from`.
        let src = unsafe {
            socket2::SockAddr::try_init(|storage, len| {
                std::ptr::copy_nonoverlapping(
                    (&from as *const SOCKADDR_STORAGE).cast::<u8>(),
                    storage.cast::<u8>(),
                    std::mem::size_of::<SOCKADDR_STORAGE>(),
                );
                *len = msg.namelen;
                Ok(())
            })
        }
        .ok()
        .and_then(|(_, a)| a.as_socket());
        let Some(src) = src else { continue };
        let len = (got as usize).min(buf.len());
        let stride = coalesced_segment(&msg).filter(|s| *s > 0).unwrap_or(len);
        if stride < len {
            b.stats.gro_buffers += 1;
        }
        let mut offset = 0;
        while offset < len {
            let piece = stride.min(len - offset);
            batch.metas.push(Meta {
                buf: i,
                offset,
                len: piece,
                src,
                rx_ns: None,
                truncated: msg.dwFlags & 0x0100 != 0, // MSG_TRUNC
            });
            offset += piece;
        }
        b.stats.recv_calls += 1;
    }
    b.stats.recv_datagrams += batch.metas.len() as u64;
    Ok(batch.metas.len())
}

/// The UDP_COALESCED_INFO segment size in a received message's control data.
fn coalesced_segment(msg: &WSAMSG) -> Option<usize> {
    let base = msg.Control.buf;
    let total = msg.Control.len as usize;
    let mut off = 0;
    while off + CMSG_HDR <= total {
        // SAFETY: the header lies within the control buffer the stack filled.
        let h = unsafe { std::ptr::read_unaligned(base.add(off).cast::<CMSGHDR>()) };
        if h.cmsg_len < CMSG_HDR || off + h.cmsg_len > total {
            return None;
        }
        if h.cmsg_level == IPPROTO_UDP && h.cmsg_type == UDP_COALESCED_INFO as i32 {
            // SAFETY: the data (a u32) follows the header inside the buffer.
            let v = unsafe { std::ptr::read_unaligned(base.add(off + CMSG_HDR).cast::<u32>()) };
            return Some(v as usize);
        }
        off += h.cmsg_len.next_multiple_of(8);
    }
    None
}

pub(crate) fn recv_single(sock: &UdpSocket, batch: &mut RecvBatch) -> io::Result<usize> {
    portable::recv_each(
        sock,
        batch,
        || poll_ms(sock, 0),
        |e| e.raw_os_error() == Some(WSAEMSGSIZE),
    )
}

/// The batched path: wait as `wait` says, then take what is queued.
pub(crate) fn recv_batched(
    b: &mut BatchIo,
    batch: &mut RecvBatch,
    wait: Wait,
) -> io::Result<usize> {
    portable::when_readable(poll_readable(&b.sock, wait), || recv(b, batch))
}

/// The per-call path: wait as `wait` says, then take what is queued.
pub(crate) fn recv_per_call(
    b: &mut BatchIo,
    batch: &mut RecvBatch,
    wait: Wait,
) -> io::Result<usize> {
    portable::when_readable(poll_readable(&b.sock, wait), || recv_single(&b.sock, batch))
}

pub(crate) fn socket_drops(_sock: &UdpSocket) -> Option<u64> {
    None
}

fn poll_ms(sock: &UdpSocket, timeout_ms: i32) -> io::Result<bool> {
    let mut pfd = WSAPOLLFD {
        fd: raw(sock),
        events: POLLRDNORM,
        revents: 0,
    };
    // SAFETY: one valid WSAPOLLFD.
    let rc = unsafe { WSAPoll(&mut pfd, 1, timeout_ms) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc > 0)
}

/// recv_from blocks on these sockets: wait here first (a zero timeout polls).
fn poll_readable(sock: &UdpSocket, wait: Wait) -> io::Result<bool> {
    match wait {
        Wait::NonBlocking => poll_ms(sock, 0),
        Wait::Forever => poll_ms(sock, -1),
        Wait::Timeout(d) => poll_ms(
            sock,
            i32::try_from(d.as_millis().max(1)).unwrap_or(i32::MAX),
        ),
    }
}
