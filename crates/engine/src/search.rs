//! RFC 2544 §26.1 throughput for udp-stream: the highest offered rate at which the
//! loss stays at or below a threshold, found by binary search within one run, so the
//! figure describes what sender, path and receiver sustain together rather than how far
//! an unpaced sender outruns the receiving socket.
//!
//! One run = at most `1 + steps` trials, each a complete test of `bound / (1 + steps)`;
//! the search ends early once it has bracketed the answer to 2 % ([`RESOLUTION`]):
//! 1. an unpaced trial gives the sender's top rate S (datagrams/s) and what arrived, R;
//! 2. paced trials search [0, S], the first at R (usually close to the answer); then
//!    halfway between the highest passing and the lowest failing rate, but never more
//!    than 30 % above a pass, and at what a failing trial delivered (sent × (1 − loss))
//!    when that lies between — so 5 trials end within a few % of the answer although S
//!    is often several times what the receiver sustains ([`Bisection`]).
//!
//! The run's result is the passing trial with the highest offered rate (its goodput is
//! the RFC 2544 throughput; a paced trial also gives per-datagram jitter, the unpaced one,
//! chosen only when the receiver kept up with it, does not). If no trial passes, the
//! lowest-rate trial is returned with a warning. The probing logic ([`Bisection`])
//! is pure; [`run_rate_search`] drives real trials through [`run_client`].

use crate::client::{run_client, ClientConfig};
use crate::error::EngineError;
use crate::result::{RunResult, SearchOutcome};
use crate::Recorder;
use std::time::{Duration, Instant};
use wire::metrics as m;
use wire::spec::{Bound, Rate, TestKind};

pub use wire::spec::RateSearch;
use wire::spec::RATE_SEARCH_MAX_STEPS as MAX_STEPS;

/// A paced trial that sent less than this share of its asked rate was sender-limited.
const SENDER_SHORTFALL: f64 = 0.95;
/// Shortest trial: shorter ones measure start-up, not a rate.
const MIN_TRIAL: Duration = Duration::from_millis(20);
/// How long a trial waits for the server to finish the previous one ("busy").
const BUSY_WAIT: Duration = Duration::from_secs(2);

/// How far above the highest passing rate the next probe may go while no failing rate
/// bounds the search closely: steps of 30 % reach a rate 2× above in three trials
/// instead of bisecting a range whose top is the unpaced sender's rate (often 3–10×
/// what the receiver sustains, which left 5 steps a resolution of 10–20 %).
const STEP_UP: f64 = 1.3;
/// The search ends when the highest passing and the lowest failing rate are this close
/// (ratio): the RFC 2544 figure is then known to 2 %, finer than the run-to-run spread of
/// a loopback receiver, and further trials would only re-test the same rate.
const RESOLUTION: f64 = 1.02;
/// Below a failing trial, the next probe is this share of what it delivered.
const DELIVERED_MARGIN: f64 = 0.95;

/// The pure search: which rate to try next, given the trials so far. Bisection between
/// the highest passing and the lowest failing rate, with two shortcuts that use what a
/// trial measured rather than only whether it passed: a failing trial's delivered rate
/// (sent × (1 − loss)) estimates what the receiver sustains, so with no pass yet the next
/// probe is just below it; above a pass, probes climb in steps of at most [`STEP_UP`].
#[derive(Debug, Clone)]
pub struct Bisection {
    threshold_pct: f64,
    /// Highest passing and lowest failing rate, datagrams/s.
    pass_pps: f64,
    fail_pps: f64,
    /// Lowest rate a failing trial delivered, datagrams/s.
    delivered_pps: Option<f64>,
}

