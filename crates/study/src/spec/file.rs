//! What a user wrote: [`SpecFile`], every field optional, parsed from TOML and layered
//! with [`SpecFile::merge`].

use super::*;
use serde::{Deserialize, Serialize};
use wire::spec::SocketOpts;

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
    pub(super) fn check_text(&self) -> Result<(), SpecError> {
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
}
