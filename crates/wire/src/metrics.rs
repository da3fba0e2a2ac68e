//! The flat metric vocabulary shared by the engine (which produces it), the study runner
//! and store (which keep it) and the report (which shows it).
//!
//! A run's result flattens to a list of [`Metric`]s: a stable snake_case name, a value
//! and a unit. Names say the unit; every consumer looks metrics up by these constants,
//! never by ad-hoc strings. A metric a test cannot measure is absent, not zero.

use serde::{Deserialize, Serialize};

/// One measured number of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

impl Metric {
    pub fn new(name: &str, value: f64) -> Metric {
        Metric {
            name: name.to_string(),
            value,
            unit: unit_of(name).to_string(),
        }
    }
}

// --- volume and rate (receiver-side goodput is the headline) ---
pub const SENT_BYTES: &str = "sent_bytes";
pub const RECV_BYTES: &str = "recv_bytes";
pub const SENT_PACKETS: &str = "sent_packets";
pub const RECV_PACKETS: &str = "recv_packets";
/// Goodput measured at the receiver, bits of payload per second.
pub const THROUGHPUT_BPS: &str = "throughput_bps";
/// Payload bits per second offered by the sender.
pub const SEND_RATE_BPS: &str = "send_rate_bps";
pub const RECV_PPS: &str = "recv_pps";
pub const SENT_PPS: &str = "sent_pps";
pub const DURATION_S: &str = "duration_s";

// --- UDP delivery (RFC 4737 counts) and delay variation ---
pub const LOST_PACKETS: &str = "lost_packets";
pub const LOSS_PCT: &str = "loss_pct";
pub const DUP_PACKETS: &str = "dup_packets";
pub const REORDERED_PACKETS: &str = "reordered_packets";
/// RFC 3550 §6.4.1 interarrival jitter, final value.
pub const JITTER_RFC3550_NS: &str = "jitter_rfc3550_ns";
/// RFC 5481 IPDV (consecutive-packet delay difference, absolute) percentiles.
pub const IPDV_P50_NS: &str = "ipdv_p50_ns";
pub const IPDV_P99_NS: &str = "ipdv_p99_ns";
/// One-way delay of a UDP stream (forward or reverse): arrival on the receiver's wall
/// clock minus send stamp on the sender's, put on one clock with the estimated offset;
/// present only when that offset is known to within half the mean delay.
pub const OWD_MIN_NS: &str = "owd_min_ns";
pub const OWD_MEAN_NS: &str = "owd_mean_ns";
pub const OWD_MAX_NS: &str = "owd_max_ns";
/// The server's wall clock minus the client's, and the ± bound on its error (0 when
/// both ends read one clock).
pub const CLOCK_OFFSET_NS: &str = "clock_offset_ns";
pub const CLOCK_OFFSET_UNCERTAINTY_NS: &str = "clock_offset_uncertainty_ns";

// --- loss the receiving host caused itself (UDP stream receivers) ---
/// Datagrams the receiving socket dropped because its buffer was full (Linux
/// SO_RXQ_OVFL / SO_MEMINFO of that one socket): part of `lost_packets` that the
/// network did not lose.
pub const RX_SOCKET_DROP_PACKETS: &str = "rx_socket_drop_packets";
/// Growth of the receiving host's UDP `RcvbufErrors` and `InErrors` (/proc/net/snmp +
/// snmp6, IPv4 + IPv6) over the run: system-wide, other programs' datagrams count too.
pub const HOST_UDP_RCVBUF_ERROR_PACKETS: &str = "host_udp_rcvbuf_error_packets";
pub const HOST_UDP_IN_ERROR_PACKETS: &str = "host_udp_in_error_packets";
/// 1 when the run's loss is (at least partly) the receiving host's own: its socket
/// dropped datagrams (or, where the socket cannot say, the host's RcvbufErrors grew).
/// Such a run's loss describes the receiver, not the network; 0 otherwise.
pub const RECEIVER_LIMITED: &str = "receiver_limited";
/// udp-stream as an RFC 2544 throughput search: trials the run made (the other metrics
/// are those of the highest-rate trial within the loss threshold).
pub const RATE_SEARCH_TRIALS: &str = "rate_search_trials";

