//! PPDU durations (TXTIME) of the 802.11 PHYs, in nanoseconds, and their data rates.
//!
//! - DSSS / HR-DSSS (IEEE 802.11-2020 Clauses 15 and 16): long PLCP preamble + header
//!   144 + 48 = 192 µs, short 72 + 24 = 96 µs (not at 1 Mbit/s, which always uses the
//!   long one); the PSDU takes ⌈8·LENGTH / rate⌉ µs (the PLCP LENGTH field counts µs;
//!   802.11-2007 §18.2.3.5, whose examples ns-3 tests: 744 and 745 µs for 1023 and 1024
//!   bytes at 11 Mbit/s).
//! - OFDM (Clause 17, 20 MHz): TXTIME = 16 (preamble) + 4 (SIGNAL) + 4 µs × N_SYM,
//!   N_SYM = ⌈(16 + 8·LENGTH + 6) / N_DBPS⌉ (§17.4.3). ERP-OFDM (Clause 18) adds the
//!   6 µs signal extension (the ERP TXTIME of Clause 18), as every OFDM PPDU in the
//!   2.4 GHz band does.
//! - HT mixed format (Clause 19): 16 + 4 (L-SIG) + 8 (HT-SIG) + 4 (HT-STF) + 4 µs per
//!   HT-LTF (1, 2, 4, 4 for 1–4 streams), then N_SYM data symbols, N_SYM =
//!   ⌈(16 + 8·LENGTH + 6·N_ES) / N_DBPS⌉ (BCC). With the 400 ns GI the data field is
//!   rounded up to whole 4 µs symbols: 4 µs × ⌈3.6 µs · N_SYM / 4 µs⌉ (§19.4.3, the TXTIME
//!   equation), because L-SIG states the length in legacy symbols.
//! - VHT (Clause 21): 16 + 4 + 8 (VHT-SIG-A) + 4 (VHT-STF) + 4 µs per VHT-LTF (1, 2, 4,
//!   4, 6, 6, 8, 8) + 4 (VHT-SIG-B, part of every VHT PPDU, single-user ones included),
//!   the data field as HT, with the same 400 ns GI rounding (§21.4.3).
//! - HE SU (IEEE 802.11ax-2021, Clause 27): 20 (L-STF, L-LTF, L-SIG) + 4 (RL-SIG) + 8
//!   (HE-SIG-A) + 4 (HE-STF) + N_HE-LTF × T_HE-LTF + N_SYM × (12.8 µs + GI) + T_PE
//!   (§27.4.3), with no rounding of the data field. The HE-LTF is taken as 2x (6.4 µs +
//!   GI) with the 0.8 and 1.6 µs GIs and 4x (12.8 + 3.2 µs) with the 3.2 µs GI, the
//!   combinations an HE SU PPDU allows. Packet extension T_PE is 0 (nominal packet
//!   padding 0 µs).
//!
//! Both N_SYM formulas count BCC tail bits; LDPC (mandatory for HE above 20 MHz)
//! shortens differently and can change N_SYM by one symbol. The number of BCC encoders
//! N_ES follows ns-3's reading of the standard's MCS tables: one encoder per 320 Mbit/s
//! (HT, 800 ns GI) or 350 Mbit/s (400 ns), per 540 or 600 Mbit/s for VHT; one for HE.
//! The VHT table's few exceptions to that rule are not modelled (≤ 6 tail bits each).

use super::{Band, Gi, HeGi, Phy, Preamble};

const US: u64 = 1_000;

/// Modulation and coding of MCS index `m` (HT: `m % 8`): bits per subcarrier and the
/// coding rate as a fraction (IEEE 802.11-2020 Tables 19-27, 21-30; 802.11ax Table 27-105).
pub(crate) fn modulation(m: u8) -> (u64, u64, u64) {
    match m {
        0 => (1, 1, 2),
        1 => (2, 1, 2),
        2 => (2, 3, 4),
        3 => (4, 1, 2),
        4 => (4, 3, 4),
        5 => (6, 2, 3),
        6 => (6, 3, 4),
        7 => (6, 5, 6),
        8 => (8, 3, 4),
        9 => (8, 5, 6),
        10 => (10, 3, 4),
        _ => (10, 5, 6),
    }
}

/// Data subcarriers per width: HT and VHT (52, 108, 234, 468) and HE (the 242-, 484-,
/// 996- and 2×996-tone RUs: 234, 468, 980, 1960).
pub(crate) fn data_subcarriers(he: bool, width_mhz: u16) -> Option<u64> {
    Some(match (he, width_mhz) {
        (false, 20) => 52,
        (false, 40) => 108,
        (false, 80) => 234,
        (false, 160) => 468,
        (true, 20) => 234,
        (true, 40) => 468,
        (true, 80) => 980,
        (true, 160) => 1960,
        _ => return None,
    })
}

/// Long training fields for `nss` streams (HT Table 19-13, VHT Table 21-13; HE the same).
fn training_fields(nss: u8) -> u64 {
    match nss {
        1 => 1,
        2 => 2,
        3 | 4 => 4,
        5 | 6 => 6,
        _ => 8,
    }
}

