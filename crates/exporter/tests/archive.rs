//! `--db`: probes stored as runs of a monitoring campaign per module, one cell per
//! family, the target a run attribute, readable by the store as a study's runs are; the
//! archive does not grow with the number of distinct targets.

mod common;

use common::*;
use engine::EmbeddedServer;
use std::path::Path;
use wire::spec::Family;

fn archived_exporter(db: &Path, config: &str) -> exporter::Running {
    let archive =
        exporter::archive::Archive::open(&store::DbTarget::Sqlite(db.to_path_buf())).unwrap();
    let cfg = exporter::Config::from_toml_str(config, Path::new("t")).unwrap();
    exporter::start_with_archive(
        cfg,
        exporter::WebConfig::none(),
        "127.0.0.1:0".parse().unwrap(),
        exporter::ServerOptions::default(),
        Some(archive),
    )
    .unwrap()
}

#[test]
fn probes_are_stored_as_runs_of_a_monitoring_campaign() {
    let srv = EmbeddedServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("monitoring.db");
    let ex = archived_exporter(&db, &config_text(""));
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
    assert_eq!(campaigns.len(), 1, "{campaigns:?}");
    let c = &campaigns[0];
    assert_eq!(c.label, "monitoring udp_rr_short");
    let cells = store.cells(c.id).unwrap();
    let fams: Vec<Family> = cells.iter().map(|c| c.family).collect();
    assert_eq!(fams, [Family::V4, Family::V6]);
    let runs = store.run_details(c.id).unwrap();
    assert_eq!(runs.len(), 6, "{runs:?}");
    // Repetition n is the module's probe n: both families of each probe.
    for rep in 0..3 {
        assert_eq!(
            runs.iter().filter(|r| r.run.repetition == rep).count(),
            2,
            "{runs:?}"
        );
    }
    let of = |t: &str| -> Vec<&store::RunDetail> {
        runs.iter()
            .filter(|r| r.applied.get("probe.target").map(String::as_str) == Some(t))
            .collect()
    };
    let ok = of(&target);
    assert_eq!(ok.len(), 4, "{runs:?}");
    for r in ok {
        if r.run.family == Family::V6 && !srv.has_ipv6() {
            continue;
        }
        assert!(r.run.status.is_ok(), "{r:?}");
        // Stored as a study's journal stores a run: with what each side applied.
        assert!(r.applied.keys().any(|k| k.starts_with("client.")), "{r:?}");
        assert!(r.applied.keys().any(|k| k.starts_with("server.")), "{r:?}");
        let rtt = r
            .run
            .metrics
            .get(wire::metrics::RTT_MEAN_NS)
            .copied()
            .unwrap_or(0.0);
        assert!(rtt > 0.0, "{r:?}");
    }
    let failed = of(&down);
    assert_eq!(failed.len(), 2, "{runs:?}");
    let reasons: Vec<String> = failed
        .iter()
        .map(|r| match &r.run.status {
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

#[test]
fn many_distinct_targets_make_one_campaign_per_module() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("monitoring.db");
    let ex = archived_exporter(&db, &config_text(""));
    // Distinct loopback addresses, all admitted by the default allow-list; nothing
    // listens on port 1, so each probe fails at once.
    let targets: Vec<String> = (0..40)
        .map(|i| format!("127.0.{}.{}:1", i / 8, 1 + i % 8))
        .collect();
    for (i, t) in targets.iter().enumerate() {
        let module = if i % 2 == 0 {
            "tcp_short"
        } else {
            "udp_rr_short"
        };
        let r = get(
            ex.local_addr(),
            &format!("/probe?target={t}&module={module}"),
            &[],
        );
        assert_eq!(r.status, 200, "{t}: {}", r.body);
    }
    drop(ex);
    let store = store::Store::open_read_only(&db).unwrap();
    let mut labels: Vec<String> = store
        .campaigns()
        .unwrap()
        .into_iter()
        .map(|c| c.label)
        .collect();
    labels.sort();
    assert_eq!(labels, ["monitoring tcp_short", "monitoring udp_rr_short"]);
    // Every probe is there, told apart by its target.
    let mut stored: Vec<String> = store
        .campaigns()
        .unwrap()
        .iter()
        .flat_map(|c| store.run_details(c.id).unwrap())
        .filter(|r| r.run.family == Family::V4)
        .map(|r| r.applied["probe.target"].clone())
        .collect();
    stored.sort();
    let mut want = targets.clone();
    want.sort();
    assert_eq!(stored, want);
}

#[test]
fn the_archive_keeps_one_entry_per_module_whatever_the_targets() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("monitoring.db");
    let archive = exporter::archive::Archive::open(&store::DbTarget::Sqlite(db.clone())).unwrap();
    let module = exporter::Config::default().modules["udp_rr"].clone();
    let failed = exporter::probe::ProbeOutcome {
        families: vec![exporter::probe::FamilyOutcome {
            family: Family::V4,
            addr: None,
            duration: None,
            started_unix_ns: None,
            result: Err(exporter::probe::Failure {
                reason: exporter::probe::Reason::Refused,
                message: "refused".into(),
            }),
        }],
        headline: wire::metrics::RTT_MEAN_NS,
    };
    for i in 0..1000u32 {
        let target = format!("127.{}.{}.{}:1", i >> 16, (i >> 8) & 255, i & 255);
        archive
            .record(&module, &target, std::time::SystemTime::now(), &failed)
            .unwrap();
    }
    assert_eq!(archive.campaigns_made(), 1);
    drop(archive);
    let store = store::Store::open_read_only(&db).unwrap();
    let campaigns = store.campaigns().unwrap();
    assert_eq!(campaigns.len(), 1);
    assert_eq!(store.runs(campaigns[0].id).unwrap().len(), 1000);
}
