//! Print the report.html of the built-in synthetic dataset (two systems, four tests,
//! three sizes, time series of the runs a report draws): `cargo run -p dualperf-report --example fixture_report > report.html`.

fn main() {
    let options = dualperf_report::ReportOptions {
        link_rate_bps: Some(1e9),
        title: "dualperf report of the synthetic example dataset".to_string(),
        ..Default::default()
    };
    let report = dualperf_report::build(&dualperf_report::fixture::dataset_with_series(), &options);
    print!("{}", report.html);
}
