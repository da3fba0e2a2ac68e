//! `dualperf man --out DIR`: the manual pages, generated from the same definitions as
//! `--help` (clap_mangen): `dualperf.1` and one page per subcommand
//! (`dualperf-run.1`, `dualperf-lab-up.1`, …), each with the long help of every flag.

use anyhow::Context;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Directory to write the pages into (made if missing); existing pages are replaced.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

pub fn main(args: ManArgs, cmd: clap::Command) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    for page in write_pages(cmd, &args.out)? {
        outln!("{}", page.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Write the page of `cmd` and of every visible subcommand, nested ones included, into
/// `dir`; the paths written, the top-level page first.
pub fn write_pages(cmd: clap::Command, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    fn page(cmd: clap::Command, dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
        let subs: Vec<clap::Command> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .cloned()
            .collect();
        let man = clap_mangen::Man::new(cmd);
        let path = man
            .generate_to(dir)
            .with_context(|| format!("cannot write a manual page into {}", dir.display()))?;
        out.push(path);
        for sub in subs {
            page(sub, dir, out)?;
        }
        Ok(())
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    // Built, every subcommand knows its full name (dualperf-lab-up) and its flags.
    cmd.build();
    let mut out = Vec::new();
    page(cmd, dir, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every visible subcommand, nested ones included, with its page's file name.
    fn commands(cmd: &clap::Command, name: &str, out: &mut Vec<(String, clap::Command)>) {
        out.push((format!("{name}.1"), cmd.clone()));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name() != "help" {
                commands(sub, &format!("{name}-{}", sub.get_name()), out);
            }
        }
    }

    #[test]
    fn every_subcommand_has_a_page_naming_each_of_its_flags() {
        let dir = tempfile::tempdir().unwrap();
        let written = write_pages(crate::Cli::command(), dir.path()).unwrap();
        let mut cmd = crate::Cli::command();
        cmd.build();
        let mut all = Vec::new();
        commands(&cmd, "dualperf", &mut all);
        assert!(all.len() >= 10, "{} commands", all.len());
        for (file, c) in &all {
            let path = dir.path().join(file);
            assert!(written.contains(&path), "{file} not reported as written");
            let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
            for arg in c.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(long) = arg.get_long() {
                    // roff writes each '-' as "\-".
                    let roff = format!("--{long}").replace('-', "\\-");
                    assert!(page.contains(&roff), "{file} does not name --{long}");
                }
            }
        }
        for (file, words) in [
            ("dualperf-run.1", "\\-\\-rate\\-search"),
            ("dualperf-study.1", "\\-\\-udp\\-method"),
            // The long help, not only the first line of a flag's doc.
            ("dualperf-run.1", "gumbel:loc=55ms"),
        ] {
            let page = std::fs::read_to_string(dir.path().join(file)).unwrap();
            assert!(page.contains(words), "{file} lacks {words}");
        }
    }

    #[test]
    fn the_long_help_lists_the_exit_statuses_and_short_help_stays_short() {
        let mut cmd = crate::Cli::command();
        let long = cmd.render_long_help().to_string();
        assert!(long.contains(crate::exit::HELP), "{long}");
        for (sub, max_lines) in [("run", 60), ("study", 90)] {
            let mut c = crate::Cli::command();
            c.build();
            let s = c
                .find_subcommand_mut(sub)
                .unwrap()
                .render_help()
                .to_string();
            assert!(
                s.lines().count() <= max_lines,
                "{sub} -h: {} lines",
                s.lines().count()
            );
        }
    }
}
