//! `dualperf run`: one test against a server, an embedded loopback server when no HOST
//! is given, or in a lab. Maps what the user typed onto the runner's options, runs the
//! test as a campaign of one with no store (`runner::Single`, on the target a study
//! uses), prints the intervals as they end and a readable summary (or `--json`, schema
//! in docs/guide/run.md).

use anyhow::Context;
use clap::Args;
use engine::{IntervalSample, RunResult};
use runner::target::{FullResult, Place, Target};
use runner::{RunSpec, Single, SingleError};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use wire::metric_table::{self, Section};
use wire::metrics::{self as m, Metric};
use wire::spec::{Direction, Family, TestKind};

mod lab_run;
mod loaded;
mod peer_iperf3;

pub use runner::RunTest;

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    target: crate::args::TargetArgs,
    /// tcp-stream, udp-stream, tcp-rr, udp-rr, rrul (latency under load), tcp-crr (one
    /// connection per transaction), the path-health tests pmtu, frag, ext-headers
    /// (docs/guide/path-health.md), quic-stream or quic-rr (QUIC over UDP).
    ///
    /// rrul: UDP and TCP request/response probes at --probe-rate, first idle for --idle,
    /// then beside -P TCP streams per direction (--load) for -d; reports idle and loaded
    /// RTT, the latency the load added, throughput per direction and RPM.
    #[arg(short, long, default_value = "tcp-stream")]
    test: RunTest,
    /// IP version, 4 or 6 [default: the family of an IP-address HOST, else 4].
    ///
    /// Needed only for host names (and the embedded server).
    #[arg(short, long)]
    family: Option<Family>,
    /// Payload bytes per send / datagram / request [default: 1408; tcp-stream and rrul:
    /// 128K writes].
    ///
    /// Netperf's send size; for tcp-stream and rrul the write size (iperf3's default is
    /// 128K too; a study sweeps 128..1408).
    #[arg(short, long, value_parser = crate::args::parse_bytes_u32)]
    size: Option<u32>,
    /// udp-stream: find the RFC 2544 throughput instead of sending at one rate.
    ///
    /// The highest rate whose loss stays within --loss-threshold, by binary search (one
    /// unpaced trial, then --search-steps paced ones, sharing -d / -n). Replaces -b.
    #[arg(long, conflicts_with = "rate")]
    rate_search: bool,
    /// Seed of the --idt / --size-dist draws [default: from the clock].
    ///
    /// Always recorded, so a run can be repeated exactly.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Print the full result as JSON (schema in docs/guide/run.md).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    connect_timeout: crate::args::ConnectTimeoutArg,
    /// Control protocol version to speak (testing only).
    #[arg(long, hide = true)]
    protocol_version: Option<u16>,
    #[command(flatten)]
    opts: crate::test_args::TestArgs,
}

/// Shortest and longest `--connect-timeout` (also `study --connect-timeout`).
pub const CONNECT_TIMEOUT_RANGE: (Duration, Duration) =
    (Duration::from_millis(10), Duration::from_secs(600));

/// `--connect-timeout` checked (a typed `inf` or `1e30` is refused, never panics).
pub fn connect_timeout_of(secs: f64) -> anyhow::Result<Duration> {
    let (lo, hi) = CONNECT_TIMEOUT_RANGE;
    Ok(wire::bounds::secs_to_duration(
        "--connect-timeout",
        secs,
        lo,
        hi,
    )?)
}

/// What the user asked for, resolved by the runner as a campaign of one test: one of
/// the four tests, or the loaded-latency test.
fn single_of(a: &RunArgs) -> anyhow::Result<Single> {
    if a.opts.profile.as_deref() == Some("list") {
        list_profiles()?;
        std::process::exit(crate::exit::SUCCESS.into());
    }
    let one = runner::OneTest {
        test: a.test,
        family: crate::args::family_of(&a.target.hosts(), a.family)?,
        size_bytes: a.size,
        traffic_seed: a.seed,
        rate_search: a.rate_search,
    };
    let mut opts: runner::TestOptions = a.opts.clone().into();
    if a.target.lab_link.is_some() {
        opts.udp_datapath = Some(runner::emulated_link_datapath(opts.udp_datapath)?);
    }
    Ok(runner::resolve_single(&opts, &one)?)
}

