//! `dualperf study`, `show`, `export` and `import` end to end through the binary, with
//! the study crate's fake executor (`DUALPERF_STUDY_FAKE=1`): deterministic results,
//! no sockets, runs that take their duration in real time.

use crate::support::study::*;
use std::time::Duration;

fn db_in(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).display().to_string()
}

#[test]
fn study_fills_the_database_and_exports_tidy_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir, "a.db");
    let o = run(
        &[
            "study",
            "--tests",
            "tcp-stream,udp-rr",
            "--sizes",
            "128,256",
            "--runs",
            "2",
            "--warmup",
            "1",
            "--duration",
            "0.01",
            "--label",
            "lab, \"one\"",
            "--db",
            &db,
        ],
        true,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("16 measured runs"),
        "{}",
        text(&o)
    );
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let camps = s.campaigns().unwrap();
    assert_eq!(camps.len(), 1);
    assert_eq!(camps[0].label, "lab, \"one\"");
    assert!(camps[0].finished);
    assert!(camps[0].command_line.contains("--warmup 1"));
    assert_eq!(s.cells(1).unwrap().len(), 8);
    let runs = s.runs(1).unwrap();
    assert_eq!(runs.iter().filter(|r| r.warmup).count(), 8);
    assert_eq!(runs.iter().filter(|r| !r.warmup).count(), 16);
    let metric_rows: usize = runs
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| r.metrics.len())
        .sum();
    let roles: Vec<&str> = camps[0].hosts.iter().map(|h| h.role.as_str()).collect();
    assert!(
        roles.contains(&"client") && roles.contains(&"server"),
        "{roles:?}"
    );

    let csv = run(&["export", "--db", &db, "--format", "csv"], false);
    assert!(csv.status.success(), "{}", text(&csv));
    let csv = String::from_utf8(csv.stdout).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in [
        "campaign_label",
        "family",
        "test",
        "payload_bytes",
        "repetition",
        "metric",
        "value",
    ] {
        assert!(header.contains(&col), "missing column {col}");
    }
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), metric_rows);
    assert!(
        rows[0].starts_with("1,\"lab, \"\"one\"\"\","),
        "{}",
        rows[0]
    );
    assert!(rows
        .iter()
        .any(|r| r.contains(",udp-rr,UDP,256,") && r.contains(",rtt_mean_ns,")));

    let json = run(&["export", "--db", &db, "--format", "json"], false);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), metric_rows);
    assert_eq!(arr[0]["campaign_label"], "lab, \"one\"");
    assert!(arr.iter().all(|r| r["warmup"] == false));
    let with_warm = run(
        &[
            "export",
            "--db",
            &db,
            "--format",
            "json",
            "--include-warmup",
        ],
        false,
    );
    let v: serde_json::Value = serde_json::from_slice(&with_warm.stdout).unwrap();
    assert!(v.as_array().unwrap().len() > metric_rows);

    // Issue 15: every row carries the settings its cell asked for (the study gave
    // -d 0.01, one stream, OS-default buffers: empty) and the hosts' OS.
    for r in arr {
        assert_eq!(r["run_duration_s"], 0.01, "{r}");
        assert_eq!(r["streams"], 1, "{r}");
        assert!(
            r["sndbuf_bytes"].is_null() && r["rate_bps"].is_null(),
            "{r}"
        );
        assert_eq!(
            r["nodelay"], false,
            "as asked (tcp-rr turns it on itself): {r}"
        );
    }
    assert!(header.contains(&"run_duration_s") && header.contains(&"client_os"));

    // `--intervals`: one row per run, interval and metric, exactly the stored samples.
    let iv = run(
        &["export", "--db", &db, "--format", "json", "--intervals"],
        false,
    );
    assert!(iv.status.success(), "{}", text(&iv));
    let iv: serde_json::Value = serde_json::from_slice(&iv.stdout).unwrap();
    let iv = iv.as_array().unwrap();
    let stored: usize = runs
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| {
            s.samples(r.id)
                .unwrap()
                .iter()
                .map(|x| x.metrics.len())
                .sum::<usize>()
        })
        .sum();
    assert!(stored > 0, "the fake executor stores samples");
    assert_eq!(iv.len(), stored);
    assert!(iv
        .iter()
        .all(|r| r["end_ns"].as_i64() > r["start_ns"].as_i64() && r["metric"] != ""));
    let csv = run(
        &["export", "--db", &db, "--format", "csv", "--intervals"],
        false,
    );
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert_eq!(csv.lines().count(), stored + 1, "header + rows");
    assert!(
        csv.starts_with("campaign_id,campaign_label,run_id,"),
        "{csv}"
    );
}