// --- request/response ---
pub const TRANSACTIONS_PER_S: &str = "transactions_per_s";
pub const TRANSACTIONS: &str = "transactions";
pub const RR_TIMEOUTS: &str = "rr_timeouts";
pub const RTT_MEAN_NS: &str = "rtt_mean_ns";
pub const RTT_STDDEV_NS: &str = "rtt_stddev_ns";
pub const RTT_MIN_NS: &str = "rtt_min_ns";
pub const RTT_P50_NS: &str = "rtt_p50_ns";
pub const RTT_P90_NS: &str = "rtt_p90_ns";
pub const RTT_P99_NS: &str = "rtt_p99_ns";
pub const RTT_P999_NS: &str = "rtt_p999_ns";
pub const RTT_MAX_NS: &str = "rtt_max_ns";

// --- connection setup (tcp-crr: one connection per transaction) ---
/// Connections completed per second: transactions (connect, request, response, the
/// server's close) over the run's duration.
pub const CONNECTIONS_PER_S: &str = "connections_per_s";
/// Connect time: from the socket's creation to the end of the handshake (connect(2)
/// returning), as netperf's TCP_CRR timer starts before the socket.
pub const CONNECT_TIME_MEAN_NS: &str = "connect_time_mean_ns";
pub const CONNECT_TIME_P50_NS: &str = "connect_time_p50_ns";
pub const CONNECT_TIME_P90_NS: &str = "connect_time_p90_ns";
pub const CONNECT_TIME_P99_NS: &str = "connect_time_p99_ns";
/// Transaction time: from the socket's creation to the server's close arriving after
/// the whole response (netperf's TCP_CRR transaction).
pub const TRANSACTION_TIME_MEAN_NS: &str = "transaction_time_mean_ns";
pub const TRANSACTION_TIME_P50_NS: &str = "transaction_time_p50_ns";
pub const TRANSACTION_TIME_P90_NS: &str = "transaction_time_p90_ns";
pub const TRANSACTION_TIME_P99_NS: &str = "transaction_time_p99_ns";

// --- CPU: two different things, never one for the other ---
// The host's state: system-wide busy % of all cores (/proc/stat), every process's load
// included (another program's busy loop shows here).
pub const CPU_LOCAL_PCT: &str = "cpu_local_pct";
pub const CPU_REMOTE_PCT: &str = "cpu_remote_pct";
pub const CPU_LOCAL_BUSIEST_CORE_PCT: &str = "cpu_local_busiest_core_pct";
pub const CPU_REMOTE_BUSIEST_CORE_PCT: &str = "cpu_remote_busiest_core_pct";
/// The tool's own cost: the dualperf (or iperf3) process's user + system time on that
/// side, as % of one core (getrusage).
pub const PROC_LOCAL_PCT: &str = "proc_local_pct";
pub const PROC_REMOTE_PCT: &str = "proc_remote_pct";
/// Netperf's service demand, from the process CPU above: µs of that side's process
/// CPU per KB (1024 bytes) of payload received (streams) or per transaction (RR).
pub const SERVICE_DEMAND_LOCAL_US: &str = "service_demand_local_us";
pub const SERVICE_DEMAND_REMOTE_US: &str = "service_demand_remote_us";

