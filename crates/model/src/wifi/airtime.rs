//! MAC framing, channel access and the airtime of one saturated sender.
//!
//! One channel access: contention (AIFS or DIFS, plus the mean backoff), the data PPDU,
//! SIFS and the ACK or Block Ack; for TCP also the receiver's access carrying the TCP
//! acknowledgements back, with its own contention and 802.11 ACK.
//!
//! Sizes (IEEE 802.11-2020; clauses named rather than numbered where editions
//! renumber them): MAC header 24 bytes, QoS data 26 with the QoS Control field, FCS 4
//! (Clause 9, data frame format); LLC/SNAP 8 bytes per MSDU (IEEE 802.2 with RFC 1042
//! encapsulation); CCMP-128 adds 16 bytes per MPDU (8-byte CCMP header + 8-byte MIC),
//! GCMP 24 (8-byte header + 16-byte MIC; Clause 12); Ack 14 bytes, compressed BlockAck
//! 32 (Clause 9, control frames); A-MSDU subframe header 14 bytes with subframes padded
//! to 4 bytes; A-MPDU delimiter 4 bytes with subframes padded to 4 (Clause 9, A-MSDU and
//! A-MPDU formats); a VHT or HE PPDU always carries an A-MPDU, even of one MPDU.
//! Limits: A-MPDU 65 535 bytes (HT), 1 048 575 (VHT), 6 500 631 (HE); A-MSDU 7 935
//! bytes (HT), MPDU 11 454 (VHT, HE), 4 095 inside an HT A-MPDU; a PPDU at most
//! 5.484 ms (aPPDUMaxTime); 64 MPDUs per compressed BlockAck bitmap; an MSDU at most
//! 2 304 bytes.
//!
//! Timings: slot 20 µs, SIFS 10, CWmin 31 for DSSS (Clause 16 PHY characteristics);
//! slot 9, SIFS 16, CWmin 15 for OFDM at 5 GHz (Clause 17); slot 9 (short slot), SIFS 10,
//! CWmin 15 in the 2.4 GHz band for ERP, HT and HE (Clauses 18, 19, 27), whose OFDM
//! PPDUs add the 6 µs signal extension. DIFS = SIFS + 2 slots (Clause 10, DCF);
//! AIFS[AC] = SIFS + AIFSN × slot with the default EDCA parameter set (BK AIFSN 7, BE 3,
//! VI 2, VO 2; CWmin of VI (CWmin+1)/2 − 1, of VO (CWmin+1)/4 − 1). Mean backoff CW/2
//! slots. Control responses go at the highest mandatory rate not above the data rate,
//! or for HT/VHT/HE not above the MCS's non-HT reference rate (Clause 10, rate selection
//! for control response frames): 1, 2, 5.5, 11 Mbit/s for DSSS, 6, 12, 24 for OFDM.
//!
//! IP, UDP and TCP header sizes come from [`crate::overhead`] and `wire::spec`.

use super::{Band, Phy};
use crate::overhead::TCP_TIMESTAMP_OPTION_BYTES;
use serde::{Deserialize, Serialize};
use wire::spec::{Family, Transport};

const MAC_HEADER_BYTES: u64 = 24;
const QOS_CONTROL_BYTES: u64 = 2;
const FCS_BYTES: u64 = 4;
const LLC_SNAP_BYTES: u64 = 8;
const ACK_BYTES: u64 = 14;
const BLOCK_ACK_BYTES: u64 = 32;
const AMSDU_SUBFRAME_HEADER_BYTES: u64 = 14;
const AMPDU_DELIMITER_BYTES: u64 = 4;
/// The largest MSDU 802.11 carries (LLC/SNAP included).
const MAX_MSDU_BYTES: u64 = 2304;
/// aPPDUMaxTime: the longest HT, VHT or HE PPDU.
const PPDU_MAX_NS: u64 = 5_484_000;
/// MPDUs one compressed Block Ack acknowledges.
const BLOCK_ACK_WINDOW: u32 = 64;

