//! The control protocol: versioned, length-prefixed frames carrying serde_json bodies,
//! exchanged over one TCP connection separate from the data streams.
//!
//! Frame layout (network byte order), fixed for every protocol version so that a peer
//! of another version can still read our error reply:
//!
//! ```text
//!  0      2         4                 8
//!  +------+---------+-----------------+----------------------+
//!  | "dP" | version | body length u32 | JSON body (≤ 4 MiB)   |
//!  +------+---------+-----------------+----------------------+
//! ```
//!
//! Every decoder checks lengths before reading; nothing here panics on any input.

use crate::auth::{Nonce, Proof};
use crate::spec::{Bound, Direction, Family, TestKind, TestSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of the control protocol this build speaks.
pub const PROTOCOL_VERSION: u16 = 1;
/// Frame magic: "dP".
pub const FRAME_MAGIC: [u8; 2] = *b"dP";
/// Bytes of the frame header.
pub const FRAME_HEADER_BYTES: usize = 8;
/// Largest body accepted (a result with an hour of 1 s intervals fits easily).
pub const MAX_BODY_BYTES: usize = 4 << 20;
/// Most parallel streams one test may ask for.
pub const MAX_STREAMS: u16 = 128;
/// Largest TCP write / RR message one test may ask for (iperf3's limit too); with
/// [`MAX_STREAMS`] it bounds the buffers a peer can make the server allocate.
pub const MAX_TCP_PAYLOAD_BYTES: u32 = 1 << 20;
/// Shortest interval between interval samples.
pub const MIN_INTERVAL_NS: u64 = 10_000_000;
/// Longest test any server accepts (24 h); servers usually allow far less.
pub const MAX_DURATION_NS: u64 = 24 * 3600 * 1_000_000_000;
/// Most interval samples one side may report: about 130 bytes of JSON each, so a result
/// stays well inside [`MAX_BODY_BYTES`].
pub const MAX_INTERVAL_SAMPLES: u64 = 20_000;

/// Why bytes from a peer could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("not a dualperf control frame (bad magic {0:02x?})")]
    BadMagic([u8; 2]),
    #[error(
        "protocol version mismatch: peer speaks version {peer}, this build speaks version {ours}"
    )]
    VersionMismatch { peer: u16, ours: u16 },
    #[error("control message of {0} bytes is larger than the {MAX_BODY_BYTES}-byte limit")]
    Oversized(usize),
    /// Over the lower limit the reader set for this point of the session.
    #[error("control message of {body_bytes} bytes is larger than the {limit_bytes}-byte limit at this point of the session")]
    OverLimit {
        body_bytes: usize,
        limit_bytes: usize,
    },
    #[error("truncated: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    #[error("malformed control message: {0}")]
    Malformed(String),
}

/// Machine-readable reason carried in an [`Msg::Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    VersionMismatch,
    /// Another test is running (the server's `--max-tests`).
    Busy,
    /// Too many control connections are open (the server's `--max-connections`): a
    /// different reason from a running test, so the client says which.
    ConnectionLimit,
    BadRequest,
    Malformed,
    UnexpectedMessage,
    Timeout,
    Internal,
    /// The request is valid but over one of the server's `--max-*` limits.
    LimitExceeded,
    /// The server requires a pre-shared key and the client sent none.
    AuthRequired,
    /// The client's proof of the pre-shared key is wrong.
    AuthFailed,
}

/// Socket options the kernel actually applied, as `name → value` (e.g. `sndbuf_bytes`).
pub type AppliedOpts = BTreeMap<String, String>;

/// CPU use over one side's data phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuStats {
    /// System-wide busy % of all cores (/proc/stat; iowait, irq, softirq, steal count as busy).
    pub system_busy_pct: f64,
    /// Busy % of the busiest single core.
    pub busiest_core_pct: f64,
    /// This process's user + system time as % of one core.
    pub proc_pct: f64,
    /// This process's user + system time, ns.
    pub proc_cpu_ns: u64,
    /// System-wide busy CPU time, ns (summed over cores), for service demand.
    pub system_busy_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// One interval sample seen at one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalSample {
    /// Interval start and end, ns since the data phase began.
    pub start_ns: u64,
    pub end_ns: u64,
    pub sent_bytes: u64,
    pub sent_packets: u64,
    pub recv_bytes: u64,
    pub recv_packets: u64,
    /// Request/response clients: Σ of the RTTs of the transactions that completed in
    /// the interval, and how many (0 for every other side and test).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rtt_sum_ns: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rtt_count: u64,
}

