//! Datagrams the receiving host dropped itself, per socket: SO_RXQ_OVFL (a control
//! message on every received datagram carrying the socket's cumulative drop count when
//! it was queued) and SO_MEMINFO's SK_MEMINFO_DROPS (the same counter, `sk_drops`, read at
//! any time, so drops after the last received datagram count too). SO_MEMINFO is used
//! where the kernel has it (4.7 and later); SO_RXQ_OVFL only where it does not. Linux
//! only; elsewhere the count is unavailable (`None`), never 0.

/// SO_RXQ_OVFL and SO_MEMINFO in asm-generic/socket.h (x86, arm, riscv, mips; not in
/// every libc release for glibc targets).
pub(crate) const SO_RXQ_OVFL: libc::c_int = 40;
const SO_MEMINFO: libc::c_int = 55;
/// Entries of the SO_MEMINFO array (SK_MEMINFO_VARS in linux/sock_diag.h).
const SK_MEMINFO_VARS: usize = 9;

/// Ask for SO_RXQ_OVFL control messages; `Err` says why the kernel refused.
pub(crate) fn enable(fd: i32) -> std::io::Result<()> {
    crate::sys::linux::sockopt::set_int(fd, libc::SOL_SOCKET, SO_RXQ_OVFL, 1)
}

/// The socket's cumulative count of datagrams the kernel dropped on receive (full
/// receive buffer, bad checksum, filter), from SO_MEMINFO; `None` if unreadable.
pub(crate) fn socket_drops(fd: i32) -> Option<u64> {
    let mut info = [0u32; SK_MEMINFO_VARS];
    let mut len = std::mem::size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` and `len` are valid for writes and `len` holds the buffer's size;
    // the kernel writes at most `len` bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    let drops_index = libc::SK_MEMINFO_DROPS as usize;
    let filled = len as usize / std::mem::size_of::<u32>();
    (rc == 0 && filled > drops_index).then(|| u64::from(info[drops_index]))
}

#[cfg(test)]
mod tests {
    use crate::{udp_bind, udp_connect, BatchConfig, UdpBatch, Wait};
    use std::time::Duration;
    use wire::spec::SocketOpts;

    /// A burst into a tiny receive buffer that nobody reads: every datagram either waits
    /// in the queue or was dropped by the kernel, and the socket's counter says how many.
    #[test]
    fn socket_drops_plus_received_equals_sent_on_loopback() {
        let opts = SocketOpts {
            rcvbuf_bytes: Some(4096),
            ..SocketOpts::default()
        };
        let (rx, _) = udp_bind("127.0.0.1:0".parse().unwrap(), &opts).unwrap();
        let (tx, _) = udp_bind("127.0.0.1:0".parse().unwrap(), &SocketOpts::default()).unwrap();
        udp_connect(&tx, rx.local_addr().unwrap(), &SocketOpts::default()).unwrap();
        let mut rx = UdpBatch::new(rx, BatchConfig::default());
        assert_eq!(rx.socket_drops(), Some(0));
        let sent = 500usize;
        for i in 0..sent {
            tx.send(&(i as u32).to_be_bytes().repeat(64)).unwrap();
        }
        let mut batch = rx.recv_buffers();
        let mut received = 0usize;
        loop {
            let n = rx
                .recv_batch(&mut batch, Wait::Timeout(Duration::from_millis(50)))
                .unwrap();
            if n == 0 {
                break;
            }
            received += n;
        }
        let drops = rx.socket_drops().expect("SO_MEMINFO on Linux");
        assert!(drops > 0, "a 4 KiB buffer cannot hold 500 datagrams");
        assert_eq!(received as u64 + drops, sent as u64);
    }
}
