//! The link state of the interface that carries a test's traffic: what kind of link it
//! is and, for 802.11, the radio as the OS reports it (standard, band, frequency,
//! channel width, guard interval, spatial streams, transmit and receive MCS and bit
//! rate, signal and noise, security, BSSID). Every field is either a value or
//! [`Field::Unavailable`] with the reason; a host without Wi-Fi says so and nothing
//! fails.
//!
//! Sources, one per OS (each parser is pure and tested on recorded inputs here, on
//! every platform; only the live call is platform-specific):
//! - **Linux**: nl80211 over generic netlink ([`nl80211`]): `NL80211_CMD_GET_INTERFACE`
//!   for frequency and width, `GET_STATION` for signal and the tx/rx rate info,
//!   `GET_SURVEY` for the noise floor of the channel in use, and `GET_SCAN` for the
//!   associated BSS's RSN element (security). The socket is `netlink-sys`; the
//!   messages are built and parsed here with checked lengths. Why not a crate that
//!   speaks nl80211: `wl-nl80211` (rust-netlink) is built on `netlink-proto` and
//!   `futures` and needs an async runtime (tokio by default) to send one request and
//!   read one dump; `netlink_wi` is synchronous but pulls in `neli` and gives no way to
//!   parse recorded bytes, so neither its parsing nor ours could be tested or fuzzed
//!   on captured messages. We read about twenty attributes; owning their parser keeps
//!   every length checked where we can test it.
//! - **Windows**: the Native Wifi API (`WlanQueryInterface` with
//!   `wlan_intf_opcode_current_connection`), which has no MCS, streams, guard interval,
//!   width or noise: those are unavailable with that reason.
//! - **macOS**: `system_profiler SPAirPortDataType -json` ([`macos`]).
//!
//! [`link_keys`] flattens a state into run metadata (`link.before.kind`, …): one key
//! per available field plus one `unavailable` key that lists the missing fields with
//! their reasons, bounded by `wire::text::cap_metadata`.

pub mod macos;
pub mod nl80211;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as platform;
#[cfg(target_os = "macos")]
use macos::live as platform;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use self::windows as platform;
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
mod other;
#[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
use other as platform;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;

/// A reading: its value, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field<T> {
    Value(T),
    Unavailable(String),
}

impl<T> Field<T> {
    pub fn unavailable(why: impl Into<String>) -> Field<T> {
        Field::Unavailable(why.into())
    }
    pub fn value(&self) -> Option<&T> {
        match self {
            Field::Value(v) => Some(v),
            Field::Unavailable(_) => None,
        }
    }
    /// `Some(v)` → value; `None` → unavailable for `why`.
    pub fn from_option(v: Option<T>, why: &str) -> Field<T> {
        v.map_or_else(|| Field::unavailable(why), Field::Value)
    }
}

/// What kind of link an interface is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    Wifi,
    /// Ethernet framing that is not a radio (a NIC, a veth, a bridge).
    Wired,
    Loopback,
    Unknown,
}

/// The 802.11 amendment of the PHY in use (of the last transmitted frame's rate where
/// the OS reports rates, else of the association).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Standard {
    #[serde(rename = "802.11a")]
    A,
    #[serde(rename = "802.11b")]
    B,
    #[serde(rename = "802.11g")]
    G,
    #[serde(rename = "802.11n")]
    N,
    #[serde(rename = "802.11ac")]
    Ac,
    #[serde(rename = "802.11ax")]
    Ax,
    #[serde(rename = "802.11be")]
    Be,
}

/// The band a frequency lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Band {
    #[serde(rename = "2.4GHz")]
    G2_4,
    #[serde(rename = "5GHz")]
    G5,
    #[serde(rename = "6GHz")]
    G6,
    #[serde(rename = "60GHz")]
    G60,
}

/// How the link is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Security {
    Open,
    /// Open with opportunistic wireless encryption (OWE, "Enhanced Open").
    Owe,
    Wep,
    Wpa,
    Wpa2,
    Wpa3,
    /// Another scheme than the above (named in the value where known).
    Unknown,
}

