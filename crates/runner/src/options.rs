//! What a user asks of each test, as plain data: [`TestOptions`] (the options `run` and
//! `study` share), [`StudyOptions`] (the matrix, repetition and order a study adds) and
//! [`OneTest`] (the single test a `run` makes). `None` / `false` means "not given": the
//! layers below (preset, spec file, a command's defaults) decide then.
//!
//! Each turns into a [`study::SpecFile`] layer; the option values a range check can
//! refuse before anything is merged (numbers that do not fit, seconds out of range) are
//! refused here, with the flag's name.

use crate::ResolveError;
use study::spec::SizesField;
use study::SpecFile;
use wire::spec::{Family, LoadDirection, Rate, SocketOpts, TestKind, UdpDatapath};

/// Every per-test option `run` and `study` share.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestOptions {
    /// Length of each run, seconds (exclusive with `count`).
    pub duration_s: Option<f64>,
    /// Packets (datagrams, writes or transactions) per stream instead.
    pub count: Option<u64>,
    pub reverse: bool,
    pub bidir: bool,
    pub streams: Option<u16>,
    /// UDP sending rate per stream.
    pub rate: Option<Rate>,
    /// RFC 2544 search: a trial passes at this loss (%) or less.
    pub loss_threshold_pct: Option<f64>,
    /// RFC 2544 search: paced trials after the unpaced one.
    pub search_steps: Option<u32>,
    /// Per-interval samples every this many seconds (0: none).
    pub interval_s: Option<f64>,
    /// udp-stream: per-window statistics over windows of this many seconds of send time.
    pub stats_window_s: Option<f64>,
    /// Traffic model: gaps, sizes, application profile, on/off periods.
    pub idt: Option<String>,
    pub size_dist: Option<String>,
    pub profile: Option<String>,
    pub on_time: Option<String>,
    pub off_time: Option<String>,
    /// rrul: which way the load streams send.
    pub load: Option<LoadDirection>,
    /// rrul: probe transactions per second of each probe type.
    pub probe_rate: Option<u64>,
    /// rrul: bytes of each probe request and response.
    pub probe_size_bytes: Option<u32>,
    /// rrul: length of the idle phase before the load, seconds.
    pub idle_s: Option<f64>,
    /// udp-rr: per-transaction timeout.
    pub rr_timeout_ms: Option<u64>,
    pub udp_datapath: Option<UdpDatapath>,
    /// tcp-stream: send without copying (`--zerocopy`).
    pub zerocopy: Option<wire::spec::ZeroCopyMethod>,
    /// Socket send and receive buffer together (`-w`, as iperf's), bytes.
    pub window_bytes: Option<u64>,
    pub sndbuf_bytes: Option<u64>,
    pub rcvbuf_bytes: Option<u64>,
    pub nodelay: bool,
    pub mss_bytes: Option<u32>,
    /// IPv4 TOS / IPv6 traffic class.
    pub tos: Option<u8>,
    /// IPv6 flow label (20 bits).
    pub flowlabel: Option<u32>,
    /// TCP congestion control algorithm.
    pub congestion: Option<String>,
    pub dont_fragment: bool,
}

/// What a study adds to the shared options: its matrix, repetition and order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StudyOptions {
    /// IP families (4 and/or 6).
    pub families: Option<Vec<u8>>,
    pub tests: Option<Vec<String>>,
    /// Payload sizes as written: `128,384` or `128..1408/256`.
    pub sizes: Option<String>,
    /// `rfc2544` or `fixed`.
    pub udp_method: Option<String>,
    pub traffic_seed: Option<u64>,
    pub load_streams: Option<u16>,
    pub load_duration_s: Option<f64>,
    /// Socket buffers of the UDP tests only, bytes.
    pub udp_buffer_bytes: Option<u64>,
    pub runs: Option<u32>,
    pub confidence_pct: Option<f64>,
    pub ci_width_pct: Option<f64>,
    pub min_runs: Option<u32>,
    pub max_runs: Option<u32>,
    /// `interleaved` or `random`.
    pub order: Option<String>,
    /// Seed of the random order.
    pub seed: Option<u64>,
    pub warmup: Option<u32>,
    pub retries: Option<u32>,
    pub label: Option<String>,
}

/// What `-t` names: one of the four tests, or the loaded-latency test built from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunTest {
    One(TestKind),
    /// `rrul`: round-trip probes idle, then beside saturating TCP streams.
    Loaded,
}

