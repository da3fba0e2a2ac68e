//! The self-contained `report.html`: inline CSS and SVG, no script, nothing fetched. One
//! page with findings, summary, a section per view (figure and tables), the header
//! overhead, the method, and each campaign's runs and metadata. Readable from phone
//! width (tables scroll sideways inside their box, figures scale) to laptop width.

use crate::escape;
use crate::table::Table;
use crate::Report;
use std::fmt::Write as _;

const CSS: &str = r#"
:root { --fg: #1a1a1a; --muted: #555; --line: #dcdcdc; --accent: #0072B2; --bg: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); line-height: 1.5;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
header, nav, main, footer { max-width: 1400px; margin: 0 auto; padding: 0 16px; }
header h1 { font-size: 1.6rem; margin: 20px 0 4px; }
header p { margin: 4px 0; color: var(--muted); }
nav ul { display: flex; flex-wrap: wrap; gap: 4px 14px; list-style: none; padding: 0; margin: 12px 0; }
nav a, a { color: var(--accent); }
section { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 18px; margin: 16px 0; }
section h2 { font-size: 1.25rem; margin: 6px 0 10px; }
figure { margin: 8px 0 12px; }
svg.figure { width: 100%; max-width: 860px; height: auto; display: block; }
.figure-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 620px), 1fr)); gap: 8px 24px; }
table.summary td, table.summary th { white-space: normal; min-width: 9em; max-width: 24em; }
figure.headline svg.figure { max-width: 720px; }
.figure-grid figure { margin: 4px 0; min-width: 0; }
figcaption { color: var(--muted); font-size: 0.85rem; }
.table-wrap { overflow-x: auto; margin: 8px 0 2px; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; font-size: 0.85rem; }
caption { text-align: left; font-weight: 600; padding: 4px 0 6px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 9px; text-align: left; white-space: nowrap; vertical-align: top; }
thead th { background: #f0f2f5; white-space: normal; min-width: 4.5em; max-width: 11em; vertical-align: bottom; }
table[id^="t-metadata-"] th, table[id^="t-metadata-"] td { white-space: normal; overflow-wrap: anywhere; word-break: break-word; max-width: 26em; }
table[id^="t-metadata-"] { table-layout: auto; width: 100%; }
tbody th { white-space: normal; min-width: 7em; max-width: 16em; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
section.warnings { border-color: #d9a400; background: #fffaf0; }
section.warnings li { margin-bottom: 6px; }
.note, .evidence { color: var(--muted); font-size: 0.8rem; margin: 2px 0 10px; }
ol.findings li { margin-bottom: 10px; }
ol.findings p { margin: 0; }
details summary { cursor: pointer; color: var(--accent); margin: 6px 0; }
footer { color: var(--muted); font-size: 0.8rem; padding-bottom: 24px; }
@media (max-width: 640px) {
  header h1 { font-size: 1.3rem; }
  section { padding: 10px 10px; margin: 10px 0; border-radius: 6px; }
  header, nav, main, footer { padding: 0 8px; }
  table { font-size: 0.75rem; }
  th, td { padding: 3px 6px; }
  ol.findings { padding-left: 1.4em; }
}
"#;

/// The view whose figure heads the page, with it: the first (in the report's order) with
/// a significant comparison, else the first with a figure.
fn headline(report: &Report) -> Option<(&crate::ViewData, &crate::Figure)> {
    let alpha = report.analysis.options.alpha;
    let with_figure = report.analysis.views.iter().filter_map(|vd| {
        let fig = report.figures.iter().find(|f| f.id == vd.view.id)?;
        Some((vd, fig))
    });
    let significant = |vd: &crate::ViewData| {
        vd.view.criterion.is_none()
            && vd
                .family_cmp
                .iter()
                .chain(&vd.system_cmp)
                .any(|c| c.not_compared.is_none() && c.significant(alpha) > 0)
    };
    with_figure
        .clone()
        .find(|(vd, _)| significant(vd))
        .or_else(|| with_figure.clone().next())
}

/// The caption of a view's figure against packet size.
fn figure_caption(vd: &crate::ViewData, level: f64) -> String {
    let mut out = format!(
        "{} against packet size; one line per system and IP version: one colour and marker shape per system, IPv4 solid with filled markers, IPv6 dashed with hollow ones; error bars are {:.0}% confidence intervals of the mean.",
        vd.view.title(),
        level * 100.0
    );
    if let Some(c) = &vd.view.criterion {
        out.push(' ');
        out.push_str(&crate::svg::capitalise_first(c));
        out.push('.');
    }
    let unlike = vd.not_compared_notes();
    if !unlike.is_empty() {
        let _ = write!(
            out,
            " Not compared, each shown on its own: {}.",
            unlike.join("; ")
        );
    }
    out
}

fn tables_html(out: &mut String, tables: &[&Table]) {
    for t in tables {
        out.push_str(&t.to_html());
    }
}

/// The page. `title` is the page heading; `generator` names the program and version.
pub fn page(report: &Report, title: &str, generator: &str) -> String {
    let parts = Parts::of(report);
    let mut out = String::new();
    header(&mut out, report, title, generator);
    nav(&mut out, report, &parts);
    // The first screen answers the question: the summaries (IP versions, then systems),
    // then the figure of the headline comparison.
    summary_section(&mut out, report);
    warnings_section(&mut out, report);
    findings_section(&mut out, report);
    view_sections(&mut out, report);
    over_time_sections(&mut out, &parts);
    under_load_section(&mut out, &parts);
    overhead_sections(&mut out, report);
    method_section(&mut out, report);
    systems_section(&mut out, report);
    let _ = writeln!(
        out,
        "<footer><p>{}</p></footer>\n</body>\n</html>",
        escape::html(generator)
    );
    out
}

/// The table of `report` with this id.
fn find_table<'a>(report: &'a Report, id: &str) -> Option<&'a Table> {
    report.tables.iter().find(|t| t.id == id)
}

/// The figures and table of the sections after the views, which the navigation names
/// only when they are there.
struct Parts<'a> {
    /// Time series of selected runs (rrul's apart).
    series: Vec<&'a crate::Figure>,
    /// Per-window statistics of selected runs.
    windows: Vec<&'a crate::Figure>,
    /// rrul's figures and its table.
    loaded: Vec<&'a crate::Figure>,
    loaded_table: Option<&'a Table>,
}

