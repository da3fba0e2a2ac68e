//! UDP loss and jitter describe the network or say they cannot, through the real
//! binary on loopback: a receiver that overflows is counted and marked receiver-limited
//! (exactly: on loopback the path loses nothing), the drop hook's loss is not; an
//! unpaced (or faster than 20 kpps) stream gives no jitter number but a reason; a
//! stream paced at ≤ 20 kpps stamps every datagram; and a known send-delay pattern gives the RFC 3550 jitter and RFC 5481
//! IPDV computed by hand.

use crate::support::engine::*;

#[test]
fn receiver_limited_run_counts_every_lost_datagram_as_a_socket_drop() {
    let _turn = serial();
    for (fam, _) in families() {
        // Unpaced into a small receive buffer: the receiving socket overflows. A receiver
        // without GRO (`batched`), so the socket counts datagrams.
        let args = [
            "-t",
            "udp-stream",
            "-f",
            fam,
            "-s",
            "1024",
            "-n",
            "20000",
            "--rcvbuf",
            "8K",
            "--udp-datapath",
            "batched",
        ];
        let v = run_json(&args, &[]);
        let lost = metric(&v, "lost_packets");
        assert!(lost > 0.0, "an 8 KiB buffer cannot take an unpaced burst");
        assert_eq!(metric(&v, "dup_packets"), 0.0);
        // Loopback loses nothing on the path: every lost datagram is a socket drop.
        assert_eq!(metric(&v, "rx_socket_drop_packets"), lost, "{fam}");
        assert_eq!(metric(&v, "receiver_limited"), 1.0);
        // The host counters are system-wide and read at the ends of the server's data
        // phase, not at the moment of each drop: under load a few drops can fall outside
        // that window, so only "it saw drops" and InErrors ⊇ RcvbufErrors are exact.
        assert!(metric(&v, "host_udp_in_error_packets") > 0.0, "{fam}");
        assert!(
            metric(&v, "host_udp_in_error_packets") >= metric(&v, "host_udp_rcvbuf_error_packets")
        );
    }
}

