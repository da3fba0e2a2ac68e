//! Reads: campaigns with their hosts, cells, runs with metrics, interval samples.

use crate::backend::params;
use crate::{
    parse_direction, parse_family, parse_kind, Campaign, CampaignExtra, CellRecord, HostInfo,
    IntervalSample, RunDetail, RunRecord, RunStatus, Store, StoreError,
};
use std::collections::BTreeMap;

impl Store {
    /// Every campaign, oldest first, with hosts and metadata.
    pub fn campaigns(&self) -> Result<Vec<Campaign>, StoreError> {
        self.campaign_ids()?
            .into_iter()
            .map(|id| self.campaign(id))
            .collect()
    }

    /// The ids of every campaign, oldest first.
    pub fn campaign_ids(&self) -> Result<Vec<i64>, StoreError> {
        self.conn
            .query("SELECT id FROM campaigns ORDER BY id", &[])?
            .iter()
            .map(|r| r.i64(0))
            .collect()
    }

    /// One campaign with hosts and metadata.
    pub fn campaign(&self, campaign_id: i64) -> Result<Campaign, StoreError> {
        let r = self
            .conn
            .query_opt(
                "SELECT id, label, created_unix_s, command_line, spec_json, finished
                 FROM campaigns WHERE id = ?1",
                params![campaign_id],
            )?
            .ok_or(StoreError::NoSuchCampaign(campaign_id))?;
        Ok(Campaign {
            id: r.i64(0)?,
            label: r.text(1)?,
            created_unix_s: r.i64(2)?,
            // Redacted again: a database written before the rule held may hold one.
            command_line: crate::redact_password(&r.text(3)?),
            spec_json: r.text(4)?,
            hosts: self.hosts(campaign_id)?,
            finished: r.bool(5)?,
        })
    }

    /// The campaign fields [`Campaign`] does not carry.
    pub fn campaign_extra(&self, campaign_id: i64) -> Result<CampaignExtra, StoreError> {
        let r = self
            .conn
            .query_opt(
                "SELECT uuid, dualperf_version, git_revision, imported_from
                 FROM campaigns WHERE id = ?1",
                params![campaign_id],
            )?
            .ok_or(StoreError::NoSuchCampaign(campaign_id))?;
        Ok(CampaignExtra {
            uuid: r.text(0)?,
            dualperf_version: r.text(1)?,
            git_revision: r.text(2)?,
            imported_from: r.opt_text(3)?.map(|s| crate::redact_password(&s)),
        })
    }

    fn hosts(&self, campaign_id: i64) -> Result<Vec<HostInfo>, StoreError> {
        let rows = self.conn.query(
            "SELECT h.role, m.key, m.value FROM hosts h
             LEFT JOIN host_metadata m ON m.host_id = h.id
             WHERE h.campaign_id = ?1 ORDER BY h.id, m.key",
            params![campaign_id],
        )?;
        let mut hosts: Vec<HostInfo> = Vec::new();
        for r in rows {
            let role = r.text(0)?;
            let key = r.opt_text(1)?;
            let value = r.opt_text(2)?;
            if hosts.last().map(|h| h.role != role).unwrap_or(true) {
                hosts.push(HostInfo {
                    role,
                    metadata: BTreeMap::new(),
                });
            }
            if let (Some(k), Some(v), Some(h)) = (key, value, hosts.last_mut()) {
                h.metadata.insert(k, v);
            }
        }
        Ok(hosts)
    }

    /// The cells of a campaign in cell order.
    pub fn cells(&self, campaign_id: i64) -> Result<Vec<CellRecord>, StoreError> {
        self.require_campaign(campaign_id)?;
        let rows = self.conn.query(
            "SELECT cell_index, family, kind, payload_bytes, direction, spec_json, target_met
             FROM cells WHERE campaign_id = ?1 ORDER BY cell_index",
            params![campaign_id],
        )?;
        rows.iter()
            .map(|r| {
                Ok(CellRecord {
                    campaign_id,
                    cell_index: r.u32(0)?,
                    family: parse_family(&r.text(1)?)?,
                    kind: parse_kind(&r.text(2)?)?,
                    payload_bytes: r.u32(3)?,
                    direction: parse_direction(&r.text(4)?)?,
                    spec_json: r.text(5)?,
                    target_met: r.opt_bool(6)?,
                })
            })
            .collect()
    }