#[test]
fn show_prints_metadata_plan_and_progress() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir, "s.db");
    let o = run(
        &[
            "study",
            "--tests",
            "tcp-rr",
            "--sizes",
            "128",
            "--runs",
            "2",
            "--duration",
            "0.01",
            "--label",
            "Ubuntu 24.04 / GigE",
            "--db",
            &db,
            "--quiet",
        ],
        true,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "1",
        "--quiet prints the id"
    );
    let show = run(&["show", "1", "--db", &db], false);
    let t = String::from_utf8_lossy(&show.stdout);
    for want in [
        "campaign 1: Ubuntu 24.04 / GigE",
        "command: ",
        "dualperf: 0.1.0",
        "progress: finished",
        "4 measured runs",
        "host client:",
        "kernel.release",
        "host server:",
        "cpu.cores",
    ] {
        assert!(t.contains(want), "show lacks '{want}':\n{t}");
    }
    let list = run(&["show", "--db", &db], false);
    assert!(String::from_utf8_lossy(&list.stdout).contains("Ubuntu 24.04 / GigE"));
}

#[test]
fn confidence_target_is_recorded_per_cell_and_a_missed_one_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir, "c.db");
    // The fake's ±2 % noise meets a 50 % target at the minimum, never a 0.001 % one.
    for (width, verdict) in [("50", "met"), ("0.001", "MISSED")] {
        let _ = std::fs::remove_file(&db);
        let o = run(
            &[
                "study",
                "--tests",
                "udp-stream",
                "--sizes",
                "512",
                "--confidence",
                "95",
                "--ci-width",
                width,
                "--min-runs",
                "2",
                "--max-runs",
                "4",
                "--duration",
                "0.01",
                "--db",
                &db,
            ],
            true,
        );
        // Every target met: 0; finished with targets missed: 3 (not 0, not 2).
        let status = if verdict == "met" { 0 } else { 3 };
        assert_eq!(o.status.code(), Some(status), "{}", text(&o));
        // The summary says in words how many met and what the others need.
        let said = text(&o);
        assert!(said.contains("confidence target met in"), "{said}");
        // The hint writes the export to a file rather than megabytes to the terminal.
        assert!(
            said.contains(&format!("`dualperf export --db {db} -o runs.csv`")),
            "{said}"
        );
        assert_eq!(
            said.contains("2 cells missed it: their 95 % interval stayed wider than 0.001 % of the mean after --max-runs 4"),
            verdict == "MISSED",
            "{said}"
        );
        let s = store::Store::open_read_only(db.as_ref()).unwrap();
        let want = if verdict == "met" { 2 } else { 4 };
        assert_eq!(s.runs(1).unwrap().len(), 2 * want, "width {width}");
        assert!(s
            .cells(1)
            .unwrap()
            .iter()
            .all(|c| c.target_met == Some(verdict == "met")));
        let show = run(&["show", "1", "--db", &db], false);
        assert!(String::from_utf8_lossy(&show.stdout).contains(verdict));
    }
}

