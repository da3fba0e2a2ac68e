//! iperf3 interoperability through the real binary, against Debian's iperf3 3.x:
//! `dualperf run HOST --peer iperf3` against `iperf3 -s -1 -J` (TCP, UDP, reverse, two
//! streams, 127.0.0.1 and ::1; our byte and datagram counts equal the ones iperf3
//! prints), its busy and RR errors; and unmodified `iperf3 -c -J` (TCP, UDP, -R)
//! against `dualperf server --iperf3-port`, whose log line agrees with what iperf3
//! prints. Every test moves at most ~1 s of traffic. Skips when /usr/bin/iperf3 is
//! missing outside CI.

use crate::support::shared;
use crate::support::{free_port, iperf3_or_skip, spawn_iperf3_server, IPERF3};
use crate::support::{metric, text, BIN};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// `iperf3 -s -1 -J -p PORT [extra]`: serves one test and prints its JSON; killed on drop.
struct Iperf3Once(Option<Child>);

impl Iperf3Once {
    fn start(port: u16, extra: &[&str]) -> Iperf3Once {
        let args: Vec<&str> = ["-1", "-J"].iter().chain(extra).copied().collect();
        Iperf3Once(Some(spawn_iperf3_server(port, &args, true)))
    }

    /// The server's `-J` document, once its one test is over.
    fn json(mut self) -> Value {
        let child = self.0.take().expect("server running");
        let out = child
            .wait_with_output()
            .expect("iperf3 -s exits after one test");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "iperf3 -s printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }
}

impl Drop for Iperf3Once {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `dualperf run HOST --peer iperf3 --port PORT ARGS --json` against a fresh
/// `iperf3 -s -1`: (our JSON, the server's JSON).
fn run_against_iperf3(host: &str, args: &[&str]) -> (Value, Value) {
    let port = free_port();
    let server = Iperf3Once::start(port, &[]);
    let o = Command::new(BIN)
        .args(["run", host, "--peer", "iperf3", "--port", &port.to_string()])
        .args(args)
        .arg("--json")
        .output()
        .expect("dualperf runs");
    assert!(o.status.success(), "{}", text(&o));
    let ours: Value = serde_json::from_slice(&o.stdout).expect("our JSON");
    (ours, server.json())
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn tcp_to_iperf3_on_ipv4_counts_what_the_server_received() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let (ours, srv) = run_against_iperf3("127.0.0.1", &["-t", "tcp-stream", "-d", "0.5"]);
    let received = u(&srv["end"]["sum_received"]["bytes"]);
    assert!(received > 0, "{srv}");
    assert_eq!(u(&ours["forward"]["recv_bytes"]), received, "{ours}");
    assert!(u(&ours["forward"]["sent_bytes"]) >= received);
    assert!(ours["reverse"].is_null());
    assert_eq!(ours["peer"], "iperf3");
    let missing: Vec<&str> = ours["unavailable_metrics"]
        .as_array()
        .expect("unavailable list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(missing.contains(&"rtt_mean_ns"), "{missing:?}");
    assert!(metric(&ours, "throughput_bps") > 0.0);
}

#[test]
fn tcp_reverse_from_iperf3_on_ipv6_counts_what_the_server_sent() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let (ours, srv) =
        run_against_iperf3("::1", &["-f", "6", "-t", "tcp-stream", "-R", "-d", "0.5"]);
    let sent = u(&srv["end"]["sum_sent"]["bytes"]);
    assert!(sent > 0, "{srv}");
    assert_eq!(u(&ours["reverse"]["sent_bytes"]), sent, "{ours}");
    let got = u(&ours["reverse"]["recv_bytes"]);
    assert!(got > 0 && got <= sent, "received {got} of {sent}");
    assert!(ours["forward"].is_null());
    assert_eq!(ours["server_addr"], "[::1]:".to_string() + &port_of(&ours));
}

fn port_of(ours: &Value) -> String {
    let addr = ours["server_addr"].as_str().expect("server_addr");
    addr.rsplit(':').next().unwrap_or("").to_string()
}

#[test]
fn two_tcp_streams_to_iperf3_add_up() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let (ours, srv) =
        run_against_iperf3("127.0.0.1", &["-t", "tcp-stream", "-P", "2", "-d", "0.5"]);
    let per_stream: u64 = srv["end"]["streams"]
        .as_array()
        .expect("streams")
        .iter()
        .map(|s| u(&s["receiver"]["bytes"]))
        .sum();
    assert_eq!(srv["end"]["streams"].as_array().map(Vec::len), Some(2));
    assert_eq!(u(&ours["forward"]["recv_bytes"]), per_stream, "{ours}");
    assert_eq!(u(&ours["forward"]["streams"]), 2);
}

#[test]
fn udp_to_iperf3_on_ipv4_agrees_on_bytes_datagrams_and_loss() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let (ours, srv) = run_against_iperf3(
        "127.0.0.1",
        &["-t", "udp-stream", "-s", "1200", "-b", "50M", "-d", "0.5"],
    );
    let r = &srv["end"]["sum_received"];
    assert!(u(&r["bytes"]) > 0, "{srv}");
    assert_eq!(u(&ours["forward"]["recv_bytes"]), u(&r["bytes"]), "{ours}");
    assert_eq!(
        u(&ours["forward"]["highest_seq"]),
        u(&r["packets"]),
        "{ours}"
    );
    assert_eq!(
        ours["forward"]["lost_packets"].as_i64(),
        r["lost_packets"].as_i64(),
        "{ours}"
    );
    assert_eq!(
        metric(&ours, "lost_packets"),
        r["lost_packets"].as_f64().unwrap_or(-1.0)
    );
    // ~50 Mbit/s asked for: the count is consistent with the rate and 0.5 s.
    let sent = u(&ours["forward"]["sent_packets"]);
    assert!((1500..=4000).contains(&sent), "{sent} datagrams");
}

