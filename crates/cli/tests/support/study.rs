//! `dualperf study` for the studies' end-to-end tests: run the real binary (with the
//! fake executor or real traffic), kill it mid-study, read the database it wrote.

#[allow(unused_imports)]
pub use super::{text, BIN};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Run `dualperf ARGS` (fake executor when `fake`), returning its output.
pub fn run(args: &[&str], fake: bool) -> Output {
    let mut c = Command::new(BIN);
    c.args(args);
    if fake {
        c.env("DUALPERF_STUDY_FAKE", "1");
    }
    c.output().expect("the dualperf binary runs")
}

pub fn spawn(args: &[&str], fake: bool) -> Child {
    let mut c = Command::new(BIN);
    c.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    if fake {
        c.env("DUALPERF_STUDY_FAKE", "1");
    }
    c.spawn().expect("the dualperf binary starts")
}

/// Runs recorded so far in campaign 1 (0 while the file is not ready).
pub fn recorded_runs(db: &Path) -> usize {
    store::Store::open_read_only(db)
        .and_then(|s| s.runs(1))
        .map(|r| r.len())
        .unwrap_or(0)
}

/// Wait until at least `n` runs are in the database, then SIGKILL the study.
/// Returns the number of runs recorded when it died.
pub fn kill_after_runs(mut child: Child, db: &Path, n: usize, limit: Duration) -> usize {
    let t0 = Instant::now();
    while recorded_runs(db) < n {
        assert!(
            t0.elapsed() < limit,
            "study did not record {n} runs in {limit:?}"
        );
        if let Ok(Some(status)) = child.try_wait() {
            panic!("study ended before it could be killed: {status:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL the study");
    child.wait().expect("reap the study");
    recorded_runs(db)
}

/// The metadata recorded for the host in `role` ("client", "server") of a campaign.
pub fn host_md(db: &Path, campaign: i64, role: &str) -> BTreeMap<String, String> {
    let s = store::Store::open_read_only(db).expect("database opens");
    s.campaign(campaign)
        .expect("campaign")
        .hosts
        .into_iter()
        .find(|h| h.role == role)
        .unwrap_or_else(|| panic!("no {role} host record"))
        .metadata
}

/// (cell, repetition) of every successful measured run; panics on a duplicate.
pub fn measured_slots(db: &Path, campaign: i64) -> BTreeSet<(u32, u32)> {
    let s = store::Store::open_read_only(db).expect("database opens");
    slots_in(&s, campaign)
}

/// [`measured_slots`] of a store already open (any backend).
pub fn slots_in(s: &store::Store, campaign: i64) -> BTreeSet<(u32, u32)> {
    let mut seen = BTreeSet::new();
    for d in s.run_details(campaign).expect("runs readable") {
        if d.run.status.is_ok() && !d.run.warmup {
            assert!(
                seen.insert((d.cell_index, d.run.repetition)),
                "run of cell {} repetition {} recorded twice",
                d.cell_index,
                d.run.repetition
            );
        }
    }
    seen
}
