//! dualperf-store: the results store, and the only crate that speaks SQL.
//!
//! One database holds campaigns (a study as it was asked for), the hosts that took part
//! and their metadata, the cells of the study matrix, every run with every metric, and
//! per-interval samples. Two backends sit behind one interface ([`Store`]): an SQLite
//! file, the embedded default, and a PostgreSQL database shared by many controllers
//! (`--db postgres://…`). Each finished run is committed in its own transaction, so a
//! killed process loses at most the run in progress. The schema is versioned and
//! migrated forward on open; a database made by a newer dualperf is refused, not damaged.
//!
//! SQLite files run in WAL mode with `synchronous=FULL`; write transactions begin
//! IMMEDIATE, so several processes can write one file at once.
//!
//! Submodules: [`dataset`] (a report's input, as read from the store), `backend` (the
//! two connections behind one small SQL API), `pg` (connecting to PostgreSQL, its
//! errors), [`schema`] (migrations), `write` (campaign/run inserts), `read` (queries),
//! `import` (copying another database's campaigns), `lock` (campaign locks), [`target`]
//! (what `--db` names).
//!
//! Everything but [`dataset`] needs the feature `sql` (on by default): the report takes
//! the dataset types without it, so the presentation crate compiles no database driver.
#![forbid(unsafe_code)]

#[cfg(feature = "sql")]
use backend::Conn;
#[cfg(feature = "sql")]
use rusqlite::{Connection, OpenFlags};
#[cfg(feature = "sql")]
use std::collections::BTreeMap;
#[cfg(feature = "sql")]
use std::path::{Path, PathBuf};
#[cfg(feature = "sql")]
use wire::spec::{Direction, Family, TestKind};

#[cfg(feature = "sql")]
mod backend;
pub mod dataset;
#[cfg(feature = "sql")]
mod import;
#[cfg(feature = "sql")]
mod lock;
#[cfg(feature = "sql")]
mod pg;
#[cfg(feature = "sql")]
mod read;
#[cfg(feature = "sql")]
pub mod schema;
#[cfg(feature = "sql")]
pub mod target;
#[cfg(feature = "sql")]
mod value;
#[cfg(feature = "sql")]
mod write;

#[cfg(feature = "sql")]
pub use import::{ImportSummary, Merged, NAMED_CONFLICTS};
#[cfg(feature = "sql")]
pub use lock::{utc_text, CampaignLock, LockTaken};
#[cfg(feature = "sql")]
pub use read::{FailedAttempt, RunChunks, RunCounts, RUN_CHUNK};
#[cfg(feature = "sql")]
pub use target::{is_postgres_url, redact_password, DbTarget, PgUrl, DB_ENV};

/// Everything that can go wrong with the store. Messages say what to do.
#[derive(Debug, thiserror::Error)]
#[cfg(feature = "sql")]
pub enum StoreError {
    // Not a `source`: the message carries it, and error chains would repeat it.
    #[error("cannot open results database {path}: {cause}")]
    Open {
        path: PathBuf,
        cause: rusqlite::Error,
    },
    #[error("{} is {kind}, not a dualperf database; pass the database file with --db", path.display())]
    NotAFile {
        path: PathBuf,
        /// "a directory", "a FIFO (named pipe)", "a socket", "a character device"…
        kind: &'static str,
    },
    #[error("cannot connect to the PostgreSQL results database {url}: {cause}; {advice}")]
    Connect {
        /// Without its password.
        url: String,
        cause: String,
        advice: String,
    },
    #[error("lost the connection to the PostgreSQL results database {url} ({cause}); every run committed before it is kept")]
    ConnectionLost { url: String, cause: String },
    #[error("results database {db} has schema version {found}, newer than this dualperf understands ({supported}); use a newer dualperf")]
    TooNew {
        /// The file, or the URL without its password.
        db: String,
        found: i64,
        supported: i64,
    },
    #[error(
        "results database {0} holds no dualperf results yet (run `dualperf study --db …` first)"
    )]
    Empty(String),
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
    #[error("the results database stayed locked by another writer for {}s (an import, another study or an exporter archiving into the same file): wait for it to end, then resume (`dualperf study --resume ID`; `dualperf show` lists the campaigns)", BUSY_TIMEOUT.as_secs())]
    Busy,
    #[error("results database error: {0}")]
    Sql(rusqlite::Error),
    #[error("PostgreSQL results database error: {0}")]
    Postgres(String),
}

/// What to do about a value dualperf cannot read back.
#[cfg(feature = "sql")]
pub(crate) const CHANGED_OUTSIDE: &str = "the database was changed outside dualperf; restore a copy, or `dualperf import` the readable campaigns into a new file";

