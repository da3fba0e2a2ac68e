//! The `dualperf` binary: argument parsing, subcommands, progress, exit codes and
//! friendly errors. No measurement logic lives here: each subcommand module turns what
//! the user typed into calls on the library crates.
#![forbid(unsafe_code)]

use clap::{CommandFactory, Parser, Subcommand};
use std::process::ExitCode;

/// `print!` that returns the write's `io::Result` instead of panicking: a reader that
/// closes the pipe early (`dualperf show | head -1`) ends the command quietly (see
/// [`closed_pipe`]) instead of a panic.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout(), $($arg)*)
    }};
}

/// `println!` that returns the write's `io::Result`, as [`out!`].
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout(), $($arg)*)
    }};
}

mod args;
mod cmd_exporter;
mod cmd_lab;
mod cmd_man;
mod cmd_model;
mod cmd_report;
mod cmd_run;
mod cmd_server;
mod cmd_study;
mod exit;
mod interrupt;
mod progress;
mod test_args;

/// IPv4-vs-IPv6 network performance studies: traffic generation, measurement,
/// repetition to a confidence target, a results database, significance tests and reports.
///
/// Quick start: `dualperf study` runs the default IPv4-vs-IPv6 sweep on loopback
/// (no setup, no server needed) and `dualperf report` turns it into tables and figures.
#[derive(Parser, Debug)]
#[command(
    name = "dualperf",
    version,
    about,
    long_about,
    after_long_help = exit::HELP,
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve tests to dualperf clients (IPv4 and IPv6, port 5301).
    Server(cmd_server::ServerArgs),
    /// Run one test against a server (or an embedded loopback server when no HOST).
    Run(Box<cmd_run::RunArgs>),
    /// Run a whole study: families × tests × sizes × repetitions, stored in SQLite.
    Study(Box<cmd_study::StudyArgs>),
    /// Show a campaign's plan, metadata and progress.
    Show(cmd_study::ShowArgs),
    /// Export runs as tidy CSV or JSON.
    Export(cmd_study::ExportArgs),
    /// Merge the campaigns of another database into this one.
    Import(cmd_study::ImportArgs),
    /// Tables, figures, significance tests and findings from the results database.
    Report(cmd_report::ReportArgs),
    /// Network-namespace testbeds on this machine (needs root and `ip`).
    Lab(cmd_lab::LabArgs),
    /// The theoretical maximum goodput of a link (Ethernet, tbf, 802.11) per payload size.
    Model(Box<cmd_model::ModelArgs>),
    /// Write the manual pages (dualperf.1 and one per subcommand) into a directory.
    Man(cmd_man::ManArgs),
    /// Prometheus exporter: /probe?target=HOST&module=NAME tests IPv4 and IPv6 in turn.
    Exporter(cmd_exporter::ExporterArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout and succeed; a usage error is exit::USAGE.
            let _ = e.print();
            return if e.use_stderr() {
                exit::code(exit::USAGE)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = dispatch(cli.command);
    match result {
        Ok(code) => code,
        // The reader of our output went away (`| head -1`): nothing is wrong with the
        // command, and nobody is left to read a message. Exit as ripgrep does.
        Err(err) if closed_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // An error may quote a peer or a database: no escape sequences reach the terminal.
            let text = error_text(&err);
            eprintln!("dualperf: error: {}", wire::text::terminal_safe(&text));
            exit::code(exit::ERROR)
        }
    }
}

/// The error and its causes, joined by ": " as anyhow's `{:#}` does, except that a cause
/// whose text its error already quotes is said once (a library error may both quote the
/// OS's reason and keep it as its source).
fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for link in err.chain() {
        let part = link.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// Whether `err` comes from writing to a standard output whose reader has gone.
fn closed_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Server(a) => cmd_server::main(a),
        Command::Run(a) => cmd_run::main(*a),
        Command::Study(a) => cmd_study::study_main(*a),
        Command::Show(a) => cmd_study::show_main(a),
        Command::Export(a) => cmd_study::export_main(a),
        Command::Import(a) => cmd_study::import_main(a),
        Command::Report(a) => cmd_report::main(a),
        Command::Lab(a) => cmd_lab::main(a),
        Command::Model(a) => cmd_model::main(*a),
        Command::Man(a) => cmd_man::main(a, Cli::command()),
        Command::Exporter(a) => cmd_exporter::main(a),
    }
}

#[cfg(test)]
mod tests {
    use super::error_text;

    /// Every subcommand (at any depth) with its path, e.g. "dualperf study show".
    fn subcommands(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands() {
            let p = format!("{path} {}", sub.get_name());
            out.push((p.clone(), sub.clone()));
            subcommands(sub, &p, out);
        }
    }

    /// (command path, how it shows `--LONG`: help, long help, value name, default,
    /// environment variable) for every command that takes `--LONG`.
    fn option_everywhere(long: &str) -> Vec<(String, String)> {
        use clap::CommandFactory;
        let mut all = Vec::new();
        subcommands(&super::Cli::command(), "dualperf", &mut all);
        let mut seen = Vec::new();
        for (path, cmd) in &all {
            let Some(a) = cmd.get_arguments().find(|a| a.get_long() == Some(long)) else {
                continue;
            };
            let shown = (
                a.get_help().map(|h| h.to_string()),
                a.get_long_help().map(|h| h.to_string()),
                a.get_value_names().map(|v| v.to_vec()),
                a.get_default_values().to_vec(),
                a.get_env().map(|e| e.to_os_string()),
            );
            seen.push((path.clone(), format!("{shown:?}")));
        }
        seen
    }

    #[test]
    fn run_and_study_share_one_connect_timeout_with_the_runners_default() {
        let seen = option_everywhere("connect-timeout");
        let paths: Vec<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["dualperf run", "dualperf study"]);
        assert_eq!(seen[0].1, seen[1].1);
        let default = runner::TargetOptions::default()
            .connect_timeout
            .as_secs_f64();
        assert!(
            seen[0].1.contains(&format!("[\"{default}\"]")),
            "{}",
            seen[0].1
        );
    }

    #[test]
    fn every_results_database_option_is_the_one_shared_db_arg() {
        let mut seen = option_everywhere("db");
        // The exporter's --db is optional (no archive without it): another option.
        seen.retain(|(path, _)| path != "dualperf exporter");
        assert!(seen.len() >= 5, "{seen:?}");
        for (path, shown) in &seen {
            assert_eq!(shown, &seen[0].1, "{path} vs {}", seen[0].0);
            assert!(shown.contains("FILE|URL"), "{path}: {shown}");
        }
    }

    /// An error that quotes its source's text and also keeps it as its source.
    #[derive(Debug)]
    struct Quoting(std::io::Error);
    impl std::fmt::Display for Quoting {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "cannot read x.toml: {}", self.0)
        }
    }
    impl std::error::Error for Quoting {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_its_error_already_quotes_is_said_once_and_others_are_kept() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let quoted = anyhow::Error::new(Quoting(io())).context("loading the configuration");
        assert_eq!(
            error_text(&quoted),
            "loading the configuration: cannot read x.toml: no such file"
        );
        assert_eq!(format!("{quoted:#}").matches("no such file").count(), 2);
        let plain = anyhow::Error::new(io()).context("opening dualperf.db");
        assert_eq!(error_text(&plain), format!("{plain:#}"));
    }
}
