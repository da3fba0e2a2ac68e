//! What the data-phase workers share and return: live counters for interval samples,
//! stop/drain/abort flags, each worker's [`Outcome`], and the [`Workers`] set that
//! joins and merges them into one side's [`SideStats`].

use measure::traffic::SamplerError;
use measure::LatencyHistogram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use wire::proto::{AppliedOpts, CpuStats, IntervalSample, SideStats, StreamStats};
use wire::spec::{Bound, TestSpec};
use wire::traffic::{Dist, TrafficError};

/// How long a blocking data-socket call waits before re-checking the flags.
pub(crate) const POLL: Duration = Duration::from_millis(20);
/// Once the peer has finished (drain), a TCP loop that is still blocked gives up after
/// this long: a peer that keeps its data connection open cannot hold the session.
pub(crate) const DRAIN_GRACE: Duration = Duration::from_millis(500);
/// How long [`Workers::join_within`] waits after drain before it sets abort.
pub(crate) const JOIN_GRACE: Duration = Duration::from_secs(2);

#[derive(Default)]
pub(crate) struct Live {
    pub sent_bytes: AtomicU64,
    pub sent_packets: AtomicU64,
    pub recv_bytes: AtomicU64,
    pub recv_packets: AtomicU64,
    /// Request/response clients: Σ RTT and count of completed transactions.
    pub rtt_sum_ns: AtomicU64,
    pub rtt_count: AtomicU64,
}

pub(crate) struct Shared {
    pub live: Live,
    /// Stop everything now (session failed or server shutting down).
    pub abort: AtomicBool,
    /// The peer's senders are done: receivers drain what is queued and stop.
    pub drain: AtomicBool,
    /// When this side's workers were first started (receivers may start early).
    pub go: Instant,
    /// ns from `go` to the start of the data phase proper (0 unless receivers started
    /// early); elapsed times are reported from there.
    pub start_offset_ns: AtomicU64,
    /// Receiver test hook: drop every Nth datagram (`DUALPERF_TEST_DROP_EVERY`).
    pub drop_every: Option<u64>,
    /// Sender test hook: datagram `seq` leaves `pattern[seq % len]` ns after the time its
    /// stamp says (`DUALPERF_TEST_SEND_DELAY_US`); empty = off.
    pub send_delay_ns: Vec<u64>,
    /// Session token carried in every datagram (low 32 bits of the control token).
    pub token: u32,
    /// The wall clock (ns since the Unix epoch) at `go`: the origin of this side's
    /// datagram stamps and arrival times on the wall clock.
    pub realtime_at_go_ns: u64,
    /// Per-window statistics over windows of this many ns of send time (UDP stream).
    pub window_ns: Option<u64>,
}

impl Shared {
    pub(crate) fn new(go: Instant, token: u64, window_ns: Option<u64>) -> Arc<Shared> {
        Arc::new(Shared {
            live: Live::default(),
            abort: AtomicBool::new(false),
            drain: AtomicBool::new(false),
            go,
            start_offset_ns: AtomicU64::new(0),
            drop_every: drop_every_from_env(),
            send_delay_ns: send_delay_from_env(),
            token: token as u32,
            realtime_at_go_ns: net::clock::wall_ns()
                .saturating_sub(Instant::now().saturating_duration_since(go).as_nanos() as u64),
            window_ns,
        })
    }
    /// A fresh per-window accumulator when the test asks for windows.
    pub(crate) fn windows(&self) -> Option<measure::Windows> {
        self.window_ns
            .map(|w| measure::Windows::new(w, wire::proto::MAX_INTERVAL_SAMPLES as usize))
    }
    /// The start of the data phase proper: `go` plus the early-receiver offset.
    pub(crate) fn data_start(&self) -> Instant {
        self.go + Duration::from_nanos(self.start_offset_ns.load(Relaxed))
    }
    pub(crate) fn ns_since_go(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.go).as_nanos() as u64
    }
    pub(crate) fn aborted(&self) -> bool {
        self.abort.load(Relaxed)
    }
    /// A blocked loop should stop: abort, or drain set for longer than [`DRAIN_GRACE`]
    /// (`drain_seen` remembers when this loop first saw drain).
    pub(crate) fn should_quit(&self, drain_seen: &mut Option<Instant>) -> bool {
        if self.aborted() {
            return true;
        }
        if !self.drain.load(Relaxed) {
            return false;
        }
        let now = Instant::now();
        now.duration_since(*drain_seen.get_or_insert(now)) >= DRAIN_GRACE
    }
    pub(crate) fn add_sent(&self, bytes: u64, packets: u64) {
        self.live.sent_bytes.fetch_add(bytes, Relaxed);
        self.live.sent_packets.fetch_add(packets, Relaxed);
    }
    pub(crate) fn add_recv(&self, bytes: u64, packets: u64) {
        self.live.recv_bytes.fetch_add(bytes, Relaxed);
        self.live.recv_packets.fetch_add(packets, Relaxed);
    }
    /// One completed transaction's RTT, for the interval samples.
    pub(crate) fn add_rtt(&self, ns: u64) {
        self.live.rtt_sum_ns.fetch_add(ns, Relaxed);
        self.live.rtt_count.fetch_add(1, Relaxed);
    }
}

