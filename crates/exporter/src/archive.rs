//! `--db`: each probe also stored in the results database through runner's monitoring
//! campaigns (`runner::monitor`): one campaign per module, one cell per family, each
//! family's run recorded as a study's journal records it, with the target as the run
//! attributes `probe.target` and `probe.addr`.

use crate::config::ProbeModule;
use crate::probe::ProbeOutcome;
use runner::monitor::{MonitoredRun, Monitoring};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use store::StoreError;
use study::Attempt;

pub use runner::monitor::monitoring_label as campaign_label;

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the archive's state is poisoned by an earlier panic")]
    Poisoned,
}

/// The monitoring campaigns, shared by the probes.
pub struct Archive {
    inner: Mutex<Monitoring>,
}

fn unix_ns(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos().min(i64::MAX as u128) as i64)
        .unwrap_or(0)
}

impl Archive {
    pub fn open(target: &store::DbTarget) -> Result<Archive, StoreError> {
        Ok(Archive {
            inner: Mutex::new(Monitoring::open(target)?),
        })
    }

    /// Campaigns this exporter has made and keeps in memory (one per module probed).
    pub fn campaigns_made(&self) -> usize {
        self.inner.lock().map(|i| i.campaigns_made()).unwrap_or(0)
    }

    /// Store one probe of `module` at `target` (`host:port` as the scrape named it) that
    /// began at `started`: a run of the module's campaign per family, repetition the
    /// probe's number. A family that was not run is a failed run of no length, placed
    /// where the one before it ended; a failure's reason is its label and message.
    pub fn record(
        &self,
        module: &ProbeModule,
        target: &str,
        started: SystemTime,
        p: &ProbeOutcome,
    ) -> Result<(), ArchiveError> {
        let mut at = unix_ns(started);
        let mut ended = Vec::with_capacity(p.families.len());
        for o in &p.families {
            let Some(cell_index) = module.specs().position(|s| s.family == o.family) else {
                continue;
            };
            let duration = o.duration.unwrap_or_default();
            let started_unix_ns = o.started_unix_ns.unwrap_or(at);
            at = started_unix_ns
                .saturating_add(duration.max(Duration::from_nanos(1)).as_nanos() as i64);
            let attempt = Attempt {
                started_unix_ns,
                duration_ns: duration.as_nanos().min(i64::MAX as u128) as i64,
                result: match &o.result {
                    Ok(out) => Ok(out.clone()),
                    Err(f) => Err(format!("{}: {}", f.reason.label(), f.message).into()),
                },
            };
            let attributes = BTreeMap::from([
                ("probe.target".to_string(), target.to_string()),
                (
                    "probe.addr".to_string(),
                    o.addr.map(|a| a.to_string()).unwrap_or_default(),
                ),
            ]);
            ended.push(MonitoredRun {
                cell_index,
                attempt,
                attributes,
            });
        }
        let mut inner = self.inner.lock().map_err(|_| ArchiveError::Poisoned)?;
        inner.record(&module.name, &module.runs, &ended)?;
        Ok(())
    }
}
