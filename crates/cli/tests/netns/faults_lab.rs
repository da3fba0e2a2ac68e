//! Fault: the client's link is taken down 1 s into a 3 s run in a p2p lab. The run
//! must end with a non-zero exit and an error message within a bounded time, not
//! hang; for tcp-stream and udp-stream. Needs root (skips with a reason outside CI).

use crate::support::root_or_skip;
use crate::support::shared;
use crate::support::{lossy, BIN};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SERVER_V4: &str = "10.231.0.2";
const SERVER_V6: &str = "fd00:231::2";
/// Longest acceptable time from start to exit of a run whose link went down.
const LIMIT: Duration = Duration::from_secs(25);

/// A lab with a `dualperf server` in it; removed (server included) on drop.
struct Lab {
    name: String,
    server: Option<Child>,
}

impl Lab {
    fn up(name: &str) -> Lab {
        let out = Command::new(BIN)
            .args(["lab", "up", "--topology", "p2p", "--name", name])
            .output()
            .expect("dualperf lab up runs");
        let lab = Lab {
            name: name.to_string(),
            server: None,
        };
        assert!(out.status.success(), "lab up: {}", lossy(&out.stderr));
        lab
    }

    fn ns(&self, role: &str) -> String {
        format!("dpl-{}-{role}", self.name)
    }

    fn start_server(&mut self) {
        let child = Command::new(BIN)
            .args(["lab", "exec", &self.name, "server", "--", BIN, "server"])
            .args(["--bind", SERVER_V4, "--bind", SERVER_V6])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        self.server = Some(child);
        // Wait until it listens (ss inside the server namespace).
        let t0 = Instant::now();
        loop {
            let ss = Command::new("ip")
                .args(["netns", "exec", &self.ns("server"), "ss", "-Hltn"])
                .output()
                .expect("ss runs");
            if lossy(&ss.stdout).contains(&format!("{SERVER_V4}:5301")) {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "server did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The client's veth device (the one link that is not `lo`).
    fn client_dev(&self) -> String {
        let out = Command::new("ip")
            .args(["-n", &self.ns("client"), "-o", "link"])
            .output()
            .expect("ip link runs");
        lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split(": ").nth(1))
            .map(|d| d.split('@').next().unwrap_or(d).to_string())
            .find(|d| d != "lo")
            .expect("the client namespace has a veth link")
    }

    fn set_link(&self, dev: &str, state: &str) {
        let st = Command::new("ip")
            .args(["-n", &self.ns("client"), "link", "set", "dev", dev, state])
            .status()
            .expect("ip link set runs");
        assert!(st.success(), "ip link set {dev} {state}");
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = Command::new(BIN)
            .args(["lab", "down", &self.name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Some(mut s) = self.server.take() {
            let _ = s.kill();
            let _ = s.wait();
        }
    }
}

/// Run `test` for 3 s from the client namespace, take the link down after 1 s, and
/// check the run ends with an error in bounded time. Returns how long it took.
fn link_down_mid_run(tag: &str, test: &str) -> Duration {
    let name = format!("f{}{tag}", std::process::id() % 100_000);
    let mut lab = Lab::up(&name);
    lab.start_server();
    let dev = lab.client_dev();
    let t0 = Instant::now();
    let mut client = Command::new(BIN)
        .args(["lab", "exec", &name, "client", "--", BIN, "run", SERVER_V4])
        .args(["-t", test, "-d", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("client starts");
    std::thread::sleep(Duration::from_secs(1));
    lab.set_link(&dev, "down");
    let status = loop {
        if let Some(st) = client.try_wait().expect("try_wait") {
            break st;
        }
        if t0.elapsed() > LIMIT {
            let _ = client.kill();
            let _ = client.wait();
            panic!("{test}: the run hung for {LIMIT:?} after its link went down");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = t0.elapsed();
    let out = client.wait_with_output().expect("client output");
    let err = lossy(&out.stderr);
    assert!(
        !status.success(),
        "{test}: a run whose link went down succeeded: {}",
        lossy(&out.stdout)
    );
    assert!(
        err.contains("error") && err.trim().len() > 20,
        "{test}: no error message: {err:?}"
    );
    eprintln!("{test}: link down after 1 s -> exit {status} after {took:?}: {err}");
    took
}

#[test]
fn tcp_stream_run_ends_with_an_error_when_its_link_goes_down() {
    let _turn = shared();
    if !root_or_skip("lab fault tests") {
        return;
    }
    link_down_mid_run("t", "tcp-stream");
}

#[test]
fn udp_stream_run_ends_with_an_error_when_its_link_goes_down() {
    let _turn = shared();
    if !root_or_skip("lab fault tests") {
        return;
    }
    link_down_mid_run("u", "udp-stream");
}
