//! Turns one iperf3 test (our per-stream counts plus the server's results document) into
//! dualperf's flat metrics, per direction, and says which metrics an iperf3 peer cannot
//! give. Pure: no I/O, tested on captured server JSON.

use crate::error::Iperf3Error;
use crate::json::Results;
use crate::streams::StreamOutcome;
use serde_json::Value;
use wire::metrics::{self as m, Metric};
use wire::plausible::Violation;
use wire::spec::{Direction, TestSpec};

/// One of our streams after the test.
#[derive(Debug, Clone)]
pub struct OurStream {
    pub id: i64,
    pub we_send: bool,
    pub outcome: StreamOutcome,
}

/// One direction of a test (client → server or server → client), both sides' counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirectionResult {
    pub streams: usize,
    pub sent_bytes: u64,
    pub recv_bytes: u64,
    /// UDP: datagrams sent.
    pub sent_packets: Option<u64>,
    /// UDP: highest sequence seen by the receiver, summed over streams.
    pub highest_seq: Option<u64>,
    /// UDP: net lost datagrams (iperf3's `errors`), summed.
    pub lost_packets: Option<i64>,
    /// UDP: receiver's RFC 3550 jitter, mean over streams, seconds.
    pub jitter_s: Option<f64>,
    /// UDP, only when we receive: datagrams that arrived out of order.
    pub reordered_packets: Option<u64>,
}

/// What a test against an iperf3 server measured.
#[derive(Debug, Clone)]
pub struct Iperf3Result {
    /// The headline metrics (for --bidir: both directions added up; see `notes`).
    pub metrics: Vec<Metric>,
    /// Names from `wire::metrics::ALL` this test could not produce.
    pub unavailable: Vec<&'static str>,
    /// Human-readable remarks (why metrics are missing, how bidir is summed, …).
    pub notes: Vec<String>,
    /// Client → server direction, if data went that way.
    pub forward: Option<DirectionResult>,
    /// Server → client direction, if data went that way.
    pub reverse: Option<DirectionResult>,
    /// TEST_RUNNING to TEST_END on our clock.
    pub duration_s: f64,
    /// The server's results document as received (extra keys included).
    pub server_json: Value,
    /// Our results document as sent.
    pub client_json: Value,
}

fn direction(
    ours: &[OurStream],
    server: &Results,
    we_send: bool,
    is_udp: bool,
) -> Result<Option<DirectionResult>, Iperf3Error> {
    let mine: Vec<&OurStream> = ours.iter().filter(|s| s.we_send == we_send).collect();
    if mine.is_empty() {
        return Ok(None);
    }
    let mut d = DirectionResult {
        streams: mine.len(),
        ..DirectionResult::default()
    };
    let mut jitters = Vec::new();
    for s in &mine {
        let peer = server.stream(s.id).ok_or_else(|| {
            Iperf3Error::Protocol(format!("the server's results have no stream {}", s.id))
        })?;
        let udp = s.outcome.udp.as_ref();
        if we_send {
            d.sent_bytes += s.outcome.bytes;
            d.recv_bytes += peer.bytes;
            if is_udp {
                *d.sent_packets.get_or_insert(0) += s.outcome.sent_packets;
                *d.highest_seq.get_or_insert(0) += u64::try_from(peer.packets).unwrap_or(0);
                *d.lost_packets.get_or_insert(0) += peer.errors.max(0);
                jitters.push(peer.jitter_s);
            }
        } else {
            d.sent_bytes += peer.bytes;
            d.recv_bytes += s.outcome.bytes;
            if let Some(u) = udp.filter(|_| is_udp) {
                *d.sent_packets.get_or_insert(0) += u64::try_from(peer.packets).unwrap_or(0);
                *d.highest_seq.get_or_insert(0) += u.max_seq;
                *d.lost_packets.get_or_insert(0) += u.errors.max(0);
                *d.reordered_packets.get_or_insert(0) += u.out_of_order;
                jitters.push(u.jitter_s());
            }
        }
    }
    if !jitters.is_empty() {
        d.jitter_s = Some(jitters.iter().sum::<f64>() / jitters.len() as f64);
    }
    Ok(Some(d))
}

/// Most a datagram receiver may count beyond what was sent, for duplicates: 1 %.
const DUP_SLACK_DIVISOR: u64 = 100;

