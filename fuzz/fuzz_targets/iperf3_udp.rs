//! iperf3 UDP datagrams (`iperf3::udp`): header parsing in both counter widths, the
//! connect-reply check, and the receiver's loss / jitter accounting over a stream of
//! hostile headers. Properties: no panic (no overflow); a parsed header written back
//! reproduces the input's header bytes; counts stay consistent.
#![no_main]

use iperf3::udp::{is_connect_reply, DatagramHeader, UdpRecvStats};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = is_connect_reply(data);
    for wide in [false, true] {
        if let Some(h) = DatagramHeader::parse(data, wide) {
            let len = DatagramHeader::len(wide);
            assert!(data.len() >= len);
            let mut buf = vec![0u8; len];
            assert!(h.write(&mut buf, wide));
            assert_eq!(&buf[..], &data[..len], "header does not round-trip");
        } else {
            assert!(data.len() < DatagramHeader::len(wide));
        }
    }
    // Treat the input as a run of 16-byte datagrams arriving 1 ms apart.
    let mut stats = UdpRecvStats::default();
    for (i, d) in data.chunks_exact(16).enumerate() {
        if let Some(h) = DatagramHeader::parse(d, true) {
            stats.on_datagram(d.len(), &h, i as f64 * 1e-3);
        }
    }
    assert_eq!(stats.received, (data.len() / 16) as u64);
    assert!(stats.jitter_s().is_finite() && stats.jitter_s() >= 0.0);
    assert!(stats.errors >= 0);
});
