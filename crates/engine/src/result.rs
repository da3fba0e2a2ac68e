//! A run's result: both sides' measurements as the client merged them, and
//! [`RunResult::metrics`], the flat list in the shared vocabulary of `wire::metrics`.
//! Which side's numbers count depends on the direction: goodput is measured at the
//! receiver, offered rate at the sender.

use measure::LatencySummary;
use model::OverheadModel;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wire::metrics::{self as m, Metric};
use wire::proto::{CpuStats, SideStats};
use wire::spec::{Direction, RateSearch, TestKind, TestSpec};

/// Version of the `--json` result schema (bump on any incompatible change).
pub const RESULT_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub spec: TestSpec,
    pub server_addr: String,
    pub client_addr: String,
    pub server_info: BTreeMap<String, String>,
    pub client_info: BTreeMap<String, String>,
    /// What the client measured (its sends, its receives, its CPU, its socket options).
    pub client: SideStats,
    /// What the server measured.
    pub server: SideStats,
    /// Request/response tests: RTT summary measured at the client; tcp-crr: the
    /// transaction time (socket creation to the server's close after the response).
    pub rtt: Option<LatencySummary>,
    /// tcp-crr: connect times measured at the client (socket creation to the end of
    /// the handshake).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_time: Option<LatencySummary>,
    pub transactions: u64,
    pub rr_timeouts: u64,
    /// Data-path problems that did not stop the run (e.g. a stream's socket error).
    pub warnings: Vec<String>,
    /// udp-stream measured as an RFC 2544 throughput search: its parameters and trials
    /// (the rest of the result is the chosen trial's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_search: Option<SearchOutcome>,
    /// UDP stream: the server's wall-clock offset from the client's, for one-way delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<measure::ClockOffset>,
    /// UDP stream: why there is no clock offset although exchanges took place (too few
    /// replies passed the checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_unavailable: Option<String>,
    /// pmtu: what the path-MTU search found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmtu: Option<crate::pmtu::PmtuReport>,
}

/// What an RFC 2544 throughput search (`run_rate_search`) did, kept with the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    pub params: RateSearch,
    /// (offered rate asked, datagrams/s sent, loss %) per trial, in order; the
    /// unpaced trial's asked rate is 0.
    pub trials: Vec<(f64, f64, f64)>,
    /// Whether some trial stayed within the threshold.
    pub passed: bool,
    /// How long each trial of a duration-bound search lasted, ns: the time base of the
    /// chosen trial's rates (the run's own duration spans every trial).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_duration_ns: Option<u64>,
}

/// Why a run has no one-way delay: shown instead of the number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoOneWayDelay {
    #[error("one-way delay is measured on UDP streams")]
    NotUdpStream,
    #[error("not measured for --bidir (two directions at once)")]
    Bidir,
    /// Clock exchanges took place but too few passed the checks (the stored reason).
    #[error("{0}")]
    NoClockOffset(String),
    #[error("the server does not answer clock queries (an older dualperf): its clock's offset is unknown")]
    NoClockQueries,
    /// No datagram gave a transit time (why, in the words of the jitter's reason).
    #[error("{0}")]
    NoTransit(String),
    #[error("a side did not report the wall-clock origin of its times")]
    NoOrigin,
    #[error("the clocks disagree: the smallest one-way delay came out at {min_us:.1} µs, below the offset's own bound of ±{bound_us:.1} µs (a clock was stepped or drifts)")]
    ClocksDisagree { min_us: f64, bound_us: f64 },
    #[error("the clocks' offset is known only to ±{bound_us:.1} µs ({method}), more than half the mean delay of about {mean_us:.1} µs: synchronise the hosts' clocks (PTP) for this figure")]
    OffsetTooUncertain {
        bound_us: f64,
        method: String,
        mean_us: f64,
    },
}

/// One window of a UDP stream's per-window statistics (D-ITG's ITGDec style).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WindowRow {
    pub index: u32,
    /// Window start, s of send time from the sender's start.
    pub start_s: f64,
    pub sent_packets: u64,
    pub recv_packets: u64,
    /// Sent in this window and never received (however late the rest arrived).
    pub lost_packets: u64,
    pub loss_pct: Option<f64>,
    /// Payload bits received of the datagrams sent in this window, over its width.
    pub bitrate_bps: f64,
    /// RFC 3550 jitter after the window's last arrival; `None` without per-datagram
    /// timing.
    pub jitter_ns: Option<f64>,
    /// One-way delay of the window's datagrams; `None` where the run has none.
    pub owd_mean_ns: Option<f64>,
    pub owd_max_ns: Option<f64>,
}

/// One stream of a multi-stream run (`-P N`): its bytes, its goodput over the run's time
/// base and its share of what arrived, so a stream that starved shows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StreamRow {
    pub stream_id: u16,
    /// Sent on this stream (both directions' senders for a bidirectional run).
    pub sent_bytes: u64,
    /// Received on this stream.
    pub recv_bytes: u64,
    /// `recv_bytes` as payload bit/s over the run's time base (the one of its goodput).
    pub throughput_bps: f64,
    /// `recv_bytes` as a share of everything received, %.
    pub share_pct: f64,
}

/// A stream that received less than this share of an equal split (total / streams) is
/// reported as starved.
pub const STARVED_BELOW_FAIR_SHARE_PCT: f64 = 10.0;

/// One-way delay of a UDP stream, ns on the client's clock, with the ± bound of the
/// clock offset it depends on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OneWayDelay {
    pub min_ns: f64,
    pub mean_ns: f64,
    pub max_ns: f64,
    pub uncertainty_ns: f64,
}

/// The largest IP packet and its frame that one payload of this run puts on a link of
/// `model` (see [`RunResult::path_framing`]): the header-overhead model's own figures
/// ([`model::overhead::OverheadModel`]), so `run` and `report` agree. Bulk TCP sends
/// full-MSS segments whatever the write size; UDP payloads above the MTU become IP
/// fragments (the first, full-size fragment is the packet given).
pub fn framing_bytes(spec: &TestSpec, model: &OverheadModel) -> (u32, u32) {
    let c = model.cost(spec.family, spec.kind, spec.payload_bytes);
    (c.ip_packet_bytes, c.frame_bytes)
}

/// The framing model of a run's path and whether its MTU was read or assumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathFraming {
    pub model: OverheadModel,
    /// The interface's MTU was not read: the model's default MTU is assumed.
    pub mtu_assumed: bool,
    /// Bulk TCP: the sending socket's MSS where it is below what the MTU allows (Linux
    /// bounds it by half the peer's largest window: 32741 bytes on loopback).
    pub sender_mss_bytes: Option<u32>,
}

impl PathFraming {
    /// "framing (loopback, MTU 65536)", "framing (Ethernet, MTU 1500 assumed: …)".
    pub fn heading(&self) -> String {
        format!(
            "framing ({}, MTU {}{}{})",
            self.model.link.name(),
            self.model.mtu_bytes,
            if self.mtu_assumed {
                " assumed: the interface's MTU was not read"
            } else {
                ""
            },
            self.sender_mss_bytes
                .map(|m| format!("; TCP segments of the sender's MSS, {m} bytes"))
                .unwrap_or_default()
        )
    }

    /// The model a run's packets follow: bulk TCP in segments of the sender's MSS.
    pub fn packet_model(&self, family: wire::spec::Family) -> OverheadModel {
        match self.sender_mss_bytes {
            Some(mss) => OverheadModel {
                mtu_bytes: mss + model::tcp_header_bytes(family),
                ..self.model
            },
            None => self.model,
        }
    }
}

/// Fewest datagrams a UDP stream must send (in each direction) for its rates to be
/// shown: with fewer, one datagram more or less moves a rate by more than 10 %.
pub const MIN_RATE_DATAGRAMS: u64 = 10;

fn per_s(count: f64, ns: u64) -> Option<f64> {
    (ns > 0).then(|| count * 1e9 / ns as f64)
}

