//! What a test is: the description a client sends to a server and a study stores.
//!
//! "Packet size" / `payload_bytes` is the application payload per send (Netperf's send
//! size; per datagram for UDP, per request and per response for RR tests).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// IP version under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Family {
    #[serde(rename = "4")]
    V4,
    #[serde(rename = "6")]
    V6,
}

impl Family {
    /// Bytes of IP header without options (RFC 791: 20, RFC 8200: 40).
    pub fn ip_header_bytes(self) -> u32 {
        match self {
            Family::V4 => 20,
            Family::V6 => 40,
        }
    }
    /// Largest UDP payload one datagram can carry (65535 - IP header - 8, RFC 768/8200).
    pub fn max_udp_payload_bytes(self) -> u32 {
        match self {
            Family::V4 => 65_507,
            Family::V6 => 65_527,
        }
    }
    /// The number as users type it: 4 or 6.
    pub fn number(self) -> u8 {
        match self {
            Family::V4 => 4,
            Family::V6 => 6,
        }
    }
    /// The other family (what a fix such as "use -f 4" names).
    pub fn other(self) -> Family {
        match self {
            Family::V4 => Family::V6,
            Family::V6 => Family::V4,
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IPv{}", self.number())
    }
}

/// A family or test name that dualperf does not know (as typed, or as stored).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownName {
    #[error("unknown IP family '{0}' (use 4 or 6)")]
    Family(String),
    #[error("unknown test '{0}' (use tcp-stream, udp-stream, tcp-rr, udp-rr, rrul, tcp-crr, pmtu, frag, ext-headers, quic-stream or quic-rr)")]
    Test(String),
}

impl FromStr for Family {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s.trim().to_ascii_lowercase().as_str() {
            "4" | "v4" | "ipv4" | "inet" => Ok(Family::V4),
            "6" | "v6" | "ipv6" | "inet6" => Ok(Family::V6),
            other => Err(UnknownName::Family(other.to_string())),
        }
    }
}

/// Which way the load streams send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadDirection {
    /// Client to server.
    Upload,
    /// Server to client.
    Download,
    /// Both at once: `streams` connections each way.
    Both,
}

impl LoadDirection {
    pub fn name(self) -> &'static str {
        match self {
            LoadDirection::Upload => "upload",
            LoadDirection::Download => "download",
            LoadDirection::Both => "both",
        }
    }
}

/// The parameters of a latency-under-load test (rrul) beyond family, write size, run
/// length and socket options; the defaults are `dualperf run -t rrul`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoadedOpts {
    /// TCP connections of load per direction (flent's RRUL: 4).
    pub streams: u16,
    pub load: LoadDirection,
    /// Probe transactions per second, per probe type (UDP and TCP).
    pub probe_rate: u64,
    /// Bytes of each probe request and response.
    pub probe_bytes: u32,
    /// Length of the idle phase before the load, ns.
    pub idle_ns: u64,
}

impl Default for LoadedOpts {
    /// 4 streams per direction both ways, as flent's RRUL; 20 probes/s of each type
    /// (120 loaded samples per type in a 10 s run); 64-byte probes; 2 s idle.
    fn default() -> LoadedOpts {
        LoadedOpts {
            streams: 4,
            load: LoadDirection::Both,
            probe_rate: 20,
            probe_bytes: 64,
            idle_ns: 2_000_000_000,
        }
    }
}

/// Shortest loaded phase of a loaded-latency test, ns: the probes need a window between
/// the ramps. The engine refuses shorter, and so do study specs and `run`'s options.
pub const MIN_LOADED_NS: u64 = 1_000_000_000;
/// Shortest idle phase of a loaded-latency test, ns.
pub const MIN_IDLE_NS: u64 = 200_000_000;
/// Fewest probes of each type the loaded window must hold.
pub const MIN_LOADED_PROBES: f64 = 10.0;

