//! The plan of a study: matrix expansion into cells, the order of runs in each round,
//! and an estimate of how long it takes.
//!
//! A study runs in rounds. Each round makes one run of every cell that still needs one
//! (warm-up rounds first). Interleaved order keeps the matrix order, in which the IPv4
//! and IPv6 cells of one test and size are adjacent (ABAB…), so drift over time lands
//! on both families alike. Random order shuffles each round with a SplitMix64 stream
//! keyed by the recorded seed and the round number (a randomised complete block
//! design): the same seed gives the same order on any build, which `--resume` relies on.

use crate::spec::{Order, Repetition, StudySpec};
use serde::Serialize;
use wire::spec::{Bound, Direction, Family, TestKind, TestSpec};

/// One cell of the study matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// Position in the matrix (stable: the same spec gives the same indices).
    pub index: u32,
    pub family: Family,
    pub kind: TestKind,
    pub payload_bytes: u32,
    pub direction: Direction,
    /// The test the engine runs for this cell.
    pub test: TestSpec,
}

impl Cell {
    /// "IPv6 udp-rr 640 B".
    pub fn label(&self) -> String {
        format!("{} {} {} B", self.family, self.kind, self.payload_bytes)
    }
}

/// A cell's bound: the study's, except that an RFC 2544 udp-stream run with a
/// duration bound is `1 + steps` trials of half the run length each (0.25 s by default,
/// so the run lasts 1.5 s): trials of a sixth of 0.5 s let the run-to-run spread of the
/// found rate reach 35–45 % on loopback, 0.25 s trials 13–20 % (on 2 cores, 8–12 runs
/// per cell).
pub fn cell_bound(spec: &StudySpec, kind: TestKind) -> Bound {
    if let (TestKind::Rrul, Some(r)) = (kind, &spec.rrul) {
        return Bound::DurationNs(r.duration_ns);
    }
    match (spec.udp_method, spec.bound) {
        (crate::UdpMethod::Rfc2544(s), Bound::DurationNs(ns)) if kind == TestKind::UdpStream => {
            Bound::DurationNs((ns / 2).saturating_mul(1 + u64::from(s.steps)))
        }
        (_, b) => b,
    }
}

/// Expand the matrix: tests, then sizes, then families innermost, so the families of
/// one (test, size) are adjacent.
pub fn cells(spec: &StudySpec) -> Vec<Cell> {
    let mut out = Vec::new();
    for &kind in &spec.tests {
        for &size in &spec.sizes_bytes {
            for &family in &spec.families {
                let mut test = TestSpec::new(kind, family, size);
                test.bound = cell_bound(spec, kind);
                test.direction = spec.direction;
                test.streams = spec.streams;
                if kind == TestKind::TcpCrr {
                    // One connection at a time, back to back: -P is the streams'.
                    test.streams = 1;
                }
                test.rate = if kind == TestKind::UdpStream {
                    spec.rate
                } else {
                    None
                };
                test.interval_ns = spec.interval_ns;
                test.window_ns = spec.window_ns.filter(|_| kind == TestKind::UdpStream);
                test.traffic = spec
                    .traffic
                    .clone()
                    .filter(|_| matches!(kind, TestKind::UdpStream | TestKind::TcpStream));
                test.rr_timeout_ns = spec.rr_timeout_ns;
                if let (TestKind::Rrul, Some(r)) = (kind, &spec.rrul) {
                    // The load's streams and sampling; the rest is the RrulPlan's.
                    test.direction = Direction::Forward;
                    test.streams = r.opts.streams;
                    test.interval_ns = Some(r.interval_ns);
                }
                test.udp_datapath = spec.udp_datapath;
                // Zero-copy is a way of sending a TCP stream; other tests copy.
                test.zerocopy = spec.zerocopy.filter(|_| kind == TestKind::TcpStream);
                test.socket = match (&spec.udp_socket, kind.is_udp()) {
                    (Some(udp), true) => udp.clone(),
                    _ => spec.socket.clone(),
                };
                out.push(Cell {
                    index: out.len() as u32,
                    family,
                    kind,
                    payload_bytes: size,
                    direction: test.direction,
                    test,
                });
            }
        }
    }
    out
}

