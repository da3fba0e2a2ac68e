//! What the test modules share: a results database in a temporary directory, study
//! specs from TOML, a progress view that records what it was told (and can stop the
//! study after some runs, as a Ctrl-C would), and campaigns made and run on a target.

use runner::campaign::ProgressView;
use runner::lifecycle::{self, CampaignInfo, End, OpenCampaign, Ran, Resumed};
use runner::Target;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use store::{DbTarget, Store};
use study::{Progress, StudySpec};

/// A results database file in its own temporary directory (removed on drop).
pub struct Db {
    _dir: tempfile::TempDir,
    pub target: DbTarget,
}

impl Db {
    pub fn new() -> Db {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let target = DbTarget::parse(dir.path().join("results.db").as_os_str());
        Db { _dir: dir, target }
    }

    pub fn open(&self) -> Store {
        Store::open_target(&self.target).expect("the test database opens")
    }
}

/// A study spec from TOML, resolved with a fixed seed.
pub fn spec(toml: &str) -> StudySpec {
    study::SpecFile::from_toml(toml)
        .expect("valid TOML")
        .resolve(7)
        .expect("a valid study")
}

/// What the progress view was told; with `stop_after`, it sets the stop flag once that
/// many attempts were recorded.
#[derive(Default)]
pub struct Seen {
    pub starting: Vec<(u64, u64, String)>,
    pub recorded: u64,
    pub stop_after: Option<(u64, Arc<AtomicBool>)>,
}

impl ProgressView for Seen {
    fn starting(&mut self, p: &Progress, current: &str, _last: &str) {
        self.starting
            .push((p.done_slots, p.expected_slots, current.to_string()));
    }
    fn recorded(&mut self) {
        self.recorded += 1;
        if let Some((n, stop)) = &self.stop_after {
            if self.recorded >= *n {
                stop.store(true, Ordering::SeqCst);
            }
        }
    }
}

pub fn info() -> CampaignInfo {
    CampaignInfo {
        command_line: "dualperf study --runner-test".into(),
        created_unix_s: 1_700_000_000,
        dualperf_version: "0.0.0-test".into(),
        git_revision: "test".into(),
    }
}

/// A new campaign of `spec` on `target` in `db`, as `dualperf study` makes it.
pub fn create(db: &Db, spec: &StudySpec, target: &Target) -> OpenCampaign {
    let opts = runner::TargetOptions::default();
    let client = target.initial_client_info(&opts, "0.0.0-test", "test");
    lifecycle::create(db.open(), &db.target, spec, target, &client, &info())
        .expect("the campaign is created")
}

/// Runs `campaign` on `target` with `view`, not stopped from outside.
pub fn run(campaign: OpenCampaign, target: &mut Target, view: Seen) -> Ran<Seen> {
    let stop = view
        .stop_after
        .as_ref()
        .map(|(_, s)| s.clone())
        .unwrap_or_default();
    lifecycle::run(campaign, target, view, &stop).expect("the campaign runs")
}

/// Resumes campaign `id` of `db`, which must not be finished.
pub fn resume(db: &Db, id: i64) -> OpenCampaign {
    match lifecycle::resume(db.open(), &db.target, id).expect("the campaign resumes") {
        Resumed::Open(c) => *c,
        Resumed::AlreadyFinished => panic!("campaign {id} is already finished"),
    }
}

/// The end of a finished campaign: its failed-cell count.
pub fn failed_cells(end: &End) -> usize {
    match end {
        End::Finished { failed_cells, .. } => *failed_cells,
        other => panic!("the campaign did not finish: {other:?}"),
    }
}