/// The ramp at each end of a loaded phase of `duration_ns`: a fifth of it, between 0.2 s
/// and 2 s.
pub fn loaded_ramp_ns(duration_ns: u64) -> u64 {
    (duration_ns / 5).clamp(200_000_000, 2_000_000_000)
}

/// How long the loaded probes run in a loaded phase of `duration_ns`: the phase less
/// its two ramps.
pub fn loaded_probe_ns(duration_ns: u64) -> u64 {
    duration_ns.saturating_sub(2 * loaded_ramp_ns(duration_ns))
}

/// The write size of the load when none is given (`-s`), as iperf3's TCP default.
pub const DEFAULT_LOAD_WRITE_BYTES: u32 = 128 * 1024;

/// The core tests, and the composite loaded-latency test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestKind {
    /// Bulk TCP transfer (Netperf TCP_STREAM).
    TcpStream,
    /// Datagrams with sequence number and send time (Netperf UDP_STREAM, iperf -u).
    UdpStream,
    /// One TCP transaction at a time (Netperf TCP_RR).
    TcpRr,
    /// One UDP transaction at a time, with a per-transaction timeout (Netperf UDP_RR).
    UdpRr,
    /// Latency under load (flent's RRUL): UDP and TCP request/response probes idle,
    /// then beside TCP streams. A composite the client runs as tests of the four kinds
    /// above in one group; never a test on the wire itself ([`TestKind::on_wire`]).
    Rrul,
    /// One TCP connection per transaction (Netperf TCP_CRR): connect, one request and
    /// one response of the payload size, close. The server closes first, so TIME_WAIT
    /// sits on the server's side and the client's ephemeral ports are free at once.
    TcpCrr,
    /// The path MTU: don't-fragment UDP probes of a searched size that the server
    /// acknowledges with a small reply, the MTU the kernel learned and any Packet Too
    /// Big / fragmentation-needed that arrived (RFC 8899's probing, on datagrams).
    Pmtu,
    /// Fragment delivery: UDP datagrams of the payload size sent without don't-fragment
    /// (fragmented at the source or on the path when larger than the path MTU), one at a
    /// time, each acknowledged by the server with a small reply.
    Frag,
    /// IPv6 extension headers: datagrams with a Destination Options header and with a
    /// Hop-by-Hop Options header (PadN) beside plain ones, each acknowledged by the
    /// server; delivery of each kind in the same run (RFC 7872).
    ExtHeaders,
    /// Bulk transfer on `-P` streams of one QUIC connection (RFC 9000), over UDP.
    QuicStream,
    /// One QUIC request/response exchange at a time on one stream.
    QuicRr,
}

impl TestKind {
    /// Every test a study or report knows, in display order.
    pub const ALL: [TestKind; 11] = [
        TestKind::TcpStream,
        TestKind::UdpStream,
        TestKind::TcpRr,
        TestKind::UdpRr,
        TestKind::Rrul,
        TestKind::TcpCrr,
        TestKind::Pmtu,
        TestKind::Frag,
        TestKind::ExtHeaders,
        TestKind::QuicStream,
        TestKind::QuicRr,
    ];
    /// The default study's tests (a server also runs tcp-crr).
    pub const WIRE: [TestKind; 4] = [
        TestKind::TcpStream,
        TestKind::UdpStream,
        TestKind::TcpRr,
        TestKind::UdpRr,
    ];
    pub fn name(self) -> &'static str {
        match self {
            TestKind::TcpStream => "tcp-stream",
            TestKind::UdpStream => "udp-stream",
            TestKind::TcpRr => "tcp-rr",
            TestKind::UdpRr => "udp-rr",
            TestKind::Rrul => "rrul",
            TestKind::TcpCrr => "tcp-crr",
            TestKind::Pmtu => "pmtu",
            TestKind::Frag => "frag",
            TestKind::ExtHeaders => "ext-headers",
            TestKind::QuicStream => "quic-stream",
            TestKind::QuicRr => "quic-rr",
        }
    }
    /// A test one control session runs (every kind but the composite rrul).
    pub fn on_wire(self) -> bool {
        self != TestKind::Rrul
    }
    pub fn is_udp(self) -> bool {
        matches!(
            self,
            TestKind::UdpStream
                | TestKind::UdpRr
                | TestKind::Pmtu
                | TestKind::Frag
                | TestKind::ExtHeaders
        )
    }
    pub fn is_rr(self) -> bool {
        matches!(
            self,
            TestKind::TcpRr | TestKind::UdpRr | TestKind::TcpCrr | TestKind::QuicRr
        )
    }
    /// A QUIC test: its data runs on one QUIC connection over one UDP socket per side.
    pub fn is_quic(self) -> bool {
        matches!(self, TestKind::QuicStream | TestKind::QuicRr)
    }
    /// The transport under the test's data (QUIC runs over UDP).
    pub fn transport(self) -> Transport {
        if self.is_udp() || self.is_quic() {
            Transport::Udp
        } else {
            Transport::Tcp
        }
    }
}