#[test]
fn udp_reverse_from_iperf3_on_ipv6_agrees_on_what_the_server_sent() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let (ours, srv) = run_against_iperf3(
        "::1",
        &[
            "-f",
            "6",
            "-t",
            "udp-stream",
            "-s",
            "1200",
            "-b",
            "50M",
            "-R",
            "-d",
            "0.5",
        ],
    );
    let s = &srv["end"]["sum_sent"];
    assert!(u(&s["bytes"]) > 0, "{srv}");
    assert_eq!(u(&ours["reverse"]["sent_bytes"]), u(&s["bytes"]), "{ours}");
    assert_eq!(
        u(&ours["reverse"]["sent_packets"]),
        u(&s["packets"]),
        "{ours}"
    );
    let got = u(&ours["reverse"]["recv_bytes"]);
    assert!(got > 0 && got <= u(&s["bytes"]), "{ours}");
}

#[test]
fn a_busy_iperf3_server_is_a_clear_error() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let port = free_port();
    let mut server = spawn_iperf3_server(port, &[], false);
    // Another client keeps the server busy (a slow 1 Mbit/s UDP test for 2 s).
    let mut other = Command::new(IPERF3)
        .args([
            "-c",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-u",
            "-b",
            "1M",
            "-t",
            "2",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3 -c starts");
    std::thread::sleep(Duration::from_millis(500));
    let o = Command::new(BIN)
        .args([
            "run",
            "127.0.0.1",
            "--peer",
            "iperf3",
            "--port",
            &port.to_string(),
        ])
        .args(["-t", "tcp-stream", "-d", "0.3"])
        .output()
        .expect("dualperf runs");
    let _ = other.kill();
    let _ = other.wait();
    let _ = server.kill();
    let _ = server.wait();
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "iperf3 server 127.0.0.1:{port} is busy running another test; try again later"
        )),
        "{}",
        text(&o)
    );
}

