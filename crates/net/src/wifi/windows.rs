//! Windows: the adapter holding the address (GetAdaptersAddresses: its interface type
//! and GUID), and for an 802.11 adapter the Native Wifi API: `WlanOpenHandle`,
//! `WlanEnumInterfaces`, and `WlanQueryInterface(wlan_intf_opcode_current_connection)`
//! for the association (PHY type, BSSID, signal quality, rates) and its security. The
//! API has no MCS, spatial streams, guard interval, channel width, frequency or noise:
//! those are unavailable with that reason. Without the WLAN AutoConfig service (Server
//! editions without the Wireless LAN feature, Wine) `WlanOpenHandle` fails, and the
//! link says "WLAN service not running".

use super::{Field, LinkKind, LinkState, Security, Standard, WifiError, NOT_WIRELESS};
use crate::sys::sysinfo::{from_wide, with_adapter_of};
use std::net::IpAddr;
use windows_sys::core::GUID;
use windows_sys::Win32::Foundation::HANDLE;
use windows_sys::Win32::NetworkManagement::WiFi::{
    dot11_phy_type_dsss, dot11_phy_type_eht, dot11_phy_type_erp, dot11_phy_type_he,
    dot11_phy_type_hrdsss, dot11_phy_type_ht, dot11_phy_type_ofdm, dot11_phy_type_vht,
    wlan_interface_state_connected, wlan_intf_opcode_current_connection, WlanCloseHandle,
    WlanEnumInterfaces, WlanFreeMemory, WlanOpenHandle, WlanQueryInterface,
    DOT11_AUTH_ALGO_80211_OPEN, DOT11_AUTH_ALGO_80211_SHARED_KEY, DOT11_AUTH_ALGO_OWE,
    DOT11_AUTH_ALGO_RSNA, DOT11_AUTH_ALGO_RSNA_PSK, DOT11_AUTH_ALGO_WPA, DOT11_AUTH_ALGO_WPA3,
    DOT11_AUTH_ALGO_WPA3_ENT, DOT11_AUTH_ALGO_WPA3_SAE, DOT11_AUTH_ALGO_WPA_PSK,
    WLAN_CONNECTION_ATTRIBUTES, WLAN_INTERFACE_INFO, WLAN_INTERFACE_INFO_LIST,
};

/// `IF_TYPE_IEEE80211`, `IF_TYPE_SOFTWARE_LOOPBACK`, `IF_TYPE_ETHERNET_CSMACD` (ipifcons.h).
const IF_TYPE_IEEE80211: u32 = 71;
const IF_TYPE_SOFTWARE_LOOPBACK: u32 = 24;
const IF_TYPE_ETHERNET_CSMACD: u32 = 6;
/// What WlanOpenHandle answers without the WLAN AutoConfig service (winerror.h).
const ERROR_SERVICE_NOT_ACTIVE: u32 = 1062;
const ERROR_SERVICE_DOES_NOT_EXIST: u32 = 1060;
const RPC_S_SERVER_UNAVAILABLE: u32 = 1722;
/// The client version for Windows Vista and later.
const WLAN_API_VERSION_2: u32 = 2;
const NO_MCS: &str = "the Native Wifi API does not report it";
pub(super) const NO_SERVICE: &str = "WLAN service not running";

pub(super) fn link_state_of(local: IpAddr) -> LinkState {
    let adapter = with_adapter_of(local, |a| {
        (
            from_wide(a.FriendlyName),
            a.IfType,
            // SAFETY: AdapterName is a NUL-terminated ANSI string inside the list buffer.
            unsafe { ansi(a.AdapterName) },
        )
    });
    let (name, if_type, guid) = match adapter {
        Ok(Some(a)) => a,
        Ok(None) => {
            return LinkState::without_radio(
                Field::unavailable(format!("no interface holds {local}")),
                LinkKind::Unknown,
                "the interface is unknown",
            )
        }
        Err(rc) => {
            let why = format!("GetAdaptersAddresses failed: error {rc}");
            return LinkState::without_radio(
                Field::unavailable(why.clone()),
                LinkKind::Unknown,
                &why,
            );
        }
    };
    let iface = Field::from_option(name, "the adapter has no name");
    let kind = match if_type {
        IF_TYPE_IEEE80211 => LinkKind::Wifi,
        IF_TYPE_SOFTWARE_LOOPBACK => LinkKind::Loopback,
        IF_TYPE_ETHERNET_CSMACD => LinkKind::Wired,
        _ => LinkKind::Unknown,
    };
    if kind != LinkKind::Wifi {
        return LinkState::without_radio(iface, kind, NOT_WIRELESS);
    }
    match Wlan::open().and_then(|w| w.connection(guid.as_deref().unwrap_or(""))) {
        Ok(Some(c)) => from_connection(iface, &c),
        Ok(None) => LinkState::without_radio(iface, kind, "not connected"),
        Err(e) => LinkState::without_radio(iface, kind, &e.to_string()),
    }
}