impl Bisection {
    /// After the unpaced trial: the sender reached `top_pps`.
    pub fn new(threshold_pct: f64, top_pps: f64) -> Bisection {
        Bisection {
            threshold_pct,
            pass_pps: 0.0,
            fail_pps: top_pps.max(1.0),
            delivered_pps: None,
        }
    }
    /// Whether a trial with this loss passes.
    pub fn passes(&self, loss_pct: f64) -> bool {
        loss_pct.is_finite() && loss_pct <= self.threshold_pct
    }
    /// Record a paced trial that asked for `asked_pps`, offered `sent_pps` (what the
    /// sender managed) and lost `loss_pct`. The offered rate is what passes; a sender
    /// that fell short of the asked rate cannot offer more, so rates above are not
    /// tried again.
    pub fn record(&mut self, asked_pps: f64, sent_pps: f64, loss_pct: f64) {
        let fell_short = sent_pps < SENDER_SHORTFALL * asked_pps;
        if self.passes(loss_pct) {
            self.pass_pps = self.pass_pps.max(sent_pps);
            if fell_short {
                self.fail_pps = self.fail_pps.min(asked_pps);
            }
        } else {
            self.fail_pps = self.fail_pps.min(asked_pps);
            if loss_pct.is_finite() {
                let delivered = sent_pps * (1.0 - loss_pct.clamp(0.0, 100.0) / 100.0);
                if delivered >= 1.0 {
                    self.delivered_pps =
                        Some(self.delivered_pps.map_or(delivered, |d| d.min(delivered)));
                }
            }
        }
        if self.fail_pps < self.pass_pps {
            self.fail_pps = self.pass_pps;
        }
    }
    /// The next rate, or `None` once the highest pass and the lowest failure are within
    /// [`RESOLUTION`] of each other (nothing left worth a trial: the unpaced trial passed,
    /// or a rate both passed and failed). `first` (clamped into the open interval) is for
    /// the first paced trial; then, with a pass, the midpoint but at most [`STEP_UP`] ×
    /// the pass, or a failing trial's delivered rate if that lies clearly between; with no
    /// pass, just below what a failing trial delivered (else the midpoint).
    pub fn next(&self, first: Option<f64>) -> Option<f64> {
        if self.pass_pps > 0.0 && self.fail_pps <= self.pass_pps * RESOLUTION {
            return None;
        }
        let inside = |x: f64| x > self.pass_pps && x < self.fail_pps;
        // A probe within RESOLUTION of a rate already tried would repeat that trial.
        let clearly_inside =
            |x: f64| x > self.pass_pps * RESOLUTION && x * RESOLUTION < self.fail_pps;
        let mid = (self.pass_pps + self.fail_pps) / 2.0;
        let pps = match first {
            Some(f) if inside(f) => f,
            _ if self.pass_pps > 0.0 => {
                let step = mid.min(self.pass_pps * STEP_UP);
                // A failure's delivered rate between the pass and that step is the
                // likeliest answer: probe it.
                match self.delivered_pps {
                    Some(d) if clearly_inside(d) && d < step => d,
                    _ => step,
                }
            }
            _ => match self.delivered_pps.map(|d| d * DELIVERED_MARGIN) {
                Some(d) if inside(d) => d,
                _ => mid,
            },
        };
        Some(pps.max(1.0))
    }
}

/// One trial's result and this side's interval samples.
type Trial = (RunResult, Vec<wire::proto::IntervalSample>);

