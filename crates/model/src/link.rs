//! The link names a user types (`dualperf model --link`, `dualperf lab up --link`):
//!
//! - `loopback`, `ethernet[:RATE]`, `tbf:RATE` — the framing models of [`crate::overhead`];
//! - `802.11a:RATE`, `802.11b:RATE`, `802.11g:RATE` — a legacy rate in Mbit/s (`54`,
//!   `5.5`) or any bit rate the quantity parser reads (`54M`, `5.5mbit`);
//! - `802.11n:mcs=M,width=20|40,gi=long|short[,nss=N][,band=2.4|5]`;
//! - `802.11ac:mcs=M,nss=N,width=20|40|80|160,gi=long|short`;
//! - `802.11ax:mcs=M,nss=N,width=20|40|80|160,gi=0.8|1.6|3.2[,band=2.4|5|6]`.
//!
//! Rates go through `wire::quantity` (the one grammar for quantities). Every error names
//! the field and the values it takes.

use crate::wifi::{Band, Gi, HeGi, Phy, Preamble};
use serde::{Deserialize, Serialize};
use std::fmt;
use wire::quantity::{format_bit_rate, parse_bit_rate};
use wire::text::visible;

const KINDS: &str = "loopback, ethernet[:RATE], tbf:RATE, 802.11a:RATE, 802.11b:RATE, \
                     802.11g:RATE, 802.11n:…, 802.11ac:…, 802.11ax:…";

/// A link the models know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "link", rename_all = "kebab-case")]
pub enum Link {
    Loopback,
    Ethernet { rate_bps: Option<u64> },
    Tbf { rate_bps: u64 },
    Wifi(Phy),
}

/// A link name that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    // What the user typed is quoted visibly escaped: an ESC shows as \u{1b}, never
    // reaches the terminal, and is not silently dropped from the quote.
    #[error("unknown link '{}'; links are {KINDS}", visible(input))]
    UnknownKind { input: String },
    #[error(
        "{link}: {field} '{}' is not allowed; {field} takes {allowed}",
        visible(value)
    )]
    BadValue {
        link: &'static str,
        field: &'static str,
        value: String,
        allowed: String,
    },
    #[error("{link}: {field}= is missing; it takes {allowed}")]
    Missing {
        link: &'static str,
        field: &'static str,
        allowed: &'static str,
    },
    #[error("{link}: unknown field '{}'; fields are {allowed}", visible(field))]
    UnknownField {
        link: &'static str,
        field: String,
        allowed: &'static str,
    },
    #[error("{link}: {detail}")]
    Invalid { link: &'static str, detail: String },
}

fn bad(
    link: &'static str,
    field: &'static str,
    value: &str,
    allowed: impl Into<String>,
) -> LinkError {
    LinkError::BadValue {
        link,
        field,
        value: value.to_string(),
        allowed: allowed.into(),
    }
}

/// Parses a link name; see the module header for the grammar.
pub fn parse(input: &str) -> Result<Link, LinkError> {
    let trimmed = input.trim();
    let (kind, rest) = match trimmed.split_once(':') {
        Some((k, r)) => (k, Some(r)),
        None => (trimmed, None),
    };
    let lower = kind.to_ascii_lowercase();
    match (lower.as_str(), rest) {
        ("loopback", None) => Ok(Link::Loopback),
        ("ethernet", None) => Ok(Link::Ethernet { rate_bps: None }),
        ("ethernet", Some(r)) => Ok(Link::Ethernet {
            rate_bps: Some(rate("ethernet", r)?),
        }),
        ("tbf", Some(r)) => Ok(Link::Tbf {
            rate_bps: rate("tbf", r)?,
        }),
        ("tbf", None) => Err(LinkError::Missing {
            link: "tbf",
            field: "RATE",
            allowed: "a bit rate, e.g. tbf:100mbit",
        }),
        ("802.11b", Some(r)) => legacy_b(r),
        ("802.11a", Some(r)) => legacy_ofdm("802.11a", r, false),
        ("802.11g", Some(r)) => legacy_ofdm("802.11g", r, true),
        ("802.11n", Some(r)) => ht(r),
        ("802.11ac", Some(r)) => vht(r),
        ("802.11ax", Some(r)) => he(r),
        ("802.11a" | "802.11b" | "802.11g", None) => Err(LinkError::Missing {
            link: "802.11",
            field: "RATE",
            allowed: "a rate in Mbit/s after a colon, e.g. 802.11g:54",
        }),
        ("802.11n" | "802.11ac" | "802.11ax", None) => Err(LinkError::Missing {
            link: "802.11",
            field: "mcs",
            allowed: "fields after a colon, e.g. 802.11ac:mcs=9,nss=2,width=80,gi=short",
        }),
        _ => Err(LinkError::UnknownKind {
            input: input.to_string(),
        }),
    }
}

