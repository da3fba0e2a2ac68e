//! `dualperf report` (not built yet).

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReportArgs {}

pub fn main(_args: ReportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`dualperf report` is not built yet")
}
