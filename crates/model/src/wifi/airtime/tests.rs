//! The airtime model against published values and hand-worked frames.

use super::*;
use crate::wifi::{Gi, Preamble};
use wire::spec::Family::{V4, V6};

fn within(got: f64, want: f64, rel: f64) {
    assert!(
        ((got - want) / want).abs() <= rel,
        "got {got}, want {want} ± {rel}"
    );
}

/// Gast's assumptions ("802.11 wireless throughput", O'Reilly linuxdevcenter, 2003):
/// DIFS and no backoff, the 802.11 ACK at the data rate, LLC/SNAP, 24-byte MAC header,
/// no security, TCP without options (1460-byte segments in 1500-byte packets), one
/// TCP ack per segment, each in its own access.
fn gast() -> Assumptions {
    Assumptions {
        llc_snap: true,
        ack_rate: AckRate::Data,
        backoff: Backoff::None,
        access: Some(Access::Dcf),
        ampdu: 1,
        amsdu: false,
        security: Security::Open,
        tcp_acks: TcpAcks::Every,
        tcp_timestamps: false,
        mtu_bytes: 1500,
    }
}

fn run(phy: &Phy, a: &Assumptions, family: Family, transport: Transport, size: u32) -> Estimate {
    estimate(phy, a, family, transport, size).unwrap_or_else(|e| panic!("{phy:?}: {e}"))
}

#[test]
fn gast_80211b_11mbit_tcp_479_transactions_and_5_6_mbit() {
    // Gast: 802.11b 11 Mbit/s, long preamble: 479 transactions/s, 5.6 Mbit/s.
    let phy = Phy::Dsss {
        rate_100kbps: 110,
        preamble: Preamble::Long,
    };
    let e = run(&phy, &gast(), V4, Transport::Tcp, 1460);
    assert_eq!(e.app_bytes_per_msdu, 1460);
    within(e.payloads_per_s, 479.0, 0.005);
    within(e.goodput_bps, 5.6e6, 0.005);
}

#[test]
fn gast_80211a_54mbit_tcp_2336_transactions_and_27_3_mbit() {
    // Gast: 802.11a 54 Mbit/s: 2 336 transactions/s, 27.3 Mbit/s.
    let phy = Phy::Ofdm {
        rate_mbps: 54,
        erp: false,
    };
    let e = run(&phy, &gast(), V4, Transport::Tcp, 1460);
    within(e.payloads_per_s, 2336.0, 0.005);
    within(e.goodput_bps, 27.3e6, 0.005);
    // His transaction: 34 + 248 + 16 + 24 + 34 + 32 + 16 + 24 = 428 µs.
    within(e.airtime.total_ns(), 428_000.0, 1e-12);
    within(
        e.airtime.tcp_acks_ns,
        34_000.0 + 32_000.0 + 16_000.0 + 24_000.0,
        1e-12,
    );
}

#[test]
fn udp_on_80211g_54_hand_worked() {
    // Defaults: DCF, mean backoff 7.5 × 9 µs, ACK at 24 Mbit/s, LLC/SNAP, open.
    // Contention: SIFS 10 + 2 × 9 + 67.5 = 95.5 µs.
    // IPv4, 1408 B: MPDU 24 + 8 + 1408 + 8 + 20 + 4 = 1472 B → ⌈(16 + 11 776 + 6) / 216⌉
    // = 55 symbols: 20 + 220 + 6 = 246 µs. ACK: 20 + 2 × 4 + 6 = 34 µs, + SIFS 10.
    // 385.5 µs per datagram.
    let phy = Phy::Ofdm {
        rate_mbps: 54,
        erp: true,
    };
    let a = Assumptions::default();
    let e = run(&phy, &a, V4, Transport::Udp, 1408);
    assert_eq!(e.access, Access::Dcf);
    assert_eq!(e.data_ppdu_ns, 246_000);
    within(e.airtime.contention_ns, 95_500.0, 1e-12);
    within(e.airtime.sifs_ack_ns, 44_000.0, 1e-12);
    within(e.airtime.total_ns(), 385_500.0, 1e-12);
    within(e.goodput_bps, 1408.0 * 8.0 / 385.5e-6, 1e-12);
    within(e.airtime.payload_ns, 1408.0 * 8.0 / 54e6 * 1e9, 1e-12);
    // IPv6: 20 more bytes → 56 symbols, 250 µs, 389.5 µs per datagram.
    let e6 = run(&phy, &a, V6, Transport::Udp, 1408);
    assert_eq!(e6.data_ppdu_ns, 250_000);
    within(e6.goodput_bps, 1408.0 * 8.0 / 389.5e-6, 1e-12);
}

