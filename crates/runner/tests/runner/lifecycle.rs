//! The campaign lifecycle through the fake executor: a new campaign, its journal in the
//! store, an interrupted campaign resumed, the lock, the profile axis.

use crate::support::{self, Db, Seen};
use runner::campaign::{MAX_CONSECUTIVE_FAILURES, TARGET_KEY};
use runner::lifecycle::{self, CampaignError, End, Resumed};
use runner::target::PEER_KEY;
use runner::Target;
use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use store::RunStatus;
use study::fake::{plausible_metrics, FakeExecutor};

const TWO_CELLS: &str = "tests=['tcp-stream']\nsizes=[128]\nruns=3\nwarmup=1\nduration_s=0.01\n";
const FOUR_CELLS: &str =
    "tests=['tcp-stream','udp-rr']\nsizes=[128]\nruns=4\nwarmup=1\nduration_s=0.01\n";

#[test]
fn a_new_campaign_stores_its_cells_hosts_and_every_run() {
    let db = Db::new();
    let spec = support::spec(TWO_CELLS);
    let mut target = Target::fake(false);
    let campaign = support::create(&db, &spec, &target);
    let id = campaign.id;
    assert!(campaign.took_over.is_none());
    assert_eq!(campaign.past_runs(), 0);
    let ran = support::run(campaign, &mut target, Seen::default());
    assert_eq!(ran.id, id);
    assert_eq!(support::failed_cells(&ran.end), 0);
    assert!(
        ran.busy.is_none(),
        "only an iperf3 peer counts busy answers"
    );
    // 2 cells (IPv4, IPv6) x (1 warm-up + 3 runs).
    assert_eq!(ran.view.recorded, 8);
    let store = ran.store;
    let c = store.campaign(id).unwrap();
    assert!(c.finished);
    assert_eq!(c.command_line, "dualperf study --runner-test");
    // No label given: named after the client's system, never empty.
    assert!(!c.label.is_empty());
    let client = c.hosts.iter().find(|h| h.role == "client").unwrap();
    assert_eq!(client.metadata[TARGET_KEY], "embedded");
    assert_eq!(client.metadata[PEER_KEY], "dualperf");
    assert_eq!(client.metadata["dualperf.version"], "0.0.0-test");
    let server = c.hosts.iter().find(|h| h.role == "server").unwrap();
    assert_eq!(server.metadata["host.name"], "fake-server");
    assert_eq!(store.cells(id).unwrap().len(), 2);
    let runs = store.runs(id).unwrap();
    assert_eq!(runs.len(), 8);
    assert_eq!(runs.iter().filter(|r| r.warmup).count(), 2);
    assert!(runs
        .iter()
        .all(|r| r.status.is_ok() && !r.metrics.is_empty()));
}

#[test]
fn the_journal_keeps_each_attempt_with_its_number_and_reason() {
    let db = Db::new();
    let spec = support::spec("tests=['tcp-rr']\nsizes=[128]\nruns=2\nretries=2\n");
    // The first try of every run fails; the retry succeeds.
    let exec = FakeExecutor::new(|cell, slot, attempt| {
        if attempt == 0 {
            Err("connection reset by peer".into())
        } else {
            Ok(plausible_metrics(cell, slot))
        }
    });
    let mut target = Target::Fake(exec, false);
    let campaign = support::create(&db, &spec, &target);
    let id = campaign.id;
    let ran = support::run(campaign, &mut target, Seen::default());
    assert_eq!(support::failed_cells(&ran.end), 0);
    let details = ran.store.run_details(id).unwrap();
    // 2 cells x 2 runs x (failed try + retry).
    assert_eq!(details.len(), 8);
    for d in &details {
        match (&d.run.status, d.attempt) {
            (RunStatus::Failed { reason }, 0) => {
                assert_eq!(reason, "connection reset by peer");
                assert!(d.run.metrics.is_empty());
            }
            (RunStatus::Ok, 1) => assert!(!d.run.metrics.is_empty()),
            other => panic!("unexpected attempt {other:?}"),
        }
    }
    // The view saw each retry announced as one.
    let retries = ran
        .view
        .starting
        .iter()
        .filter(|s| s.2.ends_with("(retry 1)"));
    assert_eq!(retries.count(), 4, "{:?}", ran.view.starting);
}

#[test]
fn a_campaign_that_keeps_failing_stops_and_can_be_resumed() {
    let db = Db::new();
    let spec = support::spec("tests=['tcp-rr']\nsizes=[128,256]\nruns=20\n");
    let mut target = Target::Fake(FakeExecutor::new(|_, _, _| Err("refused".into())), false);
    let campaign = support::create(&db, &spec, &target);
    let id = campaign.id;
    let ran = support::run(campaign, &mut target, Seen::default());
    match &ran.end {
        End::Stopped(why) => assert!(why.contains("runs in a row failed"), "{why}"),
        other => panic!("expected the study to stop: {other:?}"),
    }
    assert_eq!(
        ran.store.runs(id).unwrap().len(),
        MAX_CONSECUTIVE_FAILURES as usize
    );
    assert!(!ran.store.campaign(id).unwrap().finished);
    drop(ran);
    let resumed = support::resume(&db, id);
    assert_eq!(resumed.past_runs(), MAX_CONSECUTIVE_FAILURES as usize);
}

