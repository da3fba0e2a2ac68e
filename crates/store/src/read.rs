//! Reads: campaigns with their hosts, cells, runs with metrics, interval samples.

use crate::{
    parse_direction, parse_family, parse_kind, Campaign, CampaignExtra, CellRecord, HostInfo,
    IntervalSample, RunDetail, RunRecord, RunStatus, Store, StoreError,
};
use rusqlite::{params, OptionalExtension};
use std::collections::BTreeMap;

impl Store {
    /// Every campaign, oldest first, with hosts and metadata.
    pub fn campaigns(&self) -> Result<Vec<Campaign>, StoreError> {
        let ids: Vec<i64> = {
            let mut st = self.conn.prepare("SELECT id FROM campaigns ORDER BY id")?;
            let rows = st.query_map([], |r| r.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        ids.into_iter().map(|id| self.campaign(id)).collect()
    }

    /// One campaign with hosts and metadata.
    pub fn campaign(&self, campaign_id: i64) -> Result<Campaign, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT id, label, created_unix_s, command_line, spec_json, finished
                 FROM campaigns WHERE id = ?1",
                [campaign_id],
                |r| {
                    Ok(Campaign {
                        id: r.get(0)?,
                        label: r.get(1)?,
                        created_unix_s: r.get(2)?,
                        command_line: r.get(3)?,
                        spec_json: r.get(4)?,
                        hosts: Vec::new(),
                        finished: r.get(5)?,
                    })
                },
            )
            .optional()?;
        let mut c = row.ok_or(StoreError::NoSuchCampaign(campaign_id))?;
        c.hosts = self.hosts(campaign_id)?;
        Ok(c)
    }

    /// The campaign fields [`Campaign`] does not carry.
    pub fn campaign_extra(&self, campaign_id: i64) -> Result<CampaignExtra, StoreError> {
        self.conn
            .query_row(
                "SELECT uuid, dualperf_version, git_revision, imported_from
                 FROM campaigns WHERE id = ?1",
                [campaign_id],
                |r| {
                    Ok(CampaignExtra {
                        uuid: r.get(0)?,
                        dualperf_version: r.get(1)?,
                        git_revision: r.get(2)?,
                        imported_from: r.get(3)?,
                    })
                },
            )
            .optional()?
            .ok_or(StoreError::NoSuchCampaign(campaign_id))
    }