impl fmt::Display for TestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TestKind {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        let norm = s.trim().to_ascii_lowercase().replace('_', "-");
        if matches!(norm.as_str(), "loaded" | "loaded-latency") {
            return Ok(TestKind::Rrul);
        }
        TestKind::ALL
            .into_iter()
            .find(|k| k.name() == norm)
            .ok_or_else(|| UnknownName::Test(s.to_string()))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Tcp,
    Udp,
}

impl Transport {
    /// Transport header bytes without options (TCP 20, RFC 9293; UDP 8, RFC 768).
    pub fn header_bytes(self) -> u32 {
        match self {
            Transport::Tcp => 20,
            Transport::Udp => 8,
        }
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Tcp => "TCP",
            Transport::Udp => "UDP",
        })
    }
}

/// Which way the payload goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// client → server (the default).
    #[default]
    Forward,
    /// server → client (`--reverse`).
    Reverse,
    /// both at once (`--bidir`).
    Bidir,
}

/// How UDP datagrams cross the system-call boundary, as the user chose (`--udp-datapath`).
/// Both ends of a run use it for their UDP sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UdpDatapath {
    /// The default: batched calls (sendmmsg/recvmmsg on Linux), with segmentation
    /// offload (GSO/USO) at the sender and receive coalescing (GRO/URO) at the receiver
    /// of streams unpaced or paced above 20 kpps; per-datagram where the OS has no
    /// batching.
    #[default]
    Auto,
    /// One datagram per system call, as Netperf's UDP_STREAM, iperf3, nuttcp and qperf
    /// send: the studies' method. On Linux the receiver of a stream without per-datagram
    /// timing (unpaced, or paced above 20 kpps) waits on a timer between its reads once
    /// datagrams arrive (`+naps` in `udp_datapath_calls`).
    PerDatagram,
    /// Batched calls without offloads.
    Batched,
    /// Batched calls with segmentation offload (GSO on Linux, USO on Windows) and
    /// receive coalescing (GRO, URO) even for paced streams.
    Gso,
}

impl UdpDatapath {
    pub const ALL: [UdpDatapath; 4] = [
        UdpDatapath::Auto,
        UdpDatapath::PerDatagram,
        UdpDatapath::Batched,
        UdpDatapath::Gso,
    ];

    pub fn name(self) -> &'static str {
        match self {
            UdpDatapath::Auto => "auto",
            UdpDatapath::PerDatagram => "per-datagram",
            UdpDatapath::Batched => "batched",
            UdpDatapath::Gso => "gso",
        }
    }

    pub fn is_auto(&self) -> bool {
        *self == UdpDatapath::Auto
    }

    /// In words, for reports and the dry run.
    pub fn describe(self) -> &'static str {
        match self {
            UdpDatapath::Auto => {
                "auto: batched system calls (sendmmsg/recvmmsg on Linux); segmentation offload (GSO) and receive coalescing (GRO) for streams unpaced or paced above 20 kpps"
            }
            UdpDatapath::PerDatagram => {
                "per-datagram: one datagram per system call at both ends, as Netperf's UDP_STREAM (on Linux the receiver of a stream unpaced or paced above 20 kpps reads after short timed waits, not one wake-up per datagram)"
            }
            UdpDatapath::Batched => "batched system calls, no offloads",
            UdpDatapath::Gso => {
                "batched system calls with segmentation offload (GSO) and receive coalescing (GRO), paced or not"
            }
        }
    }
}

