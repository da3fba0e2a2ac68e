//! Before a study creates anything (database file, campaign, lab): the plan is one the
//! peer can run, a remote target answers in every family of the plan
//! (`runner::target::preflight`), and the results database can be written. A study that
//! cannot start fails at once with the cause and leaves nothing behind.

use super::StudyArgs;
use crate::args::Peer;
use anyhow::Context;
use std::sync::Arc;
use study::StudySpec;

/// Checks the remote target of a study (nothing to check for the embedded server or
/// a lab, which the study builds itself).
pub fn check_target(args: &StudyArgs, spec: &StudySpec) -> anyhow::Result<()> {
    // A plan the peer cannot run is the first thing to say, whether or not it answers.
    if args.target.peer == Peer::Iperf3 {
        if let Some(why) = runner::target::iperf3::refuse_rr(spec) {
            anyhow::bail!("{why}");
        }
    }
    if !args.target.hosts().is_remote() || super::fake_requested().is_some() {
        return Ok(());
    }
    let opts = crate::cmd_run::target_options(&args.target, args.connect_timeout, Arc::default())?;
    Ok(runner::target::preflight::check_remote(
        &opts,
        &spec.families,
    )?)
}

/// The results database can be written: an existing file opens for writing, or a new
/// one can be made in its directory (probed with a file removed at once).
pub fn check_db(db: &std::path::Path) -> anyhow::Result<()> {
    if db.is_dir() {
        anyhow::bail!(
            "--db {} is a directory; give a file name, e.g. {}/dualperf.db",
            db.display(),
            db.display()
        );
    }
    if db.exists() {
        return std::fs::OpenOptions::new()
            .append(true)
            .open(db)
            .map(drop)
            .with_context(|| {
                format!(
                    "results database {} cannot be written; fix its permissions or pick another --db",
                    db.display()
                )
            });
    }
    let dir = match db.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "the directory of --db {} does not exist; create it (mkdir -p {}) or pick another --db",
            db.display(),
            dir.display()
        );
    }
    let probe = dir.join(format!(".dualperf-write-check-{}", std::process::id()));
    std::fs::File::create(&probe).map(drop).with_context(|| {
        format!(
            "cannot create the results database in {}; pick a writable --db",
            dir.display()
        )
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
