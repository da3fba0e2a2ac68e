//! What limits the conclusions, said before them: the smallest corrected p each
//! comparison could reach with its runs (a plan too small to show any difference is
//! a warning, not a finding of "no difference"), the cells that missed their
//! confidence target with the runs the target would roughly need, and a Wi-Fi link
//! whose MCS, channel width or signal changed during a campaign.

use crate::analysis::{Analysis, Comparison, ViewData};
use crate::dataset::{CampaignData, Dataset};
use stats::{smallest_corrected_p, PrimaryTest, Reach};

/// What one comparison could reach at best.
#[derive(Debug, Clone, PartialEq)]
pub struct ReachLine {
    pub view: String,
    pub comparison: String,
    pub test: PrimaryTest,
    /// Fewest runs on either side at any size.
    pub runs_a: usize,
    pub runs_b: usize,
    /// Tests Holm corrects over (the sizes compared).
    pub sizes: usize,
    pub reach: Reach,
    /// Every size had exactly `runs_a` and `runs_b` runs.
    pub uniform: bool,
    /// Holm ran over every test of the report, not this comparison's sizes.
    pub family_wide: bool,
}

impl ReachLine {
    pub fn text(&self) -> String {
        let bound = match self.reach {
            Reach::AtLeast(p) => format!("smallest reachable corrected p = {}", p_short(p)),
            Reach::Unbounded => {
                "any corrected p reachable (Welch's t-test, given any spread among the runs)"
                    .to_string()
            }
            Reach::NoTest => "no test (fewer than 2 runs on a side)".to_string(),
        };
        format!(
            "{}, {} ({}, {}{} and {} runs{}, Holm over {} {}{}): {bound}",
            self.view,
            self.comparison,
            self.test.name(),
            if self.uniform { "" } else { "at least " },
            self.runs_a,
            self.runs_b,
            if self.uniform { " at every size" } else { "" },
            self.sizes,
            if self.family_wide { "test" } else { "size" },
            if self.sizes == 1 { "" } else { "s" }
        )
    }
}

/// A corrected p bound as warnings and findings write it: "0.2", "1.6e-4".
pub(crate) fn p_short(p: f64) -> String {
    if p >= 0.001 {
        let s = format!("{p:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{p:.1e}")
    }
}

fn reach_of(vd: &ViewData, cmp: &Comparison) -> ReachLine {
    let test = if vd.view.rank_test {
        PrimaryTest::MannWhitney
    } else {
        PrimaryTest::Welch
    };
    let runs_a = cmp.points.iter().map(|p| p.a.n).min().unwrap_or(0);
    let runs_b = cmp.points.iter().map(|p| p.b.n).min().unwrap_or(0);
    let sizes = cmp.holm_tests;
    let uniform = cmp
        .points
        .iter()
        .all(|p| p.a.n == runs_a && p.b.n == runs_b);
    ReachLine {
        uniform,
        family_wide: sizes != cmp.points.len(),
        view: vd.view.title(),
        comparison: format!("{} vs {} on {}", cmp.a, cmp.b, cmp.context),
        test,
        runs_a,
        runs_b,
        sizes,
        reach: smallest_corrected_p(test, runs_a, runs_b, sizes),
    }
}

/// Every comparison's reach, in report order.
pub fn reach_lines(analysis: &Analysis) -> Vec<ReachLine> {
    analysis
        .views
        .iter()
        .flat_map(|vd| {
            vd.family_cmp
                .iter()
                .chain(&vd.system_cmp)
                .filter(|c| !c.points.is_empty() && c.not_compared.is_none())
                .map(move |c| reach_of(vd, c))
        })
        .collect()
}

/// Runs per side at which `test` could reach `alpha` over `sizes` tests.
fn runs_needed(test: PrimaryTest, sizes: usize, alpha: f64) -> Option<usize> {
    (2..=1000).find(|&n| smallest_corrected_p(test, n, n, sizes).can_reach(alpha))
}

