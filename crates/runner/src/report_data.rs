//! Loading a report's dataset from the results database: the chosen campaigns (default:
//! the latest) with their facts, hosts and runs (only the metrics a report reads, each
//! run checked as it is read), the cells that missed their confidence target, the link
//! state the runs recorded, and the samples of the runs a report draws over time (and
//! of no others). Also what the campaigns recorded for the report's defaults (the
//! percentage base, the confidence level). The dataset types are `store::dataset`'s:
//! the report reads them, and this crate does not depend on the report.

use std::collections::{BTreeMap, BTreeSet};
use store::dataset::{
    CampaignData, ConfidenceTarget, Dataset, IntervalCounts, LoadedSample, MetricsInterner,
    MissedCell, RunOutcome, RunRow, RunSeries, WindowSample, REPORT_READS, REPORT_READS_LIKE,
};
use store::{DbTarget, RunStatus, Store, StoreError};
use wire::spec::{Direction, TestKind};

/// A cell of the study matrix as a time-series figure draws it: (test, direction,
/// packet size).
pub type SeriesCell = (TestKind, Direction, u32);

/// Chooses, in one campaign, the indexes into its `runs` of the runs to draw over
/// time: given the campaign, the cells every campaign draws and the indexes of the runs
/// asked for in it (see [`Series`]).
pub type ChooseSeries<'a> = dyn Fn(&CampaignData, &[SeriesCell], &[usize]) -> Vec<usize> + 'a;

/// Which runs' samples to read: the runs asked for by their store ids, and the chooser
/// of the runs to draw in one campaign (the report's `timeseries::select`), given the
/// campaign, the cells every campaign draws (those of the runs asked for, in any
/// campaign, so that each system appears beside them) and the indexes into its `runs`
/// of the runs asked for in it.
pub struct Series<'a> {
    pub runs: &'a [i64],
    pub choose: &'a ChooseSeries<'a>,
}

impl Series<'_> {
    /// No samples read (a report that prints only tables).
    pub fn none() -> Series<'static> {
        fn nothing(_: &CampaignData, _: &[SeriesCell], _: &[usize]) -> Vec<usize> {
            Vec::new()
        }
        Series {
            runs: &[],
            choose: &nothing,
        }
    }
}

/// A loaded dataset, what the chosen campaigns recorded for the report's defaults, and
/// notes for the user (which campaign was chosen when the database holds several).
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub dataset: Dataset,
    /// The percentage base (`percent_of` of their spec, set by the seed presets) when
    /// every chosen campaign recorded the same one.
    pub percent_of: Option<String>,
    /// The confidence level the campaigns were repeated to, %: 95 when they used a
    /// fixed number of runs or disagree.
    pub confidence_pct: f64,
    /// Said with that level when the campaigns recorded one, or disagreed.
    pub confidence_note: Option<String>,
    pub notes: Vec<String>,
}

