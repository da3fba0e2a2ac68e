//! What each metric of [`crate::metrics`] means to a reader: the one table that `run`'s
//! text summary, the exporter's exposition and the report read (its heading in `run`'s
//! summary, its label, its direction of goodness, the report's short name for it and its
//! Prometheus name and help). The unit is the name's own ([`crate::metrics::unit_of`]).
//!
//! A new metric gets a row here; `every_metric_the_engine_can_emit_has_a_row` fails
//! until it has one.

use crate::metrics::{self as m, unit_of};

/// The heading a metric is listed under in `run`'s text summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Volume,
    Rate,
    DeliveryAndJitter,
    Latency,
    Cpu,
    /// Headed with the path's framing model by `run`.
    Framing,
    /// rrul's figures (`run -t rrul` lays them out on its own).
    LatencyUnderLoad,
    /// pmtu, frag and ext-headers: what the path does to DF probes, fragments and
    /// extension headers.
    PathHealth,
    /// quic-stream and quic-rr: the QUIC connection's own figures.
    Quic,
}

impl Section {
    pub fn heading(self) -> &'static str {
        match self {
            Section::Volume => "volume",
            Section::Rate => "rate",
            Section::DeliveryAndJitter => "delivery and jitter",
            Section::Latency => "latency",
            Section::Cpu => "CPU",
            Section::Framing => "framing",
            Section::LatencyUnderLoad => "latency under load",
            Section::PathHealth => "path health",
            Section::Quic => "QUIC connection",
        }
    }
}

/// A metric's name and help in the exporter's exposition (base units: bytes, seconds,
/// ratios; the exporter converts from the metric's own unit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exposition {
    /// Without the exporter's `dualperf_probe_` prefix: `rtt_mean_seconds`.
    pub name: &'static str,
    pub help: &'static str,
}

/// One metric, described.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricInfo {
    /// The constant of [`crate::metrics`].
    pub name: &'static str,
    pub section: Section,
    /// Human label without a unit suffix (the value carries the unit), naming the
    /// standard behind the number where there is one.
    pub label: &'static str,
    /// The label of a TCP test where it differs: TCP counts messages of the payload size,
    /// not packets (the sender its writes or requests, the receiver bytes ÷ payload).
    pub tcp_label: Option<&'static str>,
    /// The unit as shown where the name's unit alone would mislead: process CPU is "% of
    /// one core", not a share of the host.
    pub unit_shown: Option<&'static str>,
    /// Whether a larger value is better (throughput) or worse (RTT, loss, CPU).
    pub higher_is_better: bool,
    /// The report's short lower-case name for sentences, axes and figure file names
    /// ("throughput" in "TCP throughput", `tcp-throughput.svg`), for the metrics the
    /// report draws.
    pub quantity: Option<&'static str>,
    /// For the metrics a probe exports.
    pub exposition: Option<Exposition>,
}

impl MetricInfo {
    const fn new(name: &'static str, section: Section, label: &'static str) -> MetricInfo {
        MetricInfo {
            name,
            section,
            label,
            tcp_label: None,
            unit_shown: None,
            higher_is_better: false,
            quantity: None,
            exposition: None,
        }
    }

    const fn tcp(mut self, label: &'static str) -> MetricInfo {
        self.tcp_label = Some(label);
        self
    }

    const fn higher_is_better(mut self) -> MetricInfo {
        self.higher_is_better = true;
        self
    }

    const fn shown_in(mut self, unit: &'static str) -> MetricInfo {
        self.unit_shown = Some(unit);
        self
    }

    const fn quantity(mut self, quantity: &'static str) -> MetricInfo {
        self.quantity = Some(quantity);
        self
    }

    const fn exposed(mut self, name: &'static str, help: &'static str) -> MetricInfo {
        self.exposition = Some(Exposition { name, help });
        self
    }

    /// The unit the name carries (`bit/s`, `ns`, `%`, `count`, …).
    pub fn unit(&self) -> &'static str {
        unit_of(self.name)
    }

    /// The unit as a reader sees it: [`Self::unit_shown`], else [`Self::unit`].
    pub fn unit_words(&self) -> &'static str {
        self.unit_shown.unwrap_or_else(|| self.unit())
    }

    /// [`Self::label`], or [`Self::tcp_label`] for a TCP test.
    pub fn label_for(&self, tcp: bool) -> &'static str {
        match self.tcp_label {
            Some(l) if tcp => l,
            _ => self.label,
        }
    }
}

