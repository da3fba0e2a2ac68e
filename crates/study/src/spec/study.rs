//! What a study is once resolved: [`StudySpec`], how many runs each cell gets, the UDP
//! method and the run order.

use super::*;
use serde::{Deserialize, Serialize};
use wire::spec::{Bound, Direction, Family, Rate, RateSearch, SocketOpts, TestKind, UdpDatapath};
use wire::traffic::TrafficModel;

/// How many measured runs each cell gets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "rule")]
pub enum Repetition {
    /// Exactly this many measured runs per cell.
    Fixed { runs: u32 },
    /// Repeat until the Student-t interval at `level_pct` of every counted metric is at
    /// most `width_pct` % of its mean (full width, as netperf -I), between `min_runs`
    /// and `max_runs` runs.
    Confidence {
        level_pct: f64,
        width_pct: f64,
        min_runs: u32,
        max_runs: u32,
    },
}

/// The receive buffer an RFC 2544 study asks for on UDP sockets when none is given
/// (16 MiB; the kernel caps it at net.core.rmem_max unless the process may force it, and
/// the applied size is recorded with each run). With the default 208 KiB a receiving
/// thread that stalls for half a millisecond (a VM's vCPU preempted, a kworker) drops
/// datagrams at any offered rate, so on loopback each search trial passed or failed by
/// luck. With GRO receivers taking tens of Gbit/s on loopback, 4 MiB holds only about
/// 1 ms, and kernel threads holding the receiver's CPU for 2–4 ms made runs
/// receiver-limited; 16 MiB leaves room for that (measurements in docs/benchmarks.md).
pub const RFC2544_RCVBUF_BYTES: u32 = 16 << 20;

/// How udp-stream cells measure throughput, recorded with the campaign.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "method")]
pub enum UdpMethod {
    /// RFC 2544 §26.1 throughput: each run searches for the highest offered rate whose
    /// loss stays within the threshold; its figures are that trial's.
    Rfc2544(RateSearch),
    /// One offered rate per run: the study's rate, or unpaced (as fast as possible)
    /// without one. Campaigns stored before the method was recorded ran this way.
    #[default]
    Fixed,
}

impl UdpMethod {
    /// One line for `--dry-run`, `show` and the report's Method section.
    pub fn describe(&self, rate: Option<Rate>) -> String {
        match (self, rate) {
            (UdpMethod::Rfc2544(s), _) => format!(
                "RFC 2544 throughput: per run, the highest offered rate with loss ≤ {}% \
                 (search: 1 unpaced + up to {} paced trials, each half the run length, \
                 ending once bracketed to 2 %; figures from the best passing trial)",
                s.loss_threshold_pct, s.steps
            ),
            (UdpMethod::Fixed, Some(Rate::BitsPerSec(b))) => {
                format!("fixed offered rate {b} bit/s per stream")
            }
            (UdpMethod::Fixed, Some(Rate::PacketsPerSec(p))) => {
                format!("fixed offered rate {p} packets/s per stream")
            }
            (UdpMethod::Fixed, None) => {
                "unpaced (as fast as possible; loss includes the receiver's own drops, \
                 no jitter)"
                    .to_string()
            }
        }
    }
}

/// Order of runs within each round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// Matrix order, IPv4 and IPv6 of the same test and size back to back (ABAB…).
    Interleaved,
    /// Each round in an order drawn from the recorded seed.
    Random,
}

/// A validated study. Stored as the campaign's `spec_json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudySpec {
    pub label: String,
    pub families: Vec<Family>,
    pub tests: Vec<TestKind>,
    pub sizes_bytes: Vec<u32>,
    pub bound: Bound,
    pub direction: Direction,
    pub streams: u16,
    pub rate: Option<Rate>,
    /// How udp-stream measures (absent in campaigns stored before it was recorded).
    #[serde(default)]
    pub udp_method: UdpMethod,
    pub interval_ns: Option<u64>,
    /// udp-stream: per-window statistics over windows of this many ns (absent in
    /// campaigns stored before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<u64>,
    /// udp-stream and tcp-stream traffic model, seed included (absent when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<TrafficModel>,
    pub rr_timeout_ns: u64,
    /// UDP datapath of every UDP run (absent in campaigns stored before it was recorded).
    #[serde(default)]
    pub udp_datapath: UdpDatapath,
    /// Zero-copy sending of tcp-stream cells (absent: copies, as before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<wire::spec::ZeroCopyMethod>,
    pub socket: SocketOpts,
    pub udp_socket: Option<SocketOpts>,
    pub repetition: Repetition,
    pub order: Order,
    pub seed: u64,
    pub warmup_runs: u32,
    pub retries: u32,
    /// rrul cells' parameters (present when the tests include rrul).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rrul: Option<RrulPlan>,
    /// The report's percentage base, "first" or "second" (absent: the report's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_of: Option<String>,
    /// The cells' coefficient-of-variation criterion, % (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv_target_pct: Option<f64>,
}

