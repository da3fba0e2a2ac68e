//! The header-overhead part of the report: the IPv6/IPv4 goodput ratio the overhead
//! model predicts beside the measured one with its confidence interval, a verdict that
//! says "explained" only when that interval contains the prediction (else by how much
//! the measurement falls short or exceeds it), and (given a link rate) efficiency =
//! measured / highest possible goodput. Each campaign is judged against its own link
//! ([`CampaignLink`]): a combined report of a loopback campaign and a lab campaign
//! applies each one's model to its own runs. A tbf-shaped link lets its bucket through on
//! top of its rate, so its ceiling over a run of T seconds is rate × T + burst.

use crate::analysis::{Analysis, ViewData};
use crate::format::{int_cell, num_cell, pct, pct_cell};
use crate::table::{Cell, Table};
use model::OverheadModel;
use wire::metrics;
use wire::spec::Family;

/// One campaign's link: its overhead model, the rate when the link is known to be the
/// bottleneck (a shaped lab, or `--link-rate`), the shaper's bucket, and where these
/// came from.
#[derive(Debug, Clone, PartialEq)]
pub struct CampaignLink {
    pub model: OverheadModel,
    pub rate_bps: Option<f64>,
    /// A tbf bucket: bytes that leave at line rate on top of the rate.
    pub burst_bytes: Option<u64>,
    /// "from the lab metadata: …", when the user did not choose the model.
    pub source: Option<String>,
}

impl CampaignLink {
    pub fn new(model: OverheadModel, rate_bps: Option<f64>) -> CampaignLink {
        CampaignLink {
            model,
            rate_bps,
            burst_bytes: None,
            source: None,
        }
    }

    fn text(&self) -> String {
        let mut t = model_text(&self.model);
        if let Some(r) = self.rate_bps {
            t.push_str(&format!(", {}", rate_text(r)));
        }
        if let Some(b) = self.burst_bytes {
            t.push_str(&format!(", bucket {b} bytes"));
        }
        t
    }

    /// The highest goodput of one family and size, in the view's display unit, over a
    /// run of `duration_s` (the bucket adds burst / duration when both are known).
    fn max_goodput(
        &self,
        vd: &ViewData,
        family: Family,
        size: u32,
        duration_s: Option<f64>,
    ) -> Option<f64> {
        let rate = self.rate_bps?;
        let base = self
            .model
            .cost(family, vd.view.kind, size)
            .max_goodput_bps(rate);
        let bucket = match (self.burst_bytes, duration_s) {
            (Some(b), Some(t)) if t > 0.0 => 1.0 + b as f64 * 8.0 / (rate * t),
            _ => 1.0,
        };
        Some(base * bucket * vd.view.scale)
    }
}

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

/// The measured IPv6/IPv4 ratio with its confidence interval (`stats::ratio_ci`).
pub use stats::RatioCi;

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

/// The link models of a report in words: one, or each system's.
fn links_note(analysis: &Analysis, links: &[CampaignLink]) -> String {
    let one = links.windows(2).all(|w| w[0] == w[1]);
    let with_src = |l: &CampaignLink| match &l.source {
        Some(src) => format!("{} ({src})", l.text()),
        None => l.text(),
    };
    match links.first() {
        Some(l) if one => format!(" Link model: {}.", with_src(l)),
        _ => format!(
            " Link models: {}.",
            analysis
                .systems
                .iter()
                .zip(links)
                .map(|(s, l)| format!("{s}: {}", with_src(l)))
                .collect::<Vec<_>>()
                .join("; ")
        ),
    }
}

/// What the measured IPv6/IPv4 ratio of one size says against the headers' prediction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HeaderVerdict {
    /// No link rate: the link is not known to be the bottleneck, so the prediction is
    /// not a ceiling the measurement met.
    NoLinkRate,
    /// A measured mean is above the highest goodput the link allows (bucket included):
    /// the link is not the bottleneck there.
    NotBottleneck,
    /// The prediction lies inside the measured ratio's CI and the IPv4/IPv6 gap is
    /// significant: the headers explain it.
    Explained,
    /// The prediction lies inside the CI but the IPv4/IPv6 difference is not significant
    /// after correction: there is no gap to explain ("n.s.").
    NoGap,
    /// The CI lies below the prediction: IPv6 fell short of what headers explain, by at
    /// least `by` (ratio points, from the CI's nearer end) and `point` at the estimate.
    Below { by: f64, point: f64 },
    /// The CI lies above the prediction: IPv6 did better than the headers predict.
    Above { by: f64, point: f64 },
}

