//! nl80211 over generic netlink, without I/O: the request messages dualperf sends and a
//! checked parser of the replies (netlink headers, generic netlink header, nested
//! attributes, the RSN element of a BSS). No length in the input is trusted: every
//! header and attribute is checked against the bytes that remain, nesting is bounded,
//! and a malformed reply is an error, never a panic. The layouts are the kernel's
//! (`include/uapi/linux/netlink.h`, `genetlink.h`, `nl80211.h`); attribute numbers
//! below are from `nl80211.h`.

use super::{
    band_of, Band, Field, LinkKind, LinkState, Security, SecurityError, Standard, WifiError,
};

/// netlink message types and flags (`netlink.h`).
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
pub const NLM_F_REQUEST: u16 = 0x1;
pub const NLM_F_ACK: u16 = 0x4;
pub const NLM_F_DUMP: u16 = 0x300;
const NLMSG_HDRLEN: usize = 16;
const GENL_HDRLEN: usize = 4;
const NLA_HDRLEN: usize = 4;
/// `NLA_TYPE_MASK`: the type without `NLA_F_NESTED` / `NLA_F_NET_BYTEORDER`.
const NLA_TYPE_MASK: u16 = 0x3fff;

/// The generic netlink controller (`genetlink.h`).
pub const GENL_ID_CTRL: u16 = 0x10;
pub const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;

/// `enum nl80211_commands`.
pub const CMD_GET_INTERFACE: u8 = 5;
pub const CMD_GET_STATION: u8 = 17;
pub const CMD_GET_SCAN: u8 = 32;
pub const CMD_GET_SURVEY: u8 = 50;

/// `enum nl80211_attrs`.
pub const ATTR_IFINDEX: u16 = 3;
const ATTR_IFNAME: u16 = 4;
const ATTR_IFTYPE: u16 = 5;
const ATTR_MAC: u16 = 6;
const ATTR_STA_INFO: u16 = 21;
const ATTR_WIPHY_FREQ: u16 = 38;
const ATTR_BSS: u16 = 47;
const ATTR_SURVEY_INFO: u16 = 84;
const ATTR_CHANNEL_WIDTH: u16 = 159;

/// `enum nl80211_sta_info`.
const STA_INFO_SIGNAL: u16 = 7;
const STA_INFO_TX_BITRATE: u16 = 8;
const STA_INFO_SIGNAL_AVG: u16 = 13;
const STA_INFO_RX_BITRATE: u16 = 14;

/// `enum nl80211_rate_info`.
const RATE_BITRATE: u16 = 1;
const RATE_MCS: u16 = 2;
const RATE_40_MHZ: u16 = 3;
const RATE_SHORT_GI: u16 = 4;
const RATE_BITRATE32: u16 = 5;
const RATE_VHT_MCS: u16 = 6;
const RATE_VHT_NSS: u16 = 7;
const RATE_80_MHZ: u16 = 8;
const RATE_80P80_MHZ: u16 = 9;
const RATE_160_MHZ: u16 = 10;
const RATE_10_MHZ: u16 = 11;
const RATE_5_MHZ: u16 = 12;
const RATE_HE_MCS: u16 = 13;
const RATE_HE_NSS: u16 = 14;
const RATE_HE_GI: u16 = 15;
const RATE_320_MHZ: u16 = 18;
const RATE_EHT_MCS: u16 = 19;
const RATE_EHT_NSS: u16 = 20;
const RATE_EHT_GI: u16 = 21;

/// `enum nl80211_survey_info`.
const SURVEY_FREQUENCY: u16 = 1;
const SURVEY_NOISE: u16 = 2;
const SURVEY_IN_USE: u16 = 3;

/// `enum nl80211_bss`.
const BSS_BSSID: u16 = 1;
const BSS_FREQUENCY: u16 = 2;
const BSS_CAPABILITY: u16 = 5;
const BSS_INFORMATION_ELEMENTS: u16 = 6;
const BSS_STATUS: u16 = 9;
const BSS_BEACON_IES: u16 = 11;
/// `NL80211_BSS_STATUS_ASSOCIATED`.
const BSS_STATUS_ASSOCIATED: u32 = 1;

/// `NL80211_IFTYPE_STATION`: a client of an access point.
pub const IFTYPE_STATION: u32 = 2;

/// Why a reply did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("netlink message truncated: {0}")]
    Truncated(&'static str),
    #[error("netlink attribute length {len} outside the {room} bytes that remain")]
    BadAttrLen { len: usize, room: usize },
    #[error("attribute {0} has the wrong size")]
    BadSize(&'static str),
    #[error("the kernel answered error {0} ({1})")]
    Kernel(i32, String),
}

/// One netlink message of a reply: its type, flags and payload (after the header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Msg<'a> {
    pub kind: u16,
    pub flags: u16,
    pub seq: u32,
    pub payload: &'a [u8],
}

/// The netlink messages in one datagram, each length checked.
pub fn messages(buf: &[u8]) -> Result<Vec<Msg<'_>>, ParseError> {
    let mut out = Vec::new();
    let mut rest = buf;
    while !rest.is_empty() {
        if rest.len() < NLMSG_HDRLEN {
            return Err(ParseError::Truncated("header"));
        }
        let len = u32_at(rest, 0) as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            return Err(ParseError::Truncated("message length"));
        }
        out.push(Msg {
            kind: u16_at(rest, 4),
            flags: u16_at(rest, 6),
            seq: u32_at(rest, 8),
            payload: &rest[NLMSG_HDRLEN..len],
        });
        rest = &rest[align4(len).min(rest.len())..];
    }
    Ok(out)
}

