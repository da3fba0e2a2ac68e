//! Traffic models in the manner of D-ITG: the gap between datagrams (inter-departure
//! time, IDT) and the datagram size each drawn from a distribution, with a seed so a
//! run's sequence can be reproduced. This module describes and parses models; sampling
//! is in `measure::traffic`.
//!
//! Text form, `NAME:PARAMS`, values with units (durations for `--idt`, byte counts for
//! `--size-dist`, through the one quantity parser):
//!
//! | distribution | text | mean |
//! |---|---|---|
//! | constant | `constant:1ms` | the value |
//! | uniform | `uniform:64..1400` | (a + b) / 2 |
//! | exponential | `exp:1ms` | the value |
//! | Pareto (type I) | `pareto:shape=1.5,mean=1ms` or `pareto:shape=1.5,scale=…` | shape·scale/(shape−1) |
//! | Cauchy (positive part) | `cauchy:loc=1ms,scale=100us` | none (heavy tail) |
//! | normal (positive part) | `normal:mean=1ms,sd=100us` | ≈ mean when sd ≪ mean |
//! | Poisson (counts of units) | `poisson:1ms` | the value |
//! | gamma | `gamma:shape=2,scale=500us` | shape·scale |
//! | Weibull | `weibull:shape=1.5,scale=1ms` | scale·Γ(1 + 1/shape) |
//! | Gumbel (largest extreme value) | `gumbel:loc=55ms,scale=6ms` | loc + 0.5772·scale |
//!
//! Cauchy, normal and Gumbel draws below zero are drawn again (the distribution of
//! positive values; D-ITG does the same for times). The spread parameters of a size
//! distribution (`scale`, `sd`, `loc`) may be fractional bytes (`scale=5.7`). Poisson with a duration counts whole µs,
//! with a size whole bytes.

use crate::quantity::{parse_bytes, parse_duration_ns, QuantityError};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a distribution (`NAME:PARAMS`) or a traffic model cannot be used; the message is
/// what the user sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrafficError {
    #[error(
        "'{text}': write NAME:PARAMS, e.g. exp:1ms, uniform:64..1400, pareto:shape=1.5,mean=1ms"
    )]
    NoParams { text: String },
    #[error("'{text}': {name} needs {key}=…")]
    MissingParam {
        text: String,
        name: String,
        key: &'static str,
    },
    #[error("'{text}': shape '{value}' is not a number")]
    ShapeNotANumber { text: String, value: String },
    /// A value that is not a duration (gaps) or a byte count (sizes).
    #[error(transparent)]
    Quantity(#[from] QuantityError),
    #[error("'{text}': {what} must be above 0")]
    NotPositive { text: String, what: &'static str },
    #[error("'{text}': write uniform:LOW..HIGH")]
    UniformSyntax { text: String },
    #[error("'{text}': uniform needs 0 <= LOW < HIGH")]
    UniformRange { text: String },
    #[error("'{text}': a Pareto mean exists only for shape > 1; give scale= instead")]
    ParetoMeanNeedsShapeAboveOne { text: String },
    #[error("'{text}': unknown distribution '{name}' (constant, uniform, exp, pareto, cauchy, normal, poisson, gamma, weibull, gumbel)")]
    UnknownDist { text: String, name: String },
    /// One of the on/off period distributions (`flag` is `--on-time` or `--off-time`).
    #[error("{flag}: {source}")]
    Period {
        flag: &'static str,
        source: Box<TrafficError>,
    },
    #[error(
        "--on-time and --off-time come together (the lengths of the active and the silent periods)"
    )]
    OnOffUnpaired,
    #[error("unknown profile '{name}': {known}")]
    UnknownProfile { name: String, known: String },
    /// Each command names the seed its own way; the message names them all.
    #[error("a traffic seed (run --seed, study --traffic-seed, traffic_seed in a spec file) fixes the draws of --idt / --size-dist / --profile; give one of them")]
    SeedWithoutModel,
}