// --- latency under load (rrul): probes on their own flows, idle then beside the load ---
/// Median RTT of the UDP / TCP request/response probes on the idle path.
pub const IDLE_UDP_RTT_P50_NS: &str = "idle_udp_rtt_p50_ns";
pub const IDLE_TCP_RTT_P50_NS: &str = "idle_tcp_rtt_p50_ns";
/// RTT percentiles of the probes while the load streams ran.
pub const LOADED_UDP_RTT_P50_NS: &str = "loaded_udp_rtt_p50_ns";
pub const LOADED_TCP_RTT_P50_NS: &str = "loaded_tcp_rtt_p50_ns";
pub const LOADED_UDP_RTT_P90_NS: &str = "loaded_udp_rtt_p90_ns";
pub const LOADED_TCP_RTT_P90_NS: &str = "loaded_tcp_rtt_p90_ns";
pub const LOADED_UDP_RTT_P99_NS: &str = "loaded_udp_rtt_p99_ns";
pub const LOADED_TCP_RTT_P99_NS: &str = "loaded_tcp_rtt_p99_ns";
/// Loaded median minus idle median of one probe type: the latency the load added.
pub const ADDED_UDP_RTT_P50_NS: &str = "added_udp_rtt_p50_ns";
pub const ADDED_TCP_RTT_P50_NS: &str = "added_tcp_rtt_p50_ns";
/// Round trips per minute (60 s / the TCP probes' 95 % trimmed mean RTT), under load
/// and idle.
pub const RPM_LOADED: &str = "rpm_loaded";
/// The responsiveness draft the RPM figures follow, and how far: their aggregation of
/// probes (the 95 % trimmed mean), not its probe types (TLS, HTTP, on-flow probes).
pub const RPM_REFERENCE: &str = "draft-ietf-ippm-responsiveness-09";
pub const RPM_IDLE: &str = "rpm_idle";
/// Goodput of the load streams at their receivers, client → server and server → client.
pub const UPLOAD_BPS: &str = "upload_bps";
pub const DOWNLOAD_BPS: &str = "download_bps";
/// UDP probes that got no response within the timeout, under load.
pub const LOADED_UDP_PROBE_TIMEOUTS: &str = "loaded_udp_probe_timeouts";
/// UDP probes that got no response within the timeout, on the idle path.
pub const IDLE_UDP_PROBE_TIMEOUTS: &str = "idle_udp_probe_timeouts";
/// Probes sent and answered per phase and probe type: a phase whose probes got no
/// answer (a starved or lossy path) is a measured outcome, 0 answered of N sent, not a
/// missing number.
pub const IDLE_UDP_PROBES_SENT: &str = "idle_udp_probes_sent_count";
pub const IDLE_UDP_PROBES_ANSWERED: &str = "idle_udp_probes_answered_count";
pub const IDLE_TCP_PROBES_SENT: &str = "idle_tcp_probes_sent_count";
pub const IDLE_TCP_PROBES_ANSWERED: &str = "idle_tcp_probes_answered_count";
pub const LOADED_UDP_PROBES_SENT: &str = "loaded_udp_probes_sent_count";
pub const LOADED_UDP_PROBES_ANSWERED: &str = "loaded_udp_probes_answered_count";
pub const LOADED_TCP_PROBES_SENT: &str = "loaded_tcp_probes_sent_count";
pub const LOADED_TCP_PROBES_ANSWERED: &str = "loaded_tcp_probes_answered_count";
/// The metrics of the latency-under-load test only (a wire test has none of them).
pub const LOADED: &[&str] = &[
    IDLE_UDP_RTT_P50_NS,
    IDLE_TCP_RTT_P50_NS,
    LOADED_UDP_RTT_P50_NS,
    LOADED_TCP_RTT_P50_NS,
    LOADED_UDP_RTT_P90_NS,
    LOADED_TCP_RTT_P90_NS,
    LOADED_UDP_RTT_P99_NS,
    LOADED_TCP_RTT_P99_NS,
    ADDED_UDP_RTT_P50_NS,
    ADDED_TCP_RTT_P50_NS,
    RPM_LOADED,
    RPM_IDLE,
    UPLOAD_BPS,
    DOWNLOAD_BPS,
    LOADED_UDP_PROBE_TIMEOUTS,
    IDLE_UDP_PROBE_TIMEOUTS,
    IDLE_UDP_PROBES_SENT,
    IDLE_UDP_PROBES_ANSWERED,
    IDLE_TCP_PROBES_SENT,
    IDLE_TCP_PROBES_ANSWERED,
    LOADED_UDP_PROBES_SENT,
    LOADED_UDP_PROBES_ANSWERED,
    LOADED_TCP_PROBES_SENT,
    LOADED_TCP_PROBES_ANSWERED,
];
/// The quantile ladder a run's RTT distribution is kept as (for CDFs): percent points.
pub const RTT_LADDER_PCT: [u32; 13] = [0, 1, 5, 10, 20, 30, 50, 70, 80, 90, 95, 99, 100];

/// One rung of a probe RTT distribution: `{idle|loaded}_{udp|tcp}_rtt_q{NNN}_ns`, the
/// `pct` percent quantile (0 = min, 100 = max).
pub fn rtt_ladder_name(loaded: bool, udp: bool, pct: u32) -> String {
    format!(
        "{}_{}_rtt_q{pct:03}_ns",
        if loaded { "loaded" } else { "idle" },
        if udp { "udp" } else { "tcp" }
    )
}

