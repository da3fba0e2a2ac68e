//! The Wi-Fi part of the report: each campaign's 802.11 link, the one its runs recorded
//! (`link.before.*` / `link.after.*` of the sending side, from `net::wifi`) or the one
//! its lab emulated (`lab.emulated_link`), set against the airtime model of
//! `dualperf-model` (`model::wifi::estimate`, the code `dualperf model` prints):
//! measured goodput as % of the model's theoretical maximum per size and IP version,
//! and the IPv6/IPv4 ratio the model predicts beside the measured one, "explained" only
//! when the prediction lies inside the measured ratio's CI (the header section's rule,
//! [`crate::headers`]). Where the model cannot be applied (no link state, an MCS the OS
//! does not report, a link that changed under the campaign) the table says unavailable
//! and why: nothing is guessed.
//!
//! `link` finds each campaign's link; this module makes the table and the findings.

mod link;

pub use link::{
    campaign_wifi, lab_rate_bps, ModelUnavailable, Origin, WifiLink, WifiModel, RECORDED_AMPDU,
};

use crate::analysis::{Analysis, ViewData};
use crate::dataset::CampaignData;
use crate::format::{int_cell, pct, sizes_list};
use crate::headers::{judge_gap, measured_ratio_ci, throughput_views, HeaderVerdict, RatioCi};
use crate::table::{Cell, Table};
use model::wifi::emulation::LEAVES_OUT;
use wire::spec::{Family, TestKind};

/// One size of one system against its link.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeAgainstModel {
    pub size: u32,
    /// Per family (IPv4, IPv6): the model's maximum in the view's unit, or why none.
    pub max: [Result<f64, ModelUnavailable>; 2],
    /// Measured mean as % of that maximum.
    pub pct_of_max: [Option<f64>; 2],
    /// The model's IPv6/IPv4 goodput ratio.
    pub expected_ratio: Option<f64>,
    /// The measured ratio with its CI and the verdict against the prediction.
    pub measured: Option<(RatioCi, HeaderVerdict)>,
}

/// Every size of one system in a throughput view against its link.
pub fn against_model(
    analysis: &Analysis,
    vd: &ViewData,
    system: usize,
    link: &WifiLink,
) -> Vec<SizeAgainstModel> {
    let kind = vd.view.kind;
    vd.sizes
        .iter()
        .map(|&size| {
            let fam = [Family::V4, Family::V6];
            let max = fam.map(|f| {
                link.max_goodput_bps(f, kind, size)
                    .map(|bps| bps * vd.view.scale)
            });
            let cell = |i: usize| vd.cell(system, fam[i], size).filter(|c| c.summary.n > 0);
            let pct_of_max = [0, 1].map(|i| match (&max[i], cell(i)) {
                (Ok(m), Some(c)) if *m > 0.0 => Some(c.summary.mean / m * 100.0),
                _ => None,
            });
            let above = [0, 1].into_iter().any(|i| {
                cell(i).is_some_and(|c| {
                    link.ceiling_bps(fam[i], kind, size, c.mean_duration_s)
                        .is_some_and(|ceil| c.summary.mean > ceil * vd.view.scale)
                })
            });
            let expected_ratio = match (&max[0], &max[1]) {
                (Ok(m4), Ok(m6)) if *m4 > 0.0 => Some(m6 / m4),
                _ => None,
            };
            let measured = measured_ratio_ci(analysis, vd, system, size).map(|ci| {
                let v = match expected_ratio {
                    _ if above => HeaderVerdict::NotBottleneck,
                    Some(e) => judge_gap(analysis, vd, system, size, &ci, e),
                    None => HeaderVerdict::NoLinkRate,
                };
                (ci, v)
            });
            SizeAgainstModel {
                size,
                max,
                pct_of_max,
                expected_ratio,
                measured,
            }
        })
        .collect()
}

fn verdict_cell(v: HeaderVerdict) -> Cell {
    match v {
        HeaderVerdict::NotBottleneck => "above the model's maximum".into(),
        HeaderVerdict::NoLinkRate => "no prediction".into(),
        other => other.cell(),
    }
}

/// Throughput views of stream tests, the ones the model speaks about.
fn stream_views(analysis: &Analysis) -> impl Iterator<Item = &ViewData> {
    throughput_views(analysis)
        .filter(|vd| matches!(vd.view.kind, TestKind::UdpStream | TestKind::TcpStream))
}

/// A system's link for a view, or why there is no comparison.
fn link_for(analysis: &Analysis, data: &[CampaignData], vd: &ViewData, s: usize) -> WifiModel {
    let Some(c) = data.get(s) else {
        return WifiModel::NotWifi("no campaign".to_string());
    };
    let offered = analysis
        .offered_load
        .get(s)
        .and_then(|o| o.get(&vd.view.kind));
    match (campaign_wifi(c, vd.view.direction), offered) {
        (WifiModel::Known(_), Some(why)) => {
            WifiModel::Unavailable(format!("{why}, not what the link could carry"))
        }
        (m, _) => m,
    }
}

