//! The studies' tables built from an [`Analysis`]: standard deviations by size × system ×
//! IP version, means over sizes with percentage differences, per-size comparisons with
//! their tests, and the best/better summary.

use crate::analysis::{Analysis, Comparison, ViewData};
use crate::format::{int_cell, num, num_cell, num_like, p_cell, pct_cell};
use crate::table::{Cell, Table};
use wire::spec::Family;

const FAMILIES: [Family; 2] = [Family::V4, Family::V6];

/// Columns "System IPv4", "System IPv6" for every system with data in the view.
fn systems_with_data(vd: &ViewData) -> Vec<usize> {
    (0..vd.systems.len())
        .filter(|&s| vd.cells.keys().any(|k| k.0 == s))
        .collect()
}

/// Standard deviation by packet size (rows) × system × IP version (columns).
pub fn sd_table(vd: &ViewData) -> Table {
    let systems = systems_with_data(vd);
    let mut columns = vec!["Packet size (bytes)".to_string()];
    for &s in &systems {
        for f in FAMILIES {
            columns.push(format!("{} {f}", vd.systems[s]));
        }
    }
    let mut n_min = usize::MAX;
    let mut n_max = 0;
    let rows = vd
        .sizes
        .iter()
        .map(|&size| {
            let mut row: Vec<Cell> = vec![int_cell(size)];
            for &s in &systems {
                for f in FAMILIES {
                    match vd.cell(s, f, size) {
                        Some(c) => {
                            n_min = n_min.min(c.summary.n);
                            n_max = n_max.max(c.summary.n);
                            row.push(num_cell(c.summary.sd));
                        }
                        None => row.push("".into()),
                    }
                }
            }
            row
        })
        .collect();
    let n_text = if n_min == n_max {
        format!("{n_min}")
    } else {
        format!("{n_min}–{n_max}")
    };
    Table {
        id: format!("{}-sd", vd.view.id),
        title: format!("Standard deviation of {} ({})", vd.view.title(), vd.view.unit),
        columns,
        rows,
        note: Some(format!(
            "Sample standard deviation over runs (n = {n_text} per cell; warm-up and failed runs excluded)."
        )),
    }
}

/// Means over all sizes per system and IP version, "IPv4 higher than IPv6 (%)", and a
/// row per further system "A higher than B (%)".
pub fn means_table(vd: &ViewData) -> Table {
    let systems = systems_with_data(vd);
    let unit = vd.view.unit;
    let columns = vec![
        "System".to_string(),
        format!("IPv4 mean ({unit})"),
        format!("IPv6 mean ({unit})"),
        "IPv4 higher than IPv6 (%)".to_string(),
    ];
    let mut rows = Vec::new();
    for &s in &systems {
        let m4 = vd.mean_over_sizes(s, Family::V4).unwrap_or(f64::NAN);
        let m6 = vd.mean_over_sizes(s, Family::V6).unwrap_or(f64::NAN);
        rows.push(vec![
            vd.systems[s].clone().into(),
            num_cell(m4),
            num_cell(m6),
            pct_cell((m4 - m6) / m6.abs() * 100.0),
        ]);
    }
    if let Some((&first, others)) = systems.split_first() {
        for &other in others {
            let mut row: Vec<Cell> = vec![format!(
                "{} higher than {} (%)",
                vd.systems[first], vd.systems[other]
            )
            .into()];
            for f in FAMILIES {
                let a = vd.mean_over_sizes(first, f).unwrap_or(f64::NAN);
                let b = vd.mean_over_sizes(other, f).unwrap_or(f64::NAN);
                row.push(pct_cell((a - b) / b.abs() * 100.0));
            }
            row.push("".into());
            rows.push(row);
        }
    }
    Table {
        id: format!("{}-means", vd.view.id),
        title: format!("Mean {} over all packet sizes ({unit})", vd.view.title()),
        columns,
        rows,
        note: Some(format!(
            "Mean of the per-size means over {} sizes; a negative percentage means lower.",
            vd.sizes.len()
        )),
    }
}

