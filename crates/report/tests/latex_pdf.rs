//! The LaTeX tables compile: every table of the fixture report goes through a real
//! `pdflatex` run (Debian's texlive-latex-base, -latex-recommended for booktabs,
//! -science for siunitx; `.ci/run` installs them), and `pdftotext` finds the numbers of
//! the means table in the PDF, and every label's characters: accented Latin and Greek
//! as they are, any other (CJK, Hebrew, Arabic, Cyrillic) as its code point.

use dualperf_report::{build, fixture, ReportOptions};
use std::process::Command;

/// Writes `report`'s LaTeX tables into `dir` and compiles `tables.tex` with pdflatex;
/// its log (the run must succeed) and the PDF's text (pdftotext).
fn compile(report: &dualperf_report::Report, dir: &std::path::Path) -> (String, String) {
    for f in report.files(false).unwrap() {
        if let Some(name) = f
            .name
            .strip_prefix("tables/")
            .filter(|n| n.ends_with(".tex"))
        {
            std::fs::write(dir.join(name), &f.bytes).unwrap();
        }
    }
    let out = Command::new("pdflatex")
        .args(["-interaction=nonstopmode", "-halt-on-error", "tables.tex"])
        .current_dir(dir)
        .output()
        .expect("pdflatex runs (apt-get install texlive-latex-base texlive-latex-recommended texlive-science)");
    let log = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "pdflatex failed:\n{log}");
    let text = Command::new("pdftotext")
        .args(["tables.pdf", "-"])
        .current_dir(dir)
        .output()
        .expect("pdftotext runs (apt-get install poppler-utils)");
    (log, String::from_utf8_lossy(&text.stdout).into_owned())
}

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
    let (log, text) = compile(&report, dir.path());
    assert!(
        !log.contains("Overfull \\hbox"),
        "a table is cut off:\n{log}"
    );
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

/// Labels that end the title comment at a carriage return or newline and then read a
/// file or open one for writing: compiled, the PDF holds neither the file's text nor
/// was the file written (pdflatex treats \r as a line end, as \n).
#[test]
fn hostile_labels_neither_read_nor_write_files_when_the_tables_compile() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.tex"), "SECRETTOKENFOURSEVEN").unwrap();
    let labels = [
        "x\r\\input{secret.tex}\r",
        "y\n\\input{secret.tex}\n",
        "z\r\\immediate\\openout1=pwned.tex\\closeout1\r",
        wire::text::HOSTILE_CORPUS[0],
        wire::text::HOSTILE_CORPUS[1],
        "% comment } { $ # _ ^ ~ \\ &",
        // A row starting with `[` or `*` after `\\` or `\midrule`: an optional length
        // or a starred form unless escaped.
        "[lab] Debian 12",
        "*starred",
    ];
    let report = build(&fixture::systems(&labels), &ReportOptions::default());
    let (log, text) = compile(&report, dir.path());
    // pdflatex logs each file it opens as "(./name".
    assert!(
        !log.contains("(./secret.tex"),
        "pdflatex read the file:\n{log}"
    );
    assert!(
        !dir.path().join("pwned.tex").exists(),
        "pdflatex wrote a file"
    );
    assert!(
        !text.contains("SECRETTOKENFOURSEVEN"),
        "the file's text is in the PDF"
    );
    // The labels are there, as text.
    assert!(text.contains("input{secret.tex}"), "{text}");
    assert!(text.contains("[lab] Debian 12"), "{text}");
    assert!(text.contains("*starred"), "{text}");
}

/// Compiles the fixture report's tables with `labels` as its systems; the PDF's text.
fn pdf_text_of(labels: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let report = build(&fixture::systems(labels), &ReportOptions::default());
    let (log, text) = compile(&report, dir.path());
    assert!(!log.contains("Missing character"), "{log}");
    text
}

/// "Débian Système" was "D?bian Syst?me" in the PDF and two CJK labels both "???": now
/// accented Latin and Greek are set as they are, and what the installed fonts lack
/// (CJK, right-to-left scripts, Cyrillic) reads as its code points, so no two labels
/// collapse.
#[test]
fn non_ascii_labels_keep_every_character_in_the_pdf() {
    // Four systems a report (the summary compares every pair, one column each).
    for (labels, want) in [
        (
            ["Débian Système", "中文", "日本", "עברית"],
            [
                "Débian Système",
                "<U+4E2D><U+6587>",
                "<U+65E5><U+672C>",
                "<U+05E2><U+05D1><U+05E8><U+05D9><U+05EA>",
            ],
        ),
        (
            ["Łódź Ørsted", "Ελληνικά", "العربية", "Русский"],
            [
                // Times sets ź as z with an accent above; pdftotext reads back both.
                "Łódz\u{301} Ørsted",
                "Ελληνικά",
                "<U+0627><U+0644><U+0639><U+0631><U+0628><U+064A><U+0629>",
                "<U+0420><U+0443><U+0441><U+0441><U+043A><U+0438><U+0439>",
            ],
        ),
    ] {
        let text = pdf_text_of(&labels);
        for w in want {
            assert!(text.contains(w), "{w} is not in the PDF:\n{text}");
        }
        assert!(!text.contains('?'), "a character became '?':\n{text}");
    }
}

/// Eight systems with long labels: the system-against-system summary has a row per
/// metric and pair (28 pairs), so every table still compiles and none is cut off.
#[test]
fn eight_systems_with_long_labels_compile() {
    let labels: Vec<String> = (1..=8)
        .map(|i| format!("Debian 13 trixie, kernel 6.12, Intel X710 10GbE, host number {i}"))
        .collect();
    let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let report = build(
        &fixture::systems(&refs),
        &ReportOptions {
            generator: "dualperf test".to_string(),
            ..ReportOptions::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let (log, text) = compile(&report, dir.path());
    assert!(
        !log.contains("Overfull \\hbox"),
        "a table is cut off:\n{log}"
    );
    assert!(
        text.contains("host number 8"),
        "the eighth system is in the PDF"
    );
}