/// SplitMix64 (Steele, Lea & Flood 2014): tiny, fixed forever, so recorded seeds
/// reproduce their order on every future build.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0) by rejection, no modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }
}

/// The order of the given cells (by index) in round `round` (0-based, warm-up rounds
/// included).
pub fn round_order(order: Order, seed: u64, round: u32, active: &[u32]) -> Vec<u32> {
    let mut v = active.to_vec();
    v.sort_unstable();
    if order == Order::Random {
        let mut rng = SplitMix64::new(seed ^ u64::from(round).wrapping_mul(0xA24B_AED4_963E_E407));
        // Fisher-Yates.
        for i in (1..v.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
    v
}

/// One planned run slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Slot {
    pub round: u32,
    pub cell_index: u32,
    pub warmup: bool,
    /// 0-based; warm-ups count from 0 separately.
    pub repetition: u32,
}

/// What a study will do, for `--dry-run` and the progress bar.
#[derive(Debug, Clone, Serialize)]
pub struct PlanSummary {
    pub cells: usize,
    pub warmup_runs: u64,
    pub measured_runs_min: u64,
    pub measured_runs_max: u64,
    /// Seconds, at the minimum and maximum number of runs.
    pub estimated_s_min: f64,
    pub estimated_s_max: f64,
    /// How a count-bound run's length was guessed, if it was.
    pub assumption: Option<String>,
}

/// Setup and teardown per run (connect, exchange parameters, collect results), seconds;
/// measured about 0.03 s on loopback, rounded up for real links.
pub const RUN_OVERHEAD_S: f64 = 0.1;
/// Setup and drain of each extra trial of an RFC 2544 udp-stream run, seconds.
pub const SEARCH_TRIAL_OVERHEAD_S: f64 = 0.08;
/// Packet rate assumed to estimate count-bound runs.
pub const ASSUMED_PPS: f64 = 200_000.0;

/// Expected wall time of one run of this spec, seconds.
pub fn run_estimate_s(bound: Bound) -> f64 {
    RUN_OVERHEAD_S
        + match bound {
            Bound::DurationNs(ns) => ns as f64 / 1e9,
            Bound::Count(n) => n as f64 / ASSUMED_PPS,
        }
}

/// Count runs and estimate the duration of a study.
pub fn summarise(spec: &StudySpec) -> PlanSummary {
    let n = cells(spec).len() as u64;
    let (lo, hi) = spec.runs_range();
    let warm = n * u64::from(spec.warmup_runs);
    // One run of every cell, shortest and longest: an RFC 2544 udp-stream run is 1 to
    // 1 + steps sessions (it ends early once the answer is bracketed, often after the
    // unpaced trial alone).
    let (round_s_short, round_s): (f64, f64) = cells(spec)
        .iter()
        .map(|c| match spec.udp_method {
            crate::UdpMethod::Rfc2544(s) if c.test.kind == wire::spec::TestKind::UdpStream => {
                let full = run_estimate_s(c.test.bound);
                let trials = 1.0 + f64::from(s.steps);
                let one_trial = RUN_OVERHEAD_S + (full - RUN_OVERHEAD_S) / trials;
                (
                    one_trial,
                    full + f64::from(s.steps) * SEARCH_TRIAL_OVERHEAD_S,
                )
            }
            // The idle phase, then the load; its parts' handshakes overlap.
            _ if c.test.kind == wire::spec::TestKind::Rrul => {
                let idle = spec.rrul.map_or(0.0, |r| r.opts.idle_ns as f64 / 1e9);
                let s = run_estimate_s(c.test.bound) + idle + RUN_OVERHEAD_S;
                (s, s)
            }
            _ => (run_estimate_s(c.test.bound), run_estimate_s(c.test.bound)),
        })
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let rounds = |runs: u32| f64::from(spec.warmup_runs + runs);
    PlanSummary {
        cells: n as usize,
        warmup_runs: warm,
        measured_runs_min: n * u64::from(lo),
        measured_runs_max: n * u64::from(hi),
        estimated_s_min: rounds(lo) * round_s_short,
        estimated_s_max: rounds(hi) * round_s,
        assumption: match spec.bound {
            Bound::Count(_) => Some(format!(
                "count-bound runs estimated at {ASSUMED_PPS:.0} packets/s"
            )),
            Bound::DurationNs(_) => None,
        },
    }
}

/// Every slot of the study in order, assuming every cell runs every round (exact for
/// fixed runs; for a confidence target, the order if no cell stops before `max_runs`).
pub fn planned_slots(spec: &StudySpec) -> Vec<Slot> {
    let all: Vec<u32> = (0..cells(spec).len() as u32).collect();
    let measured = match spec.repetition {
        Repetition::Fixed { runs } => runs,
        Repetition::Confidence { max_runs, .. } => max_runs,
    };
    let mut out = Vec::new();
    for round in 0..spec.warmup_runs + measured {
        let warmup = round < spec.warmup_runs;
        let repetition = if warmup {
            round
        } else {
            round - spec.warmup_runs
        };
        for cell_index in round_order(spec.order, spec.seed, round, &all) {
            out.push(Slot {
                round,
                cell_index,
                warmup,
                repetition,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SpecFile;

    fn spec(extra: &str) -> StudySpec {
        SpecFile::from_toml(extra).unwrap().resolve(7).unwrap()
    }

    #[test]
    fn matrix_expands_tests_sizes_families_with_families_adjacent() {
        let s = spec("tests = ['tcp-stream', 'udp-rr']\nsizes = '128..640/256'\n");
        let c = cells(&s);
        assert_eq!(c.len(), 2 * 3 * 2);
        assert_eq!(
            c.iter().map(|c| c.index).collect::<Vec<_>>(),
            (0..12).collect::<Vec<_>>()
        );
        assert_eq!((c[0].family, c[1].family), (Family::V4, Family::V6));
        assert_eq!(c[0].payload_bytes, c[1].payload_bytes);
        assert_eq!(c[2].payload_bytes, 384);
        assert_eq!(c[6].kind, TestKind::UdpRr);
        assert_eq!(c[11].test.payload_bytes, 640);
        assert_eq!(c[11].test.family, Family::V6);
        assert_eq!(
            c[11].test.bound,
            Bound::DurationNs((crate::spec::DEFAULT_DURATION_S * 1e9) as u64)
        );
    }

    #[test]
    fn rfc2544_udp_stream_runs_are_trials_of_half_the_run_length() {
        let s =
            spec("tests=['udp-stream','tcp-rr']\nsizes=[128]\nduration_s=0.5\nsearch_steps=5\n");
        let c = cells(&s);
        assert_eq!(
            c[0].test.bound,
            Bound::DurationNs(1_500_000_000),
            "6 × 0.25 s"
        );
        assert_eq!(
            c[2].test.bound,
            Bound::DurationNs(500_000_000),
            "tcp-rr as asked"
        );
        // A fixed rate, or a count bound, keeps the study's bound.
        let f = spec("tests=['udp-stream']\nsizes=[128]\nduration_s=0.5\nudp_method='fixed'\n");
        assert_eq!(cells(&f)[0].test.bound, Bound::DurationNs(500_000_000));
        let n = spec("tests=['udp-stream']\nsizes=[128]\ncount=600\n");
        assert_eq!(cells(&n)[0].test.bound, Bound::Count(600));
    }

    #[test]
    fn udp_socket_options_apply_to_udp_cells_only() {
        let s = spec("tests=['tcp-stream','udp-stream']\nsizes=[128]\n[socket]\nsndbuf_bytes=65536\n[udp_socket]\nsndbuf_bytes=8192\n");
        let c = cells(&s);
        assert_eq!(c[0].test.socket.sndbuf_bytes, Some(65_536));
        assert_eq!(c[2].test.socket.sndbuf_bytes, Some(8_192));
    }

    #[test]
    fn a_traffic_model_shapes_the_stream_cells_only() {
        let s = spec("tests=['tcp-stream','udp-stream','tcp-rr','udp-rr']\nidt='exp:1ms'\n");
        for c in cells(&s) {
            let streams = matches!(c.kind, TestKind::TcpStream | TestKind::UdpStream);
            assert_eq!(c.test.traffic.is_some(), streams, "{}", c.label());
        }
    }

    #[test]
    fn interleaved_rounds_alternate_families_abab() {
        let s = spec("tests=['tcp-rr']\nsizes=[128,256]\nruns=2\n");
        let slots = planned_slots(&s);
        let fams: Vec<Family> = slots
            .iter()
            .map(|sl| cells(&s)[sl.cell_index as usize].family)
            .collect();
        assert_eq!(
            fams,
            [Family::V4, Family::V6, Family::V4, Family::V6].repeat(2)
        );
        assert_eq!(slots[4].round, 1);
        assert_eq!(slots[4].repetition, 1);
    }

    #[test]
    fn random_order_is_a_permutation_reproducible_from_the_seed() {
        let active: Vec<u32> = (0..48).collect();
        let a = round_order(Order::Random, 42, 3, &active);
        let b = round_order(Order::Random, 42, 3, &active);
        let c = round_order(Order::Random, 43, 3, &active);
        let d = round_order(Order::Random, 42, 4, &active);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_ne!(a, active, "48 cells should not come out in matrix order");
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, active);
    }

    #[test]
    fn splitmix_matches_reference_values() {
        // First outputs for seed 1234567 from the reference C implementation.
        let mut r = SplitMix64::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn estimate_counts_warmups_and_overhead() {
        let s = spec("warmup=1\nruns=3\nduration_s=2.0\n");
        let p = summarise(&s);
        assert_eq!(p.cells, 48);
        assert_eq!(p.warmup_runs, 48);
        assert_eq!(p.measured_runs_min, 144);
        // 12 udp-stream cells search the rate: at most 6 trials of 1 s per run, 5 extra
        // sessions each, at least the unpaced trial alone; the 36 other cells run 2 s.
        let others = 4.0 * 36.0 * (2.0 + RUN_OVERHEAD_S);
        let longest = others + 4.0 * 12.0 * (6.0 + RUN_OVERHEAD_S + 5.0 * SEARCH_TRIAL_OVERHEAD_S);
        let shortest = others + 4.0 * 12.0 * (1.0 + RUN_OVERHEAD_S);
        assert!(
            (p.estimated_s_max - longest).abs() < 1e-9,
            "{}",
            p.estimated_s_max
        );
        assert!(
            (p.estimated_s_min - shortest).abs() < 1e-9,
            "{}",
            p.estimated_s_min
        );
        let c = spec("confidence=95\nmin_runs=3\nmax_runs=10\ncount=200000\n");
        let p = summarise(&c);
        assert_eq!(p.measured_runs_max, 480);
        assert!(p.assumption.is_some());
    }

    #[test]
    fn default_study_repeats_to_a_target_with_enough_runs_for_holm() {
        let s = SpecFile::default().resolve(0).unwrap();
        let Repetition::Confidence { min_runs, .. } = s.repetition else {
            panic!(
                "the default study repeats to a confidence target: {:?}",
                s.repetition
            );
        };
        assert!(
            min_runs >= 5,
            "5 runs per side is the fewest Holm over 6 sizes allows"
        );
        let p = summarise(&s);
        assert_eq!(p.measured_runs_min, 48 * u64::from(min_runs));
        // When every cell meets its target at the fewest runs: about 5 minutes.
        assert!(p.estimated_s_min < 300.0, "{}", p.estimated_s_min);
    }
}