/// Channel access: DCF (DIFS, no QoS header) or an EDCA access category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    Dcf,
    Bk,
    Be,
    Vi,
    Vo,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Dcf => "DCF (DIFS)",
            Access::Bk => "EDCA background (AIFSN 7)",
            Access::Be => "EDCA best effort (AIFSN 3)",
            Access::Vi => "EDCA video (AIFSN 2)",
            Access::Vo => "EDCA voice (AIFSN 2)",
        }
    }
    /// AIFSN (DIFS counts as 2) and the contention window from the PHY's CWmin.
    fn aifsn_cw(self, cw_min: u32) -> (u64, u32) {
        match self {
            Access::Dcf => (2, cw_min),
            Access::Bk => (7, cw_min),
            Access::Be => (3, cw_min),
            // (CWmin + 1)/2 − 1 and (CWmin + 1)/4 − 1: CWmin is 2^k − 1.
            Access::Vi => (2, cw_min.div_ceil(2) - 1),
            Access::Vo => (2, cw_min.div_ceil(4) - 1),
        }
    }
}

/// Rate of the ACK / Block Ack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AckRate {
    /// The highest mandatory rate not above the data rate, as the standard requires.
    Basic,
    /// The data frame's own rate and format (Gast's assumption).
    Data,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backoff {
    /// CWmin / 2 slots per access.
    Mean,
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Security {
    Open,
    Ccmp,
    Gcmp,
}

impl Security {
    pub fn bytes_per_mpdu(self) -> u64 {
        match self {
            Security::Open => 0,
            Security::Ccmp => 16,
            Security::Gcmp => 24,
        }
    }
}

/// Returning TCP acknowledgements: one per segment, or one per two (delayed ACK).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TcpAcks {
    Every,
    Delayed,
}

/// Every assumption of the model, each a stated input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assumptions {
    pub llc_snap: bool,
    pub ack_rate: AckRate,
    pub backoff: Backoff,
    /// None: DCF for 802.11a/b/g, EDCA best effort for 802.11n/ac/ax.
    pub access: Option<Access>,
    /// MPDUs per A-MPDU (1: none, except that VHT and HE always send an A-MPDU).
    pub ampdu: u32,
    /// Fill each MPDU with as many MSDUs as the A-MSDU limit allows.
    pub amsdu: bool,
    pub security: Security,
    pub tcp_acks: TcpAcks,
    /// TCP timestamp option (12 bytes per segment) as Linux sends by default.
    pub tcp_timestamps: bool,
    /// IP MTU of the link.
    pub mtu_bytes: u32,
}

impl Default for Assumptions {
    fn default() -> Self {
        Assumptions {
            llc_snap: true,
            ack_rate: AckRate::Basic,
            backoff: Backoff::Mean,
            access: None,
            ampdu: 1,
            amsdu: false,
            security: Security::Open,
            tcp_acks: TcpAcks::Every,
            tcp_timestamps: true,
            mtu_bytes: 1500,
        }
    }
}

impl Assumptions {
    /// The access the model uses on `phy`.
    pub fn access_for(&self, phy: &Phy) -> Access {
        self.access.unwrap_or(if phy.is_high_throughput() {
            Access::Be
        } else {
            Access::Dcf
        })
    }
}

/// Why the model cannot answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AirtimeError {
    #[error("{what} needs 802.11n, ac or ax; {standard} has no aggregation")]
    NoAggregation {
        what: &'static str,
        standard: &'static str,
    },
    #[error(
        "a {payload_bytes}-byte UDP payload makes a {packet_bytes}-byte IP packet, above the \
         {mtu_bytes}-byte MTU; the 802.11 model does not model IP fragmentation (use at most {max} bytes)"
    )]
    AboveMtu {
        payload_bytes: u32,
        packet_bytes: u64,
        mtu_bytes: u32,
        max: u64,
    },
    #[error("{0} is not a PHY configuration the standard defines")]
    InvalidPhy(String),
    #[error("--ampdu must be at least 1")]
    ZeroAmpdu,
    #[error(
        "an MSDU of {msdu_bytes} bytes is above the 2304 bytes 802.11 carries; use --mtu {max_mtu} or less"
    )]
    MsduTooLarge { msdu_bytes: u64, max_mtu: u64 },
    #[error("an MTU of {0} bytes leaves no room for a TCP segment")]
    MtuTooSmall(u32),
}