    fn hosts(&self, campaign_id: i64) -> Result<Vec<HostInfo>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT h.role, m.key, m.value FROM hosts h
             LEFT JOIN host_metadata m ON m.host_id = h.id
             WHERE h.campaign_id = ?1 ORDER BY h.id, m.key",
        )?;
        let mut rows = st.query([campaign_id])?;
        let mut hosts: Vec<HostInfo> = Vec::new();
        while let Some(r) = rows.next()? {
            let role: String = r.get(0)?;
            let key: Option<String> = r.get(1)?;
            let value: Option<String> = r.get(2)?;
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
        let mut st = self.conn.prepare(
            "SELECT cell_index, family, kind, payload_bytes, direction, spec_json, target_met
             FROM cells WHERE campaign_id = ?1 ORDER BY cell_index",
        )?;
        let mut rows = st.query([campaign_id])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(CellRecord {
                campaign_id,
                cell_index: r.get(0)?,
                family: parse_family(&r.get::<_, String>(1)?)?,
                kind: parse_kind(&r.get::<_, String>(2)?)?,
                payload_bytes: r.get(3)?,
                direction: parse_direction(&r.get::<_, String>(4)?)?,
                spec_json: r.get(5)?,
                target_met: r.get(6)?,
            });
        }
        Ok(out)
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
        self.require_campaign(campaign_id)?;
        let mut metrics = self.metrics_of_campaign(campaign_id)?;
        let mut applied = self.applied_of_campaign(campaign_id)?;
        let mut st = self.conn.prepare(
            "SELECT r.id, c.family, c.kind, c.payload_bytes, c.direction, r.repetition,
                    r.warmup, r.ok, r.failure_reason, r.started_unix_ns, c.cell_index,
                    r.attempt, r.duration_ns
             FROM runs r JOIN cells c ON c.id = r.cell_id
             WHERE r.campaign_id = ?1 ORDER BY r.id",
        )?;
        let mut rows = st.query([campaign_id])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let ok: bool = r.get(7)?;
            let status = if ok {
                RunStatus::Ok
            } else {
                RunStatus::Failed {
                    reason: r.get::<_, Option<String>>(8)?.unwrap_or_default(),
                }
            };
            out.push(RunDetail {
                run: RunRecord {
                    id,
                    campaign_id,
                    family: parse_family(&r.get::<_, String>(1)?)?,
                    kind: parse_kind(&r.get::<_, String>(2)?)?,
                    payload_bytes: r.get(3)?,
                    direction: parse_direction(&r.get::<_, String>(4)?)?,
                    repetition: r.get(5)?,
                    warmup: r.get(6)?,
                    status,
                    metrics: metrics.remove(&id).unwrap_or_default(),
                    started_unix_ns: r.get(9)?,
                },
                applied: applied.remove(&id).unwrap_or_default(),
                cell_index: r.get(10)?,
                attempt: r.get(11)?,
                duration_ns: r.get(12)?,
            });
        }
        Ok(out)
    }

    /// What each run of a campaign applied, by run id (`client.sndbuf_bytes` → value).
    pub fn applied_of_campaign(
        &self,
        campaign_id: i64,
    ) -> Result<BTreeMap<i64, BTreeMap<String, String>>, StoreError> {
        // A file at schema 1 opened read-only has no such table: nothing was recorded.
        let has_table: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_applied')",
            [],
            |r| r.get(0),
        )?;
        if !has_table {
            return Ok(BTreeMap::new());
        }
        let mut st = self.conn.prepare(
            "SELECT a.run_id, a.key, a.value FROM run_applied a
             JOIN runs r ON r.id = a.run_id WHERE r.campaign_id = ?1",
        )?;
        let mut rows = st.query([campaign_id])?;
        let mut out: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
        while let Some(r) = rows.next()? {
            out.entry(r.get(0)?)
                .or_default()
                .insert(r.get(1)?, r.get(2)?);
        }
        Ok(out)
    }

    fn metrics_of_campaign(
        &self,
        campaign_id: i64,
    ) -> Result<BTreeMap<i64, BTreeMap<String, f64>>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT m.run_id, m.name, m.value FROM run_metrics m
             JOIN runs r ON r.id = m.run_id WHERE r.campaign_id = ?1",
        )?;
        let mut rows = st.query([campaign_id])?;
        let mut out: BTreeMap<i64, BTreeMap<String, f64>> = BTreeMap::new();
        while let Some(r) = rows.next()? {
            out.entry(r.get(0)?)
                .or_default()
                .insert(r.get(1)?, r.get(2)?);
        }
        Ok(out)
    }

    /// The per-interval samples of one run, in interval order.
    pub fn samples(&self, run_id: i64) -> Result<Vec<IntervalSample>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT interval_index, start_ns, end_ns, name, value FROM samples
             WHERE run_id = ?1 ORDER BY interval_index, name",
        )?;
        let mut rows = st.query(params![run_id])?;
        let mut out: Vec<(i64, IntervalSample)> = Vec::new();
        while let Some(r) = rows.next()? {
            let idx: i64 = r.get(0)?;
            if out.last().map(|(i, _)| *i != idx).unwrap_or(true) {
                out.push((
                    idx,
                    IntervalSample {
                        start_ns: r.get(1)?,
                        end_ns: r.get(2)?,
                        metrics: BTreeMap::new(),
                    },
                ));
            }
            if let Some((_, s)) = out.last_mut() {
                s.metrics.insert(r.get(3)?, r.get(4)?);
            }
        }
        Ok(out.into_iter().map(|(_, s)| s).collect())
    }

    /// The id of the campaign with this uuid, if present.
    pub fn campaign_by_uuid(&self, uuid: &str) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT id FROM campaigns WHERE uuid = ?1", [uuid], |r| {
                r.get(0)
            })
            .optional()?)
    }
}
