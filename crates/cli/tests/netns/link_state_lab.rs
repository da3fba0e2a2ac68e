//! The link state (`net::wifi`) of a lab run: each end reads its namespace's veth as a
//! wired link (asked in the namespace, not in the host's /sys). Needs root (skips with
//! a reason outside CI).

use crate::support::shared;

#[test]
fn a_lab_run_reads_each_ends_veth_in_its_namespace_as_wired() {
    let _turn = shared();
    if !crate::support::labs_or_skip() {
        return;
    }
    let o = std::process::Command::new(crate::support::BIN)
        .args([
            "run",
            "--lab",
            "p2p",
            "-t",
            "tcp-stream",
            "-d",
            "0.2",
            "--json",
        ])
        .output()
        .expect("the dualperf binary runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("--json prints JSON");
    for side in ["client", "server"] {
        let a = &v[side]["applied"];
        for phase in ["before", "after"] {
            assert_eq!(a[format!("link.{phase}.kind")], "wired", "{side}: {a}");
            let iface = a[format!("link.{phase}.iface")]
                .as_str()
                .unwrap_or_default();
            assert!(iface.starts_with("dp-"), "{side}: {a}");
        }
    }
}
