//! Loading a report's dataset from a results database, without the binary: which
//! campaigns are chosen and the note when the latest is, runs with only the metrics a
//! report reads, a run with an impossible value left out, the cells that missed their
//! confidence target, the samples of the chosen runs (and of no others) each to its
//! kind's list, the recorded defaults, and the refusals.

use crate::support::{self, Db, Seen};
use runner::report_data::{self, LoadError, Series, SeriesCell};
use runner::Target;
use std::collections::BTreeMap;
use store::dataset::{CampaignData, IntervalCounts, LoadedSample, RunOutcome, WindowSample};
use study::fake::FakeExecutor;
use wire::metrics as m;

/// A finished fake campaign of `toml` in `db`; its id.
fn campaign(db: &Db, toml: &str) -> i64 {
    let spec = support::spec(toml);
    let mut target = Target::Fake(FakeExecutor::default(), false);
    let c = support::create(db, &spec, &target);
    let id = c.id;
    support::run(c, &mut target, Seen::default());
    id
}

fn load(db: &Db, ids: &[i64]) -> report_data::Loaded {
    report_data::load(&db.target, ids, &Series::none()).expect("the dataset loads")
}

/// The stored index of `campaign`'s (first) cell of test `kind`.
fn cell_index(db: &Db, campaign: i64, kind: wire::spec::TestKind) -> u32 {
    let cells = db.open().cells(campaign).unwrap();
    cells.iter().find(|c| c.kind == kind).unwrap().cell_index
}

/// Record a run of cell `cell` of `campaign` with `metrics` and `samples`; its id.
fn record(
    db: &Db,
    campaign: i64,
    cell: u32,
    metrics: BTreeMap<String, f64>,
    samples: Vec<store::IntervalSample>,
) -> i64 {
    db.open()
        .record_run(&store::NewRun {
            campaign_id: campaign,
            cell_index: cell,
            repetition: 99,
            warmup: false,
            attempt: 0,
            status: store::RunStatus::Ok,
            metrics,
            samples,
            applied: BTreeMap::new(),
            started_unix_ns: 1_700_000_100_000_000_000,
            duration_ns: 1_000_000_000,
        })
        .expect("the run is recorded")
}

#[test]
fn the_latest_campaign_is_loaded_by_default_and_the_note_says_how_to_choose() {
    let db = Db::new();
    let first = campaign(&db, "tests=['tcp-rr']\nsizes=[128]\nruns=2\nlabel='one'\n");
    let second = campaign(
        &db,
        "tests=['tcp-stream','tcp-rr']\nsizes=[128,1024]\nruns=3\nwarmup=1\nlabel='two'\n",
    );
    let latest = load(&db, &[]);
    let ids: Vec<i64> = latest.dataset.campaigns.iter().map(|c| c.id).collect();
    assert_eq!(ids, vec![second]);
    assert_eq!(latest.notes.len(), 1);
    let note = &latest.notes[0];
    assert!(
        note.contains(&format!(
            "holds 2 campaigns; reporting the latest, {second} (two)"
        )) && note.contains("--campaign ID"),
        "{note}"
    );
    // Both, in the order asked; no note when chosen.
    let both = load(&db, &[second, first]);
    assert!(both.notes.is_empty());
    let labels: Vec<&str> = both
        .dataset
        .campaigns
        .iter()
        .map(|c| c.label.as_str())
        .collect();
    assert_eq!(labels, vec!["two", "one"]);
    // Every stored run, warm-ups included, in its campaign: 2 families × 2 tests ×
    // 2 sizes × (1 warm-up + 3 runs), and 2 families × 2 runs.
    let two = &both.dataset.campaigns[0];
    let one = &both.dataset.campaigns[1];
    assert_eq!(two.runs.len(), 2 * 2 * 2 * 4);
    assert_eq!(two.runs.iter().filter(|r| r.warmup).count(), 2 * 2 * 2);
    assert_eq!(one.runs.len(), 2 * 2);
    for (c, store_id) in [(two, second), (one, first)] {
        let stored = db.open().runs(store_id).unwrap();
        assert_eq!(c.runs.len(), stored.len());
        for (r, s) in c.runs.iter().zip(&stored) {
            assert_eq!(
                (r.family, r.kind, r.payload_bytes, r.repetition, r.warmup),
                (s.family, s.kind, s.payload_bytes, s.repetition, s.warmup)
            );
        }
    }
    // Facts from the campaign and its spec; hosts from its metadata.
    assert_eq!(two.facts["command line"], "dualperf study --runner-test");
    assert_eq!(two.facts["finished"], "yes");
    assert_eq!(two.facts["dualperf version"], "0.0.0-test");
    assert!(two.hosts.contains_key("client"), "{:?}", two.hosts.keys());
    // No confidence target with fixed runs.
    assert_eq!((two.target, two.missed.len()), (None, 0));
    assert_eq!(both.confidence_pct, 95.0);
    assert_eq!(both.confidence_note, None);
}

