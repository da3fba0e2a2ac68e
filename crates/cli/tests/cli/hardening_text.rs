//! Issue 11.7: text from a database or a peer reaches the terminal without control
//! characters ("\x1b[2J" would clear the screen): `show`, `report --format
//! markdown|text`, and errors quoting a peer. Every label of the hostile corpus
//! (`wire::text::HOSTILE_CORPUS`) through `report --format text|markdown|latex`, `show`
//! and `export` (spreadsheet formulas neutralised unless `--raw-text`), and a megabyte
//! label through a whole report with its figures.

use crate::support::study::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use wire::proto::{encode_frame, ErrorCode, FrameDecoder, Msg, PROTOCOL_VERSION};

const EVIL: &str = "evil\x1b[2J\x1b]0;owned\x07\u{9b}label";

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{what} printed a control character: {text:?}"
    );
}

#[test]
fn a_label_with_escape_sequences_is_refused_at_entry_and_an_old_one_prints_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db").display().to_string();
    let o = run(
        &[
            "study",
            "--tests",
            "tcp-stream",
            "--sizes",
            "128",
            "--runs",
            "2",
            "--label",
            EVIL,
            "--db",
            &db,
        ],
        true,
    );
    // Where text enters (issue 28): refused, naming the character; nothing stored.
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("label contains the control character U+001B"),
        "{}",
        text(&o)
    );
    assert!(
        !dir.path().join("t.db").exists() || recorded_runs(dir.path().join("t.db").as_path()) == 0
    );
    // A database written before the check (or by hand) still holds such labels: they
    // reach the terminal without their controls.
    let path = dir.path().join("old.db");
    crate::support::fixture::dataset_db(&path, &report::fixture::systems(&[EVIL]));
    let db = path.display().to_string();
    for args in [
        vec!["show", "--db", &db],
        vec!["show", "--db", &db, "1"],
        vec!["report", "--db", &db, "--format", "markdown"],
        vec!["report", "--db", &db, "--format", "text"],
    ] {
        let o = run(&args, false);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        assert_clean(&format!("{args:?}"), &o.stdout);
        assert_clean(&format!("{args:?} stderr"), &o.stderr);
        // The words survive; only the controls go.
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("evil[2J]0;owned"),
            "{args:?}: {}",
            text(&o)
        );
    }
}

#[test]
fn an_error_message_from_a_peer_is_printed_without_controls() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let peer = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
        let mut buf = [0u8; 4096];
        while dec.next_msg().ok().flatten().is_none() {
            let n = s.read(&mut buf).unwrap();
            dec.push(&buf[..n]);
        }
        let reply = Msg::Error {
            code: ErrorCode::BadRequest,
            message: EVIL.to_string(),
        };
        s.write_all(&encode_frame(&reply, PROTOCOL_VERSION))
            .unwrap();
    });
    let o = run(
        &[
            "run",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--duration",
            "1",
        ],
        false,
    );
    peer.join().unwrap();
    assert!(!o.status.success());
    assert_clean("run stderr", &o.stderr);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("evil[2J"),
        "{}",
        text(&o)
    );
}

/// The hostile corpus as the labels of a database's campaigns (the fixture's runs), as an
/// old database or an import may hold them, and a plain campaign last.
fn corpus_db(dir: &std::path::Path) -> (String, Vec<i64>) {
    let labels: Vec<String> = wire::text::HOSTILE_CORPUS
        .iter()
        .map(|s| s.to_string())
        .chain([wire::text::hostile_long(10_000), "Plain".to_string()])
        .collect();
    let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let path = dir.join("corpus.db");
    let ids = crate::support::fixture::dataset_db(&path, &report::fixture::systems(&refs));
    (path.display().to_string(), ids)
}

#[test]
fn every_corpus_label_is_printed_by_report_and_show_without_controls() {
    let dir = tempfile::tempdir().unwrap();
    let (db, ids) = corpus_db(dir.path());
    let o = run(&["show", "--db", &db], false);
    assert!(o.status.success(), "{}", text(&o));
    assert_clean("show", &o.stdout);
    // Five labels and the plain campaign per report.
    let plain = ids.last().copied().unwrap_or_default().to_string();
    for chunk in ids[..ids.len() - 1].chunks(5) {
        let mut campaigns: Vec<String> = chunk.iter().map(i64::to_string).collect();
        campaigns.push(plain.clone());
        for format in ["text", "markdown", "latex"] {
            let mut args = vec!["report", "--db", &db, "--format", format, "--campaign"];
            args.extend(campaigns.iter().map(String::as_str));
            let o = run(&args, false);
            assert!(o.status.success(), "{args:?}: {}", text(&o));
            assert_clean(&format!("{args:?}"), &o.stdout);
            assert_clean(&format!("{args:?} stderr"), &o.stderr);
        }
    }
}

