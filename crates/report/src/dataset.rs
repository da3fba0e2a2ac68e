//! The report's input: campaigns with their host metadata and run rows. Pure data; the
//! CLI fills it from the store, tests build it by hand.

use std::collections::BTreeMap;
use wire::spec::{Direction, Family, TestKind};

/// Everything a report is made from. Several campaigns = several compared systems,
/// named by their labels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dataset {
    pub campaigns: Vec<CampaignData>,
}

/// One campaign (one system under test).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CampaignData {
    pub id: i64,
    /// The system's name in tables and legends.
    pub label: String,
    /// Free-form facts shown as they are (command line, created, spec).
    pub facts: BTreeMap<String, String>,
    /// Host role ("client", "server", …) → metadata key → value.
    pub hosts: BTreeMap<String, BTreeMap<String, String>>,
    pub runs: Vec<RunRow>,
    /// The campaign's confidence target, if it repeated cells to one.
    pub target: Option<ConfidenceTarget>,
    /// Cells that stopped (at their maximum runs) without meeting the target.
    pub missed: Vec<MissedCell>,
    /// The per-interval samples of the runs chosen for time-series figures (see
    /// [`crate::timeseries::select`]); only those runs', so memory stays bounded.
    pub series: Vec<RunSeries>,
    /// Stream tests whose throughput is the load the sender offered (it followed a
    /// traffic model's schedule, or a fixed rate), with why: what the path could carry
    /// was not measured, so the header-overhead comparison does not apply to them.
    pub offered_load: BTreeMap<TestKind, String>,
    /// udp-stream measured as an RFC 2544 throughput search: the loss threshold every
    /// run's chosen trial kept to, %. Its loss is then the method's criterion, not a
    /// finding. `None` for a fixed offered rate.
    pub loss_bound_pct: Option<f64>,
    /// The study's coefficient-of-variation criterion per cell, % (seed 004's 10 %).
    pub cv_target_pct: Option<f64>,
}

/// The per-interval samples of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSeries {
    /// Index into the campaign's `runs` of the run the samples are of.
    pub run_index: usize,
    /// The run's id in the results database (shown in the legend, so a reader can find
    /// it with `dualperf export --intervals`).
    pub run_id: i64,
    /// In interval order.
    pub samples: Vec<IntervalCounts>,
    /// Per-window statistics (`--stats-window`, stored as `window_*` samples), in window
    /// order; empty when the run had none.
    pub windows: Vec<WindowSample>,
    /// An rrul run's samples (stored as `rrul_*` samples), in time order; empty for
    /// every other test.
    pub loaded: Vec<LoadedSample>,
}

/// The finite, non-negative values of `m` under names `prefix` + key, looked up by
/// key; `None` when no name in `m` carries the prefix (a sample of another kind).
fn prefixed<'a>(
    m: &'a BTreeMap<String, f64>,
    prefix: &'static str,
) -> Option<impl Fn(&str) -> Option<f64> + 'a> {
    m.keys()
        .any(|k| k.starts_with(prefix))
        .then_some(move |k: &str| {
            m.get(&format!("{prefix}{k}"))
                .copied()
                .filter(|v| v.is_finite() && *v >= 0.0)
        })
}

/// One interval of one part of an rrul run, on the test's timeline (ns since its idle
/// probes started, the client's clock): what the client counted in it. `None` where
/// the sample is of another part.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoadedSample {
    pub start_ns: i64,
    pub end_ns: i64,
    /// Bytes the client wrote to its upload streams / read from its download streams.
    pub upload_sent_bytes: Option<f64>,
    pub download_recv_bytes: Option<f64>,
    /// (Σ RTT ns, probes answered) of the UDP and TCP probes, and whether the sample is
    /// of the loaded phase (else the idle one).
    pub udp_rtt: Option<(f64, f64)>,
    pub tcp_rtt: Option<(f64, f64)>,
    pub loaded_phase: bool,
}

impl LoadedSample {
    /// Prefix of the stored metric names of an rrul sample.
    pub const PREFIX: &'static str = "rrul_";

    /// The stored metric map of this sample (what [`Self::from_metrics`] reads back):
    /// `rrul_upload_sent_bytes`, `rrul_download_recv_bytes`, and per probe type
    /// `rrul_{idle|loaded}_{udp|tcp}_rtt_sum_ns` and `…_rtt_count`.
    pub fn to_metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        let p = Self::PREFIX;
        if let Some(b) = self.upload_sent_bytes {
            m.insert(format!("{p}upload_sent_bytes"), b);
        }
        if let Some(b) = self.download_recv_bytes {
            m.insert(format!("{p}download_recv_bytes"), b);
        }
        let phase = if self.loaded_phase { "loaded" } else { "idle" };
        for (probe, rtt) in [("udp", self.udp_rtt), ("tcp", self.tcp_rtt)] {
            if let Some((sum, n)) = rtt {
                m.insert(format!("{p}{phase}_{probe}_rtt_sum_ns"), sum);
                m.insert(format!("{p}{phase}_{probe}_rtt_count"), n);
            }
        }
        m
    }

    /// From a stored sample's metric map, if it is an rrul sample.
    pub fn from_metrics(start_ns: i64, end_ns: i64, m: &BTreeMap<String, f64>) -> Option<Self> {
        let get = prefixed(m, Self::PREFIX)?;
        let mut s = LoadedSample {
            start_ns,
            end_ns,
            upload_sent_bytes: get("upload_sent_bytes"),
            download_recv_bytes: get("download_recv_bytes"),
            ..LoadedSample::default()
        };
        for phase in ["idle", "loaded"] {
            for (probe, slot) in [("udp", &mut s.udp_rtt), ("tcp", &mut s.tcp_rtt)] {
                let sum = get(&format!("{phase}_{probe}_rtt_sum_ns"));
                let n = get(&format!("{phase}_{probe}_rtt_count"));
                if let (Some(sum), Some(n)) = (sum, n) {
                    *slot = Some((sum, n));
                    s.loaded_phase = phase == "loaded";
                }
            }
        }
        Some(s)
    }
}

