//! `dualperf server` (not built yet).

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ServerArgs {}

pub fn main(_args: ServerArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`dualperf server` is not built yet")
}