/// The fake's results depend on (cell, repetition, attempt) only, so an interrupted and
/// resumed campaign must hold exactly the runs of one that was never interrupted.
#[test]
fn an_interrupted_campaign_resumes_where_it_stopped_and_ends_as_if_never_stopped() {
    let spec = support::spec(FOUR_CELLS);
    let total = 4 * (1 + 4);
    let whole = Db::new();
    let mut target = Target::fake(false);
    let campaign = support::create(&whole, &spec, &target);
    let whole_id = campaign.id;
    let ran = support::run(campaign, &mut target, Seen::default());
    assert_eq!(support::failed_cells(&ran.end), 0);
    let expected = runs_of(&ran.store, whole_id);
    assert_eq!(expected.len(), total);

    let db = Db::new();
    let stop = Arc::new(AtomicBool::new(false));
    let view = Seen {
        stop_after: Some((7, stop.clone())),
        ..Seen::default()
    };
    let mut target = Target::fake(false);
    let campaign = support::create(&db, &spec, &target);
    let id = campaign.id;
    let ran = support::run(campaign, &mut target, view);
    assert!(matches!(ran.end, End::Interrupted), "{:?}", ran.end);
    assert_eq!(ran.store.runs(id).unwrap().len(), 7);
    assert!(!ran.store.campaign(id).unwrap().finished);
    drop(ran); // the lock goes with it

    let resumed = support::resume(&db, id);
    assert_eq!(resumed.past_runs(), 7);
    assert_eq!(resumed.spec, spec, "the stored spec is the one resumed");
    let stored = resumed.stored_target().unwrap();
    assert_eq!(
        (stored.hosts.host, stored.lab),
        (None, None),
        "it ran embedded"
    );
    let mut target = Target::fake(false);
    let ran = support::run(resumed, &mut target, Seen::default());
    assert_eq!(support::failed_cells(&ran.end), 0);
    assert_eq!(
        ran.view.recorded as usize,
        total - 7,
        "only what was left ran"
    );
    assert!(ran.store.campaign(id).unwrap().finished);
    assert_eq!(runs_of(&ran.store, id), expected);
    drop(ran);
    assert!(matches!(
        lifecycle::resume(db.open(), &db.target, id).unwrap(),
        Resumed::AlreadyFinished
    ));
}

/// Each stored run as (cell, repetition, warm-up, metrics as text): comparable across
/// databases.
fn runs_of(store: &store::Store, id: i64) -> BTreeSet<(u32, u32, bool, String)> {
    store
        .run_details(id)
        .unwrap()
        .into_iter()
        .map(|d| {
            (
                d.cell_index,
                d.run.repetition,
                d.run.warmup,
                format!("{:?}", d.run.metrics),
            )
        })
        .collect()
}

/// Another process on this host holds the lock: our parent (the test harness's), alive
/// while we run.
#[cfg(unix)]
#[test]
fn a_campaign_locked_by_a_live_process_is_refused_and_a_dead_ones_lock_taken_over() {
    let db = Db::new();
    let spec = support::spec(TWO_CELLS);
    let target = Target::fake(false);
    let id = support::create(&db, &spec, &target).id; // created, then unlocked
    let mut store = db.open();
    let other = store::CampaignLock {
        campaign_id: id,
        host: net::sysinfo::host_name(),
        pid: std::os::unix::process::parent_id(),
        started_unix_s: 0,
    };
    store.lock_campaign(&other, |_| false).unwrap();
    let err = match lifecycle::resume(db.open(), &db.target, id) {
        Err(e @ CampaignError::Store(_)) => e.to_string(),
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("resumed a campaign another process holds"),
    };
    assert!(err.contains(&other.pid.to_string()), "{err}");
    store.unlock_campaign(&other).unwrap();

    // A process that has ended: its lock is stale and taken over, and said so.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();
    let dead = store::CampaignLock {
        pid: dead_pid,
        ..other
    };
    store.lock_campaign(&dead, |_| false).unwrap();
    let resumed = support::resume(&db, id);
    assert_eq!(resumed.took_over.as_ref().map(|l| l.pid), Some(dead_pid));
}

