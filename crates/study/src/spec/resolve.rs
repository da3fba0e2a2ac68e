//! What a spec file means: [`SpecFile::resolve`] applies the defaults and checks each
//! field, in named steps.

use super::validate::{check_duration_s, check_interval_ns};
use super::*;
use wire::spec::{
    Bound, Direction, Family, LoadDirection, LoadedOpts, Rate, RateSearch, SocketOpts, TestKind,
    UdpDatapath,
};
use wire::traffic::TrafficModel;

impl SpecFile {
    /// Validate and apply defaults. `default_seed` is used when the spec names none
    /// (the caller draws it from the clock so that a random order is still recorded).
    pub fn resolve(&self, default_seed: u64) -> Result<StudySpec, SpecError> {
        self.check_text()?;
        let families = self.families()?;
        let tests = self.tests()?;
        let traffic = self.traffic(&tests, default_seed)?;
        let sizes_bytes = self.sizes(traffic.as_ref())?;
        let bound = self.bound()?;
        let direction = self.direction()?;
        let order = self.order()?;
        let rate = self.rate()?;
        check_schedule(traffic.as_ref(), rate, &tests)?;
        let udp_method = self.udp_method(rate.is_some() || traffic.is_some())?;
        let streams = self.streams.unwrap_or(1);
        let interval_ns = self.interval_ns(bound)?;
        let window_ns = match self.window_ms {
            None | Some(0) => None,
            Some(ms) => Some(ms.saturating_mul(1_000_000)),
        };
        let udp_datapath = match &self.udp_datapath {
            None => UdpDatapath::Auto,
            Some(s) => s
                .parse::<UdpDatapath>()
                .map_err(|e| SpecError::Invalid(format!("udp_datapath (--udp-datapath): {e}")))?,
        };
        let zerocopy = self
            .zerocopy
            .as_deref()
            .map(|z| {
                z.parse::<wire::spec::ZeroCopyMethod>()
                    .map_err(|e| SpecError::Invalid(format!("zerocopy (--zerocopy): {e}")))
            })
            .transpose()?;
        let rr_timeout_ms = self.rr_timeout_ms.unwrap_or(200);
        let warmup_runs = self.warmup.unwrap_or(0);
        let retries = self.retries.unwrap_or(2);
        let rrul = if tests.contains(&TestKind::Rrul) {
            Some(self.rrul_plan()?)
        } else {
            None
        };
        let repetition = self.repetition()?;
        let spec = StudySpec {
            label: self.label.clone().unwrap_or_default(),
            families,
            tests,
            sizes_bytes,
            bound,
            direction,
            streams,
            rate,
            udp_method,
            interval_ns,
            window_ns,
            traffic,
            rr_timeout_ns: rr_timeout_ms.saturating_mul(1_000_000),
            udp_datapath,
            zerocopy,
            udp_socket: self.udp_socket_or_default(&udp_method),
            socket: self.socket.clone().unwrap_or_default(),
            repetition,
            order,
            seed: self.seed.unwrap_or(default_seed),
            warmup_runs,
            retries,
            rrul,
            percent_of: self.percent_of.clone(),
            cv_target_pct: self.cv_target_pct,
        };
        spec.validate()?;
        Ok(spec)
    }

