//! Batched UDP I/O with a portable fallback, in the manner of quinn-udp.
//!
//! [`UdpBatch`] owns a UDP socket and moves many datagrams per system call:
//! - [`Datapath::Batched`] (Linux): `sendmmsg`/`recvmmsg`; runs of equal-size datagrams go
//!   out as one UDP GSO send (UDP_SEGMENT) when the kernel allows; receive can ask for
//!   UDP GRO (coalesced datagrams are split again here). An offload the kernel refuses is
//!   switched off once and remembered, with a note for the report.
//! - [`Datapath::PerCall`]: one datagram per `send`/`recvfrom` (Linux; `recvmsg` when
//!   kernel timestamps or SO_RXQ_OVFL are asked for) or `send`/
//!   `recv_from` (every other OS, std only), the shape every OS offers. Chosen by
//!   `DUALPERF_NO_BATCH=1`, by [`BatchConfig::datapath`], when the batched calls fail
//!   with ENOSYS/EOPNOTSUPP, or where the OS has no batched path (macOS, FreeBSD).
//!   On Linux its receiver can wait on a timer between reads while datagrams keep
//!   arriving instead of being woken for each ([`BatchConfig::coalesce_wakeups`],
//!   `naps.rs`).
//! - On Windows, [`Datapath::Batched`] is WSASendMsg with USO where the stack offers it
//!   and WSARecvMsg with receive coalescing (URO) when GRO is asked for.
//!
//! On Linux both paths report the kernel receive time (SO_TIMESTAMPNS, CLOCK_REALTIME ns) per
//! datagram when enabled; datagrams coalesced by GRO share one timestamp (and so do the
//! segments of one GSO send, which the receiving socket splits again), so a receiver
//! that needs one arrival time per datagram turns GRO off and its sender GSO off.
//! [`UdpBatch::socket_drops`] counts the datagrams the kernel dropped on this socket
//! (full receive buffer): SO_RXQ_OVFL and SO_MEMINFO, Linux only.

mod naps;

use crate::sys;
use crate::sys::datagram::BatchIo;
pub use crate::sys::datagram::{
    BatchConfig, Datagram, Datapath, IoStats, RecvBatch, Wait, MAX_DATAGRAM_BYTES, MAX_GSO_BYTES,
    MAX_GSO_SEGMENTS, NO_BATCH_ENV,
};
use naps::Naps;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// A UDP socket that sends and receives datagrams in batches.
#[derive(Debug)]
pub struct UdpBatch {
    /// The socket and what the OS calls update.
    pub(crate) io: BatchIo,
    pub(crate) path: Datapath,
    pub(crate) max_batch: usize,
    pub(crate) max_datagram_bytes: usize,
    pub(crate) gro: bool,
    pub(crate) timestamps: bool,
    /// The socket's drop count can be read (SO_MEMINFO or SO_RXQ_OVFL).
    pub(crate) count_drops: bool,
    /// Highest SO_RXQ_OVFL count seen so far.
    pub(crate) drops_seen: Option<u64>,
    /// [`BatchConfig::coalesce_wakeups`], where the OS and the receive buffer allow it.
    naps: Option<Naps>,
    /// This thread's timer slack is 1 ns (set at the first nap).
    fine_slack: bool,
}

impl UdpBatch {
    /// Wrap `sock` (bound, and connected if [`UdpBatch::send_batch`] will be used).
    pub fn new(sock: UdpSocket, cfg: BatchConfig) -> UdpBatch {
        let mut path = cfg.datapath.unwrap_or_else(Datapath::from_env);
        let mut notes = Vec::new();
        let caps = sys::udp::setup(&sock, &cfg, path, &mut notes);
        if path == Datapath::Batched && !caps.batched {
            path = Datapath::PerCall;
        }
        let max_batch = cfg.max_batch.max(1);
        let max_datagram_bytes = cfg.max_datagram_bytes.clamp(1, MAX_DATAGRAM_BYTES);
        let naps = if caps.naps {
            let rcvbuf = socket2::SockRef::from(&sock)
                .recv_buffer_size()
                .unwrap_or(0);
            Naps::new(max_batch, max_datagram_bytes, rcvbuf)
        } else {
            None
        };
        UdpBatch {
            io: BatchIo {
                sock,
                gso_segments: caps.gso_segments,
                gso_refused_bytes: None,
                rx_control: caps.rx_control,
                recv_timeout: None,
                notes,
                stats: IoStats::default(),
            },
            path,
            max_batch,
            max_datagram_bytes,
            gro: caps.gro,
            timestamps: caps.timestamps,
            count_drops: caps.count_drops,
            drops_seen: None,
            naps,
            fine_slack: false,
        }
    }

    /// Receive buffers that fit this socket's configuration (GRO needs 64 KiB buffers).
    pub fn recv_buffers(&self) -> RecvBatch {
        let buf = if self.gro {
            MAX_DATAGRAM_BYTES
        } else {
            self.max_datagram_bytes
        };
        RecvBatch::new(self.max_batch, buf)
    }

