//! No lab left behind: a process-wide registry of the namespaces this process created
//! and has not yet removed, torn down by a SIGINT/SIGTERM handler; temporary lab names
//! that carry the owner's pid, and the removal of temporary labs whose owner has died.

use crate::LabError;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::Duration;

struct Registry {
    /// Namespaces created by this process and not yet deleted.
    live_ns: BTreeSet<String>,
    /// Set by the signal handler: no namespace may be created any more.
    shutting_down: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    live_ns: BTreeSet::new(),
    shutting_down: false,
});
static GUARD: Once = Once::new();
static TEMP_COUNTER: AtomicU32 = AtomicU32::new(0);

fn registry() -> MutexGuard<'static, Registry> {
    // A panic while holding the lock leaves the set consistent (single inserts/removes).
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Creates namespace `ns` and records it as live, atomically with respect to the signal
/// handler, so a Ctrl-C during setup either prevents the creation or removes it.
pub(crate) fn add_ns_registered(ns: &str) -> Result<(), LabError> {
    let mut reg = registry();
    if reg.shutting_down {
        return Err(LabError::ShuttingDown);
    }
    crate::exec::run("ip", &["netns".into(), "add".into(), ns.into()])?;
    reg.live_ns.insert(ns.to_string());
    Ok(())
}

/// Stops the processes inside `ns`, deletes it and forgets it.
pub(crate) fn delete_ns(ns: &str) -> Result<(), LabError> {
    crate::ns::stop_processes_in_ns(ns, Duration::from_millis(500));
    let result = crate::exec::run("ip", &["netns".into(), "delete".into(), ns.into()]);
    let gone = !std::path::Path::new(crate::ns::NETNS_DIR).join(ns).exists();
    if gone {
        registry().live_ns.remove(ns);
    }
    match result {
        Err(_) if gone => Ok(()),
        other => other.map(|_| ()),
    }
}

/// Stops tracking `ns` (the lab outlives this process on purpose).
pub(crate) fn forget_ns(ns: &str) {
    registry().live_ns.remove(ns);
}

/// Deletes every namespace this process created and still holds, and refuses new ones.
/// Call it from your own Ctrl-C handler if you install one instead of
/// [`install_signal_guard`]. Returns the namespaces removed.
pub fn teardown_all_live() -> Vec<String> {
    let live: Vec<String> = {
        let mut reg = registry();
        reg.shutting_down = true;
        reg.live_ns.iter().cloned().collect()
    };
    live.into_iter()
        .filter(|ns| delete_ns(ns).is_ok())
        .collect()
}

/// Installs (once per process) a SIGINT/SIGTERM/SIGHUP handler that removes every live
/// lab of this process and exits with status 130. [`crate::Lab::create`] calls it; if the
/// program already installed its own `ctrlc` handler this returns `false` and that
/// handler must call [`teardown_all_live`].
pub fn install_signal_guard() -> bool {
    let mut installed = false;
    GUARD.call_once(|| {
        installed = ctrlc::set_handler(|| {
            let removed = teardown_all_live();
            eprintln!(
                "dualperf: interrupted; removed {} lab namespace(s)",
                removed.len()
            );
            std::process::exit(130);
        })
        .is_ok();
        HANDLER_OK.store(installed, Ordering::SeqCst);
    });
    HANDLER_OK.load(Ordering::SeqCst)
}

/// Keeps [`crate::Lab::create`] from installing the guard, for programs with their own
/// `ctrlc` handler (e.g. a graceful first Ctrl-C). Call it before the first lab is made;
/// that handler must call [`teardown_all_live`] before the process exits.
pub fn disable_signal_guard() {
    GUARD.call_once(|| HANDLER_OK.store(false, Ordering::SeqCst));
}

static HANDLER_OK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A fresh name `tmpPID-N` for a lab owned by this process.
pub(crate) fn temporary_name() -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("tmp{}-{n}", std::process::id())
}

/// The owner pid of a temporary lab name, if it is one.
fn temporary_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("tmp")?;
    let (pid, n) = rest.split_once('-')?;
    n.parse::<u32>().ok()?;
    pid.parse().ok()
}

/// Removes temporary labs (see [`crate::LabSpec::temporary`]) whose owning process no
/// longer exists — left by a process killed with SIGKILL. Returns the lab names removed.
pub fn cleanup_stale() -> Result<Vec<String>, LabError> {
    let mut removed = Vec::new();
    for info in crate::list_labs()? {
        let Some(pid) = temporary_owner(&info.name) else {
            continue;
        };
        if std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        crate::destroy(&info.name)?;
        removed.push(info.name);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_unique_and_carry_the_pid() {
        let (a, b) = (temporary_name(), temporary_name());
        assert_ne!(a, b);
        assert_eq!(temporary_owner(&a), Some(std::process::id()));
        crate::validate_name(&a).unwrap();
        assert_eq!(temporary_owner("p2p-1"), None);
        assert_eq!(temporary_owner("tmpx-1"), None);
    }
}
