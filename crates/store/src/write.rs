//! Writes: campaigns, hosts and their metadata, cells, and runs. Each call is one
//! transaction; [`Store::record_run`] commits a run with all its metrics and samples
//! at once, so a run is either wholly in the file or not at all.

use crate::backend::{params, Conn, Value};
use crate::{
    direction_text, family_text, CellRecord, HostInfo, NewCampaign, NewRun, RunStatus, Store,
    StoreError,
};

impl Store {
    /// Create a campaign and return its id.
    pub fn create_campaign(&mut self, c: &NewCampaign) -> Result<i64, StoreError> {
        self.check_writable("create a campaign")?;
        let tx = self.conn.transaction()?;
        let id = insert_campaign(&tx, c, &new_uuid(), None)?;
        tx.commit()?;
        Ok(id)
    }

    /// Store (or replace) what is known about one host of a campaign.
    pub fn set_host(&mut self, campaign_id: i64, host: &HostInfo) -> Result<(), StoreError> {
        self.check_writable("store host metadata")?;
        self.require_campaign(campaign_id)?;
        let tx = self.conn.transaction()?;
        insert_host(&tx, campaign_id, host)?;
        tx.commit()
    }

    /// Add the cells of a campaign's matrix. A cell already present (same campaign and
    /// index) is left as it is, so this is safe to call again on resume.
    pub fn add_cells(&mut self, cells: &[CellRecord]) -> Result<(), StoreError> {
        self.check_writable("add cells")?;
        let tx = self.conn.transaction()?;
        insert_cells(&tx, cells)?;
        tx.commit()
    }

    /// Record whether a cell met its confidence target (`None`: not applicable).
    pub fn set_cell_target(
        &mut self,
        campaign_id: i64,
        cell_index: u32,
        met: Option<bool>,
    ) -> Result<(), StoreError> {
        self.check_writable("update a cell")?;
        self.conn.execute(
            "UPDATE cells SET target_met = ?3 WHERE campaign_id = ?1 AND cell_index = ?2",
            params![campaign_id, cell_index, met],
        )?;
        Ok(())
    }

    /// Mark a campaign finished (or not).
    pub fn set_finished(&mut self, campaign_id: i64, finished: bool) -> Result<(), StoreError> {
        self.check_writable("finish a campaign")?;
        let n = self.conn.execute(
            "UPDATE campaigns SET finished = ?2 WHERE id = ?1",
            params![campaign_id, finished],
        )?;
        if n == 0 {
            return Err(StoreError::NoSuchCampaign(campaign_id));
        }
        Ok(())
    }

    /// Commit one finished run (or failed attempt) with its metrics and interval
    /// samples, in one transaction. Returns the run id.
    pub fn record_run(&mut self, run: &NewRun) -> Result<i64, StoreError> {
        self.check_writable("record a run")?;
        let tx = self.conn.transaction()?;
        let run_id = insert_run(&tx, run)?;
        tx.commit()?;
        Ok(run_id)
    }

    pub(crate) fn require_campaign(&self, campaign_id: i64) -> Result<(), StoreError> {
        self.conn
            .query_opt(
                "SELECT id FROM campaigns WHERE id = ?1",
                params![campaign_id],
            )?
            .map(|_| ())
            .ok_or(StoreError::NoSuchCampaign(campaign_id))
    }
}

/// A random RFC 9562 (RFC 4122) version-4 UUID from the OS random source (getrandom:
/// Linux getrandom(2), Windows ProcessPrng, arc4random elsewhere); a time+pid id only if
/// the OS has no random source to give.
fn new_uuid() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        let now_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        return format!("{now_ns:x}-{:x}", std::process::id());
    }
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC variant
    let h: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        h[0..4].concat(),
        h[4..6].concat(),
        h[6..8].concat(),
        h[8..10].concat(),
        h[10..16].concat()
    )
}

