//! Merging another results database into this one (`dualperf import`): campaigns made
//! on other hosts come over with their hosts' metadata, cells, runs, metrics and
//! samples under new ids. Either side may be SQLite or PostgreSQL.
//!
//! A campaign is recognised by its uuid. One already here is merged: the runs this
//! database lacks are added, a run being known by its place in the campaign (cell,
//! warm-up or not, repetition, attempt: the key the schema holds unique), so importing
//! the same database twice adds nothing the second time and importing it again after
//! its campaign grew adds the new runs. A run here whose place matches but whose copy
//! there differs — another start time (both copies were resumed apart), or another
//! status, failure reason, duration or metric value (changed at the source) — is kept
//! as it is here, counted as a conflict, and the first few are named
//! ([`Merged::conflicts`]): an import never silently keeps a run that differs.
//!
//! What comes from the other database is checked as it is read: a campaign with a value
//! dualperf cannot read, or whose label `wire::text::check_name` refuses (over-long,
//! control characters), is skipped with its id and the reason while the others are
//! imported; hosts' metadata is capped with `wire::text::cap_metadata`. The whole
//! import is one transaction, each campaign in a savepoint of its own.

use crate::backend::{params, storable_text, Conn};
use crate::write::{insert_campaign, insert_cells, insert_host, insert_run};
use crate::{
    CellRecord, DbTarget, HostInfo, NewCampaign, NewRun, RunDetail, RunStatus, Store, StoreError,
};
use std::collections::HashMap;
use std::path::Path;

/// What an import did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportSummary {
    /// (id in the other database, new id here) of each campaign brought over.
    pub imported: Vec<(i64, i64)>,
    /// Campaigns already here, with the runs added to them.
    pub merged: Vec<Merged>,
    /// Campaigns not imported: (id in the other database, why).
    pub skipped: Vec<(i64, String)>,
    /// Runs added in all (to new and to merged campaigns).
    pub runs: usize,
}

/// A campaign that was already here (same uuid) and what the import added to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// Its id in the other database.
    pub from: i64,
    /// Its id here.
    pub into: i64,
    /// Runs this database lacked, now added.
    pub added_runs: usize,
    /// Runs at a place this database already holds whose copy there differs (start
    /// time, status, failure reason, duration or a metric): kept as they were here.
    pub conflicting_runs: usize,
    /// The first [`NAMED_CONFLICTS`] of them: where, and what differs.
    pub conflicts: Vec<String>,
}

/// How many differing runs an import names (it counts them all).
pub const NAMED_CONFLICTS: usize = 5;

/// Where an import step failed: reading the other database (that campaign is
/// skipped) or writing this one (the import stops, nothing is kept).
enum Failure {
    Source(String),
    Target(StoreError),
}

fn source(e: StoreError) -> Failure {
    Failure::Source(e.to_string())
}

fn target(e: StoreError) -> Failure {
    Failure::Target(e)
}

/// A run's place in its campaign: cell index, warm-up, repetition, attempt.
type RunKey = (u32, bool, u32, u32);

/// A run this database holds, as far as an import compares it (its metrics are read
/// when a run of the same place and start time comes).
struct Here {
    id: i64,
    started_unix_ns: i64,
    ok: bool,
    reason: Option<String>,
    duration_ns: i64,
}

impl Store {
    /// Merge every campaign of the SQLite file at `other`.
    pub fn import_from(&mut self, other: &Path) -> Result<ImportSummary, StoreError> {
        self.import_from_target(&DbTarget::Sqlite(other.to_path_buf()))
    }

