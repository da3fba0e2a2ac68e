//! Store tests: migrations, WAL, commit per run, import merge, clean errors.

use super::*;
use std::collections::BTreeMap;
use wire::metrics;

fn new_campaign(label: &str) -> NewCampaign {
    NewCampaign {
        label: label.to_string(),
        created_unix_s: 1_700_000_000,
        command_line: "dualperf study --runs 2".to_string(),
        spec_json: "{}".to_string(),
        dualperf_version: "0.1.0".to_string(),
        git_revision: "abc123".to_string(),
    }
}

fn cell(campaign_id: i64, idx: u32, family: Family, size: u32) -> CellRecord {
    CellRecord {
        campaign_id,
        cell_index: idx,
        family,
        kind: TestKind::UdpStream,
        payload_bytes: size,
        direction: Direction::Forward,
        spec_json: "{}".to_string(),
        target_met: None,
    }
}

fn ok_run(campaign_id: i64, cell_index: u32, repetition: u32, tput: f64) -> NewRun {
    let mut m = BTreeMap::new();
    m.insert(metrics::THROUGHPUT_BPS.to_string(), tput);
    m.insert(metrics::JITTER_RFC3550_NS.to_string(), 1500.0);
    NewRun {
        campaign_id,
        cell_index,
        repetition,
        warmup: false,
        attempt: 0,
        status: RunStatus::Ok,
        metrics: m,
        samples: vec![IntervalSample {
            start_ns: 0,
            end_ns: 100_000_000,
            metrics: [(metrics::THROUGHPUT_BPS.to_string(), tput)].into(),
        }],
        applied: [("client.sndbuf_bytes".to_string(), "16384".to_string())].into(),
        started_unix_ns: 1_700_000_000_000_000_000 + i64::from(repetition),
        duration_ns: 1_000_000_000,
    }
}

/// A file database with one campaign, two cells, three runs (one failed).
fn filled(dir: &Path, label: &str) -> (PathBuf, i64) {
    let path = dir.join(format!("{label}.db"));
    let mut s = Store::open(&path).unwrap();
    let id = s.create_campaign(&new_campaign(label)).unwrap();
    let md: BTreeMap<String, String> = [("os.name".to_string(), "Ubuntu".to_string())].into();
    s.set_host(
        id,
        &HostInfo {
            role: "client".into(),
            metadata: md,
        },
    )
    .unwrap();
    s.add_cells(&[cell(id, 0, Family::V4, 128), cell(id, 1, Family::V6, 128)])
        .unwrap();
    s.record_run(&ok_run(id, 0, 0, 9.0e8)).unwrap();
    s.record_run(&ok_run(id, 1, 0, 8.5e8)).unwrap();
    let mut failed = ok_run(id, 1, 1, 0.0);
    failed.status = RunStatus::Failed {
        reason: "peer vanished".into(),
    };
    failed.metrics.clear();
    failed.samples.clear();
    s.record_run(&failed).unwrap();
    (path, id)
}

#[test]
fn new_file_is_migrated_to_current_version_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    let s = Store::open(&path).unwrap();
    assert_eq!(schema::version(&s.conn).unwrap(), schema::CURRENT_VERSION);
    assert_eq!(s.journal_mode().unwrap(), "wal");
    drop(s);
    // Reopening is idempotent.
    let s = Store::open(&path).unwrap();
    assert_eq!(schema::version(&s.conn).unwrap(), schema::CURRENT_VERSION);
    assert!(s.campaigns().unwrap().is_empty());
}

#[test]
fn file_from_a_newer_dualperf_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    {
        let c = Connection::open(&path).unwrap();
        c.pragma_update(None, "user_version", 99).unwrap();
    }
    let err = Store::open(&path).err().unwrap();
    assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
    let err = Store::open_read_only(&path).err().unwrap();
    assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
    let c = Connection::open(&path).unwrap();
    let v: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 99);
}

