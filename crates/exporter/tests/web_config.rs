//! `--web-config`: the exporter over TLS with basic auth (bcrypt), as Prometheus'
//! exporter web configuration does them. The certificate is made by the `openssl`
//! command (CI installs it); without it the test says so and stops.

mod common;

use base64::Engine as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn https_get(addr: SocketAddr, path: &str, auth: Option<(&str, &str)>) -> String {
    let connector = native_tls::TlsConnector::builder()
        .danger_accept_invalid_certs(true)
        .build()
        .unwrap();
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(common::HTTP_TIMEOUT)).unwrap();
    let mut s = connector.connect("localhost", tcp).unwrap();
    let mut req = format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n");
    if let Some((u, p)) = auth {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
        req.push_str(&format!("Authorization: Basic {token}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn tls_and_basic_auth_guard_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=localhost", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output();
    match made {
        Ok(o) if o.status.success() => {}
        other => {
            eprintln!("skipped: cannot make a certificate with `openssl` ({other:?})");
            return;
        }
    }
    let hash = bcrypt::hash("s3cret", 4).unwrap();
    let web_path = dir.path().join("web.toml");
    std::fs::write(
        &web_path,
        format!(
            "[tls_server_config]\ncert_file = {:?}\nkey_file = {:?}\n[basic_auth_users]\nprometheus = \"{hash}\"\n",
            cert.display().to_string(),
            key.display().to_string()
        ),
    )
    .unwrap();
    let web = exporter::WebConfig::load(&web_path).unwrap();
    let cfg = exporter::Config::from_toml_str(&common::config_text(""), Path::new("t")).unwrap();
    let ex = exporter::start(
        cfg,
        web,
        "127.0.0.1:0".parse().unwrap(),
        exporter::ServerOptions {
            header_read_timeout: Duration::from_secs(2),
            ..Default::default()
        },
    )
    .unwrap();
    let addr = ex.local_addr();
    let out = https_get(addr, "/metrics", Some(("prometheus", "s3cret")));
    assert!(out.starts_with("HTTP/1.0 200"), "{out}");
    assert!(out.contains("dualperf_exporter_probes_total"), "{out}");
    for (auth, what) in [
        (None, "no credentials"),
        (Some(("prometheus", "wrong")), "a wrong password"),
        (Some(("alice", "s3cret")), "an unknown user"),
    ] {
        let out = https_get(addr, "/probe?target=127.0.0.1&module=udp_rr", auth);
        assert!(out.starts_with("HTTP/1.0 401"), "{what}: {out}");
        assert!(
            out.contains("WWW-Authenticate") || out.contains("www-authenticate"),
            "{out}"
        );
    }
    // Plain HTTP to the TLS port gets no HTTP answer.
    let out = common::get(addr, "/metrics", &[]);
    assert_ne!(out.status, 200, "{}", out.headers);
}
