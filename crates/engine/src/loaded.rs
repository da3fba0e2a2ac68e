//! Latency under load (flent's RRUL idea, one command): round-trip probes on their own
//! flows at a fixed rate, first on the idle path, then while TCP streams saturate it in
//! one or both directions. Every part is an ordinary test ([`run_client`]) of one
//! *group*: the server admits a group's tests together in one test slot, from the same
//! peer, so the probes share the path with the load and no other client's test.
//!
//! Timeline: idle probes (UDP and TCP request/response, concurrently) for `idle`; then
//! the load streams for `duration`, with the probes starting `ramp` after the load and
//! stopping `ramp` before it ends, so every loaded sample is taken while the load runs.

use crate::client::{run_client, ClientConfig};
use crate::error::EngineError;
use crate::result::RunResult;
use crate::VecRecorder;
use measure::LatencySummary;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};
use wire::metrics::Metric;
use wire::proto::TestSpecError;
use wire::spec::{
    Bound, Direction, Family, LoadDirection, LoadedOpts, Rate, SocketOpts, TestKind, TestSpec,
};

/// A loaded-latency test as asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedSpec {
    pub family: Family,
    /// TCP connections of load per direction.
    pub streams: u16,
    pub load: LoadDirection,
    /// Length of the loaded phase, ns.
    pub duration_ns: u64,
    /// Length of the idle phase before it, ns.
    pub idle_ns: u64,
    /// Probe transactions per second, per probe type (UDP and TCP).
    pub probe_rate: u64,
    /// Bytes of each probe request and response.
    pub probe_bytes: u32,
    /// Bytes per write of the load streams.
    pub write_bytes: u32,
    /// Socket options of the load streams (buffers, congestion control, TOS, …).
    #[serde(default)]
    pub load_socket: SocketOpts,
    /// Interval samples of every part over windows of this many ns (none when absent):
    /// throughput of the load and mean probe RTT over time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ns: Option<u64>,
}

impl LoadedSpec {
    /// The test of `opts` over `family`, the load writing `write_bytes` at a time for
    /// `duration_ns`, with the load streams' socket options.
    pub fn new(
        family: Family,
        write_bytes: u32,
        duration_ns: u64,
        opts: &LoadedOpts,
        load_socket: SocketOpts,
    ) -> LoadedSpec {
        LoadedSpec {
            family,
            streams: opts.streams,
            load: opts.load,
            duration_ns,
            idle_ns: opts.idle_ns,
            probe_rate: opts.probe_rate,
            probe_bytes: opts.probe_bytes,
            write_bytes,
            load_socket,
            interval_ns: None,
        }
    }
}

pub use wire::spec::MIN_LOADED_NS;
use wire::spec::{MIN_IDLE_NS, MIN_LOADED_PROBES};

impl LoadedSpec {
    /// The ramp at each end of the loaded phase: a fifth of it, between 0.2 s and 2 s.
    pub fn ramp_ns(&self) -> u64 {
        wire::spec::loaded_ramp_ns(self.duration_ns)
    }

    /// How long the loaded probes run: the loaded phase less both ramps.
    pub fn loaded_probe_ns(&self) -> u64 {
        wire::spec::loaded_probe_ns(self.duration_ns)
    }

    /// The loaded test's own limits (phase lengths, streams, probes per window). Checked
    /// before its parts, whose lengths derive from these: a phase too short for its ramps
    /// is named as such, not as a part of zero length.
    pub fn check(&self) -> Result<(), EngineError> {
        let bad = |m: String| Err(EngineError::Spec(TestSpecError::Invalid(m)));
        if self.duration_ns < MIN_LOADED_NS {
            return bad(format!(
                "the loaded phase must last at least {} s, so the probes have a window between the ramps",
                MIN_LOADED_NS / 1_000_000_000
            ));
        }
        if self.idle_ns < MIN_IDLE_NS {
            return bad(format!(
                "the idle phase must last at least {} s",
                MIN_IDLE_NS as f64 / 1e9
            ));
        }
        if self.streams == 0 {
            return bad("a loaded-latency test needs at least one load stream".into());
        }
        if self.probe_rate == 0 || self.probe_rate > wire::proto::MAX_RR_RATE {
            return bad(format!(
                "the probe rate must be between 1 and {} transactions per second",
                wire::proto::MAX_RR_RATE
            ));
        }
        let per_probe = self.probe_rate as f64 * self.loaded_probe_ns() as f64 / 1e9;
        if per_probe < MIN_LOADED_PROBES {
            return bad(format!(
                "{} probes per second over the {:.1} s loaded window give fewer than {MIN_LOADED_PROBES} probes of each type; raise --probe-rate or -d",
                self.probe_rate,
                self.loaded_probe_ns() as f64 / 1e9
            ));
        }
        Ok(())
    }