/// Airtime of one channel access, by what it is spent on, in ns (mean backoff makes
/// them fractional).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// AIFS or DIFS and the mean backoff.
    pub contention_ns: f64,
    /// The data PPDU minus the payload: PHY preamble and headers, MAC, LLC, IP and
    /// transport headers, security, delimiters, padding and symbol rounding.
    pub preamble_headers_ns: f64,
    /// The application payload at the PHY data rate.
    pub payload_ns: f64,
    /// SIFS and the ACK or Block Ack.
    pub sifs_ack_ns: f64,
    /// The returning TCP acknowledgements with their own access, SIFS and ACK.
    pub tcp_acks_ns: f64,
}

impl Breakdown {
    pub fn total_ns(&self) -> f64 {
        self.contention_ns
            + self.preamble_headers_ns
            + self.payload_ns
            + self.sifs_ack_ns
            + self.tcp_acks_ns
    }
}

/// The model's answer for one payload size, family and transport.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub payload_bytes: u32,
    /// Application bytes one data MPDU's MSDU carries (UDP payload, or the TCP MSS).
    pub app_bytes_per_msdu: u32,
    pub msdus_per_mpdu: u32,
    pub mpdus_per_access: u32,
    /// Why fewer MPDUs went into an aggregate than asked for.
    pub aggregation_capped_by: Option<String>,
    pub access: Access,
    pub data_ppdu_ns: u64,
    pub airtime: Breakdown,
    pub phy_rate_bps: f64,
    /// Application bits per second, the theoretical maximum.
    pub goodput_bps: f64,
    /// Datagrams or TCP segments per second.
    pub payloads_per_s: f64,
}

fn pad4(bytes: u64) -> u64 {
    bytes.div_ceil(4) * 4
}

/// The MAC-level shape of one frame exchange's data.
struct Framing {
    mac_bytes: u64,
    security_bytes: u64,
    aggregated: bool,
}

impl Framing {
    fn mpdu_bytes(&self, msdu_bytes: u64, msdus: u64) -> u64 {
        let body = if msdus <= 1 {
            msdu_bytes
        } else {
            let sub = AMSDU_SUBFRAME_HEADER_BYTES + msdu_bytes;
            (msdus - 1) * pad4(sub) + sub
        };
        self.mac_bytes + self.security_bytes + body + FCS_BYTES
    }

    fn psdu_bytes(&self, mpdu_bytes: u64, mpdus: u64) -> u64 {
        if !self.aggregated {
            return mpdu_bytes * mpdus.max(1);
        }
        let sub = AMPDU_DELIMITER_BYTES + mpdu_bytes;
        (mpdus.max(1) - 1) * pad4(sub) + sub
    }
}

fn limits(phy: &Phy, in_ampdu: bool) -> (u64, u64) {
    // (largest MPDU or A-MSDU-carrying MPDU body, largest A-MPDU)
    match phy {
        Phy::Ht { .. } if in_ampdu => (4_095, 65_535),
        Phy::Ht { .. } => (
            7_935 + MAC_HEADER_BYTES + QOS_CONTROL_BYTES + FCS_BYTES,
            65_535,
        ),
        Phy::Vht { .. } => (11_454, 1_048_575),
        Phy::He { .. } => (11_454, 6_500_631),
        _ => (u64::MAX, u64::MAX),
    }
}

/// (slot, SIFS, CWmin) of the PHY in its band.
fn timing(phy: &Phy) -> (u64, u64, u32) {
    match phy {
        Phy::Dsss { .. } => (20_000, 10_000, 31),
        _ if phy.band() == Band::Ghz2_4 => (9_000, 10_000, 15),
        _ => (9_000, 16_000, 15),
    }
}

