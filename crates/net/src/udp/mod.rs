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
use naps::Naps;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// Env variable that forces [`Datapath::PerCall`] when set to `1`.
pub const NO_BATCH_ENV: &str = "DUALPERF_NO_BATCH";
/// Most datagrams one GSO send carries (the kernel's UDP_MAX_SEGMENTS on older kernels).
pub const MAX_GSO_SEGMENTS: usize = 64;
/// Most payload bytes one GSO send carries (below 65507, the IPv4 UDP limit).
pub const MAX_GSO_BYTES: usize = 65_000;
/// Largest UDP payload (IPv6 jumbograms aside); also the GRO receive buffer size.
pub const MAX_DATAGRAM_BYTES: usize = 65_535;

/// How datagrams cross the system-call boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Datapath {
    /// sendmmsg / recvmmsg, with GSO / GRO where enabled.
    Batched,
    /// One datagram per system call.
    PerCall,
}

impl Datapath {
    /// `PerCall` when `DUALPERF_NO_BATCH=1`, else `Batched`.
    pub fn from_env() -> Datapath {
        match std::env::var(NO_BATCH_ENV) {
            Ok(v) if v.trim() == "1" => Datapath::PerCall,
            _ => Datapath::Batched,
        }
    }
}

/// How a [`UdpBatch`] is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchConfig {
    /// `None`: [`Datapath::from_env`].
    pub datapath: Option<Datapath>,
    /// Datagrams (or GRO buffers) per receive call, and the size of a [`RecvBatch`].
    pub max_batch: usize,
    /// Receive buffer per datagram; longer datagrams are truncated (and flagged).
    pub max_datagram_bytes: usize,
    /// Try UDP GSO on send.
    pub gso: bool,
    /// Try UDP GRO on receive (off by default: coalesced datagrams share a timestamp).
    pub gro: bool,
    /// Ask for SO_TIMESTAMPNS kernel receive times.
    pub kernel_timestamps: bool,
    /// Count the datagrams the kernel drops on this socket (Linux: SO_MEMINFO, or
    /// SO_RXQ_OVFL where the kernel has no SO_MEMINFO drop count).
    pub count_drops: bool,
    /// On the per-call path, once datagrams are arriving, sleep on a timer for about the
    /// time half a batch takes to queue and then read what queued (one datagram per
    /// call) instead of sleeping on the socket for each datagram, whose wake-ups a
    /// loopback sender pays for (see `naps.rs`). For receivers that need no arrival time
    /// of their own per datagram. Linux only; the receiving thread gets 1 ns timer slack.
    pub coalesce_wakeups: bool,
}

impl Default for BatchConfig {
    fn default() -> Self {
        BatchConfig {
            datapath: None,
            max_batch: 32,
            max_datagram_bytes: MAX_DATAGRAM_BYTES,
            gso: true,
            gro: false,
            kernel_timestamps: true,
            count_drops: true,
            coalesce_wakeups: false,
        }
    }
}

/// How long [`UdpBatch::recv_batch`] may wait for the first datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Return at once, with 0 datagrams if none are queued.
    NonBlocking,
    /// Wait up to this long (callers poll a stop flag between calls).
    Timeout(Duration),
    /// Wait until a datagram arrives.
    Forever,
}

/// Where one received datagram lies in a [`RecvBatch`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meta {
    pub(crate) buf: usize,
    pub(crate) offset: usize,
    pub(crate) len: usize,
    pub(crate) src: SocketAddr,
    pub(crate) rx_ns: Option<u64>,
    pub(crate) truncated: bool,
}

/// System calls and datagrams a [`UdpBatch`] has moved: shows which path did the work
/// and how much each call carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IoStats {
    /// sendmmsg / send / send_to calls that sent something.
    pub send_calls: u64,
    pub sent_datagrams: u64,
    /// Messages sent as one UDP GSO super-datagram.
    pub gso_sends: u64,
    /// recvmmsg / recvmsg calls that returned something.
    pub recv_calls: u64,
    pub recv_datagrams: u64,
    /// Received buffers that GRO had coalesced from several datagrams.
    pub gro_buffers: u64,
    /// Reads the per-call receiver made after a timed wait instead of waiting on the
    /// socket ([`BatchConfig::coalesce_wakeups`]; the wait is 0 when its time had
    /// already passed).
    #[serde(default)]
    pub naps: u64,
}

/// One received datagram.
#[derive(Debug, Clone, Copy)]
pub struct Datagram<'a> {
    pub payload: &'a [u8],
    pub src: SocketAddr,
    /// Kernel receive time, CLOCK_REALTIME ns (SO_TIMESTAMPNS), when enabled.
    pub kernel_rx_ns: Option<u64>,
    /// The datagram was longer than the buffer and was cut.
    pub truncated: bool,
}

/// Receive buffers and the datagrams of the last [`UdpBatch::recv_batch`] call.
#[derive(Debug)]
pub struct RecvBatch {
    pub(crate) bufs: Vec<Vec<u8>>,
    pub(crate) metas: Vec<Meta>,
    /// Highest SO_RXQ_OVFL count in the last call's control messages.
    pub(crate) drops_seen: Option<u32>,
}