/// One window, from either side: the sender fills `sent_*`, the receiver the rest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WindowStats {
    /// Window number: send time (ns since the sender's start) / width.
    pub index: u32,
    pub sent_packets: u64,
    pub recv_packets: u64,
    pub recv_bytes: u64,
    /// Σ and max of the transit times (receiver arrival − send stamp, each on its own
    /// side's clock origin) of the datagrams received: a one-way delay once the
    /// origins are on one clock.
    pub transit_sum_ns: i64,
    pub transit_max_ns: i64,
    /// RFC 3550 interarrival jitter as it stood after the window's last arrival.
    pub jitter_ns: f64,
}

/// Per-stream counts (one TCP connection or one UDP flow).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamStats {
    pub stream_id: u16,
    pub sent_bytes: u64,
    pub sent_packets: u64,
    pub recv_bytes: u64,
    pub recv_packets: u64,
}

/// What one side measured; the client merges its own and the server's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SideStats {
    /// QUIC tests: this end's view of its connection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<QuicSide>,
    pub sent_bytes: u64,
    /// Datagrams (UDP), writes (TCP stream) or requests/responses (RR).
    pub sent_packets: u64,
    pub recv_bytes: u64,
    /// Distinct datagrams received (duplicates excluded) / reads / messages.
    pub recv_packets: u64,
    /// From the start of the data phase to the last send, ns.
    pub send_elapsed_ns: u64,
    /// From the start of the data phase to the last byte received, ns.
    pub recv_elapsed_ns: u64,
    /// UDP receiver: RFC 4737 duplicate and reordered counts.
    pub dup_packets: u64,
    pub reordered_packets: u64,
    /// UDP receiver: RFC 3550 interarrival jitter (final value) and RFC 5481 IPDV.
    pub jitter_rfc3550_ns: Option<f64>,
    pub ipdv_p50_ns: Option<f64>,
    pub ipdv_p99_ns: Option<f64>,
    /// UDP receiver: why jitter and IPDV are absent although datagrams arrived (the
    /// datapath could not give one send stamp and one arrival time per datagram).
    pub jitter_unavailable: Option<String>,
    /// UDP receiver: datagrams the receiving socket itself dropped (full receive
    /// buffer; SO_RXQ_OVFL / SO_MEMINFO). `None` where the OS cannot say.
    pub rx_socket_drops: Option<u64>,
    /// UDP receiver: the socket took datagrams coalesced by GRO (URO on Windows) into
    /// buffers of up to 64, so `rx_socket_drops` and the host's counters below count
    /// buffers, not datagrams (the RFC 4737 loss still counts datagrams exactly).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rx_coalesced: bool,
    /// UDP receiver: growth of the host's UDP `RcvbufErrors` and `InErrors` counters
    /// (/proc/net/snmp + snmp6, both families) over the receive: system-wide, so other
    /// programs' datagrams count too. `None` where unreadable.
    pub rx_host_udp_rcvbuf_errors: Option<u64>,
    pub rx_host_udp_in_errors: Option<u64>,
    /// This side's wall clock (ns since the Unix epoch) at the origin of its datagram
    /// stamps and arrival times, so the other side's times can be put on one clock.
    pub realtime_at_go_ns: Option<u64>,
    /// UDP receiver with per-datagram timing: arrival (this side's origin) minus send
    /// stamp (the sender's origin) over the datagrams taken: min, mean, max, ns. A
    /// one-way delay once both origins are on one clock.
    pub transit_min_ns: Option<i64>,
    pub transit_mean_ns: Option<f64>,
    pub transit_max_ns: Option<i64>,
    pub cpu: Option<CpuStats>,
    pub applied: AppliedOpts,
    pub streams: Vec<StreamStats>,
    pub intervals: Vec<IntervalSample>,
    /// UDP stream with a window width (`TestSpec::window_ns`): per send-time window,
    /// what this side sent or received (see `measure::window`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<WindowStats>,
}

/// One end's view of a QUIC test's connection at its end (quinn's path statistics).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QuicSide {
    /// Client only: first Initial packet to handshake complete.
    pub handshake_ns: u64,
    pub smoothed_rtt_ns: u64,
    /// Congestion window of this end's sending.
    pub cwnd_bytes: u64,
    /// Packets this end declared lost.
    pub lost_packets: u64,
    /// The UDP payload size the connection settled on (DPLPMTUD).
    pub path_mtu_bytes: u16,
    /// UDP datagrams this end sent and the send calls that carried them.
    pub udp_tx_datagrams: u64,
    pub udp_tx_calls: u64,
    /// The congestion controller (`cubic`, `new-reno`, `bbr`).
    pub congestion: String,
}

