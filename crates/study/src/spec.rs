//! What a study is: [`SpecFile`] is what a user wrote (TOML file, preset or flags, every
//! field optional, layered with [`SpecFile::merge`]); [`StudySpec`] is what it means
//! (validated, defaults applied), and is what a campaign stores as JSON.

use serde::{Deserialize, Serialize};
use wire::spec::{
    Bound, Direction, Family, LoadDirection, LoadedOpts, Rate, RateSearch, SocketOpts, TestKind,
    UdpDatapath,
};
use wire::traffic::TrafficModel;

/// Errors in a study spec, worded for the user.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpecError {
    #[error("invalid packet sizes '{0}': {1}")]
    Sizes(String, String),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot read study spec: {0}")]
    Toml(String),
}

/// Default sizes: the six sizes of studies 000, 001, 003 and 004.
pub const DEFAULT_SIZES_BYTES: [u32; 6] = [128, 384, 640, 896, 1152, 1408];
/// Default run length of the default study (short, so it finishes within minutes; a
/// udp-stream run splits it over its RFC 2544 trials).
pub const DEFAULT_DURATION_S: f64 = 0.5;
/// Default spacing of the per-interval samples stored with each run.
pub const DEFAULT_INTERVAL_MS: u64 = 1000;
/// Default repetition (no `runs`, no target given): repeat each cell until the
/// Student-t interval at this level …
pub const DEFAULT_CONFIDENCE_PCT: f64 = 95.0;
/// … is at most this % of the mean (full width) …
pub const DEFAULT_CI_WIDTH_PCT: f64 = 20.0;
/// … with at least this many runs per cell: with 5 runs per side a complete separation
/// gives the exact two-sided Mann-Whitney p = 2/252 = 0.0079, below 0.05/6 (Holm over
/// six sizes); 4 runs give 0.029, 3 runs 0.1, which no correction lets through.
pub const DEFAULT_MIN_RUNS: u32 = 5;
/// … and at most this many (bounds the default study's time). 20 rather than 12: the
/// udp-stream cells that miss at 12 are those with one or two runs caught in a slow
/// period of a shared machine, which more runs outweigh (docs/benchmarks.md).
pub const DEFAULT_MAX_RUNS: u32 = 20;
/// Most packet sizes one study may list (each is one cell per family and test).
pub const MAX_SIZES: usize = 1000;
/// Most measured runs per cell (`runs`, `max_runs`).
pub const MAX_RUNS_PER_CELL: u32 = 10_000;
/// Most warm-up runs per cell, and most retries of a failed run.
pub const MAX_WARMUP_RUNS: u32 = 100;
pub const MAX_RETRIES: u32 = 100;
/// Most runs one study may plan: cells × (warm-up + most measured runs).
pub const MAX_PLANNED_RUNS: u64 = 1_000_000;
/// Most packets per run of a count-bound study (about 17 minutes at 1 Mpps).
pub const MAX_COUNT_PACKETS: u64 = 1_000_000_000;
/// Fastest UDP sending rate a study may ask for: 1 Tbit/s, or 1 G packets/s.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000;
pub const MAX_RATE_PPS: u64 = 1_000_000_000;
/// Longest udp-rr transaction timeout, milliseconds.
pub const MAX_RR_TIMEOUT_MS: u64 = 60_000;

/// A range check as a spec error (the message names the key and the valid range).
fn check<T: PartialOrd + std::fmt::Display + Copy>(
    key: &str,
    value: T,
    min: T,
    max: T,
    unit: &str,
) -> Result<T, SpecError> {
    wire::bounds::in_range(key, value, min, max, unit)
        .map_err(|e| SpecError::Invalid(e.to_string()))
}

/// Packet sizes as a user writes them: `"128,384,640"`, `"128..1408/256"` (inclusive,
/// step 256), or a TOML list of numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SizesField {
    List(Vec<u32>),
    Text(String),
}

/// A study as written: every field optional, later layers override earlier ones.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecFile {
    pub label: Option<String>,
    /// 4 and/or 6.
    pub families: Option<Vec<u8>>,
    /// tcp-stream, udp-stream, tcp-rr, udp-rr (the default: these four), rrul, tcp-crr.
    pub tests: Option<Vec<String>>,
    pub sizes: Option<SizesField>,
    /// Length of each run in seconds (exclusive with `count`).
    pub duration_s: Option<f64>,
    /// Packets per run (exclusive with `duration_s`).
    pub count: Option<u64>,
    /// forward, reverse or bidir.
    pub direction: Option<String>,
    pub streams: Option<u16>,
    /// UDP stream sending rate in bits per second (absent: as fast as possible).
    pub rate_bps: Option<u64>,
    /// UDP stream sending rate in packets per second (exclusive with `rate_bps`).
    pub rate_pps: Option<u64>,
    /// How udp-stream measures: `rfc2544` (default without a rate: the highest rate
    /// whose loss stays within `loss_threshold_pct`, by binary search in each run) or
    /// `fixed` (one offered rate: `rate_bps`/`rate_pps`, or unpaced without one).
    pub udp_method: Option<String>,
    /// rfc2544: a trial passes at this loss (%) or less (default 0.1).
    pub loss_threshold_pct: Option<f64>,
    /// rfc2544: paced trials per run after the unpaced one (default 5).
    pub search_steps: Option<u32>,
    /// Per-interval samples every this many milliseconds (0: none; default: ten per run,
    /// at most every 1000).
    pub interval_ms: Option<u64>,
    /// udp-stream: per-window statistics (ITGDec style) over windows of this many
    /// milliseconds of send time, stored with each run as `window_*` samples (default:
    /// none).
    pub window_ms: Option<u64>,
    /// udp-stream and tcp-stream traffic model (D-ITG style): gaps (`exp:1ms`), sizes
    /// (`uniform:64..1400`), or an application profile (`voip-g711`, …); the seed of
    /// the draws (default: from the study's seed). Compare models by running one
    /// campaign per model and reporting them together.
    pub idt: Option<String>,
    pub size_dist: Option<String>,
    pub profile: Option<String>,
    pub traffic_seed: Option<u64>,
    /// On/off activity of the traffic model (D-ITG's VoIP voice activity): lengths of
    /// the active and the silent periods (`exp:1s`); both or neither.
    pub on_time: Option<String>,
    pub off_time: Option<String>,
    pub rr_timeout_ms: Option<u64>,
    /// UDP datapath: `auto` (default), `per-datagram` (Netperf's method), `batched`, `gso`.
    pub udp_datapath: Option<String>,
    /// tcp-stream cells send without copying: `msg` (MSG_ZEROCOPY) or `sendfile` (Linux).
    pub zerocopy: Option<String>,
    /// Fixed repetitions per cell (exclusive with `confidence`).
    pub runs: Option<u32>,
    /// Confidence level in percent (e.g. 95): repeat until the interval is narrow enough.
    pub confidence: Option<f64>,
    /// Full interval width as % of the mean (netperf -I's second number).
    pub ci_width: Option<f64>,
    pub min_runs: Option<u32>,
    pub max_runs: Option<u32>,
    /// interleaved or random.
    pub order: Option<String>,
    pub seed: Option<u64>,
    pub warmup: Option<u32>,
    pub retries: Option<u32>,
    /// Socket options for every test.
    pub socket: Option<SocketOpts>,
    /// Socket options for UDP tests only (replace `socket` for them).
    pub udp_socket: Option<SocketOpts>,
    /// rrul: which way the load streams send (upload, download, both; default both).
    pub load: Option<String>,
    /// rrul: TCP connections of load per direction (default 4, as flent's RRUL).
    pub load_streams: Option<u16>,
    /// rrul: length of the loaded phase, seconds (default 4; not `duration_s`, which
    /// the short default runs of the other tests set).
    pub load_duration_s: Option<f64>,
    /// rrul: length of the idle phase before the load, seconds (default 1).
    pub idle_s: Option<f64>,
    /// rrul: probe transactions per second of each probe type (default 20).
    pub probe_rate: Option<u64>,
    /// rrul: bytes of each probe request and response (default 64).
    pub probe_size: Option<u32>,
    /// What the report's percentage differences are taken over: "first" (IPv4, or the
    /// first system: the studies' convention) or "second" (IPv6, or the other system).
    /// Recorded with the campaign; `report --percent-of` overrides it.
    pub percent_of: Option<String>,
    /// A study's acceptance criterion on the spread of each cell: the coefficient of
    /// variation (standard deviation / mean) at most this %, as seed 004's "standard
    /// deviation of less than 10 %". Recorded; the report shows each cell's CV against it.
    pub cv_target_pct: Option<f64>,
}

