//! What a study is: [`SpecFile`] is what a user wrote (TOML file, preset or flags, every
//! field optional, layered with [`SpecFile::merge`]); [`StudySpec`] is what it means
//! (validated, defaults applied), and is what a campaign stores as JSON.

mod file;
mod resolve;
mod rrul;
mod sizes;
mod study;
mod validate;

pub use file::{SizesField, SpecFile};
pub use rrul::{
    RrulPlan, DEFAULT_RRUL_DURATION_S, DEFAULT_RRUL_IDLE_S, MIN_LOADED_S, RRUL_INTERVAL_NS,
};
pub use sizes::parse_sizes;
pub use study::{Order, Repetition, StudySpec, UdpMethod, RFC2544_RCVBUF_BYTES};
use validate::check;

/// Errors in a study spec, worded for the user.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum SpecError {
    #[error("invalid packet sizes '{0}': {1}")]
    Sizes(String, String),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot read study spec: {0}")]
    Toml(String),
}

/// Default sizes: the six sizes of studies 000, 001, 003 and 004.
pub const DEFAULT_SIZES_BYTES: [u32; 6] = [128, 384, 640, 896, 1152, 1408];
/// Default run length of the default study (short, so it finishes within minutes; a
/// udp-stream run splits it over its RFC 2544 trials).
pub const DEFAULT_DURATION_S: f64 = 0.5;
/// Default spacing of the per-interval samples stored with each run.
pub const DEFAULT_INTERVAL_MS: u64 = 1000;
/// Default repetition (no `runs`, no target given): repeat each cell until the
/// Student-t interval at this level …
pub const DEFAULT_CONFIDENCE_PCT: f64 = 95.0;
/// … is at most this % of the mean (full width) …
pub const DEFAULT_CI_WIDTH_PCT: f64 = 20.0;
/// … with at least this many runs per cell: with 5 runs per side a complete separation
/// gives the exact two-sided Mann-Whitney p = 2/252 = 0.0079, below 0.05/6 (Holm over
/// six sizes); 4 runs give 0.029, 3 runs 0.1, which no correction lets through.
pub const DEFAULT_MIN_RUNS: u32 = 5;
/// … and at most this many (bounds the default study's time). 20 rather than 12: the
/// udp-stream cells that miss at 12 are those with one or two runs caught in a slow
/// period of a shared machine, which more runs outweigh (docs/benchmarks.md).
pub const DEFAULT_MAX_RUNS: u32 = 20;
/// Most packet sizes one study may list (each is one cell per family and test).
pub const MAX_SIZES: usize = 1000;
/// Most measured runs per cell (`runs`, `max_runs`).
pub const MAX_RUNS_PER_CELL: u32 = 10_000;
/// Most warm-up runs per cell, and most retries of a failed run.
pub const MAX_WARMUP_RUNS: u32 = 100;
pub const MAX_RETRIES: u32 = 100;
/// Most runs one study may plan: cells × (warm-up + most measured runs).
pub const MAX_PLANNED_RUNS: u64 = 1_000_000;
/// Most packets per run of a count-bound study (about 17 minutes at 1 Mpps).
pub const MAX_COUNT_PACKETS: u64 = 1_000_000_000;
/// Fastest UDP sending rate a study may ask for: 1 Tbit/s, or 1 G packets/s.
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000;
pub const MAX_RATE_PPS: u64 = 1_000_000_000;
/// Longest udp-rr transaction timeout, milliseconds.
pub const MAX_RR_TIMEOUT_MS: u64 = 60_000;

#[cfg(test)]
mod tests {
    use wire::spec::{
        Bound, Family, LoadedOpts, Rate, RateSearch, SocketOpts, TestKind, UdpDatapath,
    };

    #[test]
    fn runs_are_sampled_ten_times_unless_an_interval_is_given() {
        let at = |duration_s: f64, interval_ms: Option<u64>| {
            SpecFile {
                duration_s: Some(duration_s),
                interval_ms,
                ..SpecFile::default()
            }
            .resolve(1)
            .unwrap()
            .interval_ns
        };
        assert_eq!(at(0.5, None), Some(50_000_000), "0.5 s runs: every 50 ms");
        assert_eq!(at(60.0, None), Some(1_000_000_000), "at most every second");
        assert_eq!(
            at(0.05, None),
            Some(10_000_000),
            "at least the protocol's 10 ms"
        );
        assert_eq!(at(0.5, Some(200)), Some(200_000_000), "as given");
        assert_eq!(at(0.5, Some(0)), None, "none");
    }