impl HeaderVerdict {
    pub fn cell(self) -> Cell {
        match self {
            HeaderVerdict::NoLinkRate => "no link rate".into(),
            HeaderVerdict::NotBottleneck => "not the bottleneck".into(),
            HeaderVerdict::Explained => "explained (prediction inside the CI)".into(),
            HeaderVerdict::NoGap => "n.s. (no significant gap to explain)".into(),
            HeaderVerdict::Below { point, .. } => format!("{point:.4} below the prediction").into(),
            HeaderVerdict::Above { point, .. } => format!("{point:.4} above the prediction").into(),
        }
    }
}

/// Whether a measured mean exceeds what the link allows over its runs' length.
fn above_link(vd: &ViewData, link: &CampaignLink, system: usize, size: u32) -> bool {
    [Family::V4, Family::V6].into_iter().any(|f| {
        let Some(c) = vd.cell(system, f, size) else {
            return false;
        };
        link.max_goodput(vd, f, size, c.mean_duration_s)
            .is_some_and(|max| c.summary.mean > max)
    })
}

/// The measured ratio of one system and size with its CI, and the verdict against the
/// prediction of that system's link; `None` without both cells.
pub fn header_verdict(
    analysis: &Analysis,
    vd: &ViewData,
    link: &CampaignLink,
    system: usize,
    size: u32,
) -> Option<(RatioCi, HeaderVerdict)> {
    let ci = measured_ratio_ci(analysis, vd, system, size)?;
    let verdict = if link.rate_bps.is_none() {
        HeaderVerdict::NoLinkRate
    } else if above_link(vd, link, system, size) {
        HeaderVerdict::NotBottleneck
    } else {
        judge_gap(
            analysis,
            vd,
            system,
            size,
            &ci,
            link.model.expected_v6_v4_ratio(vd.view.kind, size),
        )
    };
    Some((ci, verdict))
}

/// [`judge`] for one system and size: a prediction inside the CI "explains" the ratio
/// only where IPv4 and IPv6 differ significantly (after correction); else there is no
/// gap to explain ([`HeaderVerdict::NoGap`]). Every header verdict goes through here.
pub(crate) fn judge_gap(
    analysis: &Analysis,
    vd: &ViewData,
    system: usize,
    size: u32,
    ci: &RatioCi,
    expected: f64,
) -> HeaderVerdict {
    match judge(ci, expected) {
        HeaderVerdict::Explained if !gap_is_significant(analysis, vd, system, size) => {
            HeaderVerdict::NoGap
        }
        v => v,
    }
}

/// Whether IPv4 and IPv6 differ significantly (after correction) at this system and size.
fn gap_is_significant(analysis: &Analysis, vd: &ViewData, system: usize, size: u32) -> bool {
    vd.family_cmp
        .iter()
        .find(|c| c.context == analysis.systems[system] && c.not_compared.is_none())
        .and_then(|c| c.points.iter().find(|p| p.payload_bytes == size))
        .is_some_and(|p| p.significant(analysis.options.alpha))
}

/// The measured IPv6/IPv4 ratio of one system and size with its CI; `None` without
/// both cells (or with fewer than 2 runs on a side).
pub(crate) fn measured_ratio_ci(
    analysis: &Analysis,
    vd: &ViewData,
    system: usize,
    size: u32,
) -> Option<RatioCi> {
    let point = vd
        .family_cmp
        .iter()
        .find(|c| c.context == analysis.systems[system])
        .and_then(|c| c.points.iter().find(|p| p.payload_bytes == size))?;
    // IPv6 over IPv4.
    stats::ratio_ci(&point.b, &point.a, analysis.options.confidence)
}

