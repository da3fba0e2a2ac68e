//! Real namespaces: each topology is built, reached over IPv4 and IPv6, and removed
//! without a trace — after drop, after a failure in the middle of setup, and with
//! processes still running inside. Needs root (skips with a reason outside CI).
#![cfg(target_os = "linux")]

mod common;

use dualperf_lab as lab;

use common::*;
use lab::{Lab, LabError, LabSpec, Topology};
use std::process::Command;
use std::time::{Duration, Instant};
use wire::spec::Family;

fn spec(tag: &str, topology: Topology) -> LabSpec {
    LabSpec {
        name: unique_name(tag),
        topology,
        rate_bps: None,
        mtu: None,
    }
}

fn check_reachable(lab: &Lab, port: u16) {
    for fam in [Family::V4, Family::V6] {
        let addr = lab.server_addr(fam);
        let started = Instant::now();
        let reply = udp_echo(lab.client_ns(), lab.server_ns(), addr, port).unwrap_or_else(|e| {
            panic!(
                "UDP over IPv{} to {addr} in {}: {e}",
                fam.number(),
                lab.name()
            )
        });
        assert_eq!(reply, b"dualperf-lab-ping");
        // A lost first neighbour solicitation would cost a 1 s retransmission.
        let rtt = started.elapsed();
        assert!(
            rtt < Duration::from_millis(900),
            "first IPv{} exchange took {rtt:?}: lab not usable at once",
            fam.number()
        );
        let got = tcp_transfer(lab.client_ns(), lab.server_ns(), addr, port)
            .unwrap_or_else(|e| panic!("TCP over IPv{} to {addr}: {e}", fam.number()));
        assert_eq!(got, 100_000);
    }
}

#[test]
fn p2p_lab_reaches_the_server_over_both_families_and_leaves_nothing() {
    if !labs_available() {
        return;
    }
    let s = spec("p2p", Topology::P2p);
    let lab = Lab::create(&s).expect("create p2p lab");
    assert_eq!(leftover_namespaces(&s.name).len(), 2);
    assert!(lab.router_ns().is_none());
    check_reachable(&lab, 7001);
    drop(lab);
    assert_nothing_left(&s.name);
}

#[test]
fn client_server_lab_forwards_both_families_through_the_router() {
    if !labs_available() {
        return;
    }
    let s = spec("cs", Topology::ClientServer);
    let lab = Lab::create(&s).expect("create client-server lab");
    let router = lab.router_ns().expect("router namespace").to_string();
    assert_eq!(leftover_namespaces(&s.name).len(), 3);
    let forwarding = in_ns(&router, || {
        let v4 = std::fs::read_to_string("/proc/sys/net/ipv4/ip_forward").unwrap_or_default();
        let v6 =
            std::fs::read_to_string("/proc/sys/net/ipv6/conf/all/forwarding").unwrap_or_default();
        (v4.trim().to_string(), v6.trim().to_string())
    })
    .join()
    .unwrap();
    assert_eq!(forwarding, ("1".to_string(), "1".to_string()));
    // The hosts are on different subnets, so reaching the server proves forwarding.
    assert_ne!(
        lab.client_addr(Family::V4)
            .to_string()
            .rsplit_once('.')
            .unwrap()
            .0,
        lab.server_addr(Family::V4)
            .to_string()
            .rsplit_once('.')
            .unwrap()
            .0
    );
    check_reachable(&lab, 7002);
    lab.teardown().expect("teardown reports no error");
    assert_nothing_left(&s.name);
}

#[test]
fn a_name_in_use_is_refused_and_the_first_lab_survives() {
    if !labs_available() {
        return;
    }
    let s = spec("dup", Topology::P2p);
    let first = Lab::create(&s).expect("first lab");
    let second = Lab::create(&LabSpec {
        topology: Topology::ClientServer,
        ..s.clone()
    });
    assert!(matches!(second, Err(LabError::Exists { .. })), "{second:?}");
    assert_eq!(
        leftover_namespaces(&s.name).len(),
        2,
        "the refused create must not touch the first lab"
    );
    check_reachable(&first, 7003);
    drop(first);
    assert_nothing_left(&s.name);
}

#[test]
fn a_failure_in_the_middle_of_setup_removes_everything() {
    if !labs_available() {
        return;
    }
    // Step 0 = before anything, 1 = after the first namespace, later = links and addresses.
    for step in [0usize, 1, 4, 9, 17, 25, 34, 41] {
        let s = spec(&format!("fail{step}"), Topology::ClientServer);
        let err = Lab::create_with_fault(&s, Some(step), None).expect_err("injected failure");
        assert!(matches!(err, LabError::Injected(n) if n == step), "{err:?}");
        assert_nothing_left(&s.name);
    }
    // A real failure from `ip`: the server namespace name is taken by someone else
    // halfway (we create it ourselves just before the lab would).
    let s = spec("clash", Topology::P2p);
    let clash = format!("dpl-{}-server", s.name);
    let _ = Command::new("ip").args(["netns", "add", &clash]).status();
    let err = Lab::create(&s).expect_err("name clash");
    assert!(matches!(err, LabError::Exists { .. }), "{err:?}");
    let _ = Command::new("ip")
        .args(["netns", "delete", &clash])
        .status();
    assert_nothing_left(&s.name);
}

