//! The link state (`net::wifi`) recorded with every run, both ends, before and after:
//! a loopback run says loopback on each side in `run --json`, in the text summary, and
//! in a study's stored per-run settings. (Labs: `link_state_lab.rs`.)

use crate::support::engine::*;

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
    let o = dualperf()
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

/// A campaign whose runs recorded a transmit MCS that changed: the report warns, naming
/// the side and the values; the same campaign with one MCS does not.
#[test]
fn the_report_warns_when_the_wifi_link_changed_during_a_campaign() {
    let _turn = shared();
    use store::{CellRecord, NewCampaign, NewRun, RunStatus, Store};
    use wire::spec::{Direction, Family, TestKind};
    let dir = tempfile::tempdir().unwrap();
    for (name, mcs, warned) in [
        ("moved", ["9", "9", "7"], true),
        ("steady", ["9"; 3], false),
    ] {
        let db = dir.path().join(format!("{name}.db"));
        let mut s = Store::open(&db).unwrap();
        let id = s
            .create_campaign(&NewCampaign {
                label: name.into(),
                created_unix_s: 1_700_000_000,
                command_line: "dualperf study".into(),
                spec_json: "{}".into(),
                dualperf_version: "0.1.0".into(),
                git_revision: "test".into(),
            })
            .unwrap();
        let families = [Family::V4, Family::V6];
        let cells: Vec<CellRecord> = (0..2)
            .map(|i| CellRecord {
                campaign_id: id,
                cell_index: i,
                family: families[i as usize],
                kind: TestKind::TcpStream,
                payload_bytes: 1024,
                direction: Direction::Forward,
                spec_json: "{}".into(),
                target_met: None,
            })
            .collect();
        s.add_cells(&cells).unwrap();
        for cell in 0..2u32 {
            for (rep, mcs) in mcs.iter().enumerate() {
                let tput = 500e6 + 1e6 * f64::from(rep as u32) + 3e6 * f64::from(cell);
                s.record_run(&NewRun {
                    campaign_id: id,
                    cell_index: cell,
                    repetition: rep as u32,
                    warmup: false,
                    attempt: 0,
                    status: RunStatus::Ok,
                    metrics: [
                        (wire::metrics::THROUGHPUT_BPS.to_string(), tput),
                        (wire::metrics::DURATION_S.to_string(), 1.0),
                    ]
                    .into(),
                    samples: Vec::new(),
                    applied: [
                        ("client.link.before.kind".to_string(), "wifi".to_string()),
                        ("client.link.before.tx_mcs".to_string(), mcs.to_string()),
                        ("client.link.after.tx_mcs".to_string(), mcs.to_string()),
                    ]
                    .into(),
                    started_unix_ns: 1_700_000_000_000_000_000 + rep as i64,
                    duration_ns: 1_000_000_000,
                })
                .unwrap();
            }
        }
        drop(s);
        let o = dualperf()
            .args(["report", "--db"])
            .arg(&db)
            .args(["--format", "markdown"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            text.contains("the Wi-Fi link changed during the campaign (client transmit MCS 7, 9)"),
            warned,
            "{name}:\n{text}"
        );
    }
}
