//! Sentences of findings made from the comparisons, each with its evidence: which side
//! was higher (or lower, for metrics where lower is better) at how many sizes, the
//! largest difference with its test, and whether the differences survive Holm's
//! correction. The side, the direction counts and the effect quoted are all the
//! primary test's: the means and their difference for Welch's t-test; for Mann-Whitney
//! the run pairs (U) and the Hodges-Lehmann shift, never the means. A difference that
//! is not significant is called not significant — but only where the runs could have
//! shown one: with fewer than 2 runs on a side (e.g. the rest were receiver-limited and
//! left out) the sentence says "too few runs to compare" with each side's n and the
//! runs left out, and where even a complete separation could not reach alpha after
//! correction it says "cannot show a difference with this many runs", never "equal" or
//! "no difference". Ties stay ties.

use crate::analysis::{Analysis, AnalysisOptions, Comparison, Point, Side, Tally, View, ViewData};
use crate::caveats::p_short;
use crate::format::{num, num_like, p_phrase, pct, sizes_list};
use crate::headers::header_sentences;
use serde::Serialize;
use stats::{smallest_corrected_p, PrimaryTest, Reach};

/// One generated sentence and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub text: String,
    pub evidence: String,
}

/// All findings: IPv4 vs IPv6 per view and system, then system vs system per view and
/// IP version, then the header-overhead sentences.
pub fn findings(analysis: &Analysis, links: &[crate::headers::CampaignLink]) -> Vec<Finding> {
    let mut out = Vec::new();
    let many_systems = analysis.systems.len() > 1;
    for vd in analysis.views.iter().filter(|v| v.view.criterion.is_some()) {
        out.push(Finding {
            text: format!("{}.", vd.view.criterion.clone().unwrap_or_default()),
            evidence: "udp-stream runs were RFC 2544 throughput searches (the campaigns' \
                       udp-stream method); the loss of each run's chosen trial is at or below the \
                       threshold by construction"
                .to_string(),
        });
    }
    let compared = || analysis.views.iter().filter(|v| v.view.criterion.is_none());
    for vd in compared() {
        for cmp in &vd.family_cmp {
            let prefix = if many_systems {
                format!("On {}, ", cmp.context)
            } else {
                String::new()
            };
            let what = vd.view.title_on(&cmp.context);
            if let Some(why) = &cmp.not_compared {
                out.push(not_compared(
                    vd,
                    cmp,
                    &format!("{prefix}IPv4 and IPv6 {what}"),
                    why,
                ));
            } else if let Some(f) = sentence(analysis, vd, cmp, &prefix, &what) {
                out.push(f);
            }
        }
    }
    for vd in compared() {
        for cmp in &vd.system_cmp {
            let what = format!("{} over {}", vd.view.title(), cmp.context);
            if let Some(why) = &cmp.not_compared {
                let subject = format!("{} and {} {what}", cmp.a, cmp.b);
                out.push(not_compared(vd, cmp, &subject, why));
            } else if let Some(f) = sentence(analysis, vd, cmp, "", &what) {
                out.push(f);
            }
        }
    }
    for (text, evidence) in header_sentences(analysis, links) {
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
            evidence: format!(
                "receiver_limited = 1 in {n} run(s): the receiving socket's drop counter grew \
                 (datagrams, or GRO buffers of datagrams)"
            ),
        });
    }
    out
}

