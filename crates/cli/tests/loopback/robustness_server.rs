//! Robustness of the real `dualperf server` binary on 127.0.0.1 (issue 7): hostile load
//! (200 connections sending garbage, stalling mid-message or saying nothing) while real
//! `dualperf run` clients test against the same server; silent and half-sent peers are
//! dropped within a bounded time; a client killed mid-test frees its session.
//!
//! Each test starts its own server on a free high port and prints its figures
//! (`cargo test -p dualperf --test robustness_server -- --nocapture`); they are recorded
//! in docs/robustness.md.

use crate::support::BIN;
use crate::support::{exchange, shared, wait_with_limit};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Generous bound on the server's peak resident memory under the hostile load.
const MAX_PEAK_RSS_KIB: u64 = 200 * 1024;
/// The server's wait for the first message (`wire::session::HELLO_TIMEOUT`, 2 s) plus
/// slack for a loaded 2-core machine: the longest a silent or half-sent peer may be held.
const MAX_SILENT_HOLD: Duration = Duration::from_secs(4);

use crate::support::server as server_proc;

/// A `dualperf server` child process, killed on drop.
struct Server {
    proc_: server_proc::ServerProc,
    port: u16,
    stdout: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start() -> Server {
        let proc_ = server_proc::ServerProc::start(BIN, &["--bind", "127.0.0.1"]);
        let (port, stdout) = (proc_.port(), proc_.log.clone());
        Server {
            proc_,
            port,
            stdout,
        }
    }

    fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    fn pid(&self) -> u32 {
        self.proc_.pid()
    }

    fn assert_alive(&mut self) {
        let status = self.proc_.exited();
        assert!(
            status.is_none(),
            "server exited ({status:?}); stdout: {:?}",
            self.stdout.lock().unwrap()
        );
    }

    /// Peak and current resident set size in KiB (/proc/PID/status VmHWM, VmRSS).
    fn rss_kib(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("read /proc/PID/status");
        let field = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("no {name} in /proc status"))
        };
        (field("VmHWM:"), field("VmRSS:"))
    }

    fn threads(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/task", self.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }
}

/// `dualperf run` against the server; killed if it outlives `limit`.
fn run_client(port: u16, duration_s: f64, limit: Duration) -> Output {
    let child = client_cmd(port, duration_s)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn dualperf run");
    wait_with_limit(child, limit)
}

fn client_cmd(port: u16, duration_s: f64) -> Command {
    let mut c = Command::new(BIN);
    c.args([
        "run",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--test",
        "tcp-stream",
        "--duration",
        &duration_s.to_string(),
    ])
    .stdin(Stdio::null());
    c
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Completed,
    Busy,
    Other,
}

fn classify(out: &Output) -> Outcome {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Outcome::Completed
    } else if text.to_lowercase().contains("busy") {
        Outcome::Busy
    } else {
        Outcome::Other
    }
}

/// The ways a hostile peer misbehaves on the control port.
#[derive(Debug, Clone, Copy)]
enum Hostile {
    /// Connects and says nothing.
    Silent,
    /// Sends an HTTP request.
    Garbage,
    /// Sends 3 of the 8 frame-header bytes, then nothing.
    StallInHeader,
    /// Sends a header announcing 1000 body bytes and 11 of them, then nothing.
    StallInBody,
    /// Announces a 4 MiB body (the limit) and sends 1 MiB of it, then nothing.
    StallInBigBody,
}

impl Hostile {
    const ALL: [Hostile; 5] = [
        Hostile::Silent,
        Hostile::Garbage,
        Hostile::StallInHeader,
        Hostile::StallInBody,
        Hostile::StallInBigBody,
    ];

    fn bytes(self) -> Vec<u8> {
        let header = |len: u32| {
            let mut h = b"dP\x00\x01".to_vec();
            h.extend(len.to_be_bytes());
            h
        };
        match self {
            Hostile::Silent => Vec::new(),
            Hostile::Garbage => b"GET / HTTP/1.1\r\nHost: dualperf\r\n\r\n".to_vec(),
            Hostile::StallInHeader => b"dP\x00".to_vec(),
            Hostile::StallInBody => {
                let mut b = header(1000);
                b.extend(b"{\"type\":\"he");
                b
            }
            Hostile::StallInBigBody => {
                let mut b = header(4 << 20);
                b.resize(8 + (1 << 20), b' ');
                b
            }
        }
    }
}