/// The PHY of the ACK or Block Ack answering a frame sent on `phy`.
pub fn control_response_phy(phy: &Phy, ack_rate: AckRate) -> Phy {
    if ack_rate == AckRate::Data {
        return *phy;
    }
    let highest_not_above = |allowed: &[u32], rate: u32| {
        allowed
            .iter()
            .copied()
            .filter(|r| *r <= rate)
            .max()
            .unwrap_or(allowed[0])
    };
    match *phy {
        Phy::Dsss {
            rate_100kbps,
            preamble,
        } => Phy::Dsss {
            rate_100kbps: highest_not_above(&[10, 20, 55, 110], rate_100kbps),
            preamble,
        },
        Phy::Ofdm { rate_mbps, erp } => Phy::Ofdm {
            rate_mbps: highest_not_above(&[6, 12, 24], rate_mbps),
            erp,
        },
        Phy::Ht { mcs, .. } | Phy::Vht { mcs, .. } | Phy::He { mcs, .. } => {
            let index = if matches!(phy, Phy::Ht { .. }) {
                mcs % 8
            } else {
                mcs
            };
            // Non-HT reference rate of the MCS's modulation and coding.
            let reference = [6, 12, 18, 24, 36, 48, 54, 54]
                .get(usize::from(index))
                .copied()
                .unwrap_or(54);
            Phy::Ofdm {
                rate_mbps: highest_not_above(&[6, 12, 24], reference),
                erp: phy.band() == Band::Ghz2_4,
            }
        }
    }
}

