//! dualperf-measure: pure measurement accumulators. No I/O, no clock: callers pass every
//! time as `u64` nanoseconds and every reading as text or numbers.
//!
//! - [`latency`]: latency histogram (hdrhistogram) with exact min / max / mean / stddev.
//! - [`jitter`]: RFC 3550 §6.4.1 interarrival jitter and RFC 5481 IPDV.
//! - [`loss`]: lost packets and loss % (absent when nothing was sent), for every peer kind.
//! - [`seq`]: received / lost / duplicate / reordered counts as RFC 4737 defines them.
//! - [`interval`]: bytes and packets per interval → rate samples.
//! - [`cpu`]: /proc/stat parsing, CPU deltas, process CPU (re-exported from `wire::cpu`,
//!   where `net` fills them without depending on this crate) and netperf service demand.
//! - [`snmp`]: UDP error counters of /proc/net/snmp and snmp6 (receive-buffer drops;
//!   re-exported from `wire::snmp`).
//! - [`units`]: small unit newtypes (`Nanos`, `Bytes`, `BitsPerSec`, `PacketsPerSec`).
#![forbid(unsafe_code)]

pub mod cpu;
pub mod interval;
pub mod jitter;
pub mod latency;
pub mod loss;
pub mod owd;
pub mod seq;
pub use wire::snmp;
pub mod traffic;
pub mod units;
pub mod window;

pub use cpu::{
    service_demand_us_per_kb, service_demand_us_per_transaction, CoreTimes, CpuParseError,
    CpuSnapshot, CpuTimes, CpuUsage, ProcessCpuTimes,
};
pub use interval::{IntervalMeter, IntervalSample};
pub use jitter::{Ipdv, Rfc3550Jitter};
pub use latency::{LatencyHistogram, LatencySummary};
pub use loss::{loss_pct, lost_packets};
pub use owd::{ClockOffset, ClockReject, ClockSample, NoClockOffset, Transit};
pub use seq::{Arrival, SeqCounts, SeqTracker, SEQ_WINDOW};
pub use snmp::UdpErrorCounters;
pub use units::{BitsPerSec, Bytes, Nanos, PacketsPerSec};
pub use window::{WindowStats, Windows};