/// Plausibility of the server's numbers (see `wire::plausible`): nothing received that
/// was not sent (bar 1 % duplicates), no sequence number beyond the datagrams sent,
/// losses within the sequence seen (so loss stays within 0–100 %), jitter finite and
/// ≥ 0, CPU within 0–100 % × 1024 cores (iperf3 reports process CPU, cores unknown),
/// byte counts that fit the test's wall time.
fn check_peer(
    ours: &[OurStream],
    server: &Results,
    is_udp: bool,
    duration_s: f64,
) -> Result<(), Violation> {
    use wire::plausible as p;
    let wall_ns = (duration_s.max(0.0) * 1e9) as u64 + p::ELAPSED_SLACK_NS;
    p::percentage("cpu_util_total", server.cpu_util_total, 100.0 * 1024.0)?;
    p::percentage("cpu_util_user", server.cpu_util_user, 100.0 * 1024.0)?;
    p::percentage("cpu_util_system", server.cpu_util_system, 100.0 * 1024.0)?;
    for s in ours {
        let Some(peer) = server.stream(s.id) else {
            continue; // reported by `direction`
        };
        let id = s.id;
        p::bytes_within_time(&format!("stream {id} bytes"), peer.bytes, wall_ns)?;
        if !is_udp {
            if s.we_send {
                p::at_most(
                    &format!("stream {id} bytes received"),
                    peer.bytes,
                    "bytes we sent",
                    s.outcome.bytes,
                )?;
            } else if s.outcome.bytes > peer.bytes {
                return Err(Violation::Below {
                    name: format!("stream {id} bytes sent"),
                    value: peer.bytes,
                    than: format!("the {} bytes we received", s.outcome.bytes),
                });
            }
            continue;
        }
        p::non_negative(&format!("stream {id} jitter (s)"), peer.jitter_s)?;
        let packets = u64::try_from(peer.packets).map_err(|_| Violation::NegativeCount {
            name: format!("stream {id} packets"),
            value: peer.packets,
        })?;
        if s.we_send {
            let dup = s.outcome.sent_packets / DUP_SLACK_DIVISOR + 1;
            p::at_most(
                &format!("stream {id} highest sequence number"),
                packets,
                "datagrams we sent",
                s.outcome.sent_packets,
            )?;
            p::at_most(
                &format!("stream {id} bytes received"),
                peer.bytes,
                "bytes we sent (plus 1 % duplicates)",
                s.outcome
                    .bytes
                    .saturating_add(s.outcome.bytes / DUP_SLACK_DIVISOR + dup * 65_535),
            )?;
            if peer.errors > peer.packets {
                return Err(Violation::LostMoreThanSent {
                    name: format!("stream {id}"),
                    lost: peer.errors,
                    packets: peer.packets,
                });
            }
        } else if let Some(u) = &s.outcome.udp {
            if u.max_seq > packets {
                return Err(Violation::Below {
                    name: format!("stream {id} datagrams sent"),
                    value: packets,
                    than: format!("the sequence number {} we received", u.max_seq),
                });
            }
        }
    }
    Ok(())
}

/// Adds two directions (for --bidir's headline numbers).
fn sum(a: &DirectionResult, b: &DirectionResult) -> DirectionResult {
    let add = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (None, None) => None,
        _ => Some(x.unwrap_or(0) + y.unwrap_or(0)),
    };
    DirectionResult {
        streams: a.streams + b.streams,
        sent_bytes: a.sent_bytes + b.sent_bytes,
        recv_bytes: a.recv_bytes + b.recv_bytes,
        sent_packets: add(a.sent_packets, b.sent_packets),
        highest_seq: add(a.highest_seq, b.highest_seq),
        lost_packets: match (a.lost_packets, b.lost_packets) {
            (None, None) => None,
            (x, y) => Some(x.unwrap_or(0) + y.unwrap_or(0)),
        },
        jitter_s: match (a.jitter_s, b.jitter_s) {
            (Some(x), Some(y)) => Some(x.max(y)),
            (x, y) => x.or(y),
        },
        reordered_packets: None,
    }
}

