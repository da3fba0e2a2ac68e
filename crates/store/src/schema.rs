//! Versioned schema migrations, one list for both backends. SQLite keeps the version a
//! file is at in `PRAGMA user_version`; PostgreSQL in the one-row table
//! `dualperf_schema`. [`MIGRATIONS`]`[i]` takes a database from version `i` to `i + 1`;
//! it is written in SQLite's dialect and [`postgres_ddl`] translates its types for
//! PostgreSQL (`id INTEGER PRIMARY KEY` → an identity `BIGINT`, `INTEGER` → `BIGINT`,
//! `REAL` → `DOUBLE PRECISION`, `BLOB` → `BYTEA`), so both hold the same tables,
//! columns and view. Migrations are append-only: never edit one that has shipped, add
//! the next.

use crate::backend::{params, Conn};
use crate::StoreError;

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
    // 2 → 3: `run_results`, one row per measured run and metric with its campaign, cell
    // and the hosts that made it: what a Grafana data source or pandas `read_sql`
    // queries directly (see docs/guide/postgresql.md, "Querying it: the `run_results` view").
    r#"
    CREATE VIEW run_results AS
    SELECT
        c.id              AS campaign_id,
        c.uuid            AS campaign_uuid,
        c.label           AS campaign_label,
        c.created_unix_s  AS campaign_created_unix_s,
        r.id              AS run_id,
        r.started_unix_ns AS started_unix_ns,
        CAST(r.started_unix_ns AS REAL) / 1000000000.0 AS started_unix_s,
        r.duration_ns     AS duration_ns,
        ce.cell_index     AS cell_index,
        ce.family         AS family,
        ce.kind           AS test,
        ce.payload_bytes  AS payload_bytes,
        ce.direction      AS direction,
        r.repetition      AS repetition,
        r.warmup          AS warmup,
        r.attempt         AS attempt,
        m.name            AS metric,
        m.value           AS value,
        m.unit            AS unit,
        (SELECT hm.value FROM hosts h JOIN host_metadata hm ON hm.host_id = h.id
          WHERE h.campaign_id = c.id AND h.role = 'client' AND hm.key = 'host.name')
                          AS client_host,
        (SELECT hm.value FROM hosts h JOIN host_metadata hm ON hm.host_id = h.id
          WHERE h.campaign_id = c.id AND h.role = 'client' AND hm.key = 'os.pretty_name')
                          AS client_os,
        (SELECT hm.value FROM hosts h JOIN host_metadata hm ON hm.host_id = h.id
          WHERE h.campaign_id = c.id AND h.role = 'client' AND hm.key = 'kernel.release')
                          AS client_kernel,
        (SELECT hm.value FROM hosts h JOIN host_metadata hm ON hm.host_id = h.id
          WHERE h.campaign_id = c.id AND h.role = 'server' AND hm.key = 'host.name')
                          AS server_host,
        (SELECT hm.value FROM hosts h JOIN host_metadata hm ON hm.host_id = h.id
          WHERE h.campaign_id = c.id AND h.role = 'server' AND hm.key = 'os.pretty_name')
                          AS server_os,
        (SELECT hm.value FROM hosts h JOIN host_metadata hm ON hm.host_id = h.id
          WHERE h.campaign_id = c.id AND h.role = 'server' AND hm.key = 'kernel.release')
                          AS server_kernel
    FROM runs r
    JOIN campaigns c ON c.id = r.campaign_id
    JOIN cells ce ON ce.id = r.cell_id
    JOIN run_metrics m ON m.run_id = r.id
    WHERE r.ok = 1;
    "#,
];

/// The schema version this build writes.
pub const CURRENT_VERSION: i64 = MIGRATIONS.len() as i64;

/// The oldest version the read paths (show, export, report) read without migrating:
/// version 2 only added `run_applied`, which reads as empty where it is missing, and
/// version 3 only the `run_results` view, which dualperf itself does not read.
pub const READABLE_FROM: i64 = 1;

/// A PostgreSQL advisory lock key (any constant): migrations of one database by
/// several processes at once wait for each other.
const PG_MIGRATION_LOCK: i64 = 0x6475_616c_7065_7266; // "dualperf"

