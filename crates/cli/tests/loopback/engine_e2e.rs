//! End to end through the real binary with the embedded server, on 127.0.0.1 and ::1,
//! for every test type: byte accounting, exact datagram counts, the drop hook's exact
//! loss, RR percentiles in order, and which way bytes go.

use crate::support::engine::*;

#[test]
fn tcp_stream_receives_every_byte_sent_in_each_direction() {
    let _turn = serial();
    for (fam, _) in families() {
        for dir in [&[][..], &["--reverse"], &["--bidir"]] {
            let mut args = vec!["-t", "tcp-stream", "-f", fam, "-d", "0.2", "-P", "2"];
            args.extend_from_slice(dir);
            let v = run_json(&args, &[]);
            let sent = metric(&v, "sent_bytes");
            assert!(sent > 0.0, "{args:?}");
            assert_eq!(sent, metric(&v, "recv_bytes"), "{args:?}");
            each_side_moved_what_the_other_counted(&v, dir.first().copied());
        }
    }
}

#[test]
fn count_based_udp_delivers_exactly_n_with_zero_loss() {
    let _turn = serial();
    for (fam, _) in families() {
        for dir in [&[][..], &["--reverse"]] {
            let mut args = vec![
                "-t",
                "udp-stream",
                "-f",
                fam,
                "-s",
                "128",
                "-n",
                "1000",
                "-b",
                "10kpps",
                "--rcvbuf",
                "4M",
            ];
            args.extend_from_slice(dir);
            let v = run_json(&args, &[]);
            assert_eq!(metric(&v, "sent_packets"), 1000.0, "{args:?}");
            assert_eq!(metric(&v, "recv_packets"), 1000.0, "{args:?}");
            assert_eq!(metric(&v, "lost_packets"), 0.0);
            assert_eq!(metric(&v, "loss_pct"), 0.0);
            assert_eq!(metric(&v, "recv_bytes"), 128_000.0);
            assert!(metric(&v, "jitter_rfc3550_ns") >= 0.0);
            assert!(metric(&v, "ipdv_p50_ns") <= metric(&v, "ipdv_p99_ns"));
        }
    }
}

#[test]
fn drop_every_tenth_datagram_is_exactly_ten_percent_loss() {
    let _turn = serial();
    for (fam, _) in families() {
        for dir in [&[][..], &["--reverse"]] {
            let mut args = vec![
                "-t",
                "udp-stream",
                "-f",
                fam,
                "-s",
                "256",
                "-n",
                "1000",
                "-b",
                "10kpps",
                "--rcvbuf",
                "4M",
            ];
            args.extend_from_slice(dir);
            let v = run_json(&args, &[("DUALPERF_TEST_DROP_EVERY", "10")]);
            assert_eq!(metric(&v, "sent_packets"), 1000.0);
            assert_eq!(metric(&v, "recv_packets"), 900.0, "{args:?}");
            assert_eq!(metric(&v, "lost_packets"), 100.0);
            assert_eq!(metric(&v, "loss_pct"), 10.0);
        }
    }
}

#[test]
fn rr_tests_report_positive_ordered_rtts() {
    let _turn = serial();
    for (fam, _) in families() {
        for t in ["tcp-rr", "udp-rr"] {
            let v = run_json(&["-t", t, "-f", fam, "-s", "64", "-n", "300"], &[]);
            assert_eq!(metric(&v, "transactions"), 300.0, "{t} {fam}");
            let min = metric(&v, "rtt_min_ns");
            let (p50, p99, max) = (
                metric(&v, "rtt_p50_ns"),
                metric(&v, "rtt_p99_ns"),
                metric(&v, "rtt_max_ns"),
            );
            assert!(min > 0.0);
            assert!(
                min <= p50 && p50 <= p99 && p99 <= max,
                "{min} {p50} {p99} {max}"
            );
            assert!(metric(&v, "rtt_mean_ns") > 0.0);
        }
    }
}

