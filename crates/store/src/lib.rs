//! dualperf-store: the SQLite results store, and the only crate that speaks SQL.
//!
//! One file holds campaigns (a study as it was asked for), the hosts that took part and
//! their metadata, the cells of the study matrix, every run with every metric, and
//! per-interval samples. The database runs in WAL mode with `synchronous=FULL`, and each
//! finished run is committed in its own transaction, so a killed process loses at most
//! the run in progress. The schema is versioned (`PRAGMA user_version`) and migrated
//! forward on open; a file made by a newer dualperf is refused, not damaged.
//!
//! Submodules: [`schema`] (migrations), `write` (campaign/run inserts), `read`
//! (queries), `import` (merging another database), `lock` (campaign locks). Write
//! transactions begin IMMEDIATE, so several processes can write one file at once.
#![forbid(unsafe_code)]

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use wire::spec::{Direction, Family, TestKind};

mod import;
mod lock;
mod read;
pub mod schema;
pub mod target;
mod write;

pub use import::ImportSummary;
pub use lock::{CampaignLock, LockTaken};
pub use target::{is_postgres_url, redact_password, DbTarget, DB_ENV};

/// Everything that can go wrong with the store. Messages say what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    // Not a `source`: the message carries it, and error chains would repeat it.
    #[error("cannot open results database {path}: {cause}")]
    Open {
        path: PathBuf,
        cause: rusqlite::Error,
    },
    #[error("results database {path} has schema version {found}, newer than this dualperf understands ({supported}); use a newer dualperf")]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("results database is opened read-only; cannot {0}")]
    ReadOnly(&'static str),
    #[error(
        "results database is full (disk or size limit reached); free space and resume the campaign"
    )]
    Full,
    #[error("no campaign {0} in the results database (`dualperf show` lists them)")]
    NoSuchCampaign(i64),
    #[error("the results database holds a value it cannot read: {0}")]
    BadValue(String),
    #[error("campaign {campaign_id} is being run by process {pid} on host {host} (since {started}); wait for it to finish or stop it, then resume")]
    CampaignLocked {
        campaign_id: i64,
        host: String,
        pid: u32,
        /// UTC, "2026-11-23 21:30:00".
        started: String,
    },
    #[error("the results database refused a duplicate record ({0}); is another dualperf writing the same campaign? `dualperf show` lists what is stored")]
    Duplicate(String),
    #[error("results database error: {0}")]
    Sql(rusqlite::Error),
    #[error("--db {0} names a PostgreSQL database, but this dualperf has no PostgreSQL backend yet (issue 16); use an SQLite file (the default, dualperf.db) and `dualperf import` to merge files")]
    BackendUnavailable(String),
}

/// What to do about a value dualperf cannot read back.
const CHANGED_OUTSIDE: &str = "the file was changed outside dualperf; restore a copy, or `dualperf import` the readable campaigns into a new file";

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        match &e {
            rusqlite::Error::IntegralValueOutOfRange(col, v) => {
                return StoreError::BadValue(format!(
                    "column {col} of a row holds {v}, out of range for what it stores; {CHANGED_OUTSIDE}"
                ))
            }
            rusqlite::Error::InvalidColumnType(_, name, ty) => {
                return StoreError::BadValue(format!(
                    "column '{name}' holds a {ty} value where dualperf stores another type; {CHANGED_OUTSIDE}"
                ))
            }
            rusqlite::Error::FromSqlConversionFailure(col, ty, cause) => {
                return StoreError::BadValue(format!(
                    "column {col} holds a {ty} value dualperf cannot read ({cause}); {CHANGED_OUTSIDE}"
                ))
            }
            _ => {}
        }
        if let rusqlite::Error::SqliteFailure(ref f, _) = e {
            match f.code {
                rusqlite::ErrorCode::DiskFull => return StoreError::Full,
                rusqlite::ErrorCode::ReadOnly => return StoreError::ReadOnly("write"),
                rusqlite::ErrorCode::ConstraintViolation => {
                    return StoreError::Duplicate(e.to_string())
                }
                _ => {}
            }
        }
        StoreError::Sql(e)
    }
}

/// One study as it was asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Campaign {
    pub id: i64,
    pub label: String,
    pub created_unix_s: i64,
    pub command_line: String,
    /// The study spec (study crate's `StudySpec`) as JSON.
    pub spec_json: String,
    pub hosts: Vec<HostInfo>,
    pub finished: bool,
}

