//! What a dualperf process that made a temporary lab (`tmpPID-N`) may have left behind,
//! shared by the lab tests of `dualperf run` and `dualperf study`.

use std::process::Command;
use std::time::{Duration, Instant};

/// Everything process `pid` may have left: its lab namespaces, veths in the root
/// namespace, and its lab server processes (found by their DUALPERF_LAB mark).
pub fn leftovers(pid: u32) -> Vec<String> {
    let mark = format!("tmp{pid}-");
    let mut left = Vec::new();
    let netns = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    for line in String::from_utf8_lossy(&netns.stdout).lines() {
        if line.contains(&mark) {
            left.push(format!("namespace {line}"));
        }
    }
    let links = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .expect("ip link show");
    for line in String::from_utf8_lossy(&links.stdout).lines() {
        let name = line.split(':').nth(1).unwrap_or("").trim();
        if name.starts_with("dp-") {
            left.push(format!("root-namespace link {name}"));
        }
    }
    let want = format!("DUALPERF_LAB={mark}");
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(other) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let env = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        if env
            .split(|&b| b == 0)
            .any(|kv| kv.starts_with(want.as_bytes()))
        {
            left.push(format!("lab server process {other}"));
        }
    }
    left
}

pub fn assert_nothing_left(pid: u32) {
    // Removal happens before the study exits; allow the kernel a moment to reap.
    let t0 = Instant::now();
    loop {
        let left = leftovers(pid);
        if left.is_empty() {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(3),
            "left behind: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