/// The table of measured goodput against the airtime model; `None` when no campaign
/// has an 802.11 link.
pub fn wifi_table(analysis: &Analysis, data: &[CampaignData]) -> Option<Table> {
    let views: Vec<&ViewData> = stream_views(analysis).collect();
    let any = views.iter().any(|vd| {
        (0..analysis.systems.len())
            .any(|s| !matches!(link_for(analysis, data, vd, s), WifiModel::NotWifi(_)))
    });
    if !any {
        return None;
    }
    let unit = views.first().map_or("Mbit/s", |v| v.view.unit);
    let level = analysis.options.confidence * 100.0;
    let columns: Vec<String> = vec![
        "Test".into(),
        "System".into(),
        "Packet size (bytes)".into(),
        format!("IPv4 model max ({unit})"),
        "IPv4 % of max".into(),
        format!("IPv6 model max ({unit})"),
        "IPv6 % of max".into(),
        "Model IPv6/IPv4".into(),
        format!("Measured IPv6/IPv4 [{level:.0}% CI]"),
        "Against the model".into(),
    ];
    let mut rows = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut emulated = false;
    for vd in &views {
        for (s, label) in analysis.systems.iter().enumerate() {
            let link = match link_for(analysis, data, vd, s) {
                WifiModel::Known(l) => l,
                WifiModel::Unavailable(why) => {
                    rows.push(reason_row(vd, label, format!("unavailable: {why}")));
                    continue;
                }
                WifiModel::NotWifi(why) => {
                    rows.push(reason_row(vd, label, format!("no 802.11 link: {why}")));
                    continue;
                }
            };
            emulated |= matches!(link.origin, Origin::Emulated { .. });
            let note = format!("{label}: {}", link.text());
            if !notes.contains(&note) {
                notes.push(note);
            }
            for p in against_model(analysis, vd, s, &link) {
                let mut row: Vec<Cell> = vec![
                    vd.view.title().into(),
                    label.as_str().into(),
                    int_cell(p.size),
                ];
                for i in 0..2 {
                    match &p.max[i] {
                        Ok(m) => row.push(Cell::Num {
                            text: crate::format::num(*m),
                            value: *m,
                        }),
                        Err(why) => row.push(format!("unavailable: {why}").into()),
                    }
                    row.push(match p.pct_of_max[i] {
                        Some(v) => Cell::Num {
                            text: pct(v),
                            value: v,
                        },
                        None => "".into(),
                    });
                }
                row.push(match p.expected_ratio {
                    Some(e) => Cell::Num {
                        text: format!("{e:.4}"),
                        value: e,
                    },
                    None => "".into(),
                });
                match p.measured {
                    Some((ci, v)) => {
                        row.push(Cell::Num {
                            text: format!("{:.4} [{:.4}, {:.4}]", ci.ratio, ci.lo, ci.hi),
                            value: ci.ratio,
                        });
                        row.push(verdict_cell(v));
                    }
                    None => {
                        row.push("".into());
                        row.push("".into());
                    }
                }
                rows.push(row);
            }
        }
    }
    Some(Table {
        id: "wifi-airtime".to_string(),
        title: "Wi-Fi: measured goodput against the 802.11 airtime model".to_string(),
        columns,
        rows,
        note: Some(format!(
            "Model maximum = the theoretical maximum goodput of one saturated sender on the \
             link (dualperf model: contention with the mean backoff, preamble, MAC and IP \
             headers, SIFS and ACK or Block Ack, LLC/SNAP, the access category's AIFS; no \
             collisions, retries, rate adaptation or other stations), so it is an upper bound, \
             never a prediction. Model IPv6/IPv4 = the ratio of the two maxima. The measured \
             ratio's interval comes from both means' standard errors (delta method). Against \
             the model: 'explained' only when the predicted ratio lies inside that interval; \
             else how far the measured ratio lies below or above it; 'above the model's \
             maximum' = a measured mean beyond what the link allows (an emulated link: beyond \
             its shaper's ceiling with its bucket), so the model's assumptions do not hold \
             there.{} Links: {}.",
            if emulated {
                " An emulated link's shaper lets its bucket through on top of its rate and \
                 charges each packet the mean symbol padding, not its own, so a short run over \
                 it may measure a little above 100 % of the model."
            } else {
                ""
            },
            if notes.is_empty() {
                "none the model applies to".to_string()
            } else {
                notes.join("; ")
            }
        )),
    })
}

fn reason_row(vd: &ViewData, label: &str, why: String) -> Vec<Cell> {
    let mut row: Vec<Cell> = vec![vd.view.title().into(), label.into(), "".into()];
    row.extend((0..6).map(|_| Cell::from("")));
    row.push(why.into());
    row
}

