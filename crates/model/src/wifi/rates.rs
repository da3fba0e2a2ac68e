//! MCS bit rates as Linux reports them: the arithmetic of the kernel's
//! `cfg80211_calculate_bitrate_ht`, `_vht` and `_he` (torvalds/linux
//! `net/wireless/util.c`), which is what `iw dev IF link` and `iw dev IF station dump`
//! print. A link state recorded from nl80211 and the airtime model therefore name the
//! same rate. Results are in units of 100 kbit/s, as the kernel returns them
//! (`iw` prints 1200.9 MBit/s for 12 009).
//!
//! Kernel versions differ and these functions follow the current one:
//! - VHT MCS 9 at 20 MHz (not in the standard for one stream) is 86.7 Mbit/s per
//!   stream; kernels before 2021 used 86.5. VHT MCS 10 and 11 (not in the standard
//!   either) are included as the kernel has them.
//! - HE MCS 6 divides by 11 377; older kernels divided by 11 769 and printed 313.4
//!   instead of 324.2 Mbit/s for one stream at 80 MHz (the standard's 324.3, truncated).
//! - The kernel multiplies by the stream count in 32 bits, which wraps above
//!   4.29 Gbit/s (160 MHz with five streams or more); here the arithmetic is 64-bit.
//!
//! The airtime model does not use these rounded figures: it computes the exact rate
//! from the data bits per OFDM symbol ([`super::phy`]).

use super::{Gi, HeGi};

/// HT MCS 0..=31 (equal modulation): the bit rate in 100 kbit/s that the kernel
/// reports. `width_mhz` is 20 or 40. None for an MCS or width HT does not define.
pub fn ht_kernel_rate_100kbps(mcs: u8, width_mhz: u16, gi: Gi) -> Option<u32> {
    if mcs > 31 {
        return None;
    }
    let base: u64 = match width_mhz {
        20 => 6_500_000,
        40 => 13_500_000,
        _ => return None,
    };
    let modulation = u64::from(mcs & 7);
    let streams = u64::from(mcs >> 3) + 1;
    // Multiples of the BPSK 1/2 rate: 1, 2, 3, 4, 6, 8, 9, 10.
    let factor = match modulation {
        0..=3 => modulation + 1,
        4 => 6,
        _ => modulation + 3,
    };
    let mut bitrate = base * factor * streams;
    if gi == Gi::Short {
        bitrate = bitrate / 9 * 10;
    }
    u32::try_from((bitrate + 50_000) / 100_000).ok()
}

/// Per-stream VHT rates in bit/s at 800 ns GI, by width (20, 40, 80, 160 MHz) and
/// MCS 0..=11, as the kernel tabulates them.
const VHT_BASE_BPS: [[u64; 12]; 4] = [
    [
        6_500_000,
        13_000_000,
        19_500_000,
        26_000_000,
        39_000_000,
        52_000_000,
        58_500_000,
        65_000_000,
        78_000_000,
        86_700_000,
        97_500_000,
        108_300_000,
    ],
    [
        13_500_000,
        27_000_000,
        40_500_000,
        54_000_000,
        81_000_000,
        108_000_000,
        121_500_000,
        135_000_000,
        162_000_000,
        180_000_000,
        202_500_000,
        225_000_000,
    ],
    [
        29_300_000,
        58_500_000,
        87_800_000,
        117_000_000,
        175_500_000,
        234_000_000,
        263_300_000,
        292_500_000,
        351_000_000,
        390_000_000,
        438_800_000,
        487_500_000,
    ],
    [
        58_500_000,
        117_000_000,
        175_500_000,
        234_000_000,
        351_000_000,
        468_000_000,
        526_500_000,
        585_000_000,
        702_000_000,
        780_000_000,
        877_500_000,
        975_000_000,
    ],
];

fn width_index(width_mhz: u16) -> Option<usize> {
    match width_mhz {
        20 => Some(0),
        40 => Some(1),
        80 => Some(2),
        160 => Some(3),
        _ => None,
    }
}

/// VHT MCS 0..=11, 1..=8 streams: the bit rate in 100 kbit/s the kernel reports.
pub fn vht_kernel_rate_100kbps(mcs: u8, nss: u8, width_mhz: u16, gi: Gi) -> Option<u32> {
    if mcs > 11 || !(1..=8).contains(&nss) {
        return None;
    }
    let mut bitrate = VHT_BASE_BPS[width_index(width_mhz)?][usize::from(mcs)] * u64::from(nss);
    if gi == Gi::Short {
        bitrate = bitrate / 9 * 10;
    }
    u32::try_from((bitrate + 50_000) / 100_000).ok()
}

/// The kernel's HE scale and per-MCS divisors (rate of MCS 11 × 6144 / divisor).
const HE_SCALE: u64 = 6144;
const HE_MCS_DIVISORS: [u64; 14] = [
    102_399, 51_201, 34_134, 25_599, 17_067, 12_801, 11_377, 10_239, 8_532, 7_680, 6_828, 6_144,
    5_690, 5_120,
];

