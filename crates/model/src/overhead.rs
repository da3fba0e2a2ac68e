//! The header and framing overhead model: for a family, test kind and payload size on a
//! link model, how many IP packets carry one payload, how big each frame is, how many
//! bytes of line time one payload costs, and so the highest goodput a link rate allows.
//!
//! Sizes: IPv4 header 20 bytes (RFC 791), IPv6 40 (RFC 8200), UDP 8 (RFC 768), TCP 20
//! (RFC 9293) + 12 bytes of timestamp option as Linux sends by default (RFC 7323: 10
//! bytes + 2 NOP). Ethernet (IEEE 802.3): 14-byte header, 4-byte FCS, 64-byte minimum
//! frame, 8 bytes of preamble + SFD and a 12-byte inter-frame gap on the line. A
//! tbf-shaped veth counts the L2 frame as the kernel hands it to the qdisc (skb length:
//! 14-byte header, no FCS, preamble or gap). Loopback adds nothing.
//!
//! Bulk TCP coalesces writes into full-MSS segments, so its cost per payload byte does
//! not depend on the write size; UDP and request/response send one payload per packet
//! (UDP payloads larger than the MTU allows become IP fragments). Bulk QUIC
//! ([`QuicFraming`]) coalesces like TCP, into UDP datagrams no larger than its path-MTU
//! discovery reaches.

use serde::{Deserialize, Serialize};
use wire::spec::{Family, TestKind, Transport};

/// TCP timestamp option bytes per segment (RFC 7323 TSopt 10 bytes + 2 NOP padding).
pub const TCP_TIMESTAMP_OPTION_BYTES: u32 = 12;
/// Header bytes of one TCP segment: IP, TCP and the timestamp option (52 for IPv4, 72
/// for IPv6); a segment of MSS bytes makes a packet of MSS + this.
pub fn tcp_header_bytes(family: Family) -> u32 {
    family.ip_header_bytes() + Transport::Tcp.header_bytes() + TCP_TIMESTAMP_OPTION_BYTES
}

/// IPv6 fragment extension header (RFC 8200 §4.5).
const IPV6_FRAGMENT_HEADER_BYTES: u32 = 8;
const ETHERNET_HEADER_BYTES: u32 = 14;
const ETHERNET_FCS_BYTES: u32 = 4;
const ETHERNET_MIN_FRAME_BYTES: u32 = 64;
const ETHERNET_PREAMBLE_SFD_BYTES: u32 = 8;
const ETHERNET_GAP_BYTES: u32 = 12;

/// How the link counts a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkModel {
    /// Ethernet on the line: header, FCS, minimum frame, preamble and gap.
    Ethernet,
    /// Loopback: the IP packet only.
    Loopback,
    /// veth shaped with tbf: the L2 frame incl. the 14-byte header, nothing else.
    TbfVeth,
}

impl LinkModel {
    /// Frame bytes of one IP packet as the link reports a frame (Ethernet incl. FCS
    /// and padding to 64 bytes; tbf incl. the Ethernet header; loopback the packet).
    pub fn frame_bytes(self, ip_packet_bytes: u32) -> u32 {
        match self {
            LinkModel::Ethernet => (ip_packet_bytes + ETHERNET_HEADER_BYTES + ETHERNET_FCS_BYTES)
                .max(ETHERNET_MIN_FRAME_BYTES),
            LinkModel::Loopback => ip_packet_bytes,
            LinkModel::TbfVeth => ip_packet_bytes + ETHERNET_HEADER_BYTES,
        }
    }

    /// Bytes of line time one IP packet occupies (Ethernet adds preamble + gap).
    pub fn line_bytes(self, ip_packet_bytes: u32) -> u32 {
        let frame = self.frame_bytes(ip_packet_bytes);
        match self {
            LinkModel::Ethernet => frame + ETHERNET_PREAMBLE_SFD_BYTES + ETHERNET_GAP_BYTES,
            _ => frame,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LinkModel::Ethernet => "Ethernet",
            LinkModel::Loopback => "loopback",
            LinkModel::TbfVeth => "tbf-shaped veth",
        }
    }
}