/// The sentence of a comparison whose sides are not like with like: said with the
/// reason, each side's means shown, no test.
fn not_compared(vd: &ViewData, cmp: &Comparison, subject: &str, why: &str) -> Finding {
    let unit = vd.view.unit;
    let sides: Vec<String> = cmp
        .points
        .iter()
        .map(|p| {
            format!(
                "at {} bytes {} {} {unit}, {} {} {unit}",
                p.payload_bytes,
                cmp.a,
                num(p.a.mean),
                cmp.b,
                num(p.b.mean)
            )
        })
        .collect();
    Finding {
        text: format!(
            "{}: not compared, {why}; each is shown on its own in the tables and the figure.",
            capitalise(subject)
        ),
        evidence: format!("Means: {}.", sides.join("; ")),
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A size whose runs cannot support a comparison: fewer than 2 runs on a side, after
/// receiver-limited runs were left out (`left_*`).
struct Short {
    size: u32,
    n_a: usize,
    n_b: usize,
    left_a: usize,
    left_b: usize,
}

/// The sizes of one comparison that found no significant difference, split by what
/// their runs allowed: a test that could reach alpha, a test that could not (with the
/// smallest corrected p it could reach), or too few runs for any test.
struct NotShown<'a> {
    tested: Vec<&'a Point>,
    weak: Vec<(&'a Point, f64)>,
    short: Vec<Short>,
    /// Tests Holm corrected over, and the primary test.
    tests: usize,
    test: PrimaryTest,
}

fn not_shown<'a>(cmp: &Comparison, pts: &[&'a Point], rank: bool, alpha: f64) -> NotShown<'a> {
    let test = if rank {
        PrimaryTest::MannWhitney
    } else {
        PrimaryTest::Welch
    };
    let tests = cmp.points.iter().filter(|p| !p.p.is_nan()).count();
    let mut out = NotShown {
        tested: Vec::new(),
        weak: Vec::new(),
        short: Vec::new(),
        tests,
        test,
    };
    for &p in pts.iter().filter(|p| !p.significant(alpha)) {
        let reach = smallest_corrected_p(test, p.a.n, p.b.n, tests);
        if p.too_few() {
            out.short.push(Short {
                size: p.payload_bytes,
                n_a: p.a.n,
                n_b: p.b.n,
                left_a: p.left_out_a,
                left_b: p.left_out_b,
            });
        } else if !reach.can_reach(alpha) {
            let bound = match reach {
                Reach::AtLeast(b) => b,
                _ => f64::NAN,
            };
            out.weak.push((p, bound));
        } else {
            out.tested.push(p);
        }
    }
    out.short.extend(cmp.emptied.iter().map(|e| Short {
        size: e.payload_bytes,
        n_a: e.n_a,
        n_b: e.n_b,
        left_a: e.left_out_a,
        left_b: e.left_out_b,
    }));
    out.short.sort_by_key(|s| s.size);
    out
}

/// "3" or "3–5".
fn n_range(ns: impl Iterator<Item = usize> + Clone) -> String {
    let lo = ns.clone().min().unwrap_or(0);
    let hi = ns.max().unwrap_or(0);
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    }
}

/// "cannot show a difference with this many runs (…)": the test, the runs and the
/// smallest corrected p they allow. `at` names the sizes unless these are all of them.
fn weak_clause(ns: &NotShown, a: &str, b: &str, at: &str, alpha: f64) -> String {
    let bound = ns.weak.iter().map(|w| w.1).fold(f64::INFINITY, f64::min);
    format!(
        "cannot show a difference with this many runs{at} (n={} {a} and {} {b}: {} cannot go below a corrected p of {} over {} size{}, alpha = {alpha})",
        n_range(ns.weak.iter().map(|w| w.0.a.n)),
        n_range(ns.weak.iter().map(|w| w.0.b.n)),
        ns.test.name(),
        p_short(bound),
        ns.tests,
        if ns.tests == 1 { "" } else { "s" },
    )
}

/// "too few runs to compare (n=1 IPv4 and 3 IPv6 at 128 bytes)", with the
/// receiver-limited runs that were left out and why.
fn short_clause(short: &[Short], a: &str, b: &str) -> String {
    let per_size: Vec<String> = short
        .iter()
        .map(|s| format!("n={} {a} and {} {b} at {} bytes", s.n_a, s.n_b, s.size))
        .collect();
    let mut text = format!("too few runs to compare ({})", per_size.join("; "));
    let (left_a, left_b) = short
        .iter()
        .fold((0, 0), |(x, y), s| (x + s.left_a, y + s.left_b));
    let left = left_a + left_b;
    if left > 0 {
        text.push_str(&format!(
            " once {left} receiver-limited run{} {} left out ({a} {left_a}, {b} {left_b}: the receiving socket dropped datagrams itself, so their loss describes the receiving host, not the network)",
            if left == 1 { "" } else { "s" },
            if left == 1 { "was" } else { "were" },
        ));
    }
    text
}

/// " at 128 and 640 bytes", or nothing when `sizes` are all `total` sizes compared.
fn at_unless_all(sizes: &[u32], total: usize) -> String {
    if sizes.len() == total {
        String::new()
    } else {
        format!(" at {}", sizes_list(sizes))
    }
}