fn rate(link: &'static str, text: &str) -> Result<u64, LinkError> {
    parse_bit_rate(text).map_err(|e| bad(link, "RATE", text, e.hint))
}

/// A legacy rate in 100 kbit/s: a bare number is Mbit/s, anything else a bit rate; both
/// read by `wire::quantity` (which refuses NaN, infinities and signs).
fn legacy_rate_100kbps(link: &'static str, text: &str, allowed: &str) -> Result<u32, LinkError> {
    let t = text.trim();
    let bare = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let bps = if bare {
        parse_bit_rate(&format!("{t}M"))
    } else {
        parse_bit_rate(t)
    }
    .map_err(|_| bad(link, "RATE", t, allowed))?;
    if bps % 100_000 != 0 {
        return Err(bad(link, "RATE", t, allowed));
    }
    u32::try_from(bps / 100_000).map_err(|_| bad(link, "RATE", t, allowed))
}

fn legacy_b(text: &str) -> Result<Link, LinkError> {
    const ALLOWED: &str = "1, 2, 5.5 or 11 (Mbit/s)";
    let r = legacy_rate_100kbps("802.11b", text, ALLOWED)?;
    if ![10, 20, 55, 110].contains(&r) {
        return Err(bad("802.11b", "RATE", text, ALLOWED));
    }
    Ok(Link::Wifi(Phy::Dsss {
        rate_100kbps: r,
        preamble: Preamble::Long,
    }))
}

fn legacy_ofdm(link: &'static str, text: &str, erp: bool) -> Result<Link, LinkError> {
    const ALLOWED: &str = "6, 9, 12, 18, 24, 36, 48 or 54 (Mbit/s)";
    let r = legacy_rate_100kbps(link, text, ALLOWED)?;
    if r % 10 != 0 || ![6, 9, 12, 18, 24, 36, 48, 54].contains(&(r / 10)) {
        return Err(bad(link, "RATE", text, ALLOWED));
    }
    Ok(Link::Wifi(Phy::Ofdm {
        rate_mbps: r / 10,
        erp,
    }))
}

