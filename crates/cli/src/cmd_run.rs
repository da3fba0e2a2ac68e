//! `dualperf run`: one test against a server, or against an embedded loopback server
//! when no HOST is given. Parses what the user typed into a `TestSpec`, runs it through
//! the engine, prints a readable summary (or `--json`, schema in the README).

use anyhow::{bail, Context};
use clap::Args;
use engine::{ClientConfig, EmbeddedServer, IntervalSample, Recorder, RunResult};
use std::process::ExitCode;
use std::time::Duration;
use wire::metrics::{self as m, Metric};
use wire::spec::{Bound, Direction, Family, Rate, SocketOpts, TestKind, TestSpec};

#[path = "cmd_run/lab.rs"]
mod lab_run;
#[path = "cmd_run/loaded.rs"]
mod loaded;
#[path = "cmd_run/peer_iperf3.rs"]
mod peer_iperf3;

/// What `-t` names: one of the four tests, or the loaded-latency test built from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunTest {
    One(TestKind),
    /// `rrul`: round-trip probes idle, then beside saturating TCP streams.
    Loaded,
}

impl std::str::FromStr for RunTest {
    type Err = String;
    fn from_str(s: &str) -> Result<RunTest, String> {
        match s.to_ascii_lowercase().as_str() {
            "rrul" | "loaded" | "loaded-latency" => Ok(RunTest::Loaded),
            _ => s.parse::<TestKind>().map(RunTest::One).map_err(|_| {
                format!("unknown test '{s}': use tcp-stream, udp-stream, tcp-rr, udp-rr or rrul")
            }),
        }
    }
}

