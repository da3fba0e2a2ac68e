//! dualperf-study: what a study is and how it runs. The experiment spec (TOML, presets,
//! flags) and its validation, matrix expansion and run order (interleaved or seeded
//! random), the confidence stopping rule, and the [`Scheduler`] over an [`Executor`]
//! trait (the engine in the binary, [`fake::FakeExecutor`] in tests). This crate does
//! no I/O itself: results go to a [`Journal`] (the binary's is the SQLite store).
#![forbid(unsafe_code)]

pub mod confidence;
pub mod fake;
pub mod plan;
pub mod presets;
pub mod schedule;
pub mod spec;

pub use plan::{Cell, PlanSummary, Slot};
pub use schedule::{
    Attempt, AttemptFailure, CellOutcome, Executor, Finished, Journal, JournalError, PastRun,
    Progress, RunOutput, Sample, ScheduleError, Scheduler, StudyOutcome,
};
pub use spec::{Order, Repetition, RrulPlan, SpecError, SpecFile, StudySpec, UdpMethod};

#[cfg(test)]
mod schedule_tests;
