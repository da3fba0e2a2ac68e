//! `dualperf exporter`: the Prometheus exporter (crate `exporter`). Reads the options,
//! loads the configuration and web configuration, listens, and serves until killed.

use anyhow::Context;
use clap::Args;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ExporterArgs {
    /// Address to listen on [default: the configuration's `listen`, else 127.0.0.1:9531].
    /// Port 0 picks a free port (printed).
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// Modules, allowed targets and limits (TOML; see docs/guide/monitoring.md)
    /// [default: the built-in modules, loopback targets only].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// TLS and basic auth, with the keys of Prometheus' exporter web configuration
    /// (tls_server_config, basic_auth_users with bcrypt hashes), in TOML.
    #[arg(long, value_name = "FILE")]
    web_config: Option<PathBuf>,
    /// Also store every probe in this results database (SQLite file or PostgreSQL URL):
    /// runs of a campaign "monitoring MODULE", one cell per family, seen by
    /// `dualperf report` and `export`.
    #[arg(long, value_name = "FILE|URL", value_parser = crate::args::db_target_parser())]
    db: Option<store::DbTarget>,
}

pub fn main(a: ExporterArgs) -> anyhow::Result<ExitCode> {
    let config = match &a.config {
        Some(p) => exporter::Config::load(p)?,
        None => exporter::Config::default(),
    };
    let web = match &a.web_config {
        Some(p) => exporter::WebConfig::load(p)?,
        None => exporter::WebConfig::none(),
    };
    let archive = match &a.db {
        None => None,
        Some(db) => {
            if let Some(path) = db.sqlite_path() {
                crate::args::check_database_file(path, true)?;
            }
            Some(exporter::archive::Archive::open(db)?)
        }
    };
    let listen = a.listen.clone().unwrap_or_else(|| config.listen.clone());
    let addr: SocketAddr = listen
        .to_socket_addrs()
        .ok()
        .and_then(|mut it| it.next())
        .with_context(|| {
            format!("--listen '{listen}' is not an address with a port (e.g. 127.0.0.1:9531 or [::]:9531)")
        })?;
    if !addr.ip().is_loopback() && (web.tls.is_none() || web.auth.is_none()) {
        eprintln!(
            "warning: listening on {addr} without TLS and basic auth: anyone who reaches it can start probes of the allowed targets (see --web-config)"
        );
    }
    let scheme = if web.tls.is_some() { "https" } else { "http" };
    let modules: Vec<String> = config.modules.keys().cloned().collect();
    let running = exporter::start_with_archive(
        config,
        web,
        addr,
        exporter::ServerOptions::default(),
        archive,
    )?;
    // One line on stdout a supervisor (or a test) can read for the address.
    outln!(
        "dualperf exporter listening on {scheme}://{}/ (modules: {})",
        running.local_addr(),
        modules.join(", ")
    )?;
    running.wait();
    Ok(ExitCode::SUCCESS)
}