/// The default receiver of an unpaced stream takes GRO-coalesced buffers: its socket
/// counts dropped buffers of 1 to 64 datagrams, so the run shows no datagram count for
/// them, only the RFC 4737 loss, the receiver-limited mark and the reason.
#[test]
fn a_coalescing_receiver_counts_dropped_buffers_and_says_so() {
    let _turn = serial();
    let args = [
        "-t",
        "udp-stream",
        "-s",
        "1024",
        "-n",
        "20000",
        "--rcvbuf",
        "8K",
    ];
    let v = run_json(&args, &[]);
    let srv = &v["server"];
    // UDP GRO is in every kernel since 5.0: its absence here is a regression.
    assert_eq!(srv["applied"]["udp_gro"], "true", "{}", srv["applied"]);
    assert_eq!(srv["rx_coalesced"], true);
    let lost = metric(&v, "lost_packets");
    assert!(lost > 0.0, "an 8 KiB buffer cannot take an unpaced burst");
    // Loopback loses nothing on the path: every lost datagram was in a dropped buffer
    // of at most 64 (one GSO send).
    let buffers = srv["rx_socket_drops"]
        .as_f64()
        .expect("the socket's drop count");
    assert!(
        buffers >= 1.0 && buffers <= lost && lost <= 64.0 * buffers,
        "{buffers} buffers for {lost} datagrams"
    );
    assert_eq!(metric_opt(&v, "rx_socket_drop_packets"), None);
    // The host's counter is read at the ends of the server's data phase: under load the
    // drops can fall outside that window and it reads 0, which is a datagram count (of
    // none) and shown; any other count of a coalescing receiver is buffers, never shown.
    let host = metric_opt(&v, "host_udp_rcvbuf_error_packets");
    assert!(host.is_none() || host == Some(0.0), "{host:?}");
    assert_eq!(metric(&v, "receiver_limited"), 1.0);
    assert_eq!(
        metric(&v, "sent_packets"),
        metric(&v, "recv_packets") + lost,
        "every datagram sent is received or lost"
    );
    // The summary says why instead of a number.
    let o = run(&[
        "run",
        "-t",
        "udp-stream",
        "-s",
        "1024",
        "-n",
        "20000",
        "--rcvbuf",
        "8K",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("datagrams dropped by receiver    unavailable: the receiver took datagrams coalesced by GRO"),
        "{out}"
    );
    assert!(!out.contains("dropped by receiving socket "), "{out}");
}

#[test]
fn drop_hook_loss_is_exact_and_not_receiver_limited() {
    let _turn = serial();
    for (fam, _) in families() {
        let args = [
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
        let v = run_json(&args, &[("DUALPERF_TEST_DROP_EVERY", "10")]);
        assert_eq!(metric(&v, "lost_packets"), 100.0);
        assert_eq!(metric(&v, "rx_socket_drop_packets"), 0.0);
        assert_eq!(metric(&v, "receiver_limited"), 0.0);
    }
}

#[test]
fn unpaced_stream_reports_jitter_unavailable_with_a_reason_never_a_number() {
    let _turn = serial();
    let v = run_json(&["-t", "udp-stream", "-s", "512", "-n", "2000"], &[]);
    assert_eq!(metric_opt(&v, "jitter_rfc3550_ns"), None);
    assert_eq!(metric_opt(&v, "ipdv_p50_ns"), None);
    assert_eq!(metric_opt(&v, "ipdv_p99_ns"), None);
    let why = v["server"]["jitter_unavailable"].as_str().unwrap_or("");
    assert!(why.contains("unpaced"), "reason: {why:?}");
    assert_eq!(v["client"]["applied"]["udp_send_stamps"], "per-batch");
    // The text summary says so too.
    let o = run(&["run", "-t", "udp-stream", "-s", "512", "-n", "2000"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(text.contains("jitter and IPDV"), "{text}");
    assert!(text.contains("unavailable: unpaced stream"), "{text}");
    assert!(!text.contains("jitter (RFC 3550"), "{text}");
}

#[test]
fn paced_streams_stamp_each_datagram_or_say_why_jitter_is_unavailable() {
    let _turn = serial();
    // Up to 20 kpps: one stamp and one system call per datagram, no GSO, no GRO.
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "-s",
            "128",
            "-b",
            "20kpps",
            "-d",
            "0.3",
            "--rcvbuf",
            "4M",
        ],
        &[],
    );
    let (c, s) = (&v["client"]["applied"], &v["server"]["applied"]);
    assert_eq!(c["udp_send_stamps"], "per-datagram");
    assert!(
        c["udp_gso"].is_null(),
        "no GSO when stamping each datagram: {c}"
    );
    assert!(s["udp_gro"].is_null(), "no GRO at the receiver: {s}");
    // One stamp per datagram: at least a system call's variation, never the fractions
    // of a nanosecond that batch-shared stamps gave.
    let j = metric(&v, "jitter_rfc3550_ns");
    assert!(j >= 10.0, "jitter {j} ns");
    // 200 kpps goes out in batches sharing a stamp: no jitter number, a reason.
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "-s",
            "128",
            "-b",
            "200kpps",
            "-d",
            "0.3",
            "--rcvbuf",
            "4M",
        ],
        &[],
    );
    assert_eq!(v["client"]["applied"]["udp_send_stamps"], "per-batch");
    assert_eq!(metric_opt(&v, "jitter_rfc3550_ns"), None);
    assert_eq!(metric_opt(&v, "ipdv_p99_ns"), None);
    let why = v["server"]["jitter_unavailable"].as_str().unwrap_or("");
    assert!(why.contains("paced above 20 kpps"), "reason: {why:?}");
}

/// Datagrams alternately 0 and 2 ms late against their stamps: every transit
/// difference is 2 ms, so RFC 3550 jitter → 2 ms (J_n = 2 ms · (1 − (15/16)^n),
/// n = 999 differences), and every IPDV pair is |±2 ms|: p50 = p99 = 2 ms. The hook
/// moves the stamp (no sleep), so only the real stamp-to-arrival noise (µs) adds; a
/// thread busy-loops throughout to show it holds on a loaded machine.
#[test]
fn jitter_and_ipdv_match_a_known_send_delay_pattern_within_ten_percent() {
    let _turn = serial();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spin = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut x = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })
    };
    let n = 1000u32;
    let expected_jitter_ns = 2e6 * (1.0 - (15.0f64 / 16.0).powi(n as i32 - 1));
    let expected_ipdv_ns = 2e6;
    let mut results = Vec::new();
    for (fam, _) in families() {
        let v = run_json(
            &[
                "-t",
                "udp-stream",
                "-f",
                fam,
                "-s",
                "128",
                "-b",
                "250pps",
                "-n",
                &n.to_string(),
            ],
            &[("DUALPERF_TEST_SEND_DELAY_US", "0,2000")],
        );
        results.push((fam, v));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = spin.join();
    for (fam, v) in results {
        assert_eq!(metric(&v, "lost_packets"), 0.0);
        let within = |name: &str, expected: f64| {
            let got = metric(&v, name);
            assert!(
                (got - expected).abs() <= 0.10 * expected,
                "IPv{fam} {name}: {got} ns, expected {expected} ns ± 10 %"
            );
        };
        within("jitter_rfc3550_ns", expected_jitter_ns);
        within("ipdv_p50_ns", expected_ipdv_ns);
        within("ipdv_p99_ns", expected_ipdv_ns);
    }
}

