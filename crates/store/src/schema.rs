//! Versioned schema migrations. `PRAGMA user_version` holds the version a file is at;
//! [`MIGRATIONS`]`[i]` takes it from version `i` to `i + 1`. Migrations are append-only:
//! never edit one that has shipped, add the next.

use crate::StoreError;
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;

/// Migration `i` upgrades a database from schema version `i` to `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    // v0 -> v1: the first schema.
    r#"
    CREATE TABLE campaigns (
        id               INTEGER PRIMARY KEY,
        uuid             TEXT NOT NULL UNIQUE,
        label            TEXT NOT NULL,
        created_unix_s   INTEGER NOT NULL,
        command_line     TEXT NOT NULL,
        spec_json        TEXT NOT NULL,
        dualperf_version TEXT NOT NULL,
        git_revision     TEXT NOT NULL,
        imported_from    TEXT,
        finished         INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE hosts (
        id          INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        role        TEXT NOT NULL,
        UNIQUE (campaign_id, role)
    );
    CREATE TABLE host_metadata (
        host_id INTEGER NOT NULL REFERENCES hosts(id) ON DELETE CASCADE,
        key     TEXT NOT NULL,
        value   TEXT NOT NULL,
        PRIMARY KEY (host_id, key)
    );
    CREATE TABLE cells (
        id            INTEGER PRIMARY KEY,
        campaign_id   INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        cell_index    INTEGER NOT NULL,
        family        TEXT NOT NULL,
        kind          TEXT NOT NULL,
        payload_bytes INTEGER NOT NULL,
        direction     TEXT NOT NULL,
        spec_json     TEXT NOT NULL,
        target_met    INTEGER,
        UNIQUE (campaign_id, cell_index)
    );
    CREATE TABLE runs (
        id              INTEGER PRIMARY KEY,
        campaign_id     INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
        cell_id         INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
        repetition      INTEGER NOT NULL,
        warmup          INTEGER NOT NULL,
        attempt         INTEGER NOT NULL,
        ok              INTEGER NOT NULL,
        failure_reason  TEXT,
        started_unix_ns INTEGER NOT NULL,
        duration_ns     INTEGER NOT NULL,
        UNIQUE (cell_id, warmup, repetition, attempt)
    );
    CREATE INDEX runs_by_campaign ON runs (campaign_id, id);
    CREATE TABLE run_metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name   TEXT NOT NULL,
        value  REAL NOT NULL,
        unit   TEXT NOT NULL,
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE samples (
        run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        interval_index INTEGER NOT NULL,
        start_ns       INTEGER NOT NULL,
        end_ns         INTEGER NOT NULL,
        name           TEXT NOT NULL,
        value          REAL NOT NULL,
        PRIMARY KEY (run_id, interval_index, name)
    );
    "#,
    // 1 → 2: the socket settings and datapath each run applied, per side (`client.`,
    // `server.` + the engine's applied key), for exports and reports.
    r#"
    CREATE TABLE run_applied (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key    TEXT NOT NULL,
        value  TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
    );
    "#,
];

/// The schema version this build writes.
pub const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// The oldest version the read paths (show, export, report) read without migrating:
/// version 2 only added `run_applied`, which reads as empty where it is missing.
pub const READABLE_FROM: i64 = 1;

/// The schema version a database is at (0 for a new, empty file).
pub fn version(conn: &Connection) -> Result<i64, StoreError> {
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// Bring a database up to [`CURRENT_VERSION`], one transaction per migration. Each
/// migration runs in a `BEGIN IMMEDIATE` transaction that re-reads the version inside
/// it, so processes opening a new file at once wait for each other (busy timeout)
/// instead of racing ("table campaigns already exists"); the last to arrive finds the
/// work done.
pub fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let too_new = |found| StoreError::TooNew {
        path: path.to_path_buf(),
        found,
        supported: CURRENT_VERSION,
    };
    let mut found = version(conn)?;
    if found > CURRENT_VERSION {
        return Err(too_new(found));
    }
    while found < CURRENT_VERSION {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        found = version(&tx)?;
        if found > CURRENT_VERSION {
            return Err(too_new(found));
        }
        if found == CURRENT_VERSION {
            break;
        }
        let idx = usize::try_from(found)
            .map_err(|_| StoreError::BadValue(format!("schema version {found}")))?;
        tx.execute_batch(MIGRATIONS[idx])?;
        tx.pragma_update(None, "user_version", found + 1)?;
        tx.commit()?;
        found += 1;
    }
    ensure_bookkeeping(conn)
}

/// Tables that hold no results, only who is writing now (campaign locks). They are
/// created when a file is opened for writing, outside the versioned schema, so a file
/// without them is still current and read-only opens never need them.
pub const BOOKKEEPING: &str = r#"
    CREATE TABLE IF NOT EXISTS campaign_locks (
        campaign_id    INTEGER PRIMARY KEY REFERENCES campaigns(id) ON DELETE CASCADE,
        host           TEXT NOT NULL,
        pid            INTEGER NOT NULL,
        started_unix_s INTEGER NOT NULL
    );
"#;

fn ensure_bookkeeping(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(BOOKKEEPING)?;
    tx.commit()?;
    Ok(())
}
