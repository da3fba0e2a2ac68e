//! The 802.11 airtime model: what one saturated sender can push through an 802.11
//! link, and where the airtime goes.
//!
//! Method (Jun, Peddabachagari and Sichitiu, "Theoretical Maximum Throughput of IEEE
//! 802.11 and its Applications", IEEE NCA 2003): goodput = payload bits per channel
//! access / (AIFS or DIFS + mean backoff + DATA + SIFS + ACK [+ the returning TCP
//! acknowledgements]). One station, no collisions, no retries, no rate adaptation, no
//! RTS/CTS, no beacons or other stations' traffic: an upper bound, never a prediction.
//!
//! - [`phy`]: PPDU durations (TXTIME) per PHY, IEEE 802.11-2020 and 802.11ax-2021.
//! - [`rates`]: MCS bit rates as the Linux kernel reports them (what `iw` prints).
//! - [`airtime`]: MAC framing, timings, aggregation and the per-access breakdown.
//! - [`emulation`]: tbf rate and per-packet overhead that emulate a link in a lab.

pub mod airtime;
pub mod emulation;
pub mod phy;
pub mod rates;

pub use airtime::{
    estimate, Access, AckRate, Assumptions, Backoff, Breakdown, Estimate, Security, TcpAcks,
};

use serde::{Deserialize, Serialize};

/// HT/VHT guard interval: 800 ns (long) or 400 ns (short).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gi {
    Long,
    Short,
}

/// HE guard interval: 0.8, 1.6 or 3.2 µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeGi {
    #[serde(rename = "0.8")]
    Us0_8,
    #[serde(rename = "1.6")]
    Us1_6,
    #[serde(rename = "3.2")]
    Us3_2,
}

impl HeGi {
    pub fn ns(self) -> u64 {
        match self {
            HeGi::Us0_8 => 800,
            HeGi::Us1_6 => 1_600,
            HeGi::Us3_2 => 3_200,
        }
    }
}

/// Frequency band: 2.4 GHz OFDM PPDUs carry a 6 µs signal extension and use a 10 µs
/// SIFS; 5 and 6 GHz use a 16 µs SIFS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Band {
    #[serde(rename = "2.4")]
    Ghz2_4,
    #[serde(rename = "5")]
    Ghz5,
    #[serde(rename = "6")]
    Ghz6,
}

impl Band {
    pub fn label(self) -> &'static str {
        match self {
            Band::Ghz2_4 => "2.4 GHz",
            Band::Ghz5 => "5 GHz",
            Band::Ghz6 => "6 GHz",
        }
    }
}

/// 802.11b PLCP preamble.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preamble {
    Long,
    Short,
}

/// One 802.11 PHY configuration: standard, rate or MCS, width, guard interval, band.
/// Built by [`crate::link::parse`], which checks every field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phy", rename_all = "kebab-case")]
pub enum Phy {
    /// 802.11b DSSS/HR-DSSS, 2.4 GHz: 1, 2, 5.5 or 11 Mbit/s (in 100 kbit/s units).
    Dsss {
        rate_100kbps: u32,
        preamble: Preamble,
    },
    /// 802.11a OFDM (5 GHz) or, with `erp`, 802.11g ERP-OFDM (2.4 GHz).
    Ofdm { rate_mbps: u32, erp: bool },
    /// 802.11n HT mixed format, MCS 0..=31 (streams = MCS / 8 + 1), 20 or 40 MHz.
    Ht {
        mcs: u8,
        width_mhz: u16,
        gi: Gi,
        band: Band,
    },
    /// 802.11ac VHT single user, 5 GHz.
    Vht {
        mcs: u8,
        nss: u8,
        width_mhz: u16,
        gi: Gi,
    },
    /// 802.11ax HE single user.
    He {
        mcs: u8,
        nss: u8,
        width_mhz: u16,
        gi: HeGi,
        band: Band,
    },
}

