//! Running `ip` and `tc`: one place that turns "program not found", a non-zero exit and
//! its stderr into [`LabError`]s, and the privilege check done before anything is created.

use crate::LabError;
use std::io::ErrorKind;
use std::process::{Command, Stdio};

/// Linux capability numbers (linux/capability.h).
const CAP_NET_ADMIN: u32 = 12;
const CAP_SYS_ADMIN: u32 = 21;

/// Fails with [`LabError::NotRoot`] unless the process holds CAP_NET_ADMIN and
/// CAP_SYS_ADMIN (both are needed to create and mount network namespaces), and with
/// [`LabError::ToolMissing`] when `ip` is not installed.
pub fn check_privileges() -> Result<(), LabError> {
    if !cfg!(target_os = "linux") {
        return Err(LabError::unsupported());
    }
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        if let Some(caps) = cap_eff(&status) {
            let has = |cap: u32| caps & (1u64 << cap) != 0;
            if !(has(CAP_NET_ADMIN) && has(CAP_SYS_ADMIN)) {
                return Err(LabError::NotRoot);
            }
        }
    }
    run("ip", &["-V".to_string()]).map(|_| ())
}

/// The effective capability mask from /proc/self/status text.
fn cap_eff(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line.trim_start_matches("CapEff:").trim(), 16).ok()
}

/// Fails with [`LabError::NftMissing`] unless `nft` (Debian's nftables) runs.
pub(crate) fn check_nft() -> Result<(), LabError> {
    check_nft_program("nft")
}

fn check_nft_program(program: &'static str) -> Result<(), LabError> {
    match run(program, &["--version".to_string()]) {
        Err(LabError::ToolMissing(_)) => Err(LabError::NftMissing),
        other => other.map(|_| ()),
    }
}

/// Runs `program args…` and returns its stdout; a failure carries the command line
/// and the program's stderr.
pub(crate) fn run(program: &'static str, args: &[String]) -> Result<String, LabError> {
    run_with_stdin(program, args, "")
}

/// [`run`] with `input` on the program's stdin (e.g. a ruleset for `nft -f -`).
pub(crate) fn run_with_stdin(
    program: &'static str,
    args: &[String],
    input: &str,
) -> Result<String, LabError> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(if input.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| match source.kind() {
            ErrorKind::NotFound => LabError::ToolMissing(program),
            _ => LabError::Io {
                what: format!("cannot run {program}"),
                source,
            },
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        // A program that exits early closes its stdin; its status and stderr say why.
        let _ = stdin.write_all(input.as_bytes());
    }
    let out = child.wait_with_output().map_err(|source| LabError::Io {
        what: format!("waiting for {program}"),
        source,
    })?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let cmd = format!("{program} {}", args.join(" "));
    if is_permission_error(&stderr) {
        return Err(LabError::NotRoot);
    }
    Err(LabError::Command {
        cmd,
        stderr: if stderr.is_empty() {
            format!("exit status {}", out.status)
        } else {
            stderr
        },
    })
}

/// `ip netns add` without privileges says "Operation not permitted" / "Permission denied".
fn is_permission_error(stderr: &str) -> bool {
    stderr.contains("Operation not permitted")
        || stderr.contains("Permission denied") && stderr.contains("mount")
}

/// True when tc's stderr says the qdisc kind is not in this kernel (module missing).
pub(crate) fn is_qdisc_unavailable(stderr: &str) -> bool {
    let s = stderr.to_ascii_lowercase();
    s.contains("qdisc kind is unknown")
        || s.contains("unknown qdisc")
        || s.contains("no such file or directory")
        || s.contains("not supported")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_eff_is_read_from_status_text() {
        let status = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n";
        assert_eq!(cap_eff(status), Some(0x1ff_ffff_ffff));
        assert_eq!(cap_eff("Name: x\n"), None);
        let no_admin = cap_eff("CapEff:\t0000000000000000\n").unwrap();
        assert_eq!(no_admin & (1 << CAP_NET_ADMIN), 0);
    }

    #[test]
    fn missing_qdisc_messages_are_recognised() {
        assert!(is_qdisc_unavailable(
            "Error: Specified qdisc kind is unknown."
        ));
        assert!(is_qdisc_unavailable(
            "RTNETLINK answers: No such file or directory"
        ));
        assert!(!is_qdisc_unavailable(
            "Error: Exclusivity flag on, cannot modify."
        ));
    }

    #[test]
    fn a_missing_program_says_install_iproute2() {
        let err = run("dualperf-no-such-tool-xyz", &[]).unwrap_err();
        assert!(
            matches!(err, LabError::ToolMissing("dualperf-no-such-tool-xyz")),
            "{err:?}"
        );
        assert!(err.to_string().contains("install iproute2"), "{err}");
    }

    #[test]
    fn a_missing_nft_names_the_debian_package() {
        let err = check_nft_program("dualperf-no-such-nft-xyz").unwrap_err();
        assert!(matches!(err, LabError::NftMissing), "{err:?}");
        assert!(
            err.to_string().contains("apt-get install nftables"),
            "{err}"
        );
    }

    #[test]
    fn a_failing_command_reports_its_stderr() {
        let err = run("ip", &["no-such-object".to_string()]).unwrap_err();
        assert!(
            matches!(&err, LabError::Command { cmd, stderr } if cmd == "ip no-such-object" && !stderr.is_empty()),
            "{err:?}"
        );
    }
}