impl RunResult {
    /// The result of `spec` from each side's counts alone: no addresses, metadata, RTT,
    /// clock or warnings (for checking what the figures make of given counts).
    pub fn from_sides(spec: TestSpec, client: SideStats, server: SideStats) -> RunResult {
        RunResult {
            schema_version: RESULT_SCHEMA_VERSION,
            spec,
            server_addr: String::new(),
            client_addr: String::new(),
            server_info: BTreeMap::new(),
            client_info: BTreeMap::new(),
            client,
            server,
            rtt: None,
            connect_time: None,
            transactions: 0,
            rr_timeouts: 0,
            warnings: Vec::new(),
            rate_search: None,
            clock: None,
            clock_unavailable: None,
            pmtu: None,
        }
    }

    /// The framing of this run's path, from what the client recorded of the interface
    /// that carried it: loopback gets the loopback model, anything else Ethernet; each
    /// at that interface's MTU for the run's family, or at the model's default MTU
    /// (said as assumed) when it was not read.
    pub fn path_framing(&self) -> PathFraming {
        let loopback = self
            .client
            .applied
            .get("link.before.kind")
            .is_some_and(|k| k == "loopback")
            || self
                .client_info
                .get("iface.name")
                .is_some_and(|n| n == "lo");
        let base = if loopback {
            OverheadModel::loopback()
        } else {
            OverheadModel::ethernet()
        };
        let key = match self.spec.family {
            wire::spec::Family::V4 => "iface.mtu_ipv4",
            wire::spec::Family::V6 => "iface.mtu_ipv6",
        };
        let mtu = self
            .client_info
            .get(key)
            .and_then(|m| m.trim().parse::<u32>().ok())
            .filter(|m| (68..=1 << 20).contains(m));
        let model = OverheadModel {
            mtu_bytes: mtu.unwrap_or(base.mtu_bytes),
            ..base
        };
        let sender_mss_bytes = (self.spec.kind == wire::spec::TestKind::TcpStream)
            .then(|| self.sender_receiver().0.applied.get("mss_bytes"))
            .flatten()
            .and_then(|m| m.trim().parse::<u32>().ok())
            .filter(|m| (1..model.mss_bytes(self.spec.family)).contains(m));
        PathFraming {
            model,
            mtu_assumed: mtu.is_none(),
            sender_mss_bytes,
        }
    }

    /// (sender, receiver) sides of a one-way stream test.
    fn sender_receiver(&self) -> (&SideStats, &SideStats) {
        match self.spec.direction {
            Direction::Reverse => (&self.server, &self.client),
            _ => (&self.client, &self.server),
        }
    }

    /// The side(s) that received the stream: both for a bidirectional test.
    fn receiving_sides(&self) -> Vec<&SideStats> {
        match self.spec.direction {
            Direction::Bidir => vec![&self.client, &self.server],
            _ => vec![self.sender_receiver().1],
        }
    }

    /// The time base of one direction's rates: the longer of its sender's span (its
    /// start to its last send) and its receiver's (its start to its last receive), ns.
    /// Goodput and sending rate are both taken over it, so a run that received no more
    /// payload than it sent never shows a goodput above its sending rate (the two sides'
    /// own spans differ by the control messages that start them). A duration-bound UDP
    /// stream occupies the duration asked for whatever it sent: at a low rate its last
    /// datagram leaves long before the end, and the span of a few datagrams is no
    /// duration to take a rate over.
    fn span_ns(&self, tx: &SideStats, rx: &SideStats) -> u64 {
        let span = tx.send_elapsed_ns.max(rx.recv_elapsed_ns);
        // A rate search reports its chosen trial, which lasted a share of the duration.
        let asked = match (&self.rate_search, self.spec.bound) {
            (Some(s), _) => s.trial_duration_ns,
            (None, wire::spec::Bound::DurationNs(ns)) => Some(ns),
            (None, wire::spec::Bound::Count(_)) => None,
        };
        match asked {
            Some(ns) if self.spec.kind == TestKind::UdpStream => span.max(ns),
            _ => span,
        }
    }

    /// Why this UDP stream's rates are not shown (`None`: they are): fewer than
    /// [`MIN_RATE_DATAGRAMS`] datagrams sent in a direction give no rate (one datagram
    /// is 100 % of it, and where in the duration it left decides the figure).
    pub fn rate_unavailable(&self) -> Option<String> {
        if self.spec.kind != TestKind::UdpStream {
            return None;
        }
        let sent = match self.spec.direction {
            Direction::Bidir => self.client.sent_packets.min(self.server.sent_packets),
            _ => self.sender_receiver().0.sent_packets,
        };
        (sent < MIN_RATE_DATAGRAMS).then(|| {
            format!(
                "{sent} datagram{} sent{}: too few for a rate (at least {MIN_RATE_DATAGRAMS}); \
                 raise --rate or --duration",
                if sent == 1 { "" } else { "s" },
                if self.spec.direction == Direction::Bidir {
                    " in a direction"
                } else {
                    ""
                }
            )
        })
    }

    /// Goodput at the receiver(s), payload bit/s over [`Self::span_ns`]; bidirectional =
    /// the sum of both directions; `None` where [`Self::rate_unavailable`].
    pub fn throughput_bps(&self) -> Option<f64> {
        if self.rate_unavailable().is_some() {
            return None;
        }
        let rate = |tx: &SideStats, rx: &SideStats| {
            per_s(rx.recv_bytes as f64 * 8.0, self.span_ns(tx, rx))
        };
        match self.spec.direction {
            Direction::Bidir if !self.spec.kind.is_rr() => Some(
                rate(&self.server, &self.client).unwrap_or(0.0)
                    + rate(&self.client, &self.server).unwrap_or(0.0),
            ),
            _ => {
                let (tx, rx) = self.sender_receiver();
                rate(tx, rx)
            }
        }
    }

    /// Per-stream rows of a stream test (empty for request/response), by stream id:
    /// bytes sent by the sending side(s), received by the receiving side(s).
    pub fn stream_rows(&self) -> Vec<StreamRow> {
        if self.spec.kind.is_rr() {
            return Vec::new();
        }
        let mut by_id: BTreeMap<u16, (u64, u64)> = BTreeMap::new();
        for side in [&self.client, &self.server] {
            for st in &side.streams {
                let e = by_id.entry(st.stream_id).or_default();
                e.0 = e.0.saturating_add(st.sent_bytes);
                e.1 = e.1.saturating_add(st.recv_bytes);
            }
        }
        let total: u64 = by_id.values().fold(0u64, |a, v| a.saturating_add(v.1));
        let span_ns = self
            .metric(m::DURATION_S)
            .map_or(0, |s| (s * 1e9).round() as u64);
        by_id
            .into_iter()
            .map(|(stream_id, (sent_bytes, recv_bytes))| StreamRow {
                stream_id,
                sent_bytes,
                recv_bytes,
                throughput_bps: per_s(recv_bytes as f64 * 8.0, span_ns).unwrap_or(0.0),
                share_pct: if total > 0 {
                    recv_bytes as f64 * 100.0 / total as f64
                } else {
                    0.0
                },
            })
            .collect()
    }

    /// One sentence per stream of a multi-stream run that received less than
    /// [`STARVED_BELOW_FAIR_SHARE_PCT`] of an equal share of the total.
    pub fn starved_streams(&self) -> Vec<String> {
        let rows = self.stream_rows();
        let total: u64 = rows
            .iter()
            .fold(0u64, |a, r| a.saturating_add(r.recv_bytes));
        if rows.len() < 2 || total == 0 {
            return Vec::new();
        }
        let fair = total as f64 / rows.len() as f64;
        rows.iter()
            .filter(|r| (r.recv_bytes as f64) < fair * STARVED_BELOW_FAIR_SHARE_PCT / 100.0)
            .map(|r| {
                format!(
                    "stream {} starved: it received {} bytes, {:.1} % of an equal share of \
                     the {} streams' total",
                    r.stream_id,
                    r.recv_bytes,
                    r.recv_bytes as f64 * 100.0 / fair,
                    rows.len()
                )
            })
            .collect()
    }

