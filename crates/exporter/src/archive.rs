//! `--db`: each probe also stored in the results database (crate `store`), as runs of a
//! monitoring campaign per module and target (one cell per family), so `dualperf
//! report`, `export` and the `run_results` view see monitoring data too.

use crate::config::ProbeModule;
use crate::probe::ProbeOutcome;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use store::{CellRecord, NewCampaign, NewRun, RunStatus, Store, StoreError};

/// Most campaigns one exporter creates (modules × targets); probes beyond are not stored.
pub const MAX_CAMPAIGNS: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "{MAX_CAMPAIGNS} monitoring campaigns made by this exporter; restart it to store more"
    )]
    Full,
    #[error("the archive's state is poisoned by an earlier panic")]
    Poisoned,
}

/// The open database and the campaigns made so far.
pub struct Archive {
    inner: Mutex<Inner>,
}

struct Inner {
    store: Store,
    /// (module, target) → (campaign id, next repetition).
    campaigns: HashMap<(String, String), (i64, u32)>,
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

    /// Store one probe of `module` at `target` (`host:port`) that began at `started`.
    pub fn record(
        &self,
        module: &ProbeModule,
        target: &str,
        started: SystemTime,
        p: &ProbeOutcome,
    ) -> Result<(), ArchiveError> {
        let mut inner = self.inner.lock().map_err(|_| ArchiveError::Poisoned)?;
        let Inner { store, campaigns } = &mut *inner;
        let key = (module.name.clone(), target.to_string());
        let (campaign_id, repetition) = match campaigns.get(&key) {
            Some(&c) => c,
            None => {
                if campaigns.len() >= MAX_CAMPAIGNS {
                    return Err(ArchiveError::Full);
                }
                let id = new_campaign(store, module, target, started)?;
                (id, 0)
            }
        };
        campaigns.insert(key, (campaign_id, repetition.wrapping_add(1)));
        let mut at = unix_ns(started);
        for o in &p.families {
            let Some(cell_index) = module.specs.iter().position(|s| s.family == o.family) else {
                continue;
            };
            let (status, metrics) = match &o.result {
                Ok(ms) => (
                    RunStatus::Ok,
                    ms.iter().map(|x| (x.name.clone(), x.value)).collect(),
                ),
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

fn new_campaign(
    store: &mut Store,
    module: &ProbeModule,
    target: &str,
    started: SystemTime,
) -> Result<i64, StoreError> {
    let id = store.create_campaign(&NewCampaign {
        label: format!("monitoring {} {target}", module.name),
        created_unix_s: unix_ns(started) / 1_000_000_000,
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        // Not a study: readers that expect a study spec find none, as for iperf3 peers.
        spec_json: "{}".into(),
        dualperf_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: String::new(),
    })?;
    let cells: Vec<CellRecord> = module
        .specs
        .iter()
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