/// A link model with its MTU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverheadModel {
    pub link: LinkModel,
    pub mtu_bytes: u32,
}

/// What one payload costs on the link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WireCost {
    pub payload_bytes: u32,
    /// IP packets per payload (fractional for bulk TCP: payload / MSS).
    pub packets_per_payload: f64,
    /// The largest IP packet carrying this payload (first fragment / full segment).
    pub ip_packet_bytes: u32,
    /// That packet's frame as the link counts a frame.
    pub frame_bytes: u32,
    /// Bytes of line time per payload, all packets, framing, preamble and gap included.
    pub line_bytes_per_payload: f64,
}

impl WireCost {
    /// Line bytes per payload byte (≥ 1 except on loopback with no headers; > 1 always
    /// in practice).
    pub fn line_bytes_per_payload_byte(&self) -> f64 {
        self.line_bytes_per_payload / self.payload_bytes as f64
    }

    /// Payload share of the line, payload / line bytes.
    pub fn efficiency(&self) -> f64 {
        self.payload_bytes as f64 / self.line_bytes_per_payload
    }

    /// Highest goodput (payload bits per second) a link of `link_rate_bps` allows.
    pub fn max_goodput_bps(&self, link_rate_bps: f64) -> f64 {
        link_rate_bps * self.efficiency()
    }

    /// Payloads per second at that rate (frames per second for one-packet payloads).
    pub fn payloads_per_s(&self, link_rate_bps: f64) -> f64 {
        link_rate_bps / 8.0 / self.line_bytes_per_payload
    }
}

impl OverheadModel {
    pub fn ethernet() -> OverheadModel {
        OverheadModel {
            link: LinkModel::Ethernet,
            mtu_bytes: 1500,
        }
    }
    pub fn loopback() -> OverheadModel {
        OverheadModel {
            link: LinkModel::Loopback,
            mtu_bytes: 65_536,
        }
    }
    pub fn tbf_veth() -> OverheadModel {
        OverheadModel {
            link: LinkModel::TbfVeth,
            mtu_bytes: 1500,
        }
    }

    /// The bytes a UDP sender puts on the network per payload byte at the IP layer: the
    /// payload with its UDP and IP headers (every fragment's, at the largest IP packet),
    /// whatever the link adds. The factor from a payload bit rate (`--rate`, iperf3's
    /// `-b`) to the rate a server's `--max-rate` bounds.
    pub fn udp_ip_bytes_per_payload_byte(family: Family, payload_bytes: u32) -> f64 {
        OverheadModel::loopback()
            .cost(family, TestKind::UdpStream, payload_bytes)
            .line_bytes_per_payload_byte()
    }

    /// TCP maximum segment size with timestamps: MTU − IP − TCP − 12 (1448 for IPv4 and
    /// 1428 for IPv6 at MTU 1500).
    pub fn mss_bytes(&self, family: Family) -> u32 {
        self.mtu_bytes
            .saturating_sub(tcp_header_bytes(family))
            .max(1)
    }

    /// The cost of one payload of `payload_bytes` for this family and test.
    pub fn cost(&self, family: Family, kind: TestKind, payload_bytes: u32) -> WireCost {
        let payload_bytes = payload_bytes.max(1);
        match kind.transport() {
            Transport::Udp => self.udp_cost(family, payload_bytes),
            Transport::Tcp => self.tcp_cost(family, kind, payload_bytes),
        }
    }

