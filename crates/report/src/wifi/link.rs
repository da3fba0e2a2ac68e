//! Which 802.11 link a campaign's runs went over, and the model of it: the link its lab
//! emulated (`lab.emulated_link`, with the lab's MTU and A-MPDU length), else the one
//! the sending side recorded (`SIDE.link.{before,after}.*`), each field with one value
//! over the campaign or none is applied; why not, where not.

use crate::dataset::CampaignData;
use model::wifi::airtime::AirtimeError;
use model::wifi::emulation::LEAVES_OUT;
use model::wifi::{estimate, Assumptions, Band, Gi, HeGi, Phy, Security};
use std::collections::BTreeMap;
use wire::spec::{Direction, Family, TestKind, Transport};

/// MPDUs per A-MPDU the model assumes for a recorded 802.11n/ac/ax link: the link state
/// does not say how the driver aggregated, so the model takes the most one compressed
/// Block Ack acknowledges (capped further by the A-MPDU byte and PPDU time limits) and
/// its figure is the upper bound.
pub const RECORDED_AMPDU: u32 = 64;

/// A recorded bit rate may differ this much (relative) from the rate the model computes
/// for the recorded MCS, width, GI and streams (older kernels rounded some rates
/// differently, e.g. 86.5 for 86.7 Mbit/s); beyond it the fields do not describe one
/// rate and no model is applied.
const RATE_MISMATCH: f64 = 0.01;

/// The most characters of one recorded value (or lab setting) a reason quotes: the link
/// state comes from the OS or an imported database, and a 100 KB value must not be
/// copied into the report whole.
pub const SHOWN_CHARS: usize = 80;

/// A recorded value as a reason quotes it: at most [`SHOWN_CHARS`] characters.
fn shown(v: &str) -> String {
    crate::escape::truncate_chars(v, SHOWN_CHARS).into_owned()
}

/// The highest transmit rate a recorded link may claim, kbit/s (1 Tbit/s; 802.11be
/// tops out near 46 Gbit/s): beyond it, or not a finite number, the value is refused.
const MAX_RECORDED_KBPS: f64 = 1e9;

/// Where a campaign's 802.11 link came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// Recorded with its runs by the sending side (`client` or `server`).
    Recorded { side: &'static str },
    /// Emulated by the campaign's lab with tbf: its rate, per-packet overhead and
    /// bucket as the lab metadata records them.
    Emulated {
        rate_bps: Option<f64>,
        overhead_bytes: Option<u32>,
        burst_bytes: Option<u64>,
    },
}

/// An 802.11 link the model can be applied to.
#[derive(Debug, Clone, PartialEq)]
pub struct WifiLink {
    pub phy: Phy,
    pub assumptions: Assumptions,
    pub origin: Origin,
}