impl std::str::FromStr for UdpDatapath {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UdpDatapath::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown UDP datapath '{s}': use auto, per-datagram, batched or gso")
            })
    }
}

impl fmt::Display for UdpDatapath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Run for this long.
    DurationNs(u64),
    /// Send this many packets (datagrams, writes or transactions), then stop.
    Count(u64),
}

/// Requested sending rate (a quantity: its home is [`crate::quantity`]).
pub use crate::quantity::Rate;

/// udp-stream measured as RFC 2544 §26.1 throughput: the highest offered rate whose
/// loss stays at or below a threshold, by binary search within each run (one unpaced
/// trial, then `steps` paced ones; see `engine::run_rate_search`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateSearch {
    /// A trial passes when its loss is at most this % of the datagrams sent.
    pub loss_threshold_pct: f64,
    /// Paced trials after the unpaced one (resolution about top rate / 2^steps).
    pub steps: u32,
}

/// Default loss threshold: 0.1 % (RFC 2544 asks for zero loss; a shared host drops the
/// odd datagram to scheduling, which would make the answer erratic).
pub const RATE_SEARCH_LOSS_THRESHOLD_PCT: f64 = 0.1;
/// Default paced trials per run.
pub const RATE_SEARCH_STEPS: u32 = 5;
/// Most paced trials a run may ask for.
pub const RATE_SEARCH_MAX_STEPS: u32 = 20;

impl Default for RateSearch {
    fn default() -> Self {
        RateSearch {
            loss_threshold_pct: RATE_SEARCH_LOSS_THRESHOLD_PCT,
            steps: RATE_SEARCH_STEPS,
        }
    }
}

/// A rate search parameter out of range.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RateSearchError {
    #[error("loss threshold {0} % must be 0 ≤ PCT < 100")]
    LossThreshold(f64),
    #[error("search steps {0} must be 1..={RATE_SEARCH_MAX_STEPS}")]
    Steps(u32),
}

impl RateSearch {
    /// `Err` says which parameter is out of range.
    pub fn check(&self) -> Result<(), RateSearchError> {
        if !(self.loss_threshold_pct >= 0.0 && self.loss_threshold_pct < 100.0) {
            return Err(RateSearchError::LossThreshold(self.loss_threshold_pct));
        }
        if !(1..=RATE_SEARCH_MAX_STEPS).contains(&self.steps) {
            return Err(RateSearchError::Steps(self.steps));
        }
        Ok(())
    }
}

/// Socket settings a user can ask for; `None`/`false` leaves the kernel default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SocketOpts {
    pub sndbuf_bytes: Option<u32>,
    pub rcvbuf_bytes: Option<u32>,
    pub nodelay: bool,
    pub mss_bytes: Option<u32>,
    /// IPv4 TOS byte or IPv6 traffic class.
    pub tos: Option<u8>,
    /// IPv6 flow label (20 bits).
    pub flowlabel: Option<u32>,
    pub congestion: Option<String>,
    pub dont_fragment: bool,
}