/// The lead of a comparison's sentence: what survived Holm's correction in each
/// direction (pushing "no significant difference at …" for the tested rest onto
/// `clauses`), else "equal" or "did not differ significantly" over the sizes that could
/// have shown a difference; `None` when no size could, so the caveats lead instead.
fn lead(
    t: &Tally,
    ns: &NotShown,
    cmp: &Comparison,
    what: &str,
    higher_is_better: bool,
    whole: bool,
    clauses: &mut Vec<String>,
) -> Option<String> {
    let (n, a, b) = (t.n, &cmp.a, &cmp.b);
    let (better, worse) = if higher_is_better {
        ("higher", "lower")
    } else {
        ("lower", "higher")
    };
    let tested_sizes: Vec<u32> = ns.tested.iter().map(|p| p.payload_bytes).collect();
    if !t.sig_a.is_empty() || !t.sig_b.is_empty() {
        let (lead, other, sig_lead, sig_other) = if t.sig_a.len() >= t.sig_b.len() {
            (a, b, &t.sig_a, &t.sig_b)
        } else {
            (b, a, &t.sig_b, &t.sig_a)
        };
        let mut s = format!(
            "{lead} {what} was significantly {better} than {other} at {} of {n} sizes ({})",
            sig_lead.len(),
            sizes_list(sig_lead)
        );
        if !sig_other.is_empty() {
            s.push_str(&format!(
                " and significantly {worse} at {} ({})",
                sig_other.len(),
                sizes_list(sig_other)
            ));
        }
        if !tested_sizes.is_empty() {
            clauses.push(format!(
                "no significant difference at {}",
                sizes_list(&tested_sizes)
            ));
        }
        return Some(s);
    }
    if ns.tested.is_empty() {
        return None;
    }
    let equal = all_equal(ns, higher_is_better);
    let at = match (whole, n) {
        (false, _) => sizes_list(&tested_sizes),
        (true, 1) => "the one size compared".to_string(),
        (true, _) if equal => format!("all {n} sizes"),
        (true, _) => format!("any of the {n} sizes"),
    };
    if equal {
        return Some(format!("{a} and {b} {what} were equal at {at}"));
    }
    let min_p = ns
        .tested
        .iter()
        .map(|p| p.p_holm)
        .fold(f64::INFINITY, f64::min);
    Some(format!(
        "{a} and {b} {what} did not differ significantly at {at} (smallest Holm-adjusted {})",
        p_phrase(min_p)
    ))
}

/// Whether every size tested found the two sides equal: equal means, and for a rank
/// test as many run pairs either way (equal means alone can hide a shift).
fn all_equal(ns: &NotShown, higher_is_better: bool) -> bool {
    ns.tested
        .iter()
        .all(|p| p.welch.diff == 0.0 && p.better_side(higher_is_better) == Side::Tie)
}