/// A distribution of non-negative values, in base units (ns for gaps, bytes for sizes).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "dist")]
pub enum Dist {
    Constant {
        value: f64,
    },
    Uniform {
        low: f64,
        high: f64,
    },
    Exponential {
        mean: f64,
    },
    Pareto {
        shape: f64,
        scale: f64,
    },
    Cauchy {
        location: f64,
        scale: f64,
    },
    Normal {
        mean: f64,
        sd: f64,
    },
    /// Counts of `unit` (1000 ns or 1 byte) with this mean, in base units.
    Poisson {
        mean: f64,
        unit: f64,
    },
    Gamma {
        shape: f64,
        scale: f64,
    },
    Weibull {
        shape: f64,
        scale: f64,
    },
    /// The largest extreme value (type I, Fisher-Tippett) distribution: F(x) =
    /// exp(−exp(−(x − location)/scale)); the NGMN gaming model's.
    Gumbel {
        location: f64,
        scale: f64,
    },
}

/// What a distribution's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Inter-departure times, ns.
    Gap,
    /// Datagram payload sizes, bytes.
    Size,
}

impl Quantity {
    fn parse(self, text: &str) -> Result<f64, QuantityError> {
        match self {
            Quantity::Gap => parse_duration_ns(text).map(|v| v as f64),
            Quantity::Size => parse_bytes(text).map(|v| v as f64),
        }
    }
    fn format(self, v: f64) -> String {
        match self {
            Quantity::Gap if v >= 1e6 && (v / 1e6).fract() == 0.0 => format!("{}ms", v / 1e6),
            Quantity::Gap if v >= 1e3 && (v / 1e3).fract() == 0.0 => format!("{}us", v / 1e3),
            Quantity::Gap => format!("{v}ns"),
            Quantity::Size => format!("{v}"),
        }
    }
    fn poisson_unit(self) -> f64 {
        match self {
            Quantity::Gap => 1e3,
            Quantity::Size => 1.0,
        }
    }
}

impl Dist {
    /// The largest value a draw can take, where bounded (sizes need a buffer).
    pub fn max(&self) -> Option<f64> {
        match *self {
            Dist::Constant { value } => Some(value),
            Dist::Uniform { high, .. } => Some(high),
            _ => None,
        }
    }

