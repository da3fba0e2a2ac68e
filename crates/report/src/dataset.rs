//! The report's input: campaigns with their host metadata and run rows. Pure data; the
//! CLI fills it from the store, tests build it by hand.

use std::collections::BTreeMap;
use wire::spec::{Direction, Family, TestKind};

/// Everything a report is made from. Several campaigns = several compared systems,
/// named by their labels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dataset {
    pub campaigns: Vec<CampaignData>,
}

/// One campaign (one system under test).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CampaignData {
    pub id: i64,
    /// The system's name in tables and legends.
    pub label: String,
    /// Free-form facts shown as they are (command line, created, spec).
    pub facts: BTreeMap<String, String>,
    /// Host role ("client", "server", …) → metadata key → value.
    pub hosts: BTreeMap<String, BTreeMap<String, String>>,
    pub runs: Vec<RunRow>,
}

/// Outcome of one run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    Ok,
    Failed(String),
}

/// One run: one measurement of one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub family: Family,
    pub kind: TestKind,
    pub direction: Direction,
    pub payload_bytes: u32,
    pub repetition: u32,
    pub warmup: bool,
    pub outcome: RunOutcome,
    /// Metric name (from `wire::metrics`) → value.
    pub metrics: BTreeMap<String, f64>,
}

impl RunRow {
    /// Whether this run counts in the statistics (finished and not a warm-up).
    pub fn counts(&self) -> bool {
        !self.warmup && self.outcome == RunOutcome::Ok
    }
}
