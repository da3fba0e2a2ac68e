//! CPU accounting over one side's data phase: a snapshot of system-wide CPU times (net) and
//! of this process's CPU time at the start, another at the end, turned into
//! [`wire::proto::CpuStats`] with the `measure` crate's delta maths. [`CpuWindow`] ends
//! the window at the last tick that saw traffic, so it covers the data phase only.

use crate::data::Shared;
use measure::{CpuSnapshot, ProcessCpuTimes};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;
use wire::proto::CpuStats;

pub(crate) struct CpuMark {
    at: Instant,
    system: Option<CpuSnapshot>,
    process: Option<ProcessCpuTimes>,
}

impl CpuMark {
    pub(crate) fn now() -> CpuMark {
        CpuMark {
            at: Instant::now(),
            system: net::read_proc_stat().ok(),
            process: Some(net::process_cpu_times()),
        }
    }

    /// CPU use from `self` to `later`; `None` when the system CPU times could not be read.
    pub(crate) fn until(&self, later: &CpuMark) -> Option<CpuStats> {
        let elapsed_ns = later.at.saturating_duration_since(self.at).as_nanos() as u64;
        let (a, b) = (self.system.as_ref()?, later.system.as_ref()?);
        let usage = a.usage_until(b);
        let (proc_pct, proc_cpu_ns) = match (&self.process, &later.process) {
            (Some(p0), Some(p1)) => (
                p0.pct_of_one_core_until(p1, elapsed_ns),
                p1.total_ns().saturating_sub(p0.total_ns()),
            ),
            _ => (0.0, 0),
        };
        Some(CpuStats {
            system_busy_pct: usage.busy_pct,
            busiest_core_pct: usage.busiest_core_pct,
            proc_pct,
            proc_cpu_ns,
            system_busy_ns: usage.busy_cpu_ns(elapsed_ns) as u64,
        })
    }
}

/// While traffic flows, end marks are taken at most this often: each reads /proc/stat
/// and the process times (tens of µs) on a core the data threads share, and the control
/// loop ticks every few ms.
const MARK_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// The CPU window of one side's data phase: a start mark, and an end mark re-taken while
/// the live counters move (at most every [`MARK_EVERY`]) and once more at the first
/// [`CpuWindow::tick`] that finds them still, so the window ends within two ticks of the
/// last send or receive (not after the drain and the result exchange).
pub(crate) struct CpuWindow {
    start: CpuMark,
    last_active: Option<CpuMark>,
    last_count: u64,
    /// The counters moved since the last mark.
    unmarked: bool,
}

impl CpuWindow {
    pub(crate) fn start() -> CpuWindow {
        CpuWindow {
            start: CpuMark::now(),
            last_active: None,
            last_count: 0,
            unmarked: false,
        }
    }
    /// Restart the window now (the data phase proper begins).
    pub(crate) fn restart(&mut self) {
        *self = CpuWindow::start();
    }
    /// Take an end mark if anything was sent or received since the last one and the
    /// last is [`MARK_EVERY`] old, or if the counters have just gone still.
    pub(crate) fn tick(&mut self, shared: &Shared) {
        let l = &shared.live;
        let count = l.sent_packets.load(Relaxed) + l.recv_packets.load(Relaxed);
        let moved = count != self.last_count;
        self.last_count = count;
        let due = self
            .last_active
            .as_ref()
            .is_none_or(|m| m.at.elapsed() >= MARK_EVERY);
        if (moved && due) || (!moved && self.unmarked) {
            self.last_active = Some(CpuMark::now());
            self.unmarked = false;
        } else if moved {
            self.unmarked = true;
        }
    }
    /// CPU use from the start to the end of traffic (or now, if there was none).
    pub(crate) fn finish(mut self, shared: &Shared) -> Option<CpuStats> {
        self.tick(shared);
        if self.unmarked {
            self.last_active = Some(CpuMark::now());
        }
        let end = self.last_active.take().unwrap_or_else(CpuMark::now);
        self.start.until(&end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_ends_at_the_last_tick_with_traffic() {
        let shared = Shared::new(Instant::now(), 1, None);
        let mut w = CpuWindow::start();
        std::thread::sleep(std::time::Duration::from_millis(20));
        shared.add_sent(100, 1);
        w.tick(&shared);
        // Idle time after the last traffic (a drain, the result exchange) is not counted.
        std::thread::sleep(std::time::Duration::from_millis(200));
        w.tick(&shared);
        let end_ns = w
            .last_active
            .as_ref()
            .map(|m| m.at.duration_since(w.start.at));
        let end_ms = end_ns.map_or(u128::MAX, |d| d.as_millis());
        assert!((20..150).contains(&end_ms), "window ends after {end_ms} ms");
        assert!(w.finish(&shared).is_some());
    }

    /// While the counters move, marks are taken at most every MARK_EVERY; the tick
    /// after they go still takes one, so the window still ends at the traffic's end.
    #[test]
    fn marks_are_spaced_while_traffic_flows_and_taken_when_it_stops() {
        let shared = Shared::new(Instant::now(), 1, None);
        let mut w = CpuWindow::start();
        shared.add_sent(100, 1);
        w.tick(&shared);
        let first = w.last_active.as_ref().map(|m| m.at).expect("first mark");
        // Traffic at every tick, well within MARK_EVERY of the first mark: no new mark
        // (unless this thread was held up past MARK_EVERY, which the check allows for).
        shared.add_sent(100, 1);
        w.tick(&shared);
        let second = w.last_active.as_ref().map(|m| m.at).expect("a mark");
        assert!(second == first || second.duration_since(first) >= MARK_EVERY);
        assert!(w.unmarked || second != first);
        // The first still tick marks the end of the traffic.
        w.tick(&shared);
        assert!(!w.unmarked);
        let end = w.last_active.as_ref().map(|m| m.at).expect("end mark");
        assert!(end > first, "the still tick took a mark");
        // Further still ticks take none.
        w.tick(&shared);
        assert_eq!(w.last_active.as_ref().map(|m| m.at), Some(end));
    }

    #[test]
    fn a_busy_loop_shows_up_as_process_and_system_cpu() {
        let start = CpuMark::now();
        // Spin until this process has used 50 ms of CPU (however busy the box is).
        let t0 = Instant::now();
        let mut x = 0u64;
        while net::process_cpu_times().total_ns()
            < start.process.map_or(0, |p| p.total_ns()) + 50_000_000
            && t0.elapsed().as_secs() < 5
        {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        let stats = start
            .until(&CpuMark::now())
            .expect("system CPU times readable");
        assert!(stats.proc_cpu_ns >= 50_000_000, "{stats:?}");
        assert!(stats.proc_pct > 0.0, "{stats:?}");
        assert!(stats.system_busy_pct > 0.0 && stats.system_busy_pct <= 100.0);
        assert!(stats.busiest_core_pct >= stats.system_busy_pct - 1e-9);
        assert!(stats.system_busy_ns > 0);
    }
}
