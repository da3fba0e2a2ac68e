//! D-ITG-style traffic models end to end on loopback: gaps and sizes drawn from seeded
//! distributions reach the receiver exactly (every datagram, every byte), the byte count
//! is the sum of the seed's size draws (the same sequence the test computes itself), the
//! sender is never ahead of its schedule, both directions work, and bad models are
//! refused with the reason.

use crate::support::engine::*;
use measure::traffic::Sampler;
use wire::traffic::{Dist, Quantity};

/// Σ of the first `n` size draws of stream 0 (sizes are stream 2·0 + 1), clamped as the
/// sender clamps them.
fn expected_bytes(size: &str, seed: u64, n: usize) -> u64 {
    let d = Dist::parse(size, Quantity::Size).unwrap();
    let mut s = Sampler::new(d, seed, 1).unwrap();
    (0..n)
        .map(|_| (s.sample().round() as u64).clamp(wire::datagram::HEADER_BYTES as u64, 65_507))
        .sum()
}

/// Σ of the first `n` gap draws of stream 0, ns: when datagram n+1 was scheduled.
fn scheduled_span_ns(idt: &str, seed: u64, n: usize) -> f64 {
    let d = Dist::parse(idt, Quantity::Gap).unwrap();
    let mut s = Sampler::new(d, seed, 0).unwrap();
    (0..n).map(|_| s.sample()).sum()
}

