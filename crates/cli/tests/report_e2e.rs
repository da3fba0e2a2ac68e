//! End-to-end tests of `dualperf report` on a database written through the store API.

mod report_common;

use report_common::{dualperf, fixture_db};

#[test]
fn report_of_two_campaigns_writes_html_tables_and_figures() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("results.db");
    let ids = fixture_db(&db);
    let out = tmp.path().join("out");
    let status = dualperf()
        .args(["report", "--db"])
        .arg(&db)
        .arg("--campaign")
        .args(ids.iter().map(|i| i.to_string()))
        .arg("--out")
        .arg(&out)
        .args(["--link-rate", "1gbit"])
        .output()
        .expect("run dualperf report");
    assert!(
        status.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    for id in [
        "tcp-throughput",
        "udp-throughput",
        "tcp-rtt",
        "udp-rtt",
        "udp-jitter",
        "udp-loss",
        "tcp-cpu",
        "udp-cpu",
    ] {
        assert!(
            html.contains(&format!("id=\"fig-{id}\"")),
            "figure {id} missing"
        );
        assert!(
            out.join(format!("figures/{id}.svg")).is_file(),
            "{id}.svg missing"
        );
    }
    assert!(
        !html.contains("<link") && !html.contains("<script") && !html.contains("src="),
        "report.html must not fetch anything"
    );
    assert!(html.contains("Linux") && html.contains("Windows"));
    assert!(html.contains("linux-client"), "host metadata missing");
    // The database round trip is lossless: the tables equal those made from the dataset.
    let direct = report::build(
        &report::fixture::dataset(),
        &report::ReportOptions {
            link_rate_bps: Some(1e9),
            ..Default::default()
        },
    );
    for id in [
        "udp-throughput-means",
        "tcp-rtt-sd",
        "summary",
        "efficiency",
        "header-overhead",
    ] {
        let written =
            std::fs::read_to_string(out.join(format!("tables/{id}.md"))).expect("table file");
        let expected = direct
            .tables
            .iter()
            .find(|t| t.id == id)
            .map(|t| t.to_markdown());
        assert_eq!(
            Some(written),
            expected,
            "table {id} differs after the database round trip"
        );
        assert!(out.join(format!("tables/{id}.csv")).is_file());
    }
    let stdout = String::from_utf8_lossy(&status.stdout);
    assert!(
        stdout.contains("IPv4 TCP throughput was higher than IPv6"),
        "{stdout}"
    );
}

#[test]
fn format_markdown_prints_tables_and_writes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("results.db");
    fixture_db(&db);
    let out = dualperf()
        .current_dir(tmp.path())
        .args(["report", "--db", "results.db", "--format", "markdown"])
        .output()
        .expect("run dualperf report");
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("### Standard deviation of UDP throughput (Mbit/s)"),
        "{text}"
    );
    // Default = the latest campaign only: one system.
    assert!(
        text.contains("| Windows |") && !text.contains("| Linux |"),
        "{text}"
    );
    assert!(!tmp.path().join("dualperf-report").exists());
}

#[test]
fn missing_database_and_unknown_campaign_are_clear_errors() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = dualperf()
        .args(["report", "--db"])
        .arg(tmp.path().join("nope.db"))
        .output()
        .expect("run dualperf report");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no results database at"), "{err}");

    let db = tmp.path().join("results.db");
    fixture_db(&db);
    let out = dualperf()
        .args(["report", "--format", "text", "--campaign", "99", "--db"])
        .arg(&db)
        .output()
        .expect("run dualperf report");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no campaign 99") && err.contains("1, 2"),
        "{err}"
    );

    let out = dualperf()
        .args(["report", "--format", "text", "--link-rate", "fast", "--db"])
        .arg(&db)
        .output()
        .expect("run dualperf report");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read link rate"));
}
