//! The studies' tables built from an [`Analysis`]: standard deviations by size × system ×
//! IP version, means over sizes with percentage differences, per-size comparisons with
//! their tests, and the best/better summary.

use crate::analysis::{Analysis, AnalysisOptions, Comparison, Point, Side, ViewData};
use crate::format::{int_cell, num, num_cell, num_like, p_cell, pct, pct_cell};
use crate::table::{Cell, Table};
use wire::spec::Family;

const FAMILIES: [Family; 2] = [Family::V4, Family::V6];

/// "Packet size (bytes)", then "System IPv4", "System IPv6" for each of `systems`.
fn per_cell_columns(vd: &ViewData, systems: &[usize]) -> Vec<String> {
    let mut columns = vec!["Packet size (bytes)".to_string()];
    for &s in systems {
        for f in FAMILIES {
            columns.push(format!("{} {f}", vd.systems[s]));
        }
    }
    columns
}

/// One row per packet size: the size, then `cell_of` each (system, IP version) cell of
/// `systems` in column order (`None` where the cell has no runs).
fn per_cell_rows(
    vd: &ViewData,
    systems: &[usize],
    mut cell_of: impl FnMut(Option<&crate::analysis::Cell>) -> Cell,
) -> Vec<Vec<Cell>> {
    vd.sizes
        .iter()
        .map(|&size| {
            let mut row: Vec<Cell> = vec![int_cell(size)];
            for &s in systems {
                for f in FAMILIES {
                    row.push(cell_of(vd.cell(s, f, size)));
                }
            }
            row
        })
        .collect()
}

/// Columns "System IPv4", "System IPv6" for every system with data in the view.
fn systems_with_data(vd: &ViewData) -> Vec<usize> {
    (0..vd.systems.len())
        .filter(|&s| vd.cells.keys().any(|k| k.0 == s))
        .collect()
}

