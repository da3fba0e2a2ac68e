//! `dualperf show` (a campaign's metadata, plan and progress, or the list of
//! campaigns), `dualperf export` (tidy long-format CSV or JSON: one row per run and
//! metric) and `dualperf import` (merge another database's campaigns).

use anyhow::{bail, Context};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use store::{RunStatus, Store};
use study::StudySpec;

/// Show a campaign: label, command line, versions, host metadata, plan and progress.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Campaign id; none lists every campaign.
    pub campaign: Option<i64>,
    /// Results database: an SQLite file or a postgres:// URL.
    #[arg(long, env = store::DB_ENV, hide_env_values = true, default_value = "dualperf.db", value_parser = crate::args::db_target_parser())]
    pub db: store::DbTarget,
}

/// Export runs as tidy long-format data: one row per run and metric, with the cell's
/// axes and the campaign label (pandas: `pd.read_csv`; R: `read.csv`).
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// csv or json.
    #[arg(long, default_value = "csv", value_parser = ["csv", "json"])]
    pub format: String,
    /// Results database: an SQLite file or a postgres:// URL.
    #[arg(long, env = store::DB_ENV, hide_env_values = true, default_value = "dualperf.db", value_parser = crate::args::db_target_parser())]
    pub db: store::DbTarget,
    /// Only these campaigns (repeatable); default all.
    #[arg(long = "campaign", value_name = "ID")]
    pub campaigns: Vec<i64>,
    /// Write here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Include warm-up runs (marked warmup=true).
    #[arg(long)]
    pub include_warmup: bool,
    /// Include failed attempts (one row each, metric empty, with the reason).
    #[arg(long)]
    pub include_failed: bool,
    /// Export the per-interval samples instead: one row per run, interval and metric
    /// (interval_index, start_ns, end_ns from the run's start), for time series.
    #[arg(long)]
    pub intervals: bool,
    /// Write text cells of the CSV exactly as stored. By default a cell that starts with
    /// =, +, -, @, tab or carriage return gets a leading ' (and control characters are
    /// removed), so a spreadsheet shows it as text instead of running it as a formula;
    /// numbers are never changed. For pandas or R, which run no formulas.
    #[arg(long)]
    pub raw_text: bool,
}

/// Merge the campaigns of another results database into this one, with their hosts'
/// metadata. A campaign already present (same uuid) gets the runs it lacks; one with a
/// value that cannot be read, or a label that is over-long or holds control
/// characters, is skipped with the reason while the others are imported (exit 1).
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The database to import from: an SQLite file or a postgres:// URL.
    #[arg(value_parser = crate::args::db_target_parser())]
    pub other: store::DbTarget,
    /// Only these campaigns, by their ids in the other database (repeatable); default
    /// all.
    #[arg(long = "campaign", value_name = "ID")]
    pub campaigns: Vec<i64>,
    /// The database to import into: an SQLite file or a postgres:// URL.
    #[arg(long, env = store::DB_ENV, hide_env_values = true, default_value = "dualperf.db", value_parser = crate::args::db_target_parser())]
    pub db: store::DbTarget,
}

fn open_existing(target: &store::DbTarget) -> anyhow::Result<Store> {
    let Some(db) = target.sqlite_path() else {
        return Ok(Store::open_target_read_only(target)?);
    };
    if !db.exists() {
        bail!(
            "no results database at {} (run `dualperf study` first, or pass --db PATH)",
            db.display()
        );
    }
    crate::args::check_database_file(db, false)?;
    Ok(Store::open_read_only(db)?)
}

fn when(unix_s: i64) -> String {
    format!("{} UTC", store::utc_text(unix_s))
}