/// Why the airtime model cannot be applied to a recorded link, or to one test of a link.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelUnavailable {
    #[error(
        "the {side}'s {field} changed during the campaign ({}): no one model applies",
        values.join(", ")
    )]
    Changed {
        side: &'static str,
        field: &'static str,
        values: Vec<String>,
    },
    #[error("the {side}'s {field} is not recorded ({why})")]
    NotRecorded {
        side: &'static str,
        field: &'static str,
        why: String,
    },
    #[error("the {side}'s recorded {field} {value:?} is not a number")]
    NotANumber {
        side: &'static str,
        field: &'static str,
        value: String,
    },
    #[error("a {0} ns guard interval is not an HT/VHT one (400 or 800)")]
    HtGuardInterval(u32),
    #[error("a {0} ns guard interval is not an HE one")]
    HeGuardInterval(u32),
    #[error("the band {0} is not in the airtime model")]
    Band(String),
    #[error("{kbps} kbit/s is not an {standard} rate")]
    LegacyRate { kbps: u64, standard: String },
    #[error("802.11b: the PLCP preamble (long or short) is not recorded")]
    DsssPreamble,
    #[error("{0} is not in the airtime model (802.11a/g/n/ac/ax)")]
    Standard(String),
    #[error("the {side}'s security {value} is not in the model (open, CCMP, GCMP)")]
    Security { side: &'static str, value: String },
    /// The recorded PHY (described) is not one the standard defines.
    #[error("the recorded {0} is not a configuration the standard defines")]
    InvalidPhy(String),
    #[error(
        "the recorded transmit rate, {} Mbit/s, is not the {:.1} Mbit/s of {phy}",
        recorded_kbps / 1000.0,
        model_kbps / 1000.0
    )]
    RateMismatch {
        recorded_kbps: f64,
        model_kbps: f64,
        phy: String,
    },
    #[error("the {side}'s interface MTU is not recorded")]
    NoMtu { side: &'static str },
    #[error("the model is of a saturated stream, not {}", .0.name())]
    NotAStream(TestKind),
    #[error(transparent)]
    Airtime(#[from] AirtimeError),
}

/// One campaign's 802.11 link for one direction of data.
#[derive(Debug, Clone, PartialEq)]
pub enum WifiModel {
    /// Not an 802.11 link, or no link recorded: why, in words.
    NotWifi(String),
    Known(WifiLink),
    /// An 802.11 link the model cannot be applied to: why.
    Unavailable(String),
}

impl WifiLink {
    /// "802.11g 54 Mbit/s, 20 MHz, 2.4 GHz, open; emulated by the lab (…)".
    pub fn text(&self) -> String {
        let a = &self.assumptions;
        let security = match a.security {
            Security::Open => "open",
            Security::Ccmp => "CCMP",
            Security::Gcmp => "GCMP",
        };
        let mut t = format!(
            "{}, {security}, MTU {} bytes",
            self.phy.describe(),
            a.mtu_bytes
        );
        if self.phy.is_high_throughput() {
            t.push_str(&format!(", A-MPDU of up to {} MPDUs", a.ampdu));
        }
        match &self.origin {
            Origin::Recorded { side } => {
                t.push_str(&format!("; as the {side} recorded it"));
                if self.phy.is_high_throughput() {
                    t.push_str(
                        " (its aggregation is not recorded: the model takes the largest, so its \
                         figure is the upper bound)",
                    );
                }
            }
            Origin::Emulated {
                rate_bps,
                overhead_bytes,
                ..
            } => {
                t.push_str("; emulated by the lab");
                if let (Some(r), Some(o)) = (rate_bps, overhead_bytes) {
                    t.push_str(&format!(
                        " (tbf at {} plus {o} bytes per packet)",
                        crate::headers::rate_text(*r)
                    ));
                }
                t.push_str(&format!(", which leaves out {LEAVES_OUT}"));
            }
        }
        t
    }

    /// The model's theoretical maximum goodput of one saturated stream, bit/s.
    pub fn max_goodput_bps(
        &self,
        family: Family,
        kind: TestKind,
        size: u32,
    ) -> Result<f64, ModelUnavailable> {
        let transport = match kind {
            TestKind::UdpStream => Transport::Udp,
            TestKind::TcpStream => Transport::Tcp,
            other => return Err(ModelUnavailable::NotAStream(other)),
        };
        Ok(estimate(&self.phy, &self.assumptions, family, transport, size)?.goodput_bps)
    }

    /// The most the measurement can show without something being wrong, bit/s: the
    /// model's maximum; for an emulated link the higher of that and the shaper's own
    /// ceiling (tbf charges the mean symbol padding, not each frame's), with the bucket
    /// a run of `duration_s` lets through on top.
    pub(super) fn ceiling_bps(
        &self,
        family: Family,
        kind: TestKind,
        size: u32,
        duration_s: Option<f64>,
    ) -> Option<f64> {
        let model = self.max_goodput_bps(family, kind, size).ok()?;
        let Origin::Emulated {
            rate_bps: Some(rate),
            overhead_bytes: Some(overhead),
            burst_bytes,
        } = self.origin
        else {
            return Some(model);
        };
        // tbf counts a veth frame (model's TbfVeth: the IP packet and the Ethernet
        // header) and the overhead; bulk TCP goes in full-MTU segments.
        let mtu = self.assumptions.mtu_bytes;
        let (app, packet) = match kind {
            TestKind::TcpStream => (
                f64::from(mtu) - f64::from(model::tcp_header_bytes(family)),
                mtu,
            ),
            _ => (
                f64::from(size),
                size.saturating_add(Transport::Udp.header_bytes() + family.ip_header_bytes()),
            ),
        };
        // What a veth frame adds to its packet (in f64: an MTU read from a file may be
        // anything, and must not overflow).
        let veth_bytes = f64::from(model::LinkModel::TbfVeth.frame_bytes(0));
        let frame = f64::from(packet) + veth_bytes + f64::from(overhead);
        let shaper = rate * app / frame;
        // The bucket, and one packet more: a rate over a span from the first to the
        // last arrival counts one packet beyond the span's time.
        let bucket = match (burst_bytes, duration_s) {
            (Some(b), Some(t)) if t > 0.0 => 1.0 + (b as f64 + frame) * 8.0 / (rate * t),
            _ => 1.0,
        };
        Some(model.max(shaper) * bucket)
    }
}

/// Distinct values of `SIDE.link.{before,after}.FIELD` over a campaign's runs.
fn recorded_values<'a>(c: &'a CampaignData, side: &str, field: &str) -> Vec<&'a str> {
    let mut v: Vec<&str> = c
        .link_values
        .iter()
        .filter(|(k, _, _)| {
            k.strip_prefix(side)
                .and_then(|k| k.strip_prefix(".link."))
                .and_then(|k| k.split_once('.'))
                .is_some_and(|(phase, f)| (phase == "before" || phase == "after") && f == field)
        })
        .map(|(_, v, _)| v.as_str())
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Why `field` is missing, from the side's `unavailable` lists ("tx_mcs, width_mhz: not
/// reported by the Native Wifi API; noise_dbm: …").
fn unavailable_reason(c: &CampaignData, side: &str, field: &str) -> Option<String> {
    recorded_values(c, side, "unavailable")
        .iter()
        .find_map(|text| {
            text.split("; ").find_map(|group| {
                let (names, why) = group.split_once(": ")?;
                names
                    .split(", ")
                    .any(|n| n.trim() == field)
                    .then(|| why.to_string())
            })
        })
}