#[test]
fn rr_tests_and_a_missing_host_are_refused_with_an_iperf3_peer() {
    let _turn = shared();
    for args in [
        &["127.0.0.1", "-t", "tcp-rr"][..],
        &["127.0.0.1", "-t", "udp-rr"][..],
    ] {
        let o = Command::new(BIN)
            .arg("run")
            .args(args)
            .args(["--peer", "iperf3", "--port", "9"])
            .output()
            .expect("dualperf runs");
        assert!(!o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("request/response"), "{err}");
    }
    let o = Command::new(BIN)
        .args(["run", "--peer", "iperf3"])
        .output()
        .expect("dualperf runs");
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("needs the HOST"),
        "{}",
        text(&o)
    );
}

/// The path-health tests need a dualperf server to acknowledge each datagram: with an
/// iperf3 peer they are refused, not run as a UDP stream under their name.
#[test]
fn path_health_tests_are_refused_with_an_iperf3_peer() {
    let _turn = shared();
    for test in ["pmtu", "frag", "ext-headers"] {
        let o = Command::new(BIN)
            .args(["run", "127.0.0.1", "-t", test])
            .args(["--peer", "iperf3", "--port", "9"])
            .output()
            .expect("dualperf runs");
        assert!(!o.status.success(), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!(
                "{test} is not possible with --peer iperf3: each datagram must be acknowledged"
            )),
            "{err}"
        );
    }
}

#[test]
fn the_iperf3_peer_port_defaults_to_5201() {
    let _turn = shared();
    let o = Command::new(BIN)
        .args([
            "run",
            "127.0.0.1",
            "--peer",
            "iperf3",
            "-d",
            "0.2",
            "--connect-timeout",
            "0.5",
        ])
        .output()
        .expect("dualperf runs");
    // Whatever listens on 5201 here (usually nothing), the port used is 5201.
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(all.contains("127.0.0.1:5201"), "{}", text(&o));
}

/// `dualperf server --iperf3-port P --port Q`: its stdout lines arrive on a channel.
struct OurServer {
    child: Child,
    lines: Receiver<String>,
    iperf3_port: u16,
}