    #[test]
    fn hostile_or_overlong_text_is_refused_where_it_enters() {
        for label in ["x\r\\input{/etc/hostname}\r", "a\nb", "a\u{0}b"] {
            let spec = SpecFile {
                label: Some(label.into()),
                ..SpecFile::default()
            };
            let e = spec.resolve(1).unwrap_err().to_string();
            assert!(
                e.contains("label contains the control character"),
                "{label:?}: {e}"
            );
        }
        let spec = SpecFile {
            label: Some("x".repeat(10_000)),
            ..SpecFile::default()
        };
        let e = spec.resolve(1).unwrap_err().to_string();
        assert!(
            e.contains("label is 10000 characters long; at most 256"),
            "{e}"
        );
        let spec = SpecFile {
            size_dist: Some("=".repeat(300)),
            ..SpecFile::default()
        };
        assert!(spec
            .resolve(1)
            .unwrap_err()
            .to_string()
            .contains("size_dist is 300"));
        let spec = SpecFile {
            tests: Some(vec!["udp\u{1b}[2J".into()]),
            ..SpecFile::default()
        };
        assert!(spec
            .resolve(1)
            .unwrap_err()
            .to_string()
            .contains("tests contains"));
        let spec = SpecFile {
            label: Some("Fedora 39 — über".into()),
            ..SpecFile::default()
        };
        assert_eq!(spec.resolve(1).unwrap().label, "Fedora 39 — über");
    }

    use super::*;

    #[test]
    fn sizes_parse_lists_ranges_and_mixes() {
        assert_eq!(parse_sizes("128,384, 640").unwrap(), vec![128, 384, 640]);
        assert_eq!(
            parse_sizes("128..1408/256").unwrap(),
            vec![128, 384, 640, 896, 1152, 1408]
        );
        assert_eq!(parse_sizes("100..400").unwrap(), vec![100, 228, 356]);
        assert_eq!(
            parse_sizes("64,128..384/128").unwrap(),
            vec![64, 128, 256, 384]
        );
        assert!(parse_sizes("128,128").is_err());
        assert!(parse_sizes("400..100/10").is_err());
        assert!(parse_sizes("1..9/0").is_err());
        assert!(parse_sizes("abc").is_err());
        assert!(parse_sizes("").is_err());
    }