    /// The flat metric list (names from `wire::metrics`); unmeasurable ones are absent.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut out = Vec::new();
        let mut put = |name: &str, v: Option<f64>| {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                out.push(Metric::new(name, v));
            }
        };
        let spec = &self.spec;
        let is_udp = spec.kind.is_udp();
        if spec.kind == TestKind::Pmtu {
            self.pmtu_metrics(&mut put);
            return out;
        }
        if spec.kind == TestKind::ExtHeaders {
            self.ext_header_metrics(&mut put);
            return out;
        }
        if spec.kind == TestKind::Frag {
            self.delivery_metrics(&mut put);
            let (ip, _) = framing_bytes(spec, &self.path_framing().packet_model(spec.family));
            put(m::IP_PACKET_BYTES, Some(f64::from(ip)));
            return out;
        }
        if spec.kind.is_rr() {
            let c = &self.client;
            let elapsed = c.recv_elapsed_ns.max(c.send_elapsed_ns);
            put(m::SENT_BYTES, Some(c.sent_bytes as f64));
            put(m::RECV_BYTES, Some(c.recv_bytes as f64));
            put(m::SENT_PACKETS, Some(c.sent_packets as f64));
            put(m::RECV_PACKETS, Some(c.recv_packets as f64));
            put(m::TRANSACTIONS, Some(self.transactions as f64));
            put(m::DURATION_S, Some(elapsed as f64 / 1e9));
            if spec.kind == TestKind::TcpCrr {
                // One connection per transaction: the rate is connections per second,
                // the times are the connect and transaction times, not an RTT.
                put(
                    m::CONNECTIONS_PER_S,
                    per_s(self.transactions as f64, elapsed),
                );
                if let Some(c) = self.connect_time.filter(|r| r.count > 0) {
                    put(m::CONNECT_TIME_MEAN_NS, Some(c.mean_ns));
                    put(m::CONNECT_TIME_P50_NS, Some(c.p50_ns as f64));
                    put(m::CONNECT_TIME_P90_NS, Some(c.p90_ns as f64));
                    put(m::CONNECT_TIME_P99_NS, Some(c.p99_ns as f64));
                }
                if let Some(t) = self.rtt.filter(|r| r.count > 0) {
                    put(m::TRANSACTION_TIME_MEAN_NS, Some(t.mean_ns));
                    put(m::TRANSACTION_TIME_P50_NS, Some(t.p50_ns as f64));
                    put(m::TRANSACTION_TIME_P90_NS, Some(t.p90_ns as f64));
                    put(m::TRANSACTION_TIME_P99_NS, Some(t.p99_ns as f64));
                }
            } else {
                put(
                    m::TRANSACTIONS_PER_S,
                    per_s(self.transactions as f64, elapsed),
                );
            }
            if is_udp {
                put(m::RR_TIMEOUTS, Some(self.rr_timeouts as f64));
            }
            if let Some(r) = self
                .rtt
                .filter(|r| r.count > 0 && spec.kind != TestKind::TcpCrr)
            {
                put(m::RTT_MEAN_NS, Some(r.mean_ns));
                put(m::RTT_STDDEV_NS, Some(r.stddev_ns));
                put(m::RTT_MIN_NS, Some(r.min_ns as f64));
                put(m::RTT_P50_NS, Some(r.p50_ns as f64));
                put(m::RTT_P90_NS, Some(r.p90_ns as f64));
                put(m::RTT_P99_NS, Some(r.p99_ns as f64));
                put(m::RTT_P999_NS, Some(r.p999_ns as f64));
                put(m::RTT_MAX_NS, Some(r.max_ns as f64));
            }
        } else {
            let bidir = spec.direction == Direction::Bidir;
            let (tx, rx) = self.sender_receiver();
            let sum = |f: fn(&SideStats) -> u64| {
                if bidir {
                    f(&self.client).saturating_add(f(&self.server))
                } else {
                    0
                }
            };
            let (sent_bytes, sent_packets, recv_bytes, recv_packets) = if bidir {
                (
                    sum(|s| s.sent_bytes),
                    sum(|s| s.sent_packets),
                    sum(|s| s.recv_bytes),
                    sum(|s| s.recv_packets),
                )
            } else {
                (
                    tx.sent_bytes,
                    tx.sent_packets,
                    rx.recv_bytes,
                    rx.recv_packets,
                )
            };
            // One time base for every rate of the run (see span_ns); with both directions
            // at once, the longer direction's.
            let span_ns = if bidir {
                self.span_ns(&self.client, &self.server)
                    .max(self.span_ns(&self.server, &self.client))
            } else {
                self.span_ns(tx, rx)
            };
            // Too few datagrams: no rate at all (a zero time base gives none).
            let rate_ns = if self.rate_unavailable().is_some() {
                0
            } else {
                span_ns
            };
            let (send_ns, recv_ns) = (rate_ns, rate_ns);
            put(m::SENT_BYTES, Some(sent_bytes as f64));
            put(m::RECV_BYTES, Some(recv_bytes as f64));
            put(m::SENT_PACKETS, Some(sent_packets as f64));
            // A TCP receiver counts payload-size units (bytes / payload); with a traffic
            // model's drawn message sizes that unit means nothing, so only bytes are
            // reported received (messages written are the sender's packets).
            let units_mean_nothing = !is_udp && self.spec.traffic.is_some();
            if !units_mean_nothing {
                put(m::RECV_PACKETS, Some(recv_packets as f64));
            }
            put(m::THROUGHPUT_BPS, self.throughput_bps());
            put(m::SEND_RATE_BPS, per_s(sent_bytes as f64 * 8.0, send_ns));
            put(m::SENT_PPS, per_s(sent_packets as f64, send_ns));
            if !units_mean_nothing {
                put(m::RECV_PPS, per_s(recv_packets as f64, recv_ns));
            }
            put(m::DURATION_S, Some(span_ns as f64 / 1e9));
            if is_udp {
                let lost = measure::lost_packets(sent_packets, recv_packets);
                put(m::LOST_PACKETS, Some(lost as f64));
                put(m::LOSS_PCT, measure::loss_pct(sent_packets, recv_packets));
                let rxs = self.receiving_sides();
                let dup = rxs
                    .iter()
                    .fold(0u64, |a, s| a.saturating_add(s.dup_packets));
                let reo = rxs
                    .iter()
                    .fold(0u64, |a, s| a.saturating_add(s.reordered_packets));
                put(m::DUP_PACKETS, Some(dup as f64));
                put(m::REORDERED_PACKETS, Some(reo as f64));
                // Over both directions of --bidir only when both receivers have the
                // figure: one direction's value is not shown as both's.
                put(
                    m::JITTER_RFC3550_NS,
                    mean_all(rxs.iter().map(|s| s.jitter_rfc3550_ns)),
                );
                put(m::IPDV_P50_NS, mean_all(rxs.iter().map(|s| s.ipdv_p50_ns)));
                put(m::IPDV_P99_NS, mean_all(rxs.iter().map(|s| s.ipdv_p99_ns)));
                let drops = sum_all(rxs.iter().map(|s| s.rx_socket_drops));
                let rcvbuf = sum_all(rxs.iter().map(|s| s.rx_host_udp_rcvbuf_errors));
                let in_errors = sum_all(rxs.iter().map(|s| s.rx_host_udp_in_errors));
                // A receiver that took GRO-coalesced buffers counts dropped buffers, not
                // datagrams: only a zero is a datagram count then (see
                // `drop_counts_unavailable`). Whether it dropped at all holds either way.
                let coalesced = rxs.iter().any(|s| s.rx_coalesced);
                let datagrams = |n: Option<u64>| n.filter(|&d| !coalesced || d == 0);
                put(
                    m::RX_SOCKET_DROP_PACKETS,
                    datagrams(drops).map(|d| d as f64),
                );
                put(
                    m::HOST_UDP_RCVBUF_ERROR_PACKETS,
                    datagrams(rcvbuf).map(|d| d as f64),
                );
                put(
                    m::HOST_UDP_IN_ERROR_PACKETS,
                    datagrams(in_errors).map(|d| d as f64),
                );
                // One receiver that dropped makes the run receiver-limited; "no" needs
                // every receiver's word.
                let limited: Vec<Option<f64>> = rxs
                    .iter()
                    .map(|s| receiver_limited(s.rx_socket_drops, s.rx_host_udp_rcvbuf_errors))
                    .collect();
                put(
                    m::RECEIVER_LIMITED,
                    if limited.contains(&Some(1.0)) {
                        Some(1.0)
                    } else {
                        mean_all(limited.into_iter()).map(|_| 0.0)
                    },
                );
                if let Some(c) = self.clock.as_ref().filter(|c| c.uncertainty_ns > 0) {
                    put(m::CLOCK_OFFSET_NS, Some(c.offset_ns as f64));
                    put(
                        m::CLOCK_OFFSET_UNCERTAINTY_NS,
                        Some(c.uncertainty_ns as f64),
                    );
                }
                if let Ok(d) = self.one_way_delay() {
                    put(m::OWD_MIN_NS, Some(d.min_ns));
                    put(m::OWD_MEAN_NS, Some(d.mean_ns));
                    put(m::OWD_MAX_NS, Some(d.max_ns));
                }
            }
        }
        if let Some(s) = &self.rate_search {
            put(m::RATE_SEARCH_TRIALS, Some(s.trials.len() as f64));
        }
        self.cpu_metrics(&mut put);
        self.quic_metrics(&mut put);
        // A QUIC packet's size is the connection's (its path MTU), not the payload's.
        if spec.kind.is_quic() {
            return out;
        }
        let framing = self.path_framing();
        let (ip, frame) = framing_bytes(spec, &framing.packet_model(spec.family));
        put(m::IP_PACKET_BYTES, Some(f64::from(ip)));
        // Loopback has no Ethernet frame.
        let ethernet = framing.model.link == model::LinkModel::Ethernet;
        put(
            m::ETH_FRAME_BYTES,
            Some(f64::from(frame)).filter(|_| ethernet),
        );
        out
    }

    /// pmtu's figures: the path MTU (absent when nothing was answered), the kernel's,
    /// whether a Packet Too Big came and whether the path is a black hole (absent when
    /// the search could not tell), the probes.
    fn pmtu_metrics(&self, put: &mut impl FnMut(&str, Option<f64>)) {
        let Some(p) = &self.pmtu else {
            return;
        };
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        put(m::PATH_MTU_BYTES, p.path_mtu_bytes.map(f64::from));
        put(
            m::KERNEL_PATH_MTU_BYTES,
            p.kernel_path_mtu_bytes.map(f64::from),
        );
        put(m::PTB_RECEIVED, Some(flag(p.too_big.is_some())));
        put(m::BLACK_HOLE, p.black_hole().map(flag));
        put(m::PMTU_PROBES_SENT, Some(p.probes_sent as f64));
        let c = &self.client;
        put(m::SENT_PACKETS, Some(c.sent_packets as f64));
        put(m::RECV_PACKETS, Some(c.recv_packets as f64));
        let elapsed = c.recv_elapsed_ns.max(c.send_elapsed_ns);
        put(m::DURATION_S, Some(elapsed as f64 / 1e9));
    }

    /// frag's figures: datagrams sent and acknowledged, the share acknowledged and its
    /// Wilson 95 % interval (absent when nothing was sent).
    fn delivery_metrics(&self, put: &mut impl FnMut(&str, Option<f64>)) {
        let c = &self.client;
        let (sent, delivered) = (c.sent_packets, self.transactions.min(c.sent_packets));
        put(m::SENT_PACKETS, Some(sent as f64));
        put(m::RECV_PACKETS, Some(delivered as f64));
        put(
            m::DURATION_S,
            Some(c.recv_elapsed_ns.max(c.send_elapsed_ns) as f64 / 1e9),
        );
        put(
            m::DELIVERED_PCT,
            (sent > 0).then(|| 100.0 * delivered as f64 / sent as f64),
        );
        if let Some((lo, hi)) = stats::wilson_interval(delivered, sent, 0.95) {
            put(m::DELIVERED_CI_LOW_PCT, Some(100.0 * lo));
            put(m::DELIVERED_CI_HIGH_PCT, Some(100.0 * hi));
        }
    }

    /// ext-headers' figures: per datagram kind (stream 0 plain, 1 Destination Options,
    /// 2 Hop-by-Hop), the share acknowledged and its Wilson 95 % interval; a kind that
    /// was not sent (IPv4, no CAP_NET_RAW) is absent and `ext_headers` in the applied
    /// settings says why.
    fn ext_header_metrics(&self, put: &mut impl FnMut(&str, Option<f64>)) {
        for st in &self.client.streams {
            let Some([pct, lo, hi]) = m::EXT_HEADER_DELIVERY.get(usize::from(st.stream_id)) else {
                continue;
            };
            let (sent, delivered) = (st.sent_packets, st.recv_packets.min(st.sent_packets));
            put(
                pct,
                (sent > 0).then(|| 100.0 * delivered as f64 / sent as f64),
            );
            if let Some((l, h)) = stats::wilson_interval(delivered, sent, 0.95) {
                put(lo, Some(100.0 * l));
                put(hi, Some(100.0 * h));
            }
        }
        let c = &self.client;
        put(m::SENT_PACKETS, Some(c.sent_packets as f64));
        put(m::RECV_PACKETS, Some(self.transactions as f64));
    }

    /// A QUIC test's connection figures: each end's view, the bulk sender's where one
    /// end's matters (congestion window, datagrams per send).
    fn quic_metrics(&self, put: &mut impl FnMut(&str, Option<f64>)) {
        let (Some(c), Some(s)) = (&self.client.quic, &self.server.quic) else {
            return;
        };
        let sender = if self.spec.direction == Direction::Reverse && !self.spec.kind.is_rr() {
            s
        } else {
            c
        };
        put(m::QUIC_HANDSHAKE_NS, Some(c.handshake_ns as f64));
        put(m::QUIC_SRTT_LOCAL_NS, Some(c.smoothed_rtt_ns as f64));
        put(m::QUIC_SRTT_REMOTE_NS, Some(s.smoothed_rtt_ns as f64));
        put(m::QUIC_CWND_BYTES, Some(sender.cwnd_bytes as f64));
        put(
            m::QUIC_LOST_PACKETS,
            Some(c.lost_packets.saturating_add(s.lost_packets) as f64),
        );
        put(m::QUIC_PATH_MTU_BYTES, Some(f64::from(c.path_mtu_bytes)));
        put(
            m::QUIC_GSO_SEGMENTS_PER_SEND,
            (sender.udp_tx_calls > 0)
                .then(|| sender.udp_tx_datagrams as f64 / sender.udp_tx_calls as f64),
        );
    }

    fn cpu_metrics(&self, put: &mut impl FnMut(&str, Option<f64>)) {
        let rr = self.spec.kind.is_rr();
        let moved_bytes = if rr {
            0
        } else {
            self.client
                .recv_bytes
                .saturating_add(self.server.recv_bytes)
        };
        // Service demand: this side's dualperf process CPU (user + system), not the
        // host's busy time (which counts every other process too), per KB of payload
        // received or per transaction: the definition the iperf3 peer's figures follow.
        let demand = |c: &CpuStats| {
            if rr {
                measure::service_demand_us_per_transaction(c.proc_cpu_ns as f64, self.transactions)
            } else {
                measure::service_demand_us_per_kb(c.proc_cpu_ns as f64, moved_bytes)
            }
        };
        if let Some(c) = &self.client.cpu {
            put(m::CPU_LOCAL_PCT, Some(c.system_busy_pct));
            put(m::CPU_LOCAL_BUSIEST_CORE_PCT, Some(c.busiest_core_pct));
            put(m::PROC_LOCAL_PCT, Some(c.proc_pct));
            put(m::SERVICE_DEMAND_LOCAL_US, demand(c));
        }
        if let Some(c) = &self.server.cpu {
            put(m::CPU_REMOTE_PCT, Some(c.system_busy_pct));
            put(m::CPU_REMOTE_BUSIEST_CORE_PCT, Some(c.busiest_core_pct));
            put(m::PROC_REMOTE_PCT, Some(c.proc_pct));
            put(m::SERVICE_DEMAND_REMOTE_US, demand(c));
        }
    }

    /// Why jitter and IPDV are missing although datagrams arrived (UDP stream), from
    /// the receiving side(s).
    pub fn jitter_unavailable(&self) -> Option<&str> {
        if self.spec.kind != wire::spec::TestKind::UdpStream {
            return None;
        }
        let sides = self.receiving_sides();
        sides
            .into_iter()
            .find_map(|s| s.jitter_unavailable.as_deref())
    }

    /// Why the receiving socket's drop count (and the host's UDP error counters) are not
    /// shown as datagrams: the receiver took GRO-coalesced buffers and dropped some, so
    /// the counters hold buffers of up to 64 datagrams each. `None` when they are
    /// datagram counts (or zero).
    pub fn drop_counts_unavailable(&self) -> Option<String> {
        if self.spec.kind != wire::spec::TestKind::UdpStream {
            return None;
        }
        if self.spec.direction == Direction::Bidir {
            let lacks = |s: &SideStats| s.rx_socket_drops.is_none();
            let who = match (lacks(&self.client), lacks(&self.server)) {
                (true, false) => Some("client"),
                (false, true) => Some("server"),
                _ => None,
            };
            if let Some(who) = who {
                return Some(format!(
                    "the {who}'s receiving socket keeps no drop count (its OS has none), so \
                     the total over both directions is unknown"
                ));
            }
        }
        let sides = self.receiving_sides();
        if !sides.iter().any(|s| s.rx_coalesced) {
            return None;
        }
        let buffers = sum_all(sides.iter().map(|s| s.rx_socket_drops));
        let host = sum_all(sides.iter().map(|s| s.rx_host_udp_rcvbuf_errors));
        let counted = match (buffers, host) {
            (Some(b), _) if b > 0 => format!("the receiving socket dropped {b} of them"),
            (_, Some(h)) if h > 0 => format!("the host's RcvbufErrors grew by {h}"),
            _ => return None,
        };
        Some(format!(
            "the receiver took datagrams coalesced by GRO into buffers of up to 64 and \
             {counted}, a count of buffers, not datagrams; the RFC 4737 loss above counts \
             the datagrams (use --udp-datapath batched for a receiver without GRO)"
        ))
    }

    /// One-way delay of a forward or reverse UDP stream on the client's clock, or why
    /// there is none (the reason is shown instead of a number).
    pub fn one_way_delay(&self) -> Result<OneWayDelay, NoOneWayDelay> {
        if self.spec.kind != wire::spec::TestKind::UdpStream {
            return Err(NoOneWayDelay::NotUdpStream);
        }
        if self.spec.direction == Direction::Bidir {
            return Err(NoOneWayDelay::Bidir);
        }
        let Some(clock) = &self.clock else {
            return Err(match &self.clock_unavailable {
                Some(why) => NoOneWayDelay::NoClockOffset(why.clone()),
                None => NoOneWayDelay::NoClockQueries,
            });
        };
        // An estimate's bound is at least 1 µs; 0 is no bound (a result made before the
        // same-host shortcut went, or by hand): no figure rather than an exact one.
        if clock.uncertainty_ns == 0 {
            return Err(NoOneWayDelay::NoClockOffset(
                "the clock offset came with no bound on its error".into(),
            ));
        }
        let (_, rx) = self.sender_receiver();
        let (Some(min), Some(mean), Some(max)) =
            (rx.transit_min_ns, rx.transit_mean_ns, rx.transit_max_ns)
        else {
            return Err(NoOneWayDelay::NoTransit(self.jitter_unavailable().map_or(
                "no datagram arrived with its own send stamp".into(),
                |why| why.replace("jitter and IPDV", "one-way delay"),
            )));
        };
        let (Some(c0), Some(s0)) = (self.client.realtime_at_go_ns, self.server.realtime_at_go_ns)
        else {
            return Err(NoOneWayDelay::NoOrigin);
        };
        // The server's origin on the client's clock, minus the client's origin.
        let server_minus_client = s0 as f64 - clock.offset_ns as f64 - c0 as f64;
        let shift = match self.spec.direction {
            Direction::Reverse => -server_minus_client,
            _ => server_minus_client,
        };
        let d = OneWayDelay {
            min_ns: min as f64 + shift,
            mean_ns: mean + shift,
            max_ns: max as f64 + shift,
            uncertainty_ns: clock.uncertainty_ns as f64,
        };
        self.owd_check(&d, clock)?;
        Ok(d)
    }

    /// The clock checks a one-way delay must pass to be shown.
    fn owd_check(
        &self,
        d: &OneWayDelay,
        clock: &measure::ClockOffset,
    ) -> Result<(), NoOneWayDelay> {
        let u = d.uncertainty_ns;
        if d.min_ns < -u - 1_000.0 {
            return Err(NoOneWayDelay::ClocksDisagree {
                min_us: d.min_ns / 1e3,
                bound_us: u / 1e3,
            });
        }
        if u > d.mean_ns / 2.0 {
            return Err(NoOneWayDelay::OffsetTooUncertain {
                bound_us: u / 1e3,
                method: clock.method.clone(),
                mean_us: d.mean_ns / 1e3,
            });
        }
        Ok(())
    }

    /// Per-window statistics (`--window`), sender and receiver joined: loss by send
    /// window, goodput, and — where the datapath and the clocks allow (as for the whole
    /// run's jitter and one-way delay) — jitter and one-way delay.
    pub fn windows(&self) -> Vec<WindowRow> {
        let Some(width) = self.spec.window_ns.filter(|w| *w > 0) else {
            return Vec::new();
        };
        let (tx, rx) = self.sender_receiver();
        let timing_ok = rx.jitter_unavailable.is_none();
        // The same conversion as the run's one-way delay: transit + shift.
        let shift = self
            .one_way_delay()
            .ok()
            .zip(rx.transit_mean_ns)
            .map(|(d, t)| d.mean_ns - t);
        measure::window::join(&tx.windows, &rx.windows)
            .into_iter()
            .map(|w| {
                let lost = measure::lost_packets(w.sent_packets, w.recv_packets);
                let got = w.recv_packets > 0;
                WindowRow {
                    index: w.index,
                    start_s: f64::from(w.index) * width as f64 / 1e9,
                    sent_packets: w.sent_packets,
                    recv_packets: w.recv_packets,
                    lost_packets: lost,
                    loss_pct: measure::loss_pct(w.sent_packets, w.recv_packets),
                    bitrate_bps: w.recv_bytes as f64 * 8.0 / (width as f64 / 1e9),
                    jitter_ns: (timing_ok && got).then_some(w.jitter_ns),
                    owd_mean_ns: shift
                        .filter(|_| got)
                        .map(|s| w.transit_sum_ns as f64 / w.recv_packets as f64 + s),
                    owd_max_ns: shift.filter(|_| got).map(|s| w.transit_max_ns as f64 + s),
                }
            })
            .collect()
    }

    /// One metric's value, if measured.
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics()
            .into_iter()
            .find(|x| x.name == name)
            .map(|x| x.value)
    }
}

