//! `dualperf man --out DIR`: the manual pages, generated from the same definitions as
//! `--help` (clap_mangen): `DIR/man1/dualperf.1` and one page per subcommand
//! (`dualperf-run.1`, `dualperf-lab-up.1`, …), each with the long help of every flag, so
//! that `MANPATH=DIR man dualperf` finds them. The pages are written as a report is
//! (`runner::out_files`): whole or not at all, never through a symbolic link inside DIR.

use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Directory to write the pages into, under DIR/man1 (made if missing), so that
    /// `MANPATH=DIR man dualperf` reads them; existing pages are replaced.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

pub fn main(args: ManArgs, cmd: clap::Command) -> anyhow::Result<ExitCode> {
    for page in write_pages(cmd, &args.out)? {
        outln!("{}", page.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The section the pages are in, and the directory under `--out` that holds them.
const SECTION_DIR: &str = "man1";

/// Write the page of `cmd` and of every visible subcommand, nested ones included, into
/// `dir/man1`; the paths written, the top-level page first. Nothing is replaced unless
/// every page was written.
pub fn write_pages(cmd: clap::Command, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    fn page(cmd: clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> anyhow::Result<()> {
        let subs: Vec<clap::Command> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .cloned()
            .collect();
        // The exit statuses get a section of their own (clap_mangen would run the
        // after-help's lines together into one paragraph).
        let exit_status = cmd
            .get_after_long_help()
            .is_some_and(|h| h.to_string() == crate::exit::HELP);
        let cmd = if exit_status {
            cmd.after_long_help(None::<&str>)
        } else {
            cmd
        };
        let man = clap_mangen::Man::new(cmd);
        let mut bytes = Vec::new();
        man.render(&mut bytes)?;
        if exit_status {
            bytes = with_exit_status(&String::from_utf8_lossy(&bytes)).into_bytes();
        }
        out.push((man.get_filename(), bytes));
        for sub in subs {
            page(sub, out)?;
        }
        Ok(())
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    // Built, every subcommand knows its full name (dualperf-lab-up) and its flags.
    cmd.build();
    let mut pages = Vec::new();
    page(cmd, &mut pages)?;
    let out = runner::out_files::OutDir::create(dir, "--out")?;
    let mut staged = runner::out_files::Staged::new();
    for (name, bytes) in &pages {
        out.stage(&mut staged, &format!("{SECTION_DIR}/{name}"), bytes)?;
    }
    // The top-level page last: it is the one `man dualperf` opens.
    let top = pages.first().map_or("", |(n, _)| n.as_str());
    Ok(staged.commit(top)?)
}

/// Text for a roff text line: backslashes and hyphens escaped, a leading `.` or `'`
/// (a request) defused.
fn roff_text(s: &str) -> String {
    let t = s.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with(['.', '\'']) {
        format!("\\&{t}")
    } else {
        t
    }
}

/// The EXIT STATUS section made from [`crate::exit::HELP`]: one tagged paragraph per
/// status (its continuation lines joined), then any closing sentence as a paragraph.
fn exit_status_section() -> String {
    let mut out = String::from(".SH \"EXIT STATUS\"\n");
    let mut item: Option<(String, String)> = None;
    let mut tail = Vec::new();
    let flush = |item: &mut Option<(String, String)>, out: &mut String| {
        if let Some((code, text)) = item.take() {
            out.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", roff_text(&text)));
        }
    };
    for line in crate::exit::HELP.lines().skip(1) {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let code: String = trimmed.chars().take_while(char::is_ascii_digit).collect();
        if !code.is_empty() && trimmed[code.len()..].starts_with(' ') {
            flush(&mut item, &mut out);
            item = Some((code.clone(), trimmed[code.len()..].trim().to_string()));
        } else if let (Some((_, text)), true) = (item.as_mut(), indent > 2) {
            text.push(' ');
            text.push_str(trimmed);
        } else {
            flush(&mut item, &mut out);
            tail.push(trimmed.to_string());
        }
    }
    flush(&mut item, &mut out);
    if !tail.is_empty() {
        out.push_str(&format!(".PP\n{}\n", roff_text(&tail.join(" "))));
    }
    out
}

/// `page` with the EXIT STATUS section before its VERSION section (or at its end).
fn with_exit_status(page: &str) -> String {
    let section = exit_status_section();
    match page.find("\n.SH VERSION") {
        Some(at) => format!("{}\n{section}{}", &page[..at], &page[at + 1..]),
        None => format!("{page}{section}"),
    }
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
            let path = dir.path().join("man1").join(file);
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
            let page = std::fs::read_to_string(dir.path().join("man1").join(file)).unwrap();
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

    /// A page link planted inside DIR/man1, or DIR/man1 itself a link: refused, the
    /// link named, its target untouched, and no page of the set written.
    #[cfg(unix)]
    #[test]
    fn a_planted_link_inside_the_man_directory_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = elsewhere.path().join("precious");
        std::fs::write(&target, b"keep me").unwrap();
        std::fs::create_dir(dir.path().join("man1")).unwrap();
        let link = dir.path().join("man1/dualperf-run.1");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = write_pages(crate::Cli::command(), dir.path()).unwrap_err();
        assert!(
            format!("{e:#}").contains(&format!("{} is a symbolic link", link.display())),
            "{e:#}"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
        assert!(
            !dir.path().join("man1/dualperf.1").exists(),
            "a page was written"
        );

        let dir = tempfile::tempdir().unwrap();
        let man1 = dir.path().join("man1");
        std::os::unix::fs::symlink(elsewhere.path(), &man1).unwrap();
        let e = write_pages(crate::Cli::command(), dir.path()).unwrap_err();
        assert!(
            format!("{e:#}").contains(&format!("{} is a symbolic link", man1.display())),
            "{e:#}"
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 1);
    }

    /// What `man` shows of a page: `man -l` with a fixed width, its standard error.
    fn man_l(page: &Path) -> Option<(String, String)> {
        let o = std::process::Command::new("man")
            .arg("-l")
            .arg(page)
            .env("MANWIDTH", "100")
            .env("MAN_KEEP_FORMATTING", "")
            .env_remove("PAGER")
            .env_remove("MANPAGER")
            .output();
        match o {
            Ok(o) => {
                assert!(o.status.success(), "man -l {}: {o:?}", page.display());
                // A link syntax longer than a line ("802.11n:mcs=M,width=20|40,…") cannot
                // be justified: troff says so, and sets it unjustified. Any other
                // complaint is the page's fault.
                let err: String = String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .filter(|l| !l.ends_with("cannot adjust line"))
                    .map(|l| format!("{l}\n"))
                    .collect();
                Some((String::from_utf8_lossy(&o.stdout).into_owned(), err))
            }
            Err(e) => {
                println!("SKIPPED: cannot run man ({e}); apt-get install man-db");
                None
            }
        }
    }

    /// `man -l` renders every page without a complaint, the exit statuses as a section
    /// of their own with one status per line, and `MANPATH=DIR man` finds the top page.
    #[test]
    fn the_pages_render_with_man_and_list_each_exit_status_on_its_own_line() {
        let dir = tempfile::tempdir().unwrap();
        let written = write_pages(crate::Cli::command(), dir.path()).unwrap();
        let top = dir.path().join("man1/dualperf.1");
        assert_eq!(written.first(), Some(&top));
        let Some((text, err)) = man_l(&top) else {
            return;
        };
        assert_eq!(err, "", "man -l {}", top.display());
        let section: Vec<String> = text
            .lines()
            .skip_while(|l| l.trim() != "EXIT STATUS")
            .skip(1)
            .take_while(|l| l.is_empty() || l.starts_with(' '))
            .filter(|l| !l.trim().is_empty())
            // Justified: words may be two spaces apart.
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        for (code, words) in [
            ("0", "success"),
            ("1", "an error"),
            ("2", "usage error"),
            ("130", "interrupted"),
        ] {
            assert!(
                section
                    .iter()
                    .any(|l| l.starts_with(&format!("{code} {words}"))),
                "status {code} is not on a line of its own:\n{}",
                section.join("\n")
            );
        }
        assert!(
            section.iter().any(|l| l.contains("`lab exec` exits with")),
            "{section:?}"
        );
        for page in &written[1..] {
            if let Some((_, err)) = man_l(page) {
                assert_eq!(err, "", "man -l {}", page.display());
            }
        }
        let found = std::process::Command::new("man")
            .args(["-w", "dualperf"])
            .env("MANPATH", dir.path())
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&found.stdout).trim(),
            top.display().to_string(),
            "{found:?}"
        );
    }
}
