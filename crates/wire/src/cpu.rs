//! CPU accounting from text and numbers: /proc/stat parsing into a snapshot, the busy
//! share between two snapshots (system-wide, per core, busiest core), and process CPU
//! from user+system times. `net` fills these from the OS; `measure` adds netperf's
//! service demand.
//!
//! /proc/stat fields (proc(5)), in USER_HZ ticks: user nice system idle iowait irq
//! softirq steal guest guest_nice. `guest` and `guest_nice` are already included in
//! `user` and `nice` by the kernel, so they are not added again. Busy = everything but
//! `idle`: iowait, irq, softirq and steal count as busy, as netperf's Linux
//! `cpu_util` does. The tick length cancels in every ratio, so no USER_HZ is needed.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why /proc/stat text could not be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CpuParseError {
    #[error("no aggregate 'cpu' line in /proc/stat text")]
    NoCpuLine,
    #[error("/proc/stat line {line}: {reason}")]
    BadLine { line: usize, reason: String },
}

/// Ticks spent in each state by one CPU (or all of them, for the aggregate line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    /// Included in `user` by the kernel.
    pub guest: u64,
    /// Included in `nice` by the kernel.
    pub guest_nice: u64,
}

impl CpuTimes {
    /// All ticks (guest fields excluded: they are inside user and nice).
    pub fn total(&self) -> u64 {
        self.user
            .saturating_add(self.nice)
            .saturating_add(self.system)
            .saturating_add(self.idle)
            .saturating_add(self.iowait)
            .saturating_add(self.irq)
            .saturating_add(self.softirq)
            .saturating_add(self.steal)
    }
    /// Ticks not idle (iowait, irq, softirq and steal count as busy).
    pub fn busy(&self) -> u64 {
        self.total().saturating_sub(self.idle)
    }

    /// Busy % between `self` (earlier) and `later`. Counters that went backwards (CPU
    /// hotplug, a known iowait quirk) count as zero. `None` when no tick elapsed.
    pub fn busy_pct_until(&self, later: &CpuTimes) -> Option<f64> {
        let total = later.total().saturating_sub(self.total());
        if total == 0 {
            return None;
        }
        let idle = later.idle.saturating_sub(self.idle).min(total);
        Some((total - idle) as f64 * 100.0 / total as f64)
    }

    fn parse_fields(line_no: usize, fields: &[&str]) -> Result<CpuTimes, CpuParseError> {
        if fields.len() < 4 {
            return Err(CpuParseError::BadLine {
                line: line_no,
                reason: format!("expected at least 4 counters, found {}", fields.len()),
            });
        }
        let mut v = [0u64; 10];
        for (slot, text) in v.iter_mut().zip(fields) {
            *slot = text.parse().map_err(|_| CpuParseError::BadLine {
                line: line_no,
                reason: format!("'{text}' is not a tick count"),
            })?;
        }
        Ok(CpuTimes {
            user: v[0],
            nice: v[1],
            system: v[2],
            idle: v[3],
            iowait: v[4],
            irq: v[5],
            softirq: v[6],
            steal: v[7],
            guest: v[8],
            guest_nice: v[9],
        })
    }
}

/// One CPU's times with its number (the N of `cpuN`; offline CPUs are absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreTimes {
    pub id: u32,
    pub times: CpuTimes,
}

/// The CPU lines of one /proc/stat read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSnapshot {
    /// The aggregate `cpu` line.
    pub all: CpuTimes,
    /// Each `cpuN` line, in file order.
    pub cores: Vec<CoreTimes>,
}

impl CpuSnapshot {
    /// Parse the text of /proc/stat. Lines other than `cpu`/`cpuN` are ignored.
    pub fn parse(text: &str) -> Result<CpuSnapshot, CpuParseError> {
        let mut all = None;
        let mut cores = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let mut words = line.split_ascii_whitespace();
            let Some(label) = words.next() else { continue };
            let Some(suffix) = label.strip_prefix("cpu") else {
                continue;
            };
            let fields: Vec<&str> = words.collect();
            let times = CpuTimes::parse_fields(i + 1, &fields)?;
            if suffix.is_empty() {
                all = Some(times);
            } else {
                let id = suffix.parse().map_err(|_| CpuParseError::BadLine {
                    line: i + 1,
                    reason: format!("'{label}' is not cpu<N>"),
                })?;
                cores.push(CoreTimes { id, times });
            }
        }
        Ok(CpuSnapshot {
            all: all.ok_or(CpuParseError::NoCpuLine)?,
            cores,
        })
    }

    /// Number of CPUs listed (at least 1).
    pub fn core_count(&self) -> u32 {
        (self.cores.len() as u32).max(1)
    }

    /// Utilisation between `self` (earlier) and `later`. Cores are matched by id.
    pub fn usage_until(&self, later: &CpuSnapshot) -> CpuUsage {
        let busy_pct = self.all.busy_pct_until(&later.all).unwrap_or(0.0);
        let per_core_busy_pct: Vec<(u32, f64)> = later
            .cores
            .iter()
            .filter_map(|c| {
                let before = self.cores.iter().find(|b| b.id == c.id)?;
                Some((c.id, before.times.busy_pct_until(&c.times).unwrap_or(0.0)))
            })
            .collect();
        let busiest_core_pct = per_core_busy_pct
            .iter()
            .map(|(_, p)| *p)
            .fold(0.0f64, f64::max);
        CpuUsage {
            busy_pct,
            per_core_busy_pct,
            busiest_core_pct,
            cores: later.core_count(),
        }
    }
}