/// A test hook's setting from the environment, in builds with the `test-hooks` feature
/// only: the binary's end-to-end tests turn it on (cli's dev-dependency on the engine),
/// so `cargo test` builds a binary that honours the hooks and a release build ignores
/// them. The one place the engine reads a hook.
pub(crate) fn test_hook(name: &str) -> Option<String> {
    if cfg!(feature = "test-hooks") {
        std::env::var(name).ok()
    } else {
        None
    }
}

/// Test hook: receivers drop (ignore) every Nth datagram of each stream.
pub const DROP_EVERY_ENV: &str = "DUALPERF_TEST_DROP_EVERY";

fn drop_every_from_env() -> Option<u64> {
    test_hook(DROP_EVERY_ENV)?
        .trim()
        .parse()
        .ok()
        .filter(|n| *n > 0)
}

/// Test hook: a paced UDP sender's datagrams leave later than their stamps say, by a
/// repeating pattern of microseconds (`0,2000` = every other datagram 2 ms late; done
/// by stamping that much earlier, which no scheduler delay can blur), so the expected
/// RFC 3550 jitter and IPDV can be computed by hand.
pub const SEND_DELAY_ENV: &str = "DUALPERF_TEST_SEND_DELAY_US";
/// At most this many pattern entries, each at most 1 s: a bad value cannot stall a run.
const SEND_DELAY_MAX_ENTRIES: usize = 64;
const SEND_DELAY_MAX_US: u64 = 1_000_000;

fn send_delay_from_env() -> Vec<u64> {
    test_hook(SEND_DELAY_ENV)
        .map(|v| parse_send_delay(&v))
        .unwrap_or_default()
}

/// `"0,2000"` → [0, 2 000 000] ns; anything malformed or out of range turns the hook off.
/// The send schedule of a D-ITG-style traffic model, one home for both transports: a
/// sender draws its gaps and sizes from the model (seeded; stream `i` draws gaps from
/// sequence `2i` and sizes from `2i + 1`, so one model gives the same traffic over UDP and
/// TCP), waits for each absolute due time (the sum of the drawn gaps from the data
/// start, so a late send never shifts what follows) and records how late it left.
/// Without a gap distribution it follows the fixed rate (`-b`), or sends back to back.
pub(crate) struct ModelSchedule {
    gaps: Option<measure::traffic::Sampler>,
    sizes: Option<measure::traffic::Sampler>,
    fixed_gap_ns: Option<f64>,
    fixed_len: usize,
    min_len: usize,
    max_len: usize,
    start: Instant,
    sched_ns: f64,
    late: LatencyHistogram,
    on_off: Option<OnOff>,
    /// Active periods in which something was sent, and the last of them.
    spurts: (u64, u64),
}

/// Active and silent periods (`--on-time`, `--off-time`), alternating from an active
/// one at the data start: a send whose scheduled time falls in a silent period moves
/// to the start of the next active one (a talkspurt's first packet), and the schedule
/// goes on from there.
pub(crate) struct OnOff {
    on: measure::traffic::Sampler,
    off: measure::traffic::Sampler,
    active: bool,
    /// End of the current period, ns from the data start.
    end_ns: f64,
    /// Number of the current period's active phase (1 for the first).
    pub(crate) period: u64,
}

impl OnOff {
    pub(crate) fn new(mut on: measure::traffic::Sampler, off: measure::traffic::Sampler) -> OnOff {
        let end_ns = on.sample().max(0.0);
        OnOff {
            on,
            off,
            active: true,
            end_ns,
            period: 1,
        }
    }