#[test]
fn only_the_metrics_a_report_reads_are_loaded() {
    let db = Db::new();
    let id = campaign(&db, "tests=['tcp-stream']\nsizes=[128]\nruns=2\n");
    let cell = cell_index(&db, id, wire::spec::TestKind::TcpStream);
    let mut metrics = BTreeMap::from([
        (m::THROUGHPUT_BPS.to_string(), 1e9),
        (m::SENT_BYTES.to_string(), 125e6),
        ("idle_udp_rtt_q500_ns".to_string(), 30_000.0),
        // Matches the store's `LIKE` pattern of the RTT ladders, but is no ladder.
        ("idle_udp_rtt_qmax_ns".to_string(), 40_000.0),
    ]);
    metrics.insert(m::CPU_LOCAL_PCT.to_string(), 12.0);
    record(&db, id, cell, metrics, Vec::new());
    let data = load(&db, &[id]).dataset;
    let run = data.campaigns[0].runs.last().unwrap();
    assert_eq!(run.repetition, 99);
    let names: Vec<&str> = run.metrics.iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        vec![m::CPU_LOCAL_PCT, "idle_udp_rtt_q500_ns", m::THROUGHPUT_BPS]
    );
    assert!(!store::dataset::report_reads(m::SENT_BYTES));
    assert!(!store::dataset::report_reads("idle_udp_rtt_qmax_ns"));
}

#[test]
fn a_run_with_an_impossible_value_is_left_out_and_listed_by_its_id() {
    let db = Db::new();
    let id = campaign(&db, "tests=['udp-stream']\nsizes=[512]\nruns=2\n");
    let cell = cell_index(&db, id, wire::spec::TestKind::UdpStream);
    let sound = load(&db, &[id]).dataset.campaigns[0].runs.len();
    let bad = record(
        &db,
        id,
        cell,
        BTreeMap::from([
            (m::THROUGHPUT_BPS.to_string(), 1e9),
            (m::LOSS_PCT.to_string(), 150.0),
        ]),
        Vec::new(),
    );
    let c = load(&db, &[id]).dataset.campaigns.remove(0);
    assert_eq!(c.runs.len(), sound);
    assert_eq!(c.left_out_total, 1);
    assert_eq!(c.left_out[0].run_id, bad);
    assert_eq!(
        c.left_out[0].reason,
        "loss_pct = 150 % (must be within 0–100 %)"
    );
}