/// What happened to one hostile connection.
#[derive(Debug, Clone, Copy)]
struct Held {
    kind: Hostile,
    connected: bool,
    /// From connect to the server closing it; `None` if still open at the end.
    held: Option<Duration>,
}

/// Open one hostile connection, misbehave, and time how long the server keeps it.
fn hostile_peer(addr: SocketAddr, kind: Hostile, give_up: Duration) -> Held {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(3)) else {
        return Held {
            kind,
            connected: false,
            held: None,
        };
    };
    let t0 = Instant::now();
    let _ = s.set_write_timeout(Some(Duration::from_secs(3)));
    let _ = s.write_all(&kind.bytes());
    let mut buf = [0u8; 4096];
    loop {
        let left = give_up.saturating_sub(t0.elapsed());
        if left.is_zero() {
            let _ = s.shutdown(Shutdown::Both);
            return Held {
                kind,
                connected: true,
                held: None,
            };
        }
        let _ = s.set_read_timeout(Some(left.max(Duration::from_millis(1))));
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => continue, // an error reply; the close follows
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break, // reset
        }
    }
    Held {
        kind,
        connected: true,
        held: Some(t0.elapsed()),
    }
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// Figures of one hostile-load run.
struct LoadFigures {
    completed: usize,
    busy: usize,
    other: usize,
    other_errors: Vec<String>,
    still_open: usize,
    longest_held: Duration,
    hwm_kib: u64,
    after: Outcome,
}