impl<'a> Parts<'a> {
    fn of(report: &'a Report) -> Parts<'a> {
        let figures = |keep: &dyn Fn(&str) -> bool| -> Vec<&'a crate::Figure> {
            report.figures.iter().filter(|f| keep(&f.id)).collect()
        };
        Parts {
            series: figures(&|id| id.ends_with("-timeseries") && !id.starts_with("rrul-")),
            windows: figures(&|id| id.contains("-windows-")),
            loaded: figures(&|id| id.starts_with("rrul-")),
            loaded_table: find_table(report, "rrul"),
        }
    }
}

/// The document head (with the style) and the page header: title, systems, setting.
fn header(out: &mut String, report: &Report, title: &str, generator: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{t}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<header>\n<h1>{t}</h1>\n<p>Systems compared: {systems}. Made by {g} from the results database; every number below can be regenerated from it.</p>\n<p>Where the tests ran:</p>\n<ul class=\"setting\">{setting}</ul>\n</header>\n",
        t = escape::html(title),
        systems = escape::html(&report.analysis.systems.join(", ")),
        g = escape::html(generator),
        setting = report
            .setting
            .iter()
            .map(|s| format!("<li>{}</li>", escape::html(s)))
            .collect::<String>(),
    );
}

/// The navigation: a link to each section the page has.
fn nav(out: &mut String, report: &Report, parts: &Parts) {
    let find = |id: &str| find_table(report, id);
    out.push_str("<nav><ul>\n<li><a href=\"#summary\">Summary</a></li>\n<li><a href=\"#findings\">Findings</a></li>\n");
    if !report.warnings.is_empty() {
        out.push_str("<li><a href=\"#warnings\">Warnings</a></li>\n");
    }
    for vd in &report.analysis.views {
        let _ = writeln!(
            out,
            "<li><a href=\"#v-{}\">{}</a></li>",
            escape::html(&vd.view.id),
            escape::html(&vd.view.title())
        );
    }
    let Parts {
        series,
        windows,
        loaded,
        loaded_table,
    } = parts;
    if !series.is_empty() {
        out.push_str("<li><a href=\"#over-time\">Over time</a></li>\n");
    }
    if !windows.is_empty() {
        out.push_str("<li><a href=\"#per-window\">Per window</a></li>\n");
    }
    if !loaded.is_empty() || loaded_table.is_some() {
        out.push_str("<li><a href=\"#under-load\">Latency under load</a></li>\n");
    }
    out.push_str("<li><a href=\"#overhead\">Header overhead</a></li>\n");
    if find("wifi-airtime").is_some() {
        out.push_str("<li><a href=\"#wifi\">Wi-Fi</a></li>\n");
    }
    out.push_str("<li><a href=\"#method\">Method</a></li>\n<li><a href=\"#systems\">Systems and runs</a></li>\n</ul></nav>\n<main>\n");
}