#[test]
fn udp_rr_counts_lost_requests_and_does_not_hang() {
    let _turn = serial();
    let t0 = std::time::Instant::now();
    let v = run_json(
        &[
            "-t",
            "udp-rr",
            "-s",
            "64",
            "-n",
            "100",
            "--rr-timeout-ms",
            "20",
        ],
        &[("DUALPERF_TEST_DROP_EVERY", "10")],
    );
    assert_eq!(metric(&v, "rr_timeouts"), 10.0);
    assert_eq!(metric(&v, "transactions"), 90.0);
    assert!(t0.elapsed().as_secs_f64() < 3.0);
}

#[test]
fn udp_pacing_holds_the_rate_within_one_percent_at_128_bytes() {
    let _turn = serial();
    // Best of three: on a shared 2-core box another process can keep the sender off the
    // CPU for the last few ms of a run (load only ever lowers the rate; pacing itself is
    // schedule-based, so one unstarved run of three shows the pacer's accuracy). What
    // holds under any load is checked on every attempt: the pacer never sends ahead of
    // its schedule (sent packets ≤ rate × send time, plus one batch of 64).
    let best = |args: &[&str], name: &str, want: f64| {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let v = run_json(args, &[]);
            let sent_s = metric(&v, "sent_packets") / metric(&v, "sent_pps");
            assert!(
                metric(&v, "sent_packets") <= want * sent_s + 64.0,
                "sent ahead of the schedule: {v}"
            );
            best = best.min((metric(&v, name) - want).abs() / want);
            if best < 0.01 {
                break;
            }
        }
        best
    };
    let e = best(
        &["-t", "udp-stream", "-s", "128", "-d", "0.5", "-b", "20kpps"],
        "sent_pps",
        20_000.0,
    );
    assert!(e < 0.01, "packets/s off by {:.2} %", e * 100.0);
    // 200 kpps goes through the batched path (several datagrams per wake-up); the
    // receiver must see the rate too, over the whole run. The one-per-call fallback
    // (DUALPERF_NO_BATCH=1) cannot carry 200 kpps on 2 shared cores: 50 kpps there.
    let per_call = std::env::var_os("DUALPERF_NO_BATCH").is_some_and(|v| v == "1");
    let (rate, pps) = if per_call {
        ("50kpps", 50_000.0)
    } else {
        ("200kpps", 200_000.0)
    };
    let args = [
        "-t",
        "udp-stream",
        "-s",
        "128",
        "-d",
        "0.5",
        "-b",
        rate,
        "--rcvbuf",
        "4M",
    ];
    let e = best(&args, "recv_pps", pps);
    assert!(
        e < 0.01,
        "received packets/s at {rate} off by {:.2} %",
        e * 100.0
    );
}

#[test]
fn json_has_schema_version_framing_sizes_and_intervals() {
    let _turn = serial();
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "-f",
            "4",
            "-s",
            "128",
            "-d",
            "0.3",
            "-i",
            "0.1",
            "-b",
            "10kpps",
        ],
        &[],
    );
    assert_eq!(v["schema_version"], 1);
    assert_eq!(metric(&v, "ip_packet_bytes"), 128.0 + 8.0 + 20.0);
    // A loopback path is framed as loopback: no Ethernet frame.
    assert!(v["metrics"]
        .as_array()
        .is_some_and(|ms| ms.iter().all(|x| x["name"] != "eth_frame_bytes")));
    let n = v["intervals"].as_array().map_or(0, |a| a.len());
    assert!((3..=4).contains(&n), "{n} intervals");
    assert!(v["client"]["applied"]["sndbuf_bytes"].is_string());
}

