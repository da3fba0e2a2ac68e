//! The store's behaviour, run once against SQLite and once against PostgreSQL (a
//! throwaway cluster on 127.0.0.1; skipped with the reason when PostgreSQL is not
//! installed and CI is unset): migrations and the version check, commit per run,
//! visibility to other connections, read-only opens, campaign locks, duplicates,
//! concurrent writers, the `run_results` view, and import in both directions.

use dualperf_store::{
    CampaignLock, CellRecord, DbTarget, HostInfo, IntervalSample, LockTaken, NewCampaign, NewRun,
    RunStatus, Store, StoreError,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};
use testkit::pg::Cluster;
use wire::spec::{Direction, Family, TestKind};

/// Where each scenario gets a new, empty database.
enum Backend {
    Sqlite(tempfile::TempDir),
    Postgres(Cluster),
}

struct Fixture {
    backend: Backend,
    next: std::cell::Cell<u32>,
}

impl Fixture {
    fn sqlite() -> Fixture {
        Fixture {
            backend: Backend::Sqlite(tempfile::tempdir().unwrap()),
            next: 0.into(),
        }
    }

    fn postgres(test: &str) -> Option<Fixture> {
        Some(Fixture {
            backend: Backend::Postgres(Cluster::start_or_skip(test)?),
            next: 0.into(),
        })
    }

    /// A new empty database.
    fn fresh(&self) -> DbTarget {
        let n = self.next.get();
        self.next.set(n + 1);
        match &self.backend {
            Backend::Sqlite(dir) => DbTarget::Sqlite(dir.path().join(format!("db{n}.db"))),
            Backend::Postgres(pg) => DbTarget::from(pg.create_db(&format!("db{n}")).as_str()),
        }
    }

    /// Run SQL on `db` behind dualperf's back.
    fn raw(&self, db: &DbTarget, sql: &str) {
        match (&self.backend, db) {
            (Backend::Sqlite(_), DbTarget::Sqlite(path)) => {
                rusqlite::Connection::open(path)
                    .unwrap()
                    .execute_batch(sql)
                    .unwrap();
            }
            (Backend::Postgres(pg), DbTarget::Postgres(url)) => {
                let name = url.redacted().rsplit('/').next().unwrap().to_string();
                pg.psql(&name, sql);
            }
            _ => unreachable!(),
        }
    }

    fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }
}

fn campaign(label: &str) -> NewCampaign {
    NewCampaign {
        label: label.to_string(),
        created_unix_s: 1_700_000_000,
        command_line: "dualperf study --runs 2".into(),
        spec_json: "{}".into(),
        dualperf_version: "0.1.0".into(),
        git_revision: "abc123".into(),
    }
}

fn cell(campaign_id: i64, idx: u32, family: Family) -> CellRecord {
    CellRecord {
        campaign_id,
        cell_index: idx,
        family,
        kind: TestKind::UdpStream,
        payload_bytes: 128,
        direction: Direction::Forward,
        spec_json: "{}".into(),
        target_met: None,
    }
}

fn ok_run(campaign_id: i64, cell_index: u32, repetition: u32, tput: f64) -> NewRun {
    let m: BTreeMap<String, f64> = [
        ("throughput_bps".to_string(), tput),
        ("jitter_rfc3550_ns".to_string(), 1500.0),
    ]
    .into();
    NewRun {
        campaign_id,
        cell_index,
        repetition,
        warmup: false,
        attempt: 0,
        status: RunStatus::Ok,
        metrics: m,
        samples: (0..3)
            .map(|i| IntervalSample {
                start_ns: i * 100_000_000,
                end_ns: (i + 1) * 100_000_000,
                metrics: [("throughput_bps".to_string(), tput + i as f64)].into(),
            })
            .collect(),
        applied: [("client.sndbuf_bytes".to_string(), "16384".to_string())].into(),
        started_unix_ns: 1_700_000_000_000_000_000 + i64::from(repetition),
        duration_ns: 1_000_000_000,
    }
}

/// One campaign, two cells, three runs (one failed), client metadata.
fn fill(db: &DbTarget, label: &str) -> i64 {
    let mut s = Store::open_target(db).unwrap();
    let id = s.create_campaign(&campaign(label)).unwrap();
    let md: BTreeMap<String, String> = [
        ("os.pretty_name".to_string(), "Debian 12".to_string()),
        ("host.name".to_string(), format!("{label}-client")),
    ]
    .into();
    s.set_host(
        id,
        &HostInfo {
            role: "client".into(),
            metadata: md,
        },
    )
    .unwrap();
    s.add_cells(&[cell(id, 0, Family::V4), cell(id, 1, Family::V6)])
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
    id
}