    /// Every run of a campaign (warm-ups and failed attempts included), in the order
    /// they were made.
    pub fn runs(&self, campaign_id: i64) -> Result<Vec<RunRecord>, StoreError> {
        Ok(self
            .run_details(campaign_id)?
            .into_iter()
            .map(|d| d.run)
            .collect())
    }

    /// Every run of a campaign with its cell index and attempt number.
    pub fn run_details(&self, campaign_id: i64) -> Result<Vec<RunDetail>, StoreError> {
        let mut chunks = self.run_chunks(campaign_id)?;
        let mut out = Vec::new();
        while let Some(chunk) = chunks.next_chunk()? {
            out.extend(chunk);
        }
        Ok(out)
    }

    /// A campaign's runs in the order they were made, read [`RUN_CHUNK`] at a time:
    /// what `export`, `report` and `import` go through, so memory stays bounded at any
    /// number of runs.
    pub fn run_chunks(&self, campaign_id: i64) -> Result<RunChunks<'_>, StoreError> {
        self.require_campaign(campaign_id)?;
        Ok(RunChunks {
            store: self,
            campaign_id,
            after: i64::MIN,
            done: false,
            has_applied: self.conn.has_table("run_applied")?,
            metrics: None,
            with_applied: true,
        })
    }

    /// How many runs of a campaign are measured, warm-ups and failed attempts,
    /// counted by the database.
    pub fn run_counts(&self, campaign_id: i64) -> Result<RunCounts, StoreError> {
        let by_cell = self.run_counts_by_cell(campaign_id)?;
        Ok(by_cell
            .values()
            .fold(RunCounts::default(), |a, c| RunCounts {
                measured: a.measured + c.measured,
                warmup: a.warmup + c.warmup,
                failed: a.failed + c.failed,
            }))
    }

    /// [`Store::run_counts`] of each cell of a campaign, by cell index: one pass over
    /// the campaign's runs in the database.
    pub fn run_counts_by_cell(
        &self,
        campaign_id: i64,
    ) -> Result<BTreeMap<u32, RunCounts>, StoreError> {
        self.require_campaign(campaign_id)?;
        // `cell_id + 0`: grouping by the bare column lets SQLite walk the runs'
        // (cell_id, …) unique index in cell order, one random row read per run (2 s
        // for a million runs instead of under 1).
        let rows = self.conn.query(
            "SELECT c.cell_index, x.measured, x.warmup, x.failed FROM (
                 SELECT cell_id + 0 AS cell,
                        count(CASE WHEN ok = 1 AND warmup = 0 THEN 1 END) AS measured,
                        count(CASE WHEN ok = 1 AND warmup <> 0 THEN 1 END) AS warmup,
                        count(CASE WHEN ok = 0 THEN 1 END) AS failed
                 FROM runs WHERE campaign_id = ?1 GROUP BY cell_id + 0) x
             JOIN cells c ON c.id = x.cell",
            params![campaign_id],
        )?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.u32(0)?,
                    RunCounts {
                        measured: count(r.i64(1)?),
                        warmup: count(r.i64(2)?),
                        failed: count(r.i64(3)?),
                    },
                ))
            })
            .collect()
    }

    /// Measured runs (finished, not warm-ups) of every campaign, by campaign id.
    pub fn measured_by_campaign(&self) -> Result<BTreeMap<i64, u64>, StoreError> {
        let rows = self.conn.query(
            "SELECT campaign_id, count(*) FROM runs WHERE ok = 1 AND warmup = 0
             GROUP BY campaign_id",
            &[],
        )?;
        rows.iter()
            .map(|r| Ok((r.i64(0)?, count(r.i64(1)?))))
            .collect()
    }

    /// The first `limit` failed attempts of a campaign, in the order they were made.
    pub fn failed_attempts(
        &self,
        campaign_id: i64,
        limit: u32,
    ) -> Result<Vec<FailedAttempt>, StoreError> {
        let rows = self.conn.query(
            "SELECT c.cell_index, r.repetition, r.attempt, r.failure_reason
             FROM runs r JOIN cells c ON c.id = r.cell_id
             WHERE r.campaign_id = ?1 AND r.ok = 0 ORDER BY r.id LIMIT ?2",
            params![campaign_id, limit],
        )?;
        rows.iter()
            .map(|r| {
                Ok(FailedAttempt {
                    cell_index: r.u32(0)?,
                    repetition: r.u32(1)?,
                    attempt: r.u32(2)?,
                    reason: r.opt_text(3)?.unwrap_or_default(),
                })
            })
            .collect()
    }

    /// What each run of a campaign applied, by run id (`client.sndbuf_bytes` → value).
    pub fn applied_of_campaign(
        &self,
        campaign_id: i64,
    ) -> Result<BTreeMap<i64, BTreeMap<String, String>>, StoreError> {
        // A file at schema 1 opened read-only has no such table: nothing was recorded.
        if !self.conn.has_table("run_applied")? {
            return Ok(BTreeMap::new());
        }
        let rows = self.conn.query(
            "SELECT a.run_id, a.key, a.value FROM run_applied a
             JOIN runs r ON r.id = a.run_id WHERE r.campaign_id = ?1",
            params![campaign_id],
        )?;
        let mut out: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
        for r in rows {
            out.entry(r.i64(0)?)
                .or_default()
                .insert(r.text(1)?, r.text(2)?);
        }
        Ok(out)
    }

    /// How many measured runs (finished, not warm-ups) of a campaign applied each value
    /// of the applied keys matching the SQL `LIKE` pattern `key_like`: (key, value,
    /// runs) in key and value order, at most `limit` rows. The report's link-change
    /// warning reads `%.link.%` this way without loading every run's settings.
    pub fn applied_value_counts(
        &self,
        campaign_id: i64,
        key_like: &str,
        limit: u32,
    ) -> Result<Vec<(String, String, u64)>, StoreError> {
        if !self.conn.has_table("run_applied")? {
            return Ok(Vec::new());
        }
        let rows = self.conn.query(
            "SELECT a.key, a.value, count(*) FROM run_applied a
             JOIN runs r ON r.id = a.run_id
             WHERE r.campaign_id = ?1 AND r.ok = 1 AND r.warmup = 0 AND a.key LIKE ?2
             GROUP BY a.key, a.value ORDER BY a.key, a.value LIMIT ?3",
            params![campaign_id, key_like, i64::from(limit)],
        )?;
        rows.iter()
            .map(|r| Ok((r.text(0)?, r.text(1)?, count(r.i64(2)?))))
            .collect()
    }

    /// The per-interval samples of one run, in interval order.
    pub fn samples(&self, run_id: i64) -> Result<Vec<IntervalSample>, StoreError> {
        let rows = self.conn.query(
            "SELECT interval_index, start_ns, end_ns, name, value FROM samples
             WHERE run_id = ?1 ORDER BY interval_index, name",
            params![run_id],
        )?;
        let mut out: Vec<(i64, IntervalSample)> = Vec::new();
        for r in rows {
            let idx = r.i64(0)?;
            if out.last().map(|(i, _)| *i != idx).unwrap_or(true) {
                out.push((
                    idx,
                    IntervalSample {
                        start_ns: r.i64(1)?,
                        end_ns: r.i64(2)?,
                        metrics: BTreeMap::new(),
                    },
                ));
            }
            if let Some((_, s)) = out.last_mut() {
                s.metrics.insert(r.text(3)?, r.f64(4)?);
            }
        }
        Ok(out.into_iter().map(|(_, s)| s).collect())
    }

    /// The id of the campaign with this uuid, if present.
    pub fn campaign_by_uuid(&self, uuid: &str) -> Result<Option<i64>, StoreError> {
        self.conn
            .query_opt("SELECT id FROM campaigns WHERE uuid = ?1", params![uuid])?
            .map(|r| r.i64(0))
            .transpose()
    }
}