/// The theoretical maximum goodput of one saturated sender of `payload_bytes` payloads
/// (UDP datagrams, or bulk TCP whose segments are full MSS whatever the write size).
pub fn estimate(
    phy: &Phy,
    a: &Assumptions,
    family: Family,
    transport: Transport,
    payload_bytes: u32,
) -> Result<Estimate, AirtimeError> {
    if !phy.is_valid() {
        return Err(AirtimeError::InvalidPhy(format!("{phy:?}")));
    }
    if a.ampdu == 0 {
        return Err(AirtimeError::ZeroAmpdu);
    }
    if !phy.is_high_throughput() && (a.ampdu > 1 || a.amsdu) {
        return Err(AirtimeError::NoAggregation {
            what: if a.amsdu {
                "--amsdu"
            } else {
                "--ampdu above 1"
            },
            standard: phy.standard(),
        });
    }
    let ip = u64::from(family.ip_header_bytes());
    let tcp = u64::from(Transport::Tcp.header_bytes());
    let ts = if a.tcp_timestamps {
        u64::from(TCP_TIMESTAMP_OPTION_BYTES)
    } else {
        0
    };
    let mtu = u64::from(a.mtu_bytes);
    let (app_bytes, packet_bytes) = match transport {
        Transport::Udp => {
            let udp = u64::from(Transport::Udp.header_bytes());
            let packet = u64::from(payload_bytes) + udp + ip;
            if packet > mtu {
                return Err(AirtimeError::AboveMtu {
                    payload_bytes,
                    packet_bytes: packet,
                    mtu_bytes: a.mtu_bytes,
                    max: mtu.saturating_sub(udp + ip),
                });
            }
            (u64::from(payload_bytes), packet)
        }
        Transport::Tcp => {
            let headers = ip + tcp + ts;
            let mss = mtu.checked_sub(headers).filter(|m| *m > 0);
            let mss = mss.ok_or(AirtimeError::MtuTooSmall(a.mtu_bytes))?;
            (mss, mtu)
        }
    };
    let llc = if a.llc_snap { LLC_SNAP_BYTES } else { 0 };
    let msdu = llc + packet_bytes;
    if msdu > MAX_MSDU_BYTES {
        return Err(AirtimeError::MsduTooLarge {
            msdu_bytes: msdu,
            max_mtu: MAX_MSDU_BYTES - llc,
        });
    }
    let access = a.access_for(phy);
    let framing = Framing {
        mac_bytes: MAC_HEADER_BYTES
            + if access == Access::Dcf {
                0
            } else {
                QOS_CONTROL_BYTES
            },
        security_bytes: a.security.bytes_per_mpdu(),
        aggregated: matches!(phy, Phy::Vht { .. } | Phy::He { .. }) || a.ampdu > 1,
    };
    let (max_mpdu, max_ampdu) = limits(phy, a.ampdu > 1);

    // A-MSDU: as many MSDUs as the largest MPDU holds.
    let mut msdus: u64 = 1;
    if a.amsdu {
        while msdus < 1_000 && framing.mpdu_bytes(msdu, msdus + 1) <= max_mpdu {
            msdus += 1;
        }
    }
    let mpdu = framing.mpdu_bytes(msdu, msdus);

    // A-MPDU: as many MPDUs as asked, within the byte, Block Ack and PPDU-time limits.
    let mut mpdus = u64::from(a.ampdu);
    let mut capped_by = None;
    if mpdus > u64::from(BLOCK_ACK_WINDOW) {
        mpdus = u64::from(BLOCK_ACK_WINDOW);
        capped_by = Some(format!("the {BLOCK_ACK_WINDOW}-MPDU Block Ack window"));
    }
    while mpdus > 1 && framing.psdu_bytes(mpdu, mpdus) > max_ampdu {
        mpdus -= 1;
        capped_by = Some(format!("the {max_ampdu}-byte A-MPDU limit"));
    }
    while mpdus > 1 && phy.ppdu_ns(framing.psdu_bytes(mpdu, mpdus)) > PPDU_MAX_NS {
        mpdus -= 1;
        capped_by = Some("the 5.484 ms PPDU limit".to_string());
    }

    let (slot, sifs, cw_min) = timing(phy);
    let (aifsn, cw) = access.aifsn_cw(cw_min);
    let backoff_ns = match a.backoff {
        Backoff::Mean => f64::from(cw) / 2.0 * slot as f64,
        Backoff::None => 0.0,
    };
    let contention_ns = (sifs + aifsn * slot) as f64 + backoff_ns;

    let response = control_response_phy(phy, a.ack_rate);
    let answer_ns = |mpdus_sent: u64| {
        let bytes = if framing.aggregated && mpdus_sent > 1 {
            BLOCK_ACK_BYTES
        } else {
            ACK_BYTES
        };
        (sifs + response.ppdu_ns(bytes)) as f64
    };

    let data_ppdu_ns = phy.ppdu_ns(framing.psdu_bytes(mpdu, mpdus));
    let phy_rate_bps = phy.data_rate_bps();
    let payloads = msdus * mpdus;
    let app_bits = (payloads * app_bytes * 8) as f64;
    let payload_ns = app_bits / phy_rate_bps * 1e9;

    let tcp_acks_ns = match transport {
        Transport::Udp => 0.0,
        Transport::Tcp => {
            let ack_msdu = llc + ip + tcp + ts;
            let ack_mpdu = framing.mpdu_bytes(ack_msdu, 1);
            let acks = match a.tcp_acks {
                TcpAcks::Every => payloads as f64,
                TcpAcks::Delayed => payloads as f64 / 2.0,
            };
            if a.ampdu > 1 {
                // The receiver aggregates the acknowledgements of one access.
                let n = (acks.ceil() as u64).max(1);
                contention_ns + phy.ppdu_ns(framing.psdu_bytes(ack_mpdu, n)) as f64 + answer_ns(n)
            } else {
                let one = contention_ns
                    + phy.ppdu_ns(framing.psdu_bytes(ack_mpdu, 1)) as f64
                    + answer_ns(1);
                acks * one
            }
        }
    };

    let airtime = Breakdown {
        contention_ns,
        preamble_headers_ns: data_ppdu_ns as f64 - payload_ns,
        payload_ns,
        sifs_ack_ns: answer_ns(mpdus),
        tcp_acks_ns,
    };
    let total_ns = airtime.total_ns();
    Ok(Estimate {
        payload_bytes,
        app_bytes_per_msdu: u32::try_from(app_bytes).unwrap_or(u32::MAX),
        msdus_per_mpdu: u32::try_from(msdus).unwrap_or(u32::MAX),
        mpdus_per_access: u32::try_from(mpdus).unwrap_or(u32::MAX),
        aggregation_capped_by: capped_by,
        access,
        data_ppdu_ns,
        airtime,
        phy_rate_bps,
        goodput_bps: app_bits / total_ns * 1e9,
        payloads_per_s: payloads as f64 / total_ns * 1e9,
    })
}

#[cfg(test)]
mod tests;
