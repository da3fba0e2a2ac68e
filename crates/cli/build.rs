//! Records the git revision of the build in `DUALPERF_GIT_REV`, so every campaign says
//! which commit measured it (uncommitted changes are not flagged). An explicit `DUALPERF_GIT_REV` in the environment wins; a
//! build outside a git checkout records nothing (the study shows "unknown").

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=DUALPERF_GIT_REV");
    if std::env::var_os("DUALPERF_GIT_REV").is_some() {
        return;
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        let dir = std::path::Path::new(&dir);
        println!("cargo:rerun-if-changed={}", dir.join("HEAD").display());
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", dir.join(head_ref).display());
        }
    }
    if let Some(rev) = git(&["rev-parse", "--short=12", "HEAD"]) {
        if !rev.is_empty() {
            println!("cargo:rustc-env=DUALPERF_GIT_REV={rev}");
        }
    }
}