#[test]
fn a_seeded_model_delivers_every_datagram_and_exactly_the_drawn_bytes() {
    let _turn = serial();
    for (fam, _) in families() {
        for dir in [&[][..], &["--reverse"]] {
            let mut args = vec![
                "-t",
                "udp-stream",
                "-f",
                fam,
                "-n",
                "1500",
                "--idt",
                "exp:400us",
                "--size-dist",
                "uniform:64..1400",
                "--seed",
                "42",
                "--rcvbuf",
                "4M",
            ];
            args.extend_from_slice(dir);
            let v = run_json(&args, &[]);
            assert_eq!(metric(&v, "sent_packets"), 1500.0, "{args:?}");
            assert_eq!(metric(&v, "recv_packets"), 1500.0, "{args:?}");
            let want = expected_bytes("uniform:64..1400", 42, 1500) as f64;
            assert_eq!(metric(&v, "sent_bytes"), want, "{args:?}");
            assert_eq!(metric(&v, "recv_bytes"), want, "{args:?}");
            // Per-datagram stamps: jitter is measured, not withheld.
            assert!(metric(&v, "jitter_rfc3550_ns") >= 0.0);
            let side = if dir.is_empty() { "client" } else { "server" };
            let applied = &v[side]["applied"];
            assert_eq!(
                applied["traffic_model"],
                "idt exp:400us, size uniform:64..1400, seed 42"
            );
            let p50: f64 = applied["schedule_late_p50_us"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            let p99: f64 = applied["schedule_late_p99_us"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            let max: f64 = applied["schedule_late_max_us"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!(0.0 <= p50 && p50 <= p99 && p99 <= max, "{p50} {p99} {max}");
        }
    }
}

/// The sender keeps to an absolute schedule: the last datagram leaves no earlier than
/// its scheduled time, whatever the load (it may be later).
#[test]
fn the_sender_is_never_ahead_of_its_schedule() {
    let _turn = serial();
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "-n",
            "400",
            "--idt",
            "pareto:shape=2.5,mean=1ms",
            "--seed",
            "7",
            "-s",
            "256",
        ],
        &[],
    );
    assert_eq!(metric(&v, "recv_packets"), 400.0);
    let span_s = scheduled_span_ns("pareto:shape=2.5,mean=1ms", 7, 399) / 1e9;
    let ran_s = metric(&v, "duration_s");
    assert!(
        ran_s >= span_s * 0.999,
        "ran {ran_s} s, scheduled {span_s} s"
    );
}

/// Σ of the first `n` size draws of stream 0 as the TCP model sender clamps them
/// (1 byte to 65 507: a message needs no datagram header).
fn expected_tcp_bytes(size: &str, seed: u64, n: usize) -> u64 {
    let d = Dist::parse(size, Quantity::Size).unwrap();
    let mut s = Sampler::new(d, seed, 1).unwrap();
    (0..n)
        .map(|_| (s.sample().round() as u64).clamp(1, 65_507))
        .sum()
}

/// How many messages stream 0's schedule puts before `t_ns` (the first at 0).
fn scheduled_before(idt: &str, seed: u64, t_ns: f64) -> u64 {
    let d = Dist::parse(idt, Quantity::Gap).unwrap();
    let mut s = Sampler::new(d, seed, 0).unwrap();
    let (mut at, mut n) = (0.0, 0);
    while at < t_ns {
        n += 1;
        at += s.sample();
    }
    n
}

fn applied_us(v: &serde_json::Value, side: &str, key: &str) -> f64 {
    v[side]["applied"][key]
        .as_str()
        .unwrap_or_else(|| panic!("{side}.applied.{key} in {}", v[side]["applied"]))
        .parse()
        .unwrap()
}

/// TCP streams take the same models: messages of drawn sizes written whole at drawn
/// times, every byte received (TCP loses none: received = sent = the sum of the seed's
/// size draws, the same sequence as a UDP model's), both directions, schedule adherence
/// recorded.
#[test]
fn a_tcp_model_delivers_exactly_the_drawn_bytes_in_both_directions() {
    let _turn = serial();
    for (fam, _) in families() {
        for dir in [&[][..], &["--reverse"]] {
            let mut args = vec![
                "-t",
                "tcp-stream",
                "-f",
                fam,
                "-n",
                "1500",
                "--idt",
                "exp:200us",
                "--size-dist",
                "uniform:64..1400",
                "--seed",
                "42",
            ];
            args.extend_from_slice(dir);
            let v = run_json(&args, &[]);
            let want = expected_tcp_bytes("uniform:64..1400", 42, 1500) as f64;
            assert_eq!(
                metric(&v, "sent_packets"),
                1500.0,
                "{args:?}: messages written"
            );
            assert_eq!(metric(&v, "sent_bytes"), want, "{args:?}");
            assert_eq!(metric(&v, "recv_bytes"), want, "{args:?}");
            let side = if dir.is_empty() { "client" } else { "server" };
            assert_eq!(
                v[side]["applied"]["traffic_model"],
                "idt exp:200us, size uniform:64..1400, seed 42"
            );
            let p50 = applied_us(&v, side, "schedule_late_p50_us");
            let p99 = applied_us(&v, side, "schedule_late_p99_us");
            let max = applied_us(&v, side, "schedule_late_max_us");
            assert!(0.0 <= p50 && p50 <= p99 && p99 <= max, "{p50} {p99} {max}");
        }
    }
}

/// A Poisson TCP stream (exponential gaps, mean 500 µs) for 1 s. Exact, whatever the
/// load: every byte written is received, and the sender is never ahead of its schedule,
/// so it writes at most the messages the seed schedules before the end. It falls short
/// only when late at the end; a host that lets it keep time writes at least those
/// scheduled before the end minus its largest lateness and 1 ms for the last write —
/// best of 3 runs, as a stall in the last milliseconds is not recorded as lateness (the
/// message it delays is never written). On a quiet host both bounds meet.
#[test]
fn a_poisson_tcp_stream_writes_what_its_schedule_holds() {
    let _turn = serial();
    let idt = "exp:500us";
    let most = scheduled_before(idt, 9, 1e9);
    let mut seen = Vec::new();
    for _ in 0..3 {
        let v = run_json(
            &[
                "-t",
                "tcp-stream",
                "-d",
                "1",
                "--idt",
                idt,
                "--seed",
                "9",
                "-s",
                "256",
            ],
            &[],
        );
        let n = metric(&v, "sent_packets") as u64;
        assert_eq!(metric(&v, "recv_bytes"), metric(&v, "sent_bytes"));
        assert_eq!(metric(&v, "sent_bytes"), n as f64 * 256.0);
        assert!(
            n <= most,
            "{n} messages, but the schedule holds {most} before 1 s"
        );
        let late_ns = applied_us(&v, "client", "schedule_late_max_us") * 1e3;
        let least = scheduled_before(idt, 9, 1e9 - late_ns - 1e6);
        if n >= least {
            return;
        }
        seen.push((n, least, late_ns));
    }
    panic!("(messages, least expected, max lateness ns) in 3 runs: {seen:?}; at most {most}");
}

#[test]
fn a_profile_sets_gaps_and_sizes_and_bad_models_are_refused() {
    let _turn = serial();
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "--profile",
            "voip-g711",
            "-n",
            "60",
            "--seed",
            "1",
        ],
        &[],
    );
    assert_eq!(metric(&v, "recv_packets"), 60.0);
    assert_eq!(
        metric(&v, "recv_bytes"),
        60.0 * 172.0,
        "G.711: 160 B voice + 12 B RTP"
    );
    for (args, why) in [
        (
            &["-t", "udp-stream", "--idt", "zipf:1", "-n", "5"][..],
            "unknown distribution",
        ),
        (
            &["-t", "udp-stream", "--idt", "uniform:2ms..1ms", "-n", "5"],
            "LOW < HIGH",
        ),
        (
            &["-t", "tcp-rr", "--idt", "exp:1ms", "-n", "5"],
            "udp-stream or tcp-stream",
        ),
        (
            &["-t", "udp-stream", "--seed", "5", "-n", "5"],
            "a traffic seed (run --seed, study --traffic-seed, traffic_seed in a spec file) fixes",
        ),
        (
            &["-t", "udp-stream", "--profile", "skype", "-n", "5"],
            "unknown profile",
        ),
    ] {
        let o = run(&[&["run"][..], args].concat());
        assert!(!o.status.success(), "{args:?} was accepted");
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
}

