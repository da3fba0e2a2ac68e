//! Where the numbers come from: one line per campaign saying where its tests ran (the
//! report's first lines), runs per campaign (counted, warm-up, failed) and each
//! campaign's recorded facts and host metadata.

use crate::dataset::{CampaignData, Dataset, RunOutcome};
use crate::table::{Cell, Table};
use std::collections::BTreeSet;

/// Runs per campaign.
pub fn runs_table(data: &Dataset, labels: &[String]) -> Table {
    let rows = data
        .campaigns
        .iter()
        .zip(labels)
        .map(|(c, label)| {
            let counted = c.runs.iter().filter(|r| r.counts()).count();
            let warmup = c.runs.iter().filter(|r| r.warmup).count();
            let failed: Vec<&str> = c
                .runs
                .iter()
                .filter_map(|r| match &r.outcome {
                    RunOutcome::Failed(reason) => Some(reason.as_str()),
                    RunOutcome::Ok => None,
                })
                .collect();
            vec![
                Cell::from(label.as_str()),
                c.id.to_string().into(),
                counted.to_string().into(),
                warmup.to_string().into(),
                failed.len().to_string().into(),
                failed.first().copied().unwrap_or("").into(),
            ]
        })
        .collect();
    Table {
        id: "runs".to_string(),
        title: "Runs per campaign".to_string(),
        columns: [
            "System",
            "Campaign",
            "Runs counted",
            "Warm-up runs",
            "Failed runs",
            "First failure",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
        note: Some(
            "Warm-up and failed runs are kept in the database but excluded from every statistic."
                .into(),
        ),
    }
}

/// One campaign's facts and host metadata: field × host role.
pub fn metadata_table(c: &CampaignData, label: &str, index: usize) -> Table {
    let roles: Vec<&String> = c.hosts.keys().collect();
    let mut columns = vec!["Field".to_string()];
    columns.extend(roles.iter().map(|r| r.to_string()));
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for (k, v) in &c.facts {
        let mut row: Vec<Cell> = vec![k.as_str().into(), v.as_str().into()];
        row.extend((1..roles.len()).map(|_| Cell::from("")));
        rows.push(row);
    }
    let keys: BTreeSet<&String> = c.hosts.values().flat_map(|m| m.keys()).collect();
    for key in keys {
        let mut row: Vec<Cell> = vec![key.as_str().into()];
        for role in &roles {
            let v = c
                .hosts
                .get(*role)
                .and_then(|m| m.get(key))
                .map_or("", |s| s.as_str());
            row.push(v.into());
        }
        rows.push(row);
    }
    if roles.is_empty() {
        columns.push("Value".to_string());
    }
    Table {
        id: format!("metadata-{}", index + 1),
        title: format!("System under test: {label} (campaign {})", c.id),
        columns,
        rows,
        note: None,
    }
}

/// Where one campaign's tests ran, in one line for the top of the report: loopback
/// against the built-in server, a network-namespace lab with its shaping, or a server
/// on a host (dualperf or iperf3); with the CPU pinning recorded, or none.
pub fn where_it_ran(c: &CampaignData, label: &str) -> String {
    let client = c.hosts.get("client");
    let get = |k: &str| client.and_then(|m| m.get(k)).map(|v| v.trim().to_string());
    let target = get("study.target").unwrap_or_default();
    let peer = get("study.peer").unwrap_or_else(|| "dualperf".to_string());
    let place = if target == "embedded" {
        "on loopback (127.0.0.1 and ::1), against the dualperf server built into the same process"
            .to_string()
    } else if target == "lab" {
        let lab = c.hosts.get("lab");
        let lab_get = |k: &str| lab.and_then(|m| m.get(k)).map(|v| v.trim().to_string());
        let shaping = lab_get("lab.shaping").unwrap_or_else(|| "unshaped".to_string());
        format!(
            "in a network-namespace lab on one machine ({} topology, shaping: {shaping}{}), \
             against a dualperf server in the lab",
            lab_get("lab.topology").unwrap_or_else(|| "veth".to_string()),
            lab_get("lab.mtu_bytes")
                .map(|m| format!(", MTU {m} bytes"))
                .unwrap_or_default()
        )
    } else if let Some(host) = target.split_whitespace().next().filter(|h| !h.is_empty()) {
        format!("against the {peer} server at {host}, over the network between the two hosts")
    } else {
        "where it ran was not recorded (a campaign made before dualperf recorded it)".to_string()
    };
    let pinning = get("study.cpu_pinning")
        .map(|p| format!("CPU pinning: {p}"))
        .unwrap_or_else(|| "no CPU pinning".to_string());
    let line = format!("{label} (campaign {}): {place}; {pinning}.", c.id);
    wire::text::terminal_safe_line(&line).into_owned()
}

/// Host CPU busy % at or above which a campaign's idle baseline says other load was
/// present.
pub const BUSY_BASELINE_PCT: f64 = 10.0;

/// Warnings for campaigns whose host was already busy before their first run (the idle
/// baseline `study.idle_cpu_busy_pct`): their host CPU figures include that load.
pub fn busy_host_warnings(data: &Dataset, labels: &[String]) -> Vec<String> {
    data.campaigns
        .iter()
        .zip(labels)
        .filter_map(|(c, label)| {
            let busy: f64 = c
                .hosts
                .get("client")?
                .get("study.idle_cpu_busy_pct")?
                .trim()
                .parse()
                .ok()
                .filter(|b: &f64| b.is_finite() && *b >= BUSY_BASELINE_PCT)?;
            Some(format!(
                "{label}: the client host was already {busy:.1} % busy (all cores) in the half \
                 second before the first run, with nothing of dualperf's running: its host CPU \
                 busy figures include that other load. The client process's own CPU is the \
                 tool's cost."
            ))
        })
        .collect()
}