impl SocketOpts {
    /// The options asked for, as `name=value` words (`OS defaults` when none).
    pub fn describe(&self) -> String {
        let mut w = Vec::new();
        if let Some(b) = self.sndbuf_bytes {
            w.push(format!("sndbuf={b} bytes"));
        }
        if let Some(b) = self.rcvbuf_bytes {
            w.push(format!("rcvbuf={b} bytes"));
        }
        if self.nodelay {
            w.push("TCP_NODELAY".into());
        }
        if let Some(v) = self.mss_bytes {
            w.push(format!("mss={v} bytes"));
        }
        if let Some(v) = self.tos {
            w.push(format!("tos={v:#04x}"));
        }
        if let Some(v) = self.flowlabel {
            w.push(format!("flowlabel={v:#07x}"));
        }
        if let Some(v) = &self.congestion {
            w.push(format!("congestion={v}"));
        }
        if self.dont_fragment {
            w.push("dont-fragment".into());
        }
        if w.is_empty() {
            "OS defaults".into()
        } else {
            w.join(", ")
        }
    }
}

/// One test as the client asks for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestSpec {
    pub kind: TestKind,
    pub family: Family,
    pub payload_bytes: u32,
    pub bound: Bound,
    #[serde(default)]
    pub direction: Direction,
    /// Parallel connections / flows (≥ 1).
    pub streams: u16,
    /// UDP stream: the send rate per stream; `None` = as fast as possible.
    /// Request/response tests: transactions per second per stream
    /// ([`Rate::PacketsPerSec`]), one started on a fixed grid (probe mode); `None` =
    /// back to back.
    #[serde(default)]
    pub rate: Option<Rate>,
    #[serde(default)]
    pub socket: SocketOpts,
    /// Per-interval samples every this many ns; `None` = no interval samples.
    #[serde(default)]
    pub interval_ns: Option<u64>,
    /// RR over UDP: how long to wait for one response before counting it lost.
    #[serde(default = "default_rr_timeout_ns")]
    pub rr_timeout_ns: u64,
    /// UDP datapath both ends use (absent on the wire when auto, so older peers
    /// accept the spec).
    #[serde(default, skip_serializing_if = "UdpDatapath::is_auto")]
    pub udp_datapath: UdpDatapath,
    /// UDP stream only: gaps and sizes drawn from distributions (D-ITG style); absent
    /// on the wire when not used, so older peers accept the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<crate::traffic::TrafficModel>,
    /// Tests of one client that must run at the same time (a loaded-latency test's load
    /// streams and probes) carry the same random id: a server admits them together
    /// while the group runs, from the same peer, in one test slot. Absent on the wire
    /// when not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u64>,
    /// UDP stream: per-window statistics (ITGDec style) over windows of this many ns of
    /// send time. Absent on the wire when not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<u64>,
    /// TCP stream: send without copying (Linux; `--zerocopy`, as iperf3's `-Z`), by this
    /// method. Absent on the wire when off, so older peers accept the spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<ZeroCopyMethod>,
}

/// How a zero-copy TCP sender avoids copying its bytes into the socket buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZeroCopyMethod {
    /// send(2) with MSG_ZEROCOPY: the kernel pins the sender's pages and says on the
    /// error queue when it let go of them, and whether it copied after all (it does when
    /// the receiver is a local socket: loopback, veth).
    Msg,
    /// sendfile(2) from a memory-backed file holding the pattern (what iperf3's `-Z`
    /// does): the socket buffer references the file's pages, so nothing is copied on
    /// the sending side, also on loopback.
    Sendfile,
}

impl ZeroCopyMethod {
    pub const ALL: [ZeroCopyMethod; 2] = [ZeroCopyMethod::Msg, ZeroCopyMethod::Sendfile];

    pub fn name(self) -> &'static str {
        match self {
            ZeroCopyMethod::Msg => "msg",
            ZeroCopyMethod::Sendfile => "sendfile",
        }
    }
}

impl std::str::FromStr for ZeroCopyMethod {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ZeroCopyMethod::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| format!("unknown zero-copy method '{s}': use msg or sendfile"))
    }
}

impl fmt::Display for ZeroCopyMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn default_rr_timeout_ns() -> u64 {
    200_000_000
}