/// Standard deviation by packet size (rows) × system × IP version (columns).
pub fn sd_table(vd: &ViewData) -> Table {
    let systems = systems_with_data(vd);
    let columns = per_cell_columns(vd, &systems);
    let mut n_min = usize::MAX;
    let mut n_max = 0;
    let rows = per_cell_rows(vd, &systems, |cell| match cell {
        Some(c) => {
            n_min = n_min.min(c.summary.n);
            n_max = n_max.max(c.summary.n);
            num_cell(c.summary.sd)
        }
        None => "".into(),
    });
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

/// "all 3" or "2 of 3: 128, 1408".
fn sizes_text(common: &[u32], all: usize) -> String {
    if common.len() == all {
        format!("all {all}")
    } else if common.is_empty() {
        "none in common".to_string()
    } else {
        let list: Vec<String> = common.iter().map(|s| s.to_string()).collect();
        format!("{} of {all}: {}", common.len(), list.join(", "))
    }
}

/// Means over sizes per system and IP version, "IPv4 higher than IPv6 (%)", and a row
/// per further system "A higher than B (%)". Every mean and percentage of a row uses
/// only the sizes both sides have (a missing cell would otherwise tilt the mean), and
/// the last column says which; with no size in common, each side's own sizes and no
/// percentage.
pub fn means_table(vd: &ViewData, options: &AnalysisOptions) -> Table {
    let systems = systems_with_data(vd);
    let unit = vd.view.unit;
    let all = vd.sizes.len();
    let columns = vec![
        "System".to_string(),
        format!("IPv4 mean ({unit})"),
        format!("IPv6 mean ({unit})"),
        options.percent_words("IPv4", "IPv6"),
        "Sizes averaged (bytes)".to_string(),
    ];
    let mut rows = Vec::new();
    for &s in &systems {
        let common = vd.common_sizes(&[(s, Family::V4), (s, Family::V6)]);
        let mean = |f, sizes: &[u32]| vd.mean_over(s, f, sizes).unwrap_or(f64::NAN);
        if common.is_empty() {
            // No size in common (or one IP version only): each mean over its own sizes,
            // listed, and no percentage — means over different sizes do not compare.
            let own = |f| vd.common_sizes(&[(s, f)]);
            let (s4, s6) = (own(Family::V4), own(Family::V6));
            let listed = |sizes: &[u32]| {
                if sizes.is_empty() {
                    "no runs".to_string()
                } else {
                    sizes_text(sizes, all)
                }
            };
            rows.push(vec![
                vd.systems[s].clone().into(),
                num_cell(mean(Family::V4, &s4)),
                num_cell(mean(Family::V6, &s6)),
                pct_cell(f64::NAN),
                format!(
                    "no packet size in common (IPv4: {}; IPv6: {})",
                    listed(&s4),
                    listed(&s6)
                )
                .into(),
            ]);
            continue;
        }
        let (m4, m6) = (mean(Family::V4, &common), mean(Family::V6, &common));
        rows.push(vec![
            vd.systems[s].clone().into(),
            num_cell(m4),
            num_cell(m6),
            pct_cell(options.percent(m4, m6)),
            sizes_text(&common, all).into(),
        ]);
    }
    if let Some((&first, others)) = systems.split_first() {
        for &other in others {
            let mut row: Vec<Cell> = vec![options
                .percent_words(&vd.systems[first], &vd.systems[other])
                .into()];
            let mut used = Vec::new();
            for f in FAMILIES {
                let common = vd.common_sizes(&[(first, f), (other, f)]);
                let a = vd.mean_over(first, f, &common).unwrap_or(f64::NAN);
                let b = vd.mean_over(other, f, &common).unwrap_or(f64::NAN);
                row.push(pct_cell(options.percent(a, b)));
                used.push(format!("{f}: {}", sizes_text(&common, all)));
            }
            row.push("".into());
            row.push(used.join("; ").into());
            rows.push(row);
        }
    }
    Table {
        id: format!("{}-means", vd.view.id),
        title: format!("Mean {} over packet sizes ({unit})", vd.view.title()),
        columns,
        rows,
        note: Some(
            "Mean of the per-size means over the sizes both sides of the row have (listed); \
             where they have no packet size in common, each side's mean over its own sizes \
             (listed) and no percentage (–): means over different sizes do not compare. \
             Percentages are the difference as a percentage of the named base (the column or row \
             header says which); a negative one means lower. These are descriptive: which \
             differences are real is in the per-size tests."
                .to_string(),
        ),
    }
}

/// Per-size detail of a set of comparisons (IPv4 vs IPv6, or system vs system).
pub fn comparison_table(
    vd: &ViewData,
    comparisons: &[Comparison],
    id_suffix: &str,
    title: &str,
    context_column: &str,
    options: &AnalysisOptions,
    holm_words: &str,
) -> Table {
    let (level, alpha) = (options.confidence, options.alpha);
    let unit = vd.view.unit;
    let rank = vd.view.rank_test;
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
        options.percent_words("A", "B"),
        "Welch p".to_string(),
    ];
    if rank {
        columns.push("Mann-Whitney p".to_string());
        columns.push(format!("Hodges-Lehmann shift ({unit}) [CI]"));
    }
    columns.extend([
        "Holm p".to_string(),
        "Hedges' g".to_string(),
        "Significant".to_string(),
        "Outlying runs (A; B)".to_string(),
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
                pct_cell(pt.diff_pct(options)),
            ];
            if let Some(why) = &cmp.not_compared {
                // Not like with like: the means stand on their own, no test is shown.
                let tests = 3 + if rank { 2 } else { 0 };
                row.extend((0..tests).map(|_| Cell::from("–")));
                row.push(format!("not compared: {why}").into());
                row.push("".into());
                rows.push(row);
                continue;
            }
            row.push(p_cell(pt.welch.p));
            if rank {
                row.push(p_cell(pt.mann_whitney.map_or(f64::NAN, |m| m.p)));
                row.push(match &pt.hodges_lehmann {
                    Some(hl) => format!(
                        "{} [{}, {}]{}",
                        num(hl.shift),
                        num_like(hl.ci.0, hl.shift),
                        num_like(hl.ci.1, hl.shift),
                        if hl.level_achieved + 1e-9 < level {
                            format!(" ({:.0}% reachable)", hl.level_achieved * 100.0)
                        } else {
                            String::new()
                        }
                    )
                    .into(),
                    None => "".into(),
                });
            }
            row.push(p_cell(pt.p_holm));
            row.push(num_cell(pt.hedges_g));
            row.push(
                if pt.significant(alpha) {
                    "yes"
                } else if pt.too_few() {
                    "too few runs"
                } else if pt.p_holm.is_nan() {
                    "–"
                } else {
                    "no"
                }
                .into(),
            );
            let list = |v: &[f64]| {
                if v.is_empty() {
                    "–".to_string()
                } else {
                    v.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ")
                }
            };
            row.push(format!("{}; {}", list(&pt.outliers_a), list(&pt.outliers_b)).into());
            rows.push(row);
        }
    }
    Table {
        id: format!("{}-{id_suffix}", vd.view.id),
        title: format!("{title}: {}", vd.view.title()),
        columns,
        rows,
        note: Some(format!(
            "Primary test: {}; Holm correction {holm_words}; significant = Holm p below {alpha}. \
             Hedges' g is the standardised difference A − B.{} Two groups of identical values have no spread: \
             Welch's test is then taken as exact (p = 1 when the values are equal, 0 when they differ; SciPy \
             gives NaN). Outlying runs: beyond {} scaled median absolute deviations (MAD × 1.4826) of their \
             cell's median and more than {:.0} % of the median away from it; they are kept in \
             every statistic and listed here.",
            vd.view.test_name(),
            if rank {
                " The effect that goes with Mann-Whitney is the Hodges-Lehmann shift (median of the \
                 pairwise differences A − B) with its distribution-free CI; with few runs the \
                 reachable confidence is said."
            } else {
                ""
            },
            stats::OUTLIER_SCALED_MADS,
            stats::OUTLIER_MIN_RELATIVE * 100.0
        )),
    }
}