/// HE MCS 0..=13, 1..=8 streams, full-width SU (no RU, no DCM): the bit rate in
/// 100 kbit/s the kernel reports.
pub fn he_kernel_rate_100kbps(mcs: u8, nss: u8, width_mhz: u16, gi: HeGi) -> Option<u32> {
    if mcs > 13 || !(1..=8).contains(&nss) {
        return None;
    }
    // MCS 11 rates × 8 streams / 10 per width, for GI 0.8, 1.6 and 3.2 µs.
    let per_gi: [u64; 3] = match width_mhz {
        20 => [114_711_111, 108_333_333, 97_500_000],
        40 => [229_411_111, 216_666_666, 195_000_000],
        80 => [480_388_888, 453_700_000, 408_333_333],
        160 => [960_777_777, 907_400_000, 816_666_666],
        _ => return None,
    };
    let gi_index = match gi {
        HeGi::Us0_8 => 0,
        HeGi::Us1_6 => 1,
        HeGi::Us3_2 => 2,
    };
    let scaled = per_gi[gi_index] * HE_SCALE / HE_MCS_DIVISORS[usize::from(mcs)];
    let result = scaled * u64::from(nss) / 8;
    u32::try_from(result / 10_000).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Values as `iw` prints them (MBit/s × 10), from the rate tables of IEEE
    // 802.11-2020 (HT Tables 19-27..19-30, VHT Tables 21-30..21-37) and 802.11ax-2021
    // (HE Tables 27-105..27-112), rounded to 100 kbit/s as the kernel rounds them.
    #[test]
    fn ht_rates_match_what_iw_prints() {
        let cases = [
            (0, 20, Gi::Long, 65),
            (7, 20, Gi::Long, 650),
            (7, 20, Gi::Short, 722),
            (7, 40, Gi::Long, 1350),
            (7, 40, Gi::Short, 1500),
            (15, 20, Gi::Short, 1444),
            (15, 40, Gi::Short, 3000),
            (4, 20, Gi::Long, 390),
            (31, 40, Gi::Short, 6000),
        ];
        for (mcs, width, gi, want) in cases {
            assert_eq!(
                ht_kernel_rate_100kbps(mcs, width, gi),
                Some(want),
                "MCS {mcs} {width} MHz {gi:?}"
            );
        }
        assert_eq!(ht_kernel_rate_100kbps(32, 20, Gi::Long), None);
        assert_eq!(ht_kernel_rate_100kbps(7, 80, Gi::Long), None);
    }

    #[test]
    fn vht_rates_match_what_iw_prints() {
        let cases = [
            (8, 2, 80, Gi::Long, 7020), // "702.0 MBit/s VHT-MCS 8 80MHz VHT-NSS 2"
            (9, 2, 80, Gi::Short, 8667),
            (9, 1, 80, Gi::Long, 3900),
            (9, 1, 80, Gi::Short, 4333),
            (9, 1, 20, Gi::Long, 867), // 86.5 before 2021
            (7, 1, 20, Gi::Long, 650),
            (0, 1, 80, Gi::Long, 293),
            (9, 4, 160, Gi::Short, 34667),
        ];
        for (mcs, nss, width, gi, want) in cases {
            assert_eq!(
                vht_kernel_rate_100kbps(mcs, nss, width, gi),
                Some(want),
                "MCS {mcs} NSS {nss} {width} MHz {gi:?}"
            );
        }
        assert_eq!(vht_kernel_rate_100kbps(12, 1, 20, Gi::Long), None);
        assert_eq!(vht_kernel_rate_100kbps(9, 0, 20, Gi::Long), None);
    }

    #[test]
    fn he_rates_match_what_iw_prints() {
        let cases = [
            (11, 2, 80, HeGi::Us0_8, 12009), // "1200.9 MBit/s 80MHz HE-MCS 11 HE-NSS 2"
            (11, 1, 20, HeGi::Us0_8, 1433),
            (0, 1, 20, HeGi::Us0_8, 86),
            (7, 2, 80, HeGi::Us0_8, 7206),
            (6, 1, 80, HeGi::Us0_8, 3242), // 313.4 with the old divisor 11 769
            (11, 2, 160, HeGi::Us0_8, 24019),
            (11, 1, 80, HeGi::Us3_2, 5104),
            (9, 2, 80, HeGi::Us1_6, 9074),
        ];
        for (mcs, nss, width, gi, want) in cases {
            assert_eq!(
                he_kernel_rate_100kbps(mcs, nss, width, gi),
                Some(want),
                "MCS {mcs} NSS {nss} {width} MHz {gi:?}"
            );
        }
        assert_eq!(he_kernel_rate_100kbps(14, 1, 20, HeGi::Us0_8), None);
    }
}