impl RecvBatch {
    /// `slots` buffers of `buf_bytes` each.
    pub fn new(slots: usize, buf_bytes: usize) -> RecvBatch {
        RecvBatch {
            bufs: vec![vec![0u8; buf_bytes.max(1)]; slots.max(1)],
            metas: Vec::with_capacity(slots.max(1)),
            drops_seen: None,
        }
    }
    /// Datagrams received by the last call.
    pub fn len(&self) -> usize {
        self.metas.len()
    }
    pub fn is_empty(&self) -> bool {
        self.metas.is_empty()
    }
    pub fn get(&self, i: usize) -> Option<Datagram<'_>> {
        let m = self.metas.get(i)?;
        let payload = self.bufs.get(m.buf)?.get(m.offset..m.offset + m.len)?;
        Some(Datagram {
            payload,
            src: m.src,
            kernel_rx_ns: m.rx_ns,
            truncated: m.truncated,
        })
    }
    pub fn iter(&self) -> impl Iterator<Item = Datagram<'_>> + '_ {
        (0..self.metas.len()).filter_map(move |i| self.get(i))
    }
}

/// A UDP socket that sends and receives datagrams in batches.
#[derive(Debug)]
pub struct UdpBatch {
    pub(crate) sock: UdpSocket,
    pub(crate) path: Datapath,
    pub(crate) max_batch: usize,
    pub(crate) max_datagram_bytes: usize,
    /// 0 = GSO off.
    pub(crate) gso_segments: usize,
    /// Smallest segment size the kernel refused with EINVAL (e.g. above the path MTU).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) gso_refused_bytes: Option<usize>,
    pub(crate) gro: bool,
    pub(crate) timestamps: bool,
    /// See [`Caps::rx_control`].
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) rx_control: bool,
    /// The socket's drop count can be read (SO_MEMINFO or SO_RXQ_OVFL).
    pub(crate) count_drops: bool,
    /// Highest SO_RXQ_OVFL count seen so far.
    pub(crate) drops_seen: Option<u64>,
    /// The receive timeout (SO_RCVTIMEO) this wrapper last set on the socket, so a
    /// receive that waits in its own call sets it only when the wait changes; `None`
    /// until first set.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) recv_timeout: Option<Option<Duration>>,
    pub(crate) notes: Vec<String>,
    pub(crate) stats: IoStats,
    /// [`BatchConfig::coalesce_wakeups`], where the OS and the receive buffer allow it.
    naps: Option<Naps>,
    /// This thread's timer slack is 1 ns (set at the first nap).
    fine_slack: bool,
}

/// What the OS layer switched on for a socket ([`sys`]'s `udp::setup`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Caps {
    /// The batched path exists on this OS (else [`Datapath::PerCall`] is used).
    pub batched: bool,
    pub gso_segments: usize,
    pub gro: bool,
    pub timestamps: bool,
    pub count_drops: bool,
    /// Received datagrams carry control messages (kernel timestamps, SO_RXQ_OVFL), so a
    /// one-datagram receive needs `recvmsg`; without them `recvfrom` does, for less.
    pub rx_control: bool,
    /// Timed waits ([`BatchConfig::coalesce_wakeups`]) are precise enough here.
    pub naps: bool,
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
            sock,
            path,
            max_batch,
            max_datagram_bytes,
            gso_segments: caps.gso_segments,
            gso_refused_bytes: None,
            gro: caps.gro,
            timestamps: caps.timestamps,
            rx_control: caps.rx_control,
            count_drops: caps.count_drops,
            drops_seen: None,
            recv_timeout: None,
            notes,
            stats: IoStats::default(),
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
        let mut s = sys::udp::describe(self.path, self.gso_segments > 0, self.gro, self.rx_control);
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
        self.gso_segments > 0
    }
    /// Datagrams of `bytes` each that one segmentation-offloaded send (GSO, USO) carries;
    /// 1 when the offload is off.
    pub fn offload_segments(&self, bytes: usize) -> usize {
        if self.gso_segments > 1 && bytes > 0 && bytes <= usize::from(u16::MAX) {
            (MAX_GSO_BYTES / bytes).clamp(1, self.gso_segments)
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
        let now = sys::udp::socket_drops(&self.sock);
        match (now, self.drops_seen) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b).or(Some(0)),
        }
    }
    /// Offloads and paths that were switched off, in words, once each.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
    /// Calls and datagrams so far.
    pub fn stats(&self) -> IoStats {
        self.stats
    }
    pub fn socket(&self) -> &UdpSocket {
        &self.sock
    }
    pub fn into_inner(self) -> UdpSocket {
        self.sock
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
            match sys::udp::send(self, datagrams, dst) {
                Err(e) if sys::errors::is_unsupported(&e) => {
                    self.degrade(format!("sendmmsg unavailable ({e}); one datagram per call"))
                }
                other => return other,
            }
        }
        let sent = send_each(&self.sock, datagrams, dst)?;
        self.stats.send_calls += sent as u64;
        self.stats.sent_datagrams += sent as u64;
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
            match sys::udp::recv_batched(self, batch, wait) {
                Err(e) if sys::errors::is_unsupported(&e) => {
                    self.degrade(format!("recvmmsg unavailable ({e}); one datagram per call"))
                }
                other => return other,
            }
        }
        // Linux waits inside recvmsg: one system call per datagram when the receiver
        // keeps up; with naps, a timed sleep and then what queued meanwhile.
        let wait = self.nap(wait);
        let r = sys::udp::recv_per_call(self, batch, wait);
        if let Some(naps) = self.naps.as_mut() {
            naps.after_read(Instant::now(), *r.as_ref().unwrap_or(&0));
        }
        let n = r?;
        self.stats.recv_calls += n as u64;
        self.stats.recv_datagrams += n as u64;
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
        self.stats.naps += 1;
        Wait::NonBlocking
    }

    fn degrade(&mut self, note: String) {
        self.path = Datapath::PerCall;
        self.gso_segments = 0;
        self.notes.push(note);
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
