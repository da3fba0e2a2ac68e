//! `dualperf report`: have `runner` read campaigns from the results database, hand them
//! to the report crate, and write its files (report.html, tables, figures) or print its
//! tables.
//!
//! Several `--campaign` ids are several compared systems, named by their labels; no
//! `--campaign` means the latest campaign.

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use report::{CampaignData, Dataset, OverheadModel, ReportOptions};
use runner::report_data::{self, SeriesCell};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    pub db: crate::args::DbArg,
    /// Campaign to report (repeat, or list several, to compare systems by their labels).
    /// Default: the latest campaign.
    #[arg(long = "campaign", value_name = "ID", num_args = 1..)]
    pub campaigns: Vec<i64>,
    /// Directory to write report.html, tables/ and figures/ into (created if missing).
    /// Default: dualperf-report, unless --format is given without --out.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the tables and findings to the terminal.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<PrintFormat>,
    /// With the HTML report, also print its findings to the terminal (one line each).
    ///
    /// Without it the report says only where it was written and how many findings it
    /// has; --format prints the findings with the tables.
    #[arg(long)]
    pub findings: bool,
    /// Link rate for efficiency = measured / highest possible goodput (e.g. 1gbit, 100mbit).
    #[arg(long, value_name = "RATE", value_parser = crate::args::parse_bit_rate)]
    pub link_rate: Option<u64>,
    /// Link model of the header-overhead comparison. Default: from the first campaign's
    /// client interface (loopback for `lo`, else Ethernet).
    #[arg(long, value_enum)]
    pub link: Option<LinkArg>,
    /// MTU of the link model, bytes. Default: the client interface's recorded MTU, else
    /// 1500 (65536 for loopback).
    #[arg(long, value_name = "BYTES")]
    pub mtu: Option<u32>,
    /// Confidence level of intervals and error bars, percent [default: the campaigns'
    /// recorded `--confidence` level, else 95].
    #[arg(long, value_name = "PCT")]
    pub confidence: Option<f64>,

    /// What percentage differences A − B are taken over: `first` = IPv4 (or the first
    /// system), as the studies quote them ("6.1 % higher" over the IPv4 value); `second`
    /// = IPv6 (or the other system). Every table and sentence names its base. [default:
    /// the campaigns' recorded `percent_of` (the seed presets record `first`), else
    /// second]
    #[arg(long, value_name = "BASE", value_parser = ["first", "second"])]
    pub percent_of: Option<String>,
    /// Significance level applied to Holm-corrected p-values.
    #[arg(long, value_name = "P", default_value_t = 0.05)]
    pub alpha: f64,
    /// Which tests Holm's correction runs over: `comparison` = the sizes of each
    /// comparison (one metric, one pair of sides); `report` = every test of the report,
    /// a wider family in which fewer differences stay significant. The table notes and
    /// the Method section say which was used.
    #[arg(long, value_name = "FAMILY", value_parser = ["comparison", "report"], default_value = "comparison")]
    pub holm_family: String,
    /// Do not write PNG copies of the figures.
    #[arg(long)]
    pub no_png: bool,
    /// Do not write PDF copies of the figures (figures/*.pdf, fonts embedded).
    #[arg(long)]
    pub no_pdf: bool,
    /// Which runs to draw over time, from their per-interval samples (comma-separated or
    /// repeated): `auto` (default: each test's smallest and largest packet size), `all`
    /// (every size), `none`, test names (tcp-stream, udp-stream, tcp-rr, udp-rr) and
    /// sizes in bytes to narrow it, `run:ID` to draw that run (ids as in `dualperf
    /// export`). Each figure has one line per system and IP version: the run with the
    /// median throughput (transaction rate for RR) of its cell, or the run given.
    #[arg(
        long,
        value_name = "WHAT",
        value_delimiter = ',',
        default_value = "auto"
    )]
    pub timeseries: Vec<String>,
}