    /// Every test the loaded-latency test runs (idle probes, load, loaded probes), as
    /// the server will see them: for checking a plan before any traffic.
    pub fn parts(&self, group: u64) -> Vec<TestSpec> {
        let mut v = vec![
            self.probe(TestKind::UdpRr, self.idle_ns, group),
            self.probe(TestKind::TcpRr, self.idle_ns, group),
            self.probe(TestKind::UdpRr, self.loaded_probe_ns(), group),
            self.probe(TestKind::TcpRr, self.loaded_probe_ns(), group),
        ];
        if self.load != LoadDirection::Download {
            v.push(self.stream(Direction::Forward, group));
        }
        if self.load != LoadDirection::Upload {
            v.push(self.stream(Direction::Reverse, group));
        }
        v
    }

    fn probe(&self, kind: TestKind, ns: u64, group: u64) -> TestSpec {
        let mut s = TestSpec::new(kind, self.family, self.probe_bytes);
        s.bound = Bound::DurationNs(ns);
        s.rate = Some(Rate::PacketsPerSec(self.probe_rate));
        s.group = Some(group);
        s.interval_ns = self.interval_ns;
        s
    }

    fn stream(&self, direction: Direction, group: u64) -> TestSpec {
        let mut s = TestSpec::new(TestKind::TcpStream, self.family, self.write_bytes);
        s.bound = Bound::DurationNs(self.duration_ns);
        s.direction = direction;
        s.streams = self.streams;
        s.socket = self.load_socket.clone();
        s.group = Some(group);
        s.interval_ns = self.interval_ns;
        s
    }
}

/// The probes of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probes {
    pub udp: RunResult,
    pub tcp: RunResult,
}

/// What a loaded-latency test measured. Every RTT is the client's monotonic clock from
/// sending a probe request to receiving its response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedResult {
    pub spec: LoadedSpec,
    pub idle: Probes,
    pub loaded: Probes,
    /// Load streams client → server, and server → client.
    pub upload: Option<RunResult>,
    pub download: Option<RunResult>,
    /// When the load's and the loaded probes' client threads started, ns after the
    /// idle probes' (the client's monotonic clock; each part's own control handshake,
    /// a few round trips, follows).
    #[serde(default)]
    pub load_start_ns: u64,
    #[serde(default)]
    pub loaded_probes_start_ns: u64,
    /// Each part's interval samples (with [`LoadedSpec::interval_ns`]), times relative
    /// to that part's own start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<PartIntervals>,
}

/// The parts of a loaded-latency test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadedPart {
    IdleUdpProbes,
    IdleTcpProbes,
    LoadedUdpProbes,
    LoadedTcpProbes,
    Upload,
    Download,
}

impl LoadedPart {
    /// The probe type of a probe part (`None` for the load).
    pub fn probe(self) -> Option<TestKind> {
        match self {
            LoadedPart::IdleUdpProbes | LoadedPart::LoadedUdpProbes => Some(TestKind::UdpRr),
            LoadedPart::IdleTcpProbes | LoadedPart::LoadedTcpProbes => Some(TestKind::TcpRr),
            LoadedPart::Upload | LoadedPart::Download => None,
        }
    }
}

/// One part's interval samples and where its clock starts on the test's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartIntervals {
    pub part: LoadedPart,
    /// The part's client thread started this many ns after the test started.
    pub offset_ns: u64,
    pub samples: Vec<wire::proto::IntervalSample>,
}

/// The responsiveness draft this figure follows, and how far.
pub use wire::metrics::RPM_REFERENCE;

impl LoadedResult {
    /// Median RTT of one probe type under load minus its idle median, ns (negative when
    /// the load did not add latency beyond the spread).
    pub fn added_p50_ns(&self, kind: TestKind) -> Option<f64> {
        let (idle, loaded) = match kind {
            TestKind::UdpRr => (&self.idle.udp, &self.loaded.udp),
            _ => (&self.idle.tcp, &self.loaded.tcp),
        };
        let i = idle.rtt.filter(|r| r.count > 0)?;
        let l = loaded.rtt.filter(|r| r.count > 0)?;
        Some(l.p50_ns as f64 - i.p50_ns as f64)
    }

