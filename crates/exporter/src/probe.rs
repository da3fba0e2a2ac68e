//! One probe: a module's test against one target, over IPv4 and IPv6 in turn, through
//! the engine's client (`engine::run_client`, as `dualperf run` does). Blocking: the
//! server runs it on a blocking thread.

use crate::config::{Peer, ProbeModule};
use crate::target::Resolved;
use engine::{ClientConfig, EngineError, NullRecorder};
use std::net::IpAddr;
use std::time::{Duration, Instant};
use wire::metrics::{self as m, Metric};
use wire::spec::{Family, TestSpec};

/// Why a family's test gave no figures: a label value, stable for alert rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The target has no address of this family (no A / AAAA record).
    NoAddress,
    /// The server refused the connection (nothing listening).
    Refused,
    /// A step took longer than allowed (connect, test, or the scrape's budget).
    Timeout,
    /// No route, or IPv6 disabled on this host.
    Unreachable,
    /// The server wants a pre-shared key, or the key did not match.
    Auth,
    /// The server is running another test or is at its connection limit.
    Busy,
    /// Anything else (protocol error, rejected test, socket option refused).
    Error,
}

impl Reason {
    pub fn label(self) -> &'static str {
        match self {
            Reason::NoAddress => "no_address",
            Reason::Refused => "refused",
            Reason::Timeout => "timeout",
            Reason::Unreachable => "unreachable",
            Reason::Auth => "auth",
            Reason::Busy => "busy",
            Reason::Error => "error",
        }
    }

    fn of_iperf3(e: &iperf3::Iperf3Error) -> Reason {
        use iperf3::Iperf3Error as E;
        match e {
            E::Busy => Reason::Busy,
            E::Timeout(_) => Reason::Timeout,
            E::Auth(_) => Reason::Auth,
            E::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::ConnectionRefused => Reason::Refused,
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => Reason::Timeout,
                std::io::ErrorKind::HostUnreachable | std::io::ErrorKind::NetworkUnreachable => {
                    Reason::Unreachable
                }
                _ => Reason::Error,
            },
            _ => Reason::Error,
        }
    }

    fn of(e: &EngineError) -> Reason {
        match e {
            EngineError::ConnectionRefused { .. } => Reason::Refused,
            EngineError::HostUnreachable { .. } | EngineError::Ipv6Unavailable { .. } => {
                Reason::Unreachable
            }
            EngineError::Resolve { .. } => Reason::NoAddress,
            EngineError::ServerBusy { .. } | EngineError::ServerFull { .. } => Reason::Busy,
            EngineError::AuthRequired { .. } | EngineError::AuthFailed(_) => Reason::Auth,
            EngineError::Timeout(_) => Reason::Timeout,
            EngineError::Io { source, .. }
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) =>
            {
                Reason::Timeout
            }
            EngineError::Phase(_, inner) => Reason::of(inner),
            _ => Reason::Error,
        }
    }
}

/// A family's test that gave no figures, and the engine's words for why.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub reason: Reason,
    pub message: String,
}

/// One family's part of a probe.
#[derive(Debug, Clone)]
pub struct FamilyOutcome {
    pub family: Family,
    /// The address tested, when the target has one of this family.
    pub addr: Option<IpAddr>,
    /// From just before connecting to the result (0 when nothing was tried).
    pub duration: Duration,
    pub result: Result<Vec<Metric>, Failure>,
}

impl FamilyOutcome {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.result
            .as_ref()
            .ok()?
            .iter()
            .find(|x| x.name == name)
            .map(|x| x.value)
    }
}

/// A whole probe: the families in the order they ran.
#[derive(Debug, Clone)]
pub struct ProbeOutcome {
    pub families: Vec<FamilyOutcome>,
    /// The wire metric the IPv6/IPv4 ratio is taken of.
    pub headline: &'static str,
}

impl ProbeOutcome {
    pub fn get(&self, f: Family) -> Option<&FamilyOutcome> {
        self.families.iter().find(|o| o.family == f)
    }