    /// The first time at or after `t_ns` inside an active period (`t_ns` never
    /// decreases from one call to the next: the periods only move forward).
    pub(crate) fn place(&mut self, mut t_ns: f64) -> f64 {
        // Bounded, so draws of length 0 (rare, but possible for some distributions)
        // can never stall a sender.
        for _ in 0..1_000_000 {
            if t_ns < self.end_ns {
                if self.active {
                    return t_ns;
                }
                // Silent: wait for the next active period.
                t_ns = self.end_ns;
                continue;
            }
            self.active = !self.active;
            let d = if self.active {
                self.period += 1;
                self.on.sample()
            } else {
                self.off.sample()
            };
            self.end_ns += d.max(0.0);
        }
        t_ns
    }
}

/// Why a stream cannot follow its traffic model (the sender reports it as is).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ModelError {
    #[error("traffic model: {0}")]
    Dist(TrafficError),
    #[error("traffic model: {0}")]
    Sampler(SamplerError),
    #[error(transparent)]
    OnOff(TrafficError),
    #[error(transparent)]
    OnOffSampler(SamplerError),
    #[error("traffic model: on/off periods gate a schedule: give --idt or a rate (-b)")]
    UngatedOnOff,
}

impl ModelSchedule {
    /// The schedule of `model` for stream `stream_id`: sizes within `min_len..=max_draw`
    /// when drawn, `payload_bytes` (at least `min_len`) otherwise. An invalid model is an
    /// error for the sender to report.
    pub(crate) fn new(
        model: &wire::traffic::TrafficModel,
        stream_id: u16,
        payload_bytes: usize,
        pps: Option<f64>,
        (min_len, max_draw): (usize, usize),
        start: Instant,
    ) -> Result<ModelSchedule, ModelError> {
        use measure::traffic::Sampler;
        let stream = u64::from(stream_id);
        let sampler = |d: Result<Option<Dist>, TrafficError>, which: u64| {
            d.map_err(ModelError::Dist)?
                .map(|d| Sampler::new(d, model.seed, 2 * stream + which))
                .transpose()
                .map_err(ModelError::Sampler)
        };
        let gaps = sampler(model.idt_dist(), 0)?;
        let sizes = sampler(model.size_dist(), 1)?;
        let fixed_len = payload_bytes.max(min_len);
        // Sequences of their own, beyond every stream's gaps and sizes.
        let on_off = match model.on_off_dists().map_err(ModelError::OnOff)? {
            Some((on, off)) => {
                if gaps.is_none() && pps.is_none() {
                    return Err(ModelError::UngatedOnOff);
                }
                let base = (1u64 << 32) + 2 * stream;
                let period =
                    |d, seq| Sampler::new(d, model.seed, seq).map_err(ModelError::OnOffSampler);
                Some(OnOff::new(period(on, base)?, period(off, base + 1)?))
            }
            None => None,
        };
        Ok(ModelSchedule {
            max_len: if sizes.is_some() {
                max_draw.max(min_len)
            } else {
                fixed_len
            },
            gaps,
            sizes,
            fixed_gap_ns: pps.map(|p| 1e9 / p),
            fixed_len,
            min_len,
            start,
            sched_ns: 0.0,
            late: LatencyHistogram::new(),
            on_off,
            spurts: (0, 0),
        })
    }

    /// [`ModelSchedule::new`] from the data start, on a thread whose timer slack suits
    /// pacing; an invalid model goes into `o`'s errors and gives `None`.
    pub(crate) fn start(
        model: &wire::traffic::TrafficModel,
        (stream_id, payload_bytes, pps): (u16, usize, Option<f64>),
        lens: (usize, usize),
        shared: &Shared,
        o: &mut Outcome,
    ) -> Option<ModelSchedule> {
        net::fine_timer_slack();
        let start = shared.data_start();
        ModelSchedule::new(model, stream_id, payload_bytes, pps, lens, start)
            .map_err(|e| o.errors.push(e.to_string()))
            .ok()
    }

    /// The largest message this schedule can ask for (the sender's buffer size).
    pub(crate) fn max_len(&self) -> usize {
        self.max_len
    }

