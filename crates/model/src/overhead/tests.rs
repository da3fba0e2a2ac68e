//! Hand-worked frames for the overhead model.

use super::*;
use wire::spec::{Family::*, TestKind::*};

fn close(got: f64, want: f64, abs: f64) {
    assert!((got - want).abs() <= abs, "got {got}, want {want}");
}

#[test]
fn udp_1408_over_ipv6_on_ethernet_is_a_1474_byte_frame_and_1494_bytes_of_line() {
    // 1408 payload + 8 UDP + 40 IPv6 + 14 Ethernet + 4 FCS = 1474; + 8 preamble/SFD + 12 gap.
    let c = OverheadModel::ethernet().cost(V6, UdpStream, 1408);
    assert_eq!(c.ip_packet_bytes, 1456);
    assert_eq!(c.frame_bytes, 1474);
    close(c.line_bytes_per_payload, 1494.0, 1e-12);
    close(c.packets_per_payload, 1.0, 0.0);
    close(c.line_bytes_per_payload_byte(), 1494.0 / 1408.0, 1e-12);
}

#[test]
fn tbf_100mbit_goodput_matches_the_peer_baseline_theory_column() {
    // /work/shared/docs/peers-baseline.md §5 "theory Mbit/s (frames/s)": tbf counts the
    // skb incl. 14-byte Ethernet header. UDP v4 128: 100e6 · 128 / (128+8+20+14 = 170).
    let m = OverheadModel::tbf_veth();
    let rate = 100e6;
    let cases = [
        (V4, UdpStream, 128, 75.29, 73_529.0),
        (V4, UdpStream, 1408, 97.10, 8_621.0),
        (V6, UdpStream, 128, 67.37, 65_789.0),
        (V6, UdpStream, 1408, 95.78, 8_503.0),
        (V4, TcpStream, 128, 95.64, 8_256.0),
        (V4, TcpStream, 1408, 95.64, 8_256.0),
        (V6, TcpStream, 128, 94.32, 8_256.0),
        (V6, TcpStream, 1408, 94.32, 8_256.0),
    ];
    for (fam, kind, size, mbit, frames_per_s) in cases {
        let c = m.cost(fam, kind, size);
        close(c.max_goodput_bps(rate) / 1e6, mbit, 0.005);
        let fps = c.payloads_per_s(rate) * c.packets_per_payload;
        close(fps, frames_per_s, 1.0);
    }
}

#[test]
fn mss_with_timestamps_at_mtu_1500_and_on_loopback() {
    assert_eq!(OverheadModel::ethernet().mss_bytes(V4), 1448);
    assert_eq!(OverheadModel::ethernet().mss_bytes(V6), 1428);
    assert_eq!(OverheadModel::loopback().mss_bytes(V4), 65_484);
    // Bulk TCP on Ethernet: full 1500-byte packet, 1518 frame, 1538 line per 1448 bytes.
    let c = OverheadModel::ethernet().cost(V4, TcpStream, 128);
    assert_eq!(c.frame_bytes, 1518);
    close(c.line_bytes_per_payload, 128.0 / 1448.0 * 1538.0, 1e-9);
}

#[test]
fn tiny_udp_payload_is_padded_to_the_64_byte_ethernet_minimum() {
    // 10 + 8 + 20 + 18 = 56 → padded to 64, + 20 = 84 bytes of line.
    let c = OverheadModel::ethernet().cost(V4, UdpStream, 10);
    assert_eq!(c.frame_bytes, 64);
    close(c.line_bytes_per_payload, 84.0, 0.0);
}

#[test]
fn large_udp_payloads_fragment() {
    // IPv4, 2000 B: 2008 bytes of UDP in fragments of 1480 → 1500 + 548-byte packets;
    // Ethernet line 1538 + 586 = 2124.
    let c = OverheadModel::ethernet().cost(V4, UdpStream, 2000);
    close(c.packets_per_payload, 2.0, 0.0);
    close(c.line_bytes_per_payload, 2124.0, 0.0);
    // IPv6: 40 + 8 fragment header, 1448 data per fragment → 1496 + 608; 1534 + 646.
    let c = OverheadModel::ethernet().cost(V6, UdpStream, 2000);
    close(c.line_bytes_per_payload, 2180.0, 0.0);
}

