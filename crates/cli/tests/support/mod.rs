//! Helpers the end-to-end tests of the binary share, written once: whether this
//! machine can run a kind of test (root, labs, Debian's iperf3) and, if not, a printed
//! skip outside CI and a failure inside it; free ports and listening checks; an iperf3
//! server process; what a lab run may have left behind ([`lab`]).
#![allow(dead_code)]

pub mod lab;
mod port;
pub mod server;

#[allow(unused_imports)]
pub use port::free_port;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// True when running as root. Outside CI a non-root run skips (printing why `what`
/// needs root); in CI it fails, since CI must run every test.
pub fn root_or_skip(what: &str) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let uid_root = status
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    if !uid_root && std::env::var_os("CI").is_none() {
        eprintln!("SKIPPED: {what} need root");
        return false;
    }
    assert!(uid_root, "CI must run {what} as root");
    true
}

/// True when network-namespace labs can be built (`lab::check_privileges`). Without
/// root outside CI the test skips with the reason; in CI, or with root but a broken
/// setup, it fails.
pub fn labs_or_skip() -> bool {
    match ::lab::check_privileges() {
        Ok(()) => true,
        Err(e @ ::lab::LabError::NotRoot) if std::env::var_os("CI").is_none() => {
            eprintln!("SKIPPED: {e}");
            false
        }
        Err(e) => panic!("labs cannot be built here: {e}"),
    }
}

/// Debian's iperf3 (CI installs it).
pub const IPERF3: &str = "/usr/bin/iperf3";

/// True when [`IPERF3`] exists; skips outside CI, fails in CI.
pub fn iperf3_or_skip() -> bool {
    if Path::new(IPERF3).exists() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{IPERF3} is missing (.ci/run installs it)"
    );
    eprintln!("SKIPPED: {IPERF3} is not installed");
    false
}

/// Whether a TCP socket listens on `port` (IPv4 or IPv6), from /proc/net: no probe
/// connection, which an iperf3 server would take for a client.
pub fn listening(port: u16) -> bool {
    let local = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        let table = std::fs::read_to_string(f).unwrap_or_default();
        table.lines().skip(1).any(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            // local_address rem_address st: state 0A is LISTEN.
            cols.len() > 3 && cols[1].ends_with(&local) && cols[3] == "0A"
        })
    })
}

/// Waits (at most 5 s) until something listens on `port`.
pub fn wait_listening(port: u16, what: &str) {
    let t0 = Instant::now();
    while !listening(port) {
        assert!(t0.elapsed() < Duration::from_secs(5), "{what} not up");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `iperf3 -s -p PORT EXTRA…`, listening when this returns; stdout piped when
/// `capture` (for `-J`), else discarded. The caller owns (and kills) the process.
pub fn spawn_iperf3_server(port: u16, extra: &[&str], capture: bool) -> Child {
    let child = Command::new(IPERF3)
        .args(["-s", "-p", &port.to_string()])
        .args(extra)
        .stdout(if capture {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3 -s starts");
    wait_listening(port, "iperf3 -s");
    child
}
