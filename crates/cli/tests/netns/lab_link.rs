//! `dualperf lab up --link`: an emulated link is the tbf qdisc the airtime model asks
//! for (rate = the PHY rate, overhead = the model's fixed airtime per frame in bytes),
//! read back from the kernel with `tc -j qdisc show`, and the lab says what the shaping
//! leaves out. Needs root (skips with a reason outside CI).
#![cfg(target_os = "linux")]

use crate::support::root_or_skip;
use crate::support::shared;
use crate::support::{lossy, BIN};
use model::wifi::{emulation::tbf_emulation, Assumptions};
use serde_json::Value;
use std::process::{Command, Output};

fn dualperf(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run dualperf")
}

/// Removes the lab when the test ends, passed or not.
struct Down(String);
impl Drop for Down {
    fn drop(&mut self) {
        let _ = dualperf(&["lab", "down", &self.0]);
    }
}

/// The root tbf qdisc on `dev` inside `ns`, as tc reports it in JSON.
fn tbf_of(ns: &str, dev: &str) -> Value {
    let out = Command::new("ip")
        .args(["netns", "exec", ns, "tc", "-j", "qdisc", "show", "dev", dev])
        .output()
        .expect("tc runs");
    assert!(out.status.success(), "{}", lossy(&out.stderr));
    let all: Value = serde_json::from_slice(&out.stdout).expect("tc -j prints JSON");
    all.as_array()
        .and_then(|q| q.iter().find(|q| q["kind"] == "tbf"))
        .cloned()
        .unwrap_or_else(|| panic!("no tbf on {dev} in {ns}: {all}"))
}

#[test]
fn an_emulated_80211g_link_installs_tbf_at_the_phy_rate_with_the_models_overhead() {
    let _turn = shared();
    if !root_or_skip("dualperf lab --link tests") {
        return;
    }
    // (link, MPDUs per A-MPDU, name tag)
    let cases = [
        ("802.11g:54", 1, "g"),
        ("802.11ac:mcs=9,nss=2,width=80,gi=short", 32, "ac"),
    ];
    for (link, ampdu, tag) in cases {
        let name = format!("c{}l{tag}", std::process::id());
        let n = ampdu.to_string();
        let mut args = vec!["lab", "up", "--link", link, "--name", &name];
        if ampdu > 1 {
            args.extend(["--ampdu", &n]);
        }
        let up = dualperf(&args);
        let _down = Down(name.clone());
        assert!(up.status.success(), "{}", lossy(&up.stderr));
        let stdout = lossy(&up.stdout);
        assert!(
            stdout.contains(&format!(
                "emulating {}",
                model::link::parse(link)
                    .map(|l| l.to_string())
                    .unwrap_or_default()
            )),
            "{stdout}"
        );
        assert!(
            stdout.contains("leaves out collisions, retries, rate adaptation"),
            "{stdout}"
        );

        let Ok(model::Link::Wifi(phy)) = model::link::parse(link) else {
            panic!("{link} is an 802.11 link");
        };
        let a = Assumptions {
            ampdu,
            ..Assumptions::default()
        };
        let want = tbf_emulation(&phy, &a).expect("model answers");
        assert_eq!(want.packets_per_access, ampdu, "{want:?}");
        for (ns, dev) in [("client", "dp-c"), ("server", "dp-s")] {
            let q = tbf_of(&format!("dpl-{name}-{ns}"), dev);
            let options = &q["options"];
            // tc reports the rate in bytes per second.
            let rate = options["rate"].as_u64().unwrap_or(0);
            assert_eq!(rate, want.rate_bps / 8, "{link} {ns}: {q}");
            assert_eq!(
                options["overhead"].as_u64(),
                Some(u64::from(want.overhead_bytes)),
                "{link} {ns}: {q}"
            );
            assert!(want.overhead_bytes > 0, "{want:?}");
            // One segment per skb, so that tbf charges the overhead per packet.
            let link = Command::new("ip")
                .args([
                    "-n",
                    &format!("dpl-{name}-{ns}"),
                    "-d",
                    "link",
                    "show",
                    "dev",
                    dev,
                ])
                .output()
                .expect("ip runs");
            assert!(
                lossy(&link.stdout).contains("gso_max_segs 1 "),
                "{}",
                lossy(&link.stdout)
            );
        }
    }
}

#[test]
fn links_with_nothing_to_emulate_are_refused_before_anything_is_built() {
    let _turn = shared();
    // Parsing and the emulation are checked before root is needed or a namespace made.
    let o = dualperf(&["lab", "up", "--link", "loopback", "--name", "lnkNOPE"]);
    assert!(!o.status.success());
    assert!(
        lossy(&o.stderr).contains("nothing to emulate"),
        "{}",
        lossy(&o.stderr)
    );
    let o = dualperf(&["lab", "up", "--link", "802.11g:55", "--name", "lnkNOPE"]);
    assert!(!o.status.success());
    assert!(
        lossy(&o.stderr).contains("6, 9, 12, 18, 24, 36, 48 or 54"),
        "{}",
        lossy(&o.stderr)
    );
    let o = dualperf(&[
        "lab",
        "up",
        "--link",
        "802.11g:54",
        "--rate",
        "10mbit",
        "--name",
        "lnkNOPE",
    ]);
    assert!(!o.status.success());
    assert!(
        lossy(&o.stderr).contains("cannot be used with"),
        "{}",
        lossy(&o.stderr)
    );
}