    /// The flat metrics of the whole test (the `wire::metrics` latency-under-load
    /// vocabulary): what a study stores per run and a report compares.
    pub fn metrics(&self) -> Vec<Metric> {
        use wire::metrics as m;
        let mut out = Vec::new();
        let mut put = |name: &str, v: Option<f64>| {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                out.push(Metric::new(name, v));
            }
        };
        let p = |r: &RunResult, f: fn(&LatencySummary) -> u64| {
            r.rtt.filter(|s| s.count > 0).map(|s| f(&s) as f64)
        };
        put(m::IDLE_UDP_RTT_P50_NS, p(&self.idle.udp, |s| s.p50_ns));
        put(m::IDLE_TCP_RTT_P50_NS, p(&self.idle.tcp, |s| s.p50_ns));
        put(m::LOADED_UDP_RTT_P50_NS, p(&self.loaded.udp, |s| s.p50_ns));
        put(m::LOADED_TCP_RTT_P50_NS, p(&self.loaded.tcp, |s| s.p50_ns));
        put(m::LOADED_UDP_RTT_P90_NS, p(&self.loaded.udp, |s| s.p90_ns));
        put(m::LOADED_TCP_RTT_P90_NS, p(&self.loaded.tcp, |s| s.p90_ns));
        put(m::LOADED_UDP_RTT_P99_NS, p(&self.loaded.udp, |s| s.p99_ns));
        put(m::LOADED_TCP_RTT_P99_NS, p(&self.loaded.tcp, |s| s.p99_ns));
        put(m::ADDED_UDP_RTT_P50_NS, self.added_p50_ns(TestKind::UdpRr));
        put(m::ADDED_TCP_RTT_P50_NS, self.added_p50_ns(TestKind::TcpRr));
        put(m::RPM_LOADED, LoadedResult::rpm(&self.loaded));
        put(m::RPM_IDLE, LoadedResult::rpm(&self.idle));
        put(
            m::UPLOAD_BPS,
            self.upload.as_ref().and_then(|u| u.throughput_bps()),
        );
        put(
            m::DOWNLOAD_BPS,
            self.download.as_ref().and_then(|d| d.throughput_bps()),
        );
        put(
            m::LOADED_UDP_PROBE_TIMEOUTS,
            Some(self.loaded.udp.rr_timeouts as f64),
        );
        put(
            m::IDLE_UDP_PROBE_TIMEOUTS,
            Some(self.idle.udp.rr_timeouts as f64),
        );
        // Probes sent (requests the client put on the wire) and answered (completed
        // transactions) of each phase and type: recorded whatever the answers were.
        for (sent, answered, r) in [
            (
                m::IDLE_UDP_PROBES_SENT,
                m::IDLE_UDP_PROBES_ANSWERED,
                &self.idle.udp,
            ),
            (
                m::IDLE_TCP_PROBES_SENT,
                m::IDLE_TCP_PROBES_ANSWERED,
                &self.idle.tcp,
            ),
            (
                m::LOADED_UDP_PROBES_SENT,
                m::LOADED_UDP_PROBES_ANSWERED,
                &self.loaded.udp,
            ),
            (
                m::LOADED_TCP_PROBES_SENT,
                m::LOADED_TCP_PROBES_ANSWERED,
                &self.loaded.tcp,
            ),
        ] {
            put(sent, Some(r.client.sent_packets as f64));
            put(answered, Some(r.transactions as f64));
        }
        for (loaded, probes) in [(false, &self.idle), (true, &self.loaded)] {
            for (udp, r) in [(true, &probes.udp), (false, &probes.tcp)] {
                let Some(s) = r
                    .rtt
                    .filter(|s| s.count > 0 && s.ladder_ns.iter().any(|&v| v > 0))
                else {
                    continue;
                };
                for (pct, v) in m::RTT_LADDER_PCT.iter().zip(s.ladder_ns) {
                    put(&m::rtt_ladder_name(loaded, udp, *pct), Some(v as f64));
                }
            }
        }
        out
    }

    /// Round trips per minute from the TCP probes' 95 % trimmed mean RTT, as
    /// [`RPM_REFERENCE`] aggregates probes — but from foreign-flow TCP request/response
    /// probes only (no TLS or HTTP probes, no probes on the loaded connections).
    pub fn rpm(probes: &Probes) -> Option<f64> {
        let r = probes.tcp.rtt.filter(|r| r.count > 0)?;
        (r.trimmed_mean_95_ns > 0.0).then(|| 60e9 / r.trimmed_mean_95_ns)
    }
}