/// `--stats-window` (ITGDec's per-window view): with the receiver dropping every 10th
/// datagram on purpose, the windows' losses add up to exactly the run's, each window's
/// goodput is its bytes over its width, and where the run's one-way delay is shown each
/// window with arrivals has one, within the offset's bound of 0 and no larger than its
/// max (none where it is not).
#[test]
fn per_window_statistics_add_up_to_the_run() {
    let _turn = serial();
    for (fam, _) in families() {
        for dir in [&[][..], &["--reverse"]] {
            let mut args = vec![
                "-t",
                "udp-stream",
                "-f",
                fam,
                "-n",
                "2000",
                "-b",
                "5kpps",
                "-s",
                "200",
                "--stats-window",
                "100ms",
            ];
            args.extend_from_slice(dir);
            let v = run_json(&args, &[("DUALPERF_TEST_DROP_EVERY", "10")]);
            let w = v["windows"].as_array().expect("windows");
            let sum = |k: &str| w.iter().map(|x| x[k].as_u64().unwrap()).sum::<u64>();
            assert_eq!(sum("sent_packets"), 2000, "{args:?}");
            assert_eq!(sum("recv_packets"), 1800, "{args:?}");
            assert_eq!(sum("lost_packets"), 200, "{args:?}");
            assert_eq!(metric(&v, "lost_packets"), 200.0);
            // 2000 datagrams at 5 kpps span 0.4 s: at least 4 windows of 100 ms.
            assert!(w.len() >= 4, "{} windows", w.len());
            for x in w {
                let recv = x["recv_packets"].as_u64().unwrap();
                assert!(x["lost_packets"].as_u64().unwrap() <= x["sent_packets"].as_u64().unwrap());
                let bps = x["bitrate_bps"].as_f64().unwrap();
                assert!((bps - recv as f64 * 200.0 * 8.0 / 0.1).abs() < 1e-6, "{x}");
                if recv > 0 {
                    assert!(x["jitter_ns"].as_f64().unwrap() >= 0.0);
                    match metric_opt(&v, "owd_mean_ns") {
                        Some(_) => {
                            let bound = metric(&v, "clock_offset_uncertainty_ns");
                            let mean = x["owd_mean_ns"].as_f64().expect("delay per window");
                            let max = x["owd_max_ns"].as_f64().unwrap();
                            assert!(-bound <= mean && mean <= max + 1e-6, "{x}");
                        }
                        None => assert!(x["owd_mean_ns"].is_null(), "{x}"),
                    }
                }
            }
        }
    }
}