/// Candidates of the summary: (system, IP version).
type Who = (usize, Family);

/// "better" relations that survived the correction: `x` beats `y` when their comparison
/// found `x` significantly better at more than half the sizes and `y` at none.
fn beats(analysis: &Analysis, vd: &ViewData) -> Vec<(Who, Who)> {
    let alpha = analysis.options.alpha;
    let hib = vd.view.higher_is_better;
    let index = |label: &str| analysis.systems.iter().position(|s| s == label);
    let mut out = Vec::new();
    for c in &vd.family_cmp {
        if let (Some(s), Some(w)) = (index(&c.context), c.tally(hib, alpha).winner()) {
            let (v4, v6) = ((s, Family::V4), (s, Family::V6));
            out.push(if w == Side::A { (v4, v6) } else { (v6, v4) });
        }
    }
    for c in &vd.system_cmp {
        let family = FAMILIES.into_iter().find(|f| f.to_string() == c.context);
        if let (Some(f), Some(a), Some(b), Some(w)) = (
            family,
            index(&c.a),
            index(&c.b),
            c.tally(hib, alpha).winner(),
        ) {
            out.push(if w == Side::A {
                ((a, f), (b, f))
            } else {
                ((b, f), (a, f))
            });
        }
    }
    out
}

/// The candidate that beats every other, directly or through a chain of significant
/// "better" relations; `None` when no candidate does.
fn best_of(candidates: &[Who], edges: &[(Who, Who)]) -> Option<Who> {
    candidates.iter().copied().find(|&c| {
        let mut reached = vec![c];
        let mut i = 0;
        while i < reached.len() {
            let from = reached[i];
            for &(x, y) in edges {
                if x == from && !reached.contains(&y) {
                    reached.push(y);
                }
            }
            i += 1;
        }
        candidates.iter().all(|o| reached.contains(o))
    })
}

/// The magnitude of a set of sizes of one comparison, each the primary test's effect as
/// a percentage of the report's base ([`crate::analysis::Point::effect_pct`]): "1.27 %
/// [1.11, 1.40]" at one size; over several, the range of the per-size values and, in
/// brackets, the lowest and the highest bound of their CIs ("1.27 to 1.35 % [1.11, 1.52]").
/// `flip` states B − A instead of A − B (the side that was higher). Empty when no size
/// has a percentage (a base of zero).
fn magnitude(points: &[&Point], options: &AnalysisOptions, flip: bool) -> String {
    let sign = if flip { -1.0 } else { 1.0 };
    let mut values = Vec::new();
    let mut bounds: Option<(f64, f64)> = None;
    let mut every_ci = true;
    for p in points {
        let Some((e, ci)) = p.effect_pct(options) else {
            continue;
        };
        values.push(sign * e);
        match ci {
            Some((lo, hi)) => {
                let (lo, hi) = if flip { (-hi, -lo) } else { (lo, hi) };
                bounds = Some(bounds.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi))));
            }
            None => every_ci = false,
        }
    }
    let (Some(lo), Some(hi)) = (
        values.iter().copied().reduce(f64::min),
        values.iter().copied().reduce(f64::max),
    ) else {
        return String::new();
    };
    let range = if values.len() == 1 || pct(lo) == pct(hi) {
        format!("{} %", pct(lo))
    } else {
        format!("{} to {} %", pct(lo), pct(hi))
    };
    match bounds.filter(|_| every_ci) {
        Some((l, h)) => format!("{range} [{}, {}]", pct(l), pct(h)),
        None => range,
    }
}

