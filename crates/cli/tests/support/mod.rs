//! The one helper module of the binary's end-to-end tests (every test program in this
//! folder declares `mod support;`): the binary and its output ([`BIN`], [`dualperf`],
//! [`text`]); whether this machine can run a kind of test (root, labs, Debian's iperf3)
//! and, if not, a printed skip outside CI and a failure inside it; free ports and
//! listening checks; an iperf3 server process; turns for tests that need the machine to
//! themselves ([`serial`], [`shared`]). By subject: a `dualperf server` child
//! ([`server`]), what a lab run may have left behind ([`lab`]), the report's fixture
//! database ([`fixture`]), a study's database ([`study`]), `dualperf run --json`
//! ([`engine`]).
#![allow(dead_code)]

pub mod engine;
pub mod fixture;
pub mod lab;
pub mod server;
pub mod study;

#[allow(unused_imports)]
pub use testkit::free_port;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};
use wire::proto::{encode_frame, FrameDecoder, Msg, PROTOCOL_VERSION};

/// The dualperf binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_dualperf");

/// A command running the dualperf binary under test.
pub fn dualperf() -> Command {
    Command::new(BIN)
}

/// Status, stdout and stderr of a finished command, for an assertion's message.
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A command's stderr as text.
pub fn stderr(o: &Output) -> String {
    lossy(&o.stderr)
}

/// Bytes a command printed, as text.
pub fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A metric's value from a `run --json` result, if it is there.
pub fn metric_opt(doc: &serde_json::Value, name: &str) -> Option<f64> {
    doc["metrics"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["name"] == name))
        .and_then(|m| m["value"].as_f64())
}

/// A metric's value from a `run --json` result (panics, naming it, if absent).
pub fn metric(doc: &serde_json::Value, name: &str) -> f64 {
    metric_opt(doc, name).unwrap_or_else(|| panic!("metric {name} missing in {}", doc["metrics"]))
}

/// Waits for `child` at most `limit` (then kills it); its output either way.
pub fn wait_with_limit(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait().expect("try_wait") {
            Some(_) => break,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                break;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    child
        .wait_with_output()
        .expect("collect the command's output")
}

/// Runs `cmd` to its end, killing it after `limit` (a refusal that regressed must not
/// turn into an hour-long test).
pub fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    wait_with_limit(child, limit)
}

/// A control connection to `addr` spoken by hand, past its `hello` (the server's
/// `welcome` read): the connection and its decoder, reads bounded at 5 s.
pub fn hello_by_hand(addr: impl std::net::ToSocketAddrs) -> (TcpStream, FrameDecoder) {
    let mut ctl = TcpStream::connect(addr).expect("connect control");
    ctl.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
    let hello = Msg::Hello {
        client_info: Default::default(),
        client_nonce: None,
    };
    let reply = exchange(&mut ctl, &mut dec, Some(&hello));
    assert!(matches!(reply, Msg::Welcome { .. }), "{reply:?}");
    (ctl, dec)
}

/// Speak the control protocol by hand: send `msg` (if any), then read one message.
pub fn exchange(s: &mut TcpStream, dec: &mut FrameDecoder, msg: Option<&Msg>) -> Msg {
    if let Some(m) = msg {
        s.write_all(&encode_frame(m, PROTOCOL_VERSION))
            .expect("send control message");
    }
    let mut buf = [0u8; 65536];
    loop {
        if let Some(m) = dec.next_msg().expect("server sent a valid frame") {
            return m;
        }
        let n = s.read(&mut buf).expect("read control connection");
        assert!(n > 0, "server closed the control connection");
        dec.push(&buf[..n]);
    }
}

/// Turns between the tests of one test program, which cargo runs two at a time: a
/// test that measures (exact counts, rates, delays) holds [`serial`] and runs alone; a
/// test that sends traffic without measuring it holds [`shared`] and may run beside
/// another such test, never beside a measuring one. (Each measured check is meant to
/// hold on two cores with one of them busy, not beside a second test's traffic.)
static TURNS: RwLock<()> = RwLock::new(());

/// This test runs alone among the tests that take turns (see [`TURNS`]).
pub fn serial() -> RwLockWriteGuard<'static, ()> {
    TURNS.write().unwrap_or_else(|p| p.into_inner())
}

/// This test may run beside other [`shared`] tests, never beside a [`serial`] one.
pub fn shared() -> RwLockReadGuard<'static, ()> {
    TURNS.read().unwrap_or_else(|p| p.into_inner())
}

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
