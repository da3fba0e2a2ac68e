//! dualperf-report: everything a study publishes, made from a [`Dataset`]: figures of
//! each metric against packet size (SVG, optionally PNG), the studies' tables (standard
//! deviations, means with percentage differences, best/better summary) in Markdown, CSV,
//! text and HTML, per-size significance tests, the header-overhead comparison, sentences
//! of findings with their evidence, and one self-contained `report.html`. Figures also
//! come as PNG (feature `png`) and as PDF with their fonts embedded (feature `pdf`).
//!
//! Returns strings and bytes; never writes files (the CLI does).
//!
//! Modules, by what they hold:
//! - [`dataset`]: what the report reads: `store::dataset`'s types (campaigns, their
//!   metadata and run rows), which `runner::report_data` fills from the store;
//! - [`fixture`]: a fixed synthetic dataset for tests and demonstrations;
//! - [`left_out`]: the runs not counted (a stored value that cannot be a measurement), and why;
//! - [`analysis`]: views, cell summaries, comparisons and their corrections;
//! - [`caveats`]: what limits the conclusions (the smallest p each comparison could reach);
//! - [`headers`]: the header overhead, measured against the link model;
//! - [`wifi`]: 802.11 links against the airtime model;
//! - [`loaded`]: latency under load (rrul), idle against loaded;
//! - [`window_stats`]: per-window statistics over time (`--stats-window`);
//! - [`findings`]: sentences of findings, each with its evidence;
//! - [`tables`]: the studies' tables built from an analysis;
//! - [`context`]: where the numbers come from (campaigns, runs, metadata);
//! - [`table`]: one table and its renderings (text, Markdown, CSV, HTML);
//! - [`format`]: numbers as text, the same everywhere;
//! - [`escape`]: one escaping function per output format (`wire::escape`, shared with
//!   the export);
//! - [`latex`]: the tables as LaTeX (booktabs, siunitx);
//! - [`svg`]: figures of a metric against packet size, and what every figure shares;
//! - [`timeseries`]: selected runs interval by interval;
//! - `png`: PNG copies of the figures (feature `png`);
//! - `pdf`: PDF copies of the figures with their fonts embedded (feature `pdf`);
//! - [`html`]: the self-contained `report.html`.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod caveats;
pub mod context;
pub mod dataset;
pub mod findings;
pub mod fixture;
pub mod format;
pub mod headers;
pub mod html;
pub mod latex;
pub mod left_out;
pub mod loaded;
#[cfg(feature = "pdf")]
pub mod pdf;
#[cfg(feature = "png")]
pub mod png;
pub mod svg;
pub mod table;
pub mod tables;
pub mod timeseries;
pub mod wifi;
pub mod window_stats;

/// One escaping function per output format, shared with the export (`wire::escape`).
pub use wire::escape;

pub use analysis::{analyse, Analysis, AnalysisOptions, HolmFamily, View, ViewData};
pub use dataset::{
    CampaignData, ConfidenceTarget, Dataset, IntervalCounts, LeftOutRun, LoadedSample, Metrics,
    MetricsInterner, MissedCell, RunOutcome, RunRow, RunSeries, WindowSample,
};
pub use findings::Finding;
pub use model::{LinkModel, OverheadModel};
pub use svg::Figure;
pub use table::{Cell, Table};

/// What can go wrong making a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot render a PNG figure: {0}")]
    Png(String),
    #[error("PNG output was asked for but this dualperf was built without the `png` feature")]
    PngUnavailable,
    #[error("cannot make a PDF figure: {0}")]
    Pdf(String),
    #[error("PDF output was asked for but this dualperf was built without the `pdf` feature")]
    PdfUnavailable,
}

/// How to make the report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    pub analysis: AnalysisOptions,
    /// Link model of the expected (header-overhead) goodput.
    pub link: OverheadModel,
    /// With a link rate, the report adds efficiency = measured / highest possible.
    pub link_rate_bps: Option<f64>,
    /// Where the link model (and rate) came from when the user did not choose them,
    /// e.g. "from the lab metadata"; shown in the overhead and efficiency tables.
    pub link_source: Option<String>,
    /// Each campaign's own link, in campaign order (its model, rate, tbf bucket and
    /// source); a campaign without an entry gets `link`, `link_rate_bps`, `link_source`.
    pub links: Vec<headers::CampaignLink>,
    /// Page heading of report.html.
    pub title: String,
    /// Program and version, shown in the page (no clock: output is reproducible).
    pub generator: String,
}