/// Why a dataset could not be loaded, worded for the user.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read results database {db}")]
    Open {
        db: String,
        #[source]
        source: StoreError,
    },
    #[error("{db} holds no campaigns yet (run `dualperf study` first)")]
    NoCampaigns { db: String },
    #[error("no campaign {id} in {db} (campaigns there: {known})")]
    NoCampaign { id: i64, db: String, known: String },
    #[error(
        "--timeseries run:{id}: no run {id} in the reported campaign(s) {campaigns} (`dualperf \
         export --db {db}` lists each run with its id; pass its --campaign too)"
    )]
    NoRun {
        id: i64,
        campaigns: String,
        db: String,
    },
    #[error("cannot read the interval samples of run {run}")]
    Samples {
        run: i64,
        #[source]
        source: StoreError,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Read the chosen campaigns (`ids`; none = the latest) of `db` into a report dataset,
/// with the samples of the runs `series` chooses to draw over time, and of no others.
pub fn load(db: &DbTarget, ids: &[i64], series: &Series) -> Result<Loaded, LoadError> {
    let store = Store::open_target_read_only(db).map_err(|source| LoadError::Open {
        db: db.to_string(),
        source,
    })?;
    let all = store.campaigns()?;
    if all.is_empty() {
        return Err(LoadError::NoCampaigns { db: db.to_string() });
    }
    let mut notes = Vec::new();
    let chosen: Vec<&store::Campaign> = if ids.is_empty() {
        let latest = all.iter().max_by_key(|c| c.id);
        if let (Some(c), true) = (latest, all.len() > 1) {
            notes.push(chosen_note(c, all.len(), db));
        }
        latest.into_iter().collect()
    } else {
        ids.iter()
            .map(|id| {
                all.iter()
                    .find(|c| c.id == *id)
                    .ok_or_else(|| LoadError::NoCampaign {
                        id: *id,
                        db: db.to_string(),
                        known: all
                            .iter()
                            .map(|c| c.id.to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                    })
            })
            .collect::<Result<_, _>>()?
    };
    let mut campaigns = Vec::new();
    let mut run_ids: Vec<Vec<i64>> = Vec::new();
    for &c in &chosen {
        let mut campaign = campaign_data(&store, c);
        run_ids.push(read_runs(&store, &mut campaign)?);
        campaign.link_values = store.applied_value_counts(c.id, "%.link.%", 4096)?;
        let (target, missed) = confidence_misses(&store, c, &campaign)?;
        campaign.target = target;
        campaign.missed = missed;
        campaigns.push(campaign);
    }
    add_series(&store, db, &mut campaigns, &run_ids, series)?;
    let specs: Vec<Option<study::StudySpec>> = chosen
        .iter()
        .map(|c| study::StudySpec::from_json(&c.spec_json).ok())
        .collect();
    let (confidence_pct, confidence_note) = recorded_confidence_pct(&specs);
    Ok(Loaded {
        dataset: Dataset { campaigns },
        percent_of: recorded_percent_of(&specs),
        confidence_pct,
        confidence_note,
        notes,
    })
}

/// What a report of a database with several campaigns says when none was chosen: which
/// one it reports and how to choose.
fn chosen_note(latest: &store::Campaign, count: usize, db: &DbTarget) -> String {
    let label = if latest.label.is_empty() {
        String::new()
    } else {
        format!(" ({})", wire::text::terminal_safe_line(&latest.label))
    };
    format!(
        "{db} holds {count} campaigns; reporting the latest, {}{label}. Choose with \
         --campaign ID (`dualperf show --db {db}` lists them), or compare several: \
         --campaign ID ID",
        latest.id
    )
}

/// A campaign's facts, hosts and what its spec says about its runs, without the runs.
fn campaign_data(store: &Store, c: &store::Campaign) -> CampaignData {
    let mut facts = BTreeMap::new();
    let mut offered_load = BTreeMap::new();
    let mut loss_bound_pct = None;
    let mut cv_target_pct = None;
    facts.insert("command line".to_string(), c.command_line.clone());
    facts.insert(
        "created (UTC)".to_string(),
        store::utc_text(c.created_unix_s),
    );
    facts.insert(
        "finished".to_string(),
        if c.finished {
            "yes"
        } else {
            "no (interrupted or running)"
        }
        .to_string(),
    );
    if let Ok(spec) = study::StudySpec::from_json(&c.spec_json) {
        if spec.tests.contains(&TestKind::UdpStream) {
            facts.insert("udp-stream method".to_string(), spec.describe_udp_stream());
        }
        if let Some(t) = spec.describe_traffic() {
            facts.insert("traffic model".to_string(), t);
        }
        offered_load = spec.offered_load();
        cv_target_pct = spec.cv_target_pct;
        loss_bound_pct = match spec.udp_method {
            study::UdpMethod::Rfc2544(search) => Some(search.loss_threshold_pct),
            study::UdpMethod::Fixed => None,
        };
        if spec.tests.iter().any(|t| t.is_udp()) {
            facts.insert(
                "UDP datapath".to_string(),
                spec.udp_datapath.describe().to_string(),
            );
        }
        facts.insert("socket options".to_string(), spec.describe_sockets());
    }
    if let Ok(extra) = store.campaign_extra(c.id) {
        facts.insert("dualperf version".to_string(), extra.dualperf_version);
        if let Some(from) = extra.imported_from {
            facts.insert("imported from".to_string(), from);
        }
    }
    let hosts = c
        .hosts
        .iter()
        .map(|h| (h.role.clone(), h.metadata.clone()))
        .collect();
    CampaignData {
        id: c.id,
        label: c.label.clone(),
        facts,
        hosts,
        offered_load,
        loss_bound_pct,
        cv_target_pct,
        ..CampaignData::default()
    }
}

/// Read a campaign's runs into `campaign.runs`, a chunk at a time and only the
/// metrics a report reads ([`store::dataset::report_reads`]), each run's values checked
/// as they are read (a run with an impossible one is left out and listed, see
/// [`CampaignData::push_checked`]). Returns the store ids of the runs kept, in order.
fn read_runs(store: &Store, campaign: &mut CampaignData) -> Result<Vec<i64>, StoreError> {
    let mut ids = Vec::new();
    let mut names = MetricsInterner::default();
    let mut chunks = store
        .run_chunks(campaign.id)?
        .only_metrics(REPORT_READS, REPORT_READS_LIKE);
    while let Some(chunk) = chunks.next_chunk()? {
        for d in chunk {
            let r = d.run;
            let metrics = r
                .metrics
                .into_iter()
                .filter(|(name, _)| store::dataset::report_reads(name))
                .collect();
            let row = RunRow {
                family: r.family,
                kind: r.kind,
                direction: r.direction,
                payload_bytes: r.payload_bytes,
                repetition: r.repetition,
                warmup: r.warmup,
                outcome: match r.status {
                    RunStatus::Ok => RunOutcome::Ok,
                    RunStatus::Failed { reason } => RunOutcome::Failed(reason),
                },
                metrics: names.make(metrics),
            };
            if campaign.push_checked(r.id, row) {
                ids.push(r.id);
            }
        }
    }
    ids.shrink_to_fit();
    campaign.runs.shrink_to_fit();
    Ok(ids)
}

/// The campaign's confidence target (if it had one) and the cells the store marks as
/// having missed it, each with its widest counted metric (the rule of
/// `study::confidence`, so the report and `show` agree on what "missed" means).
fn confidence_misses(
    store: &Store,
    c: &store::Campaign,
    campaign: &CampaignData,
) -> Result<(Option<ConfidenceTarget>, Vec<MissedCell>), StoreError> {
    let Ok(spec) = study::StudySpec::from_json(&c.spec_json) else {
        return Ok((None, Vec::new()));
    };
    let study::Repetition::Confidence {
        level_pct,
        width_pct,
        ..
    } = spec.repetition
    else {
        return Ok((None, Vec::new()));
    };
    let mut missed = Vec::new();
    for cell in store
        .cells(c.id)?
        .iter()
        .filter(|x| x.target_met == Some(false))
    {
        let maps: Vec<BTreeMap<String, f64>> = campaign
            .runs
            .iter()
            .filter(|r| {
                r.counts()
                    && r.family == cell.family
                    && r.kind == cell.kind
                    && r.payload_bytes == cell.payload_bytes
                    && r.direction == cell.direction
            })
            .map(|r| r.metrics.to_map())
            .collect();
        let metrics: Vec<&BTreeMap<String, f64>> = maps.iter().collect();
        let widest = study::confidence::widths(cell.kind, &metrics, level_pct)
            .into_iter()
            .max_by(|a, b| a.width_pct.total_cmp(&b.width_pct));
        if let Some(w) = widest {
            missed.push(MissedCell {
                family: cell.family,
                kind: cell.kind,
                direction: cell.direction,
                payload_bytes: cell.payload_bytes,
                runs: metrics.len(),
                metric: w.metric.to_string(),
                width_pct: w.width_pct,
            });
        }
    }
    let target = ConfidenceTarget {
        level_pct,
        width_pct,
    };
    Ok((Some(target), missed))
}

/// Give each campaign the samples of the runs to draw over time (`run_ids`: each
/// campaign's store run ids, in the order of its `runs`); only theirs are read.
fn add_series(
    store: &Store,
    db: &DbTarget,
    campaigns: &mut [CampaignData],
    run_ids: &[Vec<i64>],
    series: &Series,
) -> Result<(), LoadError> {
    // The runs asked for by id, as indexes per campaign; their cells are drawn for every
    // campaign, so each system appears beside them.
    let asked: Vec<Vec<usize>> = run_ids
        .iter()
        .map(|ids| {
            (0..ids.len())
                .filter(|&i| series.runs.contains(&ids[i]))
                .collect()
        })
        .collect();
    let mut cells = Vec::new();
    let mut found = Vec::new();
    for ((c, ids), idx) in campaigns.iter().zip(run_ids).zip(&asked) {
        for &i in idx {
            let r = &c.runs[i];
            cells.push((r.kind, r.direction, r.payload_bytes));
            found.push(ids[i]);
        }
    }
    if let Some(&id) = series.runs.iter().find(|id| !found.contains(id)) {
        let which: Vec<String> = campaigns.iter().map(|c| c.id.to_string()).collect();
        return Err(LoadError::NoRun {
            id,
            campaigns: which.join(", "),
            db: db.to_string(),
        });
    }
    for ((campaign, ids), idx) in campaigns.iter_mut().zip(run_ids).zip(&asked) {
        for i in (series.choose)(campaign, &cells, idx) {
            let Some(&run_id) = ids.get(i) else {
                continue;
            };
            let samples = store.samples(run_id).map_err(|source| LoadError::Samples {
                run: run_id,
                source,
            })?;
            campaign.series.push(run_series(i, run_id, &samples));
        }
    }
    Ok(())
}

/// One run's stored samples, each kind to its own list: window samples
/// (`--stats-window`) and an rrul run's samples are stored beside the interval samples,
/// their names prefixed.
fn run_series(run_index: usize, run_id: i64, samples: &[store::IntervalSample]) -> RunSeries {
    let mut series = RunSeries {
        run_index,
        run_id,
        ..RunSeries::default()
    };
    for s in samples {
        if let Some(l) = LoadedSample::from_metrics(s.start_ns, s.end_ns, &s.metrics) {
            series.loaded.push(l);
        } else if let Some(w) = WindowSample::from_metrics(s.start_ns, s.end_ns, &s.metrics) {
            series.windows.push(w);
        } else {
            series.samples.push(IntervalCounts::from_metrics(
                s.start_ns, s.end_ns, &s.metrics,
            ));
        }
    }
    series
}

/// Why a report cannot say anything: no chosen campaign has a successful measured run.
pub fn nothing_measured(data: &Dataset) -> Option<String> {
    if data
        .campaigns
        .iter()
        .any(|c| c.runs.iter().any(|r| r.counts()))
    {
        return None;
    }
    let parts: Vec<String> = data
        .campaigns
        .iter()
        .map(|c| {
            let first_failure = c.runs.iter().find_map(|r| match &r.outcome {
                RunOutcome::Failed(why) => Some(why.clone()),
                RunOutcome::Ok => None,
            });
            match first_failure {
                Some(why) => format!(
                    "campaign {} has no successful run ({} failed, e.g. \"{why}\")",
                    c.id,
                    c.runs.len()
                ),
                None => format!("campaign {} has no runs yet", c.id),
            }
        })
        .collect();
    let resume = match data.campaigns.as_slice() {
        [one] => format!("`dualperf study --resume {}`", one.id),
        _ => "`dualperf study --resume ID`".to_string(),
    };
    Some(format!(
        "nothing to report: {}; fix the cause, then {resume} (or run a new study)",
        parts.join("; ")
    ))
}

/// The percentage base the campaigns (their specs, `None` where unreadable) recorded,
/// when they all recorded the same one.
fn recorded_percent_of(specs: &[Option<study::StudySpec>]) -> Option<String> {
    let bases: BTreeSet<Option<String>> = specs
        .iter()
        .map(|s| s.as_ref().and_then(|s| s.percent_of.clone()))
        .collect();
    match bases.len() {
        1 => bases.into_iter().next().flatten(),
        _ => None,
    }
}

/// The confidence level the campaigns were repeated to (`study --confidence`), for the
/// report's intervals unless the user gives one; 95 when they used a fixed number of
/// runs or disagree (with a note saying so).
fn recorded_confidence_pct(specs: &[Option<study::StudySpec>]) -> (f64, Option<String>) {
    let levels: Vec<f64> = specs
        .iter()
        .flatten()
        .filter_map(|s| match s.repetition {
            study::spec::Repetition::Confidence { level_pct, .. } => Some(level_pct),
            _ => None,
        })
        .collect();
    match levels.first() {
        None => (95.0, None),
        Some(&l) if levels.iter().all(|&x| x == l) => (
            l,
            Some(format!(
                "intervals at {l}%, the confidence level the campaign was repeated to (--confidence to change)"
            )),
        ),
        Some(_) => (
            95.0,
            Some(format!(
                "the campaigns were repeated to different confidence levels ({}); intervals at 95% (--confidence to choose)",
                levels.iter().map(|l| format!("{l}%")).collect::<Vec<_>>().join(", ")
            )),
        ),
    }
}
