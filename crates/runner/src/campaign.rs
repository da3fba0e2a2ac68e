//! The campaign lifecycle below the command line: the study journal that commits every
//! finished attempt to the results store before the next starts (and stores host
//! metadata from the first successful run), the campaign lock, the store's cell records
//! and a campaign's history for `--resume`. Progress is shown by whoever runs the study,
//! through [`ProgressView`]; nothing here prints.

use std::collections::BTreeMap;
use store::{CellRecord, DbTarget, HostInfo, NewRun, RunStatus, Store};
use study::{
    Cell, CellOutcome, Finished, Journal, JournalError, PastRun, Progress, Slot, StudySpec,
};
use wire::metrics as m;

/// Why the store journal stopped a study (`--resume` continues it).
#[derive(Debug, thiserror::Error)]
pub enum CampaignJournalError {
    #[error(
        "could not record {what}, so it is not stored and will be measured again on resume: {why}"
    )]
    Record {
        /// The cell, run and attempt ("IPv4 tcp-stream 1408 B run 2 (attempt 1)").
        what: String,
        why: store::StoreError,
    },
    #[error("could not store the {role} host's metadata: {why}")]
    Host {
        role: &'static str,
        why: store::StoreError,
    },
    #[error("could not store whether cell {cell} met its target: {why}")]
    CellTarget { cell: u32, why: store::StoreError },
    #[error("{count} runs in a row failed, the last with: {last}")]
    TooManyFailures { count: u32, last: String },
}

/// This process's lock on a campaign, released when dropped (also on error and on a
/// first Ctrl-C); a kill -9 leaves it, and the next `--resume` on this host sees that
/// the PID is gone and takes it over.
pub struct CampaignLockGuard {
    db: DbTarget,
    lock: store::CampaignLock,
}

/// Lock campaign `id` for this process, or fail naming the host and PID that runs it;
/// with the lock a process on this host left behind when it died, if one was taken over.
pub fn lock_campaign(
    store: &mut Store,
    db: &DbTarget,
    id: i64,
) -> Result<(CampaignLockGuard, Option<store::CampaignLock>), store::StoreError> {
    let host = net::sysinfo::host_name();
    let me = store::CampaignLock {
        campaign_id: id,
        host: host.clone(),
        pid: std::process::id(),
        started_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
    };
    let stale = |h: &store::CampaignLock| h.host == host && !net::sysinfo::process_alive(h.pid);
    let stale_taken = match store.lock_campaign(&me, stale)? {
        store::LockTaken::TookOverStale(old) => Some(old),
        _ => None,
    };
    Ok((
        CampaignLockGuard {
            db: db.clone(),
            lock: me,
        },
        stale_taken,
    ))
}

impl Drop for CampaignLockGuard {
    fn drop(&mut self) {
        if let Ok(mut s) = Store::open_target(&self.db) {
            let _ = s.unlock_campaign(&self.lock);
        }
    }
}

/// Client metadata key holding where the study sends its tests ("embedded" or
/// "HOST PORT"), so `--resume` reaches the same server.
pub const TARGET_KEY: &str = "study.target";

/// What the journal tells the one who shows the study's progress.
pub trait ProgressView {
    /// An attempt is about to start: slots done and expected, what runs now
    /// ("IPv4 tcp-stream 128 B run 2/5..20", "(retry 1)" added on a retry) and how the
    /// last one went ("IPv4 tcp-stream 128 B: 941.2 Mbit/s", or "-").
    fn starting(&mut self, progress: &Progress, current: &str, last: &str);
    /// An attempt was recorded.
    fn recorded(&mut self);
}

/// The journal of a campaign in the results store.
pub struct StoreJournal<V: ProgressView> {
    store: Store,
    campaign_id: i64,
    view: V,
    runs_per_cell: String,
    last: String,
    client_md: Option<BTreeMap<String, String>>,
    server_stored: bool,
    consecutive_failures: u32,
}

/// Stop the study after this many failed attempts in a row (server gone, network
/// down): every further run would only fail, slowly. The failures stay recorded and
/// `--resume` continues where it stopped.
pub const MAX_CONSECUTIVE_FAILURES: u32 = 10;

