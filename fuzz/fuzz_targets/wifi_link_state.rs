//! Wi-Fi link-state parsers (`net::wifi`): the bytes as one nl80211 reply datagram
//! (netlink and generic netlink headers, interface / station / survey / scan dumps,
//! the RSN element) through `nl80211::fuzz_one`, and as UTF-8 through the macOS
//! `system_profiler` JSON reader. Properties beyond "no panic": every data message
//! counted is at least a netlink and generic netlink header long; the flattened link
//! state stays within the metadata caps.
#![no_main]

use libfuzzer_sys::fuzz_target;
use net::wifi::{macos, nl80211};

fuzz_target!(|data: &[u8]| {
    // Two passes (our sequence number and the datagram's own) over messages of ≥ 20 bytes.
    let n = nl80211::fuzz_one(data);
    assert!(n <= 2 * (data.len() / 20), "{n} messages in {} bytes", data.len());
    if let Ok(text) = std::str::from_utf8(data) {
        for iface in ["en0", "awdl0"] {
            if let Ok(Some(s)) = macos::link_state(text, iface) {
                let md = s.to_metadata("link.before");
                assert!(md.len() <= wire::text::MAX_META_KEYS);
                assert!(md.values().all(|v| v.len() <= wire::text::MAX_META_BYTES));
            }
        }
        let _ = macos::wifi_interfaces(text);
    }
});