#[test]
fn cells_that_missed_their_confidence_target_are_named_with_their_widest_metric() {
    let db = Db::new();
    // ±2 % noise never makes a 0.01 % interval in 3 runs: every cell misses.
    let id = campaign(
        &db,
        "tests=['tcp-rr']\nsizes=[128,256]\nconfidence=90\nci_width=0.01\nmin_runs=2\nmax_runs=3\n",
    );
    let loaded = load(&db, &[id]);
    let c = &loaded.dataset.campaigns[0];
    let target = c.target.expect("the campaign's confidence target");
    assert_eq!((target.level_pct, target.width_pct), (90.0, 0.01));
    let stored_missed = db
        .open()
        .cells(id)
        .unwrap()
        .iter()
        .filter(|x| x.target_met == Some(false))
        .count();
    assert_eq!(stored_missed, 2 * 2);
    assert_eq!(c.missed.len(), stored_missed);
    for miss in &c.missed {
        let counted = c
            .runs
            .iter()
            .filter(|r| {
                r.counts()
                    && (r.family, r.kind, r.payload_bytes, r.direction)
                        == (miss.family, miss.kind, miss.payload_bytes, miss.direction)
            })
            .count();
        assert_eq!(miss.runs, counted);
        assert_eq!(miss.runs, 3);
        assert!(
            [m::RTT_MEAN_NS, m::TRANSACTIONS_PER_S].contains(&miss.metric.as_str()),
            "{}",
            miss.metric
        );
        assert!(miss.width_pct > 0.01, "{}", miss.width_pct);
    }
    // The level the campaign was repeated to is the report's default, said in a note.
    assert_eq!(loaded.confidence_pct, 90.0);
    let note = loaded.confidence_note.unwrap_or_default();
    assert!(note.starts_with("intervals at 90%"), "{note}");
    // Two campaigns repeated to different levels: 95 %, and the note says why.
    let other = campaign(
        &db,
        "tests=['tcp-rr']\nsizes=[128]\nconfidence=99\nci_width=50\nmin_runs=2\nmax_runs=3\n",
    );
    let both = load(&db, &[id, other]);
    assert_eq!(both.confidence_pct, 95.0);
    let note = both.confidence_note.unwrap_or_default();
    assert!(
        note.contains("different confidence levels (90%, 99%)"),
        "{note}"
    );
    // The second met its (wide) target: no miss.
    assert!(both.dataset.campaigns[1].missed.is_empty());
}

#[test]
fn the_recorded_percentage_base_is_kept_only_when_every_campaign_agrees() {
    let db = Db::new();
    let first = campaign(
        &db,
        "tests=['tcp-rr']\nsizes=[128]\nruns=2\npercent_of='first'\n",
    );
    let second = campaign(
        &db,
        "tests=['tcp-rr']\nsizes=[128]\nruns=2\npercent_of='first'\n",
    );
    let none = campaign(&db, "tests=['tcp-rr']\nsizes=[128]\nruns=2\n");
    assert_eq!(load(&db, &[first]).percent_of.as_deref(), Some("first"));
    assert_eq!(
        load(&db, &[first, second]).percent_of.as_deref(),
        Some("first")
    );
    assert_eq!(load(&db, &[first, none]).percent_of, None);
}

/// The samples of one run as a time-series figure, a window figure and an rrul figure
/// read them: interval, `window_` and `rrul_` samples stored together, split by kind.
#[test]
fn only_the_chosen_runs_samples_are_read_each_kind_to_its_own_list() {
    let db = Db::new();
    let a = campaign(&db, "tests=['udp-stream']\nsizes=[256,512]\nruns=2\n");
    let b = campaign(&db, "tests=['udp-stream']\nsizes=[256,512]\nruns=2\n");
    let cell = cell_index(&db, a, wire::spec::TestKind::UdpStream);
    let rrul = LoadedSample {
        start_ns: 0,
        end_ns: 100_000_000,
        udp_rtt: Some((3.0e6, 100.0)),
        loaded_phase: true,
        ..LoadedSample::default()
    };
    let window = BTreeMap::from([
        ("window_bitrate_bps".to_string(), 2.5e8),
        ("window_loss_pct".to_string(), 1.5),
    ]);
    let interval = BTreeMap::from([
        (m::SENT_BYTES.to_string(), 1000.0),
        (m::SENT_PACKETS.to_string(), 4.0),
    ]);
    let sample = |start_ns: i64, metrics: &BTreeMap<String, f64>| store::IntervalSample {
        start_ns,
        end_ns: start_ns + 100_000_000,
        metrics: metrics.clone(),
    };
    let asked = record(
        &db,
        a,
        cell,
        BTreeMap::from([(m::THROUGHPUT_BPS.to_string(), 1e9)]),
        vec![
            sample(0, &interval),
            sample(0, &rrul.to_metrics()),
            sample(0, &window),
            sample(100_000_000, &interval),
        ],
    );
    // The chooser sees the asked run's index in its campaign and its cell in both;
    // it draws the asked runs only.
    let seen = std::cell::RefCell::new(Vec::new());
    let choose = |c: &CampaignData, cells: &[SeriesCell], idx: &[usize]| {
        seen.borrow_mut().push((c.id, cells.to_vec(), idx.to_vec()));
        idx.to_vec()
    };
    let runs = [asked];
    let series = Series {
        runs: &runs,
        choose: &choose,
    };
    let data = report_data::load(&db.target, &[a, b], &series)
        .expect("the dataset loads")
        .dataset;
    let seen = seen.into_inner();
    let ca = &data.campaigns[0];
    let last = ca.runs.len() - 1;
    let cell_of_asked = (
        wire::spec::TestKind::UdpStream,
        ca.runs[last].direction,
        ca.runs[last].payload_bytes,
    );
    assert_eq!(
        seen,
        vec![
            (a, vec![cell_of_asked], vec![last]),
            (b, vec![cell_of_asked], vec![])
        ]
    );
    assert_eq!(ca.series.len(), 1);
    assert!(data.campaigns[1].series.is_empty());
    let s = &ca.series[0];
    assert_eq!((s.run_index, s.run_id), (last, asked));
    assert_eq!(
        s.samples,
        vec![
            IntervalCounts::from_metrics(0, 100_000_000, &interval),
            IntervalCounts::from_metrics(100_000_000, 200_000_000, &interval),
        ]
    );
    assert_eq!(s.samples[0].sent_packets, Some(4.0));
    assert_eq!(
        s.windows,
        vec![WindowSample::from_metrics(0, 100_000_000, &window).unwrap()]
    );
    assert_eq!(s.windows[0].loss_pct, Some(1.5));
    // The rrul sample reads back as it was stored.
    assert_eq!(s.loaded, vec![rrul]);
}