/// "Holm p ≤ 0.002": the largest corrected p of these sizes, rounded up to three
/// decimals (at least 0.001), so the bound holds as printed.
fn holm_bound(points: &[&Point]) -> String {
    let most = points.iter().map(|p| p.p_holm).fold(0.0_f64, f64::max);
    let up = ((most * 1000.0).ceil() / 1000.0).max(0.001);
    format!("Holm p ≤ {up:.3}")
}

/// The verdict of one comparison for the summaries: the side that was significantly
/// higher (or lower) with the magnitude of the primary test's effect on the report's
/// percentage base, at how many sizes and with which corrected p — "IPv4 higher by
/// 1.27 % [1.11, 1.40] at 3 of 3 sizes (Holm p < 0.001)" — or why there is none, in a
/// word: equal, no significant difference (with the range of the differences), too few
/// runs to tell, not compared.
pub fn verdict(cmp: &Comparison, vd: &ViewData, options: &AnalysisOptions) -> String {
    let alpha = options.alpha;
    let hib = vd.view.higher_is_better;
    if let Some(why) = &cmp.not_compared {
        return format!("not compared: {why}");
    }
    let t = cmp.tally(hib, alpha);
    if t.n == 0 {
        return "not compared: no size with usable runs on both sides".to_string();
    }
    let tested: Vec<&Point> = cmp
        .points
        .iter()
        .filter(|p| p.welch.diff.is_finite())
        .collect();
    if t.sig_a.is_empty() && t.sig_b.is_empty() {
        if !cmp.could_show(vd.view.rank_test, alpha) {
            return "too few runs to tell".to_string();
        }
        if t.ties == t.n {
            return format!("equal at all {} sizes", t.n);
        }
        let diff = magnitude(&tested, options, false);
        return if diff.is_empty() {
            "no significant difference".to_string()
        } else {
            let diff = diff.split(" [").next().unwrap_or(&diff);
            format!("no significant difference ({} − {}: {diff})", cmp.a, cmp.b)
        };
    }
    let word = if hib { "higher" } else { "lower" };
    let side = |sizes: &[u32], name: &str, a_side: bool| {
        let pts: Vec<&Point> = tested
            .iter()
            .copied()
            .filter(|p| sizes.contains(&p.payload_bytes))
            .collect();
        // The side named was higher: A − B is negative when B was, or when A was
        // better at a lower-is-better metric.
        let flip = a_side != hib;
        let by = magnitude(&pts, options, flip);
        let by = if by.is_empty() {
            String::new()
        } else {
            format!(" by {by}")
        };
        format!(
            "{name} {word}{by} at {} of {} sizes ({})",
            pts.len(),
            t.n,
            holm_bound(&pts)
        )
    };
    match (t.sig_a.is_empty(), t.sig_b.is_empty()) {
        (false, true) => side(&t.sig_a, &cmp.a, true),
        (true, false) => side(&t.sig_b, &cmp.b, false),
        _ => format!(
            "{}; {}",
            side(&t.sig_a, &cmp.a, true),
            side(&t.sig_b, &cmp.b, false)
        ),
    }
}

/// What the magnitudes of a summary are, for its note.
fn magnitude_note(options: &AnalysisOptions, a: &str, b: &str) -> String {
    format!(
        "The magnitude is the effect of the view's primary test as a percentage of the {base} \
         side's mean ({words}, stated as the named side's lead): the difference of means with \
         its Welch {ci:.0}% CI for Welch's t-test, the Hodges-Lehmann shift with its \
         distribution-free CI for Mann-Whitney U; at several sizes, the range of the per-size \
         values and, in brackets, the lowest and the highest bound of their CIs; Holm p ≤ x = the \
         largest corrected p of those sizes, rounded up. No significant difference (A − B: \
         range) gives the range of the per-size magnitudes, signed as A − B.",
        base = options.base_name(a, b),
        words = options.percent_words(a, b),
        ci = options.confidence * 100.0,
    )
}