/// What a message says about the dump it belongs to.
#[derive(Debug, PartialEq, Eq)]
pub enum Part<'a> {
    /// A family message: the generic netlink command and its attributes' bytes.
    Data { cmd: u8, attrs: &'a [u8] },
    /// `NLMSG_DONE` or an acknowledgement (error 0).
    Done,
}

/// Classify one message: data, end of dump, or the kernel's error (`-errno`).
pub fn part<'a>(m: &Msg<'a>) -> Result<Part<'a>, ParseError> {
    match m.kind {
        NLMSG_DONE => Ok(Part::Done),
        NLMSG_ERROR => {
            if m.payload.len() < 4 {
                return Err(ParseError::Truncated("error message"));
            }
            let code = u32_at(m.payload, 0) as i32;
            if code == 0 {
                Ok(Part::Done)
            } else {
                let errno = code.saturating_neg();
                let text = std::io::Error::from_raw_os_error(errno).to_string();
                Err(ParseError::Kernel(errno, text))
            }
        }
        _ => {
            if m.payload.len() < GENL_HDRLEN {
                return Err(ParseError::Truncated("generic netlink header"));
            }
            Ok(Part::Data {
                cmd: m.payload[0],
                attrs: &m.payload[GENL_HDRLEN..],
            })
        }
    }
}

/// Hands the attributes of each data message of sequence `seq` in one reply datagram
/// to `each`; `Ok(true)` once the dump (or request) is done. Messages of another
/// sequence number (a stale reply) are skipped; the kernel's error is an `Err`.
pub fn each_data(
    datagram: &[u8],
    seq: u32,
    mut each: impl FnMut(&[u8]) -> Result<(), ParseError>,
) -> Result<bool, ParseError> {
    for m in messages(datagram)? {
        if m.seq != seq {
            continue;
        }
        match part(&m)? {
            Part::Done => return Ok(true),
            Part::Data { attrs, .. } => each(attrs)?,
        }
    }
    Ok(false)
}

/// One attribute: its type (flags masked off) and payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr<'a> {
    pub kind: u16,
    pub payload: &'a [u8],
}

/// The attributes in `buf`, each length checked against what remains.
pub fn attrs(buf: &[u8]) -> Result<Vec<Attr<'_>>, ParseError> {
    let mut out = Vec::new();
    let mut rest = buf;
    // Trailing bytes shorter than a header are padding the kernel may leave.
    while rest.len() >= NLA_HDRLEN {
        let len = usize::from(u16_at(rest, 0));
        if len < NLA_HDRLEN || len > rest.len() {
            return Err(ParseError::BadAttrLen {
                len,
                room: rest.len(),
            });
        }
        out.push(Attr {
            kind: u16_at(rest, 2) & NLA_TYPE_MASK,
            payload: &rest[NLA_HDRLEN..len],
        });
        rest = &rest[align4(len).min(rest.len())..];
    }
    Ok(out)
}

fn find<'a>(list: &[Attr<'a>], kind: u16) -> Option<&'a [u8]> {
    list.iter().find(|a| a.kind == kind).map(|a| a.payload)
}

fn get_u8(list: &[Attr<'_>], kind: u16, name: &'static str) -> Result<Option<u8>, ParseError> {
    find(list, kind)
        .map(|p| p.first().copied().ok_or(ParseError::BadSize(name)))
        .transpose()
}

fn get_u16(list: &[Attr<'_>], kind: u16, name: &'static str) -> Result<Option<u16>, ParseError> {
    find(list, kind)
        .map(|p| {
            (p.len() >= 2)
                .then(|| u16_at(p, 0))
                .ok_or(ParseError::BadSize(name))
        })
        .transpose()
}

fn get_u32(list: &[Attr<'_>], kind: u16, name: &'static str) -> Result<Option<u32>, ParseError> {
    find(list, kind)
        .map(|p| {
            (p.len() >= 4)
                .then(|| u32_at(p, 0))
                .ok_or(ParseError::BadSize(name))
        })
        .transpose()
}

fn get_mac(list: &[Attr<'_>], kind: u16) -> Result<Option<[u8; 6]>, ParseError> {
    find(list, kind)
        .map(|p| {
            p.get(..6)
                .and_then(|m| <[u8; 6]>::try_from(m).ok())
                .ok_or(ParseError::BadSize("MAC address"))
        })
        .transpose()
}

/// The attributes nested in attribute `kind`, if present.
fn nested<'a>(list: &[Attr<'a>], kind: u16) -> Result<Option<Vec<Attr<'a>>>, ParseError> {
    find(list, kind).map(attrs).transpose()
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2)
        .map_or(0, |s| u16::from_ne_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
}

fn align4(n: usize) -> usize {
    n.saturating_add(3) & !3
}

/// A request: netlink header, generic netlink header (`cmd`, version 1) and attributes.
pub fn request(family: u16, cmd: u8, flags: u16, seq: u32, attributes: &[(u16, &[u8])]) -> Vec<u8> {
    let mut body = vec![cmd, 1, 0, 0];
    for (kind, payload) in attributes {
        let len = NLA_HDRLEN + payload.len();
        body.extend_from_slice(&(len as u16).to_ne_bytes());
        body.extend_from_slice(&kind.to_ne_bytes());
        body.extend_from_slice(payload);
        body.resize(align4(body.len()), 0);
    }
    let total = (NLMSG_HDRLEN + body.len()) as u32;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&total.to_ne_bytes());
    out.extend_from_slice(&family.to_ne_bytes());
    out.extend_from_slice(&(flags | NLM_F_REQUEST).to_ne_bytes());
    out.extend_from_slice(&seq.to_ne_bytes());
    out.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel fills ours in
    out.extend_from_slice(&body);
    out
}

