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
    #[error("an interval from {start_ns} ns to {end_ns} ns ends after the run's {max_ns} ns")]
    IntervalOutsideRun {
        start_ns: u64,
        end_ns: u64,
        max_ns: u64,
    },
    #[error("an interval from {start_ns} ns to {end_ns} ns ends before it starts")]
    IntervalReversed { start_ns: u64, end_ns: u64 },
    #[error("an interval from {start_ns} ns starts before the previous one's end at {previous_end_ns} ns")]
    IntervalsOverlap { start_ns: u64, previous_end_ns: u64 },
    /// Two figures out of their order (`min ≤ mean`, `p50 ≤ p99`).
    #[error("{lower} = {lower_value} is greater than {upper} = {upper_value} (must be {lower} ≤ {upper})")]
    Unordered {
        lower: String,
        lower_value: f64,
        upper: String,
        upper_value: f64,
    },
    /// A time or delay larger in magnitude than the run it was measured in.
    #[error("{name} = {value:.3e} is longer than the run's {max_ns} ns")]
    LongerThanRun {
        name: String,
        value: f64,
        max_ns: u64,
    },
    /// Bytes that `packets` datagrams of at most `max_payload` bytes cannot carry.
    #[error("{name} = {bytes} in {packets} datagrams of at most {max_payload} bytes")]
    BytesWithoutDatagrams {
        name: String,
        bytes: u64,
        packets: u64,
        max_payload: u32,
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

/// `lower ≤ upper` for two figures of one distribution (each finite).
pub fn ordered(lower: (&str, f64), upper: (&str, f64)) -> Result<(), Violation> {
    for (name, v) in [lower, upper] {
        if !v.is_finite() {
            return Err(Violation::NotFinite {
                name: name.to_string(),
                value: v,
            });
        }
    }
    if lower.1 <= upper.1 {
        Ok(())
    } else {
        Err(Violation::Unordered {
            lower: lower.0.to_string(),
            lower_value: lower.1,
            upper: upper.0.to_string(),
            upper_value: upper.1,
        })
    }
}

/// `min ≤ mean ≤ max` over whichever of the three are reported; `names` as the
/// message names them.
pub fn min_mean_max(names: [&str; 3], values: [Option<f64>; 3]) -> Result<(), Violation> {
    let present: Vec<(&str, f64)> = names
        .iter()
        .zip(values)
        .filter_map(|(name, v)| v.map(|v| (*name, v)))
        .collect();
    for pair in present.windows(2) {
        ordered(pair[0], pair[1])?;
    }
    Ok(())
}

/// A time (ns, either sign) no longer than the run: `|v| ≤ max_ns`, finite.
pub fn within_run(name: &str, v: f64, max_ns: u64) -> Result<(), Violation> {
    if !v.is_finite() {
        return Err(Violation::NotFinite {
            name: name.to_string(),
            value: v,
        });
    }
    if v.abs() <= max_ns as f64 {
        Ok(())
    } else {
        Err(Violation::LongerThanRun {
            name: name.to_string(),
            value: v,
            max_ns,
        })
    }
}

/// UDP counts: `bytes` carried by `packets` datagrams of at most `max_payload` bytes
/// (so no bytes without a datagram), and at least a byte per datagram.
pub fn bytes_in_datagrams(
    name: &str,
    bytes: u64,
    packets: u64,
    max_payload: u32,
) -> Result<(), Violation> {
    at_most(
        &format!("{name} datagrams"),
        packets,
        &format!("{name} bytes"),
        bytes,
    )?;
    if bytes <= packets.saturating_mul(u64::from(max_payload)) {
        Ok(())
    } else {
        Err(Violation::BytesWithoutDatagrams {
            name: format!("{name} bytes"),
            bytes,
            packets,
            max_payload,
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
        within_run("jitter (ns)", j, max_ns)?;
    }
    for (name, v) in [
        ("IPDV p50 (ns)", peer.ipdv_p50_ns),
        ("IPDV p99 (ns)", peer.ipdv_p99_ns),
    ] {
        if let Some(v) = v {
            within_run(name, v, max_ns)?;
        }
    }
    if let (Some(p50), Some(p99)) = (peer.ipdv_p50_ns, peer.ipdv_p99_ns) {
        ordered(("IPDV p50 (ns)", p50), ("IPDV p99 (ns)", p99))?;
    }
    // Transit times (arrival on the server's clock origin − send stamp on the
    // client's): both origins fall within the run, so each is within ± its wall time.
    let transit = [
        peer.transit_min_ns.map(|v| v as f64),
        peer.transit_mean_ns,
        peer.transit_max_ns.map(|v| v as f64),
    ];
    let names = [
        "one-way transit min (ns)",
        "one-way transit mean (ns)",
        "one-way transit max (ns)",
    ];
    for (name, v) in names.iter().zip(transit) {
        if let Some(v) = v {
            within_run(name, v, max_ns)?;
        }
    }
    min_mean_max(names, transit)?;
    for w in &peer.windows {
        non_negative("a window's jitter (ns)", w.jitter_ns)?;
        within_run("a window's jitter (ns)", w.jitter_ns, max_ns)?;
        within_run(
            "a window's largest one-way transit (ns)",
            w.transit_max_ns as f64,
            max_ns,
        )?;
        at_most(
            "a window's datagrams received",
            w.recv_packets,
            "its bytes received",
            w.recv_bytes,
        )?;
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
        let max_payload = spec.family.max_udp_payload_bytes();
        bytes_in_datagrams("received", peer.recv_bytes, peer.recv_packets, max_payload)?;
        bytes_in_datagrams("sent", peer.sent_bytes, peer.sent_packets, max_payload)?;
        for st in &peer.streams {
            let name = format!("stream {}", st.stream_id);
            let (rx, tx) = (format!("{name} received"), format!("{name} sent"));
            bytes_in_datagrams(&rx, st.recv_bytes, st.recv_packets, max_payload)?;
            bytes_in_datagrams(&tx, st.sent_bytes, st.sent_packets, max_payload)?;
        }
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
    let mut previous_end_ns = 0;
    for s in &peer.intervals {
        if s.start_ns > s.end_ns {
            return Err(Violation::IntervalReversed {
                start_ns: s.start_ns,
                end_ns: s.end_ns,
            });
        }
        if s.end_ns > max_ns {
            return Err(Violation::IntervalOutsideRun {
                start_ns: s.start_ns,
                end_ns: s.end_ns,
                max_ns,
            });
        }
        if s.start_ns < previous_end_ns {
            return Err(Violation::IntervalsOverlap {
                start_ns: s.start_ns,
                previous_end_ns,
            });
        }
        previous_end_ns = s.end_ns;
        if udp {
            let max_payload = spec.family.max_udp_payload_bytes();
            let iv = "an interval's";
            bytes_in_datagrams(
                &format!("{iv} received"),
                s.recv_bytes,
                s.recv_packets,
                max_payload,
            )?;
            bytes_in_datagrams(
                &format!("{iv} sent"),
                s.sent_bytes,
                s.sent_packets,
                max_payload,
            )?;
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
    use crate::proto::IntervalSample;
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
        let lies: [Lie; 18] = [
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
            ("datagrams sent", |s| s.sent_packets = 100),
            ("send-time windows", |s| {
                s.windows = vec![Default::default(); MAX_INTERVAL_SAMPLES as usize + 3]
            }),
            // Issue 38's lying server: min > mean > max.
            (
                "one-way transit min (ns) = 4590000 is greater than one-way transit mean (ns) = 590000",
                |s| {
                    s.transit_min_ns = Some(4_590_000);
                    s.transit_mean_ns = Some(590_000.0);
                    s.transit_max_ns = Some(-410_000);
                },
            ),
            (
                "one-way transit mean (ns) = 590000 is greater than one-way transit max (ns) = -410000",
                |s| {
                    s.transit_min_ns = Some(-500_000);
                    s.transit_mean_ns = Some(590_000.0);
                    s.transit_max_ns = Some(-410_000);
                },
            ),
            // 0 datagrams received with bytes received (9.99 Mbit/s of goodput).
            ("received bytes = 990000 in 0 datagrams", |s| {
                s.recv_packets = 0
            }),
            ("jitter (ns) = 1.000e300 is longer than the run's", |s| {
                s.jitter_rfc3550_ns = Some(1e300)
            }),
            ("IPDV p50 (ns) = 5000 is greater than IPDV p99 (ns) = 10", |s| {
                s.ipdv_p50_ns = Some(5000.0);
                s.ipdv_p99_ns = Some(10.0);
            }),
            ("one-way transit mean (ns) = NaN (must be finite)", |s| {
                s.transit_mean_ns = Some(f64::NAN)
            }),
            ("an interval from 300 ns to 200 ns ends before it starts", |s| {
                s.intervals = vec![IntervalSample {
                    start_ns: 300,
                    end_ns: 200,
                    ..Default::default()
                }]
            }),
            ("an interval from 100 ns starts before the previous one's end at 200 ns", |s| {
                let iv = |start_ns, end_ns| IntervalSample {
                    start_ns,
                    end_ns,
                    ..Default::default()
                };
                s.intervals = vec![iv(0, 200), iv(100, 300)]
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