#[test]
fn window_is_refused_where_it_does_not_apply() {
    let _turn = shared();
    for args in [
        &["run", "-t", "tcp-stream", "--stats-window", "100ms"][..],
        &[
            "run",
            "-t",
            "udp-stream",
            "--stats-window",
            "100us",
            "-d",
            "0.2",
        ],
        &[
            "run",
            "-t",
            "udp-stream",
            "--stats-window",
            "1ms",
            "-d",
            "60",
        ],
    ] {
        let o = run(args);
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o);
        assert!(
            e.contains("udp-stream only")
                || e.contains("between 0.001 and")
                || e.contains("windows per run"),
            "{args:?}: {e}"
        );
    }
}

/// On/off activity (voice activity detection): with 100 ms talkspurts and 100 ms pauses
/// and a datagram (TCP: message) every 10 ms, 40 sends take exactly four talkspurts of
/// ten — in either direction and over either transport — and nothing is sent in a
/// pause, so the last send is scheduled 690 ms after the first (the sender is never
/// ahead of its schedule: exact whatever the load).
#[test]
fn on_off_periods_gate_the_schedule_exactly() {
    let _turn = serial();
    for test in ["udp-stream", "tcp-stream"] {
        for dir in [&[][..], &["--reverse"]] {
            let mut args = vec![
                "-t",
                test,
                "-s",
                "200",
                "-n",
                "40",
                "--idt",
                "constant:10ms",
                "--on-time",
                "constant:100ms",
                "--off-time",
                "constant:100ms",
                "--seed",
                "3",
            ];
            args.extend_from_slice(dir);
            let v = run_json(&args, &[]);
            assert_eq!(metric(&v, "sent_packets"), 40.0, "{args:?}");
            assert_eq!(metric(&v, "recv_bytes"), 40.0 * 200.0, "{args:?}");
            let side = if dir.is_empty() { "client" } else { "server" };
            let applied = &v[side]["applied"];
            assert_eq!(applied["on_periods"], "4", "{args:?}: {applied}");
            assert_eq!(
                applied["traffic_model"],
                "idt constant:10ms, on constant:100ms, off constant:100ms, seed 3"
            );
            let send_s = v[side]["send_elapsed_ns"].as_f64().unwrap() / 1e9;
            assert!(send_s >= 0.69, "{args:?}: the last send left {send_s} s in");
        }
    }
    for (args, why) in [
        (
            &[
                "-t",
                "udp-stream",
                "--on-time",
                "exp:1s",
                "--off-time",
                "exp:1s",
                "-n",
                "5",
            ][..],
            "gate a schedule",
        ),
        (
            &[
                "-t",
                "udp-stream",
                "--idt",
                "exp:1ms",
                "--on-time",
                "exp:1s",
                "-n",
                "5",
            ],
            "--off-time",
        ),
        (
            &[
                "-t",
                "udp-stream",
                "--idt",
                "exp:1ms",
                "--on-time",
                "constant:0ms",
                "--off-time",
                "exp:1s",
                "-n",
                "5",
            ],
            "above 0",
        ),
    ] {
        let o = run(&[&["run"][..], args].concat());
        assert!(!o.status.success(), "{args:?} was accepted");
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
}

/// The sends of stream 0 under `--on-time`/`--off-time` as the sender places them,
/// recomputed from the seed's period draws (stream 0's periods are sequences 2³² and
/// 2³² + 1): the number of active periods with a send, and when the last send is due.
fn expected_spurts(on: &str, off: &str, gap_ns: f64, seed: u64, n: usize) -> (u64, f64) {
    let sampler = |t: &str, stream: u64| {
        Sampler::new(Dist::parse(t, Quantity::Gap).unwrap(), seed, stream).unwrap()
    };
    let (mut on, mut off) = (sampler(on, 1 << 32), sampler(off, (1 << 32) + 1));
    let (mut end, mut active, mut period) = (on.sample(), true, 1u64);
    let (mut t, mut spurts, mut last_period, mut last) = (0.0, 0, 0, 0.0);
    for _ in 0..n {
        loop {
            if t < end && active {
                break;
            }
            if t < end {
                t = end;
                continue;
            }
            active = !active;
            if active {
                period += 1;
                end += on.sample();
            } else {
                end += off.sample();
            }
        }
        if period != last_period {
            spurts += 1;
            last_period = period;
        }
        last = t;
        t += gap_ns;
    }
    (spurts, last)
}

/// The game profile sends the NGMN uplink's sizes (the exact bytes of the seed's Gumbel
/// draws) every 40 ms; a voice-activity profile sends its codec's packets only in the
/// P.59 talkspurts the seed draws, exactly as many of them as the schedule holds.
#[test]
fn game_and_voice_activity_profiles_send_what_their_models_draw() {
    let _turn = serial();
    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "--profile",
            "game-client",
            "-n",
            "25",
            "--seed",
            "3",
        ],
        &[],
    );
    assert_eq!(metric(&v, "recv_packets"), 25.0);
    assert_eq!(
        metric(&v, "recv_bytes"),
        expected_bytes("gumbel:loc=45,scale=5.7", 3, 25) as f64
    );
    let send_s = v["client"]["send_elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!(
        send_s >= 24.0 * 0.040,
        "never ahead of 40 ms gaps: {send_s} s"
    );

    let v = run_json(
        &[
            "-t",
            "udp-stream",
            "--profile",
            "voip-g729-vad",
            "-n",
            "40",
            "--seed",
            "5",
        ],
        &[],
    );
    assert_eq!(metric(&v, "recv_bytes"), 40.0 * 32.0);
    let applied = &v["client"]["applied"];
    assert_eq!(
        applied["traffic_model"],
        "profile voip-g729-vad, idt constant:20ms, size constant:32, on exp:1004ms, off exp:1587ms, seed 5"
    );
    let (spurts, last_ns) = expected_spurts("exp:1004ms", "exp:1587ms", 20e6, 5, 40);
    assert_eq!(
        applied["on_periods"],
        spurts.to_string().as_str(),
        "{applied}"
    );
    let send_ns = v["client"]["send_elapsed_ns"].as_f64().unwrap();
    assert!(
        send_ns >= last_ns,
        "the last send is due at {last_ns} ns, left at {send_ns}"
    );
}

