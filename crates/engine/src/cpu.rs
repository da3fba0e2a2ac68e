//! CPU accounting over one side's data phase: a snapshot of system-wide /proc/stat and
//! of this process's CPU time at the start, another at the end, turned into
//! [`wire::proto::CpuStats`] with the `measure` crate's delta maths.

use measure::{CpuSnapshot, ProcessCpuTimes};
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

    /// CPU use from `self` to `later`; `None` when /proc/stat could not be read.
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let stats = start.until(&CpuMark::now()).expect("/proc/stat readable");
        assert!(stats.proc_cpu_ns >= 50_000_000, "{stats:?}");
        assert!(stats.proc_pct > 0.0, "{stats:?}");
        assert!(stats.system_busy_pct > 0.0 && stats.system_busy_pct <= 100.0);
        assert!(stats.busiest_core_pct >= stats.system_busy_pct - 1e-9);
        assert!(stats.system_busy_ns > 0);
    }
}