pub fn show_main(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing(&args.db)?;
    let Some(id) = args.campaign else {
        let camps = store.campaigns()?;
        if camps.is_empty() {
            outln!("no campaigns in {}", args.db)?;
        }
        // Counted by the database: a campaign of a million runs is not read.
        let measured = store.measured_by_campaign()?;
        for c in camps {
            let ok = measured.get(&c.id).copied().unwrap_or(0);
            outln!(
                "{:>4}  {}  {:<9} {:>6} runs  {}",
                c.id,
                when(c.created_unix_s),
                if c.finished { "finished" } else { "unfinished" },
                ok,
                if c.label.is_empty() {
                    "-".into()
                } else {
                    wire::text::terminal_safe_line(&c.label)
                }
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    };
    // Labels, host metadata and failure reasons come from the database (and from peers).
    out!("{}", wire::text::terminal_safe(&show_text(&store, id)?))?;
    Ok(ExitCode::SUCCESS)
}

/// The `show` text of one campaign.
pub fn show_text(store: &Store, id: i64) -> anyhow::Result<String> {
    let c = store.campaign(id)?;
    let extra = store.campaign_extra(id)?;
    let mut out = String::new();
    out.push_str(&format!(
        "campaign {id}: {}\n",
        if c.label.is_empty() {
            "(no label)"
        } else {
            &c.label
        }
    ));
    out.push_str(&format!("created: {}\n", when(c.created_unix_s)));
    out.push_str(&format!("command: {}\n", c.command_line));
    out.push_str(&format!(
        "dualperf: {} (git {})\n",
        extra.dualperf_version, extra.git_revision
    ));
    if let Some(from) = &extra.imported_from {
        out.push_str(&format!("imported from: {from}\n"));
    }
    out.push_str(&format!("id: {}\n", extra.uuid));
    match StudySpec::from_json(&c.spec_json) {
        Ok(spec) => {
            out.push_str("\nplan:\n");
            // Indented lines belong to the line above: kept under "smallest corrected
            // p", skipped under the cell list and order (progress lists the cells).
            let mut keep_indented = false;
            for line in super::dry_run_text(&spec, None).lines() {
                if line.starts_with("  ") {
                    if keep_indented {
                        out.push_str(&format!("    {}\n", line.trim_start()));
                    }
                    continue;
                }
                keep_indented = line.starts_with("smallest corrected p");
                if line.starts_with("target:") {
                    continue;
                }
                if line.starts_with("order:") {
                    out.push_str(&match spec.order {
                        study::Order::Interleaved => {
                            "  order: interleaved (IPv4/IPv6 of each cell back to back)\n"
                                .to_string()
                        }
                        study::Order::Random => {
                            format!("  order: random, seed {}\n", spec.seed)
                        }
                    });
                    continue;
                }
                out.push_str(&format!("  {line}\n"));
            }
        }
        Err(e) => out.push_str(&format!("\nplan: unreadable ({e})\n")),
    }
    out.push_str(&progress_text(store, id, c.finished)?);
    for h in &c.hosts {
        out.push_str(&format!("\nhost {}:\n", h.role));
        for (k, v) in &h.metadata {
            out.push_str(&format!("  {k:<34} {v}\n"));
        }
    }
    Ok(out)
}

fn progress_text(store: &Store, id: i64, finished: bool) -> anyhow::Result<String> {
    const FAILURES_SHOWN: u32 = 20;
    let cells = store.cells(id)?;
    // Counted by the database, so `show` answers at once at any number of runs.
    let by_cell = store.run_counts_by_cell(id)?;
    let counts: store::RunCounts = by_cell.values().copied().sum();
    let failed = store.failed_attempts(id, FAILURES_SHOWN)?;
    let mut out = format!(
        "\nprogress: {} — {} measured runs, {} warm-up runs, {} failed attempts\n",
        if finished {
            "finished"
        } else {
            "unfinished (continue with `dualperf study --resume`)"
        },
        counts.measured,
        counts.warmup,
        counts.failed
    );
    out.push_str("  cell  family test        size    ok runs  target\n");
    for cell in &cells {
        let n = by_cell.get(&cell.cell_index).map_or(0, |c| c.measured);
        out.push_str(&format!(
            "  {:>4}  {:<6} {:<11} {:>5} B {:>7}  {}\n",
            cell.cell_index,
            cell.family.to_string(),
            cell.kind.name(),
            cell.payload_bytes,
            n,
            match cell.target_met {
                Some(true) => "met",
                Some(false) => "MISSED",
                None => "-",
            }
        ));
    }
    for f in &failed {
        out.push_str(&format!(
            "  failed: cell {} run {} attempt {}: {}\n",
            f.cell_index,
            f.repetition + 1,
            f.attempt,
            f.reason
        ));
    }
    if counts.failed > u64::from(FAILURES_SHOWN) {
        out.push_str(&format!(
            "  … and {} more failed attempts\n",
            counts.failed - u64::from(FAILURES_SHOWN)
        ));
    }
    Ok(out)
}

/// One tidy row: a run's metric with its cell's axes, the settings the cell asked for
/// (empty where the study left the OS default) and the campaign's hosts, so that
/// `df.groupby([...])` needs no join. Column order is the field order.
#[derive(serde::Serialize, Clone)]
struct Row<'a> {
    campaign_id: i64,
    campaign_label: &'a str,
    run_id: i64,
    family: u8,
    test: &'static str,
    transport: String,
    payload_bytes: u32,
    direction: &'static str,
    repetition: u32,
    warmup: bool,
    status: &'static str,
    failure_reason: &'a str,
    started_unix_ns: i64,
    metric: &'a str,
    value: Option<f64>,
    unit: &'static str,
    // The cell's settings, flat (the csv crate writes no nested or flattened fields).
    client_os: &'a str,
    server_os: &'a str,
    run_duration_s: Option<f64>,
    run_count: Option<u64>,
    streams: Option<u16>,
    rate_bps: Option<u64>,
    rate_pps: Option<u64>,
    sndbuf_bytes: Option<u32>,
    rcvbuf_bytes: Option<u32>,
    nodelay: Option<bool>,
    mss_bytes: Option<u32>,
    tos: Option<u8>,
    flowlabel: Option<u32>,
    congestion: Option<&'a str>,
    dont_fragment: Option<bool>,
    // What the run applied (as the kernel read it back), per side; the UDP datapath is
    // the calls that ran (e.g. linux:sendmmsg/recvmmsg+gso).
    client_sndbuf_applied: Option<&'a str>,
    client_rcvbuf_applied: Option<&'a str>,
    server_sndbuf_applied: Option<&'a str>,
    server_rcvbuf_applied: Option<&'a str>,
    client_udp_datapath: Option<&'a str>,
    server_udp_datapath: Option<&'a str>,
}

/// What a cell asked for and where it ran (export columns after `unit`).
#[derive(Default, Clone)]
struct Settings {
    client_os: String,
    server_os: String,
    run_duration_s: Option<f64>,
    run_count: Option<u64>,
    streams: Option<u16>,
    rate_bps: Option<u64>,
    rate_pps: Option<u64>,
    sndbuf_bytes: Option<u32>,
    rcvbuf_bytes: Option<u32>,
    nodelay: Option<bool>,
    mss_bytes: Option<u32>,
    tos: Option<u8>,
    flowlabel: Option<u32>,
    congestion: Option<String>,
    dont_fragment: Option<bool>,
}

impl Settings {
    fn of(spec: Option<&wire::spec::TestSpec>, client_os: &str, server_os: &str) -> Settings {
        use wire::spec::{Bound, Rate};
        let mut s = Settings {
            client_os: client_os.to_string(),
            server_os: server_os.to_string(),
            ..Settings::default()
        };
        let Some(t) = spec else { return s };
        match t.bound {
            Bound::DurationNs(ns) => s.run_duration_s = Some(ns as f64 / 1e9),
            Bound::Count(n) => s.run_count = Some(n),
        }
        s.streams = Some(t.streams);
        match t.rate {
            Some(Rate::BitsPerSec(b)) => s.rate_bps = Some(b),
            Some(Rate::PacketsPerSec(p)) => s.rate_pps = Some(p),
            None => {}
        }
        let o = &t.socket;
        s.sndbuf_bytes = o.sndbuf_bytes;
        s.rcvbuf_bytes = o.rcvbuf_bytes;
        s.nodelay = Some(o.nodelay);
        s.mss_bytes = o.mss_bytes;
        s.tos = o.tos;
        s.flowlabel = o.flowlabel;
        s.congestion = o.congestion.clone();
        s.dont_fragment = Some(o.dont_fragment);
        s
    }
}

/// One row of `export --intervals`: a run's interval sample of one metric.
#[derive(serde::Serialize)]
struct IntervalRow<'a> {
    campaign_id: i64,
    campaign_label: &'a str,
    run_id: i64,
    family: u8,
    test: &'static str,
    payload_bytes: u32,
    direction: &'static str,
    repetition: u32,
    warmup: bool,
    interval_index: usize,
    start_ns: i64,
    end_ns: i64,
    metric: &'a str,
    value: Option<f64>,
    unit: &'static str,
}

