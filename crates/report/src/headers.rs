//! The header-overhead part of the report: expected IPv6/IPv4 goodput ratio from the
//! overhead model beside the measured one, how much of the measured gap the headers
//! explain, and (given a link rate) efficiency = measured / highest possible goodput.

use crate::analysis::{Analysis, ViewData};
use crate::format::{int_cell, num_cell, pct, pct_cell};
use crate::table::{Cell, Table};
use stats::OverheadModel;
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

/// How much of one size's IPv6 shortfall the headers explain, or why it is not said.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GapShare {
    /// No link rate: the link is not known to be the bottleneck.
    NoLinkRate,
    /// A measured mean is above the highest goodput the link rate allows.
    NotBottleneck,
    NotSignificant,
    /// IPv6 was not slower.
    NoGap,
    /// Share of the gap (1 = all), with its range from the CI of the difference
    /// (IPv4's own uncertainty ignored; `hi` is ∞ when the CI reaches zero).
    Share {
        share: f64,
        lo: f64,
        hi: f64,
    },
}

impl GapShare {
    pub fn cell(self) -> Cell {
        match self {
            GapShare::NoLinkRate => "no link rate".into(),
            GapShare::NotBottleneck => "not the bottleneck".into(),
            GapShare::NotSignificant => "n.s.".into(),
            GapShare::NoGap => "no gap".into(),
            GapShare::Share { share, lo, hi } => Cell::Num {
                text: format!(
                    "{} [{}, {}]",
                    pct(share * 100.0),
                    pct(lo * 100.0),
                    pct(hi * 100.0)
                ),
                value: share * 100.0,
            },
        }
    }
}

/// Whether a measured mean exceeds what the link rate allows (efficiency > 100 %).
fn above_link(
    vd: &ViewData,
    model: &OverheadModel,
    link_rate_bps: f64,
    system: usize,
    size: u32,
) -> bool {
    [Family::V4, Family::V6].into_iter().any(|f| {
        let max = model
            .cost(f, vd.view.kind, size)
            .max_goodput_bps(link_rate_bps)
            * vd.view.scale;
        vd.cell(system, f, size)
            .is_some_and(|c| c.summary.mean > max)
    })
}

/// The header share of one system's IPv6 gap at one size; `None` without both cells.
pub fn gap_share(
    analysis: &Analysis,
    vd: &ViewData,
    model: &OverheadModel,
    link_rate_bps: Option<f64>,
    system: usize,
    size: u32,
) -> Option<GapShare> {
    let point = vd
        .family_cmp
        .iter()
        .find(|c| c.context == analysis.systems[system])
        .and_then(|c| c.points.iter().find(|p| p.payload_bytes == size))?;
    let Some(rate) = link_rate_bps else {
        return Some(GapShare::NoLinkRate);
    };
    if above_link(vd, model, rate, system, size) {
        return Some(GapShare::NotBottleneck);
    }
    if !point.significant(analysis.options.alpha) {
        return Some(GapShare::NotSignificant);
    }
    let v4 = point.a.mean;
    let diff = point.welch.diff; // IPv4 − IPv6
    if diff <= 0.0 || v4 <= 0.0 {
        return Some(GapShare::NoGap);
    }
    let header_gap = 1.0 - model.expected_v6_v4_ratio(vd.view.kind, size);
    let (lo, hi) = point.welch.ci(analysis.options.confidence);
    let share = header_gap * v4 / diff;
    let share_lo = header_gap * v4 / hi;
    let share_hi = if lo > 0.0 {
        header_gap * v4 / lo
    } else {
        f64::INFINITY
    };
    Some(GapShare::Share {
        share,
        lo: share_lo,
        hi: share_hi,
    })
}

/// Warnings for every system and size measured above what the link rate allows: the
/// link rate is then not the bottleneck, and no efficiency or header share is given.
pub fn efficiency_warnings(
    analysis: &Analysis,
    model: &OverheadModel,
    link_rate_bps: f64,
) -> Vec<String> {
    let mut out = Vec::new();
    for vd in throughput_views(analysis) {
        for (s, label) in analysis.systems.iter().enumerate() {
            let sizes: Vec<u32> = vd
                .sizes
                .iter()
                .copied()
                .filter(|&z| above_link(vd, model, link_rate_bps, s, z))
                .collect();
            if !sizes.is_empty() {
                out.push(format!(
                    "{} on {label} measured more than a link of {} can carry at {}: the link rate is not the bottleneck there (or is wrong), so efficiency and the header share of the gap are not given. Check --link-rate.",
                    vd.view.title(),
                    rate_text(link_rate_bps),
                    crate::findings::sizes_list(&sizes)
                ));
            }
        }
    }
    out
}

