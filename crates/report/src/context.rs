//! Tables about where the numbers come from: runs per campaign (counted, warm-up,
//! failed) and each campaign's recorded facts and host metadata.

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
