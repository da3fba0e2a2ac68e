//! The exporter's own metrics, served on `/metrics`: probes run, failed and refused,
//! probes queued and running, and how long probes take.

use crate::exposition::{encode, family_label};
use crate::probe::ProbeOutcome;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::time::Duration;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModuleLabel {
    module: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    module: String,
    family: String,
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabel {
    reason: String,
}

/// Histogram buckets of a probe's duration, seconds (a probe is two tests of seconds).
const DURATION_BUCKETS: [f64; 10] = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0];

pub struct OwnMetrics {
    registry: Registry,
    probes: Family<ModuleLabel, Counter>,
    failures: Family<FailureLabels, Counter>,
    refused: Family<ReasonLabel, Counter>,
    archive_errors: Counter,
    abandoned: Counter,
    queued: Gauge,
    in_flight: Gauge,
    duration: Family<ModuleLabel, Histogram>,
}

/// After the first, one archive error in this many is logged.
pub const ARCHIVE_LOG_EVERY: u64 = 100;

/// The count of archive errors so far, and whether this one is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveFailure {
    pub count: u64,
    pub log: bool,
}

/// Counts a probe request as abandoned when dropped before [`Abandoned::answered`].
pub struct Abandoned<'a> {
    counter: &'a Counter,
    answered: bool,
}

impl Abandoned<'_> {
    pub fn answered(&mut self) {
        self.answered = true;
    }
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if !self.answered {
            self.counter.inc();
        }
    }
}

/// Counts a probe as running while held.
pub struct InFlight<'a>(&'a Gauge);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl OwnMetrics {
    /// With every module's series present from the start (at zero).
    pub fn new<'a>(modules: impl Iterator<Item = &'a String>) -> OwnMetrics {
        let mut registry = Registry::default();
        let probes = Family::<ModuleLabel, Counter>::default();
        let failures = Family::<FailureLabels, Counter>::default();
        let refused = Family::<ReasonLabel, Counter>::default();
        let archive_errors = Counter::default();
        let abandoned = Counter::default();
        let queued = Gauge::default();
        let in_flight = Gauge::default();
        let duration = Family::<ModuleLabel, Histogram>::new_with_constructor(
            (|| Histogram::new(DURATION_BUCKETS)) as fn() -> Histogram,
        );
        for m in modules {
            let l = ModuleLabel { module: m.clone() };
            let _ = probes.get_or_create(&l);
        }
        registry.register(
            "dualperf_exporter_probes",
            "Probes run (each runs the module over the families it names)",
            probes.clone(),
        );
        registry.register(
            "dualperf_exporter_probe_failures",
            "Families of a probe that gave no figures, by reason",
            failures.clone(),
        );
        registry.register(
            "dualperf_exporter_refused",
            "Scrapes refused before a probe ran, by reason",
            refused.clone(),
        );
        registry.register(
            "dualperf_exporter_archive_errors",
            "Probes that could not be stored in the results database (--db)",
            archive_errors.clone(),
        );
        registry.register(
            "dualperf_exporter_abandoned_scrapes",
            "Probe requests whose client left before the answer (a probe it started runs on, holding its target)",
            abandoned.clone(),
        );
        registry.register(
            "dualperf_exporter_queued_probes",
            "Probes waiting for their target or a free slot now",
            queued.clone(),
        );
        registry.register(
            "dualperf_exporter_running_probes",
            "Probes running now",
            in_flight.clone(),
        );
        registry.register(
            "dualperf_exporter_probe_duration_seconds",
            "How long probes took, all families",
            duration.clone(),
        );
        OwnMetrics {
            registry,
            probes,
            failures,
            refused,
            archive_errors,
            abandoned,
            queued,
            in_flight,
            duration,
        }
    }

    pub fn refused(&self, reason: &str) {
        self.refused
            .get_or_create(&ReasonLabel {
                reason: reason.into(),
            })
            .inc();
    }

    /// Count a probe that could not be stored; whether to log this one (the first, then
    /// every [`ARCHIVE_LOG_EVERY`]th, so a full disk does not flood the log).
    pub fn archive_failed(&self) -> ArchiveFailure {
        let n = self.archive_errors.inc() + 1;
        ArchiveFailure {
            count: n,
            log: n == 1 || n.is_multiple_of(ARCHIVE_LOG_EVERY),
        }
    }

    /// A probe request begins; see [`Abandoned`].
    pub fn abandoned(&self) -> Abandoned<'_> {
        Abandoned {
            counter: &self.abandoned,
            answered: false,
        }
    }

    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.inc();
        InFlight(&self.in_flight)
    }

    pub fn probed(&self, module: &str, p: &ProbeOutcome, took: Duration) {
        let l = ModuleLabel {
            module: module.into(),
        };
        self.probes.get_or_create(&l).inc();
        self.duration.get_or_create(&l).observe(took.as_secs_f64());
        for o in &p.families {
            if let Err(f) = &o.result {
                self.failures
                    .get_or_create(&FailureLabels {
                        module: module.into(),
                        family: family_label(o.family).into(),
                        reason: f.reason.label().into(),
                    })
                    .inc();
            }
        }
    }

    pub fn encode(&self, queued: i64, openmetrics: bool) -> (String, &'static str) {
        self.queued.set(queued);
        encode(&self.registry, openmetrics)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_errors_are_counted_and_logged_first_then_every_hundredth() {
        let own = OwnMetrics::new(std::iter::empty());
        let logged: Vec<u64> = (0..250)
            .map(|_| own.archive_failed())
            .filter(|f| f.log)
            .map(|f| f.count)
            .collect();
        assert_eq!(logged, [1, 100, 200]);
        let (text, _) = own.encode(0, false);
        assert!(
            text.contains("dualperf_exporter_archive_errors_total 250"),
            "{text}"
        );
    }

    #[test]
    fn own_metrics_count_refusals_and_list_modules() {
        let mods = ["udp_rr".to_string()];
        let own = OwnMetrics::new(mods.iter());
        own.refused("busy");
        own.refused("busy");
        {
            let _f = own.in_flight();
            let (text, _) = own.encode(3, false);
            assert!(
                text.contains("dualperf_exporter_running_probes 1"),
                "{text}"
            );
        }
        let (text, _) = own.encode(3, false);
        for want in [
            "dualperf_exporter_refused_total{reason=\"busy\"} 2",
            "dualperf_exporter_probes_total{module=\"udp_rr\"} 0",
            "dualperf_exporter_queued_probes 3",
            "dualperf_exporter_running_probes 0",
            "# TYPE dualperf_exporter_probes_total counter",
        ] {
            assert!(text.contains(want), "missing {want} in\n{text}");
        }
    }
}
