//! Sentences of findings made from the comparisons, each with its evidence: which side
//! was higher (or lower, for metrics where lower is better) at how many sizes, the
//! largest difference with its test, and whether the differences survive Holm's
//! correction. A difference that is not significant is called not significant.

use crate::analysis::{Analysis, Comparison, Point, ViewData};
use crate::format::{num, num_like, p_phrase, pct};
use crate::headers::header_sentences;
use serde::Serialize;
use stats::OverheadModel;

/// One generated sentence and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub text: String,
    pub evidence: String,
}

/// All findings: IPv4 vs IPv6 per view and system, then system vs system per view and
/// IP version, then the header-overhead sentences.
pub fn findings(analysis: &Analysis, model: &OverheadModel) -> Vec<Finding> {
    let mut out = Vec::new();
    let many_systems = analysis.systems.len() > 1;
    for vd in &analysis.views {
        for cmp in &vd.family_cmp {
            let prefix = if many_systems {
                format!("On {}, ", cmp.context)
            } else {
                String::new()
            };
            if let Some(f) = sentence(analysis, vd, cmp, &prefix, "") {
                out.push(f);
            }
        }
    }
    for vd in &analysis.views {
        for cmp in &vd.system_cmp {
            let suffix = format!(" over {}", cmp.context);
            if let Some(f) = sentence(analysis, vd, cmp, "", &suffix) {
                out.push(f);
            }
        }
    }
    for (text, evidence) in header_sentences(analysis, model) {
        out.push(Finding { text, evidence });
    }
    if analysis.receiver_limited_runs > 0 {
        let n = analysis.receiver_limited_runs;
        out.push(Finding {
            text: format!(
                "{n} UDP run{} {} receiver-limited (the receiving socket dropped datagrams \
                 itself, so the loss describes the receiving host, not the network) and {} \
                 left out of every loss comparison.",
                if n == 1 { "" } else { "s" },
                if n == 1 { "was" } else { "were" },
                if n == 1 { "is" } else { "are" },
            ),
            evidence: format!("receiver_limited = 1 (rx_socket_drop_packets > 0) in {n} run(s)"),
        });
    }
    out
}

