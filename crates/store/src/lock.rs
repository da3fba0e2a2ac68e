//! Campaign locks: the process running a campaign holds a row naming its host, PID and
//! start time, so a second `study --resume` of the same campaign is refused with who
//! holds it instead of measuring alongside it. A lock left by a process that died
//! (kill -9, power cut) is recognised by the caller's `is_stale` test and taken over.

use crate::{Store, StoreError};
use rusqlite::{params, OptionalExtension};

/// Who runs a campaign.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CampaignLock {
    pub campaign_id: i64,
    pub host: String,
    pub pid: u32,
    pub started_unix_s: i64,
}

/// How [`Store::lock_campaign`] got the lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockTaken {
    /// Nobody held it (or this very process did).
    Fresh,
    /// It was held by a process the caller judged gone; this is who held it.
    TookOverStale(CampaignLock),
}

impl Store {
    /// Lock a campaign for `me`. If another process holds it, `is_stale(holder)`
    /// decides: true takes it over, false refuses with
    /// [`StoreError::CampaignLocked`] naming the holder. Check and take are one
    /// immediate transaction, so two processes cannot both get it.
    pub fn lock_campaign(
        &mut self,
        me: &CampaignLock,
        is_stale: impl Fn(&CampaignLock) -> bool,
    ) -> Result<LockTaken, StoreError> {
        self.check_writable("lock a campaign")?;
        self.require_campaign(me.campaign_id)?;
        let tx = self.conn.transaction()?;
        let holder = read_lock(&tx, me.campaign_id)?;
        let taken = match holder {
            None => LockTaken::Fresh,
            Some(h) if h.host == me.host && h.pid == me.pid => LockTaken::Fresh,
            Some(h) if is_stale(&h) => LockTaken::TookOverStale(h),
            Some(h) => {
                let started: String = tx.query_row(
                    "SELECT datetime(?1, 'unixepoch')",
                    [h.started_unix_s],
                    |r| r.get(0),
                )?;
                return Err(StoreError::CampaignLocked {
                    campaign_id: h.campaign_id,
                    host: h.host,
                    pid: h.pid,
                    started: format!("{started} UTC"),
                });
            }
        };
        tx.execute(
            "INSERT OR REPLACE INTO campaign_locks (campaign_id, host, pid, started_unix_s)
             VALUES (?1, ?2, ?3, ?4)",
            params![me.campaign_id, me.host, me.pid, me.started_unix_s],
        )?;
        tx.commit()?;
        Ok(taken)
    }

    /// Release `me`'s lock (a lock another process took over is left alone).
    pub fn unlock_campaign(&mut self, me: &CampaignLock) -> Result<(), StoreError> {
        self.check_writable("unlock a campaign")?;
        self.conn.execute(
            "DELETE FROM campaign_locks WHERE campaign_id = ?1 AND host = ?2 AND pid = ?3",
            params![me.campaign_id, me.host, me.pid],
        )?;
        Ok(())
    }

    /// Who holds a campaign's lock, if anyone (None also for a file that never had
    /// a writer of this version).
    pub fn campaign_lock(&self, campaign_id: i64) -> Result<Option<CampaignLock>, StoreError> {
        let has_table: bool = self.conn.query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'campaign_locks'",
            [],
            |r| r.get(0),
        )?;
        if !has_table {
            return Ok(None);
        }
        read_lock(&self.conn, campaign_id)
    }
}

fn read_lock(
    conn: &rusqlite::Connection,
    campaign_id: i64,
) -> Result<Option<CampaignLock>, StoreError> {
    let row: Option<(String, i64, i64)> = conn
        .query_row(
            "SELECT host, pid, started_unix_s FROM campaign_locks WHERE campaign_id = ?1",
            [campaign_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    row.map(|(host, pid, started_unix_s)| {
        let pid = u32::try_from(pid)
            .map_err(|_| StoreError::BadValue(format!("campaign lock with PID {pid}")))?;
        Ok(CampaignLock {
            campaign_id,
            host,
            pid,
            started_unix_s,
        })
    })
    .transpose()
}