    /// Wait for the next message's due time and return its size; `None` once the bound
    /// is reached (counting `sent` messages) or the session aborted.
    pub(crate) fn next(&mut self, bound: &SendBound, sent: u64, shared: &Shared) -> Option<usize> {
        if let Some(o) = self.on_off.as_mut() {
            self.sched_ns = o.place(self.sched_ns);
        }
        let due = self.start + Duration::from_nanos(self.sched_ns as u64);
        if bound.done(sent, Instant::now().max(due)) || shared.aborted() {
            return None;
        }
        if self.gaps.is_some() || self.fixed_gap_ns.is_some() {
            wait_until(due);
            self.late
                .record(Instant::now().saturating_duration_since(due).as_nanos() as u64);
        }
        self.sched_ns += match (self.gaps.as_mut(), self.fixed_gap_ns) {
            (Some(g), _) => g.sample(),
            (None, Some(f)) => f,
            (None, None) => 0.0,
        };
        if let Some(o) = &self.on_off {
            if self.spurts.1 != o.period {
                self.spurts = (self.spurts.0 + 1, o.period);
            }
        }
        Some(match self.sizes.as_mut() {
            Some(d) => (d.sample().round() as usize).clamp(self.min_len, self.max_len),
            None => self.fixed_len,
        })
    }

    /// Record how late the sends left (`schedule_late_*_us`), as [`note_schedule_late`],
    /// and with on/off periods in how many active periods something was sent
    /// (`on_periods`).
    pub(crate) fn note(&self, o: &mut Outcome) {
        note_schedule_late(&self.late, o);
        if self.on_off.is_some() {
            o.io.insert("on_periods".into(), self.spurts.0.to_string());
        }
    }
}

/// Sleep until `t` (spinning only for the last few µs). Oversleeping is harmless: the
/// sender paces against its schedule, so a late wake-up sends the datagrams that came
/// due as one batch and the average rate stays exact without burning a core.
pub(crate) fn wait_until(t: Instant) {
    loop {
        let now = Instant::now();
        if now >= t {
            return;
        }
        let left = t - now;
        if left > Duration::from_micros(5) {
            std::thread::sleep(left);
        } else {
            std::hint::spin_loop();
        }
    }
}

/// How late a model sender's sends left against their schedule, into `applied`
/// (`schedule_late_p50_us`, `schedule_late_p99_us`, `schedule_late_max_us`); nothing
/// when nothing was scheduled.
pub(crate) fn note_schedule_late(late: &LatencyHistogram, o: &mut Outcome) {
    if late.is_empty() {
        return;
    }
    for (key, q) in [("p50", 0.5), ("p99", 0.99)] {
        o.io.insert(
            format!("schedule_late_{key}_us"),
            format!("{:.1}", late.quantile_ns(q) as f64 / 1e3),
        );
    }
    o.io.insert(
        "schedule_late_max_us".into(),
        format!("{:.1}", late.max_ns().unwrap_or(0) as f64 / 1e3),
    );
}

pub(crate) fn parse_send_delay(text: &str) -> Vec<u64> {
    let parsed: Option<Vec<u64>> = text
        .split(',')
        .take(SEND_DELAY_MAX_ENTRIES + 1)
        .map(|t| {
            t.trim()
                .parse::<u64>()
                .ok()
                .filter(|us| *us <= SEND_DELAY_MAX_US)
        })
        .collect();
    match parsed {
        Some(v) if !v.is_empty() && v.len() <= SEND_DELAY_MAX_ENTRIES => {
            v.into_iter().map(|us| us * 1000).collect()
        }
        _ => Vec::new(),
    }
}

/// When one sender stream stops.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SendBound {
    pub deadline: Option<Instant>,
    pub count: Option<u64>,
}

impl SendBound {
    pub(crate) fn of(spec: &TestSpec, go: Instant) -> SendBound {
        match spec.bound {
            Bound::DurationNs(ns) => SendBound {
                deadline: Some(go + Duration::from_nanos(ns)),
                count: None,
            },
            Bound::Count(n) => SendBound {
                deadline: None,
                count: Some(n),
            },
        }
    }
    pub(crate) fn done(&self, sent: u64, now: Instant) -> bool {
        self.count.is_some_and(|c| sent >= c) || self.deadline.is_some_and(|d| now >= d)
    }
}

/// A request/response client's probe schedule: one transaction starts every `every`,
/// on a fixed grid from the data start (a slot missed because the previous transaction
/// was still running is skipped, never made up in a burst), so probes sample the path
/// at a steady rate instead of saturating it.
pub(crate) struct Pace {
    next: Instant,
    every: Duration,
}

impl Pace {
    /// The schedule of a spec's RR `rate` (transactions per second per stream); `None`
    /// when the spec asks for back-to-back transactions.
    pub(crate) fn of(spec: &TestSpec, start: Instant) -> Option<Pace> {
        if !spec.kind.is_rr() {
            return None;
        }
        let per_sec = spec.rate_pps()?;
        let every = Duration::from_secs_f64(1.0 / per_sec);
        Some(Pace { next: start, every })
    }

