//! The iperf3 peer (`--peer iperf3`): each test is one `iperf3::client::run` against an
//! unmodified iperf3 server (with `--lab`: `iperf3 -s` in the lab's server namespace,
//! the client on a thread in its client namespace). As a study's executor, a "server
//! busy" answer (another client is testing) is waited out with exponential backoff and
//! counted; it is never recorded as a result.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use study::{Attempt, Cell, Executor, RunOutput, Slot};
use wire::spec::{Family, TestSpec};

use super::lab::{in_ns, LabTarget};
use super::{now_unix_ns, open_lab, retry_backoff, FullResult, Peer, TargetError, TargetOptions};

/// First wait after a busy answer; doubles up to [`BUSY_MAX_STEP`].
pub const BUSY_FIRST_STEP: Duration = Duration::from_millis(200);
pub const BUSY_MAX_STEP: Duration = Duration::from_secs(5);
/// Longest a single run waits for a busy server before the attempt fails.
pub const BUSY_LIMIT: Duration = Duration::from_secs(120);
/// An iperf3 server closes its listening socket when a test ends and opens a new one
/// for the next: a connection in between is refused (or reset). The next run retries
/// for this long, in steps from 10 ms, before its attempt counts as failed.
pub const REOPEN_GRACE: Duration = Duration::from_secs(1);

/// Client metadata keys holding the busy counts of a campaign (summed over resumes).
pub const BUSY_WAITS_KEY: &str = "study.iperf3_busy_answers";
pub const BUSY_WAITED_KEY: &str = "study.iperf3_busy_wait_s";

/// Busy answers seen and time spent waiting them out.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BusyCount {
    pub answers: u64,
    pub waited: Duration,
}

/// Tests against an iperf3 server at a host or in a lab.
pub struct Iperf3Target {
    /// Where the server is, per family; none: the lab's server addresses.
    hosts: crate::Hosts,
    lab: Option<LabTarget>,
    port: u16,
    opts: iperf3::ClientOptions,
    stop: Arc<AtomicBool>,
    pub busy: BusyCount,
    /// Wait out a busy server and one reopening between tests (a study, a probe), or
    /// fail the attempt at once (`dualperf run`).
    waits: bool,
    /// How long an attempt that waits waits for a busy server, and retries one
    /// reopening between tests.
    busy_limit: Duration,
    reopen_grace: Duration,
    /// The whole result (or error) of the last attempt, until taken.
    last: Option<Result<FullResult, TargetError>>,
}

impl Iperf3Target {
    /// The iperf3 peer `opts` describe: `iperf3 -s` at the host, or in the lab (built,
    /// with `iperf3 -s` started there).
    pub fn open(
        opts: &TargetOptions,
        notice: &mut dyn FnMut(&str),
    ) -> Result<Iperf3Target, TargetError> {
        let lab = open_lab(opts, Peer::Iperf3, notice)?;
        if lab.is_none() && !opts.hosts.is_remote() {
            return Err(TargetError::Refused(
                "--peer iperf3 needs the HOST of an iperf3 server (`iperf3 -s` running there), or --lab"
                    .into(),
            ));
        }
        let mut t = Iperf3Target::new(
            opts.hosts.host.as_deref(),
            lab,
            opts.port,
            opts.connect_timeout,
            opts.stop.clone(),
        )
        .with_auth(opts.iperf3_auth.clone());
        t.opts.control_timeout = opts.iperf3_control_timeout;
        t.busy_limit = opts.iperf3_busy_limit;
        t.reopen_grace = opts.iperf3_reopen_grace;
        t.hosts = opts.hosts.clone();
        Ok(t)
    }

    /// Against `iperf3 -s` at `host`, or in `lab` (then `host` is ignored).
    pub fn new(
        host: Option<&str>,
        lab: Option<LabTarget>,
        port: u16,
        connect_timeout: Duration,
        stop: Arc<AtomicBool>,
    ) -> Iperf3Target {
        Iperf3Target {
            hosts: crate::Hosts {
                host: host.map(str::to_string),
                ..crate::Hosts::default()
            },
            lab,
            port,
            opts: iperf3::ClientOptions {
                connect_timeout,
                ..iperf3::ClientOptions::default()
            },
            stop,
            busy: BusyCount::default(),
            waits: true,
            busy_limit: BUSY_LIMIT,
            reopen_grace: REOPEN_GRACE,
            last: None,
        }
    }

    /// Authenticates every run (`--iperf3-username`).
    pub fn with_auth(mut self, auth: Option<iperf3::auth::ClientAuth>) -> Iperf3Target {
        self.opts.auth = auth;
        self
    }

    pub fn lab(&self) -> Option<&LabTarget> {
        self.lab.as_ref()
    }

    /// Stops `iperf3 -s` and removes the lab, if there is one.
    pub fn close(self) -> Result<(), TargetError> {
        match self.lab {
            Some(l) => l.close(),
            None => Ok(()),
        }
    }