/// Per metric: within each system, the IPv4-vs-IPv6 verdict with its magnitude
/// ([`verdict`]), and the best system and IP version — named only when it is
/// significantly better than every other, directly or through a chain of significant
/// comparisons. One column per system, in campaign order.
pub fn summary_table(analysis: &Analysis) -> Table {
    let options = &analysis.options;
    let alpha = options.alpha;
    let mut columns = vec!["Metric".to_string()];
    for s in &analysis.systems {
        columns.push(format!("{s}: IPv4 vs IPv6"));
    }
    columns.push("Best".to_string());
    let mut rows = Vec::new();
    for vd in &analysis.views {
        let mut row: Vec<Cell> = vec![vd.view.title().into()];
        if vd.view.criterion.is_some() {
            for _ in &analysis.systems {
                row.push("not compared: the method's criterion".into());
            }
            row.push("".into());
            rows.push(row);
            continue;
        }
        let candidates: Vec<Who> = (0..analysis.systems.len())
            .flat_map(|s| FAMILIES.map(|f| (s, f)))
            .filter(|&(s, f)| vd.sizes.iter().any(|&z| vd.cell(s, f, z).is_some()))
            .collect();
        let best = if candidates.len() > 1 {
            best_of(&candidates, &beats(analysis, vd))
        } else {
            None
        };
        for label in &analysis.systems {
            let cmp = vd.family_cmp.iter().find(|c| &c.context == label);
            row.push(match cmp {
                Some(c) => verdict(c, vd, options).into(),
                // No size where both IP versions have runs (e.g. every loss run of one
                // version was receiver-limited and left out), or no runs at all.
                None if vd.cells.keys().any(|k| analysis.systems[k.0] == *label) => {
                    "not compared: one IP version only".into()
                }
                None => "not measured".into(),
            });
        }
        row.push(match best {
            Some((s, f)) => format!("{} {f}", analysis.systems[s]).into(),
            None if candidates.len() > 1 => "no significant best".into(),
            None => "".into(),
        });
        rows.push(row);
    }
    let one_system = if analysis.systems.len() == 1 {
        " No system comparison: this report holds one campaign (one system); report two or more \
         campaigns (dualperf report --campaign 1 2) to compare systems."
    } else {
        " Which system was better, per IP version: the next table."
    };
    Table {
        id: "summary".to_string(),
        title: "Summary: IPv4 against IPv6 on each system, where significant, and by how much"
            .to_string(),
        columns,
        rows,
        note: Some(format!(
            "X higher (lower) by m at k of n sizes = X significantly higher (lower) (Holm-corrected \
             p below {alpha}, the view's primary test; Holm {}) at k of the n sizes compared. {} \
             No significant difference = at no size (not a proof that they are equal); equal = identical at every size; too few \
             runs to tell = no size had enough runs on both sides for a complete separation to \
             reach significance after correction; not compared = the reason follows. Best = \
             significantly better than every other system and IP version at more than half the \
             sizes and worse at none, directly or through a chain of such comparisons (never \
             from means alone); no significant best = no such candidate.{one_system}",
            analysis.holm_words(),
            magnitude_note(options, "IPv4", "IPv6")
        )),
    }
}

/// Per metric and per pair of systems: the system-vs-system verdict over IPv4 and over
/// IPv6 with its magnitude ([`verdict`]) (seed 004's Table V asks this as much as IPv4
/// against IPv6). One row per metric and pair, so the table keeps its width with any
/// number of systems. `None` for a report of one system: there is nothing to compare.
pub fn system_summary_table(analysis: &Analysis) -> Option<Table> {
    let options = &analysis.options;
    let alpha = options.alpha;
    let n = analysis.systems.len();
    if n < 2 {
        return None;
    }
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            pairs.push((i, j));
        }
    }
    let columns = vec![
        "Metric".to_string(),
        "Systems".to_string(),
        "IPv4".to_string(),
        "IPv6".to_string(),
    ];
    let mut rows = Vec::new();
    for vd in &analysis.views {
        for &(i, j) in &pairs {
            let (a, b) = (&analysis.systems[i], &analysis.systems[j]);
            let mut row: Vec<Cell> = vec![vd.view.title().into(), format!("{a} vs {b}").into()];
            for f in FAMILIES {
                if vd.view.criterion.is_some() {
                    row.push("not compared: the method's criterion".into());
                    continue;
                }
                let cmp = vd
                    .system_cmp
                    .iter()
                    .find(|c| &c.a == a && &c.b == b && c.context == f.to_string());
                row.push(match cmp {
                    Some(c) => verdict(c, vd, options).into(),
                    None => "not compared: no size in common".into(),
                });
            }
            rows.push(row);
        }
    }
    let (a, b) = (&analysis.systems[0], &analysis.systems[1]);
    Some(Table {
        id: "summary-systems".to_string(),
        title: "Summary: system against system per IP version, where significant, and by how much"
            .to_string(),
        columns,
        rows,
        note: Some(format!(
            "X higher (lower) by m at k of n sizes = X significantly higher (lower) (Holm-corrected \
             p below {alpha}, the view's primary test; Holm {}) at k of the n sizes both systems \
             measured with this IP version. {} No significant difference = at no size (not a proof that \
             they are equal); too few runs to tell = \
             no size had enough runs for a difference to reach significance after correction; \
             not compared = the reason follows.",
            analysis.holm_words(),
            magnitude_note(options, a, b)
        )),
    })
}

