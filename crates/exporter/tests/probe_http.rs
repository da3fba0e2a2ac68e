//! The exporter over HTTP against a loopback `dualperf` engine server: both families,
//! plausible figures, and a clear answer to every bad input.

mod common;

use common::*;
use engine::EmbeddedServer;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

#[test]
fn a_probe_measures_both_families_and_their_ratio() {
    let srv = EmbeddedServer::start().unwrap();
    let ex = start_exporter(&config_text(""), exporter::ServerOptions::default());
    let target = format!("{DUAL_NAME}:{}", srv.port());
    for module in ["tcp_short", "udp_rr_short"] {
        let r = get(
            ex.local_addr(),
            &format!("/probe?target={target}&module={module}"),
            &[("X-Prometheus-Scrape-Timeout-Seconds", "30")],
        );
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(
            r.headers.contains("text/plain; version=0.0.4"),
            "{}",
            r.headers
        );
        let s = parse_exposition(&r.body);
        let (headline, exported) = if module == "tcp_short" {
            (
                "dualperf_probe_throughput_bytes_per_second",
                "throughput_bytes_per_second",
            )
        } else {
            ("dualperf_probe_rtt_mean_seconds", "rtt_mean_seconds")
        };
        let v4 = value(&s, headline, "ipv4");
        if !srv.has_ipv6() {
            // No ::1 on this host: IPv6 must fail with a reason, not vanish.
            assert_eq!(value(&s, "probe_success", "ipv6"), Some(0.0), "{}", r.body);
            continue;
        }
        assert_eq!(value(&s, "probe_success", "ipv4"), Some(1.0), "{}", r.body);
        assert_eq!(value(&s, "probe_success", "ipv6"), Some(1.0), "{}", r.body);
        let v4 = v4.unwrap();
        let v6 = value(&s, headline, "ipv6").unwrap();
        assert!(v4 > 0.0 && v6 > 0.0, "{}", r.body);
        let ratio = s
            .iter()
            .find(|x| x.name == "dualperf_probe_ipv6_to_ipv4_ratio")
            .unwrap();
        assert_eq!(ratio.labels["metric"], exported);
        assert!(
            (ratio.value - v6 / v4).abs() <= 1e-9 * (v6 / v4),
            "ratio {} but v6/v4 = {}",
            ratio.value,
            v6 / v4
        );
        for fam in ["ipv4", "ipv6"] {
            let d = value(&s, "probe_duration_seconds", fam).unwrap();
            let t = value(&s, "dualperf_probe_test_duration_seconds", fam).unwrap();
            assert!(
                d > 0.0 && t > 0.0 && d >= t * 0.99,
                "{fam}: probe {d} s, test {t} s"
            );
        }
        if module == "udp_rr_short" {
            let p50 = value(&s, "dualperf_probe_rtt_p50_seconds", "ipv4").unwrap();
            assert!(p50 > 0.0 && p50 < 1.0, "{p50}");
        }
    }
    // The exporter's own metrics count the two probes.
    let r = get(ex.local_addr(), "/metrics", &[]);
    assert_eq!(r.status, 200);
    let s = parse_exposition(&r.body);
    let probes: f64 = s
        .iter()
        .filter(|x| x.name == "dualperf_exporter_probes_total")
        .map(|x| x.value)
        .sum();
    assert_eq!(probes, 2.0, "{}", r.body);
}

#[test]
fn openmetrics_is_served_when_asked_for() {
    let ex = start_exporter(&config_text(""), exporter::ServerOptions::default());
    let r = get(
        ex.local_addr(),
        "/metrics",
        &[(
            "Accept",
            "application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
        )],
    );
    assert_eq!(r.status, 200);
    assert!(
        r.headers.contains("application/openmetrics-text"),
        "{}",
        r.headers
    );
    assert!(r.body.ends_with("# EOF\n"));
}

/// A request path, its headers, the status and a phrase the answer must hold.
type Case<'a> = (String, Vec<(&'a str, &'a str)>, u16, &'a str);

