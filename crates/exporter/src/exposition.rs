//! A probe's outcome as Prometheus metrics (encoded by `prometheus-client`), and the
//! exposition formats: OpenMetrics text when the scraper asks for it, the Prometheus
//! text format 0.0.4 otherwise.

use crate::probe::{FamilyOutcome, ProbeOutcome};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family as MetricFamily;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;
use wire::metric_table::{self, Exposition};
use wire::spec::Family;

pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

type F64Gauge = Gauge<f64, AtomicU64>;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FamilyLabel {
    family: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    family: String,
    /// One of [`crate::probe::Reason`]'s labels: a fixed set, so a failing target adds
    /// no series (the free text goes to the log: [`crate::probe::failure_log`]).
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RatioLabel {
    metric: String,
}

/// The prefix of the exported names of the engine's figures.
const PREFIX: &str = "dualperf_probe_";

/// The engine's figures a probe exports: those with an [`Exposition`] in
/// [`wire::metric_table`].
fn figures() -> impl Iterator<Item = (&'static str, Exposition)> {
    metric_table::TABLE
        .iter()
        .filter_map(|i| Some((i.name, i.exposition?)))
}

/// The factor from a metric's unit to Prometheus' base unit (bytes, seconds, ratios).
fn to_base_unit(unit: &str) -> f64 {
    match unit {
        "bit/s" => 0.125,
        "ns" => 1e-9,
        "µs" => 1e-6,
        "%" => 0.01,
        _ => 1.0,
    }
}

/// The exported name of the ratio's headline figure (without the prefix).
fn headline_name(wire_name: &str) -> &'static str {
    figures()
        .find(|f| f.0 == wire_name)
        .map(|f| f.1.name)
        .unwrap_or("unknown")
}

pub fn family_label(f: Family) -> &'static str {
    match f {
        Family::V4 => "ipv4",
        Family::V6 => "ipv6",
    }
}

/// The registry of one probe's metrics.
pub fn probe_registry(p: &ProbeOutcome) -> Registry {
    let mut reg = Registry::default();
    let fam = |o: &FamilyOutcome| FamilyLabel {
        family: family_label(o.family).into(),
    };
    for (wire_name, exposed) in figures() {
        let factor = to_base_unit(wire::metrics::unit_of(wire_name));
        let g = MetricFamily::<FamilyLabel, F64Gauge>::default();
        let mut any = false;
        for o in &p.families {
            if let Some(v) = o.metric(wire_name) {
                g.get_or_create(&fam(o)).set(v * factor);
                any = true;
            }
        }
        if any {
            reg.register(format!("{PREFIX}{}", exposed.name), exposed.help, g);
        }
    }
    let success = MetricFamily::<FamilyLabel, F64Gauge>::default();
    let duration = MetricFamily::<FamilyLabel, F64Gauge>::default();
    let failure = MetricFamily::<FailureLabels, F64Gauge>::default();
    for o in &p.families {
        success
            .get_or_create(&fam(o))
            .set(if o.result.is_ok() { 1.0 } else { 0.0 });
        // A family that was not run has no duration (not a 0 "connection to result").
        if let Some(d) = o.duration {
            duration.get_or_create(&fam(o)).set(d.as_secs_f64());
        }
        if let Err(f) = &o.result {
            failure
                .get_or_create(&FailureLabels {
                    family: family_label(o.family).into(),
                    reason: f.reason.label().into(),
                })
                .set(1.0);
        }
    }
    reg.register(
        "probe_success",
        "Whether the family's test gave figures (1) or failed (0)",
        success,
    );
    reg.register(
        "probe_duration_seconds",
        "How long the family's part of the probe took, connection to result",
        duration,
    );
    if p.families.iter().any(|o| o.result.is_err()) {
        reg.register(
            "dualperf_probe_failure_info",
            "Why a family's test failed: reason is no_address, refused, timeout, unreachable, auth, busy or error (the exporter's log has the details)",
            failure,
        );
    }
    if let Some(r) = p.ipv6_to_ipv4_ratio() {
        let g = MetricFamily::<RatioLabel, F64Gauge>::default();
        g.get_or_create(&RatioLabel {
            metric: headline_name(p.headline).into(),
        })
        .set(r);
        reg.register(
            "dualperf_probe_ipv6_to_ipv4_ratio",
            "IPv6's headline figure over IPv4's (throughput for streams, mean RTT for request/response)",
            g,
        );
    }
    reg
}