/// `--profile list`: the application models with their parameters and sources.
fn list_profiles() -> anyhow::Result<()> {
    for p in wire::traffic::PROFILES {
        let on_off = p
            .on_off
            .map(|(on, off)| format!(", on {on}, off {off}"))
            .unwrap_or_default();
        outln!(
            "{}: idt {}, size {}{on_off}\n    {}",
            p.name,
            p.idt,
            p.size,
            p.source
        )?;
    }
    Ok(())
}

/// The interval lines of a text result, printed as each interval ends.
///
/// The client's samples hold what the client itself knows: what it sent on a forward
/// test, what it received on a reverse one, both for `--bidir`. Only those columns are
/// printed, under a header; the receiver's totals for a forward test come from the
/// server's result in the summary.
struct IntervalLines {
    direction: Direction,
    header_printed: bool,
}

impl IntervalLines {
    fn new(direction: Direction) -> IntervalLines {
        IntervalLines {
            direction,
            header_printed: false,
        }
    }

    /// The header and one line per interval, as printed.
    fn lines(&mut self, s: &IntervalSample) -> Vec<String> {
        let mut out = Vec::new();
        let (sent, received) = match self.direction {
            Direction::Forward => (true, false),
            Direction::Reverse => (false, true),
            Direction::Bidir => (true, true),
        };
        if !self.header_printed {
            self.header_printed = true;
            let mut h = format!("{:<19}", "interval (s)");
            if sent {
                h.push_str(&format!("  {:>14}  {:>10}", "sent", "packets"));
            }
            if received {
                h.push_str(&format!("  {:>14}  {:>10}", "received", "packets"));
            }
            out.push(h.trim_end().to_string());
        }
        let secs = (s.end_ns.saturating_sub(s.start_ns)) as f64 / 1e9;
        let rate = |b: u64| {
            if secs > 0.0 {
                b as f64 * 8.0 / secs
            } else {
                0.0
            }
        };
        let mut line = format!(
            "{:>7.2} - {:>7.2}    ",
            s.start_ns as f64 / 1e9,
            s.end_ns as f64 / 1e9
        );
        if sent {
            line.push_str(&format!(
                "  {:>14}  {:>10}",
                fmt_bps(rate(s.sent_bytes)),
                s.sent_packets
            ));
        }
        if received {
            line.push_str(&format!(
                "  {:>14}  {:>10}",
                fmt_bps(rate(s.recv_bytes)),
                s.recv_packets
            ));
        }
        out.push(line);
        out
    }
}

/// Hands each interval to `lines` and prints what it makes of it.
fn print_intervals(mut lines: IntervalLines) -> runner::target::IntervalObserver {
    Box::new(move |s: &IntervalSample| {
        for line in lines.lines(s) {
            say(&line);
        }
    })
}

/// Test hook: run this program instead of this binary as a lab's server.
pub const LAB_SERVER_EXE_ENV: &str = "DUALPERF_LAB_SERVER_EXE";