    /// IPv6's headline figure over IPv4's, when both families measured it (and IPv4's
    /// is not zero).
    pub fn ipv6_to_ipv4_ratio(&self) -> Option<f64> {
        let v4 = self.get(Family::V4)?.metric(self.headline)?;
        let v6 = self.get(Family::V6)?.metric(self.headline)?;
        (v4 > 0.0).then(|| v6 / v4).filter(|r| r.is_finite())
    }
}

/// The one number a test is judged by: goodput for streams, mean RTT for
/// request/response (as the study's progress line shows).
pub fn headline_metric(spec: &TestSpec) -> &'static str {
    if spec.kind.is_rr() {
        m::RTT_MEAN_NS
    } else {
        m::THROUGHPUT_BPS
    }
}

/// Run `module` against `port` of the resolved target, family by family (IPv6 first when
/// `v6_first`), giving up on a family that would not finish within `budget` of `start`
/// (each family is allowed its test time plus `setup_allowance`).
pub fn run_probe(
    module: &ProbeModule,
    resolved: &Resolved,
    port: u16,
    v6_first: bool,
    budget: Duration,
    setup_allowance: Duration,
) -> ProbeOutcome {
    let start = Instant::now();
    let mut specs: Vec<&TestSpec> = module.specs.iter().collect();
    if v6_first {
        specs.sort_by_key(|s| s.family != Family::V6);
    } else {
        specs.sort_by_key(|s| s.family != Family::V4);
    }
    let headline = specs
        .first()
        .map(|s| headline_metric(s))
        .unwrap_or(m::THROUGHPUT_BPS);
    let families = specs
        .into_iter()
        .map(|spec| {
            let family = spec.family;
            let addr = match resolved.of(family) {
                Ok(a) => *a,
                Err(why) => {
                    return FamilyOutcome {
                        family,
                        addr: None,
                        duration: Duration::ZERO,
                        result: Err(Failure {
                            reason: Reason::NoAddress,
                            message: why.to_string(),
                        }),
                    }
                }
            };
            let needed = module.test_time + setup_allowance;
            if start.elapsed() + needed > budget {
                return FamilyOutcome {
                    family,
                    addr: Some(addr),
                    duration: Duration::ZERO,
                    result: Err(Failure {
                        reason: Reason::Timeout,
                        message: format!(
                            "not run: {:.1} s of the probe's {:.1} s budget left, the test needs {:.1} s",
                            budget.saturating_sub(start.elapsed()).as_secs_f64(),
                            budget.as_secs_f64(),
                            needed.as_secs_f64()
                        ),
                    }),
                };
            }
            let began = Instant::now();
            let result = run_family(module, spec, addr, port, setup_allowance / 2);
            FamilyOutcome {
                family,
                addr: Some(addr),
                duration: began.elapsed(),
                result,
            }
        })
        .collect();
    ProbeOutcome { families, headline }
}