/// `--timeseries` as the user typed it, made into a selection and the run ids asked for.
fn timeseries_selection(
    items: &[String],
) -> anyhow::Result<(report::timeseries::Selection, Vec<i64>)> {
    use report::timeseries::{Selection, SizeChoice};
    let (mut tests, mut sizes, mut runs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut all, mut none, mut auto) = (false, false, false);
    for item in items.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        if let Some(id) = item.strip_prefix("run:") {
            runs.push(id.trim().parse::<i64>().with_context(|| {
                format!("--timeseries {item}: a run id is a number, e.g. run:42")
            })?);
        } else if let Ok(size) = item.parse::<u32>() {
            sizes.push(size);
        } else if let Ok(kind) = item.parse::<wire::spec::TestKind>() {
            tests.push(kind);
        } else {
            match item {
                "all" => all = true,
                "none" => none = true,
                "auto" => auto = true,
                _ => bail!(
                    "--timeseries {item}: expected auto, all, none, a test (tcp-stream, \
                     udp-stream, tcp-rr, udp-rr), a packet size in bytes, or run:ID"
                ),
            }
        }
    }
    if none && (all || auto || !tests.is_empty() || !sizes.is_empty() || !runs.is_empty()) {
        bail!("--timeseries none cannot be combined with other choices");
    }
    let sizes = if !sizes.is_empty() {
        SizeChoice::List(sizes)
    } else if all {
        SizeChoice::All
    } else if none || (!runs.is_empty() && tests.is_empty() && !auto) {
        SizeChoice::None
    } else {
        SizeChoice::Ends
    };
    let cells = Vec::new(); // those of the runs asked for, once they are read
    Ok((
        Selection {
            tests,
            sizes,
            cells,
        },
        runs,
    ))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PrintFormat {
    /// GitHub-flavoured Markdown tables.
    Markdown,
    /// Aligned plain-text tables.
    Text,
    /// LaTeX tables (booktabs, siunitx) ready to \input; also written to tables/*.tex.
    Latex,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LinkArg {
    /// Ethernet: 14-byte header, FCS, preamble and inter-frame gap.
    Ethernet,
    /// Loopback: no framing.
    Loopback,
    /// A tbf-shaped veth (counts the 14-byte Ethernet header only).
    Tbf,
}

pub fn main(mut args: ReportArgs) -> anyhow::Result<ExitCode> {
    let (mut selection, mut runs) = timeseries_selection(&args.timeseries)?;
    if args.out.is_none() && args.format.is_some() {
        // Only tables are printed: no figure, so no samples to read.
        (selection, runs) = (report::timeseries::Selection::none(), Vec::new());
    }
    check_database(&args.db.target)?;
    let choose = |c: &CampaignData, cells: &[SeriesCell], asked: &[usize]| {
        let mut selection = selection.clone();
        selection.cells.extend_from_slice(cells);
        report::timeseries::select(c, &selection, asked)
    };
    let series = report_data::Series {
        runs: &runs,
        choose: &choose,
    };
    let loaded = report_data::load(&args.db.target, &args.campaigns, &series)?;
    for note in &loaded.notes {
        eprintln!("dualperf: {note}");
    }
    let data = loaded.dataset;
    if let Some(why) = report_data::nothing_measured(&data) {
        bail!("{why}");
    }
    if args.percent_of.is_none() {
        args.percent_of = loaded.percent_of;
    }
    if args.confidence.is_none() {
        args.confidence = Some(loaded.confidence_pct);
        if let Some(note) = loaded.confidence_note {
            eprintln!("dualperf: {note}");
        }
    }
    let options = report_options(&args, &data)?;
    let report = if args.out.is_none() && args.format.is_some() {
        // Only tables are printed.
        report::build_tables(&data, &options)
    } else {
        report::build(&data, &options)
    };
    let nothing_compared = report.findings.is_empty();

    match args.format {
        // Labels and metadata come from the database: no escape sequences on a terminal.
        Some(PrintFormat::Markdown) => out!("{}", wire::text::terminal_safe(&report.markdown()))?,
        Some(PrintFormat::Text) => out!("{}", wire::text::terminal_safe(&report.text()))?,
        Some(PrintFormat::Latex) => out!("{}", wire::text::terminal_safe(&report.latex()))?,
        None => {}
    }
    let out_dir = match (&args.out, args.format) {
        (Some(dir), _) => Some(dir.clone()),
        (None, None) => Some(PathBuf::from("dualperf-report")),
        (None, Some(_)) => None,
    };
    if let Some(dir) = out_dir {
        write_files(&report, &dir, !args.no_png, !args.no_pdf)?;
        if args.format.is_none() && args.findings {
            for f in &report.findings {
                outln!("- {}", wire::text::terminal_safe(&f.text))?;
            }
        }
        eprintln!(
            "dualperf: report written to {} ({} figures, {} tables, {} findings{})",
            dir.join("report.html").display(),
            report.figures.len(),
            report.tables.len(),
            report.findings.len(),
            if args.findings || args.format.is_some() || report.findings.is_empty() {
                ""
            } else {
                "; --findings prints them"
            }
        );
    }
    if nothing_compared {
        eprintln!(
            "dualperf: error: nothing to compare: no packet size has both IPv4 and IPv6 (or two \
             campaigns) with successful runs of the same test; the tables above describe each \
             side alone. Measure both families (dualperf study --families 4,6 against a host \
             name with both A and AAAA records, or without HOST) or pass two --campaign ids"
        );
        return Ok(crate::exit::code(crate::exit::NOTHING_TO_COMPARE));
    }
    Ok(ExitCode::SUCCESS)
}

/// The client host's recorded interface facts of the first campaign: (loopback, MTU).
fn recorded_link(data: &Dataset) -> (bool, Option<u32>) {
    data.campaigns
        .first()
        .map_or((false, None), recorded_link_of)
}

/// One campaign's client interface facts: (loopback, MTU).
fn recorded_link_of(c: &report::CampaignData) -> (bool, Option<u32>) {
    let Some(client) = c.hosts.get("client").or_else(|| c.hosts.values().next()) else {
        return (false, None);
    };
    let loopback = client.get("iface.name").is_some_and(|n| n == "lo")
        || client
            .get("iface.driver")
            .is_some_and(|d| d.starts_with("loopback"));
    let mtu = client
        .get("iface.mtu_ipv4")
        .and_then(|m| m.trim().parse::<u32>().ok());
    (loopback, mtu)
}

/// The link of a campaign made with `dualperf study --lab`, from its "lab" host's
/// `lab.*` metadata (written by `lab::Lab::describe`).
#[derive(Debug, Clone, PartialEq)]
struct LabLink {
    topology: String,
    mtu_bytes: Option<u32>,
    /// The tbf rate, only when the shaping was really applied.
    rate_bps: Option<f64>,
    /// The tbf bucket, bytes (`lab.burst_bytes`, or the "burst N" of `lab.shaping`).
    burst_bytes: Option<u64>,
    /// An 802.11 link the lab emulated (`lab.emulated_link`): its per-packet airtime is
    /// no header model's, so it gives no link rate (the Wi-Fi table models it).
    emulated_wifi: Option<String>,
}

/// The first campaign's lab, if it was made in one.
fn recorded_lab(data: &Dataset) -> Option<LabLink> {
    recorded_lab_of(data.campaigns.first()?)
}

/// One campaign's lab, if it was made in one.
fn recorded_lab_of(c: &report::CampaignData) -> Option<LabLink> {
    let lab = c.hosts.get("lab")?;
    let shaping = lab.get("lab.shaping").map(String::as_str).unwrap_or("");
    let shaped = shaping.starts_with("tbf");
    let burst_in_text = shaping
        .split_whitespace()
        .skip_while(|w| *w != "burst")
        .nth(1)
        .and_then(|b| b.parse::<u64>().ok());
    Some(LabLink {
        emulated_wifi: lab
            .get("lab.emulated_link")
            .filter(|l| matches!(model::link::parse(l), Ok(model::Link::Wifi(_))))
            .cloned(),
        burst_bytes: lab
            .get("lab.burst_bytes")
            .and_then(|b| b.trim().parse::<u64>().ok())
            .or(burst_in_text)
            .filter(|_| shaped),
        topology: lab.get("lab.topology").cloned().unwrap_or_default(),
        mtu_bytes: lab
            .get("lab.mtu_bytes")
            .and_then(|m| m.trim().parse::<u32>().ok()),
        rate_bps: report::wifi::lab_rate_bps(lab).filter(|_| shaped),
    })
}

/// One campaign's link for the header-overhead comparison: `--link`, `--mtu` and
/// `--link-rate` apply to every campaign; otherwise each its own, from its lab metadata
/// (tbf at the lab's rate, MTU and bucket) or its client interface (loopback, or
/// Ethernet at the interface's MTU).
fn campaign_link(
    args: &ReportArgs,
    c: &report::CampaignData,
) -> anyhow::Result<report::headers::CampaignLink> {
    let one = Dataset {
        campaigns: vec![report::CampaignData {
            hosts: c.hosts.clone(),
            ..Default::default()
        }],
    };
    let o = report_link(args, &one)?;
    let burst = recorded_lab_of(c)
        .filter(|_| args.link.is_none() && args.link_rate.is_none())
        .and_then(|l| l.burst_bytes);
    Ok(report::headers::CampaignLink {
        model: o.0,
        rate_bps: o.1,
        burst_bytes: burst,
        source: o.2,
    })
}

/// The link model, rate and its source from the first campaign of `data` (and the
/// flags that override them).
fn report_link(
    args: &ReportArgs,
    data: &Dataset,
) -> anyhow::Result<(OverheadModel, Option<f64>, Option<String>)> {
    let (recorded_loopback, recorded_mtu) = recorded_link(data);
    // A lab study's link is known exactly: veth shaped with tbf, at the lab's MTU and
    // rate. Used unless the user chose a link model.
    let lab = recorded_lab(data).filter(|_| args.link.is_none());
    let link_arg = args.link.unwrap_or(if lab.is_some() {
        LinkArg::Tbf
    } else if recorded_loopback {
        LinkArg::Loopback
    } else {
        LinkArg::Ethernet
    });
    let mut link = match link_arg {
        LinkArg::Ethernet => OverheadModel::ethernet(),
        LinkArg::Loopback => OverheadModel::loopback(),
        LinkArg::Tbf => OverheadModel::tbf_veth(),
    };
    let model_mtu = match &lab {
        Some(l) => l.mtu_bytes,
        None => recorded_mtu,
    };
    if args.mtu.is_none() && args.link.is_none() {
        if let Some(mtu) = model_mtu.filter(|m| (576..=65_536).contains(m)) {
            link.mtu_bytes = mtu;
        }
    }
    if let Some(mtu) = args.mtu {
        if !(576..=65_536).contains(&mtu) {
            bail!("--mtu {mtu} is outside 576..65536 bytes");
        }
        link.mtu_bytes = mtu;
    }
    let link_rate_bps = match args.link_rate {
        Some(bps) => Some(bps as f64),
        None => lab
            .as_ref()
            .filter(|l| l.emulated_wifi.is_none())
            .and_then(|l| l.rate_bps),
    };
    let link_source = lab.map(|l| {
        let rate = match (&args.link_rate, l.rate_bps) {
            (Some(_), _) => "link rate from --link-rate".to_string(),
            (None, _) if l.emulated_wifi.is_some() => format!(
                "no link rate: it emulated {}, whose per-packet airtime no header model \
                 counts (table wifi-airtime sets it against its airtime model)",
                l.emulated_wifi.as_deref().unwrap_or_default()
            ),
            (None, Some(r)) => format!("link rate = its tbf rate, {} Mbit/s", r / 1e6),
            (None, None) => "unshaped, so no link rate".to_string(),
        };
        format!(
            "from the lab metadata: the campaign ran in a {} lab of veth links; {rate}",
            if l.topology.is_empty() {
                "network-namespace"
            } else {
                &l.topology
            }
        )
    });
    Ok((link, link_rate_bps, link_source))
}

fn report_options(args: &ReportArgs, data: &Dataset) -> anyhow::Result<ReportOptions> {
    let (link, link_rate_bps, link_source) = report_link(args, data)?;
    let links = data
        .campaigns
        .iter()
        .map(|c| campaign_link(args, c))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let confidence = args.confidence.unwrap_or(95.0);
    if !(confidence > 50.0 && confidence < 100.0) {
        bail!("--confidence {confidence} must be a percentage between 50 and 100, e.g. 95");
    }
    if !(args.alpha > 0.0 && args.alpha < 0.5) {
        bail!(
            "--alpha {} must be between 0 and 0.5, e.g. 0.05",
            args.alpha
        );
    }
    Ok(ReportOptions {
        analysis: report::AnalysisOptions {
            confidence: confidence / 100.0,
            alpha: args.alpha,
            percent_base: match args.percent_of.as_deref() {
                Some("first") => stats::PercentBase::First,
                _ => stats::PercentBase::Second,
            },
            holm_family: if args.holm_family == "report" {
                report::HolmFamily::Report
            } else {
                report::HolmFamily::Comparison
            },
        },
        link,
        link_rate_bps,
        link_source,
        links,
        generator: format!("dualperf {}", env!("CARGO_PKG_VERSION")),
        ..ReportOptions::default()
    })
}

/// A results database file that is missing, or is not one, refused before it is read.
fn check_database(db: &store::DbTarget) -> anyhow::Result<()> {
    if let Some(path) = db.sqlite_path() {
        if !path.exists() {
            bail!(
                "no results database at {} (run `dualperf study` first, or pass --db FILE)",
                path.display()
            );
        }
        crate::args::check_database_file(path, false)?;
    }
    Ok(())
}

fn write_files(report: &report::Report, dir: &Path, png: bool, pdf: bool) -> anyhow::Result<()> {
    let mut files = report.files(false)?;
    if png {
        match report.files(true) {
            Ok(with_png) => files = with_png,
            Err(e) => {
                eprintln!("dualperf: warning: PNG figures not written: {e} (the SVG figures are)")
            }
        }
    }
    if pdf && !report.figures.is_empty() {
        match report.pdf_files() {
            Ok(pdfs) => files.extend(pdfs),
            Err(e) => {
                eprintln!("dualperf: warning: PDF figures not written: {e} (the SVG figures are)")
            }
        }
    }
    // Every file is written to a temporary name first and the report replaced only
    // when all were: a full disk leaves the previous report whole.
    let out = runner::out_files::OutDir::create(dir, "--out")?;
    let mut staged = runner::out_files::Staged::new();
    for f in files {
        // Markdown and text files are read with `cat` too (HTML and SVG escape by themselves).
        let bytes = match std::str::from_utf8(&f.bytes) {
            Ok(t) if f.name.ends_with(".md") || f.name.ends_with(".txt") => {
                wire::text::terminal_safe(t).into_owned().into_bytes()
            }
            _ => f.bytes,
        };
        out.stage(&mut staged, &f.name, &bytes)?;
    }
    staged.commit("report.html")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn dataset_with_client(meta: &[(&str, &str)]) -> Dataset {
        let client: BTreeMap<String, String> = meta
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Dataset {
            campaigns: vec![CampaignData {
                hosts: [("client".to_string(), client)].into(),
                ..Default::default()
            }],
        }
    }

    #[test]
    fn link_model_follows_the_recorded_interface_unless_given() {
        let lo = dataset_with_client(&[("iface.name", "lo"), ("iface.mtu_ipv4", "65536")]);
        assert_eq!(recorded_link(&lo), (true, Some(65_536)));
        let eth = dataset_with_client(&[("iface.name", "eth0"), ("iface.mtu_ipv4", "9000")]);
        assert_eq!(recorded_link(&eth), (false, Some(9000)));
        assert_eq!(recorded_link(&Dataset::default()), (false, None));
    }

    fn lab_dataset(rate: &str, shaping: &str) -> Dataset {
        let mut d = dataset_with_client(&[("iface.name", "veth0"), ("iface.mtu_ipv4", "1500")]);
        let lab: BTreeMap<String, String> = [
            ("lab.topology", "p2p"),
            ("lab.rate_bps", rate),
            ("lab.shaping", shaping),
            ("lab.mtu_bytes", "9000"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        d.campaigns[0].hosts.insert("lab".to_string(), lab);
        d
    }

    #[test]
    fn each_campaign_gets_its_own_link_with_the_labs_bucket() {
        // A loopback campaign first, then a shaped lab: each judged against its own link.
        let mut d = dataset_with_client(&[("iface.name", "lo"), ("iface.mtu_ipv4", "65536")]);
        let lab = lab_dataset(
            "50000000",
            "tbf rate 50Mbit burst 65536 latency 50ms on egress of ns/veth",
        );
        d.campaigns.push(lab.campaigns[0].clone());
        let o = report_options(&args(&[]), &d).unwrap();
        assert_eq!(o.links.len(), 2);
        assert_eq!(o.links[0].model, OverheadModel::loopback());
        assert_eq!((o.links[0].rate_bps, o.links[0].burst_bytes), (None, None));
        assert_eq!(o.links[1].model.link, report::LinkModel::TbfVeth);
        assert_eq!(o.links[1].model.mtu_bytes, 9000);
        assert_eq!(
            (o.links[1].rate_bps, o.links[1].burst_bytes),
            (Some(5e7), Some(65_536))
        );
        // --link-rate applies to all and drops the recorded bucket.
        let o = report_options(&args(&["--link-rate", "1gbit"]), &d).unwrap();
        assert!(o
            .links
            .iter()
            .all(|l| l.rate_bps == Some(1e9) && l.burst_bytes.is_none()));
    }

    fn args(extra: &[&str]) -> ReportArgs {
        #[derive(clap::Parser)]
        struct P {
            #[command(flatten)]
            a: ReportArgs,
        }
        let argv = std::iter::once("report").chain(extra.iter().copied());
        <P as clap::Parser>::try_parse_from(argv)
            .map(|p| p.a)
            .unwrap()
    }

    #[test]
    fn an_emulated_80211_lab_gives_no_header_link_rate_and_says_why() {
        let mut d = lab_dataset(
            "54000000",
            "tbf rate 54Mbit burst 65536 latency 50ms overhead 1155 on egress of a/b",
        );
        if let Some(lab) = d.campaigns[0].hosts.get_mut("lab") {
            lab.insert("lab.emulated_link".into(), "802.11g:54".into());
        }
        let o = report_options(&args(&[]), &d).unwrap();
        assert_eq!(o.link_rate_bps, None);
        let src = o.link_source.unwrap_or_default();
        assert!(
            src.contains("no link rate: it emulated 802.11g:54"),
            "{src}"
        );
        // --link-rate still applies.
        let o = report_options(&args(&["--link-rate", "54mbit"]), &d).unwrap();
        assert_eq!(o.link_rate_bps, Some(54e6));
    }

    #[test]
    fn holm_family_chooses_the_correction_family_and_refuses_others() {
        let d = lab_dataset("50000000", "tbf rate 50Mbit burst 6250 latency 50ms");
        let o = report_options(&args(&[]), &d).unwrap();
        assert_eq!(o.analysis.holm_family, report::HolmFamily::Comparison);
        let o = report_options(&args(&["--holm-family", "report"]), &d).unwrap();
        assert_eq!(o.analysis.holm_family, report::HolmFamily::Report);
        #[derive(clap::Parser)]
        struct P {
            #[command(flatten)]
            a: ReportArgs,
        }
        let bad = ["report", "--holm-family", "all"];
        assert!(<P as clap::Parser>::try_parse_from(bad).is_err());
    }

    #[test]
    fn a_lab_campaign_gets_the_tbf_veth_model_at_its_mtu_and_rate() {
        let d = lab_dataset(
            "50000000",
            "tbf rate 50Mbit burst 6250 latency 50ms on egress of a/b",
        );
        let o = report_options(&args(&[]), &d).unwrap();
        assert_eq!(o.link.link, report::LinkModel::TbfVeth);
        assert_eq!(o.link.mtu_bytes, 9000);
        assert_eq!(o.link_rate_bps, Some(5e7));
        let src = o.link_source.unwrap_or_default();
        assert!(
            src.contains("from the lab metadata") && src.contains("50 Mbit/s"),
            "{src}"
        );
        // The user's choice wins.
        let o = report_options(&args(&["--link", "ethernet"]), &d).unwrap();
        assert_eq!(o.link, OverheadModel::ethernet());
        assert_eq!((o.link_rate_bps, o.link_source), (None, None));
        let o = report_options(&args(&["--link-rate", "1gbit", "--mtu", "1500"]), &d).unwrap();
        assert_eq!(o.link.link, report::LinkModel::TbfVeth);
        assert_eq!((o.link.mtu_bytes, o.link_rate_bps), (1500, Some(1e9)));
        // Shaping that was not applied gives no link rate.
        let d = lab_dataset(
            "50000000",
            "requested but unavailable (no tbf in this kernel)",
        );
        let o = report_options(&args(&[]), &d).unwrap();
        assert_eq!(o.link_rate_bps, None);
        assert!(o.link_source.is_some_and(|s| s.contains("unshaped")));
        // Not a lab: unchanged.
        let d = dataset_with_client(&[("iface.name", "eth0"), ("iface.mtu_ipv4", "9000")]);
        let o = report_options(&args(&[]), &d).unwrap();
        assert_eq!(o.link.link, report::LinkModel::Ethernet);
        assert_eq!(o.link_source, None);
    }

    #[test]
    fn timeseries_words_become_a_selection() {
        use report::timeseries::{Selection, SizeChoice};
        use wire::spec::TestKind;
        let sel = |items: &[&str]| {
            let v: Vec<String> = items.iter().map(|s| s.to_string()).collect();
            timeseries_selection(&v).unwrap()
        };
        assert_eq!(sel(&["auto"]), (Selection::default(), vec![]));
        assert_eq!(sel(&["none"]), (Selection::none(), vec![]));
        assert_eq!(sel(&["all"]).0.sizes, SizeChoice::All);
        let (s, runs) = sel(&["udp-rr", "128", " 1408 ", "run:7"]);
        assert_eq!(s.tests, vec![TestKind::UdpRr]);
        assert_eq!(s.sizes, SizeChoice::List(vec![128, 1408]));
        assert_eq!(runs, vec![7]);
        // Only run ids: only their cells; with auto too: the default as well.
        assert_eq!(sel(&["run:7"]).0.sizes, SizeChoice::None);
        assert_eq!(sel(&["run:7", "auto"]).0.sizes, SizeChoice::Ends);
        // A test alone keeps its smallest and largest size.
        assert_eq!(sel(&["tcp-stream"]).0.sizes, SizeChoice::Ends);
        for bad in [&["none", "all"][..], &["run:"], &["12x"], &["tcp"]] {
            let v: Vec<String> = bad.iter().map(|s| s.to_string()).collect();
            assert!(timeseries_selection(&v).is_err(), "{bad:?}");
        }
        // The default as clap gives it.
        assert_eq!(args(&[]).timeseries, vec!["auto".to_string()]);
        assert_eq!(
            args(&["--timeseries", "tcp-rr,128"]).timeseries,
            vec!["tcp-rr".to_string(), "128".to_string()]
        );
    }
}
