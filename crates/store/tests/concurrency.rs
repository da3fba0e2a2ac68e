//! Issue 11.3 and 11.4: several processes (here threads with their own connections,
//! which SQLite treats alike) writing one results database at once, and campaign locks.

use dualperf_store::{
    CampaignLock, CellRecord, LockTaken, NewCampaign, NewRun, RunStatus, Store, StoreError,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};
use wire::spec::{Direction, Family, TestKind};

const WRITERS: usize = 6;
const RUNS_EACH: u32 = 25;

fn campaign(label: &str) -> NewCampaign {
    NewCampaign {
        label: label.to_string(),
        created_unix_s: 1_700_000_000,
        command_line: "dualperf study".into(),
        spec_json: "{}".into(),
        dualperf_version: "0".into(),
        git_revision: "x".into(),
    }
}

fn one_study(path: &std::path::Path, label: &str) -> Result<i64, StoreError> {
    let mut s = Store::open(path)?;
    let id = s.create_campaign(&campaign(label))?;
    s.add_cells(&[CellRecord {
        campaign_id: id,
        cell_index: 0,
        family: Family::V4,
        kind: TestKind::TcpStream,
        payload_bytes: 128,
        direction: Direction::Forward,
        spec_json: "{}".into(),
        target_met: None,
    }])?;
    for rep in 0..RUNS_EACH {
        // A read before the write, as the journal does: in WAL mode a deferred
        // transaction upgraded to a write here failed with "database is locked".
        let _ = s.runs(id)?;
        s.record_run(&NewRun {
            campaign_id: id,
            cell_index: 0,
            repetition: rep,
            warmup: false,
            attempt: 0,
            status: RunStatus::Ok,
            metrics: BTreeMap::from([("throughput_bps".to_string(), 1e9)]),
            samples: Vec::new(),
            applied: Default::default(),
            started_unix_ns: 0,
            duration_ns: 1,
        })?;
        s.set_cell_target(id, 0, None)?;
    }
    s.set_finished(id, true)?;
    Ok(id)
}

#[test]
fn studies_started_together_on_a_new_file_all_store_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = Arc::new(dir.path().join("shared.db"));
    let start = Arc::new(Barrier::new(WRITERS));
    let handles: Vec<_> = (0..WRITERS)
        .map(|i| {
            let (path, start) = (path.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                one_study(&path, &format!("study {i}")).map_err(|e| e.to_string())
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for r in &results {
        assert!(r.is_ok(), "a study failed: {r:?}");
    }
    let s = Store::open_read_only(&path).unwrap();
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

#[test]
fn a_held_campaign_lock_is_refused_naming_host_and_pid_and_a_stale_one_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.db");
    let mut a = Store::open(&path).unwrap();
    let id = a.create_campaign(&campaign("c")).unwrap();
    assert_eq!(
        a.lock_campaign(&lock(id, "hostA", 100), |_| false).unwrap(),
        LockTaken::Fresh
    );
    // Taking it again by the same process is fine.
    assert_eq!(
        a.lock_campaign(&lock(id, "hostA", 100), |_| false).unwrap(),
        LockTaken::Fresh
    );

    let mut b = Store::open(&path).unwrap();
    let e = b
        .lock_campaign(&lock(id, "hostA", 200), |_| false)
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, StoreError::CampaignLocked { pid: 100, .. }),
        "{msg}"
    );
    assert!(msg.contains("process 100 on host hostA"), "{msg}");
    assert!(msg.contains("2023-11-14 22:13:20 UTC"), "{msg}");

    let taken = b
        .lock_campaign(&lock(id, "hostA", 200), |h| h.pid == 100)
        .unwrap();
    assert_eq!(taken, LockTaken::TookOverStale(lock(id, "hostA", 100)));
    assert_eq!(b.campaign_lock(id).unwrap().map(|l| l.pid), Some(200));
    // The old holder's unlock leaves the new holder's lock alone.
    a.unlock_campaign(&lock(id, "hostA", 100)).unwrap();
    assert_eq!(b.campaign_lock(id).unwrap().map(|l| l.pid), Some(200));
    b.unlock_campaign(&lock(id, "hostA", 200)).unwrap();
    assert_eq!(b.campaign_lock(id).unwrap(), None);
}

#[test]
fn a_duplicate_run_is_a_clear_error_not_a_raw_constraint_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.db");
    let id = one_study(&path, "x").unwrap();
    let mut s = Store::open(&path).unwrap();
    let e = s
        .record_run(&NewRun {
            campaign_id: id,
            cell_index: 0,
            repetition: 0,
            warmup: false,
            attempt: 0,
            status: RunStatus::Ok,
            metrics: BTreeMap::new(),
            samples: Vec::new(),
            applied: Default::default(),
            started_unix_ns: 0,
            duration_ns: 1,
        })
        .unwrap_err();
    assert!(matches!(e, StoreError::Duplicate(_)), "{e}");
    assert!(e.to_string().contains("another dualperf"), "{e}");
}

/// Issue 11.9: out-of-range or mistyped values written into the file by something
/// else give a clear error, not SQLite's "Integral value out of range at index 5".
#[test]
fn out_of_range_stored_values_are_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.db");
    let id = one_study(&path, "v").unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute("UPDATE cells SET payload_bytes = 1099511627776", [])
        .unwrap();
    drop(raw);
    let s = Store::open_read_only(&path).unwrap();
    let e = s.cells(id).unwrap_err();
    assert!(matches!(e, StoreError::BadValue(_)), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("1099511627776") && msg.contains("changed outside dualperf"),
        "{msg}"
    );
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute("UPDATE cells SET payload_bytes = 'many'", [])
        .unwrap();
    drop(raw);
    let e = s.cells(id).unwrap_err();
    assert!(matches!(e, StoreError::BadValue(_)), "{e:?}");
    assert!(e.to_string().contains("payload_bytes"), "{e}");
}