type Scenario = fn(&Fixture);

const SCENARIOS: &[(&str, Scenario)] = &[
    (
        "migrates_to_current_and_reopens",
        migrates_to_current_and_reopens,
    ),
    (
        "newer_schema_is_refused_untouched",
        newer_schema_is_refused_untouched,
    ),
    ("runs_round_trip", runs_round_trip),
    ("each_run_is_visible_at_once", each_run_is_visible_at_once),
    ("read_only_refuses_writes", read_only_refuses_writes),
    ("cells_kept_on_resume", cells_kept_on_resume),
    (
        "duplicate_run_is_a_clear_error",
        duplicate_run_is_a_clear_error,
    ),
    (
        "out_of_range_value_is_a_clear_error",
        out_of_range_value_is_a_clear_error,
    ),
    (
        "concurrent_writers_store_every_run",
        concurrent_writers_store_every_run,
    ),
    ("campaign_locks", campaign_locks),
    ("run_results_view", run_results_view),
    ("import_is_idempotent", import_is_idempotent),
    (
        "reimport_adds_the_runs_the_campaign_gained",
        reimport_adds_the_runs_the_campaign_gained,
    ),
    (
        "reimport_names_the_runs_changed_at_the_source",
        reimport_names_the_runs_changed_at_the_source,
    ),
    (
        "import_subset_and_skip_the_unreadable",
        import_subset_and_skip_the_unreadable,
    ),
    (
        "nul_text_stores_resumes_and_imports",
        nul_text_stores_resumes_and_imports,
    ),
];

fn run_all(f: &Fixture) {
    for (name, scenario) in SCENARIOS {
        eprintln!("scenario {name}");
        scenario(f);
    }
}

#[test]
fn sqlite_backend() {
    run_all(&Fixture::sqlite());
}

#[test]
fn postgres_backend() {
    if let Some(f) = Fixture::postgres("postgres_backend") {
        run_all(&f);
    }
}

fn migrates_to_current_and_reopens(f: &Fixture) {
    let db = f.fresh();
    let s = Store::open_target(&db).unwrap();
    assert_eq!(
        s.schema_version().unwrap(),
        dualperf_store::schema::CURRENT_VERSION
    );
    assert_eq!(s.is_postgres(), f.is_postgres());
    drop(s);
    let s = Store::open_target(&db).unwrap();
    assert_eq!(
        s.schema_version().unwrap(),
        dualperf_store::schema::CURRENT_VERSION
    );
    assert!(s.campaigns().unwrap().is_empty());
    let ro = Store::open_target_read_only(&db).unwrap();
    assert!(ro.campaigns().unwrap().is_empty());
}

fn newer_schema_is_refused_untouched(f: &Fixture) {
    let db = f.fresh();
    drop(Store::open_target(&db).unwrap());
    f.raw(
        &db,
        if f.is_postgres() {
            "UPDATE dualperf_schema SET version = 99"
        } else {
            "PRAGMA user_version = 99"
        },
    );
    for e in [
        Store::open_target(&db).err().unwrap(),
        Store::open_target_read_only(&db).err().unwrap(),
    ] {
        assert!(matches!(e, StoreError::TooNew { found: 99, .. }), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("use a newer dualperf"), "{msg}");
    }
}

fn runs_round_trip(f: &Fixture) {
    let db = f.fresh();
    let id = fill(&db, "rt");
    let s = Store::open_target_read_only(&db).unwrap();
    let camps = s.campaigns().unwrap();
    assert_eq!(camps.len(), 1);
    assert_eq!(camps[0].label, "rt");
    assert!(!camps[0].finished);
    assert_eq!(camps[0].hosts[0].metadata["os.pretty_name"], "Debian 12");
    let runs = s.runs(id).unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!((runs[0].family, runs[1].family), (Family::V4, Family::V6));
    assert_eq!(runs[0].metrics["throughput_bps"], 9.0e8);
    assert_eq!(runs[0].kind, TestKind::UdpStream);
    assert_eq!(
        runs[2].status,
        RunStatus::Failed {
            reason: "peer vanished".into()
        }
    );
    assert!(runs[2].metrics.is_empty());
    let samples = s.samples(runs[0].id).unwrap();
    assert_eq!(samples.len(), 3);
    assert_eq!(samples[2].end_ns, 300_000_000);
    assert_eq!(samples[1].metrics["throughput_bps"], 9.0e8 + 1.0);
    let details = s.run_details(id).unwrap();
    assert_eq!(details[2].cell_index, 1);
    assert_eq!(details[2].run.repetition, 1);
    assert_eq!(details[0].applied["client.sndbuf_bytes"], "16384");
    assert_eq!(details[0].duration_ns, 1_000_000_000);
    assert_eq!(s.campaign_extra(id).unwrap().git_revision, "abc123");
}