/// The sentence of one comparison. It leads with what survived Holm's correction, in
/// each direction separately; sizes without a significant difference are split by what
/// their runs allowed: "no significant difference" (or "equal") only where the test
/// could have shown one, "cannot show a difference with this many runs" where even a
/// complete separation would not reach alpha, "too few runs to compare" where a side
/// had fewer than 2 runs (naming the receiver-limited runs left out). Then the
/// direction of the means at every size (ties are ties, credited to neither side) and
/// the largest difference in either direction with its corrected p.
fn sentence(
    analysis: &Analysis,
    vd: &ViewData,
    cmp: &Comparison,
    prefix: &str,
    what: &str,
) -> Option<Finding> {
    let alpha = analysis.options.alpha;
    let view = &vd.view;
    let hib = view.higher_is_better;
    let t = cmp.tally(hib, alpha);
    if t.n == 0 && cmp.emptied.is_empty() {
        return None;
    }
    let pts: Vec<&Point> = cmp
        .points
        .iter()
        .filter(|p| p.welch.diff.is_finite())
        .collect();
    let n = t.n;
    let total = n + cmp.emptied.len();
    let better = if hib { "higher" } else { "lower" };
    let what = what.to_string();
    let (a, b) = (&cmp.a, &cmp.b);
    let at_sizes = if n == 1 {
        "the one size compared".to_string()
    } else {
        format!("all {n} sizes")
    };
    let ns = not_shown(cmp, &pts, view.rank_test, alpha);
    let whole = ns.tested.len() == total;
    let all_tied = n > 0 && t.ties == n;
    let mut clauses: Vec<String> = Vec::new();
    let lead = lead(&t, &ns, cmp, &what, hib, whole, &mut clauses);
    if !ns.weak.is_empty() {
        let sizes: Vec<u32> = ns.weak.iter().map(|w| w.0.payload_bytes).collect();
        let at = at_unless_all(&sizes, total);
        clauses.push(weak_clause(&ns, a, b, &at, alpha));
    }
    if !ns.short.is_empty() {
        clauses.push(short_clause(&ns.short, a, b));
    }
    // Then the lead already said "were equal at" every size.
    let equal_said = whole && all_equal(&ns, hib);
    let mut text = match lead {
        Some(l) => [l]
            .into_iter()
            .chain(clauses)
            .collect::<Vec<_>>()
            .join("; "),
        None => format!("{a} and {b} {what}: {}", clauses.join("; ")),
    };
    text = if prefix.is_empty() {
        capitalise(&text)
    } else {
        format!("{prefix}{text}")
    };
    // The direction of the test that judged it: the means for Welch, the run pairs
    // (Mann-Whitney's U) for a rank test.
    if all_tied && !equal_said {
        text.push_str(&if view.rank_test {
            format!("; neither side was {better} in most run pairs at {at_sizes}")
        } else {
            format!("; the means were equal at {at_sizes}")
        });
    } else if n > 0 && !all_tied {
        text.push_str(&if view.rank_test {
            format!(
                "; in most run pairs, {a} was {better} at {} and {b} at {} of {n} sizes",
                t.a_better, t.b_better
            )
        } else {
            format!(
                "; the mean was {better} for {a} at {} and for {b} at {} of {n} sizes",
                t.a_better, t.b_better
            )
        });
        if t.ties > 0 {
            let neither = if view.rank_test { "neither" } else { "equal" };
            text.push_str(&format!(" and {neither} at {}", t.ties));
        }
    }
    let evidence = largest_and_evidence(&mut text, cmp, view, &pts, &ns, &analysis.options);
    text.push('.');
    Some(Finding { text, evidence })
}

