//! The study journal as the binary shows it: the store journal, the campaign lock and
//! the lifecycle are the runner's (`runner::campaign`, `runner::lifecycle`); here are the progress bar (a terminal) or progress
//! lines (anything else), opening the database with friendly errors, and the summary a
//! finished study prints.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use store::{DbTarget, Store};
use study::{Cell, CellOutcome, Progress, StudyOutcome, StudySpec};
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

/// Says that the campaign's lock, left by a process on this host that is gone, was
/// taken over.
pub fn say_took_over(campaign: &runner::lifecycle::OpenCampaign) {
    if let Some(old) = &campaign.took_over {
        eprintln!(
            "dualperf: campaign {} was left locked by process {} on {}, which is gone; taking it over",
            campaign.id, old.pid, old.host
        );
    }
}

/// The study's progress on stderr: on a terminal a bar of cells finished with what
/// `progress::summary` says (runs done, runs and time left as ranges), the current cell
/// and the last result; progress lines saying the same otherwise; nothing with `--quiet`.
pub struct Shown {
    bar: ProgressBar,
    /// Progress lines when stderr is not a terminal (the bar draws nothing there).
    lines: Option<crate::progress::Lines>,
    /// What the bar says, and since when this invocation runs.
    status: crate::progress::Status,
    since: std::time::Instant,
}

impl Shown {
    pub fn new(quiet: bool) -> Shown {
        let bar = if quiet {
            ProgressBar::hidden()
        } else {
            let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            // The bar counts cells, whose number is fixed; runs and time left are ranges.
            if let Ok(style) = ProgressStyle::with_template("{bar:20.cyan/blue} {wide_msg}") {
                b.set_style(style);
            }
            b
        };
        let lines = (!quiet && !std::io::stderr().is_terminal())
            .then(|| crate::progress::Lines::start(crate::progress::interval()));
        Shown {
            bar,
            lines,
            status: crate::progress::Status::default(),
            since: std::time::Instant::now(),
        }
    }

    /// The study has ended: no more lines, the bar cleared.
    pub fn finish(&mut self) {
        if let Some(l) = self.lines.as_mut() {
            l.stop();
        }
        self.bar.finish_and_clear();
    }
}

impl runner::campaign::ProgressView for Shown {
    fn starting(&mut self, progress: &Progress, current: &str, last: &str) {
        self.status.progress = *progress;
        self.status.current = current.to_string();
        self.bar.set_length(u64::from(progress.cells));
        self.bar.set_position(u64::from(progress.cells_finished));
        if let Some(l) = &self.lines {
            let st = self.status.clone();
            l.update(|s| *s = st);
        }
        let said = crate::progress::summary(&self.status, self.since.elapsed());
        self.bar
            .set_message(format!("{said} · now {current} · last {last}"));
    }

    fn recorded(&mut self) {
        self.status.timed_runs += 1;
        if let Some(l) = &self.lines {
            l.update(|s| s.timed_runs += 1);
        }
    }
}

/// The idle baseline's verdict in words, when the host was busy before the first run
/// (at or above the report's `BUSY_BASELINE_PCT`): said at the start on the terminal and
/// again in the summary, not only in the report.
pub fn busy_host_text(client: &std::collections::BTreeMap<String, String>) -> Option<String> {
    let busy: f64 = client
        .get(runner::target::IDLE_CPU_KEY)?
        .trim()
        .parse()
        .ok()
        .filter(|b: &f64| b.is_finite() && *b >= report::context::BUSY_BASELINE_PCT)?;
    Some(format!(
        "warning: this host was {busy:.0} % busy (all cores) before the first run, with \
         nothing of dualperf's running: that other load slows and spreads the runs, so \
         fewer cells meet the confidence target and host CPU figures include it; an idle \
         host gives cleaner results"
    ))
}