impl Phy {
    /// Data bits per OFDM symbol (N_DBPS); None for DSSS, which has no symbols.
    pub fn data_bits_per_symbol(&self) -> Option<u64> {
        match *self {
            Phy::Dsss { .. } => None,
            Phy::Ofdm { rate_mbps, .. } => Some(u64::from(rate_mbps) * 4),
            Phy::Ht { mcs, width_mhz, .. } => {
                let (bits, num, den) = modulation(mcs % 8);
                let sd = data_subcarriers(false, width_mhz)?;
                Some(sd * bits * num / den * u64::from(mcs / 8 + 1))
            }
            Phy::Vht {
                mcs,
                nss,
                width_mhz,
                ..
            } => {
                let (bits, num, den) = modulation(mcs);
                let sd = data_subcarriers(false, width_mhz)?;
                Some(sd * bits * u64::from(nss) * num / den)
            }
            Phy::He {
                mcs,
                nss,
                width_mhz,
                ..
            } => {
                let (bits, num, den) = modulation(mcs);
                let sd = data_subcarriers(true, width_mhz)?;
                // N_DBPS = ⌊N_CBPS · R⌋ (802.11ax-2021 Table 27-105 onwards).
                Some(sd * bits * u64::from(nss) * num / den)
            }
        }
    }

    /// OFDM symbol duration in ns (with its guard interval).
    fn symbol_ns(&self) -> u64 {
        match *self {
            Phy::Ht { gi, .. } | Phy::Vht { gi, .. } => match gi {
                Gi::Long => 4_000,
                Gi::Short => 3_600,
            },
            Phy::He { gi, .. } => 12_800 + gi.ns(),
            _ => 4_000,
        }
    }

    /// The PHY data rate in bit/s: exact, from N_DBPS and the symbol duration.
    pub fn data_rate_bps(&self) -> f64 {
        match *self {
            Phy::Dsss { rate_100kbps, .. } => f64::from(rate_100kbps) * 1e5,
            _ => {
                let bits = self.data_bits_per_symbol().unwrap_or(0) as f64;
                bits / self.symbol_ns() as f64 * 1e9
            }
        }
    }

    /// BCC encoders (N_ES), see the module header.
    fn encoders(&self) -> u64 {
        let rate = self.data_rate_bps();
        let per_encoder = match *self {
            Phy::Ht { gi: Gi::Long, .. } => 320e6,
            Phy::Ht { gi: Gi::Short, .. } => 350e6,
            Phy::Vht { gi: Gi::Long, .. } => 540e6,
            Phy::Vht { gi: Gi::Short, .. } => 600e6,
            _ => return 1,
        };
        ((rate / per_encoder).ceil() as u64).max(1)
    }

    /// The 6 µs signal extension after OFDM PPDUs in the 2.4 GHz band (Clause 18, §19.4.3).
    pub fn signal_extension_ns(&self) -> u64 {
        let ofdm_at_2_4 = match *self {
            Phy::Dsss { .. } => false,
            Phy::Ofdm { erp, .. } => erp,
            Phy::Ht { band, .. } | Phy::He { band, .. } => band == Band::Ghz2_4,
            Phy::Vht { .. } => false,
        };
        if ofdm_at_2_4 {
            6 * US
        } else {
            0
        }
    }

    /// Preamble and PHY headers before the data field, in ns.
    pub fn preamble_ns(&self) -> u64 {
        match *self {
            Phy::Dsss {
                preamble,
                rate_100kbps,
            } => {
                if preamble == Preamble::Short && rate_100kbps > 10 {
                    96 * US
                } else {
                    192 * US
                }
            }
            Phy::Ofdm { .. } => 20 * US,
            Phy::Ht { mcs, .. } => (16 + 4 + 8 + 4 + 4 * training_fields(mcs / 8 + 1)) * US,
            Phy::Vht { nss, .. } => (16 + 4 + 8 + 4 + 4 * training_fields(nss) + 4) * US,
            Phy::He { nss, gi, .. } => {
                let ltf_ns = match gi {
                    HeGi::Us0_8 | HeGi::Us1_6 => 6_400 + gi.ns(),
                    HeGi::Us3_2 => 12_800 + gi.ns(),
                };
                (20 + 4 + 8 + 4) * US + training_fields(nss) * ltf_ns
            }
        }
    }

    /// TXTIME of a PPDU carrying `psdu_bytes`, in ns: preamble, data field, signal
    /// extension.
    pub fn ppdu_ns(&self, psdu_bytes: u64) -> u64 {
        self.preamble_ns() + self.data_field_ns(psdu_bytes) + self.signal_extension_ns()
    }

    /// The data field alone (after the preamble, before any signal extension).
    pub fn data_field_ns(&self, psdu_bytes: u64) -> u64 {
        let bits = psdu_bytes.saturating_mul(8);
        match *self {
            Phy::Dsss { rate_100kbps, .. } => {
                // ⌈8·LENGTH / rate⌉ µs, rate in 100 kbit/s units: ⌈80·LENGTH / r⌉.
                bits.saturating_mul(10)
                    .div_ceil(u64::from(rate_100kbps).max(1))
                    * US
            }
            _ => {
                let n_dbps = self.data_bits_per_symbol().unwrap_or(1).max(1);
                let tail = 6 * self.encoders();
                let symbols = (16 + bits + tail).div_ceil(n_dbps);
                match *self {
                    Phy::Ht { gi: Gi::Short, .. } | Phy::Vht { gi: Gi::Short, .. } => {
                        // 4 µs × ⌈3.6 µs · N_SYM / 4 µs⌉.
                        (3_600 * symbols).div_ceil(4_000) * 4_000
                    }
                    _ => symbols * self.symbol_ns(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