impl RunTest {
    /// The single test's kind; the loaded test's probes are request/response.
    fn kind(self) -> TestKind {
        match self {
            RunTest::One(k) => k,
            RunTest::Loaded => TestKind::TcpRr,
        }
    }
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Server to test against; none = an embedded server on loopback in this process.
    host: Option<String>,
    /// tcp-stream, udp-stream, tcp-rr, udp-rr, or rrul: latency under load (UDP and TCP
    /// request/response probes at --probe-rate, first idle for --idle, then beside -P
    /// TCP streams per direction (--load) for -d; reports idle and loaded RTT, the
    /// latency the load added, throughput per direction and RPM).
    #[arg(short, long, default_value = "tcp-stream")]
    test: RunTest,
    /// IP version, 4 or 6 [default: the family of an IP-address HOST, else 4]. Needed
    /// only for host names (and the embedded server).
    #[arg(short, long)]
    family: Option<Family>,
    /// Payload bytes per send / datagram / request (Netperf's send size) [default: 1408;
    /// rrul: the load's write size, 128K].
    #[arg(short, long, value_parser = crate::args::parse_bytes_u32)]
    size: Option<u32>,
    /// Run length: seconds, or with a unit (500ms, 2min) [default: 10 s].
    #[arg(short, long, value_parser = crate::args::parse_secs, conflicts_with = "count")]
    duration: Option<f64>,
    /// Send this many packets (datagrams, writes or transactions) per stream instead.
    #[arg(short = 'n', long)]
    count: Option<u64>,
    /// Server sends, client receives (stream tests).
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    reverse: bool,
    /// Both directions at once (stream tests).
    #[arg(long)]
    bidir: bool,
    /// Parallel connections / flows [default: 1; rrul: 4 per direction, as flent's RRUL].
    #[arg(short = 'P', long)]
    streams: Option<u16>,
    /// rrul: which way the load streams send: upload, download or both [default: both].
    #[arg(long, value_enum)]
    load: Option<LoadArg>,
    /// rrul: probe transactions per second of each probe type, UDP and TCP [default: 20].
    #[arg(long, value_name = "PER_SEC")]
    probe_rate: Option<u64>,
    /// rrul: bytes of each probe request and response [default: 64].
    #[arg(long, value_name = "BYTES", value_parser = crate::args::parse_bytes_u32)]
    probe_size: Option<u32>,
    /// rrul: length of the idle phase before the load [default: 2 s].
    #[arg(long, value_name = "SECS", value_parser = crate::args::parse_secs)]
    idle: Option<f64>,
    /// UDP sending rate per stream: bits/s (100M, 100mbit) or packets/s (50kpps)
    /// [default: as fast as possible].
    #[arg(short = 'b', long, value_parser = crate::args::parse_rate)]
    rate: Option<Rate>,
    /// udp-stream: measure the RFC 2544 throughput instead of one fixed rate: the
    /// highest rate whose loss stays within --loss-threshold, by binary search (one
    /// unpaced trial, then --search-steps paced ones, sharing -d / -n). Replaces -b.
    #[arg(long, conflicts_with = "rate")]
    rate_search: bool,
    /// With --rate-search: a trial passes at this loss (% of datagrams sent) or less.
    #[arg(long, value_name = "PCT", default_value_t = wire::spec::RATE_SEARCH_LOSS_THRESHOLD_PCT, requires = "rate_search")]
    loss_threshold: f64,
    /// With --rate-search: paced trials after the unpaced one (1..=20).
    #[arg(long, value_name = "N", default_value_t = wire::spec::RATE_SEARCH_STEPS, requires = "rate_search")]
    search_steps: u32,
    /// Control port of the server [default: 5301; 5201 with --peer iperf3].
    #[arg(short, long)]
    port: Option<u16>,
    /// The server is `dualperf` or an unmodified `iperf3` 3.x (`iperf3 -s`; tcp-stream
    /// and udp-stream only).
    #[arg(long, value_enum, default_value_t = crate::args::Peer::Dualperf)]
    peer: crate::args::Peer,
    /// With --peer iperf3: authenticate as this user (iperf3's --username); the password
    /// is read from IPERF3_PASSWORD, as iperf3 reads it.
    #[arg(long, value_name = "USER", requires = "iperf3_rsa_public_key")]
    iperf3_username: Option<String>,
    /// With --peer iperf3: the server's RSA public key in PEM (iperf3's
    /// --rsa-public-key-path).
    #[arg(long, value_name = "FILE", requires = "iperf3_username")]
    iperf3_rsa_public_key: Option<std::path::PathBuf>,
    /// Run in a temporary network-namespace lab (needs root): p2p or client-server.
    /// A `dualperf server` runs in the server namespace, this client in the client one;
    /// the lab is removed afterwards, also on error and Ctrl-C.
    #[arg(long, value_name = "TOPOLOGY", value_parser = crate::args::parse_topology, conflicts_with = "host")]
    lab: Option<lab::Topology>,
    /// Shape each lab host's egress with tbf at this rate (100mbit, 1gbit, 500k).
    #[arg(long, value_name = "RATE", value_parser = crate::args::parse_lab_rate, requires = "lab")]
    lab_rate: Option<u64>,
    /// MTU of the lab's veth links, bytes [default: 1500].
    #[arg(long, value_name = "BYTES", requires = "lab")]
    lab_mtu: Option<u32>,
    /// SO_SNDBUF in bytes (64K = 64KiB, 4M) [default: the kernel's]; the kernel's value
    /// is reported.
    #[arg(long, value_parser = crate::args::parse_bytes_u32)]
    sndbuf: Option<u32>,
    /// SO_RCVBUF in bytes (64K = 64KiB, 4M) [default: the kernel's].
    #[arg(long, value_parser = crate::args::parse_bytes_u32)]
    rcvbuf: Option<u32>,
    /// TCP_NODELAY (always on for tcp-rr).
    #[arg(long)]
    nodelay: bool,
    /// TCP maximum segment size.
    #[arg(long)]
    mss: Option<u32>,
    /// IPv4 TOS / IPv6 traffic class (decimal or 0x..).
    #[arg(long, value_parser = parse_u8)]
    tos: Option<u8>,
    /// IPv6 flow label (20 bits; decimal or 0x..).
    #[arg(long, value_parser = parse_u32)]
    flowlabel: Option<u32>,
    /// TCP congestion control (e.g. cubic, bbr).
    #[arg(long)]
    congestion: Option<String>,
    /// Set the don't-fragment bit (IP_PMTUDISC_DO).
    #[arg(long)]
    dont_fragment: bool,
    /// tcp-stream: send without copying (Linux): msg (MSG_ZEROCOPY, the default; whether
    /// the kernel copied anyway is recorded as applied.zerocopy_kernel_copied) or
    /// sendfile (from a memory file, as iperf3's -Z).
    #[arg(long, value_name = "METHOD", num_args = 0..=1, default_missing_value = "msg")]
    zerocopy: Option<wire::spec::ZeroCopyMethod>,
    /// Per-transaction timeout of udp-rr, in milliseconds.
    #[arg(long, default_value_t = 200)]
    rr_timeout_ms: u64,
    /// UDP datapath: auto (batched; GSO at the sender and GRO at the receiver for streams unpaced or paced above 20 kpps: the default),
    /// per-datagram (one datagram per system call, as Netperf, iperf3, nuttcp and qperf
    /// send: the studies' method), batched (no offloads) or gso (GSO
    /// and GRO even when paced). Recorded with every run as applied.udp_datapath_calls.
    #[arg(long, value_name = "PATH", default_value = "auto")]
    udp_datapath: wire::spec::UdpDatapath,
    /// udp-stream, tcp-stream: gaps between datagrams (TCP: messages) drawn from a
    /// distribution (D-ITG style):
    /// constant:1ms, uniform:100us..2ms, exp:1ms (Poisson arrivals), pareto:shape=1.5,mean=1ms,
    /// cauchy:loc=1ms,scale=100us, normal:mean=1ms,sd=100us, poisson:1ms,
    /// gamma:shape=2,scale=500us, weibull:shape=1.5,scale=1ms,
    /// gumbel:loc=55ms,scale=6ms (largest extreme value). Sent one datagram (one
    /// message) per call on an absolute schedule; how late each left is reported
    /// (schedule_late_*).
    #[arg(long, value_name = "DIST", conflicts_with = "rate")]
    idt: Option<String>,
    /// udp-stream, tcp-stream: datagram payload (TCP: message) sizes drawn from a
    /// distribution, in bytes (e.g.
    /// uniform:64..1400, normal:mean=512,sd=64); the same names as --idt.
    #[arg(long, value_name = "DIST")]
    size_dist: Option<String>,
    /// udp-stream, tcp-stream: an application model setting --idt and --size-dist (explicit flags
    /// win): voip-g711, voip-g729, voip-g723, the same with voice activity
    /// (voip-g711-vad, …: on/off periods too), game-client, game-server, dns. `--profile
    /// list` shows their parameters and sources.
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// Seed of the --idt / --size-dist draws (default: from the clock; always recorded,
    /// so a run can be repeated exactly).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// udp-stream, tcp-stream: on/off activity, as a voice codec with voice activity
    /// detection sends talkspurts and pauses: lengths of the active periods, a duration
    /// distribution as --idt (exp:1s); with --off-time. The stream follows its schedule
    /// (--idt, or -b for UDP) in active periods and sends nothing in silent ones; the
    /// number of active periods begun is reported (on_periods).
    #[arg(long, value_name = "DIST", requires = "off_time")]
    on_time: Option<String>,
    /// udp-stream, tcp-stream: lengths of the silent periods; with --on-time.
    #[arg(long, value_name = "DIST", requires = "on_time")]
    off_time: Option<String>,
    /// udp-stream: per-window statistics as D-ITG's ITGDec gives them, over windows of
    /// this much send time (100ms, 1s; at least 1 ms): datagrams sent, received and lost
    /// (loss by send window, exact), goodput, RFC 3550 jitter, mean and max one-way delay.
    /// (Named as in `study`, where `--window` is the socket buffer, as iperf's -w.)
    #[arg(long, value_name = "DURATION", value_parser = crate::args::parse_secs)]
    stats_window: Option<f64>,
    /// Print per-interval samples every SECS seconds (or 500ms, ...) [default: none].
    #[arg(short, long, value_name = "SECS", value_parser = crate::args::parse_secs)]
    interval: Option<f64>,
    /// Print the full result as JSON (schema in the README).
    #[arg(long)]
    json: bool,
    /// Seconds to wait for the control connection.
    #[arg(long, default_value_t = 3.0)]
    connect_timeout: f64,
    /// Control protocol version to speak (testing only).
    #[arg(long, hide = true)]
    protocol_version: Option<u16>,
    /// Pre-shared key of a `dualperf server --psk-file` (the server must prove it too).
    #[arg(long, value_name = "FILE")]
    psk_file: Option<std::path::PathBuf>,
}

