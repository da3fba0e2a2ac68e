//! One probe: a module's test against one target, over IPv4 and IPv6 in turn, each a
//! campaign of one test on a runner `Target` at the family's address, as `dualperf run`
//! makes (an iperf3 peer's busy answers waited out by runner's iperf3 target), with the
//! target's waits held to the scrape's budget ([`FamilyLimits`]). Blocking: the server
//! runs it on a blocking thread.

use crate::config::ProbeModule;
use crate::target::Resolved;
use runner::target::{Target, TargetError};
use std::net::IpAddr;
use std::time::{Duration, Instant};
use study::RunOutput;
use wire::metrics as m;
use wire::spec::{Family, TestSpec};

/// Why a family's test gave no figures: a label value, stable for alert rules
/// (runner's kinds of failure).
pub use runner::failure::FailureKind as Reason;

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
    /// From just before connecting to the result; `None` when the family was not run.
    pub duration: Option<Duration>,
    /// When the test began (ns since the Unix epoch); `None` when it was not run.
    pub started_unix_ns: Option<i64>,
    /// The run as a study stores it (its metrics, what each side applied), or why not.
    pub result: Result<RunOutput, Failure>,
}

impl FamilyOutcome {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.result.as_ref().ok()?.metrics.get(name).copied()
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
/// request/response, connections per second for tcp-crr (as the study's progress line
/// shows).
pub fn headline_metric(spec: &TestSpec) -> &'static str {
    if spec.kind == wire::spec::TestKind::TcpCrr {
        m::CONNECTIONS_PER_S
    } else if spec.kind == wire::spec::TestKind::Pmtu {
        m::PATH_MTU_BYTES
    } else if spec.kind == wire::spec::TestKind::Frag {
        m::DELIVERED_PCT
    } else if spec.kind.is_rr() {
        m::RTT_MEAN_NS
    } else {
        m::THROUGHPUT_BPS
    }
}

/// Longest failure message logged, characters.
pub const MAX_LOGGED_MESSAGE_CHARS: usize = 500;

/// One log line per failed family, with the engine's words (addresses, timings): the free
/// text that has no place in a label. One line each, controls removed, cut to
/// [`MAX_LOGGED_MESSAGE_CHARS`].
pub fn failure_log(target: &str, module: &str, p: &ProbeOutcome) -> Vec<String> {
    p.families
        .iter()
        .filter_map(|o| {
            let f = o.result.as_ref().err()?;
            let message: String = wire::text::terminal_safe_line(&f.message)
                .chars()
                .take(MAX_LOGGED_MESSAGE_CHARS)
                .collect();
            Some(format!(
                "dualperf exporter: probe of {target} (module {module}) over {}: {}: {message}",
                crate::exposition::family_label(o.family),
                f.reason.label()
            ))
        })
        .collect()
}

/// The families' runs in the order a probe runs them (IPv6 first when `v6_first`).
pub fn family_order(module: &ProbeModule, v6_first: bool) -> Vec<&runner::Single> {
    let mut runs: Vec<&runner::Single> = module.runs.iter().collect();
    let first = if v6_first { Family::V6 } else { Family::V4 };
    runs.sort_by_key(|r| r.cell().family != first);
    runs
}

fn headline_of(runs: &[&runner::Single]) -> &'static str {
    runs.first()
        .map(|r| headline_metric(&r.cell().test))
        .unwrap_or(m::THROUGHPUT_BPS)
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
    let ask = ProbeRun {
        module,
        resolved,
        port,
        v6_first,
        budget,
        setup_allowance,
    };
    run_probe_reporting(&ask, &mut |_| {})
}

/// What one probe runs: the module against `port` of the resolved target, within
/// `budget`.
pub struct ProbeRun<'a> {
    pub module: &'a ProbeModule,
    pub resolved: &'a Resolved,
    pub port: u16,
    pub v6_first: bool,
    pub budget: Duration,
    pub setup_allowance: Duration,
}

