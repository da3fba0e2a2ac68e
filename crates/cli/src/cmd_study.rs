//! `dualperf study`, `show`, `export` and `import`: what the user typed → a
//! `study::StudySpec`, a campaign in the SQLite store, and the study runner driving the
//! runner's target (embedded server, remote server, iperf3 peer, lab; or the fake
//! executor for tests of the binary). Submodules: `journal` (progress bar and summary),
//! `preflight` (the target answers before anything is created), `inspect` (show,
//! export, import).

use crate::args::Peer;
use crate::progress::fmt_duration;
use anyhow::{bail, Context};
use clap::Args;
use runner::lifecycle::{End, Resumed};
use runner::target::{iperf3::refuse_rr, LabRequest, Target};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use study::{Repetition, SpecFile, StudySpec};

mod inspect;
mod journal;
mod preflight;
/// What the plan can show at best (`--dry-run`).
mod reach;

pub use inspect::{export_main, import_main, show_main, ExportArgs, ImportArgs, ShowArgs};

/// Run a whole study: IP families × tests × packet sizes × repetitions, every run kept
/// in a SQLite database.
///
/// With no flags this is dualperf's main job: the default study, 6 payload sizes
/// (128..1408 step 256) × 4 tests (tcp-stream, udp-stream, tcp-rr, udp-rr) × IPv4 and
/// IPv6, runs of 0.5 s repeated until the 95 % interval of each cell's throughput /
/// transaction rate, RTT and CPU is within 20 % of the mean (5 to 20 runs), udp-stream
/// as RFC 2544 throughput (up to six 0.25 s trials per run, 16 MiB UDP receive buffer), interleaved IPv4/IPv6,
/// against an embedded loopback server — 240 to 960 runs, a few minutes (the
/// plan prints its estimate; docs/benchmarks.md has measured times). Flags override single axes; `--preset` starts from one
/// of the published studies' methods (`--list-presets`); `--spec FILE` reads the same
/// settings from TOML, keys named like the flags with `_` (families, tests, sizes,
/// duration_s, count, runs, confidence, ci_width, min_runs, max_runs, udp_method,
/// loss_threshold_pct, search_steps, order, seed,
/// warmup, retries, label, tables [socket] and [udp_socket] with sndbuf_bytes,
/// rcvbuf_bytes, nodelay, mss_bytes, tos, flowlabel, congestion, dont_fragment).
/// Layering: preset, then spec file, then flags.
/// Shown under `dualperf study --help`: what the flag-less study is.
const DEFAULT_STUDY_HELP: &str = "\
With no flags this is dualperf's main job, the default study: payload sizes 128, 384, 640, \
896, 1152 and 1408 bytes x tcp-stream, udp-stream, tcp-rr, udp-rr x IPv4 and IPv6, runs of \
0.5 s repeated until the 95% interval of throughput / transaction rate, RTT and CPU is \
within 20% of the mean (5 to 20 runs per cell; 5 is the fewest with which a rank test can \
be significant after Holm's correction over 6 sizes), udp-stream measured as RFC 2544 \
throughput (highest rate with loss <= 0.1%, searched in each run by up to six 0.25 s \
trials, with a 16 MiB UDP receive buffer), IPv4/IPv6 interleaved, against an embedded server on 127.0.0.1 and ::1: 240 to 960 \
runs, a few minutes (the plan prints its estimate first), stored in dualperf.db. `--runs N` repeats a fixed number of times instead; \
`--udp-method fixed` sends unpaced (or at -b) as before. `--dry-run` shows any plan first; \
`--list-presets` shows the published studies' methods; layering is preset, then --spec \
file, then flags.";

