//! The server's limits, its handshake deadline and iperf3 authentication, against
//! Debian's unmodified iperf3 on loopback (both sides of the authentication).

mod common;

use common::{free_port, AuthFiles, Iperf3, OurServer};
use dualperf_iperf3::auth::{ClientAuth, ServerAuth};
use dualperf_iperf3::policy::Policy;
use dualperf_iperf3::server::{ServerOptions, SessionReport};
use dualperf_iperf3::{run, ClientOptions, Iperf3Error};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::spec::{Bound, Family, TestKind, TestSpec};

const WAIT: Duration = Duration::from_secs(20);

/// `dualperf server --max-streams 4 --max-duration 5 --max-rate 100M --max-payload 2000`.
fn limited() -> ServerOptions {
    ServerOptions {
        policy: Policy {
            max_streams: 4,
            max_duration: Duration::from_secs(5),
            max_send_rate_bps: Some(100_000_000),
            max_payload_bytes: Some(2000),
        },
        ..ServerOptions::default()
    }
}

fn output(f: &common::Finished) -> String {
    format!("{}\n{}", f.stdout, f.stderr)
}

#[test]
fn each_limit_refuses_an_iperf3_client_before_any_stream_and_it_prints_why() {
    let server = OurServer::start("127.0.0.1:0", limited());
    let port = server.port();
    let cases: [(&[&str], &str, &str); 5] = [
        (
            &["-P", "128", "-t", "3600", "-b", "100G", "-l", "1000"],
            "number of parallel streams too large",
            "--max-streams",
        ),
        (
            &["-t", "3600", "-l", "1000"],
            "test duration too long",
            "--max-duration",
        ),
        (
            &["-u", "-R", "-b", "10G", "-t", "3", "-l", "1000"],
            "total required bandwidth is larger than server limit",
            "--max-rate",
        ),
        (
            &["-u", "-l", "60000", "-t", "1"],
            "block size invalid",
            "--max-payload",
        ),
        (&["-t", "1"], "block size too large", "--max-payload"), // TCP's default 128 KiB
    ];
    for (i, (args, printed, flag)) in cases.iter().enumerate() {
        let mut all = vec!["-c", "127.0.0.1", "-p", &port];
        all.extend_from_slice(args);
        let done = Iperf3::spawn(&all).finish(WAIT);
        assert!(!done.success, "{args:?} was served: {}", output(&done));
        assert!(
            output(&done).contains(printed),
            "{args:?}: {}",
            output(&done)
        );
        let reports = server.wait_reports(i + 1);
        let r = &reports[i];
        assert_eq!(r.refusal.as_ref().map(|x| x.flag), Some(*flag), "{r:?}");
        assert!(r.streams.is_empty(), "no stream was opened: {r:?}");
    }
    // Within the limits the same server serves.
    let ok = Iperf3::spawn(&[
        "-c",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-l",
        "1000",
        "-P",
        "4",
    ])
    .finish(WAIT);
    assert!(ok.success, "{}", output(&ok));
    let reports = server.wait_reports(cases.len() + 1);
    assert_eq!(reports[cases.len()].error, None);
}

/// A peer that connects and sends one byte every 0.5 s, reconnecting whenever it is
/// dropped, until `stop`; counts the connections the server closed on it.
fn trickler(
    port: u16,
    stop: Arc<AtomicBool>,
    dropped: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let Ok(mut conn) = TcpStream::connect(("127.0.0.1", port)) else {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            };
            conn.set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                if conn.write_all(b"a").is_err() {
                    dropped.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                // Waits 0.5 s, or sees the server's answer or close.
                let mut buf = [0u8; 16];
                match conn.read(&mut buf) {
                    Ok(_) => {
                        dropped.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                    Err(e)
                        if matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                        ) => {}
                    Err(_) => {
                        dropped.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                }
            }
        }
    })
}

