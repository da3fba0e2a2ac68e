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
