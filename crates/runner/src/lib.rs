//! dualperf's application layer, below the command line and above the measuring crates:
//! one options model ([`TestOptions`], with what a study or a single run adds) and one
//! resolution of those options, a preset and a spec file into the tests to make
//! ([`resolve_study`], [`resolve_run`]); where tests go and running them there
//! ([`target`]: the embedded server, a remote dualperf server, an iperf3 peer, a lab,
//! each a `study::Executor`); a run as a campaign of one test with no store
//! ([`single`]); the campaign lifecycle ([`lifecycle`]: new, resumed,
//! the profile axis, run to its end, each with a typed outcome) and its pieces
//! ([`campaign`]: the store journal, the campaign lock); the export of stored runs
//! ([`export`]: tidy CSV or JSON); the one writer of every output file
//! ([`out_files`]: atomic, never through a symbolic link); monitoring campaigns, repeated
//! runs of the same tests kept as one campaign each ([`monitor`]: the exporter's
//! archive); loading a report's dataset from the store ([`report_data`]: the report
//! reads `store::dataset`'s types, so this crate does not depend on it). Nothing prints and there is no
//! argument parser: `cli` maps its flags onto these types and shows the outcomes.
#![forbid(unsafe_code)]

pub mod campaign;
pub mod export;
pub mod failure;
pub mod hosts;
pub mod lifecycle;
pub mod monitor;
pub mod options;
pub mod out_files;
pub mod quic;
pub mod report_data;
pub mod resolve;
pub mod single;
pub mod target;

pub use hosts::Hosts;
pub use options::{OneTest, RunTest, StudyOptions, TestOptions};
pub use resolve::{
    emulated_link_datapath, literal_family, read_spec_file, resolve_run, resolve_single,
    resolve_study, Layers, EMULATED_LINK_DATAPATH,
};
pub use single::{RunSpec, Single, SingleError, SingleRun, Tried};
pub use target::{Peer, Target, TargetError, TargetOptions};

/// Why options could not become a test, worded for the user.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// An option the user gave, refused with what to do.
    #[error("{0}")]
    Option(String),
    #[error("cannot read study spec {path}: {why}")]
    SpecFile { path: String, why: String },
    #[error("in study spec {path}: {source}")]
    InSpecFile {
        path: String,
        source: study::SpecError,
    },
    #[error(transparent)]
    Spec(#[from] study::SpecError),
    #[error(transparent)]
    Test(#[from] wire::proto::SpecError),
}
