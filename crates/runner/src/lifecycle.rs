//! A campaign from start to end, below the command line: a new campaign (its record,
//! cells and hosts in the store, locked for this process), a resumed one (its stored
//! spec, history and target read back, locked), the profile axis (one campaign per
//! traffic profile), and running it to its end through the study crate's runner.
//! Every step returns a typed outcome; the binary prints and picks the exit status.

use crate::campaign::{
    cell_records, history_with_starts, lock_campaign, CampaignLockGuard, ProgressView,
    StoreJournal, TARGET_KEY,
};
use crate::target::{host_metadata, BusyCount, LabRequest, Peer, Target, TargetError, PEER_KEY};
use std::sync::atomic::AtomicBool;
use store::{DbTarget, Store, StoreError};
use study::{PastRun, StudyOutcome, StudySpec};

/// Why a campaign could not be made, resumed or run.
#[derive(Debug, thiserror::Error)]
pub enum CampaignError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("campaign {id} has a spec this dualperf cannot read")]
    UnreadableSpec {
        id: i64,
        #[source]
        source: study::SpecError,
    },
    #[error(
        "campaign {id} has a stored spec outside the limits of a study, so it is not run: {source}"
    )]
    SpecOutOfLimits { id: i64, source: study::SpecError },
    #[error("campaign {id} ran in a lab")]
    StoredLab {
        id: i64,
        #[source]
        source: TargetError,
    },
}

/// What the store records about a new campaign besides its spec.
#[derive(Debug, Clone, Default)]
pub struct CampaignInfo {
    /// The command line as typed (passwords redacted).
    pub command_line: String,
    pub created_unix_s: i64,
    pub dualperf_version: String,
    pub git_revision: String,
}

/// What a resumed campaign has left ([`OpenCampaign::left`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Left {
    /// Runs done (replayed), cells finished, runs left at least and at most.
    pub progress: study::Progress,
    /// Seconds per run at the recorded pace (`None` with fewer than two runs recorded);
    /// the time left is `study::schedule::time_left_s` at it.
    pub pace_s: Option<f64>,
}

/// A campaign this process holds the lock of, ready to run.
pub struct OpenCampaign {
    pub id: i64,
    pub spec: StudySpec,
    store: Store,
    past: Vec<PastRun>,
    /// When each of `past` started (Unix ns).
    past_starts: Vec<i64>,
    /// The hosts recorded so far (a resumed campaign's).
    hosts: Vec<store::HostInfo>,
    _lock: CampaignLockGuard,
    /// The lock a process on this host left when it died, taken over.
    pub took_over: Option<store::CampaignLock>,
}

impl OpenCampaign {
    /// Runs already recorded (by earlier invocations of a resumed campaign).
    pub fn past_runs(&self) -> usize {
        self.past.len()
    }

    /// What a resumed campaign has left, from replaying its recorded runs, and the pace
    /// those runs kept (`None`: nothing recorded, or nothing left).
    pub fn left(&self) -> Option<Left> {
        if self.past.is_empty() {
            return None;
        }
        let progress = study::Scheduler::new(&self.spec)
            .with_history(self.past.clone())
            .remaining()?;
        Some(Left {
            progress,
            pace_s: study::schedule::recorded_pace_s(&self.past_starts),
        })
    }

    /// Where the campaign's tests went, as its client metadata recorded it (a new
    /// campaign's: nothing).
    pub fn stored_target(&self) -> Result<StoredTarget, CampaignError> {
        stored_target(&self.hosts).map_err(|source| CampaignError::StoredLab {
            id: self.id,
            source,
        })
    }

    /// Records the lab `target` built for this campaign (a resumed campaign's lab is
    /// built again: same topology, rate and MTU; new namespaces).
    pub fn record_lab(&mut self, target: &Target) -> Result<(), StoreError> {
        if let Some(lab) = target.lab_host() {
            self.store.set_host(self.id, &lab)?;
        }
        Ok(())
    }
}

