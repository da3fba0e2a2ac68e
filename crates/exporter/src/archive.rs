//! `--db`: each probe also stored in the results database (crate `store`), as runs of a
//! monitoring campaign per module (one cell per family, the target a run attribute), so
//! `dualperf report`, `export` and the `run_results` view see monitoring data too.
//!
//! Growth: one campaign per module at each start of the exporter (the modules are the
//! configuration's, so however many targets are probed), one run per family and probe;
//! in memory one entry per module.

use crate::config::ProbeModule;
use crate::probe::ProbeOutcome;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use store::{CellRecord, NewCampaign, NewRun, RunStatus, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the archive's state is poisoned by an earlier panic")]
    Poisoned,
}

/// The open database and the campaigns made so far.
pub struct Archive {
    inner: Mutex<Inner>,
}

struct Inner {
    store: Store,
    /// Module → (campaign id, next repetition: the module's probes so far).
    campaigns: HashMap<String, (i64, u32)>,
}

fn unix_ns(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos().min(i64::MAX as u128) as i64)
        .unwrap_or(0)
}

impl Archive {
    pub fn open(target: &store::DbTarget) -> Result<Archive, StoreError> {
        Ok(Archive {
            inner: Mutex::new(Inner {
                store: Store::open_target(target)?,
                campaigns: HashMap::new(),
            }),
        })
    }

    /// Campaigns this exporter has made and keeps in memory (one per module probed).
    pub fn campaigns_made(&self) -> usize {
        self.inner.lock().map(|i| i.campaigns.len()).unwrap_or(0)
    }

    /// Store one probe of `module` at `target` (`host:port` as the scrape named it) that
    /// began at `started`: runs of the module's campaign, repetition the probe's number,
    /// the target in the run attribute `probe.target`.
    pub fn record(
        &self,
        module: &ProbeModule,
        target: &str,
        started: SystemTime,
        p: &ProbeOutcome,
    ) -> Result<(), ArchiveError> {
        let mut inner = self.inner.lock().map_err(|_| ArchiveError::Poisoned)?;
        let Inner { store, campaigns } = &mut *inner;
        let (campaign_id, repetition) = match campaigns.get(&module.name) {
            Some(&c) => c,
            None => (new_campaign(store, module, started)?, 0),
        };
        campaigns.insert(
            module.name.clone(),
            (campaign_id, repetition.wrapping_add(1)),
        );
        let mut at = unix_ns(started);
        for o in &p.families {
            let Some(cell_index) = module.specs().position(|s| s.family == o.family) else {
                continue;
            };
            let (status, metrics) = match &o.result {
                Ok(ms) => (RunStatus::Ok, ms.metrics.clone()),
                Err(f) => (
                    RunStatus::Failed {
                        reason: format!("{}: {}", f.reason.label(), f.message),
                    },
                    BTreeMap::new(),
                ),
            };
            let applied = BTreeMap::from([
                ("probe.target".to_string(), target.to_string()),
                (
                    "probe.addr".to_string(),
                    o.addr.map(|a| a.to_string()).unwrap_or_default(),
                ),
            ]);
            store.record_run(&NewRun {
                campaign_id,
                cell_index: cell_index as u32,
                repetition,
                warmup: false,
                attempt: 0,
                status,
                metrics,
                samples: Vec::new(),
                applied,
                started_unix_ns: at,
                duration_ns: o
                    .duration
                    .unwrap_or_default()
                    .as_nanos()
                    .min(i64::MAX as u128) as i64,
            })?;
            at = at.saturating_add(
                o.duration
                    .unwrap_or_default()
                    .max(Duration::from_nanos(1))
                    .as_nanos() as i64,
            );
        }
        Ok(())
    }
}

/// The label of a module's campaign.
pub fn campaign_label(module: &str) -> String {
    format!("monitoring {module}")
}

fn new_campaign(
    store: &mut Store,
    module: &ProbeModule,
    started: SystemTime,
) -> Result<i64, StoreError> {
    let id = store.create_campaign(&NewCampaign {
        label: campaign_label(&module.name),
        created_unix_s: unix_ns(started) / 1_000_000_000,
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        // Not a study: readers that expect a study spec find none, as for iperf3 peers.
        spec_json: "{}".into(),
        dualperf_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: String::new(),
    })?;
    let cells: Vec<CellRecord> = module
        .specs()
        .enumerate()
        .map(|(i, s)| CellRecord {
            campaign_id: id,
            cell_index: i as u32,
            family: s.family,
            kind: s.kind,
            payload_bytes: s.payload_bytes,
            direction: s.direction,
            spec_json: serde_json::to_string(s).unwrap_or_default(),
            target_met: None,
        })
        .collect();
    store.add_cells(&cells)?;
    Ok(id)
}