    /// Sleeps until the next slot (waking every [`POLL`] to notice an abort). False when
    /// the run ended meanwhile: aborted, or the deadline falls before the slot.
    pub(crate) fn wait(&mut self, bound: &SendBound, shared: &Shared) -> bool {
        let now = Instant::now();
        if self.next < now {
            // Skip the slots the last transaction overran.
            let behind = now.duration_since(self.next).as_nanos();
            let step = self.every.as_nanos().max(1);
            let skip = behind.div_ceil(step);
            self.next += self.every * u32::try_from(skip).unwrap_or(u32::MAX);
        }
        if bound.deadline.is_some_and(|d| self.next >= d) {
            return false;
        }
        loop {
            let now = Instant::now();
            if shared.aborted() {
                return false;
            }
            if now >= self.next {
                break;
            }
            std::thread::sleep((self.next - now).min(POLL));
        }
        self.next += self.every;
        true
    }
}

/// What one worker measured.
#[derive(Default)]
pub(crate) struct Outcome {
    pub sent_bytes: u64,
    pub sent_packets: u64,
    pub recv_bytes: u64,
    pub recv_packets: u64,
    pub last_send_ns: u64,
    pub last_recv_ns: u64,
    pub dup_packets: u64,
    pub reordered_packets: u64,
    /// Σ jitter × samples and Σ samples, to average RFC 3550 jitter over streams.
    pub jitter_weighted_ns: f64,
    pub jitter_samples: u64,
    /// Why this receiver's jitter and IPDV cannot be given (they are then dropped).
    pub jitter_unavailable: Option<String>,
    /// Datagrams the receiving socket dropped; growth of the host's UDP error counters.
    pub rx_socket_drops: Option<u64>,
    /// The receiving socket took GRO-coalesced buffers: its drop count (and the host's
    /// counters) count buffers, not datagrams.
    pub rx_coalesced: bool,
    pub rx_host_udp_errors: Option<measure::UdpErrorCounters>,
    pub ipdv: Option<LatencyHistogram>,
    /// Transit times of the datagrams received (kept only with per-datagram timing).
    pub transit: measure::Transit,
    /// Per-window counts (UDP stream with a window width).
    pub windows: Option<measure::Windows>,
    pub rtt: Option<LatencyHistogram>,
    /// tcp-crr: connect times (`rtt` holds the transaction times).
    pub connect: Option<LatencyHistogram>,
    pub transactions: u64,
    pub rr_timeouts: u64,
    pub streams: Vec<StreamStats>,
    pub errors: Vec<String>,
    /// How the datapath ran (e.g. `udp_datapath` = batched), merged into `applied`.
    pub io: AppliedOpts,
    /// Zero-copy sending: what the completions said (summed over streams).
    pub zerocopy: Option<(wire::spec::ZeroCopyMethod, net::ZeroCopyStats)>,
    /// What the pmtu search found (its client only).
    pub pmtu: Option<crate::pmtu::PmtuReport>,
    /// QUIC test: the end's view of its connection, and the client's RTT summary.
    pub quic: Option<wire::proto::QuicSide>,
    pub quic_rtt: Option<measure::LatencySummary>,
}

impl Outcome {
    pub(crate) fn merge(&mut self, o: Outcome) {
        self.sent_bytes += o.sent_bytes;
        self.sent_packets += o.sent_packets;
        self.recv_bytes += o.recv_bytes;
        self.recv_packets += o.recv_packets;
        self.last_send_ns = self.last_send_ns.max(o.last_send_ns);
        self.last_recv_ns = self.last_recv_ns.max(o.last_recv_ns);
        self.dup_packets += o.dup_packets;
        self.reordered_packets += o.reordered_packets;
        self.jitter_weighted_ns += o.jitter_weighted_ns;
        if self.quic.is_none() {
            self.quic = o.quic;
            self.quic_rtt = o.quic_rtt;
        }
        self.jitter_samples += o.jitter_samples;
        if self.jitter_unavailable.is_none() {
            self.jitter_unavailable = o.jitter_unavailable;
        }
        self.rx_socket_drops = add_opt(self.rx_socket_drops, o.rx_socket_drops);
        self.rx_coalesced |= o.rx_coalesced;
        self.rx_host_udp_errors = match (self.rx_host_udp_errors, o.rx_host_udp_errors) {
            (Some(a), Some(b)) => Some(a.plus(&b)),
            (a, b) => a.or(b),
        };
        merge_hist(&mut self.ipdv, o.ipdv);
        self.transit.merge(&o.transit);
        match (&mut self.windows, o.windows) {
            (Some(a), Some(b)) => a.merge(&b),
            (a @ None, b) => *a = b,
            _ => {}
        }
        merge_hist(&mut self.rtt, o.rtt);
        merge_hist(&mut self.connect, o.connect);
        self.transactions += o.transactions;
        self.rr_timeouts += o.rr_timeouts;
        self.streams.extend(o.streams);
        self.errors.extend(o.errors);
        self.io.extend(o.io);
        self.zerocopy = match (self.zerocopy, o.zerocopy) {
            (Some((m, a)), Some((_, b))) => Some((m, a.plus(&b))),
            (a, b) => a.or(b),
        };
        if self.pmtu.is_none() {
            self.pmtu = o.pmtu;
        }
    }

