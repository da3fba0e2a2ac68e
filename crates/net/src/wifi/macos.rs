//! macOS: the link state from `system_profiler SPAirPortDataType -json`. The parser is
//! pure and tested on every platform; the live call (`live`) exists on macOS only.
//!
//! Apple does not publish a schema for this output. The keys read here are those the
//! output carries on macOS 12–15 (the recorded sample in `testdata/` is written in that
//! layout): per interface `_name` and `spairport_current_network_information` with
//! `spairport_network_phymode` ("802.11ac"), `spairport_network_channel`
//! ("149 (5GHz, 80MHz)", or a bare channel number on older releases),
//! `spairport_network_rate` (transmit rate, Mbit/s), `spairport_network_mcs`,
//! `spairport_signal_noise` ("-55 dBm / -92 dBm"), `spairport_security_mode`
//! (`spairport_security_mode_wpa2_personal`, …). The BSSID is redacted without
//! Location Services; streams, guard interval and receive rate are not reported.

use super::{Band, Field, LinkKind, LinkState, Security, SecurityError, Standard};
use serde_json::Value;

const SOURCE: &str = "system_profiler";
const NOT_REPORTED: &str = "system_profiler does not report it";

/// Why system_profiler's Wi-Fi report cannot be had or read.
#[derive(Debug, thiserror::Error)]
pub enum ProfilerError {
    #[error("system_profiler output is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    #[error("system_profiler output has no SPAirPortDataType list")]
    NoAirPortList,
    #[error("cannot run system_profiler: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("system_profiler has no output pipe")]
    NoPipe,
    #[error("system_profiler did not finish within {0:?}")]
    Deadline(std::time::Duration),
    #[error("reading system_profiler's output failed")]
    ReaderPanicked,
    #[error("reading system_profiler's output: {0}")]
    Read(#[source] std::io::Error),
}

/// The interfaces system_profiler lists as Wi-Fi, by name.
pub fn wifi_interfaces(json: &str) -> Result<Vec<String>, ProfilerError> {
    Ok(interfaces(json)?
        .iter()
        .filter_map(|i| i.get("_name").and_then(Value::as_str).map(str::to_string))
        .collect())
}

fn interfaces(json: &str) -> Result<Vec<Value>, ProfilerError> {
    let v: Value = serde_json::from_str(json).map_err(ProfilerError::NotJson)?;
    let sections = v
        .get("SPAirPortDataType")
        .and_then(Value::as_array)
        .ok_or(ProfilerError::NoAirPortList)?;
    Ok(sections
        .iter()
        .filter_map(|s| {
            s.get("spairport_airport_interfaces")
                .and_then(Value::as_array)
        })
        .flatten()
        .cloned()
        .collect())
}

/// The link state of interface `iface` from system_profiler's JSON; `None` when the
/// output does not list it as Wi-Fi.
pub fn link_state(json: &str, iface: &str) -> Result<Option<LinkState>, ProfilerError> {
    let list = interfaces(json)?;
    let Some(i) = list
        .iter()
        .find(|i| i.get("_name").and_then(Value::as_str) == Some(iface))
    else {
        return Ok(None);
    };
    let mut s = LinkState::without_radio(
        Field::Value(iface.to_string()),
        LinkKind::Wifi,
        NOT_REPORTED,
    );
    s.source = Field::Value(SOURCE.into());
    let Some(net) = i.get("spairport_current_network_information") else {
        let why = "not associated (no current network)";
        let mut s = LinkState::without_radio(Field::Value(iface.to_string()), LinkKind::Wifi, why);
        s.source = Field::Value(SOURCE.into());
        return Ok(Some(s));
    };
    let text = |k: &str| net.get(k).and_then(Value::as_str);
    let number = |k: &str| {
        net.get(k).and_then(|v| {
            v.as_f64()
                .or_else(|| v.as_str().and_then(|t| t.trim().parse().ok()))
        })
    };
    s.standard = Field::from_option(
        text("spairport_network_phymode").and_then(standard),
        "no or unknown PHY mode",
    );
    let chan = net.get("spairport_network_channel").map(|v| match v {
        Value::String(t) => parse_channel(t),
        Value::Number(n) => (n.as_u64().and_then(|c| u32::try_from(c).ok()), None, None),
        _ => (None, None, None),
    });
    let (channel, band, width) = chan.unwrap_or((None, None, None));
    let band = band.or_else(|| channel.map(|c| if c <= 14 { Band::G2_4 } else { Band::G5 }));
    s.band = Field::from_option(band, "no channel reported");
    s.freq_mhz = Field::from_option(
        channel.zip(band).and_then(|(c, b)| freq_of(c, b)),
        "no channel reported",
    );
    s.width_mhz = Field::from_option(width, "no channel width reported (older macOS)");
    s.tx_bitrate_kbps = Field::from_option(
        number("spairport_network_rate")
            .filter(|r| r.is_finite() && *r >= 0.0 && *r < 1e7)
            .map(|r| (r * 1000.0).round() as u64),
        "no transmit rate reported",
    );
    s.tx_mcs = Field::from_option(
        number("spairport_network_mcs")
            .filter(|m| (0.0..=255.0).contains(m))
            .map(|m| m as u8),
        "no MCS reported (legacy rate)",
    );
    let (signal, noise) = text("spairport_signal_noise").map_or((None, None), parse_signal_noise);
    s.signal_dbm = Field::from_option(signal, "no signal reported");
    s.noise_dbm = Field::from_option(noise, "no noise reported");
    s.security = match text("spairport_security_mode").map(security) {
        Some(Ok(sec)) => Field::Value(sec),
        Some(Err(why)) => Field::Unavailable(why.to_string()),
        None => Field::unavailable("no security mode reported"),
    };
    s.bssid = match text("spairport_network_bssid") {
        Some(b) if b.len() == 17 && b.chars().all(|c| c.is_ascii_hexdigit() || c == ':') => {
            Field::Value(b.to_ascii_lowercase())
        }
        _ => Field::unavailable("macOS redacts the BSSID without Location Services"),
    };
    Ok(Some(s))
}

fn standard(mode: &str) -> Option<Standard> {
    Some(match mode.trim() {
        "802.11a" => Standard::A,
        "802.11b" => Standard::B,
        "802.11g" => Standard::G,
        "802.11n" => Standard::N,
        "802.11ac" => Standard::Ac,
        "802.11ax" => Standard::Ax,
        "802.11be" => Standard::Be,
        _ => return None,
    })
}

/// "149 (5GHz, 80MHz)" → (149, 5 GHz, 80).
fn parse_channel(t: &str) -> (Option<u32>, Option<Band>, Option<u32>) {
    let t = t.trim();
    let digits: String = t.chars().take_while(char::is_ascii_digit).take(5).collect();
    let channel = digits.parse().ok();
    let inner = t
        .split_once('(')
        .and_then(|(_, r)| r.split_once(')'))
        .map_or("", |(i, _)| i);
    let mut band = None;
    let mut width = None;
    for part in inner.split(',').map(str::trim) {
        if let Some(w) = part.strip_suffix("MHz") {
            width = w.trim().parse().ok();
        } else if let Some(g) = part.strip_suffix("GHz") {
            band = match g.trim() {
                "2" | "2.4" => Some(Band::G2_4),
                "5" => Some(Band::G5),
                "6" => Some(Band::G6),
                _ => None,
            };
        }
    }
    (channel, band, width)
}

/// Centre frequency of a 20 MHz channel number (IEEE 802.11-2020 §17.3.8.4.2, §19.3.15,
/// §27.3.23.2: 2407 + 5n, channel 14 at 2484; 5000 + 5n; 5950 + 5n, channel 2 at 5935).
fn freq_of(channel: u32, band: Band) -> Option<u32> {
    match (band, channel) {
        (Band::G2_4, 14) => Some(2484),
        (Band::G2_4, 1..=13) => Some(2407 + 5 * channel),
        (Band::G5, 1..=200) => Some(5000 + 5 * channel),
        (Band::G6, 2) => Some(5935),
        (Band::G6, 1..=233) => Some(5950 + 5 * channel),
        _ => None,
    }
}

/// "-55 dBm / -92 dBm" → (-55, -92).
fn parse_signal_noise(t: &str) -> (Option<i32>, Option<i32>) {
    let mut it = t.split('/').map(|p| {
        p.trim()
            .trim_end_matches("dBm")
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|v| (-200..=50).contains(v))
    });
    (it.next().flatten(), it.next().flatten())
}