#[test]
fn readable_summary_names_the_standards() {
    let _turn = serial();
    let o = run(&[
        "run",
        "-t",
        "udp-stream",
        "-s",
        "128",
        "-n",
        "200",
        "-b",
        "10kpps",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    for want in ["RFC 3550", "RFC 5481", "RFC 4737", "goodput at receiver"] {
        assert!(text.contains(want), "summary lacks {want}:\n{text}");
    }
    // Both ends' settings, the receiver's with how it received.
    let server = text
        .lines()
        .find(|l| l.trim_start().starts_with("socket (server, as applied)"))
        .unwrap_or_else(|| panic!("no server settings line:\n{text}"));
    assert!(server.contains("udp_datapath="), "{server}");
    assert!(text.contains("socket (client, as applied)"), "{text}");
}

#[test]
fn an_unreachable_udp_rate_still_stops_at_the_duration() {
    let _turn = serial();
    // 100 Gbit/s of 128-byte datagrams is ~98 Mpps, ten times what the batched GSO path
    // sends on a 2-core host (9 Mpps; 10 Gbit/s was within its reach): the schedule's
    // count must not outlive the deadline.
    let t0 = std::time::Instant::now();
    let v = run_json(
        &["-t", "udp-stream", "-s", "128", "-d", "0.3", "-b", "100G"],
        &[],
    );
    let wall_s = t0.elapsed().as_secs_f64();
    let d = metric(&v, "duration_s");
    assert!(d > 0.25 && d < 0.4, "duration_s {d}");
    assert!(
        wall_s < 1.5,
        "the run took {wall_s:.2} s of wall-clock time"
    );
    // The schedule's count for 0.3 s is 29.3 M datagrams.
    let sent = metric(&v, "sent_packets");
    assert!(sent > 0.0 && sent < 0.3 * 97.6e6, "sent {sent}");
}

#[test]
fn udp_jitter_on_loopback_is_positive_and_under_a_millisecond() {
    let _turn = serial();
    for (fam, _) in families() {
        let v = run_json(
            &[
                "-t",
                "udp-stream",
                "-f",
                fam,
                "-s",
                "128",
                "-d",
                "0.3",
                "-b",
                "10kpps",
                "--rcvbuf",
                "4M",
            ],
            &[],
        );
        let j = metric(&v, "jitter_rfc3550_ns");
        assert!(j > 0.0 && j < 1e6, "RFC 3550 jitter {j} ns over IPv{fam}");
        let p99 = metric(&v, "ipdv_p99_ns");
        assert!(p99 < 1e7, "IPDV p99 {p99} ns over IPv{fam}");
    }
}

#[test]
fn the_last_interval_ends_with_the_data_not_after_the_drain() {
    let _turn = serial();
    // Reverse: the client receives and drains ≥ 50 ms after the server's sender is done.
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "-f",
            "4",
            "-s",
            "128",
            "-d",
            "0.3",
            "-i",
            "0.1",
            "-b",
            "10kpps",
            "--reverse",
        ],
        &[],
    );
    let ivs = v["intervals"].as_array().expect("intervals");
    let last_end_s = ivs
        .iter()
        .filter_map(|i| i["end_ns"].as_f64())
        .fold(0.0, f64::max)
        / 1e9;
    assert!(
        (0.25..0.33).contains(&last_end_s),
        "last interval ends at {last_end_s:.3} s of a 0.3 s run"
    );
}

#[test]
fn udp_pacing_is_smooth_within_each_interval() {
    let _turn = serial();
    // A sender that kept the average but sent in bursts fails here: every full 100 ms
    // interval must carry the requested rate.
    // The last interval is left out: it can run past the end of the data phase up to
    // the next session tick.
    let rates = |v: &serde_json::Value| -> Vec<f64> {
        let ivs = v["intervals"].as_array().expect("intervals");
        ivs[..ivs.len().saturating_sub(1)]
            .iter()
            .filter_map(|i| {
                let span_s = (i["end_ns"].as_f64()? - i["start_ns"].as_f64()?) / 1e9;
                (span_s >= 0.09).then(|| i["sent_packets"].as_f64().unwrap_or(0.0) / span_s)
            })
            .collect()
    };
    let args = [
        "-t",
        "udp-stream",
        "-s",
        "128",
        "-d",
        "0.5",
        "-i",
        "0.1",
        "-b",
        "20kpps",
    ];
    let ok = |r: &[f64]| r.len() >= 3 && r.iter().all(|x| (x - 20_000.0).abs() < 1_000.0);
    // Best of three: a shared 2-core box can stall the sender for part of one interval
    // (a stall only ever makes an interval short of packets; a bursty pacer fails every
    // attempt).
    let mut r = rates(&run_json(&args, &[]));
    for _ in 0..2 {
        if ok(&r) {
            break;
        }
        r = rates(&run_json(&args, &[]));
    }
    assert!(ok(&r), "per-interval packets/s {r:?}");
}