    fn udp_cost(&self, family: Family, payload_bytes: u32) -> WireCost {
        let ip = family.ip_header_bytes();
        let l4_bytes = payload_bytes + Transport::Udp.header_bytes();
        if l4_bytes + ip <= self.mtu_bytes {
            let packet = l4_bytes + ip;
            return WireCost {
                payload_bytes,
                packets_per_payload: 1.0,
                ip_packet_bytes: packet,
                frame_bytes: self.link.frame_bytes(packet),
                line_bytes_per_payload: self.link.line_bytes(packet) as f64,
            };
        }
        // IP fragmentation: every fragment but the last carries a multiple of 8 bytes.
        let per_fragment_header = match family {
            Family::V4 => ip,
            Family::V6 => ip + IPV6_FRAGMENT_HEADER_BYTES,
        };
        let data_per_fragment = (self.mtu_bytes.saturating_sub(per_fragment_header) / 8 * 8).max(8);
        let fragments = l4_bytes.div_ceil(data_per_fragment);
        let last_data = l4_bytes - (fragments - 1) * data_per_fragment;
        let full = data_per_fragment + per_fragment_header;
        let last = last_data + per_fragment_header;
        let line = (fragments - 1) as f64 * self.link.line_bytes(full) as f64
            + self.link.line_bytes(last) as f64;
        WireCost {
            payload_bytes,
            packets_per_payload: fragments as f64,
            ip_packet_bytes: full,
            frame_bytes: self.link.frame_bytes(full),
            line_bytes_per_payload: line,
        }
    }

    fn tcp_cost(&self, family: Family, kind: TestKind, payload_bytes: u32) -> WireCost {
        let headers = tcp_header_bytes(family);
        let mss = self.mss_bytes(family);
        if kind.is_rr() {
            // One request: ⌈payload / MSS⌉ segments, the last one partly filled.
            let segments = payload_bytes.div_ceil(mss);
            let last_data = payload_bytes - (segments - 1) * mss;
            let full = mss.min(payload_bytes) + headers;
            let line = (segments - 1) as f64 * self.link.line_bytes(mss + headers) as f64
                + self.link.line_bytes(last_data + headers) as f64;
            return WireCost {
                payload_bytes,
                packets_per_payload: segments as f64,
                ip_packet_bytes: full,
                frame_bytes: self.link.frame_bytes(full),
                line_bytes_per_payload: line,
            };
        }
        // Bulk: writes coalesce into full-MSS segments.
        let packet = mss + headers;
        let segments = payload_bytes as f64 / mss as f64;
        WireCost {
            payload_bytes,
            packets_per_payload: segments,
            ip_packet_bytes: packet,
            frame_bytes: self.link.frame_bytes(packet),
            line_bytes_per_payload: segments * self.link.line_bytes(packet) as f64,
        }
    }

    /// Expected IPv6/IPv4 goodput ratio when the link is the bottleneck.
    pub fn expected_v6_v4_ratio(&self, kind: TestKind, payload_bytes: u32) -> f64 {
        self.cost(Family::V6, kind, payload_bytes).efficiency()
            / self.cost(Family::V4, kind, payload_bytes).efficiency()
    }
}

/// How QUIC frames bulk stream data in 1-RTT packets: a short header (RFC 9000
/// §17.3.1: 1 flags byte, the destination connection ID, a 1–4 byte packet number), one
/// STREAM frame's header (§19.8: type, stream ID, offset and length varints) and the
/// AEAD tag (RFC 9001 §5.3: 16 bytes for AES-GCM and ChaCha20-Poly1305), in a UDP
/// datagram no larger than the path allows and the sender's DPLPMTUD (RFC 8899) probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuicFraming {
    /// Destination connection ID, 0–20 bytes.
    pub cid_bytes: u32,
    /// Packet number, 1–4 bytes: the sender uses enough for twice the packets in flight.
    pub packet_number_bytes: u32,
    /// STREAM frame header per packet.
    pub stream_frame_bytes: u32,
    /// The largest UDP payload the sender's path-MTU discovery goes up to.
    pub max_udp_payload_bytes: u32,
}

/// QUIC short-header flags byte (RFC 9000 §17.3.1).
const QUIC_FLAGS_BYTES: u32 = 1;
/// AEAD tag of every protected QUIC packet (RFC 9001 §5.3).
pub const QUIC_AEAD_TAG_BYTES: u32 = 16;
/// The smallest UDP payload a QUIC path must carry (RFC 9000 §14): QUIC does not run on
/// a path narrower than this.
pub const QUIC_MIN_UDP_PAYLOAD_BYTES: u32 = 1200;