impl OurServer {
    fn start() -> OurServer {
        let iperf3_port = free_port();
        let port = free_port();
        let mut child = Command::new(BIN)
            .args(["server", "--iperf3-port", &iperf3_port.to_string()])
            .args(["--port", &port.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("dualperf server starts");
        let (tx, lines) = mpsc::channel();
        let out = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = OurServer {
            child,
            lines,
            iperf3_port,
        };
        let up = s.next_line_with("listening on");
        assert!(up.is_some(), "dualperf server did not start");
        s
    }

    fn next_line_with(&mut self, what: &str) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(what) => return Some(l),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// An unmodified `iperf3 -c HOST -p P -t 1 -J ARGS`: its JSON and our log line.
    fn iperf3_client(&mut self, host: &str, args: &[&str]) -> (Value, String) {
        let o = Command::new(IPERF3)
            .args([
                "-c",
                host,
                "-p",
                &self.iperf3_port.to_string(),
                "-t",
                "1",
                "-J",
            ])
            .args(args)
            .output()
            .expect("iperf3 -c runs");
        assert!(o.status.success(), "{}", text(&o));
        let doc: Value = serde_json::from_slice(&o.stdout).expect("iperf3 -c JSON");
        let line = self
            .next_line_with("dualperf server: iperf3 ")
            .expect("a log line for the iperf3 test");
        (doc, line)
    }

    /// Ctrl-C stops both servers.
    fn interrupt(mut self) {
        let ok = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(ok.success());
        let t0 = Instant::now();
        loop {
            if let Ok(Some(st)) = self.child.try_wait() {
                assert!(st.success(), "server exit {st:?}");
                return;
            }
            assert!(t0.elapsed() < Duration::from_secs(5), "server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for OurServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The number before `word` in `line` ("sent 123 B" → 123 for "sent").
fn count_after(line: &str, word: &str) -> u64 {
    let at = line
        .find(&format!("{word} "))
        .unwrap_or_else(|| panic!("no '{word}' in {line}"));
    line[at + word.len() + 1..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after '{word}' in {line}"))
}

#[test]
fn iperf3_client_tcp_to_our_server_reports_the_bytes_we_received() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let mut srv = OurServer::start();
    let (doc, line) = srv.iperf3_client("127.0.0.1", &[]);
    assert!(
        line.contains("tcp") && line.contains("forward x1"),
        "{line}"
    );
    let received = u(&doc["end"]["sum_received"]["bytes"]);
    assert!(received > 0, "{doc}");
    assert_eq!(count_after(&line, "received"), received, "{line}");
    assert!(u(&doc["end"]["sum_sent"]["bytes"]) >= received);
    srv.interrupt();
}

#[test]
fn iperf3_client_udp_to_our_server_reports_our_bytes_and_loss() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let mut srv = OurServer::start();
    let (doc, line) = srv.iperf3_client("127.0.0.1", &["-u", "-b", "20M", "-l", "1200"]);
    assert!(line.contains("udp 1200 B"), "{line}");
    let r = &doc["end"]["sum_received"];
    assert!(u(&r["bytes"]) > 0, "{doc}");
    assert_eq!(count_after(&line, "received"), u(&r["bytes"]), "{line}");
    assert_eq!(count_after(&line, "lost"), u(&r["lost_packets"]), "{line}");
    assert_eq!(count_after(&line, "of"), u(&r["packets"]), "{line}");
    srv.interrupt();
}

#[test]
fn iperf3_client_reverse_over_ipv6_from_our_server_reports_the_bytes_we_sent() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let mut srv = OurServer::start();
    let (doc, line) = srv.iperf3_client("::1", &["-6", "-R"]);
    assert!(line.contains("reverse") && line.contains("[::1]"), "{line}");
    let sent = u(&doc["end"]["sum_sent"]["bytes"]);
    assert!(sent > 0, "{doc}");
    assert_eq!(count_after(&line, "sent"), sent, "{line}");
    let got = u(&doc["end"]["sum_received"]["bytes"]);
    assert!(got > 0 && got <= sent, "{doc}");
    srv.interrupt();
}

#[test]
fn the_text_summary_names_what_an_iperf3_peer_cannot_measure() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let port = free_port();
    let server = Iperf3Once::start(port, &[]);
    let o = Command::new(BIN)
        .args([
            "run",
            "127.0.0.1",
            "--peer",
            "iperf3",
            "--port",
            &port.to_string(),
        ])
        .args(["-t", "udp-stream", "-b", "10M", "-d", "0.3"])
        .output()
        .expect("dualperf runs");
    assert!(o.status.success(), "{}", text(&o));
    let received = u(&server.json()["end"]["sum_received"]["bytes"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(&format!("to iperf3 server 127.0.0.1:{port}")),
        "{out}"
    );
    assert!(out.contains("goodput at receiver"), "{out}");
    assert!(out.contains(&format!("received {received} B")), "{out}");
    assert!(
        out.contains("not measurable against a pure iperf3 peer: RTT"),
        "{out}"
    );
}

#[test]
fn iperf3_client_bidir_with_two_streams_over_ipv6_agrees_with_our_log() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let mut srv = OurServer::start();
    let (doc, line) = srv.iperf3_client("::1", &["-6", "--bidir", "-P", "2"]);
    assert!(line.contains("bidir x2"), "{line}");
    let end = &doc["end"];
    // Client → server is `sum_received`; server → client is `sum_sent_bidir_reverse`.
    assert_eq!(
        count_after(&line, "received"),
        u(&end["sum_received"]["bytes"]),
        "{line}"
    );
    assert_eq!(
        count_after(&line, "sent"),
        u(&end["sum_sent_bidir_reverse"]["bytes"]),
        "{line}"
    );
    assert!(u(&end["sum_received_bidir_reverse"]["bytes"]) > 0, "{doc}");
    srv.interrupt();
}