fn each_run_is_visible_at_once(f: &Fixture) {
    let db = f.fresh();
    let mut w = Store::open_target(&db).unwrap();
    let id = w.create_campaign(&campaign("live")).unwrap();
    w.add_cells(&[cell(id, 0, Family::V4)]).unwrap();
    let r = Store::open_target_read_only(&db).unwrap();
    for rep in 0..3 {
        w.record_run(&ok_run(id, 0, rep, 1.0)).unwrap();
        assert_eq!(r.runs(id).unwrap().len(), rep as usize + 1);
    }
}

fn read_only_refuses_writes(f: &Fixture) {
    let db = f.fresh();
    let id = fill(&db, "ro");
    let mut s = Store::open_target_read_only(&db).unwrap();
    let err = s.record_run(&ok_run(id, 0, 5, 1.0)).err().unwrap();
    assert!(matches!(err, StoreError::ReadOnly(_)), "{err}");
    assert!(s.create_campaign(&campaign("x")).is_err());
    assert_eq!(s.runs(id).unwrap().len(), 3);
}

fn cells_kept_on_resume(f: &Fixture) {
    let db = f.fresh();
    let mut s = Store::open_target(&db).unwrap();
    let id = s.create_campaign(&campaign("c")).unwrap();
    s.add_cells(&[cell(id, 0, Family::V4)]).unwrap();
    s.set_cell_target(id, 0, Some(true)).unwrap();
    s.add_cells(&[cell(id, 0, Family::V4), cell(id, 1, Family::V6)])
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

fn duplicate_run_is_a_clear_error(f: &Fixture) {
    let db = f.fresh();
    let id = fill(&db, "dup");
    let mut s = Store::open_target(&db).unwrap();
    let e = s.record_run(&ok_run(id, 0, 0, 1.0)).unwrap_err();
    assert!(matches!(e, StoreError::Duplicate(_)), "{e}");
    assert!(e.to_string().contains("another dualperf"), "{e}");
    // Nothing of the refused run was left behind, and the store still works.
    assert_eq!(s.runs(id).unwrap().len(), 3);
    s.record_run(&ok_run(id, 0, 1, 1.0)).unwrap();
    assert_eq!(s.runs(id).unwrap().len(), 4);
}

fn out_of_range_value_is_a_clear_error(f: &Fixture) {
    let db = f.fresh();
    let id = fill(&db, "v");
    f.raw(&db, "UPDATE cells SET payload_bytes = 1099511627776");
    let s = Store::open_target_read_only(&db).unwrap();
    let e = s.cells(id).unwrap_err();
    assert!(matches!(e, StoreError::BadValue(_)), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("1099511627776")
            && msg.contains("payload_bytes")
            && msg.contains("changed outside dualperf"),
        "{msg}"
    );
}

const WRITERS: usize = 6;
const RUNS_EACH: u32 = 20;

fn one_study(db: &DbTarget, label: &str) -> Result<i64, StoreError> {
    let mut s = Store::open_target(db)?;
    let id = s.create_campaign(&campaign(label))?;
    s.add_cells(&[cell(id, 0, Family::V4)])?;
    for rep in 0..RUNS_EACH {
        let _ = s.runs(id)?;
        s.record_run(&ok_run(id, 0, rep, 1e9))?;
        s.set_cell_target(id, 0, None)?;
    }
    s.set_finished(id, true)?;
    Ok(id)
}

/// Writers started together on a new database: migrations wait for each other, and
/// every run of every writer is stored.
fn concurrent_writers_store_every_run(f: &Fixture) {
    let db = Arc::new(f.fresh());
    let start = Arc::new(Barrier::new(WRITERS));
    let handles: Vec<_> = (0..WRITERS)
        .map(|i| {
            let (db, start) = (db.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                one_study(&db, &format!("study {i}")).map_err(|e| e.to_string())
            })
        })
        .collect();
    for h in handles {
        let r = h.join().unwrap();
        assert!(r.is_ok(), "a study failed: {r:?}");
    }
    let s = Store::open_target_read_only(&db).unwrap();
    let camps = s.campaigns().unwrap();
    assert_eq!(camps.len(), WRITERS);
    for c in camps {
        assert!(c.finished);
        assert_eq!(s.runs(c.id).unwrap().len(), RUNS_EACH as usize);
    }
}