/// The controller request for the nl80211 family's id.
pub fn family_request(seq: u32) -> Vec<u8> {
    request(
        GENL_ID_CTRL,
        CTRL_CMD_GETFAMILY,
        NLM_F_ACK,
        seq,
        &[(CTRL_ATTR_FAMILY_NAME, b"nl80211\0")],
    )
}

/// A dump request of `cmd`, for one interface when `ifindex` is given.
pub fn dump_request(family: u16, cmd: u8, seq: u32, ifindex: Option<u32>) -> Vec<u8> {
    let idx = ifindex.map(u32::to_ne_bytes);
    let attributes: Vec<(u16, &[u8])> = idx.iter().map(|b| (ATTR_IFINDEX, &b[..])).collect();
    request(family, cmd, NLM_F_DUMP, seq, &attributes)
}

/// The family id in the controller's reply.
pub fn family_id(attributes: &[u8]) -> Result<Option<u16>, ParseError> {
    get_u16(&attrs(attributes)?, CTRL_ATTR_FAMILY_ID, "family id")
}

/// One interface of a `GET_INTERFACE` dump.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Interface {
    pub ifindex: Option<u32>,
    pub name: Option<String>,
    pub iftype: Option<u32>,
    pub mac: Option<[u8; 6]>,
    pub freq_mhz: Option<u32>,
    /// `enum nl80211_chan_width`.
    pub chan_width: Option<u32>,
}

pub fn parse_interface(attributes: &[u8]) -> Result<Interface, ParseError> {
    let a = attrs(attributes)?;
    Ok(Interface {
        ifindex: get_u32(&a, ATTR_IFINDEX, "ifindex")?,
        name: find(&a, ATTR_IFNAME).map(c_string),
        iftype: get_u32(&a, ATTR_IFTYPE, "iftype")?,
        mac: get_mac(&a, ATTR_MAC)?,
        freq_mhz: get_u32(&a, ATTR_WIPHY_FREQ, "frequency")?,
        chan_width: get_u32(&a, ATTR_CHANNEL_WIDTH, "channel width")?,
    })
}

/// Rate information (`NL80211_STA_INFO_TX_BITRATE` / `RX_BITRATE`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RateInfo {
    /// In 100 kbit/s, as the kernel reports it (`BITRATE32`, else `BITRATE`).
    pub bitrate_100kbps: Option<u32>,
    pub ht_mcs: Option<u8>,
    pub vht_mcs: Option<u8>,
    pub vht_nss: Option<u8>,
    pub he_mcs: Option<u8>,
    pub he_nss: Option<u8>,
    /// `enum nl80211_he_gi`: 0 = 0.8 µs, 1 = 1.6 µs, 2 = 3.2 µs.
    pub he_gi: Option<u8>,
    pub eht_mcs: Option<u8>,
    pub eht_nss: Option<u8>,
    pub eht_gi: Option<u8>,
    pub short_gi: bool,
    /// From the width flags; `None` = 20 MHz (no flag) for HT and later.
    pub width_mhz: Option<u32>,
}

