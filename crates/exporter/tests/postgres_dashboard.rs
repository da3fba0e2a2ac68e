//! `--db postgres://…`: probes stored in a throwaway PostgreSQL cluster (the store tests'
//! helper), and every SQL query of the shipped Grafana dashboard for the `run_results`
//! view run against it. Skipped, saying why, where PostgreSQL is not installed (never
//! under CI: the helper then fails).

mod common;

use common::*;
use engine::EmbeddedServer;
use std::path::Path;

/// The dashboard's SQL with Grafana's macros and variables given values.
fn dashboard_sql(module: &str, target: &str) -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../monitoring/grafana/dualperf-postgres.json");
    let dash: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = Vec::new();
    for p in dash["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            out.push((
                p["title"].as_str().unwrap().to_string(),
                t["rawSql"].as_str().unwrap().to_string(),
            ));
        }
    }
    for v in dash["templating"]["list"].as_array().unwrap() {
        if v["type"] == "query" {
            out.push((
                format!("variable {}", v["name"]),
                v["query"].as_str().unwrap().to_string(),
            ));
        }
    }
    out.into_iter()
        .map(|(title, sql)| {
            let sql = sql
                .replace(
                    "$__unixEpochFilter(started_unix_s)",
                    "started_unix_s >= 0 AND started_unix_s <= 4102444800",
                )
                .replace("$module", module)
                .replace("$target", target);
            assert!(!sql.contains('$'), "an unknown dashboard macro in {sql}");
            (title, sql)
        })
        .collect()
}

#[test]
fn the_postgres_dashboard_queries_run_on_stored_probes() {
    let Some(cluster) =
        testkit::pg::Cluster::start_or_skip("the_postgres_dashboard_queries_run_on_stored_probes")
    else {
        return;
    };
    let url = cluster.create_db("monitoring");
    let srv = EmbeddedServer::start().unwrap();
    let archive = exporter::archive::Archive::open(&store::DbTarget::parse(url.as_ref())).unwrap();
    let cfg = exporter::Config::from_toml_str(&config_text(""), Path::new("t")).unwrap();
    let ex = exporter::start_with_archive(
        cfg,
        exporter::WebConfig::none(),
        "127.0.0.1:0".parse().unwrap(),
        exporter::ServerOptions::default(),
        Some(archive),
    )
    .unwrap();
    let target = format!("{DUAL_NAME}:{}", srv.port());
    for module in ["tcp_short", "udp_rr_short", "tcp_short"] {
        let r = get(
            ex.local_addr(),
            &format!("/probe?target={target}&module={module}"),
            &[],
        );
        assert_eq!(r.status, 200, "{}", r.body);
    }
    drop(ex);
    for (module, target) in [("%", "%"), ("tcp_short", target.as_str())] {
        for (title, sql) in dashboard_sql(module, target) {
            // psql fails the test on any SQL error; every panel has rows to show.
            let rows = cluster.psql("monitoring", &sql);
            if title.contains("Loss") {
                continue; // TCP and RR probes have no loss figure
            }
            if title.contains("RTT") && module == "tcp_short" {
                continue;
            }
            if title.contains("ratio") && !srv.has_ipv6() {
                continue;
            }
            assert!(!rows.is_empty(), "{title}: no rows from\n{sql}");
        }
    }
    // Each family's throughput of both tcp_short probes is in the view.
    let rows = cluster.psql(
        "monitoring",
        "SELECT count(*) FROM run_results WHERE metric = 'throughput_bps' AND campaign_label = 'monitoring tcp_short'",
    );
    assert_eq!(rows, if srv.has_ipv6() { "4" } else { "2" });
}
