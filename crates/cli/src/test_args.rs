//! The per-test flags `run` and `study` share: one `#[derive(Args)]` flattened into
//! both, mapped onto `runner::TestOptions`. What a flag means is decided there; here is
//! only how it is typed. The first line of each flag's doc is its `-h` help, the rest
//! shows under `--help`.

use clap::Args;
use wire::spec::{LoadDirection, Rate};

/// `--load` of rrul.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LoadArg {
    Upload,
    Download,
    Both,
}

impl From<LoadArg> for LoadDirection {
    fn from(l: LoadArg) -> LoadDirection {
        match l {
            LoadArg::Upload => LoadDirection::Upload,
            LoadArg::Download => LoadDirection::Download,
            LoadArg::Both => LoadDirection::Both,
        }
    }
}

#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "Test options (run and study)")]
pub struct TestArgs {
    /// Length of each run: seconds, or 500ms, 2min.
    ///
    /// [default: run 10 s; study 0.5 s, see `study --dry-run`; rrul: the loaded phase]
    #[arg(short, long, value_name = "SECS", value_parser = crate::args::parse_secs, conflicts_with = "count")]
    pub duration: Option<f64>,
    /// Packets (datagrams, writes or transactions) per stream instead of a duration.
    #[arg(short = 'n', long, value_name = "N")]
    pub count: Option<u64>,
    /// Server sends, client receives (stream tests).
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once (stream tests).
    #[arg(long)]
    pub bidir: bool,
    /// Parallel connections / flows per run.
    ///
    /// [default: 1; run -t rrul: TCP streams of load per direction, 4 as flent's RRUL]
    #[arg(short = 'P', long, value_name = "N")]
    pub streams: Option<u16>,
    /// UDP sending rate per stream: bits/s (100M, 100mbit) or packets/s (50kpps).
    ///
    /// [default: as fast as possible]
    #[arg(short = 'b', long, value_parser = crate::args::parse_rate)]
    pub rate: Option<Rate>,
    /// RFC 2544 search: a trial passes at this loss (% of datagrams sent) or less.
    ///
    /// With `run --rate-search`, or a study's `--udp-method rfc2544` [default: 0.1].
    #[arg(long, value_name = "PCT", hide_short_help = true)]
    pub loss_threshold: Option<f64>,
    /// RFC 2544 search: paced trials after the unpaced one (1..=20).
    ///
    /// With `run --rate-search`, or a study's `--udp-method rfc2544` [default: 5].
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub search_steps: Option<u32>,
    /// Per-interval samples every SECS seconds (or 500ms, ...); 0: none.
    ///
    /// `run` prints them [default: none]; `study` stores them with each run [default: ten
    /// per run, at most every 1 s].
    #[arg(short, long, value_name = "SECS", value_parser = crate::args::parse_secs)]
    pub interval: Option<f64>,
    /// udp-stream: per-window statistics (ITGDec style) over windows of this send time.
    ///
    /// Windows of this much send time (100ms, 1s; at least 1 ms): datagrams sent,
    /// received and lost (loss by send window, exact), goodput, RFC 3550 jitter, mean and
    /// max one-way delay; `study` stores them as window_* samples (`export --intervals`).
    /// (Not `--window`, which is the socket buffer, as iperf's -w.)
    #[arg(long, value_name = "DURATION", value_parser = crate::args::parse_secs, hide_short_help = true)]
    pub stats_window: Option<f64>,
    /// udp-stream, tcp-stream: gaps between datagrams (TCP: messages) from a distribution.
    ///
    /// D-ITG style: constant:1ms, uniform:100us..2ms, exp:1ms (Poisson arrivals),
    /// pareto:shape=1.5,mean=1ms, cauchy:loc=1ms,scale=100us, normal:mean=1ms,sd=100us,
    /// poisson:1ms, gamma:shape=2,scale=500us, weibull:shape=1.5,scale=1ms,
    /// gumbel:loc=55ms,scale=6ms (largest extreme value). Sent one datagram (one message)
    /// per call on an absolute schedule; how late each left is reported
    /// (schedule_late_*). In a study it sets --udp-method fixed.
    #[arg(long, value_name = "DIST", conflicts_with = "rate")]
    pub idt: Option<String>,
    /// udp-stream, tcp-stream: payload (TCP: message) sizes from a distribution, bytes.
    ///
    /// E.g. uniform:64..1400, normal:mean=512,sd=64; the same names as --idt. In a study
    /// it replaces the size axis (one size, its mean, labels the cells).
    #[arg(long, value_name = "DIST")]
    pub size_dist: Option<String>,
    /// udp-stream, tcp-stream: an application model setting --idt and --size-dist.
    ///
    /// voip-g711, voip-g729, voip-g723, the same with voice activity (voip-g711-vad, …:
    /// on/off periods too), game-client, game-server, dns; explicit flags win. `run
    /// --profile list` shows their parameters and sources. In a study a list
    /// (voip-g711,voip-g729) is an axis: one campaign per profile, labelled with it, to
    /// report together (the command is printed).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// udp-stream, tcp-stream: lengths of the active periods (on/off activity); with --off-time.
    ///
    /// As a voice codec with voice activity detection sends talkspurts and pauses: a
    /// duration distribution as --idt (exp:1s). The stream follows its schedule (--idt,
    /// or -b for UDP) in active periods and sends nothing in silent ones; the number of
    /// active periods begun is reported (on_periods).
    #[arg(
        long,
        value_name = "DIST",
        requires = "off_time",
        hide_short_help = true
    )]
    pub on_time: Option<String>,
    /// udp-stream, tcp-stream: lengths of the silent periods; with --on-time.
    #[arg(
        long,
        value_name = "DIST",
        requires = "on_time",
        hide_short_help = true
    )]
    pub off_time: Option<String>,
    /// rrul: which way the load streams send [default: both].
    #[arg(long, value_enum, value_name = "DIR")]
    pub load: Option<LoadArg>,
    /// rrul: probe transactions per second of each probe type, UDP and TCP [default: 20].
    #[arg(long, value_name = "PER_SEC")]
    pub probe_rate: Option<u64>,
    /// rrul: bytes of each probe request and response [default: 64].
    #[arg(long, value_name = "BYTES", value_parser = crate::args::parse_bytes_u32, hide_short_help = true)]
    pub probe_size: Option<u32>,
    /// rrul: length of the idle phase before the load [default: 1 s].
    #[arg(long, value_name = "SECS", value_parser = crate::args::parse_secs)]
    pub idle: Option<f64>,
    /// udp-rr: how long to wait for a response before counting it lost; pmtu: for each
    /// probe's acknowledgement [default: 200].
    #[arg(long, value_name = "MS", hide_short_help = true)]
    pub rr_timeout_ms: Option<u64>,
    /// UDP datapath: auto, per-datagram, batched or gso [default: auto].
    ///
    /// auto: batched, with GSO at the sender and GRO at the receiver for streams unpaced
    /// or paced above 20 kpps; per-datagram: one datagram per system call, as Netperf,
    /// iperf3, nuttcp and qperf send (the published studies' presets use it); batched: no
    /// offloads; gso: GSO and GRO even when paced. Recorded with every run as
    /// applied.udp_datapath_calls.
    #[arg(long, value_name = "PATH", hide_short_help = true)]
    pub udp_datapath: Option<wire::spec::UdpDatapath>,
    /// tcp-stream: send without copying (Linux): msg or sendfile [default: msg].
    ///
    /// msg: MSG_ZEROCOPY, with its completions read from the error queue; whether the
    /// kernel copied anyway (it does towards a local receiver: loopback, veth) is
    /// recorded as applied.zerocopy_kernel_copied. sendfile: from a memory file holding
    /// the pattern, as iperf3's -Z. Other tests copy as usual.
    #[arg(long, value_name = "METHOD", num_args = 0..=1, default_missing_value = "msg", hide_short_help = true)]
    pub zerocopy: Option<wire::spec::ZeroCopyMethod>,
    /// Socket send and receive buffer (TCP window), bytes (64K = 64KiB, 4M).
    #[arg(short, long, value_name = "BYTES", value_parser = crate::args::parse_bytes_u64)]
    pub window: Option<u64>,
    /// SO_SNDBUF, bytes [default: the kernel's; the applied value is reported].
    #[arg(long, value_name = "BYTES", value_parser = crate::args::parse_bytes_u64, hide_short_help = true)]
    pub sndbuf: Option<u64>,
    /// SO_RCVBUF, bytes [default: the kernel's].
    #[arg(long, value_name = "BYTES", value_parser = crate::args::parse_bytes_u64, hide_short_help = true)]
    pub rcvbuf: Option<u64>,
    /// TCP_NODELAY (always on for tcp-rr).
    #[arg(long)]
    pub nodelay: bool,
    /// TCP maximum segment size, bytes.
    #[arg(long, value_name = "BYTES", hide_short_help = true)]
    pub mss: Option<u32>,
    /// IPv4 TOS / IPv6 traffic class (decimal or 0x..).
    #[arg(long, value_parser = parse_u8, hide_short_help = true)]
    pub tos: Option<u8>,
    /// IPv6 flow label (20 bits; decimal or 0x..).
    #[arg(long, value_parser = parse_u32, hide_short_help = true)]
    pub flowlabel: Option<u32>,
    /// TCP congestion control (e.g. cubic, bbr).
    #[arg(long, hide_short_help = true)]
    pub congestion: Option<String>,
    /// Set the don't-fragment bit (IP_PMTUDISC_DO / IPV6_DONTFRAG).
    #[arg(long, hide_short_help = true)]
    pub dont_fragment: bool,
}

