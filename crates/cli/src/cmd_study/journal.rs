//! The study journal of the binary: every finished attempt is committed to the results
//! store (SQLite or PostgreSQL) before the next starts; host metadata is stored from the
//! first successful run; the progress bar shows the current cell, run number, last
//! result and ETA.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use store::{CellRecord, DbTarget, HostInfo, NewRun, RunStatus, Store};
use study::{
    Cell, CellOutcome, Finished, Journal, PastRun, Progress, Slot, StudyOutcome, StudySpec,
};
use wire::metrics as m;
use wire::spec::Family;

/// Open the study's database for writing; an error from a read-only file or file
/// system says so (SQLite only says "unable to open database file").
pub fn open_store(target: &DbTarget) -> anyhow::Result<Store> {
    let Some(db) = target.sqlite_path() else {
        return Ok(Store::open_target(target)?);
    };
    crate::args::check_database_file(db, true)?;
    match Store::open(db) {
        Ok(s) => Ok(s),
        Err(e) => {
            let read_only = db.exists()
                && std::fs::OpenOptions::new()
                    .append(true)
                    .open(db)
                    .is_err_and(|io| {
                        matches!(
                            io.kind(),
                            std::io::ErrorKind::ReadOnlyFilesystem
                                | std::io::ErrorKind::PermissionDenied
                        )
                    });
            if read_only {
                Err(anyhow::Error::new(e).context(format!(
                    "results database {} is read-only (file or file system): a study needs to write it; \
                     copy it somewhere writable or pick another --db",
                    db.display()
                )))
            } else {
                Err(e.into())
            }
        }
    }
}

/// This process's lock on a campaign, released when dropped (also on error and on a
/// first Ctrl-C); a kill -9 leaves it, and the next `--resume` on this host sees that
/// the PID is gone and takes it over.
pub struct CampaignLockGuard {
    db: DbTarget,
    lock: store::CampaignLock,
}

/// Lock campaign `id` for this process, or fail naming the host and PID that runs it.
pub fn lock_campaign(
    store: &mut Store,
    db: &DbTarget,
    id: i64,
) -> anyhow::Result<CampaignLockGuard> {
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
    if let store::LockTaken::TookOverStale(old) = store.lock_campaign(&me, stale)? {
        eprintln!(
            "dualperf: campaign {id} was left locked by process {} on {}, which is gone; taking it over",
            old.pid, old.host
        );
    }
    Ok(CampaignLockGuard {
        db: db.clone(),
        lock: me,
    })
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

pub struct StoreJournal {
    store: Store,
    campaign_id: i64,
    bar: ProgressBar,
    /// Progress lines when stderr is not a terminal (the bar draws nothing there).
    lines: Option<crate::progress::Lines>,
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

impl StoreJournal {
    pub fn new(store: Store, campaign_id: i64, spec: &StudySpec, quiet: bool) -> StoreJournal {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{bar:20.cyan/blue} {pos}/{len} runs · ETA {eta} · {wide_msg}",
            ) {
                b.set_style(style);
            }
            b
        };
        let lines = (!quiet && !std::io::stderr().is_terminal())
            .then(|| crate::progress::Lines::start(crate::progress::interval()));
        let (lo, hi) = spec.runs_range();
        let client_md = store
            .campaign(campaign_id)
            .ok()
            .and_then(|c| c.hosts.into_iter().find(|h| h.role == "client"))
            .map(|h| h.metadata);
        StoreJournal {
            store,
            campaign_id,
            bar,
            lines,
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

    pub fn finish_progress(&mut self) {
        if let Some(l) = self.lines.as_mut() {
            l.stop();
        }
        self.bar.finish_and_clear();
    }

    pub fn into_store(self) -> Store {
        self.store
    }

    fn store_hosts(&mut self, out: &study::RunOutput) -> Result<(), String> {
        if !self.server_stored && !out.server_info.is_empty() {
            let host = HostInfo {
                role: "server".into(),
                metadata: out.server_info.clone(),
            };
            self.store
                .set_host(self.campaign_id, &host)
                .map_err(|e| e.to_string())?;
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
                    .map_err(|e| e.to_string())?;
            } else {
                self.client_md = Some(md);
            }
        }
        Ok(())
    }
}

impl Journal for StoreJournal {
    fn record(&mut self, f: &Finished<'_>) -> Result<(), String> {
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
            Err(reason) => (
                RunStatus::Failed {
                    reason: reason.clone(),
                },
                BTreeMap::new(),
                Vec::new(),
            ),
        };
        self.store
            .record_run(&NewRun {
                campaign_id: self.campaign_id,
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
            })
            .map_err(|e| {
                let which = if f.slot.warmup { "warm-up" } else { "run" };
                format!(
                    "could not record {} {which} {} (attempt {}), so it is not stored and will be measured again on resume: {e}",
                    f.cell.label(),
                    f.slot.repetition + 1,
                    f.attempt + 1
                )
            })?;
        self.last = match &f.run.result {
            Ok(o) => format!("{}: {}", f.cell.label(), headline(f.cell, &o.metrics)),
            Err(reason) => format!(
                "{}: failed ({})",
                f.cell.label(),
                wire::text::terminal_safe_line(reason)
            ),
        };
        self.bar.inc(1);
        if let Some(l) = &self.lines {
            l.update(|s| s.done_runs += 1);
        }
        match &f.run.result {
            Ok(o) => {
                self.consecutive_failures = 0;
                self.store_hosts(o)?;
            }
            Err(reason) => {
                self.consecutive_failures += 1;
                if self.consecutive_failures >= MAX_CONSECUTIVE_FAILURES {
                    return Err(format!(
                        "{MAX_CONSECUTIVE_FAILURES} runs in a row failed, the last with: {reason}"
                    ));
                }
            }
        }
        Ok(())
    }

    fn cell_done(&mut self, cell: &Cell, outcome: &CellOutcome) -> Result<(), String> {
        self.store
            .set_cell_target(self.campaign_id, cell.index, outcome.target_met)
            .map_err(|e| e.to_string())
    }

    fn starting(&mut self, cell: &Cell, slot: &Slot, attempt: u32, progress: &Progress) {
        self.bar.set_length(progress.expected_slots);
        self.bar.set_position(progress.done_slots);
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
        if let Some(l) = &self.lines {
            l.update(|s| {
                s.done_runs = progress.done_slots;
                s.expected_runs = progress.expected_slots;
                s.current = format!("{} {what}{retry}", cell.label());
            });
        }
        self.bar.set_message(format!(
            "{} {what}{retry} · last {}",
            cell.label(),
            self.last
        ));
    }
}

