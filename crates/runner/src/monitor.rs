//! Monitoring campaigns: repeated runs of the same tests (the exporter's probes of a
//! module) kept in the results store as runs of one campaign per name, one cell per
//! run of the set (per family), repetition n the set's n-th time, and what the run was
//! aimed at as run attributes. Each run is recorded as a study's journal records it
//! ([`crate::campaign::run_record`]), so `report`, `export` and the `run_results` view
//! read monitoring data as they read a study's.
//!
//! Growth: one campaign per name for each [`Monitoring`] (the names are the
//! configuration's, however many targets there are), one run per cell and time; in
//! memory one entry per name.

use crate::campaign::{cell_records, run_record};
use crate::single::Single;
use std::collections::{BTreeMap, HashMap};
use store::{DbTarget, NewCampaign, Store, StoreError};
use study::{Attempt, Finished, Slot};

/// The label of a monitoring campaign named `name` (an exporter module).
pub fn monitoring_label(name: &str) -> String {
    format!("monitoring {name}")
}

/// One run of a monitored set, as it ended.
#[derive(Debug)]
pub struct MonitoredRun {
    /// Which of the set's runs it is (its cell).
    pub cell_index: usize,
    pub attempt: Attempt,
    /// Stored beside what each side applied (e.g. `probe.target`, `probe.addr`).
    pub attributes: BTreeMap<String, String>,
}

/// The open results store and the monitoring campaigns made so far.
pub struct Monitoring {
    store: Store,
    /// Name → (campaign id, the next repetition: the set's times so far).
    campaigns: HashMap<String, (i64, u32)>,
}

impl Monitoring {
    pub fn open(db: &DbTarget) -> Result<Monitoring, StoreError> {
        Ok(Monitoring {
            store: Store::open_target(db)?,
            campaigns: HashMap::new(),
        })
    }

    /// Campaigns made and kept in memory (one per name recorded).
    pub fn campaigns_made(&self) -> usize {
        self.campaigns.len()
    }

    /// Records one time of the set `runs` named `name` (its campaign made on the first):
    /// each of `ended` as a run of its cell, repetition this time's number.
    pub fn record(
        &mut self,
        name: &str,
        runs: &[Single],
        ended: &[MonitoredRun],
    ) -> Result<(), StoreError> {
        let (campaign_id, repetition) = match self.campaigns.get(name) {
            Some(&c) => c,
            None => (self.new_campaign(name, runs)?, 0),
        };
        self.campaigns
            .insert(name.to_string(), (campaign_id, repetition.wrapping_add(1)));
        for r in ended {
            let Some(single) = runs.get(r.cell_index) else {
                continue;
            };
            let cell_index = r.cell_index as u32;
            let finished = Finished {
                cell: single.cell(),
                slot: Slot {
                    round: repetition,
                    cell_index,
                    warmup: false,
                    repetition,
                },
                attempt: 0,
                run: &r.attempt,
            };
            let mut run = run_record(campaign_id, &finished);
            run.cell_index = cell_index;
            run.applied.extend(r.attributes.clone());
            self.store.record_run(&run)?;
        }
        Ok(())
    }

    /// The campaign of `name`: not a study (its spec is empty, as for an iperf3 peer's
    /// readers that expect one), one cell per run of the set.
    fn new_campaign(&mut self, name: &str, runs: &[Single]) -> Result<i64, StoreError> {
        let id = self.store.create_campaign(&NewCampaign {
            label: monitoring_label(name),
            created_unix_s: crate::target::now_unix_ns() / 1_000_000_000,
            command_line: crate::campaign::command_line(),
            spec_json: "{}".into(),
            dualperf_version: env!("CARGO_PKG_VERSION").into(),
            git_revision: String::new(),
        })?;
        let cells: Vec<store::CellRecord> = runs
            .iter()
            .enumerate()
            .filter_map(|(i, single)| {
                let mut cell = cell_records(id, single.spec()).into_iter().next()?;
                cell.cell_index = i as u32;
                Some(cell)
            })
            .collect();
        self.store.add_cells(&cells)?;
        Ok(id)
    }
}