/// One window of `--stats-window` statistics as stored: a span of the sender's send
/// time (ns from the data start) and what the run's joined sides measured for the
/// datagrams sent in it. `None` where that window had no such figure (no datagram
/// arrived; no one-way delay on that datapath).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WindowSample {
    pub start_ns: i64,
    pub end_ns: i64,
    pub bitrate_bps: Option<f64>,
    pub loss_pct: Option<f64>,
    pub jitter_ns: Option<f64>,
    pub owd_mean_ns: Option<f64>,
}

impl WindowSample {
    /// Prefix of the stored metric names of a window sample (never an interval's).
    pub const PREFIX: &'static str = "window_";

    /// From a stored sample's metric map, if it is a window sample (its names carry
    /// [`Self::PREFIX`]); `None` for an interval sample.
    pub fn from_metrics(start_ns: i64, end_ns: i64, m: &BTreeMap<String, f64>) -> Option<Self> {
        let get = prefixed(m, Self::PREFIX)?;
        Some(WindowSample {
            start_ns,
            end_ns,
            bitrate_bps: get("bitrate_bps"),
            loss_pct: get("loss_pct").map(|l| l.min(100.0)),
            jitter_ns: get("jitter_ns"),
            owd_mean_ns: get("owd_mean_ns"),
        })
    }
}

/// One interval sample as the engine records it: the client's own counters over a
/// window of its own clock (ns from when the client's data workers started). `None`
/// where the sample did not record that count.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IntervalCounts {
    pub start_ns: i64,
    pub end_ns: i64,
    pub sent_bytes: Option<f64>,
    pub recv_bytes: Option<f64>,
    pub sent_packets: Option<f64>,
    pub recv_packets: Option<f64>,
}

impl IntervalCounts {
    /// From a stored sample's metric map (`wire::metrics` names).
    pub fn from_metrics(start_ns: i64, end_ns: i64, m: &BTreeMap<String, f64>) -> Self {
        let get = |k: &str| m.get(k).copied().filter(|v| v.is_finite() && *v >= 0.0);
        IntervalCounts {
            start_ns,
            end_ns,
            sent_bytes: get(wire::metrics::SENT_BYTES),
            recv_bytes: get(wire::metrics::RECV_BYTES),
            sent_packets: get(wire::metrics::SENT_PACKETS),
            recv_packets: get(wire::metrics::RECV_PACKETS),
        }
    }
}

/// A campaign's confidence target: the `level_pct` interval of each counted metric
/// within `width_pct` % of its mean (full width).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConfidenceTarget {
    pub level_pct: f64,
    pub width_pct: f64,
}

/// A cell that missed its confidence target, with its widest counted metric.
#[derive(Debug, Clone, PartialEq)]
pub struct MissedCell {
    pub family: Family,
    pub kind: TestKind,
    pub direction: Direction,
    pub payload_bytes: u32,
    /// Counted runs of the cell.
    pub runs: usize,
    /// The counted metric whose interval was widest (from `wire::metrics`).
    pub metric: String,
    /// Its achieved full interval width, % of the mean.
    pub width_pct: f64,
}

impl MissedCell {
    /// Runs the target would roughly need: the interval narrows with √n, so
    /// n·(achieved / target)², rounded up (Student t's own narrowing ignored).
    /// `None` when the width is undefined (fewer than 2 runs, a zero mean).
    pub fn runs_needed(&self, target_width_pct: f64) -> Option<u64> {
        let ratio = self.width_pct / target_width_pct;
        let need = self.runs as f64 * ratio * ratio;
        (need.is_finite() && target_width_pct > 0.0 && need < 1e15).then(|| need.ceil() as u64)
    }
}

impl CampaignData {
    /// Whether client and server ran on one host (the embedded loopback server, a
    /// loopback target, or a network-namespace lab on this machine), so that CPU
    /// figures are the two ends together. Read from the client's recorded metadata.
    /// The server ran inside the client's process (the study's built-in server), so
    /// the client process's CPU is both ends'.
    pub fn embedded(&self) -> bool {
        self.hosts
            .get("client")
            .and_then(|c| c.get("study.target"))
            .is_some_and(|t| t.trim() == "embedded")
    }

    pub fn one_host(&self) -> bool {
        let Some(client) = self.hosts.get("client") else {
            return false;
        };
        let target = client.get("study.target").map_or("", |t| t.trim());
        let host = target.split_whitespace().next().unwrap_or("");
        target == "embedded"
            || target == "lab"
            || host == "localhost"
            || host.starts_with("127.")
            || host == "::1"
            || host == "[::1]"
            || client.get("iface.name").is_some_and(|n| n == "lo")
    }
}

/// Outcome of one run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    Ok,
    Failed(String),
}

/// One run: one measurement of one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub family: Family,
    pub kind: TestKind,
    pub direction: Direction,
    pub payload_bytes: u32,
    pub repetition: u32,
    pub warmup: bool,
    pub outcome: RunOutcome,
    /// Metric name (from `wire::metrics`) → value.
    pub metrics: BTreeMap<String, f64>,
}

impl RunRow {
    /// Whether this run counts in the statistics (finished and not a warm-up).
    pub fn counts(&self) -> bool {
        !self.warmup && self.outcome == RunOutcome::Ok
    }
}