// --- path MTU (pmtu) ---
/// The largest IP packet (bytes, IP header included) that crossed the path with
/// don't-fragment set and was acknowledged: the path MTU found by probing.
pub const PATH_MTU_BYTES: &str = "path_mtu_bytes";
/// The path MTU the client's kernel holds for the server after the probes (IP_MTU /
/// IPV6_MTU): lower than the interface's only when a Packet Too Big arrived.
pub const KERNEL_PATH_MTU_BYTES: &str = "kernel_path_mtu_bytes";
/// 1 when an ICMPv6 Packet Too Big / ICMP fragmentation-needed reached the client.
pub const PTB_RECEIVED: &str = "ptb_received";
/// 1 when probes above the path MTU vanished and no Packet Too Big arrived.
pub const BLACK_HOLE: &str = "black_hole";
/// Probe datagrams the search sent (retries included).
pub const PMTU_PROBES_SENT: &str = "pmtu_probes_sent_count";
/// The metrics of the pmtu test.
pub const PMTU: &[&str] = &[
    PATH_MTU_BYTES,
    KERNEL_PATH_MTU_BYTES,
    PTB_RECEIVED,
    BLACK_HOLE,
    PMTU_PROBES_SENT,
];

// --- delivery of datagrams the path may treat specially (frag, ext-headers) ---
/// Datagrams the server acknowledged, % of those sent (each waits for its
/// acknowledgement up to the request timeout).
pub const DELIVERED_PCT: &str = "delivered_pct";
/// The Wilson 95 % interval of that proportion (stats::wilson_interval).
pub const DELIVERED_CI_LOW_PCT: &str = "delivered_ci_low_pct";
pub const DELIVERED_CI_HIGH_PCT: &str = "delivered_ci_high_pct";
/// ext-headers: the same for plain IPv6 datagrams, with a Destination Options header
/// and with a Hop-by-Hop Options header, sent in the same run.
pub const PLAIN_DELIVERED_PCT: &str = "plain_delivered_pct";
pub const PLAIN_DELIVERED_CI_LOW_PCT: &str = "plain_delivered_ci_low_pct";
pub const PLAIN_DELIVERED_CI_HIGH_PCT: &str = "plain_delivered_ci_high_pct";
pub const DEST_OPTS_DELIVERED_PCT: &str = "dest_opts_delivered_pct";
pub const DEST_OPTS_DELIVERED_CI_LOW_PCT: &str = "dest_opts_delivered_ci_low_pct";
pub const DEST_OPTS_DELIVERED_CI_HIGH_PCT: &str = "dest_opts_delivered_ci_high_pct";
pub const HOP_BY_HOP_DELIVERED_PCT: &str = "hop_by_hop_delivered_pct";
pub const HOP_BY_HOP_DELIVERED_CI_LOW_PCT: &str = "hop_by_hop_delivered_ci_low_pct";
pub const HOP_BY_HOP_DELIVERED_CI_HIGH_PCT: &str = "hop_by_hop_delivered_ci_high_pct";
/// The ext-headers datagram kinds by stream id: (share, CI low, CI high).
pub const EXT_HEADER_DELIVERY: [[&str; 3]; 3] = [
    [
        PLAIN_DELIVERED_PCT,
        PLAIN_DELIVERED_CI_LOW_PCT,
        PLAIN_DELIVERED_CI_HIGH_PCT,
    ],
    [
        DEST_OPTS_DELIVERED_PCT,
        DEST_OPTS_DELIVERED_CI_LOW_PCT,
        DEST_OPTS_DELIVERED_CI_HIGH_PCT,
    ],
    [
        HOP_BY_HOP_DELIVERED_PCT,
        HOP_BY_HOP_DELIVERED_CI_LOW_PCT,
        HOP_BY_HOP_DELIVERED_CI_HIGH_PCT,
    ],
];
/// The metrics of the delivery tests.
pub const DELIVERY: &[&str] = &[
    DELIVERED_PCT,
    DELIVERED_CI_LOW_PCT,
    DELIVERED_CI_HIGH_PCT,
    PLAIN_DELIVERED_PCT,
    PLAIN_DELIVERED_CI_LOW_PCT,
    PLAIN_DELIVERED_CI_HIGH_PCT,
    DEST_OPTS_DELIVERED_PCT,
    DEST_OPTS_DELIVERED_CI_LOW_PCT,
    DEST_OPTS_DELIVERED_CI_HIGH_PCT,
    HOP_BY_HOP_DELIVERED_PCT,
    HOP_BY_HOP_DELIVERED_CI_LOW_PCT,
    HOP_BY_HOP_DELIVERED_CI_HIGH_PCT,
];