/// Builds the result of one test from our streams and the server's results.
pub fn build(
    spec: &TestSpec,
    ours: &[OurStream],
    server: &Results,
    server_json: Value,
    client_json: Value,
    duration_s: f64,
    local_cpu_pct: f64,
) -> Result<Iperf3Result, Iperf3Error> {
    let is_udp = spec.kind.is_udp();
    check_peer(ours, server, is_udp, duration_s).map_err(Iperf3Error::Implausible)?;
    let forward = direction(ours, server, true, is_udp)?;
    let reverse = direction(ours, server, false, is_udp)?;
    let mut notes = vec![
        "an iperf3 peer has no request/response test: RTT and transaction metrics need a dualperf peer".to_string(),
        "CPU figures are per process (iperf3's cpu_util_total), not system-wide".to_string(),
    ];
    let head = match (&forward, &reverse) {
        (Some(f), Some(r)) => {
            notes.push("--bidir: headline metrics add both directions; see forward/reverse".into());
            sum(f, r)
        }
        (Some(d), None) | (None, Some(d)) => d.clone(),
        (None, None) => return Err(Iperf3Error::Protocol("the test had no data streams".into())),
    };
    if spec.direction != Direction::Reverse && head.sent_packets.is_some() {
        notes.push(
            "reordering is counted only by the receiver; an iperf3 server does not report it"
                .into(),
        );
    }
    let secs = duration_s.max(1e-9);
    let mut metrics = vec![
        Metric::new(m::DURATION_S, duration_s),
        Metric::new(m::SENT_BYTES, head.sent_bytes as f64),
        Metric::new(m::RECV_BYTES, head.recv_bytes as f64),
        Metric::new(m::THROUGHPUT_BPS, head.recv_bytes as f64 * 8.0 / secs),
        Metric::new(m::SEND_RATE_BPS, head.sent_bytes as f64 * 8.0 / secs),
    ];
    if let (Some(sent), Some(highest), Some(lost)) =
        (head.sent_packets, head.highest_seq, head.lost_packets)
    {
        let recv = highest.saturating_sub(u64::try_from(lost).unwrap_or(0));
        metrics.push(Metric::new(m::SENT_PACKETS, sent as f64));
        metrics.push(Metric::new(m::RECV_PACKETS, recv as f64));
        metrics.push(Metric::new(m::SENT_PPS, sent as f64 / secs));
        metrics.push(Metric::new(m::RECV_PPS, recv as f64 / secs));
        metrics.push(Metric::new(m::LOST_PACKETS, lost as f64));
        // iperf3: loss % = errors / the sender's packet count (errors ≤ packets ≤ sent
        // is checked above), absent when nothing was sent.
        let lost_u = u64::try_from(lost).unwrap_or(0);
        if let Some(pct) = measure::loss_pct(sent, sent.saturating_sub(lost_u)) {
            metrics.push(Metric::new(m::LOSS_PCT, pct));
        }
    }
    if let Some(j) = head.jitter_s {
        metrics.push(Metric::new(m::JITTER_RFC3550_NS, j * 1e9));
    }
    if let (Some(r), None) = (reverse.as_ref().and_then(|r| r.reordered_packets), &forward) {
        metrics.push(Metric::new(m::REORDERED_PACKETS, r as f64));
    }
    metrics.push(Metric::new(m::PROC_LOCAL_PCT, local_cpu_pct));
    metrics.push(Metric::new(m::PROC_REMOTE_PCT, server.cpu_util_total));
    // Service demand as the engine defines it (wire::metrics): each side's process CPU
    // (iperf3's cpu_util_total is user + system time as % of one core over the test)
    // per KB of payload received. One function computes it for both peers.
    let cpu_ns = |pct: f64| pct / 100.0 * secs * 1e9;
    for (name, pct) in [
        (m::SERVICE_DEMAND_LOCAL_US, local_cpu_pct),
        (m::SERVICE_DEMAND_REMOTE_US, server.cpu_util_total),
    ] {
        if let Some(d) = measure::service_demand_us_per_kb(cpu_ns(pct), head.recv_bytes) {
            metrics.push(Metric::new(name, d));
        }
    }
    let unavailable = m::ALL
        .iter()
        .copied()
        .filter(|n| !m::LOADED.contains(n) && !metrics.iter().any(|x| x.name == *n))
        .collect();
    Ok(Iperf3Result {
        metrics,
        unavailable,
        notes,
        forward,
        reverse,
        duration_s,
        server_json,
        client_json,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::udp::UdpRecvStats;
    use wire::spec::{Family, TestKind};

    fn get(r: &Iperf3Result, name: &str) -> f64 {
        r.metrics
            .iter()
            .find(|x| x.name == name)
            .map(|x| x.value)
            .unwrap_or(f64::NAN)
    }

    const UDP_SERVER: &str = r#"{"cpu_util_total":1.2,"cpu_util_user":0.1,"cpu_util_system":1.1,"sender_has_retransmits":18446744073709551615,"streams":[{"id":1,"bytes":120000,"retransmits":18446744073709551615,"jitter":2e-05,"errors":40,"packets":976,"start_time":0,"end_time":1.000114}]}"#;

    #[test]
    fn forward_udp_takes_loss_and_jitter_from_the_server() {
        let server = Results::from_json(&serde_json::from_str(UDP_SERVER).unwrap()).unwrap();
        let spec = TestSpec::new(TestKind::UdpStream, Family::V4, 128);
        let ours = [OurStream {
            id: 1,
            we_send: true,
            outcome: StreamOutcome {
                bytes: 124_928,
                sent_packets: 976,
                ..Default::default()
            },
        }];
        let r = build(&spec, &ours, &server, Value::Null, Value::Null, 1.0, 3.0).unwrap();
        assert_eq!(get(&r, m::SENT_BYTES), 124_928.0);
        assert_eq!(get(&r, m::RECV_BYTES), 120_000.0);
        assert_eq!(get(&r, m::THROUGHPUT_BPS), 960_000.0);
        assert_eq!(get(&r, m::LOST_PACKETS), 40.0);
        assert_eq!(get(&r, m::RECV_PACKETS), 936.0);
        assert!((get(&r, m::LOSS_PCT) - 40.0 * 100.0 / 976.0).abs() < 1e-9);
        assert!((get(&r, m::JITTER_RFC3550_NS) - 20_000.0).abs() < 1e-6);
        assert_eq!(get(&r, m::PROC_REMOTE_PCT), 1.2);
        assert!(r.unavailable.contains(&m::RTT_P99_NS));
        assert!(r.unavailable.contains(&m::REORDERED_PACKETS));
        assert!(!r.unavailable.contains(&m::THROUGHPUT_BPS));
        assert!(r.reverse.is_none());
    }

    #[test]
    fn nothing_sent_has_no_loss_figure_rather_than_zero() {
        // One home for loss % (measure::loss): the loss of nothing is absent, not 0 %.
        let server = UDP_SERVER
            .replace(r#""bytes":120000"#, r#""bytes":0"#)
            .replace(r#""errors":40,"packets":976"#, r#""errors":0,"packets":0"#);
        let server = Results::from_json(&serde_json::from_str(&server).unwrap()).unwrap();
        let spec = TestSpec::new(TestKind::UdpStream, Family::V4, 128);
        let ours = [OurStream {
            id: 1,
            we_send: true,
            outcome: StreamOutcome::default(),
        }];
        let r = build(&spec, &ours, &server, Value::Null, Value::Null, 1.0, 3.0).unwrap();
        assert_eq!(get(&r, m::SENT_PACKETS), 0.0);
        assert_eq!(get(&r, m::LOST_PACKETS), 0.0);
        assert!(r.metrics.iter().all(|x| x.name != m::LOSS_PCT));
        assert!(r.unavailable.contains(&m::LOSS_PCT));
    }

    #[test]
    fn a_lying_servers_results_are_refused_as_implausible() {
        // Regression (issue 11.5): these gave "loss 111731.84 %" and
        // "1000000 of 895 datagrams lost".
        let lies = [
            (r#""errors":1000000,"packets":895"#, "lost 1000000 of 895"),
            (r#""errors":0,"packets":5000"#, "highest sequence number"),
            (
                r#""errors":0,"packets":976,"bytes":9000000"#,
                "bytes received",
            ),
            (r#""errors":0,"packets":976,"jitter":-1"#, "jitter"),
            (
                r#""errors":0,"packets":976,"cpu_util_total":-1e308"#,
                "cpu_util_total",
            ),
        ];
        let spec = TestSpec::new(TestKind::UdpStream, Family::V4, 128);
        let ours = [OurStream {
            id: 1,
            we_send: true,
            outcome: StreamOutcome {
                bytes: 124_928,
                sent_packets: 976,
                ..Default::default()
            },
        }];
        for (lie, words) in lies {
            let mut v: serde_json::Value = serde_json::from_str(UDP_SERVER).unwrap();
            let patch: serde_json::Value = serde_json::from_str(&format!("{{{lie}}}")).unwrap();
            for (k, val) in patch.as_object().unwrap() {
                if k.starts_with("cpu") {
                    v[k] = val.clone();
                } else {
                    v["streams"][0][k] = val.clone();
                }
            }
            let server = Results::from_json(&v).unwrap();
            let e = build(&spec, &ours, &server, Value::Null, Value::Null, 1.0, 3.0)
                .err()
                .unwrap_or_else(|| panic!("accepted {lie}"))
                .to_string();
            assert!(
                e.starts_with("implausible result from the iperf3 server"),
                "{e}"
            );
            assert!(e.contains(words), "{lie}: {e}");
        }
        // bytes = 2^64−1 is implausible, not missing (issue 11.9).
        let mut v: serde_json::Value = serde_json::from_str(UDP_SERVER).unwrap();
        v["streams"][0]["bytes"] = serde_json::json!(u64::MAX);
        let e = Results::from_json(&v).unwrap_err();
        assert_eq!(
            e,
            crate::json::ResultsError::StreamBytes("18446744073709551615".into())
        );
        assert_eq!(
            e.to_string(),
            "implausible result: stream reports bytes = 18446744073709551615 (must be a count ≥ 0 below 2^63)"
        );
    }

    #[test]
    fn reverse_udp_uses_our_receiver_counts() {
        let server = Results::from_json(&serde_json::from_str(UDP_SERVER).unwrap()).unwrap();
        let mut spec = TestSpec::new(TestKind::UdpStream, Family::V6, 128);
        spec.direction = Direction::Reverse;
        let udp = UdpRecvStats {
            bytes: 119_000,
            received: 930,
            max_seq: 976,
            errors: 46,
            out_of_order: 2,
            ..Default::default()
        };
        let ours = [OurStream {
            id: 1,
            we_send: false,
            outcome: StreamOutcome {
                bytes: 119_000,
                udp: Some(udp),
                ..Default::default()
            },
        }];
        let r = build(&spec, &ours, &server, Value::Null, Value::Null, 2.0, 3.0).unwrap();
        assert_eq!(
            get(&r, m::SENT_BYTES),
            120_000.0,
            "the server's bytes are what was sent"
        );
        assert_eq!(get(&r, m::RECV_BYTES), 119_000.0);
        assert_eq!(get(&r, m::SENT_PACKETS), 976.0);
        assert_eq!(get(&r, m::LOST_PACKETS), 46.0);
        assert_eq!(get(&r, m::REORDERED_PACKETS), 2.0);
        assert_eq!(get(&r, m::THROUGHPUT_BPS), 119_000.0 * 8.0 / 2.0);
    }

    #[test]
    fn a_stream_missing_from_the_server_results_is_an_error() {
        let server = Results::from_json(&serde_json::from_str(UDP_SERVER).unwrap()).unwrap();
        let spec = TestSpec::new(TestKind::TcpStream, Family::V4, 1000);
        let ours = [OurStream {
            id: 3,
            we_send: true,
            outcome: StreamOutcome::default(),
        }];
        let err = build(&spec, &ours, &server, Value::Null, Value::Null, 1.0, 0.0).unwrap_err();
        assert!(err.to_string().contains("no stream 3"), "{err}");
    }

    #[test]
    fn bidir_adds_both_directions() {
        let text = r#"{"cpu_util_total":5,"cpu_util_user":1,"cpu_util_system":4,"sender_has_retransmits":0,"streams":[
            {"id":1,"bytes":1000,"retransmits":-1,"jitter":0,"errors":0,"packets":0},
            {"id":3,"bytes":3000,"retransmits":-1,"jitter":0,"errors":0,"packets":0}]}"#;
        let server = Results::from_json(&serde_json::from_str(text).unwrap()).unwrap();
        let mut spec = TestSpec::new(TestKind::TcpStream, Family::V4, 1000);
        spec.direction = Direction::Bidir;
        let ours = [
            OurStream {
                id: 1,
                we_send: true,
                outcome: StreamOutcome {
                    bytes: 1100,
                    ..Default::default()
                },
            },
            OurStream {
                id: 3,
                we_send: false,
                outcome: StreamOutcome {
                    bytes: 2900,
                    ..Default::default()
                },
            },
        ];
        let r = build(&spec, &ours, &server, Value::Null, Value::Null, 1.0, 0.0).unwrap();
        assert_eq!(r.forward.as_ref().unwrap().recv_bytes, 1000);
        assert_eq!(r.reverse.as_ref().unwrap().sent_bytes, 3000);
        assert_eq!(get(&r, m::RECV_BYTES), 3900.0);
        assert_eq!(get(&r, m::SENT_BYTES), 4100.0);
        assert!(r.notes.iter().any(|n| n.contains("bidir")));
        assert!(
            r.unavailable.contains(&m::LOSS_PCT),
            "TCP has no loss metric"
        );
    }
}