    /// Parse `NAME:PARAMS` for a gap (durations) or a size (bytes).
    pub fn parse(text: &str, q: Quantity) -> Result<Dist, TrafficError> {
        let text = text.trim();
        let owned = || text.to_string();
        let (name, params) = text
            .split_once(':')
            .ok_or_else(|| TrafficError::NoParams { text: owned() })?;
        let kv = |key: &'static str| -> Result<f64, TrafficError> {
            params
                .split(',')
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| k.trim() == key)
                .map(|(_, v)| v.trim())
                .ok_or_else(|| TrafficError::MissingParam {
                    text: owned(),
                    name: name.to_string(),
                    key,
                })
                .and_then(|v| {
                    if key == "shape" {
                        v.parse::<f64>().map_err(|_| TrafficError::ShapeNotANumber {
                            text: owned(),
                            value: v.to_string(),
                        })
                    } else {
                        // A size distribution's parameter need not be whole bytes
                        // (a Gumbel scale of 5.7 B): a plain non-negative number is
                        // taken as it is. Never a negative one: a location far below 0
                        // would leave the sampler redrawing negative values for ever.
                        q.parse(v).or_else(|e| match (q, v.parse::<f64>()) {
                            (Quantity::Size, Ok(x)) if x.is_finite() && x >= 0.0 => Ok(x),
                            _ => Err(e.into()),
                        })
                    }
                })
        };
        let positive = |what: &'static str, v: f64| -> Result<f64, TrafficError> {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(TrafficError::NotPositive {
                    text: owned(),
                    what,
                })
            }
        };
        let d = match name.trim().to_ascii_lowercase().as_str() {
            "constant" | "const" => Dist::Constant {
                value: positive("the value", q.parse(params)?)?,
            },
            "uniform" => {
                let (a, b) = params
                    .split_once("..")
                    .ok_or_else(|| TrafficError::UniformSyntax { text: owned() })?;
                let (low, high) = (q.parse(a)?, q.parse(b)?);
                if !(low.is_finite() && high.is_finite() && low >= 0.0 && high > low) {
                    return Err(TrafficError::UniformRange { text: owned() });
                }
                Dist::Uniform { low, high }
            }
            "exp" | "exponential" => Dist::Exponential {
                mean: positive("the mean", q.parse(params)?)?,
            },
            "poisson" => Dist::Poisson {
                mean: positive("the mean", q.parse(params)?)?,
                unit: q.poisson_unit(),
            },
            "pareto" => {
                let shape = positive("shape", kv("shape")?)?;
                let scale = match kv("scale") {
                    Ok(s) => positive("scale", s)?,
                    Err(_) => {
                        if shape <= 1.0 {
                            return Err(TrafficError::ParetoMeanNeedsShapeAboveOne {
                                text: owned(),
                            });
                        }
                        // Whole ns (bytes), as every parsed value is: prints back exactly.
                        (positive("mean", kv("mean")?)? * (shape - 1.0) / shape).round()
                    }
                };
                Dist::Pareto { shape, scale }
            }
            "cauchy" => Dist::Cauchy {
                location: kv("loc")?,
                scale: positive("scale", kv("scale")?)?,
            },
            "normal" => Dist::Normal {
                mean: positive("mean", kv("mean")?)?,
                sd: positive("sd", kv("sd")?)?,
            },
            "gamma" => Dist::Gamma {
                shape: positive("shape", kv("shape")?)?,
                scale: positive("scale", kv("scale")?)?,
            },
            "weibull" => Dist::Weibull {
                shape: positive("shape", kv("shape")?)?,
                scale: positive("scale", kv("scale")?)?,
            },
            "gumbel" | "lev" => Dist::Gumbel {
                location: kv("loc")?,
                scale: positive("scale", kv("scale")?)?,
            },
            other => {
                return Err(TrafficError::UnknownDist {
                    text: owned(),
                    name: other.to_string(),
                })
            }
        };
        Ok(d)
    }

    /// The text form (parses back to the same model).
    pub fn display(&self, q: Quantity) -> String {
        let f = |v: f64| q.format(v);
        match *self {
            Dist::Constant { value } => format!("constant:{}", f(value)),
            Dist::Uniform { low, high } => format!("uniform:{}..{}", f(low), f(high)),
            Dist::Exponential { mean } => format!("exp:{}", f(mean)),
            Dist::Poisson { mean, .. } => format!("poisson:{}", f(mean)),
            Dist::Pareto { shape, scale } => format!("pareto:shape={shape},scale={}", f(scale)),
            Dist::Cauchy { location, scale } => {
                format!("cauchy:loc={},scale={}", f(location), f(scale))
            }
            Dist::Normal { mean, sd } => format!("normal:mean={},sd={}", f(mean), f(sd)),
            Dist::Gamma { shape, scale } => format!("gamma:shape={shape},scale={}", f(scale)),
            Dist::Weibull { shape, scale } => format!("weibull:shape={shape},scale={}", f(scale)),
            Dist::Gumbel { location, scale } => {
                format!("gumbel:loc={},scale={}", f(location), f(scale))
            }
        }
    }
}

/// A traffic model for a UDP stream: gaps, sizes and the seed that fixes the sequence.
/// The distributions travel (and are stored) in their text form, parsed where used, so
/// the model reads the same in a spec file, the wire protocol and the results database.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TrafficModel {
    /// Inter-departure time (`--idt`, e.g. `exp:1ms`); `None` = the stream's rate (or
    /// unpaced).
    #[serde(default)]
    pub idt: Option<String>,
    /// Payload size (`--size-dist`, e.g. `uniform:64..1400`); `None` = the test's size.
    #[serde(default)]
    pub size: Option<String>,
    /// Seed of the draws (recorded, so a run can be repeated exactly).
    pub seed: u64,
    /// The application profile this came from, if any (e.g. `voip-g711`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// On/off activity (`--on-time`, `--off-time`: durations, e.g. `exp:1s`): the
    /// stream alternates between periods in which it follows its schedule and silent
    /// periods in which it sends nothing, as a voice codec with voice activity
    /// detection sends talkspurts and pauses. Both or neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_time: Option<String>,
}

/// An application profile: what it sets and where its numbers come from.
pub struct Profile {
    pub name: &'static str,
    pub idt: &'static str,
    pub size: &'static str,
    /// On/off activity (active, silent period lengths), for voice activity detection.
    pub on_off: Option<(&'static str, &'static str)>,
    pub source: &'static str,
}

/// Talkspurt and pause lengths of one talker in a conversation: exponentially
/// distributed with means 1.004 s and 1.587 s (ITU-T P.59, artificial conversational
/// speech).
const P59_ON_OFF: Option<(&str, &str)> = Some(("exp:1004ms", "exp:1587ms"));

