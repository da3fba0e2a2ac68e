//! `dualperf model` end to end: the published figures through the binary, every
//! assumption printed with the result, and errors that name the bad field. Pure
//! arithmetic: no network, root or database.

use crate::support::BIN;
use serde_json::Value;
use std::process::{Command, Output};

fn dualperf(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("model")
        .args(args)
        .output()
        .expect("the dualperf binary runs")
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let o = dualperf(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("model --json prints JSON")
}

fn number(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

fn within(got: f64, want: f64, rel: f64) {
    assert!(
        ((got - want) / want).abs() <= rel,
        "got {got}, want {want} ± {rel}"
    );
}

/// Gast ("802.11 wireless throughput", O'Reilly, 2003) under his assumptions: no
/// backoff, ACK at the data rate, DCF, TCP without timestamps (1460-byte segments).
const GAST: &[&str] = &[
    "--transport",
    "tcp",
    "--family",
    "4",
    "--sizes",
    "1460",
    "--backoff",
    "none",
    "--ack-rate",
    "data",
    "--access",
    "dcf",
    "--tcp-timestamps",
    "off",
];

#[test]
fn gasts_figures_come_out_of_the_binary_within_half_a_percent() {
    // (link, transactions/s, Mbit/s)
    for (link, tps, mbit) in [("802.11b:11", 479.0, 5.6), ("802.11a:54", 2336.0, 27.3)] {
        let mut args = vec!["--link", link];
        args.extend_from_slice(GAST);
        let v = json(&args);
        let rows = v["rows"].as_array().expect("rows");
        assert_eq!(rows.len(), 1, "{v}");
        within(number(&rows[0], "payloads_per_s"), tps, 0.005);
        within(number(&rows[0], "goodput_bps"), mbit * 1e6, 0.005);
    }
}

#[test]
fn the_table_states_every_assumption_and_the_models_limits() {
    let o = dualperf(&[
        "--link",
        "802.11n:mcs=7,width=20,gi=short,band=2.4",
        "--sizes",
        "128,1408",
        "--transport",
        "tcp",
        "--security",
        "ccmp",
        "--llc-snap",
        "off",
        "--ampdu",
        "16",
        "--tcp-acks",
        "delayed",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "802.11n MCS 7, 1 stream, 20 MHz, 400 ns GI, 2.4 GHz",
        "access: EDCA best effort (AIFSN 3)",
        "backoff: mean, CWmin/2 slots",
        "ACK rate: basic, 24 Mbit/s",
        "LLC/SNAP: off",
        "security: CCMP, 16 bytes per MPDU",
        "A-MPDU: up to 16 MPDUs, Block Ack",
        "acks every second segment",
        "rate as iw prints it: 72.2 MBit/s",
        "% contention",
        "% TCP acks",
        "model limits: one saturated sender; no collisions, retries, rate adaptation",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    // Two sizes × two families.
    assert_eq!(
        text.lines()
            .filter(|l| l.contains(" v4 ") || l.contains(" v6 "))
            .count(),
        4,
        "{text}"
    );
}

#[test]
fn airtime_shares_add_up_and_ipv6_never_beats_ipv4() {
    let v = json(&[
        "--link",
        "802.11ac:mcs=9,nss=2,width=80,gi=short",
        "--sizes",
        "128,512,1408",
    ]);
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 6);
    for row in rows {
        let shares = row["airtime_shares"].as_object().expect("shares");
        assert_eq!(shares.len(), 5, "{row}");
        let sum: f64 = shares.values().filter_map(Value::as_f64).sum();
        within(sum, 1.0, 1e-9);
    }
    for pair in rows.chunks(2) {
        assert!(
            number(&pair[1], "goodput_bps") <= number(&pair[0], "goodput_bps"),
            "{pair:?}"
        );
    }
    within(number(&v, "rate_bps"), 866.666_666e6, 1e-6);
    assert_eq!(
        v["assumptions"]["access"], "EDCA best effort (AIFSN 3)",
        "{v}"
    );
}

#[test]
fn the_tbf_link_gives_the_same_numbers_as_the_report_model() {
    // peers-baseline §5: UDP over IPv4, 128 B on tbf at 100 Mbit/s: 75.29 Mbit/s.
    let v = json(&["--link", "tbf:100mbit", "--sizes", "128", "--family", "4"]);
    within(number(&v["rows"][0], "goodput_bps"), 75.29e6, 0.0001);
    let v = json(&["--link", "loopback", "--sizes", "128"]);
    assert!(v["rows"][0]["goodput_bps"].is_null(), "{v}");
}

fn refused(args: &[&str]) -> String {
    let o = dualperf(args);
    assert!(!o.status.success(), "accepted {args:?}");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn errors_name_the_field_and_what_it_takes() {
    let e = refused(&["--link", "802.11ax:mcs=11,nss=2,width=80,gi=0.4"]);
    assert!(
        e.contains("gi '0.4'") && e.contains("0.8, 1.6 or 3.2"),
        "{e}"
    );
    let e = refused(&["--link", "802.11g:54", "--ampdu", "8"]);
    assert!(e.contains("needs 802.11n, ac or ax"), "{e}");
    let e = refused(&["--link", "802.11g:54", "--sizes", "1473", "--family", "4"]);
    assert!(
        e.contains("above the 1500-byte MTU") && e.contains("at most 1472 bytes"),
        "{e}"
    );
    let e = refused(&["--link", "ethernet:100mbps"]);
    assert!(e.contains("100mbit"), "{e}");
    let e = refused(&["--link", "802.11ac:mcs=9,nss=2,width=80"]);
    assert!(e.contains("gi= is missing"), "{e}");
}

/// A UDP payload beyond one datagram's maximum is refused with the limit named, on
/// every link (the framing models count IP fragments, which stop at 65535 bytes);
/// the largest that fits is accepted.
#[test]
fn udp_payloads_no_datagram_can_carry_are_refused_with_the_limit() {
    for link in ["loopback", "ethernet:1G", "tbf:100M"] {
        let e = refused(&["--link", link, "--sizes", "1408,70000"]);
        assert!(
            e.contains(
                "a 70000-byte payload does not fit in one IPv4 UDP datagram (at most 65507 bytes)"
            ),
            "{link}: {e}"
        );
        let e = refused(&["--link", link, "--sizes", "65528", "--family", "6"]);
        assert!(e.contains("at most 65527 bytes"), "{link}: {e}");
        json(&["--link", link, "--sizes", "65507", "--family", "4"]);
        json(&["--link", link, "--sizes", "65527", "--family", "6"]);
        // TCP writes are a byte stream: any size is segments.
        json(&["--link", link, "--sizes", "70000", "--transport", "tcp"]);
    }
}

/// An ESC in --link is quoted visibly escaped (`\u{1b}`), in `model` and `lab up`
/// alike: neither sent to the terminal nor silently dropped from the quote.
#[test]
fn an_escape_in_a_link_is_quoted_visibly() {
    for (args, quoted) in [
        (
            vec!["--link", "tbf:\x1b[31m"],
            "RATE '\\u{1b}[31m' is not allowed",
        ),
        (vec!["--link", "wi\x1bfi"], "unknown link 'wi\\u{1b}fi'"),
    ] {
        let e = refused(&args);
        assert!(e.contains(quoted), "{args:?}: {e}");
        assert!(!e.contains('\x1b'), "{args:?}: {e:?}");
    }
    let o = Command::new(BIN)
        .args(["lab", "up", "--link", "x\x1b[2J"])
        .output()
        .expect("the dualperf binary runs");
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        e.contains("unknown link 'x\\u{1b}[2J'") && !e.contains('\x1b'),
        "{e:?}"
    );
}

/// Every seed preset names the link its study ran over as `dualperf model` arguments,
/// and those arguments run: a ceiling above zero and below the link's rate, the WPA2
/// study's CCMP among the printed assumptions.
#[test]
fn each_seed_presets_link_gives_its_ceiling() {
    let presets = study::presets::all();
    let seeds: Vec<_> = presets.iter().filter(|p| p.source.is_some()).collect();
    assert!(!seeds.is_empty());
    for p in seeds {
        let args = p
            .model_args
            .unwrap_or_else(|| panic!("preset {} names no link", p.name));
        let mut all: Vec<&str> = args.split_whitespace().collect();
        all.extend(["--sizes", "1408"]);
        let v = json(&all);
        let rate = number(&v, "rate_bps");
        for row in v["rows"].as_array().expect("rows") {
            let g = number(row, "goodput_bps");
            assert!(g > 0.0 && g < rate, "{}: {g} against {rate}", p.name);
        }
        if p.what_it_did.contains("WPA2") {
            assert!(v["assumptions"]["security"]
                .as_str()
                .is_some_and(|s| s.starts_with("CCMP")));
        }
    }
}
