//! The study scheduler: runs the rounds of a plan through an [`Executor`], records each
//! finished attempt in a [`Journal`] before starting the next, retries failed runs and
//! applies the repetition rule. It reads no clock and does no I/O of its own.
//!
//! Resume is replay: given the runs already journalled ([`PastRun`]), the scheduler walks
//! the same deterministic schedule and reuses every slot that has a result, so no
//! completed run is repeated or lost, and the stopping decisions come out the same.

use crate::confidence::{self, MetricWidth};
use crate::plan::{self, Cell, Slot};
use crate::spec::{Repetition, StudySpec};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};

/// A per-interval sample reported by a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Sample {
    pub start_ns: i64,
    pub end_ns: i64,
    pub metrics: BTreeMap<String, f64>,
}

/// What a successful run produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunOutput {
    /// `wire::metrics` name → value.
    pub metrics: BTreeMap<String, f64>,
    pub samples: Vec<Sample>,
    /// Metadata the server reported about itself (may be empty).
    pub server_info: BTreeMap<String, String>,
    /// Metadata of this (client) host as the run saw it (may be empty).
    pub client_info: BTreeMap<String, String>,
    /// What each side applied: `client.KEY` / `server.KEY` (socket settings as the
    /// kernel read them back, the UDP datapath that ran).
    pub applied: BTreeMap<String, String>,
}

/// Why an attempt failed (peer vanished, timeout, a busy server, …), in the executor's
/// words: a study stores it as the run's failure reason, a single run shows it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct AttemptFailure {
    pub reason: String,
}

impl From<String> for AttemptFailure {
    fn from(reason: String) -> AttemptFailure {
        AttemptFailure { reason }
    }
}

impl From<&str> for AttemptFailure {
    fn from(reason: &str) -> AttemptFailure {
        reason.to_string().into()
    }
}

/// One attempt at a run: when, how long, and what came of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub started_unix_ns: i64,
    pub duration_ns: i64,
    /// Why a failed run failed.
    pub result: Result<RunOutput, AttemptFailure>,
}

/// Runs one test. Real in the binary (the engine), fake in tests.
pub trait Executor {
    fn execute(&mut self, cell: &Cell, slot: &Slot, attempt: u32) -> Attempt;
}

/// A finished attempt, handed to the journal.
#[derive(Debug, Clone, Copy)]
pub struct Finished<'a> {
    pub cell: &'a Cell,
    pub slot: Slot,
    pub attempt: u32,
    pub run: &'a Attempt,
}