    /// The IP versions: both unless given.
    fn families(&self) -> Result<Vec<Family>, SpecError> {
        let families = match &self.families {
            None => vec![Family::V4, Family::V6],
            Some(list) => list
                .iter()
                .map(|n| {
                    n.to_string()
                        .parse::<Family>()
                        .map_err(|e| SpecError::Invalid(e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        Ok(families)
    }

    /// The tests: the four wire tests unless given.
    fn tests(&self) -> Result<Vec<TestKind>, SpecError> {
        let tests = match &self.tests {
            None => TestKind::WIRE.to_vec(),
            Some(list) => list
                .iter()
                .map(|t| {
                    t.parse::<TestKind>()
                        .map_err(|e| SpecError::Invalid(e.to_string()))
                })
                .collect::<Result<Vec<_>, _>>()?,
        };
        Ok(tests)
    }

    /// The traffic model, if any (it shapes udp-stream and tcp-stream: one must run).
    fn traffic(
        &self,
        tests: &[TestKind],
        default_seed: u64,
    ) -> Result<Option<TrafficModel>, SpecError> {
        let traffic = TrafficModel::from_options(
            self.idt.as_deref(),
            self.size_dist.as_deref(),
            self.profile.as_deref(),
            (self.on_time.as_deref(), self.off_time.as_deref()),
            self.traffic_seed,
            default_seed,
        )
        .map_err(|e| SpecError::Invalid(format!("traffic model: {e}")))?;
        if traffic.is_some()
            && !tests.contains(&TestKind::UdpStream)
            && !tests.contains(&TestKind::TcpStream)
        {
            return Err(SpecError::Invalid(
                "a traffic model (--idt, --size-dist, --profile) shapes udp-stream and tcp-stream: add one to --tests"
                    .into(),
            ));
        }
        Ok(traffic)
    }

    /// The size axis: as given, the default sizes, or with a size distribution its one
    /// label (the distribution's mean).
    fn sizes(&self, traffic: Option<&TrafficModel>) -> Result<Vec<u32>, SpecError> {
        let size_dist = traffic.and_then(|t| t.size_dist().ok().flatten());
        let sizes_bytes = match &self.sizes {
            // Sizes drawn from a distribution: the one size shown is its mean.
            None if size_dist.is_some() => {
                // (Cauchy has no mean: its location is the label then.)
                let mean: f64 = size_dist
                    .as_ref()
                    .and_then(measure::traffic::mean)
                    .or(match size_dist {
                        Some(wire::traffic::Dist::Cauchy { location, .. }) => Some(location),
                        _ => None,
                    })
                    .unwrap_or(0.0);
                vec![(mean.round() as u32).max(wire::datagram::HEADER_BYTES as u32)]
            }
            Some(SizesField::List(v)) if size_dist.is_some() && v.len() > 1 => {
                return Err(SpecError::Invalid(
                    "a size distribution replaces the size axis: give one size (its label in the report) or none".into(),
                ))
            }
            None => DEFAULT_SIZES_BYTES.to_vec(),
            Some(SizesField::List(v)) => v.clone(),
            Some(SizesField::Text(t)) => parse_sizes(t)?,
        };
        if size_dist.is_some() && sizes_bytes.len() > 1 {
            return Err(SpecError::Invalid(
                "a size distribution replaces the size axis: give one size (its label in the report) or none".into(),
            ));
        }
        Ok(sizes_bytes)
    }

    /// What ends a run: a duration (the default) or a count of packets.
    fn bound(&self) -> Result<Bound, SpecError> {
        let bound = match (self.duration_s, self.count) {
            (Some(_), Some(_)) => {
                return Err(SpecError::Invalid(
                    "give either a duration or a count per run, not both".into(),
                ))
            }
            (None, Some(0)) => return Err(SpecError::Invalid("--count must be at least 1".into())),
            (None, Some(n)) => Bound::Count(n),
            (d, None) => {
                let d = d.unwrap_or(DEFAULT_DURATION_S);
                check_duration_s(d)?;
                Bound::DurationNs((d * 1e9).round() as u64)
            }
        };
        Ok(bound)
    }

    fn direction(&self) -> Result<Direction, SpecError> {
        let direction = match self.direction.as_deref() {
            None | Some("forward") => Direction::Forward,
            Some("reverse") => Direction::Reverse,
            Some("bidir") => Direction::Bidir,
            Some(o) => {
                return Err(SpecError::Invalid(format!(
                    "unknown direction '{o}' (use forward, reverse or bidir)"
                )))
            }
        };
        Ok(direction)
    }

    fn order(&self) -> Result<Order, SpecError> {
        let order = match self.order.as_deref() {
            None | Some("interleaved") => Order::Interleaved,
            Some("random") => Order::Random,
            Some(o) => {
                return Err(SpecError::Invalid(format!(
                    "unknown order '{o}' (use interleaved or random)"
                )))
            }
        };
        Ok(order)
    }

    /// The UDP sending rate, in bits/s or packets/s, if given.
    fn rate(&self) -> Result<Option<Rate>, SpecError> {
        let rate = match (self.rate_bps, self.rate_pps) {
            (Some(_), Some(_)) => {
                return Err(SpecError::Invalid(
                    "give the rate in bits/s or in packets/s, not both".into(),
                ))
            }
            (Some(bps), None) => Some(Rate::BitsPerSec(bps)),
            (None, Some(pps)) => Some(Rate::PacketsPerSec(pps)),
            (None, None) => None,
        };
        Ok(rate)
    }

    /// The rrul cells' parameters, checked as `dualperf run -t rrul` checks them
    /// ([`RrulPlan::check`]).
    fn rrul_plan(&self) -> Result<RrulPlan, SpecError> {
        let d = LoadedOpts::default();
        // Range-checked by `RrulPlan::check`; what is not a number is refused here.
        let secs = |key: &str, v: Option<f64>, default: f64| {
            let v = v.unwrap_or(default);
            if v.is_finite() && v >= 0.0 {
                Ok((v * 1e9).round() as u64)
            } else {
                Err(SpecError::Invalid(format!(
                    "{key} {v} s is out of range: give a number of seconds up to 86400"
                )))
            }
        };
        let duration_ns = secs(
            "load_duration_s (--load-duration)",
            self.load_duration_s,
            DEFAULT_RRUL_DURATION_S,
        )?;
        let idle_ns = secs("idle_s (--idle)", self.idle_s, DEFAULT_RRUL_IDLE_S)?;
        let load = match self.load.as_deref() {
            None => d.load,
            Some("upload") => LoadDirection::Upload,
            Some("download") => LoadDirection::Download,
            Some("both") => LoadDirection::Both,
            Some(o) => {
                return Err(SpecError::Invalid(format!(
                    "unknown load '{o}' (use upload, download or both)"
                )))
            }
        };
        let plan = RrulPlan {
            opts: LoadedOpts {
                streams: self.load_streams.unwrap_or(d.streams),
                load,
                probe_rate: self.probe_rate.unwrap_or(d.probe_rate),
                probe_bytes: self.probe_size.unwrap_or(d.probe_bytes),
                idle_ns,
            },
            duration_ns,
            interval_ns: RRUL_INTERVAL_NS,
        };
        plan.check()?;
        Ok(plan)
    }

    /// `interval_ms` checked: 0 (no samples), or at least the protocol's shortest
    /// interval and at most [`wire::proto::MAX_INTERVAL_SAMPLES`] samples per run.
    /// Without `interval_ms`, a run of known length is sampled ten times (at most every
    /// [`DEFAULT_INTERVAL_MS`], at least every protocol minimum), so its time series has
    /// steps to draw: a 0.5 s run sampled every second is one flat step.
    fn interval_ns(&self, bound: Bound) -> Result<Option<u64>, SpecError> {
        let min_ms = wire::proto::MIN_INTERVAL_NS / 1_000_000;
        let default_ms = match bound {
            Bound::DurationNs(d) => (d / 1_000_000 / 10).clamp(min_ms.max(1), DEFAULT_INTERVAL_MS),
            Bound::Count(_) => DEFAULT_INTERVAL_MS,
        };
        let ms = self.interval_ms.unwrap_or(default_ms);
        if ms == 0 {
            return Ok(None);
        }
        let ns = ms.saturating_mul(1_000_000);
        check_interval_ns(ns, bound)?;
        Ok(Some(ns))
    }

    /// The UDP cells' socket options: as given, else for an RFC 2544 study a receive
    /// buffer of [`RFC2544_RCVBUF_BYTES`] (with the other `socket` options) — unless a
    /// receive buffer was given for all tests.
    fn udp_socket_or_default(&self, method: &UdpMethod) -> Option<SocketOpts> {
        let socket = self.socket.clone().unwrap_or_default();
        match (&self.udp_socket, method) {
            (None, UdpMethod::Rfc2544(_)) if socket.rcvbuf_bytes.is_none() => Some(SocketOpts {
                rcvbuf_bytes: Some(RFC2544_RCVBUF_BYTES),
                ..socket
            }),
            _ => self.udp_socket.clone(),
        }
    }

    fn udp_method(&self, has_rate: bool) -> Result<UdpMethod, SpecError> {
        let search = RateSearch {
            loss_threshold_pct: self
                .loss_threshold_pct
                .unwrap_or(wire::spec::RATE_SEARCH_LOSS_THRESHOLD_PCT),
            steps: self.search_steps.unwrap_or(wire::spec::RATE_SEARCH_STEPS),
        };
        match (self.udp_method.as_deref(), has_rate) {
            (None, true) | (Some("fixed"), _) => Ok(UdpMethod::Fixed),
            (None | Some("rfc2544"), false) => {
                search
                    .check()
                    .map_err(|e| SpecError::Invalid(e.to_string()))?;
                Ok(UdpMethod::Rfc2544(search))
            }
            (Some("rfc2544"), true) => Err(SpecError::Invalid(
                "--udp-method rfc2544 finds the rate itself: drop the rate (-b), or use \
                 --udp-method fixed to send at that rate"
                    .into(),
            )),
            (Some(o), _) => Err(SpecError::Invalid(format!(
                "unknown UDP method '{o}' (use rfc2544 or fixed)"
            ))),
        }
    }

    fn repetition(&self) -> Result<Repetition, SpecError> {
        let conf = self.confidence.is_some() || self.ci_width.is_some() || self.runs.is_none();
        if (self.confidence.is_some() || self.ci_width.is_some()) && self.runs.is_some() {
            return Err(SpecError::Invalid(
                "give either --runs or a confidence target (--confidence/--ci-width), not both"
                    .into(),
            ));
        }
        if !conf {
            return Ok(Repetition::Fixed {
                runs: self.runs.unwrap_or(1),
            });
        }
        let level_pct = self.confidence.unwrap_or(DEFAULT_CONFIDENCE_PCT);
        let width_pct = self.ci_width.unwrap_or(DEFAULT_CI_WIDTH_PCT);
        // A bound given alone moves the other default out of its way: `--max-runs 3`
        // means 2..3 runs (at least 2: an interval needs two), `--min-runs 20` 20..20.
        let min_runs = self.min_runs.unwrap_or(match self.max_runs {
            Some(m) => DEFAULT_MIN_RUNS.min(m).max(2),
            None => DEFAULT_MIN_RUNS,
        });
        let max_runs = self
            .max_runs
            .unwrap_or(DEFAULT_MAX_RUNS)
            .max(self.min_runs.unwrap_or(0));
        Ok(Repetition::Confidence {
            level_pct,
            width_pct,
            min_runs,
            max_runs,
        })
    }
}

/// On/off periods gate a schedule: a model's own gaps (`--idt`), or a rate with
/// udp-stream alone (the TCP stream takes no rate). A model sets its own gaps: the rate
/// search does not apply.
fn check_schedule(
    traffic: Option<&TrafficModel>,
    rate: Option<Rate>,
    tests: &[TestKind],
) -> Result<(), SpecError> {
    if let Some(t) = traffic.filter(|t| t.on_time.is_some() && t.idt.is_none()) {
        // The TCP stream takes no rate: only --idt paces it.
        if rate.is_none() || tests.contains(&TestKind::TcpStream) {
            return Err(SpecError::Invalid(format!(
                    "on/off periods ({t}) gate a schedule: give --idt (or a --profile), or a rate with udp-stream alone"
                )));
        }
    }
    Ok(())
}
