//! Monitoring campaigns: repeated runs of one set of tests kept as one campaign, each
//! run stored as a study's journal stores it, with the attributes the caller gives.

use crate::support::Db;
use runner::monitor::{monitoring_label, MonitoredRun, Monitoring};
use runner::{OneTest, RunTest, TestOptions};
use std::collections::BTreeMap;
use study::{Attempt, RunOutput};
use wire::spec::{Family, TestKind};

fn set() -> Vec<runner::Single> {
    [Family::V4, Family::V6]
        .into_iter()
        .map(|family| {
            let one = OneTest {
                test: RunTest::One(TestKind::UdpRr),
                family,
                size_bytes: Some(64),
                traffic_seed: None,
                rate_search: false,
            };
            runner::resolve_single(&TestOptions::default(), &one).unwrap()
        })
        .collect()
}

fn ended(cell_index: usize, ok: bool, target: &str) -> MonitoredRun {
    let result = if ok {
        Ok(RunOutput {
            metrics: [("rtt_mean_ns".to_string(), 5000.0)].into(),
            applied: [("client.sndbuf_bytes".to_string(), "4096".to_string())].into(),
            ..RunOutput::default()
        })
    } else {
        Err("refused: nothing listens".to_string().into())
    };
    MonitoredRun {
        cell_index,
        attempt: Attempt {
            started_unix_ns: 1_000 + cell_index as i64,
            duration_ns: 7,
            result,
        },
        attributes: BTreeMap::from([("probe.target".to_string(), target.to_string())]),
    }
}

#[test]
fn a_named_set_is_one_campaign_and_each_time_a_repetition_of_its_cells() {
    let db = Db::new();
    let runs = set();
    let mut m = Monitoring::open(&db.target).unwrap();
    for target in ["a:1", "b:1", "c:1"] {
        m.record(
            "udp_rr",
            &runs,
            &[ended(1, true, target), ended(0, false, target)],
        )
        .unwrap();
    }
    m.record("other", &runs[..1], &[ended(0, true, "a:1")])
        .unwrap();
    assert_eq!(m.campaigns_made(), 2);
    drop(m);
    let store = db.open();
    let campaigns = store.campaigns().unwrap();
    let c = campaigns
        .iter()
        .find(|c| c.label == monitoring_label("udp_rr"))
        .unwrap();
    let fams: Vec<Family> = store
        .cells(c.id)
        .unwrap()
        .iter()
        .map(|c| c.family)
        .collect();
    assert_eq!(fams, [Family::V4, Family::V6]);
    let runs = store.run_details(c.id).unwrap();
    assert_eq!(runs.len(), 6);
    for (rep, target) in ["a:1", "b:1", "c:1"].into_iter().enumerate() {
        let time: Vec<_> = runs
            .iter()
            .filter(|r| r.run.repetition == rep as u32)
            .collect();
        assert_eq!(time.len(), 2, "{runs:?}");
        for r in time {
            assert_eq!(r.applied["probe.target"], target);
            match r.run.family {
                Family::V6 => {
                    assert!(r.run.status.is_ok(), "{r:?}");
                    assert_eq!(r.run.metrics["rtt_mean_ns"], 5000.0);
                    assert_eq!(r.applied["client.sndbuf_bytes"], "4096");
                    assert_eq!(r.run.started_unix_ns, 1_001);
                }
                Family::V4 => assert_eq!(
                    r.run.status,
                    store::RunStatus::Failed {
                        reason: "refused: nothing listens".into()
                    }
                ),
            }
        }
    }
}
