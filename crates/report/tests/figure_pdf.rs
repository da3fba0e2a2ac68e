//! Every figure as a PDF for papers: a real one-page PDF per figure, whose fonts
//! `pdffonts` lists as embedded, and whose axis titles `pdftotext` reads back (the text
//! stays text). Needs poppler-utils and DejaVu Sans (`.ci/run` installs both).
#![cfg(feature = "pdf")]

use dualperf_report::{build, fixture, ReportOptions};
use std::process::Command;

#[test]
fn every_figure_is_a_pdf_with_its_fonts_embedded_and_its_text_readable() {
    let report = build(&fixture::dataset_with_series(), &ReportOptions::default());
    let pdfs = report.pdf_files().expect("PDF figures");
    assert_eq!(pdfs.len(), report.figures.len());
    assert!(
        report.figures.iter().any(|f| f.id.ends_with("-timeseries")),
        "no time-series figure to check"
    );
    assert!(
        report.figures.iter().any(|f| f.id.contains("-windows-")),
        "no per-window figure to check"
    );
    assert!(
        report.figures.iter().any(|f| f.id.contains("-rtt-cdf-")),
        "no rrul CDF to check"
    );
    let dir = tempfile::tempdir().unwrap();
    for (f, fig) in pdfs.iter().zip(&report.figures) {
        assert_eq!(f.name, format!("figures/{}.pdf", fig.id));
        assert!(f.bytes.starts_with(b"%PDF-"), "{} is not a PDF", f.name);
        let path = dir.path().join(format!("{}.pdf", fig.id));
        std::fs::write(&path, &f.bytes).unwrap();

        let fonts = Command::new("pdffonts")
            .arg(&path)
            .output()
            .expect("pdffonts runs (apt-get install poppler-utils)");
        assert!(fonts.status.success(), "pdffonts rejects {}", f.name);
        let fonts = String::from_utf8_lossy(&fonts.stdout);
        // name type encoding emb sub uni object ID: two header lines, then one per font.
        let rows: Vec<&str> = fonts.lines().skip(2).collect();
        assert!(!rows.is_empty(), "{}: no font at all\n{fonts}", f.name);
        for row in &rows {
            let cols: Vec<&str> = row.split_whitespace().collect();
            let n = cols.len();
            assert!(
                n >= 7 && cols[n - 5] == "yes",
                "{}: a font is not embedded\n{fonts}",
                f.name
            );
        }
        assert!(
            fonts.contains("DejaVuSans"),
            "{}: not in DejaVu Sans\n{fonts}",
            f.name
        );

        let text = Command::new("pdftotext")
            .arg(&path)
            .arg("-")
            .output()
            .expect("pdftotext runs (apt-get install poppler-utils)");
        let text = String::from_utf8_lossy(&text.stdout);
        let axis = if fig.id.ends_with("-timeseries") {
            "Time since"
        } else if fig.id.contains("-windows-") {
            "Send time since"
        } else if fig.id.contains("-rtt-cdf-") {
            "RTT (ms)"
        } else if fig.id.contains("under-load") {
            "Load: bytes per write of its TCP streams"
        } else {
            "Packet size: payload per send (bytes)"
        };
        assert!(
            text.contains(axis),
            "{}: '{axis}' not found in\n{text}",
            f.name
        );
    }
}