#[test]
fn the_breakdown_adds_up_and_goodput_stays_below_the_phy_rate() {
    let phys = [
        Phy::Dsss {
            rate_100kbps: 20,
            preamble: Preamble::Short,
        },
        Phy::Ofdm {
            rate_mbps: 6,
            erp: false,
        },
        Phy::Ht {
            mcs: 15,
            width_mhz: 40,
            gi: Gi::Short,
            band: Band::Ghz2_4,
        },
        Phy::Vht {
            mcs: 9,
            nss: 2,
            width_mhz: 80,
            gi: Gi::Short,
        },
        Phy::He {
            mcs: 11,
            nss: 2,
            width_mhz: 160,
            gi: crate::wifi::HeGi::Us0_8,
            band: Band::Ghz6,
        },
    ];
    for phy in phys {
        for transport in [Transport::Udp, Transport::Tcp] {
            for size in [1, 128, 1408, 1472] {
                let a = Assumptions::default();
                let e = run(&phy, &a, V4, transport, size);
                let b = e.airtime;
                let parts = [
                    b.contention_ns,
                    b.preamble_headers_ns,
                    b.payload_ns,
                    b.sifs_ack_ns,
                    b.tcp_acks_ns,
                ];
                assert!(
                    parts.iter().all(|p| *p >= 0.0),
                    "{phy:?} {transport} {size}: {b:?}"
                );
                assert!(e.goodput_bps < e.phy_rate_bps, "{phy:?} {transport} {size}");
                let per_payload = e.goodput_bps / e.payloads_per_s / 8.0;
                within(per_payload, f64::from(e.app_bytes_per_msdu), 1e-9);
            }
        }
    }
}

#[test]
fn ht_aggregates_are_capped_by_the_65535_byte_and_5484_us_limits() {
    // 1500-byte packets: MPDU 26 + 8 + 1500 + 4 = 1538, subframe 4 + 1538 padded to 1544:
    // 41 × 1544 + 1542 = 64 846 ≤ 65 535 < 64 846 + 1544.
    let fast = Phy::Ht {
        mcs: 15,
        width_mhz: 40,
        gi: Gi::Short,
        band: Band::Ghz5,
    };
    let a = Assumptions {
        ampdu: 64,
        ..Assumptions::default()
    };
    let e = run(&fast, &a, V4, Transport::Udp, 1472);
    assert_eq!(e.mpdus_per_access, 42);
    let why = e.aggregation_capped_by.unwrap_or_default();
    assert!(why.contains("65535-byte"), "{why}");
    // At 65 Mbit/s the PPDU time binds first: 28 MPDUs (43 230 B) take 36 + 4 ×
    // ⌈(16 + 345 840 + 6) / 260⌉ = 5 360 µs; 29 would take 5 548 µs > 5 484.
    let slow = Phy::Ht {
        mcs: 7,
        width_mhz: 20,
        gi: Gi::Long,
        band: Band::Ghz5,
    };
    let e = run(&slow, &a, V4, Transport::Udp, 1472);
    assert_eq!(e.mpdus_per_access, 28);
    assert_eq!(e.data_ppdu_ns, 5_360_000);
    let why = e.aggregation_capped_by.unwrap_or_default();
    assert!(why.contains("5.484 ms"), "{why}");
    // A Block Ack (32 B at 24 Mbit/s: 3 symbols, 32 µs) answers, + SIFS 16.
    within(e.airtime.sifs_ack_ns, 48_000.0, 1e-12);
    // Aggregation pays: more goodput than one MPDU per access.
    let single = run(&slow, &Assumptions::default(), V4, Transport::Udp, 1472);
    assert!(e.goodput_bps > single.goodput_bps * 1.3);
    // ACK for the single MPDU: 14 B at 24 Mbit/s, 28 µs + 16.
    within(single.airtime.sifs_ack_ns, 44_000.0, 1e-12);
}

