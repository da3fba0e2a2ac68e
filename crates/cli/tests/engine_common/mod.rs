//! Helpers shared by the `engine_*` end-to-end tests: run the real binary, read its
//! JSON result, find a free port, start and stop `dualperf server`.
#![allow(dead_code)]

use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_dualperf"))
}

/// Measuring runs in one test binary take turns: two cores cannot carry a full-speed
/// TCP stream and an exact-count UDP run at once without the UDP receiver overflowing.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the dualperf binary runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `dualperf run ARGS --json`, which must succeed; the parsed result.
pub fn run_json(args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let mut c = bin();
    c.arg("run").args(args).arg("--json");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("the dualperf binary runs");
    assert!(
        o.status.success(),
        "dualperf run {args:?} failed: {}",
        stderr(&o)
    );
    serde_json::from_slice(&o.stdout).expect("--json prints JSON")
}

/// A metric's value from a `--json` result (panics if absent).
pub fn metric(v: &serde_json::Value, name: &str) -> f64 {
    v["metrics"]
        .as_array()
        .and_then(|ms| ms.iter().find(|x| x["name"] == name))
        .and_then(|x| x["value"].as_f64())
        .unwrap_or_else(|| panic!("metric {name} missing in {}", v["metrics"]))
}

pub fn has_ipv6() -> bool {
    std::net::UdpSocket::bind("[::1]:0").is_ok()
        && std::fs::read_to_string("/proc/sys/net/ipv6/conf/all/disable_ipv6")
            .map(|t| t.trim() == "0")
            .unwrap_or(true)
}

/// Families to test, as (--family value, loopback host).
pub fn families() -> Vec<(&'static str, &'static str)> {
    let mut v = vec![("4", "127.0.0.1")];
    if has_ipv6() {
        v.push(("6", "::1"));
    } else {
        // The IPv6 half is never skipped silently.
        assert!(
            std::env::var_os("DUALPERF_SKIP_IPV6").is_some_and(|v| v == "1"),
            "::1 is not available here; set DUALPERF_SKIP_IPV6=1 to test IPv4 only"
        );
    }
    v
}

#[path = "../support/port.rs"]
mod port;
#[allow(unused_imports)]
pub use port::free_port;

#[path = "../support/server.rs"]
mod server_proc;

/// A `dualperf server` on 127.0.0.1 at a port the kernel chose, killed on drop.
pub struct Server {
    proc_: server_proc::ServerProc,
    pub port: u16,
}

impl Server {
    pub fn start() -> Server {
        let proc_ = server_proc::ServerProc::start(
            env!("CARGO_BIN_EXE_dualperf"),
            &["--bind", "127.0.0.1"],
        );
        let port = proc_.port();
        Server { proc_, port }
    }

    /// Its stdout once it holds `n` lines containing `needle` (or after 20 s).
    pub fn wait_log(&self, needle: &str, n: usize) -> String {
        self.proc_
            .wait_log(needle, n, std::time::Duration::from_secs(20))
    }

    /// Stop it and return what it printed on stdout.
    pub fn stop(self) -> String {
        self.proc_.stop()
    }
}
