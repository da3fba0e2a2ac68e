//! A fake executor with deterministic results on virtual time, and an in-memory
//! journal, for testing the scheduler (and the binary's study pipeline) without sockets.
//!
//! Results depend only on (cell, repetition, attempt), never on how often or in what
//! order the executor was called, so an interrupted-and-resumed study must end with
//! exactly the same runs as an uninterrupted one.

use crate::plan::{Cell, Slot, SplitMix64};
use crate::schedule::{
    Attempt, AttemptFailure, Finished, Journal, JournalError, PastRun, RunOutput, Sample,
};
use std::collections::BTreeMap;
use wire::metrics as m;
use wire::spec::{Bound, Family, TestKind};

type MetricFn = dyn FnMut(&Cell, &Slot, u32) -> Result<BTreeMap<String, f64>, AttemptFailure>;

/// Deterministic executor: each run takes its spec's duration on a virtual clock.
pub struct FakeExecutor {
    now_ns: i64,
    metrics: Box<MetricFn>,
    /// Every (cell index, slot, attempt) executed, in order.
    pub calls: Vec<(u32, Slot, u32)>,
}

impl Default for FakeExecutor {
    fn default() -> Self {
        FakeExecutor::new(|cell, slot, _| Ok(plausible_metrics(cell, slot)))
    }
}

impl FakeExecutor {
    /// An executor whose results come from `f(cell, slot, attempt)`.
    pub fn new(
        f: impl FnMut(&Cell, &Slot, u32) -> Result<BTreeMap<String, f64>, AttemptFailure> + 'static,
    ) -> FakeExecutor {
        FakeExecutor {
            now_ns: 1_700_000_000_000_000_000,
            metrics: Box::new(f),
            calls: Vec::new(),
        }
    }
}

impl crate::schedule::Executor for FakeExecutor {
    fn execute(&mut self, cell: &Cell, slot: &Slot, attempt: u32) -> Attempt {
        self.calls.push((cell.index, *slot, attempt));
        let duration_ns = match cell.test.bound {
            Bound::DurationNs(ns) => ns as i64,
            Bound::Count(n) => (n as i64).saturating_mul(1_000),
        };
        let started = self.now_ns;
        self.now_ns = self.now_ns.saturating_add(duration_ns);
        let result = (self.metrics)(cell, slot, attempt).map(|metrics| RunOutput {
            samples: vec![Sample {
                start_ns: 0,
                end_ns: duration_ns,
                metrics: metrics.clone(),
            }],
            metrics,
            server_info: [("host.name".to_string(), "fake-server".to_string())].into(),
            client_info: [("host.name".to_string(), "fake-client".to_string())].into(),
            applied: Default::default(),
        });
        Attempt {
            started_unix_ns: started,
            duration_ns,
            result,
        }
    }
}