/// The link state of one interface at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkState {
    pub iface: Field<String>,
    pub kind: LinkKind,
    /// Where the radio fields came from ("nl80211", "Native Wifi", "system_profiler").
    pub source: Field<String>,
    pub standard: Field<Standard>,
    pub band: Field<Band>,
    pub freq_mhz: Field<u32>,
    pub width_mhz: Field<u32>,
    pub guard_interval_ns: Field<u32>,
    pub spatial_streams: Field<u8>,
    pub tx_mcs: Field<u8>,
    pub tx_bitrate_kbps: Field<u64>,
    pub rx_mcs: Field<u8>,
    pub rx_bitrate_kbps: Field<u64>,
    pub signal_dbm: Field<i32>,
    pub noise_dbm: Field<i32>,
    pub security: Field<Security>,
    pub bssid: Field<String>,
}

impl LinkState {
    /// A state whose every radio field is unavailable for `why`.
    pub fn without_radio(iface: Field<String>, kind: LinkKind, why: &str) -> LinkState {
        fn u<T>(why: &str) -> Field<T> {
            Field::unavailable(why)
        }
        LinkState {
            iface,
            kind,
            source: u(why),
            standard: u(why),
            band: u(why),
            freq_mhz: u(why),
            width_mhz: u(why),
            guard_interval_ns: u(why),
            spatial_streams: u(why),
            tx_mcs: u(why),
            tx_bitrate_kbps: u(why),
            rx_mcs: u(why),
            rx_bitrate_kbps: u(why),
            signal_dbm: u(why),
            noise_dbm: u(why),
            security: u(why),
            bssid: u(why),
        }
    }

    /// The fields as (name, value or reason), in a fixed order.
    fn fields(&self) -> Vec<(&'static str, Result<String, &str>)> {
        fn f<T: fmt::Display>(x: &Field<T>) -> Result<String, &str> {
            match x {
                Field::Value(v) => Ok(v.to_string()),
                Field::Unavailable(why) => Err(why.as_str()),
            }
        }
        vec![
            ("iface", f(&self.iface)),
            ("kind", Ok(self.kind.to_string())),
            ("source", f(&self.source)),
            ("standard", f(&self.standard)),
            ("band", f(&self.band)),
            ("freq_mhz", f(&self.freq_mhz)),
            ("width_mhz", f(&self.width_mhz)),
            ("guard_interval_ns", f(&self.guard_interval_ns)),
            ("spatial_streams", f(&self.spatial_streams)),
            ("tx_mcs", f(&self.tx_mcs)),
            ("tx_bitrate_kbps", f(&self.tx_bitrate_kbps)),
            ("rx_mcs", f(&self.rx_mcs)),
            ("rx_bitrate_kbps", f(&self.rx_bitrate_kbps)),
            ("signal_dbm", f(&self.signal_dbm)),
            ("noise_dbm", f(&self.noise_dbm)),
            ("security", f(&self.security)),
            ("bssid", f(&self.bssid)),
        ]
    }

    /// Flat metadata under `prefix` (`link.before`): `PREFIX.FIELD` for every available
    /// field, and `PREFIX.unavailable` listing the others grouped by reason
    /// ("standard, band, …: not a wireless interface"), capped as peers' metadata is.
    pub fn to_metadata(&self, prefix: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let mut missing: Vec<(&str, Vec<&str>)> = Vec::new();
        for (name, v) in self.fields() {
            match v {
                Ok(v) => {
                    out.insert(format!("{prefix}.{name}"), v);
                }
                Err(why) => match missing.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, names)) => names.push(name),
                    None => missing.push((why, vec![name])),
                },
            }
        }
        if !missing.is_empty() {
            let text: Vec<String> = missing
                .iter()
                .map(|(why, names)| format!("{}: {why}", names.join(", ")))
                .collect();
            out.insert(format!("{prefix}.unavailable"), text.join("; "));
        }
        wire::text::cap_metadata(out)
    }
}