impl QuicFraming {
    /// quinn's defaults in bulk transfer: 8-byte connection IDs, 2-byte packet numbers
    /// (fewer than 32 768 packets in flight), a STREAM frame of 1 type + 1 stream ID + 8
    /// offset bytes (past 1 GiB) + no length (the last frame of a packet runs to its
    /// end), and DPLPMTUD's upper bound of 1452 bytes (1500 − IPv6 − UDP), the same for
    /// both families.
    pub const QUINN: QuicFraming = QuicFraming {
        cid_bytes: 8,
        packet_number_bytes: 2,
        stream_frame_bytes: 10,
        max_udp_payload_bytes: 1452,
    };

    /// Bytes of one packet that are not stream payload, UDP and IP headers included
    /// (65 for IPv4 and 85 for IPv6 with [`QuicFraming::QUINN`]).
    pub fn overhead_bytes(&self, family: Family) -> u32 {
        QUIC_FLAGS_BYTES
            + self.cid_bytes
            + self.packet_number_bytes
            + self.stream_frame_bytes
            + QUIC_AEAD_TAG_BYTES
            + Transport::Udp.header_bytes()
            + family.ip_header_bytes()
    }
}

impl OverheadModel {
    /// The UDP payload a QUIC sender settles on over this link: the path's
    /// (MTU − IP − UDP) or the sender's probing ceiling, whichever is smaller.
    pub fn quic_udp_payload_bytes(&self, family: Family, framing: &QuicFraming) -> u32 {
        self.mtu_bytes
            .saturating_sub(family.ip_header_bytes() + Transport::Udp.header_bytes())
            .min(framing.max_udp_payload_bytes)
    }

    /// The cost of `payload_bytes` of bulk QUIC stream data: like bulk TCP, writes
    /// coalesce into full packets, so the cost per byte does not depend on the write
    /// size.
    pub fn quic_stream_cost(
        &self,
        family: Family,
        framing: &QuicFraming,
        payload_bytes: u32,
    ) -> WireCost {
        let payload_bytes = payload_bytes.max(1);
        let packet = self.quic_udp_payload_bytes(family, framing)
            + Transport::Udp.header_bytes()
            + family.ip_header_bytes();
        let data_per_packet = packet.saturating_sub(framing.overhead_bytes(family)).max(1);
        let packets = payload_bytes as f64 / data_per_packet as f64;
        WireCost {
            payload_bytes,
            packets_per_payload: packets,
            ip_packet_bytes: packet,
            frame_bytes: self.link.frame_bytes(packet),
            line_bytes_per_payload: packets * self.link.line_bytes(packet) as f64,
        }
    }

    /// Expected IPv6/IPv4 goodput ratio of bulk QUIC when the link is the bottleneck.
    pub fn expected_quic_v6_v4_ratio(&self, framing: &QuicFraming) -> f64 {
        self.quic_stream_cost(Family::V6, framing, 1 << 20)
            .efficiency()
            / self
                .quic_stream_cost(Family::V4, framing, 1 << 20)
                .efficiency()
    }
}

/// How much of a measured IPv4→IPv6 shortfall the headers explain: the expected relative
/// gap (1 − expected ratio) over the measured one (1 − measured ratio). 1.0 = all of it;
/// > 1 = IPv6 did better than the headers predict; None when IPv6 measured no lower.
pub fn header_share_of_gap(expected_v6_v4_ratio: f64, measured_v6_v4_ratio: f64) -> Option<f64> {
    let measured_gap = 1.0 - measured_v6_v4_ratio;
    let expected_gap = 1.0 - expected_v6_v4_ratio;
    if measured_gap.is_nan() || measured_gap <= 0.0 || !expected_gap.is_finite() {
        return None;
    }
    Some(expected_gap / measured_gap)
}

#[cfg(test)]
mod tests;