/// A Poisson stream (exponential gaps, mean 20 µs: 50 000 datagrams/s) keeps its
/// target mean rate within 1 % over 100 000 datagrams: the seed's draws average within
/// 1 % of the mean (their standard error is 0.3 %), and the sender, on an absolute
/// schedule, ends within 1 % of the schedule's span. Best of three: a sender starved at
/// the very end of one attempt on a loaded machine is late by the time it was starved.
#[test]
fn a_poisson_stream_keeps_its_mean_rate() {
    let _turn = serial();
    const N: usize = 100_000;
    let target_pps = 50_000.0;
    let drawn_s = scheduled_span_ns("exp:20us", 11, N - 1) / 1e9;
    assert!(
        ((N - 1) as f64 / drawn_s / target_pps - 1.0).abs() < 0.01,
        "the draws' mean rate {} is off the target",
        (N - 1) as f64 / drawn_s
    );
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let v = run_json(
            &[
                "-t",
                "udp-stream",
                "-n",
                "100000",
                "--idt",
                "exp:20us",
                "--seed",
                "11",
                "-s",
                "64",
                "--rcvbuf",
                "4M",
            ],
            &[],
        );
        assert_eq!(metric(&v, "sent_packets"), N as f64);
        assert!(metric(&v, "recv_packets") > 0.0);
        let send_s = v["client"]["send_elapsed_ns"].as_f64().unwrap() / 1e9;
        assert!(
            send_s >= drawn_s * 0.999,
            "ahead of its schedule: {send_s} s"
        );
        let err = (N - 1) as f64 / send_s / target_pps - 1.0;
        eprintln!(
            "Poisson 50 kpps: achieved {:+.3} % off the target",
            err * 100.0
        );
        best = best.min(err.abs());
        if best < 0.01 {
            break;
        }
    }
    assert!(best < 0.01, "achieved mean rate {:.2} % off", best * 100.0);
}
