//! `dualperf server --iperf3-port` under the server's policy, through the real binary
//! and Debian's unmodified iperf3 on 127.0.0.1: the `--max-*` limits refuse an iperf3
//! client with iperf3's own message and a log line naming the flag; a keyed server
//! (`--psk-file`) opens no iperf3 port anyone can use unless told so; iperf3
//! authentication works both ways (`--iperf3-rsa-private-key` / `--iperf3-authorized-
//! users` on the server, `run --peer iperf3 --iperf3-username` against `iperf3 -s`).
//! Skips when /usr/bin/iperf3 is missing outside CI.

use crate::support::server::ServerProc;
use crate::support::{free_port, iperf3_or_skip, spawn_iperf3_server, IPERF3};
use crate::support::{output_within, shared};
use crate::support::{text, BIN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// `iperf3 -c 127.0.0.1 -p PORT ARGS` with `env`, killed after 30 s.
fn iperf3_client(port: u16, args: &[&str], env: &[(&str, &str)]) -> Output {
    output_within(
        Command::new(IPERF3)
            .args(["-c", "127.0.0.1", "-p", &port.to_string()])
            .args(args)
            .envs(env.iter().copied()),
        Duration::from_secs(30),
    )
}

/// A key pair and users file for `user`/`password`, made as iperf3's documentation
/// makes them; removed on drop.
struct Keys {
    dir: PathBuf,
    private: String,
    public: String,
    users: String,
}

impl Keys {
    fn new(tag: &str, user: &str, password: &str) -> Keys {
        let dir = std::env::temp_dir().join(format!("dp-cli-iperf3-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = |name: &str| dir.join(name).to_str().unwrap().to_string();
        let keys = Keys {
            private: path("private.pem"),
            public: path("public.pem"),
            users: path("users.csv"),
            dir: dir.clone(),
        };
        let openssl = |args: &[&str]| {
            let o = Command::new("openssl")
                .args(args)
                .output()
                .expect("these tests need openssl (apt-get install openssl)");
            assert!(o.status.success(), "openssl {args:?}: {}", text(&o));
        };
        openssl(&["genrsa", "-out", &keys.private, "2048"]);
        openssl(&["rsa", "-in", &keys.private, "-pubout", "-out", &keys.public]);
        let hash = iperf3::auth::password_hash(user, password);
        std::fs::write(&keys.users, format!("{user},{hash}\n")).unwrap();
        keys
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `dualperf server` on 127.0.0.1 with an iperf3 port and `limits`; the iperf3 port.
fn server_with_iperf3_port(limits: &[&str]) -> (ServerProc, u16) {
    let port = free_port();
    let p = port.to_string();
    let mut args = vec!["--bind", "127.0.0.1", "--iperf3-port", &p];
    args.extend_from_slice(limits);
    (ServerProc::start(BIN, &args), port)
}

#[test]
fn the_iperf3_port_applies_the_servers_limits_and_logs_the_flag() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let (server, iperf3_port) = server_with_iperf3_port(&[
        "--max-streams",
        "4",
        "--max-duration",
        "5",
        "--max-rate",
        "100M",
        "--max-payload",
        "2000",
    ]);
    let cases: [(&[&str], &str, &str); 3] = [
        (
            &["-P", "128", "-t", "3600", "-b", "100G", "-l", "1000"],
            "number of parallel streams too large",
            "refused (--max-streams)",
        ),
        (
            &["-u", "-R", "-b", "10G", "-t", "3", "-l", "1000"],
            "total required bandwidth is larger than server limit",
            "refused (--max-rate)",
        ),
        (
            &["-u", "-l", "60000", "-t", "1"],
            "block size invalid",
            "refused (--max-payload)",
        ),
    ];
    for (i, (args, printed, logged)) in cases.iter().enumerate() {
        let o = iperf3_client(iperf3_port, args, &[]);
        assert!(!o.status.success(), "{args:?} was served: {}", text(&o));
        assert!(text(&o).contains(printed), "{args:?}: {}", text(&o));
        let log = server.wait_log("refused (--", i + 1, Duration::from_secs(10));
        assert!(log.contains(logged), "{log}");
    }
    let o = iperf3_client(iperf3_port, &["-t", "1", "-l", "1000"], &[]);
    assert!(o.status.success(), "within the limits: {}", text(&o));
}

fn psk_file(dir: &Path) -> PathBuf {
    let path = dir.join("psk");
    std::fs::write(&path, format!("{}\n", "ab".repeat(32))).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path
}

#[test]
fn a_keyed_server_opens_no_iperf3_port_anyone_can_use_unless_told() {
    let _turn = shared();
    let keys = Keys::new("psk", "mario", "rossi");
    let psk = psk_file(&keys.dir);
    let p = free_port().to_string();
    let base = [
        "server",
        "--bind",
        "127.0.0.1",
        "--port",
        "0",
        "--iperf3-port",
        &p,
        "--psk-file",
    ];
    let o = output_within(
        Command::new(BIN).args(base).arg(&psk),
        Duration::from_secs(20),
    );
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--iperf3-no-auth") && err.contains("--iperf3-rsa-private-key"),
        "{err}"
    );

    let psk_s = psk.to_str().unwrap();
    let open = ServerProc::start(
        BIN,
        &[
            "--bind",
            "127.0.0.1",
            "--iperf3-port",
            &p,
            "--psk-file",
            psk_s,
            "--iperf3-no-auth",
        ],
    );
    let log = open.wait_log("iperf3 clients served", 1, Duration::from_secs(5));
    assert!(log.contains("the iperf3 port is open to anyone"), "{log}");
    // The banner's lines come one by one: wait for the other one too (under load it
    // may follow the first by more than the time a read takes).
    let log = open.wait_log(
        "pre-shared key required here; the iperf3 port is open to anyone",
        1,
        Duration::from_secs(10),
    );
    assert!(
        log.contains("pre-shared key required here; the iperf3 port is open to anyone"),
        "{log}"
    );
    drop(open);

    let p = free_port().to_string();
    let keyed = ServerProc::start(
        BIN,
        &[
            "--bind",
            "127.0.0.1",
            "--iperf3-port",
            &p,
            "--psk-file",
            psk_s,
            "--iperf3-rsa-private-key",
            &keys.private,
            "--iperf3-authorized-users",
            &keys.users,
        ],
    );
    let log = keyed.wait_log("iperf3 clients served", 1, Duration::from_secs(5));
    assert!(log.contains("(iperf3 authentication required)"), "{log}");
    assert!(!log.contains("open to anyone"), "{log}");
}

#[test]
fn iperf3_authentication_through_the_binary_both_ways() {
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let keys = Keys::new("both", "mario", "rossi-42");
    let iperf3_port = free_port();
    let p = iperf3_port.to_string();
    let server = ServerProc::start(
        BIN,
        &[
            "--bind",
            "127.0.0.1",
            "--iperf3-port",
            &p,
            "--iperf3-rsa-private-key",
            &keys.private,
            "--iperf3-authorized-users",
            &keys.users,
        ],
    );
    let creds = ["--username", "mario", "--rsa-public-key-path", &keys.public];
    let mut args = vec!["-t", "1"];
    args.extend_from_slice(&creds);
    let o = iperf3_client(iperf3_port, &args, &[("IPERF3_PASSWORD", "rossi-42")]);
    assert!(o.status.success(), "{}", text(&o));
    let log = server.wait_log("user \"mario\"", 1, Duration::from_secs(10));
    assert!(
        log.contains("user \"mario\"") && log.contains(", ok: "),
        "{log}"
    );

    let o = iperf3_client(iperf3_port, &["-t", "1"], &[]);
    assert!(
        !o.status.success(),
        "a keyless client was served: {}",
        text(&o)
    );
    assert!(
        text(&o).contains("test authorization failed"),
        "{}",
        text(&o)
    );
    let log = server.wait_log(
        "refused (--iperf3-authorized-users)",
        1,
        Duration::from_secs(10),
    );
    assert!(log.contains("no authentication token"), "{log}");

    // Our client against Debian's iperf3 server with authentication.
    let port = free_port();
    let key_args = [
        "-1",
        "--rsa-private-key-path",
        &keys.private,
        "--authorized-users-path",
        &keys.users,
    ];
    let mut iperf3 = spawn_iperf3_server(port, &key_args, false);
    let run = |password: &str| {
        Command::new(BIN)
            .args([
                "run",
                "127.0.0.1",
                "--peer",
                "iperf3",
                "--port",
                &port.to_string(),
            ])
            .args(["--test", "tcp-stream", "--duration", "0.5", "--json"])
            .args([
                "--iperf3-username",
                "mario",
                "--iperf3-rsa-public-key",
                &keys.public,
            ])
            .env("IPERF3_PASSWORD", password)
            .stdin(Stdio::null())
            .output()
            .expect("dualperf runs")
    };
    let o = run("rossi-42");
    let _ = iperf3.kill();
    let _ = iperf3.wait();
    assert!(o.status.success(), "{}", text(&o));
    let port2 = free_port();
    let mut iperf3 = spawn_iperf3_server(port2, &key_args, false);
    let o = Command::new(BIN)
        .args([
            "run",
            "127.0.0.1",
            "--peer",
            "iperf3",
            "--port",
            &port2.to_string(),
        ])
        .args(["--test", "tcp-stream", "--duration", "0.5"])
        .args([
            "--iperf3-username",
            "mario",
            "--iperf3-rsa-public-key",
            &keys.public,
        ])
        .env("IPERF3_PASSWORD", "wrong")
        .stdin(Stdio::null())
        .output()
        .expect("dualperf runs");
    let _ = iperf3.kill();
    let _ = iperf3.wait();
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("authorization failed"), "{}", text(&o));

    // No password in the environment: refused before connecting, saying where it goes.
    let o = Command::new(BIN)
        .args([
            "run",
            "127.0.0.1",
            "--peer",
            "iperf3",
            "--port",
            &port2.to_string(),
        ])
        .args([
            "--iperf3-username",
            "mario",
            "--iperf3-rsa-public-key",
            &keys.public,
        ])
        .env_remove("IPERF3_PASSWORD")
        .stdin(Stdio::null())
        .output()
        .expect("dualperf runs");
    assert!(!o.status.success());
    assert!(text(&o).contains("IPERF3_PASSWORD"), "{}", text(&o));
}

/// Issue 38: the two ports of one `dualperf server` had a test slot each, so a dualperf
/// test and an iperf3 test ran at once whatever `--max-tests` said, and their UDP added
/// up past `--max-rate`. Now an iperf3 test takes one of `--max-tests` and counts in
/// the `--max-rate` total: while a raw wire peer holds the dualperf port's one
/// admission (accepted, never started), an iperf3 client is told busy, and the log
/// names the limit; once it is released, the iperf3 client is served.
#[test]
fn the_iperf3_port_shares_the_servers_admissions_and_rate_budget() {
    use crate::support::{exchange, hello_by_hand};
    use wire::proto::Msg;
    let _turn = shared();
    if !iperf3_or_skip() {
        return;
    }
    let (server, iperf3_port) =
        server_with_iperf3_port(&["--max-tests", "2", "--max-rate", "100M"]);
    // Two tests may run; the first holds 60 Mbit/s of the 100 the server sends.
    let hold = |rate_bps: u64| {
        let (mut ctl, mut dec) = hello_by_hand(("127.0.0.1", server.port()));
        let mut spec = wire::spec::TestSpec::new(
            wire::spec::TestKind::UdpStream,
            wire::spec::Family::V4,
            1000,
        );
        spec.direction = wire::spec::Direction::Reverse;
        spec.rate = Some(wire::spec::Rate::BitsPerSec(rate_bps));
        spec.bound = wire::spec::Bound::DurationNs(3_000_000_000);
        let request = Msg::Request {
            spec,
            client_proof: None,
        };
        let reply = exchange(&mut ctl, &mut dec, Some(&request));
        assert!(matches!(reply, Msg::Accept { .. }), "{reply:?}");
        ctl
    };
    let first = hold(60_000_000);
    // 60 Mbit/s more over the iperf3 port: over the total.
    let o = iperf3_client(
        iperf3_port,
        &["-u", "-R", "-b", "60M", "-t", "1", "-l", "1000"],
        &[],
    );
    assert!(
        !o.status.success(),
        "served beside the held test: {}",
        text(&o)
    );
    assert!(text(&o).contains("busy"), "{}", text(&o));
    let log = server.wait_log("refused (--max-rate)", 1, Duration::from_secs(10));
    assert!(
        log.contains("server busy: the tests running now send 61 of the 100 Mbit/s"),
        "{log}"
    );
    // The second admission taken too: even a TCP test is told busy.
    let second = hold(1_000_000);
    let o = iperf3_client(iperf3_port, &["-t", "1", "-l", "1000"], &[]);
    assert!(
        !o.status.success(),
        "served beside two held tests: {}",
        text(&o)
    );
    server.wait_log("refused (--max-tests)", 1, Duration::from_secs(10));
    drop((first, second));
    // Released (the server sees the closed connections within its poll): served.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let o = iperf3_client(iperf3_port, &["-t", "1", "-l", "1000"], &[]);
        if o.status.success() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still refused: {}",
            text(&o)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