impl ReportOptions {
    /// One link per campaign: its own where given, else the report-wide one.
    pub fn links_of(&self, campaigns: usize) -> Vec<headers::CampaignLink> {
        (0..campaigns)
            .map(|i| {
                self.links
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| headers::CampaignLink {
                        model: self.link,
                        rate_bps: self.link_rate_bps,
                        burst_bytes: None,
                        source: self.link_source.clone(),
                    })
            })
            .collect()
    }
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            analysis: AnalysisOptions::default(),
            link: OverheadModel::ethernet(),
            link_rate_bps: None,
            link_source: None,
            links: Vec::new(),
            title: "IPv4 vs IPv6 performance report".to_string(),
            generator: "dualperf".to_string(),
        }
    }
}

/// A finished report.
#[derive(Debug, Clone)]
pub struct Report {
    pub analysis: Analysis,
    pub tables: Vec<Table>,
    pub figures: Vec<Figure>,
    pub findings: Vec<Finding>,
    /// Where each campaign's tests ran (loopback and the built-in server, a lab with its
    /// shaping, or hosts) and its CPU pinning: the report's first lines.
    pub setting: Vec<String>,
    /// What limits the conclusions (unreachable significance, missed confidence
    /// targets, a link rate that is not the bottleneck), shown before the findings.
    pub warnings: Vec<String>,
    /// The self-contained page.
    pub html: String,
}

/// One file of the report, named relative to the output directory.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The most characters of a campaign label the report shows (the entry limit); a longer
/// one, from an old database or an import, is cut with "…".
pub const LABEL_MAX_CHARS: usize = wire::text::MAX_NAME_CHARS;
/// The most characters of any other stored text the report shows (a fact, a metadata
/// value, a failure reason).
pub const TEXT_MAX_CHARS: usize = wire::text::MAX_META_BYTES;

/// `data` with every text cut to what the report shows, when any is longer: a label of a
/// megabyte would otherwise be repeated in every table row and make gigabytes of files.
fn bounded_text(data: &Dataset) -> Option<Dataset> {
    let long = |s: &str, max: usize| s.len() > max && s.chars().nth(max).is_some();
    let any_long = data.campaigns.iter().any(|c| {
        long(&c.label, LABEL_MAX_CHARS)
            || c.facts.values().any(|v| long(v, TEXT_MAX_CHARS))
            || c.hosts
                .values()
                .flat_map(|m| m.iter())
                .any(|(k, v)| long(k, TEXT_MAX_CHARS) || long(v, TEXT_MAX_CHARS))
            || c.runs.iter().any(|r| match &r.outcome {
                RunOutcome::Failed(why) => long(why, TEXT_MAX_CHARS),
                RunOutcome::Ok => false,
            })
    });
    if !any_long {
        return None;
    }
    let cut = |s: &str, max: usize| escape::truncate_chars(s, max).into_owned();
    let mut out = data.clone();
    for c in &mut out.campaigns {
        c.label = cut(&c.label, LABEL_MAX_CHARS);
        for v in c.facts.values_mut() {
            *v = cut(v, TEXT_MAX_CHARS);
        }
        for m in c.hosts.values_mut() {
            *m = m
                .iter()
                .map(|(k, v)| (cut(k, TEXT_MAX_CHARS), cut(v, TEXT_MAX_CHARS)))
                .collect();
        }
        for r in &mut c.runs {
            if let RunOutcome::Failed(why) = &mut r.outcome {
                *why = cut(why, TEXT_MAX_CHARS);
            }
        }
    }
    Some(out)
}

/// Make the report.
pub fn build(data: &Dataset, options: &ReportOptions) -> Report {
    build_with(data, options, true)
}

