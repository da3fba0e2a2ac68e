//! `dualperf show` (a campaign's metadata, plan and progress, or the list of
//! campaigns), `dualperf export` (tidy long-format CSV or JSON: one row per run and
//! metric, written by `runner::export`) and `dualperf import` (merge another database's
//! campaigns).

use anyhow::{bail, Context};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use store::Store;
use study::StudySpec;

/// Show a campaign: label, command line, versions, host metadata, plan and progress.
#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Campaign id; none lists every campaign.
    pub campaign: Option<i64>,
    #[command(flatten)]
    pub db: crate::args::DbArg,
}

/// Export runs as tidy long-format data: one row per run and metric, with the cell's
/// axes and the campaign label (pandas: `pd.read_csv`; R: `read.csv`).
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// csv or json.
    #[arg(long, default_value = "csv", value_parser = ["csv", "json"])]
    pub format: String,
    #[command(flatten)]
    pub db: crate::args::DbArg,
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
    #[command(flatten)]
    pub db: crate::args::DbArg,
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
    let store = open_existing(&args.db.target)?;
    let Some(id) = args.campaign else {
        let camps = store.campaigns()?;
        if camps.is_empty() {
            outln!("no campaigns in {}", args.db.target)?;
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
    use runner::export::ExportError;
    let store = open_existing(&args.db.target)?;
    let opts = runner::export::ExportOptions {
        json: args.format == "json",
        campaigns: args.campaigns.clone(),
        include_warmup: args.include_warmup,
        include_failed: args.include_failed,
        intervals: args.intervals,
        raw_text: args.raw_text,
    };
    // A file is written to a temporary name and renamed when complete: a full disk
    // leaves the previous export whole.
    let mut file = args
        .output
        .as_deref()
        .map(runner::out_files::AtomicFile::create)
        .transpose()?;
    let out: Box<dyn Write + '_> = match file.as_mut() {
        Some(f) => Box::new(f),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let exported = runner::export::export(&store, &opts, out).map_err(|e| match e {
        ExportError::NoCampaign(id) => {
            anyhow::anyhow!(
                "no campaign {id} in {} (`dualperf show` lists them)",
                args.db.target
            )
        }
        // An I/O error stays one, so a closed pipe is recognised.
        ExportError::Io(io) => io.into(),
        other => other.into(),
    })?;
    if let Some(f) = file {
        f.commit()?;
    }
    if let Some(p) = &args.output {
        eprintln!("dualperf: wrote {} rows to {}", exported.rows, p.display());
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
    if let Some(db) = args.db.target.sqlite_path() {
        crate::args::check_database_file(db, true)?;
    }
    if args.other == args.db.target {
        bail!(
            "{} is both the source and the destination; name another --db",
            args.db.target
        );
    }
    let source = Store::open_target_read_only(&args.other)
        .with_context(|| format!("importing {}", args.other))?;
    let mut store = Store::open_target(&args.db.target)?;
    let sum = store
        .import_campaigns(&source, &args.other.to_string(), &args.campaigns)
        .with_context(|| format!("importing {}", args.other))?;
    for (from, to) in &sum.imported {
        outln!(
            "imported campaign {from} of {} as campaign {to}",
            args.other
        )?;
    }
    let mut differing = 0;
    for m in &sum.merged {
        let conflicts = match m.conflicting_runs {
            0 => String::new(),
            n => format!(
                "; {n} runs campaign {} already holds differ there (kept as they were here)",
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
        for c in &m.conflicts {
            outln!("  differs: {c}")?;
        }
        if m.conflicting_runs > m.conflicts.len() {
            outln!("  and {} more", m.conflicting_runs - m.conflicts.len())?;
        }
        differing += m.conflicting_runs;
    }
    if differing > 0 {
        eprintln!(
            "dualperf: {differing} runs already here differ in {} (changed at the source, or resumed apart); \
             the copies here were kept. To take the source's, import it into a new database.",
            args.other
        );
    }
    for (from, why) in &sum.skipped {
        outln!("skipped campaign {from} of {}: {why}", args.other)?;
    }
    outln!(
        "{} campaigns, {} runs imported into {}",
        sum.imported.len(),
        sum.runs,
        args.db.target
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
}