macro_rules! take_over {
    ($self:ident, $over:ident, $($f:ident),*) => {
        $( if $over.$f.is_some() { $self.$f = $over.$f.clone(); } )*
    };
}

impl SpecFile {
    /// Parse a TOML study file.
    pub fn from_toml(text: &str) -> Result<SpecFile, SpecError> {
        toml::from_str(text).map_err(|e| SpecError::Toml(e.to_string()))
    }

    /// This layer with `over` on top: every field `over` sets wins. Setting a run
    /// bound or a repetition rule replaces the other kind (count vs duration, runs vs
    /// confidence).
    pub fn merge(&self, over: &SpecFile) -> SpecFile {
        let mut out = self.clone();
        take_over!(
            out,
            over,
            label,
            families,
            tests,
            sizes,
            duration_s,
            count,
            direction,
            streams,
            rate_bps,
            rate_pps,
            udp_method,
            loss_threshold_pct,
            search_steps,
            interval_ms,
            window_ms,
            idt,
            size_dist,
            profile,
            traffic_seed,
            on_time,
            off_time,
            rr_timeout_ms,
            udp_datapath,
            zerocopy,
            runs,
            confidence,
            ci_width,
            min_runs,
            max_runs,
            order,
            seed,
            warmup,
            retries,
            socket,
            udp_socket,
            load,
            load_streams,
            load_duration_s,
            idle_s,
            probe_rate,
            probe_size,
            percent_of,
            cv_target_pct
        );
        if over.rate_bps.is_some() && over.rate_pps.is_none() {
            out.rate_pps = None;
        }
        if over.rate_pps.is_some() && over.rate_bps.is_none() {
            out.rate_bps = None;
        }
        if over.count.is_some() && over.duration_s.is_none() {
            out.duration_s = None;
        }
        if over.duration_s.is_some() && over.count.is_none() {
            out.count = None;
        }
        let over_conf = over.confidence.is_some() || over.ci_width.is_some();
        if over.runs.is_some() && !over_conf {
            out.confidence = None;
            out.ci_width = None;
        }
        if over_conf && over.runs.is_none() {
            out.runs = None;
        }
        out
    }

    /// Every free-text value (the label and each option string) within the entry limits
    /// of [`wire::text::check_name`]: at most 256 characters, no control characters. The
    /// label reaches every table, figure and export; the other strings are parsed, but are
    /// stored and quoted back in errors, so they are bounded before anything reads them.
    fn check_text(&self) -> Result<(), SpecError> {
        let strings = [
            ("label", &self.label),
            ("direction", &self.direction),
            ("udp_method", &self.udp_method),
            ("idt", &self.idt),
            ("size_dist", &self.size_dist),
            ("profile", &self.profile),
            ("on_time", &self.on_time),
            ("off_time", &self.off_time),
            ("udp_datapath", &self.udp_datapath),
            ("zerocopy", &self.zerocopy),
            ("order", &self.order),
            ("load", &self.load),
            ("percent_of", &self.percent_of),
        ];
        let listed = self.tests.iter().flatten().map(|t| ("tests", t));
        for (field, text) in strings
            .into_iter()
            .filter_map(|(f, t)| Some((f, t.as_ref()?)))
            .chain(listed)
        {
            wire::text::check_name(field, text).map_err(|e| SpecError::Invalid(e.to_string()))?;
        }
        Ok(())
    }