/// The summaries, and the figure of the headline comparison.
fn summary_section(out: &mut String, report: &Report) {
    let find = |id: &str| find_table(report, id);
    out.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    for id in ["summary", "summary-systems"] {
        if let Some(t) = find(id) {
            out.push_str(
                &t.to_html()
                    .replacen("<table ", "<table class=\"summary\" ", 1),
            );
        }
    }
    if let Some((vd, fig)) = headline(report) {
        let _ = write!(
            out,
            "<figure class=\"headline\">\n{}<figcaption>The headline comparison: {}. {}</figcaption>\n</figure>\n",
            // The same figure is drawn again in its section: one id per page.
            fig.svg.replacen("id=\"fig-", "id=\"headline-fig-", 1),
            escape::html(&vd.view.title()),
            escape::html(&figure_caption(vd, report.analysis.options.confidence)),
        );
    }
    out.push_str("</section>\n");
}

/// The warnings, when there are any.
fn warnings_section(out: &mut String, report: &Report) {
    if !report.warnings.is_empty() {
        out.push_str("<section id=\"warnings\" class=\"warnings\">\n<h2>Warnings</h2>\n<ul>\n");
        for w in &report.warnings {
            let _ = writeln!(out, "<li>{}</li>", escape::html(w));
        }
        out.push_str("</ul>\n</section>\n");
    }
}

/// The findings sentences, each with its evidence.
fn findings_section(out: &mut String, report: &Report) {
    out.push_str("<section id=\"findings\">\n<h2>Findings</h2>\n");
    if report.findings.is_empty() {
        out.push_str("<p>No comparisons could be made: each needs IPv4 and IPv6 (or two systems) measured at the same packet size.</p>\n");
    } else {
        out.push_str("<ol class=\"findings\">\n");
        for f in &report.findings {
            let _ = writeln!(
                out,
                "<li><p>{}</p><p class=\"evidence\">{}</p></li>",
                escape::html(&f.text),
                escape::html(&f.evidence)
            );
        }
        out.push_str("</ol>\n");
    }
    out.push_str("</section>\n");
}

/// A section per view with a figure: the figure, the RTT percentiles' figure, the
/// means and spread, and the per-size tests folded away.
fn view_sections(out: &mut String, report: &Report) {
    let find = |id: &str| find_table(report, id);
    for vd in &report.analysis.views {
        let id = &vd.view.id;
        let Some(fig) = report.figures.iter().find(|f| f.id == *id) else {
            continue;
        };
        let _ = write!(
            out,
            "<section id=\"v-{}\">\n<h2>{}</h2>\n{}<figure>\n{}<figcaption>{}</figcaption>\n</figure>\n",
            escape::html(id),
            escape::html(&vd.view.title()),
            vd.view
                .criterion
                .as_ref()
                .map(|c| format!(
                    "<p class=\"note\">{}.</p>\n",
                    escape::html(&crate::svg::capitalise_first(c))
                ))
                .unwrap_or_default(),
            fig.svg,
            escape::html(&figure_caption(vd, report.analysis.options.confidence)),
        );
        if let Some(pf) = report
            .figures
            .iter()
            .find(|f| f.id == format!("{id}-percentiles"))
        {
            let _ = write!(
                out,
                "<figure>\n{}<figcaption>{}: the median over runs of each run's p50 (solid), p99 (dashed) and p99.9 (dotted) RTT against packet size, per system and IP version; dots are the runs. Descriptive only: the tests compare the mean.</figcaption>\n</figure>\n",
                pf.svg,
                escape::html(&vd.view.title())
            );
        }
        let main: Vec<&Table> = [format!("{id}-means"), format!("{id}-sd")]
            .iter()
            .filter_map(|i| find(i))
            .collect();
        tables_html(out, &main);
        for (suffix, what) in [
            ("ipv4-vs-ipv6", "IPv4 vs IPv6"),
            ("systems", "system vs system"),
        ] {
            if let Some(t) = find(&format!("{id}-{suffix}")) {
                let _ = writeln!(out, "<details><summary>Per-size tests, {what}</summary>");
                tables_html(out, &[t]);
                out.push_str("</details>\n");
            }
        }
        out.push_str("</section>\n");
    }
}

