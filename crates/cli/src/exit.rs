//! The exit status of every command, by name. Scripts and tests read these numbers, so
//! a number keeps its meaning: where two conditions share one (2 is a usage error, a
//! study cell with no run, or a report with nothing to compare), each has its own name
//! and the help lists them all.

use std::process::ExitCode;

/// Everything asked for was done.
pub const SUCCESS: u8 = 0;
/// An error: the message on stderr says what went wrong and what to do. Also a command
/// that did part of its work and says which part it could not do (`import` with skipped
/// campaigns, `lab down` with a lab it could not remove).
pub const ERROR: u8 = 1;
/// The command line could not be parsed (clap's status for a usage error).
pub const USAGE: u8 = 2;
/// `study`: the campaign finished, but some cell got no successful run.
pub const NO_RUN: u8 = 2;
/// `report`: the report was written, but no packet size has both sides (IPv4 and IPv6,
/// or two campaigns) with successful runs of the same test.
pub const NOTHING_TO_COMPARE: u8 = 2;
/// Stopped by Ctrl-C or SIGTERM (128 + SIGINT); an interrupted study can be resumed.
pub const INTERRUPTED: u8 = 130;

/// `code` as the process's exit status.
pub fn code(code: u8) -> ExitCode {
    ExitCode::from(code)
}

/// The list shown by `dualperf --help` and in the man page.
pub const HELP: &str = "\
Exit status:
  0    success
  1    an error (the message says what to do), or part of the work could not be done
       (import skipped campaigns, lab down could not remove a lab)
  2    usage error; study: some cell got no successful run; report: nothing to compare
       (the report is still written)
  130  interrupted (Ctrl-C, SIGTERM); continue a study with --resume
  `lab exec` exits with the status of the command it ran.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_status() {
        for c in [
            SUCCESS,
            ERROR,
            USAGE,
            NO_RUN,
            NOTHING_TO_COMPARE,
            INTERRUPTED,
        ] {
            assert!(
                HELP.lines()
                    .any(|l| l.trim_start().starts_with(&c.to_string())),
                "{c} is not listed"
            );
        }
        // Numbers the tests and docs rely on.
        assert_eq!((NO_RUN, NOTHING_TO_COMPARE, INTERRUPTED), (2, 2, 130));
    }
}