#[derive(Args, Debug, Default, Clone)]
#[command(after_long_help = DEFAULT_STUDY_HELP)]
pub struct StudyArgs {
    #[command(flatten)]
    pub target: crate::args::TargetArgs,
    /// Embedded server: leave threads where the scheduler puts them (no CPU pinning).
    ///
    /// By default, on 2 or more CPUs, the client's threads run on CPU 0 and
    /// the embedded server's on CPU 1 (as the peer baselines pin iperf3 and netperf):
    /// on 2 cores that halves the run-to-run spread of UDP throughput. Recorded in the
    /// client metadata as study.cpu_pinning.
    #[arg(long)]
    pub no_pin: bool,
    /// Start from a preset (name or seed number 000..004); see --list-presets.
    #[arg(long)]
    pub preset: Option<String>,
    /// List the presets with the study each reproduces, and exit.
    #[arg(long)]
    pub list_presets: bool,
    /// Read the study from a TOML file (flags still override it).
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,
    /// IP families, e.g. 4,6 [default: 4,6; the family of an IP-address HOST].
    #[arg(long, value_delimiter = ',', value_name = "4,6")]
    pub families: Option<Vec<u8>>,
    /// Tests: tcp-stream, udp-stream, tcp-rr, udp-rr [default: these four], rrul, tcp-crr,
    /// pmtu, frag, ext-headers, quic-stream, quic-rr.
    ///
    /// Comma-separated. rrul: latency under load (idle probes, then UDP and TCP probes
    /// beside TCP streams; the size axis is the load's write size; see --load-duration).
    #[arg(long, value_delimiter = ',', value_name = "TESTS")]
    pub tests: Option<Vec<String>>,
    /// Payload sizes in bytes: 128,384,640 or 128..1408/256 (inclusive, with step).
    #[arg(long, value_name = "SIZES")]
    pub sizes: Option<String>,
    /// How udp-stream measures: rfc2544 (default without -b) or fixed.
    ///
    /// rfc2544: per run, the highest
    /// offered rate whose loss stays within --loss-threshold, by a search of one
    /// unpaced and up to --search-steps paced trials of half the run length each (0.5 s
    /// runs: up to 6 trials of 0.25 s, at most 1.5 s per udp-stream run); fixed = one
    /// offered rate (-b), or unpaced without -b (loss then includes the receiver's own
    /// drops and jitter is unavailable). Recorded with the campaign.
    #[arg(long, value_parser = ["rfc2544", "fixed"])]
    pub udp_method: Option<String>,
    /// Seed of the traffic model's draws [default: from the clock]; recorded.
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub traffic_seed: Option<u64>,
    /// rrul: TCP connections of load per direction [default: 4, as flent's RRUL].
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub load_streams: Option<u16>,
    /// rrul: length of the loaded phase (-d sets the other tests' runs) [default: 4 s].
    #[arg(long, value_name = "S", value_parser = crate::args::parse_secs)]
    pub load_duration: Option<f64>,
    /// Socket buffers of UDP tests only (e.g. 8K as study 000).
    #[arg(long, value_name = "BYTES", value_parser = crate::args::parse_bytes_u64, hide_short_help = true)]
    pub udp_buffer: Option<u64>,
    /// Fixed measured runs per cell (default: repeat to a confidence target).
    #[arg(long, conflicts_with_all = ["confidence", "ci_width"])]
    pub runs: Option<u32>,
    /// Repeat each cell until the CONFIDENCE % Student-t interval is narrow enough.
    #[arg(long, value_name = "PCT")]
    pub confidence: Option<f64>,
    /// Target full interval width, % of the mean (as netperf -I) [default: 20].
    #[arg(long, value_name = "PCT")]
    pub ci_width: Option<f64>,
    /// Fewest runs per cell with a confidence target (≥ 2) [default: 5].
    #[arg(long)]
    pub min_runs: Option<u32>,
    /// Most runs per cell with a confidence target [default: 20].
    #[arg(long)]
    pub max_runs: Option<u32>,
    /// interleaved (IPv4/IPv6 of each cell back to back) or random (seeded).
    #[arg(long, value_parser = ["interleaved", "random"])]
    pub order: Option<String>,
    /// Seed of the random order (recorded; default drawn from the clock).
    ///
    /// The traffic model's draws have their own seed, --traffic-seed (`run --seed`).
    #[arg(long, value_name = "N")]
    pub order_seed: Option<u64>,
    /// Refused: `run --seed` seeds traffic draws, a study has two seeds (SEEDS_HINT).
    #[arg(long = "seed", hide = true, value_name = "N")]
    pub seed_refused: Option<String>,
    /// Warm-up runs per cell, made first and not counted.
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,
    /// Retries of a failed run before it is recorded as failed for good (default 2).
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Free-text label of the campaign, e.g. "Ubuntu 24.04 / GigE / client-server".
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub db: crate::args::DbArg,
    /// Continue an interrupted campaign (its stored spec is used).
    #[arg(long, value_name = "CAMPAIGN")]
    pub resume: Option<i64>,
    /// Print the plan (cells, runs, order, estimated duration) and exit.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar or summary (errors only); prints the campaign id.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub connect_timeout: crate::args::ConnectTimeoutArg,
    #[command(flatten)]
    pub opts: crate::test_args::TestArgs,
}