    fn host_for(&self, family: Family) -> String {
        match (&self.lab, self.hosts.for_family(family)) {
            (Some(lab), _) => lab.server_addr(family).to_string(),
            (None, Some(h)) => h.to_string(),
            (None, None) => "localhost".into(),
        }
    }

    /// One iperf3 test, inside the lab's client namespace when there is a lab.
    pub fn run_test(&self, spec: &TestSpec) -> Result<iperf3::Iperf3Result, iperf3::Iperf3Error> {
        let host = self.host_for(spec.family);
        let run = || iperf3::run(&host, self.port, spec, &self.opts);
        match &self.lab {
            Some(lab) => in_ns(&lab.client_ns(), run)
                .map_err(|e| iperf3::Iperf3Error::Unsupported(e.to_string()))
                .and_then(|r| r),
            None => run(),
        }
    }

    /// Whether an attempt waits out a busy server and one reopening between tests (a
    /// study, the default) or fails at once with the server's answer (`dualperf run`).
    pub fn set_waits(&mut self, waits: bool) {
        self.waits = waits;
    }

    /// The whole result (or the error) of the last attempt, taken.
    pub fn take_last(&mut self) -> Option<Result<FullResult, TargetError>> {
        self.last.take()
    }

    /// The attempt's failure reason; `e` kept as the last attempt's error.
    fn failed(&mut self, e: iperf3::Iperf3Error) -> study::AttemptFailure {
        let why = e.to_string().into();
        self.last = Some(Err(TargetError::Iperf3(e)));
        why
    }

    /// One study run: busy answers waited out, a server between two tests retried
    /// (unless the target does not wait).
    fn execute_cell(&mut self, cell: &Cell) -> Attempt {
        self.last = None;
        let mut step = BUSY_FIRST_STEP;
        let mut waited_here = Duration::ZERO;
        let mut reopen_step = Duration::from_millis(10);
        let mut reopen_waited = Duration::ZERO;
        loop {
            let started_unix_ns = now_unix_ns();
            let t0 = Instant::now();
            let result = self.run_test(&cell.test);
            let duration_ns = t0.elapsed().as_nanos() as i64;
            let result = match result {
                Err(iperf3::Iperf3Error::Busy) => {
                    self.busy.answers += 1;
                    if !self.waits {
                        Err(self.failed(iperf3::Iperf3Error::Busy))
                    } else if waited_here >= self.busy_limit {
                        // The typed answer for whoever takes the last result (a probe
                        // names it busy); the study's words say how long it waited.
                        self.last = Some(Err(TargetError::Iperf3(iperf3::Iperf3Error::Busy)));
                        Err(format!(
                            "the iperf3 server at {} port {} stayed busy (another client's test) for {} s",
                            self.host_for(cell.family),
                            self.port,
                            waited_here.as_secs()
                        )
                        .into())
                    } else {
                        let nap = step.min(self.busy_limit - waited_here);
                        if !self.sleep_unless_stopped(nap) {
                            Err("stopped while waiting for a busy iperf3 server".into())
                        } else {
                            self.busy.waited += nap;
                            waited_here += nap;
                            step = (step * 2).min(BUSY_MAX_STEP);
                            continue;
                        }
                    }
                }
                Err(iperf3::Iperf3Error::Io { source, .. })
                    if self.waits
                        && between_tests(&source)
                        && reopen_waited < self.reopen_grace
                        && self.sleep_unless_stopped(
                            reopen_step.min(self.reopen_grace - reopen_waited),
                        ) =>
                {
                    reopen_waited += reopen_step.min(self.reopen_grace - reopen_waited);
                    reopen_step = (reopen_step * 2).min(Duration::from_millis(200));
                    continue;
                }
                Err(e) => Err(self.failed(e)),
                Ok(r) => {
                    let out = to_output(&r);
                    self.last = Some(Ok(FullResult::Iperf3(Box::new(r))));
                    Ok(out)
                }
            };
            return Attempt {
                started_unix_ns,
                duration_ns,
                result,
            };
        }
    }

    /// Sleeps `d` in small steps; false if the study was asked to stop meanwhile.
    fn sleep_unless_stopped(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        while Instant::now() < end {
            if self.stop.load(Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20).min(end - Instant::now()));
        }
        !self.stop.load(Ordering::SeqCst)
    }
}

impl Executor for Iperf3Target {
    fn execute(&mut self, cell: &Cell, _slot: &Slot, attempt: u32) -> Attempt {
        // A retry waits as with dualperf servers (ending early on Ctrl-C).
        let _ = self.sleep_unless_stopped(retry_backoff(attempt));
        self.execute_cell(cell)
    }
}

/// Whether an I/O error is what a client meets while an iperf3 server re-opens its
/// listening socket between two tests.
fn between_tests(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::ConnectionReset
    )
}

