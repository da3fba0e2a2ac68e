//! Process CPU use as iperf3 reports it (`cpu_util_total/user/system`): user and system
//! time of this process over wall time, in % of one core. The sample reads the OS
//! through `net` (getrusage on Unix, GetProcessTimes on Windows).

use std::time::Instant;

/// User and system CPU seconds of a process.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuTimes {
    pub user_s: f64,
    pub system_s: f64,
}

/// A starting point for measuring this process's CPU use.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample {
    at: Instant,
    times: CpuTimes,
}

impl CpuSample {
    pub fn now() -> CpuSample {
        let t = net::process_cpu_times();
        let times = CpuTimes {
            user_s: t.user_ns as f64 / 1e9,
            system_s: t.system_ns as f64 / 1e9,
        };
        CpuSample {
            at: Instant::now(),
            times,
        }
    }

    /// (total, user, system) in % of one core since `self`.
    pub fn util_since(&self) -> (f64, f64, f64) {
        let end = CpuSample::now();
        util_pct(
            self.times,
            end.times,
            end.at.duration_since(self.at).as_secs_f64(),
        )
    }
}

/// (total, user, system) in % of one core between two samples `wall_s` apart.
pub fn util_pct(start: CpuTimes, end: CpuTimes, wall_s: f64) -> (f64, f64, f64) {
    if wall_s <= 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let user = ((end.user_s - start.user_s) / wall_s * 100.0).max(0.0);
    let system = ((end.system_s - start.system_s) / wall_s * 100.0).max(0.0);
    (user + system, user, system)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utilisation_is_percent_of_one_core() {
        let a = CpuTimes {
            user_s: 1.0,
            system_s: 1.0,
        };
        let b = CpuTimes {
            user_s: 1.5,
            system_s: 1.25,
        };
        let (total, user, system) = util_pct(a, b, 2.0);
        assert!((user - 25.0).abs() < 1e-9 && (system - 12.5).abs() < 1e-9);
        assert!((total - 37.5).abs() < 1e-9);
        assert_eq!(util_pct(a, b, 0.0), (0.0, 0.0, 0.0));
    }
}
