//! The one owner of Ctrl-C / SIGTERM in the binary: every subcommand that reacts to an
//! interrupt asks this module for the behaviour it needs, so no two handlers compete
//! (the `ctrlc` crate allows one per process).

use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// `dualperf server`: Ctrl-C sets the returned flag; the server loops watch it.
pub fn stop_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::SeqCst))
        .context("cannot install the Ctrl-C handler")?;
    Ok(stop)
}

/// Installs the study's Ctrl-C / SIGTERM handler: the first stops the study after the
/// current run (the lab, if any, is then removed on the way out); a second aborts at
/// once, removing this process's labs first.
pub fn study_stop_flag() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    // Fails only if a handler exists already (then that one decides).
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            let removed = lab::teardown_all_live();
            if !removed.is_empty() {
                eprintln!(
                    "\ndualperf: aborted; removed {} lab namespace(s)",
                    removed.len()
                );
            }
            std::process::exit(crate::exit::INTERRUPTED.into());
        }
        eprintln!("\ndualperf: stopping after the current run (Ctrl-C again to abort now)");
    });
    stop
}

/// Set by the signal handler before it removes the lab.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Our own handler instead of the `lab` guard, so that a test failing *because* the
/// lab is being removed (its server gets SIGTERM) cannot exit with 1 before the
/// handler has finished: `dualperf run --lab` waits while [`INTERRUPTED`] is set.
pub fn remove_labs_and_exit() -> anyhow::Result<()> {
    lab::disable_signal_guard();
    ctrlc::set_handler(|| {
        INTERRUPTED.store(true, Ordering::SeqCst);
        let removed = lab::teardown_all_live();
        eprintln!(
            "dualperf: interrupted; removed the lab ({} namespace(s))",
            removed.len()
        );
        std::process::exit(crate::exit::INTERRUPTED.into());
    })
    .context("cannot install the Ctrl-C handler")
}