fn sizes_phrase(k: usize, n: usize, exceptions: &[u32]) -> String {
    if k == n {
        format!("at {k} of {n} sizes")
    } else if !exceptions.is_empty() && exceptions.len() <= 2 && n >= 4 {
        let list: Vec<String> = exceptions.iter().map(|s| s.to_string()).collect();
        format!(
            "at {k} of {n} sizes (all except {} bytes)",
            list.join(" and ")
        )
    } else {
        format!("at {k} of {n} sizes")
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// "IPv4 TCP throughput was higher than IPv6 at 6 of 6 sizes; the largest difference was
/// 3.1 Mbit/s (7.2%) at 640 bytes (Welch's t-test p < 0.001 after Holm correction); …"
fn sentence(
    analysis: &Analysis,
    vd: &ViewData,
    cmp: &Comparison,
    prefix: &str,
    suffix: &str,
) -> Option<Finding> {
    let alpha = analysis.options.alpha;
    let level = analysis.options.confidence;
    let pts: Vec<&Point> = cmp
        .points
        .iter()
        .filter(|p| p.welch.diff.is_finite())
        .collect();
    let n = pts.len();
    if n == 0 {
        return None;
    }
    let view = &vd.view;
    let a_higher = pts.iter().filter(|p| p.welch.diff > 0.0).count();
    let b_higher = pts.iter().filter(|p| p.welch.diff < 0.0).count();
    // Describe the side that is better at most sizes: higher for throughput, lower for
    // RTT, jitter, loss and CPU.
    let (a_leads, k) = if view.higher_is_better {
        (a_higher >= b_higher, a_higher.max(b_higher))
    } else {
        (b_higher >= a_higher, a_higher.max(b_higher))
    };
    let (lead, other, word) = match (a_leads, view.higher_is_better) {
        (true, true) => (&cmp.a, &cmp.b, "higher"),
        (false, true) => (&cmp.b, &cmp.a, "higher"),
        (true, false) => (&cmp.a, &cmp.b, "lower"),
        (false, false) => (&cmp.b, &cmp.a, "lower"),
    };
    // Sign of "lead − other" at a point.
    let lead_is_a = lead == &cmp.a;
    let lead_diff = |p: &Point| {
        if lead_is_a {
            p.welch.diff
        } else {
            -p.welch.diff
        }
    };
    let in_lead_direction = |p: &&&Point| {
        let d = lead_diff(p);
        if word == "higher" {
            d > 0.0
        } else {
            d < 0.0
        }
    };
    let exceptions: Vec<u32> = pts
        .iter()
        .filter(|p| !in_lead_direction(p))
        .map(|p| p.payload_bytes)
        .collect();
    let largest = pts
        .iter()
        .filter(in_lead_direction)
        .max_by(|x, y| x.welch.diff.abs().total_cmp(&y.welch.diff.abs()))
        .copied();
    let significant = cmp.significant(alpha);
    let subject = format!("{prefix}{lead} {}{suffix}", view.title());
    let subject = if prefix.is_empty() {
        capitalise(&subject)
    } else {
        subject
    };
    let mut text = if k == 0 {
        format!("{subject} and {other} were equal at all {n} sizes")
    } else {
        format!(
            "{subject} was {word} than {other} {}",
            sizes_phrase(k, n, &exceptions)
        )
    };
    let mut evidence = String::new();
    if let Some(p) = largest {
        let diff = lead_diff(p).abs();
        let base = if lead_is_a { p.b.mean } else { p.a.mean };
        let rel = diff / base.abs() * 100.0;
        let verdict = if p.p_holm < alpha {
            ""
        } else {
            ": not significant"
        };
        let unit_words = if view.unit == "%" {
            "percentage points"
        } else {
            view.unit
        };
        text.push_str(&format!(
            "; the largest difference was {} {} ({}%) at {} bytes ({} {} after Holm correction{verdict})",
            num(diff),
            unit_words,
            pct(rel),
            p.payload_bytes,
            view.test_name(),
            p_phrase(p.p_holm),
        ));
        let (lo, hi) = p.welch.ci(level);
        evidence = format!(
            "At {} bytes: {} {} ± {} {unit} vs {} {} ± {} {unit} (mean ± {:.0}% CI, n = {} and {}); difference {} − {} {} {unit}, {:.0}% CI [{}, {}]; Welch's t-test {}{}; Hedges' g = {}.",
            p.payload_bytes,
            cmp.a,
            num(p.a.mean),
            num_like(p.a.ci_half_width(level), p.a.mean),
            cmp.b,
            num(p.b.mean),
            num_like(p.b.ci_half_width(level), p.b.mean),
            level * 100.0,
            p.a.n,
            p.b.n,
            cmp.a,
            cmp.b,
            num(p.welch.diff),
            level * 100.0,
            num_like(lo, p.welch.diff),
            num_like(hi, p.welch.diff),
            p_phrase(p.welch.p),
            p.mann_whitney
                .map(|m| {
                    format!(
                        "; Mann-Whitney U {} ({}), rank-biserial r = {:.2}",
                        p_phrase(m.p),
                        if m.exact { "exact" } else { "normal approximation" },
                        m.rank_biserial
                    )
                })
                .unwrap_or_default(),
            num(p.hedges_g),
            unit = view.unit,
        );
    }
    let not_significant: Vec<String> = cmp
        .points
        .iter()
        .filter(|p| p.p_holm.is_nan() || p.p_holm >= alpha)
        .map(|p| p.payload_bytes.to_string())
        .collect();
    if significant == n {
        text.push_str(&format!(
            "; the difference was significant at all {n} sizes."
        ));
    } else if significant > 0 && not_significant.len() <= 3 {
        text.push_str(&format!(
            "; the difference was significant at {significant} of {n} sizes and not significant at {} bytes.",
            not_significant.join(" and ")
        ));
    } else if significant == 0 {
        let min_p = cmp
            .points
            .iter()
            .map(|p| p.p_holm)
            .fold(f64::INFINITY, f64::min);
        text.push_str(&format!(
            "; the difference was not significant at any size (smallest Holm-adjusted {}).",
            p_phrase(min_p)
        ));
    } else {
        text.push_str(&format!(
            "; the difference was significant at {significant} of {n} sizes and not significant at the others."
        ));
    }
    Some(Finding { text, evidence })
}