fn run_family(
    module: &ProbeModule,
    spec: &TestSpec,
    addr: IpAddr,
    port: u16,
    busy_retry: Duration,
) -> Result<Vec<Metric>, Failure> {
    if module.peer == Peer::Iperf3 {
        let opts = iperf3::ClientOptions {
            connect_timeout: module.connect_timeout,
            ..iperf3::ClientOptions::default()
        };
        // An iperf3 server answers "busy" while the previous session (the other family's
        // test, a moment ago) is still closing: retry within half the setup allowance.
        let deadline = Instant::now() + busy_retry;
        let result = loop {
            match iperf3::run(&addr.to_string(), port, spec, &opts) {
                Err(iperf3::Iperf3Error::Busy) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                other => break other,
            }
        };
        return result.map(|r| r.metrics).map_err(|e| Failure {
            reason: Reason::of_iperf3(&e),
            message: e.to_string(),
        });
    }
    let mut cfg = ClientConfig::new(&addr.to_string(), port, spec.clone());
    cfg.connect_timeout = module.connect_timeout;
    cfg.psk = module.psk.clone();
    // The exporter's own host metadata is not wanted by the probe; an empty map skips
    // capturing it on every scrape.
    cfg.client_info = Some(Default::default());
    engine::run_client(&cfg, &mut NullRecorder)
        .map(|r| r.metrics())
        .map_err(|e| Failure {
            reason: Reason::of(&e),
            message: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(family: Family, v: Option<f64>) -> FamilyOutcome {
        FamilyOutcome {
            family,
            addr: None,
            duration: Duration::ZERO,
            result: match v {
                Some(v) => Ok(vec![Metric::new(m::THROUGHPUT_BPS, v)]),
                None => Err(Failure {
                    reason: Reason::Refused,
                    message: "refused".into(),
                }),
            },
        }
    }

    #[test]
    fn ratio_is_ipv6_over_ipv4_and_absent_without_both() {
        let p = ProbeOutcome {
            families: vec![
                outcome(Family::V6, Some(3.0)),
                outcome(Family::V4, Some(4.0)),
            ],
            headline: m::THROUGHPUT_BPS,
        };
        assert_eq!(p.ipv6_to_ipv4_ratio(), Some(0.75));
        let p = ProbeOutcome {
            families: vec![outcome(Family::V4, Some(4.0)), outcome(Family::V6, None)],
            headline: m::THROUGHPUT_BPS,
        };
        assert_eq!(p.ipv6_to_ipv4_ratio(), None);
        let p = ProbeOutcome {
            families: vec![
                outcome(Family::V4, Some(0.0)),
                outcome(Family::V6, Some(1.0)),
            ],
            headline: m::THROUGHPUT_BPS,
        };
        assert_eq!(p.ipv6_to_ipv4_ratio(), None);
    }

    #[test]
    fn the_family_order_follows_v6_first_and_missing_addresses_are_named() {
        let module = crate::config::Config::default().modules["udp_rr"].clone();
        let host = "gone.example".to_string();
        let none = Resolved {
            v4: Err(crate::target::NoAddress::NoRecord {
                host: host.clone(),
                family: Family::V4,
            }),
            v6: Err(crate::target::NoAddress::NoRecord {
                host,
                family: Family::V6,
            }),
        };
        let budget = Duration::from_secs(10);
        let order = |v6_first| {
            run_probe(&module, &none, 1, v6_first, budget, Duration::ZERO)
                .families
                .iter()
                .map(|o| o.family)
                .collect::<Vec<_>>()
        };
        assert_eq!(order(false), [Family::V4, Family::V6]);
        assert_eq!(order(true), [Family::V6, Family::V4]);
        let p = run_probe(&module, &none, 1, false, budget, Duration::ZERO);
        let f = p.families[1].result.as_ref().unwrap_err();
        assert_eq!(
            (f.reason, f.message.as_str()),
            (Reason::NoAddress, "gone.example has no AAAA record")
        );
        assert_eq!(p.headline, m::RTT_MEAN_NS);
    }

    #[test]
    fn a_family_that_cannot_finish_in_the_budget_is_not_started() {
        let module = crate::config::Config::default().modules["tcp_stream"].clone();
        let r = Resolved {
            v4: Ok("127.0.0.1".parse().unwrap()),
            v6: Ok("::1".parse().unwrap()),
        };
        // 2 s tests in a 1 s budget: neither family runs (nothing connects to port 1).
        let p = run_probe(
            &module,
            &r,
            1,
            false,
            Duration::from_secs(1),
            Duration::ZERO,
        );
        for o in &p.families {
            let f = o.result.as_ref().unwrap_err();
            assert_eq!(f.reason, Reason::Timeout, "{f:?}");
            assert!(f.message.contains("budget"), "{f:?}");
        }
    }

    #[test]
    fn engine_errors_map_to_stable_reasons() {
        let refused = EngineError::ConnectionRefused {
            host: "h".into(),
            port: 1,
        };
        assert_eq!(Reason::of(&refused), Reason::Refused);
        assert_eq!(
            Reason::of(&EngineError::Timeout("x".into())),
            Reason::Timeout
        );
        let io = EngineError::Io {
            context: "c".into(),
            source: std::io::ErrorKind::TimedOut.into(),
        };
        assert_eq!(Reason::of(&io), Reason::Timeout);
        assert_eq!(
            Reason::of(&EngineError::Phase("p", Box::new(refused))),
            Reason::Refused
        );
    }
}