/// An iperf3 result as a study run: its metrics, and what the peer is (there are no
/// interval samples and no server host metadata from an iperf3 server).
fn to_output(r: &iperf3::Iperf3Result) -> RunOutput {
    let mut server_info = BTreeMap::new();
    server_info.insert("peer.software".to_string(), "iperf3".to_string());
    if !r.unavailable.is_empty() {
        server_info.insert(
            "peer.unavailable_metrics".to_string(),
            r.unavailable.join(","),
        );
    }
    if let Some(cc) = r
        .server_json
        .get("congestion_used")
        .and_then(|v| v.as_str())
    {
        server_info.insert("peer.congestion_used".to_string(), cc.to_string());
    }
    RunOutput {
        metrics: r
            .metrics
            .iter()
            .map(|m| (m.name.clone(), m.value))
            .collect(),
        samples: Vec::new(),
        server_info,
        client_info: BTreeMap::new(),
        applied: BTreeMap::new(),
    }
}

/// Adds this invocation's iperf3 busy answers to the campaign's client metadata
/// (summed over resumes).
pub fn record_busy(
    store: &mut store::Store,
    campaign_id: i64,
    busy: BusyCount,
) -> Result<(), store::StoreError> {
    let campaign = store.campaign(campaign_id)?;
    let mut client = campaign
        .hosts
        .into_iter()
        .find(|h| h.role == "client")
        .unwrap_or(store::HostInfo {
            role: "client".into(),
            metadata: Default::default(),
        });
    let md = &mut client.metadata;
    let before = |k: &str| md.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    let answers = before(BUSY_WAITS_KEY) as u64 + busy.answers;
    let waited_s = before(BUSY_WAITED_KEY) + busy.waited.as_secs_f64();
    md.insert(BUSY_WAITS_KEY.into(), answers.to_string());
    md.insert(BUSY_WAITED_KEY.into(), format!("{waited_s:.3}"));
    store.set_host(campaign_id, &client)?;
    Ok(())
}

/// The message refusing tests an iperf3 peer cannot run, if the study has any.
pub fn refuse_rr(spec: &study::StudySpec) -> Option<String> {
    use wire::spec::TestKind;
    if spec.tests.contains(&TestKind::Rrul) {
        return Some(
            "an iperf3 peer cannot run rrul (latency under load): iperf3 runs one test at a \
             time and has no request/response test, so it cannot answer probes beside the \
             load. Use a dualperf server for rrul"
                .into(),
        );
    }
    let health: Vec<&str> = spec
        .tests
        .iter()
        .filter(|t| matches!(t, TestKind::Pmtu | TestKind::Frag | TestKind::ExtHeaders))
        .map(|t| t.name())
        .collect();
    if !health.is_empty() {
        return Some(format!(
            "an iperf3 peer cannot run {}: each datagram must be acknowledged by a dualperf \
             server. Use a dualperf server for the path-health tests",
            health.join(", ")
        ));
    }
    let rr: Vec<String> = spec
        .tests
        .iter()
        .filter(|t| t.is_rr())
        .map(|t| t.name().to_string())
        .collect();
    (!rr.is_empty()).then(|| {
        format!(
            "an iperf3 peer cannot measure request/response latency ({}: RTT, transactions/s, \
             RR loss); iperf3 has no request/response test. Use --tests tcp-stream,udp-stream \
             with --peer iperf3, or a dualperf server for RR tests",
            rr.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rr_tests_are_named_in_the_refusal() {
        let spec = |tests: &str| {
            study::SpecFile::from_toml(&format!("tests = {tests}"))
                .unwrap()
                .resolve(0)
                .unwrap()
        };
        assert_eq!(refuse_rr(&spec("['tcp-stream', 'udp-stream']")), None);
        let why = refuse_rr(&spec("['tcp-stream', 'pmtu', 'frag']")).unwrap();
        assert!(
            why.contains("cannot run pmtu, frag: each datagram"),
            "{why}"
        );
        let why = refuse_rr(&spec("['tcp-stream', 'tcp-rr', 'udp-rr']")).unwrap();
        assert!(
            why.contains("tcp-rr, udp-rr") && why.contains("RTT"),
            "{why}"
        );
    }

    #[test]
    fn busy_counts_add_up_over_resumes() {
        let mut s = store::Store::open_in_memory().unwrap();
        let id = s
            .create_campaign(&store::NewCampaign {
                label: String::new(),
                created_unix_s: 0,
                command_line: String::new(),
                spec_json: "{}".into(),
                dualperf_version: String::new(),
                git_revision: String::new(),
            })
            .unwrap();
        let busy = BusyCount {
            answers: 3,
            waited: Duration::from_millis(1400),
        };
        record_busy(&mut s, id, busy).unwrap();
        record_busy(&mut s, id, busy).unwrap();
        let md = &s.campaign(id).unwrap().hosts[0].metadata;
        assert_eq!(md[BUSY_WAITS_KEY], "6");
        assert_eq!(md[BUSY_WAITED_KEY], "2.800");
    }
}