/// Largest certificate (hex digits) a QUIC `accept` may carry: a self-signed
/// certificate is well under 1 KiB of DER.
pub const MAX_QUIC_CERT_HEX: usize = 16 << 10;

/// The certificate DER of an `accept`'s `quic_cert`, or why it is not one.
pub fn quic_cert_der(hex: &str) -> Result<Vec<u8>, String> {
    if hex.len() > MAX_QUIC_CERT_HEX || hex.is_empty() || !hex.len().is_multiple_of(2) {
        return Err(format!(
            "the server's QUIC certificate is {} hex digits; expected an even number from 2 to {MAX_QUIC_CERT_HEX}",
            hex.len()
        ));
    }
    let mut der = vec![0u8; hex.len() / 2];
    if !crate::auth::from_hex(hex, &mut der) {
        return Err("the server's QUIC certificate is not hex".into());
    }
    Ok(der)
}

/// A control message. Bodies are JSON objects tagged by `"type"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Msg {
    /// client → server, first message.
    Hello {
        #[serde(default)]
        client_info: BTreeMap<String, String>,
        /// The client's fresh nonce; present when the client has a pre-shared key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_nonce: Option<Nonce>,
    },
    /// server → client: hello accepted.
    Welcome {
        #[serde(default)]
        server_info: BTreeMap<String, String>,
        /// A keyed server's fresh nonce and its proof of the key (see [`crate::auth`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_nonce: Option<Nonce>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_proof: Option<Proof>,
    },
    /// client → server: the test to run, with a keyed client's proof of the key.
    Request {
        spec: TestSpec,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client_proof: Option<Proof>,
    },
    /// server → client: data sockets are open on `data_port`; data connections start
    /// with `token` (8 bytes, big-endian). A keyed server sends its host metadata here,
    /// after the client proved the key, and none in its `welcome`.
    Accept {
        data_port: u16,
        token: u64,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        server_info: BTreeMap<String, String>,
        /// QUIC tests: the DER of the certificate the server's QUIC endpoint on
        /// `data_port` presents, hex; the client trusts that certificate and no other.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        quic_cert: Option<String>,
    },
    /// client → server: data connections are made; `udp_port` is where the client
    /// receives datagrams (reverse / bidir UDP).
    Start {
        #[serde(default)]
        udp_port: Option<u16>,
    },
    /// client → server while it opens the data connections (after `accept`, before
    /// `start`), only to a server whose metadata has `dualperf.clock_query`: what time
    /// is it? `t1_ns` is the client's wall clock as the query left.
    ClockQuery { t1_ns: u64 },
    /// server → client: `t1_ns` echoed, the server's wall clock when the query arrived
    /// (`t2_ns`) and as this reply left (`t3_ns`), ns since the Unix epoch.
    ClockReply { t1_ns: u64, t2_ns: u64, t3_ns: u64 },
    /// server → client: the server's data phase has begun.
    Started,
    /// server → client: the server's senders have finished.
    SenderDone { sent_packets: u64, sent_bytes: u64 },
    /// client → server: the client's part is done; its measurements.
    Finished { stats: SideStats },
    /// server → client: the server's measurements; the session ends.
    Result { stats: SideStats },
    /// either way: the session failed; the connection closes after this.
    Error { code: ErrorCode, message: String },
}

impl Msg {
    /// The tag as it appears on the wire, for log lines and errors.
    pub fn name(&self) -> &'static str {
        match self {
            Msg::Hello { .. } => "hello",
            Msg::Welcome { .. } => "welcome",
            Msg::Request { .. } => "request",
            Msg::Accept { .. } => "accept",
            Msg::Start { .. } => "start",
            Msg::ClockQuery { .. } => "clock_query",
            Msg::ClockReply { .. } => "clock_reply",
            Msg::Started => "started",
            Msg::SenderDone { .. } => "sender_done",
            Msg::Finished { .. } => "finished",
            Msg::Result { .. } => "result",
            Msg::Error { .. } => "error",
        }
    }
}

/// A checked view of the 8-byte frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    pub version: u16,
    pub body_bytes: usize,
}

impl FrameHeader {
    /// Parse and check a header from untrusted bytes: magic, length limit, then version.
    pub fn new_checked(bytes: &[u8], ours: u16) -> Result<FrameHeader, WireError> {
        if bytes.len() < FRAME_HEADER_BYTES {
            return Err(WireError::Truncated {
                need: FRAME_HEADER_BYTES,
                have: bytes.len(),
            });
        }
        let magic = [bytes[0], bytes[1]];
        if magic != FRAME_MAGIC {
            return Err(WireError::BadMagic(magic));
        }
        let version = u16::from_be_bytes([bytes[2], bytes[3]]);
        let body_bytes = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]) as usize;
        if body_bytes > MAX_BODY_BYTES {
            return Err(WireError::Oversized(body_bytes));
        }
        if version != ours {
            return Err(WireError::VersionMismatch {
                peer: version,
                ours,
            });
        }
        Ok(FrameHeader {
            version,
            body_bytes,
        })
    }
}