/// Runs read at a time by [`RunChunks`]: a few MB of rows, and few enough round trips
/// to PostgreSQL (three a chunk).
pub const RUN_CHUNK: u32 = 2048;

/// A campaign's runs, a chunk at a time (see [`Store::run_chunks`]).
pub struct RunChunks<'a> {
    store: &'a Store,
    campaign_id: i64,
    /// The last run id read.
    after: i64,
    done: bool,
    has_applied: bool,
    /// Only the metrics with these names or matching these `LIKE` patterns (a
    /// report's), when set: fewer rows to read.
    metrics: Option<(Vec<String>, Vec<String>)>,
    with_applied: bool,
}

impl RunChunks<'_> {
    /// Read only the metrics named in `names` or matching a `LIKE` pattern of `like`
    /// (`_` and `%` as in SQL), and no applied settings.
    pub fn only_metrics(mut self, names: &[&str], like: &[&str]) -> Self {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        self.metrics = Some((own(names), own(like)));
        self.with_applied = false;
        self
    }

    /// The next runs in id order, `None` after the last.
    pub fn next_chunk(&mut self) -> Result<Option<Vec<RunDetail>>, StoreError> {
        if self.done {
            return Ok(None);
        }
        let conn = &self.store.conn;
        let rows = conn.query(
            "SELECT r.id, c.family, c.kind, c.payload_bytes, c.direction, r.repetition,
                    r.warmup, r.ok, r.failure_reason, r.started_unix_ns, c.cell_index,
                    r.attempt, r.duration_ns
             FROM runs r JOIN cells c ON c.id = r.cell_id
             WHERE r.campaign_id = ?1 AND r.id > ?2 ORDER BY r.id LIMIT ?3",
            params![self.campaign_id, self.after, RUN_CHUNK],
        )?;
        if rows.len() < RUN_CHUNK as usize {
            self.done = true;
        }
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            return Ok(None);
        };
        let (lo, hi) = (first.i64(0)?, last.i64(0)?);
        self.after = hi;
        // By run id range, not by campaign: the primary keys answer it without a scan
        // of the campaign's runs. Rows of another campaign's runs in the range (studies
        // run at once interleave their ids) are not asked for below.
        let mut metrics: BTreeMap<i64, BTreeMap<String, f64>> = BTreeMap::new();
        let mut sql = String::from(
            "SELECT run_id, name, value FROM run_metrics WHERE run_id BETWEEN ?1 AND ?2",
        );
        let mut args = params![lo, hi].to_vec();
        if let Some((names, like)) = &self.metrics {
            let mut terms = Vec::new();
            for n in names {
                args.push(n.into());
                terms.push(format!("name = ?{}", args.len()));
            }
            for p in like {
                args.push(p.into());
                terms.push(format!("name LIKE ?{}", args.len()));
            }
            if terms.is_empty() {
                terms.push("0 = 1".into());
            }
            sql.push_str(&format!(" AND ({})", terms.join(" OR ")));
        }
        for r in conn.query(&sql, &args)? {
            metrics
                .entry(r.i64(0)?)
                .or_default()
                .insert(r.text(1)?, r.f64(2)?);
        }
        let mut applied: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
        if self.has_applied && self.with_applied {
            for r in conn.query(
                "SELECT run_id, key, value FROM run_applied WHERE run_id BETWEEN ?1 AND ?2",
                params![lo, hi],
            )? {
                applied
                    .entry(r.i64(0)?)
                    .or_default()
                    .insert(r.text(1)?, r.text(2)?);
            }
        }
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let id = r.i64(0)?;
            let status = if r.bool(7)? {
                RunStatus::Ok
            } else {
                RunStatus::Failed {
                    reason: r.opt_text(8)?.unwrap_or_default(),
                }
            };
            out.push(RunDetail {
                run: RunRecord {
                    id,
                    campaign_id: self.campaign_id,
                    family: parse_family(&r.text(1)?)?,
                    kind: parse_kind(&r.text(2)?)?,
                    payload_bytes: r.u32(3)?,
                    direction: parse_direction(&r.text(4)?)?,
                    repetition: r.u32(5)?,
                    warmup: r.bool(6)?,
                    status,
                    metrics: metrics.remove(&id).unwrap_or_default(),
                    started_unix_ns: r.i64(9)?,
                },
                applied: applied.remove(&id).unwrap_or_default(),
                cell_index: r.u32(10)?,
                attempt: r.u32(11)?,
                duration_ns: r.i64(12)?,
            });
        }
        Ok(Some(out))
    }
}

/// Runs of a campaign by how they ended, as [`Store::run_counts`] counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunCounts {
    /// Finished, not warm-ups: the runs the statistics count.
    pub measured: u64,
    pub warmup: u64,
    pub failed: u64,
}

impl std::iter::Sum for RunCounts {
    fn sum<I: Iterator<Item = RunCounts>>(it: I) -> RunCounts {
        it.fold(RunCounts::default(), |a, c| RunCounts {
            measured: a.measured + c.measured,
            warmup: a.warmup + c.warmup,
            failed: a.failed + c.failed,
        })
    }
}

/// A failed attempt as `show` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedAttempt {
    pub cell_index: u32,
    pub repetition: u32,
    pub attempt: u32,
    pub reason: String,
}

/// A count from the database (never negative).
fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}
