//! `dualperf server --max-*` limits (issue 7): the real binary on 127.0.0.1 refuses a
//! test over each limit and tells the client why, naming the flag; a test inside the
//! limits still runs.

use crate::support::shared;
use crate::support::BIN;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::server as server_proc;

struct Server {
    _proc: server_proc::ServerProc,
    port: u16,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        let mut args = vec!["--bind", "127.0.0.1"];
        args.extend_from_slice(extra);
        let p = server_proc::ServerProc::start(BIN, &args);
        let port = p.port();
        Server { _proc: p, port }
    }

    fn run(&self, args: &[&str]) -> Output {
        let port = self.port.to_string();
        let child = Command::new(BIN)
            .args(["run", "127.0.0.1", "--port", &port])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn dualperf run");
        child.wait_with_output().expect("wait for dualperf run")
    }
}

fn assert_refused(out: &Output, words: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "expected a refusal, got success");
    assert!(stderr.contains(words), "expected '{words}' in: {stderr}");
}

#[test]
fn each_limit_refuses_with_words_naming_its_flag() {
    let _turn = shared();
    let server = Server::start(&[
        "--max-streams",
        "2",
        "--max-duration",
        "1",
        "--max-payload",
        "1000",
        "--max-rate",
        "1M",
    ]);
    let streams = server.run(&["--duration", "0.2", "-P", "3", "--size", "500"]);
    assert_refused(
        &streams,
        "the server allows at most 2 streams per test (--max-streams)",
    );
    let duration = server.run(&["--duration", "2", "--size", "500"]);
    assert_refused(
        &duration,
        "the server allows tests of at most 1 s (--max-duration)",
    );
    let payload = server.run(&["--duration", "0.2", "--size", "1001"]);
    assert_refused(
        &payload,
        "the server allows payloads of at most 1000 bytes (--max-payload)",
    );
    let rate = server.run(&[
        "--test",
        "udp-stream",
        "-R",
        "-b",
        "10M",
        "--duration",
        "0.2",
        "--size",
        "500",
    ]);
    assert_refused(
        &rate,
        "the server sends UDP at most at 1 Mbit/s in total (--max-rate)",
    );
    // Inside every limit: runs (the refusals did not leave a slot taken).
    let ok = server.run(&["--duration", "0.2", "-P", "2", "--size", "1000"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let paced = server.run(&[
        "--test",
        "udp-stream",
        "-R",
        "-b",
        "500k",
        "--duration",
        "0.2",
        "--size",
        "500",
    ]);
    assert!(
        paced.status.success(),
        "{}",
        String::from_utf8_lossy(&paced.stderr)
    );
}

#[test]
fn server_help_documents_the_limits_and_their_defaults() {
    let _turn = shared();
    let out = Command::new(BIN)
        .args(["server", "--help"])
        .output()
        .expect("dualperf server --help");
    let text = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--max-tests",
        "--max-streams",
        "--max-duration",
        "--max-rate",
        "--max-payload",
        "--max-connections",
    ] {
        assert!(text.contains(flag), "{flag} missing from: {text}");
    }
    assert!(text.contains("[default: 16]"), "{text}");
    assert!(text.contains("[default: 10G]"), "{text}");
}

fn spawn_run(port: u16, duration_s: &str) -> Child {
    Command::new(BIN)
        .args(["run", "127.0.0.1", "--port", &port.to_string()])
        .args(["--duration", duration_s, "--size", "1000"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn dualperf run")
}

#[test]
fn max_tests_sets_how_many_tests_run_at_once() {
    let _turn = shared();
    let two = Server::start(&["--max-tests", "2"]);
    let (a, b) = (spawn_run(two.port, "0.8"), spawn_run(two.port, "0.8"));
    for o in [a, b].map(|c| c.wait_with_output().expect("wait")) {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let one = Server::start(&["--max-tests", "1"]);
    // The first test runs 3 s, printing a line each 0.2 s: once one is out, it holds
    // the only slot, however slow this machine is.
    let mut first = Command::new(BIN)
        .args(["run", "127.0.0.1", "--port", &one.port.to_string()])
        .args(["--duration", "3", "-i", "0.2", "--size", "1000"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn dualperf run");
    let mut lines = BufReader::new(first.stdout.take().expect("stdout")).lines();
    let running = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.contains("bit/s"));
    assert!(running, "the first client printed no interval");
    let second = one.run(&["--duration", "0.2", "--size", "1000"]);
    assert_refused(&second, "server busy");
    let _rest: Vec<String> = lines.map_while(Result::ok).collect();
    let first = first.wait_with_output().expect("wait");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
}

#[test]
fn max_connections_tells_the_next_peer_it_is_busy() {
    let _turn = shared();
    let server = Server::start(&["--max-connections", "1"]);
    let addr = SocketAddr::from(([127, 0, 0, 1], server.port));
    // A silent peer takes the only connection slot (until the 5 s handshake timeout);
    // retried until the server has seen it (a peer over the cap is answered at once).
    let deadline = Instant::now() + Duration::from_secs(3);
    let silent = loop {
        let mut s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut b = [0u8; 64];
        match std::io::Read::read(&mut s, &mut b) {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                break s
            }
            _ => assert!(
                Instant::now() < deadline,
                "the silent peer never got the slot"
            ),
        }
    };
    let out = server.run(&["--duration", "0.2", "--size", "1000"]);
    // Issue 11.8: said "running another test" before, though none was running.
    assert_refused(&out, "has too many control connections open");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("another test"));
    drop(silent);
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let o = server.run(&["--duration", "0.2", "--size", "1000"]);
        if o.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "slot not freed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        thread::sleep(Duration::from_millis(200));
    }
}