/// Encode one message as a frame of protocol `version`.
pub fn encode_frame(msg: &Msg, version: u16) -> Vec<u8> {
    // Serialising our own enum of plain data cannot fail; fall back to an empty object.
    let body = serde_json::to_vec(msg).unwrap_or_else(|_| b"{}".to_vec());
    let mut out = Vec::with_capacity(FRAME_HEADER_BYTES + body.len());
    out.extend_from_slice(&FRAME_MAGIC);
    out.extend_from_slice(&version.to_be_bytes());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Decode a frame body (after its header was checked).
pub fn decode_body(body: &[u8]) -> Result<Msg, WireError> {
    serde_json::from_slice(body).map_err(|e| WireError::Malformed(e.to_string()))
}

/// Accumulates bytes from a stream and yields whole messages. Reads may return any
/// number of bytes; partial frames stay buffered until the rest arrives.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    version: u16,
    max_body_bytes: usize,
}

impl FrameDecoder {
    pub fn new(version: u16) -> FrameDecoder {
        FrameDecoder {
            buf: Vec::new(),
            version,
            max_body_bytes: MAX_BODY_BYTES,
        }
    }

    /// Accept bodies of at most `n` bytes (capped at [`MAX_BODY_BYTES`]) from now on: a
    /// server expects only small messages before a test is accepted, so a peer cannot
    /// make it buffer megabytes before that.
    pub fn set_max_body_bytes(&mut self, n: usize) {
        self.max_body_bytes = n.min(MAX_BODY_BYTES);
    }

    fn header(&self) -> Result<FrameHeader, WireError> {
        let h = FrameHeader::new_checked(&self.buf, self.version)?;
        if h.body_bytes > self.max_body_bytes {
            return Err(WireError::OverLimit {
                body_bytes: h.body_bytes,
                limit_bytes: self.max_body_bytes,
            });
        }
        Ok(h)
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes buffered but not yet decoded.
    pub fn pending_bytes(&self) -> usize {
        self.buf.len()
    }

    /// How many more bytes are needed before `next_msg` can make progress (≥ 1).
    pub fn wanted_bytes(&self) -> usize {
        if self.buf.len() < FRAME_HEADER_BYTES {
            return FRAME_HEADER_BYTES - self.buf.len();
        }
        match self.header() {
            Ok(h) => (FRAME_HEADER_BYTES + h.body_bytes)
                .saturating_sub(self.buf.len())
                .max(1),
            Err(_) => 1,
        }
    }

    /// The next whole message, `Ok(None)` if more bytes are needed, or the reason the
    /// stream is not a valid control stream (the caller then closes the connection).
    pub fn next_msg(&mut self) -> Result<Option<Msg>, WireError> {
        if self.buf.len() < FRAME_HEADER_BYTES {
            // Check the magic early so garbage is rejected without waiting for 8 bytes.
            if self.buf.len() >= 2 && self.buf[..2] != FRAME_MAGIC {
                return Err(WireError::BadMagic([self.buf[0], self.buf[1]]));
            }
            return Ok(None);
        }
        let header = self.header()?;
        let total = FRAME_HEADER_BYTES + header.body_bytes;
        if self.buf.len() < total {
            return Ok(None);
        }
        let msg = decode_body(&self.buf[FRAME_HEADER_BYTES..total]);
        self.buf.drain(..total);
        msg.map(Some)
    }
}

/// The old name of [`TestSpecError`], kept while callers move to the new one (a study
/// spec's errors are `study::SpecError`).
#[doc(hidden)]
pub use TestSpecError as SpecError;

/// Why a test spec cannot be run; the message is shown to the user as is. (A study
/// spec's errors are `study::SpecError`.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TestSpecError {
    #[error("a {payload_bytes}-byte payload does not fit in one {family} UDP datagram (at most {max_bytes} bytes)")]
    PayloadTooLarge {
        payload_bytes: u32,
        family: Family,
        max_bytes: u32,
    },
    #[error("a {payload_bytes}-byte payload is too small for {kind}: it needs at least {min_bytes} bytes for the dualperf datagram header")]
    PayloadTooSmall {
        payload_bytes: u32,
        kind: TestKind,
        min_bytes: u32,
    },
    #[error("{0}")]
    Invalid(String),
}