#[cfg(feature = "sql")]
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
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked => {
                    return StoreError::Busy
                }
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
#[cfg(feature = "sql")]
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
#[cfg(feature = "sql")]
pub struct HostInfo {
    pub role: String,
    pub metadata: BTreeMap<String, String>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
#[cfg(feature = "sql")]
pub enum RunStatus {
    Ok,
    Failed { reason: String },
}

#[cfg(feature = "sql")]
impl RunStatus {
    pub fn is_ok(&self) -> bool {
        matches!(self, RunStatus::Ok)
    }
}

/// One run as stored (a warm-up, a measured repetition, or a failed attempt).
#[derive(Debug, Clone, PartialEq)]
#[cfg(feature = "sql")]
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
#[cfg(feature = "sql")]
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
#[cfg(feature = "sql")]
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
#[cfg(feature = "sql")]
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
#[cfg(feature = "sql")]
pub struct IntervalSample {
    pub start_ns: i64,
    pub end_ns: i64,
    pub metrics: BTreeMap<String, f64>,
}

/// A campaign to create.
#[derive(Debug, Clone, PartialEq)]
#[cfg(feature = "sql")]
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
#[cfg(feature = "sql")]
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
#[cfg(feature = "sql")]
pub struct Store {
    conn: Conn,
    /// The SQLite file (":memory:" in memory); for PostgreSQL the URL without its
    /// password.
    path: PathBuf,
    read_only: bool,
}

/// How long a connection waits for another's lock before giving up.
#[cfg(feature = "sql")]
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Switch an SQLite file to WAL mode. Changing the journal mode needs the file to
/// itself for a moment, and SQLite answers `SQLITE_BUSY` at once, without calling the
/// busy handler, while another connection holds a lock (several studies opening one new
/// file together): so this waits and retries itself, within the same `timeout`.
#[cfg(feature = "sql")]
fn set_wal(c: &Connection, timeout: std::time::Duration) -> Result<(), StoreError> {
    let deadline = std::time::Instant::now() + timeout;
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        let mode: String = c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if mode.eq_ignore_ascii_case("wal") || mode.eq_ignore_ascii_case("memory") {
            return Ok(());
        }
        match c.query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0)) {
            Ok(_) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// What is at `path`, when something is there that is not a regular file (a FIFO, a
/// socket, a device, a directory): an error saying so. Only the file's metadata is
/// read (following links), so a FIFO does not block and `/dev/null` gets no
/// `-journal` beside it. Nothing there, or a regular file: Ok.
#[cfg(feature = "sql")]
pub fn check_database_path(path: &Path) -> Result<(), StoreError> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let t = meta.file_type();
    if t.is_file() {
        return Ok(());
    }
    let kind = if t.is_dir() {
        "a directory"
    } else {
        special_file_kind(&t)
    };
    Err(StoreError::NotAFile {
        path: path.to_path_buf(),
        kind,
    })
}

#[cfg(unix)]
#[cfg(feature = "sql")]
fn special_file_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
#[cfg(feature = "sql")]
fn special_file_kind(_: &std::fs::FileType) -> &'static str {
    "not a regular file"
}

#[cfg(feature = "sql")]
impl Store {
    /// Open (creating or migrating as needed) the database `--db` names, for writing.
    pub fn open_target(target: &DbTarget) -> Result<Store, StoreError> {
        match target {
            DbTarget::Sqlite(path) => Store::open(path),
            DbTarget::Postgres(url) => Store::open_postgres(url, false),
        }
    }

    /// Open the database `--db` names for reading only; never creates or migrates.
    pub fn open_target_read_only(target: &DbTarget) -> Result<Store, StoreError> {
        match target {
            DbTarget::Sqlite(path) => Store::open_read_only(path),
            DbTarget::Postgres(url) => Store::open_postgres(url, true),
        }
    }

    fn open_postgres(url: &PgUrl, read_only: bool) -> Result<Store, StoreError> {
        let conn = Conn::Postgres(Box::new(pg::connect(
            url.secret(),
            url.redacted(),
            read_only,
        )?));
        let store = Store {
            conn,
            path: PathBuf::from(url.redacted()),
            read_only,
        };
        store.configure(!read_only)?;
        Ok(store)
    }