/// The schema version a database is at (0 for a new, empty one).
pub(crate) fn version(conn: &Conn) -> Result<i64, StoreError> {
    match conn {
        Conn::Sqlite(_) => conn.query_one("PRAGMA user_version", &[])?.i64(0),
        Conn::Postgres(_) => {
            if !conn.has_table("dualperf_schema")? {
                return Ok(0);
            }
            Ok(conn
                .query_opt("SELECT version FROM dualperf_schema", &[])?
                .map(|r| r.i64(0))
                .transpose()?
                .unwrap_or(0))
        }
    }
}

/// The columns of every dualperf table and view in an SQLite database, sorted
/// ("campaigns.id", …): what a schema version is recognised by.
fn sqlite_columns(c: &rusqlite::Connection) -> Result<Vec<String>, StoreError> {
    let mut st = c.prepare(
        "SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p
         WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite_%'
           AND m.name <> 'campaign_locks'
         ORDER BY 1",
    )?;
    let cols = st
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(cols)
}

/// The schema version of an SQLite file whose `user_version` is 0 but which holds
/// dualperf's tables: a copy made with `sqlite3 old.db .dump | sqlite3 copy.db` (the
/// dump keeps the tables, not the version). The version is the one whose tables and
/// columns the file holds exactly; `Ok(None)` for a new, empty file; an error naming
/// what differs when the tables match no version.
pub(crate) fn unversioned_sqlite(conn: &Conn, db: &str) -> Result<Option<i64>, StoreError> {
    let Some(c) = conn.sqlite() else {
        return Ok(None);
    };
    if conn.query_one("PRAGMA user_version", &[])?.i64(0)? != 0 || !conn.has_table("campaigns")? {
        return Ok(None);
    }
    let found = sqlite_columns(c)?;
    let reference = rusqlite::Connection::open_in_memory()?;
    for (i, migration) in MIGRATIONS.iter().enumerate() {
        reference.execute_batch(migration)?;
        if sqlite_columns(&reference)? == found {
            return Ok(Some(i as i64 + 1));
        }
    }
    let current = sqlite_columns(&reference)?;
    let missing: Vec<&String> = current.iter().filter(|c| !found.contains(c)).collect();
    let extra: Vec<&String> = found.iter().filter(|c| !current.contains(c)).collect();
    Err(StoreError::BadValue(format!(
        "{db} holds dualperf tables but no schema version (a copy made with `.dump`?), and \
         its columns match no dualperf schema (missing: {}; not dualperf's: {}); {}",
        list_or_none(&missing),
        list_or_none(&extra),
        crate::CHANGED_OUTSIDE
    )))
}

