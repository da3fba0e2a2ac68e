//! The main job, shortened: `dualperf study` with its default design (confidence target,
//! at least 5 runs per cell, RFC 2544 udp-stream) on one payload size against the
//! embedded loopback server, then `dualperf report`. Checks what holds regardless of the
//! machine's load: the plan, run counts, the recorded UDP method, that every udp-stream
//! run is a search, that no batch-stamped trial reports a jitter number, and that the
//! report leaves
//! receiver-limited runs out of the loss comparison.

use crate::support::serial;
use crate::support::study::*;
use wire::metrics as m;
use wire::spec::TestKind;

#[test]
fn shortened_main_job_repeats_to_its_target_and_measures_udp_without_tool_made_loss() {
    let _turn = serial();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("main.db").display().to_string();
    let o = run(&["study", "--sizes", "128", "--quiet", "--db", &db], false);
    // Exit 0, or 3 when a loaded box leaves some cell short of its target at
    // --max-runs; never 4 (a cell with no successful run).
    assert!(matches!(o.status.code(), Some(0) | Some(3)), "{}", text(&o));
    let s = store::Store::open_read_only(db.as_ref()).unwrap();
    let c = &s.campaigns().unwrap()[0];
    assert!(c.finished);
    // The host's idle baseline before the first run is recorded (the report flags host
    // CPU figures taken on an already busy host).
    let idle: f64 = c
        .hosts
        .iter()
        .find(|h| h.role == "client")
        .and_then(|h| h.metadata.get("study.idle_cpu_busy_pct"))
        .and_then(|v| v.parse().ok())
        .expect("study.idle_cpu_busy_pct recorded");
    assert!((0.0..=100.0).contains(&idle), "{idle}");
    let spec = study::StudySpec::from_json(&c.spec_json).unwrap();
    let study::Repetition::Confidence {
        min_runs, max_runs, ..
    } = spec.repetition
    else {
        panic!(
            "the main job repeats to a confidence target: {:?}",
            spec.repetition
        )
    };
    let study::UdpMethod::Rfc2544(search) = spec.udp_method else {
        panic!(
            "the main job measures UDP as RFC 2544 throughput: {:?}",
            spec.udp_method
        )
    };
    let cells = s.cells(c.id).unwrap();
    assert_eq!(cells.len(), 8, "4 tests x 2 families x 1 size");
    assert!(
        cells.iter().all(|cell| cell.target_met.is_some()),
        "each cell says whether it met its target"
    );
    let runs = s.runs(c.id).unwrap();
    let applied = s.applied_of_campaign(c.id).unwrap();
    for cell in &cells {
        let n = runs
            .iter()
            .filter(|r| {
                r.status.is_ok()
                    && !r.warmup
                    && r.family == cell.family
                    && r.kind == cell.kind
                    && r.payload_bytes == cell.payload_bytes
            })
            .count() as u32;
        assert!(
            (min_runs..=max_runs).contains(&n),
            "{} {}: {n} runs",
            cell.family,
            cell.kind
        );
    }
    // Every stored stream run: no more payload received than sent, so (with goodput
    // and sending rate on one time base) no goodput above the sending rate.
    for r in runs.iter().filter(|r| r.status.is_ok() && !r.kind.is_rr()) {
        let get = |name: &str| r.metrics.get(name).copied();
        let (sent, recv) = (get(m::SENT_BYTES).unwrap(), get(m::RECV_BYTES).unwrap());
        assert!(recv <= sent, "{} {}: {recv} > {sent}", r.family, r.kind);
        if let (Some(goodput), Some(send_rate)) = (get(m::THROUGHPUT_BPS), get(m::SEND_RATE_BPS)) {
            assert!(
                goodput <= send_rate,
                "{} {}: goodput {goodput} > sending rate {send_rate}",
                r.family,
                r.kind
            );
        }
    }
    let mut limited = 0;
    for r in runs
        .iter()
        .filter(|r| r.status.is_ok() && r.kind == TestKind::UdpStream)
    {
        let get = |name: &str| r.metrics.get(name).copied();
        // Every udp-stream run is a search: the unpaced trial, then at most `steps`
        // paced ones (fewer once the answer is bracketed to 2 %).
        let trials = get(m::RATE_SEARCH_TRIALS).unwrap_or(0.0);
        assert!(
            (1.0..=f64::from(search.steps + 1)).contains(&trials),
            "every udp-stream run is a search: {trials} trials"
        );
        // The UDP sockets asked for the RFC 2544 default receive buffer; what the kernel
        // applied is recorded (as root it may force past net.core.rmem_max).
        assert_eq!(
            spec.udp_socket.as_ref().and_then(|u| u.rcvbuf_bytes),
            Some(study::spec::RFC2544_RCVBUF_BYTES)
        );
        // Jitter only from per-datagram stamps (paced at ≤ 20 kpps), never otherwise.
        if get(m::SENT_PPS).is_some_and(|p| p > 20_000.0) {
            assert_eq!(get(m::JITTER_RFC3550_NS), None);
        }
        if get(m::RECEIVER_LIMITED) == Some(1.0) {
            limited += 1;
            // A GRO receiver's socket counts dropped buffers: then no datagram count is
            // stored; otherwise the datagrams it dropped.
            let gro = applied
                .get(&r.id)
                .and_then(|a| a.get("server.udp_gro"))
                .is_some_and(|v| v == "true");
            let drops = get(m::RX_SOCKET_DROP_PACKETS);
            if gro {
                assert_eq!(drops, None, "buffers are not datagrams");
            } else {
                assert!(drops.is_some_and(|d| d > 0.0), "{drops:?}");
            }
        }
    }
    let o = run(&["report", "--db", &db, "--format", "markdown"], false);
    assert!(o.status.success(), "{}", text(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    if limited > 0 {
        assert!(md.contains("receiver-limited"), "{md}");
    }
}
