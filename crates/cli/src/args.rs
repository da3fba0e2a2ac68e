//! What several subcommands accept alike: the kind of peer, the pre-shared key file and
//! the value parsers of shared flags. Subcommand modules import from here, never from
//! each other.

use clap::ValueEnum;
use wire::spec::Rate;

/// What kind of server the study talks to.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Peer {
    /// `dualperf server` (every test and metric).
    #[default]
    Dualperf,
    /// An unmodified iperf3 3.x server (`iperf3 -s`): tcp-stream and udp-stream only.
    Iperf3,
}

/// Load `--psk-file` (if given), printing a warning on stderr when others can read it.
pub fn load_psk(path: Option<&std::path::Path>) -> anyhow::Result<Option<wire::auth::Psk>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let key = wire::auth::Psk::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(w) = wire::auth::psk_file_warning(path) {
        eprintln!("warning: {w}");
    }
    Ok(Some(key))
}

// Every quantity flag reads through `wire::quantity`, the one grammar for bytes, rates
// and durations (README "Quantities"); these adapt it to clap's `value_parser`.

/// `-b/--rate`: bits/s (100M, 100mbit) or packets/s (50kpps).
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    wire::quantity::parse_rate(s).map_err(|e| e.to_string())
}

/// A rate that must be bits per second (`--link-rate`, `--max-rate`).
pub fn parse_bit_rate(s: &str) -> Result<u64, String> {
    wire::quantity::parse_bit_rate(s).map_err(|e| e.to_string())
}

/// Socket buffer and payload sizes: 1408, 64K / 64KiB, 4M.
pub fn parse_bytes_u32(s: &str) -> Result<u32, String> {
    wire::quantity::parse_bytes_u32(s).map_err(|e| e.to_string())
}

/// Byte counts kept as 64 bits (study socket options before their range check).
pub fn parse_bytes_u64(s: &str) -> Result<u64, String> {
    wire::quantity::parse_bytes(s).map_err(|e| e.to_string())
}

/// Durations kept as seconds: 10, 10s, 500ms, 2min.
pub fn parse_secs(s: &str) -> Result<f64, String> {
    wire::quantity::parse_duration_s(s).map_err(|e| e.to_string())
}

/// `--lab` / `--topology`: p2p or client-server.
pub fn parse_topology(s: &str) -> Result<lab::Topology, String> {
    s.parse().map_err(|e: lab::LabError| e.to_string())
}

/// `--lab-rate` / `lab up --rate`: a tbf rate in bits per second.
pub fn parse_lab_rate(s: &str) -> Result<u64, String> {
    lab::check_rate_bps(parse_bit_rate(s)?).map_err(|e| e.to_string())
}