/// `run --rate-search`: one unpaced trial, then paced ones; the figures are those of a
/// passing trial (loss within the threshold, paced so jitter is measured), and every
/// trial is listed with what it sent and lost.
#[test]
fn rate_search_reports_a_passing_paced_trial_and_lists_every_trial() {
    let _turn = serial();
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "-s",
            "1024",
            "-d",
            "0.6",
            "--rate-search",
            "--search-steps",
            "3",
            "--loss-threshold",
            "0.1",
            "--rcvbuf",
            "4M",
        ],
        &[],
    );
    let search = &v["rate_search"];
    let trials = search["trials"].as_array().expect("trials listed");
    assert!(
        (1..=4).contains(&trials.len()),
        "1 unpaced + up to 3 paced: {trials:?}"
    );
    assert_eq!(
        trials[0][0].as_f64(),
        Some(0.0),
        "the first trial is unpaced"
    );
    assert_eq!(metric(&v, "rate_search_trials"), trials.len() as f64);
    if trials.len() < 4 {
        // The search ended early only with nothing left to try: the highest passing
        // rate sent and the lowest failing rate asked are within 2 % (equal when the
        // unpaced trial passed: nothing can be offered above the sender's top rate).
        let passes = |t: &&serde_json::Value| t[2].as_f64().is_some_and(|l| l <= 0.1);
        let pass = trials
            .iter()
            .filter(passes)
            .filter_map(|t| t[1].as_f64())
            .fold(0.0, f64::max);
        // A failure bounds the search at the rate asked; so does a passing trial whose
        // sender fell short (below 95 %) of the rate it was asked for.
        let fell_short = |t: &&serde_json::Value| {
            t[1].as_f64().unwrap_or(0.0) < 0.95 * t[0].as_f64().unwrap_or(0.0)
        };
        let fail = trials
            .iter()
            .filter(|t| !passes(t) || fell_short(t))
            .filter_map(|t| {
                if t[0] == 0.0 {
                    t[1].as_f64()
                } else {
                    t[0].as_f64()
                }
            })
            .fold(f64::INFINITY, f64::min)
            .min(trials[0][1].as_f64().unwrap_or(f64::INFINITY));
        assert!(
            pass > 0.0 && fail <= pass * 1.02,
            "ended early at {trials:?}"
        );
    }
    if search["passed"] == true {
        let loss = metric(&v, "loss_pct");
        assert!(loss <= 0.1, "chosen trial lost {loss} %");
        // The chosen trial is the passing one that sent the most.
        let best = trials
            .iter()
            .filter(|t| t[2].as_f64().is_some_and(|l| l <= 0.1))
            .filter_map(|t| t[1].as_f64())
            .fold(0.0f64, f64::max);
        assert_eq!(metric(&v, "sent_pps"), best);
        // Jitter is a number only for a trial paced at ≤ 20 kpps; otherwise a reason.
        let jitter = metric_opt(&v, "jitter_rfc3550_ns");
        let why = v["server"]["jitter_unavailable"].as_str();
        assert!(jitter.is_some() != why.is_some(), "{jitter:?} {why:?}");
        let unpaced_won = trials[0][1].as_f64() == Some(best);
        assert_eq!(jitter.is_some(), best <= 20_000.0 && !unpaced_won);
    } else {
        assert!(v["warnings"].to_string().contains("no trial stayed within"));
    }
    // The spec reported is the run's, not a trial's.
    assert!(v["spec"]["rate"].is_null());
}
