//! For the `dualperf report` tests: a results database filled through the store API
//! with the report crate's fixed synthetic dataset (every run with ten interval
//! samples), and the directory where test artifacts (report, screenshots) are kept.

#[allow(unused_imports)]
pub use super::dualperf;
use report::{fixture, RunOutcome};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use store::{CellRecord, HostInfo, NewCampaign, NewRun, RunStatus, Store};

/// Write the fixture dataset (two campaigns, "Linux" and "Windows") into a new database
/// at `path`; returns the campaign ids in order.
pub fn fixture_db(path: &Path) -> Vec<i64> {
    dataset_db(path, &fixture::dataset())
}

/// The fixture for six systems (six campaigns) in a new database at `path`.
pub fn six_systems_db(path: &Path) -> Vec<i64> {
    let labels = [
        "Linux 6.8",
        "Windows 11",
        "FreeBSD 14.1",
        "macOS 15",
        "OpenBSD 7.6",
        "Linux 6.8 tuned",
    ];
    dataset_db(path, &fixture::systems(&labels))
}

/// An interval sample as the study stores it: counts by metric name.
fn stored_sample(s: &report::IntervalCounts) -> store::IntervalSample {
    let metrics = [
        (wire::metrics::SENT_BYTES, s.sent_bytes),
        (wire::metrics::RECV_BYTES, s.recv_bytes),
        (wire::metrics::SENT_PACKETS, s.sent_packets),
        (wire::metrics::RECV_PACKETS, s.recv_packets),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((k.to_string(), v?)))
    .collect();
    store::IntervalSample {
        start_ns: s.start_ns,
        end_ns: s.end_ns,
        metrics,
    }
}

/// A `--stats-window` sample as the study stores it: metrics prefixed `window_`.
fn stored_window(w: &report::WindowSample) -> store::IntervalSample {
    let metrics = [
        ("bitrate_bps", w.bitrate_bps),
        ("loss_pct", w.loss_pct),
        ("jitter_ns", w.jitter_ns),
        ("owd_mean_ns", w.owd_mean_ns),
    ]
    .into_iter()
    .filter_map(|(k, v)| Some((format!("{}{k}", report::WindowSample::PREFIX), v?)))
    .collect();
    store::IntervalSample {
        start_ns: w.start_ns,
        end_ns: w.end_ns,
        metrics,
    }
}

/// Write `data` into a new database at `path`, each run with the fixture's interval
/// samples; returns the campaign ids in order.
pub fn dataset_db(path: &Path, data: &report::Dataset) -> Vec<i64> {
    let mut store = Store::open(path).expect("create test database");
    let mut ids = Vec::new();
    for c in &data.campaigns {
        let id = store
            .create_campaign(&NewCampaign {
                label: c.label.clone(),
                created_unix_s: 1_700_000_000,
                command_line: format!("dualperf study --label {}", c.label),
                spec_json: "{}".to_string(),
                dualperf_version: "0.1.0".to_string(),
                git_revision: "test".to_string(),
            })
            .expect("create campaign");
        for (role, metadata) in &c.hosts {
            store
                .set_host(
                    id,
                    &HostInfo {
                        role: role.clone(),
                        metadata: metadata.clone(),
                    },
                )
                .expect("set host");
        }
        let keys: BTreeSet<_> = c
            .runs
            .iter()
            .map(|r| (r.kind, r.family, r.payload_bytes))
            .collect();
        let index: BTreeMap<_, u32> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (*k, i as u32))
            .collect();
        let cells: Vec<CellRecord> = keys
            .iter()
            .map(|&(kind, family, size)| CellRecord {
                campaign_id: id,
                cell_index: index[&(kind, family, size)],
                family,
                kind,
                payload_bytes: size,
                direction: wire::spec::Direction::Forward,
                spec_json: "{}".to_string(),
                target_met: None,
            })
            .collect();
        store.add_cells(&cells).expect("add cells");
        for (n, r) in c.runs.iter().enumerate() {
            store
                .record_run(&NewRun {
                    campaign_id: id,
                    cell_index: index[&(r.kind, r.family, r.payload_bytes)],
                    repetition: r.repetition,
                    warmup: r.warmup,
                    attempt: 0,
                    status: match &r.outcome {
                        RunOutcome::Ok => RunStatus::Ok,
                        RunOutcome::Failed(reason) => RunStatus::Failed {
                            reason: reason.clone(),
                        },
                    },
                    metrics: r.metrics.to_map(),
                    // A failed run stored no samples.
                    samples: match r.outcome {
                        RunOutcome::Ok => fixture::interval_samples(r, n as u64)
                            .iter()
                            .map(stored_sample)
                            .chain(
                                fixture::window_samples(r, n as u64)
                                    .iter()
                                    .map(stored_window),
                            )
                            .chain(fixture::loaded_samples(r, n as u64).iter().map(|s| {
                                store::IntervalSample {
                                    start_ns: s.start_ns,
                                    end_ns: s.end_ns,
                                    metrics: s.to_metrics(),
                                }
                            }))
                            .collect(),
                        RunOutcome::Failed(_) => Vec::new(),
                    },
                    applied: Default::default(),
                    started_unix_ns: 1_700_000_000_000_000_000 + n as i64,
                    duration_ns: 1_000_000_000,
                })
                .expect("record run");
        }
        store.set_finished(id, true).expect("finish campaign");
        ids.push(id);
    }
    ids
}

/// `target/test-artifacts/<name>`, created empty.
pub fn artifacts_dir(name: &str) -> PathBuf {
    let exe = PathBuf::from(super::BIN);
    let target = exe
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"));
    let dir = target.join("test-artifacts").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create artifacts dir");
    dir
}