    pub fn datapath(&self) -> Datapath {
        self.path
    }
    /// The OS calls that ran, compact (`applied.udp_datapath_calls`): `OS:calls+offloads`,
    /// e.g. `linux:sendmmsg/recvmmsg+gso`, `linux:send/recvmsg` (per call, with control
    /// messages), `linux:send/recvfrom` (per call, none), `windows:send/recvfrom`;
    /// `+naps` when the per-call receiver takes timed waits
    /// ([`BatchConfig::coalesce_wakeups`]).
    pub fn datapath_calls(&self) -> String {
        let mut s = sys::udp::describe(
            self.path,
            self.io.gso_segments > 0,
            self.gro,
            self.io.rx_control,
        );
        if self.naps_enabled() {
            s.push_str("+naps");
        }
        s
    }
    /// The per-call receiver takes timed waits ([`BatchConfig::coalesce_wakeups`]).
    pub fn naps_enabled(&self) -> bool {
        self.path == Datapath::PerCall && self.naps.is_some()
    }
    pub fn gso_enabled(&self) -> bool {
        self.io.gso_segments > 0
    }
    /// Datagrams of `bytes` each that one segmentation-offloaded send (GSO, USO) carries;
    /// 1 when the offload is off.
    pub fn offload_segments(&self, bytes: usize) -> usize {
        if self.io.gso_segments > 1 && bytes > 0 && bytes <= usize::from(u16::MAX) {
            (MAX_GSO_BYTES / bytes).clamp(1, self.io.gso_segments)
        } else {
            1
        }
    }
    pub fn gro_enabled(&self) -> bool {
        self.gro
    }
    pub fn timestamps_enabled(&self) -> bool {
        self.timestamps
    }
    /// Datagrams the kernel dropped on this socket so far (its receive buffer was full,
    /// or a checksum or filter failed): the larger of the last SO_RXQ_OVFL count seen and
    /// SO_MEMINFO's drop counter read now. `None` where the kernel cannot say (not
    /// Linux, or SO_RXQ_OVFL refused), never a guessed 0.
    pub fn socket_drops(&self) -> Option<u64> {
        if !self.count_drops {
            return None;
        }
        let now = sys::udp::socket_drops(&self.io.sock);
        match (now, self.drops_seen) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b).or(Some(0)),
        }
    }
    /// Offloads and paths that were switched off, in words, once each.
    pub fn notes(&self) -> &[String] {
        &self.io.notes
    }
    /// Calls and datagrams so far.
    pub fn stats(&self) -> IoStats {
        self.io.stats
    }
    pub fn socket(&self) -> &UdpSocket {
        &self.io.sock
    }
    pub fn into_inner(self) -> UdpSocket {
        self.io.sock
    }

    /// Send `datagrams` (`&[&[u8]]`, `&[Vec<u8>]`, ...) to the connected peer. Returns how many were sent (from the
    /// front; fewer than given when the kernel stopped early). Blocks while the socket
    /// send buffer is full.
    pub fn send_batch<B: AsRef<[u8]>>(&mut self, datagrams: &[B]) -> io::Result<usize> {
        self.send_inner(datagrams, None)
    }

    /// Send `datagrams` to `dst` (unconnected socket).
    pub fn send_batch_to<B: AsRef<[u8]>>(
        &mut self,
        datagrams: &[B],
        dst: SocketAddr,
    ) -> io::Result<usize> {
        self.send_inner(datagrams, Some(dst))
    }

    fn send_inner<B: AsRef<[u8]>>(
        &mut self,
        datagrams: &[B],
        dst: Option<SocketAddr>,
    ) -> io::Result<usize> {
        if datagrams.is_empty() {
            return Ok(0);
        }
        if self.path == Datapath::Batched {
            match sys::udp::send(&mut self.io, datagrams, dst) {
                Err(e) if sys::errors::is_unsupported(&e) => {
                    self.degrade(format!("sendmmsg unavailable ({e}); one datagram per call"))
                }
                other => return other,
            }
        }
        let sent = send_each(&self.io.sock, datagrams, dst)?;
        self.io.stats.send_calls += sent as u64;
        self.io.stats.sent_datagrams += sent as u64;
        Ok(sent)
    }

    /// Receive up to a batch of datagrams into `batch`, waiting as `wait` says for the
    /// first one. Returns the number received (0 on timeout, signal or nothing queued).
    /// On a connected socket an ICMP port-unreachable from the peer surfaces here (or on
    /// the next send) as `ConnectionRefused`.
    pub fn recv_batch(&mut self, batch: &mut RecvBatch, wait: Wait) -> io::Result<usize> {
        let r = self.recv_inner(batch, wait);
        if let Some(d) = batch.drops_seen {
            self.drops_seen = Some(self.drops_seen.map_or(0, |s| s).max(u64::from(d)));
        }
        r
    }

    fn recv_inner(&mut self, batch: &mut RecvBatch, wait: Wait) -> io::Result<usize> {
        batch.metas.clear();
        batch.drops_seen = None;
        if self.path == Datapath::Batched {
            // Each OS waits its own way (Linux: inside recvmmsg, one call per wake-up).
            match sys::udp::recv_batched(&mut self.io, batch, wait) {
                Err(e) if sys::errors::is_unsupported(&e) => {
                    self.degrade(format!("recvmmsg unavailable ({e}); one datagram per call"))
                }
                other => return other,
            }
        }
        // Linux waits inside recvmsg: one system call per datagram when the receiver
        // keeps up; with naps, a timed sleep and then what queued meanwhile.
        let wait = self.nap(wait);
        let r = sys::udp::recv_per_call(&mut self.io, batch, wait);
        if let Some(naps) = self.naps.as_mut() {
            naps.after_read(Instant::now(), *r.as_ref().unwrap_or(&0));
        }
        let n = r?;
        self.io.stats.recv_calls += n as u64;
        self.io.stats.recv_datagrams += n as u64;
        Ok(n)
    }

    /// Take the nap due before a per-call read, if any, and say how that read may wait.
    fn nap(&mut self, wait: Wait) -> Wait {
        if matches!(wait, Wait::NonBlocking) || wait == Wait::Timeout(Duration::ZERO) {
            return wait;
        }
        let Some(nap) = self
            .naps
            .as_ref()
            .and_then(|n| n.before_read(Instant::now()))
        else {
            return wait;
        };
        if !nap.is_zero() {
            if !self.fine_slack {
                crate::fine_timer_slack();
                self.fine_slack = true;
            }
            std::thread::sleep(nap);
        }
        self.io.stats.naps += 1;
        Wait::NonBlocking
    }

    fn degrade(&mut self, note: String) {
        self.path = Datapath::PerCall;
        self.io.gso_segments = 0;
        self.io.notes.push(note);
    }
}