/// `study --lab-link`: UDP goes one datagram per call (a GSO batch would pay the
/// emulated frame's airtime once for all its datagrams: a default study measured about
/// 300 % of the model at 512 bytes), `--udp-datapath gso` is refused before anything is
/// created, and the report sets the results against the emulated link's model.
#[test]
fn a_study_over_an_emulated_link_sends_one_datagram_per_call_and_is_set_against_the_model() {
    let _turn = shared();
    if !root_or_skip("dualperf study --lab-link tests") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("wifi.db");
    let db_arg = db.to_str().expect("utf-8 path");
    let study = |extra: &[&str]| {
        let mut args = vec![
            "study",
            "--lab",
            "p2p",
            "--lab-link",
            "802.11g:54",
            "--tests",
            "udp-stream",
            "--sizes",
            "512",
            "--families",
            "4",
            "--runs",
            "2",
            "--quiet",
            "--db",
            db_arg,
        ];
        args.extend_from_slice(extra);
        dualperf(&args)
    };
    let refused = study(&["--udp-datapath", "gso"]);
    assert!(!refused.status.success(), "gso accepted");
    let why = lossy(&refused.stderr);
    assert!(
        why.contains("--lab-link") && why.contains("per-datagram"),
        "{why}"
    );
    assert!(!db.exists(), "a refused study created {}", db.display());

    let ok = study(&[]);
    assert!(ok.status.success(), "{}", lossy(&ok.stderr));
    let export = dualperf(&["export", "--db", db_arg]);
    assert!(export.status.success(), "{}", lossy(&export.stderr));
    let csv = lossy(&export.stdout);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let col = header
        .iter()
        .position(|c| *c == "client_udp_datapath")
        .expect("client_udp_datapath column");
    let mut rows = 0;
    for line in lines {
        let datapath = line.split(',').nth(col).unwrap_or("");
        assert!(
            !datapath.contains("gso") && !datapath.contains("mmsg"),
            "a batched send over an emulated link: {datapath}"
        );
        rows += 1;
    }
    assert!(rows > 0, "nothing exported:\n{csv}");

    let out = dir.path().join("report");
    let report = dualperf(&[
        "report",
        "--no-png",
        "--db",
        db_arg,
        "--out",
        out.to_str().expect("utf-8"),
    ]);
    assert!(report.status.success(), "{}", lossy(&report.stderr));
    let md = std::fs::read_to_string(out.join("tables/wifi-airtime.md")).expect("a Wi-Fi table");
    let mut table = md.lines().filter(|l| l.starts_with('|'));
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect()
    };
    let head = cells(table.next().expect("a header row"));
    let pct = head
        .iter()
        .position(|c| c == "IPv4 % of max")
        .expect("IPv4 % of max");
    let mut seen = 0;
    for row in table.skip(1) {
        let value: f64 = cells(row)[pct].parse().unwrap_or_else(|_| panic!("{row}"));
        // One frame per datagram: at most the shaper's bucket above the model (a few
        // per cent over a run); a GSO batch measured about three times the model. No
        // lower bound: a loaded host may send less, which is not what this checks.
        assert!(
            value > 0.0 && value < 110.0,
            "{value} % of the model: {row}"
        );
        seen += 1;
    }
    assert_eq!(seen, 1, "{md}");
    assert!(md.contains("emulated by the lab"), "{md}");
}

#[test]
fn a_run_over_an_emulated_link_names_it_with_the_models_ceiling_and_not_as_wired() {
    let _turn = shared();
    if !root_or_skip("dualperf run --lab-link tests") {
        return;
    }
    let o = dualperf(&[
        "run",
        "--lab",
        "p2p",
        "--lab-link",
        "802.11g:54",
        "-t",
        "tcp-stream",
        "-f",
        "6",
        "-s",
        "1408",
        "-d",
        "1",
    ]);
    let out = lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", lossy(&o.stderr));
    let phy = match model::link::parse("802.11g:54") {
        Ok(model::Link::Wifi(p)) => p,
        other => panic!("{other:?}"),
    };
    let ceiling = model::wifi::estimate(
        &phy,
        &Assumptions::default(),
        wire::spec::Family::V6,
        wire::spec::Transport::Tcp,
        1408,
    )
    .expect("the model answers")
    .goodput_bps;
    assert!(
        out.contains("802.11g:54, tbf-shaped veths in the lab"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{:.2} Mbit/s goodput for IPv6 TCP 1408 B",
            ceiling / 1e6
        )),
        "{out}"
    );
    assert!(out.contains("the airtime of TCP's acks"), "{out}");
    assert!(
        !out.contains("kind=wired"),
        "a veth's state as the link's: {out}"
    );
}