/// CPU utilisation over an interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    /// System-wide busy %, 0–100 (100 = every CPU busy).
    pub busy_pct: f64,
    /// (cpu id, busy %) for each core present in both snapshots.
    pub per_core_busy_pct: Vec<(u32, f64)>,
    /// The highest per-core busy %.
    pub busiest_core_pct: f64,
    /// CPUs in the later snapshot.
    pub cores: u32,
}

impl CpuUsage {
    /// CPU time consumed over all cores during `elapsed_ns` of wall time, in ns:
    /// busy fraction × cores × elapsed (netperf's basis for service demand).
    pub fn busy_cpu_ns(&self, elapsed_ns: u64) -> f64 {
        self.busy_pct / 100.0 * f64::from(self.cores) * elapsed_ns as f64
    }
}

/// A process's consumed CPU (getrusage user and system time), in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessCpuTimes {
    pub user_ns: u64,
    pub system_ns: u64,
}

impl ProcessCpuTimes {
    pub fn total_ns(&self) -> u64 {
        self.user_ns.saturating_add(self.system_ns)
    }
    /// Process CPU between `self` (earlier) and `later` over `elapsed_ns` of wall time,
    /// as % of one core (can exceed 100 with several threads). 0 when no time elapsed.
    pub fn pct_of_one_core_until(&self, later: &ProcessCpuTimes, elapsed_ns: u64) -> f64 {
        self.usage_until(later, elapsed_ns).total_pct
    }
    /// User, system and total process CPU between `self` (earlier) and `later` over
    /// `elapsed_ns` of wall time, each in % of one core (iperf3's `cpu_util_*`); a part
    /// that went backwards counts 0, and all are 0 when no time elapsed.
    pub fn usage_until(&self, later: &ProcessCpuTimes, elapsed_ns: u64) -> ProcessCpuPct {
        if elapsed_ns == 0 {
            return ProcessCpuPct::default();
        }
        let pct = |used: u64| used as f64 * 100.0 / elapsed_ns as f64;
        let user_pct = pct(later.user_ns.saturating_sub(self.user_ns));
        let system_pct = pct(later.system_ns.saturating_sub(self.system_ns));
        ProcessCpuPct {
            total_pct: user_pct + system_pct,
            user_pct,
            system_pct,
        }
    }
}