    /// Merge every campaign of the database `other` names.
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
        self.import_campaigns(src, source_name, &[])
    }

    /// Merge the campaigns `only` names (by their ids in `src`; all when empty).
    pub fn import_campaigns(
        &mut self,
        src: &Store,
        source_name: &str,
        only: &[i64],
    ) -> Result<ImportSummary, StoreError> {
        self.check_writable("import campaigns")?;
        let ids = src.campaign_ids()?;
        if let Some(missing) = only.iter().find(|id| !ids.contains(id)) {
            return Err(StoreError::NoSuchCampaign(*missing));
        }
        let mut summary = ImportSummary::default();
        let tx = self.conn.transaction()?;
        for id in ids {
            if !only.is_empty() && !only.contains(&id) {
                continue;
            }
            tx.batch("SAVEPOINT import_campaign")?;
            match import_campaign(&tx, src, id, source_name, &mut summary) {
                Ok(()) => tx.batch("RELEASE SAVEPOINT import_campaign")?,
                Err(Failure::Source(why)) => {
                    tx.batch("ROLLBACK TO SAVEPOINT import_campaign")?;
                    tx.batch("RELEASE SAVEPOINT import_campaign")?;
                    summary.skipped.push((id, why));
                }
                Err(Failure::Target(e)) => return Err(e),
            }
        }
        tx.commit()?;
        Ok(summary)
    }
}

