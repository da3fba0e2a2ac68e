//! End-to-end tests of `dualperf report` on a database written through the store API.

use crate::support::fixture::{dualperf, fixture_db};

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
        .args(["--link-rate", "1gbit", "--findings"])
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
        "tcp-host-cpu-busy",
        "udp-host-cpu-busy",
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
        stdout.contains("IPv4 TCP throughput was significantly higher than IPv6"),
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
    // Read by the one quantity grammar while parsing the flags: a usage error (2).
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'fast' is not a rate") && err.contains("100mbit"),
        "{err}"
    );
}

/// A database made by `dualperf study` itself (embedded loopback server, short runs):
/// the report reads it and makes the figures its tests call for, the time series of its
/// runs from the interval samples the engine recorded, and each figure as a PDF.
#[test]
fn report_of_a_study_made_by_the_binary() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("study.db");
    let study = dualperf()
        .current_dir(tmp.path())
        .args([
            "study",
            "--tests",
            "udp-stream,tcp-rr",
            "--sizes",
            "128,1408",
            "--duration",
            "0.6",
            "--runs",
            "2",
            "--rate",
            "10M",
            "--interval",
            "0.05",
            "--label",
            "loopback",
            "-q",
            "--db",
        ])
        .arg(&db)
        .output()
        .expect("run dualperf study");
    assert!(
        study.status.success(),
        "study failed: {}",
        String::from_utf8_lossy(&study.stderr)
    );
    let out = tmp.path().join("out");
    let made = dualperf()
        .args(["report", "--no-png", "--link", "loopback", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run dualperf report");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let html = std::fs::read_to_string(out.join("report.html")).expect("report.html");
    for id in ["udp-throughput", "tcp-rtt", "udp-loss"] {
        assert!(
            html.contains(&format!("id=\"fig-{id}\"")),
            "figure {id} missing"
        );
    }
    for id in ["udp-stream-128-timeseries", "tcp-rr-1408-timeseries"] {
        let svg = std::fs::read_to_string(out.join(format!("figures/{id}.svg")))
            .unwrap_or_else(|e| panic!("{id}.svg: {e}"));
        // IPv4 and IPv6, each a line of 50 ms windows (a run of fewer than 3 samples is
        // not drawn over time; 0.6 s runs have about 12, so a loaded host that merges
        // windows still leaves enough).
        assert_eq!(svg.matches("<g class=\"series\"").count(), 2, "{id}");
        assert!(svg.matches(" H").count() >= 4, "{id}: too few steps");
        let pdf = std::fs::read(out.join(format!("figures/{id}.pdf"))).unwrap_or_default();
        assert!(pdf.starts_with(b"%PDF-"), "{id}.pdf");
    }
    let means = std::fs::read_to_string(out.join("tables/udp-throughput-means.csv")).expect("csv");
    let row = means.lines().nth(1).unwrap_or_default();
    assert!(row.starts_with("loopback,"), "{means}");
    // The report's IPv4 mean (over the sizes: the mean of each size's mean) is what the
    // stored runs give, whatever the load made of them: read them back through `export`.
    let v4: f64 = row
        .split(',')
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN);
    let csv = tmp.path().join("runs.csv");
    let exported = dualperf()
        .args(["export", "--format", "csv", "-o"])
        .arg(&csv)
        .arg("--db")
        .arg(&db)
        .output()
        .expect("run dualperf export");
    assert!(exported.status.success(), "{exported:?}");
    let text = std::fs::read_to_string(&csv).expect("runs.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let (fam, test, size, metric, value) = (
        col("family"),
        col("test"),
        col("payload_bytes"),
        col("metric"),
        col("value"),
    );
    // The label is the only quoted field here and holds no comma.
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let size_means: Vec<f64> = ["128", "1408"]
        .iter()
        .map(|z| {
            let v: Vec<f64> = rows
                .iter()
                .filter(|f| {
                    f[fam] == "4"
                        && f[test] == "udp-stream"
                        && f[size] == *z
                        && f[metric] == "throughput_bps"
                })
                .filter_map(|f| f[value].parse::<f64>().ok())
                .collect();
            assert!(!v.is_empty(), "no IPv4 udp-stream run at {z} B: {text}");
            v.iter().sum::<f64>() / v.len() as f64
        })
        .collect();
    let mean_mbit = size_means.iter().sum::<f64>() / size_means.len() as f64 / 1e6;
    assert!(
        (v4 - mean_mbit).abs() <= 1e-6 * mean_mbit,
        "IPv4 mean {v4} Mbit/s in the report, {mean_mbit} from the stored runs"
    );
}

