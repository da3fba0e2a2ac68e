//! An 802.11 link emulated with tbf: shape at the PHY data rate and charge every packet
//! the airtime it costs beyond its bytes, converted to bytes at that rate (tbf's
//! `overhead`). What the per-packet overhead stands for, per channel access divided
//! over the packets an aggregate carries: contention (AIFS or DIFS and the mean
//! backoff), preamble and PHY headers, the signal extension, SERVICE and tail bits,
//! half a symbol of padding on average, SIFS and the ACK or Block Ack; and the MAC
//! header, security, FCS, LLC/SNAP, A-MPDU delimiter and A-MSDU subframe bytes, less the
//! 14-byte Ethernet header tbf already counts on a veth.
//!
//! What it leaves out is in [`LEAVES_OUT`].

use super::airtime::{estimate, AirtimeError, Assumptions};
use super::{Gi, Phy};
use serde::{Deserialize, Serialize};
use wire::spec::{Family, Transport};

/// What a tbf-emulated 802.11 link does not reproduce.
pub const LEAVES_OUT: &str = "collisions, retries, rate adaptation and the radio; symbol \
     rounding is taken as half a symbol per PPDU on average; each direction is shaped on \
     its own, so TCP acks (and any reverse traffic) do not take airtime from the data as \
     on one shared medium";

/// Bytes tbf counts of a veth frame beyond the IP packet (the Ethernet header).
const VETH_HEADER_BYTES: f64 = 14.0;

/// tbf parameters that emulate an 802.11 link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TbfEmulation {
    /// The PHY data rate, bit/s.
    pub rate_bps: u64,
    /// tbf `overhead`: bytes added to every packet's length.
    pub overhead_bytes: u32,
    /// The fixed airtime per packet that the overhead stands for (with the 802.11
    /// framing bytes beyond the Ethernet header at the PHY rate), ns.
    pub fixed_ns_per_packet: f64,
    /// Packets per channel access the overhead is divided over.
    pub packets_per_access: u32,
}

/// Mean time lost to rounding the data field up to whole symbols: half a symbol
/// (DSSS: half a µs), and with the 400 ns GI of HT/VHT also half of the further
/// rounding of 3.6 µs symbols up to 4 µs units.
pub fn mean_padding_ns(phy: &Phy) -> f64 {
    match *phy {
        Phy::Dsss { .. } => 500.0,
        Phy::He { gi, .. } => (12_800.0 + gi.ns() as f64) / 2.0,
        Phy::Ht { gi: Gi::Short, .. } | Phy::Vht { gi: Gi::Short, .. } => 1_800.0 + 2_000.0,
        _ => 2_000.0,
    }
}