/// Sentences on each system's throughput against its 802.11 link.
pub fn wifi_sentences(analysis: &Analysis, data: &[CampaignData]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for vd in stream_views(analysis) {
        for (s, label) in analysis.systems.iter().enumerate() {
            let on = if analysis.systems.len() > 1 {
                format!(" on {label}")
            } else {
                String::new()
            };
            let link = match link_for(analysis, data, vd, s) {
                WifiModel::Known(l) => l,
                WifiModel::Unavailable(why) => {
                    out.push((
                        format!(
                            "{}{on} cannot be set against the 802.11 airtime model: {why}.",
                            vd.view.title()
                        ),
                        "Table wifi-airtime.".to_string(),
                    ));
                    continue;
                }
                WifiModel::NotWifi(_) => continue,
            };
            let points = against_model(analysis, vd, s, &link);
            // Sizes measured above what the link allows are said apart, not in the range.
            let counted = |p: &&SizeAgainstModel| {
                !p.measured
                    .is_some_and(|(_, v)| v == HeaderVerdict::NotBottleneck)
            };
            let range = |i: usize| -> Option<String> {
                let v: Vec<f64> = points
                    .iter()
                    .filter(counted)
                    .filter_map(|p| p.pct_of_max[i])
                    .collect();
                let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (!v.is_empty()).then(|| {
                    let (lo, hi) = (pct(lo), pct(hi));
                    if lo == hi {
                        format!("{lo}%")
                    } else {
                        format!("{lo}–{hi}%")
                    }
                })
            };
            let (r4, r6) = (range(0), range(1));
            if points
                .iter()
                .all(|p| p.pct_of_max.iter().all(Option::is_none))
            {
                continue;
            }
            let mut text = format!(
                "{}{on} reached {} (IPv4) and {} (IPv6) of the 802.11 airtime model's maximum for {} ({}).",
                vd.view.title(),
                r4.unwrap_or_else(|| "–".into()),
                r6.unwrap_or_else(|| "–".into()),
                link.phy.describe(),
                match link.origin {
                    Origin::Recorded { side } => format!("as the {side} recorded it"),
                    Origin::Emulated { .. } => "emulated".to_string(),
                }
            );
            let sizes_where = |f: &dyn Fn(HeaderVerdict) -> bool| -> Vec<u32> {
                points
                    .iter()
                    .filter(|p| p.measured.is_some_and(|(_, v)| f(v)))
                    .map(|p| p.size)
                    .collect()
            };
            let explained = sizes_where(&|v| v == HeaderVerdict::Explained);
            let below = sizes_where(&|v| matches!(v, HeaderVerdict::Below { .. }));
            let above = sizes_where(&|v| matches!(v, HeaderVerdict::Above { .. }));
            let over = sizes_where(&|v| v == HeaderVerdict::NotBottleneck);
            if !explained.is_empty() {
                text.push_str(&format!(
                    " The model's IPv6/IPv4 ratio lies inside the measured ratio's {:.0}% CI at {}.",
                    analysis.options.confidence * 100.0,
                    sizes_list(&explained)
                ));
            }
            if !below.is_empty() {
                text.push_str(&format!(
                    " IPv6 fell short of the model's ratio at {}: more than the link's framing explains.",
                    sizes_list(&below)
                ));
            }
            if !above.is_empty() {
                text.push_str(&format!(
                    " IPv6 did better than the model's ratio at {}.",
                    sizes_list(&above)
                ));
            }
            if !over.is_empty() {
                text.push_str(&format!(
                    " At {} the measurement exceeds the model's maximum, so its assumptions do not hold there.",
                    sizes_list(&over)
                ));
            }
            let emulated = matches!(link.origin, Origin::Emulated { .. });
            if emulated && !over.is_empty() && vd.view.kind == TestKind::UdpStream {
                text.push_str(
                    " A UDP sender that batches with GSO pays the emulation's per-packet \
                     overhead once per batch and so measures above it (studies run with \
                     --lab-link send one datagram per call; a campaign that batched should be \
                     run again with --udp-datapath per-datagram).",
                );
            }
            let tcp_above_100 = points
                .iter()
                .filter(counted)
                .any(|p| p.pct_of_max.iter().flatten().any(|v| *v > 100.0));
            if emulated && vd.view.kind == TestKind::TcpStream && tcp_above_100 {
                text.push_str(
                    " The model's TCP maximum counts the airtime of the returning TCP \
                     acknowledgements; the emulation shapes each direction on its own, so they \
                     take none from the data, and TCP measures above the model.",
                );
            }
            if emulated {
                text.push_str(&format!(
                    " The emulated link leaves out {LEAVES_OUT}: a radio link of this configuration reaches less."
                ));
            }
            out.push((text, format!("Table wifi-airtime; link: {}.", link.text())));
        }
    }
    out
}

#[cfg(test)]
mod tests;