fn parse_u8(s: &str) -> Result<u8, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u8::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a byte value (0-255 or 0x00-0xff)"))
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| format!("'{s}' is not a number (decimal or 0x..)"))
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

/// `--duration` / `--interval` checked: 1 ms (the interval's own minimum is checked
/// with the spec) to the protocol's longest test.
fn secs_to_ns(what: &str, s: f64) -> anyhow::Result<u64> {
    let d = wire::bounds::secs_to_duration(
        what,
        s,
        Duration::from_millis(1),
        Duration::from_nanos(wire::proto::MAX_DURATION_NS),
    )?;
    Ok(d.as_nanos() as u64)
}

fn spec_of(a: &RunArgs) -> anyhow::Result<TestSpec> {
    let family = crate::args::family_of(a.host.as_deref(), a.family)?;
    if a.load.is_some() || a.probe_rate.is_some() || a.probe_size.is_some() || a.idle.is_some() {
        bail!("--load, --probe-rate, --probe-size and --idle apply to -t rrul only");
    }
    let mut spec = TestSpec::new(a.test.kind(), family, a.size.unwrap_or(1408));
    spec.bound = match (a.count, a.duration) {
        (Some(n), _) => Bound::Count(wire::bounds::in_range(
            "--count",
            n,
            1,
            study::spec::MAX_COUNT_PACKETS,
            "packets",
        )?),
        (None, Some(d)) => Bound::DurationNs(secs_to_ns("--duration", d)?),
        (None, None) => Bound::DurationNs(10_000_000_000),
    };
    spec.direction = match (a.reverse, a.bidir) {
        (true, _) => Direction::Reverse,
        (_, true) => Direction::Bidir,
        _ => Direction::Forward,
    };
    spec.streams = a.streams.unwrap_or(1);
    spec.rate = match a.rate {
        Some(Rate::BitsPerSec(b)) => Some(Rate::BitsPerSec(wire::bounds::in_range(
            "--rate",
            b,
            1,
            study::spec::MAX_RATE_BPS,
            "bit/s",
        )?)),
        Some(Rate::PacketsPerSec(p)) => Some(Rate::PacketsPerSec(wire::bounds::in_range(
            "--rate",
            p,
            1,
            study::spec::MAX_RATE_PPS,
            "packets/s",
        )?)),
        None => None,
    };
    if a.rate.is_some() && a.test != RunTest::One(TestKind::UdpStream) {
        bail!("--rate applies to udp-stream only");
    }
    spec.socket = SocketOpts {
        sndbuf_bytes: a.sndbuf,
        rcvbuf_bytes: a.rcvbuf,
        nodelay: a.nodelay,
        mss_bytes: a.mss,
        tos: a.tos,
        flowlabel: a.flowlabel,
        congestion: a.congestion.clone(),
        dont_fragment: a.dont_fragment,
    };
    if a.flowlabel.is_some() && family != Family::V6 {
        bail!("--flowlabel needs --family 6");
    }
    let rr_timeout_ms = wire::bounds::in_range(
        "--rr-timeout-ms",
        a.rr_timeout_ms,
        1,
        study::spec::MAX_RR_TIMEOUT_MS,
        "ms",
    )?;
    spec.rr_timeout_ns = rr_timeout_ms * 1_000_000;
    spec.udp_datapath = a.udp_datapath;
    spec.zerocopy = a.zerocopy;
    spec.traffic = traffic_model(a)?;
    if spec.traffic.is_some()
        && a.test != RunTest::One(TestKind::UdpStream)
        && a.test != RunTest::One(TestKind::TcpStream)
    {
        bail!("--idt, --size-dist, --profile and --on-time/--off-time shape a udp-stream or tcp-stream; use -t udp-stream or -t tcp-stream");
    }
    if let Some(t) = spec
        .traffic
        .as_ref()
        .filter(|t| t.on_time.is_some() && t.idt.is_none())
    {
        // The TCP stream takes no rate: only --idt paces it.
        if spec.rate.is_none() || a.test == RunTest::One(TestKind::TcpStream) {
            bail!("on/off periods ({t}) gate a schedule: give --idt (or a --profile), or -b with -t udp-stream");
        }
    }
    spec.window_ns = a
        .stats_window
        .map(|w| secs_to_ns("--stats-window", w))
        .transpose()?;
    if spec.window_ns.is_some() && a.test != RunTest::One(TestKind::UdpStream) {
        bail!("--stats-window applies to -t udp-stream only");
    }
    spec.interval_ns = a
        .interval
        .map(|i| secs_to_ns("--interval", i))
        .transpose()?;
    Ok(spec)
}