/// The sending side's recorded fields, each with one value over the campaign.
struct Recorded<'a> {
    c: &'a CampaignData,
    side: &'static str,
}

impl Recorded<'_> {
    fn one(&self, field: &'static str) -> Result<Option<&str>, ModelUnavailable> {
        let v = recorded_values(self.c, self.side, field);
        match v.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one)),
            many => Err(ModelUnavailable::Changed {
                side: self.side,
                field,
                values: many.iter().map(|v| shown(v)).collect(),
            }),
        }
    }

    fn need(&self, field: &'static str) -> Result<&str, ModelUnavailable> {
        self.one(field)?
            .ok_or_else(|| ModelUnavailable::NotRecorded {
                side: self.side,
                field,
                why: unavailable_reason(self.c, self.side, field)
                    .map_or_else(|| "no reason recorded".to_string(), |w| shown(&w)),
            })
    }

    fn number<T: std::str::FromStr>(&self, field: &'static str) -> Result<T, ModelUnavailable> {
        let v = self.need(field)?;
        v.trim().parse().map_err(|_| ModelUnavailable::NotANumber {
            side: self.side,
            field,
            value: shown(v),
        })
    }

    fn ht_gi(&self) -> Result<Gi, ModelUnavailable> {
        match self.number::<u32>("guard_interval_ns")? {
            400 => Ok(Gi::Short),
            800 => Ok(Gi::Long),
            g => Err(ModelUnavailable::HtGuardInterval(g)),
        }
    }

    fn band(&self) -> Result<Band, ModelUnavailable> {
        match self.need("band")? {
            "2.4GHz" => Ok(Band::Ghz2_4),
            "5GHz" => Ok(Band::Ghz5),
            "6GHz" => Ok(Band::Ghz6),
            b => Err(ModelUnavailable::Band(shown(b))),
        }
    }

    /// The PHY of the recorded transmit rate.
    fn phy(&self) -> Result<Phy, ModelUnavailable> {
        let standard = self.need("standard")?;
        let legacy_mbps = || -> Result<u32, ModelUnavailable> {
            let kbps: u64 = self.number("tx_bitrate_kbps")?;
            u32::try_from(kbps / 1000)
                .ok()
                .filter(|_| kbps.is_multiple_of(1000))
                .ok_or_else(|| ModelUnavailable::LegacyRate {
                    kbps,
                    standard: shown(standard),
                })
        };
        Ok(match standard {
            "802.11a" | "802.11g" => Phy::Ofdm {
                rate_mbps: legacy_mbps()?,
                erp: standard == "802.11g",
            },
            "802.11b" => return Err(ModelUnavailable::DsssPreamble),
            "802.11n" => Phy::Ht {
                mcs: self.number("tx_mcs")?,
                width_mhz: self.number("width_mhz")?,
                gi: self.ht_gi()?,
                band: self.band()?,
            },
            "802.11ac" => Phy::Vht {
                mcs: self.number("tx_mcs")?,
                nss: self.number("spatial_streams")?,
                width_mhz: self.number("width_mhz")?,
                gi: self.ht_gi()?,
            },
            "802.11ax" => Phy::He {
                mcs: self.number("tx_mcs")?,
                nss: self.number("spatial_streams")?,
                width_mhz: self.number("width_mhz")?,
                gi: match self.number::<u32>("guard_interval_ns")? {
                    800 => HeGi::Us0_8,
                    1600 => HeGi::Us1_6,
                    3200 => HeGi::Us3_2,
                    g => return Err(ModelUnavailable::HeGuardInterval(g)),
                },
                band: self.band()?,
            },
            other => return Err(ModelUnavailable::Standard(shown(other))),
        })
    }

    fn security(&self) -> Result<Security, ModelUnavailable> {
        match self.need("security")? {
            "open" => Ok(Security::Open),
            // WPA2, WPA3-Personal and OWE protect unicast data with CCMP-128.
            "wpa2" | "wpa3" | "owe" => Ok(Security::Ccmp),
            other => Err(ModelUnavailable::Security {
                side: self.side,
                value: shown(other),
            }),
        }
    }
}

