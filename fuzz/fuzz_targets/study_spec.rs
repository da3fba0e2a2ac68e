//! Study specs as a user writes them (issue 11): a TOML spec file, resolved with its
//! range checks, and the `--sizes` grammar. Properties: no panic; parsing and resolving
//! stay bounded in time and memory (libFuzzer's -timeout and -rss_limit_mb catch the
//! 1.2 GB/s growth of `1..4294967295/1` before the fix); a resolved spec keeps every
//! limit (sizes 1..=65507, at most MAX_SIZES of them, at most MAX_PLANNED_RUNS runs);
//! text leaving `terminal_safe` holds no control character but newline and tab.
#![no_main]

use libfuzzer_sys::fuzz_target;
use study::spec::{parse_sizes, Repetition, SpecFile, MAX_PLANNED_RUNS, MAX_SIZES};

fn check_sizes(sizes: &[u32]) {
    assert!(!sizes.is_empty() && sizes.len() <= MAX_SIZES);
    assert!(sizes.iter().all(|&s| (1..=65_507).contains(&s)));
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(sizes) = parse_sizes(text) {
        check_sizes(&sizes);
    }
    let safe = wire::text::terminal_safe(text);
    assert!(!safe.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
    let Ok(file) = SpecFile::from_toml(text) else {
        return;
    };
    if let Ok(spec) = file.resolve(1) {
        check_sizes(&spec.sizes_bytes);
        let max_runs = match spec.repetition {
            Repetition::Fixed { runs } => runs,
            Repetition::Confidence { max_runs, .. } => max_runs,
        };
        let cells = (spec.families.len() * spec.tests.len() * spec.sizes_bytes.len()) as u64;
        assert!(cells * (u64::from(spec.warmup_runs) + u64::from(max_runs)) <= MAX_PLANNED_RUNS);
        let _ = spec.to_json();
    }
});
