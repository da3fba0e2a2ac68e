//! CPU accounting: the readings and their differences live in [`wire::cpu`] (so the OS
//! layer `net` can fill them without depending on this crate) and are re-exported here;
//! this module adds netperf's service demand.

pub use wire::cpu::*;

/// Netperf's service demand for a stream test: µs of CPU per KB (1024 bytes) of
/// payload moved, from the CPU time the caller names (dualperf uses its own process's
/// user + system time on each side). `None` when no byte moved.
pub fn service_demand_us_per_kb(busy_cpu_ns: f64, bytes: u64) -> Option<f64> {
    (bytes > 0).then(|| busy_cpu_ns / 1000.0 / (bytes as f64 / 1024.0))
}

/// Netperf's service demand for a request/response test: µs of CPU (the caller's
/// figure, as above) per transaction. `None` when no transaction completed.
pub fn service_demand_us_per_transaction(busy_cpu_ns: f64, transactions: u64) -> Option<f64> {
    (transactions > 0).then(|| busy_cpu_ns / 1000.0 / transactions as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_demand_is_cpu_time_per_kb_and_per_transaction() {
        // 25 % of 2 cores for 2 s = 1 s of CPU; 1 GiB moved → 1e6 µs / 1048576 KB
        let usage = CpuUsage {
            busy_pct: 25.0,
            cores: 2,
            ..Default::default()
        };
        let cpu_ns = usage.busy_cpu_ns(2_000_000_000);
        assert!((cpu_ns - 1e9).abs() < 1e-3);
        let sd = service_demand_us_per_kb(cpu_ns, 1 << 30).unwrap();
        assert!((sd - 1e6 / 1_048_576.0).abs() < 1e-12);
        assert_eq!(service_demand_us_per_kb(cpu_ns, 0), None);
        let sd_rr = service_demand_us_per_transaction(cpu_ns, 100_000).unwrap();
        assert!((sd_rr - 10.0).abs() < 1e-9);
    }
}