/// Prints interval lines as they arrive (text mode) or keeps them (JSON mode).
///
/// The client's samples hold what the client itself knows: what it sent on a forward
/// test, what it received on a reverse one, both for `--bidir`. Only those columns are
/// printed, under a header; the receiver's totals for a forward test come from the
/// server's result in the summary.
struct CliRecorder {
    json: bool,
    direction: Direction,
    header_printed: bool,
    samples: Vec<IntervalSample>,
}

impl CliRecorder {
    fn new(json: bool, direction: Direction) -> CliRecorder {
        CliRecorder {
            json,
            direction,
            header_printed: false,
            samples: Vec::new(),
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

impl Recorder for CliRecorder {
    fn on_interval(&mut self, s: &IntervalSample) {
        self.samples.push(*s);
        if !self.json {
            for line in self.lines(s) {
                say(&line);
            }
        }
    }
}

/// `--load` of rrul.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LoadArg {
    Upload,
    Download,
    Both,
}

pub fn main(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.test == RunTest::Loaded {
        return loaded::main(&args);
    }
    let spec = spec_of(&args)?;
    let connect_timeout = connect_timeout_of(args.connect_timeout)?;
    if args.rate_search {
        if args.test != RunTest::One(TestKind::UdpStream)
            || args.peer != crate::args::Peer::Dualperf
        {
            anyhow::bail!("--rate-search is for -t udp-stream against a dualperf server");
        }
        if args.lab.is_some() {
            anyhow::bail!("--rate-search cannot be combined with --lab (use dualperf study --lab)");
        }
        let search = engine::RateSearch {
            loss_threshold_pct: args.loss_threshold,
            steps: args.search_steps,
        };
        search
            .check()
            .map_err(|e| anyhow::anyhow!("--loss-threshold / --search-steps: {e}"))?;
    }
    let iperf3_auth = crate::args::iperf3_auth(
        args.peer,
        args.iperf3_username.as_deref(),
        args.iperf3_rsa_public_key.as_deref(),
    )?;
    if args.peer == crate::args::Peer::Iperf3 {
        return peer_iperf3::main(&args, &spec, iperf3_auth);
    }
    wire::proto::validate_spec(&spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    if args.lab.is_some() {
        return lab_run::main(&args, spec);
    }
    let _embedded;
    let (host, port) = match &args.host {
        Some(h) => (h.clone(), args.port.unwrap_or(engine::DEFAULT_PORT)),
        None => {
            let srv = EmbeddedServer::start()
                .map_err(|e| anyhow::anyhow!("{e}"))
                .context("cannot start the embedded loopback server")?;
            let host = match spec.family {
                Family::V4 => "127.0.0.1",
                Family::V6 => "::1",
            };
            let port = srv.port();
            _embedded = srv;
            (host.to_string(), port)
        }
    };
    let direction = spec.direction;
    let mut cfg = ClientConfig::new(&host, port, spec);
    cfg.connect_timeout = connect_timeout;
    if let Some(v) = args.protocol_version {
        cfg.protocol_version = v;
    }
    cfg.psk = crate::args::load_psk(args.psk_file.as_deref())?;
    let mut rec = CliRecorder::new(args.json, direction);
    let result = if args.rate_search {
        let search = engine::RateSearch {
            loss_threshold_pct: args.loss_threshold,
            steps: args.search_steps,
        };
        engine::run_rate_search(&cfg, &search, &mut rec)
    } else {
        engine::run_client(&cfg, &mut rec)
    }
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    if args.json {
        say(&to_json(&result, &rec.samples)?);
    } else {
        say(summary(&result, args.host.is_none()).trim_end());
    }
    Ok(ExitCode::SUCCESS)
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
            .then(|| r.one_way_delay().err())
            .flatten(),
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
        "%" => format!("{:.2} %", x.value),
        "packets/s" => format!("{:.0} packets/s", x.value),
        "1/s" => format!("{:.0}/s", x.value),
        "s" => format!("{:.3} s", x.value),
        "µs" => format!("{:.3} µs", x.value),
        "count" => format!("{:.0}", x.value),
        u => format!("{:.0} {u}", x.value),
    }
}

/// The heading a metric is listed under in the text summary, in display order.
const GROUPS: &[&str] = &[
    "volume",
    "rate",
    "delivery and jitter",
    "latency",
    "CPU",
    "framing (Ethernet, MTU 1500)",
    "other",
];

/// Which of [`GROUPS`] a metric belongs to.
fn group(name: &str) -> &'static str {
    match name {
        m::SENT_BYTES
        | m::RECV_BYTES
        | m::SENT_PACKETS
        | m::RECV_PACKETS
        | m::TRANSACTIONS
        | m::DURATION_S
        | m::RATE_SEARCH_TRIALS => "volume",
        m::THROUGHPUT_BPS
        | m::SEND_RATE_BPS
        | m::RECV_PPS
        | m::SENT_PPS
        | m::TRANSACTIONS_PER_S => "rate",
        m::LOST_PACKETS
        | m::LOSS_PCT
        | m::DUP_PACKETS
        | m::REORDERED_PACKETS
        | m::JITTER_RFC3550_NS
        | m::IPDV_P50_NS
        | m::IPDV_P99_NS
        | m::RX_SOCKET_DROP_PACKETS
        | m::HOST_UDP_RCVBUF_ERROR_PACKETS
        | m::HOST_UDP_IN_ERROR_PACKETS
        | m::RECEIVER_LIMITED => "delivery and jitter",
        m::RR_TIMEOUTS
        | m::RTT_MEAN_NS
        | m::RTT_STDDEV_NS
        | m::RTT_MIN_NS
        | m::RTT_P50_NS
        | m::RTT_P90_NS
        | m::RTT_P99_NS
        | m::RTT_P999_NS
        | m::RTT_MAX_NS
        | m::OWD_MIN_NS
        | m::OWD_MEAN_NS
        | m::OWD_MAX_NS
        | m::CLOCK_OFFSET_NS
        | m::CLOCK_OFFSET_UNCERTAINTY_NS => "latency",
        m::CPU_LOCAL_PCT
        | m::CPU_REMOTE_PCT
        | m::CPU_LOCAL_BUSIEST_CORE_PCT
        | m::CPU_REMOTE_BUSIEST_CORE_PCT
        | m::PROC_LOCAL_PCT
        | m::PROC_REMOTE_PCT
        | m::SERVICE_DEMAND_LOCAL_US
        | m::SERVICE_DEMAND_REMOTE_US => "CPU",
        m::IP_PACKET_BYTES | m::ETH_FRAME_BYTES => "framing (Ethernet, MTU 1500)",
        n if m::LOADED.contains(&n) => "latency under load",
        _ => "other",
    }
}

/// Human labels without a unit suffix (the value carries the unit), naming the
/// standard behind a number where there is one.
fn label(name: &str) -> String {
    let l = match name {
        m::SENT_BYTES => "bytes sent",
        m::RECV_BYTES => "bytes received",
        m::SENT_PACKETS => "packets sent",
        m::RECV_PACKETS => "packets received",
        m::TRANSACTIONS => "transactions",
        m::DURATION_S => "duration",
        m::THROUGHPUT_BPS => "goodput at receiver",
        m::SEND_RATE_BPS => "send rate (offered)",
        m::RECV_PPS => "packet rate, received",
        m::SENT_PPS => "packet rate, sent",
        m::TRANSACTIONS_PER_S => "transactions/s",
        m::LOST_PACKETS => "lost packets (RFC 4737)",
        m::LOSS_PCT => "loss (RFC 4737)",
        m::DUP_PACKETS => "duplicate packets (RFC 4737)",
        m::REORDERED_PACKETS => "reordered packets (RFC 4737)",
        m::JITTER_RFC3550_NS => "jitter (RFC 3550 interarrival)",
        m::IPDV_P50_NS => "IPDV p50 (RFC 5481)",
        m::IPDV_P99_NS => "IPDV p99 (RFC 5481)",
        m::RX_SOCKET_DROP_PACKETS => "dropped by receiving socket",
        m::HOST_UDP_RCVBUF_ERROR_PACKETS => "UDP RcvbufErrors, system-wide",
        m::HOST_UDP_IN_ERROR_PACKETS => "UDP InErrors, system-wide",
        m::RECEIVER_LIMITED => "receiver-limited",
        m::RATE_SEARCH_TRIALS => "trials (RFC 2544 search)",
        m::RR_TIMEOUTS => "request timeouts",
        m::RTT_MEAN_NS => "RTT mean",
        m::RTT_STDDEV_NS => "RTT standard deviation",
        m::RTT_MIN_NS => "RTT min",
        m::RTT_P50_NS => "RTT p50",
        m::RTT_P90_NS => "RTT p90",
        m::RTT_P99_NS => "RTT p99",
        m::RTT_P999_NS => "RTT p99.9",
        m::RTT_MAX_NS => "RTT max",
        m::OWD_MIN_NS => "one-way delay min",
        m::OWD_MEAN_NS => "one-way delay mean",
        m::OWD_MAX_NS => "one-way delay max",
        m::CLOCK_OFFSET_NS => "clock offset (server − client)",
        m::CLOCK_OFFSET_UNCERTAINTY_NS => "clock offset bound (±)",
        m::CPU_LOCAL_PCT => "CPU, local (system-wide)",
        m::CPU_REMOTE_PCT => "CPU, remote (system-wide)",
        m::CPU_LOCAL_BUSIEST_CORE_PCT => "CPU, local busiest core",
        m::CPU_REMOTE_BUSIEST_CORE_PCT => "CPU, remote busiest core",
        m::PROC_LOCAL_PCT => "process CPU, local (of 1 core)",
        m::PROC_REMOTE_PCT => "process CPU, remote (of 1 core)",
        m::SERVICE_DEMAND_LOCAL_US => "service demand, local",
        m::SERVICE_DEMAND_REMOTE_US => "service demand, remote",
        m::IP_PACKET_BYTES => "IP packet size",
        m::ETH_FRAME_BYTES => "Ethernet frame size",
        m::IDLE_UDP_RTT_P50_NS => "idle RTT p50, UDP probes",
        m::IDLE_TCP_RTT_P50_NS => "idle RTT p50, TCP probes",
        m::LOADED_UDP_RTT_P50_NS => "loaded RTT p50, UDP probes",
        m::LOADED_TCP_RTT_P50_NS => "loaded RTT p50, TCP probes",
        m::LOADED_UDP_RTT_P90_NS => "loaded RTT p90, UDP probes",
        m::LOADED_TCP_RTT_P90_NS => "loaded RTT p90, TCP probes",
        m::LOADED_UDP_RTT_P99_NS => "loaded RTT p99, UDP probes",
        m::LOADED_TCP_RTT_P99_NS => "loaded RTT p99, TCP probes",
        m::ADDED_UDP_RTT_P50_NS => "added latency p50, UDP probes",
        m::ADDED_TCP_RTT_P50_NS => "added latency p50, TCP probes",
        m::RPM_LOADED => "responsiveness under load",
        m::RPM_IDLE => "responsiveness idle",
        m::UPLOAD_BPS => "goodput under load, upload",
        m::DOWNLOAD_BPS => "goodput under load, download",
        m::LOADED_UDP_PROBE_TIMEOUTS => "UDP probes unanswered under load",
        m::IDLE_UDP_PROBE_TIMEOUTS => "UDP probes unanswered idle",
        m::IDLE_UDP_PROBES_SENT => "UDP probes sent idle",
        m::IDLE_UDP_PROBES_ANSWERED => "UDP probes answered idle",
        m::IDLE_TCP_PROBES_SENT => "TCP probes sent idle",
        m::IDLE_TCP_PROBES_ANSWERED => "TCP probes answered idle",
        m::LOADED_UDP_PROBES_SENT => "UDP probes sent under load",
        m::LOADED_UDP_PROBES_ANSWERED => "UDP probes answered under load",
        m::LOADED_TCP_PROBES_SENT => "TCP probes sent under load",
        m::LOADED_TCP_PROBES_ANSWERED => "TCP probes answered under load",
        other => return other.replace('_', " "),
    };
    l.to_string()
}

fn summary(r: &RunResult, embedded: bool) -> String {
    let s = &r.spec;
    let dir = match s.direction {
        Direction::Forward => "client → server",
        Direction::Reverse => "server → client",
        Direction::Bidir => "both directions",
    };
    // A traffic model's drawn sizes replace the payload size.
    let payload = match s.traffic.as_ref().and_then(|t| t.size.as_deref()) {
        Some(d) => format!("payload sizes {d}"),
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
    for g in GROUPS {
        let mut lines = metrics.iter().filter(|x| group(&x.name) == *g).peekable();
        if lines.peek().is_none() {
            continue;
        }
        out.push_str(&format!("  {g}\n"));
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
                _ => fmt_value(x),
            };
            out.push_str(&format!("    {:<32} {}\n", label(&x.name), value));
        }
        if *g == "latency" && s.kind == TestKind::UdpStream {
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
        if *g == "rate" && s.streams > 1 {
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
        if *g == "delivery and jitter" {
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
        if !applied.is_empty() {
            let kv: Vec<String> = applied.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!(
                "  {:<34} {}\n",
                format!("socket ({side}, as applied)"),
                kv.join(" ")
            ));
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

/// The traffic model of `--idt`, `--size-dist`, `--profile` and `--seed`, checked.
fn traffic_model(a: &RunArgs) -> anyhow::Result<Option<wire::traffic::TrafficModel>> {
    use wire::traffic::{TrafficModel, PROFILES};
    if a.profile.as_deref() == Some("list") {
        for p in PROFILES {
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
        std::process::exit(0);
    }
    let clock_seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    TrafficModel::from_options(
        a.idt.as_deref(),
        a.size_dist.as_deref(),
        a.profile.as_deref(),
        (a.on_time.as_deref(), a.off_time.as_deref()),
        a.seed,
        clock_seed,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))
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
        let mut fwd = CliRecorder::new(false, Direction::Forward);
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
        let rev = CliRecorder::new(false, Direction::Reverse).lines(&r);
        assert!(
            rev[0].contains("received") && !rev[0].contains("sent"),
            "{rev:?}"
        );
        assert!(rev[1].contains("8.00 Mbit/s"), "{rev:?}");
        let bi = CliRecorder::new(false, Direction::Bidir).lines(&s);
        assert!(
            bi[0].contains("sent") && bi[0].contains("received"),
            "{bi:?}"
        );
    }

    #[test]
    fn tos_and_flow_label_take_hex() {
        assert_eq!(parse_u8("0x2e"), Ok(46));
        assert_eq!(parse_u32("0xfffff"), Ok(0xfffff));
        assert!(parse_u8("256").is_err());
    }

    #[test]
    fn every_metric_has_a_grouped_label_without_a_unit_suffix() {
        let names = m::ALL
            .iter()
            .chain([&m::IP_PACKET_BYTES, &m::ETH_FRAME_BYTES]);
        for name in names {
            let l = label(name);
            for suffix in [
                "_ns", "_bps", "_pct", "_us", "_s", " ns", " bps", " pct", " us", " s",
            ] {
                assert!(
                    !l.ends_with(suffix),
                    "label {l:?} of {name} ends in {suffix:?}"
                );
            }
            assert!(!l.contains('_'), "label {l:?} of {name}");
            // The summary's label column is 32 characters wide.
            assert!(l.chars().count() <= 32, "label {l:?} of {name} is too long");
            assert_ne!(group(name), "other", "{name} has no heading");
        }
        assert_eq!(group("not_a_metric"), "other");
        assert_eq!(label("not_a_metric"), "not a metric");
    }
}