/// One host of a campaign ("client", "server") and what was captured about it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostInfo {
    pub role: String,
    pub metadata: BTreeMap<String, String>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    Ok,
    Failed { reason: String },
}

impl RunStatus {
    pub fn is_ok(&self) -> bool {
        matches!(self, RunStatus::Ok)
    }
}

/// One run as stored (a warm-up, a measured repetition, or a failed attempt).
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub id: i64,
    pub campaign_id: i64,
    pub family: Family,
    pub kind: TestKind,
    pub payload_bytes: u32,
    pub direction: Direction,
    /// 0-based repetition within the cell (warm-ups count separately from 0).
    pub repetition: u32,
    pub warmup: bool,
    pub status: RunStatus,
    /// Metric name (`wire::metrics`) → value; empty for a failed run.
    pub metrics: BTreeMap<String, f64>,
    pub started_unix_ns: i64,
}

/// What the runner knows about a run beyond [`RunRecord`]: which cell, which attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct RunDetail {
    pub run: RunRecord,
    /// What each side applied (empty for runs stored before schema 2).
    pub applied: BTreeMap<String, String>,
    pub cell_index: u32,
    /// 0 for the first try, 1.. for retries.
    pub attempt: u32,
    pub duration_ns: i64,
}

/// Campaign fields that [`Campaign`] does not carry.
#[derive(Debug, Clone, PartialEq)]
pub struct CampaignExtra {
    /// Globally unique id, kept across `import` so a campaign is never merged twice.
    pub uuid: String,
    pub dualperf_version: String,
    pub git_revision: String,
    /// The database file a campaign was imported from, if it was.
    pub imported_from: Option<String>,
}

/// A cell of the study matrix: one (family, test, size, direction).
#[derive(Debug, Clone, PartialEq)]
pub struct CellRecord {
    pub campaign_id: i64,
    /// Position in the study's cell list (stable across resume).
    pub cell_index: u32,
    pub family: Family,
    pub kind: TestKind,
    pub payload_bytes: u32,
    pub direction: Direction,
    /// The full `TestSpec` of this cell as JSON.
    pub spec_json: String,
    /// Whether the confidence target was met; `None` while running or with fixed runs.
    pub target_met: Option<bool>,
}

/// Per-interval sample of one run: a window and the metrics measured over it.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalSample {
    pub start_ns: i64,
    pub end_ns: i64,
    pub metrics: BTreeMap<String, f64>,
}

/// A campaign to create.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCampaign {
    pub label: String,
    pub created_unix_s: i64,
    pub command_line: String,
    pub spec_json: String,
    pub dualperf_version: String,
    pub git_revision: String,
}

/// A finished run (or failed attempt) to commit.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    pub campaign_id: i64,
    pub cell_index: u32,
    pub repetition: u32,
    pub warmup: bool,
    pub attempt: u32,
    pub status: RunStatus,
    pub metrics: BTreeMap<String, f64>,
    pub samples: Vec<IntervalSample>,
    /// What each side applied (`client.sndbuf_bytes`, `server.udp_datapath_calls`, …).
    pub applied: BTreeMap<String, String>,
    pub started_unix_ns: i64,
    pub duration_ns: i64,
}

/// An open results database.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    read_only: bool,
}