#[test]
fn a_trickling_peer_does_not_keep_a_real_iperf3_client_out() {
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let port = server.addr.port();
    let stop = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicUsize::new(0));
    let attacker = trickler(port, stop.clone(), dropped.clone());
    std::thread::sleep(Duration::from_millis(300)); // it holds a connection first
    let mut attempts = Vec::new();
    let mut served = false;
    for _ in 0..5 {
        let done =
            Iperf3::spawn(&["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1"]).finish(WAIT);
        attempts.push(output(&done));
        if done.success {
            served = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    // The trickler is dropped at the handshake deadline, whatever else happens.
    let until = Instant::now() + Duration::from_secs(10);
    while dropped.load(Ordering::Relaxed) == 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    attacker.join().unwrap();
    assert!(served, "the real client was never served: {attempts:#?}");
    assert!(
        dropped.load(Ordering::Relaxed) > 0,
        "the trickling peer was never dropped"
    );
    // Its session's report says the handshake deadline dropped it.
    let timed_out = |rs: &[SessionReport]| {
        rs.iter().any(|r| {
            r.params.is_none() && r.error.as_deref().is_some_and(|e| e.contains("timed out"))
        })
    };
    let until = Instant::now() + Duration::from_secs(10);
    let mut reports = server.wait_reports(1);
    while !timed_out(&reports) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
        reports = server.reports.lock().unwrap().clone();
    }
    assert!(timed_out(&reports), "{reports:?}");
}

fn auth_server(files: &AuthFiles) -> OurServer {
    let auth = ServerAuth::from_files(&files.private_key, &files.users).unwrap();
    OurServer::start(
        "127.0.0.1:0",
        ServerOptions {
            auth: Some(Arc::new(auth)),
            ..ServerOptions::default()
        },
    )
}

#[test]
fn our_server_serves_only_authenticated_iperf3_clients() {
    let files = AuthFiles::new("srv", "mario", "s3cret-pw");
    let server = auth_server(&files);
    let port = server.port();
    let pubkey = AuthFiles::arg(&files.public_key);
    let base = ["-c", "127.0.0.1", "-p", &port, "-t", "1"];
    let with_user = |pw: &str| {
        let mut args = base.to_vec();
        args.extend_from_slice(&["--username", "mario", "--rsa-public-key-path", pubkey]);
        Iperf3::spawn_env(&args, &[("IPERF3_PASSWORD", pw)]).finish(WAIT)
    };
    let ok = with_user("s3cret-pw");
    assert!(ok.success, "{}", output(&ok));
    let reports = server.wait_reports(1);
    assert_eq!(reports[0].user.as_deref(), Some("mario"));
    assert_eq!(reports[0].error, None);
    assert!(
        reports[0]
            .params
            .as_ref()
            .is_some_and(|p| p.authtoken.is_none()),
        "the token is not kept in the report"
    );

    let wrong = with_user("guess");
    assert!(!wrong.success);
    assert!(
        output(&wrong).contains("test authorization failed"),
        "{}",
        output(&wrong)
    );
    let keyless = Iperf3::spawn(&base).finish(WAIT);
    assert!(!keyless.success, "{}", output(&keyless));
    assert!(
        output(&keyless).contains("test authorization failed"),
        "{}",
        output(&keyless)
    );
    let reports = server.wait_reports(3);
    for r in &reports[1..3] {
        assert_eq!(r.refusal.as_ref().map(|x| x.code), Some(142), "{r:?}");
        assert!(r.streams.is_empty());
        assert_eq!(r.user, None);
    }
    assert!(reports[2]
        .error
        .as_deref()
        .unwrap_or("")
        .contains("no authentication token"));
}

fn tcp_spec() -> TestSpec {
    let mut s = TestSpec::new(TestKind::TcpStream, Family::V4, 131_072);
    s.bound = Bound::DurationNs(500_000_000);
    s
}