pub fn parse_rate(a: &[Attr<'_>]) -> Result<RateInfo, ParseError> {
    let bitrate = match get_u32(a, RATE_BITRATE32, "bitrate32")? {
        Some(b) => Some(b),
        None => get_u16(a, RATE_BITRATE, "bitrate")?.map(u32::from),
    };
    let flag = |k| a.iter().any(|x| x.kind == k);
    let width_mhz = [
        (RATE_320_MHZ, 320),
        (RATE_160_MHZ, 160),
        (RATE_80P80_MHZ, 160),
        (RATE_80_MHZ, 80),
        (RATE_40_MHZ, 40),
        (RATE_10_MHZ, 10),
        (RATE_5_MHZ, 5),
    ]
    .into_iter()
    .find(|&(k, _)| flag(k))
    .map(|(_, w)| w);
    Ok(RateInfo {
        bitrate_100kbps: bitrate,
        ht_mcs: get_u8(a, RATE_MCS, "mcs")?,
        vht_mcs: get_u8(a, RATE_VHT_MCS, "vht mcs")?,
        vht_nss: get_u8(a, RATE_VHT_NSS, "vht nss")?,
        he_mcs: get_u8(a, RATE_HE_MCS, "he mcs")?,
        he_nss: get_u8(a, RATE_HE_NSS, "he nss")?,
        he_gi: get_u8(a, RATE_HE_GI, "he gi")?,
        eht_mcs: get_u8(a, RATE_EHT_MCS, "eht mcs")?,
        eht_nss: get_u8(a, RATE_EHT_NSS, "eht nss")?,
        eht_gi: get_u8(a, RATE_EHT_GI, "eht gi")?,
        short_gi: flag(RATE_SHORT_GI),
        width_mhz,
    })
}

impl RateInfo {
    /// The PHY the rate belongs to (legacy rates by band: DSSS/CCK rates of 1, 2, 5.5
    /// and 11 Mbit/s are 802.11b, other 2.4 GHz rates ERP-OFDM 802.11g).
    pub fn standard(&self, band: Option<Band>) -> Option<Standard> {
        if self.eht_mcs.is_some() {
            Some(Standard::Be)
        } else if self.he_mcs.is_some() {
            Some(Standard::Ax)
        } else if self.vht_mcs.is_some() {
            Some(Standard::Ac)
        } else if self.ht_mcs.is_some() {
            Some(Standard::N)
        } else {
            match (band?, self.bitrate_100kbps?) {
                (Band::G2_4, 10 | 20 | 55 | 110) => Some(Standard::B),
                (Band::G2_4, _) => Some(Standard::G),
                (Band::G5, _) => Some(Standard::A),
                _ => None,
            }
        }
    }

    /// The MCS index as the kernel reports it (HT: 0–76, which includes the streams).
    pub fn mcs(&self) -> Option<u8> {
        self.eht_mcs
            .or(self.he_mcs)
            .or(self.vht_mcs)
            .or(self.ht_mcs)
    }

    /// Spatial streams: reported for VHT/HE/EHT; for HT MCS 0–31 the index / 8 + 1
    /// (IEEE 802.11-2020 §19.5: 8 equal-modulation MCSs per stream count).
    pub fn streams(&self) -> Option<u8> {
        self.eht_nss
            .or(self.he_nss)
            .or(self.vht_nss)
            .or_else(|| self.ht_mcs.filter(|&m| m < 32).map(|m| m / 8 + 1))
    }

    /// Guard interval in ns: HE/EHT from their GI code, HT/VHT 400 (short) or 800.
    pub fn guard_interval_ns(&self) -> Option<u32> {
        let he = |gi: u8| match gi {
            0 => Some(800),
            1 => Some(1600),
            2 => Some(3200),
            _ => None,
        };
        if self.eht_mcs.is_some() {
            self.eht_gi.and_then(he)
        } else if self.he_mcs.is_some() {
            self.he_gi.and_then(he)
        } else if self.vht_mcs.is_some() || self.ht_mcs.is_some() {
            Some(if self.short_gi { 400 } else { 800 })
        } else {
            None
        }
    }
}

/// One station of a `GET_STATION` dump (for a client interface: its access point).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Station {
    pub mac: Option<[u8; 6]>,
    pub signal_dbm: Option<i8>,
    pub tx: Option<RateInfo>,
    pub rx: Option<RateInfo>,
}

pub fn parse_station(attributes: &[u8]) -> Result<Station, ParseError> {
    let a = attrs(attributes)?;
    let mut s = Station {
        mac: get_mac(&a, ATTR_MAC)?,
        ..Station::default()
    };
    if let Some(info) = nested(&a, ATTR_STA_INFO)? {
        let signal = match get_u8(&info, STA_INFO_SIGNAL, "signal")? {
            Some(v) => Some(v),
            None => get_u8(&info, STA_INFO_SIGNAL_AVG, "average signal")?,
        };
        s.signal_dbm = signal.map(|v| v as i8);
        s.tx = nested(&info, STA_INFO_TX_BITRATE)?
            .map(|r| parse_rate(&r))
            .transpose()?;
        s.rx = nested(&info, STA_INFO_RX_BITRATE)?
            .map(|r| parse_rate(&r))
            .transpose()?;
    }
    Ok(s)
}

/// One channel of a `GET_SURVEY` dump.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Survey {
    pub freq_mhz: Option<u32>,
    pub noise_dbm: Option<i8>,
    pub in_use: bool,
}

pub fn parse_survey(attributes: &[u8]) -> Result<Survey, ParseError> {
    let a = attrs(attributes)?;
    let Some(info) = nested(&a, ATTR_SURVEY_INFO)? else {
        return Ok(Survey::default());
    };
    Ok(Survey {
        freq_mhz: get_u32(&info, SURVEY_FREQUENCY, "survey frequency")?,
        noise_dbm: get_u8(&info, SURVEY_NOISE, "noise")?.map(|v| v as i8),
        in_use: info.iter().any(|x| x.kind == SURVEY_IN_USE),
    })
}

/// One BSS of a `GET_SCAN` dump.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Bss {
    pub bssid: Option<[u8; 6]>,
    pub freq_mhz: Option<u32>,
    pub associated: bool,
    pub security: Option<Security>,
    /// Why `security` is `None` (the IEs are missing, or offer more than one scheme).
    pub security_note: Option<String>,
}

pub fn parse_bss(attributes: &[u8]) -> Result<Bss, ParseError> {
    let a = attrs(attributes)?;
    let Some(b) = nested(&a, ATTR_BSS)? else {
        return Ok(Bss::default());
    };
    let capability = get_u16(&b, BSS_CAPABILITY, "capability")?;
    let ies = find(&b, BSS_INFORMATION_ELEMENTS).or_else(|| find(&b, BSS_BEACON_IES));
    let (security, security_note) = match ies {
        None => (
            None,
            Some("the BSS carries no information elements".to_string()),
        ),
        Some(ies) => match security_of(ies, capability) {
            Ok(s) => (Some(s), None),
            Err(why) => (None, Some(why.to_string())),
        },
    };
    Ok(Bss {
        bssid: get_mac(&b, BSS_BSSID)?,
        freq_mhz: get_u32(&b, BSS_FREQUENCY, "BSS frequency")?,
        associated: get_u32(&b, BSS_STATUS, "BSS status")? == Some(BSS_STATUS_ASSOCIATED),
        security,
        security_note,
    })
}

