//! Bulk TCP against an EmbeddedServer on 127.0.0.1 and ::1: zero-copy sending delivers
//! every byte and drains its completions, and `-P N` runs each stream on its own thread
//! on both ends with per-stream counts that add up.

use dualperf_engine::{run_client, ClientConfig, EmbeddedServer, NullRecorder, RunResult};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wire::proto::SideStats;
#[cfg(target_os = "linux")]
use wire::spec::ZeroCopyMethod;
use wire::spec::{Bound, Direction, Family, TestKind, TestSpec};

/// Runs in this file take turns (a second run at full speed would only slow both).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn families(srv: &EmbeddedServer) -> Vec<(Family, &'static str)> {
    let mut v = vec![(Family::V4, "127.0.0.1")];
    if srv.has_ipv6() {
        v.push((Family::V6, "::1"));
    } else {
        assert!(
            std::env::var_os("DUALPERF_SKIP_IPV6").is_some_and(|v| v == "1"),
            "::1 is not available here; set DUALPERF_SKIP_IPV6=1 to test IPv4 only"
        );
    }
    v
}

fn run(srv: &EmbeddedServer, host: &str, spec: TestSpec) -> RunResult {
    let cfg = ClientConfig::new(host, srv.port(), spec);
    run_client(&cfg, &mut NullRecorder).unwrap_or_else(|e| panic!("run failed: {e}"))
}

#[cfg(target_os = "linux")]
fn applied<'a>(side: &'a SideStats, key: &str) -> &'a str {
    side.applied
        .get(key)
        .unwrap_or_else(|| panic!("applied.{key} missing: {:?}", side.applied))
}

#[cfg(target_os = "linux")]
fn num(side: &SideStats, key: &str) -> u64 {
    applied(side, key)
        .parse()
        .unwrap_or_else(|e| panic!("applied.{key}: {e}"))
}