/// A `-t` that names no test.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown test '{0}': use tcp-stream, udp-stream, tcp-rr, udp-rr, rrul, tcp-crr, pmtu, frag, ext-headers, quic-stream or quic-rr")]
pub struct UnknownTest(pub String);

impl std::str::FromStr for RunTest {
    type Err = UnknownTest;
    fn from_str(s: &str) -> Result<RunTest, UnknownTest> {
        match s.to_ascii_lowercase().as_str() {
            "rrul" | "loaded" | "loaded-latency" => Ok(RunTest::Loaded),
            _ => s
                .parse::<TestKind>()
                .ok()
                .filter(|k| k.on_wire())
                .map(RunTest::One)
                .ok_or_else(|| UnknownTest(s.to_string())),
        }
    }
}

impl RunTest {
    /// The test's kind in a study's matrix.
    pub fn kind(self) -> TestKind {
        match self {
            RunTest::One(k) => k,
            RunTest::Loaded => TestKind::Rrul,
        }
    }
}

/// What `run` adds to the shared options: the one test it makes.
#[derive(Debug, Clone, PartialEq)]
pub struct OneTest {
    pub test: RunTest,
    pub family: Family,
    /// Payload bytes per send [default: 1408; rrul: the load's write size, 128K].
    pub size_bytes: Option<u32>,
    /// Seed of the traffic model's draws (`run --seed`).
    pub traffic_seed: Option<u64>,
    /// udp-stream: an RFC 2544 search instead of one offered rate.
    pub rate_search: bool,
}

/// A byte count that must fit a socket option (32 bits).
fn to_u32(flag: &str, v: u64) -> Result<u32, ResolveError> {
    u32::try_from(v).map_err(|_| ResolveError::Option(format!("{flag} {v} is too large")))
}

/// Seconds to whole milliseconds, 1 ms to an hour (0 too when `zero_ok`: "none"); a
/// value between whole milliseconds is rounded, never to 0.
fn secs_to_ms(flag: &str, s: f64, zero_ok: bool) -> Result<u64, ResolveError> {
    if zero_ok && s == 0.0 {
        return Ok(0);
    }
    let d = wire::bounds::secs_to_duration(
        flag,
        s,
        std::time::Duration::from_millis(1),
        std::time::Duration::from_secs(3600),
    )
    .map_err(|e| ResolveError::Option(e.to_string()))?;
    Ok((d.as_secs_f64() * 1000.0).round().max(1.0) as u64)
}

impl TestOptions {
    /// The socket options given (None when none was).
    fn socket(&self) -> Result<Option<SocketOpts>, ResolveError> {
        let mut socket = SocketOpts::default();
        if let Some(w) = self.window_bytes {
            socket.sndbuf_bytes = Some(to_u32("--window", w)?);
            socket.rcvbuf_bytes = Some(to_u32("--window", w)?);
        }
        if let Some(b) = self.sndbuf_bytes {
            socket.sndbuf_bytes = Some(to_u32("--sndbuf", b)?);
        }
        if let Some(b) = self.rcvbuf_bytes {
            socket.rcvbuf_bytes = Some(to_u32("--rcvbuf", b)?);
        }
        socket.nodelay = self.nodelay;
        socket.mss_bytes = self.mss_bytes;
        socket.tos = self.tos;
        socket.flowlabel = self.flowlabel;
        socket.congestion = self.congestion.clone();
        socket.dont_fragment = self.dont_fragment;
        Ok((socket != SocketOpts::default()).then_some(socket))
    }

    /// The options as a spec layer: only what was given.
    pub fn layer(&self) -> Result<SpecFile, ResolveError> {
        Ok(SpecFile {
            duration_s: self.duration_s,
            count: self.count,
            direction: if self.reverse {
                Some("reverse".into())
            } else if self.bidir {
                Some("bidir".into())
            } else {
                None
            },
            streams: self.streams,
            rate_bps: match self.rate {
                Some(Rate::BitsPerSec(b)) => Some(b),
                _ => None,
            },
            rate_pps: match self.rate {
                Some(Rate::PacketsPerSec(p)) => Some(p),
                _ => None,
            },
            loss_threshold_pct: self.loss_threshold_pct,
            search_steps: self.search_steps,
            interval_ms: self
                .interval_s
                .map(|s| secs_to_ms("--interval", s, true))
                .transpose()?,
            window_ms: self
                .stats_window_s
                .map(|s| secs_to_ms("--stats-window", s, false))
                .transpose()?,
            idt: self.idt.clone(),
            size_dist: self.size_dist.clone(),
            profile: self.profile.clone(),
            on_time: self.on_time.clone(),
            off_time: self.off_time.clone(),
            rr_timeout_ms: self.rr_timeout_ms,
            udp_datapath: self.udp_datapath.map(|d| d.name().to_string()),
            zerocopy: self.zerocopy.map(|z| z.name().to_string()),
            socket: self.socket()?,
            load: self.load.map(|l| l.name().to_string()),
            idle_s: self.idle_s,
            probe_rate: self.probe_rate,
            probe_size: self.probe_size_bytes,
            ..SpecFile::default()
        })
    }

