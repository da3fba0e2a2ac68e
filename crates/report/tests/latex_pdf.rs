//! The LaTeX tables compile: every table of the fixture report goes through a real
//! `pdflatex` run (Debian's texlive-latex-base, -latex-recommended for booktabs,
//! -science for siunitx; `.ci/run` installs them), and `pdftotext` finds the numbers of
//! the means table in the PDF.

use dualperf_report::{build, fixture, ReportOptions};
use std::process::Command;

#[test]
fn every_latex_table_compiles_with_pdflatex_and_its_numbers_are_in_the_pdf() {
    let report = build(
        &fixture::dataset(),
        &ReportOptions {
            link_rate_bps: Some(1e9),
            generator: "dualperf test".to_string(),
            ..ReportOptions::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    for f in report.files(false).unwrap() {
        if let Some(name) = f
            .name
            .strip_prefix("tables/")
            .filter(|n| n.ends_with(".tex"))
        {
            std::fs::write(dir.path().join(name), &f.bytes).unwrap();
        }
    }
    let out = Command::new("pdflatex")
        .args(["-interaction=nonstopmode", "-halt-on-error", "tables.tex"])
        .current_dir(dir.path())
        .output()
        .expect("pdflatex runs (apt-get install texlive-latex-base texlive-latex-recommended texlive-science)");
    let log = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "pdflatex failed:\n{log}");
    assert!(
        !log.contains("Overfull \\hbox"),
        "a table is cut off:\n{log}"
    );
    let text = Command::new("pdftotext")
        .args(["tables.pdf", "-"])
        .current_dir(dir.path())
        .output()
        .expect("pdftotext runs (apt-get install poppler-utils)");
    let text = String::from_utf8_lossy(&text.stdout);
    let means = report
        .tables
        .iter()
        .find(|t| t.id == "udp-throughput-means")
        .unwrap();
    let mut checked = 0;
    for row in &means.rows {
        for cell in row.iter().skip(1) {
            if let dualperf_report::Cell::Num { text: t, .. } = cell {
                assert!(text.contains(t.as_str()), "{t} missing from the PDF");
                checked += 1;
            }
        }
    }
    assert!(checked >= 4, "only {checked} numbers checked");
    let captions = text.matches("Table ").count();
    assert!(
        captions >= report.tables.len(),
        "{captions} captions for {} tables",
        report.tables.len()
    );
}
