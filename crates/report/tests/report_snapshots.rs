//! Snapshot tests of every table, the findings and one figure made from the fixed
//! synthetic dataset (`report::fixture`). Update with `INSTA_UPDATE=always cargo test`
//! after checking the differences by eye.

use dualperf_report::{build, fixture, ReportOptions};

fn options() -> ReportOptions {
    ReportOptions {
        link_rate_bps: Some(1e9),
        generator: "dualperf test".to_string(),
        ..ReportOptions::default()
    }
}

#[test]
fn every_table_in_markdown_matches_its_snapshot() {
    let report = build(&fixture::dataset(), &options());
    assert!(
        report.tables.len() > 20,
        "only {} tables",
        report.tables.len()
    );
    for table in &report.tables {
        insta::assert_snapshot!(format!("table-{}", table.id), table.to_markdown());
    }
}

#[test]
fn csv_of_the_means_table_matches_its_snapshot() {
    let report = build(&fixture::dataset(), &options());
    let t = report
        .tables
        .iter()
        .find(|t| t.id == "udp-throughput-means");
    let csv = t.map(|t| t.to_csv()).unwrap_or_default();
    insta::assert_snapshot!("csv-udp-throughput-means", csv);
}

#[test]
fn findings_match_their_snapshot() {
    let report = build(&fixture::dataset(), &options());
    insta::assert_snapshot!("findings", report.findings_markdown());
}

#[test]
fn tcp_throughput_figure_matches_its_snapshot() {
    let report = build(&fixture::dataset(), &options());
    let fig = report.figures.iter().find(|f| f.id == "tcp-throughput");
    insta::assert_snapshot!(
        "figure-tcp-throughput",
        fig.map(|f| f.svg.clone()).unwrap_or_default()
    );
}

#[test]
fn text_rendering_matches_its_snapshot() {
    let report = build(&fixture::dataset(), &options());
    let t = report.tables.iter().find(|t| t.id == "summary");
    insta::assert_snapshot!("text-summary", t.map(|t| t.to_text()).unwrap_or_default());
}

#[test]
fn latex_of_the_means_table_matches_its_snapshot() {
    let report = build(&fixture::dataset(), &options());
    let t = report
        .tables
        .iter()
        .find(|t| t.id == "udp-throughput-means")
        .expect("udp-throughput-means");
    insta::assert_snapshot!(
        "latex-udp-throughput-means",
        dualperf_report::latex::table(t, &report.analysis.systems.join(" vs "))
    );
}

#[test]
fn time_series_figure_matches_its_snapshot() {
    let report = build(&fixture::dataset_with_series(), &options());
    let fig = report
        .figures
        .iter()
        .find(|f| f.id == "tcp-stream-1408-timeseries");
    insta::assert_snapshot!(
        "figure-tcp-stream-1408-timeseries",
        fig.map(|f| f.svg.clone()).unwrap_or_default()
    );
}

/// Which figures a report with interval samples has, in order: each view's, an RTT
/// view's percentiles, then one time series per test at its smallest and largest size.
#[test]
fn figure_list_matches_its_snapshot() {
    let report = build(&fixture::dataset_with_series(), &options());
    let list: Vec<String> = report
        .figures
        .iter()
        .map(|f| format!("{}: {}", f.id, f.title))
        .collect();
    insta::assert_snapshot!("figure-list", list.join("\n"));
}