fn list_or_none(items: &[&String]) -> String {
    if items.is_empty() {
        return "none".into();
    }
    let shown: Vec<&str> = items.iter().take(8).map(|s| s.as_str()).collect();
    let more = items.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// The version a database reads as: its recorded version, or for an SQLite copy that
/// lost it (see [`unversioned_sqlite`]) the version its tables show.
pub(crate) fn effective_version(conn: &Conn, db: &str) -> Result<i64, StoreError> {
    match unversioned_sqlite(conn, db)? {
        Some(v) => Ok(v),
        None => version(conn),
    }
}

fn set_version(conn: &Conn, v: i64) -> Result<(), StoreError> {
    match conn {
        Conn::Sqlite(_) => conn.batch(&format!("PRAGMA user_version = {v}")),
        Conn::Postgres(_) => {
            conn.execute("DELETE FROM dualperf_schema", &[])?;
            conn.execute(
                "INSERT INTO dualperf_schema (version) VALUES (?1)",
                params![v],
            )?;
            Ok(())
        }
    }
}

/// A migration (or any of the crate's DDL) in the dialect of `conn`.
pub(crate) fn ddl_for(conn: &Conn, sql: &str) -> String {
    if conn.is_postgres() {
        postgres_ddl(sql)
    } else {
        sql.to_string()
    }
}

/// SQLite DDL → PostgreSQL DDL: the column types, word by word (see the module doc).
pub fn postgres_ddl(sql: &str) -> String {
    // Words and the text between them, in order.
    let mut tokens: Vec<(bool, String)> = Vec::new();
    for ch in sql.chars() {
        let is_word = ch.is_ascii_alphanumeric() || ch == '_';
        match tokens.last_mut() {
            Some((w, t)) if *w == is_word => t.push(ch),
            _ => tokens.push((is_word, ch.to_string())),
        }
    }
    let words: Vec<usize> = (0..tokens.len()).filter(|&i| tokens[i].0).collect();
    let mut out = String::with_capacity(sql.len() + 64);
    for (i, (is_word, text)) in tokens.iter().enumerate() {
        if !is_word {
            out.push_str(text);
            continue;
        }
        let pos = words.iter().position(|&w| w == i).unwrap_or(0);
        let word_at = |k: usize| words.get(k).map(|&j| tokens[j].1.as_str());
        out.push_str(match text.as_str() {
            // Only a column named exactly `id` becomes an identity (SQLite's rowid alias).
            "INTEGER"
                if pos > 0
                    && word_at(pos - 1) == Some("id")
                    && word_at(pos + 1) == Some("PRIMARY")
                    && word_at(pos + 2) == Some("KEY") =>
            {
                "BIGINT GENERATED BY DEFAULT AS IDENTITY"
            }
            "INTEGER" => "BIGINT",
            "REAL" => "DOUBLE PRECISION",
            "BLOB" => "BYTEA",
            w => w,
        });
    }
    out
}

/// Bring a database up to [`CURRENT_VERSION`], one transaction per migration, and
/// create the bookkeeping tables. Each migration's transaction re-reads the version
/// inside it while holding the write lock (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: an
/// advisory lock), so processes opening a new database at once wait for each other
/// instead of racing ("table campaigns already exists"); the last finds the work done.
pub(crate) fn migrate(conn: &Conn, db: &str) -> Result<(), StoreError> {
    let too_new = |found| StoreError::TooNew {
        db: db.to_string(),
        found,
        supported: CURRENT_VERSION,
    };
    let mut found = version(conn)?;
    if found > CURRENT_VERSION {
        return Err(too_new(found));
    }
    loop {
        let tx = conn.transaction()?;
        if tx.is_postgres() {
            tx.execute(
                "SELECT pg_advisory_xact_lock(?1)",
                params![PG_MIGRATION_LOCK],
            )?;
            tx.batch("CREATE TABLE IF NOT EXISTS dualperf_schema (version BIGINT NOT NULL)")?;
        }
        found = version(&tx)?;
        if let Some(v) = unversioned_sqlite(&tx, db)? {
            // A `.dump` copy: adopt it at the version its tables show, then migrate on.
            set_version(&tx, v)?;
            found = v;
        }
        if found > CURRENT_VERSION {
            return Err(too_new(found));
        }
        if found == CURRENT_VERSION {
            // Tables that hold no results, only who is writing now.
            tx.batch(&ddl_for(&tx, BOOKKEEPING))?;
            return tx.commit();
        }
        let idx = usize::try_from(found)
            .map_err(|_| StoreError::BadValue(format!("schema version {found}")))?;
        tx.batch(&ddl_for(&tx, MIGRATIONS[idx]))?;
        set_version(&tx, found + 1)?;
        tx.commit()?;
    }
}

/// Tables that hold no results, only who is writing now (campaign locks). They are
/// created when a database is opened for writing, outside the versioned schema, so a
/// database without them is still current and read-only opens never need them.
pub const BOOKKEEPING: &str = r#"
    CREATE TABLE IF NOT EXISTS campaign_locks (
        campaign_id    INTEGER PRIMARY KEY REFERENCES campaigns(id) ON DELETE CASCADE,
        host           TEXT NOT NULL,
        pid            INTEGER NOT NULL,
        started_unix_s INTEGER NOT NULL
    );
"#;

#[cfg(test)]
mod tests {
    #[test]
    fn postgres_ddl_translates_types_by_whole_word() {
        assert_eq!(
            super::postgres_ddl(
                "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, x REAL, b BLOB, real_name TEXT, INTEGERS TEXT)"
            ),
            "CREATE TABLE t (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, n BIGINT NOT NULL, x DOUBLE PRECISION, b BYTEA, real_name TEXT, INTEGERS TEXT)"
        );
        let spaced = super::postgres_ddl("(\n  id      INTEGER PRIMARY KEY,\n  uuid TEXT)");
        assert_eq!(
            spaced,
            "(\n  id      BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,\n  uuid TEXT)"
        );
        // A key that is also a reference keeps its value: no identity.
        assert_eq!(
            super::postgres_ddl("campaign_id INTEGER PRIMARY KEY REFERENCES c(id)"),
            "campaign_id BIGINT PRIMARY KEY REFERENCES c(id)"
        );
    }
}