/// The receiver-limited rule (see `wire::metrics::RECEIVER_LIMITED`): 1.0 when the
/// receiving socket dropped datagrams, or — only where the socket cannot say — the
/// host's RcvbufErrors grew; `None` when neither is known.
pub(crate) fn receiver_limited(socket_drops: Option<u64>, host_rcvbuf: Option<u64>) -> Option<f64> {
    let limited = match (socket_drops, host_rcvbuf) {
        (Some(d), _) => d > 0,
        (None, Some(h)) => h > 0,
        (None, None) => return None,
    };
    Some(if limited { 1.0 } else { 0.0 })
}

/// Sum of the values, saturating; `None` when any is unknown (or there are none).
fn sum_all(vals: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    vals.collect::<Option<Vec<u64>>>()?
        .into_iter()
        .reduce(|a, b| a.saturating_add(b))
}

/// Mean of the values; `None` when any is unknown (or there are none).
fn mean_all(vals: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v = vals.collect::<Option<Vec<f64>>>()?;
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::spec::{Family, TestKind};

    fn side(sent: u64, recv: u64, elapsed_ns: u64) -> SideStats {
        SideStats {
            sent_bytes: sent * 100,
            sent_packets: sent,
            recv_bytes: recv * 100,
            recv_packets: recv,
            send_elapsed_ns: elapsed_ns,
            recv_elapsed_ns: elapsed_ns,
            ..SideStats::default()
        }
    }

    fn result(kind: TestKind, dir: Direction, client: SideStats, server: SideStats) -> RunResult {
        let mut spec = TestSpec::new(kind, Family::V6, 100);
        spec.direction = dir;
        // The fixtures' senders run 1 s.
        spec.bound = wire::spec::Bound::DurationNs(1_000_000_000);
        RunResult::from_sides(spec, client, server)
    }

    /// Each reason there is no one-way delay reads as the text users saw before it was
    /// typed.
    #[test]
    fn a_missing_one_way_delay_says_why_in_the_same_words() {
        let why = |r: &RunResult| r.one_way_delay().unwrap_err().to_string();
        let side = SideStats {
            realtime_at_go_ns: Some(1_000_000_000),
            ..SideStats::default()
        };
        let rx = SideStats {
            transit_min_ns: Some(80_000),
            transit_mean_ns: Some(100_000.0),
            transit_max_ns: Some(150_000),
            ..side.clone()
        };
        let tcp = result(
            TestKind::TcpStream,
            Direction::Forward,
            side.clone(),
            rx.clone(),
        );
        assert_eq!(why(&tcp), "one-way delay is measured on UDP streams");
        let mut r = result(TestKind::UdpStream, Direction::Forward, side.clone(), rx);
        assert_eq!(
            why(&r),
            "the server does not answer clock queries (an older dualperf): its clock's offset is unknown"
        );
        r.clock = Some(measure::ClockOffset {
            offset_ns: 0,
            uncertainty_ns: 60_000,
            method: "NTP-style".into(),
            rejected_exchanges: 0,
        });
        assert_eq!(
            why(&r),
            "the clocks' offset is known only to ±60.0 µs (NTP-style), more than half the mean \
             delay of about 100.0 µs: synchronise the hosts' clocks (PTP) for this figure"
        );
        r.clock.as_mut().unwrap().uncertainty_ns = 10_000;
        let d = r.one_way_delay().unwrap();
        assert_eq!((d.min_ns, d.mean_ns), (80_000.0, 100_000.0));
        // The server's origin 200 µs early on the client's clock: transit 80 µs → −120 µs.
        r.server.realtime_at_go_ns = Some(1_000_000_000 - 200_000);
        assert_eq!(
            why(&r),
            "the clocks disagree: the smallest one-way delay came out at -120.0 µs, below the \
             offset's own bound of ±10.0 µs (a clock was stepped or drifts)"
        );
        r.spec.direction = Direction::Bidir;
        assert_eq!(why(&r), "not measured for --bidir (two directions at once)");
    }

    #[test]
    fn stream_rows_share_the_total_and_a_starved_stream_is_named() {
        let with_streams = |side: &mut SideStats, sent: bool, bytes: &[u64]| {
            side.streams = bytes
                .iter()
                .enumerate()
                .map(|(i, &b)| wire::proto::StreamStats {
                    stream_id: i as u16,
                    sent_bytes: if sent { b } else { 0 },
                    recv_bytes: if sent { 0 } else { b },
                    ..Default::default()
                })
                .collect();
        };
        let bytes = [500_000u64, 480_000, 20_000];
        let total: u64 = bytes.iter().sum();
        let mut c = side(total, 0, 1_000_000_000);
        let mut s = side(0, total, 1_000_000_000);
        with_streams(&mut c, true, &bytes);
        with_streams(&mut s, false, &bytes);
        let r = result(TestKind::TcpStream, Direction::Forward, c, s);
        let rows = r.stream_rows();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[2].sent_bytes, 20_000);
        assert_eq!(rows[2].recv_bytes, 20_000);
        assert!((rows[0].share_pct - 50.0).abs() < 1e-9);
        assert!((rows[0].throughput_bps - 4e6).abs() < 1e-6, "{:?}", rows[0]);
        // 20 000 of an equal share of 333 333 bytes is 6 %: starved; 480 000 is not.
        let starved = r.starved_streams();
        assert_eq!(starved.len(), 1, "{starved:?}");
        assert!(starved[0].starts_with("stream 2 starved"), "{starved:?}");
        assert!(starved[0].contains("6.0 %"), "{starved:?}");
        // At exactly 10 % of an equal share a stream is not starved.
        let mut c = side(0, 0, 1_000_000_000);
        let mut s = side(0, 0, 1_000_000_000);
        with_streams(&mut c, true, &[1_000, 100]);
        with_streams(&mut s, false, &[1_900, 100]);
        let r = result(TestKind::TcpStream, Direction::Forward, c, s);
        assert!(r.starved_streams().is_empty());
        // One stream, or none received: nothing to compare.
        let r = result(
            TestKind::TcpStream,
            Direction::Forward,
            side(1, 0, 1),
            side(0, 1, 1),
        );
        assert!(r.starved_streams().is_empty());
    }

    /// Issue 38: `-s 1000 -b 10k -d 1` sent one datagram and reported "duration 0.007 s"
    /// and 1.17 Mbit/s of goodput and offered rate (a study stored 3.9 and 22.5 Mbit/s).
    #[test]
    fn a_udp_stream_of_too_few_datagrams_has_no_rate_and_lasts_what_was_asked() {
        let one = result(
            TestKind::UdpStream,
            Direction::Forward,
            side(1, 0, 7_000_000),
            side(0, 1, 7_000_000),
        );
        assert_eq!(one.metric(m::DURATION_S), Some(1.0));
        for rate in [
            m::THROUGHPUT_BPS,
            m::SEND_RATE_BPS,
            m::SENT_PPS,
            m::RECV_PPS,
        ] {
            assert_eq!(one.metric(rate), None, "{rate}");
        }
        assert_eq!(one.throughput_bps(), None);
        assert_eq!(
            one.rate_unavailable().as_deref(),
            Some("1 datagram sent: too few for a rate (at least 10); raise --rate or --duration")
        );
        assert_eq!(one.metric(m::SENT_PACKETS), Some(1.0));
        // Enough datagrams, the last sent 0.9 s in: the rate is over the 1 s asked for.
        let ten = result(
            TestKind::UdpStream,
            Direction::Forward,
            side(10, 0, 900_000_000),
            side(0, 10, 900_000_000),
        );
        assert_eq!(ten.rate_unavailable(), None);
        assert_eq!(ten.metric(m::DURATION_S), Some(1.0));
        assert_eq!(ten.metric(m::SEND_RATE_BPS), Some(8_000.0));
        assert_eq!(ten.metric(m::THROUGHPUT_BPS), Some(8_000.0));
    }

    /// A rate search reports its chosen trial: its rates are over the trial's duration,
    /// not over the run's, which spans every trial.
    #[test]
    fn a_rate_searchs_rates_are_over_its_trial_not_the_whole_run() {
        let mut r = result(
            TestKind::UdpStream,
            Direction::Forward,
            side(1000, 1000, 900_000_000),
            side(0, 1000, 900_000_000),
        );
        r.spec.bound = wire::spec::Bound::DurationNs(4_000_000_000);
        r.rate_search = Some(SearchOutcome {
            params: RateSearch {
                loss_threshold_pct: 0.1,
                steps: 3,
            },
            trials: vec![(0.0, 1000.0, 0.0)],
            passed: true,
            trial_duration_ns: Some(1_000_000_000),
        });
        assert_eq!(r.metric(m::SENT_PPS), Some(1000.0));
        assert_eq!(r.metric(m::DURATION_S), Some(1.0));
    }

    #[test]
    fn forward_counts_client_sends_and_server_receives() {
        let r = result(
            TestKind::UdpStream,
            Direction::Forward,
            side(1000, 0, 1_000_000_000),
            side(0, 900, 500_000_000),
        );
        assert_eq!(r.metric(m::SENT_PACKETS), Some(1000.0));
        assert_eq!(r.metric(m::RECV_PACKETS), Some(900.0));
        assert_eq!(r.metric(m::LOST_PACKETS), Some(100.0));
        assert_eq!(r.metric(m::LOSS_PCT), Some(10.0));
        // 90 000 bytes received over the run's one time base: the sender's 1 s span,
        // the longer one (the receiver's own span was 0.5 s); sent 100 000 in it.
        assert_eq!(r.metric(m::THROUGHPUT_BPS), Some(720_000.0));
        assert_eq!(r.metric(m::SEND_RATE_BPS), Some(800_000.0));
        assert_eq!(r.metric(m::RECV_PPS), Some(900.0));
        assert_eq!(r.metric(m::DURATION_S), Some(1.0));
    }

    #[test]
    fn goodput_never_exceeds_the_sending_rate_when_less_arrived_than_was_sent() {
        // The receiver's span is shorter than the sender's (its start came later, by the
        // control message that started it): before one time base, 95 of 100 datagrams
        // received over 0.9 s showed a goodput 5.6 % above the sending rate.
        let r = result(
            TestKind::UdpStream,
            Direction::Forward,
            side(100, 0, 1_000_000_000),
            side(0, 95, 900_000_000),
        );
        let (g, s) = (
            r.metric(m::THROUGHPUT_BPS).unwrap(),
            r.metric(m::SEND_RATE_BPS).unwrap(),
        );
        assert!(g <= s, "{g} > {s}");
        assert_eq!(g / s, 0.95);
    }

    #[test]
    fn reverse_swaps_the_sides_and_bidir_sums_them() {
        let r = result(
            TestKind::UdpStream,
            Direction::Reverse,
            side(0, 40, 1_000_000_000),
            side(50, 0, 1_000_000_000),
        );
        assert_eq!(r.metric(m::SENT_PACKETS), Some(50.0));
        assert_eq!(r.metric(m::RECV_PACKETS), Some(40.0));
        assert_eq!(r.metric(m::LOSS_PCT), Some(20.0));
        let b = result(
            TestKind::TcpStream,
            Direction::Bidir,
            side(10, 20, 1_000_000_000),
            side(20, 10, 1_000_000_000),
        );
        assert_eq!(b.metric(m::SENT_BYTES), Some(3000.0));
        assert_eq!(b.metric(m::RECV_BYTES), Some(3000.0));
        assert_eq!(b.metric(m::THROUGHPUT_BPS), Some(24_000.0));
        assert_eq!(b.metric(m::LOSS_PCT), None, "TCP has no loss metric");
    }

    #[test]
    fn receiver_drops_make_a_run_receiver_limited_and_hook_loss_does_not() {
        let mut rx = side(0, 900, 500_000_000);
        rx.rx_socket_drops = Some(100);
        rx.rx_host_udp_rcvbuf_errors = Some(100);
        rx.rx_host_udp_in_errors = Some(101);
        let r = result(
            TestKind::UdpStream,
            Direction::Forward,
            side(1000, 0, 1_000_000_000),
            rx.clone(),
        );
        assert_eq!(r.metric(m::RX_SOCKET_DROP_PACKETS), Some(100.0));
        assert_eq!(r.metric(m::HOST_UDP_IN_ERROR_PACKETS), Some(101.0));
        assert_eq!(r.metric(m::RECEIVER_LIMITED), Some(1.0));
        // Lost on the path (or by the drop hook): the socket dropped nothing, and other
        // programs' host-wide errors do not mark the run.
        rx.rx_socket_drops = Some(0);
        let r = result(
            TestKind::UdpStream,
            Direction::Forward,
            side(1000, 0, 1_000_000_000),
            rx.clone(),
        );
        assert_eq!(r.metric(m::LOST_PACKETS), Some(100.0));
        assert_eq!(r.metric(m::RECEIVER_LIMITED), Some(0.0));
        // Only where the socket cannot say do host counters decide.
        assert_eq!(receiver_limited(None, Some(3)), Some(1.0));
        assert_eq!(receiver_limited(None, None), None);
        rx.rx_socket_drops = None;
        rx.rx_host_udp_rcvbuf_errors = None;
        let r = result(TestKind::UdpStream, Direction::Forward, side(1, 0, 1), rx);
        assert_eq!(
            r.metric(m::RECEIVER_LIMITED),
            None,
            "unknown is absent, not 0"
        );
    }

    #[test]
    fn a_coalescing_receivers_drop_counts_are_buffers_and_never_shown_as_datagrams() {
        // 1000 sent, 900 received: 100 datagrams lost in 3 dropped GRO buffers.
        let mut rx = side(0, 900, 1_000_000_000);
        rx.rx_coalesced = true;
        rx.rx_socket_drops = Some(3);
        rx.rx_host_udp_rcvbuf_errors = Some(3);
        rx.rx_host_udp_in_errors = Some(4);
        let tx = side(1000, 0, 1_000_000_000);
        let r = result(
            TestKind::UdpStream,
            Direction::Forward,
            tx.clone(),
            rx.clone(),
        );
        assert_eq!(r.metric(m::LOST_PACKETS), Some(100.0));
        for name in [
            m::RX_SOCKET_DROP_PACKETS,
            m::HOST_UDP_RCVBUF_ERROR_PACKETS,
            m::HOST_UDP_IN_ERROR_PACKETS,
        ] {
            assert_eq!(r.metric(name), None, "{name}: buffers are not datagrams");
        }
        assert_eq!(r.metric(m::RECEIVER_LIMITED), Some(1.0));
        let why = r.drop_counts_unavailable().expect("a reason");
        assert!(
            why.contains("dropped 3 of them") && why.contains("GRO"),
            "{why}"
        );
        // Nothing dropped: zero buffers is zero datagrams, shown as such, no reason.
        rx.rx_socket_drops = Some(0);
        rx.rx_host_udp_rcvbuf_errors = Some(0);
        rx.rx_host_udp_in_errors = Some(0);
        let r = result(
            TestKind::UdpStream,
            Direction::Forward,
            tx.clone(),
            rx.clone(),
        );
        assert_eq!(r.metric(m::RX_SOCKET_DROP_PACKETS), Some(0.0));
        assert_eq!(r.metric(m::HOST_UDP_IN_ERROR_PACKETS), Some(0.0));
        assert_eq!(r.metric(m::RECEIVER_LIMITED), Some(0.0));
        assert_eq!(r.drop_counts_unavailable(), None);
        // A receiver without GRO: its counts are datagrams and need no reason.
        rx.rx_coalesced = false;
        rx.rx_socket_drops = Some(100);
        let r = result(TestKind::UdpStream, Direction::Forward, tx, rx);
        assert_eq!(r.metric(m::RX_SOCKET_DROP_PACKETS), Some(100.0));
        assert_eq!(r.drop_counts_unavailable(), None);
    }

    /// --bidir with one receiver that keeps no drop count (macOS, Windows): the total
    /// over both directions is unavailable with the reason, not the other side's count
    /// shown as both's; one receiver that dropped still makes the run receiver-limited.
    #[test]
    fn bidir_figures_need_both_receivers() {
        let mut client = side(1000, 1000, 1_000_000_000);
        let mut server = side(1000, 1000, 1_000_000_000);
        client.rx_socket_drops = Some(0);
        client.jitter_rfc3550_ns = Some(5_000.0);
        server.rx_socket_drops = None;
        server.jitter_rfc3550_ns = None;
        let r = result(
            TestKind::UdpStream,
            Direction::Bidir,
            client.clone(),
            server.clone(),
        );
        assert_eq!(r.metric(m::RX_SOCKET_DROP_PACKETS), None);
        assert_eq!(r.metric(m::RECEIVER_LIMITED), None);
        assert_eq!(r.metric(m::JITTER_RFC3550_NS), None);
        let why = r.drop_counts_unavailable().expect("a reason");
        assert!(why.contains("the server's receiving socket"), "{why}");
        client.rx_socket_drops = Some(7);
        let r = result(
            TestKind::UdpStream,
            Direction::Bidir,
            client.clone(),
            server.clone(),
        );
        assert_eq!(r.metric(m::RECEIVER_LIMITED), Some(1.0));
        // Both known: summed and averaged as before.
        server.rx_socket_drops = Some(2);
        server.jitter_rfc3550_ns = Some(7_000.0);
        let r = result(TestKind::UdpStream, Direction::Bidir, client, server);
        assert_eq!(r.metric(m::RX_SOCKET_DROP_PACKETS), Some(9.0));
        assert_eq!(r.metric(m::JITTER_RFC3550_NS), Some(6_000.0));
        assert_eq!(r.drop_counts_unavailable(), None);
    }

    #[test]
    fn framing_follows_family_and_transport() {
        let eth = OverheadModel::ethernet();
        let framing_bytes = |s: &TestSpec| super::framing_bytes(s, &eth);
        let mut s = TestSpec::new(TestKind::UdpStream, Family::V4, 128);
        assert_eq!(framing_bytes(&s), (156, 174));
        s.family = Family::V6;
        assert_eq!(framing_bytes(&s), (176, 194));
        s.kind = TestKind::TcpRr;
        assert_eq!(
            framing_bytes(&s),
            (128 + 20 + 12 + 40, 128 + 20 + 12 + 40 + 18)
        );
        // Bulk TCP coalesces writes into full-MSS segments: 1500-byte packets.
        s.kind = TestKind::TcpStream;
        assert_eq!(framing_bytes(&s), (1500, 1518));
        // UDP above the MTU: 1500-byte fragments, as the report's overhead model says.
        s.kind = TestKind::UdpStream;
        s.payload_bytes = 4000;
        let c =
            model::overhead::OverheadModel::ethernet().cost(Family::V6, TestKind::UdpStream, 4000);
        assert_eq!(framing_bytes(&s), (c.ip_packet_bytes, c.frame_bytes));
        assert!(c.ip_packet_bytes <= 1500);
        s.kind = TestKind::UdpRr;
        s.payload_bytes = 1;
        s.family = Family::V4;
        assert_eq!(framing_bytes(&s), (29, 64), "Ethernet minimum frame");
    }

    #[test]
    fn loopback_runs_are_framed_as_loopback_at_the_interfaces_mtu() {
        // `run` on loopback printed Ethernet framing at MTU 1500 (IP packet 1500) beside
        // an MSS of 32741.
        let mut r = result(
            TestKind::TcpStream,
            Direction::Forward,
            SideStats::default(),
            SideStats::default(),
        );
        let f = r.path_framing();
        assert!(f.mtu_assumed, "nothing recorded");
        assert_eq!(f.model, OverheadModel::ethernet());
        assert!(
            f.heading().contains("Ethernet, MTU 1500 assumed"),
            "{}",
            f.heading()
        );
        r.client_info.insert("iface.name".into(), "lo".into());
        r.client_info
            .insert("iface.mtu_ipv6".into(), "65536".into());
        r.client
            .applied
            .insert("link.before.kind".into(), "loopback".into());
        let f = r.path_framing();
        assert_eq!(
            (f.model.link, f.model.mtu_bytes, f.mtu_assumed),
            (model::LinkModel::Loopback, 65536, false)
        );
        assert_eq!(f.heading(), "framing (loopback, MTU 65536)");
        assert_eq!(r.metric(m::IP_PACKET_BYTES), Some(65536.0));
        assert_eq!(
            r.metric(m::ETH_FRAME_BYTES),
            None,
            "no Ethernet frame on loopback"
        );
        // The sender's MSS below what the MTU allows: segments of that size.
        r.client.applied.insert("mss_bytes".into(), "32741".into());
        assert_eq!(
            r.path_framing().heading(),
            "framing (loopback, MTU 65536; TCP segments of the sender's MSS, 32741 bytes)"
        );
        assert_eq!(r.metric(m::IP_PACKET_BYTES), Some(32741.0 + 40.0 + 32.0));
        r.client.applied.remove("mss_bytes");
        // A wired interface: Ethernet at its MTU, per family.
        r.client_info.insert("iface.name".into(), "eth0".into());
        r.client
            .applied
            .insert("link.before.kind".into(), "wired".into());
        r.client_info.insert("iface.mtu_ipv6".into(), "9000".into());
        assert_eq!(r.path_framing().heading(), "framing (Ethernet, MTU 9000)");
        assert_eq!(r.metric(m::IP_PACKET_BYTES), Some(9000.0));
        assert_eq!(r.metric(m::ETH_FRAME_BYTES), Some(9018.0));
    }

    #[test]
    fn rr_metrics_come_from_the_client_and_cpu_gives_service_demand() {
        let mut r = result(
            TestKind::UdpRr,
            Direction::Forward,
            side(100, 98, 1_000_000_000),
            side(98, 100, 1_000_000_000),
        );
        r.transactions = 98;
        r.rr_timeouts = 2;
        r.client.cpu = Some(CpuStats {
            proc_cpu_ns: 98_000_000,
            // The host's busy time (others' load included) is not the tool's cost.
            system_busy_ns: 5_000_000_000,
            ..CpuStats::default()
        });
        assert_eq!(r.metric(m::TRANSACTIONS_PER_S), Some(98.0));
        assert_eq!(r.metric(m::RR_TIMEOUTS), Some(2.0));
        // 98 ms of the process's CPU over 98 transactions = 1000 µs each.
        assert_eq!(r.metric(m::SERVICE_DEMAND_LOCAL_US), Some(1000.0));
        assert_eq!(r.metric(m::CPU_REMOTE_PCT), None);
        assert_eq!(
            r.metric(m::RTT_P50_NS),
            None,
            "no RTT histogram, no RTT metric"
        );
    }

    #[test]
    fn a_hostile_servers_numbers_do_not_overflow() {
        let huge = SideStats {
            sent_bytes: u64::MAX,
            sent_packets: u64::MAX,
            recv_bytes: u64::MAX,
            recv_packets: u64::MAX,
            dup_packets: u64::MAX,
            reordered_packets: u64::MAX,
            send_elapsed_ns: 1,
            recv_elapsed_ns: 1,
            ..SideStats::default()
        };
        for dir in [Direction::Forward, Direction::Reverse, Direction::Bidir] {
            let r = result(TestKind::UdpStream, dir, huge.clone(), huge.clone());
            assert!(!r.metrics().is_empty());
        }
    }
}