/// A study over a lab's emulated 802.11 link: the link, where its ceiling is (the
/// report's Wi-Fi table, `dualperf model`) and what the emulation does not charge.
fn emulated_link_text(lab: &std::collections::BTreeMap<String, String>) -> Option<String> {
    let link = lab.get("lab.emulated_link")?;
    matches!(model::link::parse(link), Ok(model::Link::Wifi(_))).then(|| {
        format!(
            "over an emulated {link} (tbf-shaped veths, not a radio): the report sets each cell \
             against the link model's ceiling (`dualperf model --link {link}`); the emulation \
             does not charge the airtime of TCP's acks, so TCP can pass that ceiling"
        )
    })
}

/// For the cells that missed their confidence target, what they need, in words: how
/// many there are, the runs their spread would need (`study::confidence::runs_to_reach`)
/// and the widest one. Empty when none missed.
fn missed_text(spec: &StudySpec, with_target: &[&CellOutcome]) -> String {
    let study::Repetition::Confidence {
        level_pct,
        width_pct,
        max_runs,
        ..
    } = spec.repetition
    else {
        return String::new();
    };
    let missed: Vec<&&CellOutcome> = with_target
        .iter()
        .filter(|c| c.target_met == Some(false))
        .collect();
    if missed.is_empty() {
        return String::new();
    }
    let cells = study::plan::cells(spec);
    // Each missed cell's widest metric, and the runs its spread would need.
    let need: Vec<(&CellOutcome, &study::confidence::MetricWidth, Option<usize>)> = missed
        .iter()
        .filter_map(|c| {
            let w = c
                .widths
                .iter()
                .filter(|w| w.width_pct > width_pct)
                .max_by(|a, b| a.width_pct.total_cmp(&b.width_pct))?;
            Some((
                **c,
                w,
                study::confidence::runs_to_reach(w, level_pct, width_pct),
            ))
        })
        .collect();
    let counts: Vec<usize> = need.iter().filter_map(|(_, _, n)| *n).collect();
    let mut out = format!(
        "{} {} missed it: their {level_pct} % interval stayed wider than {width_pct} % of \
         the mean after --max-runs {max_runs}",
        missed.len(),
        if missed.len() == 1 { "cell" } else { "cells" }
    );
    match (counts.iter().min(), counts.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => out.push_str(&format!(
            "; at their spread they need about {hi} runs (--max-runs {hi})"
        )),
        (Some(lo), Some(hi)) => out.push_str(&format!(
            "; at their spread they need about {lo} to {hi} runs (--max-runs {hi})"
        )),
        _ => {}
    }
    let unreachable = need.iter().filter(|(_, _, n)| n.is_none()).count();
    if unreachable > 0 {
        out.push_str(&format!(
            "; {unreachable} cannot reach it within {} runs at their spread",
            study::confidence::MAX_RUNS_TO_REACH
        ));
    }
    out.push_str("; or ask for a wider --ci-width\n");
    if let Some((c, w, _)) = need
        .iter()
        .max_by(|a, b| a.1.width_pct.total_cmp(&b.1.width_pct))
    {
        let label = cells
            .get(c.cell_index as usize)
            .map(|cell| cell.label())
            .unwrap_or_else(|| format!("cell {}", c.cell_index));
        out.push_str(&format!(
            "  widest: {label}, {} {:.1} % wide after {} runs\n",
            w.metric, w.width_pct, w.n
        ));
    }
    out
}