/// Insert one run with metrics and samples inside the caller's transaction.
pub(crate) fn insert_run(tx: &Conn, run: &NewRun) -> Result<i64, StoreError> {
    let cell_id = tx
        .query_opt(
            "SELECT id FROM cells WHERE campaign_id = ?1 AND cell_index = ?2",
            params![run.campaign_id, run.cell_index],
        )?
        .ok_or_else(|| {
            StoreError::BadValue(format!(
                "campaign {} has no cell {}",
                run.campaign_id, run.cell_index
            ))
        })?
        .i64(0)?;
    let (ok, reason) = match &run.status {
        RunStatus::Ok => (true, None),
        RunStatus::Failed { reason } => (false, Some(reason.as_str())),
    };
    let run_id = tx
        .query_one(
            "INSERT INTO runs (campaign_id, cell_id, repetition, warmup, attempt, ok,
                               failure_reason, started_unix_ns, duration_ns)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
            params![
                run.campaign_id,
                cell_id,
                run.repetition,
                run.warmup,
                run.attempt,
                ok,
                reason,
                run.started_unix_ns,
                run.duration_ns
            ],
        )?
        .i64(0)?;
    let applied: Vec<Vec<Value>> = run
        .applied
        .iter()
        .map(|(k, v)| params![run_id, k, v].to_vec())
        .collect();
    tx.insert_rows("run_applied", &["run_id", "key", "value"], &applied)?;
    let metrics: Vec<Vec<Value>> = run
        .metrics
        .iter()
        .map(|(name, value)| params![run_id, name, *value, wire::metrics::unit_of(name)].to_vec())
        .collect();
    tx.insert_rows(
        "run_metrics",
        &["run_id", "name", "value", "unit"],
        &metrics,
    )?;
    let mut samples: Vec<Vec<Value>> = Vec::new();
    for (i, s) in run.samples.iter().enumerate() {
        for (name, value) in &s.metrics {
            samples.push(params![run_id, i as i64, s.start_ns, s.end_ns, name, *value].to_vec());
        }
    }
    tx.insert_rows(
        "samples",
        &[
            "run_id",
            "interval_index",
            "start_ns",
            "end_ns",
            "name",
            "value",
        ],
        &samples,
    )?;
    Ok(run_id)
}

pub(crate) fn insert_campaign(
    conn: &Conn,
    c: &NewCampaign,
    uuid: &str,
    imported_from: Option<&str>,
) -> Result<i64, StoreError> {
    // Whoever built the command line, no password is stored (nor where it came from).
    let command_line = crate::redact_password(&c.command_line);
    let imported_from = imported_from.map(crate::redact_password);
    conn.query_one(
        "INSERT INTO campaigns (uuid, label, created_unix_s, command_line, spec_json,
                                dualperf_version, git_revision, imported_from, finished)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0) RETURNING id",
        params![
            uuid,
            &c.label,
            c.created_unix_s,
            &command_line,
            &c.spec_json,
            &c.dualperf_version,
            &c.git_revision,
            imported_from.as_deref()
        ],
    )?
    .i64(0)
}

pub(crate) fn insert_host(
    conn: &Conn,
    campaign_id: i64,
    host: &HostInfo,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO hosts (campaign_id, role) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
        params![campaign_id, &host.role],
    )?;
    let host_id = conn
        .query_one(
            "SELECT id FROM hosts WHERE campaign_id = ?1 AND role = ?2",
            params![campaign_id, &host.role],
        )?
        .i64(0)?;
    conn.execute(
        "DELETE FROM host_metadata WHERE host_id = ?1",
        params![host_id],
    )?;
    let rows: Vec<Vec<Value>> = host
        .metadata
        .iter()
        .map(|(k, v)| params![host_id, k, v].to_vec())
        .collect();
    conn.insert_rows("host_metadata", &["host_id", "key", "value"], &rows)
}

pub(crate) fn insert_cells(conn: &Conn, cells: &[CellRecord]) -> Result<(), StoreError> {
    for c in cells {
        conn.execute(
            "INSERT INTO cells (campaign_id, cell_index, family, kind,
                 payload_bytes, direction, spec_json, target_met)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING",
            params![
                c.campaign_id,
                c.cell_index,
                family_text(c.family),
                c.kind.name(),
                c.payload_bytes,
                direction_text(c.direction),
                &c.spec_json,
                c.target_met
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod uuid_tests {
    #[test]
    fn uuids_are_version_4_and_differ() {
        let a = super::new_uuid();
        let b = super::new_uuid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        let parts: Vec<&str> = a.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'), "{a}");
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"), "{a}");
    }
}