/// 200 hostile connections (each kind of [`Hostile`] in turn) and, alongside them, 20
/// real clients in waves of 2 spread over 7 s (so some run while the hostile peers hold
/// the server and some after the server has dropped them). Prints the figures.
fn hostile_load(label: &str) -> LoadFigures {
    const HOSTILE: usize = 200;
    const CLIENTS: usize = 20;
    const CLIENTS_AT_ONCE: usize = 2;
    const WAVE_GAP: Duration = Duration::from_millis(700);
    let t0 = Instant::now();
    let mut server = Server::start();
    let addr = server.addr();
    let (hwm_idle_kib, _) = server.rss_kib();

    let hostile: Vec<_> = (0..HOSTILE)
        .map(|i| {
            let kind = Hostile::ALL[i % Hostile::ALL.len()];
            thread::spawn(move || hostile_peer(addr, kind, Duration::from_secs(12)))
        })
        .collect();
    thread::sleep(Duration::from_millis(200));

    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let peak_threads = Arc::new(Mutex::new(server.threads()));
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let (pid, sampling, peak) = (server.pid(), sampling.clone(), peak_threads.clone());
        thread::spawn(move || {
            while sampling.load(Ordering::Relaxed) {
                let n = std::fs::read_dir(format!("/proc/{pid}/task"))
                    .map(|d| d.count())
                    .unwrap_or(0);
                let mut p = peak.lock().unwrap();
                *p = (*p).max(n);
                drop(p);
                thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let load_start = Instant::now();
    for wave in 0..CLIENTS / CLIENTS_AT_ONCE {
        let due = load_start + WAVE_GAP * wave as u32;
        thread::sleep(due.saturating_duration_since(Instant::now()));
        let handles: Vec<_> = (0..CLIENTS_AT_ONCE)
            .map(|_| {
                let (port, outcomes) = (server.port, outcomes.clone());
                thread::spawn(move || {
                    let at = load_start.elapsed();
                    let out = run_client(port, 0.3, Duration::from_secs(15));
                    outcomes.lock().unwrap().push((classify(&out), at, out));
                })
            })
            .collect();
        for h in handles {
            h.join().expect("client thread");
        }
    }
    let held: Vec<Held> = hostile
        .into_iter()
        .map(|h| h.join().expect("hostile thread"))
        .collect();
    sampling.store(false, Ordering::Relaxed);
    sampler.join().expect("sampler");

    server.assert_alive();
    let after = classify(&run_client(server.port, 0.2, Duration::from_secs(15)));
    let (hwm_kib, rss_kib) = server.rss_kib();
    server.assert_alive();

    let outcomes = outcomes.lock().unwrap();
    let count = |o: Outcome| outcomes.iter().filter(|(x, _, _)| *x == o).count();
    let connected = held.iter().filter(|h| h.connected).count();
    let still_open = held
        .iter()
        .filter(|h| h.connected && h.held.is_none())
        .count();
    let longest_held = held.iter().filter_map(|h| h.held).max().unwrap_or_default();
    let fig = LoadFigures {
        completed: count(Outcome::Completed),
        busy: count(Outcome::Busy),
        other: count(Outcome::Other),
        other_errors: outcomes
            .iter()
            .filter(|(o, _, _)| *o == Outcome::Other)
            .map(|(_, at, out)| {
                format!(
                    "client started at {}: {}",
                    secs(*at),
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            })
            .collect(),
        still_open,
        longest_held,
        hwm_kib,
        after,
    };
    eprintln!("robustness figures ({label}):");
    eprintln!(
        "  hostile connections: {HOSTILE} opened, {connected} connected, {still_open} still open after 12 s, longest held {}",
        secs(longest_held)
    );
    for kind in Hostile::ALL {
        let ds: Vec<Duration> = held
            .iter()
            .filter(|h| std::mem::discriminant(&h.kind) == std::mem::discriminant(&kind))
            .filter_map(|h| h.held)
            .collect();
        let max = ds.iter().max().copied().unwrap_or_default();
        let over_1s = ds.iter().filter(|d| **d > Duration::from_secs(1)).count();
        eprintln!(
            "    {kind:?}: {} closed by the server, {over_1s} held > 1 s, longest {}",
            ds.len(),
            secs(max)
        );
    }
    let mut timeline: Vec<_> = outcomes.iter().map(|(o, at, _)| (*at, *o)).collect();
    timeline.sort_by_key(|(at, _)| *at);
    eprintln!(
        "  real clients: {CLIENTS} ({CLIENTS_AT_ONCE} at a time, a wave every {}): {} completed, {} refused busy, {} other",
        secs(WAVE_GAP),
        fig.completed,
        fig.busy,
        fig.other
    );
    let line: Vec<String> = timeline
        .iter()
        .map(|(at, o)| format!("{:.1}s:{o:?}", at.as_secs_f64()))
        .collect();
    eprintln!("    by start time: {}", line.join(" "));
    for e in fig.other_errors.iter().take(4) {
        eprintln!("    {e}");
    }
    eprintln!("  server after the load: alive; the next client: {after:?}");
    eprintln!(
        "  server memory: VmHWM {hwm_kib} KiB (idle {hwm_idle_kib} KiB), VmRSS after {rss_kib} KiB; peak threads {}",
        *peak_threads.lock().unwrap()
    );
    eprintln!("  test time {}", secs(t0.elapsed()));
    fig
}

#[test]
fn hostile_load_leaves_the_server_alive_bounded_and_serving() {
    let _turn = shared();
    let fig = hostile_load("hostile load: server health");
    assert_eq!(fig.after, Outcome::Completed, "server no longer serves");
    assert!(
        fig.completed >= 1,
        "no real client completed during the load"
    );
    assert_eq!(fig.still_open, 0, "hostile connections held open for 12 s");
    assert!(
        fig.longest_held <= MAX_SILENT_HOLD,
        "a hostile peer was held {}",
        secs(fig.longest_held)
    );
    assert!(
        fig.hwm_kib < MAX_PEAK_RSS_KIB,
        "peak RSS {} KiB exceeds {MAX_PEAK_RSS_KIB} KiB",
        fig.hwm_kib
    );
}

/// Issue 7: "every real client completes or is refused with busy". While hostile peers
/// fill the server's 32 control-connection slots (up to the 2 s hello timeout),
/// `engine::server::accept_loop` answers further connections with an `error` (busy)
/// frame and lingers before closing, so real clients read "busy", not a reset.
#[test]
fn real_clients_under_hostile_load_complete_or_are_told_busy() {
    let _turn = shared();
    let fig = hostile_load("hostile load: real clients");
    assert_eq!(
        fig.other,
        0,
        "every real client must complete or be refused with 'busy'; got:\n{}",
        fig.other_errors.join("\n")
    );
}

#[test]
fn silent_and_half_sent_peers_are_dropped_while_a_client_is_served() {
    let _turn = shared();
    let mut server = Server::start();
    let addr = server.addr();
    let peers: Vec<_> = [
        Hostile::Silent,
        Hostile::StallInHeader,
        Hostile::StallInBody,
    ]
    .into_iter()
    .map(|kind| thread::spawn(move || hostile_peer(addr, kind, Duration::from_secs(15))))
    .collect();
    thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    let out = run_client(server.port, 0.3, Duration::from_secs(15));
    let client_s = t.elapsed();
    let held: Vec<Held> = peers.into_iter().map(|p| p.join().expect("peer")).collect();
    server.assert_alive();
    eprintln!("robustness figures (silent peers):");
    for h in &held {
        eprintln!(
            "  {:?}: dropped after {}",
            h.kind,
            h.held.map(secs).unwrap_or_else(|| "never (15 s)".into())
        );
    }
    eprintln!(
        "  client alongside them: {:?} in {}",
        classify(&out),
        secs(client_s)
    );
    assert_eq!(
        classify(&out),
        Outcome::Completed,
        "client not served while silent peers were connected: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for h in &held {
        assert!(h.connected, "{:?} could not connect", h.kind);
        let d = h.held.unwrap_or(Duration::MAX);
        assert!(d <= MAX_SILENT_HOLD, "{:?} held for {d:?}", h.kind);
    }
}

#[test]
fn client_killed_mid_test_frees_its_session() {
    let _turn = shared();
    let mut server = Server::start();
    let mut victim = client_cmd(server.port, 5.0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the client to kill");
    // Let it get into its data phase (the server logs nothing until the test ends).
    thread::sleep(Duration::from_millis(1200));
    assert!(
        victim.try_wait().expect("try_wait").is_none(),
        "the 5 s client ended early"
    );
    victim.kill().expect("SIGKILL the client");
    let _ = victim.wait();
    let killed_at = Instant::now();
    let mut attempts = Vec::new();
    let freed = loop {
        let out = run_client(server.port, 0.2, Duration::from_secs(15));
        let o = classify(&out);
        attempts.push(o);
        if o == Outcome::Completed {
            break Some(killed_at.elapsed());
        }
        if killed_at.elapsed() > Duration::from_secs(14) {
            break None;
        }
        thread::sleep(Duration::from_millis(200));
    };
    server.assert_alive();
    eprintln!(
        "robustness figures (client killed): next test completed {} after SIGKILL; attempts {attempts:?}",
        freed.map(secs).unwrap_or_else(|| "never".into())
    );
    let freed = freed.expect("the killed client's session was never freed");
    assert!(freed < Duration::from_secs(12), "freed after {freed:?}");
}

#[test]
fn peer_that_stops_reading_is_dropped_at_its_run_deadline() {
    let _turn = shared();
    use wire::proto::Msg;
    use wire::spec::{Bound, Direction, Family, TestKind, TestSpec};
    let mut server = Server::start();
    let (mut ctl, mut dec) = crate::support::hello_by_hand(server.addr());
    let mut spec = TestSpec::new(TestKind::TcpStream, Family::V4, 128 * 1024);
    spec.bound = Bound::DurationNs(300_000_000);
    spec.direction = Direction::Reverse;
    let (data_port, token) = match exchange(
        &mut ctl,
        &mut dec,
        Some(&Msg::Request {
            spec,
            client_proof: None,
        }),
    ) {
        Msg::Accept {
            data_port, token, ..
        } => (data_port, token),
        other => panic!("expected accept, got {other:?}"),
    };
    let mut data = TcpStream::connect(("127.0.0.1", data_port)).expect("connect data");
    data.write_all(&token.to_be_bytes()).expect("send token");
    let start = Msg::Start { udp_port: None };
    assert_eq!(exchange(&mut ctl, &mut dec, Some(&start)), Msg::Started);
    // From here on this peer reads nothing and sends nothing, holding both sockets.
    let stalled_at = Instant::now();
    let mut attempts = Vec::new();
    let freed = loop {
        let o = classify(&run_client(server.port, 0.2, Duration::from_secs(15)));
        attempts.push(o);
        if o == Outcome::Completed {
            break Some(stalled_at.elapsed());
        }
        if stalled_at.elapsed() > Duration::from_secs(16) {
            break None;
        }
        thread::sleep(Duration::from_millis(500));
    };
    server.assert_alive();
    let busy = attempts.iter().filter(|o| **o == Outcome::Busy).count();
    eprintln!(
        "robustness figures (peer stops reading): next test completed {} after the peer stalled (0.3 s test + 10 s run slack); {busy} clients told busy meanwhile, attempts {attempts:?}",
        freed.map(secs).unwrap_or_else(|| "never".into())
    );
    drop((ctl, data));
    let freed = freed.expect("a peer that stopped reading kept the server busy");
    assert!(freed < Duration::from_secs(14), "freed after {freed:?}");
    assert!(
        attempts.iter().all(|o| *o != Outcome::Other),
        "clients must be told 'busy' while the stalled test holds the slot: {attempts:?}"
    );
}