impl TestSpec {
    /// A spec with the defaults `dualperf run` uses: forward, one stream, 10 s.
    pub fn new(kind: TestKind, family: Family, payload_bytes: u32) -> TestSpec {
        TestSpec {
            kind,
            family,
            payload_bytes,
            bound: Bound::DurationNs(10_000_000_000),
            direction: Direction::Forward,
            streams: 1,
            rate: None,
            socket: SocketOpts::default(),
            interval_ns: None,
            rr_timeout_ns: default_rr_timeout_ns(),
            udp_datapath: UdpDatapath::Auto,
            traffic: None,
            group: None,
            window_ns: None,
            zerocopy: None,
        }
    }

    /// Datagrams (or transactions) per second per stream that [`TestSpec::rate`] asks
    /// for: a packet rate as given, a bit rate over the payload's bits. `None` when no
    /// positive rate is asked (unpaced, back to back).
    pub fn rate_pps(&self) -> Option<f64> {
        match self.rate? {
            Rate::PacketsPerSec(p) => Some(p as f64),
            Rate::BitsPerSec(b) => Some(b as f64 / (f64::from(self.payload_bytes) * 8.0)),
        }
        .filter(|p| *p > 0.0)
    }

    /// Payload bits per second per stream that [`TestSpec::rate`] asks for (a packet
    /// rate times the payload's bits, saturating): one meaning of a bit rate for what a
    /// client asks, what a server allows and what an iperf3 peer is sent.
    pub fn rate_bps(&self) -> Option<u64> {
        match self.rate? {
            Rate::BitsPerSec(b) => Some(b),
            Rate::PacketsPerSec(p) => Some(p.saturating_mul(u64::from(self.payload_bytes) * 8)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_means_the_same_in_packets_and_in_bits_per_stream() {
        let mut s = TestSpec::new(TestKind::UdpStream, Family::V4, 1000);
        assert_eq!((s.rate_pps(), s.rate_bps()), (None, None));
        s.rate = Some(Rate::BitsPerSec(8_000_000));
        assert_eq!(
            (s.rate_pps(), s.rate_bps()),
            (Some(1000.0), Some(8_000_000))
        );
        s.rate = Some(Rate::PacketsPerSec(1000));
        assert_eq!(
            (s.rate_pps(), s.rate_bps()),
            (Some(1000.0), Some(8_000_000))
        );
        s.rate = Some(Rate::PacketsPerSec(u64::MAX));
        assert_eq!(s.rate_bps(), Some(u64::MAX), "saturates");
        s.rate = Some(Rate::BitsPerSec(0));
        assert_eq!(s.rate_pps(), None, "a zero rate paces nothing");
    }

    #[test]
    fn test_kind_round_trips_through_its_name() {
        for k in TestKind::ALL {
            assert_eq!(k.name().parse::<TestKind>().unwrap(), k);
        }
        assert!("tcp_rr".parse::<TestKind>().is_ok());
        assert!("sctp".parse::<TestKind>().is_err());
    }

    #[test]
    fn family_parses_common_spellings() {
        assert_eq!("6".parse::<Family>().unwrap(), Family::V6);
        assert_eq!("IPv4".parse::<Family>().unwrap(), Family::V4);
        assert_eq!(
            " V5 ".parse::<Family>().unwrap_err().to_string(),
            "unknown IP family 'v5' (use 4 or 6)"
        );
        assert_eq!(
            "sctp".parse::<TestKind>().unwrap_err().to_string(),
            "unknown test 'sctp' (use tcp-stream, udp-stream, tcp-rr, udp-rr, rrul, tcp-crr, pmtu, frag, ext-headers, quic-stream or quic-rr)"
        );
    }

    #[test]
    fn spec_serialises_to_json_and_back() {
        let spec = TestSpec::new(TestKind::UdpRr, Family::V6, 1408);
        let text = serde_json::to_string(&spec).unwrap();
        let back: TestSpec = serde_json::from_str(&text).unwrap();
        assert_eq!(back, spec);
    }
}