/// [`run_probe`], handing each family's outcome to `done` as soon as it is known (the
/// server answers with those when the probe overruns its budget).
pub fn run_probe_reporting(
    run: &ProbeRun<'_>,
    done: &mut dyn FnMut(&FamilyOutcome),
) -> ProbeOutcome {
    let (module, budget) = (run.module, run.budget);
    let start = Instant::now();
    let runs = family_order(module, run.v6_first);
    let headline = headline_of(&runs);
    let mut families = Vec::with_capacity(runs.len());
    for single in runs {
        let family = single.cell().family;
        let o = match run.resolved.of(family) {
            Err(why) => FamilyOutcome {
                family,
                addr: None,
                duration: None,
                started_unix_ns: None,
                result: Err(Failure {
                    reason: Reason::NoAddress,
                    message: why.to_string(),
                }),
            },
            Ok(addr) => {
                let needed = module.test_time + run.setup_allowance;
                let left = budget.saturating_sub(start.elapsed());
                if needed > left {
                    FamilyOutcome {
                        family,
                        addr: Some(*addr),
                        duration: None,
                        started_unix_ns: None,
                        result: Err(Failure {
                            reason: Reason::Timeout,
                            message: format!(
                                "not run: {:.1} s of the probe's {:.1} s budget left, the test needs {:.1} s",
                                left.as_secs_f64(),
                                budget.as_secs_f64(),
                                needed.as_secs_f64()
                            ),
                        }),
                    }
                } else {
                    let began = Instant::now();
                    let limits = FamilyLimits::within(module, left);
                    let target =
                        probe_target(module, *addr, run.port, run.setup_allowance / 2, &limits);
                    let (started_unix_ns, result) = run_family(single, &target);
                    FamilyOutcome {
                        family,
                        addr: Some(*addr),
                        duration: Some(began.elapsed()),
                        started_unix_ns,
                        result,
                    }
                }
            }
        };
        done(&o);
        families.push(o);
    }
    ProbeOutcome { families, headline }
}

/// The outcome of a probe that overran its budget: the families that ended (`done`) as
/// they ended, the others failed for `timeout`.
pub fn cut_short(run: &ProbeRun<'_>, done: &[FamilyOutcome]) -> ProbeOutcome {
    let runs = family_order(run.module, run.v6_first);
    let headline = headline_of(&runs);
    let families = runs
        .iter()
        .map(|r| r.cell().family)
        .map(|family| {
            done.iter()
                .find(|o| o.family == family)
                .cloned()
                .unwrap_or_else(|| FamilyOutcome {
                    family,
                    addr: run.resolved.of(family).as_ref().ok().copied(),
                    duration: None,
                    started_unix_ns: None,
                    result: Err(Failure {
                        reason: Reason::Timeout,
                        message: format!(
                            "still running when the probe's {:.1} s budget ran out",
                            run.budget.as_secs_f64()
                        ),
                    }),
                })
        })
        .collect();
    ProbeOutcome { families, headline }
}

/// The waits of one family's test, held to what is left of the probe's budget (never
/// longer than the engine's and iperf3's own defaults): a target that stalls ends the
/// test soon after the budget instead of after the defaults' tens of seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyLimits {
    pub connect: Duration,
    /// The engine session's waits (handshake, slack after the test, count-bound run).
    pub session: wire::session::Limits,
    /// iperf3's longest silence on the control connection outside the data phase.
    pub iperf3_control: Duration,
}

/// Shortest wait a family is given (a zero wait would fail at once).
const MIN_WAIT: Duration = Duration::from_millis(100);

impl FamilyLimits {
    /// With `left` of the budget: the test's own time, and the rest for the waits.
    pub fn within(module: &ProbeModule, left: Duration) -> FamilyLimits {
        let spare = left.saturating_sub(module.test_time).max(MIN_WAIT);
        let d = wire::session::Limits::default();
        FamilyLimits {
            connect: module.connect_timeout.min(spare),
            session: wire::session::Limits {
                handshake: d.handshake.min(spare),
                run_slack: d.run_slack.min(spare),
                count_run_max: d.count_run_max.min(left.max(MIN_WAIT)),
            },
            iperf3_control: runner::TargetOptions::default()
                .iperf3_control_timeout
                .min(spare),
        }
    }
}

/// Where one family's test goes: the runner target at `addr`, with the waits the budget
/// leaves (`busy_retry`: how long an iperf3 server that is busy, or reopening after the
/// other family's test, is retried), capturing no host metadata (a probe stores none).
pub fn probe_target(
    module: &ProbeModule,
    addr: IpAddr,
    port: u16,
    busy_retry: Duration,
    limits: &FamilyLimits,
) -> runner::TargetOptions {
    runner::TargetOptions {
        hosts: runner::Hosts {
            host: Some(addr.to_string()),
            ..runner::Hosts::default()
        },
        port,
        peer: module.peer,
        psk: module.psk.clone(),
        connect_timeout: limits.connect,
        session_limits: limits.session,
        iperf3_control_timeout: limits.iperf3_control,
        iperf3_busy_limit: busy_retry,
        iperf3_reopen_grace: busy_retry,
        host_metadata: false,
        ..runner::TargetOptions::default()
    }
}