/// `key=value` fields, each at most once, each known.
struct Fields<'a> {
    link: &'static str,
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Fields<'a> {
    fn parse(link: &'static str, allowed: &'static str, text: &'a str) -> Result<Self, LinkError> {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((k, v)) = part.split_once('=') else {
                return Err(LinkError::UnknownField {
                    link,
                    field: part.to_string(),
                    allowed,
                });
            };
            let k = k.trim();
            if !allowed.split(", ").any(|a| a == k) {
                return Err(LinkError::UnknownField {
                    link,
                    field: k.to_string(),
                    allowed,
                });
            }
            if pairs.iter().any(|(seen, _)| *seen == k) {
                return Err(LinkError::Invalid {
                    link,
                    detail: format!("{k}= is given twice"),
                });
            }
            pairs.push((k, v.trim()));
        }
        Ok(Fields { link, pairs })
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn required(&self, key: &'static str, allowed: &'static str) -> Result<&'a str, LinkError> {
        self.get(key).ok_or(LinkError::Missing {
            link: self.link,
            field: key,
            allowed,
        })
    }

    fn number(
        &self,
        key: &'static str,
        allowed: &'static str,
        range: std::ops::RangeInclusive<u8>,
    ) -> Result<Option<u8>, LinkError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.parse::<u8>() {
                Ok(n) if range.contains(&n) => Ok(Some(n)),
                _ => Err(bad(self.link, key, v, allowed)),
            },
        }
    }

    fn width(&self, allowed: &'static str, widths: &[u16]) -> Result<u16, LinkError> {
        let v = self.required("width", allowed)?;
        let w = v
            .strip_suffix("MHz")
            .or_else(|| v.strip_suffix("mhz"))
            .unwrap_or(v);
        match w.trim().parse::<u16>() {
            Ok(n) if widths.contains(&n) => Ok(n),
            _ => Err(bad(self.link, "width", v, allowed)),
        }
    }

    fn gi(&self) -> Result<Gi, LinkError> {
        const ALLOWED: &str = "long (800 ns) or short (400 ns)";
        let v = self.required("gi", ALLOWED)?;
        match v.to_ascii_lowercase().as_str() {
            "long" | "800" | "0.8" => Ok(Gi::Long),
            "short" | "400" | "0.4" => Ok(Gi::Short),
            _ => Err(bad(self.link, "gi", v, ALLOWED)),
        }
    }

    fn band(
        &self,
        default: Band,
        allowed: &'static str,
        bands: &[Band],
    ) -> Result<Band, LinkError> {
        let Some(v) = self.get("band") else {
            return Ok(default);
        };
        let b = match v.trim_end_matches("GHz").trim_end_matches("ghz").trim() {
            "2.4" => Band::Ghz2_4,
            "5" => Band::Ghz5,
            "6" => Band::Ghz6,
            _ => return Err(bad(self.link, "band", v, allowed)),
        };
        if bands.contains(&b) {
            Ok(b)
        } else {
            Err(bad(self.link, "band", v, allowed))
        }
    }
}

fn ht(text: &str) -> Result<Link, LinkError> {
    const L: &str = "802.11n";
    let f = Fields::parse(L, "mcs, width, gi, nss, band", text)?;
    const MCS: &str = "0 to 31, or 0 to 7 with nss=1..4";
    f.required("mcs", MCS)?;
    let mcs = f.number("mcs", MCS, 0..=31)?.unwrap_or(0);
    let nss = f.number("nss", "1, 2, 3 or 4", 1..=4)?;
    let mcs = match nss {
        None => mcs,
        Some(n) if mcs < 8 => mcs + 8 * (n - 1),
        Some(n) if mcs / 8 + 1 == n => mcs,
        Some(n) => {
            return Err(LinkError::Invalid {
                link: L,
                detail: format!(
                    "MCS {mcs} already means {} streams, not nss={n}; give MCS 0 to 7 with nss",
                    mcs / 8 + 1
                ),
            })
        }
    };
    let width_mhz = f.width("20 or 40 (MHz)", &[20, 40])?;
    let gi = f.gi()?;
    let band = f.band(Band::Ghz5, "2.4 or 5 (GHz)", &[Band::Ghz2_4, Band::Ghz5])?;
    Ok(Link::Wifi(Phy::Ht {
        mcs,
        width_mhz,
        gi,
        band,
    }))
}

fn vht(text: &str) -> Result<Link, LinkError> {
    const L: &str = "802.11ac";
    let f = Fields::parse(L, "mcs, nss, width, gi", text)?;
    const MCS: &str = "0 to 9";
    const NSS: &str = "1 to 8";
    f.required("mcs", MCS)?;
    f.required("nss", NSS)?;
    let mcs = f.number("mcs", MCS, 0..=9)?.unwrap_or(0);
    let nss = f.number("nss", NSS, 1..=8)?.unwrap_or(1);
    let width_mhz = f.width("20, 40, 80 or 160 (MHz)", &[20, 40, 80, 160])?;
    let gi = f.gi()?;
    let phy = Phy::Vht {
        mcs,
        nss,
        width_mhz,
        gi,
    };
    // VHT leaves out the MCSs whose data bits per symbol are not whole (MCS 9 at 20 MHz
    // with 1, 2, 4, 5, 7 or 8 streams; IEEE 802.11-2020 Tables 21-30..21-37).
    let (bits, num, den) = crate::wifi::phy::modulation(mcs);
    let sd = crate::wifi::phy::data_subcarriers(false, width_mhz).unwrap_or(0);
    if !(sd * bits * u64::from(nss) * num).is_multiple_of(den) {
        return Err(LinkError::Invalid {
            link: L,
            detail: format!(
                "MCS {mcs} with {nss} stream(s) at {width_mhz} MHz is not a VHT rate (the \
                 standard leaves it out); use another MCS, width or stream count"
            ),
        });
    }
    Ok(Link::Wifi(phy))
}