#[test]
fn a_target_is_read_back_from_a_campaigns_hosts() {
    let host = |role: &str, kv: &[(&str, &str)]| store::HostInfo {
        role: role.into(),
        metadata: kv
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    let remote = lifecycle::stored_target(&[host(
        "client",
        &[(TARGET_KEY, "fd00::2 5201"), (PEER_KEY, "iperf3")],
    )])
    .unwrap();
    assert_eq!(remote.hosts.host.as_deref(), Some("fd00::2"));
    assert_eq!(remote.port, Some(5201));
    assert_eq!(remote.peer, runner::Peer::Iperf3);
    let lab = lifecycle::stored_target(&[
        host("client", &[(TARGET_KEY, "lab")]),
        host(
            "lab",
            &[
                ("lab.topology", "p2p"),
                ("lab.rate_bps", "unshaped"),
                ("lab.server_port", "5399"),
            ],
        ),
    ])
    .unwrap();
    assert_eq!(lab.lab.map(|l| l.topology), Some(lab::Topology::P2p));
    assert_eq!(lab.port, Some(5399));
    assert_eq!(lab.peer, runner::Peer::Dualperf);
    let broken = lifecycle::stored_target(&[host("client", &[(TARGET_KEY, "lab")])]);
    assert!(broken.unwrap_err().to_string().contains("lab.topology"));
}

#[test]
fn the_profile_axis_makes_one_labelled_campaign_per_profile() {
    assert!(lifecycle::profile_names("voip-g711,,voip-g729")
        .unwrap_err()
        .to_string()
        .contains("an empty name"));
    let twice = lifecycle::profile_names("voip-g711,VOIP-G711").unwrap_err();
    assert!(twice.to_string().contains("listed twice"), "{twice}");
    let names = lifecycle::profile_names("voip-g711, voip-g729").unwrap();
    assert_eq!(names, ["voip-g711", "voip-g729"]);

    let db = Db::new();
    let mut ids = Vec::new();
    for name in &names {
        let test = runner::TestOptions {
            profile: Some(name.clone()),
            duration_s: Some(0.01),
            ..Default::default()
        };
        let study = runner::StudyOptions {
            tests: Some(vec!["udp-stream".into()]),
            families: Some(vec![4]),
            sizes: Some("128".into()),
            runs: Some(2),
            label: Some(lifecycle::profile_label(Some("lab A"), name)),
            ..Default::default()
        };
        let spec = runner::resolve_study(&test, &study, &runner::Layers::default()).unwrap();
        let mut target = Target::fake(false);
        let campaign = support::create(&db, &spec, &target);
        ids.push(campaign.id);
        let ran = support::run(campaign, &mut target, Seen::default());
        assert_eq!(support::failed_cells(&ran.end), 0);
    }
    let store = db.open();
    let labels: Vec<String> = ids
        .iter()
        .map(|&id| store.campaign(id).unwrap().label)
        .collect();
    assert_eq!(labels, ["lab A voip-g711", "lab A voip-g729"]);
    let specs: Vec<String> = ids
        .iter()
        .map(|&id| store.campaign(id).unwrap().spec_json)
        .collect();
    assert_ne!(
        specs[0], specs[1],
        "each campaign keeps its own traffic model"
    );
}

/// Issue 38: a campaign whose stored spec was edited to ask for 4·10⁹ runs (2 cells of
/// 2·10⁹ runs) is refused by `--resume` with the limit the flags keep, and nothing is
/// run; the same spec from a file is refused with the same words.
#[test]
fn a_stored_spec_edited_beyond_the_limits_is_refused_on_resume() {
    let db = Db::new();
    let spec = support::spec(TWO_CELLS);
    let campaign = support::create(&db, &spec, &Target::fake(false));
    let id = campaign.id;
    drop(campaign);
    let mut edited = spec.clone();
    edited.repetition = study::Repetition::Fixed {
        runs: 2_000_000_000,
    };
    let store::DbTarget::Sqlite(path) = &db.target else {
        unreachable!()
    };
    // Written behind dualperf's back, as an editor of the file would.
    let store_spec = |s: &study::StudySpec| {
        let changed = rusqlite::Connection::open(path)
            .unwrap()
            .execute(
                "UPDATE campaigns SET spec_json = ?1 WHERE id = ?2",
                rusqlite::params![s.to_json(), id],
            )
            .unwrap();
        assert_eq!(changed, 1);
    };
    store_spec(&edited);
    let e = match lifecycle::resume(db.open(), &db.target, id) {
        Err(e) => e,
        Ok(_) => panic!("a spec of 4e9 runs resumed"),
    };
    assert!(matches!(e, CampaignError::SpecOutOfLimits { .. }), "{e}");
    let chain = anyhow_like(&e);
    assert!(chain.contains("runs (--runs)"), "{chain}");
    assert!(chain.contains("2000000000"), "{chain}");
    assert_eq!(db.open().runs(id).unwrap().len(), 0);
    // The flag and file path: the same words.
    let from_file = study::SpecFile::from_toml(&TWO_CELLS.replace("runs=3", "runs=2000000000"))
        .unwrap()
        .resolve(7)
        .unwrap_err()
        .to_string();
    assert!(chain.ends_with(&from_file), "{chain} / {from_file}");
    // Within the limits again, it resumes.
    store_spec(&spec);
    assert_eq!(support::resume(&db, id).id, id);
}

/// The error and its causes, as the binary prints them.
fn anyhow_like(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        text.push_str(": ");
        text.push_str(&s.to_string());
        src = s.source();
    }
    text
}
