//! A report's input: campaigns with their host metadata and run rows, as read from the
//! results database. Plain data, and how it is stored and checked: `runner` fills it
//! from the store (`runner::report_data`), the report reads it, tests build it by hand.
//! The stored form of interval, window and rrul samples ([`IntervalCounts`],
//! [`WindowSample`], [`LoadedSample`]) lives here with the types, so that what writes
//! samples and what reads them back share one definition.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
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
    /// The per-interval samples of the runs chosen for time-series figures (the
    /// report's `timeseries::select` chooses them); only those runs', so memory stays
    /// bounded.
    pub series: Vec<RunSeries>,
    /// Runs read from the database but not counted because a value the report reads is
    /// non-finite or impossible (see [`implausible`]), the first [`LEFT_OUT_LISTED`]
    /// with why; `left_out_total` counts them all.
    pub left_out: Vec<LeftOutRun>,
    pub left_out_total: usize,
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
    /// The link state its measured runs recorded (`client.link.before.tx_mcs`, …, from
    /// `net::wifi`): (applied key, value, runs with it); empty where none was recorded.
    pub link_values: Vec<(String, String, u64)>,
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
    pub metrics: Metrics,
}

impl RunRow {
    /// Whether this run counts in the statistics (finished and not a warm-up).
    pub fn counts(&self) -> bool {
        !self.warmup && self.outcome == RunOutcome::Ok
    }
}

/// A run's metric values, kept small for campaigns of a million runs: the names (sorted)
/// are shared by every run with the same set ([`MetricsInterner`]), the values sit in
/// one allocation. Read like the `BTreeMap` it replaces (`get`, `contains_key`, `[name]`).
#[derive(Clone, Default, PartialEq)]
pub struct Metrics {
    names: Arc<[Box<str>]>,
    values: Box<[f64]>,
}

impl Metrics {
    fn position(&self, name: &str) -> Option<usize> {
        self.names.binary_search_by(|n| (**n).cmp(name)).ok()
    }