/// A new campaign of `spec` in `store`, with `client` as its client host record (see
/// `Target::initial_client_info`) and the target's lab, locked for this process.
pub fn create(
    mut store: Store,
    db: &DbTarget,
    spec: &StudySpec,
    target: &Target,
    client: &store::HostInfo,
    info: &CampaignInfo,
) -> Result<OpenCampaign, CampaignError> {
    // Without a label the campaign is named after the client's system.
    let label = if spec.label.is_empty() {
        default_label(&client.metadata)
    } else {
        spec.label.clone()
    };
    let id = store.create_campaign(&store::NewCampaign {
        label,
        created_unix_s: info.created_unix_s,
        command_line: info.command_line.clone(),
        spec_json: spec.to_json(),
        dualperf_version: info.dualperf_version.clone(),
        git_revision: info.git_revision.clone(),
    })?;
    let (lock, took_over) = lock_campaign(&mut store, db, id)?;
    store.add_cells(&cell_records(id, spec))?;
    store.set_host(id, client)?;
    let mut c = OpenCampaign {
        id,
        spec: spec.clone(),
        store,
        past: Vec::new(),
        past_starts: Vec::new(),
        hosts: Vec::new(),
        _lock: lock,
        took_over,
    };
    c.record_lab(target)?;
    Ok(c)
}

/// Where a campaign's tests went, as its client metadata recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTarget {
    /// None given: the embedded server or a lab.
    pub hosts: crate::Hosts,
    pub port: Option<u16>,
    pub lab: Option<LabRequest>,
    pub peer: Peer,
}

/// What resuming campaign `id` found.
pub enum Resumed {
    /// Nothing left to do.
    AlreadyFinished,
    /// Locked for this process.
    Open(Box<OpenCampaign>),
}

/// Campaign `id` of `store` read back to continue: its stored spec, the runs already
/// recorded (the runner's history) and its hosts; locked for this process.
pub fn resume(mut store: Store, db: &DbTarget, id: i64) -> Result<Resumed, CampaignError> {
    let campaign = store.campaign(id)?;
    let spec = StudySpec::from_json(&campaign.spec_json)
        .map_err(|source| CampaignError::UnreadableSpec { id, source })?;
    if campaign.finished {
        return Ok(Resumed::AlreadyFinished);
    }
    // The limits a spec from flags, a file or a preset keeps (a stored spec may have
    // been edited).
    spec.validate()
        .map_err(|source| CampaignError::SpecOutOfLimits { id, source })?;
    let (lock, took_over) = lock_campaign(&mut store, db, id)?;
    let (past, past_starts) = history_with_starts(&store, id)?;
    store.add_cells(&cell_records(id, &spec))?;
    Ok(Resumed::Open(Box::new(OpenCampaign {
        id,
        spec,
        store,
        past,
        past_starts,
        hosts: campaign.hosts,
        _lock: lock,
        took_over,
    })))
}

/// Where the tests of a campaign with these hosts went.
pub fn stored_target(hosts: &[store::HostInfo]) -> Result<StoredTarget, TargetError> {
    let client = host_metadata(hosts, "client");
    let mut t = StoredTarget {
        hosts: crate::Hosts::default(),
        port: None,
        lab: None,
        peer: match client.get(PEER_KEY).map(String::as_str) {
            Some("iperf3") => Peer::Iperf3,
            _ => Peer::Dualperf,
        },
    };
    match client.get(TARGET_KEY).map(String::as_str) {
        Some("lab") => {
            let lab = host_metadata(hosts, "lab");
            t.lab = Some(LabRequest::from_metadata(&lab)?);
            t.port = lab.get("lab.server_port").and_then(|p| p.parse().ok());
        }
        Some(where_) => {
            if let Some((host, port)) = where_.rsplit_once(' ') {
                t.hosts.host = Some(host.to_string());
                t.port = port.parse().ok();
            }
            // Each family's own server, where it differs from HOST (--host4/--host6).
            let own = |key: &str| {
                client
                    .get(key)
                    .filter(|h| Some(h.as_str()) != t.hosts.host.as_deref())
                    .cloned()
            };
            t.hosts.host4 = own(crate::hosts::TARGET_HOST4_KEY);
            t.hosts.host6 = own(crate::hosts::TARGET_HOST6_KEY);
        }
        None => {}
    }
    Ok(t)
}

/// How a campaign's run ended.
#[derive(Debug)]
pub enum End {
    /// Every cell ran; `failed_cells` got no successful run.
    Finished {
        outcome: StudyOutcome,
        failed_cells: usize,
    },
    /// Stopped by the stop flag (Ctrl-C); `--resume` continues it.
    Interrupted,
    /// The runner gave up (e.g. too many failures in a row, the store unwritable);
    /// `--resume` continues it.
    Stopped(String),
}

/// A campaign after its run: the store and the view back, how it ended, and the busy
/// answers of an iperf3 peer.
pub struct Ran<V> {
    pub id: i64,
    pub store: Store,
    pub view: V,
    pub end: End,
    pub busy: Option<BusyCount>,
}