/// CSV columns of the run export, in order (the header is written even with no rows).
const CSV_COLUMNS: &[&str] = &[
    "campaign_id",
    "campaign_label",
    "run_id",
    "family",
    "test",
    "transport",
    "payload_bytes",
    "direction",
    "repetition",
    "warmup",
    "status",
    "failure_reason",
    "started_unix_ns",
    "metric",
    "value",
    "unit",
    "client_os",
    "server_os",
    "run_duration_s",
    "run_count",
    "streams",
    "rate_bps",
    "rate_pps",
    "sndbuf_bytes",
    "rcvbuf_bytes",
    "nodelay",
    "mss_bytes",
    "tos",
    "flowlabel",
    "congestion",
    "dont_fragment",
    "client_sndbuf_applied",
    "client_rcvbuf_applied",
    "server_sndbuf_applied",
    "server_rcvbuf_applied",
    "client_udp_datapath",
    "server_udp_datapath",
];

/// CSV columns of `export --intervals`.
const INTERVAL_COLUMNS: &[&str] = &[
    "campaign_id",
    "campaign_label",
    "run_id",
    "family",
    "test",
    "payload_bytes",
    "direction",
    "repetition",
    "warmup",
    "interval_index",
    "start_ns",
    "end_ns",
    "metric",
    "value",
    "unit",
];