// --- framing implied by the payload size, family and transport (added by the engine) ---
/// The largest IP packet one payload puts on an Ethernet link of MTU 1500 (the report's
/// header-overhead model): payload + transport header (+ TCP timestamp option) + IP
/// header; bulk TCP sends full-MSS segments, UDP above the MTU full-size fragments.
pub const IP_PACKET_BYTES: &str = "ip_packet_bytes";
/// Ethernet frame size of that packet: + 14-byte header + 4-byte FCS (min 64).
pub const ETH_FRAME_BYTES: &str = "eth_frame_bytes";

// --- QUIC tests (quic-stream, quic-rr): each end's view of its connection ---
/// Client's time from its first Initial packet to the handshake's completion.
pub const QUIC_HANDSHAKE_NS: &str = "quic_handshake_ns";
/// Smoothed RTT (RFC 9002 §5.3) at the end of the test, client's and server's view.
pub const QUIC_SRTT_LOCAL_NS: &str = "quic_srtt_local_ns";
pub const QUIC_SRTT_REMOTE_NS: &str = "quic_srtt_remote_ns";
/// Congestion window of the side that sends the bulk data (the client's in forward,
/// the server's in reverse; rr and bidir: the client's).
pub const QUIC_CWND_BYTES: &str = "quic_cwnd_bytes";
/// Packets declared lost (RFC 9002 §6), both ends together.
pub const QUIC_LOST_PACKETS: &str = "quic_lost_packets";
/// The UDP payload size the connection settled on (DPLPMTUD, RFC 8899), client's view.
pub const QUIC_PATH_MTU_BYTES: &str = "quic_path_mtu_bytes";
/// Datagrams per send system call of the bulk sender (> 1: GSO in use).
pub const QUIC_GSO_SEGMENTS_PER_SEND: &str = "quic_gso_segments_per_send";

/// Every name above, in display order.
pub const ALL: &[&str] = &[
    THROUGHPUT_BPS,
    SEND_RATE_BPS,
    RECV_PPS,
    SENT_PPS,
    SENT_BYTES,
    RECV_BYTES,
    SENT_PACKETS,
    RECV_PACKETS,
    DURATION_S,
    LOST_PACKETS,
    LOSS_PCT,
    DUP_PACKETS,
    REORDERED_PACKETS,
    JITTER_RFC3550_NS,
    IPDV_P50_NS,
    IPDV_P99_NS,
    OWD_MIN_NS,
    OWD_MEAN_NS,
    OWD_MAX_NS,
    CLOCK_OFFSET_NS,
    CLOCK_OFFSET_UNCERTAINTY_NS,
    RX_SOCKET_DROP_PACKETS,
    HOST_UDP_RCVBUF_ERROR_PACKETS,
    HOST_UDP_IN_ERROR_PACKETS,
    RECEIVER_LIMITED,
    RATE_SEARCH_TRIALS,
    TRANSACTIONS_PER_S,
    TRANSACTIONS,
    RR_TIMEOUTS,
    RTT_MEAN_NS,
    RTT_STDDEV_NS,
    RTT_MIN_NS,
    RTT_P50_NS,
    RTT_P90_NS,
    RTT_P99_NS,
    RTT_P999_NS,
    RTT_MAX_NS,
    CPU_LOCAL_PCT,
    CPU_REMOTE_PCT,
    CPU_LOCAL_BUSIEST_CORE_PCT,
    CPU_REMOTE_BUSIEST_CORE_PCT,
    PROC_LOCAL_PCT,
    PROC_REMOTE_PCT,
    SERVICE_DEMAND_LOCAL_US,
    SERVICE_DEMAND_REMOTE_US,
    IDLE_UDP_RTT_P50_NS,
    IDLE_TCP_RTT_P50_NS,
    LOADED_UDP_RTT_P50_NS,
    LOADED_TCP_RTT_P50_NS,
    LOADED_UDP_RTT_P90_NS,
    LOADED_TCP_RTT_P90_NS,
    LOADED_UDP_RTT_P99_NS,
    LOADED_TCP_RTT_P99_NS,
    ADDED_UDP_RTT_P50_NS,
    ADDED_TCP_RTT_P50_NS,
    RPM_LOADED,
    RPM_IDLE,
    UPLOAD_BPS,
    DOWNLOAD_BPS,
    LOADED_UDP_PROBE_TIMEOUTS,
    IDLE_UDP_PROBE_TIMEOUTS,
    IDLE_UDP_PROBES_SENT,
    IDLE_UDP_PROBES_ANSWERED,
    IDLE_TCP_PROBES_SENT,
    IDLE_TCP_PROBES_ANSWERED,
    LOADED_UDP_PROBES_SENT,
    LOADED_UDP_PROBES_ANSWERED,
    LOADED_TCP_PROBES_SENT,
    LOADED_TCP_PROBES_ANSWERED,
    IP_PACKET_BYTES,
    ETH_FRAME_BYTES,
    CONNECTIONS_PER_S,
    CONNECT_TIME_MEAN_NS,
    CONNECT_TIME_P50_NS,
    CONNECT_TIME_P90_NS,
    CONNECT_TIME_P99_NS,
    TRANSACTION_TIME_MEAN_NS,
    TRANSACTION_TIME_P50_NS,
    TRANSACTION_TIME_P90_NS,
    TRANSACTION_TIME_P99_NS,
    PATH_MTU_BYTES,
    KERNEL_PATH_MTU_BYTES,
    PTB_RECEIVED,
    BLACK_HOLE,
    PMTU_PROBES_SENT,
    DELIVERED_PCT,
    DELIVERED_CI_LOW_PCT,
    DELIVERED_CI_HIGH_PCT,
    PLAIN_DELIVERED_PCT,
    PLAIN_DELIVERED_CI_LOW_PCT,
    PLAIN_DELIVERED_CI_HIGH_PCT,
    DEST_OPTS_DELIVERED_PCT,
    DEST_OPTS_DELIVERED_CI_LOW_PCT,
    DEST_OPTS_DELIVERED_CI_HIGH_PCT,
    HOP_BY_HOP_DELIVERED_PCT,
    HOP_BY_HOP_DELIVERED_CI_LOW_PCT,
    HOP_BY_HOP_DELIVERED_CI_HIGH_PCT,
    QUIC_HANDSHAKE_NS,
    QUIC_SRTT_LOCAL_NS,
    QUIC_SRTT_REMOTE_NS,
    QUIC_CWND_BYTES,
    QUIC_LOST_PACKETS,
    QUIC_PATH_MTU_BYTES,
    QUIC_GSO_SEGMENTS_PER_SEND,
];

