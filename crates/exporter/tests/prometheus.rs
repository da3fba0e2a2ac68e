//! A real Prometheus (Debian's `prometheus` package; CI installs it) scrapes the
//! exporter's /probe of a loopback engine server every second; its HTTP API must then
//! hold both families' figures, and every PromQL expression of the shipped Grafana
//! dashboard must run on it. promtool checks the exposition and the shipped rules.
//! Skipped, saying why, only where the `prometheus` binary is absent.

mod common;

use common::*;
use engine::EmbeddedServer;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long Prometheus may take to start and gather samples of both families.
const SAMPLES_DEADLINE: Duration = Duration::from_secs(120);

fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|f| f.is_file())
    })
}

fn monitoring() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../monitoring")
}

/// Kills and reaps the Prometheus process however the test ends.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn promtool(args: &[&str], stdin: Option<&str>) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (installed with prometheus)");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Run an instant query; the parsed `data.result` array, or the API's error.
fn query(prom: std::net::SocketAddr, q: &str) -> Result<Vec<serde_json::Value>, String> {
    let enc: String = form_urlencoded::byte_serialize(q.as_bytes()).collect();
    let r = get(prom, &format!("/api/v1/query?query={enc}"), &[]);
    let v: serde_json::Value =
        serde_json::from_str(&r.body).map_err(|e| format!("{e}: {}", r.body))?;
    if v["status"] != "success" {
        return Err(r.body);
    }
    Ok(v["data"]["result"].as_array().cloned().unwrap_or_default())
}