    pub fn get(&self, name: &str) -> Option<&f64> {
        self.position(name).and_then(|i| self.values.get(i))
    }

    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// (name, value) in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> + '_ {
        self.names
            .iter()
            .map(|n| &**n)
            .zip(self.values.iter().copied())
    }

    /// As a map (for code that takes one: `study::confidence`).
    pub fn to_map(&self) -> BTreeMap<String, f64> {
        self.iter().map(|(k, v)| (k.to_string(), v)).collect()
    }

    /// Set a value; the previous one, if any. (Copies the run's names: for tests and
    /// fixtures, not for loading.)
    pub fn insert(&mut self, name: String, value: f64) -> Option<f64> {
        let mut map = self.to_map();
        let old = map.insert(name, value);
        *self = Metrics::from(map);
        old
    }

    pub fn remove(&mut self, name: &str) -> Option<f64> {
        let mut map = self.to_map();
        let old = map.remove(name);
        *self = Metrics::from(map);
        old
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl std::ops::Index<&str> for Metrics {
    type Output = f64;
    fn index(&self, name: &str) -> &f64 {
        match self.get(name) {
            Some(v) => v,
            None => panic!("no metric {name} in this run"),
        }
    }
}

impl From<BTreeMap<String, f64>> for Metrics {
    fn from(map: BTreeMap<String, f64>) -> Metrics {
        MetricsInterner::default().make(map)
    }
}

impl<const N: usize> From<[(String, f64); N]> for Metrics {
    fn from(pairs: [(String, f64); N]) -> Metrics {
        Metrics::from(BTreeMap::from(pairs))
    }
}

impl FromIterator<(String, f64)> for Metrics {
    fn from_iter<I: IntoIterator<Item = (String, f64)>>(it: I) -> Metrics {
        Metrics::from(it.into_iter().collect::<BTreeMap<_, _>>())
    }
}

/// Shares the name list between runs that stored the same metrics (a campaign has a
/// few such sets, one per test kind), so a run costs its values and two pointers.
#[derive(Default)]
pub struct MetricsInterner {
    sets: HashMap<Vec<String>, Arc<[Box<str>]>>,
}

impl MetricsInterner {
    pub fn make(&mut self, map: BTreeMap<String, f64>) -> Metrics {
        let (names, values): (Vec<String>, Vec<f64>) = map.into_iter().unzip();
        let names = match self.sets.get(&names) {
            Some(shared) => shared.clone(),
            None => {
                let shared: Arc<[Box<str>]> =
                    names.iter().map(|n| n.clone().into_boxed_str()).collect();
                self.sets.insert(names, shared.clone());
                shared
            }
        };
        Metrics {
            names,
            values: values.into_boxed_slice(),
        }
    }
}

/// The stored metrics a report reads (its views, RTT percentiles and ladders, the
/// confidence target's metrics, the rrul table, the overhead and loss checks). A
/// run's other metrics (byte and packet counters, IPDV, one-way delay, framing,
/// service demand, …) are not loaded: a million runs of 25 metrics would not fit in
/// bounded memory. The report's `report_reads_every_metric_it_uses` checks the list
/// against its fixture's report.
pub fn report_reads(name: &str) -> bool {
    REPORT_READS.contains(&name) || is_rtt_ladder(name)
}

/// SQL `LIKE` patterns matching (at least) the RTT ladders [`report_reads`] takes: with
/// [`REPORT_READS`], what the store is asked for (`_` matches any character, so these
/// match more; [`report_reads`] decides).
pub const REPORT_READS_LIKE: &[&str] = &["idle%rtt_q%", "loaded%rtt_q%"];

/// The metric names a report reads besides the RTT ladders (see [`report_reads`]).
pub const REPORT_READS: &[&str] = {
    use wire::metrics as m;
    &[
        m::THROUGHPUT_BPS,
        m::TRANSACTIONS_PER_S,
        m::LOSS_PCT,
        m::RECEIVER_LIMITED,
        m::JITTER_RFC3550_NS,
        m::RTT_MEAN_NS,
        m::RTT_P50_NS,
        m::RTT_P90_NS,
        m::RTT_P99_NS,
        m::RTT_P999_NS,
        m::CPU_LOCAL_PCT,
        m::CPU_REMOTE_PCT,
        m::PROC_LOCAL_PCT,
        // A tbf bucket's share of the link ceiling depends on the runs' length.
        m::DURATION_S,
        m::RATE_SEARCH_TRIALS,
        m::UPLOAD_BPS,
        m::DOWNLOAD_BPS,
        m::RPM_LOADED,
        m::RPM_IDLE,
        m::RPM_REFERENCE,
        m::IDLE_UDP_RTT_P50_NS,
        m::IDLE_TCP_RTT_P50_NS,
        m::LOADED_UDP_RTT_P50_NS,
        m::LOADED_TCP_RTT_P50_NS,
        m::ADDED_UDP_RTT_P50_NS,
        m::ADDED_TCP_RTT_P50_NS,
        m::CONNECTIONS_PER_S,
        m::CONNECT_TIME_P50_NS,
        m::CONNECT_TIME_P90_NS,
        m::CONNECT_TIME_P99_NS,
        m::TRANSACTION_TIME_MEAN_NS,
    ]
};

/// `{idle|loaded}_{udp|tcp}_rtt_qNNN_ns` (`wire::metrics::rtt_ladder_name`).
fn is_rtt_ladder(name: &str) -> bool {
    let rest = name
        .strip_prefix("idle_")
        .or_else(|| name.strip_prefix("loaded_"));
    let rest = rest.and_then(|r| r.strip_prefix("udp_").or_else(|| r.strip_prefix("tcp_")));
    rest.and_then(|r| r.strip_prefix("rtt_q"))
        .and_then(|r| r.strip_suffix("_ns"))
        .is_some_and(|q| !q.is_empty() && q.bytes().all(|b| b.is_ascii_digit()))
}

/// Why a stored value cannot be a measurement, checked as values are read for a
/// report with the rules a peer's values meet when received (`wire::plausible`):
/// finite; rates, RTTs (not the latency added under load, a difference), jitter and
/// counts of trials at least 0; loss within 0–100 %;
/// system and busiest-core CPU within 0–100 %, a process's within 100 % × the host's
/// `cores` (4096 when its metadata does not say). `None` when the value is possible.
pub fn implausible(name: &str, value: f64, cores: Option<u32>) -> Option<String> {
    use wire::metrics as m;
    use wire::plausible::{non_negative, percentage};
    let cpu = name.starts_with("cpu_") && name.ends_with("_pct");
    let process = name.starts_with("proc_") && name.ends_with("_pct");
    let physical = name.ends_with("_bps")
        || name.ends_with("_per_s")
        || name.ends_with("_pps")
        || name.starts_with("rpm_")
        // Latency added under load is a difference of two RTT medians: it may be
        // negative (the loaded median below the idle one), so only RTTs themselves.
        || (name.contains("rtt") && name.ends_with("_ns") && !name.starts_with("added_"))
        || name.starts_with("jitter")
        || name == m::RATE_SEARCH_TRIALS;
    let verdict = if !value.is_finite() {
        Err(format!("{name} = {value} (not a finite number)"))
    } else if name == m::LOSS_PCT && !(0.0..=100.0).contains(&value) {
        Err(format!("{name} = {value} % (must be within 0–100 %)"))
    } else if cpu {
        percentage(name, value, 100.0).map_err(|e| e.to_string())
    } else if process {
        let cores = f64::from(cores.filter(|&n| n > 0).unwrap_or(4096));
        percentage(name, value, 100.0 * cores).map_err(|e| e.to_string())
    } else if physical {
        non_negative(name, value).map_err(|e| e.to_string())
    } else {
        Ok(())
    };
    verdict.err()
}

/// How many left-out runs a report lists by id (it counts them all).
pub const LEFT_OUT_LISTED: usize = 20;

/// A run left out of a report, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOutRun {
    /// Its id in the results database.
    pub run_id: i64,
    pub family: Family,
    pub kind: TestKind,
    pub payload_bytes: u32,
    pub reason: String,
}

