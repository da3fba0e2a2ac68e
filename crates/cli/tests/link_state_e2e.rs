//! The link state (`net::wifi`) recorded with every run, both ends, before and after:
//! a loopback run says loopback on each side in `run --json`, in the text summary, and
//! in a study's stored per-run settings. (Labs: `link_state_lab.rs`.)

mod engine_common;
use engine_common::*;

fn assert_loopback_link(applied: &serde_json::Value, what: &str) {
    for phase in ["before", "after"] {
        assert_eq!(
            applied[format!("link.{phase}.kind")],
            "loopback",
            "{what}: {applied}"
        );
        let why = applied[format!("link.{phase}.unavailable")]
            .as_str()
            .unwrap_or_default();
        assert!(
            why.contains("tx_mcs") && why.contains("not a wireless interface"),
            "{what}: {why}"
        );
        assert!(applied.get(format!("link.{phase}.tx_mcs")).is_none());
    }
}

#[test]
fn a_loopback_run_records_a_loopback_link_on_both_ends_before_and_after() {
    let _turn = serial();
    for (fam, _) in families() {
        let v = run_json(&["-t", "tcp-stream", "-f", fam, "-d", "0.2"], &[]);
        for side in ["client", "server"] {
            assert_loopback_link(&v[side]["applied"], &format!("{fam} {side}"));
        }
    }
    let o = run(&["run", "-t", "udp-rr", "-d", "0.2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for side in ["client", "server"] {
        let line = text
            .lines()
            .find(|l| {
                l.trim_start()
                    .starts_with(&format!("link ({side}, as applied)"))
            })
            .unwrap_or_else(|| panic!("no {side} link line:\n{text}"));
        assert!(line.contains("link.before.kind=loopback"), "{line}");
        assert!(line.contains("link.after.kind=loopback"), "{line}");
    }
    assert!(
        !text.contains("socket (client, as applied) link."),
        "{text}"
    );
}

#[test]
fn a_study_stores_the_link_of_every_run() {
    let _turn = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("link.db").display().to_string();
    let o = bin()
        .args([
            "study",
            "--sizes",
            "128",
            "--runs",
            "2",
            "--duration",
            "0.2",
        ])
        .args([
            "--tests",
            "tcp-stream,udp-rr",
            "--families",
            "4",
            "--db",
            &db,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let c = &s.campaigns().unwrap()[0];
    let applied = s.applied_of_campaign(c.id).unwrap();
    let runs = s.runs(c.id).unwrap();
    let ok: Vec<_> = runs.iter().filter(|r| r.status.is_ok()).collect();
    assert!(ok.len() >= 4, "{} runs ok", ok.len());
    for r in ok {
        let a = &applied[&r.id];
        for key in [
            "client.link.before.kind",
            "client.link.after.kind",
            "server.link.before.kind",
            "server.link.after.kind",
        ] {
            assert_eq!(
                a.get(key).map(String::as_str),
                Some("loopback"),
                "{key}: {a:?}"
            );
        }
    }
}