/// The effect of one size in words, as the test that judged it measures it: the
/// Hodges-Lehmann shift with its CI for a rank-tested view, else the difference of means
/// with its Welch CI and its percentage of the report's stated base; which side was
/// higher; the test's verdict; and the outlying runs of its cells, with the difference
/// of means without them.
fn effect_phrase(
    cmp: &Comparison,
    view: &View,
    p: &Point,
    ns: &NotShown,
    options: &AnalysisOptions,
) -> String {
    let (a, b) = (&cmp.a, &cmp.b);
    let level = options.confidence;
    let alpha = options.alpha;
    let unit_words = if view.unit == "%" {
        "percentage points"
    } else {
        view.unit
    };
    let (effect, (lo, hi), name) = p.effect(level);
    let higher = if effect > 0.0 { a } else { b };
    // The amount and its CI as the size of the difference in the direction named.
    let (lo, hi) = if effect < 0.0 { (-hi, -lo) } else { (lo, hi) };
    let ci = |achieved: f64| {
        let reach = if achieved + 1e-9 < level {
            format!("{:.0}% CI, the most these runs reach", achieved * 100.0)
        } else {
            format!("{:.0}% CI", level * 100.0)
        };
        format!(
            "{reach} [{}, {}]",
            num_like(lo, effect),
            num_like(hi, effect)
        )
    };
    let amount = match &p.hodges_lehmann {
        Some(hl) => format!(
            "a {name} of {} {unit_words} ({})",
            num(effect.abs()),
            ci(hl.level_achieved)
        ),
        None => format!(
            "a {name} of {} {unit_words} ({}; {a} − {b} = {}% of {})",
            num(effect.abs()),
            ci(level),
            pct(p.diff_pct(options)),
            options.base_name(a, b),
        ),
    };
    let test = if p.too_few() {
        "too few runs to test".to_string()
    } else {
        let verdict = if p.significant(alpha) {
            ""
        } else if ns.weak.iter().any(|w| std::ptr::eq(w.0, p)) {
            ": not significant, and this many runs could not show it"
        } else {
            ": not significant"
        };
        format!(
            "{} {} after Holm correction{verdict}",
            view.test_name(),
            p_phrase(p.p_holm)
        )
    };
    let mut out = format!(
        "{amount} at {} bytes, {higher} higher ({test})",
        p.payload_bytes
    );
    let k = p.outliers_a.len() + p.outliers_b.len();
    if k > 0 {
        let without = |s: &stats::Summary, o: &[f64]| {
            let kept = s.n - o.len();
            (kept > 0).then(|| (s.mean * s.n as f64 - o.iter().sum::<f64>()) / kept as f64)
        };
        let list = |who: &str, o: &[f64]| {
            (!o.is_empty()).then(|| {
                format!(
                    "{who} {}",
                    o.iter()
                        .map(|v| format!("{} {}", num(*v), view.unit))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
        };
        let named: Vec<String> = [list(a, &p.outliers_a), list(b, &p.outliers_b)]
            .into_iter()
            .flatten()
            .collect();
        out.push_str(&format!(
            "; {k} outlying run{} (beyond {} scaled MADs of {} cell's median and more than {:.0} % from it: {})",
            if k == 1 { "" } else { "s" },
            stats::OUTLIER_SCALED_MADS,
            if k == 1 { "its" } else { "their" },
            stats::OUTLIER_MIN_RELATIVE * 100.0,
            named.join("; ")
        ));
        if let (Some(ma), Some(mb)) = (without(&p.a, &p.outliers_a), without(&p.b, &p.outliers_b)) {
            out.push_str(&format!(
                "; without {}, {a} − {b} = {} {unit_words} (difference of means)",
                if k == 1 { "it" } else { "them" },
                num(ma - mb)
            ));
        }
    }
    out
}

/// Appends the size to quote to `text`: the largest significant difference (by the
/// test's own effect) when there is one, naming a larger difference that was not
/// significant as such; otherwise the largest difference, said to be not significant.
/// Returns the evidence: that size's numbers, or every size's when the means were equal
/// everywhere; then the sizes left without runs on a side.
fn largest_and_evidence(
    text: &mut String,
    cmp: &Comparison,
    view: &View,
    pts: &[&Point],
    ns: &NotShown,
    options: &AnalysisOptions,
) -> String {
    let (a, b) = (&cmp.a, &cmp.b);
    let level = options.confidence;
    let size_of = |p: &&Point| p.effect(level).0.abs();
    let largest_among = |keep: &dyn Fn(&Point) -> bool| {
        pts.iter()
            .filter(|p| keep(p) && p.effect(level).0 != 0.0)
            .max_by(|x, y| size_of(x).total_cmp(&size_of(y)))
            .copied()
    };
    let largest_sig = largest_among(&|p| p.significant(options.alpha));
    let largest = largest_among(&|_| true);
    let quoted = largest_sig.or(largest);
    let mut evidence = if let Some(p) = quoted {
        let phrase = effect_phrase(cmp, view, p, ns, options);
        if largest_sig.is_some() {
            text.push_str(&format!(
                "; the largest significant difference was {phrase}"
            ));
            if let Some(l) = largest.filter(|l| !std::ptr::eq(*l, p)) {
                text.push_str(&format!(
                    "; a larger difference was not significant: {}",
                    effect_phrase(cmp, view, l, ns, options)
                ));
            }
        } else {
            text.push_str(&format!("; the largest difference was {phrase}"));
        }
        point_evidence(cmp, view, p, level)
    } else if pts.is_empty() {
        String::new()
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
    for e in &cmp.emptied {
        if !evidence.is_empty() {
            evidence.push(' ');
        }
        evidence.push_str(&format!(
            "At {} bytes: n = {} {a} and {} {b} after {} and {} receiver-limited runs were left out; not compared.",
            e.payload_bytes, e.n_a, e.n_b, e.left_out_a, e.left_out_b
        ));
    }
    evidence
}

/// Numbers behind one size of a comparison.
fn point_evidence(cmp: &Comparison, view: &View, p: &Point, level: f64) -> String {
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
                    if m.exact { "exact" } else { "normal approximation, large samples" },
                    m.rank_biserial
                )
            })
            .unwrap_or_default(),
        num(p.hedges_g),
        unit = view.unit,
    )
}