/// Per-size detail of a set of comparisons (IPv4 vs IPv6, or system vs system).
pub fn comparison_table(
    vd: &ViewData,
    comparisons: &[Comparison],
    id_suffix: &str,
    title: &str,
    context_column: &str,
    level: f64,
    alpha: f64,
) -> Table {
    let unit = vd.view.unit;
    let ci_pct = format!("{:.0}%", level * 100.0);
    let mut columns = vec![
        "Packet size (bytes)".to_string(),
        context_column.to_string(),
        "A".to_string(),
        "B".to_string(),
        format!("A mean ± {ci_pct} CI ({unit})"),
        format!("B mean ± {ci_pct} CI ({unit})"),
        format!("A − B ({unit})"),
        format!("{ci_pct} CI of A − B"),
        "A higher than B (%)".to_string(),
        "Welch p".to_string(),
    ];
    if vd.view.rank_test {
        columns.push("Mann-Whitney p".to_string());
    }
    columns.extend([
        "Holm p".to_string(),
        "Hedges' g".to_string(),
        "Significant".to_string(),
    ]);
    let mut rows = Vec::new();
    for cmp in comparisons {
        for pt in &cmp.points {
            let mean_ci = |s: &stats::Summary| {
                format!(
                    "{} ± {}",
                    num(s.mean),
                    num_like(s.ci_half_width(level), s.mean)
                )
            };
            let (lo, hi) = pt.welch.ci(level);
            let mut row: Vec<Cell> = vec![
                int_cell(pt.payload_bytes),
                cmp.context.clone().into(),
                cmp.a.clone().into(),
                cmp.b.clone().into(),
                mean_ci(&pt.a).into(),
                mean_ci(&pt.b).into(),
                num_cell(pt.welch.diff),
                format!(
                    "[{}, {}]",
                    num_like(lo, pt.welch.diff),
                    num_like(hi, pt.welch.diff)
                )
                .into(),
                pct_cell(pt.diff_pct()),
                p_cell(pt.welch.p),
            ];
            if vd.view.rank_test {
                row.push(p_cell(pt.mann_whitney.map_or(f64::NAN, |m| m.p)));
            }
            row.push(p_cell(pt.p_holm));
            row.push(num_cell(pt.hedges_g));
            row.push(
                if pt.p_holm < alpha {
                    "yes"
                } else if pt.p_holm.is_nan() {
                    "–"
                } else {
                    "no"
                }
                .into(),
            );
            rows.push(row);
        }
    }
    Table {
        id: format!("{}-{id_suffix}", vd.view.id),
        title: format!("{title}: {}", vd.view.title()),
        columns,
        rows,
        note: Some(format!(
            "Primary test: {}; Holm correction across the sizes of each comparison; significant = Holm p < {alpha}. \
             Hedges' g is the standardised difference A − B.",
            vd.view.test_name()
        )),
    }
}

/// Which system and IP version is best, and which IP version is better within each
/// system, per metric (the studies' summary table, one row per metric).
pub fn summary_table(analysis: &Analysis) -> Table {
    let alpha = analysis.options.alpha;
    let mut columns = vec!["Metric".to_string()];
    for s in &analysis.systems {
        for f in [Family::V6, Family::V4] {
            columns.push(format!("{s} {f}"));
        }
    }
    columns.push("Best".to_string());
    let mut rows = Vec::new();
    for vd in &analysis.views {
        let mut row: Vec<Cell> = vec![vd.view.title().into()];
        let better = |a: f64, b: f64| {
            if vd.view.higher_is_better {
                a > b
            } else {
                a < b
            }
        };
        let mut best: Option<(usize, Family, f64)> = None;
        for s in 0..analysis.systems.len() {
            for f in FAMILIES {
                if let Some(m) = vd.mean_over_sizes(s, f) {
                    let replaces = match best {
                        None => true,
                        Some((_, _, bm)) => better(m, bm),
                    };
                    if replaces {
                        best = Some((s, f, m));
                    }
                }
            }
        }
        for (s, label) in analysis.systems.iter().enumerate() {
            let m4 = vd.mean_over_sizes(s, Family::V4);
            let m6 = vd.mean_over_sizes(s, Family::V6);
            let cmp = vd.family_cmp.iter().find(|c| &c.context == label);
            let differs = cmp.is_some_and(|c| c.significant(alpha) > 0);
            for f in [Family::V6, Family::V4] {
                let mark = match (m4, m6) {
                    _ if best.is_some_and(|(bs, bf, _)| bs == s && bf == f) => "best",
                    (Some(_), Some(_)) if !differs => "no difference",
                    (Some(a), Some(b)) => {
                        let v4_better = better(a, b);
                        if (f == Family::V4) == v4_better {
                            "better"
                        } else {
                            ""
                        }
                    }
                    _ => "",
                };
                row.push(mark.into());
            }
        }
        row.push(match best {
            Some((s, f, _)) => format!("{} {f}", analysis.systems[s]).into(),
            None => "".into(),
        });
        rows.push(row);
    }
    Table {
        id: "summary".to_string(),
        title: "Summary: best and better per metric".to_string(),
        columns,
        rows,
        note: Some(format!(
            "best = best mean over all sizes of all systems and IP versions; better = the better IP \
             version within a system; no difference = IPv4 and IPv6 did not differ significantly \
             (Holm p ≥ {alpha}) at any size."
        )),
    }
}