impl Store {
    /// Open (creating if needed) a results database for reading and writing, switch it
    /// to WAL mode and migrate its schema to the current version.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let open_err = |cause| StoreError::Open {
            path: path.to_path_buf(),
            cause,
        };
        let conn = Connection::open(path).map_err(open_err)?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            read_only: false,
        };
        store.configure(true).map_err(|e| match e {
            StoreError::Sql(cause) => open_err(cause),
            other => other,
        })?;
        Ok(store)
    }

    /// Open an existing results database for reading only (reports, export, import
    /// source). Never creates or migrates; refuses files newer than this build.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        let open_err = |cause| StoreError::Open {
            path: path.to_path_buf(),
            cause,
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let first = Connection::open_with_flags(path, flags)
            .map_err(StoreError::Sql)
            .and_then(|conn| Store::configured_read_only(conn, path));
        match first {
            Err(StoreError::Sql(cause)) if path.exists() && !wal_has_frames(path) => {
                // A WAL database on a read-only file system: SQLite cannot create the
                // `-shm` file. With no un-checkpointed WAL frames the main file holds
                // everything, so it can be read as immutable.
                let uri_flags = flags | OpenFlags::SQLITE_OPEN_URI;
                Connection::open_with_flags(immutable_uri(path), uri_flags)
                    .map_err(StoreError::Sql)
                    .and_then(|conn| Store::configured_read_only(conn, path))
                    .map_err(|_| open_err(cause))
            }
            Err(StoreError::Sql(cause)) => Err(open_err(cause)),
            other => other,
        }
    }

    fn configured_read_only(conn: Connection, path: &Path) -> Result<Store, StoreError> {
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            read_only: true,
        };
        store.configure(false)?;
        Ok(store)
    }

    /// An in-memory database (tests and dry runs).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory()?;
        let mut store = Store {
            conn,
            path: PathBuf::from(":memory:"),
            read_only: false,
        };
        store.configure(true)?;
        Ok(store)
    }

    fn configure(&mut self, writable: bool) -> Result<(), StoreError> {
        self.conn.busy_timeout(std::time::Duration::from_secs(10))?;
        if writable {
            // Every write transaction takes the write lock when it begins, so it waits
            // (busy timeout) for another writer; a deferred one upgraded from a read in
            // WAL mode fails at once with "database is locked" instead.
            self.conn
                .set_transaction_behavior(TransactionBehavior::Immediate);
            // WAL: readers (show, report) never block the running study; FULL: a
            // committed run survives even a power cut, not only a killed process.
            let _mode: String = self
                .conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
            self.conn.pragma_update(None, "synchronous", "FULL")?;
            self.conn.pragma_update(None, "foreign_keys", "ON")?;
            schema::migrate(&mut self.conn, &self.path)?;
        } else {
            let version = schema::version(&self.conn)?;
            if version > schema::CURRENT_VERSION {
                return Err(StoreError::TooNew {
                    path: self.path.clone(),
                    found: version,
                    supported: schema::CURRENT_VERSION,
                });
            }
            if version < schema::READABLE_FROM {
                return Err(StoreError::BadValue(format!(
                    "{} has schema version {version} (current {}); open it once with `dualperf study --resume` or `dualperf import` to upgrade it",
                    self.path.display(),
                    schema::CURRENT_VERSION
                )));
            }
        }
        Ok(())
    }

    /// The file this store was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The SQLite journal mode in force ("wal" for a writable file database).
    pub fn journal_mode(&self) -> Result<String, StoreError> {
        Ok(self
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))?)
    }

    fn check_writable(&self, what: &'static str) -> Result<(), StoreError> {
        if self.read_only {
            Err(StoreError::ReadOnly(what))
        } else {
            Ok(())
        }
    }
}

/// Text form of a family in the database: "4" or "6".
pub(crate) fn family_text(f: Family) -> &'static str {
    match f {
        Family::V4 => "4",
        Family::V6 => "6",
    }
}

pub(crate) fn parse_family(s: &str) -> Result<Family, StoreError> {
    s.parse::<Family>().map_err(StoreError::BadValue)
}

pub(crate) fn parse_kind(s: &str) -> Result<TestKind, StoreError> {
    s.parse::<TestKind>().map_err(StoreError::BadValue)
}

/// Text form of a direction: "forward", "reverse" or "bidir".
pub fn direction_text(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "forward",
        Direction::Reverse => "reverse",
        Direction::Bidir => "bidir",
    }
}

pub(crate) fn parse_direction(s: &str) -> Result<Direction, StoreError> {
    match s {
        "forward" => Ok(Direction::Forward),
        "reverse" => Ok(Direction::Reverse),
        "bidir" => Ok(Direction::Bidir),
        other => Err(StoreError::BadValue(format!("unknown direction '{other}'"))),
    }
}

/// Whether `PATH-wal` exists with content (frames not yet checkpointed into PATH).
fn wal_has_frames(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).is_ok_and(|m| m.len() > 0)
}

/// `file:PATH?immutable=1`, with the characters a URI path cannot hold escaped.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for ch in path.to_string_lossy().chars() {
        match ch {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

#[cfg(test)]
mod tests;