#[test]
fn bad_inputs_get_a_clear_answer() {
    let srv = EmbeddedServer::start().unwrap();
    let ex = start_exporter(&config_text(""), exporter::ServerOptions::default());
    let port = srv.port();
    let cases: Vec<Case> = vec![
        (
            format!("/probe?target=127.0.0.1:{port}&module=nope"),
            vec![],
            400,
            "unknown module 'nope'",
        ),
        (
            format!("/probe?target=127.0.0.1:{port}"),
            vec![],
            400,
            "module parameter is missing",
        ),
        (
            "/probe?module=tcp_short".into(),
            vec![],
            400,
            "target parameter is missing",
        ),
        (
            "/probe?target=a%20b&module=tcp_short".into(),
            vec![],
            400,
            "neither an IP address nor a host name",
        ),
        (
            "/probe?target=127.0.0.1:0&module=tcp_short".into(),
            vec![],
            400,
            "not a port",
        ),
        (
            "/probe?target=192.0.2.1&module=tcp_short".into(),
            vec![],
            403,
            "not in allowed_targets",
        ),
        (
            format!("/probe?target=127.0.0.1:{port}&module=tcp_short"),
            vec![("X-Prometheus-Scrape-Timeout-Seconds", "1")],
            400,
            "raise scrape_timeout",
        ),
        (
            format!("/probe?target=127.0.0.1:{port}&module=tcp_short"),
            vec![("X-Prometheus-Scrape-Timeout-Seconds", "soon")],
            400,
            "not a number of seconds",
        ),
        ("/nowhere".into(), vec![], 404, "no page /nowhere"),
    ];
    for (path, headers, status, want) in cases {
        let r = get(ex.local_addr(), &path, &headers);
        assert_eq!(r.status, status, "{path}: {}", r.body);
        assert!(r.body.contains(want), "{path}: {}", r.body);
    }
    // A target with no AAAA: IPv4 measured, IPv6 failed with the reason.
    let r = get(
        ex.local_addr(),
        &format!("/probe?target=127.0.0.1:{port}&module=udp_rr_short"),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let s = parse_exposition(&r.body);
    assert_eq!(value(&s, "probe_success", "ipv4"), Some(1.0), "{}", r.body);
    assert_eq!(value(&s, "probe_success", "ipv6"), Some(0.0), "{}", r.body);
    let info = s
        .iter()
        .find(|x| x.name == "dualperf_probe_failure_info")
        .unwrap();
    assert_eq!(info.labels["reason"], "no_address");
    // Labels from a fixed set only (no free text: every distinct text would be a series).
    let keys: Vec<&str> = info.labels.keys().map(String::as_str).collect();
    assert_eq!(keys, ["family", "reason"], "{info:?}");
    // Server down: both families refused, with that reason.
    let down = closed_port();
    let r = get(
        ex.local_addr(),
        &format!("/probe?target={DUAL_NAME}:{down}&module=tcp_short"),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let s = parse_exposition(&r.body);
    for fam in ["ipv4", "ipv6"] {
        assert_eq!(value(&s, "probe_success", fam), Some(0.0), "{}", r.body);
        let info = s
            .iter()
            .find(|x| x.name == "dualperf_probe_failure_info" && x.labels["family"] == fam)
            .unwrap();
        // ::1 may be absent on a host without IPv6: then it is unreachable, not refused.
        assert!(
            ["refused", "unreachable"].contains(&info.labels["reason"].as_str()),
            "{info:?}"
        );
    }
    // A POST is refused.
    let mut c = TcpStream::connect(ex.local_addr()).unwrap();
    c.write_all(b"POST /probe HTTP/1.0\r\nContent-Length: 0\r\n\r\n")
        .unwrap();
    let mut out = String::new();
    c.read_to_string(&mut out).unwrap();
    assert!(
        out.starts_with("HTTP/1.0 405") || out.starts_with("HTTP/1.1 405"),
        "{out}"
    );
    let r = get(ex.local_addr(), "/metrics", &[]);
    let s = parse_exposition(&r.body);
    let refused = |why: &str| {
        s.iter()
            .find(|x| x.name == "dualperf_exporter_refused_total" && x.labels["reason"] == why)
            .map(|x| x.value)
    };
    assert_eq!(refused("unknown_module"), Some(1.0), "{}", r.body);
    assert_eq!(refused("not_allowed"), Some(1.0), "{}", r.body);
    assert_eq!(refused("scrape_timeout"), Some(1.0), "{}", r.body);
}

#[test]
fn a_second_probe_of_a_busy_target_is_refused_when_it_cannot_wait() {
    let srv = EmbeddedServer::start().unwrap();
    let ex = start_exporter(
        &config_text("[modules.long]\ntest = \"udp-rr\"\nduration = \"4s\"\nfamilies = [4]"),
        exporter::ServerOptions::default(),
    );
    let addr = ex.local_addr();
    let path = format!("/probe?target=127.0.0.1:{}&module=long", srv.port());
    let first = {
        let path = path.clone();
        std::thread::spawn(move || get(addr, &path, &[]))
    };
    // Wait (bounded) until the first probe is running.
    let t0 = Instant::now();
    loop {
        let s = parse_exposition(&get(addr, "/metrics", &[]).body);
        if s.iter()
            .any(|x| x.name == "dualperf_exporter_running_probes" && x.value == 1.0)
        {
            break;
        }
        assert!(t0.elapsed() < HTTP_TIMEOUT, "the first probe never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // 4 s test + 1 s setup + 0.5 s offset: a 5.6 s scrape timeout leaves 0.1 s to wait,
    // far less than what remains of the 4 s test running.
    let r = get(
        addr,
        &path,
        &[("X-Prometheus-Scrape-Timeout-Seconds", "5.6")],
    );
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(
        r.body.contains("another probe of '127.0.0.1:"),
        "{}",
        r.body
    );
    let r = first.join().unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn slow_and_oversized_requests_are_cut_off_and_nothing_is_left_running() {
    let opts = exporter::ServerOptions {
        header_read_timeout: Duration::from_millis(500),
        ..Default::default()
    };
    let ex = start_exporter(&config_text(""), opts);
    let addr = ex.local_addr();
    // A client that sends half a request and waits: the exporter closes the connection.
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    c.set_read_timeout(Some(HTTP_TIMEOUT)).unwrap();
    let mut buf = Vec::new();
    let t0 = Instant::now();
    let _ = c.read_to_end(&mut buf);
    assert!(
        t0.elapsed() < HTTP_TIMEOUT,
        "the slow client was never cut off"
    );
    let answer = String::from_utf8_lossy(&buf);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    // Headers beyond the limit are refused.
    let big = "x".repeat(64 * 1024);
    let r = get(addr, "/metrics", &[("X-Big", &big)]);
    assert_eq!(r.status, 431, "{}", r.headers);
    // Stopping the exporter closes its port.
    drop(ex);
    assert!(
        TcpStream::connect(addr).is_err(),
        "the exporter still listens"
    );
}

#[test]
fn an_iperf3_peer_is_probed_over_both_families() {
    let server =
        iperf3::Server::bind(&["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()])
            .or_else(|_| iperf3::Server::bind(&["127.0.0.1:0".parse().unwrap()]))
            .unwrap();
    let addrs = server.local_addrs();
    let has_v6 = addrs.len() == 2;
    let shutdown = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = shutdown.clone();
    let serving = std::thread::spawn(move || server.serve(&flag));
    let ex = start_exporter(
        &config_text(
            "[modules.iperf3_tcp]\ntest = \"tcp-stream\"\nduration = \"300ms\"\npeer = \"iperf3\"",
        ),
        exporter::ServerOptions::default(),
    );
    let r = get(
        ex.local_addr(),
        &format!(
            "/probe?target={DUAL_NAME}:{}&module=iperf3_tcp",
            addrs[0].port()
        ),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let s = parse_exposition(&r.body);
    let fams: &[&str] = if has_v6 { &["ipv4", "ipv6"] } else { &["ipv4"] };
    for fam in fams {
        assert_eq!(
            value(&s, "probe_success", fam),
            Some(1.0),
            "{fam}: {}",
            r.body
        );
        let t = value(&s, "dualperf_probe_throughput_bytes_per_second", fam).unwrap();
        assert!(t > 0.0, "{fam}: {}", r.body);
    }
    shutdown.store(true, std::sync::atomic::Ordering::SeqCst);
    serving.join().unwrap().unwrap();
}

#[test]
fn a_busy_iperf3_peer_is_retried_within_half_the_setup_allowance_then_named_busy() {
    let (port, seen) = testkit::busy_iperf3_server(50);
    // setup_allowance 1 s: a busy server is retried for 0.5 s (answers at 0, 0.2 and
    // 0.5 s), by runner's iperf3 target.
    let ex = start_exporter(
        &config_text(
            "[modules.iperf3_tcp]\ntest = \"tcp-stream\"\nduration = \"300ms\"\npeer = \"iperf3\"\nfamilies = [4]",
        ),
        exporter::ServerOptions::default(),
    );
    let r = get(
        ex.local_addr(),
        &format!("/probe?target=127.0.0.1:{port}&module=iperf3_tcp"),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(failure_reason(&r.body, "ipv4"), "busy", "{}", r.body);
    assert_eq!(*seen.lock().unwrap(), 3, "the answers the probe waited out");
}