/// Information element ids (IEEE 802.11-2020 Table 9-92).
const IE_RSN: u8 = 48;
const IE_VENDOR: u8 = 221;
/// Capability Information: Privacy (IEEE 802.11-2020 §9.4.1.4).
const CAP_PRIVACY: u16 = 0x0010;

/// The security a BSS advertises, from its RSN element's AKM suites (IEEE
/// 802.11-2020 Table 9-151, OUI 00-0F-AC): 1, 2, 5, 6 are WPA2 (802.1X, PSK, and
/// their SHA-256 forms), 8, 9, 12, 13, 24, 25 are WPA3 (SAE, FT-SAE, Suite B, SAE
/// with group-dependent hash), 18 is OWE. A BSS that offers both WPA2 and WPA3 AKMs
/// (transition mode) does not say which the station chose: that is an `Err`. Without
/// RSN: a WPA (vendor 00-50-F2 type 1) element is WPA; the Privacy bit alone is WEP.
pub fn security_of(ies: &[u8], capability: Option<u16>) -> Result<Security, SecurityError> {
    let mut rest = ies;
    let mut wpa1 = false;
    while rest.len() >= 2 {
        let (id, len) = (rest[0], usize::from(rest[1]));
        let Some(body) = rest.get(2..2 + len) else {
            return Err(SecurityError::TruncatedElement {
                id,
                len,
                remain: rest.len() - 2,
            });
        };
        if id == IE_RSN {
            return rsn_security(body);
        }
        if id == IE_VENDOR && body.starts_with(&[0x00, 0x50, 0xf2, 0x01]) {
            wpa1 = true;
        }
        rest = &rest[2 + len..];
    }
    Ok(if wpa1 {
        Security::Wpa
    } else if capability.is_some_and(|c| c & CAP_PRIVACY != 0) {
        Security::Wep
    } else {
        Security::Open
    })
}

fn rsn_security(body: &[u8]) -> Result<Security, SecurityError> {
    // version (2), group cipher (4), pairwise count (2) and suites, AKM count (2) and suites.
    let short = || SecurityError::ShortRsn;
    let pairwise = usize::from(u16::from_le_bytes([
        *body.get(6).ok_or_else(short)?,
        *body.get(7).ok_or_else(short)?,
    ]));
    let at = 8 + pairwise * 4;
    let akms = usize::from(u16::from_le_bytes([
        *body.get(at).ok_or_else(short)?,
        *body.get(at + 1).ok_or_else(short)?,
    ]));
    let list = body.get(at + 2..at + 2 + akms * 4).ok_or_else(short)?;
    let (mut wpa2, mut wpa3, mut owe, mut other) = (false, false, false, false);
    for s in list.chunks_exact(4) {
        if s[..3] != [0x00, 0x0f, 0xac] {
            other = true;
            continue;
        }
        match s[3] {
            1 | 2 | 5 | 6 => wpa2 = true,
            8 | 9 | 12 | 13 | 24 | 25 => wpa3 = true,
            18 => owe = true,
            _ => other = true,
        }
    }
    match (wpa2, wpa3, owe) {
        (true, true, _) => Err(SecurityError::TransitionBss),
        (false, true, _) => Ok(Security::Wpa3),
        (true, false, _) => Ok(Security::Wpa2),
        (false, false, true) => Ok(Security::Owe),
        _ if other => Ok(Security::Unknown),
        _ => Err(SecurityError::NoAkm),
    }
}

/// `enum nl80211_chan_width` in MHz (80+80 counts as 160).
pub fn chan_width_mhz(w: u32) -> Option<u32> {
    match w {
        0 | 1 => Some(20),
        2 => Some(40),
        3 => Some(80),
        4 | 5 => Some(160),
        6 => Some(5),
        7 => Some(10),
        8 => Some(1),
        9 => Some(2),
        10 => Some(4),
        11 => Some(8),
        12 => Some(16),
        13 => Some(320),
        _ => None,
    }
}