impl fmt::Display for LinkKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LinkKind::Wifi => "wifi",
            LinkKind::Wired => "wired",
            LinkKind::Loopback => "loopback",
            LinkKind::Unknown => "unknown",
        })
    }
}

impl fmt::Display for Standard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Standard::A => "802.11a",
            Standard::B => "802.11b",
            Standard::G => "802.11g",
            Standard::N => "802.11n",
            Standard::Ac => "802.11ac",
            Standard::Ax => "802.11ax",
            Standard::Be => "802.11be",
        })
    }
}

impl fmt::Display for Band {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Band::G2_4 => "2.4GHz",
            Band::G5 => "5GHz",
            Band::G6 => "6GHz",
            Band::G60 => "60GHz",
        })
    }
}

/// Why the security of a link is not known, from what the OS reports.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecurityError {
    /// macOS names a WPA2/WPA3 transition mode (`mode`, as reported).
    #[error("{mode}: WPA2/WPA3 transition mode; which one is in use is not reported")]
    TransitionMode { mode: String },
    #[error("the BSS offers WPA2 and WPA3 (transition mode); nl80211 does not say which the station uses")]
    TransitionBss,
    #[error("information element {id} claims {len} bytes, {remain} remain")]
    TruncatedElement { id: u8, len: usize, remain: usize },
    #[error("the RSN element is shorter than its counts say")]
    ShortRsn,
    #[error("the RSN element lists no AKM suite")]
    NoAkm,
}

impl fmt::Display for Security {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Security::Open => "open",
            Security::Owe => "owe",
            Security::Wep => "wep",
            Security::Wpa => "wpa",
            Security::Wpa2 => "wpa2",
            Security::Wpa3 => "wpa3",
            Security::Unknown => "unknown",
        })
    }
}

/// The band of a centre frequency (IEEE 802.11-2020 Annex E channel starting
/// frequencies: 2.4 GHz 2412–2484, 5 GHz from 5000, 6 GHz from 5950, DMG 58–70 GHz).
pub fn band_of(freq_mhz: u32) -> Option<Band> {
    match freq_mhz {
        2400..=2500 => Some(Band::G2_4),
        4900..=5949 => Some(Band::G5),
        5950..=7125 => Some(Band::G6),
        57_000..=71_000 => Some(Band::G60),
        _ => None,
    }
}

/// Why reading a host's wireless interfaces failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WifiError {
    /// The OS service that knows the radios is absent or stopped (nl80211 without
    /// cfg80211, Windows without the WLAN AutoConfig service).
    #[error("{0}")]
    NoService(String),
    /// A call failed or its reply did not parse.
    #[error("{0}")]
    Failed(String),
}

/// Reason given when the interface is not a radio.
pub const NOT_WIRELESS: &str = "not a wireless interface";

/// The link state of the interface that holds `local` (the address a test's socket is
/// bound to; the route to the peer leaves through it). Loopback addresses are
/// [`LinkKind::Loopback`] without any OS call. Never fails: what cannot be read is
/// unavailable with the reason.
pub fn link_state_of(local: IpAddr) -> LinkState {
    if local.is_loopback() {
        return LinkState::without_radio(
            Field::unavailable("loopback address (the host's loopback interface)"),
            LinkKind::Loopback,
            NOT_WIRELESS,
        );
    }
    platform::link_state_of(local)
}

/// [`link_state_of`] flattened under `link.PHASE` (`link.before.kind` = `loopback`, …).
pub fn link_keys(local: IpAddr, phase: &str) -> BTreeMap<String, String> {
    link_state_of(local).to_metadata(&format!("link.{phase}"))
}

