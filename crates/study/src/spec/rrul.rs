//! What an rrul cell runs beyond its family and load size: [`RrulPlan`], with the
//! limits the engine keeps.

use super::*;
use serde::{Deserialize, Serialize};
use wire::spec::{Family, LoadedOpts, MIN_IDLE_NS, MIN_LOADED_NS, MIN_LOADED_PROBES};

/// Default length of an rrul cell's loaded phase, seconds: with its 0.8 s ramps, 2.4 s
/// of loaded probes (48 of each type at the default 20/s).
pub const DEFAULT_RRUL_DURATION_S: f64 = 4.0;
/// Default idle phase of an rrul cell, seconds (20 idle probes of each type).
pub const DEFAULT_RRUL_IDLE_S: f64 = 1.0;
/// Shortest loaded phase (the engine's limit, [`wire::spec::MIN_LOADED_NS`]), seconds.
pub const MIN_LOADED_S: f64 = MIN_LOADED_NS as f64 / 1e9;
/// Interval samples of an rrul run's parts, as flent's default 0.2 s step: throughput
/// and probe RTT over time.
pub const RRUL_INTERVAL_NS: u64 = 200_000_000;

/// What an rrul cell runs beyond its family and load write size (the size axis).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RrulPlan {
    pub opts: LoadedOpts,
    /// Length of the loaded phase, ns.
    pub duration_ns: u64,
    /// Interval samples of every part, ns.
    pub interval_ns: u64,
}

impl RrulPlan {
    /// The limits `dualperf run -t rrul` keeps, and at least 10 probes of each type
    /// in the loaded window.
    pub fn check(&self) -> Result<(), SpecError> {
        let secs = |key: &str, ns: u64, min: f64| {
            let v = ns as f64 / 1e9;
            if (min..=86_400.0).contains(&v) {
                Ok(())
            } else {
                Err(SpecError::Invalid(format!(
                    "{key} {v} s is out of range: give between {min} and 86400 s"
                )))
            }
        };
        secs(
            "load_duration_s (--load-duration)",
            self.duration_ns,
            MIN_LOADED_S,
        )?;
        secs(
            "idle_s (--idle)",
            self.opts.idle_ns,
            MIN_IDLE_NS as f64 / 1e9,
        )?;
        check(
            "load_streams (--load-streams)",
            self.opts.streams,
            1,
            wire::proto::MAX_STREAMS,
            "",
        )?;
        check(
            "probe_rate (--probe-rate)",
            self.opts.probe_rate,
            1,
            wire::proto::MAX_RR_RATE,
            "per second",
        )?;
        check(
            "probe_size (--probe-size)",
            self.opts.probe_bytes,
            wire::datagram::HEADER_BYTES as u32,
            // UDP probes go over both families: the smaller limit.
            Family::V4.max_udp_payload_bytes(),
            "bytes",
        )?;
        if self.interval_ns != RRUL_INTERVAL_NS {
            return Err(SpecError::Invalid(format!(
                "rrul interval_ns {} is not {RRUL_INTERVAL_NS}",
                self.interval_ns
            )));
        }
        let probes = self.opts.probe_rate as f64 * self.loaded_probe_ns() as f64 / 1e9;
        if probes < MIN_LOADED_PROBES {
            return Err(SpecError::Invalid(format!(
                "rrul: {} probes per second over the {:.1} s loaded window give fewer than {MIN_LOADED_PROBES} probes of each type; raise probe_rate (--probe-rate) or load_duration_s (--load-duration)",
                self.opts.probe_rate,
                self.loaded_probe_ns() as f64 / 1e9
            )));
        }
        Ok(())
    }

    /// The ramp at each end of the loaded phase (the engine's rule: a fifth, 0.2–2 s).
    pub fn ramp_ns(&self) -> u64 {
        wire::spec::loaded_ramp_ns(self.duration_ns)
    }
    /// How long the loaded probes run.
    pub fn loaded_probe_ns(&self) -> u64 {
        wire::spec::loaded_probe_ns(self.duration_ns)
    }
    /// One line for `--dry-run` and the report's metadata.
    pub fn describe(&self) -> String {
        let o = &self.opts;
        format!(
            "{} s idle, then {} s of load ({}, {} TCP stream(s) per direction, the size axis is the load's write size); UDP and TCP probes of {} bytes at {}/s each on their own flows; samples every {} ms",
            o.idle_ns as f64 / 1e9,
            self.duration_ns as f64 / 1e9,
            o.load.name(),
            o.streams,
            o.probe_bytes,
            o.probe_rate,
            self.interval_ns / 1_000_000
        )
    }
}
