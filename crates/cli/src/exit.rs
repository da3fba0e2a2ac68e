//! The exit status of every command, by name: the one home of these numbers. Scripts
//! and tests read them, so a number keeps its meaning and means one thing: each condition
//! has its own, and `dualperf --help` and the man page list them all ([`HELP`]).

use std::process::ExitCode;

/// Everything asked for was done (a study: every cell met its confidence target, or
/// ran its fixed runs).
pub const SUCCESS: u8 = 0;
/// An error: the message on stderr says what went wrong and what to do. Also a command
/// that did part of its work and says which part it could not do (`import` with skipped
/// campaigns, `lab down` with a lab it could not remove).
pub const ERROR: u8 = 1;
/// The command line could not be parsed (clap's status for a usage error).
pub const USAGE: u8 = 2;
/// `study`: the campaign finished and every cell has runs, but some cells missed their
/// confidence target (the summary says which and what they need).
pub const TARGETS_MISSED: u8 = 3;
/// `study`: the campaign finished, but some cell got no successful run.
pub const NO_RUN: u8 = 4;
/// `report`: the report was written, but no packet size has both sides (IPv4 and IPv6,
/// or two campaigns) with successful runs of the same test.
pub const NOTHING_TO_COMPARE: u8 = 5;
/// Stopped by Ctrl-C or SIGTERM (128 + SIGINT); an interrupted study can be resumed.
pub const INTERRUPTED: u8 = 130;

/// `code` as the process's exit status.
pub fn code(code: u8) -> ExitCode {
    ExitCode::from(code)
}

/// The list shown by `dualperf --help` and in the man page.
pub const HELP: &str = "\
Exit status:
  0    success; a study met every cell's confidence target
  1    an error (the message says what to do), or part of the work could not be done
       (import skipped campaigns, lab down could not remove a lab)
  2    usage error (the command line could not be parsed)
  3    study finished, but some cells missed their confidence target
  4    study finished, but some cell got no successful run
  5    report written, but there is nothing to compare
  130  interrupted (Ctrl-C, SIGTERM); continue a study with --resume
  `lab exec` exits with the status of the command it ran.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_status_means_one_thing_and_the_help_lists_it() {
        let all = [
            SUCCESS,
            ERROR,
            USAGE,
            TARGETS_MISSED,
            NO_RUN,
            NOTHING_TO_COMPARE,
            INTERRUPTED,
        ];
        for c in all {
            assert!(
                HELP.lines()
                    .any(|l| l.trim_start().starts_with(&format!("{c} "))),
                "{c} is not listed"
            );
        }
        let mut distinct = all.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), all.len(), "two conditions share a status");
        // Numbers the tests and docs rely on.
        assert_eq!(
            (
                USAGE,
                TARGETS_MISSED,
                NO_RUN,
                NOTHING_TO_COMPARE,
                INTERRUPTED
            ),
            (2, 3, 4, 5, 130)
        );
    }
}