/// A measured ratio's CI against a predicted ratio: "explained" only when the
/// prediction lies inside the interval, else how far below or above it.
fn judge(ci: &RatioCi, expected: f64) -> HeaderVerdict {
    if ci.hi < expected {
        HeaderVerdict::Below {
            by: expected - ci.hi,
            point: expected - ci.ratio,
        }
    } else if ci.lo > expected {
        HeaderVerdict::Above {
            by: ci.lo - expected,
            point: ci.ratio - expected,
        }
    } else {
        HeaderVerdict::Explained
    }
}

/// Warnings for every system and size measured above what its link allows: the link is
/// then not the bottleneck, and no efficiency or verdict is given.
pub fn efficiency_warnings(analysis: &Analysis, links: &[CampaignLink]) -> Vec<String> {
    let mut out = Vec::new();
    for vd in throughput_views(analysis) {
        for ((s, label), link) in analysis.systems.iter().enumerate().zip(links) {
            let Some(rate) = link.rate_bps else { continue };
            let sizes: Vec<u32> = vd
                .sizes
                .iter()
                .copied()
                .filter(|&z| above_link(vd, link, s, z))
                .collect();
            if !sizes.is_empty() {
                out.push(format!(
                    "{} on {label} measured more than a link of {} can carry at {}{}: the link rate is not the bottleneck there (or is wrong), so efficiency and the header verdict are not given. Check --link-rate.",
                    vd.view.title(),
                    rate_text(rate),
                    crate::format::sizes_list(&sizes),
                    if link.burst_bytes.is_some() { " (its bucket included)" } else { "" }
                ));
            }
        }
    }
    out
}