impl<V: ProgressView> StoreJournal<V> {
    pub fn new(store: Store, campaign_id: i64, spec: &StudySpec, view: V) -> StoreJournal<V> {
        let (lo, hi) = spec.runs_range();
        let client_md = store
            .campaign(campaign_id)
            .ok()
            .and_then(|c| c.hosts.into_iter().find(|h| h.role == "client"))
            .map(|h| h.metadata);
        StoreJournal {
            store,
            campaign_id,
            view,
            runs_per_cell: if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}..{hi}")
            },
            last: "-".into(),
            client_md,
            server_stored: false,
            consecutive_failures: 0,
        }
    }

    /// The store and the view back, once the study has ended.
    pub fn into_parts(self) -> (Store, V) {
        (self.store, self.view)
    }

    fn store_hosts(&mut self, out: &study::RunOutput) -> Result<(), CampaignJournalError> {
        if !self.server_stored && !out.server_info.is_empty() {
            let host = HostInfo {
                role: "server".into(),
                metadata: out.server_info.clone(),
            };
            self.store
                .set_host(self.campaign_id, &host)
                .map_err(|why| CampaignJournalError::Host {
                    role: "server",
                    why,
                })?;
            self.server_stored = true;
        }
        if let Some(mut md) = self.client_md.take() {
            if !out.client_info.is_empty() {
                // The run's view (with the interface) over the host-only capture.
                md.extend(out.client_info.clone());
                let host = HostInfo {
                    role: "client".into(),
                    metadata: md,
                };
                self.store
                    .set_host(self.campaign_id, &host)
                    .map_err(|why| CampaignJournalError::Host {
                        role: "client",
                        why,
                    })?;
            } else {
                self.client_md = Some(md);
            }
        }
        Ok(())
    }
}

/// A finished attempt as the store records it: its status, metrics, interval samples
/// and what each side applied (a failed attempt keeps only its reason).
pub fn run_record(campaign_id: i64, f: &Finished<'_>) -> NewRun {
    let (status, metrics, samples) = match &f.run.result {
        Ok(o) => (
            RunStatus::Ok,
            o.metrics.clone(),
            o.samples
                .iter()
                .map(|s| store::IntervalSample {
                    start_ns: s.start_ns,
                    end_ns: s.end_ns,
                    metrics: s.metrics.clone(),
                })
                .collect(),
        ),
        Err(failure) => (
            RunStatus::Failed {
                reason: failure.reason.clone(),
            },
            BTreeMap::new(),
            Vec::new(),
        ),
    };
    NewRun {
        campaign_id,
        cell_index: f.cell.index,
        repetition: f.slot.repetition,
        warmup: f.slot.warmup,
        attempt: f.attempt,
        status,
        metrics,
        samples,
        applied: match &f.run.result {
            Ok(o) => o.applied.clone(),
            Err(_) => Default::default(),
        },
        started_unix_ns: f.run.started_unix_ns,
        duration_ns: f.run.duration_ns,
    }
}

impl<V: ProgressView> Journal for StoreJournal<V> {
    fn record(&mut self, f: &Finished<'_>) -> Result<(), JournalError> {
        self.store
            .record_run(&run_record(self.campaign_id, f))
            .map_err(|why| {
                let which = if f.slot.warmup { "warm-up" } else { "run" };
                JournalError::new(CampaignJournalError::Record {
                    what: format!(
                        "{} {which} {} (attempt {})",
                        f.cell.label(),
                        f.slot.repetition + 1,
                        f.attempt + 1
                    ),
                    why,
                })
            })?;
        self.last = match &f.run.result {
            Ok(o) => format!("{}: {}", f.cell.label(), headline(f.cell, &o.metrics)),
            Err(failure) => format!(
                "{}: failed ({})",
                f.cell.label(),
                wire::text::terminal_safe_line(&failure.reason)
            ),
        };
        self.view.recorded();
        match &f.run.result {
            Ok(o) => {
                self.consecutive_failures = 0;
                self.store_hosts(o).map_err(JournalError::new)?;
            }
            Err(failure) => {
                self.consecutive_failures += 1;
                if self.consecutive_failures >= MAX_CONSECUTIVE_FAILURES {
                    return Err(JournalError::new(CampaignJournalError::TooManyFailures {
                        count: MAX_CONSECUTIVE_FAILURES,
                        last: failure.reason.clone(),
                    }));
                }
            }
        }
        Ok(())
    }

    fn cell_done(&mut self, cell: &Cell, outcome: &CellOutcome) -> Result<(), JournalError> {
        self.store
            .set_cell_target(self.campaign_id, cell.index, outcome.target_met)
            .map_err(|why| {
                JournalError::new(CampaignJournalError::CellTarget {
                    cell: cell.index,
                    why,
                })
            })
    }