/// The report's tables, warnings and findings only, without figures or the page (what
/// `report --format text|markdown|latex` prints): the figures draw every run, so
/// leaving them out keeps a printed report of a million runs in bounded memory.
pub fn build_tables(data: &Dataset, options: &ReportOptions) -> Report {
    build_with(data, options, false)
}

fn build_with(data: &Dataset, options: &ReportOptions, with_figures: bool) -> Report {
    let bounded = bounded_text(data);
    let data = bounded.as_ref().unwrap_or(data);
    let analysis = analyse(data, options.analysis);
    let level = analysis.options.confidence;
    let opts = analysis.options;
    let holm = analysis.holm_words();
    let cv_target = data
        .campaigns
        .iter()
        .filter_map(|c| c.cv_target_pct)
        .fold(None, |m: Option<f64>, v| {
            Some(m.map_or(v, |m: f64| m.min(v)))
        });
    // Whether a campaign with a CV criterion repeated its cells to a confidence target
    // (else a fixed number of runs): dualperf never stops a cell on its CV.
    let cv_by_target = data
        .campaigns
        .iter()
        .any(|c| c.cv_target_pct.is_some() && c.target.is_some());
    let mut tables = vec![tables::summary_table(&analysis)];
    tables.extend(tables::system_summary_table(&analysis));
    for vd in &analysis.views {
        tables.push(tables::means_table(vd, &opts));
        tables.push(tables::sd_table(vd));

        tables.extend(tables::cv_table(vd, cv_target, cv_by_target));
        if !vd.family_cmp.is_empty() {
            tables.push(tables::comparison_table(
                vd,
                &vd.family_cmp,
                "ipv4-vs-ipv6",
                "IPv4 (A) vs IPv6 (B) per size",
                "System",
                &opts,
                &holm,
            ));
        }
        if !vd.system_cmp.is_empty() {
            tables.push(tables::comparison_table(
                vd,
                &vd.system_cmp,
                "systems",
                "System vs system per size",
                "IP version",
                &opts,
                &holm,
            ));
        }
    }
    let links = options.links_of(data.campaigns.len());
    tables.extend(headers::overhead_table(&analysis, &links));
    tables.extend(headers::efficiency_table(&analysis, &links));
    tables.extend(wifi::wifi_table(&analysis, &data.campaigns));
    tables.extend(loaded::table(data, &analysis.systems));
    tables.push(context::runs_table(data, &analysis.systems));
    tables.extend(left_out::table(data, &analysis.systems));
    for (i, (c, label)) in data.campaigns.iter().zip(&analysis.systems).enumerate() {
        tables.push(context::metadata_table(c, label, i));
    }
    // Each view's figure; an RTT view is followed by its percentile figure.
    // Then the time series of the selected runs.
    let mut figures: Vec<Figure> = analysis
        .views
        .iter()
        .filter(|_| with_figures)
        .flat_map(|vd| {
            let pct = analysis::rtt_percentiles(data, vd);
            std::iter::once(svg::figure(vd, level)).chain(svg::percentile_figure(vd, &pct))
        })
        .collect();
    if with_figures {
        figures.extend(timeseries::figures(data, &analysis.systems));
        figures.extend(window_stats::figures(data, &analysis.systems));
        figures.extend(loaded::figures(data, &analysis.systems));
    }
    let mut findings = findings::findings(&analysis, &links);
    findings.extend(
        wifi::wifi_sentences(&analysis, &data.campaigns)
            .into_iter()
            .map(|(text, evidence)| Finding { text, evidence }),
    );
    let mut warnings = caveats::warnings(data, &analysis);
    warnings.extend(timeseries::too_few_samples(data));
    warnings.extend(context::busy_host_warnings(data, &analysis.systems));
    warnings.extend(headers::efficiency_warnings(&analysis, &links));
    warnings.extend(
        analysis
            .views
            .iter()
            .filter_map(|vd| tables::cv_warning(vd, cv_target, cv_by_target)),
    );
    warnings.extend(caveats::jitter_unavailable(data, &analysis));
    let setting = data
        .campaigns
        .iter()
        .zip(&analysis.systems)
        .map(|(c, label)| context::where_it_ran(c, label))
        .collect();
    let mut report = Report {
        setting,
        analysis,
        tables,
        figures,
        findings,
        warnings,
        html: String::new(),
    };
    if with_figures {
        report.html = html::page(&report, &options.title, &options.generator);
    }
    report
}