/// Encode `reg` as OpenMetrics text, or as Prometheus text 0.0.4 when `openmetrics` is
/// false; returns the body and its content type.
pub fn encode(reg: &Registry, openmetrics: bool) -> (String, &'static str) {
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut text, reg);
    if openmetrics {
        (text, OPENMETRICS_CONTENT_TYPE)
    } else {
        (openmetrics_to_text_004(&text), TEXT_CONTENT_TYPE)
    }
}

/// Whether an `Accept` header asks for OpenMetrics (Prometheus sends it first).
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.contains("application/openmetrics-text"))
}

/// OpenMetrics text to Prometheus text 0.0.4: no `# EOF` or `# UNIT` lines, and a
/// counter's HELP and TYPE name its `_total` samples (0.0.4 has no counter family name
/// apart from its samples).
pub fn openmetrics_to_text_004(om: &str) -> String {
    let mut counters = Vec::new();
    for line in om.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            if let Some(name) = rest.strip_suffix(" counter") {
                counters.push(name.to_string());
            }
        }
    }
    let mut out = String::with_capacity(om.len());
    for line in om.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|p| {
            let rest = line.strip_prefix(p)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .iter()
                .any(|c| c == name)
                .then(|| format!("{p}{name}_total {tail}"))
        });
        out.push_str(renamed.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::{Failure, Reason};
    use std::time::Duration;
    use wire::metrics as m;

    fn ok(family: Family, pairs: &[(&str, f64)]) -> FamilyOutcome {
        FamilyOutcome {
            family,
            addr: None,
            duration: Some(Duration::from_millis(1500)),
            started_unix_ns: Some(0),
            result: Ok(study::RunOutput {
                metrics: pairs.iter().map(|&(n, v)| (n.to_string(), v)).collect(),
                ..study::RunOutput::default()
            }),
        }
    }

    #[test]
    fn a_probe_exports_units_in_names_and_the_ratio() {
        let p = ProbeOutcome {
            families: vec![
                ok(Family::V4, &[(m::THROUGHPUT_BPS, 2e9), (m::LOSS_PCT, 1.5)]),
                ok(
                    Family::V6,
                    &[(m::THROUGHPUT_BPS, 1e9), (m::JITTER_RFC3550_NS, 2000.0)],
                ),
            ],
            headline: m::THROUGHPUT_BPS,
        };
        let (text, ct) = encode(&probe_registry(&p), false);
        assert_eq!(ct, TEXT_CONTENT_TYPE);
        for want in [
            "dualperf_probe_throughput_bytes_per_second{family=\"ipv4\"} 250000000",
            "dualperf_probe_throughput_bytes_per_second{family=\"ipv6\"} 125000000",
            "dualperf_probe_loss_ratio{family=\"ipv4\"} 0.015",
            "dualperf_probe_jitter_seconds{family=\"ipv6\"} 0.000002",
            "dualperf_probe_ipv6_to_ipv4_ratio{metric=\"throughput_bytes_per_second\"} 0.5",
            "probe_success{family=\"ipv4\"} 1",
            "probe_duration_seconds{family=\"ipv6\"} 1.5",
        ] {
            assert!(text.contains(want), "missing {want} in\n{text}");
        }
        assert!(!text.contains("# EOF"));
        assert!(!text.contains("failure_info"));
        let (om, ct) = encode(&probe_registry(&p), true);
        assert_eq!(ct, OPENMETRICS_CONTENT_TYPE);
        assert!(om.ends_with("# EOF\n"), "{om}");
    }

    #[test]
    fn a_pmtu_probe_exports_the_path_mtu_and_a_black_hole_per_family() {
        let p = ProbeOutcome {
            families: vec![
                ok(
                    Family::V4,
                    &[(m::PATH_MTU_BYTES, 1500.0), (m::BLACK_HOLE, 0.0)],
                ),
                ok(
                    Family::V6,
                    &[
                        (m::PATH_MTU_BYTES, 1400.0),
                        (m::BLACK_HOLE, 1.0),
                        (m::PTB_RECEIVED, 0.0),
                    ],
                ),
            ],
            headline: m::PATH_MTU_BYTES,
        };
        let (text, _) = encode(&probe_registry(&p), false);
        for want in [
            "dualperf_probe_path_mtu_bytes{family=\"ipv4\"} 1500",
            "dualperf_probe_path_mtu_bytes{family=\"ipv6\"} 1400",
            "dualperf_probe_path_mtu_black_hole{family=\"ipv6\"} 1",
            "dualperf_probe_packet_too_big_received{family=\"ipv6\"} 0",
            "dualperf_probe_ipv6_to_ipv4_ratio{metric=\"path_mtu_bytes\"} 0.93",
        ] {
            assert!(text.contains(want), "missing {want} in\n{text}");
        }
    }

    #[test]
    fn a_failed_family_says_why_in_a_fixed_label_and_has_no_duration() {
        let p = ProbeOutcome {
            families: vec![
                ok(Family::V4, &[(m::RTT_MEAN_NS, 50_000.0)]),
                FamilyOutcome {
                    family: Family::V6,
                    addr: None,
                    duration: None,
                    started_unix_ns: None,
                    result: Err(Failure {
                        reason: Reason::NoAddress,
                        message: "h has no \"AAAA\"\nrecord\\".into(),
                    }),
                },
            ],
            headline: m::RTT_MEAN_NS,
        };
        let (text, _) = encode(&probe_registry(&p), false);
        assert!(text.contains("probe_success{family=\"ipv6\"} 0"), "{text}");
        // The reason alone: the message (free text, with the target's details) is logged.
        assert!(
            text.contains("dualperf_probe_failure_info{family=\"ipv6\",reason=\"no_address\"} 1"),
            "{text}"
        );
        assert!(!text.contains("AAAA"), "{text}");
        // The family that was not run has no duration; the one that ran has.
        assert!(
            !text.contains("probe_duration_seconds{family=\"ipv6\"}"),
            "{text}"
        );
        assert!(
            text.contains("probe_duration_seconds{family=\"ipv4\"} 1.5"),
            "{text}"
        );
        assert!(text.contains("dualperf_probe_rtt_mean_seconds{family=\"ipv4\"} 0.00005"));
        assert!(!text.contains("ipv6_to_ipv4_ratio"));
    }

    /// The exported names are the dashboards' interface: each states its base unit, the
    /// one its metric's unit converts to.
    #[test]
    fn exported_names_come_from_the_metric_table_in_base_units() {
        let names: Vec<String> = figures()
            .map(|(wire_name, e)| {
                let suffix = match wire::metrics::unit_of(wire_name) {
                    "bit/s" => "_bytes_per_second",
                    "ns" | "s" => "_seconds",
                    "%" => "_ratio",
                    "bytes" => "_bytes",
                    "1/s" => "_per_second",
                    // 0 or 1: named for what is true when it is 1.
                    "flag" => "",
                    u => panic!("{wire_name}: no base unit for {u}"),
                };
                assert!(e.name.ends_with(suffix), "{} for {wire_name}", e.name);
                assert!(!e.help.is_empty());
                format!("{PREFIX}{}", e.name)
            })
            .collect();
        assert_eq!(
            names,
            [
                "dualperf_probe_throughput_bytes_per_second",
                "dualperf_probe_send_rate_bytes_per_second",
                "dualperf_probe_sent_bytes",
                "dualperf_probe_received_bytes",
                "dualperf_probe_test_duration_seconds",
                "dualperf_probe_loss_ratio",
                "dualperf_probe_jitter_seconds",
                "dualperf_probe_transactions_per_second",
                "dualperf_probe_rtt_mean_seconds",
                "dualperf_probe_rtt_stddev_seconds",
                "dualperf_probe_rtt_min_seconds",
                "dualperf_probe_rtt_p50_seconds",
                "dualperf_probe_rtt_p90_seconds",
                "dualperf_probe_rtt_p99_seconds",
                "dualperf_probe_rtt_max_seconds",
                "dualperf_probe_connections_per_second",
                "dualperf_probe_connect_time_mean_seconds",
                "dualperf_probe_connect_time_p50_seconds",
                "dualperf_probe_connect_time_p90_seconds",
                "dualperf_probe_connect_time_p99_seconds",
                "dualperf_probe_connection_transaction_time_mean_seconds",
                "dualperf_probe_path_mtu_bytes",
                "dualperf_probe_packet_too_big_received",
                "dualperf_probe_path_mtu_black_hole",
                "dualperf_probe_delivered_ratio",
            ]
        );
    }

    #[test]
    fn counters_are_renamed_for_the_004_format() {
        let om = "# HELP x_probes Probes.\n# TYPE x_probes counter\nx_probes_total 3\n# HELP g G.\n# TYPE g gauge\n# UNIT g seconds\ng 1\n# EOF\n";
        assert_eq!(
            openmetrics_to_text_004(om),
            "# HELP x_probes_total Probes.\n# TYPE x_probes_total counter\nx_probes_total 3\n# HELP g G.\n# TYPE g gauge\ng 1\n"
        );
        assert!(wants_openmetrics(Some(
            "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"
        )));
        assert!(!wants_openmetrics(Some("text/plain")));
        assert!(!wants_openmetrics(None));
    }
}
