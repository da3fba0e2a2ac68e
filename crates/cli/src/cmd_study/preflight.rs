//! Before a study creates anything (database file, campaign, lab): the target resolves
//! in every family of the plan and a server answers there. A study that cannot start
//! fails at once with the cause and leaves nothing behind, instead of recording a
//! campaign whose every run fails and suggesting a `--resume` that cannot help.
//!
//! "Answers" means a whole handshake: against `dualperf server`, one 1-byte tcp-rr
//! transaction (hello, key proof with `--psk-file`, request, result); a server busy with
//! someone else's test, or refusing this one, has answered too. An iperf3 server is
//! only resolved (see [`check_target`]).

use super::{connect_timeout, StudyArgs};
use crate::args::Peer;
use anyhow::Context;
use std::net::{SocketAddr, ToSocketAddrs};
use study::StudySpec;
use wire::spec::{Bound, Family, TestKind, TestSpec};

/// Checks the remote target of a study (nothing to check for the embedded server or
/// a lab, which the study builds itself).
pub fn check_target(args: &StudyArgs, spec: &StudySpec) -> anyhow::Result<()> {
    // A plan the peer cannot run is the first thing to say, whether or not it answers.
    if args.target.peer == Peer::Iperf3 {
        if let Some(why) = runner::target::iperf3::refuse_rr(spec) {
            anyhow::bail!("{why}");
        }
    }
    let Some(host) = args.target.host.as_deref() else {
        return Ok(());
    };
    if super::fake_requested().is_some() {
        return Ok(());
    }
    let timeout = connect_timeout(args)?;
    for &family in &spec.families {
        let addr = resolve(host, args.target.port(), family)?;
        let answered = match args.target.peer {
            Peer::Dualperf => hello(args, host, family, timeout),
            // Resolution only: iperf3 has no test-free handshake, and a probe connection
            // is a client to it whose error path raced the study's first run (one reset
            // run in 9 loaded suite runs), so an iperf3 target is checked by its first run.
            Peer::Iperf3 => Ok(()),
        };
        answered.with_context(|| {
            format!("the study cannot start, nothing was recorded: {addr} does not answer")
        })?;
    }
    Ok(())
}

/// The address of `host` in `family`, or why there is none and what to do.
fn resolve(host: &str, port: u16, family: Family) -> anyhow::Result<SocketAddr> {
    let bare = host.trim().trim_start_matches('[').trim_end_matches(']');
    let all: Vec<SocketAddr> = (bare, port)
        .to_socket_addrs()
        .with_context(|| {
            format!("cannot resolve host {host}: check the name (nothing was recorded)")
        })?
        .collect();
    let want = |a: &&SocketAddr| match family {
        Family::V4 => a.is_ipv4(),
        Family::V6 => a.is_ipv6(),
    };
    match all.iter().find(want) {
        Some(a) => Ok(*a),
        None => {
            let (record, other) = match family {
                Family::V4 => ("A", 6),
                Family::V6 => ("AAAA", 4),
            };
            anyhow::bail!(
                "host {host} has no {family} address ({record}); use --families {other} \
                 (nothing was recorded)"
            )
        }
    }
}

/// One 1-byte TCP transaction: the whole control handshake, key included.
fn hello(
    args: &StudyArgs,
    host: &str,
    family: Family,
    timeout: std::time::Duration,
) -> anyhow::Result<()> {
    let mut spec = TestSpec::new(TestKind::TcpRr, family, 1);
    spec.bound = Bound::Count(1);
    let mut cfg = engine::ClientConfig::new(host, args.target.port(), spec);
    cfg.connect_timeout = timeout;
    cfg.client_info = Some(Default::default());
    cfg.psk = crate::args::load_psk(args.target.psk_file.as_deref())?;
    // Busy and "rejected" are answers from a working server (the study waits out the
    // one and records the other as each run's failure reason, e.g. a --max-duration
    // shorter than the runs, or the handshake's own test outlasting it on a loaded
    // machine); everything else means no run can succeed.
    match engine::run_client(&cfg, &mut engine::NullRecorder) {
        Ok(_)
        | Err(engine::EngineError::ServerBusy { .. })
        | Err(engine::EngineError::Rejected(_)) => Ok(()),
        Err(e) => Err(anyhow::Error::new(e)),
    }
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
