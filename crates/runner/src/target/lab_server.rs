//! The server process of a network-namespace lab, shared by `dualperf run --lab` and
//! `dualperf study --lab` (through [`super::lab::LabTarget`]): builds the `dualperf
//! server` command line for a lab, starts
//! a command inside the lab's server namespace in its own process group, waits for its
//! "listening on" line, keeps the tail of its stderr for error messages, and kills and
//! reaps it on `stop` or drop.

use super::TargetError;
use lab::Lab;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use wire::spec::Family;

/// Environment variable set on the lab's server process: the lab name (lets tests and
/// users find a server that belongs to a lab).
pub const LAB_ENV: &str = "DUALPERF_LAB";
/// How long the server may take to print its "listening" line.
const SERVER_READY_TIMEOUT: Duration = Duration::from_secs(10);
/// Last bytes of the server's stderr kept for error messages.
const STDERR_KEEP_BYTES: usize = 4096;

/// `EXE server` on the lab server's IPv4 and IPv6 addresses at `port`, without the
/// `--max-*` limits (a private lab: the user's own tests set the load).
pub fn dualperf_server_command(exe: &Path, lab: &Lab, port: u16) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("server")
        .arg("--port")
        .arg(port.to_string())
        .arg("--bind")
        .arg(lab.server_addr(Family::V4).to_string())
        .arg("--bind")
        .arg(lab.server_addr(Family::V6).to_string())
        .args([
            "--max-rate",
            "0",
            "--max-duration",
            "86400",
            "--max-streams",
            "128",
        ]);
    cmd
}

/// A server child in a lab's server namespace; killed and reaped on drop.
pub struct ServerProcess {
    child: Option<Child>,
    stderr_tail: Arc<Mutex<Vec<u8>>>,
}

impl ServerProcess {
    /// Spawns `cmd` in the server namespace of `lab` (with [`LAB_ENV`] set, piped
    /// output, its own process group so a terminal Ctrl-C reaches dualperf only) and
    /// waits until it prints "listening on". `what` names the server in errors
    /// ("dualperf", "iperf3"); `spawn_context` is added to a failed spawn.
    pub fn start(
        lab: &Lab,
        mut cmd: Command,
        what: &str,
        spawn_context: &str,
    ) -> Result<ServerProcess, TargetError> {
        let exe = cmd.get_program().to_owned();
        cmd.env(LAB_ENV, lab.name())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        lab::own_process_group(&mut cmd);
        let ns = lab.server_ns().to_string();
        let mut child =
            lab::spawn_in_ns(&ns, &mut cmd).map_err(|source| TargetError::LabServerSpawn {
                what: spawn_context.to_string(),
                source,
            })?;
        let (ready_tx, ready_rx) = mpsc::channel::<bool>();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                let mut ready_tx = Some(ready_tx);
                // Keep reading (and dropping) the log so the server never blocks on it.
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if line.contains("listening on") {
                        if let Some(tx) = ready_tx.take() {
                            let _ = tx.send(true);
                        }
                    }
                }
                if let Some(tx) = ready_tx.take() {
                    let _ = tx.send(false);
                }
            });
        }
        let stderr_tail = Arc::new(Mutex::new(Vec::new()));
        if let Some(mut err) = child.stderr.take() {
            let tail = stderr_tail.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    t.extend_from_slice(&buf[..n]);
                    let excess = t.len().saturating_sub(STDERR_KEEP_BYTES);
                    t.drain(..excess);
                }
            });
        }
        let mut server = ServerProcess {
            child: Some(child),
            stderr_tail,
        };
        match ready_rx.recv_timeout(SERVER_READY_TIMEOUT) {
            Ok(true) => Ok(server),
            Ok(false) | Err(_) => {
                let status = server.stop();
                // Give the stderr reader a moment to collect the last words.
                std::thread::sleep(Duration::from_millis(50));
                let tail = server.stderr_tail();
                Err(TargetError::LabServerDidNotStart(format!(
                    "the {what} server in lab namespace {ns} ({}) did not start{}{}",
                    Path::new(&exe).display(),
                    status.map(|s| format!(" ({s})")).unwrap_or_default(),
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!(": {tail}")
                    }
                )))
            }
        }
    }

    /// The last bytes the server wrote to stderr, trimmed.
    pub fn stderr_tail(&self) -> String {
        let t = self.stderr_tail.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&t).trim().to_string()
    }

    /// Kills and reaps the server; returns how it ended (None when already stopped).
    pub fn stop(&mut self) -> Option<String> {
        let mut child = self.child.take()?;
        let status = match child.try_wait() {
            Ok(Some(s)) => s,
            _ => {
                let _ = child.kill();
                child.wait().ok()?
            }
        };
        Some(status.to_string())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}