/// One family's run on its target: when it began, and its output or why there is none.
fn run_family(
    single: &runner::Single,
    opts: &runner::TargetOptions,
) -> (Option<i64>, Result<RunOutput, Failure>) {
    let failed = |e: &TargetError| Failure {
        reason: Reason::of(e),
        message: e.to_string(),
    };
    let mut target = match Target::open(opts, &[single.cell().family], &mut |_| {}) {
        Ok(t) => t,
        Err(e) => return (None, Err(failed(&e))),
    };
    let tried = single.attempt(&mut target);
    // A remote target has nothing to stop or remove.
    let _ = target.close();
    match tried {
        Err(e) => (
            None,
            Err(Failure {
                reason: Reason::Error,
                message: e.to_string(),
            }),
        ),
        Ok(runner::Tried { attempt, last }) => {
            let result = attempt.result.map_err(|why| match last {
                Some(Err(e)) => failed(&e),
                _ => Failure {
                    reason: Reason::Error,
                    message: why.reason,
                },
            });
            (Some(attempt.started_unix_ns), result)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(family: Family, v: Option<f64>) -> FamilyOutcome {
        FamilyOutcome {
            family,
            addr: None,
            duration: None,
            started_unix_ns: None,
            result: match v {
                Some(v) => Ok(RunOutput {
                    metrics: [(m::THROUGHPUT_BPS.to_string(), v)].into(),
                    ..RunOutput::default()
                }),
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
    fn a_probe_cut_short_keeps_what_ended_and_times_out_the_rest() {
        let module = crate::config::Config::default().modules["tcp_stream"].clone();
        let r = Resolved {
            v4: Ok("127.0.0.1".parse().unwrap()),
            v6: Ok("::1".parse().unwrap()),
        };
        let run = ProbeRun {
            module: &module,
            resolved: &r,
            port: 1,
            v6_first: true,
            budget: Duration::from_secs(5),
            setup_allowance: Duration::from_secs(1),
        };
        let p = cut_short(&run, &[outcome(Family::V6, Some(2.0))]);
        let fams: Vec<Family> = p.families.iter().map(|o| o.family).collect();
        assert_eq!(fams, [Family::V6, Family::V4]);
        assert_eq!(p.families[0].metric(m::THROUGHPUT_BPS), Some(2.0));
        let v4 = &p.families[1];
        assert_eq!(v4.result.as_ref().unwrap_err().reason, Reason::Timeout);
        assert_eq!((v4.duration, v4.addr), (None, r.v4.clone().ok()));
    }

    #[test]
    fn a_familys_waits_are_held_to_what_is_left_of_the_budget() {
        // tcp_stream: a 2 s test, run's 5 s to connect.
        let module = crate::config::Config::default().modules["tcp_stream"].clone();
        let s = Duration::from_secs_f64;
        let l = FamilyLimits::within(&module, s(3.5));
        assert_eq!(l.connect, s(1.5));
        assert_eq!(l.session.handshake, s(1.5));
        assert_eq!(l.session.run_slack, s(1.5));
        assert_eq!(l.session.count_run_max, s(3.5));
        assert_eq!(l.iperf3_control, s(1.5));
        // With time to spare, the defaults (never longer).
        let l = FamilyLimits::within(&module, s(100.0));
        assert_eq!(l.connect, module.connect_timeout);
        assert_eq!(
            (l.session.handshake, l.session.run_slack),
            (
                wire::session::Limits::default().handshake,
                wire::session::Limits::default().run_slack
            )
        );
        assert_eq!(
            l.iperf3_control,
            runner::TargetOptions::default().iperf3_control_timeout
        );
        // Nothing left: the shortest wait, not zero.
        assert_eq!(
            FamilyLimits::within(&module, Duration::ZERO).connect,
            MIN_WAIT
        );
    }

    #[test]
    fn failures_are_logged_one_clean_line_each() {
        let mut bad = outcome(Family::V6, None);
        if let Err(f) = &mut bad.result {
            f.message = format!("peer said \x1b[31mno\nway {}", "x".repeat(2000));
        }
        let p = ProbeOutcome {
            families: vec![outcome(Family::V4, Some(1.0)), bad],
            headline: m::THROUGHPUT_BPS,
        };
        let lines = failure_log("h:5301", "tcp_stream", &p);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let l = &lines[0];
        assert!(
            l.starts_with(
                "dualperf exporter: probe of h:5301 (module tcp_stream) over ipv6: refused: peer said [31mno way xxx"
            ),
            "{l}"
        );
        assert!(!l.contains(['\x1b', '\n']), "{l}");
        assert!(l.len() < MAX_LOGGED_MESSAGE_CHARS + 100, "{}", l.len());
    }
}