/// The names of this host's wireless interfaces; `Err` says why they cannot be listed
/// (on a host without Wi-Fi support: [`WifiError::NoService`] with what is missing).
pub fn wireless_interfaces() -> Result<Vec<String>, WifiError> {
    platform::wireless_interfaces()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_are_loopback_links_without_radio() {
        for a in ["127.0.0.1", "::1"] {
            let s = link_state_of(a.parse().unwrap());
            assert_eq!(s.kind, LinkKind::Loopback);
            assert_eq!(s.tx_mcs, Field::unavailable(NOT_WIRELESS));
            let md = s.to_metadata("link.before");
            assert_eq!(md["link.before.kind"], "loopback");
            // Every radio field is listed once under one reason.
            let u = &md["link.before.unavailable"];
            assert!(
                u.contains("tx_mcs") && u.contains("bssid: not a wireless interface"),
                "{u}"
            );
            assert!(!md.contains_key("link.before.tx_mcs"));
        }
    }

    /// The OS path (not the loopback shortcut) finds the interface holding 127.0.0.1
    /// and reads it as loopback: /sys on Linux, the adapter's type on Windows.
    #[cfg(any(target_os = "linux", windows))]
    #[test]
    fn the_os_reads_the_loopback_interface_as_loopback() {
        let s = platform::link_state_of("127.0.0.1".parse().unwrap());
        assert_eq!(s.kind, LinkKind::Loopback, "{s:?}");
        assert!(s.iface.value().is_some(), "{s:?}");
        assert_eq!(s.signal_dbm, Field::unavailable(NOT_WIRELESS));
    }

    #[test]
    fn metadata_has_one_key_per_value_and_groups_reasons() {
        let mut s = LinkState::without_radio(Field::Value("wlan0".into()), LinkKind::Wifi, "x");
        s.freq_mhz = Field::Value(5180);
        s.band = Field::Value(Band::G5);
        s.standard = Field::Value(Standard::Ac);
        s.signal_dbm = Field::Value(-52);
        s.noise_dbm = Field::unavailable("no survey");
        let md = s.to_metadata("link.after");
        assert_eq!(md["link.after.iface"], "wlan0");
        assert_eq!(md["link.after.kind"], "wifi");
        assert_eq!(md["link.after.freq_mhz"], "5180");
        assert_eq!(md["link.after.band"], "5GHz");
        assert_eq!(md["link.after.standard"], "802.11ac");
        assert_eq!(md["link.after.signal_dbm"], "-52");
        let u = &md["link.after.unavailable"];
        assert!(u.starts_with("source, width_mhz, "), "{u}");
        assert!(u.ends_with("; noise_dbm: no survey"), "{u}");
        assert_eq!(md.len(), 7);
    }

    #[test]
    fn a_hostile_reason_is_capped_like_peer_metadata() {
        let huge = "r".repeat(wire::text::MAX_META_BYTES * 2);
        let s = LinkState::without_radio(Field::Value("\0x".into()), LinkKind::Unknown, &huge);
        let md = s.to_metadata("link.before");
        assert!(md.values().all(|v| v.len() <= wire::text::MAX_META_BYTES));
        assert!(md.values().all(|v| !v.contains('\0')));
        assert!(md.contains_key(wire::text::META_TRUNCATED_KEY));
    }

    #[test]
    fn the_state_round_trips_through_json_with_reasons() {
        let mut s = LinkState::without_radio(Field::Value("en0".into()), LinkKind::Wifi, "why");
        s.security = Field::Value(Security::Wpa3);
        let j = serde_json::to_string(&s).unwrap();
        assert!(j.contains(r#""security":{"value":"wpa3"}"#), "{j}");
        assert!(j.contains(r#""tx_mcs":{"unavailable":"why"}"#), "{j}");
        assert_eq!(serde_json::from_str::<LinkState>(&j).unwrap(), s);
    }

    #[test]
    fn bands_follow_the_channel_plans() {
        assert_eq!(band_of(2412), Some(Band::G2_4));
        assert_eq!(band_of(2484), Some(Band::G2_4));
        assert_eq!(band_of(5180), Some(Band::G5));
        assert_eq!(band_of(5955), Some(Band::G6));
        assert_eq!(band_of(60_480), Some(Band::G60));
        assert_eq!(band_of(0), None);
    }
}
