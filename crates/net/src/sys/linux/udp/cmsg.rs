//! Control messages and socket addresses in raw `msghdr`s: reading the kernel receive
//! timestamp (SCM_TIMESTAMPNS), the GRO segment size (UDP_GRO) and the socket's drop
//! count (SO_RXQ_OVFL), writing UDP_SEGMENT
//! for GSO, and converting `sockaddr_storage` back to `SocketAddr`.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Control buffer of one message, aligned for `cmsghdr`. 128 bytes hold a timestamp
/// (32), a GRO or GSO size (24) and a drop count (20) with room to spare.
pub(crate) type CmsgBuf = [u64; 16];
pub(crate) const CMSG_BUF_BYTES: usize = std::mem::size_of::<CmsgBuf>();

/// What the control messages of one received message said.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct RecvInfo {
    pub rx_ns: Option<u64>,
    pub gro_segment_bytes: Option<usize>,
    /// SO_RXQ_OVFL: the socket's cumulative drop count when this datagram was queued.
    pub drops: Option<u32>,
}

/// Parse the control messages the kernel wrote into `hdr`.
pub(crate) fn parse(hdr: &libc::msghdr) -> RecvInfo {
    let mut info = RecvInfo::default();
    // SAFETY: `hdr.msg_control`/`msg_controllen` describe a buffer the kernel filled
    // (or null/0); CMSG_FIRSTHDR/NXTHDR stay inside it and return null at its end.
    let mut c = unsafe { libc::CMSG_FIRSTHDR(hdr) };
    while !c.is_null() {
        // SAFETY: `c` is non-null and points to a complete cmsghdr inside the buffer.
        let (level, ty) = unsafe { ((*c).cmsg_level, (*c).cmsg_type) };
        if level == libc::SOL_SOCKET && ty == libc::SCM_TIMESTAMPNS {
            // SAFETY: an SCM_TIMESTAMPNS payload is one timespec; it may be unaligned.
            let ts: libc::timespec =
                unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::timespec>()) };
            info.rx_ns = Some(
                (ts.tv_sec.max(0) as u64)
                    .saturating_mul(1_000_000_000)
                    .saturating_add(ts.tv_nsec.max(0) as u64),
            );
        } else if level == libc::SOL_SOCKET && ty == super::drops::SO_RXQ_OVFL {
            // SAFETY: an SO_RXQ_OVFL payload is one u32 (the drop count).
            let n: u32 = unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<u32>()) };
            info.drops = Some(n);
        } else if level == libc::SOL_UDP && ty == libc::UDP_GRO {
            // SAFETY: a UDP_GRO payload is one int (the segment size).
            let size: libc::c_int =
                unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>()) };
            if size > 0 {
                info.gro_segment_bytes = Some(size as usize);
            }
        }
        // SAFETY: `c` came from this header's buffer.
        c = unsafe { libc::CMSG_NXTHDR(hdr, c) };
    }
    info
}

/// Write one UDP_SEGMENT control message (GSO segment size) into `buf` and point `hdr`
/// at it.
pub(crate) fn set_gso_segment(hdr: &mut libc::msghdr, buf: &mut CmsgBuf, segment_bytes: u16) {
    // SAFETY: CMSG_SPACE is a pure size computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<u16>() as u32) } as usize;
    debug_assert!(space <= CMSG_BUF_BYTES);
    hdr.msg_control = buf.as_mut_ptr().cast();
    hdr.msg_controllen = space as _;
    // SAFETY: the control buffer is `space` bytes long, aligned for cmsghdr, so the first
    // header fits and its data (a u16) fits after it.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(hdr);
        (*c).cmsg_level = libc::SOL_UDP;
        (*c).cmsg_type = libc::UDP_SEGMENT;
        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<u16>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), segment_bytes);
    }
}

/// The address the kernel wrote into a `sockaddr_storage`; `None` for other families.
pub(crate) fn to_socket_addr(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(ss.ss_family) {
        libc::AF_INET => {
            // SAFETY: family AF_INET means the storage holds a sockaddr_in; storage is
            // larger and suitably aligned for it.
            let sin =
                unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: family AF_INET6 means the storage holds a sockaddr_in6.
            let sin6 =
                unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(sin6.sin6_addr.s6_addr),
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// An all-zero `sockaddr_storage` for the kernel to fill.
pub(crate) fn empty_storage() -> libc::sockaddr_storage {
    // SAFETY: sockaddr_storage is plain data; all-zero bytes are a valid (AF_UNSPEC) value.
    unsafe { std::mem::zeroed() }
}
