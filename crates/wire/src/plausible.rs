//! Plausibility of what a peer reports. A peer's numbers are shown and stored only
//! after these checks: finite, non-negative where physical, nothing received that was
//! not sent (duplicates aside), CPU within 0–100 % (of all cores, of the busiest core,
//! or 100 % × cores for a process), durations within the run's wall time. A failed
//! check names the number and why it cannot be true; the caller fails the run with it.
//!
//! The same helpers check iperf3 results (crate `iperf3`).

use crate::proto::{CpuStats, SideStats, MAX_INTERVAL_SAMPLES};
use crate::spec::TestSpec;

/// Fastest rate any side is believed to move data: 10 Tbit/s (loopback on one host
/// reaches about 0.1 Tbit/s), so a claimed count of bytes must fit the wall time.
pub const MAX_PLAUSIBLE_BPS: f64 = 1e13;
/// Slack on elapsed times a peer reports beyond the client's own wall time of the
/// whole run (the two clocks run at the same rate; this covers scheduling).
pub const ELAPSED_SLACK_NS: u64 = 1_000_000_000;
/// Slack on CPU percentages (rounding of /proc/stat ticks).
pub const CPU_SLACK_PCT: f64 = 1.0;

/// Why a peer's report cannot be true.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("implausible result from the {who}: {what}")]
pub struct Implausible {
    /// "server", "iperf3 server".
    pub who: String,
    pub what: Violation,
}

/// One reported number that cannot be true, and why; `name` is the number as the
/// message names it ("bytes sent", "stream 3 jitter (s)").
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Violation {
    #[error("{name} = {value} (must be a finite number ≥ 0)")]
    Negative { name: String, value: f64 },
    #[error("{name} = {value} (must be finite)")]
    NotFinite { name: String, value: f64 },
    /// A count sent as a signed number that is below 0.
    #[error("{name} = {value} (must be ≥ 0)")]
    NegativeCount { name: String, value: i64 },
    #[error("{name} = {value} % (must be within 0–{max} %)")]
    Percentage { name: String, value: f64, max: f64 },
    #[error("{name} = {got} exceeds {limit_name} = {limit}")]
    Exceeds {
        name: String,
        got: u64,
        limit_name: String,
        limit: u64,
    },
    /// A count below what the other side counted (`than`: "the 5 bytes we received").
    #[error("{name} = {value} is less than {than}")]
    Below {
        name: String,
        value: u64,
        than: String,
    },
    #[error("{name} = {bytes} in a run of {:.3} s (faster than {} bit/s)", secs(.wall_ns), MAX_PLAUSIBLE_BPS)]
    TooFast {
        name: String,
        bytes: u64,
        wall_ns: u64,
    },
    #[error("an interval from {start_ns} ns to {end_ns} ns (outside the run's {max_ns} ns)")]
    IntervalOutsideRun {
        start_ns: u64,
        end_ns: u64,
        max_ns: u64,
    },
    #[error("{name} lost {lost} of {packets} datagrams (more than were sent)")]
    LostMoreThanSent {
        name: String,
        lost: i64,
        packets: i64,
    },
}

fn secs(ns: &u64) -> f64 {
    *ns as f64 / 1e9
}

/// `v` finite and at least 0.
pub fn non_negative(name: &str, v: f64) -> Result<(), Violation> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(Violation::Negative {
            name: name.to_string(),
            value: v,
        })
    }
}

/// `v` finite and within `0..=max` (plus [`CPU_SLACK_PCT`] for percentages).
pub fn percentage(name: &str, v: f64, max: f64) -> Result<(), Violation> {
    if v.is_finite() && v >= 0.0 && v <= max + CPU_SLACK_PCT {
        Ok(())
    } else {
        Err(Violation::Percentage {
            name: name.to_string(),
            value: v,
            max,
        })
    }
}

/// `got ≤ limit`, worded as "received more than was sent".
pub fn at_most(name: &str, got: u64, limit_name: &str, limit: u64) -> Result<(), Violation> {
    if got <= limit {
        Ok(())
    } else {
        Err(Violation::Exceeds {
            name: name.to_string(),
            got,
            limit_name: limit_name.to_string(),
            limit,
        })
    }
}

/// Bytes that cannot have been moved within `wall_ns` at [`MAX_PLAUSIBLE_BPS`].
pub fn bytes_within_time(name: &str, bytes: u64, wall_ns: u64) -> Result<(), Violation> {
    let max = MAX_PLAUSIBLE_BPS / 8.0 * (wall_ns as f64 / 1e9) + 1e6;
    if (bytes as f64) <= max {
        Ok(())
    } else {
        Err(Violation::TooFast {
            name: name.to_string(),
            bytes,
            wall_ns,
        })
    }
}

