//! Namespaces from the inside: moving a thread into a lab namespace ([`enter_ns`]),
//! starting a program in one ([`spawn_in_ns`]), writing a sysctl there, and finding
//! and stopping the processes left inside a namespace before it is deleted.

//!
//! Linux only: elsewhere every entry point fails with [`LabError::Unsupported`].

#[cfg(target_os = "linux")]
pub use imp::*;
#[cfg(not(target_os = "linux"))]
pub use other::*;

#[cfg(not(target_os = "linux"))]
mod other {
    use crate::LabError;
    use std::process::{Child, Command};
    use std::time::Duration;

    pub(crate) const NETNS_DIR: &str = "/run/netns";

    pub fn enter_ns(_ns: &str) -> Result<(), LabError> {
        Err(LabError::unsupported())
    }
    pub fn spawn_in_ns(_ns: &str, _cmd: &mut Command) -> Result<Child, LabError> {
        Err(LabError::unsupported())
    }
    pub(crate) fn write_sysctl(_ns: &str, _key: &str, _value: &str) -> Result<(), LabError> {
        Err(LabError::unsupported())
    }
    pub(crate) fn stop_processes_in_ns(_ns: &str, _grace: Duration) -> usize {
        0
    }
    /// Puts the command in a process group of its own (Unix); nothing elsewhere.
    pub fn own_process_group(_cmd: &mut Command) {}
    /// The exit code a shell would give (128 + signal for a signalled process).
    pub fn shell_exit_code(status: std::process::ExitStatus) -> u8 {
        status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            .unwrap_or(1)
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use crate::LabError;
    use std::fs::File;
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    use std::path::PathBuf;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    /// Puts the command in a process group of its own, so a signal to the group reaches
    /// only it and its children.
    pub fn own_process_group(cmd: &mut Command) {
        cmd.process_group(0);
    }

    /// The exit code a shell would give (128 + signal for a signalled process).
    pub fn shell_exit_code(status: std::process::ExitStatus) -> u8 {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => u8::try_from(code).unwrap_or(1),
            (None, Some(sig)) => u8::try_from(128 + sig).unwrap_or(1),
            (None, None) => 1,
        }
    }

    /// Where `ip netns` keeps its namespace handles.
    pub(crate) const NETNS_DIR: &str = "/run/netns";

    fn ns_path(ns: &str) -> Result<PathBuf, LabError> {
        if ns.is_empty() || ns.contains('/') || ns.starts_with('.') {
            return Err(LabError::InvalidName {
                name: ns.to_string(),
                reason: "not a namespace name",
            });
        }
        Ok(PathBuf::from(NETNS_DIR).join(ns))
    }

    fn open_ns(ns: &str) -> Result<File, LabError> {
        File::open(ns_path(ns)?).map_err(|source| LabError::EnterNs {
            ns: ns.to_string(),
            source,
        })
    }

    /// Moves the calling thread into network namespace `ns` (`/run/netns/NS`).
    ///
    /// Only the calling thread moves; sockets it creates afterwards live in `ns`. Call it on a
    /// dedicated thread, or on the main thread before any socket or thread is created.
    pub fn enter_ns(ns: &str) -> Result<(), LabError> {
        let file = open_ns(ns)?;
        // SAFETY: setns takes a valid open fd (kept alive by `file` for the call) and a flag;
        // it touches no memory of ours.
        let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        if rc != 0 {
            return Err(LabError::EnterNs {
                ns: ns.to_string(),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    /// Starts `cmd` inside network namespace `ns`, keeping all of its settings (arguments,
    /// environment, working directory, stdio). The child joins `ns` between fork and exec.
    pub fn spawn_in_ns(ns: &str, cmd: &mut Command) -> Result<Child, LabError> {
        let file = open_ns(ns)?;
        let fd = file.as_raw_fd();
        // SAFETY: the hook runs in the forked child before exec and only calls setns(2), which
        // is async-signal-safe and allocates nothing; `fd` stays open in the child because
        // `file` outlives the spawn (and is O_CLOEXEC, so the program does not inherit it).
        unsafe {
            cmd.pre_exec(move || {
                if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|source| LabError::Spawn {
            program: cmd.get_program().to_string_lossy().into_owned(),
            ns: ns.to_string(),
            source,
        })?;
        drop(file);
        Ok(child)
    }

    /// Writes `value` to /proc/sys/`key` as seen from inside `ns` (a short-lived thread
    /// enters the namespace, so the caller's namespace is untouched).
    pub(crate) fn write_sysctl(ns: &str, key: &str, value: &str) -> Result<(), LabError> {
        let (ns, key, value) = (ns.to_string(), key.to_string(), value.to_string());
        let worker = std::thread::spawn(move || -> Result<(), LabError> {
            enter_ns(&ns)?;
            let path = PathBuf::from("/proc/sys").join(&key);
            if key.starts_with("net/ipv6") && !path.exists() {
                return Err(LabError::Ipv6Unavailable {
                    ns,
                    detail: format!("{} does not exist", path.display()),
                });
            }
            if std::fs::read_to_string(&path)
                .map(|v| v.trim() == value)
                .unwrap_or(false)
            {
                return Ok(());
            }
            std::fs::write(&path, &value).map_err(|source| LabError::Io {
                what: format!("cannot set {} = {value} in namespace {ns}", path.display()),
                source,
            })
        });
        match worker.join() {
            Ok(result) => result,
            Err(_) => Err(LabError::Io {
                what: "sysctl thread panicked".into(),
                source: std::io::Error::other("panic"),
            }),
        }
    }

    /// Process ids (other than this process) whose network namespace is `ns`.
    pub(crate) fn pids_in_ns(ns: &str) -> Vec<i32> {
        let Ok(target) = ns_path(ns)
            .and_then(|p| std::fs::metadata(p).map_err(|_| LabError::NotFound(ns.to_string())))
        else {
            return Vec::new();
        };
        let own = std::process::id() as i32;
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&pid| pid != own)
            .filter(|pid| {
                std::fs::metadata(format!("/proc/{pid}/ns/net"))
                    .map(|m| m.dev() == target.dev() && m.ino() == target.ino())
                    .unwrap_or(false)
            })
            .collect()
    }

    /// SIGTERM to every process inside `ns`, then SIGKILL to those still there after
    /// `grace`. Returns how many were signalled.
    pub(crate) fn stop_processes_in_ns(ns: &str, grace: Duration) -> usize {
        let pids = pids_in_ns(ns);
        for &pid in &pids {
            signal(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        loop {
            let alive: Vec<i32> = pids_in_ns(ns);
            if alive.is_empty() {
                break;
            }
            if Instant::now() >= deadline {
                for pid in alive {
                    signal(pid, libc::SIGKILL);
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        pids.len()
    }

    fn signal(pid: i32, sig: libc::c_int) {
        // SAFETY: kill(2) only takes integers; a pid that has gone away yields ESRCH, ignored.
        unsafe {
            libc::kill(pid, sig);
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn namespace_names_with_paths_are_refused() {
            for bad in ["", "../etc", "a/b", ".hidden"] {
                assert!(
                    matches!(enter_ns(bad), Err(LabError::InvalidName { .. })),
                    "{bad:?}"
                );
            }
        }

        #[test]
        fn entering_a_missing_namespace_says_which() {
            let err = enter_ns("dpl-no-such-lab-client").unwrap_err();
            assert!(err.to_string().contains("dpl-no-such-lab-client"), "{err}");
            assert!(pids_in_ns("dpl-no-such-lab-client").is_empty());
        }
    }
}