#[test]
fn import_merges_campaigns_from_another_database_once() {
    let dir = tempfile::tempdir().unwrap();
    let a = db_in(&dir, "a.db");
    let b = db_in(&dir, "b.db");
    for (db, label) in [(&a, "host A"), (&b, "host B")] {
        let o = run(
            &[
                "study",
                "--tests",
                "tcp-stream",
                "--sizes",
                "128",
                "--runs",
                "1",
                "--duration",
                "0.01",
                "--label",
                label,
                "--db",
                db,
            ],
            true,
        );
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = run(&["import", &b, "--db", &a], false);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 campaigns, 2 runs imported"));
    let s = store::Store::open_read_only(a.as_ref()).unwrap();
    let camps = s.campaigns().unwrap();
    assert_eq!(
        camps.iter().map(|c| c.label.as_str()).collect::<Vec<_>>(),
        vec!["host A", "host B"]
    );
    assert!(camps[1]
        .hosts
        .iter()
        .any(|h| h.metadata.contains_key("kernel.release")));
    drop(s);
    let again = run(&["import", &b, "--db", &a], false);
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 runs added"));
    let s = store::Store::open_read_only(a.as_ref()).unwrap();
    assert_eq!(s.campaigns().unwrap().len(), 2);
}

#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir, "dry.db");
    let o = run(
        &[
            "study",
            "--dry-run",
            "--order",
            "random",
            "--order-seed",
            "7",
            "--db",
            &db,
        ],
        false,
    );
    assert!(o.status.success(), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("cells: 48"), "{t}");
    assert!(
        t.contains(
            "until the 95% interval is within 20% of the mean, 5..20 runs per cell (240..960 runs)"
        ),
        "{t}"
    );
    assert!(t.contains("udp-stream method: RFC 2544 throughput"), "{t}");
    assert!(t.contains("order: random, seed 7"), "{t}");
    // RFC 2544 udp-stream runs are one to six trials of 0.25 s: 0.25 to 1.5 s each.
    assert!(t.contains("estimated duration: 2m09s to 15m12s"), "{t}");
    assert!(
        t.contains("socket options: OS defaults; UDP tests: rcvbuf=16777216 bytes"),
        "{t}"
    );
    assert!(!std::path::Path::new(&db).exists());
}

#[test]
fn presets_list_names_every_seed_study() {
    let o = run(&["study", "--list-presets"], false);
    let t = String::from_utf8_lossy(&o.stdout);
    // Each published study by its title and authors (and year where the paper gives
    // it), not the name of the file kept of it.
    for title in [
        "\"Performance Analysis of Some Operating Systems in Wireless 802.11n Networks\", S. S. Kolahi and P. Li, International Journal of Computing and Network Technology, 2016",
        "\"Evaluating IPv6 in Peer-to-Peer 802.11n Wireless LANs\", S. S. Kolahi and P. Li, IEEE Internet Computing, 2011",
        "\"Performance Comparison of IPv6 in 802.11ac WLAN in Windows and Linux Environment\"",
        "\"Performance Comparison of IPv4 and IPv6 using Windows XP and Windows 7 over Gigabit Ethernet LAN\"",
        "\"UDP-IPv6 Performance in Peer-to-Peer Gigabit Ethernet using Modern Windows and Linux Systems\"",
    ] {
        assert!(t.contains(&format!("  study: {title}")), "no {title}:\n{t}");
    }
    assert!(!t.contains(".txt") && !t.contains("seed"), "{t}");
    // One estimate per preset: the plan's, not a second hand-written one.
    assert!(
        !t.contains("(about 32 h)") && t.contains("plan: 48 cells x 40 runs, about 28h"),
        "{t}"
    );
    // Each seed names its link's ceiling as a dualperf model command.
    assert_eq!(
        t.matches("its link's ceiling: dualperf model --link ")
            .count(),
        5,
        "{t}"
    );
    let o = run(&["study", "--preset", "004", "--dry-run"], false);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("1000000 packets") && t.contains("udp-rr") && !t.contains("tcp-rr"),
        "{t}"
    );
}