/// Why `study --seed` is refused: it would mean one seed where a study has two.
const SEEDS_HINT: &str = "study has two seeds: --order-seed N for the random run order \
     (what study --seed was), --traffic-seed N for the --idt/--size-dist/--profile draws \
     (what run --seed is)";

impl StudyArgs {
    /// Combinations that cannot work, refused before anything starts.
    fn check_target(&self) -> anyhow::Result<()> {
        if self.seed_refused.is_some() {
            bail!("{SEEDS_HINT}");
        }
        if self.target.peer == Peer::Iperf3
            && !self.target.hosts().is_remote()
            && self.target.lab.is_none()
            && self.resume.is_none()
        {
            bail!(
                "--peer iperf3 needs the HOST of an iperf3 server (`iperf3 -s` running there), \
                 or --lab to run `iperf3 -s` in a lab"
            );
        }
        Ok(())
    }

    /// Where the runs go, for `--dry-run`: with a remote target, the address each family
    /// of `spec` resolves to or why it cannot run (`runner::Hosts::resolution_text`).
    fn target_text(&self, spec: &StudySpec) -> String {
        let hosts = self.target.hosts();
        let mut text = self.target_name();
        if hosts.is_remote() && fake_requested().is_none() {
            text.push('\n');
            text.push_str(hosts.resolution_text(&spec.families).trim_end());
        }
        text
    }

    /// Why a `--dry-run` plan cannot start: a family of `spec` with no address to test.
    fn dry_run_blocker(&self, spec: &StudySpec) -> Option<String> {
        let hosts = self.target.hosts();
        if !hosts.is_remote() || fake_requested().is_some() {
            return None;
        }
        let why: Vec<String> = hosts
            .resolve_each(&spec.families)
            .into_iter()
            .filter_map(|(f, r)| r.err().map(|e| format!("{f}: {e}")))
            .collect();
        (!why.is_empty()).then(|| format!("the study cannot start as given: {}", why.join("; ")))
    }

    /// The target as named (server, lab or the embedded server).
    fn target_name(&self) -> String {
        match (self.target.hosts().text(), self.lab_request()) {
            (_, Some(req)) if self.target.peer == Peer::Iperf3 => {
                format!("iperf3 -s in a {}", req.text())
            }
            (_, Some(req)) => req.text(),
            (Some(h), None) => match self.target.peer {
                Peer::Iperf3 => format!("iperf3 server {h} port {}", self.target.port()),
                Peer::Dualperf => format!("dualperf server {h} port {}", self.target.port()),
            },
            (None, None) => "embedded loopback server (127.0.0.1 and ::1)".into(),
        }
    }

    /// The lab `--lab` asks for (`--resume` fills the flags from the campaign).
    fn lab_request(&self) -> Option<LabRequest> {
        self.target.lab.map(|topology| LabRequest {
            topology,
            rate_bps: self.target.lab_rate,
            mtu_bytes: self.target.lab_mtu,
            link: self.target.lab_link,
            ampdu: self.target.lab_ampdu,
            path: self.target.lab_path(),
        })
    }

    /// The study's own flags (the shared ones are `opts`).
    fn study_options(&self) -> runner::StudyOptions {
        runner::StudyOptions {
            families: self.families.clone(),
            tests: self.tests.clone(),
            sizes: self.sizes.clone(),
            udp_method: self.udp_method.clone(),
            traffic_seed: self.traffic_seed,
            load_streams: self.load_streams,
            load_duration_s: self.load_duration,
            udp_buffer_bytes: self.udp_buffer,
            runs: self.runs,
            confidence_pct: self.confidence,
            ci_width_pct: self.ci_width,
            min_runs: self.min_runs,
            max_runs: self.max_runs,
            order: self.order.clone(),
            seed: self.order_seed,
            warmup: self.warmup,
            retries: self.retries,
            label: self.label.clone(),
        }
    }