/// Why a journal could not keep an attempt (the store refused it, too many failures in
/// a row): the journal's own typed error, boxed at this seam so the study crate needs
/// no store. Shows the error's text; its sources are the error's own.
#[derive(Debug)]
pub struct JournalError(Box<dyn std::error::Error + Send + Sync + 'static>);

impl JournalError {
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> JournalError {
        JournalError(Box::new(e))
    }

    /// The journal's own error, to downcast.
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for JournalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Where the scheduler reports. `record` must persist the attempt before returning; an
/// error stops the study (the attempt is then lost, as if the process had died).
pub trait Journal {
    fn record(&mut self, finished: &Finished<'_>) -> Result<(), JournalError>;
    /// A cell has all its runs; `outcome.target_met` is its confidence verdict.
    fn cell_done(&mut self, _cell: &Cell, _outcome: &CellOutcome) -> Result<(), JournalError> {
        Ok(())
    }
    /// An attempt is about to start (progress display).
    fn starting(&mut self, _cell: &Cell, _slot: &Slot, _attempt: u32, _progress: &Progress) {}
    /// The stop flag ended the study before the attempt that `progress` describes.
    fn stopped(&mut self, _progress: &Progress) {}
}

/// A run already in the journal (from a previous, interrupted invocation).
#[derive(Debug, Clone, PartialEq)]
pub struct PastRun {
    pub cell_index: u32,
    pub warmup: bool,
    pub repetition: u32,
    pub attempt: u32,
    pub ok: bool,
    pub metrics: BTreeMap<String, f64>,
}

/// Runs done and what remains, for progress and the time left ([`time_left_s`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Slots finished (reused ones included).
    pub done_slots: u64,
    /// Current best guess of the total number of slots (it grows while cells miss
    /// their target: not a fixed total).
    pub expected_slots: u64,
    /// Cells finished (target met, or their runs done), of `cells`.
    pub cells_finished: u32,
    pub cells: u32,
    /// Slots still to run at least (every unfinished cell stopping as soon as it may)
    /// and at most (every one running to --max-runs), warm-up included.
    pub left_min: u64,
    pub left_max: u64,
}

/// The time the study has left, seconds, as a range: `p`'s remaining slots at the mean
/// length of the `timed_runs` slots this invocation ran in `elapsed_s` (overheads
/// included). `None` before the first slot has been timed.
pub fn time_left_s(p: &Progress, timed_runs: u64, elapsed_s: f64) -> Option<(f64, f64)> {
    if timed_runs == 0 || !(elapsed_s.is_finite() && elapsed_s >= 0.0) {
        return None;
    }
    let per_run = elapsed_s / timed_runs as f64;
    Some((per_run * p.left_min as f64, per_run * p.left_max as f64))
}

/// The pace of runs already recorded, seconds per run: the median gap between
/// consecutive starts (`starts_unix_ns` in any order), so the overhead between runs is
/// counted and the pause of an interruption, one gap, does not move it. `None` with
/// fewer than two runs.
pub fn recorded_pace_s(starts_unix_ns: &[i64]) -> Option<f64> {
    let mut starts = starts_unix_ns.to_vec();
    starts.sort_unstable();
    let mut gaps: Vec<f64> = starts
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]) as f64 / 1e9)
        .collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    let n = gaps.len();
    Some(if n % 2 == 1 {
        gaps[n / 2]
    } else {
        (gaps[n / 2 - 1] + gaps[n / 2]) / 2.0
    })
}

/// How one cell ended.
#[derive(Debug, Clone, PartialEq)]
pub struct CellOutcome {
    pub cell_index: u32,
    /// Measured (non-warm-up) runs that succeeded.
    pub ok_runs: u32,
    /// Slots that failed even after every retry.
    pub failed_slots: u32,
    /// `Some` for a confidence target: whether it was met. `None` for fixed runs.
    pub target_met: Option<bool>,
    pub widths: Vec<MetricWidth>,
}

/// How the study ended.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyOutcome {
    pub cells: Vec<CellOutcome>,
    /// Attempts executed in this invocation (failed ones included).
    pub attempts_made: u64,
    /// Slots taken from the journal instead of being run again.
    pub slots_reused: u64,
    pub failed_attempts: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    #[error("study stopped: {0}")]
    Journal(JournalError),
    #[error("study interrupted (resume it with --resume)")]
    Interrupted,
}

#[derive(Default)]
struct CellState {
    measured: Vec<BTreeMap<String, f64>>,
    slots: u32,
    failed_slots: u32,
    done: bool,
}

/// Runs a study.
pub struct Scheduler<'s> {
    spec: &'s StudySpec,
    cells: Vec<Cell>,
    history: HashMap<(u32, bool, u32), Vec<PastRun>>,
    stop: Option<&'s AtomicBool>,
}