    pub(crate) fn into_side_stats(
        mut self,
        cpu: Option<CpuStats>,
        mut applied: AppliedOpts,
        intervals: Vec<IntervalSample>,
    ) -> SideStats {
        self.streams.sort_by_key(|s| s.stream_id);
        // A bidirectional stream has a sender and a receiver entry: one line per id.
        let mut streams: Vec<StreamStats> = Vec::new();
        for st in std::mem::take(&mut self.streams) {
            match streams.last_mut() {
                Some(last) if last.stream_id == st.stream_id => {
                    last.sent_bytes += st.sent_bytes;
                    last.sent_packets += st.sent_packets;
                    last.recv_bytes += st.recv_bytes;
                    last.recv_packets += st.recv_packets;
                }
                _ => streams.push(st),
            }
        }
        self.streams = streams;
        applied.extend(std::mem::take(&mut self.io));
        if let Some((method, z)) = self.zerocopy {
            applied.extend(zerocopy_applied(method, &z));
        }
        let jitter_ok = self.jitter_unavailable.is_none();
        let has_ipdv = jitter_ok && self.ipdv.as_ref().is_some_and(|h| !h.is_empty());
        // One send stamp and one arrival per datagram, or no transit times either.
        let transit = self.transit.summary().filter(|_| jitter_ok);
        SideStats {
            quic: self.quic,
            sent_bytes: self.sent_bytes,
            sent_packets: self.sent_packets,
            recv_bytes: self.recv_bytes,
            recv_packets: self.recv_packets,
            send_elapsed_ns: self.last_send_ns,
            recv_elapsed_ns: self.last_recv_ns,
            dup_packets: self.dup_packets,
            reordered_packets: self.reordered_packets,
            jitter_rfc3550_ns: (jitter_ok && self.jitter_samples > 0)
                .then(|| self.jitter_weighted_ns / self.jitter_samples as f64),
            ipdv_p50_ns: self
                .ipdv
                .as_ref()
                .filter(|_| has_ipdv)
                .map(|h| h.quantile_ns(0.5) as f64),
            ipdv_p99_ns: self
                .ipdv
                .as_ref()
                .filter(|_| has_ipdv)
                .map(|h| h.quantile_ns(0.99) as f64),
            jitter_unavailable: self.jitter_unavailable,
            rx_socket_drops: self.rx_socket_drops,
            rx_coalesced: self.rx_coalesced,
            rx_host_udp_rcvbuf_errors: self.rx_host_udp_errors.map(|c| c.rcvbuf_errors),
            rx_host_udp_in_errors: self.rx_host_udp_errors.map(|c| c.in_errors),
            realtime_at_go_ns: None,
            transit_min_ns: transit.map(|t| t.0),
            transit_mean_ns: transit.map(|t| t.1),
            transit_max_ns: transit.map(|t| t.2),
            cpu,
            applied,
            streams: self.streams,
            intervals,
            windows: self
                .windows
                .map(measure::Windows::into_stats)
                .unwrap_or_default(),
        }
    }
}

/// The applied settings that say how zero-copy sending went: the method and its send
/// calls; with MSG_ZEROCOPY also how many completions were read, how many of those the
/// kernel copied after all (SO_EE_CODE_ZEROCOPY_COPIED), that in words, and the most
/// sends that waited for their completion at once.
pub(crate) fn zerocopy_applied(
    method: wire::spec::ZeroCopyMethod,
    z: &net::ZeroCopyStats,
) -> AppliedOpts {
    let mut v = vec![
        ("zerocopy", method.name().to_string()),
        ("zerocopy_sends", z.sends.to_string()),
    ];
    if method == wire::spec::ZeroCopyMethod::Msg {
        v.extend([
            ("zerocopy_completed_sends", z.completed.to_string()),
            ("zerocopy_copied_sends", z.copied.to_string()),
            ("zerocopy_kernel_copied", z.kernel_copied()),
            ("zerocopy_peak_outstanding", z.peak_outstanding.to_string()),
        ]);
    }
    v.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
        (a, b) => a.or(b),
    }
}