#[test]
fn a_campaign_or_run_that_is_not_there_is_refused_with_what_is() {
    let db = Db::new();
    drop(db.open());
    let e = report_data::load(&db.target, &[], &Series::none()).unwrap_err();
    assert!(matches!(e, LoadError::NoCampaigns { .. }), "{e}");
    assert!(e
        .to_string()
        .ends_with("holds no campaigns yet (run `dualperf study` first)"));
    let a = campaign(&db, "tests=['tcp-rr']\nsizes=[128]\nruns=2\n");
    let b = campaign(&db, "tests=['tcp-rr']\nsizes=[128]\nruns=2\n");
    let e = report_data::load(&db.target, &[a, 7], &Series::none()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("no campaign 7 in {} (campaigns there: {a}, {b})", db.target)
    );
    // A run of campaign b asked for in a report of a.
    let of_b = db.open().runs(b).unwrap()[0].id;
    let runs = [of_b];
    let series = Series {
        runs: &runs,
        choose: &|_, _, idx| idx.to_vec(),
    };
    let e = report_data::load(&db.target, &[a], &series).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!(
            "--timeseries run:{of_b}: no run {of_b} in the reported campaign(s) {a} "
        )),
        "{e}"
    );
}

#[test]
fn a_campaign_without_a_successful_run_says_why_and_how_to_resume() {
    let db = Db::new();
    let spec = support::spec("tests=['tcp-rr']\nsizes=[128]\nruns=2\nretries=0\n");
    let mut target = Target::Fake(FakeExecutor::new(|_, _, _| Err("refused".into())), false);
    let c = support::create(&db, &spec, &target);
    let id = c.id;
    support::run(c, &mut target, Seen::default());
    let data = load(&db, &[id]).dataset;
    assert!(!data.campaigns[0].runs.is_empty());
    assert!(data.campaigns[0]
        .runs
        .iter()
        .all(|r| r.outcome == RunOutcome::Failed("refused".into())));
    let why = report_data::nothing_measured(&data).expect("nothing measured");
    assert!(
        why.starts_with(&format!(
            "nothing to report: campaign {id} has no successful run ("
        )) && why.contains("failed, e.g. \"refused\")")
            && why.ends_with(&format!(
                "fix the cause, then `dualperf study --resume {id}` (or run a new study)"
            )),
        "{why}"
    );
    let sound = campaign(&db, "tests=['tcp-rr']\nsizes=[128]\nruns=2\n");
    assert_eq!(
        report_data::nothing_measured(&load(&db, &[id, sound]).dataset),
        None
    );
}