#[test]
fn drop_hook_loss_is_exact_over_two_streams() {
    let _turn = serial();
    // -n is per stream: 2 × 500 sent, every 10th of each stream dropped.
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "-s",
            "128",
            "-n",
            "500",
            "-P",
            "2",
            "-b",
            "10kpps",
            "--rcvbuf",
            "4M",
        ],
        &[("DUALPERF_TEST_DROP_EVERY", "10")],
    );
    assert_eq!(metric(&v, "sent_packets"), 1000.0);
    assert_eq!(metric(&v, "recv_packets"), 900.0);
    assert_eq!(metric(&v, "lost_packets"), 100.0);
    assert_eq!(metric(&v, "loss_pct"), 10.0);
}

/// `--udp-datapath` reaches both ends and is recorded: per-datagram runs one datagram
/// per call on both sockets (the receiver of this stamped stream with `recvmsg`, for its
/// kernel timestamps; the sender's socket, which stamps nothing, would use `recvfrom`),
/// batched runs sendmmsg/recvmmsg without GSO; the counts stay exact either way.
#[test]
fn the_udp_datapath_option_is_applied_on_both_ends_and_recorded() {
    let _turn = serial();
    for (path, applied, client_calls, server_calls) in [
        (
            "per-datagram",
            "per-call",
            "linux:send/recvfrom",
            "linux:send/recvmsg",
        ),
        (
            "batched",
            "batched",
            "linux:sendmmsg/recvmmsg",
            "linux:sendmmsg/recvmmsg",
        ),
    ] {
        let v = run_json(
            &[
                "-t",
                "udp-stream",
                "-s",
                "256",
                "-n",
                "300",
                "-b",
                "5kpps",
                "--rcvbuf",
                "4M",
                "--udp-datapath",
                path,
            ],
            &[],
        );
        assert_eq!(metric(&v, "recv_packets"), 300.0, "{path}");
        for (side, calls) in [("client", client_calls), ("server", server_calls)] {
            assert_eq!(v[side]["applied"]["udp_datapath"], applied, "{path} {side}");
            assert_eq!(
                v[side]["applied"]["udp_datapath_calls"], calls,
                "{path} {side}"
            );
        }
    }
    // Unpaced, per datagram: no arrival time per datagram is needed, so the receiver
    // reads after timed waits (`+naps`) instead of a socket wake-up per datagram; the
    // count stays exact.
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "-s",
            "256",
            "-n",
            "2000",
            "--rcvbuf",
            "8M",
            "--udp-datapath",
            "per-datagram",
        ],
        &[],
    );
    assert_eq!(metric(&v, "sent_packets"), 2000.0);
    assert_eq!(metric(&v, "recv_packets"), 2000.0);
    assert_eq!(
        v["server"]["applied"]["udp_datapath_calls"],
        "linux:send/recvfrom+naps"
    );
    assert_eq!(
        v["client"]["applied"]["udp_datapath_calls"],
        "linux:send/recvfrom"
    );
    let o = run(&[
        "run",
        "-t",
        "udp-stream",
        "-n",
        "10",
        "--udp-datapath",
        "fast",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("per-datagram"), "{}", stderr(&o));
}
