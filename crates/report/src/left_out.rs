//! The runs a report did not count because a stored value could not be a measurement
//! (see [`crate::dataset::implausible`]): one table, present only when there are such
//! runs, so a report of sound data is unchanged.

use crate::dataset::{Dataset, LEFT_OUT_LISTED};
use crate::table::{Cell, Table};

/// "Runs left out" of each campaign with the reason; `None` when none were.
pub fn table(data: &Dataset, labels: &[String]) -> Option<Table> {
    let mut rows = Vec::new();
    let mut unlisted = 0;
    for (c, label) in data.campaigns.iter().zip(labels) {
        for r in &c.left_out {
            rows.push(vec![
                Cell::from(label.as_str()),
                r.run_id.to_string().into(),
                r.kind.name().into(),
                r.family.to_string().into(),
                r.payload_bytes.to_string().into(),
                r.reason.clone().into(),
            ]);
        }
        unlisted += c.left_out_total.saturating_sub(c.left_out.len());
    }
    if rows.is_empty() {
        return None;
    }
    let mut note = "Each run holds a stored value that cannot be a measurement (checked as a \
                    peer's values are: not finite, a negative rate or RTT, loss outside 0–100 %, \
                    CPU outside 0–100 %, a process above 100 % × cores): it is counted in no \
                    table, figure or test. Find it with dualperf export."
        .to_string();
    if unlisted > 0 {
        note.push_str(&format!(
            " {unlisted} more such runs are not listed (at most {LEFT_OUT_LISTED} per campaign)."
        ));
    }
    Some(Table {
        id: "runs-left-out".to_string(),
        title: "Runs left out".to_string(),
        columns: ["System", "Run", "Test", "IP", "Size (B)", "Why"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows,
        note: Some(note),
    })
}