#[test]
fn tcp_request_spans_segments() {
    // 3000 B request, MSS 1448: 1448 + 1448 + 104, 52 bytes of headers each:
    // lines 1538 + 1538 + 194 = 3270.
    let c = OverheadModel::ethernet().cost(V4, TcpRr, 3000);
    close(c.packets_per_payload, 3.0, 0.0);
    close(c.line_bytes_per_payload, 3270.0, 0.0);
    let small = OverheadModel::ethernet().cost(V6, TcpRr, 128);
    assert_eq!(small.ip_packet_bytes, 128 + 72);
}

#[test]
fn loopback_adds_no_framing() {
    let c = OverheadModel::loopback().cost(V4, UdpRr, 128);
    assert_eq!(c.frame_bytes, 156);
    close(c.line_bytes_per_payload, 156.0, 0.0);
}

#[test]
fn expected_ratio_and_share_of_gap() {
    // Ethernet UDP 128: v4 line 128+28+38 = 194, v6 214 → 194/214.
    let r = OverheadModel::ethernet().expected_v6_v4_ratio(UdpStream, 128);
    close(r, 194.0 / 214.0, 1e-12);
    close(
        header_share_of_gap(0.9, 0.8).unwrap_or(f64::NAN),
        0.5,
        1e-12,
    );
    assert_eq!(header_share_of_gap(0.9, 1.02), None);
}

#[test]
fn a_tcp_segment_carries_52_or_72_header_bytes_and_the_mss_fills_the_mtu() {
    // 20 IPv4 / 40 IPv6 + 20 TCP + 12 timestamp option.
    assert_eq!(tcp_header_bytes(V4), 52);
    assert_eq!(tcp_header_bytes(V6), 72);
    let m = OverheadModel::ethernet();
    for f in [V4, V6] {
        assert_eq!(m.mss_bytes(f) + tcp_header_bytes(f), m.mtu_bytes);
    }
}

#[test]
fn quic_bulk_packets_carry_1452_byte_datagrams_over_both_families_on_ethernet() {
    let q = QuicFraming::QUINN;
    // 1 flags + 8 CID + 2 PN + 10 STREAM + 16 tag + 8 UDP + IP.
    assert_eq!(q.overhead_bytes(V4), 65);
    assert_eq!(q.overhead_bytes(V6), 85);
    let m = OverheadModel::ethernet();
    assert_eq!(m.quic_udp_payload_bytes(V4, &q), 1452);
    assert_eq!(m.quic_udp_payload_bytes(V6, &q), 1452);
    // IPv4: a 1480-byte packet (quinn probes no higher), 1480 − 65 = 1415 payload
    // bytes; frame 1498, line 1518.
    let c = m.quic_stream_cost(V4, &q, 1415 * 4);
    assert_eq!(c.ip_packet_bytes, 1480);
    assert_eq!(c.frame_bytes, 1498);
    close(c.packets_per_payload, 4.0, 1e-12);
    close(c.line_bytes_per_payload, 4.0 * 1518.0, 1e-9);
    // IPv6: 1500-byte packets carrying 1500 − 85 = 1415 bytes too: the same payload
    // per packet, 20 more bytes of line each.
    let c6 = m.quic_stream_cost(V6, &q, 1415 * 4);
    assert_eq!(c6.ip_packet_bytes, 1500);
    close(c6.line_bytes_per_payload, 4.0 * 1538.0, 1e-9);
    close(m.expected_quic_v6_v4_ratio(&q), 1518.0 / 1538.0, 1e-12);
}

#[test]
fn quic_on_a_1280_byte_path_uses_what_the_path_allows() {
    let q = QuicFraming::QUINN;
    let m = OverheadModel {
        link: LinkModel::Loopback,
        mtu_bytes: 1280,
    };
    // IPv6's minimum MTU: 1280 − 40 − 8 = 1232 bytes of UDP payload, above QUIC's 1200.
    assert_eq!(m.quic_udp_payload_bytes(V6, &q), 1232);
    assert!(m.quic_udp_payload_bytes(V6, &q) >= QUIC_MIN_UDP_PAYLOAD_BYTES);
    let c = m.quic_stream_cost(V6, &q, 1280 - 85);
    assert_eq!(c.ip_packet_bytes, 1280);
    close(c.packets_per_payload, 1.0, 1e-12);
    // Loopback's 64 KiB MTU does not raise QUIC's datagrams past the probing ceiling.
    assert_eq!(
        OverheadModel::loopback().quic_udp_payload_bytes(V4, &q),
        1452
    );
}
