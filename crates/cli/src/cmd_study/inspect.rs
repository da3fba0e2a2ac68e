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
    /// Results database.
    #[arg(long, env = store::DB_ENV, hide_env_values = true, default_value = "dualperf.db")]
    pub db: PathBuf,
}

/// Export runs as tidy long-format data: one row per run and metric, with the cell's
/// axes and the campaign label (pandas: `pd.read_csv`; R: `read.csv`).
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// csv or json.
    #[arg(long, default_value = "csv", value_parser = ["csv", "json"])]
    pub format: String,
    /// Results database.
    #[arg(long, env = store::DB_ENV, hide_env_values = true, default_value = "dualperf.db")]
    pub db: PathBuf,
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
}

/// Merge the campaigns of another results database into this one, with their hosts'
/// metadata (a campaign already present is skipped).
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The database to import from.
    pub other: PathBuf,
    /// The database to import into.
    #[arg(long, env = store::DB_ENV, hide_env_values = true, default_value = "dualperf.db")]
    pub db: PathBuf,
}

fn open_existing(db: &std::path::Path) -> anyhow::Result<Store> {
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
    // Days since epoch → civil date (H. Hinnant's algorithm), UTC.
    let days = unix_s.div_euclid(86_400);
    let secs = unix_s.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!(
        "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02} UTC",
        secs / 3600,
        (secs % 3600) / 60,
        secs % 60
    )
}

pub fn show_main(args: ShowArgs) -> anyhow::Result<ExitCode> {
    let store = open_existing(&args.db)?;
    let Some(id) = args.campaign else {
        let camps = store.campaigns()?;
        if camps.is_empty() {
            println!("no campaigns in {}", args.db.display());
        }
        for c in camps {
            let runs = store.runs(c.id)?;
            let ok = runs
                .iter()
                .filter(|r| r.status.is_ok() && !r.warmup)
                .count();
            println!(
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
            );
        }
        return Ok(ExitCode::SUCCESS);
    };
    // Labels, host metadata and failure reasons come from the database (and from peers).
    print!("{}", wire::text::terminal_safe(&show_text(&store, id)?));
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
    let cells = store.cells(id)?;
    let details = store.run_details(id)?;
    let ok = details
        .iter()
        .filter(|d| d.run.status.is_ok() && !d.run.warmup)
        .count();
    let warm = details
        .iter()
        .filter(|d| d.run.status.is_ok() && d.run.warmup)
        .count();
    let failed: Vec<&store::RunDetail> = details.iter().filter(|d| !d.run.status.is_ok()).collect();
    let mut out = format!(
        "\nprogress: {} — {ok} measured runs, {warm} warm-up runs, {} failed attempts\n",
        if finished {
            "finished"
        } else {
            "unfinished (continue with `dualperf study --resume`)"
        },
        failed.len()
    );
    out.push_str("  cell  family test        size    ok runs  target\n");
    for cell in &cells {
        let n = details
            .iter()
            .filter(|d| d.cell_index == cell.cell_index && d.run.status.is_ok() && !d.run.warmup)
            .count();
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
    for d in failed.iter().take(20) {
        if let RunStatus::Failed { reason } = &d.run.status {
            out.push_str(&format!(
                "  failed: cell {} run {} attempt {}: {reason}\n",
                d.cell_index,
                d.run.repetition + 1,
                d.attempt
            ));
        }
    }
    if failed.len() > 20 {
        out.push_str(&format!(
            "  … and {} more failed attempts\n",
            failed.len() - 20
        ));
    }
    Ok(out)
}

/// One tidy row: a run's metric with its cell's axes.
#[derive(serde::Serialize)]
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
}

const CSV_HEADER: &str = "campaign_id,campaign_label,run_id,family,test,transport,payload_bytes,direction,repetition,warmup,status,failure_reason,started_unix_ns,metric,value,unit";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Row<'_> {
    fn csv(&self) -> String {
        [
            self.campaign_id.to_string(),
            csv_field(self.campaign_label),
            self.run_id.to_string(),
            self.family.to_string(),
            self.test.to_string(),
            self.transport.clone(),
            self.payload_bytes.to_string(),
            self.direction.to_string(),
            self.repetition.to_string(),
            self.warmup.to_string(),
            self.status.to_string(),
            csv_field(self.failure_reason),
            self.started_unix_ns.to_string(),
            csv_field(self.metric),
            self.value.map(|v| format!("{v}")).unwrap_or_default(),
            csv_field(self.unit),
        ]
        .join(",")
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
                args.db.display()
            );
        }
    }
    let mut sink: Box<dyn Write> = match &args.output {
        Some(p) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let json = args.format == "json";
    if json {
        sink.write_all(b"[")?;
    } else {
        writeln!(sink, "{CSV_HEADER}")?;
    }
    let mut first = true;
    let mut rows = 0usize;
    for c in camps
        .iter()
        .filter(|c| args.campaigns.is_empty() || args.campaigns.contains(&c.id))
    {
        for r in store.runs(c.id)? {
            if (r.warmup && !args.include_warmup) || (!r.status.is_ok() && !args.include_failed) {
                continue;
            }
            let (status, reason) = match &r.status {
                RunStatus::Ok => ("ok", ""),
                RunStatus::Failed { reason } => ("failed", reason.as_str()),
            };
            let base = |metric: &'static str| Row {
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
                metric,
                value: None,
                unit: "",
            };
            let mut emit = |row: Row<'_>| -> anyhow::Result<()> {
                if json {
                    if !first {
                        sink.write_all(b",")?;
                    }
                    sink.write_all(b"\n")?;
                    serde_json::to_writer(&mut sink, &row)?;
                } else {
                    writeln!(sink, "{}", row.csv())?;
                }
                first = false;
                rows += 1;
                Ok(())
            };
            if r.metrics.is_empty() {
                emit(base(""))?;
            }
            for (name, value) in &r.metrics {
                emit(Row {
                    metric: name,
                    value: value.is_finite().then_some(*value),
                    unit: wire::metrics::unit_of(name),
                    ..base("")
                })?;
            }
        }
    }
    if json {
        sink.write_all(b"\n]\n")?;
    }
    sink.flush()?;
    if let Some(p) = &args.output {
        eprintln!("dualperf: wrote {rows} rows to {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

pub fn import_main(args: ImportArgs) -> anyhow::Result<ExitCode> {
    if !args.other.exists() {
        bail!("no database at {}", args.other.display());
    }
    crate::args::check_database_file(&args.other, false)?;
    crate::args::check_database_file(&args.db, true)?;
    let mut store = Store::open(&args.db)?;
    let sum = store
        .import_from(&args.other)
        .with_context(|| format!("importing {}", args.other.display()))?;
    for (from, to) in &sum.imported {
        println!(
            "imported campaign {from} of {} as campaign {to}",
            args.other.display()
        );
    }
    for from in &sum.skipped {
        println!("skipped campaign {from}: already in {}", args.db.display());
    }
    println!(
        "{} campaigns, {} runs imported into {}",
        sum.imported.len(),
        sum.runs,
        args.db.display()
    );
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

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a, b"), "\"a, b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
