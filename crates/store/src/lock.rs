//! Campaign locks: the process running a campaign holds a row naming its host, PID and
//! start time, so a second `study --resume` of the same campaign is refused with who
//! holds it instead of measuring alongside it. A lock left by a process that died
//! (kill -9, power cut) is recognised by the caller's `is_stale` test and taken over.
//!
//! On PostgreSQL the holder also keeps a session-level advisory lock on the campaign
//! for as long as its connection lives. The server drops it when the holder's
//! connection ends — however the process ended, on whichever controller — so a lock
//! row whose advisory lock is free is stale, and `--resume` from any controller takes it
//! over; one whose advisory lock is held is refused.

use crate::backend::{params, Conn};
use crate::{Store, StoreError};

/// The first key of the PostgreSQL advisory locks on campaigns (the second is the
/// campaign id).
const PG_LOCK_CLASS: i64 = 0x6470_6572; // "dper"

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
        let session_free = if tx.is_postgres() {
            // Lockers of one campaign take turns from here to the commit.
            tx.execute(
                "SELECT id FROM campaigns WHERE id = ?1 FOR UPDATE",
                params![me.campaign_id],
            )?;
            Some(pg_session_lock(&tx, me.campaign_id)?)
        } else {
            None
        };
        let holder = read_lock(&tx, me.campaign_id)?;
        let taken = match (holder, session_free) {
            (None, _) => LockTaken::Fresh,
            (Some(h), _) if h.host == me.host && h.pid == me.pid => LockTaken::Fresh,
            // PostgreSQL: the holder's connection is gone with its advisory lock.
            (Some(h), Some(true)) => LockTaken::TookOverStale(h),
            (Some(h), None) if is_stale(&h) => LockTaken::TookOverStale(h),
            (Some(h), _) => {
                return Err(StoreError::CampaignLocked {
                    campaign_id: h.campaign_id,
                    host: h.host,
                    pid: h.pid,
                    started: format!("{} UTC", utc_text(h.started_unix_s)),
                });
            }
        };
        tx.execute(
            "INSERT INTO campaign_locks (campaign_id, host, pid, started_unix_s)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (campaign_id) DO UPDATE SET host = excluded.host,
                 pid = excluded.pid, started_unix_s = excluded.started_unix_s",
            params![me.campaign_id, &me.host, me.pid, me.started_unix_s],
        )?;
        tx.commit()?;
        Ok(taken)
    }

    /// Release `me`'s lock (a lock another process took over is left alone).
    pub fn unlock_campaign(&mut self, me: &CampaignLock) -> Result<(), StoreError> {
        self.check_writable("unlock a campaign")?;
        self.conn.execute(
            "DELETE FROM campaign_locks WHERE campaign_id = ?1 AND host = ?2 AND pid = ?3",
            params![me.campaign_id, &me.host, me.pid],
        )?;
        if self.conn.is_postgres() {
            // Held by this connection only if it is the one that locked.
            self.conn.execute("SELECT pg_advisory_unlock_all()", &[])?;
        }
        Ok(())
    }

    /// Who holds a campaign's lock, if anyone (None also for a file that never had
    /// a writer of this version).
    pub fn campaign_lock(&self, campaign_id: i64) -> Result<Option<CampaignLock>, StoreError> {
        if !self.conn.has_table("campaign_locks")? {
            return Ok(None);
        }
        read_lock(&self.conn, campaign_id)
    }
}

fn read_lock(conn: &Conn, campaign_id: i64) -> Result<Option<CampaignLock>, StoreError> {
    let Some(r) = conn.query_opt(
        "SELECT host, pid, started_unix_s FROM campaign_locks WHERE campaign_id = ?1",
        params![campaign_id],
    )?
    else {
        return Ok(None);
    };
    let pid = r.i64(1)?;
    Ok(Some(CampaignLock {
        campaign_id,
        host: r.text(0)?,
        pid: u32::try_from(pid)
            .map_err(|_| StoreError::BadValue(format!("campaign lock with PID {pid}")))?,
        started_unix_s: r.i64(2)?,
    }))
}

/// Take this connection's advisory lock on a campaign. True when it was free (or
/// already this connection's). When no row names a holder but the advisory lock is
/// held, its holder is a connection that just unlocked and is closing: wait for it.
fn pg_session_lock(tx: &Conn, campaign_id: i64) -> Result<bool, StoreError> {
    let got = tx
        .query_one(
            "SELECT pg_try_advisory_lock(CAST(?1 AS INTEGER), CAST(?2 AS INTEGER))",
            params![PG_LOCK_CLASS, campaign_id],
        )?
        .bool(0)?;
    if got || read_lock(tx, campaign_id)?.is_some() {
        return Ok(got);
    }
    tx.batch("SET LOCAL lock_timeout = '15s'")?;
    tx.execute(
        "SELECT pg_advisory_lock(CAST(?1 AS INTEGER), CAST(?2 AS INTEGER))",
        params![PG_LOCK_CLASS, campaign_id],
    )?;
    Ok(true)
}

/// "2023-11-14 22:13:20" for a Unix time (UTC; civil date by H. Hinnant's algorithm):
/// the one date format of stored times (locks, `show`, the report).
pub fn utc_text(unix_s: i64) -> String {
    let days = unix_s.div_euclid(86_400);
    let secs = unix_s.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_dates() {
        assert_eq!(super::utc_text(0), "1970-01-01 00:00:00");
        assert_eq!(super::utc_text(1_700_000_000), "2023-11-14 22:13:20");
        assert_eq!(super::utc_text(951_782_400), "2000-02-29 00:00:00");
    }
}