#[test]
fn an_amsdu_fills_the_mpdu_and_vht_always_adds_a_delimiter() {
    let phy = Phy::Vht {
        mcs: 9,
        nss: 2,
        width_mhz: 80,
        gi: Gi::Short,
    };
    let a = Assumptions::default();
    let one = run(&phy, &a, V4, Transport::Udp, 1472);
    // A single VHT MPDU still travels as an A-MPDU: 26 + 1508 + 4 + 4-byte delimiter.
    assert_eq!(one.data_ppdu_ns, phy.ppdu_ns(26 + 1508 + 4 + 4));
    let amsdu = run(
        &phy,
        &Assumptions { amsdu: true, ..a },
        V4,
        Transport::Udp,
        1472,
    );
    // 11 454-byte MPDU: 26 + 4 + k subframes of 14 + 1508 padded to 1524 → k = 7.
    assert_eq!(amsdu.msdus_per_mpdu, 7);
    assert!(amsdu.goodput_bps > one.goodput_bps);
}

#[test]
fn delayed_tcp_acks_halve_the_ack_airtime_and_security_adds_bytes() {
    let phy = Phy::Ofdm {
        rate_mbps: 54,
        erp: false,
    };
    let every = run(&phy, &Assumptions::default(), V6, Transport::Tcp, 128);
    let delayed = run(
        &phy,
        &Assumptions {
            tcp_acks: TcpAcks::Delayed,
            ..Assumptions::default()
        },
        V6,
        Transport::Tcp,
        128,
    );
    within(
        delayed.airtime.tcp_acks_ns * 2.0,
        every.airtime.tcp_acks_ns,
        1e-12,
    );
    assert!(delayed.goodput_bps > every.goodput_bps);
    // MSS with timestamps over IPv6: 1500 − 40 − 20 − 12.
    assert_eq!(every.app_bytes_per_msdu, 1428);
    let ccmp = run(
        &phy,
        &Assumptions {
            security: Security::Ccmp,
            ..Assumptions::default()
        },
        V6,
        Transport::Tcp,
        128,
    );
    // 1580 → 1596 bytes of MPDU: ⌈(16 + 12 640 + 6)/216⌉ = 59 vs ⌈(16 + 12 768 + 6)/216⌉ = 60.
    assert_eq!(ccmp.data_ppdu_ns, every.data_ppdu_ns + 4_000);
}

#[test]
fn impossible_requests_are_errors_not_numbers() {
    let g = Phy::Ofdm {
        rate_mbps: 54,
        erp: true,
    };
    let ampdu = Assumptions {
        ampdu: 8,
        ..Assumptions::default()
    };
    let e = estimate(&g, &ampdu, V4, Transport::Udp, 1000);
    assert!(
        matches!(e, Err(AirtimeError::NoAggregation { .. })),
        "{e:?}"
    );
    let e = estimate(&g, &Assumptions::default(), V6, Transport::Udp, 1453);
    match e {
        Err(err @ AirtimeError::AboveMtu { .. }) => {
            assert!(err.to_string().contains("at most 1452 bytes"))
        }
        other => panic!("{other:?}"),
    }
    let jumbo = Assumptions {
        mtu_bytes: 9000,
        ..Assumptions::default()
    };
    match estimate(&g, &jumbo, V4, Transport::Tcp, 100) {
        Err(err @ AirtimeError::MsduTooLarge { .. }) => {
            assert!(err.to_string().contains("--mtu 2296 or less"), "{err}");
        }
        other => panic!("{other:?}"),
    }
    let bad_width = Phy::Vht {
        mcs: 9,
        nss: 1,
        width_mhz: 320,
        gi: Gi::Long,
    };
    let e = estimate(&bad_width, &Assumptions::default(), V4, Transport::Udp, 100);
    assert!(matches!(e, Err(AirtimeError::InvalidPhy(_))), "{e:?}");
    let zero = Assumptions {
        ampdu: 0,
        ..Assumptions::default()
    };
    assert!(estimate(&g, &zero, V4, Transport::Udp, 100).is_err());
}