/// Model vs measurement per transport and size.
/// `source` says where the model came from (e.g. "from the lab metadata"), if known.
pub fn overhead_table(
    analysis: &Analysis,
    model: &OverheadModel,
    link_rate_bps: Option<f64>,
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
                        row.push(
                            match gap_share(analysis, vd, model, link_rate_bps, s, size) {
                                Some(g) => g.cell(),
                                None => "".into(),
                            },
                        );
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
             (1 − expected) / (1 − measured), only where the IPv4/IPv6 difference is significant and \
             a byte-rate link is the bottleneck (a shaped lab, or --link-rate, with efficiency at most \
             100%); in brackets its range from the confidence interval of the difference. 100% means \
             the headers account for all of the measured IPv6 shortfall; 'no gap' = IPv6 was not \
             slower; 'n.s.' = the difference is not significant; 'no link rate' = the link is not \
             known to be the bottleneck; 'not the bottleneck' = measured above what the link rate \
             allows.",
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
                        Some(c) if c.summary.mean > max => "> 100%: not the bottleneck".into(),
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
            "Efficiency = measured mean throughput / highest goodput the link rate allows after headers and framing. \
             A mean above that is no efficiency but a sign that the link rate is not the bottleneck.",
            model,
            source,
        )),
    })
}

/// Sentences on the IPv6 throughput gap against header sizes, per system and
/// transport. A share of the gap is attributed to the headers only at sizes where the
/// gap is significant and a byte-rate link is the bottleneck (see [`gap_share`]).
pub fn header_sentences(
    analysis: &Analysis,
    model: &OverheadModel,
    link_rate_bps: Option<f64>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for vd in throughput_views(analysis) {
        for (s, label) in analysis.systems.iter().enumerate() {
            let on = if analysis.systems.len() > 1 {
                format!(" on {label}")
            } else {
                String::new()
            };
            let offered = analysis
                .offered_load
                .get(s)
                .and_then(|o| o.get(&vd.view.kind));
            if let Some(why) = offered {
                out.push((
                    format!(
                        "The header-overhead comparison does not apply to {}{on}: {why}, not what the path could carry.",
                        vd.view.title()
                    ),
                    "Header sizes decide throughput only where the link is the bottleneck; a sender on its own schedule never met it.".to_string(),
                ));
                continue;
            }
            let pairs: Vec<(u32, f64, f64)> = vd
                .sizes
                .iter()
                .filter_map(|&size| {
                    let measured = measured_ratio(vd, s, size)?;
                    Some((
                        size,
                        model.expected_v6_v4_ratio(vd.view.kind, size),
                        measured,
                    ))
                })
                .collect();
            if pairs.is_empty() {
                continue;
            }
            let n = pairs.len() as f64;
            let expected = pairs.iter().map(|p| p.1).sum::<f64>() / n;
            let measured = pairs.iter().map(|p| p.2).sum::<f64>() / n;
            let mut text = format!(
                "Header sizes alone ({} model) predict IPv6 {}{on} at {}% of IPv4 when the link is the bottleneck; it reached {}% (mean over {} sizes).",
                model.link.name(),
                vd.view.title(),
                pct(expected * 100.0),
                pct(measured * 100.0),
                pairs.len()
            );
            match link_rate_bps {
                None => text.push_str(
                    " No share of the gap is attributed to the headers: without a link rate (a shaped lab, or --link-rate) the link is not known to be the bottleneck.",
                ),
                Some(rate) => {
                    let shares: Vec<(u32, GapShare)> = pairs
                        .iter()
                        .filter_map(|p| Some((p.0, gap_share(analysis, vd, model, Some(rate), s, p.0)?)))
                        .collect();
                    let explained: Vec<String> = shares
                        .iter()
                        .filter_map(|(size, g)| match g {
                            GapShare::Share { share, lo, hi } => Some(format!(
                                "{}% [{}, {}] at {size} bytes",
                                pct(share * 100.0),
                                pct(lo * 100.0),
                                pct(hi * 100.0)
                            )),
                            _ => None,
                        })
                        .collect();
                    let over: Vec<u32> = shares
                        .iter()
                        .filter(|(_, g)| *g == GapShare::NotBottleneck)
                        .map(|(z, _)| *z)
                        .collect();
                    if explained.is_empty() {
                        text.push_str(" No share of the gap is attributed to the headers: IPv6 was not significantly slower at any size where the link is the bottleneck.");
                    } else {
                        text.push_str(&format!(
                            " Where IPv6 was significantly slower, the headers explain {} of the gap ({:.0}% range from the CI of the difference).",
                            explained.join(", "),
                            analysis.options.confidence * 100.0
                        ));
                    }
                    if !over.is_empty() {
                        text.push_str(&format!(
                            " At {} the measurement exceeds what {} allows, so the link rate is not the bottleneck there.",
                            crate::findings::sizes_list(&over),
                            rate_text(rate)
                        ));
                    }
                }
            }
            let cmp = vd.family_cmp.iter().find(|c| &c.context == label);
            let significant = cmp.map_or(0, |c| c.significant(analysis.options.alpha));
            let sizes = cmp.map_or(0, |c| c.points.len());
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
        let s = header_sentences(&a, &OverheadModel::ethernet(), Some(1e9));
        assert_eq!(s.len(), 1);
        // Expected 1454/1474 · … : 1 − 0.98660 = 0.01340 of a measured 0.10 gap = 13.4%.
        assert!(s[0].0.contains("the headers explain 13.4% ["), "{}", s[0].0);
        // Without a link rate, no share is attributed.
        let s = header_sentences(&a, &OverheadModel::ethernet(), None);
        assert!(s[0].0.contains("No share of the gap"), "{}", s[0].0);
        assert!(!s[0].0.contains("13.4"), "{}", s[0].0);
    }

    /// A stream that followed its own schedule measured the load it offered: even a
    /// significant gap says nothing of header sizes, and no prediction is made.
    #[test]
    fn streams_at_their_offered_load_get_no_header_prediction() {
        let mut d = data(
            [100.0, 100.2, 99.8, 100.1, 99.9],
            [90.0, 90.2, 89.8, 90.1, 89.9],
        );
        d.campaigns[0].offered_load.insert(
            TestKind::UdpStream,
            "its udp-stream runs followed a traffic model (profile voip-g711), so their throughput is the load it offered".into(),
        );
        let a = analyse(&d, AnalysisOptions::default());
        for rate in [None, Some(1e9)] {
            let s = header_sentences(&a, &OverheadModel::ethernet(), rate);
            assert_eq!(s.len(), 1);
            assert!(
                s[0].0.starts_with("The header-overhead comparison does not apply to UDP throughput: its udp-stream runs followed a traffic model (profile voip-g711)"),
                "{}",
                s[0].0
            );
            assert!(
                !s[0].0.contains("predict") && !s[0].0.contains("explain"),
                "{}",
                s[0].0
            );
        }
    }

    #[test]
    fn a_gap_that_is_not_significant_is_said_to_be_no_evidence() {
        let d = data(
            [100.0, 60.0, 140.0, 80.0, 120.0],
            [95.0, 55.0, 135.0, 75.0, 115.0],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let s = header_sentences(&a, &OverheadModel::ethernet(), Some(1e9));
        assert!(
            s[0].0.contains("not significantly slower at any size"),
            "{}",
            s[0].0
        );
        let t = overhead_table(&a, &OverheadModel::ethernet(), Some(1e9), None)
            .map(|t| t.to_markdown());
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
            overhead_table(&a, &model, Some(5e7), src),
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
    fn efficiency_above_100_percent_is_a_warning_not_a_figure() {
        // 100 Mbit/s measured on a "10 Mbit/s" link: the link rate is not the bottleneck.
        let d = data(
            [100.0, 100.2, 99.8, 100.1, 99.9],
            [90.0, 90.2, 89.8, 90.1, 89.9],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let model = OverheadModel::ethernet();
        let eff = efficiency_table(&a, &model, 1e7, None).map(|t| t.to_markdown());
        let eff = eff.unwrap_or_default();
        assert!(eff.contains("&gt; 100%: not the bottleneck"), "{eff}");
        let w = efficiency_warnings(&a, &model, 1e7);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("not the bottleneck") && w[0].contains("1408 bytes"),
            "{}",
            w[0]
        );
        let t = overhead_table(&a, &model, Some(1e7), None).map(|t| t.to_markdown());
        assert!(t.is_some_and(|md| md.contains("not the bottleneck") && !md.contains("13.4")));
        // At 1 Gbit/s it is a share, with its range from the CI of the difference.
        match gap_share(&a, &a.views[0], &model, Some(1e9), 0, 1408) {
            Some(GapShare::Share { share, lo, hi }) => {
                assert!((share - 0.134).abs() < 0.001, "{share}");
                assert!(lo < share && share < hi && hi.is_finite(), "{lo} {hi}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rates_read_naturally() {
        assert_eq!(rate_text(1e9), "1 Gbit/s");
        assert_eq!(rate_text(2.5e9), "2.5 Gbit/s");
        assert_eq!(rate_text(1e8), "100 Mbit/s");
    }
}
