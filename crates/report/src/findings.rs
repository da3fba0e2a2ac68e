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
pub fn findings(
    analysis: &Analysis,
    model: &OverheadModel,
    link_rate_bps: Option<f64>,
) -> Vec<Finding> {
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
    for (text, evidence) in header_sentences(analysis, model, link_rate_bps) {
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

/// "128 bytes", "128 and 640 bytes", "128, 640 and 1408 bytes".
pub fn sizes_list(sizes: &[u32]) -> String {
    let list: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    match list.split_last() {
        None => String::new(),
        Some((last, [])) => format!("{last} bytes"),
        Some((last, rest)) => format!("{} and {last} bytes", rest.join(", ")),
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The sentence of one comparison. It leads with what survived Holm's correction, in
/// each direction separately; then the direction of the means at every size (ties are
/// ties, credited to neither side); then the largest difference in either direction,
/// naming its direction and its corrected p. Equal means at every size carry their
/// evidence size by size.
fn sentence(
    analysis: &Analysis,
    vd: &ViewData,
    cmp: &Comparison,
    prefix: &str,
    suffix: &str,
) -> Option<Finding> {
    let alpha = analysis.options.alpha;
    let level = analysis.options.confidence;
    let view = &vd.view;
    let hib = view.higher_is_better;
    let t = cmp.tally(hib, alpha);
    if t.n == 0 {
        return None;
    }
    let pts: Vec<&Point> = cmp
        .points
        .iter()
        .filter(|p| p.welch.diff.is_finite())
        .collect();
    let n = t.n;
    let (better, worse) = if hib {
        ("higher", "lower")
    } else {
        ("lower", "higher")
    };
    let what = format!("{}{suffix}", view.title());
    let start = |s: String| {
        if prefix.is_empty() {
            capitalise(&s)
        } else {
            format!("{prefix}{s}")
        }
    };
    let (a, b) = (&cmp.a, &cmp.b);
    let at_sizes = if n == 1 {
        "the one size compared".to_string()
    } else {
        format!("all {n} sizes")
    };
    // Runs per side: with fewer than 2 on a side no test can tell a difference.
    let fewest = pts.iter().map(|p| p.a.n.min(p.b.n)).min().unwrap_or(0);
    let mut text = if t.ties == n && fewest < 2 {
        start(format!(
            "{a} and {b} {what}: too few runs to compare (as few as {fewest} run(s) on a side); the means were equal at {at_sizes}"
        ))
    } else if t.ties == n {
        start(format!("{a} and {b} {what} were equal at {at_sizes}"))
    } else if fewest < 2 && t.sig_a.is_empty() && t.sig_b.is_empty() {
        start(format!(
            "{a} and {b} {what}: too few runs to compare (as few as {fewest} run(s) on a side at some size), so no difference can be shown"
        ))
    } else if t.sig_a.is_empty() && t.sig_b.is_empty() {
        let min_p = pts.iter().map(|p| p.p_holm).fold(f64::INFINITY, f64::min);
        start(format!(
            "{a} and {b} {what} did not differ significantly at {} (smallest Holm-adjusted {})",
            if n == 1 {
                "the one size compared".to_string()
            } else {
                format!("any of the {n} sizes")
            },
            p_phrase(min_p)
        ))
    } else {
        // Lead with the side significantly better at more sizes.
        let (lead, other, sig_lead, sig_other) = if t.sig_a.len() >= t.sig_b.len() {
            (a, b, &t.sig_a, &t.sig_b)
        } else {
            (b, a, &t.sig_b, &t.sig_a)
        };
        let mut s = start(format!(
            "{lead} {what} was significantly {better} than {other} at {} of {n} sizes ({})",
            sig_lead.len(),
            sizes_list(sig_lead)
        ));
        if !sig_other.is_empty() {
            s.push_str(&format!(
                " and significantly {worse} at {} ({})",
                sig_other.len(),
                sizes_list(sig_other)
            ));
        }
        if !t.not_sig.is_empty() {
            s.push_str(&format!(
                "; no significant difference at {}",
                sizes_list(&t.not_sig)
            ));
        }
        s
    };
    if t.ties < n {
        text.push_str(&format!(
            "; the mean was {better} for {a} at {} and for {b} at {} of {n} sizes",
            t.a_better, t.b_better
        ));
        if t.ties > 0 {
            text.push_str(&format!(" and equal at {}", t.ties));
        }
    }
    let largest = pts
        .iter()
        .filter(|p| p.welch.diff != 0.0)
        .max_by(|x, y| x.welch.diff.abs().total_cmp(&y.welch.diff.abs()))
        .copied();
    let evidence = if let Some(p) = largest {
        let higher = if p.welch.diff > 0.0 { a } else { b };
        let lower_mean = p.a.mean.min(p.b.mean);
        let rel = p.welch.diff.abs() / lower_mean.abs() * 100.0;
        let verdict = if p.significant(alpha) {
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
            "; the largest difference was {} {} ({}%) at {} bytes, {higher} higher ({} {} after Holm correction{verdict})",
            num(p.welch.diff.abs()),
            unit_words,
            pct(rel),
            p.payload_bytes,
            view.test_name(),
            p_phrase(p.p_holm),
        ));
        point_evidence(cmp, view, p, level)
    } else {
        // Equal at every size: the evidence is every size's numbers.
        let parts: Vec<String> = pts
            .iter()
            .map(|p| {
                let (lo, hi) = p.welch.ci(level);
                format!(
                    "{} bytes: {} vs {} {unit} (n = {} and {}, sd {} and {}), {:.0}% CI of the difference [{}, {}], Holm-adjusted {}",
                    p.payload_bytes,
                    num(p.a.mean),
                    num(p.b.mean),
                    p.a.n,
                    p.b.n,
                    num(p.a.sd),
                    num(p.b.sd),
                    level * 100.0,
                    num_like(lo, p.a.mean),
                    num_like(hi, p.a.mean),
                    p_phrase(p.p_holm),
                    unit = view.unit,
                )
            })
            .collect();
        format!("{} − {} at each size: {}.", a, b, parts.join("; "))
    };
    text.push('.');
    Some(Finding { text, evidence })
}

/// Numbers behind one size of a comparison.
fn point_evidence(cmp: &Comparison, view: &crate::analysis::View, p: &Point, level: f64) -> String {
    let (lo, hi) = p.welch.ci(level);
    format!(
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
                    if m.exact { "exact" } else { "normal approximation, ties or large samples" },
                    m.rank_biserial
                )
            })
            .unwrap_or_default(),
        num(p.hedges_g),
        unit = view.unit,
    )
}
