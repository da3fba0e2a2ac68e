//! Every flag that takes a quantity reads it with the one grammar (`wire::quantity`):
//! the same spelling is accepted or refused the same way everywhere, and `mbps` gets
//! the same explained answer from each flag. Parsing happens before anything runs, so
//! these need no server, root or database.

use crate::support::BIN;
use std::process::{Command, Output};

fn dualperf(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("DUALPERF_STUDY_FAKE", "1")
        .output()
        .expect("the dualperf binary runs")
}

/// Each rate flag, with arguments that make the command stop right after parsing
/// (a dry run, a refused combination, an invalid MTU, a missing database), so that
/// an accepted rate never starts a test or builds a lab.
const RATE_FLAGS: &[&[&str]] = &[
    &["run", "-t", "udp-stream", "--peer", "iperf3", "-b"],
    &["study", "--dry-run", "-b"],
    &["run", "--lab", "p2p", "--peer", "iperf3", "--lab-rate"],
    &["study", "--dry-run", "--lab", "p2p", "--lab-rate"],
    &["lab", "up", "--mtu", "576", "--name", "qtyNOPE", "--rate"],
    &["report", "--db", "/nonexistent/dualperf.db", "--link-rate"],
];

#[test]
fn mbps_gets_the_same_explained_refusal_from_every_rate_flag() {
    for flag in RATE_FLAGS
        .iter()
        .copied()
        .chain([&["server", "--max-rate"][..]])
    {
        let mut args = flag.to_vec();
        args.push("100mbps");
        let o = dualperf(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} accepted");
        assert!(
            err.contains(
                "did you mean 100mbit (megabits per second) or 800mbit (megabytes per second)?"
            ),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn mbit_is_accepted_by_every_rate_flag() {
    // `study --dry-run` prints the plan; the others fail later for the reasons chosen
    // above, never on the rate.
    for flag in RATE_FLAGS {
        let mut args = flag.to_vec();
        args.push("100mbit");
        let o = dualperf(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !err.contains("is not a rate") && !err.contains("invalid value"),
            "{args:?}: {err}"
        );
    }
    let o = dualperf(&[
        "study",
        "--dry-run",
        "-b",
        "100mbit",
        "--tests",
        "udp-stream",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn byte_flags_share_one_grammar() {
    for flag in [
        &["run", "--sndbuf"][..],
        &["study", "--dry-run", "--sndbuf"],
    ] {
        for (value, ok) in [
            ("64K", true),
            ("64KiB", true),
            ("64KB", false),
            ("8X", false),
        ] {
            let mut args = flag.to_vec();
            args.push(value);
            if flag[0] == "run" {
                args.extend([
                    "-d",
                    "1ms",
                    "--connect-timeout",
                    "0.01",
                    "127.0.0.1",
                    "-p",
                    "1",
                ]);
            }
            let o = dualperf(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(!err.contains("invalid value"), ok, "{args:?}: {err}");
            if !ok {
                assert!(err.contains("e.g. 1408, 64K or 64KiB"), "{args:?}: {err}");
            }
        }
    }
}

#[test]
fn durations_take_units() {
    let o = dualperf(&["study", "--dry-run", "-d", "500ms", "--runs", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = dualperf(&["run", "-d", "2m", "--peer", "iperf3"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("min or ms"));
}