impl From<TestArgs> for runner::TestOptions {
    fn from(a: TestArgs) -> runner::TestOptions {
        runner::TestOptions {
            duration_s: a.duration,
            count: a.count,
            reverse: a.reverse,
            bidir: a.bidir,
            streams: a.streams,
            rate: a.rate,
            loss_threshold_pct: a.loss_threshold,
            search_steps: a.search_steps,
            interval_s: a.interval,
            stats_window_s: a.stats_window,
            idt: a.idt,
            size_dist: a.size_dist,
            profile: a.profile,
            on_time: a.on_time,
            off_time: a.off_time,
            load: a.load.map(LoadDirection::from),
            probe_rate: a.probe_rate,
            probe_size_bytes: a.probe_size,
            idle_s: a.idle,
            rr_timeout_ms: a.rr_timeout_ms,
            udp_datapath: a.udp_datapath,
            zerocopy: a.zerocopy,
            window_bytes: a.window,
            sndbuf_bytes: a.sndbuf,
            rcvbuf_bytes: a.rcvbuf,
            nodelay: a.nodelay,
            mss_bytes: a.mss,
            tos: a.tos,
            flowlabel: a.flowlabel,
            congestion: a.congestion,
            dont_fragment: a.dont_fragment,
        }
    }
}

fn parse_u8(s: &str) -> anyhow::Result<u8> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u8::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| anyhow::anyhow!("'{s}' is not a byte value (0-255 or 0x00-0xff)"))
}

fn parse_u32(s: &str) -> anyhow::Result<u32> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => t.parse(),
    };
    r.map_err(|_| anyhow::anyhow!("'{s}' is not a number (decimal or 0x..)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tos_and_flow_label_take_hex() {
        assert_eq!(parse_u8("0x2e").ok(), Some(46));
        assert_eq!(parse_u32("0xfffff").ok(), Some(0xfffff));
        assert!(parse_u8("256").is_err());
    }
}