/// The warnings of the report: comparisons that cannot reach alpha, then cells that
/// missed their confidence target.
pub fn warnings(data: &Dataset, analysis: &Analysis) -> Vec<String> {
    let alpha = analysis.options.alpha;
    let mut out: Vec<String> = reach_lines(analysis)
        .into_iter()
        .filter(|r| !r.reach.can_reach(alpha))
        .map(|r| {
            let need = runs_needed(r.test, r.sizes, alpha)
                .map(|n| format!(" About {n} runs per side would be needed."))
                .unwrap_or_default();
            let limit = match r.reach {
                Reach::AtLeast(p) => format!("cannot go below a corrected p of {}", p_short(p)),
                _ => "has no p at all (fewer than 2 runs on a side)".to_string(),
            };
            format!(
                "{}, {}: with {}{} and {} runs over {}{}, {} {limit} (alpha = {alpha}), so no difference can be called significant; \"no difference\" there means too few runs to tell.{need}",
                r.view,
                r.comparison,
                if r.uniform { "" } else { "at least " },
                r.runs_a,
                r.runs_b,
                r.sizes,
                match (r.family_wide, r.sizes == 1) {
                    (true, true) => " test",
                    (true, false) => " tests",
                    (false, true) => " size",
                    (false, false) => " sizes",
                },
                r.test.name(),
            )
        })
        .collect();
    for (c, label) in data.campaigns.iter().zip(&analysis.systems) {
        let Some(target) = c.target else { continue };
        if c.missed.is_empty() {
            continue;
        }
        let cells: Vec<String> = c
            .missed
            .iter()
            .take(8)
            .map(|m| {
                let need = m
                    .runs_needed(target.width_pct)
                    .map(|n| format!(", about {n} runs would reach it"))
                    .unwrap_or_default();
                format!(
                    "{} {} {} B: {} interval {:.1}% of the mean after {} runs{need}",
                    m.family,
                    m.kind.name(),
                    m.payload_bytes,
                    metric_words(&m.metric),
                    m.width_pct,
                    m.runs
                )
            })
            .collect();
        let more = if c.missed.len() > 8 {
            format!("; and {} more", c.missed.len() - 8)
        } else {
            String::new()
        };
        out.push(format!(
            "{label}: {} cell{} missed the confidence target ({}% interval within {}% of the mean): {}{more}. Their means are less certain than the target promised; rerun with more --max-runs or longer runs.",
            c.missed.len(),
            if c.missed.len() == 1 { "" } else { "s" },
            target.level_pct,
            target.width_pct,
            cells.join("; ")
        ));
    }
    for (c, label) in data.campaigns.iter().zip(&analysis.systems) {
        let changes = link_changes(c);
        if !changes.is_empty() {
            out.push(format!(
                "{label}: the Wi-Fi link changed during the campaign ({}). Rate adaptation moved the link's limit under the measurement, so its runs were not all measured over the same link; each run's link state is in its applied settings (link.before.*, link.after.*).",
                changes.join("; ")
            ));
        }
    }
    out
}

/// The signal span (dB) over a campaign's recorded link states from which the signal
/// counts as changed: a stated choice, about the SNR step between neighbouring MCSs
/// (3–5 dB) twice over, so ordinary fading of a few dB does not warn.
pub const SIGNAL_SPAN_DB: i64 = 10;

