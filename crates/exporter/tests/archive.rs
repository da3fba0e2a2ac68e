//! `--db`: probes stored as runs of a monitoring campaign per module and target, one
//! cell per family, readable by the store as a study's runs are.

mod common;

use common::*;
use engine::EmbeddedServer;
use std::path::Path;
use wire::spec::Family;

#[test]
fn probes_are_stored_as_runs_of_a_monitoring_campaign() {
    let srv = EmbeddedServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("monitoring.db");
    let archive = exporter::archive::Archive::open(&store::DbTarget::Sqlite(db.clone())).unwrap();
    let cfg = exporter::Config::from_toml_str(&config_text(""), Path::new("t")).unwrap();
    let ex = exporter::start_with_archive(
        cfg,
        exporter::WebConfig::none(),
        "127.0.0.1:0".parse().unwrap(),
        exporter::ServerOptions::default(),
        Some(archive),
    )
    .unwrap();
    let target = format!("{DUAL_NAME}:{}", srv.port());
    for _ in 0..2 {
        let r = get(
            ex.local_addr(),
            &format!("/probe?target={target}&module=udp_rr_short"),
            &[],
        );
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let down = format!("127.0.0.1:{}", closed_port());
    let r = get(
        ex.local_addr(),
        &format!("/probe?target={down}&module=udp_rr_short"),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    drop(ex);

    let store = store::Store::open_read_only(&db).unwrap();
    let campaigns = store.campaigns().unwrap();
    assert_eq!(campaigns.len(), 2, "{campaigns:?}");
    let ok = campaigns
        .iter()
        .find(|c| c.label == format!("monitoring udp_rr_short {target}"))
        .unwrap();
    let cells = store.cells(ok.id).unwrap();
    let fams: Vec<Family> = cells.iter().map(|c| c.family).collect();
    assert_eq!(fams, [Family::V4, Family::V6]);
    let runs = store.runs(ok.id).unwrap();
    assert_eq!(runs.len(), 4, "{runs:?}");
    let reps: Vec<u32> = runs.iter().map(|r| r.repetition).collect();
    assert_eq!(reps.iter().filter(|&&r| r == 0).count(), 2, "{reps:?}");
    assert_eq!(reps.iter().filter(|&&r| r == 1).count(), 2, "{reps:?}");
    for r in &runs {
        if r.family == Family::V6 && !srv.has_ipv6() {
            continue;
        }
        assert!(r.status.is_ok(), "{r:?}");
        let rtt = r
            .metrics
            .get(wire::metrics::RTT_MEAN_NS)
            .copied()
            .unwrap_or(0.0);
        assert!(rtt > 0.0, "{r:?}");
    }
    let failed = campaigns
        .iter()
        .find(|c| c.label == format!("monitoring udp_rr_short {down}"))
        .unwrap();
    let runs = store.runs(failed.id).unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let reasons: Vec<String> = runs
        .iter()
        .map(|r| match &r.status {
            store::RunStatus::Failed { reason } => reason.clone(),
            s => panic!("{s:?}"),
        })
        .collect();
    assert!(
        reasons.iter().any(|r| r.starts_with("refused: ")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.starts_with("no_address: ")),
        "{reasons:?}"
    );
}