fn lock(id: i64, host: &str, pid: u32) -> CampaignLock {
    CampaignLock {
        campaign_id: id,
        host: host.into(),
        pid,
        started_unix_s: 1_700_000_000,
    }
}

/// A held lock is refused naming host, PID and start; a dead holder's lock is taken
/// over: on SQLite when the caller judges it stale, on PostgreSQL when the holder's
/// connection is gone, whatever the caller thinks (another controller cannot see the
/// holder's processes).
fn campaign_locks(f: &Fixture) {
    let db = f.fresh();
    let mut a = Store::open_target(&db).unwrap();
    let id = a.create_campaign(&campaign("c")).unwrap();
    assert_eq!(
        a.lock_campaign(&lock(id, "hostA", 100), |_| false).unwrap(),
        LockTaken::Fresh
    );
    assert_eq!(
        a.lock_campaign(&lock(id, "hostA", 100), |_| false).unwrap(),
        LockTaken::Fresh
    );
    let mut b = Store::open_target(&db).unwrap();
    // Even a caller that believes the holder dead is refused while its connection
    // lives on PostgreSQL; SQLite has only the caller's word.
    let believe_dead = !f.is_postgres();
    let e = b
        .lock_campaign(&lock(id, "hostB", 200), |_| false)
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, StoreError::CampaignLocked { pid: 100, .. }),
        "{msg}"
    );
    assert!(msg.contains("process 100 on host hostA"), "{msg}");
    assert!(msg.contains("2023-11-14 22:13:20 UTC"), "{msg}");
    if f.is_postgres() {
        assert!(b.lock_campaign(&lock(id, "hostB", 200), |_| true).is_err());
        drop(a);
        // The server ends the holder's session (and its advisory lock) a moment
        // after the connection closes.
        let mut taken = None;
        for _ in 0..100 {
            match b.lock_campaign(&lock(id, "hostB", 200), |_| false) {
                Ok(t) => {
                    taken = Some(t);
                    break;
                }
                Err(StoreError::CampaignLocked { .. }) => {
                    std::thread::sleep(std::time::Duration::from_millis(100))
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(
            taken,
            Some(LockTaken::TookOverStale(lock(id, "hostA", 100)))
        );
    } else {
        assert!(believe_dead);
        let taken = b
            .lock_campaign(&lock(id, "hostB", 200), |h| h.pid == 100)
            .unwrap();
        assert_eq!(taken, LockTaken::TookOverStale(lock(id, "hostA", 100)));
        a.unlock_campaign(&lock(id, "hostA", 100)).unwrap();
    }
    assert_eq!(b.campaign_lock(id).unwrap().map(|l| l.pid), Some(200));
    b.unlock_campaign(&lock(id, "hostB", 200)).unwrap();
    assert_eq!(b.campaign_lock(id).unwrap(), None);
    // Unlocked, a third process gets it fresh.
    let mut c = Store::open_target(&db).unwrap();
    assert_eq!(
        c.lock_campaign(&lock(id, "hostC", 300), |_| false).unwrap(),
        LockTaken::Fresh
    );
}

/// The documented view: one row per measured run and metric with the campaign and
/// the client's metadata, the same columns on both backends.
fn run_results_view(f: &Fixture) {
    let db = f.fresh();
    fill(&db, "view");
    let sql = "SELECT campaign_label, family, test, payload_bytes, metric, value, unit, \
               client_host, client_os, server_os, started_unix_s \
               FROM run_results ORDER BY run_id, metric";
    let rows: Vec<String> = match &db {
        DbTarget::Sqlite(path) => {
            let c = rusqlite::Connection::open(path).unwrap();
            let mut st = c.prepare(sql).unwrap();
            let rows = st
                .query_map([], |r| {
                    Ok(format!(
                        "{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}",
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, f64>(5)?,
                        r.get::<_, String>(6)?,
                        r.get::<_, String>(7)?,
                        r.get::<_, String>(8)?,
                        r.get::<_, Option<String>>(9)?.unwrap_or_default(),
                        r.get::<_, f64>(10)?
                    ))
                })
                .unwrap();
            rows.map(|r| r.unwrap()).collect()
        }
        DbTarget::Postgres(url) => {
            let Backend::Postgres(pg) = &f.backend else {
                unreachable!()
            };
            let name = url.redacted().rsplit('/').next().unwrap();
            pg.psql(name, sql).lines().map(str::to_string).collect()
        }
    };
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert_eq!(
        rows[0],
        "view|4|udp-stream|128|jitter_rfc3550_ns|1500|ns|view-client|Debian 12||1700000000"
    );
    assert!(
        rows[1].starts_with("view|4|udp-stream|128|throughput_bps|900000000|"),
        "{}",
        rows[1]
    );
}

/// Importing twice adds the campaign once; everything comes along.
fn import_is_idempotent(f: &Fixture) {
    let src = f.fresh();
    let src_id = fill(&src, "hostB");
    Store::open_target(&src)
        .unwrap()
        .set_finished(src_id, true)
        .unwrap();
    let dst = f.fresh();
    fill(&dst, "hostA");
    let mut s = Store::open_target(&dst).unwrap();
    let sum = s.import_from_target(&src).unwrap();
    assert_eq!((sum.imported.len(), sum.runs), (1, 3));
    check_imported(&s, &src);
    let again = s.import_from_target(&src).unwrap();
    assert!(again.imported.is_empty());
    assert_eq!(again.merged.len(), 1);
    assert_eq!(
        (again.merged[0].from, again.merged[0].added_runs, again.runs),
        (src_id, 0, 0)
    );
    assert_eq!(s.campaigns().unwrap().len(), 2);
}

/// Issue 28.8: a campaign that grew at its source (resumed there after an import)
/// gets the new runs when imported again, and the summary says how many.
fn reimport_adds_the_runs_the_campaign_gained(f: &Fixture) {
    let src = f.fresh();
    let src_id = fill(&src, "grows");
    let dst = f.fresh();
    let mut s = Store::open_target(&dst).unwrap();
    let first = s.import_from_target(&src).unwrap();
    let here = first.imported[0].1;
    assert_eq!(s.runs(here).unwrap().len(), 3);
    {
        let mut w = Store::open_target(&src).unwrap();
        w.record_run(&ok_run(src_id, 0, 1, 9.1e8)).unwrap();
        let mut retry = ok_run(src_id, 1, 1, 8.6e8);
        retry.attempt = 1;
        w.record_run(&retry).unwrap();
        let mut warm = ok_run(src_id, 0, 0, 1e8);
        warm.warmup = true;
        w.record_run(&warm).unwrap();
        w.set_finished(src_id, true).unwrap();
    }
    let again = s.import_from_target(&src).unwrap();
    assert!(again.imported.is_empty());
    assert_eq!(again.runs, 3);
    assert_eq!(
        again.merged,
        vec![dualperf_store::Merged {
            from: src_id,
            into: here,
            added_runs: 3,
            conflicting_runs: 0,
            conflicts: vec![]
        }]
    );
    let strip = |runs: Vec<dualperf_store::RunRecord>| -> Vec<_> {
        runs.into_iter()
            .map(|r| {
                (
                    r.family,
                    r.repetition,
                    r.warmup,
                    r.status,
                    r.metrics,
                    r.started_unix_ns,
                )
            })
            .collect()
    };
    let there = Store::open_target(&src).unwrap().runs(src_id).unwrap();
    assert_eq!(strip(s.runs(here).unwrap()), strip(there));
    assert!(s.campaign(here).unwrap().finished);
    // The added runs came with their samples.
    let last = s.runs(here).unwrap().pop().unwrap();
    assert_eq!(s.samples(last.id).unwrap().len(), 3);
    // A third pass adds nothing.
    assert_eq!(s.import_from_target(&src).unwrap().runs, 0);
}

/// Issue 38: runs whose values changed at the source after an import (a metric, the
/// status, the duration, the start time) are counted and the first few named when
/// imported again; the copies here are kept as they were.
fn reimport_names_the_runs_changed_at_the_source(f: &Fixture) {
    let src = f.fresh();
    let src_id = fill(&src, "edited");
    let dst = f.fresh();
    let mut s = Store::open_target(&dst).unwrap();
    let here = s.import_from_target(&src).unwrap().imported[0].1;
    let before = s.runs(here).unwrap();
    // Unchanged: nothing to say.
    let same = s.import_from_target(&src).unwrap();
    assert_eq!(
        (
            same.merged[0].conflicting_runs,
            same.merged[0].conflicts.len()
        ),
        (0, 0)
    );
    f.raw(
        &src,
        &format!(
            "UPDATE run_metrics SET value = 1.5e9 WHERE name = 'throughput_bps'
               AND run_id IN (SELECT r.id FROM runs r JOIN cells c ON c.id = r.cell_id
                              WHERE r.campaign_id = {src_id} AND c.cell_index = 0);
             UPDATE runs SET ok = 1, failure_reason = NULL WHERE campaign_id = {src_id} AND ok = 0;"
        ),
    );
    let again = s.import_from_target(&src).unwrap();
    assert_eq!(again.runs, 0);
    let m = &again.merged[0];
    assert_eq!((m.added_runs, m.conflicting_runs), (0, 2), "{m:?}");
    assert_eq!(
        m.conflicts,
        vec![
            "IPv4 udp-stream 128 B cell 0, repetition 0: throughput_bps 900000000 here, 1500000000 there".to_string(),
            "IPv6 udp-stream 128 B cell 1, repetition 1: failed (peer vanished) here, ok there".to_string(),
        ]
    );
    // Kept as they were here.
    assert_eq!(s.runs(here).unwrap(), before);
}

/// `import --campaign ID`: only the chosen campaigns; one with a value dualperf cannot
/// read, or a label check_name refuses, is skipped with its id and why, the others
/// imported (before, one bad value aborted the whole import).
fn import_subset_and_skip_the_unreadable(f: &Fixture) {
    let src = f.fresh();
    let a = fill(&src, "a");
    let b = fill(&src, "b");
    let c = fill(&src, "c");
    let dst = f.fresh();
    let mut s = Store::open_target(&dst).unwrap();
    let from = Store::open_target_read_only(&src).unwrap();
    let sum = s.import_campaigns(&from, "src", &[b]).unwrap();
    assert_eq!(sum.imported.len(), 1);
    assert_eq!(sum.imported[0].0, b);
    assert_eq!(s.campaigns().unwrap().len(), 1);
    assert!(matches!(
        s.import_campaigns(&from, "src", &[c + 100]),
        Err(StoreError::NoSuchCampaign(_))
    ));
    drop(from);
    // Campaign a gets a value out of range for what it stores, c an over-long label.
    f.raw(
        &src,
        &format!("UPDATE cells SET payload_bytes = 1099511627776 WHERE campaign_id = {a}"),
    );
    f.raw(
        &src,
        &format!(
            "UPDATE campaigns SET label = '{}' WHERE id = {c}",
            "x".repeat(wire::text::MAX_NAME_CHARS + 1)
        ),
    );
    let sum = s.import_from_target(&src).unwrap();
    assert!(sum.imported.is_empty(), "{sum:?}");
    assert_eq!(sum.merged.len(), 1, "{sum:?}");
    let skipped: Vec<i64> = sum.skipped.iter().map(|(id, _)| *id).collect();
    assert_eq!(skipped, vec![a, c], "{sum:?}");
    assert!(sum.skipped[0].1.contains("payload_bytes"), "{sum:?}");
    assert!(
        sum.skipped[1]
            .1
            .contains(&format!("campaign {c}'s label is 257 characters")),
        "{sum:?}"
    );
    assert_eq!(s.campaigns().unwrap().len(), 1);
}

/// NUL (U+0000) in a label, metadata, spec, failure reason or applied value is stored
/// as U+FFFD on both backends (PostgreSQL refused the whole write before), again when
/// the campaign is resumed, and when an SQLite file holding raw NULs is imported.
fn nul_text_stores_resumes_and_imports(f: &Fixture) {
    let db = f.fresh();
    let mut s = Store::open_target(&db).unwrap();
    let mut c = campaign("lab\0one");
    c.command_line = "dualperf study --label 'lab\0one'".into();
    let id = s.create_campaign(&c).unwrap();
    let host = |v: &str| HostInfo {
        role: "client".into(),
        metadata: [("os\0name".to_string(), v.to_string())].into(),
    };
    s.set_host(id, &host("Deb\0ian")).unwrap();
    let mut cell0 = cell(id, 0, Family::V4);
    cell0.spec_json = "{\"label\":\"a\0b\"}".into();
    s.add_cells(&[cell0]).unwrap();
    let mut failed = ok_run(id, 0, 0, 0.0);
    failed.status = RunStatus::Failed {
        reason: "peer said \0".into(),
    };
    failed.applied = [("client.udp\0".to_string(), "x\0".to_string())].into();
    s.record_run(&failed).unwrap();
    drop(s);
    // Resume: the same writes again on a new connection.
    let mut s = Store::open_target(&db).unwrap();
    s.set_host(id, &host("Deb\0ian 12")).unwrap();
    s.record_run(&ok_run(id, 0, 1, 9e8)).unwrap();
    let back = s.campaign(id).unwrap();
    assert_eq!(back.label, "lab\u{fffd}one");
    assert_eq!(back.command_line, "dualperf study --label 'lab\u{fffd}one'");
    assert_eq!(
        back.hosts[0].metadata["os\u{fffd}name"],
        "Deb\u{fffd}ian 12"
    );
    assert_eq!(
        s.cells(id).unwrap()[0].spec_json,
        "{\"label\":\"a\u{fffd}b\"}"
    );
    let details = s.run_details(id).unwrap();
    assert_eq!(
        details[0].run.status,
        RunStatus::Failed {
            reason: "peer said \u{fffd}".into()
        }
    );
    assert_eq!(details[0].applied["client.udp\u{fffd}"], "x\u{fffd}");
    // An older SQLite file holding raw NULs (written behind dualperf's back) imports.
    let dir = tempfile::tempdir().unwrap();
    let old = DbTarget::Sqlite(dir.path().join("old.db"));
    fill(&old, "old");
    let DbTarget::Sqlite(old_path) = &old else {
        unreachable!()
    };
    rusqlite::Connection::open(old_path)
        .unwrap()
        .execute_batch(
            "UPDATE campaigns SET label = 'x' || char(0) || 'y';
             UPDATE host_metadata SET value = 'v' || char(0);
             UPDATE runs SET failure_reason = char(0) WHERE ok = 0;",
        )
        .unwrap();
    let sum = s.import_from_target(&old).unwrap();
    assert_eq!(sum.runs, 3);
    let new_id = sum.imported[0].1;
    assert_eq!(s.campaign(new_id).unwrap().label, "x\u{fffd}y");
    let meta = &s.campaign(new_id).unwrap().hosts[0].metadata;
    assert_eq!(meta["host.name"], "v\u{fffd}");
    assert_eq!(meta["os.pretty_name"], "v\u{fffd}");
    // An import caps metadata as a peer's is, and records that NULs were replaced.
    assert_eq!(
        meta[wire::text::META_TRUNCATED_KEY],
        "NUL characters replaced by U+FFFD"
    );
}

fn check_imported(s: &Store, src: &DbTarget) {
    let camps = s.campaigns().unwrap();
    let c = camps.iter().find(|c| c.label == "hostB").unwrap();
    assert!(c.finished);
    assert_eq!(c.hosts[0].metadata["os.pretty_name"], "Debian 12");
    let details = s.run_details(c.id).unwrap();
    assert_eq!(details.len(), 3);
    assert_eq!(s.samples(details[0].run.id).unwrap().len(), 3);
    assert_eq!(details[0].applied["client.sndbuf_bytes"], "16384");
    assert_eq!(
        s.campaign_extra(c.id).unwrap().imported_from,
        Some(src.to_string())
    );
}

/// SQLite → PostgreSQL → a second SQLite file: the campaign and its uuid survive both
/// ways, and a second pass adds nothing.
#[test]
fn import_between_sqlite_and_postgres_both_ways() {
    let Some(pg) = Fixture::postgres("import_between_sqlite_and_postgres_both_ways") else {
        return;
    };
    let lite = Fixture::sqlite();
    let src = lite.fresh();
    let src_id = fill(&src, "hostB");
    Store::open_target(&src)
        .unwrap()
        .set_finished(src_id, true)
        .unwrap();
    let uuid = Store::open_target(&src)
        .unwrap()
        .campaign_extra(src_id)
        .unwrap()
        .uuid;
    let shared = pg.fresh();
    let mut p = Store::open_target(&shared).unwrap();
    assert_eq!(p.import_from_target(&src).unwrap().imported.len(), 1);
    assert!(p.import_from_target(&src).unwrap().imported.is_empty());
    check_imported(&p, &src);
    let back = lite.fresh();
    let mut b = Store::open_target(&back).unwrap();
    assert_eq!(b.import_from_target(&shared).unwrap().runs, 3);
    assert!(b.import_from_target(&shared).unwrap().imported.is_empty());
    let c = b.campaigns().unwrap().pop().unwrap();
    assert_eq!(b.campaign_extra(c.id).unwrap().uuid, uuid);
    // The first source is remembered, not the hop in between.
    assert_eq!(
        b.campaign_extra(c.id).unwrap().imported_from,
        Some(src.to_string())
    );
    assert_eq!(
        b.runs(c.id).unwrap(),
        Store::open_target(&src)
            .unwrap()
            .runs(src_id)
            .unwrap()
            .into_iter()
            .map(|r| dualperf_store::RunRecord {
                id: r.id,
                campaign_id: c.id,
                ..r
            })
            .collect::<Vec<_>>()
    );
}

/// One schema: the same tables, views and columns on both backends.
#[test]
fn both_backends_hold_the_same_tables_and_columns() {
    let Some(pg) = Fixture::postgres("both_backends_hold_the_same_tables_and_columns") else {
        return;
    };
    let lite = Fixture::sqlite();
    let (ldb, pdb) = (lite.fresh(), pg.fresh());
    drop(Store::open_target(&ldb).unwrap());
    drop(Store::open_target(&pdb).unwrap());
    let DbTarget::Sqlite(path) = &ldb else {
        unreachable!()
    };
    let c = rusqlite::Connection::open(path).unwrap();
    let mut st = c
        .prepare(
            "SELECT m.name || '.' || p.name FROM sqlite_master m, pragma_table_info(m.name) p \
             WHERE m.type IN ('table', 'view')",
        )
        .unwrap();
    let mut sqlite_cols: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    sqlite_cols.sort();
    let Backend::Postgres(cluster) = &pg.backend else {
        unreachable!()
    };
    let DbTarget::Postgres(url) = &pdb else {
        unreachable!()
    };
    let name = url.redacted().rsplit('/').next().unwrap();
    let mut pg_cols: Vec<String> = cluster
        .psql(
            name,
            "SELECT table_name || '.' || column_name FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name <> 'dualperf_schema'",
        )
        .lines()
        .map(str::to_string)
        .collect();
    pg_cols.sort();
    assert_eq!(sqlite_cols, pg_cols);
    assert!(sqlite_cols.contains(&"run_results.client_os".to_string()));
}

/// Issue 38: a FIFO, a socket, a character device (`/dev/null`) or a directory given as
/// the database is refused at once, for reading and for writing, naming what it is:
/// never opened (opening a FIFO waits for a writer forever) and nothing created beside
/// it (`/dev/null-journal`).
#[cfg(unix)]
#[test]
fn what_is_not_a_regular_file_is_refused_at_once_and_nothing_created() {
    use std::path::{Path, PathBuf};
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.db");
    testkit::make_fifo(&fifo);
    let sock = dir.path().join("sock.db");
    let _listening = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let sub = dir.path().join("sub.db");
    std::fs::create_dir(&sub).unwrap();
    let beside_null = ["/dev/null-journal", "/dev/null-wal", "/dev/null-shm"];
    let there_before: Vec<bool> = beside_null.iter().map(|p| Path::new(p).exists()).collect();
    let cases: [(PathBuf, &str); 4] = [
        (fifo, "is a FIFO (named pipe), not a dualperf database"),
        (sock, "is a socket, not a dualperf database"),
        (
            PathBuf::from("/dev/null"),
            "is a character device, not a dualperf database",
        ),
        (sub, "is a directory, not a dualperf database"),
    ];
    for (path, says) in cases {
        for write in [false, true] {
            let (tx, rx) = std::sync::mpsc::channel();
            let p = path.clone();
            // A thread, so that a regression blocks it and not the test.
            std::thread::spawn(move || {
                let r = if write {
                    Store::open(&p)
                } else {
                    Store::open_read_only(&p)
                };
                let _ = tx.send(r.err());
            });
            let e = rx
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("{} blocked (write: {write})", path.display()))
                .unwrap_or_else(|| panic!("{} opened (write: {write})", path.display()));
            assert!(matches!(e, StoreError::NotAFile { .. }), "{e}");
            assert!(e.to_string().contains(says), "{e}");
        }
    }
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["fifo.db", "sock.db", "sub.db"]);
    for (p, before) in beside_null.iter().zip(there_before) {
        assert_eq!(Path::new(p).exists(), before, "{p}");
    }
}