/// Where `run` and `study` send their tests, as the runner's options (`--psk-file` and
/// the iperf3 credentials read here; the lab's server is this binary).
pub fn target_options(
    t: &crate::args::TargetArgs,
    connect_timeout_s: f64,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<runner::TargetOptions> {
    use crate::args::Peer;
    let connect_timeout = connect_timeout_of(connect_timeout_s)?;
    if t.psk_file.is_some() && !t.hosts().is_remote() {
        anyhow::bail!(
            "--psk-file is the key of a remote `dualperf server`: give its HOST (or \
             --host4/--host6)"
        );
    }
    let iperf3_auth = crate::args::iperf3_auth(
        t.peer,
        t.iperf3_username.as_deref(),
        t.iperf3_rsa_public_key.as_deref(),
    )?;
    let server_exe = match (t.lab, std::env::var_os(LAB_SERVER_EXE_ENV)) {
        (None, _) => None,
        (Some(_), Some(p)) => Some(std::path::PathBuf::from(p)),
        (Some(_), None) => {
            Some(std::env::current_exe().context("cannot find this dualperf binary")?)
        }
    };
    Ok(runner::TargetOptions {
        hosts: t.hosts(),
        port: t.port(),
        peer: t.peer.runner(),
        lab: t.lab.map(|topology| runner::target::LabRequest {
            topology,
            rate_bps: t.lab_rate,
            mtu_bytes: t.lab_mtu,
            link: t.lab_link,
            ampdu: t.lab_ampdu,
            path: t.lab_path(),
        }),
        server_exe,
        psk: match t.peer {
            Peer::Dualperf => crate::args::load_psk(t.psk_file.as_deref())?,
            Peer::Iperf3 => None,
        },
        iperf3_auth,
        connect_timeout,
        protocol_version: None,
        pin_threads: false,
        stop,
        ..runner::TargetOptions::default()
    })
}

/// What a target building says meanwhile (stale labs removed, a lab's warnings).
pub fn notice(line: &str) {
    eprintln!("dualperf: {line}");
}

pub fn main(args: RunArgs) -> anyhow::Result<ExitCode> {
    let mut single = single_of(&args)?;
    let direction = match single.run_spec() {
        RunSpec::Loaded(_) => {
            loaded::check(&args)?;
            None
        }
        RunSpec::One(spec) => {
            if args.rate_search {
                check_rate_search(&args)?;
            }
            Some(spec.direction)
        }
    };
    let opts = run_target_options(&args)?;
    if let RunSpec::One(spec) = single.run_spec() {
        if args.target.peer == crate::args::Peer::Iperf3 {
            return peer_iperf3::main(&args, &single, spec, &opts);
        }
        wire::proto::validate_spec(spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    if args.rate_search {
        single = single.with_rate_search(rate_search(&args));
    }
    let (ran_test, ran) = on_target(&opts, |t| {
        if let (Some(d), false) = (direction, args.json) {
            t.observe_intervals(print_intervals(IntervalLines::new(d)));
        }
        single.run(t)
    })?;
    let Some(full) = ran_test.full else {
        anyhow::bail!("the target kept no result of the test");
    };
    match full {
        FullResult::Test { result, intervals } => show(&args, &result, &intervals, &ran),
        FullResult::Loaded(r) => loaded::show(&args, &r, &ran),
        FullResult::Iperf3(_) => anyhow::bail!("the dualperf target kept an iperf3 result"),
    }
}

/// The result of a stream or request/response run, as text or `--json`.
fn show(
    args: &RunArgs,
    result: &RunResult,
    intervals: &[IntervalSample],
    ran: &Ran,
) -> anyhow::Result<ExitCode> {
    match (args.json, &ran.lab) {
        (true, None) => say(&to_json(result, intervals)?),
        (true, Some(md)) => {
            let mut doc: serde_json::Value = serde_json::from_str(&to_json(result, intervals)?)
                .context("cannot re-read the JSON result")?;
            if let Some(obj) = doc.as_object_mut() {
                obj.insert("lab".into(), serde_json::to_value(md)?);
            }
            say(&serde_json::to_string_pretty(&doc).context("cannot encode the result as JSON")?);
        }
        (false, _) => {
            let emulated = ran.lab.as_ref().and_then(lab_run::emulated_link);
            say(summary(result, ran.embedded, emulated.is_some()).trim_end());
            if let Some(link) = &emulated {
                say(lab_run::emulated_context(link, ran.lab.as_ref(), &result.spec).trim_end());
            }
            if let Some(md) = &ran.lab {
                lab_run::say_lab(md);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Refuses a `--rate-search` this run cannot make.
fn check_rate_search(args: &RunArgs) -> anyhow::Result<()> {
    if args.test != RunTest::One(TestKind::UdpStream)
        || args.target.peer != crate::args::Peer::Dualperf
    {
        anyhow::bail!("--rate-search is for -t udp-stream against a dualperf server");
    }
    if args.target.lab.is_some() {
        anyhow::bail!("--rate-search cannot be combined with --lab (use dualperf study --lab)");
    }
    rate_search(args)
        .check()
        .map_err(|e| anyhow::anyhow!("--loss-threshold / --search-steps: {e}"))
}

/// `run`'s target options: the shared ones and `--protocol-version`.
fn run_target_options(args: &RunArgs) -> anyhow::Result<runner::TargetOptions> {
    let mut opts = target_options(&args.target, args.connect_timeout.secs, Arc::default())?;
    opts.protocol_version = args.protocol_version;
    Ok(opts)
}

/// Where a run went: the embedded server, or a lab (its description).
struct Ran {
    embedded: bool,
    lab: Option<BTreeMap<String, String>>,
}

/// Opens the target of `opts` (embedded server, remote host or lab), runs `test` there
/// and closes it: a lab is removed on every way out, Ctrl-C included.
fn on_target<T>(
    opts: &runner::TargetOptions,
    test: impl FnOnce(&mut Target) -> Result<T, SingleError>,
) -> anyhow::Result<(T, Ran)> {
    if opts.lab.is_some() {
        return lab_run::guarded(|| on_target_now(opts, test));
    }
    on_target_now(opts, test)
}

fn on_target_now<T>(
    opts: &runner::TargetOptions,
    test: impl FnOnce(&mut Target) -> Result<T, SingleError>,
) -> anyhow::Result<(T, Ran)> {
    let mut target = Target::open(opts, &[], &mut notice)?;
    let result = test(&mut target);
    let ran = Ran {
        embedded: matches!(
            target.dualperf().map(|d| d.place()),
            Some(Place::Embedded { .. })
        ),
        lab: target.lab().map(|l| l.describe()),
    };
    let closed = target.close();
    let result = result?;
    closed?;
    Ok((result, ran))
}

/// `--rate-search` with `--loss-threshold` and `--search-steps` (or their defaults).
fn rate_search(args: &RunArgs) -> engine::RateSearch {
    engine::RateSearch {
        loss_threshold_pct: args
            .opts
            .loss_threshold
            .unwrap_or(wire::spec::RATE_SEARCH_LOSS_THRESHOLD_PCT),
        steps: args
            .opts
            .search_steps
            .unwrap_or(wire::spec::RATE_SEARCH_STEPS),
    }
}

/// One line to stdout; a closed pipe (`| head`) is not an error worth a panic. The
/// server's metadata and messages are in it, so control characters are removed (JSON
/// output holds none: serde_json escapes them).
fn say(line: &str) {
    use std::io::Write;
    let line = wire::text::terminal_safe(line);
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

#[derive(serde::Serialize)]
struct JsonOut<'a> {
    #[serde(flatten)]
    result: &'a RunResult,
    metrics: Vec<Metric>,
    intervals: &'a [IntervalSample],
    /// `--stats-window`: per-window statistics, sender and receiver joined.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    windows: Vec<engine::WindowRow>,
    /// `-P N` stream tests: each stream's bytes, goodput and share.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    streams: Vec<engine::StreamRow>,
    /// UDP streams: why the one-way delay metrics are absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    one_way_delay_unavailable: Option<String>,
    /// UDP streams of too few datagrams: why the rate metrics are absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    rate_unavailable: Option<String>,
    /// pmtu: the finding in words ("path MTU 1280, signalled by fd02::1").
    #[serde(skip_serializing_if = "Option::is_none")]
    pmtu_verdict: Option<String>,
}

fn to_json(r: &RunResult, intervals: &[IntervalSample]) -> anyhow::Result<String> {
    let out = JsonOut {
        result: r,
        metrics: r.metrics(),
        intervals,
        windows: r.windows(),
        streams: if r.spec.streams > 1 {
            r.stream_rows()
        } else {
            Vec::new()
        },
        one_way_delay_unavailable: (r.spec.kind == TestKind::UdpStream)
            .then(|| r.one_way_delay().err().map(|e| e.to_string()))
            .flatten(),
        rate_unavailable: r.rate_unavailable(),
        pmtu_verdict: r.pmtu.as_ref().map(|p| p.verdict()),
    };
    serde_json::to_string_pretty(&out).context("cannot encode the result as JSON")
}

fn fmt_bps(v: f64) -> String {
    wire::quantity::display_bit_rate(v)
}

fn fmt_value(x: &Metric) -> String {
    match x.unit.as_str() {
        "bit/s" => fmt_bps(x.value),
        "ns" => {
            if x.value >= 1e6 {
                format!("{:.3} ms", x.value / 1e6)
            } else {
                format!("{:.1} µs", x.value / 1e3)
            }
        }
        // Process CPU is % of one core, not of the host.
        "%" => format!(
            "{:.2} {}",
            x.value,
            metric_table::info(&x.name).map_or("%", |i| i.unit_words())
        ),
        "packets/s" => format!("{:.0} packets/s", x.value),
        "1/s" => format!("{:.0}/s", x.value),
        "s" => format!("{:.3} s", x.value),
        "µs" => format!("{:.3} µs", x.value),
        "count" => format!("{:.0}", x.value),
        u => format!("{:.0} {u}", x.value),
    }
}

/// The headings of the text summary, in display order (rrul lays out its own).
const SECTIONS: &[Section] = &[
    Section::Volume,
    Section::Rate,
    Section::DeliveryAndJitter,
    Section::Latency,
    Section::Cpu,
    // Headed with the path's framing model (`RunResult::path_framing`).
    Section::Framing,
    Section::PathHealth,
    Section::Quic,
];

/// The metric's label ([`wire::metric_table`]'s); a name the table lacks, spelled out.
fn label(name: &str) -> String {
    match metric_table::info(name) {
        Some(i) => i.label.to_string(),
        None => name.replace('_', " "),
    }
}

/// [`label`] for a test of `kind`: TCP counts messages of the payload size, not packets.
fn label_of(name: &str, kind: TestKind) -> String {
    match metric_table::info(name) {
        Some(i) => i.label_for(!kind.is_udp()).to_string(),
        None => label(name),
    }
}

/// `emulated`: the run went over a lab's emulated link, whose veths' own link state
/// (`kind=wired`) is not the link measured; [`lab_run::emulated_context`] says what is.
fn summary(r: &RunResult, embedded: bool, emulated: bool) -> String {
    let s = &r.spec;
    let dir = match s.direction {
        Direction::Forward => "client → server",
        Direction::Reverse => "server → client",
        Direction::Bidir => "both directions",
    };
    // A traffic model's drawn sizes replace the payload size; pmtu searches its sizes.
    let payload = match s.traffic.as_ref().and_then(|t| t.size.as_deref()) {
        Some(d) => format!("payload sizes {d}"),
        None if s.kind == TestKind::Pmtu => "don't-fragment probes of searched size".into(),
        None => format!("{}-byte payload", s.payload_bytes),
    };
    let mut out = format!(
        "dualperf {} over {} to {}{}: {payload}, {}, {} stream(s)\n",
        s.kind,
        s.family,
        r.server_addr,
        if embedded { " (embedded server)" } else { "" },
        dir,
        s.streams
    );
    let metrics = r.metrics();
    // Service demand is per KB moved (streams) or per transaction (RR), netperf's way.
    let demand_unit = if s.kind.is_rr() {
        "µs/transaction"
    } else {
        "µs/KB"
    };
    // The sections, then "other" for a name the table lacks.
    for g in SECTIONS.iter().copied().map(Some).chain([None]) {
        let section = |name: &str| metric_table::info(name).map(|i| i.section);
        let mut lines = metrics.iter().filter(|x| section(&x.name) == g).peekable();
        // A UDP stream's latency section says why its one-way delay is missing, as
        // `--json` does, even with no figure to list.
        let owd_section = g == Some(Section::Latency) && s.kind == TestKind::UdpStream;
        let rate_unavailable = (g == Some(Section::Rate))
            .then(|| r.rate_unavailable())
            .flatten();
        if lines.peek().is_none() && !owd_section && rate_unavailable.is_none() {
            continue;
        }
        match g {
            Some(Section::Framing) => out.push_str(&format!("  {}\n", r.path_framing().heading())),
            _ => out.push_str(&format!("  {}\n", g.map_or("other", Section::heading))),
        }
        for x in lines {
            let value = match x.name.as_str() {
                m::SERVICE_DEMAND_LOCAL_US | m::SERVICE_DEMAND_REMOTE_US => {
                    format!("{:.3} {demand_unit}", x.value)
                }
                m::RECEIVER_LIMITED if x.value > 0.0 => {
                    "YES: the receiving host dropped datagrams itself; the loss \
                     describes the receiver, not the network"
                        .to_string()
                }
                m::RECEIVER_LIMITED => "no".to_string(),
                m::PTB_RECEIVED | m::BLACK_HOLE => {
                    if x.value > 0.0 { "yes" } else { "no" }.to_string()
                }
                m::SENT_PPS | m::RECV_PPS if !s.kind.is_udp() => {
                    format!("{:.0} messages/s", x.value)
                }
                _ => fmt_value(x),
            };
            out.push_str(&format!(
                "    {:<32} {}\n",
                label_of(&x.name, s.kind),
                value
            ));
        }
        if owd_section {
            match r.one_way_delay() {
                Ok(d) => out.push_str(&format!(
                    "    {:<32} ±{:.1} µs ({})\n",
                    "one-way delay bound",
                    d.uncertainty_ns / 1e3,
                    r.clock.as_ref().map_or("", |c| c.method.as_str())
                )),
                Err(why) => {
                    out.push_str(&format!("    {:<32} unavailable: {why}\n", "one-way delay"))
                }
            }
        }
        if g == Some(Section::PathHealth) {
            if let Some(p) = &r.pmtu {
                out.push_str(&format!("    {:<32} {}\n", "verdict", p.verdict()));
            }
            if let Some(what) = r.client.applied.get(engine::EXT_HEADERS_APPLIED_KEY) {
                out.push_str(&format!("    {:<32} {what}\n", "extension headers"));
            }
        }
        if let Some(why) = &rate_unavailable {
            out.push_str(&format!("    {:<32} unavailable: {why}\n", "rates"));
        }
        if g == Some(Section::Rate) && s.streams > 1 && rate_unavailable.is_none() {
            for st in r.stream_rows() {
                let line = format!(
                    "{} ({:.1} % of bytes)",
                    fmt_bps(st.throughput_bps),
                    st.share_pct
                );
                out.push_str(&format!(
                    "    {:<32} {line}\n",
                    format!("goodput, stream {}", st.stream_id)
                ));
            }
        }
        // tcp-crr: which side keeps TIME_WAIT decides whether a long run can exhaust
        // the client's ephemeral ports.
        if g == Some(Section::Latency) {
            if let Some(holder) = r.client.applied.get(engine::TCP_CRR_TIME_WAIT_KEY) {
                out.push_str(&format!(
                    "    {:<32} TIME_WAIT: {holder}
",
                    "connection close"
                ));
            }
        }
        if g == Some(Section::DeliveryAndJitter) {
            if let Some(why) = r.drop_counts_unavailable() {
                out.push_str(&format!(
                    "    {:<32} unavailable: {why}\n",
                    "datagrams dropped by receiver"
                ));
            }
            if let Some(why) = r.jitter_unavailable() {
                out.push_str(&format!(
                    "    {:<32} unavailable: {why}\n",
                    "jitter and IPDV"
                ));
            }
        }
    }
    // Both ends: the receiver's side says how it received (datapath, low-water mark).
    for (side, applied) in [("client", &r.client.applied), ("server", &r.server.applied)] {
        // The link state (net::wifi) gets its own line; its reasons stay in --json.
        let (link, socket): (Vec<_>, Vec<_>) = applied
            .iter()
            .filter(|(k, _)| !k.ends_with(".unavailable"))
            .partition(|(k, _)| k.starts_with("link."));
        for (what, kv) in [("socket", socket), ("link", link)] {
            if what == "link" && emulated {
                continue;
            }
            if !kv.is_empty() {
                let kv: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let head = format!("{what} ({side}, as applied)");
                out.push_str(&format!("  {head:<34} {}\n", kv.join(" ")));
            }
        }
    }
    if let Some(search) = &r.rate_search {
        out.push_str(&format!(
            "  RFC 2544 search (loss ≤ {}%): the figures above are the highest passing trial's\n",
            search.params.loss_threshold_pct
        ));
        for (asked, sent, loss) in &search.trials {
            let asked = if *asked > 0.0 {
                format!("{asked:.0}/s")
            } else {
                "unpaced".to_string()
            };
            out.push_str(&format!(
                "    trial {asked:>12}: sent {sent:.0} packets/s, loss {loss:.3} %\n"
            ));
        }
    }
    let windows = r.windows();
    if !windows.is_empty() {
        out.push_str(&window_table(&windows));
    }
    for w in &r.warnings {
        out.push_str(&format!("  warning: {w}\n"));
    }
    out
}

/// `--stats-window` rows as a table (ITGDec's per-window view): windows by send time.
fn window_table(rows: &[engine::WindowRow]) -> String {
    let opt_us = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{:.1}", v / 1e3));
    let mut out = String::from(
        "  per window of send time (loss exact by send window; jitter and delay where measured)\n\
         \x20   start s     sent     recv     lost   loss %     Mbit/s  jitter µs  delay µs (mean / max)\n",
    );
    for w in rows {
        out.push_str(&format!(
            "    {:>7.3} {:>8} {:>8} {:>8} {:>8} {:>10.3} {:>10} {:>9} / {}\n",
            w.start_s,
            w.sent_packets,
            w.recv_packets,
            w.lost_packets,
            w.loss_pct.map_or("–".to_string(), |p| format!("{p:.2}")),
            w.bitrate_bps / 1e6,
            opt_us(w.jitter_ns),
            opt_us(w.owd_mean_ns),
            opt_us(w.owd_max_ns),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_lines_have_a_header_and_only_the_figures_the_client_knows() {
        let s = IntervalSample {
            start_ns: 0,
            end_ns: 1_000_000_000,
            sent_bytes: 125_000_000,
            sent_packets: 1000,
            recv_bytes: 0,
            recv_packets: 0,
            ..IntervalSample::default()
        };
        let mut fwd = IntervalLines::new(Direction::Forward);
        let first = fwd.lines(&s);
        assert_eq!(first.len(), 2, "{first:?}");
        assert!(first[0].starts_with("interval (s)") && first[0].contains("sent"));
        assert!(!first[0].contains("received"), "{first:?}");
        assert!(first[1].contains("1.00 Gbit/s") && first[1].contains("1000"));
        assert!(!first[1].contains("0 bit/s"), "{first:?}");
        assert_eq!(fwd.lines(&s).len(), 1, "the header is printed once");
        let r = IntervalSample {
            recv_bytes: 1_000_000,
            recv_packets: 10,
            sent_bytes: 0,
            sent_packets: 0,
            ..s
        };
        let rev = IntervalLines::new(Direction::Reverse).lines(&r);
        assert!(
            rev[0].contains("received") && !rev[0].contains("sent"),
            "{rev:?}"
        );
        assert!(rev[1].contains("8.00 Mbit/s"), "{rev:?}");
        let bi = IntervalLines::new(Direction::Bidir).lines(&s);
        assert!(
            bi[0].contains("sent") && bi[0].contains("received"),
            "{bi:?}"
        );
    }

    #[test]
    fn process_cpu_is_shown_as_a_share_of_one_core() {
        assert_eq!(
            fmt_value(&Metric::new(m::PROC_LOCAL_PCT, 12.5)),
            "12.50 % of one core"
        );
        assert_eq!(fmt_value(&Metric::new(m::CPU_LOCAL_PCT, 12.5)), "12.50 %");
        assert_eq!(
            label_of(m::PROC_REMOTE_PCT, TestKind::TcpStream),
            "process CPU, remote"
        );
    }

    #[test]
    fn a_name_the_table_lacks_is_spelled_out() {
        assert_eq!(
            label_of("not_a_metric", TestKind::TcpStream),
            "not a metric"
        );
    }

    /// Issue 38: in text mode the one-way delay section vanished when the run had no
    /// latency figure, while `--json` gave the reason.
    #[test]
    fn a_udp_stream_without_one_way_delay_says_why_in_text() {
        let spec = wire::spec::TestSpec::new(TestKind::UdpStream, wire::spec::Family::V4, 1000);
        let r = RunResult::from_sides(spec, Default::default(), Default::default());
        let text = summary(&r, false, false);
        let why = r.one_way_delay().unwrap_err().to_string();
        assert!(text.contains("\n  latency\n"), "{text}");
        assert!(
            text.contains(&format!("{:<32} unavailable: {why}", "one-way delay")),
            "{text}"
        );
    }

    #[test]
    fn tcp_counts_messages_and_udp_counts_packets() {
        for name in [m::SENT_PACKETS, m::RECV_PACKETS, m::SENT_PPS, m::RECV_PPS] {
            for kind in [TestKind::TcpStream, TestKind::TcpRr] {
                let l = label_of(name, kind);
                assert!(l.starts_with("message"), "{kind:?} {name}: {l}");
                assert!(l.chars().count() <= 32, "{l:?} is too long");
            }
            for kind in [TestKind::UdpStream, TestKind::UdpRr] {
                assert_eq!(label_of(name, kind), label(name), "{kind:?} {name}");
                assert!(label(name).contains("packet"), "{name}");
            }
        }
        assert_eq!(label_of(m::SENT_BYTES, TestKind::TcpStream), "bytes sent");
    }
}
