//! Process CPU use as iperf3 reports it (`cpu_util_total/user/system`): user and system
//! time of this process over wall time, in % of one core. The sample reads the OS
//! through `net` (getrusage on Unix, GetProcessTimes on Windows); the arithmetic is
//! `wire::cpu::ProcessCpuTimes`, the one home of process CPU.

use std::time::Instant;
use wire::cpu::ProcessCpuTimes;

/// A starting point for measuring this process's CPU use.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample {
    at: Instant,
    times: ProcessCpuTimes,
}

impl CpuSample {
    pub fn now() -> CpuSample {
        CpuSample {
            at: Instant::now(),
            times: net::process_cpu_times(),
        }
    }

    /// (total, user, system) in % of one core since `self`.
    pub fn util_since(&self) -> (f64, f64, f64) {
        let end = CpuSample::now();
        let wall = end.at.duration_since(self.at).as_nanos();
        let u = self
            .times
            .usage_until(&end.times, u64::try_from(wall).unwrap_or(u64::MAX));
        (u.total_pct, u.user_pct, u.system_pct)
    }
}