/// Model against measurement per transport and size, each system against its own link.
pub fn overhead_table(analysis: &Analysis, links: &[CampaignLink]) -> Option<Table> {
    let views: Vec<&ViewData> = throughput_views(analysis).collect();
    if views.is_empty() || links.is_empty() {
        return None;
    }
    let one_model = links.windows(2).all(|w| w[0].model == w[1].model);
    let mut columns: Vec<String> = vec!["Test".into(), "Packet size (bytes)".into()];
    if one_model {
        columns.extend(
            [
                "IPv4 frame (bytes)",
                "IPv6 frame (bytes)",
                "IPv4 line bytes per payload byte",
                "IPv6 line bytes per payload byte",
                "Expected IPv6/IPv4",
            ]
            .map(String::from),
        );
    }
    for s in &analysis.systems {
        if !one_model {
            columns.push(format!("{s} expected IPv6/IPv4"));
        }
        columns.push(format!(
            "{s} measured IPv6/IPv4 [{:.0}% CI]",
            analysis.options.confidence * 100.0
        ));
        columns.push(format!("{s} against the prediction"));
    }
    let mut rows = Vec::new();
    for vd in views {
        for &size in &vd.sizes {
            let mut row: Vec<Cell> = vec![vd.view.title().into(), int_cell(size)];
            if one_model {
                let model = &links[0].model;
                let c4 = model.cost(Family::V4, vd.view.kind, size);
                let c6 = model.cost(Family::V6, vd.view.kind, size);
                let expected = c6.efficiency() / c4.efficiency();
                row.extend([
                    int_cell(c4.frame_bytes),
                    int_cell(c6.frame_bytes),
                    num_cell(c4.line_bytes_per_payload_byte()),
                    num_cell(c6.line_bytes_per_payload_byte()),
                    Cell::Num {
                        text: format!("{expected:.4}"),
                        value: expected,
                    },
                ]);
            }
            for (s, link) in links.iter().enumerate().take(analysis.systems.len()) {
                if !one_model {
                    let e = link.model.expected_v6_v4_ratio(vd.view.kind, size);
                    row.push(Cell::Num {
                        text: format!("{e:.4}"),
                        value: e,
                    });
                }
                match header_verdict(analysis, vd, link, s, size) {
                    Some((ci, v)) => {
                        row.push(Cell::Num {
                            text: format!("{:.4} [{:.4}, {:.4}]", ci.ratio, ci.lo, ci.hi),
                            value: ci.ratio,
                        });
                        row.push(v.cell());
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
        title: "Header overhead: expected and measured IPv6/IPv4 throughput".to_string(),
        columns,
        rows,
        note: Some(format!(
            "Frame = the largest frame as the link counts it; line bytes include every header, \
             framing, preamble and gap (bulk TCP in full-MSS segments with 12 bytes of timestamps). \
             Expected = IPv6 / IPv4 goodput when the link is the bottleneck. The measured ratio's \
             interval comes from both means' standard errors (delta method). Against the \
             prediction: 'explained' only when the IPv4/IPv6 difference is significant (Holm) \
             and the prediction lies inside that interval, 'n.s.' when it lies inside but the \
             difference is not significant (no gap to explain); else how far the measured ratio \
             lies below (IPv6 lost more than its headers cost) or above it; 'no link rate' = the link is not known to be the bottleneck (a shaped lab, or \
             --link-rate), so no verdict; 'not the bottleneck' = measured above what the link \
             allows over the runs' length (a tbf bucket included).{}",
            links_note(analysis, links)
        )),
    })
}

/// Efficiency = measured / highest possible goodput over the runs' length, per system
/// with a link rate.
pub fn efficiency_table(analysis: &Analysis, links: &[CampaignLink]) -> Option<Table> {
    let views: Vec<&ViewData> = throughput_views(analysis).collect();
    let with_rate: Vec<usize> = (0..analysis.systems.len())
        .filter(|&s| links.get(s).is_some_and(|l| l.rate_bps.is_some()))
        .collect();
    if views.is_empty() || with_rate.is_empty() {
        return None;
    }
    let mut columns: Vec<String> = vec!["Test".into(), "Packet size (bytes)".into()];
    for &s in &with_rate {
        let label = &analysis.systems[s];
        columns.push(format!(
            "{label} IPv4 highest goodput ({})",
            views[0].view.unit
        ));
        columns.push(format!(
            "{label} IPv6 highest goodput ({})",
            views[0].view.unit
        ));
        columns.push(format!("{label} IPv4 efficiency (%)"));
        columns.push(format!("{label} IPv6 efficiency (%)"));
    }
    let mut rows = Vec::new();
    for vd in views {
        for &size in &vd.sizes {
            let mut row: Vec<Cell> = vec![vd.view.title().into(), int_cell(size)];
            let mut eff = Vec::new();
            for &s in &with_rate {
                let link = &links[s];
                for f in [Family::V4, Family::V6] {
                    let cell = vd.cell(s, f, size);
                    let max = link.max_goodput(vd, f, size, cell.and_then(|c| c.mean_duration_s));
                    row.push(max.map_or_else(|| "".into(), num_cell));
                    eff.push(match (cell, max) {
                        (Some(c), Some(m)) if c.summary.mean > m => {
                            "> 100%: not the bottleneck".into()
                        }
                        (Some(c), Some(m)) => pct_cell(c.summary.mean / m * 100.0),
                        _ => "".into(),
                    });
                }
                row.append(&mut eff);
            }
            rows.push(row);
        }
    }
    Some(Table {
        id: "efficiency".to_string(),
        title: "Efficiency at the link rate".to_string(),
        columns,
        rows,
        note: Some(format!(
            "Efficiency = measured mean throughput / highest goodput the link allows after \
             headers and framing, over the runs' mean length (a tbf bucket lets burst bytes \
             through on top of the rate). A mean above that is no efficiency but a sign that \
             the link rate is not the bottleneck.{}",
            links_note(analysis, links)
        )),
    })
}

/// Sentences on the IPv6 throughput gap against header sizes, per system and
/// transport, each system against its own link.
pub fn header_sentences(analysis: &Analysis, links: &[CampaignLink]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for vd in throughput_views(analysis) {
        for ((s, label), link) in analysis.systems.iter().enumerate().zip(links) {
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
            let model = &link.model;
            let judged: Vec<(u32, f64, RatioCi, HeaderVerdict)> = vd
                .sizes
                .iter()
                .filter_map(|&size| {
                    let (ci, v) = header_verdict(analysis, vd, link, s, size)?;
                    Some((size, model.expected_v6_v4_ratio(vd.view.kind, size), ci, v))
                })
                .collect();
            if judged.is_empty() {
                continue;
            }
            let n = judged.len() as f64;
            let expected = judged.iter().map(|p| p.1).sum::<f64>() / n;
            let measured = judged.iter().map(|p| p.2.ratio).sum::<f64>() / n;
            let mut text = format!(
                "Header sizes alone ({} model) predict IPv6 {}{on} at {}% of IPv4 when the link is the bottleneck; it reached {}% (mean over {} sizes).",
                model.link.name(),
                vd.view.title(),
                pct(expected * 100.0),
                pct(measured * 100.0),
                judged.len()
            );
            let level = analysis.options.confidence * 100.0;
            let sizes_where = |f: &dyn Fn(&HeaderVerdict) -> bool| -> Vec<u32> {
                judged.iter().filter(|j| f(&j.3)).map(|j| j.0).collect()
            };
            if link.rate_bps.is_none() {
                text.push_str(
                    " No verdict: without a link rate (a shaped lab, or --link-rate) the link is not known to be the bottleneck.",
                );
            } else {
                let explained = sizes_where(&|v| *v == HeaderVerdict::Explained);
                // "0.0866 at 1408 bytes (0.9000 [0.8990, 0.9010] against 0.9866)" for the
                // sizes below (`below`) or above the prediction.
                let off = |below: bool| -> Vec<String> {
                    judged
                        .iter()
                        .filter_map(|j| match (j.3, below) {
                            (HeaderVerdict::Below { point, .. }, true)
                            | (HeaderVerdict::Above { point, .. }, false) => Some(format!(
                                "{point:.4} at {} bytes ({:.4} [{:.4}, {:.4}] against {:.4})",
                                j.0, j.2.ratio, j.2.lo, j.2.hi, j.1
                            )),
                            _ => None,
                        })
                        .collect()
                };
                let (below, above) = (off(true), off(false));
                let over = sizes_where(&|v| *v == HeaderVerdict::NotBottleneck);
                let no_gap = sizes_where(&|v| *v == HeaderVerdict::NoGap);
                if !explained.is_empty() {
                    text.push_str(&format!(
                        " The headers explain the measured ratio at {} (a significant gap, and the prediction lies inside its {level:.0}% CI).",
                        crate::format::sizes_list(&explained)
                    ));
                }
                if !no_gap.is_empty() {
                    text.push_str(&format!(
                        " At {} the IPv4/IPv6 difference is not significant (n.s.): there is no gap to explain.",
                        crate::format::sizes_list(&no_gap)
                    ));
                }
                if !below.is_empty() {
                    text.push_str(&format!(
                        " IPv6 fell short of the prediction by {} (ratio points): more than headers explain.",
                        below.join(", ")
                    ));
                }
                if !above.is_empty() {
                    text.push_str(&format!(
                        " IPv6 did better than the prediction by {} (ratio points).",
                        above.join(", ")
                    ));
                }
                if !over.is_empty() {
                    text.push_str(&format!(
                        " At {} the measurement exceeds what the link allows, so it is not the bottleneck there.",
                        crate::format::sizes_list(&over),
                    ));
                }
            }
            let cmp = vd.family_cmp.iter().find(|c| &c.context == label);
            let significant = cmp.map_or(0, |c| c.significant(analysis.options.alpha));
            let sizes = cmp.map_or(0, |c| c.points.len());
            let evidence = format!(
                "Table header-overhead ({}); per-size expected and measured ratios with the measured ratio's CI; the IPv4/IPv6 difference is significant at {significant} of {sizes} sizes.",
                link.text()
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

    fn campaign(id: i64, v4: &[f64], v6: &[f64], duration_s: f64) -> CampaignData {
        let run = |family, mbit: f64| RunRow {
            family,
            kind: TestKind::UdpStream,
            direction: Direction::Forward,
            payload_bytes: 1408,
            repetition: 0,
            warmup: false,
            outcome: RunOutcome::Ok,
            metrics: [
                (metrics::THROUGHPUT_BPS.to_string(), mbit * 1e6),
                (metrics::DURATION_S.to_string(), duration_s),
            ]
            .into(),
        };
        let mut runs: Vec<RunRow> = v4.iter().map(|&m| run(Family::V4, m)).collect();
        runs.extend(v6.iter().map(|&m| run(Family::V6, m)));
        CampaignData {
            id,
            label: format!("S{id}"),
            runs,
            ..Default::default()
        }
    }

    fn data(v4: [f64; 5], v6: [f64; 5]) -> Dataset {
        Dataset {
            campaigns: vec![campaign(1, &v4, &v6, 1.0)],
        }
    }

    fn eth(rate: Option<f64>) -> Vec<CampaignLink> {
        vec![CampaignLink::new(OverheadModel::ethernet(), rate)]
    }

    #[test]
    fn a_gap_larger_than_the_headers_is_said_to_fall_short_by_how_much() {
        let d = data(
            [100.0, 100.2, 99.8, 100.1, 99.9],
            [90.0, 90.2, 89.8, 90.1, 89.9],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let s = header_sentences(&a, &eth(Some(1e9)));
        assert_eq!(s.len(), 1);
        // Expected 0.98660 (Ethernet, 1408-byte UDP); measured 0.9000: 0.0866 below.
        assert!(
            s[0].0
                .contains("IPv6 fell short of the prediction by 0.0866 at 1408 bytes (0.9000 ["),
            "{}",
            s[0].0
        );
        // Never a share above 100 % presented as an explanation.
        assert!(
            !s[0].0.contains("explain 1") && !s[0].0.contains("%  of the gap"),
            "{}",
            s[0].0
        );
        let s = header_sentences(&a, &eth(None));
        assert!(s[0].0.contains("No verdict"), "{}", s[0].0);
    }

    #[test]
    fn a_ratio_whose_interval_holds_the_prediction_is_explained() {
        // Issue 29's genuinely header-limited result: UDP 128 B measured 0.8952 against a
        // predicted 0.8947 was never credited. Here: IPv6 at the Ethernet prediction for
        // 1408 bytes (0.98660) within the spread of the runs.
        let v4 = [500.0, 501.0, 499.0, 500.5, 499.5];
        let v6 = v4.map(|x| x * 0.9866);
        let d = data(v4, v6);
        let a = analyse(&d, AnalysisOptions::default());
        let (ci, v) = header_verdict(&a, &a.views[0], &eth(Some(1e9))[0], 0, 1408).unwrap();
        assert_eq!(v, HeaderVerdict::Explained, "{ci:?}");
        assert!(ci.lo < 0.98660 && 0.98660 < ci.hi, "{ci:?}");
        let t = overhead_table(&a, &eth(Some(1e9))).unwrap().to_markdown();
        assert!(t.contains("explained (prediction inside the CI)"), "{t}");
    }

    /// Issue 41: at 128 B the gap was not significant (Holm p = 0.061) and the CI
    /// contained 1, yet the sentence said the headers explain it. No significant gap:
    /// "n.s.", never "explained".
    #[test]
    fn a_ratio_without_a_significant_gap_is_not_explained_but_ns() {
        // IPv6 at 98.66 % of IPv4 on average, but the runs overlap widely.
        let v4 = [500.0, 530.0, 470.0, 515.0, 485.0];
        let v6 = [493.3, 523.3, 463.3, 508.3, 478.3];
        let d = data(v4, v6);
        let a = analyse(&d, AnalysisOptions::default());
        let p = &a.views[0].family_cmp[0].points[0];
        assert!(!p.significant(0.05), "{p:?}");
        let (ci, v) = header_verdict(&a, &a.views[0], &eth(Some(1e9))[0], 0, 1408).unwrap();
        assert!(ci.lo < 0.98660 && 0.98660 < ci.hi, "{ci:?}");
        assert_eq!(v, HeaderVerdict::NoGap);
        let t = overhead_table(&a, &eth(Some(1e9))).unwrap().to_markdown();
        assert!(t.contains("n.s. (no significant gap to explain)"), "{t}");
        let s = header_sentences(&a, &eth(Some(1e9)));
        assert!(!s[0].0.contains("explain the measured ratio"), "{}", s[0].0);
        assert!(s[0].0.contains("not significant (n.s.)"), "{}", s[0].0);
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
            let s = header_sentences(&a, &eth(rate));
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
    fn tables_say_where_the_link_model_came_from() {
        let d = data(
            [100.0, 60.0, 140.0, 80.0, 120.0],
            [95.0, 55.0, 135.0, 75.0, 115.0],
        );
        let a = analyse(&d, AnalysisOptions::default());
        let mut link = CampaignLink::new(OverheadModel::tbf_veth(), Some(5e8));
        link.source = Some("from the lab metadata".into());
        let links = vec![link];
        for t in [overhead_table(&a, &links), efficiency_table(&a, &links)] {
            let md = t.map(|t| t.to_markdown()).unwrap_or_default();
            assert!(
                md.contains("Link model: tbf-shaped veth, MTU 1500 bytes, 500 Mbit/s (from the lab metadata)"),
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
        let links = eth(Some(1e7));
        let eff = efficiency_table(&a, &links)
            .map(|t| t.to_markdown())
            .unwrap_or_default();
        assert!(eff.contains("&gt; 100%: not the bottleneck"), "{eff}");
        let w = efficiency_warnings(&a, &links);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("not the bottleneck") && w[0].contains("1408 bytes"),
            "{}",
            w[0]
        );
        let t = overhead_table(&a, &links)
            .map(|t| t.to_markdown())
            .unwrap_or_default();
        assert!(t.contains("not the bottleneck"), "{t}");
    }

    #[test]
    fn a_tbf_bucket_lets_short_runs_measure_above_the_rate_without_being_called_unbottlenecked() {
        // Issue 29: in a shaped lab every measurement exceeded the model's maximum by
        // 0.3-0.8 % (tbf's 64 KiB bucket over 0.25-0.6 s runs), so the lab was declared
        // "not the bottleneck". 200 Mbit/s, 0.5 s runs: the bucket adds 0.52 %.
        let model = OverheadModel::tbf_veth();
        let max = |f| {
            model
                .cost(f, TestKind::UdpStream, 1408)
                .max_goodput_bps(2e8)
                / 1e6
        };
        let (m4, m6) = (max(Family::V4) * 1.004, max(Family::V6) * 1.004);
        let d = Dataset {
            campaigns: vec![campaign(
                1,
                &[m4, m4 * 1.0001, m4 * 0.9999, m4, m4],
                &[m6, m6 * 1.0001, m6 * 0.9999, m6, m6],
                0.5,
            )],
        };
        let a = analyse(&d, AnalysisOptions::default());
        let mut link = CampaignLink::new(model, Some(2e8));
        assert!(
            !efficiency_warnings(&a, std::slice::from_ref(&link)).is_empty(),
            "without the bucket"
        );
        link.burst_bytes = Some(65_536);
        let links = vec![link];
        assert!(efficiency_warnings(&a, &links).is_empty());
        let (_, v) = header_verdict(&a, &a.views[0], &links[0], 0, 1408).unwrap();
        assert_ne!(v, HeaderVerdict::NotBottleneck);
    }

    #[test]
    fn each_campaign_is_judged_against_its_own_link() {
        // A loopback campaign beside a 1500-MTU lab: before, the first campaign's model
        // (MTU 65536) was applied to both.
        let v4 = [100.0, 100.2, 99.8, 100.1, 99.9];
        let v6 = [90.0, 90.2, 89.8, 90.1, 89.9];
        let d = Dataset {
            campaigns: vec![campaign(1, &v4, &v6, 1.0), campaign(2, &v4, &v6, 1.0)],
        };
        let a = analyse(&d, AnalysisOptions::default());
        let links = vec![
            CampaignLink::new(OverheadModel::loopback(), None),
            CampaignLink::new(OverheadModel::tbf_veth(), Some(1e9)),
        ];
        let t = overhead_table(&a, &links).unwrap().to_markdown();
        assert!(
            t.contains("S1 expected IPv6/IPv4") && t.contains("S2 expected IPv6/IPv4"),
            "{t}"
        );
        assert!(t.contains("Link models: S1: loopback"), "{t}");
        let s = header_sentences(&a, &links);
        assert!(
            s[0].0.contains("(loopback model)") && s[0].0.contains("No verdict"),
            "{}",
            s[0].0
        );
        assert!(
            s[1].0.contains("(tbf-shaped veth model)") && s[1].0.contains("fell short"),
            "{}",
            s[1].0
        );
    }

    #[test]
    fn rates_read_naturally() {
        assert_eq!(rate_text(1e9), "1 Gbit/s");
        assert_eq!(rate_text(2.5e9), "2.5 Gbit/s");
        assert_eq!(rate_text(1e8), "100 Mbit/s");
    }
}