/// The tbf rate and per-packet overhead that emulate `phy` under `a` (sized for
/// full-MTU packets: the A-MPDU length limits are met at the MTU).
pub fn tbf_emulation(phy: &Phy, a: &Assumptions) -> Result<TbfEmulation, AirtimeError> {
    let mtu_payload = a.mtu_bytes.saturating_sub(28).max(1);
    let e = estimate(phy, a, Family::V4, Transport::Udp, mtu_payload)?;
    let rate = e.phy_rate_bps;
    let n = f64::from(e.mpdus_per_access.max(1));
    let k = f64::from(e.msdus_per_mpdu.max(1));
    let aggregated = matches!(phy, Phy::Vht { .. } | Phy::He { .. }) || e.mpdus_per_access > 1;
    let (tail_bits, padding_ns) = (22.0, mean_padding_ns(phy));
    let per_access_ns = e.airtime.contention_ns
        + (phy.preamble_ns() + phy.signal_extension_ns()) as f64
        + tail_bits / rate * 1e9
        + padding_ns
        + e.airtime.sifs_ack_ns;
    let mac = if e.access == super::Access::Dcf {
        24.0
    } else {
        26.0
    };
    let per_mpdu_bytes = mac + a.security.bytes_per_mpdu() as f64 + 4.0
            // Delimiter, and padding to 4 bytes (1.5 on average) but on the last subframe.
            + if aggregated { 4.0 + 1.5 * (n - 1.0) / n } else { 0.0 };
    let llc = if a.llc_snap { 8.0 } else { 0.0 };
    let per_msdu_bytes = llc
        + if k > 1.0 {
            14.0 + 1.5 * (k - 1.0) / k
        } else {
            0.0
        };
    let packets = n * k;
    let fixed_ns = per_access_ns / packets;
    let bytes = fixed_ns * rate / 8e9 + per_mpdu_bytes / k + per_msdu_bytes - VETH_HEADER_BYTES;
    Ok(TbfEmulation {
        rate_bps: rate.round() as u64,
        overhead_bytes: bytes.round().max(0.0) as u32,
        fixed_ns_per_packet: fixed_ns,
        packets_per_access: u32::try_from(e.mpdus_per_access as u64 * e.msdus_per_mpdu as u64)
            .unwrap_or(u32::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wifi::{Band, HeGi};

    /// UDP goodput through tbf: rate × payload / (IP packet + 14 + overhead).
    fn emulated_bps(t: &TbfEmulation, family: Family, payload: u32) -> f64 {
        let frame = f64::from(payload) + 8.0 + f64::from(family.ip_header_bytes()) + 14.0;
        t.rate_bps as f64 * f64::from(payload) / (frame + f64::from(t.overhead_bytes))
    }

    fn cases() -> Vec<(Phy, Assumptions)> {
        vec![
            (
                Phy::Ofdm {
                    rate_mbps: 54,
                    erp: true,
                },
                Assumptions::default(),
            ),
            (
                Phy::Ofdm {
                    rate_mbps: 6,
                    erp: false,
                },
                Assumptions::default(),
            ),
            (
                Phy::Vht {
                    mcs: 9,
                    nss: 2,
                    width_mhz: 80,
                    gi: Gi::Short,
                },
                Assumptions {
                    ampdu: 32,
                    ..Assumptions::default()
                },
            ),
            (
                Phy::He {
                    mcs: 7,
                    nss: 1,
                    width_mhz: 40,
                    gi: HeGi::Us0_8,
                    band: Band::Ghz2_4,
                },
                Assumptions::default(),
            ),
        ]
    }

    #[test]
    fn tbf_time_per_packet_departs_from_the_model_by_symbol_rounding_only() {
        // Exact but for the data field's rounding to whole symbols (the emulation charges
        // the mean; the rounding of one PPDU departs from it by at most as much, spread
        // over the PPDU's packets) and the overhead's rounding to a byte.
        for (phy, a) in cases() {
            let t = tbf_emulation(&phy, &a).unwrap_or_else(|e| panic!("{phy:?}: {e}"));
            for family in [Family::V4, Family::V6] {
                for size in [128, 512, 1408] {
                    let e = estimate(&phy, &a, family, Transport::Udp, size)
                        .unwrap_or_else(|e| panic!("{e}"));
                    let model_ns = 1e9 / e.payloads_per_s;
                    let tbf_ns = f64::from(size) * 8.0 / emulated_bps(&t, family, size) * 1e9;
                    let bound = mean_padding_ns(&phy) / f64::from(t.packets_per_access)
                        + 0.5 * 8.0 / t.rate_bps as f64 * 1e9;
                    assert!(
                        (tbf_ns - model_ns).abs() <= bound + 1e-6,
                        "{phy:?} {family:?} {size}: tbf {tbf_ns} ns, model {model_ns} ns, bound {bound}"
                    );
                }
            }
        }
    }

    #[test]
    fn tbf_goodput_is_within_two_percent_for_80211g_54_and_80211ac() {
        // The targets: 802.11g 54 and one 802.11ac configuration.
        for (phy, a) in cases()
            .into_iter()
            .filter(|(p, ..)| matches!(p, Phy::Vht { .. } | Phy::Ofdm { rate_mbps: 54, .. }))
        {
            let t = tbf_emulation(&phy, &a).unwrap_or_else(|e| panic!("{phy:?}: {e}"));
            for family in [Family::V4, Family::V6] {
                for size in [128, 512, 1408] {
                    let model = estimate(&phy, &a, family, Transport::Udp, size)
                        .unwrap_or_else(|e| panic!("{e}"))
                        .goodput_bps;
                    let tbf = emulated_bps(&t, family, size);
                    let err = (tbf - model) / model;
                    assert!(
                        err.abs() < 0.02,
                        "{phy:?} {family:?} {size}: tbf {tbf}, model {model}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_overhead_of_80211g_54_is_its_fixed_airtime_in_bytes() {
        // DCF: 28 µs DIFS + 67.5 µs mean backoff + 20 µs preamble + 6 µs signal
        // extension + 22 bits + 2 µs mean padding + 10 µs SIFS + 34 µs ACK = 167.907 µs
        // = 1 133.4 bytes at 54 Mbit/s; + 24 + 4 + 8 − 14 framing bytes → 1 155.
        let g = Phy::Ofdm {
            rate_mbps: 54,
            erp: true,
        };
        let t = tbf_emulation(&g, &Assumptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.rate_bps, 54_000_000);
        assert_eq!(t.packets_per_access, 1);
        assert!((t.fixed_ns_per_packet - 167_907.4).abs() < 0.1, "{t:?}");
        assert_eq!(t.overhead_bytes, 1155);
    }
}