pub(super) fn wireless_interfaces() -> Result<Vec<String>, WifiError> {
    let w = Wlan::open()?;
    Ok(w.interfaces()?
        .iter()
        .map(|i| utf16_text(&i.strInterfaceDescription))
        .collect())
}

/// A WLAN client handle, closed on drop.
struct Wlan(HANDLE);

impl Wlan {
    fn open() -> Result<Wlan, WifiError> {
        Wlan::open_version(WLAN_API_VERSION_2)
    }

    fn open_version(version: u32) -> Result<Wlan, WifiError> {
        let mut negotiated = 0u32;
        let mut h: HANDLE = std::ptr::null_mut();
        // SAFETY: both out-pointers are valid for writes; the reserved pointer is null.
        let rc = unsafe { WlanOpenHandle(version, std::ptr::null(), &mut negotiated, &mut h) };
        match rc {
            0 if !h.is_null() => Ok(Wlan(h)),
            ERROR_SERVICE_NOT_ACTIVE | RPC_S_SERVER_UNAVAILABLE | ERROR_SERVICE_DOES_NOT_EXIST => {
                Err(WifiError::NoService(format!(
                    "{NO_SERVICE} (WlanOpenHandle: error {rc})"
                )))
            }
            _ => Err(WifiError::Failed(format!("WlanOpenHandle: error {rc}"))),
        }
    }

    fn interfaces(&self) -> Result<Vec<WLAN_INTERFACE_INFO>, WifiError> {
        let mut list: *mut WLAN_INTERFACE_INFO_LIST = std::ptr::null_mut();
        // SAFETY: the handle is open; `list` receives memory we free with WlanFreeMemory.
        let rc = unsafe { WlanEnumInterfaces(self.0, std::ptr::null(), &mut list) };
        if rc != 0 || list.is_null() {
            return Err(WifiError::Failed(format!("WlanEnumInterfaces: error {rc}")));
        }
        // SAFETY: `list` points to a WLAN_INTERFACE_INFO_LIST whose InterfaceInfo array
        // holds dwNumberOfItems entries (the API's documented layout); capped at 256.
        let out = unsafe {
            let n = ((*list).dwNumberOfItems as usize).min(256);
            let first = std::ptr::addr_of!((*list).InterfaceInfo).cast::<WLAN_INTERFACE_INFO>();
            std::slice::from_raw_parts(first, n).to_vec()
        };
        // SAFETY: `list` came from WlanEnumInterfaces and is freed once.
        unsafe { WlanFreeMemory(list.cast()) };
        Ok(out)
    }

    /// The current connection of the interface whose GUID is `guid` ("{…}").
    fn connection(&self, guid: &str) -> Result<Option<WLAN_CONNECTION_ATTRIBUTES>, WifiError> {
        let Some(info) = self
            .interfaces()?
            .into_iter()
            .find(|i| guid_text(&i.InterfaceGuid).eq_ignore_ascii_case(guid))
        else {
            return Err(WifiError::Failed(format!(
                "the WLAN service does not list adapter {guid}"
            )));
        };
        if info.isState != wlan_interface_state_connected {
            return Ok(None);
        }
        let mut size = 0u32;
        let mut data: *mut core::ffi::c_void = std::ptr::null_mut();
        // SAFETY: the handle is open, the GUID lives for the call, the out-pointers are
        // valid; `data` receives memory we free with WlanFreeMemory.
        let rc = unsafe {
            WlanQueryInterface(
                self.0,
                &info.InterfaceGuid,
                wlan_intf_opcode_current_connection,
                std::ptr::null(),
                &mut size,
                &mut data,
                std::ptr::null_mut(),
            )
        };
        if rc != 0 || data.is_null() {
            return Err(WifiError::Failed(format!(
                "WlanQueryInterface(current_connection): error {rc}"
            )));
        }
        let fits = size as usize >= std::mem::size_of::<WLAN_CONNECTION_ATTRIBUTES>();
        // SAFETY: the API returned `size` bytes at `data`; we read the structure only
        // when it fits, as an unaligned copy.
        let c = fits.then(|| unsafe {
            std::ptr::read_unaligned(data.cast::<WLAN_CONNECTION_ATTRIBUTES>())
        });
        // SAFETY: `data` came from WlanQueryInterface and is freed once.
        unsafe { WlanFreeMemory(data) };
        c.map(Some)
            .ok_or_else(|| WifiError::Failed(format!("WlanQueryInterface returned {size} bytes")))
    }
}

impl Drop for Wlan {
    fn drop(&mut self) {
        // SAFETY: the handle was opened by WlanOpenHandle and is closed once.
        unsafe { WlanCloseHandle(self.0, std::ptr::null()) };
    }
}