impl StudySpec {
    /// How the udp-stream cells measure, one line for `--dry-run` and the report's
    /// metadata: a traffic model's own schedule, or the method (RFC 2544, one rate).
    pub fn describe_udp_stream(&self) -> String {
        match &self.traffic {
            Some(t) if t.idt.is_some() => {
                "the traffic model's own schedule (no rate search)".to_string()
            }
            _ => self.udp_method.describe(self.rate),
        }
    }

    /// The stream tests whose throughput is the load the sender offered rather than what
    /// the path could carry, with why (for the report, which then draws no
    /// header-overhead conclusion from them): streams on a traffic model's schedule, and
    /// udp-stream at a fixed rate.
    pub fn offered_load(&self) -> std::collections::BTreeMap<TestKind, String> {
        let mut out = std::collections::BTreeMap::new();
        let scheduled = self
            .traffic
            .as_ref()
            .filter(|t| t.idt.is_some() || t.on_time.is_some());
        for kind in [TestKind::UdpStream, TestKind::TcpStream] {
            if !self.tests.contains(&kind) {
                continue;
            }
            if let Some(t) = scheduled {
                let model = match (&t.profile, &t.idt) {
                    (Some(p), _) => format!("profile {p}"),
                    (None, Some(idt)) => format!("gaps {idt}"),
                    (None, None) => "on/off periods".to_string(),
                };
                out.insert(
                    kind,
                    format!("its {kind} runs followed a traffic model ({model}), so their throughput is the load it offered"),
                );
            } else if kind == TestKind::UdpStream && self.udp_method == UdpMethod::Fixed {
                if let Some(r) = self.rate {
                    out.insert(
                        kind,
                        format!("its udp-stream runs were sent at a {}, so their throughput is the load offered", self.udp_method.describe(Some(r))),
                    );
                }
            }
        }
        out
    }

    /// The udp-stream and tcp-stream cells' traffic model, one line for `--dry-run` and
    /// the report's metadata; `None` without one.
    pub fn describe_traffic(&self) -> Option<String> {
        let t = self.traffic.as_ref()?;
        let on_off = match (&t.on_time, &t.off_time) {
            (Some(on), Some(off)) => format!(", active periods {on}, silent periods {off}"),
            _ => String::new(),
        };
        Some(format!(
            "{}gaps {}, sizes {}{on_off}, seed {} (one datagram or message per call on an absolute schedule)",
            t.profile.as_ref().map_or(String::new(), |p| format!("{p}: ")),
            t.idt.as_deref().unwrap_or("the rate (or unpaced)"),
            t.size.as_deref().unwrap_or("the cell's size"),
            t.seed
        ))
    }

    /// The socket options asked for, one line for `--dry-run` and the report's metadata:
    /// all tests, and the UDP tests' own where they differ (the RFC 2544 default receive
    /// buffer says so). What the kernel applied is recorded per run.
    pub fn describe_sockets(&self) -> String {
        let all = self.socket.describe();
        match &self.udp_socket {
            Some(u) if *u != self.socket && self.tests.iter().any(|t| t.is_udp()) => {
                let why = match (&self.udp_method, u.rcvbuf_bytes) {
                    (UdpMethod::Rfc2544(_), Some(RFC2544_RCVBUF_BYTES))
                        if self.socket.rcvbuf_bytes.is_none() =>
                    {
                        " (the RFC 2544 default receive buffer, so a receiving thread's stall \
                         of a few ms does not decide a search trial; capped at \
                         net.core.rmem_max unless the process may force it)"
                    }
                    _ => "",
                };
                format!("{all}; UDP tests: {}{why}", u.describe())
            }
            _ => all,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// A stored spec as it was written (to describe it: `show`, `report`). Before
    /// running one (`--resume`), check it with [`StudySpec::validate`].
    pub fn from_json(text: &str) -> Result<StudySpec, SpecError> {
        serde_json::from_str(text).map_err(|e| SpecError::Invalid(format!("stored spec: {e}")))
    }

    /// Measured runs per cell at least and at most.
    pub fn runs_range(&self) -> (u32, u32) {
        match self.repetition {
            Repetition::Fixed { runs } => (runs, runs),
            Repetition::Confidence {
                min_runs, max_runs, ..
            } => (min_runs, max_runs),
        }
    }
}