    /// Whether any flag that shapes the study was given (`--resume` ignores them).
    fn gives_study_flags(&self) -> anyhow::Result<bool> {
        let layer = self.study_options().layer(&self.opts.clone().into())?;
        Ok(layer != SpecFile::default() || self.preset.is_some() || self.spec.is_some())
    }

    /// Preset, then spec file, then flags.
    fn resolve(&self) -> anyhow::Result<StudySpec> {
        let hosts = self.target.hosts();
        let layers = runner::Layers {
            preset: self.preset.as_deref(),
            spec_file: self.spec.as_deref(),
            hosts: Some(&hosts),
            iperf3: self.target.peer == Peer::Iperf3,
            emulated_link: self.target.lab_link.is_some(),
        };
        Ok(runner::resolve_study(
            &self.opts.clone().into(),
            &self.study_options(),
            &layers,
        )?)
    }
}

/// Environment switch for the fake executor (tests of the binary): `1`, each run
/// sleeping its duration (capped at 2 s); `instant`, returning at once.
pub const FAKE_ENV: &str = "DUALPERF_STUDY_FAKE";

/// Whether [`FAKE_ENV`] asks for the fake executor: `Some(true)` for `1` (runs sleep
/// their duration), `Some(false)` for `instant`.
pub fn fake_requested() -> Option<bool> {
    match std::env::var_os(FAKE_ENV) {
        Some(v) if v == "1" => Some(true),
        Some(v) if v == "instant" => Some(false),
        _ => None,
    }
}