/// Issue 29: the independent re-computation can be repeated. A study of two systems
/// (fake executor: no traffic), its report written, then `benches/recompute_report.py`
/// recomputes every IPv4-vs-IPv6 and system-vs-system number from the database with
/// SciPy; any mismatch fails. CI installs python3-scipy; elsewhere, without it, the test
/// says so and checks nothing.
#[test]
fn scipy_recomputes_the_reports_comparisons_from_the_database() {
    // Debian's python3-scipy is for /usr/bin/python3; a python3 earlier on PATH (pyenv)
    // may have its own.
    let python = ["/usr/bin/python3", "python3"].into_iter().find(|p| {
        std::process::Command::new(p)
            .args(["-c", "import scipy, numpy"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(python) = python else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have python3-scipy (.ci/run installs it)"
        );
        eprintln!("skipped: python3 with scipy and numpy is not installed");
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("r.db");
    for (label, runs) in [("A", "5"), ("B", "6")] {
        let o = dualperf()
            .env("DUALPERF_STUDY_FAKE", "1")
            .args([
                "study",
                "-q",
                "--sizes",
                "128,1408",
                "--duration",
                "0.01",
                "--runs",
                runs,
                "--label",
                label,
                "--db",
            ])
            .arg(&db)
            .output()
            .expect("run dualperf study");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let out = tmp.path().join("out");
    for base in ["second", "first"] {
        let o = dualperf()
            .args([
                "report",
                "--no-png",
                "--no-pdf",
                "--campaign",
                "1",
                "2",
                "--percent-of",
                base,
                "--db",
            ])
            .arg(&db)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("run dualperf report");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../benches/recompute_report.py"
        );
        let o = std::process::Command::new(python)
            .arg(script)
            .arg(&db)
            .arg(&out)
            .output()
            .expect("run the recompute script");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{base}: {text}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let checked: usize = text
            .split(" numbers checked")
            .next()
            .and_then(|n| n.trim().rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(checked > 200, "{base}: {text}");
        // The Summary's magnitudes and the Hodges-Lehmann intervals are checked too.
        let count = |after: &str| -> usize {
            text.split(after)
                .next()
                .and_then(|n| n.trim().rsplit(char::is_whitespace).next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        assert!(
            count(" of them in the Summary tables") >= 10,
            "{base}: {text}"
        );
        assert!(
            count(" Hodges-Lehmann interval bounds") >= 8,
            "{base}: {text}"
        );
    }
}

#[test]
fn a_report_of_several_campaigns_says_which_it_chose_and_prints_findings_only_when_asked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = tmp.path().join("results.db");
    let ids = fixture_db(&db);
    assert!(ids.len() > 1);
    let latest = ids.iter().max().unwrap().to_string();
    let report = |extra: &[&str]| {
        dualperf()
            .args(["report", "--no-png", "--no-pdf", "--db"])
            .arg(&db)
            .arg("--out")
            .arg(tmp.path().join("out"))
            .args(extra)
            .output()
            .expect("run dualperf report")
    };
    let o = report(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        err.contains(&format!(
            "holds {} campaigns; reporting the latest, {latest}",
            ids.len()
        )) && err.contains("Choose with --campaign ID"),
        "{err}"
    );
    // The HTML report holds the findings; the terminal gets where it is and how many.
    assert!(!out.lines().any(|l| l.starts_with("- ")), "{out}");
    assert!(err.contains("findings; --findings prints them"), "{err}");
    let o = report(&["--findings", "--campaign", &latest]);
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.lines().any(|l| l.starts_with("- ")), "{out}");
    assert!(
        !err.contains("holds"),
        "a chosen campaign needs no note: {err}"
    );
}