/// Bring campaign `id` of `src` over (new) or merge it (already here).
fn import_campaign(
    tx: &Conn,
    src: &Store,
    id: i64,
    source_name: &str,
    summary: &mut ImportSummary,
) -> Result<(), Failure> {
    let c = src.campaign(id).map_err(source)?;
    let extra = src.campaign_extra(id).map_err(source)?;
    let label = storable_text(&c.label);
    wire::text::check_name(&format!("campaign {id}'s label"), &label)
        .map_err(|e| Failure::Source(format!("{e}; rename it at its source, then import again")))?;
    let hosts: Vec<HostInfo> = c
        .hosts
        .iter()
        .map(|h| HostInfo {
            role: h.role.clone(),
            metadata: wire::text::cap_metadata(h.metadata.clone()),
        })
        .collect();
    let present = tx
        .query_opt(
            "SELECT id FROM campaigns WHERE uuid = ?1",
            params![&extra.uuid],
        )
        .map_err(target)?
        .map(|r| r.i64(0))
        .transpose()
        .map_err(target)?;
    let (into, known) = match present {
        Some(into) => (into, runs_here(tx, into).map_err(target)?),
        None => {
            let new_campaign = NewCampaign {
                label,
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
            let into =
                insert_campaign(tx, &new_campaign, &extra.uuid, Some(&from)).map_err(target)?;
            (into, HashMap::new())
        }
    };
    let roles_here: Vec<String> = tx
        .query(
            "SELECT role FROM hosts WHERE campaign_id = ?1",
            params![into],
        )
        .map_err(target)?
        .iter()
        .map(|r| r.text(0))
        .collect::<Result<_, _>>()
        .map_err(target)?;
    for h in hosts.iter().filter(|h| !roles_here.contains(&h.role)) {
        insert_host(tx, into, h).map_err(target)?;
    }
    if c.finished {
        tx.execute(
            "UPDATE campaigns SET finished = 1 WHERE id = ?1",
            params![into],
        )
        .map_err(target)?;
    }
    let cells: Vec<CellRecord> = src
        .cells(id)
        .map_err(source)?
        .into_iter()
        .map(|cell| CellRecord {
            campaign_id: into,
            ..cell
        })
        .collect();
    insert_cells(tx, &cells).map_err(target)?;
    let (mut added, mut conflicting, mut conflicts) = (0, 0, Vec::new());
    let mut chunks = src.run_chunks(id).map_err(source)?;
    while let Some(chunk) = chunks.next_chunk().map_err(source)? {
        for d in chunk {
            let key = (d.cell_index, d.run.warmup, d.run.repetition, d.attempt);
            if let Some(here) = known.get(&key) {
                if let Some(what) = difference(tx, here, &d).map_err(target)? {
                    conflicting += 1;
                    if conflicts.len() < NAMED_CONFLICTS {
                        conflicts.push(format!("{}: {what}", place(&d)));
                    }
                }
                continue;
            }
            let samples = src.samples(d.run.id).map_err(source)?;
            insert_run(tx, &new_run(into, d, samples)).map_err(target)?;
            added += 1;
        }
    }
    summary.runs += added;
    if present.is_some() {
        summary.merged.push(Merged {
            from: id,
            into,
            added_runs: added,
            conflicting_runs: conflicting,
            conflicts,
        });
    } else {
        summary.imported.push((id, into));
    }
    Ok(())
}

/// The runs a campaign here holds, by their place.
fn runs_here(tx: &Conn, campaign_id: i64) -> Result<HashMap<RunKey, Here>, StoreError> {
    let rows = tx.query(
        "SELECT c.cell_index, r.warmup, r.repetition, r.attempt, r.started_unix_ns,
                r.id, r.ok, r.failure_reason, r.duration_ns
         FROM runs r JOIN cells c ON c.id = r.cell_id WHERE r.campaign_id = ?1",
        params![campaign_id],
    )?;
    rows.iter()
        .map(|r| {
            let key = (r.u32(0)?, r.bool(1)?, r.u32(2)?, r.u32(3)?);
            let here = Here {
                started_unix_ns: r.i64(4)?,
                id: r.i64(5)?,
                ok: r.bool(6)?,
                reason: r.opt_text(7)?,
                duration_ns: r.i64(8)?,
            };
            Ok((key, here))
        })
        .collect()
}

/// What differs between the run here and its copy `there`, or None when nothing does.
fn difference(tx: &Conn, here: &Here, there: &RunDetail) -> Result<Option<String>, StoreError> {
    if here.started_unix_ns != there.run.started_unix_ns {
        return Ok(Some(format!(
            "started at {} ns here, {} ns there",
            here.started_unix_ns, there.run.started_unix_ns
        )));
    }
    let reason_there = match &there.run.status {
        RunStatus::Ok => None,
        RunStatus::Failed { reason } => Some(reason.as_str()),
    };
    if here.ok != there.run.status.is_ok() || here.reason.as_deref() != reason_there {
        let say = |ok: bool, reason: Option<&str>| match (ok, reason) {
            (true, _) => "ok".to_string(),
            (false, r) => format!("failed ({})", r.unwrap_or("")),
        };
        return Ok(Some(format!(
            "{} here, {} there",
            say(here.ok, here.reason.as_deref()),
            say(there.run.status.is_ok(), reason_there)
        )));
    }
    if here.duration_ns != there.duration_ns {
        return Ok(Some(format!(
            "lasted {} ns here, {} ns there",
            here.duration_ns, there.duration_ns
        )));
    }
    let rows = tx.query(
        "SELECT name, value FROM run_metrics WHERE run_id = ?1 ORDER BY name",
        params![here.id],
    )?;
    let mut metrics = std::collections::BTreeMap::new();
    for r in &rows {
        metrics.insert(r.text(0)?, r.f64(1)?);
    }
    let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
    for name in metrics.keys().chain(there.run.metrics.keys()) {
        let (a, b) = (metrics.get(name), there.run.metrics.get(name));
        match (a, b) {
            (Some(a), Some(b)) if same(*a, *b) => continue,
            _ => {}
        }
        let show = |v: Option<&f64>| v.map_or("absent".to_string(), |v| v.to_string());
        return Ok(Some(format!("{name} {} here, {} there", show(a), show(b))));
    }
    Ok(None)
}

/// Where a run is in its campaign, for a message.
fn place(d: &RunDetail) -> String {
    let r = &d.run;
    format!(
        "{} {} {} B cell {}, {}{}{}",
        r.family,
        r.kind,
        r.payload_bytes,
        d.cell_index,
        if r.warmup { "warm-up " } else { "repetition " },
        r.repetition,
        if d.attempt > 0 {
            format!(" attempt {}", d.attempt)
        } else {
            String::new()
        }
    )
}

fn new_run(campaign_id: i64, d: RunDetail, samples: Vec<crate::IntervalSample>) -> NewRun {
    NewRun {
        campaign_id,
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
    }
}