#[test]
fn runs_round_trip_with_metrics_status_and_samples() {
    let dir = tempfile::tempdir().unwrap();
    let (path, id) = filled(dir.path(), "rt");
    let s = Store::open_read_only(&path).unwrap();
    let camps = s.campaigns().unwrap();
    assert_eq!(camps.len(), 1);
    assert_eq!(camps[0].label, "rt");
    assert!(!camps[0].finished);
    assert_eq!(camps[0].hosts[0].role, "client");
    assert_eq!(camps[0].hosts[0].metadata["os.name"], "Ubuntu");
    let runs = s.runs(id).unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0].family, Family::V4);
    assert_eq!(runs[1].family, Family::V6);
    assert_eq!(runs[0].metrics[metrics::THROUGHPUT_BPS], 9.0e8);
    assert_eq!(runs[0].kind, TestKind::UdpStream);
    assert_eq!(
        runs[2].status,
        RunStatus::Failed {
            reason: "peer vanished".into()
        }
    );
    assert!(runs[2].metrics.is_empty());
    let samples = s.samples(runs[0].id).unwrap();
    assert_eq!(samples.len(), 1);
    assert_eq!(samples[0].end_ns, 100_000_000);
    let details = s.run_details(id).unwrap();
    assert_eq!(details[2].cell_index, 1);
    assert_eq!(details[2].run.repetition, 1);
}

#[test]
fn each_run_is_visible_to_another_connection_as_soon_as_it_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.db");
    let mut w = Store::open(&path).unwrap();
    let id = w.create_campaign(&new_campaign("live")).unwrap();
    w.add_cells(&[cell(id, 0, Family::V4, 128)]).unwrap();
    let r = Store::open_read_only(&path).unwrap();
    for rep in 0..3 {
        w.record_run(&ok_run(id, 0, rep, 1.0)).unwrap();
        assert_eq!(r.runs(id).unwrap().len(), rep as usize + 1);
    }
}

#[test]
fn read_only_store_refuses_writes_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let (path, id) = filled(dir.path(), "ro");
    let mut s = Store::open_read_only(&path).unwrap();
    let err = s.record_run(&ok_run(id, 0, 5, 1.0)).err().unwrap();
    assert!(matches!(err, StoreError::ReadOnly(_)), "{err}");
    assert!(s.create_campaign(&new_campaign("x")).is_err());
    assert_eq!(s.runs(id).unwrap().len(), 3);
}

