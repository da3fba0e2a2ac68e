//! The exporter stays reachable under floods: silent connections from one address take
//! that address's share of connections only and are closed after the header read
//! timeout; one scrape client cannot take every probe slot; every spelling of a host is
//! one target.

mod common;

use common::*;
use engine::EmbeddedServer;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// The exporter's own metric `name` with `label` = `value` (0 when absent).
fn own_with(addr: SocketAddr, name: &str, label: (&str, &str)) -> f64 {
    let r = get(addr, "/metrics", &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    parse_exposition(&r.body)
        .iter()
        .find(|x| x.name == name && x.labels.get(label.0).map(String::as_str) == Some(label.1))
        .map(|x| x.value)
        .unwrap_or(0.0)
}

/// What the exporter answers on `s` without being asked, until it closes.
fn read_unasked(mut s: TcpStream) -> Reply {
    s.set_read_timeout(Some(HTTP_TIMEOUT)).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    reply(&raw)
}

#[test]
fn silent_connections_from_one_address_cannot_keep_another_from_metrics() {
    let (total, per_client) = (8, 4);
    let ex = start_exporter(
        &config_text(""),
        exporter::ServerOptions {
            max_connections: total,
            max_connections_per_client: per_client,
            // Long enough that no held connection is cut while the test runs.
            header_read_timeout: Duration::from_secs(600),
            ..Default::default()
        },
    );
    let addr = ex.local_addr();
    // 127.0.0.2 opens its share and sends nothing.
    let held: Vec<TcpStream> = (0..per_client)
        .map(|_| connect_from("127.0.0.2", addr))
        .collect();
    // Past its share and past the total: each further one is answered 503 and closed
    // (a reconnecting attacker gets the same).
    let extra = total + 2;
    for i in 0..extra {
        let r = read_unasked(connect_from("127.0.0.2", addr));
        assert_eq!(r.status, 503, "connection {i}: {}{}", r.headers, r.body);
        assert_eq!(
            r.body,
            format!("the exporter is busy: {per_client} connections are open from 127.0.0.2, the most one client may hold; close some (or wait for idle ones to time out) and try again\n")
        );
    }
    // Another address is served meanwhile.
    let refused = own_with(
        addr,
        "dualperf_exporter_refused_total",
        ("reason", "too_many_connections"),
    );
    assert_eq!(refused, extra as f64);
    // The held connections are whole ones: one of them is served when it asks.
    let mut held = held.into_iter();
    let r = request(held.next().unwrap(), addr, "/metrics", &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    drop(held);
}

#[test]
fn a_silent_connection_is_closed_after_the_header_read_timeout() {
    let timeout = Duration::from_secs(1);
    let ex = start_exporter(
        &config_text(""),
        exporter::ServerOptions {
            max_connections_per_client: 2,
            header_read_timeout: timeout,
            ..Default::default()
        },
    );
    let addr = ex.local_addr();
    let t0 = Instant::now();
    let silent: Vec<TcpStream> = (0..2).map(|_| connect_from("127.0.0.2", addr)).collect();
    // A third half-sent request is refused while the two are held …
    let mut third = connect_from("127.0.0.2", addr);
    let _ = third.write_all(b"GET /metrics HTTP/1.0\r\n");
    assert_eq!(read_unasked(third).status, 503);
    // … and each silent one is closed by the exporter, with no answer to a request it
    // never made, well within a generous bound (nothing here depends on how soon).
    for s in silent {
        let r = read_unasked(s);
        assert_ne!(r.status, 200, "{}", r.headers);
    }
    assert!(t0.elapsed() < HTTP_TIMEOUT, "{:?}", t0.elapsed());
    // Their places are free again: the same address is served.
    let r = get_from("127.0.0.2", addr, "/metrics", &[]);
    assert_eq!(r.status, 200, "{}", r.body);
}

/// A module that runs throughout a test (20 64-byte datagrams a second for 20 s, IPv4) and a
/// scrape timeout that leaves it 0.1 s to wait for its turn (20 s + 1 s setup + 0.5 s).
const LONG: &str =
    "[modules.long]\ntest = \"udp-stream\"\nsize = 64\nrate = \"20pps\"\nduration = \"20s\"\nfamilies = [4]";
const RUNNING: &str = "dualperf_exporter_running_probes";
const NO_WAIT: (&str, &str) = ("X-Prometheus-Scrape-Timeout-Seconds", "21.6");

#[test]
fn every_spelling_of_a_host_is_one_target() {
    let srv = EmbeddedServer::start().unwrap();
    let ex = start_exporter(&config_text(LONG), exporter::ServerOptions::default());
    let addr = ex.local_addr();
    let port = srv.port();
    let first = send_probe(
        addr,
        &format!("/probe?target=127.0.0.1:{port}&module=long"),
        "60",
    );
    wait_for(addr, RUNNING, 1.0);
    // The numeric spellings that are not Rust's are names to the exporter, which the
    // system's resolver (getaddrinfo, inet_aton's forms) turns into 127.0.0.1. All at
    // once, each from an address of its own (one client's limit is not what is tested),
    // with 2 s for the lookup and the wait: a name's lookup is not cut short on a busy
    // machine, and every spelling waits for the running probe, then is refused.
    let spellings = [
        "127.0.0.1",
        "127.1",
        "2130706433",
        "0x7f.0.1",
        "0177.0.0.1",
        "127.000.000.001",
        "[::ffff:127.0.0.1]",
        "[::FFFF:7F00:1]",
        "localhost",
    ];
    let asked: Vec<_> = spellings
        .iter()
        .enumerate()
        .map(|(i, spelling)| {
            let path = format!("/probe?target={spelling}:{port}&module=long");
            let from = format!("127.0.1.{}", i + 1);
            std::thread::spawn(move || {
                get_from(
                    &from,
                    addr,
                    &path,
                    &[("X-Prometheus-Scrape-Timeout-Seconds", "23.5")],
                )
            })
        })
        .collect();
    for (spelling, r) in spellings.iter().zip(asked) {
        let r = r.join().unwrap();
        assert_eq!(r.status, 503, "{spelling}: {}", r.body);
        assert!(
            r.body
                .contains(&format!("another probe of '127.0.0.1:{port}'")),
            "{spelling}: {}",
            r.body
        );
    }
    // Another port of the host is another target (nothing listens there).
    let r = get(
        addr,
        &format!("/probe?target=127.1:{}&module=udp_rr_short", closed_port()),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.body);
    drop(first);
    // Stopping the server ends the probe early; then the exporter stops.
    drop(srv);
    drop(ex);
}

#[test]
fn one_scrape_client_cannot_take_every_probe_slot() {
    let srv = EmbeddedServer::start().unwrap();
    let ex = start_exporter(
        &format!(
            "max_concurrent_probes = 2\nmax_probes_per_client = 1\n{}",
            config_text(LONG)
        ),
        exporter::ServerOptions::default(),
    );
    let addr = ex.local_addr();
    let first = send_probe_from(
        "127.0.0.2",
        addr,
        &format!("/probe?target=127.0.0.1:{}&module=long", srv.port()),
        "60",
    );
    wait_for(addr, RUNNING, 1.0);
    // A free slot and a free target, but 127.0.0.2 has its one probe running.
    let other = format!("/probe?target=127.0.0.1:{}&module=long", closed_port());
    let r = get_from("127.0.0.2", addr, &other, &[NO_WAIT]);
    assert_eq!(r.status, 503, "{}", r.body);
    assert!(
        r.body
            .contains("1 probes asked by 127.0.0.2 (max_probes_per_client) still running"),
        "{}",
        r.body
    );
    // Another client gets the slot.
    let r = get_from("127.0.0.3", addr, &other, &[NO_WAIT]);
    assert_eq!(r.status, 200, "{}", r.body);
    let s = parse_exposition(&r.body);
    assert_eq!(value(&s, "probe_success", "ipv4"), Some(0.0), "{}", r.body);
    drop(first);
    drop(srv);
    drop(ex);
}
