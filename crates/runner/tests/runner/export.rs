//! Export of a fake campaign: one row per run and metric, warm-ups and failed attempts
//! only when asked, text made safe for spreadsheets unless raw, JSON that reads back,
//! interval samples, and the errors (a campaign that is not there, a writer that fails).

use crate::support::{self, Db, Seen};
use runner::export::{export, ExportError, ExportOptions};
use runner::Target;
use study::fake::{plausible_metrics, FakeExecutor};

/// A finished campaign of 2 cells x (1 warm-up + 2 runs), each run's first attempt
/// failing, labelled with a formula; its id and the metrics a run stores.
fn campaign(db: &Db) -> (i64, usize) {
    let spec = support::spec(
        "tests=['tcp-rr']\nsizes=[128]\nruns=2\nwarmup=1\nretries=1\nlabel='=HYPERLINK(1)'\n",
    );
    let exec = FakeExecutor::new(|cell, slot, attempt| {
        if attempt == 0 {
            Err("=reset".into())
        } else {
            Ok(plausible_metrics(cell, slot))
        }
    });
    let mut target = Target::Fake(exec, false);
    let c = support::create(db, &spec, &target);
    let id = c.id;
    let ran = support::run(c, &mut target, Seen::default());
    assert_eq!(support::failed_cells(&ran.end), 0);
    let runs = ran.store.runs(id).unwrap();
    let per_run = runs
        .iter()
        .find(|r| r.status.is_ok())
        .unwrap()
        .metrics
        .len();
    assert!(per_run > 0);
    (id, per_run)
}

fn csv(db: &Db, opts: &ExportOptions) -> (Vec<csv_line::Line>, usize) {
    let mut out = Vec::new();
    let n = export(&db.open(), opts, &mut out).expect("the export is written");
    let text = String::from_utf8(out).expect("UTF-8 CSV");
    (csv_line::parse(&text), n.rows)
}

/// The export's CSV read back with its header.
mod csv_line {
    pub struct Line(pub std::collections::BTreeMap<String, String>);

    pub fn parse(text: &str) -> Vec<Line> {
        let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
        let header = r.headers().expect("a header").clone();
        r.records()
            .map(|rec| {
                let rec = rec.expect("a CSV record");
                Line(
                    header
                        .iter()
                        .zip(rec.iter())
                        .map(|(h, v)| (h.to_string(), v.to_string()))
                        .collect(),
                )
            })
            .collect()
    }
}

#[test]
fn the_csv_has_one_row_per_measured_run_and_metric_and_safe_text() {
    let db = Db::new();
    let (id, per_run) = campaign(&db);
    let (lines, rows) = csv(&db, &ExportOptions::default());
    // 2 cells x 2 measured runs; no warm-ups, no failed attempts by default.
    assert_eq!(rows, 4 * per_run);
    assert_eq!(lines.len(), rows);
    for Line(l) in &lines {
        assert_eq!(l["campaign_id"], id.to_string());
        assert_eq!(l["status"], "ok");
        assert_eq!(l["warmup"], "false");
        assert_eq!(l["test"], "tcp-rr");
        // A cell that starts with = is not run as a formula by a spreadsheet.
        assert_eq!(l["campaign_label"], "'=HYPERLINK(1)");
        assert!(!l["metric"].is_empty() && l["value"].parse::<f64>().is_ok());
    }
    let raw = ExportOptions {
        raw_text: true,
        ..ExportOptions::default()
    };
    let (lines, _) = csv(&db, &raw);
    assert_eq!(lines[0].0["campaign_label"], "=HYPERLINK(1)");
}

use csv_line::Line;

#[test]
fn warm_ups_and_failed_attempts_are_exported_when_asked() {
    let db = Db::new();
    let (_, per_run) = campaign(&db);
    let all = ExportOptions {
        include_warmup: true,
        include_failed: true,
        ..ExportOptions::default()
    };
    let (lines, rows) = csv(&db, &all);
    // 2 cells x 3 slots: a failed attempt (one row, no metric) and a retry that ran.
    assert_eq!(rows, 6 * per_run + 6);
    let failed: Vec<_> = lines.iter().filter(|l| l.0["status"] == "failed").collect();
    assert_eq!(failed.len(), 6);
    for Line(l) in failed {
        assert_eq!(l["metric"], "");
        assert_eq!(l["failure_reason"], "'=reset");
    }
    assert_eq!(
        lines.iter().filter(|l| l.0["warmup"] == "true").count(),
        2 * per_run + 2
    );
}

#[test]
fn json_reads_back_as_the_same_rows_and_intervals_are_their_own_export() {
    let db = Db::new();
    let (_, per_run) = campaign(&db);
    let mut out = Vec::new();
    let opts = ExportOptions {
        json: true,
        ..ExportOptions::default()
    };
    let n = export(&db.open(), &opts, &mut out).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out).expect("valid JSON");
    let rows = doc.as_array().expect("an array of rows");
    assert_eq!(rows.len(), n.rows);
    assert_eq!(rows.len(), 4 * per_run);
    assert_eq!(
        rows[0]["campaign_label"], "=HYPERLINK(1)",
        "JSON keeps text"
    );

    // The fake stores one interval sample per run, holding the run's metrics.
    let intervals = ExportOptions {
        intervals: true,
        ..ExportOptions::default()
    };
    let (lines, rows) = csv(&db, &intervals);
    assert_eq!(rows, 4 * per_run);
    assert!(lines.iter().all(|l| l.0["interval_index"] == "0"));
    assert!(lines.iter().all(|l| !l.0.contains_key("status")));
}

#[test]
fn a_missing_campaign_and_a_failing_writer_are_errors() {
    let db = Db::new();
    let (id, _) = campaign(&db);
    let opts = ExportOptions {
        campaigns: vec![id, id + 100],
        ..ExportOptions::default()
    };
    match export(&db.open(), &opts, Vec::new()) {
        Err(ExportError::NoCampaign(missing)) => assert_eq!(missing, id + 100),
        other => panic!("expected NoCampaign: {other:?}"),
    }

    /// A reader that went away after the first bytes (`dualperf export | head -c 10`).
    struct Closed(usize);
    impl std::io::Write for Closed {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.0);
            self.0 -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    for json in [false, true] {
        let opts = ExportOptions {
            json,
            ..ExportOptions::default()
        };
        match export(&db.open(), &opts, Closed(10)) {
            Err(ExportError::Io(e)) => assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe),
            other => panic!("json={json}: expected a broken pipe: {other:?}"),
        }
    }
}
