//! `dualperf lab` end to end: up / list / exec / down across processes, a name used
//! twice, the non-root message, and SIGINT / SIGTERM to a `lab up --foreground` that
//! leaves no namespace and no process behind. Needs root (skips with a reason outside CI).
#![cfg(target_os = "linux")]

use crate::support::root_or_skip;
use crate::support::shared;
use crate::support::{lossy, BIN};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn dualperf(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run dualperf")
}

fn name(tag: &str) -> String {
    format!("c{}{tag}", std::process::id())
}

fn namespaces_of(name: &str) -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    let prefix = format!("dpl-{name}-");
    lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(&prefix))
        .map(String::from)
        .collect()
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("process {} did not exit within {limit:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn up_list_exec_down_work_across_processes_and_a_name_is_not_reused() {
    let _turn = shared();
    if !root_or_skip("dualperf lab tests") {
        return;
    }
    let n = name("cli");
    let up = dualperf(&[
        "lab",
        "up",
        "--topology",
        "client-server",
        "--rate",
        "20mbit",
        "--mtu",
        "1400",
        "--name",
        &n,
    ]);
    assert!(up.status.success(), "lab up: {}", lossy(&up.stderr));
    let stdout = lossy(&up.stdout);
    assert!(
        stdout.contains("10.231.2.2") && stdout.contains("fd00:231:2::2"),
        "{stdout}"
    );
    assert_eq!(namespaces_of(&n).len(), 3, "the lab outlives `lab up`");

    let again = dualperf(&["lab", "up", "--name", &n]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        lossy(&again.stderr).contains("already exists"),
        "{}",
        lossy(&again.stderr)
    );

    let list = lossy(&dualperf(&["lab", "list"]).stdout);
    let line = list
        .lines()
        .find(|l| l.starts_with(&format!("{n} ")))
        .unwrap_or_else(|| panic!("{n} not in {list}"));
    assert!(
        line.contains("client-server") && line.contains("20Mbit") && line.contains("1400"),
        "{line}"
    );

    let exec = dualperf(&[
        "lab", "exec", &n, "server", "--", "ip", "-o", "addr", "show", "dev", "dp-s",
    ]);
    assert!(exec.status.success(), "{}", lossy(&exec.stderr));
    assert!(
        lossy(&exec.stdout).contains("fd00:231:2::2/64"),
        "{}",
        lossy(&exec.stdout)
    );
    let exit = dualperf(&["lab", "exec", &n, "client", "--", "sh", "-c", "exit 7"]);
    assert_eq!(
        exit.status.code(),
        Some(7),
        "exec passes the exit code through"
    );

    let down = dualperf(&["lab", "down", &n]);
    assert!(down.status.success(), "{}", lossy(&down.stderr));
    assert!(namespaces_of(&n).is_empty());
    let gone = dualperf(&["lab", "down", &n]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        lossy(&gone.stderr).contains("no lab named"),
        "{}",
        lossy(&gone.stderr)
    );
}

fn foreground_lab_is_removed_on(signal: &str) {
    let n = name(&format!("fg{}", signal.trim_start_matches('-')));
    let mut owner = Command::new(BIN)
        .args([
            "lab",
            "up",
            "--foreground",
            "--rate",
            "10mbit",
            "--name",
            &n,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lab up --foreground");
    let mut lines = BufReader::new(owner.stdout.take().expect("stdout")).lines();
    let ready = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.contains("press Ctrl-C"));
    assert!(ready, "lab up --foreground never became ready");
    assert_eq!(namespaces_of(&n).len(), 2);
    // A process left running inside the lab must not survive it.
    let mut inside = Command::new(BIN)
        .args(["lab", "exec", &n, "server", "--", "sleep", "30"])
        .spawn()
        .expect("exec sleep");
    std::thread::sleep(Duration::from_millis(200));

    let kill = Command::new("kill")
        .args([signal, &owner.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let status = wait_exit(&mut owner, Duration::from_secs(10));
    assert_eq!(
        status.code(),
        Some(130),
        "interrupted lab up exits with 130"
    );
    assert!(
        namespaces_of(&n).is_empty(),
        "namespaces left after {signal}: {:?}",
        namespaces_of(&n)
    );
    let inside_status = wait_exit(&mut inside, Duration::from_secs(5));
    assert!(
        !inside_status.success(),
        "the process inside the lab was stopped"
    );
}

#[test]
fn sigint_to_a_foreground_lab_leaves_no_namespace_and_no_process() {
    let _turn = shared();
    if root_or_skip("dualperf lab tests") {
        foreground_lab_is_removed_on("-INT");
    }
}

#[test]
fn sigterm_to_a_foreground_lab_leaves_no_namespace_and_no_process() {
    let _turn = shared();
    if root_or_skip("dualperf lab tests") {
        foreground_lab_is_removed_on("-TERM");
    }
}

#[test]
fn without_privileges_lab_up_says_it_needs_root() {
    let _turn = shared();
    if !root_or_skip("dualperf lab tests") {
        return;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("SKIPPED: setpriv (util-linux) is not installed");
        return;
    }
    // A copy the unprivileged user can execute (the target dir may not be readable).
    let copy = std::env::temp_dir().join(format!("dualperf-nonroot-{}", std::process::id()));
    std::fs::copy(BIN, &copy).expect("copy binary");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let n = name("nr");
    let run = || {
        Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
            ])
            .arg(&copy)
            .args(["lab", "up", "--name", &n])
            .output()
            .expect("setpriv")
    };
    // 126 = the copy could not be executed: "Text file busy" while a child that
    // another test thread forked still holds the copy's write descriptor (until it
    // execs). Seen once in 5 loaded runs; it passes once that child has exec'd.
    let mut out = run();
    for _ in 0..10 {
        if out.status.code() != Some(126) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        out = run();
    }
    let _ = std::fs::remove_file(&copy);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        lossy(&out.stderr).contains("needs root (CAP_NET_ADMIN)"),
        "{}",
        lossy(&out.stderr)
    );
    assert!(namespaces_of(&n).is_empty());
}