/// CPU figures: system and busiest-core % within 0–100, the process within
/// 0–100 × `cores` % of one core (`cores` unknown: 4096).
pub fn cpu(who: &str, c: &CpuStats, cores: Option<u32>) -> Result<(), Violation> {
    let cores = f64::from(cores.filter(|&n| n > 0).unwrap_or(4096));
    percentage(&format!("{who} CPU busy"), c.system_busy_pct, 100.0)?;
    percentage(&format!("{who} busiest core"), c.busiest_core_pct, 100.0)?;
    percentage(&format!("{who} process CPU"), c.proc_pct, 100.0 * cores)
}

/// Check the peer's side of a dualperf run against the spec and this side's own
/// (trusted) counts. `wall_ns` is this side's wall time of the whole run (connect to
/// result), `peer_cores` the core count the peer announced, if any.
pub fn check_peer_side(
    spec: &TestSpec,
    mine: &SideStats,
    peer: &SideStats,
    wall_ns: u64,
    peer_cores: Option<u32>,
) -> Result<(), Implausible> {
    check_side(spec, mine, peer, wall_ns, peer_cores).map_err(|what| Implausible {
        who: "server".into(),
        what,
    })
}

fn check_side(
    spec: &TestSpec,
    mine: &SideStats,
    peer: &SideStats,
    wall_ns: u64,
    peer_cores: Option<u32>,
) -> Result<(), Violation> {
    let max_ns = wall_ns.saturating_add(ELAPSED_SLACK_NS);
    at_most(
        "send time (ns)",
        peer.send_elapsed_ns,
        "the run's wall time",
        max_ns,
    )?;
    at_most(
        "receive time (ns)",
        peer.recv_elapsed_ns,
        "the run's wall time",
        max_ns,
    )?;
    bytes_within_time("bytes sent", peer.sent_bytes, wall_ns)?;
    bytes_within_time("bytes received", peer.recv_bytes, wall_ns)?;
    at_most(
        "packets sent",
        peer.sent_packets,
        "bytes sent",
        peer.sent_bytes,
    )?;
    at_most(
        "packets received",
        peer.recv_packets,
        "bytes received",
        peer.recv_bytes,
    )?;
    if let Some(j) = peer.jitter_rfc3550_ns {
        non_negative("jitter (ns)", j)?;
    }
    for (name, v) in [
        ("IPDV p50 (ns)", peer.ipdv_p50_ns),
        ("IPDV p99 (ns)", peer.ipdv_p99_ns),
    ] {
        if let Some(v) = v.filter(|v| !v.is_finite()) {
            return Err(Violation::NotFinite {
                name: name.to_string(),
                value: v,
            });
        }
    }
    if let Some(c) = &peer.cpu {
        cpu("server", c, peer_cores)?;
    }
    // Nothing arrives that was not sent; a UDP receiver counts each datagram once
    // (duplicates apart), a duplicate may add at most one more copy per datagram.
    let payload = u64::from(spec.payload_bytes);
    let udp = spec.kind.is_udp();
    let dups = |rx: &SideStats, tx: &SideStats| {
        if udp {
            rx.dup_packets.min(tx.sent_packets).saturating_mul(payload)
        } else {
            0
        }
    };
    let limit = mine.sent_bytes.saturating_add(dups(peer, mine));
    at_most(
        "bytes received",
        peer.recv_bytes,
        "bytes the client sent (plus duplicates)",
        limit,
    )?;
    let limit = peer.sent_bytes.saturating_add(dups(mine, peer));
    if mine.recv_bytes > limit {
        return Err(Violation::Below {
            name: "bytes sent".into(),
            value: peer.sent_bytes,
            than: format!("the {} bytes the client received", mine.recv_bytes),
        });
    }
    if udp {
        at_most(
            "datagrams received",
            peer.recv_packets,
            "datagrams the client sent",
            mine.sent_packets,
        )?;
        if mine.recv_packets > peer.sent_packets {
            return Err(Violation::Below {
                name: "datagrams sent".into(),
                value: peer.sent_packets,
                than: format!(
                    "the {} distinct datagrams the client received",
                    mine.recv_packets
                ),
            });
        }
        at_most(
            "reordered datagrams",
            peer.reordered_packets,
            "datagrams received",
            peer.recv_packets.saturating_add(peer.dup_packets),
        )?;
    }
    at_most(
        "streams",
        peer.streams.len() as u64,
        "streams of the test",
        u64::from(spec.streams).max(1) * 2,
    )?;
    at_most(
        "interval samples",
        peer.intervals.len() as u64,
        "the limit",
        MAX_INTERVAL_SAMPLES + 2,
    )?;
    at_most(
        "send-time windows",
        peer.windows.len() as u64,
        "the limit",
        MAX_INTERVAL_SAMPLES + 2,
    )?;
    for s in &peer.intervals {
        if s.start_ns > s.end_ns || s.end_ns > max_ns {
            return Err(Violation::IntervalOutsideRun {
                start_ns: s.start_ns,
                end_ns: s.end_ns,
                max_ns,
            });
        }
        at_most(
            "bytes received in an interval",
            s.recv_bytes,
            "bytes received",
            peer.recv_bytes,
        )?;
        at_most(
            "bytes sent in an interval",
            s.sent_bytes,
            "bytes sent",
            peer.sent_bytes,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Family, TestKind};

    fn sides(kind: TestKind) -> (TestSpec, SideStats, SideStats) {
        let spec = TestSpec::new(kind, Family::V4, 1000);
        let client = SideStats {
            sent_bytes: 1_000_000,
            sent_packets: 1000,
            send_elapsed_ns: 1_000_000_000,
            ..SideStats::default()
        };
        let server = SideStats {
            recv_bytes: 990_000,
            recv_packets: 990,
            recv_elapsed_ns: 1_000_000_000,
            jitter_rfc3550_ns: Some(1000.0),
            cpu: Some(CpuStats {
                system_busy_pct: 12.0,
                busiest_core_pct: 40.0,
                proc_pct: 30.0,
                ..CpuStats::default()
            }),
            ..SideStats::default()
        };
        (spec, client, server)
    }

    #[test]
    fn an_honest_report_passes() {
        for kind in [TestKind::UdpStream, TestKind::TcpStream] {
            let (spec, c, s) = sides(kind);
            assert_eq!(
                check_peer_side(&spec, &c, &s, 1_100_000_000, Some(4)),
                Ok(())
            );
        }
    }

    /// The typed errors print what the string errors printed, word for word.
    #[test]
    fn violations_read_as_the_messages_users_know() {
        let text = |r: Result<(), Violation>| r.unwrap_err().to_string();
        assert_eq!(
            text(non_negative("jitter (ns)", -5.0)),
            "jitter (ns) = -5 (must be a finite number ≥ 0)"
        );
        assert_eq!(
            text(percentage("CPU busy", 250.0, 100.0)),
            "CPU busy = 250 % (must be within 0–100 %)"
        );
        assert_eq!(
            text(at_most("streams", 9, "streams of the test", 2)),
            "streams = 9 exceeds streams of the test = 2"
        );
        assert_eq!(
            text(bytes_within_time("bytes sent", u64::MAX, 1_500_000_000)),
            "bytes sent = 18446744073709551615 in a run of 1.500 s (faster than 10000000000000 bit/s)"
        );
    }

    type Lie = (&'static str, fn(&mut SideStats));

    #[test]
    fn each_lie_is_named() {
        let lies: [Lie; 10] = [
            ("bytes received", |s| s.recv_bytes = u64::MAX),
            ("bytes received", |s| s.recv_bytes = 1_000_001),
            ("datagrams received", |s| s.recv_packets = 1001),
            ("process CPU", |s| s.cpu.as_mut().unwrap().proc_pct = -1e308),
            ("CPU busy", |s| {
                s.cpu.as_mut().unwrap().system_busy_pct = f64::NAN
            }),
            ("busiest core", |s| {
                s.cpu.as_mut().unwrap().busiest_core_pct = 250.0
            }),
            ("jitter", |s| s.jitter_rfc3550_ns = Some(-5.0)),
            ("receive time", |s| s.recv_elapsed_ns = 3_600_000_000_000),
            ("datagrams sent", |s| s.sent_packets = 0),
            ("send-time windows", |s| {
                s.windows = vec![Default::default(); MAX_INTERVAL_SAMPLES as usize + 3]
            }),
        ];
        for (words, lie) in lies {
            let (spec, mut c, mut s) = sides(TestKind::UdpStream);
            if words == "datagrams sent" {
                // Reverse: the client received 500 datagrams the server says it never sent.
                c.recv_packets = 500;
                c.recv_bytes = 500_000;
                s.sent_bytes = 600_000;
            }
            lie(&mut s);
            let e = check_peer_side(&spec, &c, &s, 1_100_000_000, Some(4))
                .expect_err(words)
                .to_string();
            assert!(e.starts_with("implausible result from the server"), "{e}");
            assert!(e.contains(words), "{words}: {e}");
        }
    }
}