/// Runs `campaign` on `target` to its end (or until `stop` is set), committing every
/// attempt to the store as it ends and showing progress through `view`; marks a
/// finished campaign so, and adds an iperf3 peer's busy answers to its metadata.
pub fn run<V: ProgressView>(
    campaign: OpenCampaign,
    target: &mut Target,
    view: V,
    stop: &AtomicBool,
) -> Result<Ran<V>, CampaignError> {
    let OpenCampaign {
        id,
        spec,
        store,
        past,
        _lock,
        ..
    } = campaign;
    let mut journal = StoreJournal::new(store, id, &spec, view);
    let result = study::Scheduler::new(&spec)
        .with_history(past)
        .with_stop_flag(stop)
        .run(target, &mut journal);
    let (mut store, view) = journal.into_parts();
    let busy = target.busy_count();
    if let Some(b) = busy {
        crate::target::iperf3::record_busy(&mut store, id, b)?;
    }
    let end = match result {
        Ok(outcome) => {
            store.set_finished(id, true)?;
            let failed_cells = outcome.cells.iter().filter(|c| c.ok_runs == 0).count();
            End::Finished {
                outcome,
                failed_cells,
            }
        }
        Err(study::ScheduleError::Interrupted) => End::Interrupted,
        Err(e) => End::Stopped(e.to_string()),
    };
    Ok(Ran {
        id,
        store,
        view,
        end,
        busy,
    })
}

/// A campaign without a label is named after the system that ran it, as the studies
/// name their columns ("Debian GNU/Linux 12 (bookworm), Linux 6.18.44"), so reports
/// comparing campaigns read as a comparison of systems; "unlabelled" if unknown.
pub fn default_label(client: &std::collections::BTreeMap<String, String>) -> String {
    let os = client
        .get("os.pretty_name")
        .or_else(|| client.get("os.name"))
        .filter(|v| !v.is_empty());
    let kernel = client.get("kernel.release").filter(|v| !v.is_empty());
    let label = match (os, kernel) {
        (Some(os), Some(k)) => format!("{os}, Linux {k}"),
        (Some(os), None) => os.clone(),
        (None, Some(k)) => format!("Linux {k}"),
        (None, None) => "unlabelled".to_string(),
    };
    // The metadata is this host's, but it is text from files: held to the entry limits
    // of a typed label (one line, no controls, at most MAX_NAME_CHARS characters).
    wire::text::terminal_safe_line(&label)
        .chars()
        .filter(|c| !c.is_control())
        .take(wire::text::MAX_NAME_CHARS)
        .collect()
}

/// `--profile A,B,…`, checked: the names in order, each once, none empty.
pub fn profile_names(list: &str) -> Result<Vec<String>, crate::ResolveError> {
    let names: Vec<&str> = list.split(',').map(str::trim).collect();
    if names.iter().any(|n| n.is_empty()) {
        return Err(crate::ResolveError::Option(format!(
            "--profile {list}: an empty name in the list (write e.g. voip-g711,voip-g729)"
        )));
    }
    for (i, n) in names.iter().enumerate() {
        if names[..i].iter().any(|m| m.eq_ignore_ascii_case(n)) {
            return Err(crate::ResolveError::Option(format!(
                "--profile {list}: {n} is listed twice"
            )));
        }
    }
    Ok(names.into_iter().map(str::to_string).collect())
}

/// The label of profile `name`'s campaign: after the study's `--label`, if given.
pub fn profile_label(label: Option<&str>, name: &str) -> String {
    match label {
        Some(l) => format!("{l} {name}"),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_campaign_without_a_label_is_named_after_its_system() {
        let md = |pairs: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let both = md(&[
            ("os.pretty_name", "Debian GNU/Linux 12 (bookworm)"),
            ("os.name", "Debian GNU/Linux"),
            ("kernel.release", "6.18.44"),
        ]);
        assert_eq!(
            default_label(&both),
            "Debian GNU/Linux 12 (bookworm), Linux 6.18.44"
        );
        assert_eq!(
            default_label(&md(&[("os.name", "Fedora Linux")])),
            "Fedora Linux"
        );
        assert_eq!(default_label(&md(&[])), "unlabelled");
        let hostile = "x".repeat(300) + "\r\\input{/etc/hostname}";
        let label = default_label(&md(&[("os.pretty_name", &hostile)]));
        assert_eq!(label.chars().count(), wire::text::MAX_NAME_CHARS);
        assert!(wire::text::check_name("label", &label).is_ok(), "{label}");
    }
}