/// What changed in a campaign's recorded Wi-Fi link, per side: the distinct transmit
/// MCSs and channel widths when more than one, the signal range when it spans at least
/// [`SIGNAL_SPAN_DB`]. Empty when nothing changed or nothing was recorded.
pub fn link_changes(c: &CampaignData) -> Vec<String> {
    let mut out = Vec::new();
    for side in ["client", "server"] {
        let values = |field: &str| -> Vec<&str> {
            let mut v: Vec<&str> = c
                .link_values
                .iter()
                .filter(|(k, _, _)| {
                    k.strip_prefix(side)
                        .and_then(|k| k.strip_prefix(".link."))
                        .and_then(|k| k.split_once('.'))
                        .is_some_and(|(phase, f)| {
                            (phase == "before" || phase == "after") && f == field
                        })
                })
                .map(|(_, v, _)| v.as_str())
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for (field, words) in [
            ("tx_mcs", "transmit MCS"),
            ("width_mhz", "channel width (MHz)"),
        ] {
            let v = values(field);
            if v.len() > 1 {
                out.push(format!("{side} {words} {}", v.join(", ")));
            }
        }
        let signal: Vec<i64> = values("signal_dbm")
            .iter()
            .filter_map(|v| v.parse().ok())
            .collect();
        if let (Some(lo), Some(hi)) = (signal.iter().min(), signal.iter().max()) {
            if hi - lo >= SIGNAL_SPAN_DB {
                out.push(format!("{side} signal {lo} to {hi} dBm"));
            }
        }
    }
    out
}

/// A counted metric in words.
fn metric_words(name: &str) -> &str {
    use wire::metrics as m;
    match name {
        n if n == m::THROUGHPUT_BPS => "throughput",
        n if n == m::JITTER_RFC3550_NS => "jitter",
        n if n == m::RTT_MEAN_NS => "mean RTT",
        n if n == m::TRANSACTIONS_PER_S => "transaction rate",
        n if n == m::CPU_LOCAL_PCT => "local CPU",
        n if n == m::CPU_REMOTE_PCT => "remote CPU",
        other => other,
    }
}

/// A warning per campaign whose udp-stream runs stored no RFC 3550 jitter at all (a
/// preset can name jitter — seed 004's does — and the report must then say why there
/// is none rather than leave the view out in silence).
pub fn jitter_unavailable(data: &Dataset, analysis: &Analysis) -> Vec<String> {
    use wire::metrics::JITTER_RFC3550_NS;
    use wire::spec::TestKind;
    data.campaigns
        .iter()
        .zip(&analysis.systems)
        .filter_map(|(c, label)| {
            let udp: Vec<_> = c
                .runs
                .iter()
                .filter(|r| r.counts() && r.kind == TestKind::UdpStream)
                .collect();
            let with = udp
                .iter()
                .filter(|r| r.metrics.get(JITTER_RFC3550_NS).is_some_and(|v| v.is_finite()))
                .count();
            (!udp.is_empty() && with == 0).then(|| {
                format!(
                    "{label}: UDP jitter (RFC 3550) is unavailable: none of its {} udp-stream runs stored it. \
                     A run measures jitter only from a send stamp and a kernel arrival time per datagram; \
                     where datagrams left in batches sharing one send stamp (unpaced, or paced faster \
                     than the datapath sends one by one, as an RFC 2544 search's trials usually are) \
                     the run reports jitter as unavailable, never as a number, so no jitter is shown; \
                     a fixed, low rate (study --udp-method fixed -b 10kpps) measures it.",
                    udp.len()
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn campaign(values: &[(&str, &str)]) -> CampaignData {
        CampaignData {
            link_values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string(), 3))
                .collect(),
            ..CampaignData::default()
        }
    }

    #[test]
    fn a_changed_mcs_width_or_wide_signal_range_is_named_per_side() {
        let c = campaign(&[
            ("client.link.after.tx_mcs", "7"),
            ("client.link.before.tx_mcs", "9"),
            ("client.link.before.width_mhz", "80"),
            ("server.link.after.signal_dbm", "-71"),
            ("server.link.before.signal_dbm", "-58"),
            ("server.link.before.tx_mcs", "9"),
        ]);
        assert_eq!(
            link_changes(&c),
            vec![
                "client transmit MCS 7, 9".to_string(),
                "server signal -71 to -58 dBm".to_string()
            ]
        );
        let w = campaign(&[
            ("client.link.before.width_mhz", "80"),
            ("client.link.after.width_mhz", "40"),
        ]);
        assert_eq!(link_changes(&w), vec!["client channel width (MHz) 40, 80"]);
    }

    #[test]
    fn a_steady_link_loopback_or_no_record_is_no_change() {
        assert!(link_changes(&campaign(&[])).is_empty());
        assert!(link_changes(&campaign(&[
            ("client.link.before.kind", "loopback"),
            ("client.link.after.kind", "loopback"),
        ]))
        .is_empty());
        let steady = campaign(&[
            ("client.link.before.tx_mcs", "9"),
            ("client.link.after.tx_mcs", "9"),
            ("client.link.before.signal_dbm", "-52"),
            ("client.link.after.signal_dbm", "-61"),
            // Not a link-state key of this side, though it ends alike.
            ("client.linkx.before.tx_mcs", "3"),
        ]);
        assert!(
            link_changes(&steady).is_empty(),
            "{:?}",
            link_changes(&steady)
        );
    }
}