impl<'s> Scheduler<'s> {
    pub fn new(spec: &'s StudySpec) -> Scheduler<'s> {
        Scheduler {
            spec,
            cells: plan::cells(spec),
            history: HashMap::new(),
            stop: None,
        }
    }

    /// A study of these cells instead of the spec's matrix (cell `i` has index `i`):
    /// `dualperf run`'s one test, whose write size may lie beyond a study's size axis
    /// (a 128 KiB TCP write) and whose rate search keeps the run's own bound. The spec
    /// still gives the repetition, order, warm-up and retries.
    pub fn of_cells(spec: &'s StudySpec, cells: Vec<Cell>) -> Scheduler<'s> {
        Scheduler {
            spec,
            cells,
            history: HashMap::new(),
            stop: None,
        }
    }

    /// Runs recorded by an earlier invocation of the same study.
    pub fn with_history(mut self, past: Vec<PastRun>) -> Scheduler<'s> {
        for p in past {
            self.history
                .entry((p.cell_index, p.warmup, p.repetition))
                .or_default()
                .push(p);
        }
        self
    }

    /// Stop cleanly before the next attempt once this flag is set (Ctrl-C).
    pub fn with_stop_flag(mut self, stop: &'s AtomicBool) -> Scheduler<'s> {
        self.stop = Some(stop);
        self
    }

    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    /// What is left once the journalled runs ([`Scheduler::with_history`]) are replayed:
    /// the progress at the first slot that has no result yet (`None`: none is left).
    /// Replay makes the same stopping decisions as [`Scheduler::run`], so this is the
    /// state a resumed study starts from. Nothing is executed.
    pub fn remaining(&self) -> Option<Progress> {
        struct Never;
        impl Executor for Never {
            // Not called: the stop flag ends the replay before any attempt.
            fn execute(&mut self, _: &Cell, _: &Slot, _: u32) -> Attempt {
                Attempt {
                    started_unix_ns: 0,
                    duration_ns: 0,
                    result: Err("a replay runs nothing".into()),
                }
            }
        }
        #[derive(Default)]
        struct At(Option<Progress>);
        impl Journal for At {
            fn record(&mut self, _: &Finished<'_>) -> Result<(), JournalError> {
                Ok(())
            }
            fn stopped(&mut self, progress: &Progress) {
                self.0 = Some(*progress);
            }
        }
        let stop = AtomicBool::new(true);
        let replay = Scheduler {
            spec: self.spec,
            cells: self.cells.clone(),
            history: self.history.clone(),
            stop: Some(&stop),
        };
        let mut at = At::default();
        match replay.run(&mut Never, &mut at) {
            Err(ScheduleError::Interrupted) => at.0,
            _ => None,
        }
    }

    /// Run (or finish) the study.
    pub fn run(
        &self,
        exec: &mut dyn Executor,
        journal: &mut dyn Journal,
    ) -> Result<StudyOutcome, ScheduleError> {
        let mut states: Vec<CellState> = self.cells.iter().map(|_| CellState::default()).collect();
        let mut out = StudyOutcome {
            cells: Vec::new(),
            attempts_made: 0,
            slots_reused: 0,
            failed_attempts: 0,
        };
        let mut done_slots = 0u64;
        let mut round = 0u32;
        for w in 0..self.spec.warmup_runs {
            let all: Vec<u32> = (0..self.cells.len() as u32).collect();
            for ci in plan::round_order(self.spec.order, self.spec.seed, round, &all) {
                let slot = Slot {
                    round,
                    cell_index: ci,
                    warmup: true,
                    repetition: w,
                };
                let progress = self.progress(done_slots, &states);
                self.run_slot(slot, progress, exec, journal, &mut out)?;
                done_slots += 1;
            }
            round += 1;
        }
        let mut rep = 0u32;
        loop {
            let active: Vec<u32> = states
                .iter()
                .enumerate()
                .filter(|(_, s)| !s.done)
                .map(|(i, _)| i as u32)
                .collect();
            if active.is_empty() {
                break;
            }
            for ci in plan::round_order(self.spec.order, self.spec.seed, round, &active) {
                let slot = Slot {
                    round,
                    cell_index: ci,
                    warmup: false,
                    repetition: rep,
                };
                let progress = self.progress(done_slots, &states);
                let metrics = self.run_slot(slot, progress, exec, journal, &mut out)?;
                done_slots += 1;
                let st = &mut states[ci as usize];
                st.slots += 1;
                match metrics {
                    Some(m) => st.measured.push(m),
                    None => st.failed_slots += 1,
                }
                if let Some(outcome) = self.decide(ci, st) {
                    st.done = true;
                    journal
                        .cell_done(&self.cells[ci as usize], &outcome)
                        .map_err(ScheduleError::Journal)?;
                    out.cells.push(outcome);
                }
            }
            round += 1;
            rep += 1;
        }
        out.cells.sort_by_key(|c| c.cell_index);
        Ok(out)
    }

    /// Whether a cell is finished after its latest slot, and how.
    fn decide(&self, ci: u32, st: &CellState) -> Option<CellOutcome> {
        let kind = self.cells[ci as usize].kind;
        let refs: Vec<&BTreeMap<String, f64>> = st.measured.iter().collect();
        let outcome = |target_met, level| CellOutcome {
            cell_index: ci,
            ok_runs: st.measured.len() as u32,
            failed_slots: st.failed_slots,
            target_met,
            widths: confidence::widths(kind, &refs, level),
        };
        match self.spec.repetition {
            Repetition::Fixed { runs } => (st.slots >= runs).then(|| outcome(None, 95.0)),
            Repetition::Confidence {
                level_pct,
                width_pct,
                min_runs,
                max_runs,
            } => {
                let met = confidence::target_met(kind, &refs, level_pct, width_pct);
                // min_runs counts successful runs: a failed slot adds no evidence.
                if st.measured.len() as u32 >= min_runs && met {
                    Some(outcome(Some(true), level_pct))
                } else if st.slots >= max_runs {
                    Some(outcome(Some(false), level_pct))
                } else {
                    None
                }
            }
        }
    }

    fn progress(&self, done_slots: u64, states: &[CellState]) -> Progress {
        let (lo, hi) = self.spec.runs_range();
        let warm = u64::from(self.spec.warmup_runs) * self.cells.len() as u64;
        let warm_left = warm.saturating_sub(done_slots);
        // An unfinished cell needs its fixed runs, or at least one more (at least enough
        // for the minimum of successful runs) and at most up to the maximum.
        let (mut left_min, mut left_max) = (warm_left, warm_left);
        for s in states.iter().filter(|s| !s.done) {
            let most = u64::from(hi.saturating_sub(s.slots));
            let least = match self.spec.repetition {
                Repetition::Fixed { .. } => most,
                Repetition::Confidence { min_runs, .. } => {
                    let measured = s.measured.len() as u32;
                    u64::from(min_runs.saturating_sub(measured).max(1)).min(most)
                }
            };
            left_min += least;
            left_max += most;
        }
        let cells_finished = states.iter().filter(|s| s.done).count() as u32;
        let measured: u64 = states
            .iter()
            .map(|s| {
                if s.done {
                    u64::from(s.slots)
                } else {
                    u64::from(lo.max(s.slots + 1))
                }
            })
            .sum();
        Progress {
            done_slots,
            expected_slots: (warm + measured).max(done_slots),
            cells_finished,
            cells: self.cells.len() as u32,
            left_min,
            left_max,
        }
    }

    /// Run one slot (reusing a journalled result if there is one), with retries.
    /// Returns the metrics of its successful attempt, `None` if every attempt failed.
    fn run_slot(
        &self,
        slot: Slot,
        progress: Progress,
        exec: &mut dyn Executor,
        journal: &mut dyn Journal,
        out: &mut StudyOutcome,
    ) -> Result<Option<BTreeMap<String, f64>>, ScheduleError> {
        let past = self
            .history
            .get(&(slot.cell_index, slot.warmup, slot.repetition));
        if let Some(p) = past.and_then(|v| v.iter().find(|p| p.ok)) {
            out.slots_reused += 1;
            return Ok(Some(p.metrics.clone()));
        }
        let first_attempt = past
            .map(|v| v.iter().map(|p| p.attempt + 1).max().unwrap_or(0))
            .unwrap_or(0);
        if first_attempt > self.spec.retries {
            out.slots_reused += 1;
            return Ok(None);
        }
        let cell = &self.cells[slot.cell_index as usize];
        for attempt in first_attempt..=self.spec.retries {
            if self.stop.map(|s| s.load(Ordering::SeqCst)).unwrap_or(false) {
                journal.stopped(&progress);
                return Err(ScheduleError::Interrupted);
            }
            journal.starting(cell, &slot, attempt, &progress);
            let run = exec.execute(cell, &slot, attempt);
            out.attempts_made += 1;
            journal
                .record(&Finished {
                    cell,
                    slot,
                    attempt,
                    run: &run,
                })
                .map_err(ScheduleError::Journal)?;
            match run.result {
                Ok(o) => return Ok(Some(o.metrics)),
                Err(_) => out.failed_attempts += 1,
            }
        }
        Ok(None)
    }
}