/// What a finished study prints: where the results are, how many cells met their
/// target and what the others need, a host that was busy before the first run
/// (`measured`: the runs were real, not the fake executor's), and IPv4 vs IPv6 at a
/// glance.
pub fn summary_text(
    store: &Store,
    campaign_id: i64,
    spec: &StudySpec,
    outcome: &StudyOutcome,
    db: &DbTarget,
    measured: bool,
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
        out.push_str(&missed_text(spec, &with_target));
    }
    let hosts = store.campaign(campaign_id)?.hosts;
    if measured {
        let client = runner::target::host_metadata(&hosts, "client");
        if let Some(w) = busy_host_text(&client) {
            out.push_str(&format!("{w}\n"));
        }
    }
    if let Some(link) = emulated_link_text(&runner::target::host_metadata(&hosts, "lab")) {
        out.push_str(&format!("{link}\n"));
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
        let (name, scale, unit) = if c.kind == wire::spec::TestKind::TcpCrr {
            (m::CONNECTIONS_PER_S, 1.0, "connections/s")
        } else if c.kind.is_rr() {
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
        "\nnext: `dualperf show {campaign_id} --db {0}`, `dualperf export --db {0} -o runs.csv`, `dualperf report --db {0} --campaign {campaign_id}`\n",
        db
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use study::confidence::MetricWidth;

    #[test]
    fn a_host_busy_before_the_first_run_is_told_in_words() {
        let md = |busy: &str| {
            [(runner::target::IDLE_CPU_KEY.to_string(), busy.to_string())]
                .into_iter()
                .collect()
        };
        let w = busy_host_text(&md("57.3")).expect("57 % is busy");
        assert!(
            w.contains("57 % busy (all cores) before the first run"),
            "{w}"
        );
        assert_eq!(busy_host_text(&md("2.0")), None, "an idle host");
        assert_eq!(busy_host_text(&md("NaN")), None);
        assert_eq!(busy_host_text(&Default::default()), None, "not measured");
    }

    #[test]
    fn a_study_over_an_emulated_wifi_link_names_it_and_what_tbf_does_not_charge() {
        let lab = |link: &str| {
            [("lab.emulated_link".to_string(), link.to_string())]
                .into_iter()
                .collect()
        };
        let t = emulated_link_text(&lab("802.11g:54")).expect("an 802.11 link");
        assert!(t.contains("over an emulated 802.11g:54"), "{t}");
        assert!(t.contains("`dualperf model --link 802.11g:54`"), "{t}");
        assert!(t.contains("airtime of TCP's acks"), "{t}");
        assert_eq!(
            emulated_link_text(&lab("ethernet:1G")),
            None,
            "no airtime model"
        );
        assert_eq!(emulated_link_text(&Default::default()), None);
    }

    #[test]
    fn missed_cells_are_counted_and_told_what_they_need() {
        let spec = study::SpecFile::from_toml(
            "tests=['udp-rr']\nsizes=[128]\nconfidence=95.0\nci_width=5.0\nmin_runs=3\nmax_runs=5\n",
        )
        .unwrap()
        .resolve(0)
        .unwrap();
        // 8 % wide after 5 runs: at that spread about 10 runs reach 5 %.
        let wide = |cell_index: u32, width_pct: f64| CellOutcome {
            cell_index,
            ok_runs: 5,
            failed_slots: 0,
            target_met: Some(width_pct <= 5.0),
            widths: vec![MetricWidth {
                metric: m::RTT_MEAN_NS,
                n: 5,
                mean: 50_000.0,
                width_pct,
            }],
        };
        let (a, b) = (wide(0, 8.0), wide(1, 3.0));
        let t = missed_text(&spec, &[&a, &b]);
        let need = study::confidence::runs_to_reach(&a.widths[0], 95.0, 5.0).unwrap();
        assert!(need > 5, "{need}");
        assert!(
            t.starts_with(&format!(
                "1 cell missed it: their 95 % interval stayed wider than 5 % of the mean after \
                 --max-runs 5; at their spread they need about {need} runs (--max-runs {need}); \
                 or ask for a wider --ci-width\n"
            )),
            "{t}"
        );
        assert!(
            t.contains("widest: IPv4 udp-rr 128 B, rtt_mean_ns 8.0 % wide after 5 runs"),
            "{t}"
        );
        assert_eq!(missed_text(&spec, &[&b]), "", "every target met");
    }
}