#[test]
fn shaping_and_mtu_are_visible_to_tc_and_ip() {
    if !labs_available() {
        return;
    }
    let s = LabSpec {
        rate_bps: Some(50_000_000),
        mtu: Some(9000),
        ..spec("shape", Topology::ClientServer)
    };
    let lab = Lab::create(&s).expect("shaped lab");
    assert!(lab.is_shaped(), "warnings: {:?}", lab.warnings());
    for (ns, dev) in [(lab.client_ns(), "dp-c"), (lab.server_ns(), "dp-s")] {
        let out = Command::new("tc")
            .args(["-n", ns, "qdisc", "show", "dev", dev])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("tbf") && text.contains("rate 50Mbit"),
            "{ns}/{dev}: {text}"
        );
    }
    for (ns, dev) in [
        (lab.client_ns(), "dp-c"),
        (lab.router_ns().unwrap(), "dp-rs"),
    ] {
        let out = Command::new("ip")
            .args(["-n", ns, "-o", "link", "show", "dev", dev])
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("mtu 9000"),
            "{ns}/{dev}"
        );
    }
    let d = lab.describe();
    assert_eq!(d["lab.topology"], "client-server");
    assert_eq!(d["lab.rate_bps"], "50000000");
    assert_eq!(d["lab.mtu_bytes"], "9000");
    assert!(
        d["lab.shaping"].starts_with("tbf rate 50Mbit"),
        "{}",
        d["lab.shaping"]
    );
    assert_eq!(
        d["lab.server_addr_v6"],
        lab.server_addr(Family::V6).to_string()
    );
    assert_eq!(d["lab.client_ns"], lab.client_ns());
    let listed = lab::list_labs()
        .unwrap()
        .into_iter()
        .find(|l| l.name == s.name)
        .expect("listed");
    assert_eq!(listed.topology, Some(Topology::ClientServer));
    assert_eq!(listed.mtu_bytes, Some(9000));
    assert_eq!(listed.rate.as_deref(), Some("50Mbit"));
    drop(lab);
    assert_nothing_left(&s.name);
}

#[test]
fn a_missing_qdisc_warns_and_the_lab_still_works() {
    if !labs_available() {
        return;
    }
    let s = LabSpec {
        rate_bps: Some(10_000_000),
        ..spec("noq", Topology::P2p)
    };
    let lab =
        Lab::create_with_fault(&s, None, Some("dplnosuchqdisc")).expect("lab without shaping");
    assert!(!lab.is_shaped());
    assert_eq!(lab.warnings().len(), 2, "{:?}", lab.warnings());
    assert!(
        lab.warnings()[0].contains("not available"),
        "{:?}",
        lab.warnings()
    );
    assert!(lab.describe()["lab.shaping"].contains("unavailable"));
    check_reachable(&lab, 7004);
    drop(lab);
    assert_nothing_left(&s.name);
}

#[test]
fn teardown_stops_processes_running_inside_the_lab() {
    if !labs_available() {
        return;
    }
    let s = spec("proc", Topology::P2p);
    let lab = Lab::create(&s).expect("lab");
    let mut child =
        lab::spawn_in_ns(lab.server_ns(), Command::new("sleep").arg("30")).expect("spawn sleep");
    // The child really is in the server namespace.
    let child_ns = std::fs::metadata(format!("/proc/{}/ns/net", child.id())).unwrap();
    let lab_ns = std::fs::metadata(format!("/run/netns/{}", lab.server_ns())).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(
        (child_ns.dev(), child_ns.ino()),
        (lab_ns.dev(), lab_ns.ino())
    );
    let started = Instant::now();
    lab.teardown().expect("teardown");
    let status = child.wait().unwrap();
    assert!(!status.success(), "sleep was stopped, not finished");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_nothing_left(&s.name);
}

#[test]
fn list_and_destroy_work_by_name_across_handles() {
    if !labs_available() {
        return;
    }
    let s = spec("list", Topology::P2p);
    let lab = Lab::create(&s).expect("lab");
    let info = lab::list_labs()
        .unwrap()
        .into_iter()
        .find(|l| l.name == s.name)
        .expect("listed");
    assert_eq!(info.topology, Some(Topology::P2p));
    assert_eq!(info.mtu_bytes, Some(1500));
    assert_eq!(info.rate, None);
    lab::destroy(&s.name).expect("destroy by name");
    assert_nothing_left(&s.name);
    assert!(matches!(lab::destroy(&s.name), Err(LabError::NotFound(_))));
    drop(lab); // already gone: dropping must not fail or panic
}

#[test]
fn stale_temporary_labs_of_dead_processes_are_removed() {
    if !labs_available() {
        return;
    }
    // A pid that does not exist stands for an owner killed with SIGKILL.
    let dead_pid = (4_000_000u32..4_100_000)
        .find(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
        .unwrap();
    let name = format!("tmp{dead_pid}-0");
    for role in ["client", "server"] {
        assert!(Command::new("ip")
            .args(["netns", "add", &format!("dpl-{name}-{role}")])
            .status()
            .unwrap()
            .success());
    }
    let live = Lab::create(&LabSpec::temporary(Topology::P2p)).expect("a live temporary lab");
    let removed = lab::cleanup_stale().expect("cleanup");
    assert!(removed.contains(&name), "{removed:?}");
    assert!(
        !removed.contains(&live.name().to_string()),
        "a live owner's lab must stay"
    );
    assert_nothing_left(&name);
    assert_eq!(leftover_namespaces(live.name()).len(), 2);
}