/// Run a loaded-latency test against `base`'s server (its host, port, key and limits;
/// its spec is ignored).
pub fn run_loaded(base: &ClientConfig, spec: &LoadedSpec) -> Result<LoadedResult, EngineError> {
    spec.check()?;
    for part in spec.parts(0) {
        wire::proto::validate_spec(&part)?;
    }
    let group = u64::from_le_bytes(crate::os_nonce()?.0[..8].try_into().unwrap_or([1; 8]));
    let cfg = |s: TestSpec| ClientConfig {
        spec: s,
        ..base.clone()
    };
    let t0 = Instant::now();
    let since = |t: Instant| t.duration_since(t0).as_nanos() as u64;
    // Each part runs with its own recorder; its samples go into `intervals`.
    let run = |what: &'static str, part: LoadedPart, c: ClientConfig| {
        let offset_ns = since(Instant::now());
        let mut rec = VecRecorder::default();
        let r = run_client(&c, &mut rec).map_err(|e| EngineError::Phase(what, Box::new(e)))?;
        let iv = PartIntervals {
            part,
            offset_ns,
            samples: rec.samples,
        };
        Ok::<_, EngineError>((r, iv))
    };
    let mut intervals = Vec::new();
    let mut keep = |x: Result<(RunResult, PartIntervals), EngineError>| {
        x.map(|(r, iv)| {
            if !iv.samples.is_empty() {
                intervals.push(iv);
            }
            r
        })
    };

    // Idle: both probe types at once, nothing else.
    let udp = cfg(spec.probe(TestKind::UdpRr, spec.idle_ns, group));
    let tcp = cfg(spec.probe(TestKind::TcpRr, spec.idle_ns, group));
    let (iu, it) = std::thread::scope(|sc| {
        let u = sc.spawn(|| run("idle UDP probes", LoadedPart::IdleUdpProbes, udp));
        let t = run("idle TCP probes", LoadedPart::IdleTcpProbes, tcp);
        (join(u), t)
    });
    let idle = Probes {
        udp: keep(iu)?,
        tcp: keep(it)?,
    };

    // Loaded: the streams, then the probes inside the loaded window.
    let ramp = Duration::from_nanos(spec.ramp_ns());
    let probe_ns = spec.loaded_probe_ns();
    let up = matches!(spec.load, LoadDirection::Upload | LoadDirection::Both)
        .then(|| cfg(spec.stream(Direction::Forward, group)));
    let down = matches!(spec.load, LoadDirection::Download | LoadDirection::Both)
        .then(|| cfg(spec.stream(Direction::Reverse, group)));
    let udp = cfg(spec.probe(TestKind::UdpRr, probe_ns, group));
    let tcp = cfg(spec.probe(TestKind::TcpRr, probe_ns, group));
    let load_start_ns = since(Instant::now());
    let (upload, download, lu, lt, loaded_probes_start_ns) = std::thread::scope(|sc| {
        let up = up.map(|c| sc.spawn(move || run("upload streams", LoadedPart::Upload, c)));
        let down = down.map(|c| sc.spawn(move || run("download streams", LoadedPart::Download, c)));
        std::thread::sleep(ramp);
        let probes_at = since(Instant::now());
        let u = sc.spawn(|| run("loaded UDP probes", LoadedPart::LoadedUdpProbes, udp));
        let t = run("loaded TCP probes", LoadedPart::LoadedTcpProbes, tcp);
        (up.map(join), down.map(join), join(u), t, probes_at)
    });
    let loaded = Probes {
        udp: keep(lu)?,
        tcp: keep(lt)?,
    };
    let upload = upload.map(&mut keep).transpose()?;
    let download = download.map(&mut keep).transpose()?;
    Ok(LoadedResult {
        spec: spec.clone(),
        idle,
        loaded,
        upload,
        download,
        load_start_ns,
        loaded_probes_start_ns,
        intervals,
    })
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, Result<T, EngineError>>) -> Result<T, EngineError> {
    h.join().unwrap_or_else(|_| {
        Err(EngineError::Protocol(
            "a loaded-latency thread panicked".into(),
        ))
    })
}