    fn starting(&mut self, cell: &Cell, slot: &Slot, attempt: u32, progress: &Progress) {
        let what = if slot.warmup {
            format!("warm-up {}", slot.repetition + 1)
        } else {
            format!("run {}/{}", slot.repetition + 1, self.runs_per_cell)
        };
        let retry = if attempt > 0 {
            format!(" (retry {attempt})")
        } else {
            String::new()
        };
        let current = format!("{} {what}{retry}", cell.label());
        self.view.starting(progress, &current, &self.last);
    }
}

/// The one number that says how a run went: goodput for streams, RTT for RR,
/// connections per second for tcp-crr.
pub fn headline(cell: &Cell, metrics: &BTreeMap<String, f64>) -> String {
    if cell.kind == wire::spec::TestKind::TcpCrr {
        match metrics.get(m::CONNECTIONS_PER_S) {
            Some(r) => format!("{r:.0} connections/s"),
            None => "no connection rate".into(),
        }
    } else if cell.kind.is_rr() {
        match metrics.get(m::RTT_MEAN_NS) {
            Some(ns) => format!("RTT {:.1} µs", ns / 1e3),
            None => "no RTT".into(),
        }
    } else {
        match metrics.get(m::THROUGHPUT_BPS) {
            Some(bps) => format!("{:.1} Mbit/s", bps / 1e6),
            None => "no throughput".into(),
        }
    }
}

/// The store's cell records of a study.
pub fn cell_records(campaign_id: i64, spec: &StudySpec) -> Vec<CellRecord> {
    study::plan::cells(spec)
        .into_iter()
        .map(|c| CellRecord {
            campaign_id,
            cell_index: c.index,
            family: c.family,
            kind: c.kind,
            payload_bytes: c.payload_bytes,
            direction: c.direction,
            spec_json: serde_json::to_string(&c.test).unwrap_or_default(),
            target_met: None,
        })
        .collect()
}

/// The runs already recorded for a campaign, as the runner's history.
pub fn history(store: &Store, campaign_id: i64) -> Result<Vec<PastRun>, store::StoreError> {
    Ok(history_with_starts(store, campaign_id)?.0)
}

/// [`history`], and when each of those runs started (Unix ns), for the pace of a
/// resumed campaign (`study::schedule::recorded_pace_s`).
pub fn history_with_starts(
    store: &Store,
    campaign_id: i64,
) -> Result<(Vec<PastRun>, Vec<i64>), store::StoreError> {
    let details = store.run_details(campaign_id)?;
    let starts = details.iter().map(|d| d.run.started_unix_ns).collect();
    let past = details
        .into_iter()
        .map(|d| PastRun {
            cell_index: d.cell_index,
            warmup: d.run.warmup,
            repetition: d.run.repetition,
            attempt: d.attempt,
            ok: d.run.status.is_ok(),
            metrics: d.run.metrics,
        })
        .collect();
    Ok((past, starts))
}

/// This process's command line as typed, for a campaign's record: each word quoted where
/// it needs it, bytes that are not UTF-8 (a `--db` path may hold any) as U+FFFD
/// (`std::env::args` would panic on them), and a password in a database URL replaced by
/// `***` (`store::redact_password`). Every campaign a command creates records this.
pub fn command_line() -> String {
    quote_command_line(std::env::args_os())
}

/// [`command_line`] of the given words.
pub fn quote_command_line(words: impl IntoIterator<Item = std::ffi::OsString>) -> String {
    let line = words
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c))
            {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    store::redact_password(&line)
}

#[cfg(test)]
mod tests {

    #[cfg(unix)]
    #[test]
    fn a_command_line_keeps_words_quotes_what_needs_it_and_survives_bytes_not_utf8() {
        use std::os::unix::ffi::OsStringExt;
        let words = vec![
            std::ffi::OsString::from("dualperf"),
            "exporter".into(),
            "--label".into(),
            "it's".into(),
            "--db".into(),
            std::ffi::OsString::from_vec(b"r\xffsults.db".to_vec()),
            "postgres://u:se/cret@host/db".into(),
        ];
        let line = super::quote_command_line(words);
        assert_eq!(
            line,
            "dualperf exporter --label 'it'\\''s' --db 'r\u{fffd}sults.db' postgres://u:***@host/db"
        );
    }
    use super::*;
    use study::fake::FakeExecutor;

    /// What the view was told.
    #[derive(Default)]
    struct Seen {
        starting: Vec<(u64, u64, String, String)>,
        recorded: u64,
    }

