//! A `dualperf server` child for end-to-end tests, started on port 0 so the kernel picks
//! a port nobody else holds: the bound addresses are read from the server's own
//! "listening on" line. (A port picked by binding and releasing a socket can be taken by
//! a parallel test before the server binds it, and a probe connection to check readiness
//! is a client the server must serve: both made tests flaky.)

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running `dualperf server`; killed on drop.
pub struct ServerProc {
    child: Child,
    /// Every address it listens on, in the order of its `--bind` flags.
    pub addrs: Vec<SocketAddr>,
    /// Its stdout lines so far (the log of tests served).
    pub log: Arc<Mutex<Vec<String>>>,
}

impl ServerProc {
    /// `BIN server --port 0 ARGS…` (give `--bind` in `args`); returns once it listens.
    pub fn start(bin: &str, args: &[&str]) -> ServerProc {
        Self::start_on(bin, 0, args)
    }

    /// The same on a given port (to restart a server where its clients expect it).
    pub fn start_on(bin: &str, port: u16, args: &[&str]) -> ServerProc {
        Self::start_command(Command::new(bin), port, args)
    }

    /// `CMD server --port PORT ARGS…` for a command that runs dualperf some other way
    /// (e.g. `wine64 dualperf.exe`).
    pub fn start_command(mut cmd: Command, port: u16, args: &[&str]) -> ServerProc {
        let mut child = cmd
            .args(["server", "--port", &port.to_string()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn dualperf server");
        let out = child.stdout.take().expect("piped stdout");
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = log.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if l.starts_with("dualperf server: listening on ") {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(l.clone());
                    }
                }
                lines.lock().unwrap().push(l);
            }
        });
        let line = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(l) => l,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait().ok();
                panic!("dualperf server did not say where it listens (exit: {status:?})");
            }
        };
        let addrs = parse_listening(&line);
        assert!(!addrs.is_empty(), "no address in {line:?}");
        ServerProc { child, addrs, log }
    }

    /// The port of its first address.
    pub fn port(&self) -> u16 {
        self.addrs[0].port()
    }

    /// The port it listens on for `ip` (an IP literal it was bound to).
    pub fn port_for(&self, ip: &str) -> u16 {
        let ip: std::net::IpAddr = ip.parse().expect("an IP literal");
        self.addrs
            .iter()
            .find(|a| a.ip() == ip)
            .unwrap_or_else(|| panic!("not bound to {ip}: {:?}", self.addrs))
            .port()
    }

    /// Waits (at most `limit`) until its stdout holds `n` lines containing `needle`;
    /// returns the log so far either way, for the caller's assertion.
    pub fn wait_log(&self, needle: &str, n: usize, limit: Duration) -> String {
        let deadline = std::time::Instant::now() + limit;
        loop {
            let log = self.log.lock().unwrap().join("\n");
            if log.lines().filter(|l| l.contains(needle)).count() >= n
                || std::time::Instant::now() >= deadline
            {
                return log;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the process is still running (`Some(status)` once it has exited).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().expect("try_wait")
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    /// Kill it and return everything it printed on stdout.
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The reader thread ends at EOF; give it a moment to push the last lines.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while Arc::strong_count(&self.log) > 1 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.log.lock().unwrap().join("\n")
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The addresses of "dualperf server: listening on A, B; Ctrl-C to stop" (an optional
/// " (pre-shared key required)" before the ';').
fn parse_listening(line: &str) -> Vec<SocketAddr> {
    let rest = line.trim_start_matches("dualperf server: listening on ");
    let list = rest.split(';').next().unwrap_or("");
    let list = list.split(" (").next().unwrap_or("");
    list.split(", ")
        .filter_map(|a| a.trim().parse().ok())
        .collect()
}
