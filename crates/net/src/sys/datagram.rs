//! What the UDP datapath ([`crate::udp`]) and each OS's backend (`sys::udp`) share: the
//! batch configuration, the receive buffers and their datagrams, the limits, and the
//! part of a socket the OS calls work on ([`BatchIo`]). Plain data, no system calls;
//! `udp` re-exports the public items.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

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

/// How a [`UdpBatch`](crate::UdpBatch) is set up.
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

/// How long [`UdpBatch::recv_batch`](crate::UdpBatch::recv_batch) may wait for the first
/// datagram.
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

/// System calls and datagrams a [`UdpBatch`](crate::UdpBatch) has moved: shows which path
/// did the work and how much each call carried.
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

/// Receive buffers and the datagrams of the last
/// [`UdpBatch::recv_batch`](crate::UdpBatch::recv_batch) call.
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

/// What the OS layer switched on for a socket (each backend's `udp::setup`).
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

/// The socket of a [`UdpBatch`](crate::UdpBatch) and the state the OS layer's send and
/// receive calls read and update.
#[derive(Debug)]
pub(crate) struct BatchIo {
    pub(crate) sock: UdpSocket,
    /// 0 = GSO off.
    pub(crate) gso_segments: usize,
    /// Smallest segment size the kernel refused with EINVAL (e.g. above the path MTU).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) gso_refused_bytes: Option<usize>,
    /// See [`Caps::rx_control`].
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) rx_control: bool,
    /// The receive timeout (SO_RCVTIMEO) this wrapper last set on the socket, so a
    /// receive that waits in its own call sets it only when the wait changes; `None`
    /// until first set.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) recv_timeout: Option<Option<Duration>>,
    /// Offloads and paths switched off, in words, once each.
    pub(crate) notes: Vec<String>,
    pub(crate) stats: IoStats,
}