/// The application profiles (`--profile`).
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "voip-g711",
        idt: "constant:20ms",
        size: "constant:172",
        on_off: None,
        source: "ITU-T G.711 (64 kbit/s) in 20 ms frames: 160 bytes of voice + 12-byte RTP header (RFC 3550), 50 packets/s; D-ITG's VoIP G.711 model without voice activity detection",
    },
    Profile {
        name: "voip-g729",
        idt: "constant:20ms",
        size: "constant:32",
        on_off: None,
        source: "ITU-T G.729 (8 kbit/s) in 20 ms frames (2 × 10 ms): 20 bytes of voice + 12-byte RTP header (RFC 3550), 50 packets/s",
    },
    Profile {
        name: "voip-g723",
        idt: "constant:30ms",
        size: "constant:36",
        on_off: None,
        source: "ITU-T G.723.1 (6.3 kbit/s) in 30 ms frames: 24 bytes of voice + 12-byte RTP header (RFC 3550), 33.3 packets/s",
    },
    Profile {
        name: "voip-g711-vad",
        idt: "constant:20ms",
        size: "constant:172",
        on_off: P59_ON_OFF,
        source: "voip-g711 with voice activity detection: talkspurts and pauses of one talker, exponential with means 1.004 s and 1.587 s (ITU-T P.59 artificial conversational speech), so active 39 % of the time; nothing is sent in pauses (comfort-noise frames are not modelled)",
    },
    Profile {
        name: "voip-g729-vad",
        idt: "constant:20ms",
        size: "constant:32",
        on_off: P59_ON_OFF,
        source: "voip-g729 with voice activity detection: ITU-T P.59 talkspurts (mean 1.004 s) and pauses (mean 1.587 s), exponential; G.729 Annex B's silence-description frames are not modelled",
    },
    Profile {
        name: "voip-g723-vad",
        idt: "constant:30ms",
        size: "constant:36",
        on_off: P59_ON_OFF,
        source: "voip-g723 with voice activity detection: ITU-T P.59 talkspurts (mean 1.004 s) and pauses (mean 1.587 s), exponential; silence-description frames are not modelled",
    },
    Profile {
        name: "game-client",
        idt: "constant:40ms",
        size: "gumbel:loc=45,scale=5.7",
        on_off: None,
        source: "online game, client to server (NGMN Alliance, Radio Access Performance Evaluation Methodology v1.0, 2008, Annex A, gaming uplink): a packet every 40 ms, sizes from the largest extreme value distribution a = 45 B, b = 5.7 B (mean 48.3 B); the first packet's random phase and the 2-byte compressed UDP header of the white paper are not modelled",
    },
    Profile {
        name: "game-server",
        idt: "gumbel:loc=55ms,scale=6ms",
        size: "gumbel:loc=120,scale=36",
        on_off: None,
        source: "online game, server to client (NGMN 2008, Annex A, gaming downlink): gaps from the largest extreme value distribution a = 55 ms, b = 6 ms (mean 58.5 ms; b as in the Vienna LTE simulator, ns-3's TrafficGeneratorNgmnGaming defaults to 5.7 ms), sizes a = 120 B, b = 36 B (mean 140.8 B); gaps are not rounded to whole ms",
    },
    Profile {
        name: "dns",
        idt: "exp:100ms",
        size: "uniform:20..100",
        on_off: None,
        source: "DNS queries as Poisson arrivals (exponential gaps, 10/s) of 20-100-byte messages (RFC 1035 questions without EDNS); a light request stream, not a measured resolver trace",
    },
];

/// The profile of this name.
pub fn profile(name: &str) -> Option<&'static Profile> {
    PROFILES
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
}