/// The one number that says how a run went: goodput for streams, RTT for RR.
pub fn headline(cell: &Cell, metrics: &BTreeMap<String, f64>) -> String {
    if cell.kind.is_rr() {
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
    Ok(store
        .run_details(campaign_id)?
        .into_iter()
        .map(|d| PastRun {
            cell_index: d.cell_index,
            warmup: d.run.warmup,
            repetition: d.run.repetition,
            attempt: d.attempt,
            ok: d.run.status.is_ok(),
            metrics: d.run.metrics,
        })
        .collect())
}

/// What a finished study prints: where the results are, and IPv4 vs IPv6 at a glance.
pub fn summary_text(
    store: &Store,
    campaign_id: i64,
    spec: &StudySpec,
    outcome: &StudyOutcome,
    db: &DbTarget,
) -> Result<String, store::StoreError> {
    let runs = store.runs(campaign_id)?;
    let ok = runs
        .iter()
        .filter(|r| r.status.is_ok() && !r.warmup)
        .count();
    let failed = runs.iter().filter(|r| !r.status.is_ok()).count();
    let mut out = format!(
        "campaign {campaign_id} finished: {ok} measured runs, {failed} failed attempts, stored in {}\n",
        db
    );
    let with_target: Vec<&CellOutcome> = outcome
        .cells
        .iter()
        .filter(|c| c.target_met.is_some())
        .collect();
    if !with_target.is_empty() {
        let met = with_target
            .iter()
            .filter(|c| c.target_met == Some(true))
            .count();
        out.push_str(&format!(
            "confidence target met in {met} of {} cells\n",
            with_target.len()
        ));
    }
    let dead: Vec<String> = outcome
        .cells
        .iter()
        .filter(|c| c.ok_runs == 0)
        .map(|c| c.cell_index.to_string())
        .collect();
    if !dead.is_empty() {
        out.push_str(&format!(
            "no successful run in cells {} (see `dualperf show {campaign_id}` for the reasons)\n",
            dead.join(", ")
        ));
    }
    out.push_str("\nmean of measured runs       IPv4          IPv6\n");
    let cells = study::plan::cells(spec);
    let mean_of = |c: &Cell, name: &str| {
        let v: Vec<f64> = runs
            .iter()
            .filter(|r| {
                r.status.is_ok()
                    && !r.warmup
                    && r.family == c.family
                    && r.kind == c.kind
                    && r.payload_bytes == c.payload_bytes
            })
            .filter_map(|r| r.metrics.get(name).copied())
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    for c in cells.iter().filter(|c| c.family == spec.families[0]) {
        let (name, scale, unit) = if c.kind.is_rr() {
            (m::RTT_MEAN_NS, 1e-3, "µs RTT")
        } else if c.kind == wire::spec::TestKind::Rrul {
            (
                m::LOADED_TCP_RTT_P50_NS,
                1e-3,
                "µs RTT p50 of TCP probes under load",
            )
        } else {
            (m::THROUGHPUT_BPS, 1e-6, "Mbit/s")
        };
        let cell_of = |f: Family| {
            cells
                .iter()
                .find(|o| o.family == f && o.kind == c.kind && o.payload_bytes == c.payload_bytes)
        };
        let fmt = |f: Family| {
            cell_of(f)
                .and_then(|o| mean_of(o, name))
                // Small values (a VoIP model's kbit/s) keep 3 significant digits.
                .map(|v| {
                    let x = v * scale;
                    let decimals = if x != 0.0 && x.abs() < 10.0 {
                        (2.0 - x.abs().log10().floor()).clamp(1.0, 6.0) as usize
                    } else {
                        1
                    };
                    format!("{x:>12.decimals$}")
                })
                .unwrap_or_else(|| format!("{:>12}", "-"))
        };
        out.push_str(&format!(
            "{:<10} {:>6} B  {} {}  {unit}\n",
            c.kind.name(),
            c.payload_bytes,
            fmt(Family::V4),
            fmt(Family::V6)
        ));
    }
    out.push_str(&format!(
        "\nnext: `dualperf show {campaign_id} --db {0}`, `dualperf export --db {0} --format csv`, `dualperf report --db {0} --campaign {campaign_id}`\n",
        db
    ));
    Ok(out)
}