/// The unit a metric name carries.
pub fn unit_of(name: &str) -> &'static str {
    if name.ends_with("_bps") {
        "bit/s"
    } else if name.ends_with("_pps") {
        "packets/s"
    } else if name.ends_with("_ns") {
        "ns"
    } else if name.ends_with("_pct") {
        "%"
    } else if name.ends_with("_bytes") {
        "bytes"
    } else if name.ends_with("_packets")
        || name.ends_with("_count")
        || name == TRANSACTIONS
        || name == RR_TIMEOUTS
        || name == RATE_SEARCH_TRIALS
        || name == LOADED_UDP_PROBE_TIMEOUTS
        || name == IDLE_UDP_PROBE_TIMEOUTS
    {
        "count"
    } else if name.ends_with("_per_s") {
        "1/s"
    } else if name.ends_with("_per_send") {
        "datagrams"
    } else if name.ends_with("_s") {
        "s"
    } else if name.ends_with("_us") {
        "µs"
    } else if name == RECEIVER_LIMITED || name == PTB_RECEIVED || name == BLACK_HOLE {
        "flag"
    } else if name.starts_with("rpm_") {
        "RPM"
    } else {
        ""
    }
}

/// Whether a larger value of this metric is better (throughput) or worse (RTT, loss, CPU):
/// [`crate::metric_table`]'s answer.
pub fn higher_is_better(name: &str) -> bool {
    crate::metric_table::info(name).is_some_and(|i| i.higher_is_better)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_a_unit() {
        for name in ALL {
            assert!(!unit_of(name).is_empty(), "{name} has no unit");
        }
        assert_eq!(unit_of(RTT_P99_NS), "ns");
        assert_eq!(unit_of(THROUGHPUT_BPS), "bit/s");
        assert_eq!(unit_of(SERVICE_DEMAND_LOCAL_US), "µs");
    }

    #[test]
    fn direction_of_goodness() {
        assert!(higher_is_better(THROUGHPUT_BPS));
        assert!(!higher_is_better(RTT_MEAN_NS));
        assert!(!higher_is_better(LOSS_PCT));
    }
}