/// `aa:bb:cc:dd:ee:ff`.
pub fn mac_text(m: &[u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn c_string(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// What one interface's dumps said, put together.
#[derive(Debug, Clone)]
pub struct Readings {
    pub iface: Interface,
    /// The station dump of the interface; `Err` says why it is missing.
    pub stations: Result<Vec<Station>, WifiError>,
    pub survey: Result<Vec<Survey>, WifiError>,
    pub scan: Result<Vec<Bss>, WifiError>,
}

/// The link state of a wireless interface from its nl80211 readings. For a client
/// (station) interface the one station is its access point; for other modes (AP, mesh,
/// ad hoc) the first station stands for the link and the note says so.
pub fn link_state(r: &Readings) -> LinkState {
    let name = Field::from_option(r.iface.name.clone(), "nl80211 gave no interface name");
    let mut s = LinkState::without_radio(name, LinkKind::Wifi, "");
    s.source = Field::Value("nl80211".into());
    let band = r.iface.freq_mhz.and_then(band_of);
    s.freq_mhz = Field::from_option(
        r.iface.freq_mhz,
        "the interface reports no channel (not associated)",
    );
    s.band = Field::from_option(band, "the interface reports no channel (not associated)");
    let station = match &r.stations {
        Ok(list) => list
            .first()
            .ok_or_else(|| "no station: the interface is not associated".to_string()),
        Err(why) => Err(format!("station dump failed: {why}")),
    };
    let station_why = station.as_ref().err().cloned().unwrap_or_default();
    let tx = station.as_ref().ok().and_then(|st| st.tx.as_ref());
    let rx = station.as_ref().ok().and_then(|st| st.rx.as_ref());
    let rate_why = |what: &str| {
        if station.is_err() {
            station_why.clone()
        } else {
            format!("the station reports no {what}")
        }
    };
    s.standard = Field::from_option(
        tx.and_then(|t| t.standard(band)),
        &rate_why("tx rate of a known PHY"),
    );
    s.width_mhz = match r.iface.chan_width.and_then(chan_width_mhz) {
        Some(w) => Field::Value(w),
        None => Field::from_option(
            tx.filter(|t| t.mcs().is_some())
                .map(|t| t.width_mhz.unwrap_or(20)),
            &rate_why("channel width"),
        ),
    };
    s.guard_interval_ns = Field::from_option(
        tx.and_then(RateInfo::guard_interval_ns),
        &rate_why("guard interval (legacy rate or no tx rate)"),
    );
    s.spatial_streams = Field::from_option(
        tx.and_then(RateInfo::streams),
        &rate_why("spatial streams (legacy rate or no tx rate)"),
    );
    s.tx_mcs = Field::from_option(
        tx.and_then(RateInfo::mcs),
        &rate_why("tx MCS (legacy rate or no tx rate)"),
    );
    s.rx_mcs = Field::from_option(
        rx.and_then(RateInfo::mcs),
        &rate_why("rx MCS (legacy rate or no rx rate)"),
    );
    s.tx_bitrate_kbps = Field::from_option(
        tx.and_then(|t| t.bitrate_100kbps)
            .map(|b| u64::from(b) * 100),
        &rate_why("tx bit rate"),
    );
    s.rx_bitrate_kbps = Field::from_option(
        rx.and_then(|t| t.bitrate_100kbps)
            .map(|b| u64::from(b) * 100),
        &rate_why("rx bit rate"),
    );
    s.signal_dbm = Field::from_option(
        station
            .as_ref()
            .ok()
            .and_then(|st| st.signal_dbm)
            .map(i32::from),
        &rate_why("signal"),
    );
    s.noise_dbm = match &r.survey {
        Ok(list) => Field::from_option(
            list.iter()
                .find(|c| c.in_use)
                .and_then(|c| c.noise_dbm)
                .map(i32::from),
            "the driver reports no noise for the channel in use",
        ),
        Err(why) => Field::unavailable(format!("survey dump failed: {why}")),
    };
    let station_mac = station.as_ref().ok().and_then(|st| st.mac);
    let bss = match &r.scan {
        Ok(list) => list
            .iter()
            .find(|b| b.associated)
            .ok_or_else(|| "no associated BSS in the scan results".to_string()),
        Err(why) => Err(format!("scan dump failed: {why}")),
    };
    let is_client = r.iface.iftype == Some(IFTYPE_STATION);
    s.bssid = match (is_client, &bss, station_mac) {
        (true, Ok(b), _) if b.bssid.is_some() => {
            Field::from_option(b.bssid.as_ref().map(mac_text), "")
        }
        (true, _, Some(m)) => Field::Value(mac_text(&m)),
        (false, _, _) => Field::from_option(
            r.iface.mac.as_ref().map(mac_text),
            "not a client interface and no own address reported",
        ),
        (true, Err(why), None) => Field::unavailable(why.clone()),
        (true, Ok(_), None) => Field::unavailable("the associated BSS has no BSSID"),
    };
    s.security = match &bss {
        Ok(b) => match (b.security, &b.security_note) {
            (Some(sec), _) => Field::Value(sec),
            (None, Some(why)) => Field::unavailable(why.clone()),
            (None, None) => Field::unavailable("unknown"),
        },
        Err(why) => Field::unavailable(why.clone()),
    };
    s
}

/// Parses `datagram` as each kind of reply dualperf reads and builds a link state
/// from whatever parsed; returns how many entries parsed. For the fuzz target and the
/// corruption tests: it must never panic, whatever the bytes.
pub fn fuzz_one(datagram: &[u8]) -> usize {
    let mut n = 0;
    let mut ifaces = Vec::new();
    let mut stations = Vec::new();
    let mut survey = Vec::new();
    let mut scan = Vec::new();
    for seq in [0, u32_at(datagram, 8)] {
        let _ = each_data(datagram, seq, |a| {
            let _ = family_id(a);
            if let Ok(i) = parse_interface(a) {
                ifaces.push(i);
            }
            if let Ok(s) = parse_station(a) {
                stations.push(s);
            }
            if let Ok(s) = parse_survey(a) {
                survey.push(s);
            }
            if let Ok(b) = parse_bss(a) {
                scan.push(b);
            }
            n += 1;
            Ok(())
        });
    }
    let r = Readings {
        iface: ifaces.into_iter().next().unwrap_or_default(),
        stations: Ok(stations),
        survey: Ok(survey),
        scan: Ok(scan),
    };
    let s = link_state(&r);
    let _ = s.to_metadata("link.fuzz");
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded reply datagram (see testdata/make_nl80211.py for how each was made).
    fn hex(text: &str) -> Vec<u8> {
        let t = text.trim();
        (0..t.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&t[i..i + 2], 16).unwrap())
            .collect()
    }

    macro_rules! data {
        ($name:literal) => {
            hex(include_str!(concat!("testdata/", $name, ".hex")))
        };
    }

    const SEQ: u32 = 7;

    fn dump<T>(bytes: &[u8], parse: fn(&[u8]) -> Result<T, ParseError>) -> Vec<T> {
        let mut out = Vec::new();
        let done = each_data(bytes, SEQ, |a| {
            out.push(parse(a)?);
            Ok(())
        })
        .unwrap();
        assert!(done, "the recorded dump ends with NLMSG_DONE");
        out
    }

    fn readings(iface: &[u8], station: &[u8], survey: Option<&[u8]>, scan: &[u8]) -> Readings {
        Readings {
            iface: dump(iface, parse_interface).remove(0),
            stations: Ok(dump(station, parse_station)),
            survey: survey.map_or(Err(WifiError::Failed("not recorded".into())), |s| {
                Ok(dump(s, parse_survey))
            }),
            scan: Ok(dump(scan, parse_bss)),
        }
    }

    #[test]
    fn the_controller_reply_gives_the_family_id_and_enoent_is_the_kernels_error() {
        let mut id = None;
        assert!(each_data(&data!("ctrl_family"), SEQ, |a| {
            id = family_id(a)?;
            Ok(())
        })
        .unwrap());
        assert_eq!(id, Some(0x1c));
        let e = each_data(&data!("ctrl_enoent"), SEQ, |_| Ok(())).unwrap_err();
        assert!(matches!(e, ParseError::Kernel(2, _)), "{e:?}");
        // A stale reply (another sequence number) is skipped, not taken as ours.
        assert!(!each_data(&data!("ctrl_enoent"), SEQ + 1, |_| Ok(())).unwrap());
    }

    #[test]
    fn a_5ghz_vht_client_reads_as_iw_prints_it() {
        let r = readings(
            &data!("iface_5ghz"),
            &data!("station_vht"),
            Some(&data!("survey")),
            &data!("scan_wpa3"),
        );
        assert_eq!(r.iface.ifindex, Some(3));
        let s = link_state(&r);
        assert_eq!(s.iface, Field::Value("wlan0".into()));
        assert_eq!(s.kind, LinkKind::Wifi);
        assert_eq!(s.source, Field::Value("nl80211".into()));
        assert_eq!(s.standard, Field::Value(Standard::Ac));
        assert_eq!(s.band, Field::Value(Band::G5));
        assert_eq!(s.freq_mhz, Field::Value(5180));
        assert_eq!(s.width_mhz, Field::Value(80));
        assert_eq!(s.guard_interval_ns, Field::Value(400));
        assert_eq!(s.spatial_streams, Field::Value(2));
        assert_eq!(s.tx_mcs, Field::Value(9));
        assert_eq!(s.tx_bitrate_kbps, Field::Value(866_700));
        assert_eq!(s.rx_mcs, Field::Value(8));
        assert_eq!(s.rx_bitrate_kbps, Field::Value(702_000));
        assert_eq!(s.signal_dbm, Field::Value(-52));
        assert_eq!(s.noise_dbm, Field::Value(-92));
        assert_eq!(s.security, Field::Value(Security::Wpa3));
        assert_eq!(s.bssid, Field::Value("02:aa:bb:cc:dd:01".into()));
    }

    #[test]
    fn a_24ghz_ht_client_with_a_legacy_rx_rate() {
        let r = readings(
            &data!("iface_24ghz"),
            &data!("station_ht"),
            None,
            &data!("scan_wpa2"),
        );
        let s = link_state(&r);
        assert_eq!(s.standard, Field::Value(Standard::N));
        assert_eq!(s.band, Field::Value(Band::G2_4));
        assert_eq!(s.width_mhz, Field::Value(20));
        assert_eq!(s.guard_interval_ns, Field::Value(400));
        assert_eq!(s.spatial_streams, Field::Value(1));
        assert_eq!(s.tx_mcs, Field::Value(7));
        assert_eq!(s.tx_bitrate_kbps, Field::Value(72_200));
        assert_eq!(s.rx_bitrate_kbps, Field::Value(54_000));
        assert!(
            matches!(&s.rx_mcs, Field::Unavailable(w) if w.contains("legacy")),
            "{:?}",
            s.rx_mcs
        );
        assert!(matches!(&s.noise_dbm, Field::Unavailable(w) if w.contains("not recorded")));
        assert_eq!(s.security, Field::Value(Security::Wpa2));
    }

    #[test]
    fn an_he_rate_gives_its_gi_and_streams() {
        let r = readings(
            &data!("iface_5ghz"),
            &data!("station_he"),
            Some(&data!("survey")),
            &data!("scan_open"),
        );
        let s = link_state(&r);
        assert_eq!(s.standard, Field::Value(Standard::Ax));
        assert_eq!(s.guard_interval_ns, Field::Value(800));
        assert_eq!(s.spatial_streams, Field::Value(2));
        assert_eq!(s.tx_mcs, Field::Value(11));
        assert_eq!(s.tx_bitrate_kbps, Field::Value(1_201_000));
        assert_eq!(s.rx_bitrate_kbps, Field::Value(600_500));
        assert_eq!(s.security, Field::Value(Security::Open));
        let rx = dump(&data!("station_he"), parse_station)
            .remove(0)
            .rx
            .unwrap();
        assert_eq!(rx.guard_interval_ns(), Some(1600));
    }

    #[test]
    fn an_unassociated_interface_says_why_each_field_is_missing() {
        let r = readings(
            &data!("iface_ap_idle"),
            &data!("station_none"),
            Some(&data!("station_none")),
            &data!("scan_transition"),
        );
        let s = link_state(&r);
        assert_eq!(s.kind, LinkKind::Wifi);
        assert!(matches!(&s.freq_mhz, Field::Unavailable(w) if w.contains("no channel")));
        assert!(matches!(&s.tx_mcs, Field::Unavailable(w) if w.contains("not associated")));
        assert!(matches!(&s.signal_dbm, Field::Unavailable(w) if w.contains("not associated")));
        // An AP interface: its own address stands for the BSSID.
        assert_eq!(s.bssid, Field::Value("02:11:22:33:44:0a".into()));
        assert!(matches!(&s.security, Field::Unavailable(w) if w.contains("transition")));
    }

    #[test]
    fn requests_have_the_kernels_layout() {
        let r = dump_request(0x1c, CMD_GET_STATION, 9, Some(3));
        assert_eq!(r.len(), 16 + 4 + 8);
        assert_eq!(u32_at(&r, 0) as usize, r.len());
        assert_eq!(u16_at(&r, 4), 0x1c);
        assert_eq!(u16_at(&r, 6), NLM_F_REQUEST | NLM_F_DUMP);
        assert_eq!(u32_at(&r, 8), 9);
        assert_eq!(&r[16..20], &[CMD_GET_STATION, 1, 0, 0]);
        assert_eq!(
            attrs(&r[20..]).unwrap(),
            vec![Attr {
                kind: ATTR_IFINDEX,
                payload: &3u32.to_ne_bytes()
            }]
        );
        let f = family_request(1);
        // "nl80211\0" is 8 bytes: the attribute is 12, already aligned.
        assert_eq!(f.len(), 16 + 4 + 12);
        assert_eq!(u16_at(&f, 6), NLM_F_REQUEST | NLM_F_ACK);
    }

    /// Every truncation of every recorded datagram, and every single-byte corruption of
    /// its length fields, is an error or a shorter reading: never a panic or a read
    /// past the end.
    #[test]
    fn truncated_and_corrupted_replies_are_errors_not_panics() {
        let all = [
            data!("ctrl_family"),
            data!("iface_5ghz"),
            data!("station_vht"),
            data!("station_he"),
            data!("survey"),
            data!("scan_wpa3"),
        ];
        for d in &all {
            for cut in 0..d.len() {
                let _ = parse_all(&d[..cut]);
            }
            for at in 0..d.len() {
                for v in [0u8, 1, 3, 4, 0x7f, 0xff] {
                    let mut c = d.clone();
                    c[at] = v;
                    let _ = parse_all(&c);
                }
            }
        }
        assert!(messages(&[20, 0, 0, 0, 0, 0]).is_err());
        assert_eq!(
            attrs(&[200, 0, 1, 0, 0, 0, 0, 0]),
            Err(ParseError::BadAttrLen { len: 200, room: 8 })
        );
        assert_eq!(
            attrs(&[2, 0, 1, 0]),
            Err(ParseError::BadAttrLen { len: 2, room: 4 })
        );
    }

    /// Everything a reply can be parsed as (the fuzz target runs this too).
    fn parse_all(d: &[u8]) -> usize {
        crate::wifi::nl80211::fuzz_one(d)
    }

    #[test]
    fn legacy_rates_name_their_phy_by_band_and_ht_indexes_give_streams() {
        let legacy = |b| RateInfo {
            bitrate_100kbps: Some(b),
            ..RateInfo::default()
        };
        assert_eq!(legacy(110).standard(Some(Band::G2_4)), Some(Standard::B));
        assert_eq!(legacy(540).standard(Some(Band::G2_4)), Some(Standard::G));
        assert_eq!(legacy(540).standard(Some(Band::G5)), Some(Standard::A));
        assert_eq!(legacy(540).standard(None), None);
        assert_eq!(legacy(540).guard_interval_ns(), None);
        assert_eq!(legacy(540).mcs(), None);
        let ht = |m| RateInfo {
            ht_mcs: Some(m),
            ..RateInfo::default()
        };
        assert_eq!(ht(15).streams(), Some(2));
        assert_eq!(ht(31).streams(), Some(4));
        // MCS 32 and the unequal-modulation 33–76 do not map to a stream count this way.
        assert_eq!(ht(32).streams(), None);
        assert_eq!(chan_width_mhz(4), Some(160));
        assert_eq!(chan_width_mhz(13), Some(320));
        assert_eq!(chan_width_mhz(99), None);
    }

    #[test]
    fn rsn_elements_that_lie_about_their_counts_are_refused() {
        // RSN with an AKM count of 9 but one suite.
        let mut ie = vec![48, 14, 1, 0, 0, 0x0f, 0xac, 4, 0, 0, 9, 0, 0, 0x0f, 0xac, 2];
        assert_eq!(security_of(&ie, None), Err(SecurityError::ShortRsn));
        ie[1] = 200; // longer than the bytes that remain
        let e = security_of(&ie, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "information element 48 claims 200 bytes, 14 remain"
        );
        // Pairwise count that runs past the end.
        assert_eq!(
            security_of(&[48, 8, 1, 0, 0, 0x0f, 0xac, 4, 0xff, 0xff], None),
            Err(SecurityError::ShortRsn)
        );
        assert_eq!(
            security_of(&[0, 3, b'l', b'a', b'b'], Some(0x0010)),
            Ok(Security::Wep)
        );
        assert_eq!(
            security_of(&[221, 6, 0x00, 0x50, 0xf2, 0x01, 1, 0], Some(0x0010)),
            Ok(Security::Wpa)
        );
    }
}