#[test]
fn bad_input_fails_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir, "bad.db");
    for (args, why) in [
        (vec!["study", "--sizes", "0", "--dry-run"], "out of range"),
        (
            vec!["study", "--sizes", "abc", "--dry-run"],
            "not a whole number",
        ),
        (
            vec![
                "study",
                "--confidence",
                "95",
                "--min-runs",
                "1",
                "--dry-run",
            ],
            "min-runs",
        ),
        (vec!["study", "--preset", "nope"], "no preset"),
        (
            vec!["show", "1", "--db", db.as_str()],
            "no results database",
        ),
    ] {
        let o = run(&args, true);
        assert!(!o.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(why), "{args:?}: {err}");
    }
    // A campaign that is not there.
    let o = run(
        &[
            "study",
            "--tests",
            "tcp-rr",
            "--sizes",
            "64",
            "--runs",
            "1",
            "--duration",
            "0.01",
            "--db",
            &db,
        ],
        true,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = run(&["study", "--resume", "9", "--db", &db], true);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no campaign 9"),
        "{}",
        text(&o)
    );
}

#[test]
fn sigkill_then_resume_completes_with_the_right_run_count_fake() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir, "kill.db");
    let args = [
        "study",
        "--tests",
        "tcp-stream,udp-rr",
        "--sizes",
        "128,1408",
        "--runs",
        "3",
        "--duration",
        "0.1",
        "--order",
        "random",
        "--order-seed",
        "3",
        "--db",
        &db,
    ];
    let child = spawn(&args, true);
    let at_kill = kill_after_runs(child, db.as_ref(), 5, Duration::from_secs(20));
    assert!((5..24).contains(&at_kill), "{at_kill}");
    assert_eq!(measured_slots(db.as_ref(), 1).len(), at_kill);
    let o = run(&["study", "--resume", "1", "--db", &db], true);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(measured_slots(db.as_ref(), 1).len(), 24);
    assert_eq!(recorded_runs(db.as_ref()), 24, "a run was made twice");
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    assert!(s.campaign(1).unwrap().finished);
    let again = run(&["study", "--resume", "1", "--db", &db], true);
    assert!(String::from_utf8_lossy(&again.stdout).contains("already finished"));
}

#[test]
fn ctrl_c_finishes_the_current_run_records_it_and_resume_completes() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir, "int.db");
    let args = [
        "study",
        "--tests",
        "udp-rr",
        "--sizes",
        "128,256",
        "--runs",
        "4",
        "--duration",
        "0.2",
        "--db",
        &db,
    ];
    let mut child = spawn(&args, true);
    let t0 = std::time::Instant::now();
    while recorded_runs(db.as_ref()) < 2 {
        assert!(t0.elapsed() < Duration::from_secs(20), "no runs recorded");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "interrupted study exits 130");
    let at_stop = recorded_runs(db.as_ref());
    assert!((2..16).contains(&at_stop), "{at_stop}");
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    assert!(!s.campaign(1).unwrap().finished);
    drop(s);
    let o = run(&["study", "--resume", "1", "--db", &db], true);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(measured_slots(db.as_ref(), 1).len(), 16);
    assert_eq!(recorded_runs(db.as_ref()), 16);
}