/// Fastest paced request/response probing: transactions per second per stream.
pub const MAX_RR_RATE: u64 = 100_000;

/// Narrowest per-window statistics window.
pub const MIN_WINDOW_NS: u64 = 1_000_000;

/// Clock queries one session may make (a client needs a handful; more is abuse).
pub const MAX_CLOCK_QUERIES: u32 = 16;

/// Check a spec a peer sent (or a user typed) before acting on it.
pub fn validate_spec(spec: &TestSpec) -> Result<(), TestSpecError> {
    if !spec.kind.on_wire() {
        return Err(TestSpecError::Invalid(format!(
            "{} is not one test but several: the client runs its parts (request/response \
             probes and TCP streams) as tests of their own",
            spec.kind
        )));
    }
    if spec.kind.is_udp() {
        let max_bytes = spec.family.max_udp_payload_bytes();
        if spec.payload_bytes > max_bytes {
            return Err(TestSpecError::PayloadTooLarge {
                payload_bytes: spec.payload_bytes,
                family: spec.family,
                max_bytes,
            });
        }
        // A bounded size model (constant, uniform) whose largest draw would not fit is
        // refused like `-s 70000`, not sent clipped to the limit under the model's name.
        let model_max = spec
            .traffic
            .as_ref()
            .and_then(|t| t.size_dist().ok().flatten())
            .and_then(|d| d.max());
        if let Some(m) = model_max.filter(|&m| m > f64::from(max_bytes)) {
            return Err(TestSpecError::PayloadTooLarge {
                payload_bytes: m.ceil().min(f64::from(u32::MAX)) as u32,
                family: spec.family,
                max_bytes,
            });
        }
        let min_bytes = crate::datagram::HEADER_BYTES as u32;
        if spec.payload_bytes < min_bytes {
            return Err(TestSpecError::PayloadTooSmall {
                payload_bytes: spec.payload_bytes,
                kind: spec.kind,
                min_bytes,
            });
        }
    } else if spec.payload_bytes == 0 || spec.payload_bytes > MAX_TCP_PAYLOAD_BYTES {
        return Err(TestSpecError::Invalid(format!(
            "payload size must be between 1 and {MAX_TCP_PAYLOAD_BYTES} bytes"
        )));
    }
    crate::bounds::check_socket_opts(&spec.socket)
        .map_err(|e| TestSpecError::Invalid(e.to_string()))?;
    if spec.streams == 0 || spec.streams > MAX_STREAMS {
        return Err(TestSpecError::Invalid(format!(
            "streams must be between 1 and {MAX_STREAMS}"
        )));
    }
    match spec.bound {
        Bound::DurationNs(0) => return Err(TestSpecError::Invalid("duration must be > 0".into())),
        Bound::DurationNs(ns) if ns > MAX_DURATION_NS => {
            return Err(TestSpecError::Invalid(format!(
                "duration must be at most {} h",
                MAX_DURATION_NS / 3_600_000_000_000
            )))
        }
        Bound::Count(0) => return Err(TestSpecError::Invalid("count must be > 0".into())),
        _ => {}
    }
    if spec.zerocopy.is_some() && (spec.kind != TestKind::TcpStream || spec.traffic.is_some()) {
        return Err(TestSpecError::Invalid(
            "--zerocopy sends a bulk tcp-stream: use -t tcp-stream without a traffic model".into(),
        ));
    }
    if spec.kind.is_rr() && spec.direction != Direction::Forward {
        return Err(TestSpecError::Invalid(
            "--reverse and --bidir apply to stream tests only".into(),
        ));
    }
    if spec.kind.is_rr() {
        match spec.rate {
            Some(crate::spec::Rate::BitsPerSec(_)) => {
                return Err(TestSpecError::Invalid(
                    "a request/response test's rate is transactions per second, not bits".into(),
                ))
            }
            Some(crate::spec::Rate::PacketsPerSec(p)) if p == 0 || p > MAX_RR_RATE => {
                return Err(TestSpecError::Invalid(format!(
                    "the probe rate must be between 1 and {MAX_RR_RATE} transactions per second"
                )))
            }
            _ => {}
        }
    }
    if spec.kind == TestKind::TcpCrr {
        check_crr(spec)?;
    }
    if matches!(
        spec.kind,
        TestKind::Pmtu | TestKind::Frag | TestKind::ExtHeaders
    ) && (spec.streams != 1 || spec.direction != Direction::Forward)
    {
        return Err(TestSpecError::Invalid(format!(
            "{} probes one path from the client to the server: no -P, --reverse or --bidir",
            spec.kind
        )));
    }
    if matches!(
        spec.kind,
        TestKind::UdpRr | TestKind::Pmtu | TestKind::Frag | TestKind::ExtHeaders
    ) && spec.rr_timeout_ns == 0
    {
        return Err(TestSpecError::Invalid("rr timeout must be > 0".into()));
    }
    if spec.interval_ns.is_some_and(|i| i < MIN_INTERVAL_NS) {
        return Err(TestSpecError::Invalid(
            "the interval must be at least 0.01 s".into(),
        ));
    }
    if let Some(w) = spec.window_ns {
        if spec.kind != TestKind::UdpStream {
            return Err(TestSpecError::Invalid(
                "--stats-window applies to udp-stream only".into(),
            ));
        }
        if w < MIN_WINDOW_NS {
            return Err(TestSpecError::Invalid(
                "the window must be at least 1 ms".into(),
            ));
        }
        if let Bound::DurationNs(ns) = spec.bound {
            if ns / w > MAX_INTERVAL_SAMPLES {
                return Err(TestSpecError::Invalid(format!(
                    "at most {MAX_INTERVAL_SAMPLES} windows per test: use a longer --stats-window"
                )));
            }
        }
    }
    if let (Some(i), Bound::DurationNs(ns)) = (spec.interval_ns, spec.bound) {
        if ns / i.max(1) > MAX_INTERVAL_SAMPLES {
            return Err(TestSpecError::Invalid(format!(
                "at most {MAX_INTERVAL_SAMPLES} interval samples per test: use a longer --interval"
            )));
        }
    }
    Ok(())
}