impl Report {
    /// Findings as a Markdown list, each with its evidence.
    pub fn findings_markdown(&self) -> String {
        let mut out = String::new();
        if !self.warnings.is_empty() {
            out.push_str("### Warnings\n\n");
            for w in &self.warnings {
                out.push_str(&format!("- {}\n", escape::markdown(w)));
            }
            out.push('\n');
        }
        out.push_str("### Findings\n\n");
        if self.findings.is_empty() {
            out.push_str("No comparisons could be made.\n");
        }
        for f in &self.findings {
            out.push_str(&format!(
                "- {}\n  *Evidence:* {}\n",
                escape::markdown(&f.text),
                escape::markdown(&f.evidence)
            ));
        }
        out
    }

    /// Every table and the findings in Markdown (what `--format markdown` prints).
    /// "Where the tests ran" with one line per campaign, each through `escape`.
    fn setting_lines(&self, escape: impl Fn(&str) -> String) -> String {
        let mut out = String::from("Where the tests ran\n");
        for s in &self.setting {
            out.push_str(&format!("- {}\n", escape(s)));
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = format!("### {}\n", self.setting_lines(escape::markdown));
        out.push_str(&self.findings_markdown());
        for t in &self.tables {
            out.push('\n');
            out.push_str(&t.to_markdown());
        }
        out
    }

    /// Every table as a LaTeX `table` environment (booktabs, siunitx), captioned with
    /// the campaigns; the preamble lines they need come first, as a comment.
    /// The caption context of a table in LaTeX: the systems compared ("sysA vs sysB"),
    /// or for a table of IPv4 against IPv6 within each system, the systems it covers
    /// ("on sysA, sysB"): it compares no system with another.
    fn latex_context(&self, t: &Table) -> String {
        let systems = &self.analysis.systems;
        if t.id == "summary" || t.id.ends_with("-ipv4-vs-ipv6") {
            format!("on {}", systems.join(", "))
        } else {
            systems.join(" vs ")
        }
    }

    pub fn latex(&self) -> String {
        let mut out = format!(
            "% Needs in the preamble:\n{}",
            latex::PREAMBLE
                .lines()
                .map(|l| format!("% {l}\n"))
                .collect::<String>()
        );
        for t in &self.tables {
            out.push('\n');
            out.push_str(&latex::table(t, &self.latex_context(t)));
        }
        out
    }

    /// Every table as aligned text, then the findings.
    pub fn text(&self) -> String {
        let mut out = self.setting_lines(|s| wire::text::terminal_safe_line(s).into_owned());
        out.push('\n');
        for t in &self.tables {
            out.push_str(&t.to_text());
            out.push('\n');
        }
        if !self.warnings.is_empty() {
            out.push_str("Warnings\n");
            for w in &self.warnings {
                out.push_str(&format!("- {w}\n"));
            }
        }
        out.push_str("Findings\n");
        for f in &self.findings {
            out.push_str(&format!("- {}\n", f.text));
        }
        out
    }

    /// The files of the report: report.html, findings.md, report.md, tables/*.{md,csv,html},
    /// figures/*.svg and, when `png` is true, figures/*.png (PDFs: [`Report::pdf_files`]).
    pub fn files(&self, png: bool) -> Result<Vec<OutputFile>, ReportError> {
        let mut out = vec![
            OutputFile {
                name: "report.html".into(),
                bytes: self.html.clone().into_bytes(),
            },
            OutputFile {
                name: "report.md".into(),
                bytes: self.markdown().into_bytes(),
            },
            OutputFile {
                name: "findings.md".into(),
                bytes: self.findings_markdown().into_bytes(),
            },
        ];
        let context = self.analysis.systems.join(" vs ");
        for t in &self.tables {
            for (ext, body) in [
                ("md", t.to_markdown()),
                ("csv", t.to_csv()),
                ("html", t.to_html()),
                ("tex", latex::table(t, &self.latex_context(t))),
            ] {
                out.push(OutputFile {
                    name: format!("tables/{}.{ext}", t.id),
                    bytes: body.into_bytes(),
                });
            }
        }
        out.push(OutputFile {
            name: "tables/tables.tex".into(),
            bytes: latex::document(&self.tables, &format!("dualperf report: {context}"))
                .into_bytes(),
        });
        for f in &self.figures {
            out.push(OutputFile {
                name: format!("figures/{}.svg", f.id),
                bytes: f.svg.clone().into_bytes(),
            });
        }
        if png {
            out.extend(self.png_files()?);
        }
        Ok(out)
    }

    /// figures/*.pdf: each figure as a one-page PDF with its fonts embedded.
    #[cfg(feature = "pdf")]
    pub fn pdf_files(&self) -> Result<Vec<OutputFile>, ReportError> {
        let renderer = pdf::PdfRenderer::new();
        self.figures
            .iter()
            .map(|f| {
                Ok(OutputFile {
                    name: format!("figures/{}.pdf", f.id),
                    bytes: renderer.render(&f.svg)?,
                })
            })
            .collect()
    }

    /// figures/*.pdf: each figure as a one-page PDF with its fonts embedded.
    #[cfg(not(feature = "pdf"))]
    pub fn pdf_files(&self) -> Result<Vec<OutputFile>, ReportError> {
        Err(ReportError::PdfUnavailable)
    }

    #[cfg(feature = "png")]
    fn png_files(&self) -> Result<Vec<OutputFile>, ReportError> {
        let renderer = png::PngRenderer::new();
        self.figures
            .iter()
            .map(|f| {
                Ok(OutputFile {
                    name: format!("figures/{}.png", f.id),
                    bytes: renderer.render(&f.svg, 2.0)?,
                })
            })
            .collect()
    }

    #[cfg(not(feature = "png"))]
    fn png_files(&self) -> Result<Vec<OutputFile>, ReportError> {
        Err(ReportError::PngUnavailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use wire::spec::{Direction, Family, TestKind};

    #[test]
    fn empty_dataset_makes_a_page_that_says_so() {
        let report = build(&Dataset::default(), &ReportOptions::default());
        assert!(report.figures.is_empty());
        assert!(report.findings.is_empty());
        assert!(report.html.contains("No comparisons could be made"));
        assert!(report.html.contains("No throughput was measured"));
        assert!(report.files(false).is_ok_and(|f| f.len() >= 3));
    }

    #[test]
    fn one_run_per_cell_and_one_family_do_not_break_anything() {
        let run = |size: u32, bps: f64| RunRow {
            family: Family::V6,
            kind: TestKind::UdpStream,
            direction: Direction::Reverse,
            payload_bytes: size,
            repetition: 0,
            warmup: false,
            outcome: RunOutcome::Ok,
            metrics: BTreeMap::from([(wire::metrics::THROUGHPUT_BPS.to_string(), bps)]).into(),
        };
        let data = Dataset {
            campaigns: vec![CampaignData {
                id: 7,
                label: String::new(),
                runs: vec![run(128, 1e8), run(1408, 9e8)],
                ..Default::default()
            }],
        };
        let report = build(&data, &ReportOptions::default());
        assert_eq!(report.analysis.systems, vec!["campaign 7".to_string()]);
        assert_eq!(report.figures.len(), 1);
        assert_eq!(report.figures[0].id, "udp-throughput-reverse");
        assert!(report.findings.is_empty(), "no IPv4 to compare with");
        let sd = report
            .tables
            .iter()
            .find(|t| t.id == "udp-throughput-reverse-sd");
        let md = sd.map(|t| t.to_markdown()).unwrap_or_default();
        assert!(md.contains("| 128 |  | – |"), "{md}");
        // n = 1: no error bar is drawn (its interval is unbounded).
        let svg = &report.figures[0].svg;
        let series = svg.split("<g class=\"series\"").nth(1).unwrap_or_default();
        let series = series.split("</g>").next().unwrap_or_default();
        assert!(
            series.contains("<circle") || series.contains("<rect"),
            "{series}"
        );
        assert!(
            !series.contains(" V"),
            "error bar drawn for n = 1: {series}"
        );
    }
}