    /// Open (creating if needed) an SQLite results database for reading and writing,
    /// switch it to WAL mode and migrate its schema to the current version.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        check_database_path(path)?;
        let open_err = |cause| StoreError::Open {
            path: path.to_path_buf(),
            cause,
        };
        let conn = Connection::open(path).map_err(open_err)?;
        let store = Store {
            conn: Conn::Sqlite(conn),
            path: path.to_path_buf(),
            read_only: false,
        };
        store.configure(true).map_err(|e| match e {
            StoreError::Sql(cause) => open_err(cause),
            other => other,
        })?;
        Ok(store)
    }

    /// Open an existing SQLite results database for reading only (reports, export,
    /// import source). Never creates or migrates; refuses files newer than this build.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        check_database_path(path)?;
        let open_err = |cause| StoreError::Open {
            path: path.to_path_buf(),
            cause,
        };
        // Read through a connection that could write, with every statement held to
        // reads (`query_only`): SQLite removes the `-wal` and `-shm` files when the last
        // connection that can write closes, and a read-only one leaves them beside the
        // database for good. A file that cannot be written is opened read-only below.
        let rw = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if let Ok(conn) = Connection::open_with_flags(path, rw) {
            let queries_only = conn
                .pragma_update(None, "query_only", "ON")
                .map_err(StoreError::Sql)
                .and_then(|()| Store::configured_read_only(conn, path));
            if let Ok(store) = queries_only {
                return Ok(store);
            }
        }
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
        let store = Store {
            conn: Conn::Sqlite(conn),
            path: path.to_path_buf(),
            read_only: true,
        };
        store.configure(false)?;
        Ok(store)
    }

    /// An in-memory SQLite database (tests and dry runs).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory()?;
        let store = Store {
            conn: Conn::Sqlite(conn),
            path: PathBuf::from(":memory:"),
            read_only: false,
        };
        store.configure(true)?;
        Ok(store)
    }

    fn configure(&self, writable: bool) -> Result<(), StoreError> {
        if let Some(c) = self.conn.sqlite() {
            c.busy_timeout(BUSY_TIMEOUT)?;
            if writable {
                // WAL: readers (show, report) never block the running study; FULL: a
                // committed run survives even a power cut, not only a killed process.
                set_wal(c, BUSY_TIMEOUT)?;
                c.pragma_update(None, "synchronous", "FULL")?;
                c.pragma_update(None, "foreign_keys", "ON")?;
            }
        }
        let name = self.name();
        if writable {
            return schema::migrate(&self.conn, &name);
        }
        let version = schema::effective_version(&self.conn, &name)?;
        if version > schema::CURRENT_VERSION {
            return Err(StoreError::TooNew {
                db: name,
                found: version,
                supported: schema::CURRENT_VERSION,
            });
        }
        if version == 0 {
            // No dualperf tables (a `.dump` copy that has them reads at its version).
            return Err(StoreError::Empty(name));
        }
        if version < schema::READABLE_FROM {
            return Err(StoreError::BadValue(format!(
                "{name} has schema version {version} (current {}); open it once with `dualperf study --resume` or `dualperf import` to upgrade it",
                schema::CURRENT_VERSION
            )));
        }
        Ok(())
    }

    /// The SQLite file this store was opened from; for PostgreSQL, the URL without
    /// its password.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The database for messages: the file, or the URL without its password.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// Whether this is a PostgreSQL database.
    pub fn is_postgres(&self) -> bool {
        self.conn.is_postgres()
    }

    /// The schema version the database is at.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        schema::version(&self.conn)
    }

    /// The SQLite journal mode in force ("wal" for a writable file database);
    /// "postgresql" for a PostgreSQL database.
    pub fn journal_mode(&self) -> Result<String, StoreError> {
        match self.conn.sqlite() {
            Some(c) => Ok(c.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))?),
            None => Ok("postgresql".into()),
        }
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
#[cfg(feature = "sql")]
pub(crate) fn family_text(f: Family) -> &'static str {
    match f {
        Family::V4 => "4",
        Family::V6 => "6",
    }
}

#[cfg(feature = "sql")]
pub(crate) fn parse_family(s: &str) -> Result<Family, StoreError> {
    s.parse::<Family>()
        .map_err(|e| StoreError::BadValue(e.to_string()))
}

#[cfg(feature = "sql")]
pub(crate) fn parse_kind(s: &str) -> Result<TestKind, StoreError> {
    s.parse::<TestKind>()
        .map_err(|e| StoreError::BadValue(e.to_string()))
}

/// Text form of a direction: "forward", "reverse" or "bidir".
#[cfg(feature = "sql")]
pub fn direction_text(d: Direction) -> &'static str {
    match d {
        Direction::Forward => "forward",
        Direction::Reverse => "reverse",
        Direction::Bidir => "bidir",
    }
}

#[cfg(feature = "sql")]
pub(crate) fn parse_direction(s: &str) -> Result<Direction, StoreError> {
    match s {
        "forward" => Ok(Direction::Forward),
        "reverse" => Ok(Direction::Reverse),
        "bidir" => Ok(Direction::Bidir),
        other => Err(StoreError::BadValue(format!("unknown direction '{other}'"))),
    }
}

/// Whether `PATH-wal` exists with content (frames not yet checkpointed into PATH).
#[cfg(feature = "sql")]
fn wal_has_frames(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).is_ok_and(|m| m.len() > 0)
}

/// `file:PATH?immutable=1`, with the characters a URI path cannot hold escaped.
#[cfg(feature = "sql")]
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
#[cfg(feature = "sql")]
mod tests;