fn from_connection(iface: Field<String>, c: &WLAN_CONNECTION_ATTRIBUTES) -> LinkState {
    let a = &c.wlanAssociationAttributes;
    let mut s = LinkState::without_radio(iface, LinkKind::Wifi, NO_MCS);
    s.source = Field::Value("Native Wifi".into());
    s.standard = Field::from_option(
        match a.dot11PhyType {
            t if t == dot11_phy_type_ofdm => Some(Standard::A),
            t if t == dot11_phy_type_dsss || t == dot11_phy_type_hrdsss => Some(Standard::B),
            t if t == dot11_phy_type_erp => Some(Standard::G),
            t if t == dot11_phy_type_ht => Some(Standard::N),
            t if t == dot11_phy_type_vht => Some(Standard::Ac),
            t if t == dot11_phy_type_he => Some(Standard::Ax),
            t if t == dot11_phy_type_eht => Some(Standard::Be),
            _ => None,
        },
        "unknown PHY type",
    );
    // ulTxRate / ulRxRate are in kbit/s (WLAN_ASSOCIATION_ATTRIBUTES documentation).
    s.tx_bitrate_kbps = Field::Value(u64::from(a.ulTxRate));
    s.rx_bitrate_kbps = Field::Value(u64::from(a.ulRxRate));
    // wlanSignalQuality 0..100 maps linearly to -100..-50 dBm (documented).
    s.signal_dbm = Field::Value(-100 + (a.wlanSignalQuality.min(100) as i32) / 2);
    s.bssid = Field::Value(super::nl80211::mac_text(&a.dot11Bssid));
    let sec = &c.wlanSecurityAttributes;
    s.security = Field::from_option(
        match sec.dot11AuthAlgorithm {
            _ if sec.bSecurityEnabled == 0 => Some(Security::Open),
            x if x == DOT11_AUTH_ALGO_80211_OPEN || x == DOT11_AUTH_ALGO_80211_SHARED_KEY => {
                Some(Security::Wep)
            }
            x if x == DOT11_AUTH_ALGO_WPA || x == DOT11_AUTH_ALGO_WPA_PSK => Some(Security::Wpa),
            x if x == DOT11_AUTH_ALGO_RSNA || x == DOT11_AUTH_ALGO_RSNA_PSK => Some(Security::Wpa2),
            x if x == DOT11_AUTH_ALGO_WPA3
                || x == DOT11_AUTH_ALGO_WPA3_SAE
                || x == DOT11_AUTH_ALGO_WPA3_ENT =>
            {
                Some(Security::Wpa3)
            }
            x if x == DOT11_AUTH_ALGO_OWE => Some(Security::Owe),
            _ => Some(Security::Unknown),
        },
        "",
    );
    s
}

/// A GUID as Windows prints it in adapter names: `{XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}`.
fn guid_text(g: &GUID) -> String {
    let d4: String = g.data4.iter().map(|b| format!("{b:02X}")).collect();
    format!(
        "{{{:08X}-{:04X}-{:04X}-{}-{}}}",
        g.data1,
        g.data2,
        g.data3,
        &d4[..4],
        &d4[4..]
    )
}

fn utf16_text(units: &[u16]) -> String {
    let end = units.iter().position(|&u| u == 0).unwrap_or(units.len());
    String::from_utf16_lossy(&units[..end])
}

/// A NUL-terminated ANSI string (at most 256 bytes read).
///
/// # Safety
/// `p` is null or points to a NUL-terminated string.
unsafe fn ansi(p: *const u8) -> Option<String> {
    if p.is_null() {
        return None;
    }
    let mut len = 0;
    // SAFETY: the caller promises a NUL-terminated string; we stop at NUL or 256.
    while len < 256 && unsafe { *p.add(len) } != 0 {
        len += 1;
    }
    // SAFETY: `len` bytes before the terminator were just read.
    let bytes = unsafe { std::slice::from_raw_parts(p, len) };
    Some(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wine's wlanapi opens a handle and lists no radio; a Windows host may have
    /// radios or no WLAN service. Each answer is clean, and without the service it
    /// says so.
    #[test]
    fn listing_radios_answers_and_says_when_there_is_no_wlan_service() {
        match wireless_interfaces() {
            Ok(list) => assert!(list.len() <= 256),
            Err(WifiError::NoService(why)) => assert!(why.starts_with(NO_SERVICE), "{why}"),
            Err(e) => panic!("{e}"),
        }
    }

    /// A refused WlanOpenHandle (here: a client version no API has) is an error that
    /// names the call and its code, not a crash or a handle used anyway.
    #[test]
    fn a_refused_wlan_handle_is_an_error_with_its_code() {
        match Wlan::open_version(0xdead) {
            Ok(_) => panic!("client version 0xdead was accepted"),
            Err(e) => assert!(e.to_string().contains("WlanOpenHandle: error"), "{e}"),
        }
    }

    #[test]
    fn guids_print_as_adapter_names_do() {
        let g = GUID {
            data1: 0x1234_abcd,
            data2: 0x0a0b,
            data3: 0xc0d0,
            data4: [1, 2, 3, 4, 5, 6, 7, 8],
        };
        assert_eq!(guid_text(&g), "{1234ABCD-0A0B-C0D0-0102-030405060708}");
    }
}
