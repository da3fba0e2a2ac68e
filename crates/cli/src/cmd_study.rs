//! `dualperf study`, `show`, `export` and `import` (not built yet).

use clap::Args;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct StudyArgs {}
#[derive(Args, Debug)]
pub struct ShowArgs {}
#[derive(Args, Debug)]
pub struct ExportArgs {}
#[derive(Args, Debug)]
pub struct ImportArgs {}

pub fn study_main(_args: StudyArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`dualperf study` is not built yet")
}
pub fn show_main(_args: ShowArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`dualperf show` is not built yet")
}
pub fn export_main(_args: ExportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`dualperf export` is not built yet")
}
pub fn import_main(_args: ImportArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`dualperf import` is not built yet")
}
