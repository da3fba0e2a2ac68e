//! dualperf-exporter: a Prometheus exporter in the multi-target pattern of
//! blackbox_exporter. `GET /probe?target=HOST[:PORT]&module=NAME` runs the module's test
//! against a `dualperf server` over IPv4 and IPv6 in turn (the order alternating between
//! probes of a target) and answers per family with the test's figures, `probe_success`,
//! `probe_duration_seconds`, a failure reason, and the IPv6/IPv4 ratio of the headline
//! figure. `GET /metrics` gives the exporter's own metrics.
//!
//! - [`config`]: modules (TOML), the allow-list and limits; a module's test is resolved by
//!   runner as `dualperf run`'s is ([`config::module_run`]).
//! - [`target`]: target parsing, the allow-list, A/AAAA resolution.
//! - [`probe`]: the probe itself: each family a campaign of one test on a runner
//!   `Target`, as `dualperf run` makes (no second measurement or retry path).
//! - [`exposition`]: the probe's metrics and the exposition formats.
//! - [`gate`]: no overlapping probes per target (the addresses connected), limits per
//!   scrape client and in total, the family order.
//! - [`conns`]: connections open at once, per client and in total.
//! - [`archive`]: `--db`, each probe stored as runs of runner's monitoring campaign of
//!   its module.
//! - [`server`]: HTTP. [`webconfig`]: TLS and basic auth. `own`: the exporter's metrics.
//!
//! Crates, and why:
//! - **hyper 1.x** (with hyper-util) for HTTP/1.1: the HTTP implementation under most of
//!   the Rust ecosystem, kept by the tokio project; it has the limits an exposed server
//!   needs (header read timeout, buffer size, graceful connection shutdown). It runs on
//!   a one-thread tokio runtime (tokio is already in the build through the PostgreSQL
//!   client); the engine is blocking, so probes run on the runtime's blocking pool.
//!   axum would add routing for three paths. tiny_http was not chosen: its TLS is on an
//!   old rustls, and it has no header read timeout against slow clients.
//! - **native-tls** (through tokio-native-tls) for TLS: the TLS the store's PostgreSQL
//!   client already links (OpenSSL on Linux, the system's TLS on Windows and macOS), so
//!   no second TLS stack or C build. It cannot verify client certificates; the web
//!   configuration refuses those keys.
//! - **prometheus-client** (the Prometheus project's Rust client) for exposition:
//!   OpenMetrics text, converted to the Prometheus text format 0.0.4 when the scraper
//!   does not ask for OpenMetrics (promtool and curl read 0.0.4).
//! - **bcrypt** for `basic_auth_users` hashes, as exporter-toolkit's web configuration.
//! - **ipnet** for the allow-list's CIDRs; **form_urlencoded** for the query string.
#![forbid(unsafe_code)]

pub mod archive;
pub mod config;
pub mod conns;
pub mod exposition;
pub mod gate;
mod own;
pub mod probe;
pub mod server;
pub mod target;
pub mod webconfig;

pub use config::{Config, ConfigError, DEFAULT_LISTEN};
pub use server::{start, start_with_archive, Running, ServerError, ServerOptions};
pub use webconfig::{WebConfig, WebConfigError};