/// The sending side of a direction, and the other end.
fn sides(direction: Direction) -> Option<(&'static str, &'static str)> {
    match direction {
        Direction::Forward => Some(("client", "server")),
        Direction::Reverse => Some(("server", "client")),
        Direction::Bidir => None,
    }
}

const BIDIR: &str = "a bidirectional test has two senders; the model is of one saturated sender";

fn recorded(c: &CampaignData, direction: Direction) -> WifiModel {
    let kinds_any = ["client", "server"]
        .iter()
        .any(|s| !recorded_values(c, s, "kind").is_empty());
    if !kinds_any {
        return WifiModel::NotWifi("no link state was recorded with its runs".to_string());
    }
    let wifi_somewhere = ["client", "server"]
        .iter()
        .any(|s| recorded_values(c, s, "kind").contains(&"wifi"));
    let Some((sender, receiver)) = sides(direction) else {
        return if wifi_somewhere {
            WifiModel::Unavailable(BIDIR.to_string())
        } else {
            WifiModel::NotWifi("not an 802.11 link".to_string())
        };
    };
    let kinds = recorded_values(c, sender, "kind");
    if !kinds.contains(&"wifi") {
        return if recorded_values(c, receiver, "kind").contains(&"wifi") {
            WifiModel::Unavailable(format!(
                "the data went from the {sender} ({}) to the Wi-Fi {receiver}: the link state \
                 records the streams and guard interval of the transmit rate only",
                if kinds.is_empty() {
                    "no link recorded".to_string()
                } else {
                    shown(&kinds.join(", "))
                }
            ))
        } else {
            WifiModel::NotWifi(format!(
                "the {sender}'s link was {}",
                shown(&kinds.join(", "))
            ))
        };
    }
    if kinds.len() > 1 {
        return WifiModel::Unavailable(format!(
            "the {sender}'s link changed kind during the campaign ({})",
            shown(&kinds.join(", "))
        ));
    }
    let r = Recorded { c, side: sender };
    let link = (|| -> Result<WifiLink, ModelUnavailable> {
        let phy = r.phy()?;
        if !phy.is_valid() {
            return Err(ModelUnavailable::InvalidPhy(phy.describe()));
        }
        if let (Some(kbps), Some(model)) = (r.one("tx_bitrate_kbps")?, phy.kernel_rate_100kbps()) {
            // NaN would pass the comparison below (every comparison with it is false).
            let recorded_kbps: f64 = kbps
                .trim()
                .parse()
                .ok()
                .filter(|k: &f64| k.is_finite() && (0.0..=MAX_RECORDED_KBPS).contains(k))
                .ok_or_else(|| ModelUnavailable::NotANumber {
                    side: sender,
                    field: "tx_bitrate_kbps",
                    value: shown(kbps),
                })?;
            let model_kbps = f64::from(model) * 100.0;
            if (recorded_kbps - model_kbps).abs() > RATE_MISMATCH * model_kbps {
                return Err(ModelUnavailable::RateMismatch {
                    recorded_kbps,
                    model_kbps,
                    phy: phy.describe(),
                });
            }
        }
        let mtu_bytes = c
            .hosts
            .get(sender)
            .and_then(|h| h.get("iface.mtu_ipv4"))
            .and_then(|m| m.trim().parse::<u32>().ok())
            .ok_or(ModelUnavailable::NoMtu { side: sender })?;
        Ok(WifiLink {
            phy,
            assumptions: Assumptions {
                ampdu: if phy.is_high_throughput() {
                    RECORDED_AMPDU
                } else {
                    1
                },
                security: r.security()?,
                mtu_bytes,
                ..Assumptions::default()
            },
            origin: Origin::Recorded { side: sender },
        })
    })();
    match link {
        Ok(l) => WifiModel::Known(l),
        Err(why) => WifiModel::Unavailable(why.to_string()),
    }
}