impl TrafficModel {
    /// The model of `--idt`, `--size-dist` and `--profile` (explicit distributions win
    /// over the profile's), checked; `None` when none is given. `seed` is used only
    /// with a model (asking for one without is an error).
    pub fn from_options(
        idt: Option<&str>,
        size: Option<&str>,
        profile_name: Option<&str>,
        (on_time, off_time): (Option<&str>, Option<&str>),
        seed: Option<u64>,
        default_seed: u64,
    ) -> Result<Option<TrafficModel>, TrafficError> {
        let prof = match profile_name {
            None => None,
            Some(name) => Some(profile(name).ok_or_else(|| {
                TrafficError::UnknownProfile {
                    name: name.to_string(),
                    known: PROFILES
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            })?),
        };
        let idt = idt.map(str::to_string).or(prof.map(|p| p.idt.to_string()));
        let size = size
            .map(str::to_string)
            .or(prof.map(|p| p.size.to_string()));
        // Explicit on/off periods replace the profile's (both or neither).
        let (on_time, off_time) = match (on_time, off_time, prof.and_then(|p| p.on_off)) {
            (None, None, Some((on, off))) => (Some(on), Some(off)),
            given => (given.0, given.1),
        };
        if on_time.is_some() != off_time.is_some() {
            return Err(TrafficError::OnOffUnpaired);
        }
        if idt.is_none() && size.is_none() && on_time.is_none() {
            if seed.is_some() {
                return Err(TrafficError::SeedWithoutModel);
            }
            return Ok(None);
        }
        let m = TrafficModel {
            idt,
            size,
            seed: seed.unwrap_or(default_seed),
            profile: prof.map(|p| p.name.to_string()),
            on_time: on_time.map(str::to_string),
            off_time: off_time.map(str::to_string),
        };
        m.check()?;
        Ok(Some(m))
    }

    /// The gap distribution, parsed (`Err` names what is wrong).
    pub fn idt_dist(&self) -> Result<Option<Dist>, TrafficError> {
        self.idt
            .as_deref()
            .map(|t| Dist::parse(t, Quantity::Gap))
            .transpose()
    }

    /// The size distribution, parsed.
    pub fn size_dist(&self) -> Result<Option<Dist>, TrafficError> {
        self.size
            .as_deref()
            .map(|t| Dist::parse(t, Quantity::Size))
            .transpose()
    }

    /// The on/off period distributions (active, silent), parsed; `None` without.
    pub fn on_off_dists(&self) -> Result<Option<(Dist, Dist)>, TrafficError> {
        match (&self.on_time, &self.off_time) {
            (Some(on), Some(off)) => {
                let d = |t: &str, flag: &'static str| {
                    Dist::parse(t, Quantity::Gap).map_err(|e| TrafficError::Period {
                        flag,
                        source: Box::new(e),
                    })
                };
                Ok(Some((d(on, "--on-time")?, d(off, "--off-time")?)))
            }
            (None, None) => Ok(None),
            _ => Err(TrafficError::OnOffUnpaired),
        }
    }

    /// Every distribution parses, and on/off periods have a schedule to gate.
    pub fn check(&self) -> Result<(), TrafficError> {
        self.idt_dist()?;
        self.size_dist()?;
        self.on_off_dists()?;
        Ok(())
    }
}