/// Runs a zero-copy tcp-stream of `payload`-byte writes over each family, forward and
/// reverse, checks what holds for every method (no warning, something sent, every
/// byte received, the method recorded on the sender), then hands `check` the run's
/// name and its sending and receiving sides.
#[cfg(target_os = "linux")]
fn each_zerocopy_run(
    method: ZeroCopyMethod,
    payload: u32,
    check: impl Fn(&str, &SideStats, &SideStats),
) {
    let _turn = serial();
    let srv = EmbeddedServer::start().unwrap();
    for (fam, host) in families(&srv) {
        for dir in [Direction::Forward, Direction::Reverse] {
            let mut spec = TestSpec::new(TestKind::TcpStream, fam, payload);
            spec.bound = Bound::DurationNs(200_000_000);
            spec.direction = dir;
            spec.zerocopy = Some(method);
            let r = run(&srv, host, spec);
            let name = format!("{dir:?} {fam}");
            assert!(r.warnings.is_empty(), "{name}: {:?}", r.warnings);
            let (tx, rx) = match dir {
                Direction::Reverse => (&r.server, &r.client),
                _ => (&r.client, &r.server),
            };
            assert!(tx.sent_bytes > 0, "{name}: nothing sent");
            assert_eq!(rx.recv_bytes, tx.sent_bytes, "{name}");
            assert_eq!(applied(tx, "zerocopy"), method.name());
            check(&name, tx, rx);
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn zerocopy_streams_deliver_every_byte_and_record_their_completions() {
    each_zerocopy_run(ZeroCopyMethod::Msg, 128 * 1024, |name, tx, rx| {
        let sends = num(tx, "zerocopy_sends");
        // One send call per write at least (a partial send takes another call).
        assert!(sends >= tx.sent_packets, "{name}: {sends} sends");
        assert_eq!(
            num(tx, "zerocopy_completed_sends"),
            sends,
            "{name}: every completion drained"
        );
        // Loopback delivers to a local socket, which cannot keep the sender's pages:
        // the kernel copies, and the run says so.
        assert_eq!(num(tx, "zerocopy_copied_sends"), sends, "{name}");
        assert!(applied(tx, "zerocopy_kernel_copied").starts_with("all copied"));
        let peak = num(tx, "zerocopy_peak_outstanding");
        assert!(
            (1..=net::zerocopy::DEFAULT_MAX_OUTSTANDING).contains(&peak),
            "{name}: peak outstanding {peak}"
        );
        assert!(!rx.applied.contains_key("zerocopy"), "only the sender");
    });
}

#[cfg(target_os = "linux")]
#[test]
fn sendfile_streams_deliver_every_byte_and_count_their_calls() {
    each_zerocopy_run(ZeroCopyMethod::Sendfile, 64 * 1024, |name, tx, _rx| {
        assert!(num(tx, "zerocopy_sends") >= tx.sent_packets, "{name}");
        assert!(!tx.applied.contains_key("zerocopy_completed_sends"));
    });
}

/// Per-stream counts of one side, by stream id.
fn per_stream(side: &SideStats) -> BTreeMap<u16, (u64, u64)> {
    side.streams
        .iter()
        .map(|s| (s.stream_id, (s.sent_bytes, s.recv_bytes)))
        .collect()
}

/// The most threads of each name alive at once in this process, sampled until `stop`.
fn watch_threads(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<BTreeMap<String, usize>> {
    std::thread::spawn(move || {
        let mut most: BTreeMap<String, usize> = BTreeMap::new();
        while !stop.load(Ordering::Relaxed) {
            let mut now: BTreeMap<String, usize> = BTreeMap::new();
            if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
                for t in dir.flatten() {
                    if let Ok(name) = std::fs::read_to_string(t.path().join("comm")) {
                        *now.entry(name.trim().to_string()).or_default() += 1;
                    }
                }
            }
            for (k, v) in now {
                let e = most.entry(k).or_default();
                *e = (*e).max(v);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        most
    })
}

#[test]
fn parallel_streams_run_on_a_thread_each_and_their_counts_add_up() {
    let _turn = serial();
    let srv = EmbeddedServer::start().unwrap();
    const N: u16 = 3;
    for (fam, host) in families(&srv) {
        for dir in [Direction::Forward, Direction::Reverse] {
            let mut spec = TestSpec::new(TestKind::TcpStream, fam, 16 * 1024);
            spec.bound = Bound::DurationNs(600_000_000);
            spec.direction = dir;
            spec.streams = N;
            let stop = Arc::new(AtomicBool::new(false));
            let watcher = if cfg!(target_os = "linux") {
                Some(watch_threads(stop.clone()))
            } else {
                None
            };
            let r = run(&srv, host, spec);
            stop.store(true, Ordering::Relaxed);
            let (tx, rx) = match dir {
                Direction::Reverse => (&r.server, &r.client),
                _ => (&r.client, &r.server),
            };
            let (sent, recvd) = (per_stream(tx), per_stream(rx));
            let ids: Vec<u16> = (0..N).collect();
            assert_eq!(
                sent.keys().copied().collect::<Vec<_>>(),
                ids,
                "{dir:?} {fam}"
            );
            assert_eq!(
                recvd.keys().copied().collect::<Vec<_>>(),
                ids,
                "{dir:?} {fam}"
            );
            for id in &ids {
                let (s, r_) = (sent[id].0, recvd[id].1);
                assert!(s > 0, "{dir:?} {fam}: stream {id} sent nothing");
                assert_eq!(s, r_, "{dir:?} {fam}: stream {id}");
            }
            let total: u64 = sent.values().map(|v| v.0).sum();
            assert_eq!(total, tx.sent_bytes, "{dir:?} {fam}");
            assert_eq!(rx.recv_bytes, tx.sent_bytes, "{dir:?} {fam}");
            // The per-stream rows of the result say the same, and share the total.
            let rows = r.stream_rows();
            assert_eq!(rows.len(), N as usize, "{dir:?} {fam}");
            let row_total: u64 = rows.iter().map(|s| s.recv_bytes).sum();
            assert_eq!(row_total, rx.recv_bytes, "{dir:?} {fam}");
            let shares: f64 = rows.iter().map(|s| s.share_pct).sum();
            assert!((shares - 100.0).abs() < 1e-6, "{dir:?} {fam}: {shares}");
            if let Some(w) = watcher {
                let most = w.join().unwrap();
                // Client and embedded server share this process: N senders on one end,
                // N receivers on the other, all alive at once.
                assert_eq!(most.get("dp-tcp-send"), Some(&(N as usize)), "{most:?}");
                assert_eq!(most.get("dp-tcp-recv"), Some(&(N as usize)), "{most:?}");
            }
        }
    }
}