/// The rows of `dualperf export` as CSV records, the header checked.
fn export_records(db: &str, raw: bool) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut args = vec!["export", "--db", db];
    if raw {
        args.push("--raw-text");
    }
    let o = run(&args, false);
    assert!(o.status.success(), "{}", text(&o));
    let mut rd = csv::ReaderBuilder::new().from_reader(o.stdout.as_slice());
    let header: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
    let rows: Vec<csv::StringRecord> = rd
        .records()
        .collect::<Result<_, _>>()
        .expect("the export parses as CSV");
    for r in &rows {
        assert_eq!(r.len(), header.len(), "{r:?}");
    }
    (header, rows)
}

#[test]
fn export_neutralises_spreadsheet_formulas_unless_raw_text_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let (db, _) = corpus_db(dir.path());
    let (header, rows) = export_records(&db, false);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (label, value) = (col("campaign_label"), col("value"));
    assert!(!rows.is_empty());
    let mut seen = std::collections::BTreeSet::new();
    for r in &rows {
        for field in r.iter() {
            let number = field.parse::<f64>().is_ok_and(f64::is_finite);
            assert!(
                number || !field.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "live formula {field:?} in {r:?}"
            );
            assert!(
                !field
                    .chars()
                    .any(|c| c.is_control() && c != '\n' && c != '\t'),
                "{field:?}"
            );
        }
        // Numbers stay numbers.
        assert!(
            r[value].is_empty() || r[value].parse::<f64>().is_ok(),
            "{r:?}"
        );
        seen.insert(r[label].to_string());
    }
    for neutralised in [
        "'=HYPERLINK(\"http://x\")",
        "'+1+1",
        "'-2+3",
        "'@SUM(A1)",
        "'\t=cmd",
        "'=cmd",
    ] {
        assert!(
            seen.contains(neutralised),
            "{neutralised:?} not in {seen:?}"
        );
    }
    // --raw-text: the labels exactly as stored.
    let (_, raw_rows) = export_records(&db, true);
    assert_eq!(raw_rows.len(), rows.len());
    let raw: std::collections::BTreeSet<String> =
        raw_rows.iter().map(|r| r[label].to_string()).collect();
    for stored in [
        "=HYPERLINK(\"http://x\")",
        "+1+1",
        "-2+3",
        "@SUM(A1)",
        "\t=cmd",
        "\r=cmd",
    ] {
        assert!(raw.contains(stored), "{stored:?} not in {raw:?}");
    }
}

#[test]
fn a_megabyte_label_makes_a_report_with_figures_of_normal_size() {
    let dir = tempfile::tempdir().unwrap();
    let long = wire::text::hostile_long(1_000_000);
    let db = dir.path().join("long.db");
    let ids =
        crate::support::fixture::dataset_db(&db, &report::fixture::systems(&[&long, "Plain"]));
    let out = dir.path().join("out");
    let db = db.display().to_string();
    let (a, b) = (ids[0].to_string(), ids[1].to_string());
    let o = run(
        &[
            "report",
            "--db",
            &db,
            "--campaign",
            &a,
            &b,
            "--out",
            &out.display().to_string(),
            "--no-pdf",
            "--timeseries",
            "none",
        ],
        false,
    );
    assert!(o.status.success(), "{}", text(&o));
    let mut figures = 0;
    for e in std::fs::read_dir(out.join("figures")).unwrap() {
        let p = e.unwrap().path();
        let len = std::fs::metadata(&p).unwrap().len();
        let limit = if p.extension().is_some_and(|x| x == "png") {
            1_000_000
        } else {
            200_000
        };
        println!("{}: {len} bytes", p.display());
        assert!(len <= limit, "{}: {len} bytes", p.display());
        figures += 1;
    }
    assert!(figures >= 10, "{figures} figure files");
}