/// Send each datagram with its own call (`send` on a connected socket, else
/// `send_to`); returns how many went out. Portable: std's calls on every OS.
fn send_each<B: AsRef<[u8]>>(
    sock: &UdpSocket,
    datagrams: &[B],
    dst: Option<SocketAddr>,
) -> io::Result<usize> {
    for (i, d) in datagrams.iter().enumerate() {
        let r = match dst {
            Some(addr) => sock.send_to(d.as_ref(), addr),
            None => sock.send(d.as_ref()),
        };
        if let Err(e) = r {
            return if i == 0 { Err(e) } else { Ok(i) };
        }
    }
    Ok(datagrams.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{udp_bind, udp_connect};
    use wire::spec::SocketOpts;

    /// On every OS and both paths: a burst of equal-size datagrams sent in batches on
    /// loopback arrives complete, in order, byte for byte (a receive buffer large enough
    /// for the burst, so nothing may be dropped), and the datapath names its OS.
    #[test]
    fn a_batched_burst_arrives_exactly_on_both_paths_and_families() {
        const N: usize = 200;
        for host in ["127.0.0.1", "[::1]"] {
            if host.starts_with('[') && UdpSocket::bind("[::1]:0").is_err() {
                continue; // no IPv6 on this host
            }
            for path in [Datapath::Batched, Datapath::PerCall] {
                let opts = SocketOpts {
                    rcvbuf_bytes: Some(4 << 20),
                    ..SocketOpts::default()
                };
                let any = format!("{host}:0").parse().unwrap();
                let (rx, _) = udp_bind(any, &opts).unwrap();
                let (tx, _) = udp_bind(any, &SocketOpts::default()).unwrap();
                udp_connect(&tx, rx.local_addr().unwrap(), &SocketOpts::default()).unwrap();
                let cfg = BatchConfig {
                    datapath: Some(path),
                    ..BatchConfig::default()
                };
                let mut tx = UdpBatch::new(tx, cfg.clone());
                let mut rx = UdpBatch::new(rx, cfg);
                assert!(
                    tx.datapath_calls().starts_with(std::env::consts::OS),
                    "{}",
                    tx.datapath_calls()
                );
                let payloads: Vec<Vec<u8>> =
                    (0..N as u32).map(|i| i.to_be_bytes().repeat(128)).collect();
                let mut sent = 0;
                while sent < N {
                    sent += tx.send_batch(&payloads[sent..(sent + 64).min(N)]).unwrap();
                }
                let mut got: Vec<Vec<u8>> = Vec::new();
                let mut batch = rx.recv_buffers();
                while got.len() < N {
                    let n = rx
                        .recv_batch(&mut batch, Wait::Timeout(Duration::from_secs(2)))
                        .unwrap();
                    assert!(n > 0, "{host} {path:?}: only {} of {N} arrived", got.len());
                    got.extend(batch.iter().map(|d| {
                        assert!(!d.truncated);
                        d.payload.to_vec()
                    }));
                }
                assert_eq!(got, payloads, "{host} {path:?}");
                let st = tx.stats();
                assert_eq!(st.sent_datagrams, N as u64);
                assert!(st.send_calls >= 1 && st.send_calls <= N as u64);
            }
        }
    }
}