/// A csv error, with an I/O error kept as `std::io::Error` (so `export | head` is not
/// an error).
fn csv_error(e: csv::Error) -> anyhow::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => io.into(),
        other => anyhow::anyhow!("writing CSV: {other:?}"),
    }
}

/// Writes rows as a JSON array or as CSV (the `csv` crate: quoting, no header of its
/// own — ours is written first, so an empty export still has one).
enum Sink<W: Write> {
    Json {
        out: W,
        first: bool,
    },
    /// `raw`: text cells as stored, else made safe for spreadsheets.
    Csv {
        w: Box<csv::Writer<W>>,
        raw: bool,
    },
}

impl<W: Write> Sink<W> {
    fn new(json: bool, raw: bool, mut out: W, columns: &[&str]) -> anyhow::Result<Sink<W>> {
        if json {
            out.write_all(b"[")?;
            return Ok(Sink::Json { out, first: true });
        }
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(out);
        w.write_record(columns)?;
        Ok(Sink::Csv {
            w: Box::new(w),
            raw,
        })
    }
    fn row(&mut self, row: &impl serde::Serialize) -> anyhow::Result<()> {
        match self {
            Sink::Json { out, first } => {
                if !*first {
                    out.write_all(b",")?;
                }
                out.write_all(b"\n")?;
                serde_json::to_writer(&mut *out, row).map_err(|e| match e.io_error_kind() {
                    // An I/O error stays one, so a closed pipe is recognised.
                    Some(kind) => anyhow::Error::from(std::io::Error::from(kind)),
                    None => e.into(),
                })?;
                *first = false;
            }
            Sink::Csv { w, raw: true } => w.serialize(row).map_err(csv_error)?,
            Sink::Csv { w, raw: false } => w
                .serialize(report::escape::CsvSafe(row))
                .map_err(csv_error)?,
        }
        Ok(())
    }
    fn finish(self) -> anyhow::Result<()> {
        match self {
            Sink::Json { mut out, .. } => {
                out.write_all(b"\n]\n")?;
                out.flush()?;
            }
            Sink::Csv { mut w, .. } => w.flush()?,
        }
        Ok(())
    }
}

pub fn export_main(args: ExportArgs) -> anyhow::Result<ExitCode> {
    match export(&args) {
        // `dualperf export | head` is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(ExitCode::SUCCESS)
        }
        other => other,
    }
}