fn merge_hist(into: &mut Option<LatencyHistogram>, from: Option<LatencyHistogram>) {
    match (into.as_mut(), from) {
        (Some(a), Some(b)) => a.merge(&b),
        (None, Some(b)) => *into = Some(b),
        _ => {}
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Send,
    Recv,
    /// Request/response client or echo server.
    Rr,
}

/// The running workers of one side.
#[derive(Default)]
pub(crate) struct Workers {
    handles: Vec<(Role, JoinHandle<Outcome>)>,
}

impl Workers {
    pub(crate) fn spawn(
        &mut self,
        role: Role,
        name: &str,
        f: impl FnOnce() -> Outcome + Send + 'static,
    ) -> std::io::Result<()> {
        let h = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(f)?;
        self.handles.push((role, h));
        Ok(())
    }
    pub(crate) fn has(&self, role: Role) -> bool {
        self.handles.iter().any(|(r, _)| *r == role)
    }
    pub(crate) fn done(&self, role: Role) -> bool {
        self.handles
            .iter()
            .filter(|(r, _)| *r == role)
            .all(|(_, h)| h.is_finished())
    }
    pub(crate) fn all_done(&self) -> bool {
        self.handles.iter().all(|(_, h)| h.is_finished())
    }
    /// Join every worker, setting `shared.abort` if they are not all done within
    /// `grace`: a worker stuck on a peer that never closes cannot block the caller.
    pub(crate) fn join_within(self, shared: &Shared, grace: Duration) -> Outcome {
        let deadline = Instant::now() + grace;
        while !self.all_done() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        if !self.all_done() {
            shared.abort.store(true, Relaxed);
        }
        self.join()
    }
    /// Join every worker (they stop on their own or on `abort`) and merge.
    pub(crate) fn join(self) -> Outcome {
        let mut total = Outcome::default();
        for (_, h) in self.handles {
            match h.join() {
                Ok(o) => total.merge(o),
                Err(_) => total.errors.push("a data worker panicked".into()),
            }
        }
        total
    }
}

/// Interval samples from the live counters.
pub(crate) struct Sampler {
    every_ns: u64,
    next_end_ns: u64,
    last: [u64; 6],
    last_end_ns: u64,
}

impl Sampler {
    pub(crate) fn new(every_ns: u64) -> Sampler {
        Sampler {
            every_ns,
            next_end_ns: every_ns,
            last: [0; 6],
            last_end_ns: 0,
        }
    }
    /// When the next sample is due, relative to go.
    pub(crate) fn next_due(&self, go: Instant) -> Instant {
        go + Duration::from_nanos(self.next_end_ns)
    }
    /// A sample if one is due at `now` (or `force` for the final partial one). Samples
    /// are contiguous and monotone whatever `now` is given: each starts where the last
    /// ended and ends no earlier (a final `now` forced to the last send or receive,
    /// which may precede the last sample's end, gives an empty-length final sample).
    pub(crate) fn poll(
        &mut self,
        shared: &Shared,
        now: Instant,
        force: bool,
    ) -> Option<IntervalSample> {
        let now_ns = shared.ns_since_go(now).max(self.last_end_ns);
        if now_ns < self.next_end_ns && !force {
            return None;
        }
        let l = &shared.live;
        let cur = [
            l.sent_bytes.load(Relaxed),
            l.sent_packets.load(Relaxed),
            l.recv_bytes.load(Relaxed),
            l.recv_packets.load(Relaxed),
            l.rtt_sum_ns.load(Relaxed),
            l.rtt_count.load(Relaxed),
        ];
        // A final partial interval shorter than 1 % of an interval says nothing — unless
        // it counted something: the samples must add up to the run's totals.
        if force && now_ns <= self.last_end_ns + self.every_ns / 100 && cur == self.last {
            return None;
        }
        let s = IntervalSample {
            start_ns: self.last_end_ns,
            end_ns: now_ns,
            sent_bytes: cur[0].saturating_sub(self.last[0]),
            sent_packets: cur[1].saturating_sub(self.last[1]),
            recv_bytes: cur[2].saturating_sub(self.last[2]),
            recv_packets: cur[3].saturating_sub(self.last[3]),
            rtt_sum_ns: cur[4].saturating_sub(self.last[4]),
            rtt_count: cur[5].saturating_sub(self.last[5]),
        };
        self.last = cur;
        self.last_end_ns = now_ns;
        let every = self.every_ns.max(1);
        self.next_end_ns = (now_ns / every + 1).saturating_mul(every);
        Some(s)
    }
}

#[cfg(test)]
mod sampler_tests {
    use super::*;

    /// Issue 42: the server forces its last interval's end to its last send or receive
    /// time, which can precede the previous sample's end; the result was an interval
    /// "from 308741919 ns to 244328876 ns". The samples stay contiguous and monotone.
    #[test]
    fn interval_boundaries_are_monotone_whatever_end_time_is_forced() {
        let go = Instant::now();
        let shared = Shared::new(go, 1, None);
        let at = |ns: u64| go + Duration::from_nanos(ns);
        let mut s = Sampler::new(100_000_000);
        let mut samples = Vec::new();
        for ns in [100_000_000, 200_000_000, 308_741_919] {
            shared.live.sent_bytes.fetch_add(1000, Relaxed);
            samples.extend(s.poll(&shared, at(ns), false));
        }
        shared.live.sent_bytes.fetch_add(1000, Relaxed);
        samples.extend(s.poll(&shared, at(244_328_876), true));
        let bounds: Vec<(u64, u64)> = samples.iter().map(|x| (x.start_ns, x.end_ns)).collect();
        assert_eq!(
            bounds,
            [
                (0, 100_000_000),
                (100_000_000, 200_000_000),
                (200_000_000, 308_741_919),
                (308_741_919, 308_741_919)
            ]
        );
        // Every byte is in some sample.
        assert_eq!(samples.iter().map(|x| x.sent_bytes).sum::<u64>(), 4000);
        // A time before go counts as go, and still not before the last end.
        assert!(s.poll(&shared, go, true).is_none());
    }
}

#[cfg(test)]
mod hook_tests {
    use super::parse_send_delay;

    /// Without the `test-hooks` feature no hook is read, whatever the environment holds
    /// (PATH stands for a set variable: setting one would race the other tests).
    #[cfg(not(feature = "test-hooks"))]
    #[test]
    fn a_build_without_the_test_hooks_feature_reads_no_hook() {
        assert!(std::env::var_os("PATH").is_some(), "PATH is set in a test");
        assert_eq!(super::test_hook("PATH"), None);
    }

    #[test]
    fn send_delay_pattern_parses_or_turns_the_hook_off() {
        assert_eq!(parse_send_delay("0,2000"), vec![0, 2_000_000]);
        assert_eq!(parse_send_delay(" 5 "), vec![5_000]);
        assert!(parse_send_delay("").is_empty());
        assert!(parse_send_delay("1,x").is_empty());
        assert!(parse_send_delay("2000000").is_empty(), "above 1 s");
        assert!(parse_send_delay(&"1,".repeat(100)).is_empty(), "too many");
    }
}

#[cfg(test)]
mod on_off_tests {
    use super::OnOff;
    use measure::traffic::Sampler;
    use wire::traffic::Dist;

    fn constant(ms: f64) -> Sampler {
        Sampler::new(Dist::Constant { value: ms * 1e6 }, 1, 0).unwrap()
    }

    #[test]
    fn sends_in_silent_periods_move_to_the_next_active_one() {
        // 100 ms on, 50 ms off: active [0, 100), [150, 250), [300, 400), …
        let mut o = OnOff::new(constant(100.0), constant(50.0));
        let ms = |v: f64| v * 1e6;
        assert_eq!(o.place(ms(0.0)), ms(0.0));
        assert_eq!(o.place(ms(99.0)), ms(99.0));
        assert_eq!(o.place(ms(100.0)), ms(150.0), "silent from 100 ms");
        assert_eq!(o.place(ms(249.0)), ms(249.0));
        assert_eq!(o.place(ms(260.0)), ms(300.0));
        // A jump over whole periods lands in the right one.
        assert_eq!(
            o.place(ms(1_000.0)),
            ms(1_050.0),
            "[900, 1000) on, then off"
        );
        assert_eq!(o.period, 8);
        // A sender every 10 ms for 1.5 s sends in the active 2/3 of the time only.
        let mut o = OnOff::new(constant(100.0), constant(50.0));
        let (mut t, mut sent) = (0.0, 0);
        loop {
            t = o.place(t);
            if t >= ms(1_500.0) {
                break;
            }
            sent += 1;
            t += ms(10.0);
        }
        assert_eq!(sent, 100);
    }
}