/// The row of `name`, if it is one of [`crate::metrics`]'s.
pub fn info(name: &str) -> Option<&'static MetricInfo> {
    TABLE.iter().find(|i| i.name == name)
}

use Section::*;

const ONE_CORE: &str = "% of one core";

/// Every metric, in the order of [`crate::metrics::ALL`].
pub const TABLE: &[MetricInfo] = &[
    MetricInfo::new(m::THROUGHPUT_BPS, Rate, "goodput at receiver")
        .higher_is_better()
        .quantity("throughput")
        .exposed(
            "throughput_bytes_per_second",
            "Goodput at the receiver, payload bytes per second (Prometheus' base unit; times 8 for bits)",
        ),
    MetricInfo::new(m::SEND_RATE_BPS, Rate, "send rate (offered)")
        .higher_is_better()
        .exposed(
            "send_rate_bytes_per_second",
            "Payload bytes per second the sender offered",
        ),
    MetricInfo::new(m::RECV_PPS, Rate, "packet rate, received")
        .tcp("message rate, received")
        .higher_is_better(),
    MetricInfo::new(m::SENT_PPS, Rate, "packet rate, sent")
        .tcp("message rate, sent")
        .higher_is_better(),
    MetricInfo::new(m::SENT_BYTES, Volume, "bytes sent")
        .exposed("sent_bytes", "Payload bytes sent"),
    MetricInfo::new(m::RECV_BYTES, Volume, "bytes received")
        .exposed("received_bytes", "Payload bytes received"),
    MetricInfo::new(m::SENT_PACKETS, Volume, "packets sent").tcp("messages sent"),
    MetricInfo::new(m::RECV_PACKETS, Volume, "packets received")
        .tcp("messages received (bytes/size)"),
    MetricInfo::new(m::DURATION_S, Volume, "duration").exposed(
        "test_duration_seconds",
        "Length of the test itself (the probe's duration less setup)",
    ),
    MetricInfo::new(m::LOST_PACKETS, DeliveryAndJitter, "lost packets (RFC 4737)"),
    MetricInfo::new(m::LOSS_PCT, DeliveryAndJitter, "loss (RFC 4737)")
        .quantity("loss")
        .exposed(
            "loss_ratio",
            "Datagrams lost (RFC 4737) over datagrams sent",
        ),
    MetricInfo::new(m::DUP_PACKETS, DeliveryAndJitter, "duplicate packets (RFC 4737)"),
    MetricInfo::new(
        m::REORDERED_PACKETS,
        DeliveryAndJitter,
        "reordered packets (RFC 4737)",
    ),
    MetricInfo::new(
        m::JITTER_RFC3550_NS,
        DeliveryAndJitter,
        "jitter (RFC 3550 interarrival)",
    )
    .quantity("jitter")
    .exposed(
        "jitter_seconds",
        "RFC 3550 interarrival jitter at the receiver",
    ),
    MetricInfo::new(m::IPDV_P50_NS, DeliveryAndJitter, "IPDV p50 (RFC 5481)"),
    MetricInfo::new(m::IPDV_P99_NS, DeliveryAndJitter, "IPDV p99 (RFC 5481)"),
    MetricInfo::new(m::OWD_MIN_NS, Latency, "one-way delay min"),
    MetricInfo::new(m::OWD_MEAN_NS, Latency, "one-way delay mean"),
    MetricInfo::new(m::OWD_MAX_NS, Latency, "one-way delay max"),
    MetricInfo::new(m::CLOCK_OFFSET_NS, Latency, "clock offset (server − client)"),
    MetricInfo::new(
        m::CLOCK_OFFSET_UNCERTAINTY_NS,
        Latency,
        "clock offset bound (±)",
    ),
    MetricInfo::new(
        m::RX_SOCKET_DROP_PACKETS,
        DeliveryAndJitter,
        "dropped by receiving socket",
    ),
    MetricInfo::new(
        m::HOST_UDP_RCVBUF_ERROR_PACKETS,
        DeliveryAndJitter,
        "UDP RcvbufErrors, system-wide",
    ),
    MetricInfo::new(
        m::HOST_UDP_IN_ERROR_PACKETS,
        DeliveryAndJitter,
        "UDP InErrors, system-wide",
    ),
    MetricInfo::new(m::RECEIVER_LIMITED, DeliveryAndJitter, "receiver-limited"),
    MetricInfo::new(m::RATE_SEARCH_TRIALS, Volume, "trials (RFC 2544 search)"),
    MetricInfo::new(m::TRANSACTIONS_PER_S, Rate, "transactions/s")
        .higher_is_better()
        .exposed(
            "transactions_per_second",
            "Request/response transactions completed per second",
        ),
    MetricInfo::new(m::TRANSACTIONS, Volume, "transactions"),
    MetricInfo::new(m::RR_TIMEOUTS, Latency, "request timeouts"),
    MetricInfo::new(m::RTT_MEAN_NS, Latency, "RTT mean")
        .quantity("RTT")
        .exposed(
            "rtt_mean_seconds",
            "Mean round-trip time of the transactions",
        ),
    MetricInfo::new(m::RTT_STDDEV_NS, Latency, "RTT standard deviation").exposed(
        "rtt_stddev_seconds",
        "Standard deviation of the round-trip time",
    ),
    MetricInfo::new(m::RTT_MIN_NS, Latency, "RTT min")
        .exposed("rtt_min_seconds", "Shortest round-trip time"),
    MetricInfo::new(m::RTT_P50_NS, Latency, "RTT p50")
        .exposed("rtt_p50_seconds", "Median round-trip time"),
    MetricInfo::new(m::RTT_P90_NS, Latency, "RTT p90").exposed(
        "rtt_p90_seconds",
        "90th percentile of the round-trip time",
    ),
    MetricInfo::new(m::RTT_P99_NS, Latency, "RTT p99").exposed(
        "rtt_p99_seconds",
        "99th percentile of the round-trip time",
    ),
    MetricInfo::new(m::RTT_P999_NS, Latency, "RTT p99.9"),
    MetricInfo::new(m::RTT_MAX_NS, Latency, "RTT max")
        .exposed("rtt_max_seconds", "Longest round-trip time"),
    // Two different CPU figures, never one for the other: the host's busy time (all
    // cores, every process's load included) and the dualperf process's own (user +
    // system, % of one core).
    MetricInfo::new(m::CPU_LOCAL_PCT, Cpu, "CPU, local (system-wide)").quantity("host CPU busy"),
    MetricInfo::new(m::CPU_REMOTE_PCT, Cpu, "CPU, remote (system-wide)"),
    MetricInfo::new(m::CPU_LOCAL_BUSIEST_CORE_PCT, Cpu, "CPU, local busiest core"),
    MetricInfo::new(m::CPU_REMOTE_BUSIEST_CORE_PCT, Cpu, "CPU, remote busiest core"),
    MetricInfo::new(m::PROC_LOCAL_PCT, Cpu, "process CPU, local")
        .shown_in(ONE_CORE)
        .quantity("client process CPU"),
    MetricInfo::new(m::PROC_REMOTE_PCT, Cpu, "process CPU, remote").shown_in(ONE_CORE),
    MetricInfo::new(m::SERVICE_DEMAND_LOCAL_US, Cpu, "service demand, local"),
    MetricInfo::new(m::SERVICE_DEMAND_REMOTE_US, Cpu, "service demand, remote"),
    MetricInfo::new(
        m::IDLE_UDP_RTT_P50_NS,
        LatencyUnderLoad,
        "idle RTT p50, UDP probes",
    ),
    MetricInfo::new(
        m::IDLE_TCP_RTT_P50_NS,
        LatencyUnderLoad,
        "idle RTT p50, TCP probes",
    ),
    // The report draws the loaded median of each probe type under one name (the title
    // adds the transport).
    MetricInfo::new(
        m::LOADED_UDP_RTT_P50_NS,
        LatencyUnderLoad,
        "loaded RTT p50, UDP probes",
    )
    .quantity("RTT under load (p50 of probes)"),
    MetricInfo::new(
        m::LOADED_TCP_RTT_P50_NS,
        LatencyUnderLoad,
        "loaded RTT p50, TCP probes",
    )
    .quantity("RTT under load (p50 of probes)"),
    MetricInfo::new(
        m::LOADED_UDP_RTT_P90_NS,
        LatencyUnderLoad,
        "loaded RTT p90, UDP probes",
    ),
    MetricInfo::new(
        m::LOADED_TCP_RTT_P90_NS,
        LatencyUnderLoad,
        "loaded RTT p90, TCP probes",
    ),
    MetricInfo::new(
        m::LOADED_UDP_RTT_P99_NS,
        LatencyUnderLoad,
        "loaded RTT p99, UDP probes",
    ),
    MetricInfo::new(
        m::LOADED_TCP_RTT_P99_NS,
        LatencyUnderLoad,
        "loaded RTT p99, TCP probes",
    ),
    MetricInfo::new(
        m::ADDED_UDP_RTT_P50_NS,
        LatencyUnderLoad,
        "added latency p50, UDP probes",
    ),
    MetricInfo::new(
        m::ADDED_TCP_RTT_P50_NS,
        LatencyUnderLoad,
        "added latency p50, TCP probes",
    ),
    MetricInfo::new(m::RPM_LOADED, LatencyUnderLoad, "responsiveness under load")
        .higher_is_better()
        .quantity("responsiveness under load"),
    MetricInfo::new(m::RPM_IDLE, LatencyUnderLoad, "responsiveness idle").higher_is_better(),
    MetricInfo::new(m::UPLOAD_BPS, LatencyUnderLoad, "upload goodput under load")
        .higher_is_better()
        .quantity("upload goodput under load"),
    MetricInfo::new(
        m::DOWNLOAD_BPS,
        LatencyUnderLoad,
        "download goodput under load",
    )
    .higher_is_better()
    .quantity("download goodput under load"),
    MetricInfo::new(
        m::LOADED_UDP_PROBE_TIMEOUTS,
        LatencyUnderLoad,
        "UDP probes unanswered under load",
    ),
    MetricInfo::new(
        m::IDLE_UDP_PROBE_TIMEOUTS,
        LatencyUnderLoad,
        "UDP probes unanswered idle",
    ),
    MetricInfo::new(
        m::IDLE_UDP_PROBES_SENT,
        LatencyUnderLoad,
        "UDP probes sent idle",
    ),
    MetricInfo::new(
        m::IDLE_UDP_PROBES_ANSWERED,
        LatencyUnderLoad,
        "UDP probes answered idle",
    ),
    MetricInfo::new(
        m::IDLE_TCP_PROBES_SENT,
        LatencyUnderLoad,
        "TCP probes sent idle",
    ),
    MetricInfo::new(
        m::IDLE_TCP_PROBES_ANSWERED,
        LatencyUnderLoad,
        "TCP probes answered idle",
    ),
    MetricInfo::new(
        m::LOADED_UDP_PROBES_SENT,
        LatencyUnderLoad,
        "UDP probes sent under load",
    ),
    MetricInfo::new(
        m::LOADED_UDP_PROBES_ANSWERED,
        LatencyUnderLoad,
        "UDP probes answered under load",
    ),
    MetricInfo::new(
        m::LOADED_TCP_PROBES_SENT,
        LatencyUnderLoad,
        "TCP probes sent under load",
    ),
    MetricInfo::new(
        m::LOADED_TCP_PROBES_ANSWERED,
        LatencyUnderLoad,
        "TCP probes answered under load",
    ),
    MetricInfo::new(m::IP_PACKET_BYTES, Framing, "IP packet size"),
    MetricInfo::new(m::ETH_FRAME_BYTES, Framing, "Ethernet frame size"),
    // tcp-crr: one connection per transaction (connect, request, response, close).
    MetricInfo::new(m::CONNECTIONS_PER_S, Rate, "connections/s")
        .higher_is_better()
        .quantity("connect rate")
        .exposed(
            "connections_per_second",
            "tcp-crr: connections completed per second (connect, request, response, close)",
        ),
    MetricInfo::new(m::CONNECT_TIME_MEAN_NS, Latency, "connect time mean").exposed(
        "connect_time_mean_seconds",
        "tcp-crr: mean connect time (socket creation to the end of the handshake)",
    ),
    MetricInfo::new(m::CONNECT_TIME_P50_NS, Latency, "connect time p50")
        .quantity("connect time (p50)")
        .exposed("connect_time_p50_seconds", "tcp-crr: median connect time"),
    MetricInfo::new(m::CONNECT_TIME_P90_NS, Latency, "connect time p90")
        .quantity("connect time (p90)")
        .exposed(
            "connect_time_p90_seconds",
            "tcp-crr: 90th percentile of the connect time",
        ),
    MetricInfo::new(m::CONNECT_TIME_P99_NS, Latency, "connect time p99")
        .quantity("connect time (p99)")
        .exposed(
            "connect_time_p99_seconds",
            "tcp-crr: 99th percentile of the connect time",
        ),
    MetricInfo::new(m::TRANSACTION_TIME_MEAN_NS, Latency, "transaction time mean")
        .quantity("connection transaction time")
        .exposed(
            "connection_transaction_time_mean_seconds",
            "tcp-crr: mean time of a whole connection's transaction (socket creation to the server's close)",
        ),
    MetricInfo::new(m::TRANSACTION_TIME_P50_NS, Latency, "transaction time p50"),
    MetricInfo::new(m::TRANSACTION_TIME_P90_NS, Latency, "transaction time p90"),
    MetricInfo::new(m::TRANSACTION_TIME_P99_NS, Latency, "transaction time p99"),
    // pmtu: the path MTU searched with don't-fragment probes.
    MetricInfo::new(m::PATH_MTU_BYTES, PathHealth, "path MTU (probed)")
        .higher_is_better()
        .quantity("path MTU")
        .exposed(
            "path_mtu_bytes",
            "pmtu: the largest IP packet that crossed the path with don't-fragment set",
        ),
    MetricInfo::new(m::KERNEL_PATH_MTU_BYTES, PathHealth, "path MTU the kernel learned"),
    MetricInfo::new(m::PTB_RECEIVED, PathHealth, "Packet Too Big received").exposed(
        "packet_too_big_received",
        "pmtu: 1 when a Packet Too Big / fragmentation-needed reached the client",
    ),
    MetricInfo::new(m::BLACK_HOLE, PathHealth, "black hole").exposed(
        "path_mtu_black_hole",
        "pmtu: 1 when probes above the path MTU vanished and no Packet Too Big arrived",
    ),
    MetricInfo::new(m::PMTU_PROBES_SENT, PathHealth, "probes sent"),
    // frag and ext-headers: datagrams the server acknowledged, with Wilson intervals.
    MetricInfo::new(m::DELIVERED_PCT, PathHealth, "delivered (acknowledged)")
        .higher_is_better()
        .quantity("fragment delivery")
        .exposed(
            "delivered_ratio",
            "frag: share of the datagrams the server acknowledged",
        ),
    MetricInfo::new(
        m::DELIVERED_CI_LOW_PCT,
        PathHealth,
        "delivered, 95 % CI low (Wilson)",
    ),
    MetricInfo::new(
        m::DELIVERED_CI_HIGH_PCT,
        PathHealth,
        "delivered, 95 % CI high (Wilson)",
    ),
    MetricInfo::new(m::PLAIN_DELIVERED_PCT, PathHealth, "plain IPv6 delivered")
        .higher_is_better(),
    MetricInfo::new(m::PLAIN_DELIVERED_CI_LOW_PCT, PathHealth, "plain, 95 % CI low"),
    MetricInfo::new(m::PLAIN_DELIVERED_CI_HIGH_PCT, PathHealth, "plain, 95 % CI high"),
    MetricInfo::new(
        m::DEST_OPTS_DELIVERED_PCT,
        PathHealth,
        "Destination Options delivered",
    )
    .higher_is_better(),
    MetricInfo::new(
        m::DEST_OPTS_DELIVERED_CI_LOW_PCT,
        PathHealth,
        "Destination Options, CI low",
    ),
    MetricInfo::new(
        m::DEST_OPTS_DELIVERED_CI_HIGH_PCT,
        PathHealth,
        "Destination Options, CI high",
    ),
    MetricInfo::new(m::HOP_BY_HOP_DELIVERED_PCT, PathHealth, "Hop-by-Hop delivered")
        .higher_is_better(),
    MetricInfo::new(
        m::HOP_BY_HOP_DELIVERED_CI_LOW_PCT,
        PathHealth,
        "Hop-by-Hop, 95 % CI low",
    ),
    MetricInfo::new(
        m::HOP_BY_HOP_DELIVERED_CI_HIGH_PCT,
        PathHealth,
        "Hop-by-Hop, 95 % CI high",
    ),
    // quic-stream, quic-rr: the connection's figures as quinn keeps them.
    MetricInfo::new(m::QUIC_HANDSHAKE_NS, Quic, "handshake time"),
    MetricInfo::new(m::QUIC_SRTT_LOCAL_NS, Quic, "smoothed RTT, client"),
    MetricInfo::new(m::QUIC_SRTT_REMOTE_NS, Quic, "smoothed RTT, server"),
    MetricInfo::new(m::QUIC_CWND_BYTES, Quic, "congestion window, sender"),
    MetricInfo::new(m::QUIC_LOST_PACKETS, Quic, "lost packets, both ends"),
    MetricInfo::new(m::QUIC_PATH_MTU_BYTES, Quic, "path MTU the connection used"),
    MetricInfo::new(m::QUIC_GSO_SEGMENTS_PER_SEND, Quic, "datagrams per send, sender"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The names `metrics.rs` declares as `pub const NAME: &str`, read from its source,
    /// so that a constant left out of [`m::ALL`] is caught too.
    fn declared_metric_names() -> Vec<String> {
        let src = include_str!("metrics.rs");
        let mut names = Vec::new();
        for line in src.lines() {
            let Some(rest) = line.trim().strip_prefix("pub const ") else {
                continue;
            };
            let Some((_, value)) = rest.split_once(": &str = \"") else {
                continue;
            };
            if let Some(name) = value.strip_suffix("\";") {
                names.push(name.to_string());
            }
        }
        names
    }

    #[test]
    fn every_metric_the_engine_can_emit_has_a_row() {
        let declared = declared_metric_names();
        assert!(declared.len() > 50, "{declared:?}");
        for name in &declared {
            // Not a metric: the responsiveness draft the RPM figures follow.
            if name == m::RPM_REFERENCE {
                continue;
            }
            assert!(
                m::ALL.contains(&name.as_str()),
                "{name} is not in metrics::ALL"
            );
            assert!(
                info(name).is_some(),
                "{name} has no row in metric_table::TABLE"
            );
        }
        // One row each, and no row of a name ALL lacks.
        assert_eq!(TABLE.len(), m::ALL.len());
        for (k, i) in TABLE.iter().enumerate() {
            assert!(
                m::ALL.contains(&i.name),
                "{} is not in metrics::ALL",
                i.name
            );
            assert!(
                TABLE[..k].iter().all(|o| o.name != i.name),
                "{} twice",
                i.name
            );
        }
    }

    #[test]
    fn labels_have_no_unit_suffix_and_fit_runs_column() {
        for i in TABLE {
            for l in [Some(i.label), i.tcp_label, i.quantity]
                .into_iter()
                .flatten()
            {
                for suffix in [
                    "_ns", "_bps", "_pct", "_us", "_s", " ns", " bps", " pct", " us", " s",
                ] {
                    assert!(
                        !l.ends_with(suffix),
                        "label {l:?} of {} ends in {suffix:?}",
                        i.name
                    );
                }
                assert!(!l.contains('_'), "label {l:?} of {}", i.name);
            }
            // `run`'s summary has a 32-character label column.
            for l in [Some(i.label), i.tcp_label].into_iter().flatten() {
                assert!(
                    l.chars().count() <= 32,
                    "label {l:?} of {} is too long",
                    i.name
                );
            }
            assert!(!i.unit().is_empty(), "{} has no unit", i.name);
        }
    }

    #[test]
    fn the_table_keeps_the_direction_of_goodness() {
        for (name, higher) in [
            (m::THROUGHPUT_BPS, true),
            (m::RPM_LOADED, true),
            (m::RTT_MEAN_NS, false),
            (m::LOSS_PCT, false),
            (m::CPU_LOCAL_PCT, false),
        ] {
            assert_eq!(m::higher_is_better(name), higher, "{name}");
        }
        assert!(!m::higher_is_better("not_a_metric"));
        assert_eq!(
            info(m::PROC_LOCAL_PCT).map(|i| i.unit_words()),
            Some("% of one core")
        );
        assert_eq!(info(m::CPU_LOCAL_PCT).map(|i| i.unit_words()), Some("%"));
    }
}
