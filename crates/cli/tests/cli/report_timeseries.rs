//! `dualperf report` time series and PDF figures, end to end on a database written
//! through the store API (every run with ten 1 s interval samples): the default picks,
//! `--timeseries` narrowing and run ids, its errors, and `--no-pdf`.

use crate::support::fixture::{dualperf, fixture_db};
use std::path::Path;
use std::process::Output;

fn report(db: &Path, out: &Path, extra: &[&str]) -> Output {
    dualperf()
        .args(["report", "--no-png", "--db"])
        .arg(db)
        .args(["--campaign", "1", "2", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .expect("run dualperf report")
}

fn timeseries_files(out: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join("figures"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains("-timeseries."))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn default_report_draws_each_tests_smallest_and_largest_size_as_svg_and_pdf() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("results.db");
    fixture_db(&db);
    let out = tmp.path().join("out");
    let made = report(&db, &out, &[]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let files = timeseries_files(&out);
    for test in ["tcp-stream", "udp-stream", "tcp-rr", "udp-rr"] {
        for size in [128, 1408] {
            for ext in ["svg", "pdf"] {
                let name = format!("{test}-{size}-timeseries.{ext}");
                assert!(files.contains(&name), "{name} missing: {files:?}");
            }
        }
    }
    // rrul: the probes' RTT and each direction's load over time.
    for trace in ["rtt-tcp", "rtt-udp", "upload", "download"] {
        for size in [128, 1408] {
            for ext in ["svg", "pdf"] {
                let name = format!("rrul-{size}-{trace}-timeseries.{ext}");
                assert!(files.contains(&name), "{name} missing: {files:?}");
            }
        }
    }
    assert_eq!(files.len(), 16 + 16, "{files:?}");
    let pdf = std::fs::read(out.join("figures/tcp-throughput.pdf")).expect("a view's PDF");
    assert!(pdf.starts_with(b"%PDF-"));
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(html.contains("id=\"over-time\""), "no Over time section");
    assert!(html.contains("id=\"fig-udp-rr-1408-timeseries\""));
    assert!(
        html.contains("id=\"under-load\""),
        "no Latency under load section"
    );
    assert!(html.contains("id=\"fig-rrul-1408-rtt-cdf-tcp\""));
    // Both systems, both IP versions, each with its run id.
    let svg =
        std::fs::read_to_string(out.join("figures/tcp-stream-128-timeseries.svg")).expect("svg");
    for who in [
        "Linux IPv4 · run ",
        "Linux IPv6 · run ",
        "Windows IPv4 · run ",
        "Windows IPv6 · run ",
    ] {
        assert!(svg.contains(who), "{who} missing");
    }
}

#[test]
fn timeseries_option_narrows_draws_asked_runs_and_none_draws_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("results.db");
    let ids = fixture_db(&db);

    let out = tmp.path().join("narrow");
    let made = report(&db, &out, &["--timeseries", "tcp-stream,640", "--no-pdf"]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    assert_eq!(
        timeseries_files(&out),
        vec!["tcp-stream-640-timeseries.svg"]
    );
    assert!(!out.join("figures/tcp-throughput.pdf").exists(), "--no-pdf");

    // A run given by id is drawn in its cell (here the slowest IPv4 UDP run at 640 bytes
    // of the second campaign, not its cell's median).
    let store = store::Store::open_read_only(&db).expect("open");
    let runs = store.runs(ids[1]).expect("runs");
    let run = runs
        .iter()
        .filter(|r| {
            r.status.is_ok()
                && !r.warmup
                && r.kind == wire::spec::TestKind::UdpStream
                && r.payload_bytes == 640
                && r.family == wire::spec::Family::V4
        })
        .min_by(|a, b| {
            let t = |r: &store::RunRecord| r.metrics[wire::metrics::THROUGHPUT_BPS];
            t(a).total_cmp(&t(b))
        })
        .expect("a run");
    let out = tmp.path().join("run");
    let arg = format!("run:{}", run.id);
    let made = report(&db, &out, &["--timeseries", &arg, "--no-pdf"]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    assert_eq!(
        timeseries_files(&out),
        vec!["udp-stream-640-timeseries.svg"]
    );
    let svg =
        std::fs::read_to_string(out.join("figures/udp-stream-640-timeseries.svg")).expect("svg");
    assert!(
        svg.contains(&format!("Windows IPv4 · run {}<", run.id)),
        "run {} not drawn",
        run.id
    );
    assert!(svg.contains("Linux IPv6 · run "), "the other lines stay");

    let out = tmp.path().join("none");
    let made = report(&db, &out, &["--timeseries", "none", "--no-pdf"]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    assert!(timeseries_files(&out).is_empty());
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    assert!(!html.contains("id=\"over-time\""));
}

#[test]
fn timeseries_errors_say_what_was_expected() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("results.db");
    fixture_db(&db);
    let out = tmp.path().join("out");
    for (arg, expect) in [
        (
            "run:999999",
            "no run 999999 in the reported campaign(s) 1, 2",
        ),
        ("run:x", "a run id is a number"),
        ("bogus", "expected auto, all, none, a test"),
        ("none,128", "cannot be combined"),
    ] {
        let made = report(&db, &out, &["--timeseries", arg]);
        let err = String::from_utf8_lossy(&made.stderr);
        assert_eq!(made.status.code(), Some(1), "{arg}: {err}");
        assert!(err.contains(expect), "{arg}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}