#[test]
fn no_wal_or_shm_file_stays_beside_a_database_once_its_readers_and_writers_close() {
    let dir = tempfile::tempdir().unwrap();
    let (path, id) = filled(dir.path(), "tidy");
    let beside = |ext: &str| {
        let mut p = path.clone().into_os_string();
        p.push(ext);
        std::path::PathBuf::from(p)
    };
    let leftovers = || {
        ["-wal", "-shm"]
            .into_iter()
            .filter(|e| beside(e).exists())
            .collect::<Vec<_>>()
    };
    assert_eq!(leftovers(), Vec::<&str>::new(), "after the writer closed");
    // `show`, `export`, `report`: a reader alone, then a reader beside a writer.
    let r = Store::open_read_only(&path).unwrap();
    assert_eq!(r.runs(id).unwrap().len(), 3);
    drop(r);
    assert_eq!(leftovers(), Vec::<&str>::new(), "after a reader alone");
    let mut w = Store::open(&path).unwrap();
    let r = Store::open_read_only(&path).unwrap();
    w.record_run(&ok_run(id, 0, 3, 1.0)).unwrap();
    assert_eq!(
        r.runs(id).unwrap().len(),
        4,
        "the reader sees the writer's run"
    );
    drop(w);
    drop(r);
    assert_eq!(
        leftovers(),
        Vec::<&str>::new(),
        "after a reader and a writer"
    );
    // The reader stayed one: its statements cannot write.
    let mut r = Store::open_read_only(&path).unwrap();
    assert!(r.record_run(&ok_run(id, 0, 9, 1.0)).is_err());
    assert!(matches!(r.conn, Conn::Sqlite(ref c) if c.execute("DELETE FROM runs", []).is_err()));
    drop(r);
    assert_eq!(
        Store::open_read_only(&path)
            .unwrap()
            .runs(id)
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn missing_file_read_only_is_an_open_error_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.db");
    let err = Store::open_read_only(&path).err().unwrap();
    assert!(err.to_string().contains("absent.db"), "{err}");
    assert!(!path.exists());
}

#[test]
fn full_database_fails_the_run_cleanly_and_keeps_earlier_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (path, id) = filled(dir.path(), "full");
    let mut s = Store::open(&path).unwrap();
    // Cap the file at its current size: the next insert has no room (SQLITE_FULL).
    let raw = s.conn.sqlite().unwrap();
    let pages: i64 = raw
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    raw.pragma_update(None, "max_page_count", pages).unwrap();
    let mut big = ok_run(id, 0, 7, 1.0);
    for i in 0..2000 {
        big.metrics
            .insert(format!("pad_{i:05}_bytes"), f64::from(i));
    }
    let err = s.record_run(&big).err().unwrap();
    assert!(matches!(err, StoreError::Full), "{err:?}");
    assert!(err.to_string().contains("full"));
    assert_eq!(s.runs(id).unwrap().len(), 3, "no partial run left behind");
}

#[test]
fn import_merges_campaigns_with_metadata_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = filled(dir.path(), "hostA");
    let (b, b_id) = filled(dir.path(), "hostB");
    {
        let mut sb = Store::open(&b).unwrap();
        sb.set_finished(b_id, true).unwrap();
    }
    let mut s = Store::open(&a).unwrap();
    let sum = s.import_from(&b).unwrap();
    assert_eq!(sum.imported.len(), 1);
    assert_eq!(sum.runs, 3);
    let camps = s.campaigns().unwrap();
    assert_eq!(camps.len(), 2);
    assert_eq!(camps[1].label, "hostB");
    assert!(camps[1].finished);
    assert_eq!(camps[1].hosts[0].metadata["os.name"], "Ubuntu");
    let new_id = camps[1].id;
    let runs = s.runs(new_id).unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(s.samples(runs[0].id).unwrap().len(), 1);
    // What each run applied comes along.
    assert_eq!(
        s.applied_of_campaign(new_id).unwrap()[&runs[0].id]["client.sndbuf_bytes"],
        "16384"
    );
    assert_eq!(
        s.campaign_extra(new_id).unwrap().imported_from.as_deref(),
        Some(b.display().to_string().as_str())
    );
    // A second import of the same file adds nothing.
    let again = s.import_from(&b).unwrap();
    assert!(again.imported.is_empty());
    assert_eq!((again.merged.len(), again.runs), (1, 0));
    assert!(again.skipped.is_empty());
    assert_eq!(s.campaigns().unwrap().len(), 2);
}

#[test]
fn cells_are_kept_on_resume_and_targets_recorded() {
    let mut s = Store::open_in_memory().unwrap();
    let id = s.create_campaign(&new_campaign("c")).unwrap();
    s.add_cells(&[cell(id, 0, Family::V4, 128)]).unwrap();
    s.set_cell_target(id, 0, Some(true)).unwrap();
    // Adding the same cells again (resume) leaves the stored one alone.
    s.add_cells(&[cell(id, 0, Family::V4, 128), cell(id, 1, Family::V6, 128)])
        .unwrap();
    let cells = s.cells(id).unwrap();
    assert_eq!(cells.len(), 2);
    assert_eq!(cells[0].target_met, Some(true));
    assert_eq!(cells[1].target_met, None);
    assert!(matches!(
        s.runs(id + 1).err(),
        Some(StoreError::NoSuchCampaign(_))
    ));
}