    /// Validate and apply defaults. `default_seed` is used when the spec names none
    /// (the caller draws it from the clock so that a random order is still recorded).
    pub fn resolve(&self, default_seed: u64) -> Result<StudySpec, SpecError> {
        self.check_text()?;
        let families = match &self.families {
            None => vec![Family::V4, Family::V6],
            Some(list) => list
                .iter()
                .map(|n| {
                    n.to_string()
                        .parse::<Family>()
                        .map_err(|e| SpecError::Invalid(e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        let tests = match &self.tests {
            None => TestKind::WIRE.to_vec(),
            Some(list) => list
                .iter()
                .map(|t| {
                    t.parse::<TestKind>()
                        .map_err(|e| SpecError::Invalid(e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        let traffic = TrafficModel::from_options(
            self.idt.as_deref(),
            self.size_dist.as_deref(),
            self.profile.as_deref(),
            (self.on_time.as_deref(), self.off_time.as_deref()),
            self.traffic_seed,
            default_seed,
        )
        .map_err(|e| SpecError::Invalid(format!("traffic model: {e}")))?;
        if traffic.is_some()
            && !tests.contains(&TestKind::UdpStream)
            && !tests.contains(&TestKind::TcpStream)
        {
            return Err(SpecError::Invalid(
                "a traffic model (--idt, --size-dist, --profile) shapes udp-stream and tcp-stream: add one to --tests"
                    .into(),
            ));
        }
        let size_dist = traffic.as_ref().and_then(|t| t.size_dist().ok().flatten());
        let sizes_bytes = match &self.sizes {
            // Sizes drawn from a distribution: the one size shown is its mean.
            None if size_dist.is_some() => {
                // (Cauchy has no mean: its location is the label then.)
                let mean: f64 = size_dist
                    .as_ref()
                    .and_then(measure::traffic::mean)
                    .or(match size_dist {
                        Some(wire::traffic::Dist::Cauchy { location, .. }) => Some(location),
                        _ => None,
                    })
                    .unwrap_or(0.0);
                vec![(mean.round() as u32).max(wire::datagram::HEADER_BYTES as u32)]
            }
            Some(SizesField::List(v)) if size_dist.is_some() && v.len() > 1 => {
                return Err(SpecError::Invalid(
                    "a size distribution replaces the size axis: give one size (its label in the report) or none".into(),
                ))
            }
            None => DEFAULT_SIZES_BYTES.to_vec(),
            Some(SizesField::List(v)) => v.clone(),
            Some(SizesField::Text(t)) => parse_sizes(t)?,
        };
        if size_dist.is_some() && sizes_bytes.len() > 1 {
            return Err(SpecError::Invalid(
                "a size distribution replaces the size axis: give one size (its label in the report) or none".into(),
            ));
        }
        let bound = match (self.duration_s, self.count) {
            (Some(_), Some(_)) => {
                return Err(SpecError::Invalid(
                    "give either a duration or a count per run, not both".into(),
                ))
            }
            (None, Some(0)) => return Err(SpecError::Invalid("--count must be at least 1".into())),
            (None, Some(n)) => Bound::Count(n),
            (d, None) => {
                let d = d.unwrap_or(DEFAULT_DURATION_S);
                check_duration_s(d)?;
                Bound::DurationNs((d * 1e9).round() as u64)
            }
        };
        let direction = match self.direction.as_deref() {
            None | Some("forward") => Direction::Forward,
            Some("reverse") => Direction::Reverse,
            Some("bidir") => Direction::Bidir,
            Some(o) => {
                return Err(SpecError::Invalid(format!(
                    "unknown direction '{o}' (use forward, reverse or bidir)"
                )))
            }
        };
        let order = match self.order.as_deref() {
            None | Some("interleaved") => Order::Interleaved,
            Some("random") => Order::Random,
            Some(o) => {
                return Err(SpecError::Invalid(format!(
                    "unknown order '{o}' (use interleaved or random)"
                )))
            }
        };
        let rate = match (self.rate_bps, self.rate_pps) {
            (Some(_), Some(_)) => {
                return Err(SpecError::Invalid(
                    "give the rate in bits/s or in packets/s, not both".into(),
                ))
            }
            (Some(bps), None) => Some(Rate::BitsPerSec(bps)),
            (None, Some(pps)) => Some(Rate::PacketsPerSec(pps)),
            (None, None) => None,
        };
        // A model sets its own gaps: the rate search does not apply.
        if let Some(t) = traffic
            .as_ref()
            .filter(|t| t.on_time.is_some() && t.idt.is_none())
        {
            // The TCP stream takes no rate: only --idt paces it.
            if rate.is_none() || tests.contains(&TestKind::TcpStream) {
                return Err(SpecError::Invalid(format!(
                    "on/off periods ({t}) gate a schedule: give --idt (or a --profile), or a rate with udp-stream alone"
                )));
            }
        }
        let udp_method = self.udp_method(rate.is_some() || traffic.is_some())?;
        let streams = self.streams.unwrap_or(1);
        let interval_ns = self.interval_ns(bound)?;
        let window_ns = match self.window_ms {
            None | Some(0) => None,
            Some(ms) => Some(ms.saturating_mul(1_000_000)),
        };
        let udp_datapath = match &self.udp_datapath {
            None => UdpDatapath::Auto,
            Some(s) => s
                .parse::<UdpDatapath>()
                .map_err(|e| SpecError::Invalid(format!("udp_datapath (--udp-datapath): {e}")))?,
        };
        let zerocopy = self
            .zerocopy
            .as_deref()
            .map(|z| {
                z.parse::<wire::spec::ZeroCopyMethod>()
                    .map_err(|e| SpecError::Invalid(format!("zerocopy (--zerocopy): {e}")))
            })
            .transpose()?;
        let rr_timeout_ms = self.rr_timeout_ms.unwrap_or(200);
        let warmup_runs = self.warmup.unwrap_or(0);
        let retries = self.retries.unwrap_or(2);
        let rrul = if tests.contains(&TestKind::Rrul) {
            Some(self.rrul_plan()?)
        } else {
            None
        };
        let repetition = self.repetition()?;
        let spec = StudySpec {
            label: self.label.clone().unwrap_or_default(),
            families,
            tests,
            sizes_bytes,
            bound,
            direction,
            streams,
            rate,
            udp_method,
            interval_ns,
            window_ns,
            traffic,
            rr_timeout_ns: rr_timeout_ms.saturating_mul(1_000_000),
            udp_datapath,
            zerocopy,
            udp_socket: self.udp_socket_or_default(&udp_method),
            socket: self.socket.clone().unwrap_or_default(),
            repetition,
            order,
            seed: self.seed.unwrap_or(default_seed),
            warmup_runs,
            retries,
            rrul,
            percent_of: self.percent_of.clone(),
            cv_target_pct: self.cv_target_pct,
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The rrul cells' parameters, checked as `dualperf run -t rrul` checks them
    /// ([`RrulPlan::check`]).
    fn rrul_plan(&self) -> Result<RrulPlan, SpecError> {
        let d = LoadedOpts::default();
        // Range-checked by `RrulPlan::check`; what is not a number is refused here.
        let secs = |key: &str, v: Option<f64>, default: f64| {
            let v = v.unwrap_or(default);
            if v.is_finite() && v >= 0.0 {
                Ok((v * 1e9).round() as u64)
            } else {
                Err(SpecError::Invalid(format!(
                    "{key} {v} s is out of range: give a number of seconds up to 86400"
                )))
            }
        };
        let duration_ns = secs(
            "load_duration_s (--load-duration)",
            self.load_duration_s,
            DEFAULT_RRUL_DURATION_S,
        )?;
        let idle_ns = secs("idle_s (--idle)", self.idle_s, DEFAULT_RRUL_IDLE_S)?;
        let load = match self.load.as_deref() {
            None => d.load,
            Some("upload") => LoadDirection::Upload,
            Some("download") => LoadDirection::Download,
            Some("both") => LoadDirection::Both,
            Some(o) => {
                return Err(SpecError::Invalid(format!(
                    "unknown load '{o}' (use upload, download or both)"
                )))
            }
        };
        let plan = RrulPlan {
            opts: LoadedOpts {
                streams: self.load_streams.unwrap_or(d.streams),
                load,
                probe_rate: self.probe_rate.unwrap_or(d.probe_rate),
                probe_bytes: self.probe_size.unwrap_or(d.probe_bytes),
                idle_ns,
            },
            duration_ns,
            interval_ns: RRUL_INTERVAL_NS,
        };
        plan.check()?;
        Ok(plan)
    }

    /// `interval_ms` checked: 0 (no samples), or at least the protocol's shortest
    /// interval and at most [`wire::proto::MAX_INTERVAL_SAMPLES`] samples per run.
    /// Without `interval_ms`, a run of known length is sampled ten times (at most every
    /// [`DEFAULT_INTERVAL_MS`], at least every protocol minimum), so its time series has
    /// steps to draw: a 0.5 s run sampled every second is one flat step.
    fn interval_ns(&self, bound: Bound) -> Result<Option<u64>, SpecError> {
        let min_ms = wire::proto::MIN_INTERVAL_NS / 1_000_000;
        let default_ms = match bound {
            Bound::DurationNs(d) => (d / 1_000_000 / 10).clamp(min_ms.max(1), DEFAULT_INTERVAL_MS),
            Bound::Count(_) => DEFAULT_INTERVAL_MS,
        };
        let ms = self.interval_ms.unwrap_or(default_ms);
        if ms == 0 {
            return Ok(None);
        }
        let ns = ms.saturating_mul(1_000_000);
        check_interval_ns(ns, bound)?;
        Ok(Some(ns))
    }

    /// The UDP cells' socket options: as given, else for an RFC 2544 study a receive
    /// buffer of [`RFC2544_RCVBUF_BYTES`] (with the other `socket` options) — unless a
    /// receive buffer was given for all tests.
    fn udp_socket_or_default(&self, method: &UdpMethod) -> Option<SocketOpts> {
        let socket = self.socket.clone().unwrap_or_default();
        match (&self.udp_socket, method) {
            (None, UdpMethod::Rfc2544(_)) if socket.rcvbuf_bytes.is_none() => Some(SocketOpts {
                rcvbuf_bytes: Some(RFC2544_RCVBUF_BYTES),
                ..socket
            }),
            _ => self.udp_socket.clone(),
        }
    }

    fn udp_method(&self, has_rate: bool) -> Result<UdpMethod, SpecError> {
        let search = RateSearch {
            loss_threshold_pct: self
                .loss_threshold_pct
                .unwrap_or(wire::spec::RATE_SEARCH_LOSS_THRESHOLD_PCT),
            steps: self.search_steps.unwrap_or(wire::spec::RATE_SEARCH_STEPS),
        };
        match (self.udp_method.as_deref(), has_rate) {
            (None, true) | (Some("fixed"), _) => Ok(UdpMethod::Fixed),
            (None | Some("rfc2544"), false) => {
                search
                    .check()
                    .map_err(|e| SpecError::Invalid(e.to_string()))?;
                Ok(UdpMethod::Rfc2544(search))
            }
            (Some("rfc2544"), true) => Err(SpecError::Invalid(
                "--udp-method rfc2544 finds the rate itself: drop the rate (-b), or use \
                 --udp-method fixed to send at that rate"
                    .into(),
            )),
            (Some(o), _) => Err(SpecError::Invalid(format!(
                "unknown UDP method '{o}' (use rfc2544 or fixed)"
            ))),
        }
    }

    fn repetition(&self) -> Result<Repetition, SpecError> {
        let conf = self.confidence.is_some() || self.ci_width.is_some() || self.runs.is_none();
        if (self.confidence.is_some() || self.ci_width.is_some()) && self.runs.is_some() {
            return Err(SpecError::Invalid(
                "give either --runs or a confidence target (--confidence/--ci-width), not both"
                    .into(),
            ));
        }
        if !conf {
            return Ok(Repetition::Fixed {
                runs: self.runs.unwrap_or(1),
            });
        }
        let level_pct = self.confidence.unwrap_or(DEFAULT_CONFIDENCE_PCT);
        let width_pct = self.ci_width.unwrap_or(DEFAULT_CI_WIDTH_PCT);
        // A bound given alone moves the other default out of its way: `--max-runs 3`
        // means 2..3 runs (at least 2: an interval needs two), `--min-runs 20` 20..20.
        let min_runs = self.min_runs.unwrap_or(match self.max_runs {
            Some(m) => DEFAULT_MIN_RUNS.min(m).max(2),
            None => DEFAULT_MIN_RUNS,
        });
        let max_runs = self
            .max_runs
            .unwrap_or(DEFAULT_MAX_RUNS)
            .max(self.min_runs.unwrap_or(0));
        Ok(Repetition::Confidence {
            level_pct,
            width_pct,
            min_runs,
            max_runs,
        })
    }
}

/// A run's duration, seconds, within 1 ms and one day.
fn check_duration_s(d: f64) -> Result<(), SpecError> {
    if d.is_finite() && (0.001..=86_400.0).contains(&d) {
        Ok(())
    } else {
        Err(SpecError::Invalid(format!(
            "duration {d} s is out of range (0.001 ≤ duration ≤ 86400)"
        )))
    }
}

/// An interval between samples: at least the protocol's shortest, at most a day, and
/// at most [`wire::proto::MAX_INTERVAL_SAMPLES`] samples per run.
fn check_interval_ns(ns: u64, bound: Bound) -> Result<(), SpecError> {
    let min_ms = wire::proto::MIN_INTERVAL_NS / 1_000_000;
    let ms = ns / 1_000_000;
    check(
        "interval_ms (--interval)",
        ms,
        min_ms,
        86_400_000,
        "ms (or 0 for none)",
    )?;
    if let Bound::DurationNs(d) = bound {
        if d / ns.max(1) > wire::proto::MAX_INTERVAL_SAMPLES {
            return Err(SpecError::Invalid(format!(
                "interval_ms {ms} gives more than {} samples per run; use a longer interval",
                wire::proto::MAX_INTERVAL_SAMPLES
            )));
        }
    }
    Ok(())
}

/// A statistics window: 1 ms to a day, at most [`wire::proto::MAX_INTERVAL_SAMPLES`]
/// windows per run.
fn check_window_ns(ns: u64, bound: Bound) -> Result<(), SpecError> {
    let ms = check(
        "window_ms (--stats-window)",
        ns / 1_000_000,
        1,
        86_400_000,
        "ms",
    )?;
    if let Bound::DurationNs(d) = bound {
        if d / ns.max(1) > wire::proto::MAX_INTERVAL_SAMPLES {
            return Err(SpecError::Invalid(format!(
                "window_ms {ms} gives more than {} windows per run; use a longer window",
                wire::proto::MAX_INTERVAL_SAMPLES
            )));
        }
    }
    Ok(())
}

fn check_repetition(r: &Repetition) -> Result<(), SpecError> {
    match *r {
        Repetition::Fixed { runs } => {
            check("runs (--runs)", runs, 1, MAX_RUNS_PER_CELL, "")?;
        }
        Repetition::Confidence {
            level_pct,
            width_pct,
            min_runs,
            max_runs,
        } => {
            if !(50.0..100.0).contains(&level_pct) {
                return Err(SpecError::Invalid(format!(
                    "--confidence {level_pct} must be a percentage from 50 to below 100 (e.g. 95)"
                )));
            }
            if !(width_pct > 0.0 && width_pct <= 1000.0) {
                return Err(SpecError::Invalid(format!(
                    "--ci-width {width_pct} must be a positive percentage of the mean up to 1000 (e.g. 5)"
                )));
            }
            if min_runs < 2 || max_runs < min_runs || max_runs > MAX_RUNS_PER_CELL {
                return Err(SpecError::Invalid(format!(
                    "need 2 ≤ --min-runs ({min_runs}) ≤ --max-runs ({max_runs}) ≤ {MAX_RUNS_PER_CELL}: an interval needs two runs"
                )));
            }
        }
    }
    Ok(())
}

fn check_axes(families: &[Family], tests: &[TestKind], sizes: &[u32]) -> Result<(), SpecError> {
    if sizes.len() > MAX_SIZES {
        return Err(SpecError::Invalid(format!(
            "{} packet sizes; a study may have at most {MAX_SIZES}",
            sizes.len()
        )));
    }
    if families.is_empty() || tests.is_empty() || sizes.is_empty() {
        return Err(SpecError::Invalid(
            "a study needs at least one family, one test and one size".into(),
        ));
    }
    for (i, f) in families.iter().enumerate() {
        if families[..i].contains(f) {
            return Err(SpecError::Invalid(format!("family {f} is listed twice")));
        }
    }
    for (i, t) in tests.iter().enumerate() {
        if tests[..i].contains(t) {
            return Err(SpecError::Invalid(format!("test {t} is listed twice")));
        }
    }
    for &s in sizes {
        if s == 0 || s > Family::V4.max_udp_payload_bytes() {
            return Err(SpecError::Invalid(format!(
                "packet size {s} is out of range (1..={} bytes)",
                Family::V4.max_udp_payload_bytes()
            )));
        }
    }
    Ok(())
}

/// Parse `"128,384,640"`, `"128..1408/256"` (inclusive range with step; `/step`
/// defaults to 128) or a mix of both, comma-separated. Duplicates are an error.
pub fn parse_sizes(text: &str) -> Result<Vec<u32>, SpecError> {
    let err = |m: &str| SpecError::Sizes(text.to_string(), m.to_string());
    let max_bytes = Family::V4.max_udp_payload_bytes();
    let in_range = |s: u32| {
        if s == 0 || s > max_bytes {
            Err(err(&format!("{s} is out of range (1..={max_bytes} bytes)")))
        } else {
            Ok(s)
        }
    };
    let too_many = || {
        err(&format!(
            "more than {MAX_SIZES} sizes; use a larger step (FROM..TO/STEP)"
        ))
    };
    let mut out: Vec<u32> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let num = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| err(&format!("'{s}' is not a whole number of bytes")))
        };
        if let Some((a, rest)) = item.split_once("..") {
            let (b, step) = match rest.split_once('/') {
                Some((b, s)) => (b, s),
                None => (rest, "128"),
            };
            // Range-check the ends and count the sizes before expanding anything.
            let (a, b, step) = (in_range(num(a)?)?, in_range(num(b)?)?, num(step)?);
            if step == 0 || b < a {
                return Err(err("a range is FROM..TO/STEP with FROM ≤ TO and STEP > 0"));
            }
            let n = ((b - a) / step) as usize + 1;
            if out.len() + n > MAX_SIZES {
                return Err(too_many());
            }
            out.extend((0..n as u32).map(|i| a + i * step));
        } else {
            if out.len() >= MAX_SIZES {
                return Err(too_many());
            }
            out.push(in_range(num(item)?)?);
        }
    }
    if out.is_empty() {
        return Err(err("no sizes given"));
    }
    for (i, s) in out.iter().enumerate() {
        if out[..i].contains(s) {
            return Err(err(&format!("{s} is listed twice")));
        }
    }
    Ok(out)
}

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

/// Default length of an rrul cell's loaded phase, seconds: with its 0.8 s ramps, 2.4 s
/// of loaded probes (48 of each type at the default 20/s).
pub const DEFAULT_RRUL_DURATION_S: f64 = 4.0;
/// Default idle phase of an rrul cell, seconds (20 idle probes of each type).
pub const DEFAULT_RRUL_IDLE_S: f64 = 1.0;
/// Shortest loaded phase (the engine's `MIN_LOADED_NS`), seconds.
pub const MIN_LOADED_S: f64 = 1.0;
/// Interval samples of an rrul run's parts, as flent's default 0.2 s step: throughput
/// and probe RTT over time.
pub const RRUL_INTERVAL_NS: u64 = 200_000_000;

/// What an rrul cell runs beyond its family and load write size (the size axis).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RrulPlan {
    pub opts: LoadedOpts,
    /// Length of the loaded phase, ns.
    pub duration_ns: u64,
    /// Interval samples of every part, ns.
    pub interval_ns: u64,
}

impl RrulPlan {
    /// The limits `dualperf run -t rrul` keeps, and at least 10 probes of each type
    /// in the loaded window.
    pub fn check(&self) -> Result<(), SpecError> {
        let secs = |key: &str, ns: u64, min: f64| {
            let v = ns as f64 / 1e9;
            if (min..=86_400.0).contains(&v) {
                Ok(())
            } else {
                Err(SpecError::Invalid(format!(
                    "{key} {v} s is out of range: give between {min} and 86400 s"
                )))
            }
        };
        secs(
            "load_duration_s (--load-duration)",
            self.duration_ns,
            MIN_LOADED_S,
        )?;
        secs("idle_s (--idle)", self.opts.idle_ns, 0.2)?;
        check(
            "load_streams (--load-streams)",
            self.opts.streams,
            1,
            wire::proto::MAX_STREAMS,
            "",
        )?;
        check(
            "probe_rate (--probe-rate)",
            self.opts.probe_rate,
            1,
            100_000,
            "per second",
        )?;
        check(
            "probe_size (--probe-size)",
            self.opts.probe_bytes,
            wire::datagram::HEADER_BYTES as u32,
            // UDP probes go over both families: the smaller limit.
            Family::V4.max_udp_payload_bytes(),
            "bytes",
        )?;
        if self.interval_ns != RRUL_INTERVAL_NS {
            return Err(SpecError::Invalid(format!(
                "rrul interval_ns {} is not {RRUL_INTERVAL_NS}",
                self.interval_ns
            )));
        }
        let probes = self.opts.probe_rate as f64 * self.loaded_probe_ns() as f64 / 1e9;
        if probes < 10.0 {
            return Err(SpecError::Invalid(format!(
                "rrul: {} probes per second over the {:.1} s loaded window give fewer than 10 probes of each type; raise probe_rate (--probe-rate) or load_duration_s (--load-duration)",
                self.opts.probe_rate,
                self.loaded_probe_ns() as f64 / 1e9
            )));
        }
        Ok(())
    }

    /// The ramp at each end of the loaded phase (the engine's rule: a fifth, 0.2–2 s).
    pub fn ramp_ns(&self) -> u64 {
        (self.duration_ns / 5).clamp(200_000_000, 2_000_000_000)
    }
    /// How long the loaded probes run.
    pub fn loaded_probe_ns(&self) -> u64 {
        self.duration_ns.saturating_sub(2 * self.ramp_ns())
    }
    /// One line for `--dry-run` and the report's metadata.
    pub fn describe(&self) -> String {
        let o = &self.opts;
        format!(
            "{} s idle, then {} s of load ({}, {} TCP stream(s) per direction, the size axis is the load's write size); UDP and TCP probes of {} bytes at {}/s each on their own flows; samples every {} ms",
            o.idle_ns as f64 / 1e9,
            self.duration_ns as f64 / 1e9,
            o.load.name(),
            o.streams,
            o.probe_bytes,
            o.probe_rate,
            self.interval_ns / 1_000_000
        )
    }
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

    /// Every limit a study keeps, however its spec arrived: flags, a spec file and a
    /// preset ([`SpecFile::resolve`] ends here) or a stored campaign
    /// (`--resume`). The one place these limits are checked.
    pub fn validate(&self) -> Result<(), SpecError> {
        check_axes(&self.families, &self.tests, &self.sizes_bytes)?;
        match self.bound {
            Bound::Count(n) => {
                check("count (--count)", n, 1, MAX_COUNT_PACKETS, "packets")?;
            }
            Bound::DurationNs(ns) => check_duration_s(ns as f64 / 1e9)?,
        }
        match self.rate {
            Some(Rate::BitsPerSec(b)) => {
                check("rate_bps (--rate)", b, 1, MAX_RATE_BPS, "bit/s")?;
            }
            Some(Rate::PacketsPerSec(p)) => {
                check("rate_pps (--rate)", p, 1, MAX_RATE_PPS, "packets/s")?;
            }
            None => {}
        }
        check(
            "streams (--streams)",
            self.streams,
            1,
            wire::proto::MAX_STREAMS,
            "",
        )?;
        if let Some(ns) = self.interval_ns {
            check_interval_ns(ns, self.bound)?;
        }
        if let Some(ns) = self.window_ns {
            check_window_ns(ns, self.bound)?;
        }
        check(
            "rr_timeout_ms (--rr-timeout-ms)",
            self.rr_timeout_ns / 1_000_000,
            1,
            MAX_RR_TIMEOUT_MS,
            "ms",
        )?;
        check(
            "warmup (--warmup)",
            self.warmup_runs,
            0,
            MAX_WARMUP_RUNS,
            "runs",
        )?;
        check("retries (--retries)", self.retries, 0, MAX_RETRIES, "")?;
        for opts in std::iter::once(&self.socket).chain(self.udp_socket.iter()) {
            wire::bounds::check_socket_opts(opts).map_err(|e| SpecError::Invalid(e.to_string()))?;
        }
        if let UdpMethod::Rfc2544(search) = &self.udp_method {
            search
                .check()
                .map_err(|e| SpecError::Invalid(e.to_string()))?;
        }
        if let Some(plan) = &self.rrul {
            plan.check()?;
        }
        if let Some(cv) = self.cv_target_pct.filter(|c| !(*c > 0.0 && *c <= 1000.0)) {
            return Err(SpecError::Invalid(format!(
                "cv_target_pct {cv} is out of range: give a percentage above 0 and at most 1000"
            )));
        }
        if let Some(p) = self
            .percent_of
            .as_deref()
            .filter(|p| !matches!(*p, "first" | "second"))
        {
            return Err(SpecError::Invalid(format!(
                "unknown percent_of '{p}' (use first: over IPv4 or the first system, as the studies do; or second)"
            )));
        }
        check_repetition(&self.repetition)?;
        let cells = (self.families.len() * self.tests.len() * self.sizes_bytes.len()) as u64;
        let per_cell = u64::from(self.warmup_runs)
            + match self.repetition {
                Repetition::Fixed { runs } => u64::from(runs),
                Repetition::Confidence { max_runs, .. } => u64::from(max_runs),
            };
        let planned = cells.saturating_mul(per_cell);
        if planned > MAX_PLANNED_RUNS {
            return Err(SpecError::Invalid(format!(
                "the study plans up to {planned} runs ({cells} cells); at most {MAX_PLANNED_RUNS}: use fewer sizes or runs"
            )));
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    #[test]
    fn runs_are_sampled_ten_times_unless_an_interval_is_given() {
        let at = |duration_s: f64, interval_ms: Option<u64>| {
            SpecFile {
                duration_s: Some(duration_s),
                interval_ms,
                ..SpecFile::default()
            }
            .resolve(1)
            .unwrap()
            .interval_ns
        };
        assert_eq!(at(0.5, None), Some(50_000_000), "0.5 s runs: every 50 ms");
        assert_eq!(at(60.0, None), Some(1_000_000_000), "at most every second");
        assert_eq!(
            at(0.05, None),
            Some(10_000_000),
            "at least the protocol's 10 ms"
        );
        assert_eq!(at(0.5, Some(200)), Some(200_000_000), "as given");
        assert_eq!(at(0.5, Some(0)), None, "none");
    }

    #[test]
    fn hostile_or_overlong_text_is_refused_where_it_enters() {
        for label in ["x\r\\input{/etc/hostname}\r", "a\nb", "a\u{0}b"] {
            let spec = SpecFile {
                label: Some(label.into()),
                ..SpecFile::default()
            };
            let e = spec.resolve(1).unwrap_err().to_string();
            assert!(
                e.contains("label contains the control character"),
                "{label:?}: {e}"
            );
        }
        let spec = SpecFile {
            label: Some("x".repeat(10_000)),
            ..SpecFile::default()
        };
        let e = spec.resolve(1).unwrap_err().to_string();
        assert!(
            e.contains("label is 10000 characters long; at most 256"),
            "{e}"
        );
        let spec = SpecFile {
            size_dist: Some("=".repeat(300)),
            ..SpecFile::default()
        };
        assert!(spec
            .resolve(1)
            .unwrap_err()
            .to_string()
            .contains("size_dist is 300"));
        let spec = SpecFile {
            tests: Some(vec!["udp\u{1b}[2J".into()]),
            ..SpecFile::default()
        };
        assert!(spec
            .resolve(1)
            .unwrap_err()
            .to_string()
            .contains("tests contains"));
        let spec = SpecFile {
            label: Some("Fedora 39 — über".into()),
            ..SpecFile::default()
        };
        assert_eq!(spec.resolve(1).unwrap().label, "Fedora 39 — über");
    }

    use super::*;

    #[test]
    fn sizes_parse_lists_ranges_and_mixes() {
        assert_eq!(parse_sizes("128,384, 640").unwrap(), vec![128, 384, 640]);
        assert_eq!(
            parse_sizes("128..1408/256").unwrap(),
            vec![128, 384, 640, 896, 1152, 1408]
        );
        assert_eq!(parse_sizes("100..400").unwrap(), vec![100, 228, 356]);
        assert_eq!(
            parse_sizes("64,128..384/128").unwrap(),
            vec![64, 128, 256, 384]
        );
        assert!(parse_sizes("128,128").is_err());
        assert!(parse_sizes("400..100/10").is_err());
        assert!(parse_sizes("1..9/0").is_err());
        assert!(parse_sizes("abc").is_err());
        assert!(parse_sizes("").is_err());
    }

    #[test]
    fn huge_size_ranges_are_refused_before_they_are_expanded() {
        // Regression (issue 11.1): this grew by about 1.2 GB/s before the check.
        let t = std::time::Instant::now();
        for text in ["1..4294967295/1", "1..65507/1", "1..9999999999/1", "70000"] {
            assert!(parse_sizes(text).is_err(), "accepted {text}");
        }
        let e = parse_sizes("1..65507/1").unwrap_err().to_string();
        assert!(e.contains("more than 1000 sizes"), "{e}");
        let e = parse_sizes("1..4294967295/1").unwrap_err().to_string();
        assert!(e.contains("out of range (1..=65507 bytes)"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(parse_sizes("1..1000/1").unwrap().len(), MAX_SIZES);
        assert!(parse_sizes("1..1000/1,1001").is_err());
        let long_list = format!("sizes = [{}]\n", vec!["1"; MAX_SIZES + 1].join(","));
        assert!(SpecFile::from_toml(&long_list).unwrap().resolve(0).is_err());
    }

    #[test]
    fn random_size_texts_never_panic_or_grow_past_the_cap() {
        // A small deterministic fuzz of the sizes grammar (cargo-fuzz needs nightly).
        let mut rng = crate::plan::SplitMix64::new(11);
        let alphabet: Vec<char> = "0123456789.,/ -9999999999".chars().collect();
        let t = std::time::Instant::now();
        for _ in 0..20_000 {
            let len = rng.below(24) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect();
            if let Ok(v) = parse_sizes(&text) {
                assert!(!v.is_empty() && v.len() <= MAX_SIZES, "{text}");
                assert!(v.iter().all(|&s| (1..=65_507).contains(&s)), "{text}");
            }
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn every_numeric_key_is_range_checked() {
        let bad = [
            ("runs = 4294967295\n", "runs"),
            ("confidence = 95\nmax_runs = 4294967295\n", "max-runs"),
            ("warmup = 4294967295\n", "warmup"),
            ("retries = 4294967295\n", "retries"),
            ("streams = 1000\n", "streams"),
            ("count = 18446744073709551615\n", "count"),
            ("rate_bps = 0\n", "rate_bps"),
            ("rate_pps = 18446744073709551615\n", "rate_pps"),
            ("interval_ms = 1\n", "interval_ms"),
            ("interval_ms = 18446744073709551615\n", "interval_ms"),
            ("duration_s = 86400.0\ninterval_ms = 10\n", "samples"),
            ("rr_timeout_ms = 0\n", "rr_timeout_ms"),
            ("rr_timeout_ms = 18446744073709551615\n", "rr_timeout_ms"),
            ("duration_s = inf\n", "duration"),
            ("runs = 10000\nsizes = '64..1063/1'\n", "at most 1000000"),
        ];
        for (text, words) in bad {
            let e = SpecFile::from_toml(text)
                .and_then(|f| f.resolve(0))
                .expect_err(text)
                .to_string();
            assert!(e.contains(words), "{text}: {e}");
        }
    }

    #[test]
    fn later_layers_override_and_replace_the_exclusive_choice() {
        let file = SpecFile::from_toml("count = 1000\nconfidence = 99\nlabel = 'a'\n").unwrap();
        let flags = SpecFile {
            duration_s: Some(2.0),
            runs: Some(4),
            ..SpecFile::default()
        };
        let s = file.merge(&flags).resolve(0).unwrap();
        assert_eq!(s.bound, Bound::DurationNs(2_000_000_000));
        assert_eq!(s.repetition, Repetition::Fixed { runs: 4 });
        assert_eq!(s.label, "a");
        let s = file.resolve(0).unwrap();
        assert_eq!(s.bound, Bound::Count(1000));
        assert!(
            matches!(s.repetition, Repetition::Confidence { level_pct, .. } if level_pct == 99.0)
        );
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        let bad = [
            "count = 1\nduration_s = 1.0\n",
            "runs = 3\nconfidence = 95\n",
            "families = [5]\n",
            "tests = ['sctp']\n",
            "order = 'sideways'\n",
            "confidence = 95\nmin_runs = 1\n",
            "confidence = 100\n",
            "sizes = [0]\n",
            "duration_s = -1.0\n",
            "unknown_key = 1\n",
        ];
        for text in bad {
            let r = SpecFile::from_toml(text).and_then(|f| f.resolve(0));
            assert!(r.is_err(), "accepted: {text}");
        }
    }

    #[test]
    fn udp_datapath_resolves_from_toml_and_refuses_unknown_paths() {
        let s = SpecFile::from_toml("udp_datapath = 'per-datagram'\n")
            .unwrap()
            .resolve(1)
            .unwrap();
        assert_eq!(s.udp_datapath, UdpDatapath::PerDatagram);
        let s = SpecFile::default().resolve(1).unwrap();
        assert_eq!(s.udp_datapath, UdpDatapath::Auto);
        let e = SpecFile::from_toml("udp_datapath = 'fast'\n")
            .unwrap()
            .resolve(1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--udp-datapath") && e.contains("per-datagram"),
            "{e}"
        );
    }

    #[test]
    fn udp_method_defaults_to_rfc2544_without_a_rate_and_is_recorded() {
        let s = SpecFile::default().resolve(0).unwrap();
        assert_eq!(s.udp_method, UdpMethod::Rfc2544(RateSearch::default()));
        assert!(s.udp_method.describe(None).contains("RFC 2544"));
        let paced = SpecFile::from_toml("rate_pps = 1000\n")
            .unwrap()
            .resolve(0)
            .unwrap();
        assert_eq!(paced.udp_method, UdpMethod::Fixed);
        // Regression: a packet rate given as a flag (a layer over the defaults) was
        // dropped by the merge, so `study -b 20kpps` ran unpaced.
        let layered = SpecFile::default()
            .merge(&SpecFile {
                rate_pps: Some(20_000),
                ..SpecFile::default()
            })
            .resolve(0)
            .unwrap();
        assert_eq!(
            (layered.udp_method, layered.rate),
            (UdpMethod::Fixed, Some(Rate::PacketsPerSec(20_000)))
        );
        let unpaced = SpecFile::from_toml("udp_method = 'fixed'\n")
            .unwrap()
            .resolve(0)
            .unwrap();
        assert_eq!((unpaced.udp_method, unpaced.rate), (UdpMethod::Fixed, None));
        let tuned = SpecFile::from_toml("loss_threshold_pct = 0.0\nsearch_steps = 8\n")
            .unwrap()
            .resolve(0)
            .unwrap();
        assert_eq!(
            tuned.udp_method,
            UdpMethod::Rfc2544(RateSearch {
                loss_threshold_pct: 0.0,
                steps: 8
            })
        );
        for bad in [
            "udp_method = 'rfc2544'\nrate_pps = 10\n",
            "udp_method = 'fast'\n",
            "search_steps = 0\n",
            "loss_threshold_pct = 100.0\n",
        ] {
            assert!(
                SpecFile::from_toml(bad).unwrap().resolve(0).is_err(),
                "{bad}"
            );
        }
        // A campaign stored before the method was recorded ran unpaced.
        let mut json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        json.as_object_mut().unwrap().remove("udp_method");
        let old = StudySpec::from_json(&json.to_string()).unwrap();
        assert_eq!(old.udp_method, UdpMethod::Fixed);
    }

    #[test]
    fn spec_round_trips_through_json() {
        let s = SpecFile::from_toml("order='random'\nwarmup=2\n[socket]\nnodelay=true\n")
            .unwrap()
            .resolve(1234)
            .unwrap();
        assert_eq!(s.seed, 1234);
        assert_eq!(StudySpec::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn on_off_periods_are_recorded_and_need_a_schedule() {
        let s = SpecFile::from_toml(
            "profile = 'voip-g729'\non_time = 'exp:1s'\noff_time = 'exp:1350ms'\ntests = ['udp-stream']\n",
        )
        .unwrap()
        .resolve(7)
        .unwrap();
        let t = s.traffic.clone().expect("model");
        assert_eq!(
            (t.on_time.as_deref(), t.off_time.as_deref()),
            (Some("exp:1s"), Some("exp:1350ms"))
        );
        assert_eq!(StudySpec::from_json(&s.to_json()).unwrap(), s);
        for (toml, why) in [
            // No gaps: nothing to gate (a TCP stream takes no rate).
            (
                "on_time = 'exp:1s'\noff_time = 'exp:1s'\ntests = ['tcp-stream']\n",
                "gate a schedule",
            ),
            ("on_time = 'exp:1s'\nidt = 'exp:1ms'\n", "come together"),
        ] {
            let e = SpecFile::from_toml(toml)
                .unwrap()
                .resolve(1)
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{toml}: {e}");
        }
        // A rate paces a UDP stream alone.
        SpecFile::from_toml(
            "on_time = 'exp:1s'\noff_time = 'exp:1s'\ntests = ['udp-stream']\nrate_pps = 50\n",
        )
        .unwrap()
        .resolve(1)
        .unwrap();
    }

    /// Which stream tests measured the load offered rather than the path: scheduled
    /// models (UDP and TCP), a fixed UDP rate; not the default study's RFC 2544 search,
    /// nor an unpaced stream whose sizes alone are drawn.
    #[test]
    fn offered_load_names_the_streams_that_kept_their_own_schedule() {
        let kinds = |toml: &str| {
            let s = SpecFile::from_toml(toml).unwrap().resolve(1).unwrap();
            s.offered_load().keys().copied().collect::<Vec<_>>()
        };
        assert_eq!(kinds(""), []);
        assert_eq!(kinds("size_dist = 'uniform:64..1400'\n"), []);
        assert_eq!(
            kinds("idt = 'exp:1ms'\n"),
            [TestKind::TcpStream, TestKind::UdpStream]
        );
        assert_eq!(
            kinds("rate_bps = 100000000\nudp_method = 'fixed'\n"),
            [TestKind::UdpStream]
        );
    }

    #[test]
    fn a_traffic_model_shapes_udp_streams_replaces_the_size_axis_and_is_recorded() {
        let s = SpecFile::from_toml("profile = 'voip-g711'\ntests = ['udp-stream', 'udp-rr']\n")
            .unwrap()
            .resolve(7)
            .unwrap();
        let t = s.traffic.clone().expect("model");
        assert_eq!(t.profile.as_deref(), Some("voip-g711"));
        assert_eq!(t.seed, 7, "default seed: the study's");
        assert_eq!(s.sizes_bytes, [172], "the constant size labels the cells");
        assert_eq!(
            s.udp_method,
            UdpMethod::Fixed,
            "no rate search under a model"
        );
        let cells = crate::plan::cells(&s);
        for c in &cells {
            assert_eq!(
                c.test.traffic.is_some(),
                c.kind == TestKind::UdpStream,
                "{}",
                c.label()
            );
        }
        assert_eq!(StudySpec::from_json(&s.to_json()).unwrap(), s);
        // Its udp-stream throughput is the load it offered, and the report is told so.
        let offered = s.offered_load();
        assert_eq!(
            offered.keys().copied().collect::<Vec<_>>(),
            [TestKind::UdpStream]
        );
        assert!(offered[&TestKind::UdpStream].contains("profile voip-g711"));
        // Uniform sizes: their mean labels the cells; an explicit seed is kept.
        let s = SpecFile::from_toml("size_dist = 'uniform:64..1400'\ntraffic_seed = 3\n")
            .unwrap()
            .resolve(0)
            .unwrap();
        assert_eq!(
            (s.sizes_bytes.clone(), s.traffic.unwrap().seed),
            (vec![732], 3)
        );
        for (toml, says) in [
            (
                "size_dist = 'uniform:64..1400'\nsizes = [128, 256]\n",
                "replaces the size axis",
            ),
            (
                "profile = 'dns'\ntests = ['tcp-rr']\n",
                "add one to --tests",
            ),
            ("profile = 'skype'\n", "unknown profile"),
            ("idt = 'exp:-1ms'\n", "traffic model"),
            ("traffic_seed = 1\n", "give one of them"),
            ("profile = 'dns'\nudp_method = 'rfc2544'\n", "rfc2544"),
        ] {
            let e = SpecFile::from_toml(toml).unwrap().resolve(0).unwrap_err();
            assert!(e.to_string().contains(says), "{toml}: {e}");
        }
    }
}
