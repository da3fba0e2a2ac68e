//! Helpers shared by the `study_*` end-to-end tests: run the real binary, read the
//! database it wrote.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_dualperf");

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

pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
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

/// (cell, repetition) of every successful measured run; panics on a duplicate.
pub fn measured_slots(db: &Path, campaign: i64) -> BTreeSet<(u32, u32)> {
    let s = store::Store::open_read_only(db).expect("database opens");
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