/// Cells of a view whose coefficient of variation is under `target` %, and the cells
/// with a CV at all: (met, total).
pub fn cv_counts(vd: &ViewData, target: f64) -> (usize, usize) {
    let cvs = vd
        .cells
        .values()
        .map(|c| c.summary.cv() * 100.0)
        .filter(|v| v.is_finite());
    cvs.fold((0, 0), |(met, total), v| {
        (met + usize::from(v < target), total + 1)
    })
}

/// How the campaigns with a CV criterion decided their runs per cell, in words: dualperf
/// never stops a cell on its CV, so the criterion is checked afterwards.
pub fn cv_repetition_words(vd: &ViewData, confidence_target: bool) -> String {
    let ns: Vec<usize> = vd.cells.values().map(|c| c.summary.n).collect();
    let (lo, hi) = (
        ns.iter().copied().min().unwrap_or(0),
        ns.iter().copied().max().unwrap_or(0),
    );
    let runs = if lo == hi {
        format!("{lo} runs per cell")
    } else {
        format!("{lo}–{hi} runs per cell")
    };
    if confidence_target {
        format!("the study ran each cell to its confidence target ({runs}), not until its coefficient of variation met the criterion")
    } else {
        format!("the study ran a fixed {runs} and accepted every cell after them, not by its coefficient of variation")
    }
}

/// Coefficient of variation (sd / mean, %) of every cell against the study's criterion
/// (seed 004 accepted a cell when its standard deviation was under 10 % of its mean),
/// said as what happened: how the runs were decided and how many cells would have
/// passed. `None` when no campaign recorded a criterion or no cell has a CV.
pub fn cv_table(vd: &ViewData, target_pct: Option<f64>, confidence_target: bool) -> Option<Table> {
    let target = target_pct?;
    let (within, total) = cv_counts(vd, target);
    if total == 0 {
        return None;
    }
    let systems = systems_with_data(vd);
    let columns = per_cell_columns(vd, &systems);
    let rows = per_cell_rows(vd, &systems, |cell| {
        match cell
            .map(|c| c.summary.cv() * 100.0)
            .filter(|v| v.is_finite())
        {
            Some(v) => format!(
                "{} {}",
                num(v),
                if v < target { "(met)" } else { "(not met)" }
            )
            .into(),
            None => "".into(),
        }
    });
    Some(Table {
        id: format!("{}-cv", vd.view.id),
        title: format!(
            "Coefficient of variation of {} (%) against the study's {target} % criterion",
            vd.view.title()
        ),
        columns,
        rows,
        note: Some(format!(
            "Sample standard deviation over runs as % of the cell's mean. The study's criterion: \
             a cell's coefficient of variation under {target} %. What happened: {}; by the \
             criterion, {within} of {total} cells would have passed{}.",
            cv_repetition_words(vd, confidence_target),
            if within == 0 {
                " (none: see the warnings)"
            } else {
                ""
            }
        )),
    })
}

/// A warning per view where a recorded CV criterion was met by no cell.
pub fn cv_warning(
    vd: &ViewData,
    target_pct: Option<f64>,
    confidence_target: bool,
) -> Option<String> {
    let target = target_pct?;
    let (within, total) = cv_counts(vd, target);
    (within == 0 && total > 0).then(|| {
        format!(
            "{}: no cell met the study's coefficient-of-variation criterion (under {target} %; 0 of {total} cells): {}, so its cells do not meet the criterion the study names.",
            vd.view.title(),
            cv_repetition_words(vd, confidence_target)
        )
    })
}
