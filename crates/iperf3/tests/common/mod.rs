//! Helpers for the interoperability tests: Debian's `iperf3` as a child process (killed
//! on drop, bounded by a timeout) and our server on an ephemeral port.
#![allow(dead_code)]

use dualperf_iperf3::server::{Server, ServerOptions, SessionReport};
use serde_json::Value;
use std::io::Read;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Panics with an explanation when Debian's iperf3 is missing (CI installs it).
pub fn require_iperf3() {
    let ok = Command::new("iperf3")
        .arg("--version")
        .output()
        .map(|o| o.status.success());
    assert!(
        matches!(ok, Ok(true)),
        "these tests need Debian's iperf3 3.x on PATH (apt-get install iperf3)"
    );
}

#[allow(unused_imports)]
pub use testkit::free_port;

/// A running iperf3 process, killed on drop.
pub struct Iperf3 {
    child: Option<Child>,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
}

pub struct Finished {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "iperf3 -J output is not JSON ({e}): {}\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

impl Iperf3 {
    pub fn spawn(args: &[&str]) -> Iperf3 {
        Iperf3::spawn_env(args, &[])
    }

    /// As [`Iperf3::spawn`], with extra environment variables (`IPERF3_PASSWORD`).
    pub fn spawn_env(args: &[&str], env: &[(&str, &str)]) -> Iperf3 {
        require_iperf3();
        let mut child = Command::new("iperf3")
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning iperf3");
        let mut out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Iperf3 {
            child: Some(child),
            stdout: Some(stdout),
            stderr: Some(stderr),
        }
    }

    /// An `iperf3 -s -1 -J` on `port`, ready to accept once this returns.
    pub fn server(port: u16, extra: &[&str]) -> Iperf3 {
        let port_s = port.to_string();
        let mut args = vec!["-s", "-1", "-J", "-p", &port_s];
        args.extend_from_slice(extra);
        let me = Iperf3::spawn(&args);
        wait_listening(port);
        me
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    pub fn kill(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Waits for exit (killing it after `timeout`) and collects its output.
    pub fn finish(mut self, timeout: Duration) -> Finished {
        let mut child = self.child.take().unwrap();
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break Some(st);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let stdout = self.stdout.take().unwrap().join().unwrap();
        let stderr = self.stderr.take().unwrap().join().unwrap();
        assert!(
            status.is_some(),
            "iperf3 did not finish within {timeout:?}:\n{stdout}\n{stderr}"
        );
        // iperf3 -J exits 0 even when the test failed; the JSON then has an "error" key.
        let json_error = serde_json::from_str::<Value>(&stdout)
            .ok()
            .is_some_and(|j| j.get("error").is_some());
        Finished {
            success: status.is_some_and(|s| s.success()) && !json_error,
            stdout,
            stderr,
        }
    }
}

impl Drop for Iperf3 {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits until something listens on TCP `port` (from /proc/net/tcp{,6}).
pub fn wait_listening(port: u16) {
    let needle = format!(":{port:04X} ");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            // local_address is field 2, state field 4 (0A = LISTEN)
            if text.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && format!("{} ", f[1]).ends_with(&needle) && f[3] == "0A"
            }) {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("nothing listens on port {port}");
}

/// Our server serving in a thread; shut down and joined on drop.
pub struct OurServer {
    pub addr: SocketAddr,
    pub reports: Arc<Mutex<Vec<SessionReport>>>,
    shutdown: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl OurServer {
    pub fn start(bind: &str, opts: ServerOptions) -> OurServer {
        let server = Server::bind(&[bind.parse().unwrap()])
            .unwrap()
            .with_options(opts);
        let addr = server.local_addrs()[0];
        let reports = server.reports();
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = shutdown.clone();
        let thread = std::thread::spawn(move || server.serve(&flag).unwrap());
        OurServer {
            addr,
            reports,
            shutdown,
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> String {
        self.addr.port().to_string()
    }

    /// The reports of finished sessions, waiting up to 5 s for `n` of them.
    pub fn wait_reports(&self, n: usize) -> Vec<SessionReport> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let got = self.reports.lock().unwrap().clone();
            if got.len() >= n || Instant::now() > deadline {
                return got;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for OurServer {
    fn drop(&mut self) {
        self.shutdown.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub fn u64_at(v: &Value, path: &[&str]) -> u64 {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_u64()
        .unwrap_or_else(|| panic!("no integer at {path:?} in {v}"))
}

pub fn f64_at(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("no number at {path:?} in {v}"))
}

/// An RSA key pair and an authorized-users file made for one test, as iperf3's
/// documentation makes them (`openssl genrsa`, `openssl rsa -pubout`, the users file
/// line `USER,sha256("{USER}PASSWORD")` from `sha256sum`); removed on drop.
pub struct AuthFiles {
    pub dir: std::path::PathBuf,
    pub private_key: std::path::PathBuf,
    pub public_key: std::path::PathBuf,
    pub users: std::path::PathBuf,
}

impl AuthFiles {
    /// Keys for `user` with `password` in the users file.
    pub fn new(tag: &str, user: &str, password: &str) -> AuthFiles {
        let dir = std::env::temp_dir().join(format!("dp-iperf3-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let private_key = dir.join("private.pem");
        let public_key = dir.join("public.pem");
        let users = dir.join("users.csv");
        let run = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .output()
                .expect("these tests need openssl on PATH (apt-get install openssl)");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(&["genrsa", "-out", private_key.to_str().unwrap(), "2048"]);
        run(&[
            "rsa",
            "-in",
            private_key.to_str().unwrap(),
            "-pubout",
            "-out",
            public_key.to_str().unwrap(),
        ]);
        let mut sha = Command::new("sha256sum")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sha256sum");
        use std::io::Write;
        sha.stdin
            .take()
            .unwrap()
            .write_all(format!("{{{user}}}{password}").as_bytes())
            .unwrap();
        let out = sha.wait_with_output().unwrap();
        let hash = String::from_utf8(out.stdout).unwrap();
        let hash = hash.split_whitespace().next().unwrap().to_string();
        std::fs::write(&users, format!("# made by the test\n{user},{hash}\n")).unwrap();
        AuthFiles {
            dir,
            private_key,
            public_key,
            users,
        }
    }

    pub fn arg(p: &std::path::Path) -> &str {
        p.to_str().unwrap()
    }
}

impl Drop for AuthFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
