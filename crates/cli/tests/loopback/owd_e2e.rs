//! One-way delay of UDP streams from the real binaries on loopback: with both ends on
//! one host the clock offset is estimated like any other (never claimed exact), its
//! bound covers the true 0, and a delay shown lies within its bound of 0 and the round
//! trip; against a server whose wall clock a test hook shifts by a
//! known amount, the NTP-style estimate recovers the shift within its stated bound, and
//! a delay the bound cannot support is reported unavailable with the reason.

use crate::support::engine::{metric_opt, run_json};
use crate::support::shared;
use crate::support::BIN;
use std::process::Command;

use crate::support::server as server_proc;
use server_proc::ServerProc;

#[test]
fn on_one_host_the_offset_is_measured_and_its_bound_covers_zero() {
    let _turn = shared();
    for family in ["4", "6"] {
        let rtt_min = metric_opt(
            &run_json(
                &["-f", family, "-t", "udp-rr", "-s", "256", "-n", "300"],
                &[],
            ),
            "rtt_min_ns",
        )
        .expect("udp-rr RTT");
        for reverse in [false, true] {
            let mut args = vec!["-f", family, "-t", "udp-stream", "-s", "256", "-b", "5kpps"];
            args.extend(["-d", "0.6"]);
            if reverse {
                args.push("-R");
            }
            let doc = run_json(&args, &[]);
            let what = format!("IPv{family} reverse={reverse}");
            let offset = metric_opt(&doc, "clock_offset_ns").expect("an offset");
            let bound = metric_opt(&doc, "clock_offset_uncertainty_ns").expect("its bound");
            // Never exact: at least 1 µs, and the true offset (0: one clock) within it.
            assert!(bound >= 1_000.0, "{what}: bound {bound}");
            assert!(offset.abs() <= bound, "{what}: offset {offset} ± {bound}");
            assert!(
                doc["clock"]["method"]
                    .as_str()
                    .unwrap()
                    .contains("NTP-style"),
                "{what}"
            );
            match metric_opt(&doc, "owd_min_ns") {
                Some(min) => {
                    let mean = metric_opt(&doc, "owd_mean_ns").unwrap();
                    let max = metric_opt(&doc, "owd_max_ns").unwrap();
                    assert!(min >= -bound, "{what}: min {min} ± {bound}");
                    assert!(min <= mean && mean <= max, "{what}: {min} {mean} {max}");
                    // One path in one direction can never take longer than the fastest
                    // round trip over both (within the offset's bound).
                    assert!(
                        min < rtt_min + bound,
                        "{what}: one-way min {min} ns vs RTT min {rtt_min} ns ± {bound}"
                    );
                }
                // Delays of a few µs against a bound of as many: unavailable, and why.
                None => {
                    let why = doc["one_way_delay_unavailable"].as_str().unwrap();
                    assert!(why.contains("known only to ±"), "{what}: {why}");
                }
            }
        }
    }
}

#[test]
fn a_shifted_server_clock_is_recovered_within_the_stated_bound() {
    let _turn = shared();
    const SHIFT_NS: f64 = 3_000_000_000.0;
    let mut cmd = Command::new(BIN);
    cmd.env("DUALPERF_TEST_CLOCK_SHIFT_NS", "3000000000");
    let srv = ServerProc::start_command(cmd, 0, &["--bind", "127.0.0.1"]);
    let port = srv.port().to_string();
    let doc = run_json(
        &[
            "127.0.0.1",
            "--port",
            &port,
            "-t",
            "udp-stream",
            "-s",
            "256",
            "-b",
            "5kpps",
            "-d",
            "0.5",
        ],
        &[],
    );
    let offset = metric_opt(&doc, "clock_offset_ns").expect("offset");
    let bound = metric_opt(&doc, "clock_offset_uncertainty_ns").expect("bound");
    assert!(bound > 0.0, "an estimate has a bound");
    assert!(
        (offset - SHIFT_NS).abs() <= bound,
        "offset {offset} ns, shift {SHIFT_NS} ns, bound ±{bound} ns"
    );
    assert!(doc["clock"]["method"]
        .as_str()
        .unwrap()
        .contains("NTP-style"));
    match metric_opt(&doc, "owd_min_ns") {
        // Reported: then it is physically possible within the bound.
        Some(min) => assert!(min >= -bound, "min {min}, bound {bound}"),
        // On loopback the delay (µs) is usually smaller than the bound: unavailable, and
        // the output says why.
        None => {
            let why = doc["one_way_delay_unavailable"].as_str().unwrap();
            assert!(why.contains("known only to ±"), "{why}");
        }
    }
}
