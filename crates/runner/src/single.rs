//! `dualperf run` as a campaign of one test with no store: a one-cell study (one run,
//! no warm-up, no retry) run by `study::Scheduler` on the same [`Target`] a study uses,
//! with a journal that keeps the attempt in memory. The target hands back the test's
//! whole result (or its error, typed) for `run` to show; the interval samples reach the
//! caller as they end through [`Target::observe_intervals`].

use crate::target::{FullResult, Target, TargetError};
use study::{Attempt, Cell, Finished, Journal, RunOutput, StudySpec};
use wire::spec::{RateSearch, TestSpec};

/// The test a `dualperf run` makes.
#[derive(Debug, Clone, PartialEq)]
pub enum RunSpec {
    /// One of the four tests.
    One(TestSpec),
    /// Latency under load (rrul).
    Loaded(engine::LoadedSpec),
}

/// A run's campaign of one test, as [`crate::resolve_single`] resolved it.
#[derive(Debug, Clone)]
pub struct Single {
    spec: StudySpec,
    cell: Cell,
    run: RunSpec,
    /// Whether the attempt waits out a busy iperf3 server (within the target's limits).
    waits: bool,
}

/// What the run produced: the output a study would store, and the whole result where
/// the target keeps one (`None` for the fake executor).
#[derive(Debug)]
pub struct SingleRun {
    pub output: RunOutput,
    pub full: Option<FullResult>,
}

/// The run's one attempt as a study's journal sees it, and the target's whole result
/// (or its typed error) where it keeps one.
#[derive(Debug)]
pub struct Tried {
    pub attempt: Attempt,
    pub last: Option<Result<FullResult, TargetError>>,
}

/// Why a run produced no result.
#[derive(Debug, thiserror::Error)]
pub enum SingleError {
    /// The test failed at the target (the target's own, typed error).
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The test failed; the executor gave only its words.
    #[error(transparent)]
    Failed(study::AttemptFailure),
    #[error(transparent)]
    Runner(#[from] study::ScheduleError),
    #[error("the run made no attempt")]
    NoAttempt,
}

/// Keeps the attempts in memory: the journal of a campaign with no store.
#[derive(Debug, Default)]
struct Kept {
    attempts: Vec<Attempt>,
}

impl Journal for Kept {
    fn record(&mut self, finished: &Finished<'_>) -> Result<(), study::JournalError> {
        self.attempts.push(finished.run.clone());
        Ok(())
    }
}

impl Single {
    /// One run of `cell` under `spec`'s other settings, without warm-up or retry.
    pub(crate) fn new(mut spec: StudySpec, cell: Cell, run: RunSpec) -> Single {
        spec.repetition = study::Repetition::Fixed { runs: 1 };
        spec.warmup_runs = 0;
        spec.retries = 0;
        Single {
            spec,
            cell,
            run,
            waits: false,
        }
    }

    /// The attempt waits out a busy iperf3 server, and one reopening between two tests,
    /// for as long as the target's options allow (a probe, which has a budget), instead
    /// of failing at once.
    pub fn waiting(mut self) -> Single {
        self.waits = true;
        self
    }

    /// The test as `run` resolved it (for checks and for an iperf3 peer).
    pub fn run_spec(&self) -> &RunSpec {
        &self.run
    }

    /// The campaign's one-cell study.
    pub fn spec(&self) -> &StudySpec {
        &self.spec
    }

    /// The campaign's one cell.
    pub fn cell(&self) -> &Cell {
        &self.cell
    }

    /// A udp-stream that finds its RFC 2544 throughput with `search` (over the run's
    /// own bound) instead of sending at one rate.
    pub fn with_rate_search(mut self, search: RateSearch) -> Single {
        self.spec.udp_method = study::UdpMethod::Rfc2544(search);
        self
    }

    /// Runs the test on `target` through `study::Scheduler`: its one attempt, and the
    /// target's whole result. A busy iperf3 server fails the run at once unless the run
    /// is [`Single::waiting`].
    pub fn attempt(&self, target: &mut Target) -> Result<Tried, SingleError> {
        target.set_study(&self.spec);
        target.set_waits(self.waits);
        let runner = study::Scheduler::of_cells(&self.spec, vec![self.cell.clone()]);
        let mut kept = Kept::default();
        runner.run(target, &mut kept)?;
        let attempt = kept.attempts.pop().ok_or(SingleError::NoAttempt)?;
        Ok(Tried {
            attempt,
            last: target.take_last(),
        })
    }

    /// Runs the test on `target` ([`Single::attempt`]): its output and whole result, or
    /// why there is none (the target's typed error where it kept one).
    pub fn run(&self, target: &mut Target) -> Result<SingleRun, SingleError> {
        let Tried { attempt, last } = self.attempt(target)?;
        match (attempt.result, last) {
            (Ok(output), Some(Ok(full))) => Ok(SingleRun {
                output,
                full: Some(full),
            }),
            (Ok(output), _) => Ok(SingleRun { output, full: None }),
            (Err(_), Some(Err(e))) => Err(SingleError::Target(e)),
            (Err(why), _) => Err(SingleError::Failed(why)),
        }
    }
}