/// tcp-crr opens one connection per transaction, back to back, on one stream: a rate
/// or parallel streams would measure something else (a paced prober, a connection
/// flood), and a traffic model replaces what a transaction is.
fn check_crr(spec: &TestSpec) -> Result<(), TestSpecError> {
    if spec.rate.is_some() {
        return Err(TestSpecError::Invalid(
            "tcp-crr runs its connections back to back: drop the rate (-b)".into(),
        ));
    }
    if spec.streams != 1 {
        return Err(TestSpecError::Invalid(
            "tcp-crr runs one connection at a time: drop -P (parallel streams)".into(),
        ));
    }
    if spec.traffic.is_some() {
        return Err(TestSpecError::Invalid(
            "tcp-crr sends one request and one response of the payload size: drop the traffic model".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::TestKind;

    fn sample_msgs() -> Vec<Msg> {
        vec![
            Msg::Hello {
                client_info: BTreeMap::from([("os".into(), "linux".into())]),
                client_nonce: None,
            },
            Msg::Hello {
                client_info: BTreeMap::new(),
                client_nonce: Some(Nonce([7; crate::auth::NONCE_BYTES])),
            },
            Msg::Welcome {
                server_info: BTreeMap::new(),
                server_nonce: Some(Nonce([1; crate::auth::NONCE_BYTES])),
                server_proof: Some(Proof([2; crate::auth::PROOF_BYTES])),
            },
            Msg::Request {
                spec: TestSpec::new(TestKind::UdpStream, Family::V6, 128),
                client_proof: None,
            },
            Msg::Request {
                spec: TestSpec::new(TestKind::TcpRr, Family::V4, 1),
                client_proof: Some(Proof([3; crate::auth::PROOF_BYTES])),
            },
            Msg::Accept {
                data_port: 40000,
                token: u64::MAX,
                server_info: BTreeMap::new(),
                quic_cert: Some("30820102".into()),
            },
            Msg::Started,
            Msg::Finished {
                stats: SideStats {
                    sent_bytes: 7,
                    jitter_rfc3550_ns: Some(1.5),
                    ..SideStats::default()
                },
            },
            Msg::Error {
                code: ErrorCode::Busy,
                message: "busy".into(),
            },
        ]
    }

    #[test]
    fn frames_round_trip_when_fed_one_byte_at_a_time() {
        let msgs = sample_msgs();
        let mut bytes = Vec::new();
        for m in &msgs {
            bytes.extend(encode_frame(m, PROTOCOL_VERSION));
        }
        let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
        let mut got = Vec::new();
        for b in bytes {
            dec.push(&[b]);
            while let Some(m) = dec.next_msg().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, msgs);
        assert_eq!(dec.pending_bytes(), 0);
    }

    #[test]
    fn truncated_frame_waits_for_more_bytes() {
        let frame = encode_frame(&Msg::Started, PROTOCOL_VERSION);
        let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
        dec.push(&frame[..frame.len() - 1]);
        assert_eq!(dec.next_msg(), Ok(None));
        assert_eq!(dec.wanted_bytes(), 1);
        dec.push(&frame[frame.len() - 1..]);
        assert_eq!(dec.next_msg(), Ok(Some(Msg::Started)));
    }

    #[test]
    fn header_checks_reject_short_garbage_oversized_and_other_versions() {
        assert!(matches!(
            FrameHeader::new_checked(b"dP\0", 1),
            Err(WireError::Truncated { need: 8, have: 3 })
        ));
        assert!(matches!(
            FrameHeader::new_checked(b"GET / HT", 1),
            Err(WireError::BadMagic(_))
        ));
        let mut big = b"dP\0\x01".to_vec();
        big.extend(((MAX_BODY_BYTES + 1) as u32).to_be_bytes());
        assert_eq!(
            FrameHeader::new_checked(&big, 1),
            Err(WireError::Oversized(MAX_BODY_BYTES + 1))
        );
        let frame = encode_frame(&Msg::Started, 9);
        assert_eq!(
            FrameHeader::new_checked(&frame, 1),
            Err(WireError::VersionMismatch { peer: 9, ours: 1 })
        );
    }

    #[test]
    fn decoder_rejects_garbage_before_a_full_header() {
        let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
        dec.push(b"HE");
        assert!(matches!(dec.next_msg(), Err(WireError::BadMagic(_))));
    }

    #[test]
    fn malformed_bodies_are_errors_not_panics() {
        for body in [
            &b""[..],
            b"{",
            b"null",
            b"{\"type\":\"nope\"}",
            b"{\"type\":\"accept\",\"data_port\":70000,\"token\":1}",
            b"\xff\xfe",
        ] {
            let mut frame = FRAME_MAGIC.to_vec();
            frame.extend(PROTOCOL_VERSION.to_be_bytes());
            frame.extend((body.len() as u32).to_be_bytes());
            frame.extend(body);
            let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
            dec.push(&frame);
            assert!(
                matches!(dec.next_msg(), Err(WireError::Malformed(_))),
                "{body:?}"
            );
        }
    }

    #[test]
    fn zerocopy_is_for_bulk_tcp_streams_and_absent_on_the_wire_when_off() {
        use crate::spec::ZeroCopyMethod;
        let mut s = TestSpec::new(TestKind::TcpStream, Family::V4, 131_072);
        assert!(!serde_json::to_string(&s).unwrap().contains("zerocopy"));
        s.zerocopy = Some(ZeroCopyMethod::Msg);
        assert_eq!(validate_spec(&s), Ok(()));
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"zerocopy\":\"msg\""), "{json}");
        s.zerocopy = Some(ZeroCopyMethod::Sendfile);
        let back: TestSpec = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(back.zerocopy, Some(ZeroCopyMethod::Sendfile));
        assert_eq!("SENDFILE".parse(), Ok(ZeroCopyMethod::Sendfile));
        assert!("splice".parse::<ZeroCopyMethod>().is_err());
        for kind in [TestKind::UdpStream, TestKind::TcpRr, TestKind::UdpRr] {
            let mut u = TestSpec::new(kind, Family::V4, 1000);
            u.zerocopy = Some(ZeroCopyMethod::Msg);
            let err = validate_spec(&u).unwrap_err().to_string();
            assert!(err.contains("--zerocopy"), "{kind}: {err}");
        }
    }

    #[test]
    fn tcp_crr_refuses_a_rate_parallel_streams_and_other_directions_with_the_fix() {
        use crate::spec::{Direction, Rate};
        let ok = TestSpec::new(TestKind::TcpCrr, Family::V6, 64);
        assert_eq!(validate_spec(&ok), Ok(()));
        let mut rate = ok.clone();
        rate.rate = Some(Rate::PacketsPerSec(100));
        let mut streams = ok.clone();
        streams.streams = 4;
        let mut bidir = ok.clone();
        bidir.direction = Direction::Bidir;
        for (s, words) in [
            (rate, "drop the rate"),
            (streams, "drop -P"),
            (bidir, "--reverse and --bidir apply to stream tests only"),
        ] {
            let e = validate_spec(&s).unwrap_err().to_string();
            assert!(e.contains(words), "{e}");
        }
    }

    #[test]
    fn spec_validation_enforces_datagram_limits_per_family() {
        let mut s = TestSpec::new(TestKind::UdpStream, Family::V4, 65_507);
        assert_eq!(validate_spec(&s), Ok(()));
        s.payload_bytes = 65_508;
        let err = validate_spec(&s).unwrap_err();
        assert!(err.to_string().contains("at most 65507 bytes"), "{err}");
        // The same limit for a size model whose largest draw is known.
        for (model, ok) in [
            ("constant:70000", false),
            ("uniform:100..65508", false),
            ("uniform:100..65507", true),
        ] {
            let mut m = TestSpec::new(TestKind::UdpStream, Family::V4, 1000);
            m.traffic = crate::traffic::TrafficModel::from_options(
                None,
                Some(model),
                None,
                (None, None),
                None,
                1,
            )
            .unwrap();
            let r = validate_spec(&m);
            assert_eq!(r.is_ok(), ok, "{model}: {r:?}");
            if let Err(e) = r {
                assert!(
                    e.to_string()
                        .contains("does not fit in one IPv4 UDP datagram"),
                    "{e}"
                );
            }
        }
        s.family = Family::V6;
        assert_eq!(validate_spec(&s), Ok(()));
        s.payload_bytes = 65_528;
        assert!(validate_spec(&s).unwrap_err().to_string().contains("65527"));
        s.payload_bytes = 8;
        assert!(matches!(
            validate_spec(&s),
            Err(TestSpecError::PayloadTooSmall { .. })
        ));
        let mut t = TestSpec::new(TestKind::TcpRr, Family::V4, 1);
        assert_eq!(validate_spec(&t), Ok(()));
        t.streams = 0;
        assert!(validate_spec(&t).is_err());
        let mut u = TestSpec::new(TestKind::TcpStream, Family::V4, MAX_TCP_PAYLOAD_BYTES);
        assert_eq!(validate_spec(&u), Ok(()));
        u.payload_bytes += 1;
        assert!(
            validate_spec(&u).is_err(),
            "bounds what a peer can make us allocate"
        );
        u.payload_bytes = 1;
        u.interval_ns = Some(1);
        assert!(
            validate_spec(&u).is_err(),
            "a 1 ns interval would spin the sampler"
        );
    }

    #[test]
    fn spec_validation_caps_duration_and_interval_samples() {
        let mut s = TestSpec::new(TestKind::TcpStream, Family::V4, 1000);
        s.bound = Bound::DurationNs(MAX_DURATION_NS);
        assert_eq!(validate_spec(&s), Ok(()));
        s.bound = Bound::DurationNs(MAX_DURATION_NS + 1);
        let err = validate_spec(&s).unwrap_err().to_string();
        assert!(err.contains("at most 24 h"), "{err}");
        s.bound = Bound::DurationNs(MAX_INTERVAL_SAMPLES * MIN_INTERVAL_NS);
        s.interval_ns = Some(MIN_INTERVAL_NS);
        assert_eq!(validate_spec(&s), Ok(()));
        s.bound = Bound::DurationNs((MAX_INTERVAL_SAMPLES + 1) * MIN_INTERVAL_NS);
        let err = validate_spec(&s).unwrap_err().to_string();
        assert!(err.contains("longer --interval"), "{err}");
        // The cap keeps a full result inside one frame.
        let stats = SideStats {
            intervals: vec![
                IntervalSample {
                    start_ns: u64::MAX,
                    end_ns: u64::MAX,
                    sent_bytes: u64::MAX,
                    sent_packets: u64::MAX,
                    recv_bytes: u64::MAX,
                    recv_packets: u64::MAX,
                    // RTT sums are a request/response client's own (never in a
                    // server's result frame): zero, and not encoded.
                    ..IntervalSample::default()
                };
                MAX_INTERVAL_SAMPLES as usize
            ],
            ..SideStats::default()
        };
        let frame = encode_frame(&Msg::Result { stats }, PROTOCOL_VERSION);
        assert!(frame.len() < MAX_BODY_BYTES, "{} bytes", frame.len());
    }

    #[test]
    fn a_lowered_body_limit_refuses_big_frames_at_the_header() {
        let mut d = FrameDecoder::new(PROTOCOL_VERSION);
        d.set_max_body_bytes(100);
        let mut header = FRAME_MAGIC.to_vec();
        header.extend_from_slice(&PROTOCOL_VERSION.to_be_bytes());
        header.extend_from_slice(&101u32.to_be_bytes());
        d.push(&header);
        let err = d.next_msg().unwrap_err();
        assert_eq!(
            err,
            WireError::OverLimit {
                body_bytes: 101,
                limit_bytes: 100
            }
        );
        assert_eq!(d.wanted_bytes(), 1, "asks for no body bytes");
        let mut ok = FrameDecoder::new(PROTOCOL_VERSION);
        ok.set_max_body_bytes(usize::MAX);
        ok.push(&encode_frame(&Msg::Started, PROTOCOL_VERSION));
        assert_eq!(ok.next_msg(), Ok(Some(Msg::Started)));
    }
}
