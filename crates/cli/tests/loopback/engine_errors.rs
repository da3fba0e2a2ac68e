//! Each error a user can hit, produced for real through the binary and checked for the
//! wording that tells them what to do.

use crate::support::engine::*;
use std::process::Command;

fn fails_with(o: &std::process::Output, want: &[&str]) {
    assert!(!o.status.success(), "expected failure, got success");
    let err = stderr(o);
    for w in want {
        assert!(err.contains(w), "stderr lacks '{w}':\n{err}");
    }
}

#[test]
fn connection_refused_asks_whether_the_server_runs() {
    let _turn = shared();
    let port = free_port().to_string();
    let o = run(&["run", "127.0.0.1", "-p", &port, "-d", "0.1"]);
    fails_with(
        &o,
        &[&format!(
            "is `dualperf server` running on 127.0.0.1:{port}?"
        )],
    );
}

/// Runs `script` in a fresh network namespace (no traffic leaves it). `None` only when
/// this machine cannot create one AND `DUALPERF_SKIP_NETNS=1` says to skip; otherwise
/// that is a failure, never a silent pass.
fn in_netns(script: &str) -> Option<std::process::Output> {
    let bin = crate::support::BIN;
    let skip_ok = std::env::var_os("DUALPERF_SKIP_NETNS").is_some_and(|v| v == "1");
    let o = match Command::new("unshare")
        .args(["--net", "sh", "-c", &script.replace("DUALPERF", bin)])
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            assert!(
                skip_ok,
                "cannot run unshare ({e}); set DUALPERF_SKIP_NETNS=1 to skip"
            );
            return None;
        }
    };
    let err = stderr(&o);
    if err.contains("unshare failed") || err.contains("Operation not permitted") {
        assert!(
            skip_ok,
            "cannot create a network namespace ({err}); set DUALPERF_SKIP_NETNS=1 to skip"
        );
        return None;
    }
    Some(o)
}

#[test]
fn host_unreachable_is_reported_as_such() {
    let _turn = shared();
    // A namespace with only a down loopback: no route anywhere, nothing is sent.
    let Some(o) = in_netns("DUALPERF run 10.99.0.1 -d 0.1") else {
        eprintln!("skipped: cannot create a network namespace here");
        return;
    };
    fails_with(&o, &["host unreachable", "10.99.0.1:5301"]);
}

#[test]
fn ipv6_not_available_says_so_and_suggests_ipv4() {
    let _turn = shared();
    let Some(o) = in_netns(
        "ip link set lo up && sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && DUALPERF run -f 6 -d 0.1",
    ) else {
        eprintln!("skipped: cannot create a network namespace here");
        return;
    };
    fails_with(&o, &["IPv6 is not available on this host", "--family 4"]);
}

#[test]
fn payload_larger_than_a_datagram_names_the_family_limit() {
    let _turn = shared();
    let o = run(&["run", "-t", "udp-stream", "-s", "65508", "-n", "1"]);
    fails_with(&o, &["65508-byte payload", "IPv4", "65507"]);
    let o = run(&["run", "-t", "udp-rr", "-f", "6", "-s", "65528", "-n", "1"]);
    fails_with(&o, &["IPv6", "65527"]);
    // The largest legal IPv4 payload goes through (a 2-core box may drop one of these
    // 64 KiB datagrams in a 208 KiB default receive buffer, so only require delivery).
    let v = run_json(
        &["-t", "udp-stream", "-s", "65507", "-n", "3", "-b", "100pps"],
        &[],
    );
    assert_eq!(metric(&v, "sent_packets"), 3.0);
    let got = metric(&v, "recv_packets");
    assert!(got >= 1.0);
    assert_eq!(metric(&v, "recv_bytes"), got * 65507.0);
}

#[test]
fn protocol_version_mismatch_is_named() {
    let _turn = shared();
    let o = run(&["run", "-d", "0.1", "--protocol-version", "99"]);
    fails_with(
        &o,
        &["protocol version mismatch", "version 1", "version 99"],
    );
}

#[test]
fn a_second_client_is_told_the_server_is_busy() {
    let _turn = shared();
    let srv = Server::start();
    let port = srv.port.to_string();
    // The first client runs 3 s and prints a line each 0.2 s: once it has printed one,
    // its test holds the server's slot, however slow this machine is.
    let mut first = dualperf()
        .args(["run", "127.0.0.1", "-p", &port, "-d", "3", "-i", "0.2"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("first client");
    let out = first.stdout.take().expect("piped stdout");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(out));
    let running = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.contains("bit/s"));
    assert!(running, "the first client printed no interval");
    let o = run(&["run", "127.0.0.1", "-p", &port, "-d", "0.1"]);
    fails_with(&o, &["server busy", &format!("127.0.0.1:{port}")]);
    let _rest: Vec<String> = lines.map_while(Result::ok).collect();
    let first = first.wait_with_output().expect("first client output");
    assert!(first.status.success(), "{}", stderr(&first));
    // Once the first test is over, the server takes the next one.
    let o = run(&["run", "127.0.0.1", "-p", &port, "-d", "0.1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let log = srv.wait_log(" ok: ", 2);
    assert!(
        log.lines().filter(|l| l.contains(" ok: ")).count() >= 2,
        "{log}"
    );
}
