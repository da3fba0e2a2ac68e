//! `dualperf run --lab p2p|client-server`: one test in a temporary network-namespace
//! lab, which the runner's target builds (with a `dualperf server` in its server
//! namespace) and removes. Here: the lab removed on Ctrl-C / SIGTERM too (a handler
//! removes every lab of this process and exits with 130; the main thread never exits on
//! its own while that runs), and the lab's description under a text result.

use super::say;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Runs `f` (which builds, uses and removes a lab) with the Ctrl-C handler that removes
/// the lab; an interrupted `f` waits for the handler to finish and exit.
pub(super) fn guarded<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    crate::interrupt::remove_labs_and_exit()?;
    let out = f();
    // Interrupted: the handler is removing the lab and will exit(130); wait for it.
    while crate::interrupt::INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
    }
    out
}

/// The lab's description lines under a text result.
pub(super) fn say_lab(md: &BTreeMap<String, String>) {
    for (k, v) in md {
        say(&format!("  {k:<34} {v}"));
    }
    say("  (the lab was removed)");
}
