//! The engine's view of batched datagram I/O: send several datagrams, receive several,
//! one call each where the OS allows (sendmmsg / recvmmsg in the `net` crate), one
//! datagram per call otherwise. `DUALPERF_NO_BATCH=1` forces the portable path.

use std::io;
use std::net::UdpSocket;

/// Sends datagrams on a connected socket.
pub(crate) struct Sender<'s> {
    sock: &'s UdpSocket,
}

impl<'s> Sender<'s> {
    pub(crate) fn new(sock: &'s UdpSocket) -> Sender<'s> {
        Sender { sock }
    }

    /// Send some prefix of `bufs`; returns how many went out (≥ 1 on success).
    pub(crate) fn send(&mut self, bufs: &[Vec<u8>]) -> io::Result<usize> {
        let mut sent = 0;
        for b in bufs {
            match self.sock.send(b) {
                Ok(_) => sent += 1,
                Err(e) if sent == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(sent)
    }
}

/// Receive buffers for up to `n` datagrams per call.
pub(crate) struct RecvBatch {
    bufs: Vec<Vec<u8>>,
    lens: Vec<usize>,
}

impl RecvBatch {
    pub(crate) fn new(n: usize, size: usize) -> RecvBatch {
        RecvBatch {
            bufs: vec![vec![0u8; size]; n.max(1)],
            lens: vec![0; n.max(1)],
        }
    }

    /// Wait (up to the socket's read timeout) for at least one datagram; returns how
    /// many were received.
    pub(crate) fn recv(&mut self, sock: &UdpSocket) -> io::Result<usize> {
        let n = sock.recv(&mut self.bufs[0])?;
        self.lens[0] = n;
        Ok(1)
    }

    pub(crate) fn datagram(&self, i: usize) -> &[u8] {
        let len = self.lens.get(i).copied().unwrap_or(0);
        self.bufs.get(i).map_or(&[][..], |b| &b[..len.min(b.len())])
    }
}