/// The study's target (the options kept for its metadata and messages): the fake
/// executor, or the target the flags name, opened (embedded server started, lab built).
fn open_target(
    args: &StudyArgs,
    spec: &StudySpec,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<(Target, runner::TargetOptions)> {
    if let Some(sleeps) = fake_requested() {
        let opts = runner::TargetOptions {
            hosts: args.target.hosts(),
            port: args.target.port(),
            ..runner::TargetOptions::default()
        };
        return Ok((Target::fake(sleeps), opts));
    }
    let mut opts =
        crate::cmd_run::target_options(&args.target, args.connect_timeout.secs, stop.clone())?;
    opts.pin_threads = !args.no_pin;
    if args.target.peer == Peer::Iperf3 {
        if let Some(why) = refuse_rr(spec) {
            bail!("{why}");
        }
    }
    let mut target = Target::open(&opts, &spec.families, &mut crate::cmd_run::notice)?;
    target.set_study(spec);
    Ok((target, opts))
}

/// This build's version and git revision (`DUALPERF_GIT_REV` at build time).
pub fn version_and_revision() -> (String, String) {
    (
        env!("CARGO_PKG_VERSION").to_string(),
        option_env!("DUALPERF_GIT_REV")
            .unwrap_or("unknown")
            .to_string(),
    )
}

pub fn study_main(args: StudyArgs) -> anyhow::Result<ExitCode> {
    if args.list_presets {
        out!("{}", list_presets())?;
        return Ok(ExitCode::SUCCESS);
    }
    args.check_target()?;
    if let Some(id) = args.resume {
        return resume(args, id, crate::interrupt::study_stop_flag());
    }
    if let Some(list) = args.opts.profile.as_deref().filter(|p| p.contains(',')) {
        let list = list.to_string();
        return profile_axis(args, &list);
    }
    // Checked and planned before the handler is installed: until then a signal ends
    // the process at once (the spec's range checks keep this short anyway).
    let spec = args.resolve()?;
    connect_timeout(&args)?;
    if args.dry_run {
        // A plan the peer cannot run is refused here too, not only when it starts.
        if args.target.peer == Peer::Iperf3 {
            if let Some(why) = refuse_rr(&spec) {
                bail!("{why}");
            }
        }
        out!("{}", dry_run_text(&spec, Some(&args.target_text(&spec))))?;
        if let Some(why) = args.dry_run_blocker(&spec) {
            bail!("{why}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let stop = crate::interrupt::study_stop_flag();
    Ok(new_campaign(&args, &spec, &stop)?.0)
}

/// Run `spec` as a new campaign: (exit code, campaign id).
fn new_campaign(
    args: &StudyArgs,
    spec: &StudySpec,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<(ExitCode, i64)> {
    // Nothing exists yet: no database file, no campaign, no lab.
    preflight::check_target(args, spec)?;
    if let Some(path) = args.db.target.sqlite_path() {
        preflight::check_db(path)?;
    }
    // The stop flag's handler is in place before any lab exists: the lab crate then
    // leaves Ctrl-C to it.
    let store = journal::open_store(&args.db.target)?;
    let (version, revision) = version_and_revision();
    let info = runner::lifecycle::CampaignInfo {
        command_line: runner::campaign::command_line(),
        created_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0),
        dualperf_version: version,
        git_revision: revision,
    };
    let (mut target, opts) = open_target(args, spec, stop)?;
    let client = target.initial_client_info(&opts, &info.dualperf_version, &info.git_revision);
    let campaign =
        runner::lifecycle::create(store, &args.db.target, spec, &target, &client, &info)?;
    journal::say_took_over(&campaign);
    let id = campaign.id;
    if !args.quiet {
        eprintln!(
            "dualperf: campaign {id} in {}: {} against {}",
            args.db.target,
            plan_line(spec),
            target.describe(&opts)
        );
        // Told before the first run, not only in the report (the fake executor's runs
        // do not feel the host's load).
        if !matches!(target, Target::Fake(..)) {
            if let Some(w) = journal::busy_host_text(&client.metadata) {
                eprintln!("dualperf: {w}");
            }
        }
    }
    let code = run_campaign(args, campaign, &mut target, stop)?;
    target.close()?;
    Ok((code, id))
}

/// `--profile A,B,…`: the traffic model as an axis. One campaign per profile, each
/// labelled with it (after `--label`, if given), run one after the other with the same
/// plan otherwise; the report compares them as it compares systems, each with its own
/// IPv4-vs-IPv6 tests. Every profile is checked before anything runs.
fn profile_axis(args: StudyArgs, list: &str) -> anyhow::Result<ExitCode> {
    let names = runner::lifecycle::profile_names(list)?;
    if args.resume.is_some() {
        bail!("--resume continues one campaign and reads its profile from the database; leave out --profile");
    }
    let mut plans = Vec::new();
    for n in &names {
        let mut a = args.clone();
        a.opts.profile = Some(n.clone());
        a.label = Some(runner::lifecycle::profile_label(args.label.as_deref(), n));
        let spec = a.resolve().with_context(|| format!("--profile {n}"))?;
        plans.push((a, spec));
    }
    connect_timeout(&args)?;
    if args.dry_run {
        for (i, (a, spec)) in plans.iter().enumerate() {
            if a.target.peer == Peer::Iperf3 {
                if let Some(why) = refuse_rr(spec) {
                    bail!("{why}");
                }
            }
            outln!(
                "campaign {} of {} (profile {}):",
                i + 1,
                plans.len(),
                names[i]
            )?;
            out!("{}", dry_run_text(spec, Some(&a.target_text(spec))))?;
            if let Some(why) = a.dry_run_blocker(spec) {
                bail!("{why}");
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let stop = crate::interrupt::study_stop_flag();
    let (mut ids, mut code) = (Vec::new(), ExitCode::SUCCESS);
    for (i, (a, spec)) in plans.iter().enumerate() {
        if !args.quiet {
            eprintln!(
                "dualperf: profile {} ({} of {})",
                names[i],
                i + 1,
                plans.len()
            );
        }
        let (c, id) = new_campaign(a, spec, &stop)?;
        ids.push(id);
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            if i + 1 < plans.len() {
                eprintln!(
                    "dualperf: not started: the campaigns of {}",
                    names[i + 1..].join(", ")
                );
            }
            return Ok(c);
        }
        if c != ExitCode::SUCCESS {
            code = c;
        }
    }
    if !args.quiet {
        let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
        outln!(
            "one campaign per profile ({}); compare them with:\n  dualperf report --db {} --campaign {}",
            names.join(", "),
            args.db.target,
            ids.join(" ")
        )?;
    }
    Ok(code)
}

fn resume(args: StudyArgs, id: i64, stop: Arc<AtomicBool>) -> anyhow::Result<ExitCode> {
    let store = journal::open_store(&args.db.target)?;
    let campaign = match runner::lifecycle::resume(store, &args.db.target, id)? {
        Resumed::AlreadyFinished => {
            outln!("campaign {id} is already finished; nothing to do")?;
            return Ok(ExitCode::SUCCESS);
        }
        Resumed::Open(c) => *c,
    };
    journal::say_took_over(&campaign);
    let mut args = args;
    if !args.target.hosts().is_remote() && args.target.lab.is_none() {
        let stored = campaign.stored_target()?;
        if let Some(req) = stored.lab {
            args.target.lab = Some(req.topology);
            args.target.lab_rate = req.rate_bps;
            args.target.lab_mtu = req.mtu_bytes;
            args.target.lab_link = req.link;
            args.target.lab_ampdu = req.ampdu;
            args.target.lab_path_mtu = req.path.mtu_bytes;
            args.target.lab_drop = req.path.drops.iter().collect();
            args.target.port = args.target.port.or(stored.port);
        }
        if stored.hosts.is_remote() {
            args.target.host = stored.hosts.host;
            args.target.host4 = stored.hosts.host4;
            args.target.host6 = stored.hosts.host6;
            args.target.port = stored.port.or(args.target.port);
        }
        if stored.peer == runner::Peer::Iperf3 {
            args.target.peer = Peer::Iperf3;
        }
    }
    if args.gives_study_flags()? {
        eprintln!(
            "dualperf: warning: --resume uses campaign {id}'s stored study; the study flags given are ignored"
        );
    }
    let spec = campaign.spec.clone();
    let (mut target, opts) = open_target(&args, &spec, &stop)?;
    let mut campaign = campaign;
    campaign.record_lab(&target)?;
    if !args.quiet {
        eprintln!(
            "dualperf: resuming campaign {id} in {} ({} runs already recorded): {} against {}",
            args.db.target,
            campaign.past_runs(),
            plan_line(&spec),
            target.describe(&opts)
        );
        if let Some(left) = campaign.left() {
            eprintln!("dualperf: left: {}", crate::progress::resumed(&left));
        }
    }
    let code = run_campaign(&args, campaign, &mut target, &stop)?;
    target.close()?;
    Ok(code)
}

fn run_campaign(
    args: &StudyArgs,
    campaign: runner::lifecycle::OpenCampaign,
    target: &mut Target,
    stop: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    let spec = campaign.spec.clone();
    let ran = runner::lifecycle::run(campaign, target, journal::Shown::new(args.quiet), stop)?;
    let (campaign_id, store, mut shown) = (ran.id, ran.store, ran.view);
    shown.finish();
    let (outcome, failed_cells) = match ran.end {
        End::Finished {
            outcome,
            failed_cells,
        } => (outcome, failed_cells),
        End::Interrupted => {
            eprintln!(
                "dualperf: campaign {campaign_id} interrupted; continue it with `dualperf study --db {} --resume {campaign_id}`",
                args.db.target
            );
            return Ok(crate::exit::code(crate::exit::INTERRUPTED));
        }
        End::Stopped(e) => bail!(
            "{e}; continue the campaign with `dualperf study --db {} --resume {campaign_id}`",
            args.db.target
        ),
    };
    if args.quiet {
        outln!("{campaign_id}")?;
    } else {
        let measured = !matches!(target, Target::Fake(..));
        let summary = journal::summary_text(
            &store,
            campaign_id,
            &spec,
            &outcome,
            &args.db.target,
            measured,
        )?;
        out!("{}", wire::text::terminal_safe(&summary))?;
        if let Some(b) = ran.busy.filter(|b| b.answers > 0) {
            outln!(
                "the iperf3 server answered \"busy\" {} time(s); waited {:.1} s in all (not recorded as results)",
                b.answers,
                b.waited.as_secs_f64()
            )?;
        }
    }
    let missed = outcome.cells.iter().any(|c| c.target_met == Some(false));
    Ok(if failed_cells > 0 {
        crate::exit::code(crate::exit::NO_RUN)
    } else if missed {
        crate::exit::code(crate::exit::TARGETS_MISSED)
    } else {
        ExitCode::SUCCESS
    })
}

fn plan_line(spec: &StudySpec) -> String {
    let p = study::plan::summarise(spec);
    let (lo, hi) = spec.runs_range();
    let runs = if lo == hi {
        format!("{lo} runs")
    } else {
        format!("{lo}..{hi} runs")
    };
    format!(
        "{} cells x {runs}{}, about {}",
        p.cells,
        if spec.warmup_runs > 0 {
            format!(" (+{} warm-up)", spec.warmup_runs)
        } else {
            String::new()
        },
        if lo == hi {
            fmt_duration(p.estimated_s_min)
        } else {
            // A range, and what it spans: the progress narrows it from the runs measured.
            format!(
                "{} (every cell done at {lo} runs) to {} (every cell to {hi})",
                fmt_duration(p.estimated_s_min),
                fmt_duration(p.estimated_s_max)
            )
        }
    )
}

fn list_presets() -> String {
    let mut out = String::new();
    for p in study::presets::all() {
        out.push_str(&format!(
            "{}\n  study: {}\n  what it did: {}\n  this preset: {}\n",
            p.name,
            p.study.unwrap_or("dualperf's own default (no flags)"),
            p.what_it_did,
            p.notes
        ));
        if let Ok(spec) = p.spec.resolve(0) {
            out.push_str(&format!("  plan: {}\n", plan_line(&spec)));
        }
        if let Some(args) = p.model_args {
            out.push_str(&format!("  its link's ceiling: dualperf model {args}\n"));
        }
        out.push('\n');
    }
    out.push_str("Use one with `dualperf study --preset NAME`; flags override it.\n");
    out
}

/// The `--dry-run` text: cells, runs, order and estimated duration.
pub fn dry_run_text(spec: &StudySpec, host: Option<&str>) -> String {
    let cells = study::plan::cells(spec);
    let p = study::plan::summarise(spec);
    let mut out = String::new();
    out.push_str(&format!(
        "target: {}\n",
        host.unwrap_or("embedded loopback server (127.0.0.1 and ::1)")
    ));
    if !spec.label.is_empty() {
        out.push_str(&format!("label: {}\n", spec.label));
    }
    out.push_str(&format!("cells: {}\n", cells.len()));
    for c in &cells {
        out.push_str(&format!("  {:>3}  {}\n", c.index, c.label()));
    }
    let bound = match spec.bound {
        wire::spec::Bound::DurationNs(ns) => format!("{} s", ns as f64 / 1e9),
        wire::spec::Bound::Count(n) => format!("{n} packets"),
    };
    let wire_tests = spec.tests.iter().any(|t| t.on_wire());
    if wire_tests {
        out.push_str(&format!("each run: {bound}\n"));
    }
    if let Some(r) = &spec.rrul {
        out.push_str(&format!("rrul run: {}\n", r.describe()));
    }
    if let Some(t) = spec.describe_traffic() {
        out.push_str(&format!(
            "traffic model (udp-stream and tcp-stream cells): {t}\n"
        ));
    }
    if spec.tests.contains(&wire::spec::TestKind::UdpStream) {
        out.push_str(&format!(
            "udp-stream method: {}\n",
            spec.describe_udp_stream()
        ));
        if let Some(w) = spec.window_ns {
            out.push_str(&format!(
                "udp-stream per-window statistics: windows of {} ms of send time\n",
                w as f64 / 1e6
            ));
        }
    }
    if spec.tests.iter().any(|t| t.is_udp()) {
        out.push_str(&format!("UDP datapath: {}\n", spec.udp_datapath.describe()));
    }
    out.push_str(&format!("socket options: {}\n", spec.describe_sockets()));
    match spec.repetition {
        Repetition::Fixed { runs } => out.push_str(&format!(
            "repetition: {runs} measured runs per cell ({} runs)\n",
            p.measured_runs_min
        )),
        Repetition::Confidence {
            level_pct,
            width_pct,
            min_runs,
            max_runs,
        } => out.push_str(&format!(
            "repetition: until the {level_pct}% interval is within {width_pct}% of the mean, {min_runs}..{max_runs} runs per cell ({}..{} runs)\n",
            p.measured_runs_min, p.measured_runs_max
        )),
    }
    out.push_str(&format!(
        "warm-up: {} per cell ({} runs, not counted); retries: {}\n",
        spec.warmup_runs, p.warmup_runs, spec.retries
    ));
    let all: Vec<u32> = (0..cells.len() as u32).collect();
    let first = study::plan::round_order(spec.order, spec.seed, 0, &all);
    out.push_str(&match spec.order {
        study::Order::Interleaved => {
            "order: interleaved; every round runs the cells in this order (IPv4/IPv6 back to back):\n".to_string()
        }
        study::Order::Random => format!(
            "order: random, seed {}; each round reshuffled from the seed; round 1:\n",
            spec.seed
        ),
    });
    let names: Vec<String> = first.iter().map(|&i| cells[i as usize].label()).collect();
    out.push_str(&format!("  {}\n", names.join(", ")));
    out.push_str(&format!(
        "estimated duration: {}{}\n",
        if p.estimated_s_min == p.estimated_s_max {
            fmt_duration(p.estimated_s_min)
        } else {
            format!(
                "{} to {}",
                fmt_duration(p.estimated_s_min),
                fmt_duration(p.estimated_s_max)
            )
        },
        p.assumption.map(|a| format!(" ({a})")).unwrap_or_default()
    ));
    out.push_str(&reach::reach_text(spec));
    out
}

/// Keep the connect timeout sane.
fn connect_timeout(args: &StudyArgs) -> anyhow::Result<Duration> {
    crate::cmd_run::connect_timeout_of(args.connect_timeout.secs)
}

#[cfg(test)]
mod tests {

    use super::*;

    fn study_args(words: &[&str]) -> StudyArgs {
        use clap::Parser;
        let cli = crate::Cli::try_parse_from([&["dualperf", "study"], words].concat()).unwrap();
        match cli.command {
            crate::Command::Study(a) => *a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn study_seed_is_refused_naming_the_order_and_the_traffic_seed() {
        let e = study_args(&["--order", "random", "--seed", "7"])
            .check_target()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--order-seed N") && e.contains("--traffic-seed N"),
            "{e}"
        );
        let args = study_args(&["--order", "random", "--order-seed", "7"]);
        args.check_target().unwrap();
        assert_eq!(args.resolve().unwrap().seed, 7);
    }

    #[test]
    fn flags_override_preset_and_file() {
        let args = StudyArgs {
            preset: Some("002".into()),
            runs: Some(2),
            opts: crate::test_args::TestArgs {
                duration: Some(0.5),
                window: Some(65_536),
                ..Default::default()
            },
            db: crate::args::DbArg {
                target: "x.db".into(),
            },
            ..StudyArgs::default()
        };
        let s = args.resolve().unwrap();
        assert_eq!(s.sizes_bytes.len(), 10);
        assert_eq!(s.repetition, Repetition::Fixed { runs: 2 });
        assert_eq!(s.bound, wire::spec::Bound::DurationNs(500_000_000));
        assert_eq!(s.socket.sndbuf_bytes, Some(65_536));
        assert_eq!(s.label, "preset sweep10-10x1min");
    }

    #[test]
    fn dry_run_names_cells_order_and_duration() {
        let s = SpecFile::from_toml("tests=['tcp-rr']\nsizes=[128]\nruns=2\nduration_s=1.0\n")
            .unwrap()
            .resolve(0)
            .unwrap();
        let t = dry_run_text(&s, None);
        assert!(t.contains("cells: 2"), "{t}");
        assert!(t.contains("IPv4 tcp-rr 128 B, IPv6 tcp-rr 128 B"), "{t}");
        // 4 runs of 1 s plus 0.1 s overhead each.
        assert!(t.contains("estimated duration: 4s"), "{t}");
    }
}