/// A file written before `run_applied` existed (schema 1) still reads read-only (show,
/// export, report), with nothing applied; opened for writing it is migrated.
#[test]
fn a_schema_1_file_reads_read_only_and_migrates_when_written() {
    let dir = tempfile::tempdir().unwrap();
    let (path, id) = filled(dir.path(), "old");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("DROP VIEW run_results; DROP TABLE run_applied; PRAGMA user_version = 1;")
            .unwrap();
    }
    let ro = Store::open_read_only(&path).unwrap();
    let details = ro.run_details(id).unwrap();
    assert_eq!(details.len(), 3);
    assert!(details.iter().all(|d| d.applied.is_empty()));
    drop(ro);
    let rw = Store::open(&path).unwrap();
    assert!(rw.applied_of_campaign(id).unwrap().is_empty());
    let c = rusqlite::Connection::open(&path).unwrap();
    let v: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, crate::schema::CURRENT_VERSION);
}

/// `sqlite3 SRC .dump`: the statements that rebuild SRC's tables and rows, without its
/// `user_version`. The real CLI's output when it is installed, else the same
/// statements made here (schema text from `sqlite_master`, rows with `quote()`).
fn dump(src: &Path) -> String {
    if let Ok(out) = std::process::Command::new("sqlite3")
        .arg(src)
        .arg(".dump")
        .output()
    {
        if out.status.success() {
            return String::from_utf8(out.stdout).unwrap();
        }
    }
    let c = rusqlite::Connection::open(src).unwrap();
    let mut out = String::from("PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n");
    let objects: Vec<(String, String, String)> = c
        .prepare(
            "SELECT name, type, sql FROM sqlite_master
             WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (name, kind, sql) in objects {
        out.push_str(&format!("{sql};\n"));
        if kind != "table" {
            continue;
        }
        let cols: Vec<String> = c
            .prepare(&format!("SELECT name FROM pragma_table_info('{name}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let quoted: Vec<String> = cols.iter().map(|c| format!("quote({c})")).collect();
        let select = format!(
            "SELECT 'INSERT INTO {name} VALUES(' || {} || ');' FROM {name}",
            quoted.join(" || ',' || ")
        );
        let rows: Vec<String> = c
            .prepare(&select)
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for r in rows {
            out.push_str(&r);
            out.push('\n');
        }
    }
    out.push_str("COMMIT;\n");
    out
}

/// A copy of `src` made by replaying its dump into a new file (user_version 0).
fn dump_copy(src: &Path, name: &str) -> PathBuf {
    let copy = src.with_file_name(name);
    let c = rusqlite::Connection::open(&copy).unwrap();
    c.execute_batch(&dump(src)).unwrap();
    let v: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 0, "a dump carries no schema version");
    copy
}

fn user_version(path: &Path) -> i64 {
    rusqlite::Connection::open(path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

/// Issue 28.11: a `.dump` copy (tables present, schema version 0) reads as it is
/// (show, export, report, import source), and opened for writing it is adopted at the
/// version its tables show and migrated on; before, every open failed or advised
/// commands that failed on "table campaigns already exists".
#[test]
fn a_dump_copy_reads_imports_and_is_adopted_when_written() {
    let dir = tempfile::tempdir().unwrap();
    let (path, id) = filled(dir.path(), "orig");
    let runs = Store::open_read_only(&path).unwrap().runs(id).unwrap();
    let copy = dump_copy(&path, "copy.db");
    let ro = Store::open_read_only(&copy).unwrap();
    assert_eq!(ro.runs(id).unwrap(), runs);
    drop(ro);
    // Import from the copy into a new file.
    let mut fresh = Store::open(&dir.path().join("new.db")).unwrap();
    let sum = fresh.import_from(&copy).unwrap();
    assert_eq!((sum.imported.len(), sum.runs), (1, 3));
    drop(fresh);
    // Writing (a resume) adopts it at the current version and keeps every run.
    let mut rw = Store::open(&copy).unwrap();
    assert_eq!(user_version(&copy), schema::CURRENT_VERSION);
    rw.record_run(&ok_run(id, 0, 1, 8e8)).unwrap();
    assert_eq!(rw.runs(id).unwrap().len(), 4);

    // A schema-1 file's copy is recognised as 1 and migrated forward.
    let (old, old_id) = filled(dir.path(), "v1");
    rusqlite::Connection::open(&old)
        .unwrap()
        .execute_batch("DROP VIEW run_results; DROP TABLE run_applied; PRAGMA user_version = 1;")
        .unwrap();
    let old_copy = dump_copy(&old, "v1-copy.db");
    assert_eq!(
        Store::open_read_only(&old_copy)
            .unwrap()
            .runs(old_id)
            .unwrap()
            .len(),
        3
    );
    let migrated = Store::open(&old_copy).unwrap();
    assert_eq!(migrated.schema_version().unwrap(), schema::CURRENT_VERSION);
    assert!(migrated.conn.has_table("run_applied").unwrap());
}

/// Tables that match no dualperf schema are refused with what differs, untouched.
#[test]
fn unversioned_tables_of_another_shape_are_refused_naming_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = filled(dir.path(), "orig");
    let copy = dump_copy(&path, "copy.db");
    rusqlite::Connection::open(&copy)
        .unwrap()
        .execute_batch("ALTER TABLE runs ADD COLUMN mood TEXT")
        .unwrap();
    for e in [
        Store::open_read_only(&copy).err().unwrap(),
        Store::open(&copy).err().unwrap(),
    ] {
        let msg = e.to_string();
        assert!(msg.contains("runs.mood"), "{msg}");
        assert!(msg.contains("no schema version"), "{msg}");
    }
    assert_eq!(user_version(&copy), 0);
}

/// An SQLite file without dualperf's tables reads as empty, with the advice to run a
/// study, not to "upgrade" it.
#[test]
fn an_empty_file_opened_read_only_says_it_holds_no_results() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE other (x INTEGER)")
        .unwrap();
    let e = Store::open_read_only(&path).err().unwrap();
    assert!(matches!(e, StoreError::Empty(_)), "{e}");
}

/// Runs come a bounded chunk at a time (what keeps `export`, `report` and `import` at
/// a fixed memory whatever the campaign's size), in id order, each with its own
/// metrics and applied settings even when another campaign's runs interleave.
#[test]
fn run_chunks_are_bounded_and_keep_campaigns_apart() {
    let mut s = Store::open_in_memory().unwrap();
    let a = s.create_campaign(&new_campaign("a")).unwrap();
    let b = s.create_campaign(&new_campaign("b")).unwrap();
    s.add_cells(&[cell(a, 0, Family::V4, 128), cell(b, 0, Family::V4, 128)])
        .unwrap();
    let n = RUN_CHUNK * 2 + 17;
    for rep in 0..n {
        let mut run = ok_run(a, 0, rep, f64::from(rep));
        run.samples.clear();
        s.record_run(&run).unwrap();
        if rep % 3 == 0 {
            s.record_run(&ok_run(b, 0, rep, -1.0)).unwrap();
        }
    }
    let mut chunks = s.run_chunks(a).unwrap();
    let mut sizes = Vec::new();
    let mut seen = Vec::new();
    while let Some(chunk) = chunks.next_chunk().unwrap() {
        sizes.push(chunk.len());
        seen.extend(chunk);
    }
    assert_eq!(sizes, [RUN_CHUNK as usize, RUN_CHUNK as usize, 17]);
    assert_eq!(seen.len(), n as usize);
    for (rep, d) in seen.iter().enumerate() {
        assert_eq!(d.run.campaign_id, a);
        assert_eq!(d.run.repetition, rep as u32);
        assert_eq!(d.run.metrics[metrics::THROUGHPUT_BPS], rep as f64);
        assert_eq!(d.applied["client.sndbuf_bytes"], "16384");
    }
    assert_eq!(
        s.run_counts(a).unwrap(),
        RunCounts {
            measured: u64::from(n),
            warmup: 0,
            failed: 0
        }
    );
    assert_eq!(s.run_counts_by_cell(a).unwrap()[&0].measured, u64::from(n));
}

/// `only_metrics` reads the named metrics and those matching a pattern, and no
/// applied settings (what a report asks for).
#[test]
fn run_chunks_read_only_the_metrics_asked_for() {
    let mut s = Store::open_in_memory().unwrap();
    let id = s.create_campaign(&new_campaign("m")).unwrap();
    s.add_cells(&[cell(id, 0, Family::V4, 128)]).unwrap();
    let mut run = ok_run(id, 0, 0, 9e8);
    run.metrics.insert("idle_udp_rtt_q050_ns".into(), 1e5);
    run.metrics.insert("loaded_tcp_rtt_q999_ns".into(), 2e5);
    s.record_run(&run).unwrap();
    let mut chunks = s
        .run_chunks(id)
        .unwrap()
        .only_metrics(&[metrics::THROUGHPUT_BPS], &["idle%rtt_q%"]);
    let d = chunks.next_chunk().unwrap().unwrap().pop().unwrap();
    let names: Vec<&str> = d.run.metrics.keys().map(String::as_str).collect();
    assert_eq!(names, ["idle_udp_rtt_q050_ns", metrics::THROUGHPUT_BPS]);
    assert!(d.applied.is_empty());
    let none = s
        .run_chunks(id)
        .unwrap()
        .only_metrics(&[], &[])
        .next_chunk();
    assert!(none.unwrap().unwrap()[0].run.metrics.is_empty());
}

#[test]
fn applied_value_counts_group_the_measured_runs_values_of_matching_keys() {
    let mut s = Store::open_in_memory().unwrap();
    let id = s.create_campaign(&new_campaign("link")).unwrap();
    s.add_cells(&[cell(id, 0, Family::V4, 128)]).unwrap();
    for (rep, mcs, warmup, ok) in [
        (0, "7", false, true),
        (1, "9", false, true),
        (2, "9", false, true),
        (3, "5", true, true),
        (4, "4", false, false),
    ] {
        let mut r = ok_run(id, 0, rep, 1.0);
        r.warmup = warmup;
        if !ok {
            r.status = RunStatus::Failed { reason: "x".into() };
        }
        r.applied
            .insert("client.link.before.tx_mcs".into(), mcs.into());
        s.record_run(&r).unwrap();
    }
    let got = s.applied_value_counts(id, "%.link.%", 100).unwrap();
    assert_eq!(
        got,
        vec![
            ("client.link.before.tx_mcs".to_string(), "7".to_string(), 1),
            ("client.link.before.tx_mcs".to_string(), "9".to_string(), 2),
        ]
    );
    assert_eq!(s.applied_value_counts(id, "%.link.%", 1).unwrap().len(), 1);
    assert!(s
        .applied_value_counts(id, "server.%", 100)
        .unwrap()
        .is_empty());
}

/// SQLite's "database is locked" after the busy timeout names the likely writers and
/// what to do, instead of the bare SQL error.
#[test]
fn a_lock_held_past_the_busy_timeout_says_who_and_what_to_do() {
    for code in [rusqlite::ffi::SQLITE_BUSY, rusqlite::ffi::SQLITE_LOCKED] {
        let e = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(code),
            Some("database is locked".into()),
        );
        let text = StoreError::from(e).to_string();
        assert!(text.contains("locked by another writer for 10s"), "{text}");
        assert!(text.contains("--resume"), "{text}");
    }
}