#[test]
fn export_into_a_pipe_closed_early_is_no_error() {
    // `export | head -1`: a reader that leaves early is no error. The whole export is
    // larger than a pipe's buffer, so the writer does meet the closed pipe.
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir, "big.db");
    let o = run(
        &[
            "study",
            "--tests",
            "tcp-stream,udp-rr",
            "--sizes",
            "100..1400/20",
            "--runs",
            "1",
            "--duration",
            "0.001",
            "--db",
            &db,
            "--quiet",
        ],
        true,
    );
    assert!(o.status.success(), "{}", text(&o));
    let full = run(&["export", "--db", &db, "--include-warmup"], false);
    assert!(full.stdout.len() > 1 << 17, "{} bytes", full.stdout.len());
    let mut child = std::process::Command::new(BIN)
        .args(["export", "--db", &db, "--include-warmup"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("export starts");
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    assert!(first.starts_with("campaign_id,"), "{first}");
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A study whose stderr is a pipe (a log file, CI) gets progress lines instead of the
/// bar, which draws nothing there. The interval is shortened to 0.3 s through
/// `DUALPERF_PROGRESS_INTERVAL_S`; the fake runs take their 0.5 s each in real time, so
/// the 12 runs last at least 6 s whatever the load: several lines are due. Only counts
/// and the lines' form are checked, not when they came.
#[test]
fn a_study_writing_to_a_pipe_prints_well_formed_progress_lines() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_in(&dir, "p.db");
    let args = [
        "study",
        "--tests",
        "tcp-stream",
        "--sizes",
        "128",
        "--runs",
        "6",
        "--duration",
        "0.5",
        "--db",
        &db,
    ];
    // The fake executor, progress lines every 0.3 s; stderr is a pipe.
    let with_progress = |args: &[&str]| {
        std::process::Command::new(BIN)
            .args(args)
            .env("DUALPERF_STUDY_FAKE", "1")
            .env("DUALPERF_PROGRESS_INTERVAL_S", "0.3")
            .output()
            .expect("the dualperf binary runs")
    };
    let o = with_progress(&args);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("dualperf: progress: "))
        .collect();
    assert!(lines.len() >= 2, "{}", text(&o));
    let mut last_done = 0;
    for l in &lines {
        // "dualperf: progress: D runs done, F of 2 cells finished, L[ to M] runs left[,
        // about T[ to U] left], E elapsed[, now CELL run R/N]"
        let rest = &l["dualperf: progress: ".len()..];
        let (done, rest) = rest.split_once(" runs done, ").expect(l);
        let done: u64 = done.parse().expect(l);
        assert!(done <= 12, "{l}");
        assert!(done >= last_done, "progress went back: {l}");
        last_done = done;
        let (finished, rest) = rest.split_once(" of 2 cells finished, ").expect(l);
        assert!(finished.parse::<u32>().expect(l) <= 2, "{l}");
        let (left, rest) = rest.split_once(" runs left").expect(l);
        // Fixed runs: the runs left are one number, and with those done make the study.
        assert_eq!(left.parse::<u64>().expect(l) + done, 12, "{l}");
        let rest = match rest.strip_prefix(", about ") {
            Some(r) => r.split_once(" left").expect(l).1,
            None => rest,
        };
        let (elapsed, now) = rest
            .strip_prefix(", ")
            .and_then(|r| r.split_once(" elapsed"))
            .expect(l);
        assert!(
            elapsed.ends_with('s')
                && elapsed[..elapsed.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == 'm'),
            "{l}"
        );
        if !now.is_empty() {
            assert!(now.starts_with(", now IPv"), "{l}");
            assert!(now.contains(" tcp-stream 128 B run "), "{l}");
        }
    }
    // Once a run has been timed, the lines give the time left.
    assert!(
        lines.iter().any(|l| l.contains(" left, about ")),
        "{}",
        text(&o)
    );
    // `--quiet` asks for errors only: no progress lines.
    let q_db = db_in(&dir, "q.db");
    let quiet = with_progress(&[
        "study",
        "--quiet",
        "--tests",
        "tcp-stream",
        "--sizes",
        "128",
        "--runs",
        "2",
        "--duration",
        "0.5",
        "--db",
        &q_db,
    ]);
    assert!(quiet.status.success(), "{}", text(&quiet));
    assert!(
        !String::from_utf8_lossy(&quiet.stderr).contains("progress:"),
        "{}",
        text(&quiet)
    );
}