impl fmt::Display for TrafficModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(p) = &self.profile {
            parts.push(format!("profile {p}"));
        }
        if let Some(d) = &self.idt {
            parts.push(format!("idt {d}"));
        }
        if let Some(d) = &self.size {
            parts.push(format!("size {d}"));
        }
        if let (Some(on), Some(off)) = (&self.on_time, &self.off_time) {
            parts.push(format!("on {on}, off {off}"));
        }
        parts.push(format!("seed {}", self.seed));
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_distribution_parses_and_prints_back() {
        for (text, q) in [
            ("constant:1ms", Quantity::Gap),
            ("uniform:64..1400", Quantity::Size),
            ("exp:1ms", Quantity::Gap),
            ("pareto:shape=1.5,mean=1ms", Quantity::Gap),
            ("cauchy:loc=1ms,scale=100us", Quantity::Gap),
            ("normal:mean=1ms,sd=100us", Quantity::Gap),
            ("poisson:500us", Quantity::Gap),
            ("gamma:shape=2,scale=500us", Quantity::Gap),
            ("weibull:shape=1.5,scale=1ms", Quantity::Gap),
            ("gumbel:loc=55ms,scale=6ms", Quantity::Gap),
            ("gumbel:loc=55ms,scale=5700us", Quantity::Gap),
            ("gumbel:loc=45,scale=5.7", Quantity::Size),
        ] {
            let d = Dist::parse(text, q).unwrap_or_else(|e| panic!("{text}: {e}"));
            let again = Dist::parse(&d.display(q), q).unwrap();
            assert_eq!(d, again, "{text} → {}", d.display(q));
        }
        let p = Dist::parse("pareto:shape=1.5,mean=1ms", Quantity::Gap).unwrap();
        // scale = mean·(shape − 1)/shape, rounded to whole ns.
        assert_eq!(
            p,
            Dist::Pareto {
                shape: 1.5,
                scale: 333_333.0
            }
        );
    }

    #[test]
    fn bad_models_are_refused_with_the_reason() {
        for (text, why) in [
            ("exp", "NAME:PARAMS"),
            ("exp:-1ms", "duration"),
            ("uniform:1400..64", "LOW < HIGH"),
            ("pareto:shape=1,mean=1ms", "shape > 1"),
            ("zipf:1", "unknown distribution"),
            ("gamma:shape=2", "needs scale"),
            ("normal:mean=1ms,sd=0ms", "sd must be above 0"),
            ("gumbel:loc=55ms", "needs scale"),
        ] {
            let e = Dist::parse(text, Quantity::Gap).unwrap_err().to_string();
            assert!(e.contains(why), "{text}: {e}");
        }
        // Sizes take fractional spreads, never a fraction with a unit.
        let e = Dist::parse("gumbel:loc=45,scale=5.7K", Quantity::Size)
            .unwrap_err()
            .to_string();
        assert!(e.contains("whole number"), "{e}");
        let e = Dist::parse("gumbel:loc=45,scale=-1", Quantity::Size)
            .unwrap_err()
            .to_string();
        assert!(e.contains("non-negative"), "{e}");
        // A location far below 0 would leave almost no draw non-negative.
        for text in ["gumbel:loc=-1000,scale=1", "cauchy:loc=-1000000,scale=1"] {
            assert!(Dist::parse(text, Quantity::Size).is_err(), "{text}");
        }
    }

    #[test]
    fn profiles_parse() {
        for p in PROFILES {
            Dist::parse(p.idt, Quantity::Gap).unwrap();
            Dist::parse(p.size, Quantity::Size).unwrap();
            if let Some((on, off)) = p.on_off {
                Dist::parse(on, Quantity::Gap).unwrap();
                Dist::parse(off, Quantity::Gap).unwrap();
            }
        }
        assert!(profile("VOIP-G711").is_some());
    }

    /// A voice-activity profile brings its talkspurts and pauses; flags replace them
    /// (both, never one of the pair), and the model reads back what was applied.
    #[test]
    fn a_profile_brings_its_on_off_periods_and_flags_replace_them() {
        let m = |on: Option<&str>, off: Option<&str>| {
            TrafficModel::from_options(None, None, Some("voip-g729-vad"), (on, off), Some(1), 0)
        };
        let vad = m(None, None).unwrap().unwrap();
        assert_eq!(
            (vad.idt.as_deref(), vad.size.as_deref()),
            (Some("constant:20ms"), Some("constant:32"))
        );
        assert_eq!(
            (vad.on_time.as_deref(), vad.off_time.as_deref()),
            (Some("exp:1004ms"), Some("exp:1587ms"))
        );
        let own = m(Some("exp:2s"), Some("exp:1s")).unwrap().unwrap();
        assert_eq!(
            (own.on_time.as_deref(), own.off_time.as_deref()),
            (Some("exp:2s"), Some("exp:1s"))
        );
        assert_eq!(m(Some("exp:2s"), None), Err(TrafficError::OnOffUnpaired));
        let plain =
            TrafficModel::from_options(None, None, Some("voip-g729"), (None, None), None, 3)
                .unwrap()
                .unwrap();
        assert_eq!(plain.on_time, None);
        let game =
            TrafficModel::from_options(None, None, Some("game-server"), (None, None), None, 3)
                .unwrap()
                .unwrap();
        assert!(matches!(game.idt_dist(), Ok(Some(Dist::Gumbel { .. }))));
    }

    /// `run` calls the traffic seed --seed, `study` --traffic-seed (its --seed was the run
    /// order's): a seed without a model is refused naming the option of each.
    #[test]
    fn a_seed_without_a_model_names_each_commands_option() {
        let e = TrafficModel::from_options(None, None, None, (None, None), Some(1), 0)
            .unwrap_err()
            .to_string();
        for option in ["run --seed", "study --traffic-seed", "traffic_seed"] {
            assert!(e.contains(option), "{option} missing in: {e}");
        }
        assert!(e.contains("give one of them"), "{e}");
    }
}