fn he(text: &str) -> Result<Link, LinkError> {
    const L: &str = "802.11ax";
    let f = Fields::parse(L, "mcs, nss, width, gi, band", text)?;
    const MCS: &str = "0 to 11";
    const NSS: &str = "1 to 8";
    const GI: &str = "0.8, 1.6 or 3.2 (µs)";
    f.required("mcs", MCS)?;
    f.required("nss", NSS)?;
    let mcs = f.number("mcs", MCS, 0..=11)?.unwrap_or(0);
    let nss = f.number("nss", NSS, 1..=8)?.unwrap_or(1);
    let width_mhz = f.width("20, 40, 80 or 160 (MHz)", &[20, 40, 80, 160])?;
    let g = f.required("gi", GI)?;
    let gi = match g.trim_end_matches("us").trim_end_matches("µs") {
        "0.8" | "800" => HeGi::Us0_8,
        "1.6" | "1600" => HeGi::Us1_6,
        "3.2" | "3200" => HeGi::Us3_2,
        _ => return Err(bad(L, "gi", g, GI)),
    };
    let band = f.band(
        Band::Ghz5,
        "2.4, 5 or 6 (GHz)",
        &[Band::Ghz2_4, Band::Ghz5, Band::Ghz6],
    )?;
    if band == Band::Ghz2_4 && width_mhz > 40 {
        return Err(bad(
            L,
            "width",
            &width_mhz.to_string(),
            "20 or 40 (MHz) in the 2.4 GHz band",
        ));
    }
    Ok(Link::Wifi(Phy::He {
        mcs,
        nss,
        width_mhz,
        gi,
        band,
    }))
}

impl fmt::Display for Link {
    /// The canonical link name, which [`parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let band = |b: Band| match b {
            Band::Ghz2_4 => "2.4",
            Band::Ghz5 => "5",
            Band::Ghz6 => "6",
        };
        let gi = |g: Gi| match g {
            Gi::Long => "long",
            Gi::Short => "short",
        };
        match *self {
            Link::Loopback => f.write_str("loopback"),
            Link::Ethernet { rate_bps: None } => f.write_str("ethernet"),
            Link::Ethernet { rate_bps: Some(r) } => write!(f, "ethernet:{}", format_bit_rate(r)),
            Link::Tbf { rate_bps } => write!(f, "tbf:{}", format_bit_rate(rate_bps)),
            Link::Wifi(phy) => match phy {
                Phy::Dsss { rate_100kbps, .. } => {
                    write!(f, "802.11b:{}", f64::from(rate_100kbps) / 10.0)
                }
                Phy::Ofdm { rate_mbps, .. } => write!(f, "{}:{rate_mbps}", phy.standard()),
                Phy::Ht {
                    mcs,
                    width_mhz,
                    gi: g,
                    band: b,
                } => write!(
                    f,
                    "802.11n:mcs={mcs},width={width_mhz},gi={},band={}",
                    gi(g),
                    band(b)
                ),
                Phy::Vht {
                    mcs,
                    nss,
                    width_mhz,
                    gi: g,
                } => write!(
                    f,
                    "802.11ac:mcs={mcs},nss={nss},width={width_mhz},gi={}",
                    gi(g)
                ),
                Phy::He {
                    mcs,
                    nss,
                    width_mhz,
                    gi: g,
                    band: b,
                } => write!(
                    f,
                    "802.11ax:mcs={mcs},nss={nss},width={width_mhz},gi={},band={}",
                    g.ns() as f64 / 1000.0,
                    band(b)
                ),
            },
        }
    }
}

#[cfg(test)]
mod tests;