    /// Whether any traffic-model option is given.
    pub fn shapes_traffic(&self) -> bool {
        self.idt.is_some()
            || self.size_dist.is_some()
            || self.profile.is_some()
            || self.on_time.is_some()
            || self.off_time.is_some()
    }
}

impl StudyOptions {
    /// The study's own options over the shared ones, as a spec layer.
    pub fn layer(&self, test: &TestOptions) -> Result<SpecFile, ResolveError> {
        let mut layer = test.layer()?;
        let udp_socket = match self.udp_buffer_bytes {
            Some(b) => Some(SocketOpts {
                sndbuf_bytes: Some(to_u32("--udp-buffer", b)?),
                rcvbuf_bytes: Some(to_u32("--udp-buffer", b)?),
                ..layer.socket.clone().unwrap_or_default()
            }),
            None => None,
        };
        layer.label = self.label.clone();
        layer.families = self.families.clone();
        layer.tests = self.tests.clone();
        layer.sizes = self.sizes.clone().map(SizesField::Text);
        layer.udp_method = self.udp_method.clone();
        layer.traffic_seed = self.traffic_seed;
        layer.load_streams = self.load_streams;
        layer.load_duration_s = self.load_duration_s;
        layer.udp_socket = udp_socket;
        layer.runs = self.runs;
        layer.confidence = self.confidence_pct;
        layer.ci_width = self.ci_width_pct;
        layer.min_runs = self.min_runs;
        layer.max_runs = self.max_runs;
        layer.order = self.order.clone();
        layer.seed = self.seed;
        layer.warmup = self.warmup;
        layer.retries = self.retries;
        Ok(layer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_given_options_reach_the_layer() {
        assert_eq!(TestOptions::default().layer().unwrap(), SpecFile::default());
        let o = TestOptions {
            window_bytes: Some(65_536),
            rcvbuf_bytes: Some(1 << 20),
            rate: Some(Rate::PacketsPerSec(50_000)),
            reverse: true,
            interval_s: Some(0.0015),
            ..TestOptions::default()
        };
        let l = o.layer().unwrap();
        let s = l.socket.unwrap();
        assert_eq!(s.sndbuf_bytes, Some(65_536));
        assert_eq!(s.rcvbuf_bytes, Some(1 << 20), "--rcvbuf wins over --window");
        assert_eq!((l.rate_bps, l.rate_pps), (None, Some(50_000)));
        assert_eq!(l.direction.as_deref(), Some("reverse"));
        assert_eq!(l.interval_ms, Some(2));
        let tiny = TestOptions {
            interval_s: Some(0.0001),
            ..TestOptions::default()
        };
        let e = tiny.layer().unwrap_err().to_string();
        assert!(
            e.contains("--interval") && e.contains("between 0.001 and"),
            "{e}"
        );
    }

    #[test]
    fn numbers_that_do_not_fit_are_refused_with_the_flag() {
        let o = TestOptions {
            sndbuf_bytes: Some(1 << 40),
            ..TestOptions::default()
        };
        assert!(o.layer().unwrap_err().to_string().contains("--sndbuf"));
        let o = TestOptions {
            stats_window_s: Some(f64::INFINITY),
            ..TestOptions::default()
        };
        assert!(o
            .layer()
            .unwrap_err()
            .to_string()
            .contains("--stats-window"));
        let s = StudyOptions {
            udp_buffer_bytes: Some(1 << 33),
            ..StudyOptions::default()
        };
        let e = s.layer(&TestOptions::default()).unwrap_err();
        assert!(e.to_string().contains("--udp-buffer"), "{e}");
    }

    #[test]
    fn run_test_names_the_four_tests_and_rrul() {
        assert_eq!(
            "udp-rr".parse::<RunTest>(),
            Ok(RunTest::One(TestKind::UdpRr))
        );
        assert_eq!("RRUL".parse::<RunTest>(), Ok(RunTest::Loaded));
        assert!("ping"
            .parse::<RunTest>()
            .unwrap_err()
            .to_string()
            .contains("rrul"));
    }
}
