//! The header-overhead part of the report: expected IPv6/IPv4 goodput ratio from the
//! overhead model beside the measured one, how much of the measured gap the headers
//! explain, and (given a link rate) efficiency = measured / highest possible goodput.

use crate::analysis::{Analysis, ViewData};
use crate::format::{int_cell, num_cell, pct, pct_cell};
use crate::table::{Cell, Table};
use stats::{header_share_of_gap, OverheadModel};
use wire::metrics;
use wire::spec::Family;

/// Throughput views (the ones the overhead model speaks about).
pub fn throughput_views(analysis: &Analysis) -> impl Iterator<Item = &ViewData> {
    analysis
        .views
        .iter()
        .filter(|v| v.view.metric == metrics::THROUGHPUT_BPS)
}

/// Measured IPv6/IPv4 ratio of mean throughput for one system and size.
pub fn measured_ratio(vd: &ViewData, system: usize, size: u32) -> Option<f64> {
    let v4 = vd.cell(system, Family::V4, size)?.summary.mean;
    let v6 = vd.cell(system, Family::V6, size)?.summary.mean;
    (v4 > 0.0 && v6.is_finite()).then_some(v6 / v4)
}

/// "1 Gbit/s", "100 Mbit/s", "2.5 Gbit/s".
pub fn rate_text(bps: f64) -> String {
    let (v, unit) = if bps >= 1e9 {
        (bps / 1e9, "Gbit/s")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mbit/s")
    } else if bps >= 1e3 {
        (bps / 1e3, "kbit/s")
    } else {
        (bps, "bit/s")
    };
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

fn model_text(model: &OverheadModel) -> String {
    format!("{}, MTU {} bytes", model.link.name(), model.mtu_bytes)
}

/// A table note, followed by where the link model came from when that is known.
fn with_source(note: &str, model: &OverheadModel, source: Option<&str>) -> String {
    match source {
        None => note.to_string(),
        Some(src) => format!("{note} Link model: {} ({src}).", model_text(model)),
    }
}

/// Model vs measurement per transport and size.
/// `source` says where the model came from (e.g. "from the lab metadata"), if known.
pub fn overhead_table(
    analysis: &Analysis,
    model: &OverheadModel,
    source: Option<&str>,
) -> Option<Table> {
    let views: Vec<&ViewData> = throughput_views(analysis).collect();
    if views.is_empty() {
        return None;
    }
    let mut columns: Vec<String> = [
        "Test",
        "Packet size (bytes)",
        "IPv4 frame (bytes)",
        "IPv6 frame (bytes)",
        "IPv4 line bytes per payload byte",
        "IPv6 line bytes per payload byte",
        "Expected IPv6/IPv4",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in &analysis.systems {
        columns.push(format!("{s} measured IPv6/IPv4"));
        columns.push(format!("{s} gap explained by headers (%)"));
    }
    let mut rows = Vec::new();
    for vd in views {
        for &size in &vd.sizes {
            let c4 = model.cost(Family::V4, vd.view.kind, size);
            let c6 = model.cost(Family::V6, vd.view.kind, size);
            let expected = c6.efficiency() / c4.efficiency();
            let mut row: Vec<Cell> = vec![
                vd.view.title().into(),
                int_cell(size),
                int_cell(c4.frame_bytes),
                int_cell(c6.frame_bytes),
                num_cell(c4.line_bytes_per_payload_byte()),
                num_cell(c6.line_bytes_per_payload_byte()),
                Cell::Num {
                    text: format!("{expected:.4}"),
                    value: expected,
                },
            ];
            for s in 0..analysis.systems.len() {
                match measured_ratio(vd, s, size) {
                    Some(r) => {
                        row.push(Cell::Num {
                            text: format!("{r:.4}"),
                            value: r,
                        });
                        let significant = vd
                            .family_cmp
                            .iter()
                            .find(|c| c.context == analysis.systems[s])
                            .and_then(|c| c.points.iter().find(|p| p.payload_bytes == size))
                            .is_some_and(|p| p.p_holm < analysis.options.alpha);
                        let share = header_share_of_gap(expected, r).map(|x| x * 100.0);
                        row.push(match share {
                            None => "no gap".into(),
                            Some(_) if !significant => "n.s.".into(),
                            Some(x) => pct_cell(x),
                        });
                    }
                    None => {
                        row.push("".into());
                        row.push("".into());
                    }
                }
            }
            rows.push(row);
        }
    }
    Some(Table {
        id: "header-overhead".to_string(),
        title: format!("Header overhead: expected and measured IPv6/IPv4 throughput ({})", model_text(model)),
        columns,
        rows,
        note: Some(with_source(
            "Frame = the largest frame as the link counts it; line bytes include every header, \
             framing, preamble and gap (bulk TCP in full-MSS segments with 12 bytes of timestamps). \
             Expected ratio = IPv6 / IPv4 goodput when the link is the bottleneck. Gap explained = \
             (1 − expected) / (1 − measured); 100% means the headers account for all of the \
             measured IPv6 shortfall, more than 100% that IPv6 lost less than the headers predict; \
             'no gap' = IPv6 was not slower; 'n.s.' = the IPv4/IPv6 difference is not significant.",
            model,
            source,
        )),
    })
}

/// Efficiency = measured / highest possible goodput at `link_rate_bps`.
pub fn efficiency_table(
    analysis: &Analysis,
    model: &OverheadModel,
    link_rate_bps: f64,
    source: Option<&str>,
) -> Option<Table> {
    let views: Vec<&ViewData> = throughput_views(analysis).collect();
    if views.is_empty() {
        return None;
    }
    let mut columns: Vec<String> = vec![
        "Test".into(),
        "Packet size (bytes)".into(),
        "IPv4 highest goodput (Mbit/s)".into(),
        "IPv6 highest goodput (Mbit/s)".into(),
    ];
    for s in &analysis.systems {
        columns.push(format!("{s} IPv4 efficiency (%)"));
        columns.push(format!("{s} IPv6 efficiency (%)"));
    }
    let mut rows = Vec::new();
    for vd in views {
        for &size in &vd.sizes {
            let max4 = model
                .cost(Family::V4, vd.view.kind, size)
                .max_goodput_bps(link_rate_bps)
                * vd.view.scale;
            let max6 = model
                .cost(Family::V6, vd.view.kind, size)
                .max_goodput_bps(link_rate_bps)
                * vd.view.scale;
            let mut row: Vec<Cell> = vec![
                vd.view.title().into(),
                int_cell(size),
                num_cell(max4),
                num_cell(max6),
            ];
            for s in 0..analysis.systems.len() {
                for (f, max) in [(Family::V4, max4), (Family::V6, max6)] {
                    row.push(match vd.cell(s, f, size) {
                        Some(c) => pct_cell(c.summary.mean / max * 100.0),
                        None => "".into(),
                    });
                }
            }
            rows.push(row);
        }
    }
    Some(Table {
        id: "efficiency".to_string(),
        title: format!(
            "Efficiency at a link rate of {} ({})",
            rate_text(link_rate_bps),
            model_text(model)
        ),
        columns,
        rows,
        note: Some(with_source(
            "Efficiency = measured mean throughput / highest goodput the link rate allows after headers and framing.",
            model,
            source,
        )),
    })
}

/// Sentences on how much of the IPv6 throughput gap the headers explain, per system
/// and transport, averaged over sizes.
pub fn header_sentences(analysis: &Analysis, model: &OverheadModel) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for vd in throughput_views(analysis) {
        for (s, label) in analysis.systems.iter().enumerate() {
            let pairs: Vec<(f64, f64)> = vd
                .sizes
                .iter()
                .filter_map(|&size| {
                    let measured = measured_ratio(vd, s, size)?;
                    Some((model.expected_v6_v4_ratio(vd.view.kind, size), measured))
                })
                .collect();
            if pairs.is_empty() {
                continue;
            }
            let n = pairs.len() as f64;
            let expected = pairs.iter().map(|p| p.0).sum::<f64>() / n;
            let measured = pairs.iter().map(|p| p.1).sum::<f64>() / n;
            let on = if analysis.systems.len() > 1 {
                format!(" on {label}")
            } else {
                String::new()
            };
            let text = match header_share_of_gap(expected, measured) {
                Some(share) if share > 1.0 => format!(
                    "The IPv6 {} shortfall{on} is smaller than header sizes alone predict: the {} model expects IPv6 to reach {}% of IPv4, it reached {}% (averaged over {} sizes).",
                    vd.view.title(),
                    model.link.name(),
                    pct(expected * 100.0),
                    pct(measured * 100.0),
                    pairs.len()
                ),
                Some(share) => format!(
                    "Header sizes explain {}% of the IPv6 {} shortfall{on}: the {} model expects IPv6 to reach {}% of IPv4, it reached {}% (averaged over {} sizes).",
                    pct(share * 100.0),
                    vd.view.title(),
                    model.link.name(),
                    pct(expected * 100.0),
                    pct(measured * 100.0),
                    pairs.len()
                ),
                None => format!(
                    "IPv6 {}{on} was not below IPv4 (IPv6 reached {}% of IPv4 averaged over {} sizes), although the {} model expects {}% from header sizes alone.",
                    vd.view.title(),
                    pct(measured * 100.0),
                    pairs.len(),
                    model.link.name(),
                    pct(expected * 100.0)
                ),
            };
            let cmp = vd.family_cmp.iter().find(|c| &c.context == label);
            let significant = cmp.map_or(0, |c| c.significant(analysis.options.alpha));
            let sizes = cmp.map_or(0, |c| c.points.len());
            let text = if significant == 0 {
                format!(
                    "{} The IPv4/IPv6 difference itself is not significant at any size, so this is no evidence of a real gap.",
                    text
                )
            } else {
                text
            };
            let evidence = format!(
                "Table header-overhead ({}); per-size expected and measured ratios; the IPv4/IPv6 difference is significant at {significant} of {sizes} sizes.",
                model_text(model)
            );
            out.push((text, evidence));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{analyse, AnalysisOptions};
    use crate::dataset::{CampaignData, Dataset, RunOutcome, RunRow};
    use wire::spec::{Direction, TestKind};

    fn data(v4: [f64; 5], v6: [f64; 5]) -> Dataset {
        let run = |family, mbit: f64| RunRow {
            family,
            kind: TestKind::UdpStream,
            direction: Direction::Forward,
            payload_bytes: 1408,
            repetition: 0,
            warmup: false,
            outcome: RunOutcome::Ok,
            metrics: [(metrics::THROUGHPUT_BPS.to_string(), mbit * 1e6)].into(),
        };
        let mut runs: Vec<RunRow> = v4.iter().map(|&m| run(Family::V4, m)).collect();
        runs.extend(v6.iter().map(|&m| run(Family::V6, m)));
        Dataset {
            campaigns: vec![CampaignData {
                id: 1,
                label: "A".into(),
                runs,
                ..Default::default()
            }],
        }
    }

    #[test]
    fn headers_explain_part_of_a_real_gap() {
        let d = data(
            [100.0, 100.2, 99.8, 100.1, 99.9],
            [90.0, 90.2, 89.8, 90.1, 89.9],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let s = header_sentences(&a, &OverheadModel::ethernet());
        assert_eq!(s.len(), 1);
        // Expected 1454/1474 · … : 1 − 0.98660 = 0.01340 of a measured 0.10 gap = 13.4%.
        assert!(
            s[0].0
                .starts_with("Header sizes explain 13.4% of the IPv6 UDP throughput shortfall"),
            "{}",
            s[0].0
        );
        assert!(!s[0].0.contains("not significant"), "{}", s[0].0);
    }

    #[test]
    fn a_gap_that_is_not_significant_is_said_to_be_no_evidence() {
        let d = data(
            [100.0, 60.0, 140.0, 80.0, 120.0],
            [95.0, 55.0, 135.0, 75.0, 115.0],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let s = header_sentences(&a, &OverheadModel::ethernet());
        assert!(s[0].0.contains("not significant at any size"), "{}", s[0].0);
        let t = overhead_table(&a, &OverheadModel::ethernet(), None).map(|t| t.to_markdown());
        assert!(t.is_some_and(|md| md.contains("n.s.") && !md.contains("Link model:")));
    }

    #[test]
    fn tables_say_where_the_link_model_came_from() {
        let d = data(
            [100.0, 60.0, 140.0, 80.0, 120.0],
            [95.0, 55.0, 135.0, 75.0, 115.0],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let model = OverheadModel::tbf_veth();
        let src = Some("from the lab metadata");
        for t in [
            overhead_table(&a, &model, src),
            efficiency_table(&a, &model, 5e7, src),
        ] {
            let md = t.map(|t| t.to_markdown()).unwrap_or_default();
            assert!(
                md.contains("Link model: tbf-shaped veth, MTU 1500 bytes (from the lab metadata)"),
                "{md}"
            );
        }
    }

    #[test]
    fn rates_read_naturally() {
        assert_eq!(rate_text(1e9), "1 Gbit/s");
        assert_eq!(rate_text(2.5e9), "2.5 Gbit/s");
        assert_eq!(rate_text(1e8), "100 Mbit/s");
    }
}