fn sample_value(s: &serde_json::Value) -> f64 {
    s["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(f64::NAN)
}

/// The dashboard's expressions with Grafana's variables given values.
fn dashboard_exprs() -> Vec<String> {
    let text =
        std::fs::read_to_string(monitoring().join("grafana/dualperf-prometheus.json")).unwrap();
    let dash: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for panel in dash["panels"].as_array().unwrap() {
        for t in panel["targets"].as_array().unwrap() {
            out.push(t["expr"].as_str().unwrap().to_string());
        }
    }
    for v in dash["templating"]["list"].as_array().unwrap() {
        if let Some(q) = v["query"]["query"].as_str() {
            // label_values(...) is Grafana's; its selector is PromQL.
            let inner = q
                .strip_prefix("label_values(")
                .and_then(|r| r.rsplit_once(',').map(|(sel, _)| sel.to_string()))
                .unwrap_or_else(|| q.to_string());
            out.push(inner);
        }
    }
    out.into_iter()
        .map(|e| {
            let e = e
                .replace("$__rate_interval", "30s")
                .replace("$__range", "5m")
                .replace("$target", ".*")
                .replace("$module", ".*");
            assert!(!e.contains('$'), "an unknown dashboard variable in {e}");
            e
        })
        .collect()
}

#[test]
fn a_real_prometheus_scrapes_both_families_and_runs_the_dashboard() {
    let Some(prometheus) = find_in_path("prometheus") else {
        eprintln!("skipped: no `prometheus` binary in PATH (apt-get install prometheus)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let srv = EmbeddedServer::start().unwrap();
    let cfg = format!(
        r#"
setup_allowance = "300ms"
timeout_offset = "100ms"
[hosts]
"{DUAL_NAME}" = ["127.0.0.1", "::1"]
[modules.tcp_quick]
test = "tcp-stream"
duration = "100ms"
"#
    );
    let ex = start_exporter(&cfg, exporter::ServerOptions::default());
    let target = format!("{DUAL_NAME}:{}", srv.port());

    // promtool on the exposition of a probe and of the exporter's own metrics.
    let probe = get(
        ex.local_addr(),
        &format!("/probe?target={target}&module=tcp_quick"),
        &[],
    );
    assert_eq!(probe.status, 200, "{}", probe.body);
    let (ok, out) = promtool(&["check", "metrics"], Some(&probe.body));
    assert!(
        ok,
        "promtool check metrics on /probe: {out}\n{}",
        probe.body
    );
    let own = get(ex.local_addr(), "/metrics", &[]);
    let (ok, out) = promtool(&["check", "metrics"], Some(&own.body));
    assert!(
        ok,
        "promtool check metrics on /metrics: {out}\n{}",
        own.body
    );
    // The shipped rules, their unit tests and the example configuration.
    let m = monitoring();
    let p = |rel: &str| m.join(rel).to_string_lossy().into_owned();
    for args in [
        ["check", "rules", &p("prometheus/alerts.yml")],
        ["test", "rules", &p("prometheus/alerts_test.yml")],
        ["check", "config", &p("prometheus/prometheus.yml")],
    ] {
        let (ok, out) = promtool(&args, None);
        assert!(ok, "promtool {args:?}: {out}");
    }

    // Prometheus on a free loopback port, scraping /probe every second with the
    // relabelling of the shipped example.
    let port = closed_port();
    let prom_addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let config = format!(
        r#"
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - {rules}
scrape_configs:
  - job_name: dualperf_tcp_quick
    metrics_path: /probe
    params:
      module: [tcp_quick]
    static_configs:
      - targets: ["{target}"]
    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - source_labels: [__param_module]
        target_label: module
      - target_label: __address__
        replacement: "{exporter}"
  - job_name: dualperf_exporter
    static_configs:
      - targets: ["{exporter}"]
"#,
        rules = p("prometheus/alerts.yml"),
        exporter = ex.local_addr(),
    );
    let config_path = dir.path().join("prometheus.yml");
    std::fs::write(&config_path, config).unwrap();
    let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
    let child = Command::new(prometheus)
        .arg(format!("--config.file={}", config_path.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address={prom_addr}"))
        .arg("--log.level=warn")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let mut prom = Reaped(child);

    // Wait (bounded) for a successful probe of each family.
    let t0 = Instant::now();
    let success = loop {
        if let Ok(Some(status)) = prom.0.try_wait() {
            let log =
                std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default();
            panic!("prometheus exited ({status}): {log}");
        }
        let up = std::net::TcpStream::connect(prom_addr).is_ok();
        // Any success of each family in the last minute: on a loaded machine a scrape may
        // run out of its 1 s, and the family order alternates.
        let r = up
            .then(|| {
                query(
                    prom_addr,
                    r#"max_over_time(probe_success{job="dualperf_tcp_quick"}[1m]) == 1"#,
                )
                .ok()
            })
            .flatten()
            .unwrap_or_default();
        let ratio_seen = !srv.has_ipv6()
            || (up
                && query(
                    prom_addr,
                    "max_over_time(dualperf_probe_ipv6_to_ipv4_ratio[1m])",
                )
                .is_ok_and(|v| !v.is_empty()));
        if (r.len() == 2 || (!srv.has_ipv6() && r.len() == 1)) && ratio_seen {
            break r;
        }
        if t0.elapsed() > SAMPLES_DEADLINE {
            let log =
                std::fs::read_to_string(dir.path().join("prometheus.log")).unwrap_or_default();
            let targets = if up {
                get(prom_addr, "/api/v1/targets", &[]).body
            } else {
                "(Prometheus not listening)".into()
            };
            panic!("no successful probe of both families within {SAMPLES_DEADLINE:?}: {r:?}\n{targets}\n{log}");
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let fams: Vec<&str> = success
        .iter()
        .map(|s| s["metric"]["family"].as_str().unwrap_or(""))
        .collect();
    assert!(fams.contains(&"ipv4"), "{success:?}");
    assert!(!srv.has_ipv6() || fams.contains(&"ipv6"), "{success:?}");
    let tput = query(
        prom_addr,
        r#"max_over_time(dualperf_probe_throughput_bytes_per_second{job="dualperf_tcp_quick"}[1m])"#,
    )
    .unwrap();
    assert_eq!(tput.len(), fams.len(), "{tput:?}");
    for s in &tput {
        assert!(sample_value(s) > 0.0, "{s:?}");
        assert_eq!(s["metric"]["instance"], target.as_str(), "{s:?}");
        assert_eq!(s["metric"]["module"], "tcp_quick", "{s:?}");
    }
    if srv.has_ipv6() {
        // The ratio may come from a later scrape than the throughputs read: check it is
        // present and positive, its arithmetic is checked against one exposition in
        // probe_http.rs.
        let ratio = query(
            prom_addr,
            "max_over_time(dualperf_probe_ipv6_to_ipv4_ratio[1m])",
        )
        .unwrap();
        assert_eq!(ratio.len(), 1, "{ratio:?}");
        assert!(sample_value(&ratio[0]) > 0.0, "{ratio:?}");
    }
    // Every expression of the dashboard parses and runs.
    let exprs = dashboard_exprs();
    assert!(exprs.len() >= 10, "{exprs:?}");
    for e in &exprs {
        if let Err(err) = query(prom_addr, e) {
            panic!("dashboard expression failed: {e}\n{err}");
        }
    }
    // The exporter's own metrics are scraped too: a job of its own, whose first
    // scrape may come later (or time out once) on a loaded machine, so wait for it
    // within the same bound.
    let probes = loop {
        let v = query(prom_addr, "sum(dualperf_exporter_probes_total)").unwrap_or_default();
        if !v.is_empty() {
            break v;
        }
        assert!(
            t0.elapsed() < SAMPLES_DEADLINE * 2,
            "the exporter's own metrics were never scraped"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(sample_value(&probes[0]) >= 1.0, "{probes:?}");
    drop(prom);
    drop(ex);
}
