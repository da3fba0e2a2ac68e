//! `dualperf run` on loopback for the engine's end-to-end tests: run the real binary,
//! read its JSON result, the families to test, and `dualperf server` on 127.0.0.1.
//! Measuring runs take turns ([`serial`]): two cores cannot carry a full-speed TCP
//! stream and an exact-count UDP run at once without the UDP receiver overflowing.

#[allow(unused_imports)]
pub use super::{dualperf, free_port, metric, metric_opt, serial, shared, stderr};
use std::process::Output;

pub fn run(args: &[&str]) -> Output {
    dualperf()
        .args(args)
        .output()
        .expect("the dualperf binary runs")
}

/// `dualperf run ARGS --json`, which must succeed; the parsed result.
pub fn run_json(args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let mut c = dualperf();
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

use super::server as server_proc;

/// A `dualperf server` on 127.0.0.1 at a port the kernel chose, killed on drop.
pub struct Server {
    proc_: server_proc::ServerProc,
    pub port: u16,
}

impl Server {
    pub fn start() -> Server {
        let proc_ = server_proc::ServerProc::start(super::BIN, &["--bind", "127.0.0.1"]);
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

/// A stream run's JSON result, `dir` its `--reverse` / `--bidir` (or none): only the
/// sending side(s) sent, and each receiver counted every byte its peer sent.
pub fn each_side_moved_what_the_other_counted(v: &serde_json::Value, dir: Option<&str>) {
    let (c, s) = (&v["client"], &v["server"]);
    let n = |x: &serde_json::Value| x.as_u64().unwrap_or(0);
    match dir {
        None => {
            assert!(n(&c["sent_bytes"]) > 0 && n(&s["sent_bytes"]) == 0);
            assert_eq!(n(&s["recv_bytes"]), n(&c["sent_bytes"]));
        }
        Some("--reverse") => {
            assert!(n(&s["sent_bytes"]) > 0 && n(&c["sent_bytes"]) == 0);
            assert_eq!(n(&c["recv_bytes"]), n(&s["sent_bytes"]));
        }
        _ => {
            assert!(n(&s["sent_bytes"]) > 0 && n(&c["sent_bytes"]) > 0);
            assert_eq!(n(&c["recv_bytes"]), n(&s["sent_bytes"]));
            assert_eq!(n(&s["recv_bytes"]), n(&c["sent_bytes"]));
        }
    }
}