fn export(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing(&args.db)?;
    let camps = store.campaigns()?;
    for id in &args.campaigns {
        if !camps.iter().any(|c| c.id == *id) {
            bail!(
                "no campaign {id} in {} (`dualperf show` lists them)",
                args.db
            );
        }
    }
    // A file is written to a temporary name and renamed when complete: a full disk
    // leaves the previous export whole.
    let mut file = args
        .output
        .as_deref()
        .map(crate::out_files::AtomicFile::create)
        .transpose()?;
    let out: Box<dyn Write + '_> = match file.as_mut() {
        Some(f) => Box::new(f),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let columns = if args.intervals {
        INTERVAL_COLUMNS
    } else {
        CSV_COLUMNS
    };
    let mut sink = Sink::new(args.format == "json", args.raw_text, out, columns)?;
    let mut rows = 0usize;
    for c in camps
        .iter()
        .filter(|c| args.campaigns.is_empty() || args.campaigns.contains(&c.id))
    {
        let os_of = |role: &str| {
            c.hosts
                .iter()
                .find(|h| h.role == role)
                .and_then(|h| h.metadata.get("os.pretty_name"))
                .cloned()
                .unwrap_or_default()
        };
        let (client_os, server_os) = (os_of("client"), os_of("server"));
        // The settings each cell asked for, by its axes (unique within a campaign).
        let mut by_axes = std::collections::HashMap::new();
        for cell in store.cells(c.id)? {
            let spec = serde_json::from_str::<wire::spec::TestSpec>(&cell.spec_json).ok();
            let key = (cell.family, cell.kind, cell.payload_bytes, cell.direction);
            by_axes.insert(key, Settings::of(spec.as_ref(), &client_os, &server_os));
        }
        let unknown = Settings::of(None, &client_os, &server_os);
        // A chunk of runs at a time, each written as it is read: memory stays bounded
        // at any number of runs.
        let mut chunks = store.run_chunks(c.id)?;
        while let Some(chunk) = chunks.next_chunk()? {
            for d in chunk {
                let r = d.run;
                let ap = |key: &str| d.applied.get(key).map(String::as_str);
                if (r.warmup && !args.include_warmup) || (!r.status.is_ok() && !args.include_failed)
                {
                    continue;
                }
                if args.intervals {
                    for (i, sample) in store.samples(r.id)?.iter().enumerate() {
                        for (name, value) in &sample.metrics {
                            sink.row(&IntervalRow {
                                campaign_id: c.id,
                                campaign_label: &c.label,
                                run_id: r.id,
                                family: r.family.number(),
                                test: r.kind.name(),
                                payload_bytes: r.payload_bytes,
                                direction: store::direction_text(r.direction),
                                repetition: r.repetition,
                                warmup: r.warmup,
                                interval_index: i,
                                start_ns: sample.start_ns,
                                end_ns: sample.end_ns,
                                metric: name,
                                value: value.is_finite().then_some(*value),
                                unit: wire::metrics::unit_of(name),
                            })?;
                            rows += 1;
                        }
                    }
                    continue;
                }
                let (status, reason) = match &r.status {
                    RunStatus::Ok => ("ok", ""),
                    RunStatus::Failed { reason } => ("failed", reason.as_str()),
                };
                let settings = by_axes
                    .get(&(r.family, r.kind, r.payload_bytes, r.direction))
                    .unwrap_or(&unknown);
                let base = Row {
                    campaign_id: c.id,
                    campaign_label: &c.label,
                    run_id: r.id,
                    family: r.family.number(),
                    test: r.kind.name(),
                    transport: r.kind.transport().to_string(),
                    payload_bytes: r.payload_bytes,
                    direction: store::direction_text(r.direction),
                    repetition: r.repetition,
                    warmup: r.warmup,
                    status,
                    failure_reason: reason,
                    started_unix_ns: r.started_unix_ns,
                    metric: "",
                    value: None,
                    unit: "",
                    client_os: &settings.client_os,
                    server_os: &settings.server_os,
                    run_duration_s: settings.run_duration_s,
                    run_count: settings.run_count,
                    streams: settings.streams,
                    rate_bps: settings.rate_bps,
                    rate_pps: settings.rate_pps,
                    sndbuf_bytes: settings.sndbuf_bytes,
                    rcvbuf_bytes: settings.rcvbuf_bytes,
                    nodelay: settings.nodelay,
                    mss_bytes: settings.mss_bytes,
                    tos: settings.tos,
                    flowlabel: settings.flowlabel,
                    congestion: settings.congestion.as_deref(),
                    dont_fragment: settings.dont_fragment,
                    client_sndbuf_applied: ap("client.sndbuf_bytes"),
                    client_rcvbuf_applied: ap("client.rcvbuf_bytes"),
                    server_sndbuf_applied: ap("server.sndbuf_bytes"),
                    server_rcvbuf_applied: ap("server.rcvbuf_bytes"),
                    client_udp_datapath: ap("client.udp_datapath_calls"),
                    server_udp_datapath: ap("server.udp_datapath_calls"),
                };
                if r.metrics.is_empty() {
                    sink.row(&base)?;
                    rows += 1;
                }
                for (name, value) in &r.metrics {
                    sink.row(&Row {
                        metric: name,
                        value: value.is_finite().then_some(*value),
                        unit: wire::metrics::unit_of(name),
                        ..base.clone()
                    })?;
                    rows += 1;
                }
            }
        }
    }
    sink.finish()?;
    if let Some(f) = file {
        f.commit()?;
    }
    if let Some(p) = &args.output {
        eprintln!("dualperf: wrote {rows} rows to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn import_main(args: ImportArgs) -> anyhow::Result<ExitCode> {
    if let Some(other) = args.other.sqlite_path() {
        if !other.exists() {
            bail!("no database at {}", other.display());
        }
        crate::args::check_database_file(other, false)?;
    }
    if let Some(db) = args.db.sqlite_path() {
        crate::args::check_database_file(db, true)?;
    }
    if args.other == args.db {
        bail!(
            "{} is both the source and the destination; name another --db",
            args.db
        );
    }
    let source = Store::open_target_read_only(&args.other)
        .with_context(|| format!("importing {}", args.other))?;
    let mut store = Store::open_target(&args.db)?;
    let sum = store
        .import_campaigns(&source, &args.other.to_string(), &args.campaigns)
        .with_context(|| format!("importing {}", args.other))?;
    for (from, to) in &sum.imported {
        outln!(
            "imported campaign {from} of {} as campaign {to}",
            args.other
        )?;
    }
    for m in &sum.merged {
        let conflicts = match m.conflicting_runs {
            0 => String::new(),
            n => format!(
                "; {n} runs at places campaign {} already holds with another start time kept as they were here",
                m.into
            ),
        };
        outln!(
            "merged campaign {} of {} into campaign {}: {} runs added{conflicts}",
            m.from,
            args.other,
            m.into,
            m.added_runs
        )?;
    }
    for (from, why) in &sum.skipped {
        outln!("skipped campaign {from} of {}: {why}", args.other)?;
    }
    outln!(
        "{} campaigns, {} runs imported into {}",
        sum.imported.len(),
        sum.runs,
        args.db
    )?;
    if !sum.skipped.is_empty() {
        eprintln!(
            "dualperf: {} campaigns of {} were skipped (see above); the others were imported",
            sum.skipped.len(),
            args.other
        );
        return Ok(crate::exit::code(crate::exit::ERROR));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(when(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(when(1_700_000_000), "2023-11-14 22:13:20 UTC");
        assert_eq!(when(951_782_400), "2000-02-29 00:00:00 UTC");
    }

    /// The CSV header written first is the one the csv crate derives from each row
    /// type, column for column.
    #[test]
    fn csv_columns_are_the_row_fields_in_order() {
        let s = Settings::of(None, "A", "B");
        let row = Row {
            campaign_id: 1,
            campaign_label: "x",
            run_id: 1,
            family: 4,
            test: "tcp-rr",
            transport: "TCP".into(),
            payload_bytes: 1,
            direction: "forward",
            repetition: 0,
            warmup: false,
            status: "ok",
            failure_reason: "",
            started_unix_ns: 0,
            metric: "m",
            value: Some(1.0),
            unit: "",
            client_os: &s.client_os,
            server_os: &s.server_os,
            run_duration_s: None,
            run_count: None,
            streams: None,
            rate_bps: None,
            rate_pps: None,
            sndbuf_bytes: None,
            rcvbuf_bytes: None,
            nodelay: None,
            mss_bytes: None,
            tos: None,
            flowlabel: None,
            congestion: None,
            dont_fragment: None,
            client_sndbuf_applied: None,
            client_rcvbuf_applied: None,
            server_sndbuf_applied: None,
            server_rcvbuf_applied: None,
            client_udp_datapath: None,
            server_udp_datapath: None,
        };
        let header = |r: &dyn erased::Ser| {
            let mut w = csv::Writer::from_writer(Vec::new());
            r.ser(&mut w);
            let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
            text.lines().next().unwrap().to_string()
        };
        assert_eq!(header(&row), CSV_COLUMNS.join(","));
        let iv = IntervalRow {
            campaign_id: 1,
            campaign_label: "x",
            run_id: 1,
            family: 6,
            test: "tcp-stream",
            payload_bytes: 1,
            direction: "forward",
            repetition: 0,
            warmup: false,
            interval_index: 0,
            start_ns: 0,
            end_ns: 1,
            metric: "m",
            value: None,
            unit: "",
        };
        assert_eq!(header(&iv), INTERVAL_COLUMNS.join(","));
    }

    mod erased {
        pub trait Ser {
            fn ser(&self, w: &mut csv::Writer<Vec<u8>>);
        }
        impl<T: serde::Serialize> Ser for T {
            fn ser(&self, w: &mut csv::Writer<Vec<u8>>) {
                w.serialize(self).expect("serialize a row");
            }
        }
    }
}