/// The selected runs over time, and their statistics per window.
fn over_time_sections(out: &mut String, parts: &Parts) {
    let Parts {
        series, windows, ..
    } = parts;
    if !series.is_empty() {
        out.push_str("<section id=\"over-time\">\n<h2>Over time: selected runs</h2>\n<p class=\"note\">What single runs did interval by interval, from the per-interval samples the client recorded: one figure per test and packet size, one line per system and IP version (the run with the median result of its cell unless chosen with <code>dualperf report --timeseries</code>). Every interval of every run is in <code>dualperf export --intervals</code>.</p>\n");
        out.push_str("<div class=\"figure-grid\">\n");
        for f in series.iter() {
            let _ = write!(out, "<figure>\n{}</figure>\n", f.svg);
        }
        out.push_str("</div>\n</section>\n");
    }
    if !windows.is_empty() {
        out.push_str("<section id=\"per-window\">\n<h2>Per window: statistics by send time</h2>\n<p class=\"note\">The runs drawn over time that were measured with <code>--stats-window</code> (as D-ITG's ITGDec decodes its logs): goodput, loss and mean one-way delay for the datagrams sent in each window. Every window of every run is in <code>dualperf export --intervals</code> (metrics named <code>window_*</code>).</p>\n<div class=\"figure-grid\">\n");
        for f in windows.iter() {
            let _ = write!(out, "<figure>\n{}</figure>\n", f.svg);
        }
        out.push_str("</div>\n</section>\n");
    }
}

/// Latency under load: its table and figures.
fn under_load_section(out: &mut String, parts: &Parts) {
    let Parts {
        loaded,
        loaded_table,
        ..
    } = parts;
    if !loaded.is_empty() || loaded_table.is_some() {
        let _ = write!(
            out,
            "<section id=\"under-load\">\n<h2>Latency under load (rrul)</h2>\n<p class=\"note\">UDP and TCP request/response probes on their own flows, first on the idle path, then beside TCP streams loading it (flent's RRUL test as one command). The IPv4-vs-IPv6 comparisons of the loaded median RTT, responsiveness (RPM, after {}) and goodput per direction are in their own sections above, with the same tests as every other metric; here: RTT distributions idle against loaded, and selected runs over time.</p>\n",
            wire::metrics::RPM_REFERENCE
        );
        if let Some(t) = *loaded_table {
            tables_html(out, &[t]);
        }
        out.push_str("<div class=\"figure-grid\">\n");
        for f in loaded.iter() {
            let _ = write!(out, "<figure>\n{}</figure>\n", f.svg);
        }
        out.push_str("</div>\n</section>\n");
    }
}

/// The header overhead against the model, and Wi-Fi against the airtime model.
fn overhead_sections(out: &mut String, report: &Report) {
    let find = |id: &str| find_table(report, id);
    out.push_str("<section id=\"overhead\">\n<h2>Header overhead</h2>\n");
    let overhead: Vec<&Table> = ["header-overhead", "efficiency"]
        .iter()
        .filter_map(|i| find(i))
        .collect();
    if overhead.is_empty() {
        out.push_str("<p>No throughput was measured, so there is nothing to compare with the header-overhead model.</p>\n");
    }
    tables_html(out, &overhead);
    out.push_str("</section>\n");
    if let Some(t) = find("wifi-airtime") {
        out.push_str("<section id=\"wifi\">\n<h2>Wi-Fi against the airtime model</h2>\n");
        tables_html(out, &[t]);
        out.push_str("</section>\n");
    }
}

