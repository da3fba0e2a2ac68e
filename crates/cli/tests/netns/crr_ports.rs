//! tcp-crr never exhausts the client's ephemeral ports (issue 40): the server closes
//! first, so TIME_WAIT is held on the server's side and the client's port is free once
//! its close is acknowledged. In a namespace this test makes, with 64 ephemeral ports
//! and `tcp_tw_reuse` off (as between two hosts; loopback's default lets a client reuse
//! its own TIME_WAIT ports after 1 s), a run of 1000 connections per family completes:
//! were TIME_WAIT held by the client, the 65th connect would fail (EADDRNOTAVAIL) for
//! 60 s. The host's own settings are never touched. Needs root (skips outside CI).

use crate::support::engine::has_ipv6;
use crate::support::{labs_or_skip, output_within, shared, text, BIN};
use std::process::Command;
use std::time::Duration;

/// Connections per run: far more than the 64 ports the namespace has.
const CONNECTIONS: u64 = 1000;

/// A network namespace of this test, deleted on drop.
struct Netns(String);

impl Netns {
    fn new() -> Netns {
        let name = format!("dpcrr{}", std::process::id());
        ip(&["netns", "add", &name]);
        let ns = Netns(name);
        ip(&["-n", &ns.0, "link", "set", "lo", "up"]);
        ns.exec_ok(&["sysctl", "-qw", "net.ipv4.ip_local_port_range=40000 40063"]);
        ns.exec_ok(&["sysctl", "-qw", "net.ipv4.tcp_tw_reuse=0"]);
        ns
    }

    fn exec(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]).args(args);
        c
    }

    fn exec_ok(&self, args: &[&str]) {
        let o = output_within(&mut self.exec(args), Duration::from_secs(10));
        assert!(o.status.success(), "{args:?}: {}", text(&o));
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn ip(args: &[&str]) {
    let o = output_within(Command::new("ip").args(args), Duration::from_secs(10));
    assert!(o.status.success(), "ip {args:?}: {}", text(&o));
}

#[test]
fn a_tcp_crr_run_of_more_connections_than_ephemeral_ports_completes() {
    let _turn = shared();
    if !labs_or_skip() {
        return;
    }
    let ns = Netns::new();
    let mut families = vec!["4"];
    if has_ipv6() {
        families.push("6");
    }
    let n = CONNECTIONS.to_string();
    for family in families {
        let o = output_within(
            &mut ns.exec(&[
                BIN, "run", "-t", "tcp-crr", "-f", family, "-n", &n, "-s", "64", "--json",
            ]),
            Duration::from_secs(120),
        );
        assert!(o.status.success(), "IPv{family}: {}", text(&o));
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        assert_eq!(
            doc["transactions"],
            CONNECTIONS,
            "IPv{family}: {}",
            text(&o)
        );
        assert_eq!(doc["connect_time"]["count"], CONNECTIONS, "IPv{family}");
        assert_eq!(doc["warnings"], serde_json::json!([]), "IPv{family}");
    }
}