impl Phy {
    /// The standard's name: 802.11a, b, g, n, ac or ax.
    pub fn standard(&self) -> &'static str {
        match self {
            Phy::Dsss { .. } => "802.11b",
            Phy::Ofdm { erp: false, .. } => "802.11a",
            Phy::Ofdm { erp: true, .. } => "802.11g",
            Phy::Ht { .. } => "802.11n",
            Phy::Vht { .. } => "802.11ac",
            Phy::He { .. } => "802.11ax",
        }
    }

    pub fn band(&self) -> Band {
        match *self {
            Phy::Dsss { .. } | Phy::Ofdm { erp: true, .. } => Band::Ghz2_4,
            Phy::Ofdm { erp: false, .. } | Phy::Vht { .. } => Band::Ghz5,
            Phy::Ht { band, .. } | Phy::He { band, .. } => band,
        }
    }

    /// Spatial streams.
    pub fn nss(&self) -> u8 {
        match *self {
            Phy::Ht { mcs, .. } => mcs / 8 + 1,
            Phy::Vht { nss, .. } | Phy::He { nss, .. } => nss,
            _ => 1,
        }
    }

    /// Whether every field is one the standard defines (as [`crate::link::parse`]
    /// checks): a PHY built by hand from a link-state reading may not be.
    pub fn is_valid(&self) -> bool {
        match *self {
            Phy::Dsss { rate_100kbps, .. } => [10, 20, 55, 110].contains(&rate_100kbps),
            Phy::Ofdm { rate_mbps, .. } => [6, 9, 12, 18, 24, 36, 48, 54].contains(&rate_mbps),
            Phy::Ht { mcs, width_mhz, .. } => mcs <= 31 && matches!(width_mhz, 20 | 40),
            Phy::Vht {
                mcs,
                nss,
                width_mhz,
                ..
            } => {
                let (bits, num, den) = phy::modulation(mcs);
                mcs <= 9
                    && (1..=8).contains(&nss)
                    && phy::data_subcarriers(false, width_mhz)
                        .is_some_and(|sd| (sd * bits * u64::from(nss) * num).is_multiple_of(den))
            }
            Phy::He {
                mcs,
                nss,
                width_mhz,
                band,
                ..
            } => {
                mcs <= 11
                    && (1..=8).contains(&nss)
                    && phy::data_subcarriers(true, width_mhz).is_some()
                    && !(band == Band::Ghz2_4 && width_mhz > 40)
            }
        }
    }

    /// HT, VHT and HE: QoS data, A-MPDU with Block Ack, A-MSDU.
    pub fn is_high_throughput(&self) -> bool {
        matches!(self, Phy::Ht { .. } | Phy::Vht { .. } | Phy::He { .. })
    }

    /// The bit rate in 100 kbit/s as the kernel reports it for this PHY (legacy rates
    /// are exact), see [`rates`].
    pub fn kernel_rate_100kbps(&self) -> Option<u32> {
        match *self {
            Phy::Dsss { rate_100kbps, .. } => Some(rate_100kbps),
            Phy::Ofdm { rate_mbps, .. } => Some(rate_mbps * 10),
            Phy::Ht {
                mcs, width_mhz, gi, ..
            } => rates::ht_kernel_rate_100kbps(mcs, width_mhz, gi),
            Phy::Vht {
                mcs,
                nss,
                width_mhz,
                gi,
            } => rates::vht_kernel_rate_100kbps(mcs, nss, width_mhz, gi),
            Phy::He {
                mcs,
                nss,
                width_mhz,
                gi,
                ..
            } => rates::he_kernel_rate_100kbps(mcs, nss, width_mhz, gi),
        }
    }

    /// One line for people: "802.11n MCS 7, 1 stream, 20 MHz, 800 ns GI, 2.4 GHz".
    pub fn describe(&self) -> String {
        let gi_text = |gi: Gi| match gi {
            Gi::Long => "800 ns GI",
            Gi::Short => "400 ns GI",
        };
        let streams = |n: u8| {
            if n == 1 {
                "1 stream".to_string()
            } else {
                format!("{n} streams")
            }
        };
        match *self {
            Phy::Dsss {
                rate_100kbps,
                preamble,
            } => format!(
                "802.11b {} Mbit/s, {} preamble, 2.4 GHz",
                f64::from(rate_100kbps) / 10.0,
                match preamble {
                    Preamble::Long => "long",
                    Preamble::Short => "short",
                }
            ),
            Phy::Ofdm { rate_mbps, erp } => format!(
                "{} {rate_mbps} Mbit/s, 20 MHz, {}",
                self.standard(),
                if erp { "2.4 GHz" } else { "5 GHz" }
            ),
            Phy::Ht {
                mcs,
                width_mhz,
                gi,
                band,
            } => format!(
                "802.11n MCS {mcs}, {}, {width_mhz} MHz, {}, {}",
                streams(self.nss()),
                gi_text(gi),
                band.label()
            ),
            Phy::Vht {
                mcs,
                nss,
                width_mhz,
                gi,
            } => format!(
                "802.11ac MCS {mcs}, {}, {width_mhz} MHz, {}, 5 GHz",
                streams(nss),
                gi_text(gi)
            ),
            Phy::He {
                mcs,
                nss,
                width_mhz,
                gi,
                band,
            } => format!(
                "802.11ax MCS {mcs}, {}, {width_mhz} MHz, {} µs GI, {}",
                streams(nss),
                gi.ns() as f64 / 1000.0,
                band.label()
            ),
        }
    }
}
