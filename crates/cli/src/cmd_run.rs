//! `dualperf run` (not built yet).

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct RunArgs {}

pub fn main(_args: RunArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`dualperf run` is not built yet")
}