/// A process's CPU use over an interval, in % of one core (can exceed 100).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessCpuPct {
    /// User + system.
    pub total_pct: f64,
    pub user_pct: f64,
    pub system_pct: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from a 2-CPU Linux 6.x guest, one second apart, with a busy loop on
    // cpu1 (trimmed of the intr line's long tail).
    const STAT_T0: &str = "\
cpu  10132153 290696 3084719 46828483 16683 0 25195 0 175628 0
cpu0 1393280 32966 572056 13366824 6800 0 15000 0 25000 0
cpu1 8738873 257730 2512663 33461659 9883 0 10195 0 150628 0
intr 1462898 0 2 0 0 0 0 0 0 1 0 0 0 0 0 0 0
ctxt 1990473
btime 1062191376
processes 2915
procs_running 1
procs_blocked 0
softirq 183433 0 21755 12 39 1137 231 21459 2263
";
    const STAT_T1: &str = "\
cpu  10132253 290696 3084729 46828573 16693 0 25205 0 175728 0
cpu0 1393285 32966 572061 13366904 6810 0 15004 0 25005 0
cpu1 8738968 257730 2512668 33461669 9883 0 10201 0 150723 0
intr 1463010 0 2 0 0 0 0 0 0 1 0 0 0 0 0 0 0
ctxt 1990573
";

    #[test]
    fn parses_every_field_of_aggregate_and_cores() {
        let s = CpuSnapshot::parse(STAT_T0).unwrap();
        assert_eq!(s.all.user, 10132153);
        assert_eq!(s.all.idle, 46828483);
        assert_eq!(s.all.softirq, 25195);
        assert_eq!(s.all.guest, 175628);
        assert_eq!(s.cores.len(), 2);
        assert_eq!(s.cores[1].id, 1);
        assert_eq!(s.cores[1].times.iowait, 9883);
        assert_eq!(s.core_count(), 2);
        // guest is inside user: not added to the total
        let t = s.all;
        assert_eq!(
            t.total(),
            t.user + t.nice + t.system + t.idle + t.iowait + t.irq + t.softirq + t.steal
        );
    }

    #[test]
    fn delta_counts_iowait_irq_softirq_as_busy_and_finds_busiest_core() {
        let a = CpuSnapshot::parse(STAT_T0).unwrap();
        let b = CpuSnapshot::parse(STAT_T1).unwrap();
        let u = a.usage_until(&b);
        // all: user 100 + system 10 + iowait 10 + softirq 10 = 130 busy, idle 90
        assert!((u.busy_pct - 130.0 * 100.0 / 220.0).abs() < 1e-9);
        // cpu0: 5 + 5 + 10 + 4 = 24 busy, 80 idle; cpu1: 95 + 5 + 6 = 106 busy, 10 idle
        let cpu0 = u.per_core_busy_pct[0].1;
        let cpu1 = u.per_core_busy_pct[1].1;
        assert!((cpu0 - 24.0 * 100.0 / 104.0).abs() < 1e-9);
        assert!((cpu1 - 106.0 * 100.0 / 116.0).abs() < 1e-9);
        assert_eq!(u.busiest_core_pct, cpu1);
        assert_eq!(u.cores, 2);
    }

    #[test]
    fn steal_counts_as_busy_and_backwards_counters_do_not_underflow() {
        let a = CpuTimes {
            idle: 1000,
            steal: 0,
            iowait: 50,
            ..Default::default()
        };
        let b = CpuTimes {
            idle: 1050,
            steal: 50,
            iowait: 40, // went backwards
            ..Default::default()
        };
        let pct = a.busy_pct_until(&b).unwrap();
        assert!(pct > 0.0 && pct <= 100.0, "{pct}");
        assert_eq!(a.busy_pct_until(&a), None);
    }

    #[test]
    fn old_kernels_with_four_fields_parse_and_garbage_is_an_error() {
        let s = CpuSnapshot::parse("cpu 1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(s.all.idle, 4);
        assert_eq!(s.all.steal, 0);
        assert_eq!(
            CpuSnapshot::parse("intr 1 2\n"),
            Err(CpuParseError::NoCpuLine)
        );
        assert!(matches!(
            CpuSnapshot::parse("cpu 1 2 x 4\n"),
            Err(CpuParseError::BadLine { line: 1, .. })
        ));
        assert!(matches!(
            CpuSnapshot::parse("cpu 1 2 3\n"),
            Err(CpuParseError::BadLine { .. })
        ));
        assert!(CpuSnapshot::parse("cpu 1 2 3 4\ncpuX 1 2 3 4\n").is_err());
    }

    /// Process times from user and system milliseconds.
    fn times_ms(user_ms: u64, system_ms: u64) -> ProcessCpuTimes {
        ProcessCpuTimes {
            user_ns: user_ms * 1_000_000,
            system_ns: system_ms * 1_000_000,
        }
    }

    #[test]
    fn process_cpu_is_a_share_of_one_core() {
        let (a, b) = (times_ms(1_000, 500), times_ms(1_300, 700));
        assert!((a.pct_of_one_core_until(&b, 1_000_000_000) - 50.0).abs() < 1e-9);
        assert_eq!(a.pct_of_one_core_until(&b, 0), 0.0);
    }

    #[test]
    fn process_cpu_splits_into_user_and_system_shares_of_one_core() {
        // The iperf3 port's cpu_util_total / user / system come from here.
        let (a, b) = (times_ms(1_000, 1_000), times_ms(1_500, 1_250));
        let u = a.usage_until(&b, 2_000_000_000);
        assert_eq!((u.user_pct, u.system_pct, u.total_pct), (25.0, 12.5, 37.5));
        assert_eq!(a.usage_until(&b, 0), ProcessCpuPct::default());
        // A part that went backwards counts 0; the other is kept.
        let u = a.usage_until(&times_ms(500, 2_000), 1_000_000_000);
        assert_eq!((u.user_pct, u.system_pct, u.total_pct), (0.0, 100.0, 100.0));
    }
}