#[test]
fn our_client_authenticates_to_an_iperf3_server() {
    let files = AuthFiles::new("cli", "luigi", "pa55word");
    let key_args = [
        "--rsa-private-key-path",
        AuthFiles::arg(&files.private_key),
        "--authorized-users-path",
        AuthFiles::arg(&files.users),
    ];
    let opts = |pw: &str| ClientOptions {
        auth: Some(ClientAuth::from_file("luigi", pw, &files.public_key).unwrap()),
        ..ClientOptions::default()
    };

    let port = free_port();
    let server = Iperf3::server(port, &key_args);
    let ours = run("127.0.0.1", port, &tcp_spec(), &opts("pa55word"));
    let done = server.finish(WAIT);
    let ours = ours.unwrap_or_else(|e| panic!("{e}\n{}", output(&done)));
    assert!(done.success, "{}", output(&done));
    assert!(ours.forward.is_some_and(|f| f.recv_bytes > 0));

    let port = free_port();
    let server = Iperf3::server(port, &key_args);
    let err = run("127.0.0.1", port, &tcp_spec(), &opts("wrong")).unwrap_err();
    drop(server);
    assert!(
        matches!(err, Iperf3Error::ServerError { code: 142, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("authorization failed"), "{err}");

    // Against our own server, both sides ours.
    let ours_srv = auth_server(&files);
    let r = run(
        "127.0.0.1",
        ours_srv.addr.port(),
        &tcp_spec(),
        &opts("pa55word"),
    );
    assert!(r.is_ok(), "{r:?}");
    ours_srv.wait_reports(1); // the slot is free again
    let err = run(
        "127.0.0.1",
        ours_srv.addr.port(),
        &tcp_spec(),
        &opts("nope"),
    )
    .unwrap_err();
    assert!(
        matches!(err, Iperf3Error::ServerError { code: 142, .. }),
        "{err}"
    );
}

#[test]
fn a_bytes_bound_test_is_ended_at_the_longest_test_the_server_allows() {
    let server = OurServer::start(
        "127.0.0.1:0",
        ServerOptions {
            policy: Policy {
                max_duration: Duration::from_secs(2),
                ..Policy::default()
            },
            ..ServerOptions::default()
        },
    );
    // 1 TB would take minutes even on loopback: admitted (no rate to judge it by) and cut.
    let started = Instant::now();
    let done = Iperf3::spawn(&["-c", "127.0.0.1", "-p", &server.port(), "-n", "1T"]).finish(WAIT);
    assert!(!done.success, "{}", output(&done));
    // Normally "the server has terminated"; a client caught writing a block when the
    // data sockets close reports that write instead. Either way it ended, well before 1 TB.
    assert!(
        ["the server has terminated", "stream socket"]
            .iter()
            .any(|m| output(&done).contains(m)),
        "{}",
        output(&done)
    );
    assert!(started.elapsed() < WAIT);
    let report = &server.wait_reports(1)[0];
    let error = report.error.as_deref().unwrap_or("");
    assert!(error.contains("--max-duration 2.0 s"), "{report:?}");
    assert!(
        report.streams.iter().all(|s| s.outcome.bytes > 0),
        "{report:?}"
    );
}

/// Another host (127.0.0.2) floods the server's UDP port with iperf3's connect datagram
/// while a real `iperf3 -u -R` client from 127.0.0.1 opens its stream. iperf3's servers
/// take the first datagram from anyone; ours takes only the control connection's host, so
/// the client is served and the other host receives nothing, neither a reply nor the
/// reverse test's data. The stray datagrams are in the session's notes (five sessions
/// at most, so that a flood that missed the moment the stream opens is tried again).
#[test]
fn a_udp_stream_opens_only_to_the_control_connections_host() {
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let port = server.addr.port();
    let other = std::net::UdpSocket::bind("127.0.0.2:0").unwrap();
    other.set_nonblocking(true).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flood = {
        let (sock, stop) = (other.try_clone().unwrap(), stop.clone());
        std::thread::spawn(move || {
            // Until the sessions are over, so that it spans every stream's opening however
            // slowly a loaded host runs them (a count alone ran out before the second
            // session); bounded: at most 60 s and 50 million 4-byte datagrams, to loopback.
            let started = Instant::now();
            for _ in 0..50_000_000 {
                if stop.load(Ordering::Relaxed) || started.elapsed() > Duration::from_secs(60) {
                    break;
                }
                let _ = sock.send_to(b"9876", ("127.0.0.1", port));
            }
        })
    };
    let stray_noted = |rs: &[SessionReport]| {
        rs.iter().any(|r| {
            r.notes
                .iter()
                .any(|n| n.contains("ignored UDP datagrams from 127.0.0.2"))
        })
    };
    let mut reports = Vec::new();
    for session in 1..=5 {
        let done = Iperf3::spawn(&[
            "-c",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-u",
            "-R",
            "-b",
            "10M",
            "-l",
            "1000",
            "-t",
            "1",
        ])
        .finish(WAIT);
        assert!(done.success, "session {session}: {}", output(&done));
        reports = server.wait_reports(session);
        if stray_noted(&reports) {
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    flood.join().unwrap();
    let mut buf = [0u8; 2048];
    let mut received = 0usize;
    while let Ok((n, _)) = other.recv_from(&mut buf) {
        received += n;
    }
    assert_eq!(received, 0, "the other host was sent {received} bytes");
    assert!(stray_noted(&reports), "{reports:#?}");
}