#[test]
fn bad_rates_and_mtus_are_refused_before_anything_is_made() {
    let _turn = shared();
    let n = name("bad");
    let rate = dualperf(&["lab", "up", "--rate", "100mbps", "--name", &n]);
    assert_eq!(rate.status.code(), Some(2), "clap usage error");
    assert!(
        lossy(&rate.stderr).contains("bytes per second"),
        "{}",
        lossy(&rate.stderr)
    );
    let mtu = dualperf(&["lab", "up", "--mtu", "576", "--name", &n]);
    assert_eq!(mtu.status.code(), Some(1));
    assert!(
        lossy(&mtu.stderr).contains("1280"),
        "{}",
        lossy(&mtu.stderr)
    );
    assert!(namespaces_of(&n).is_empty());
}

#[test]
fn dualperf_server_and_run_work_across_the_router_of_a_shaped_lab() {
    let _turn = shared();
    if !root_or_skip("dualperf lab tests") {
        return;
    }
    let n = name("e2e");
    let up = dualperf(&[
        "lab",
        "up",
        "--topology",
        "client-server",
        "--rate",
        "20mbit",
        "--name",
        &n,
    ]);
    assert!(up.status.success(), "lab up: {}", lossy(&up.stderr));
    let mut server = Command::new(BIN)
        .args([
            "lab",
            "exec",
            &n,
            "server",
            "--",
            BIN,
            "server",
            "--bind",
            "10.231.2.2",
            "--bind",
            "fd00:231:2::2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("server in the lab");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    assert!(
        lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.contains("listening")),
        "server never listened"
    );
    // 20 Mbit/s × 1408 / (1408 + 8 + 40 + 14); a 1 s run also carries the 64 KiB burst (+2.6%).
    let model = 20e6 * 1408.0 / 1470.0;
    // Best of three (the run closest to the model counts): a loaded 2-core machine can
    // starve one 1 s run; every run must succeed.
    let mut best_err = f64::INFINITY;
    for _ in 0..3 {
        let run = dualperf(&[
            "lab",
            "exec",
            &n,
            "client",
            "--",
            BIN,
            "run",
            "fd00:231:2::2",
            "-f",
            "6",
            "-t",
            "udp-stream",
            "-s",
            "1408",
            "-d",
            "1",
            // A receiver descheduled on a loaded machine reads late instead of dropping.
            "--rcvbuf",
            "4M",
            "--json",
        ]);
        assert!(
            run.status.success(),
            "run in the lab: {}",
            lossy(&run.stderr)
        );
        let json: serde_json::Value =
            serde_json::from_slice(&run.stdout).expect("run --json output");
        let bps = json["metrics"]
            .as_array()
            .and_then(|ms| ms.iter().find(|m| m["name"] == "throughput_bps"))
            .and_then(|m| m["value"].as_f64())
            .expect("throughput_bps metric");
        eprintln!("{bps} bit/s vs model {model}");
        let err = bps / model - 1.0;
        if err.abs() < best_err.abs() {
            best_err = err;
        }
        if best_err.abs() < 0.05 {
            break;
        }
    }
    let down = dualperf(&["lab", "down", &n]);
    assert!(down.status.success(), "{}", lossy(&down.stderr));
    // `lab down` sends SIGTERM to the server inside the lab (it stops cleanly); the
    // `lab exec` wrapper outside then returns: nothing keeps running.
    wait_exit(&mut server, Duration::from_secs(5));
    assert!(
        best_err.abs() < 0.05,
        "best run {:+.2} % off the model {model}",
        best_err * 100.0
    );
    assert!(namespaces_of(&n).is_empty());
}

/// The two hint lines `lab up` prints are run exactly as printed (through `sh -c`), with
/// only a short `-d` added to the client: the server line starts a server in the lab, the
/// client line (an IPv6 address, no `-f`) measures against it.
#[test]
fn the_hint_printed_by_lab_up_works_as_printed() {
    let _turn = shared();
    if !root_or_skip("dualperf lab tests") {
        return;
    }
    let n = name("hint");
    let up = dualperf(&["lab", "up", "--name", &n]);
    assert!(up.status.success(), "lab up: {}", lossy(&up.stderr));
    let out = lossy(&up.stdout);
    let hint = |what: &str| {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(what))
            .map(|c| c.trim().to_string())
            .unwrap_or_else(|| panic!("no '{what}' line in {out}"))
    };
    let (server_cmd, client_cmd) = (hint("run a server:"), hint("run a client:"));
    let mut server = Command::new("sh")
        .args(["-c", &format!("exec {server_cmd}")])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("server from the hint");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    assert!(
        lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.contains("listening")),
        "the hint's server never listened: {server_cmd}"
    );
    let client = Command::new("sh")
        .args(["-c", &format!("{client_cmd} -d 0.3 --json")])
        .output()
        .expect("client from the hint");
    let down = dualperf(&["lab", "down", &n]);
    wait_exit(&mut server, Duration::from_secs(5));
    assert!(
        client.status.success(),
        "{client_cmd}: {}",
        lossy(&client.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&client.stdout).expect("run --json");
    assert_eq!(json["spec"]["family"], "6", "{json}");
    assert!(down.status.success(), "{}", lossy(&down.stderr));
    assert!(namespaces_of(&n).is_empty());
}