impl CampaignData {
    /// Check a run's values as it is read ([`implausible`], with the cores the
    /// campaign's client and server metadata record): a possible run is added to
    /// `runs`; another is counted as left out (listed while fewer than
    /// [`LEFT_OUT_LISTED`] are). Returns whether the run was added.
    pub fn push_checked(&mut self, run_id: i64, run: RunRow) -> bool {
        let cores = |role: &str| {
            self.hosts
                .get(role)
                .and_then(|m| m.get("cpu.cores"))
                .and_then(|c| c.trim().parse::<u32>().ok())
        };
        let (local, remote) = (cores("client"), cores("server"));
        let why = run.metrics.iter().find_map(|(name, v)| {
            let cores = if name.contains("remote") {
                remote
            } else {
                local
            };
            implausible(name, v, cores)
        });
        match why {
            None => {
                self.runs.push(run);
                true
            }
            Some(reason) => {
                self.left_out_total += 1;
                if self.left_out.len() < LEFT_OUT_LISTED {
                    self.left_out.push(LeftOutRun {
                        run_id,
                        family: run.family,
                        kind: run.kind,
                        payload_bytes: run.payload_bytes,
                        reason,
                    });
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_values_are_named() {
        use wire::metrics as m;
        for (name, v, cores, why) in [
            (
                m::THROUGHPUT_BPS,
                f64::NAN,
                None,
                "throughput_bps = NaN (not a finite number)",
            ),
            (
                m::THROUGHPUT_BPS,
                -1.0,
                None,
                "throughput_bps = -1 (must be a finite number ≥ 0)",
            ),
            (
                m::RTT_MEAN_NS,
                f64::INFINITY,
                None,
                "rtt_mean_ns = inf (not a finite number)",
            ),
            (
                m::RTT_P99_NS,
                -5.0,
                None,
                "rtt_p99_ns = -5 (must be a finite number ≥ 0)",
            ),
            (
                m::LOSS_PCT,
                100.5,
                None,
                "loss_pct = 100.5 % (must be within 0–100 %)",
            ),
            (
                m::LOSS_PCT,
                -0.1,
                None,
                "loss_pct = -0.1 % (must be within 0–100 %)",
            ),
            (
                m::CPU_LOCAL_PCT,
                -2.0,
                None,
                "cpu_local_pct = -2 % (must be within 0–100 %)",
            ),
            (
                m::CPU_REMOTE_PCT,
                250.0,
                Some(4),
                "cpu_remote_pct = 250 % (must be within 0–100 %)",
            ),
            (
                m::PROC_REMOTE_PCT,
                402.0,
                Some(4),
                "proc_remote_pct = 402 % (must be within 0–400 %)",
            ),
        ] {
            assert_eq!(
                implausible(name, v, cores).as_deref(),
                Some(why),
                "{name} {v}"
            );
        }
        for (name, v, cores) in [
            (m::THROUGHPUT_BPS, 0.0, None),
            (m::LOSS_PCT, 100.0, None),
            (m::PROC_LOCAL_PCT, 399.0, Some(4)),
            // Without the host's core count a process may use up to 4096 cores.
            (m::PROC_LOCAL_PCT, 3000.0, None),
            // A one-way delay may be negative (clock offset): not checked.
            ("owd_mean_ns", -3.0, None),
            // Latency added under load: loaded p50 − idle p50, may be below 0.
            (m::ADDED_TCP_RTT_P50_NS, -18304.0, None),
            (m::ADDED_UDP_RTT_P50_NS, -61632.0, None),
        ] {
            assert_eq!(implausible(name, v, cores), None, "{name} {v}");
        }
    }
}
