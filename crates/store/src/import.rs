//! Merging another results database into this one (`dualperf import`): campaigns made
//! on other hosts come over with their hosts' metadata, cells, runs, metrics and
//! samples under new ids. Either side may be SQLite or PostgreSQL. A campaign is
//! recognised by its uuid, so importing the same database twice adds nothing the
//! second time. The whole import is one transaction.

use crate::backend::params;
use crate::write::{insert_campaign, insert_cells, insert_host, insert_run};
use crate::{CellRecord, DbTarget, NewCampaign, NewRun, Store, StoreError};
use std::path::Path;

/// What an import did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportSummary {
    /// (id in the other file, new id here) of each campaign brought over.
    pub imported: Vec<(i64, i64)>,
    /// Ids (in the other file) of campaigns already present here.
    pub skipped: Vec<i64>,
    pub runs: usize,
}

impl Store {
    /// Merge every campaign of the SQLite file at `other` that is not here yet.
    pub fn import_from(&mut self, other: &Path) -> Result<ImportSummary, StoreError> {
        self.import_from_target(&DbTarget::Sqlite(other.to_path_buf()))
    }

    /// Merge every campaign of the database `other` names that is not here yet.
    pub fn import_from_target(&mut self, other: &DbTarget) -> Result<ImportSummary, StoreError> {
        self.check_writable("import campaigns")?;
        let src = Store::open_target_read_only(other)?;
        self.import_store(&src, &other.to_string())
    }

    /// Merge every campaign of `src` (named `source_name` in `imported_from`).
    pub fn import_store(
        &mut self,
        src: &Store,
        source_name: &str,
    ) -> Result<ImportSummary, StoreError> {
        self.check_writable("import campaigns")?;
        let mut summary = ImportSummary::default();
        let tx = self.conn.transaction()?;
        for c in src.campaigns()? {
            let extra = src.campaign_extra(c.id)?;
            let present = tx.query_opt(
                "SELECT id FROM campaigns WHERE uuid = ?1",
                params![&extra.uuid],
            )?;
            if present.is_some() {
                summary.skipped.push(c.id);
                continue;
            }
            let new_campaign = NewCampaign {
                label: c.label.clone(),
                created_unix_s: c.created_unix_s,
                command_line: c.command_line.clone(),
                spec_json: c.spec_json.clone(),
                dualperf_version: extra.dualperf_version.clone(),
                git_revision: extra.git_revision.clone(),
            };
            let from = extra
                .imported_from
                .clone()
                .unwrap_or(source_name.to_string());
            let new_id = insert_campaign(&tx, &new_campaign, &extra.uuid, Some(&from))?;
            tx.execute(
                "UPDATE campaigns SET finished = ?2 WHERE id = ?1",
                params![new_id, c.finished],
            )?;
            for h in &c.hosts {
                insert_host(&tx, new_id, h)?;
            }
            let cells: Vec<CellRecord> = src
                .cells(c.id)?
                .into_iter()
                .map(|cell| CellRecord {
                    campaign_id: new_id,
                    ..cell
                })
                .collect();
            insert_cells(&tx, &cells)?;
            for d in src.run_details(c.id)? {
                let samples = src.samples(d.run.id)?;
                insert_run(
                    &tx,
                    &NewRun {
                        campaign_id: new_id,
                        cell_index: d.cell_index,
                        repetition: d.run.repetition,
                        warmup: d.run.warmup,
                        attempt: d.attempt,
                        status: d.run.status,
                        metrics: d.run.metrics,
                        samples,
                        applied: d.applied,
                        started_unix_ns: d.run.started_unix_ns,
                        duration_ns: d.duration_ns,
                    },
                )?;
                summary.runs += 1;
            }
            summary.imported.push((c.id, new_id));
        }
        tx.commit()?;
        Ok(summary)
    }
}