    #[test]
    fn huge_size_ranges_are_refused_before_they_are_expanded() {
        // Regression (issue 11.1): this grew by about 1.2 GB/s before the check.
        let t = std::time::Instant::now();
        for text in ["1..4294967295/1", "1..65507/1", "1..9999999999/1", "70000"] {
            assert!(parse_sizes(text).is_err(), "accepted {text}");
        }
        let e = parse_sizes("1..65507/1").unwrap_err().to_string();
        assert!(e.contains("more than 1000 sizes"), "{e}");
        let e = parse_sizes("1..4294967295/1").unwrap_err().to_string();
        assert!(e.contains("out of range (1..=65507 bytes)"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(parse_sizes("1..1000/1").unwrap().len(), MAX_SIZES);
        assert!(parse_sizes("1..1000/1,1001").is_err());
        let long_list = format!("sizes = [{}]\n", vec!["1"; MAX_SIZES + 1].join(","));
        assert!(SpecFile::from_toml(&long_list).unwrap().resolve(0).is_err());
    }

    #[test]
    fn random_size_texts_never_panic_or_grow_past_the_cap() {
        // A small deterministic fuzz of the sizes grammar (cargo-fuzz needs nightly).
        let mut rng = crate::plan::SplitMix64::new(11);
        let alphabet: Vec<char> = "0123456789.,/ -9999999999".chars().collect();
        let t = std::time::Instant::now();
        for _ in 0..20_000 {
            let len = rng.below(24) as usize;
            let text: String = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect();
            if let Ok(v) = parse_sizes(&text) {
                assert!(!v.is_empty() && v.len() <= MAX_SIZES, "{text}");
                assert!(v.iter().all(|&s| (1..=65_507).contains(&s)), "{text}");
            }
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn every_numeric_key_is_range_checked() {
        let bad = [
            ("runs = 4294967295\n", "runs"),
            ("confidence = 95\nmax_runs = 4294967295\n", "max-runs"),
            ("warmup = 4294967295\n", "warmup"),
            ("retries = 4294967295\n", "retries"),
            ("streams = 1000\n", "streams"),
            ("count = 18446744073709551615\n", "count"),
            ("rate_bps = 0\n", "rate_bps"),
            ("rate_pps = 18446744073709551615\n", "rate_pps"),
            ("interval_ms = 1\n", "interval_ms"),
            ("interval_ms = 18446744073709551615\n", "interval_ms"),
            ("duration_s = 86400.0\ninterval_ms = 10\n", "samples"),
            ("rr_timeout_ms = 0\n", "rr_timeout_ms"),
            ("rr_timeout_ms = 18446744073709551615\n", "rr_timeout_ms"),
            ("duration_s = inf\n", "duration"),
            ("runs = 10000\nsizes = '64..1063/1'\n", "at most 1000000"),
        ];
        for (text, words) in bad {
            let e = SpecFile::from_toml(text)
                .and_then(|f| f.resolve(0))
                .expect_err(text)
                .to_string();
            assert!(e.contains(words), "{text}: {e}");
        }
    }

    #[test]
    fn later_layers_override_and_replace_the_exclusive_choice() {
        let file = SpecFile::from_toml("count = 1000\nconfidence = 99\nlabel = 'a'\n").unwrap();
        let flags = SpecFile {
            duration_s: Some(2.0),
            runs: Some(4),
            ..SpecFile::default()
        };
        let s = file.merge(&flags).resolve(0).unwrap();
        assert_eq!(s.bound, Bound::DurationNs(2_000_000_000));
        assert_eq!(s.repetition, Repetition::Fixed { runs: 4 });
        assert_eq!(s.label, "a");
        let s = file.resolve(0).unwrap();
        assert_eq!(s.bound, Bound::Count(1000));
        assert!(
            matches!(s.repetition, Repetition::Confidence { level_pct, .. } if level_pct == 99.0)
        );
    }

    #[test]
    fn bad_specs_are_refused_with_a_reason() {
        let bad = [
            "count = 1\nduration_s = 1.0\n",
            "runs = 3\nconfidence = 95\n",
            "families = [5]\n",
            "tests = ['sctp']\n",
            "order = 'sideways'\n",
            "confidence = 95\nmin_runs = 1\n",
            "confidence = 100\n",
            "sizes = [0]\n",
            "duration_s = -1.0\n",
            "unknown_key = 1\n",
        ];
        for text in bad {
            let r = SpecFile::from_toml(text).and_then(|f| f.resolve(0));
            assert!(r.is_err(), "accepted: {text}");
        }
    }

    #[test]
    fn udp_datapath_resolves_from_toml_and_refuses_unknown_paths() {
        let s = SpecFile::from_toml("udp_datapath = 'per-datagram'\n")
            .unwrap()
            .resolve(1)
            .unwrap();
        assert_eq!(s.udp_datapath, UdpDatapath::PerDatagram);
        let s = SpecFile::default().resolve(1).unwrap();
        assert_eq!(s.udp_datapath, UdpDatapath::Auto);
        let e = SpecFile::from_toml("udp_datapath = 'fast'\n")
            .unwrap()
            .resolve(1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--udp-datapath") && e.contains("per-datagram"),
            "{e}"
        );
    }

    #[test]
    fn udp_method_defaults_to_rfc2544_without_a_rate_and_is_recorded() {
        let s = SpecFile::default().resolve(0).unwrap();
        assert_eq!(s.udp_method, UdpMethod::Rfc2544(RateSearch::default()));
        assert!(s.udp_method.describe(None).contains("RFC 2544"));
        let paced = SpecFile::from_toml("rate_pps = 1000\n")
            .unwrap()
            .resolve(0)
            .unwrap();
        assert_eq!(paced.udp_method, UdpMethod::Fixed);
        // Regression: a packet rate given as a flag (a layer over the defaults) was
        // dropped by the merge, so `study -b 20kpps` ran unpaced.
        let layered = SpecFile::default()
            .merge(&SpecFile {
                rate_pps: Some(20_000),
                ..SpecFile::default()
            })
            .resolve(0)
            .unwrap();
        assert_eq!(
            (layered.udp_method, layered.rate),
            (UdpMethod::Fixed, Some(Rate::PacketsPerSec(20_000)))
        );
        let unpaced = SpecFile::from_toml("udp_method = 'fixed'\n")
            .unwrap()
            .resolve(0)
            .unwrap();
        assert_eq!((unpaced.udp_method, unpaced.rate), (UdpMethod::Fixed, None));
        let tuned = SpecFile::from_toml("loss_threshold_pct = 0.0\nsearch_steps = 8\n")
            .unwrap()
            .resolve(0)
            .unwrap();
        assert_eq!(
            tuned.udp_method,
            UdpMethod::Rfc2544(RateSearch {
                loss_threshold_pct: 0.0,
                steps: 8
            })
        );
        for bad in [
            "udp_method = 'rfc2544'\nrate_pps = 10\n",
            "udp_method = 'fast'\n",
            "search_steps = 0\n",
            "loss_threshold_pct = 100.0\n",
        ] {
            assert!(
                SpecFile::from_toml(bad).unwrap().resolve(0).is_err(),
                "{bad}"
            );
        }
        // A campaign stored before the method was recorded ran unpaced.
        let mut json: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
        json.as_object_mut().unwrap().remove("udp_method");
        let old = StudySpec::from_json(&json.to_string()).unwrap();
        assert_eq!(old.udp_method, UdpMethod::Fixed);
    }

    #[test]
    fn spec_round_trips_through_json() {
        let s = SpecFile::from_toml("order='random'\nwarmup=2\n[socket]\nnodelay=true\n")
            .unwrap()
            .resolve(1234)
            .unwrap();
        assert_eq!(s.seed, 1234);
        assert_eq!(StudySpec::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn on_off_periods_are_recorded_and_need_a_schedule() {
        let s = SpecFile::from_toml(
            "profile = 'voip-g729'\non_time = 'exp:1s'\noff_time = 'exp:1350ms'\ntests = ['udp-stream']\n",
        )
        .unwrap()
        .resolve(7)
        .unwrap();
        let t = s.traffic.clone().expect("model");
        assert_eq!(
            (t.on_time.as_deref(), t.off_time.as_deref()),
            (Some("exp:1s"), Some("exp:1350ms"))
        );
        assert_eq!(StudySpec::from_json(&s.to_json()).unwrap(), s);
        for (toml, why) in [
            // No gaps: nothing to gate (a TCP stream takes no rate).
            (
                "on_time = 'exp:1s'\noff_time = 'exp:1s'\ntests = ['tcp-stream']\n",
                "gate a schedule",
            ),
            ("on_time = 'exp:1s'\nidt = 'exp:1ms'\n", "come together"),
        ] {
            let e = SpecFile::from_toml(toml)
                .unwrap()
                .resolve(1)
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{toml}: {e}");
        }
        // A rate paces a UDP stream alone.
        SpecFile::from_toml(
            "on_time = 'exp:1s'\noff_time = 'exp:1s'\ntests = ['udp-stream']\nrate_pps = 50\n",
        )
        .unwrap()
        .resolve(1)
        .unwrap();
    }

    /// Which stream tests measured the load offered rather than the path: scheduled
    /// models (UDP and TCP), a fixed UDP rate; not the default study's RFC 2544 search,
    /// nor an unpaced stream whose sizes alone are drawn.
    #[test]
    fn offered_load_names_the_streams_that_kept_their_own_schedule() {
        let kinds = |toml: &str| {
            let s = SpecFile::from_toml(toml).unwrap().resolve(1).unwrap();
            s.offered_load().keys().copied().collect::<Vec<_>>()
        };
        assert_eq!(kinds(""), []);
        assert_eq!(kinds("size_dist = 'uniform:64..1400'\n"), []);
        assert_eq!(
            kinds("idt = 'exp:1ms'\n"),
            [TestKind::TcpStream, TestKind::UdpStream]
        );
        assert_eq!(
            kinds("rate_bps = 100000000\nudp_method = 'fixed'\n"),
            [TestKind::UdpStream]
        );
    }

    #[test]
    fn a_traffic_model_shapes_udp_streams_replaces_the_size_axis_and_is_recorded() {
        let s = SpecFile::from_toml("profile = 'voip-g711'\ntests = ['udp-stream', 'udp-rr']\n")
            .unwrap()
            .resolve(7)
            .unwrap();
        let t = s.traffic.clone().expect("model");
        assert_eq!(t.profile.as_deref(), Some("voip-g711"));
        assert_eq!(t.seed, 7, "default seed: the study's");
        assert_eq!(s.sizes_bytes, [172], "the constant size labels the cells");
        assert_eq!(
            s.udp_method,
            UdpMethod::Fixed,
            "no rate search under a model"
        );
        let cells = crate::plan::cells(&s);
        for c in &cells {
            assert_eq!(
                c.test.traffic.is_some(),
                c.kind == TestKind::UdpStream,
                "{}",
                c.label()
            );
        }
        assert_eq!(StudySpec::from_json(&s.to_json()).unwrap(), s);
        // Its udp-stream throughput is the load it offered, and the report is told so.
        let offered = s.offered_load();
        assert_eq!(
            offered.keys().copied().collect::<Vec<_>>(),
            [TestKind::UdpStream]
        );
        assert!(offered[&TestKind::UdpStream].contains("profile voip-g711"));
        // Uniform sizes: their mean labels the cells; an explicit seed is kept.
        let s = SpecFile::from_toml("size_dist = 'uniform:64..1400'\ntraffic_seed = 3\n")
            .unwrap()
            .resolve(0)
            .unwrap();
        assert_eq!(
            (s.sizes_bytes.clone(), s.traffic.unwrap().seed),
            (vec![732], 3)
        );
        for (toml, says) in [
            (
                "size_dist = 'uniform:64..1400'\nsizes = [128, 256]\n",
                "replaces the size axis",
            ),
            (
                "profile = 'dns'\ntests = ['tcp-rr']\n",
                "add one to --tests",
            ),
            ("profile = 'skype'\n", "unknown profile"),
            ("idt = 'exp:-1ms'\n", "traffic model"),
            ("traffic_seed = 1\n", "give one of them"),
            ("profile = 'dns'\nudp_method = 'rfc2544'\n", "rfc2544"),
        ] {
            let e = SpecFile::from_toml(toml).unwrap().resolve(0).unwrap_err();
            assert!(e.to_string().contains(says), "{toml}: {e}");
        }
    }

    /// A plan the study accepts is one the engine runs and the other way round, and the
    /// study's refusal names the engine's limit: the rrul minimums (loaded phase, idle
    /// phase, probes in the loaded window) have one home.
    #[test]
    fn rrul_limits_and_refusals_are_the_engines() {
        let plan = |duration_ns: u64, idle_ns: u64, probe_rate: u64| RrulPlan {
            opts: LoadedOpts {
                idle_ns,
                probe_rate,
                ..LoadedOpts::default()
            },
            duration_ns,
            interval_ns: RRUL_INTERVAL_NS,
        };
        let engine = |p: &RrulPlan| {
            engine::LoadedSpec::new(
                Family::V4,
                1000,
                p.duration_ns,
                &p.opts,
                SocketOpts::default(),
            )
            .check()
        };
        let mut compared = 0;
        for duration_ns in [0, 999_999_999, 1_000_000_000, 1_500_000_000, 4_000_000_000] {
            for idle_ns in [0, 199_999_999, 200_000_000, 1_000_000_000] {
                for probe_rate in [1, 16, 17, 20, 100_000, 100_001] {
                    let p = plan(duration_ns, idle_ns, probe_rate);
                    assert_eq!(
                        p.check().is_ok(),
                        engine(&p).is_ok(),
                        "{p:?}: study {:?}, engine {:?}",
                        p.check(),
                        engine(&p)
                    );
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 5 * 4 * 6);
        // The number in the engine's refusal ("at least N s") is the study's lower bound.
        let least = |e: String| {
            let n = e.split("at least ").nth(1).expect(&e);
            n.split(' ').next().expect(&e).to_string()
        };
        let short_load = plan(999_999_999, 1_000_000_000, 20);
        let short_idle = plan(4_000_000_000, 199_999_999, 20);
        for (p, key) in [
            (short_load, "load_duration_s (--load-duration)"),
            (short_idle, "idle_s (--idle)"),
        ] {
            let n = least(engine(&p).unwrap_err().to_string());
            let e = p.check().unwrap_err().to_string();
            assert!(
                e.starts_with(key) && e.contains(&format!("give between {n} and 86400 s")),
                "engine says at least {n} s, study says: {e}"
            );
        }
    }
}