    impl ProgressView for Seen {
        fn starting(&mut self, p: &Progress, current: &str, last: &str) {
            self.starting
                .push((p.done_slots, p.expected_slots, current.into(), last.into()));
        }
        fn recorded(&mut self) {
            self.recorded += 1;
        }
    }

    fn campaign(dir: &tempfile::TempDir, toml: &str) -> (Store, i64, StudySpec) {
        let spec = study::SpecFile::from_toml(toml)
            .unwrap()
            .resolve(1)
            .unwrap();
        let mut store = Store::open(&dir.path().join("c.db")).unwrap();
        let id = store
            .create_campaign(&store::NewCampaign {
                label: "test".into(),
                created_unix_s: 0,
                command_line: "dualperf study".into(),
                spec_json: spec.to_json(),
                dualperf_version: "0".into(),
                git_revision: "x".into(),
            })
            .unwrap();
        store.add_cells(&cell_records(id, &spec)).unwrap();
        (store, id, spec)
    }

    #[test]
    fn every_attempt_is_stored_and_shown_and_history_reads_them_back() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id, spec) = campaign(
            &dir,
            "tests=['tcp-stream','udp-rr']\nsizes=[128]\nruns=2\nwarmup=1\nduration_s=0.01\n",
        );
        let mut journal = StoreJournal::new(store, id, &spec, Seen::default());
        let outcome = study::Scheduler::new(&spec)
            .run(&mut FakeExecutor::default(), &mut journal)
            .unwrap();
        let (store, seen) = journal.into_parts();
        // 4 cells x (1 warm-up + 2 runs).
        assert_eq!(seen.recorded, 12);
        assert_eq!(seen.starting.len(), 12);
        let (done, expected, current, last) = &seen.starting[0];
        assert_eq!((*done, *expected), (0, 12));
        assert!(current.ends_with("warm-up 1"), "{current}");
        assert_eq!(last, "-");
        let (_, _, current, last) = &seen.starting[11];
        assert!(current.contains(" run 2/2"), "{current}");
        assert!(last.contains("Mbit/s") || last.contains("RTT"), "{last}");
        assert!(outcome.cells.iter().all(|c| c.ok_runs == 2));
        let past = history(&store, id).unwrap();
        assert_eq!(past.len(), 12);
        assert_eq!(past.iter().filter(|p| p.warmup).count(), 4);
        let hosts = store.campaign(id).unwrap().hosts;
        assert!(hosts.iter().any(|h| h.role == "server"), "{hosts:?}");
    }

    #[test]
    fn a_run_of_failures_stops_the_study_and_keeps_them_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let (store, id, spec) = campaign(&dir, "tests=['tcp-rr']\nsizes=[128,256]\nruns=20\n");
        let mut journal = StoreJournal::new(store, id, &spec, Seen::default());
        let mut exec = FakeExecutor::new(|_, _, _| Err("connection refused".into()));
        let err = study::Scheduler::new(&spec)
            .run(&mut exec, &mut journal)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("runs in a row failed") && err.contains("connection refused"),
            "{err}"
        );
        let (store, seen) = journal.into_parts();
        assert_eq!(seen.recorded, u64::from(MAX_CONSECUTIVE_FAILURES));
        assert_eq!(
            store.runs(id).unwrap().len(),
            MAX_CONSECUTIVE_FAILURES as usize
        );
    }

    /// Another process on this host: our parent (cargo), alive while we run.
    #[cfg(unix)]
    #[test]
    fn a_campaign_lock_keeps_others_out_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, id, _) = campaign(&dir, "tests=['tcp-rr']\nsizes=[128]\nruns=2\n");
        let db = DbTarget::parse(dir.path().join("c.db").as_os_str());
        let other = store::CampaignLock {
            campaign_id: id,
            host: net::sysinfo::host_name(),
            pid: std::os::unix::process::parent_id(),
            started_unix_s: 0,
        };
        let (guard, stale) = lock_campaign(&mut store, &db, id).unwrap();
        assert!(stale.is_none());
        assert!(
            store.lock_campaign(&other, |_| false).is_err(),
            "taken while we hold it"
        );
        drop(guard);
        assert!(matches!(
            store.lock_campaign(&other, |_| false).unwrap(),
            store::LockTaken::Fresh
        ));
        // Held by a live process: refused, naming it.
        let e = lock_campaign(&mut store, &db, id).err().expect("refused");
        assert!(e.to_string().contains(&other.pid.to_string()), "{e}");
    }
}