/// Loopback-like numbers with ±2 % deterministic noise keyed by cell and repetition:
/// IPv6 a little slower (its 20 extra header bytes), RR tests report rate and RTT.
pub fn plausible_metrics(cell: &Cell, slot: &Slot) -> BTreeMap<String, f64> {
    let mut rng = SplitMix64::new(
        u64::from(cell.index) << 32 | u64::from(slot.repetition) << 1 | u64::from(slot.warmup),
    );
    let noise = 1.0 + ((rng.next_u64() % 4001) as f64 - 2000.0) / 100_000.0;
    let size = f64::from(cell.payload_bytes);
    let hdr = f64::from(cell.family.ip_header_bytes() + cell.kind.transport().header_bytes());
    let mut out = BTreeMap::new();
    let cpu = 40.0 + size / 100.0 + if cell.family == Family::V6 { 1.0 } else { 0.0 };
    out.insert(m::CPU_LOCAL_PCT.to_string(), cpu * noise);
    match cell.kind {
        TestKind::TcpStream | TestKind::UdpStream | TestKind::QuicStream => {
            let bps = 8.0e9 * size / (size + hdr) * noise;
            out.insert(m::THROUGHPUT_BPS.to_string(), bps);
            if cell.kind == TestKind::UdpStream {
                out.insert(m::JITTER_RFC3550_NS.to_string(), 2_000.0 * noise);
                out.insert(m::LOSS_PCT.to_string(), 0.0);
            }
        }
        TestKind::TcpRr | TestKind::UdpRr | TestKind::QuicRr => {
            let rtt = (20_000.0 + size + hdr) * noise;
            out.insert(m::RTT_MEAN_NS.to_string(), rtt);
            out.insert(m::TRANSACTIONS_PER_S.to_string(), 1e9 / rtt);
        }
        TestKind::TcpCrr => {
            let connect = (15_000.0 + hdr) * noise;
            let txn = connect + (20_000.0 + size + hdr) * noise;
            out.insert(m::CONNECT_TIME_MEAN_NS.to_string(), connect);
            out.insert(m::TRANSACTION_TIME_MEAN_NS.to_string(), txn);
            out.insert(m::CONNECTIONS_PER_S.to_string(), 1e9 / txn);
        }
        TestKind::Rrul => {
            let idle = (20_000.0 + hdr) * noise;
            let loaded = idle * 10.0 + size;
            for (name, v) in [
                (m::IDLE_TCP_RTT_P50_NS, idle),
                (m::IDLE_UDP_RTT_P50_NS, idle),
                (m::LOADED_TCP_RTT_P50_NS, loaded),
                (m::LOADED_UDP_RTT_P50_NS, loaded),
                (m::ADDED_TCP_RTT_P50_NS, loaded - idle),
                (m::ADDED_UDP_RTT_P50_NS, loaded - idle),
                (m::RPM_LOADED, 60e9 / loaded),
                (m::RPM_IDLE, 60e9 / idle),
                (m::UPLOAD_BPS, 4.0e9 * size / (size + hdr) * noise),
                (m::DOWNLOAD_BPS, 4.0e9 * size / (size + hdr) * noise),
            ] {
                out.insert(name.to_string(), v);
            }
        }
        TestKind::Pmtu => {
            out.insert(m::PATH_MTU_BYTES.to_string(), 1500.0);
            out.insert(m::PTB_RECEIVED.to_string(), 0.0);
            out.insert(m::BLACK_HOLE.to_string(), 0.0);
        }
        TestKind::Frag => {
            out.insert(m::DELIVERED_PCT.to_string(), 100.0);
        }
        TestKind::ExtHeaders => {
            out.insert(m::PLAIN_DELIVERED_PCT.to_string(), 100.0);
        }
    }
    out
}

/// The in-memory journal's refusal after `fail_after` records.
#[derive(Debug, thiserror::Error)]
#[error("simulated crash")]
pub struct SimulatedCrash;

/// An in-memory journal that can fail after a number of records (a simulated crash).
#[derive(Debug, Default)]
pub struct MemoryJournal {
    /// Every recorded attempt, in order.
    pub runs: Vec<(Slot, PastRun)>,
    /// (cell index, target met) per finished cell.
    pub cells_done: Vec<(u32, Option<bool>)>,
    /// Refuse the record after this many have been kept.
    pub fail_after: Option<usize>,
}

impl MemoryJournal {
    /// The journalled runs as history for a resumed scheduler.
    pub fn history(&self) -> Vec<PastRun> {
        self.runs.iter().map(|(_, p)| p.clone()).collect()
    }
}

impl Journal for MemoryJournal {
    fn record(&mut self, f: &Finished<'_>) -> Result<(), JournalError> {
        if self.fail_after.is_some_and(|n| self.runs.len() >= n) {
            return Err(JournalError::new(SimulatedCrash));
        }
        let (ok, metrics) = match &f.run.result {
            Ok(o) => (true, o.metrics.clone()),
            Err(_) => (false, BTreeMap::new()),
        };
        self.runs.push((
            f.slot,
            PastRun {
                cell_index: f.cell.index,
                warmup: f.slot.warmup,
                repetition: f.slot.repetition,
                attempt: f.attempt,
                ok,
                metrics,
            },
        ));
        Ok(())
    }

    fn cell_done(
        &mut self,
        cell: &Cell,
        outcome: &crate::schedule::CellOutcome,
    ) -> Result<(), JournalError> {
        self.cells_done.push((cell.index, outcome.target_met));
        Ok(())
    }
}
