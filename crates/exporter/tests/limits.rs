//! The exporter's limits hold whatever a scrape client does: a client that hangs up frees
//! nothing its probe holds (the target stays taken until the probe ends, and a request
//! dropped while queued leaves the queue); name lookups and password checks beyond their
//! permits are refused at once.

mod common;

use common::*;
use engine::EmbeddedServer;
use std::time::Instant;

#[test]
fn a_probe_whose_client_left_still_holds_its_target_and_dropped_waiters_leave_the_queue() {
    let srv = EmbeddedServer::start().unwrap();
    // A long, light probe (20 64-byte datagrams a second for 20 s): it runs throughout.
    let ex = start_exporter(
        &config_text(
            "[modules.long]\ntest = \"udp-stream\"\nsize = 64\nrate = \"20pps\"\nduration = \"20s\"\nfamilies = [4]",
        ),
        exporter::ServerOptions::default(),
    );
    let addr = ex.local_addr();
    let path = format!("/probe?target=127.0.0.1:{}&module=long", srv.port());
    let first = send_probe(addr, &path, "60");
    wait_for(addr, "dualperf_exporter_running_probes", 1.0);
    // The first client hangs up; the exporter sees it (the request is counted abandoned).
    drop(first);
    wait_for(addr, "dualperf_exporter_abandoned_scrapes_total", 1.0);
    // Its probe still runs and still holds the target: a scrape that cannot wait for it
    // (20 s test + 1 s setup + 0.5 s offset in 21.6 s: 0.1 s to wait) is refused.
    let r = get(
        addr,
        &path,
        &[("X-Prometheus-Scrape-Timeout-Seconds", "21.6")],
    );
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(
        r.body.contains("another probe of '127.0.0.1:"),
        "{}",
        r.body
    );
    assert_eq!(own(addr, "dualperf_exporter_running_probes"), 1.0);
    // A scrape that can wait is queued; its client hangs up; the queue is empty again.
    let waiting = send_probe(addr, &path, "60");
    wait_for(addr, "dualperf_exporter_queued_probes", 1.0);
    drop(waiting);
    wait_for(addr, "dualperf_exporter_queued_probes", 0.0);
    assert_eq!(own(addr, "dualperf_exporter_running_probes"), 1.0);
    // Stopping the server ends the probe early; then the exporter stops.
    drop(srv);
    drop(ex);
}

#[test]
fn lookups_beyond_the_permits_are_refused_at_once_and_addresses_need_none() {
    let opts = exporter::ServerOptions {
        max_blocking_checks: 0,
        ..Default::default()
    };
    let ex = start_exporter(&config_text(""), opts);
    let addr = ex.local_addr();
    let down = closed_port();
    // A name needs a lookup: with no permit free the answer is 503 at once, saying why.
    let r = get(
        addr,
        &format!("/probe?target=localhost:{down}&module=tcp_short"),
        &[],
    );
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(
        r.body
            .contains("slots for name lookups and password checks are taken"),
        "{}",
        r.body
    );
    // An address and a name of the configured hosts need none: probed (nothing listens).
    for target in [format!("127.0.0.1:{down}"), format!("{DUAL_NAME}:{down}")] {
        let r = get(
            addr,
            &format!("/probe?target={target}&module=tcp_short"),
            &[],
        );
        assert_eq!(r.status, 200, "{target}: {}", r.body);
    }
    let s = parse_exposition(&get(addr, "/metrics", &[]).body);
    let overloaded = s
        .iter()
        .find(|x| x.name == "dualperf_exporter_refused_total" && x.labels["reason"] == "overloaded")
        .map(|x| x.value);
    assert_eq!(overloaded, Some(1.0));
}

/// A target that accepts control connections, reads what it is sent and never answers,
/// until dropped.
struct StalledTarget {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StalledTarget {
    fn start() -> StalledTarget {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let port = l.local_addr().unwrap().port();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                if let Ok((s, _)) = l.accept() {
                    // At most a few: the test makes one probe.
                    if held.len() < 16 {
                        held.push(s);
                    }
                }
                for s in &mut held {
                    let _ = s.set_nonblocking(true);
                    let _ = std::io::Read::read(s, &mut [0u8; 4096]);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        StalledTarget {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for StalledTarget {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn a_target_that_stalls_after_connecting_fails_for_timeout_within_the_scrape_timeout() {
    let target = StalledTarget::start();
    let ex = start_exporter(
        &config_text(
            "[modules.stall]\ntest = \"tcp-stream\"\nduration = \"300ms\"\nfamilies = [4]",
        ),
        exporter::ServerOptions::default(),
    );
    // A 2 s scrape timeout: 1.5 s of budget after the 0.5 s offset, of which the test
    // needs 0.3 s + 1 s setup. The engine's own handshake wait (5 s) would overrun it.
    let scrape_timeout = std::time::Duration::from_secs(2);
    let t0 = Instant::now();
    let r = get(
        ex.local_addr(),
        &format!("/probe?target=127.0.0.1:{}&module=stall", target.port),
        &[("X-Prometheus-Scrape-Timeout-Seconds", "2")],
    );
    let took = t0.elapsed();
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(failure_reason(&r.body, "ipv4"), "timeout", "{}", r.body);
    // The answer comes by the budget (the exporter answers then at the latest); the 2 s
    // margin is for scheduling only, well short of the engine's default 5 s wait.
    assert!(
        took < scrape_timeout + std::time::Duration::from_secs(2),
        "answered after {took:?}"
    );
    // The probe itself ends too (its waits were held to the budget), freeing the target.
    wait_for(ex.local_addr(), "dualperf_exporter_running_probes", 0.0);
    let ended = t0.elapsed();
    assert!(
        ended < scrape_timeout + std::time::Duration::from_secs(2),
        "the probe ran {ended:?}"
    );
    drop(ex);
    drop(target);
}

#[test]
fn a_password_check_beyond_the_permits_is_refused_at_once() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let web_path = dir.path().join("web.toml");
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    std::fs::write(
        &web_path,
        format!("[basic_auth_users]\nprometheus = \"{hash}\"\n"),
    )
    .unwrap();
    let cfg = exporter::Config::from_toml_str(&config_text(""), std::path::Path::new("t")).unwrap();
    let ex = exporter::start(
        cfg,
        exporter::WebConfig::load(&web_path).unwrap(),
        "127.0.0.1:0".parse().unwrap(),
        exporter::ServerOptions {
            max_blocking_checks: 0,
            ..Default::default()
        },
    )
    .unwrap();
    let token = base64::engine::general_purpose::STANDARD.encode("prometheus:wrong");
    let r = get(
        ex.local_addr(),
        "/metrics",
        &[("Authorization", &format!("Basic {token}"))],
    );
    // Not 401 after a bcrypt run: refused before any, saying why.
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(
        r.body.contains("the password check cannot start now"),
        "{}",
        r.body
    );
}