/// The method: the statistics, the UDP method, and what each comparison could reach.
fn method_section(out: &mut String, report: &Report) {
    let _ = write!(
        out,
        "<section id=\"method\">\n<h2>Method</h2>\n<p>Each cell (system × IP version × test × packet size) summarises the runs that finished, without warm-up runs: n, mean, sample standard deviation, median, minimum and maximum, and the {lvl:.0}% confidence interval of the mean from Student's t distribution. IPv4 and IPv6 (and each pair of systems) are compared at each size by the difference of means with its Welch confidence interval, Welch's t-test, and for RTT and jitter the Mann-Whitney U test (exact when there are no ties and min(n₁, n₂)·n₁·n₂ ≤ 2·10⁷, i.e. up to 271 runs per side; with ties exact given the ties, the permutation distribution of the midrank sum, up to 39 runs per side; beyond these, the normal approximation with tie and continuity correction), which is then the primary test: its direction (which side's runs were higher in most pairs) names the side, and its effect is the Hodges-Lehmann shift, never the difference of means. Effect size is Hedges' g. p-values are corrected with Holm's method {holm} (dualperf report --holm-family comparison|report chooses); a difference is called significant when the corrected p is below {alpha}. Expected IPv6/IPv4 ratios come from header and framing sizes (IPv4 20 bytes, IPv6 40, UDP 8, TCP 20 + 12 bytes of timestamps).</p>\n",
        lvl = report.analysis.options.confidence * 100.0,
        alpha = report.analysis.options.alpha,
        holm = escape::html(&report.analysis.holm_words()),
    );
    out.push_str("<p>UDP: each campaign's UDP method and datapath are in its metadata table (\"udp-stream method\", \"UDP datapath\"; each run also records the system calls that ran as applied.udp_datapath_calls). Under RFC 2544 (the default study) a run's UDP throughput is the highest offered rate whose loss stayed within the loss threshold, found within the run (not by plain bisection): an unpaced trial gives the sender's top rate and what arrived; paced trials then probe first at the rate that arrived, then halfway between the highest passing and the lowest failing rate but never more than 30 % above a pass, or at what a failing trial delivered when that lies between, until the two are within 2 % or the trials are spent; the result is the passing trial with the highest offered rate, so the sender does not make its own loss; with a fixed rate it is what was received at that rate. Jitter (RFC 3550) and IPDV (RFC 5481) come only from a send stamp per datagram and a kernel arrival time per datagram; where the datapath shared one stamp among several datagrams (unpaced or fast paced sending) the run reports them as unavailable and they are left out. Runs whose receiving socket dropped datagrams are receiver-limited: their loss describes the receiving host, and they are left out of every loss comparison.</p>\n");
    let reach = crate::caveats::reach_lines(&report.analysis);
    if !reach.is_empty() {
        out.push_str("<p>With the runs each comparison had, the smallest p it could reach after Holm's correction (exact Mann-Whitney: 2 / C(n₁ + n₂, n₁) at complete separation, times the sizes corrected over; Welch's t-test: any p with at least 2 runs per side and some spread):</p>\n<ul>\n");
        for r in &reach {
            let warn = if r.reach.can_reach(report.analysis.options.alpha) {
                ""
            } else {
                " — cannot reach alpha"
            };
            let _ = writeln!(out, "<li>{}{warn}</li>", escape::html(&r.text()));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// Each campaign's runs and metadata.
fn systems_section(out: &mut String, report: &Report) {
    out.push_str("<section id=\"systems\">\n<h2>Systems and runs</h2>\n");
    let context: Vec<&Table> = report
        .tables
        .iter()
        .filter(|t| t.id == "runs" || t.id.starts_with("metadata-"))
        .collect();
    tables_html(out, &context);
    out.push_str("</section>\n</main>\n");
}