/// Run one udp-stream test as an RFC 2544 throughput search (see the module docs).
/// `cfg.spec.rate` is ignored; interval samples come from the chosen trial only.
pub fn run_rate_search(
    cfg: &ClientConfig,
    search: &RateSearch,
    recorder: &mut dyn Recorder,
) -> Result<RunResult, EngineError> {
    if cfg.spec.kind != TestKind::UdpStream {
        return Err(EngineError::Protocol(format!(
            "an RFC 2544 rate search is for udp-stream, not {}",
            cfg.spec.kind
        )));
    }
    let steps = search.steps.clamp(1, MAX_STEPS);
    let trials = u64::from(steps) + 1;
    let bound = match cfg.spec.bound {
        Bound::DurationNs(ns) => Bound::DurationNs((ns / trials).max(MIN_TRIAL.as_nanos() as u64)),
        Bound::Count(n) => Bound::Count((n / trials).max(1)),
    };
    let trial = |rate: Option<Rate>| -> Result<Trial, EngineError> {
        let mut c = cfg.clone();
        c.spec.bound = bound;
        c.spec.rate = rate;
        let t0 = Instant::now();
        loop {
            let mut rec = crate::VecRecorder::default();
            match run_client(&c, &mut rec) {
                // The server may still be closing the previous trial's session.
                Err(EngineError::ServerBusy { .. }) if t0.elapsed() < BUSY_WAIT => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                other => return other.map(|r| (r, rec.samples)),
            }
        }
    };
    let loss = |t: &Trial| t.0.metric(m::LOSS_PCT).unwrap_or(f64::INFINITY);
    let sent_pps = |t: &Trial| t.0.metric(m::SENT_PPS).unwrap_or(0.0);

    let first = trial(None)?;
    let top_pps = sent_pps(&first);
    let guess = first.0.metric(m::RECV_PPS);
    let mut bis = Bisection::new(search.loss_threshold_pct, top_pps);
    let mut outcome = SearchOutcome {
        params: RateSearch {
            loss_threshold_pct: search.loss_threshold_pct,
            steps,
        },
        trials: vec![(0.0, top_pps, loss(&first))],
        passed: false,
        trial_duration_ns: match bound {
            Bound::DurationNs(ns) => Some(ns),
            Bound::Count(_) => None,
        },
    };
    // Candidates: the passing trial that offered the most, else the one that offered
    // the least. The unpaced trial competes too (a receiver that keeps up with it
    // sustains the sender's top rate; its jitter is then unavailable).
    let mut best: Option<(f64, Trial)> = None;
    let mut lowest: Option<(f64, Trial)> = None;
    let mut consider = |sent: f64, t: Trial, passes: bool| {
        if passes {
            if best.as_ref().is_none_or(|(p, _)| sent > *p) {
                best = Some((sent, t));
            }
        } else if lowest.as_ref().is_none_or(|(p, _)| sent < *p) {
            lowest = Some((sent, t));
        }
    };
    let first_loss = loss(&first);
    // Passing, it bounds the search from below; failing, what it delivered estimates
    // what the receiver sustains.
    bis.record(top_pps, top_pps, first_loss);
    consider(top_pps, first, bis.passes(first_loss));
    for i in 0..steps {
        let Some(pps) = bis.next(if i == 0 { guess } else { None }) else {
            break;
        };
        let r = trial(Some(Rate::PacketsPerSec(pps.round().max(1.0) as u64)))?;
        let (sent, l) = (sent_pps(&r), loss(&r));
        outcome.trials.push((pps, sent, l));
        bis.record(pps, sent, l);
        consider(sent, r, bis.passes(l));
    }
    outcome.passed = best.is_some();
    let Some((_, (mut chosen, samples))) = best.or(lowest) else {
        return Err(EngineError::Protocol(
            "RFC 2544 search made no trial".into(),
        ));
    };
    if !outcome.passed {
        chosen.warnings.push(format!(
            "RFC 2544 search: no trial stayed within {}% loss; the lowest-rate trial is shown",
            search.loss_threshold_pct
        ));
    }
    // The chosen trial's interval samples are what the run reports.
    for s in &samples {
        recorder.on_interval(s);
    }
    chosen.spec = cfg.spec.clone();
    chosen.rate_search = Some(outcome);
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A receiver that sustains exactly 300 000 datagrams/s, a sender that tops at 1 M.
    fn loss_at(pps: f64) -> f64 {
        if pps <= 300_000.0 {
            0.0
        } else {
            (pps - 300_000.0) / pps * 100.0
        }
    }

    #[test]
    fn bisection_closes_in_on_the_highest_passing_rate() {
        let mut b = Bisection::new(0.1, 1_000_000.0);
        let mut first = Some(310_000.0);
        let mut best: f64 = 0.0;
        for _ in 0..8 {
            let Some(pps) = b.next(first.take()) else {
                break;
            };
            let l = loss_at(pps);
            b.record(pps, pps, l);
            if b.passes(l) {
                best = best.max(pps);
            }
        }
        assert!(best <= 300_301.0, "0.1 % loss passes: {best}");
        assert!(
            best >= 295_000.0,
            "8 steps from a good guess reach 1.7 %: {best}"
        );
    }

    /// The search from any first guess between half and 1.5× the receiver's rate,
    /// after an unpaced trial that offered 1 M/s: 5 paced trials end within 3 % below the
    /// true rate, never above what the loss threshold allows.
    #[test]
    fn five_trials_reach_three_percent_from_any_reasonable_guess() {
        for guess in [150_000.0, 240_000.0, 300_000.0, 360_000.0, 450_000.0] {
            let mut b = Bisection::new(0.1, 1_000_000.0);
            b.record(1_000_000.0, 1_000_000.0, loss_at(1_000_000.0));
            let mut first = Some(guess);
            let mut best: f64 = 0.0;
            let mut tried = Vec::new();
            for _ in 0..5 {
                let Some(pps) = b.next(first.take()) else {
                    break;
                };
                let l = loss_at(pps);
                b.record(pps, pps, l);
                tried.push(pps.round());
                if b.passes(l) {
                    best = best.max(pps);
                }
            }
            // 0.1 % loss passes: up to 300 000 / 0.999.
            assert!(best <= 300_301.0, "guess {guess}: {tried:?}");
            assert!(best >= 291_000.0, "guess {guess}: {best} after {tried:?}");
        }
    }

    #[test]
    fn without_a_pass_the_next_probe_is_below_what_a_failure_delivered() {
        let mut b = Bisection::new(0.1, 1000.0);
        assert_eq!(
            b.next(Some(5000.0)),
            Some(500.0),
            "a guess outside: the midpoint"
        );
        assert_eq!(b.next(None), Some(500.0));
        // 800/s offered, 25 % lost: 600/s delivered; next 95 % of it.
        b.record(800.0, 800.0, 25.0);
        assert_eq!(b.next(None), Some(570.0));
        // A failure that delivered nothing gives no estimate: the midpoint.
        let mut b = Bisection::new(0.1, 1000.0);
        b.record(800.0, 800.0, 100.0);
        assert_eq!(b.next(None), Some(400.0));
    }

    #[test]
    fn above_a_pass_probes_climb_by_at_most_thirty_percent_then_bisect() {
        let mut b = Bisection::new(0.0, 1000.0);
        b.record(500.0, 500.0, 0.0);
        assert_eq!(b.next(None), Some(650.0), "min(midpoint 750, 1.3 × 500)");
        b.record(650.0, 650.0, 1.0);
        assert_eq!(b.next(None), Some(575.0), "bisect [500, 650]");
        // A sender that managed only 550 of 600 asked: 550 passes, nothing above 600
        // is tried again.
        b.record(600.0, 550.0, 0.0);
        assert_eq!(b.next(None), Some(575.0));
        b.record(575.0, 575.0, 0.0);
        assert_eq!(b.next(None), Some(587.5));
        assert!(!b.passes(f64::NAN));
        assert!(b.passes(0.0));
    }

    /// Regression: an unpaced trial that delivered exactly what the first paced trial then
    /// offered (and passed) made the search re-test that one rate in every later trial
    /// (seen on loopback: 918k, 918k, 918k, 918k, 918k datagrams/s), so the search never
    /// climbed above its first guess.
    #[test]
    fn a_failure_that_delivered_the_passing_rate_is_not_probed_again() {
        let mut b = Bisection::new(0.1, 1_050_000.0);
        b.record(1_050_000.0, 1_050_000.0, 12.57);
        let first = b.next(Some(918_000.0)).unwrap();
        assert_eq!(first, 918_000.0);
        b.record(first, first, 0.0);
        let next = b.next(None).unwrap();
        assert!(
            next > 918_000.0 * RESOLUTION,
            "climbs above the pass: {next}"
        );
        assert!(next < 1_050_000.0, "stays below the failure: {next}");
    }

    #[test]
    fn the_search_ends_once_pass_and_failure_are_within_the_resolution() {
        // The unpaced trial passed: nothing above it can be offered.
        let mut b = Bisection::new(0.1, 1000.0);
        b.record(1000.0, 1000.0, 0.0);
        assert_eq!(b.next(None), None);
        // The same rate passed once and failed once (a receiver's occasional stall).
        let mut b = Bisection::new(0.1, 1000.0);
        b.record(500.0, 500.0, 0.0);
        b.record(500.0, 500.0, 1.0);
        assert_eq!(b.next(None), None);
        // 1.5 % apart: done; 3 % apart: one more probe between them.
        let mut b = Bisection::new(0.1, 1000.0);
        b.record(500.0, 500.0, 0.0);
        b.record(507.5, 507.5, 1.0);
        assert_eq!(b.next(None), None);
        let mut b = Bisection::new(0.1, 1000.0);
        b.record(500.0, 500.0, 0.0);
        b.record(515.0, 515.0, 1.0);
        assert_eq!(b.next(None), Some(507.5));
        // Nothing passed yet: the search goes on however close the failures come.
        let mut b = Bisection::new(0.1, 1000.0);
        b.record(10.0, 10.0, 50.0);
        assert!(b.next(None).is_some());
    }
}
