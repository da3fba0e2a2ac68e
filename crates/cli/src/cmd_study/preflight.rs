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
    let opts =
        crate::cmd_run::target_options(&args.target, args.connect_timeout.secs, Arc::default())?;
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
    // A FIFO, socket or device: refused before opening it (opening a FIFO for writing
    // blocks until a reader comes; SQLite would write `/dev/null-journal`).
    store::check_database_path(db)?;
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
    // A new file of a random name (O_EXCL), removed at once: nothing planted at a
    // predictable name is followed or truncated.
    tempfile::Builder::new()
        .prefix(".dualperf-write-check-")
        .tempfile_in(dir)
        .map(drop)
        .with_context(|| {
            format!(
                "cannot create the results database in {}; pick a writable --db",
                dir.display()
            )
        })
}

#[cfg(test)]
mod tests {
    /// The write check once created `.dualperf-write-check-PID` with `File::create`,
    /// following (and truncating) a link planted at that name.
    #[cfg(unix)]
    #[test]
    fn the_write_check_follows_no_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, b"keep me").unwrap();
        let planted = dir
            .path()
            .join(format!(".dualperf-write-check-{}", std::process::id()));
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        super::check_db(&dir.path().join("new.db")).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
        assert!(std::fs::symlink_metadata(&planted).is_ok());
        // Nothing else is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
