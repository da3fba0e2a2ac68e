//! `dualperf lab` (not built yet).

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct LabArgs {}

pub fn main(_args: LabArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`dualperf lab` is not built yet")
}
