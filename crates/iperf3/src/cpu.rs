//! Process CPU use as iperf3 reports it (`cpu_util_total/user/system`): user and system
//! time of this process over wall time, in % of one core. Parsing is pure; the sample
//! reads /proc/self/stat (Linux; elsewhere the numbers are 0).

use std::time::Instant;

/// Clock ticks per second of /proc's utime/stime (USER_HZ, 100 on every Linux ABI).
const USER_HZ: f64 = 100.0;

/// User and system CPU seconds of a process.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CpuTimes {
    pub user_s: f64,
    pub system_s: f64,
}

/// Parses utime and stime (fields 14 and 15) from the text of /proc/PID/stat. The
/// command name (field 2) may hold spaces and parentheses, so fields are counted
/// after the last ')'.
pub fn parse_proc_stat(text: &str) -> Option<CpuTimes> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11); // field 3 is the first after ')'
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(CpuTimes {
        user_s: utime as f64 / USER_HZ,
        system_s: stime as f64 / USER_HZ,
    })
}

/// A starting point for measuring this process's CPU use.
#[derive(Debug, Clone, Copy)]
pub struct CpuSample {
    at: Instant,
    times: CpuTimes,
}

impl CpuSample {
    pub fn now() -> CpuSample {
        let times = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|t| parse_proc_stat(&t))
            .unwrap_or_default();
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
    fn parses_a_stat_line_with_a_tricky_name() {
        let line = "4242 (my (odd) prog) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 3 0";
        let t = parse_proc_stat(line).unwrap();
        assert_eq!(
            t,
            CpuTimes {
                user_s: 2.5,
                system_s: 0.75
            }
        );
        assert_eq!(parse_proc_stat("12 (x) S 1 2"), None);
        assert_eq!(parse_proc_stat("no paren"), None);
    }

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
