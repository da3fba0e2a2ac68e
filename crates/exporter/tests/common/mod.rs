//! Helpers of the exporter's integration tests: a loopback engine server, the exporter
//! on a free loopback port, a minimal HTTP/1.0 client and an exposition reader.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

/// How long a test waits for one HTTP answer (a probe is well under this).
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(60);

/// The loopback name both families of a probe resolve through (the exporter's `hosts`).
pub const DUAL_NAME: &str = "dualstack.test";

/// Exporter configuration: short modules, the dual-stack name, loopback allow-list.
pub fn config_text(extra: &str) -> String {
    format!(
        r#"
setup_allowance = "1s"
[hosts]
"{DUAL_NAME}" = ["127.0.0.1", "::1"]
[modules.tcp_short]
test = "tcp-stream"
duration = "300ms"
[modules.udp_rr_short]
test = "udp-rr"
size = 64
duration = "300ms"
{extra}
"#
    )
}

pub fn start_exporter(config: &str, opts: exporter::ServerOptions) -> exporter::Running {
    let cfg = exporter::Config::from_toml_str(config, Path::new("test.toml")).unwrap();
    exporter::start(
        cfg,
        exporter::WebConfig::none(),
        "127.0.0.1:0".parse().unwrap(),
        opts,
    )
    .unwrap()
}

pub struct Reply {
    pub status: u16,
    pub headers: String,
    pub body: String,
}

/// A connection to `addr` from the loopback address `from` (e.g. `127.0.0.2`: another
/// client, as far as the exporter can tell).
pub fn connect_from(from: &str, addr: SocketAddr) -> TcpStream {
    let ip: std::net::IpAddr = from.parse().unwrap();
    let s = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        None,
    )
    .unwrap();
    s.bind(&SocketAddr::new(ip, 0).into()).unwrap();
    s.connect_timeout(&addr.into(), Duration::from_secs(5))
        .unwrap();
    s.into()
}

/// `GET path` with extra header lines, answer read to the end (HTTP/1.0: no chunks).
pub fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Reply {
    get_from("127.0.0.1", addr, path, headers)
}

/// [`get`] from the loopback address `from`.
pub fn get_from(from: &str, addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Reply {
    let s = connect_from(from, addr);
    request(s, addr, path, headers)
}

/// `GET path` on the connection `s`, answer read to the end.
pub fn request(mut s: TcpStream, addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Reply {
    s.set_read_timeout(Some(HTTP_TIMEOUT)).unwrap();
    let mut req = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let _ = s.write_all(req.as_bytes());
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    reply(&raw)
}

/// An HTTP answer read to the end.
pub fn reply(raw: &[u8]) -> Reply {
    let text = String::from_utf8(raw.to_vec()).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Reply {
        status,
        headers: head.to_string(),
        body: body.to_string(),
    }
}

/// One sample of an exposition: name, labels, value.
#[derive(Debug, Clone)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// A minimal reader of the text format: every non-comment line must be
/// `name{label="value",...} number`, and every sample's family must have TYPE and HELP.
pub fn parse_exposition(text: &str) -> Vec<Sample> {
    let mut typed = Vec::new();
    let mut helped = Vec::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            typed.push(rest.split(' ').next().unwrap().to_string());
            continue;
        }
        if let Some(rest) = line.strip_prefix("# HELP ") {
            helped.push(rest.split(' ').next().unwrap().to_string());
            continue;
        }
        assert!(!line.starts_with('#'), "unexpected comment line {line:?}");
        assert!(!line.is_empty(), "empty line in\n{text}");
        let (series, value) = line.rsplit_once(' ').unwrap();
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("bad value in {line:?}"));
        let (name, labels) = match series.split_once('{') {
            None => (series.to_string(), BTreeMap::new()),
            Some((n, rest)) => {
                let inner = rest.strip_suffix('}').unwrap();
                let mut labels = BTreeMap::new();
                // Label values in our output hold no quotes or commas-in-quotes issues
                // beyond what this split handles: values are checked safe by the exporter.
                for pair in split_labels(inner) {
                    let (k, v) = pair.split_once('=').unwrap();
                    let v = v
                        .strip_prefix('"')
                        .and_then(|v| v.strip_suffix('"'))
                        .unwrap();
                    labels.insert(k.to_string(), v.to_string());
                }
                (n.to_string(), labels)
            }
        };
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "bad metric name {name:?}"
        );
        let family = typed
            .iter()
            .rev()
            .find(|t| name == **t || name.starts_with(&format!("{t}_")))
            .unwrap_or_else(|| panic!("{name} has no TYPE line"));
        assert!(helped.contains(family), "{family} has no HELP line");
        out.push(Sample {
            name,
            labels,
            value,
        });
    }
    out
}

fn split_labels(s: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in s.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The value of `name` whose `family` label is `fam`.
pub fn value(samples: &[Sample], name: &str, fam: &str) -> Option<f64> {
    samples
        .iter()
        .find(|s| s.name == name && s.labels.get("family").map(String::as_str) == Some(fam))
        .map(|s| s.value)
}

/// The reason a probe's answer gives for family `fam`, which must have failed.
pub fn failure_reason(body: &str, fam: &str) -> String {
    let s = parse_exposition(body);
    assert_eq!(value(&s, "probe_success", fam), Some(0.0), "{body}");
    s.iter()
        .find(|x| {
            x.name == "dualperf_probe_failure_info"
                && x.labels.get("family").map(String::as_str) == Some(fam)
        })
        .unwrap_or_else(|| panic!("no failure_info for {fam} in\n{body}"))
        .labels["reason"]
        .clone()
}

/// A loopback port nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A probe request sent from the loopback address `from` and left unanswered (the
/// connection is kept until dropped).
pub fn send_probe_from(
    from: &str,
    addr: SocketAddr,
    path: &str,
    scrape_timeout: &str,
) -> TcpStream {
    let mut s = connect_from(from, addr);
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nX-Prometheus-Scrape-Timeout-Seconds: {scrape_timeout}\r\n\r\n"
    );
    s.write_all(req.as_bytes()).unwrap();
    s
}

/// [`send_probe_from`] 127.0.0.1.
pub fn send_probe(addr: SocketAddr, path: &str, scrape_timeout: &str) -> TcpStream {
    send_probe_from("127.0.0.1", addr, path, scrape_timeout)
}

/// The exporter's own metric `name` (no labels).
pub fn own(addr: SocketAddr, name: &str) -> f64 {
    let r = get(addr, "/metrics", &[]);
    parse_exposition(&r.body)
        .iter()
        .find(|x| x.name == name)
        .map(|x| x.value)
        .unwrap_or_else(|| panic!("no {name} in\n{}", r.body))
}

/// Wait (at most HTTP_TIMEOUT) until `name` is `want`.
pub fn wait_for(addr: SocketAddr, name: &str, want: f64) {
    let t0 = std::time::Instant::now();
    loop {
        let v = own(addr, name);
        if v == want {
            return;
        }
        assert!(
            t0.elapsed() < HTTP_TIMEOUT,
            "{name} is {v}, never became {want}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