fn security(mode: &str) -> Result<Security, SecurityError> {
    let m = mode
        .trim()
        .strip_prefix("spairport_security_mode_")
        .unwrap_or(mode)
        .to_ascii_lowercase();
    let (wpa2, wpa3) = (m.contains("wpa2"), m.contains("wpa3"));
    if wpa3 && (wpa2 || m.contains("transition")) {
        return Err(SecurityError::TransitionMode { mode: m });
    }
    Ok(if wpa3 {
        Security::Wpa3
    } else if wpa2 {
        Security::Wpa2
    } else if m.contains("wpa") {
        Security::Wpa
    } else if m.contains("owe") {
        Security::Owe
    } else if m.contains("wep") {
        Security::Wep
    } else if m == "none" || m == "open" {
        Security::Open
    } else {
        Security::Unknown
    })
}

#[cfg(target_os = "macos")]
pub(super) mod live {
    //! Runs system_profiler with a deadline and a cap on the output it reads.
    use super::super::{Field, LinkKind, LinkState, WifiError, NOT_WIRELESS};
    use super::ProfilerError;
    use std::io::Read;
    use std::net::IpAddr;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    const DEADLINE: Duration = Duration::from_secs(20);
    const MAX_OUTPUT: u64 = 4 << 20;

    fn run() -> Result<String, ProfilerError> {
        let mut child = Command::new("/usr/sbin/system_profiler")
            .args(["SPAirPortDataType", "-json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(ProfilerError::Spawn)?;
        let stdout = child.stdout.take().ok_or(ProfilerError::NoPipe)?;
        let reader = std::thread::spawn(move || {
            let mut s = String::new();
            stdout.take(MAX_OUTPUT).read_to_string(&mut s).map(|_| s)
        });
        let end = Instant::now() + DEADLINE;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(50)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ProfilerError::Deadline(DEADLINE));
                }
            }
        }
        reader
            .join()
            .map_err(|_| ProfilerError::ReaderPanicked)?
            .map_err(ProfilerError::Read)
    }

    pub(crate) fn link_state_of(local: IpAddr) -> LinkState {
        let Some(name) = crate::sys::unix_common::interface_name_of(local) else {
            return LinkState::without_radio(
                Field::unavailable(format!("no interface holds {local}")),
                LinkKind::Unknown,
                "the interface is unknown",
            );
        };
        if name.starts_with("lo") {
            return LinkState::without_radio(Field::Value(name), LinkKind::Loopback, NOT_WIRELESS);
        }
        match run().and_then(|json| super::link_state(&json, &name)) {
            Ok(Some(s)) => s,
            Ok(None) => {
                let kind = if name.starts_with("en") {
                    LinkKind::Wired
                } else {
                    LinkKind::Unknown
                };
                LinkState::without_radio(Field::Value(name), kind, NOT_WIRELESS)
            }
            Err(why) => {
                LinkState::without_radio(Field::Value(name), LinkKind::Unknown, &why.to_string())
            }
        }
    }

    pub(crate) fn wireless_interfaces() -> Result<Vec<String>, WifiError> {
        run()
            .and_then(|j| super::wifi_interfaces(&j))
            .map_err(|e| WifiError::Failed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = include_str!("testdata/system_profiler_airport.json");

    #[test]
    fn the_recorded_sample_reads_as_an_80_mhz_ac_link() {
        let s = link_state(SAMPLE, "en0").unwrap().unwrap();
        assert_eq!(s.kind, LinkKind::Wifi);
        assert_eq!(s.source, Field::Value("system_profiler".into()));
        assert_eq!(s.standard, Field::Value(Standard::Ac));
        assert_eq!(s.band, Field::Value(Band::G5));
        assert_eq!(s.freq_mhz, Field::Value(5745));
        assert_eq!(s.width_mhz, Field::Value(80));
        assert_eq!(s.tx_bitrate_kbps, Field::Value(866_000));
        assert_eq!(s.tx_mcs, Field::Value(9));
        assert_eq!(s.signal_dbm, Field::Value(-54));
        assert_eq!(s.noise_dbm, Field::Value(-93));
        assert_eq!(s.security, Field::Value(Security::Wpa2));
        assert!(s.bssid.value().is_none());
        assert_eq!(s.spatial_streams, Field::unavailable(NOT_REPORTED));
        assert_eq!(s.rx_bitrate_kbps, Field::unavailable(NOT_REPORTED));
    }

    #[test]
    fn an_interface_without_a_current_network_is_not_associated() {
        let s = link_state(SAMPLE, "awdl0").unwrap().unwrap();
        assert_eq!(s.kind, LinkKind::Wifi);
        assert!(matches!(&s.tx_mcs, Field::Unavailable(w) if w.contains("not associated")));
        assert_eq!(link_state(SAMPLE, "en5").unwrap(), None);
        assert_eq!(wifi_interfaces(SAMPLE).unwrap(), vec!["en0", "awdl0"]);
    }

    #[test]
    fn odd_output_is_an_error_or_unavailable_never_a_panic() {
        assert!(matches!(
            link_state("", "en0"),
            Err(ProfilerError::NotJson(_))
        ));
        let no_list = link_state("[]", "en0").unwrap_err();
        assert_eq!(
            no_list.to_string(),
            "system_profiler output has no SPAirPortDataType list"
        );
        assert_eq!(
            link_state(r#"{"SPAirPortDataType":[{}]}"#, "en0").unwrap(),
            None
        );
        let odd = r#"{"SPAirPortDataType":[{"spairport_airport_interfaces":[{"_name":"en0",
            "spairport_current_network_information":{"spairport_network_channel":"999999999 (7GHz, xMHz)",
            "spairport_network_rate":-5,"spairport_network_mcs":1e9,"spairport_signal_noise":"x / y",
            "spairport_security_mode":7}}]}]}"#;
        let s = link_state(odd, "en0").unwrap().unwrap();
        assert!(s.freq_mhz.value().is_none() && s.width_mhz.value().is_none());
        assert!(s.tx_bitrate_kbps.value().is_none() && s.tx_mcs.value().is_none());
        assert!(s.signal_dbm.value().is_none() && s.security.value().is_none());
    }

    #[test]
    fn channels_and_security_modes_parse() {
        assert_eq!(
            parse_channel("6 (2GHz, 20MHz)"),
            (Some(6), Some(Band::G2_4), Some(20))
        );
        assert_eq!(
            parse_channel("37 (6GHz, 160MHz)"),
            (Some(37), Some(Band::G6), Some(160))
        );
        assert_eq!(freq_of(37, Band::G6), Some(6135));
        assert_eq!(freq_of(6, Band::G2_4), Some(2437));
        assert_eq!(
            security("spairport_security_mode_wpa3_personal"),
            Ok(Security::Wpa3)
        );
        assert_eq!(security("spairport_security_mode_none"), Ok(Security::Open));
        assert!(security("spairport_security_mode_wpa2_wpa3_personal").is_err());
        assert_eq!(
            parse_signal_noise("-61 dBm / -90 dBm"),
            (Some(-61), Some(-90))
        );
    }
}