fn emulated(lab: &BTreeMap<String, String>, name: &str, direction: Direction) -> WifiModel {
    let phy = match model::link::parse(name) {
        Ok(model::Link::Wifi(phy)) => phy,
        Ok(_) => {
            return WifiModel::NotWifi(format!("the lab emulated {}, not 802.11", shown(name)))
        }
        Err(e) => {
            return WifiModel::Unavailable(format!(
                "the lab's emulated link {:?} does not parse: {}",
                shown(name),
                shown(&e.to_string())
            ))
        }
    };
    if sides(direction).is_none() {
        return WifiModel::Unavailable(BIDIR.to_string());
    }
    let get = |k: &str| lab.get(&format!("lab.{k}")).map(|v| v.trim());
    if !get("shaping").is_some_and(|s| s.starts_with("tbf")) {
        return WifiModel::Unavailable(format!(
            "the lab's shaping was not applied ({}), so it did not emulate {}",
            shown(get("shaping").unwrap_or("not recorded")),
            shown(name.trim())
        ));
    }
    let Some(mtu_bytes) = get("mtu_bytes").and_then(|m| m.parse().ok()) else {
        return WifiModel::Unavailable("the lab's MTU is not recorded".to_string());
    };
    let ampdu = match get("emulated_ampdu").map(str::parse::<u32>) {
        Some(Ok(n)) => n,
        None if !phy.is_high_throughput() => 1,
        _ => {
            return WifiModel::Unavailable(
                "the lab metadata does not record the A-MPDU length its emulation assumed"
                    .to_string(),
            )
        }
    };
    WifiModel::Known(WifiLink {
        phy,
        assumptions: Assumptions {
            mtu_bytes,
            ampdu,
            ..Assumptions::default()
        },
        origin: Origin::Emulated {
            rate_bps: lab_rate_bps(lab),
            overhead_bytes: get("emulation_overhead_bytes").and_then(|o| o.parse().ok()),
            burst_bytes: get("burst_bytes").and_then(|b| b.parse().ok()),
        },
    })
}

/// The tbf rate a lab recorded (`lab.rate_bps`), bit/s: `None` when missing or no
/// positive finite number (a stored "NaN" is never quoted as "tbf at NaN bit/s").
pub fn lab_rate_bps(lab: &BTreeMap<String, String>) -> Option<f64> {
    lab.get("lab.rate_bps")
        .and_then(|r| r.trim().parse::<f64>().ok())
        .filter(|r| r.is_finite() && *r > 0.0)
}

/// One campaign's 802.11 link for data in `direction`: the lab's emulated link, else
/// the one its sending side recorded.
pub fn campaign_wifi(c: &CampaignData, direction: Direction) -> WifiModel {
    let lab = c.hosts.get("lab");
    match lab.and_then(|l| Some((l, l.get("lab.emulated_link")?))) {
        Some((lab, name)) => emulated(lab, name, direction),
        None => recorded(c, direction),
    }
}
