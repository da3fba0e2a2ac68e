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

/// "100M" / "1.5G" / "800k" / "1000000" → bits/s (SI); "50kpps" / "1000pps" → packets/s.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim().to_ascii_lowercase();
    let bad = || format!("'{s}' is not a rate (e.g. 100M for bit/s, 50kpps for packets/s)");
    let (body, pps) = match t.strip_suffix("pps") {
        Some(b) => (b.to_string(), true),
        None => (
            t.trim_end_matches("bps")
                .trim_end_matches("bit/s")
                .to_string(),
            false,
        ),
    };
    let (num, mult) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1e3),
        Some('m') => (&body[..body.len() - 1], 1e6),
        Some('g') => (&body[..body.len() - 1], 1e9),
        _ => (&body[..], 1.0),
    };
    let v: f64 = num.parse().map_err(|_| bad())?;
    if !(v.is_finite() && v > 0.0) {
        return Err(bad());
    }
    let v = (v * mult).round() as u64;
    Ok(if pps {
        Rate::PacketsPerSec(v)
    } else {
        Rate::BitsPerSec(v)
    })
}

/// `--lab` / `--topology`: p2p or client-server.
pub fn parse_topology(s: &str) -> Result<lab::Topology, String> {
    s.parse().map_err(|e: lab::LabError| e.to_string())
}

/// `--lab-rate` / `lab up --rate`: a tbf rate in bits per second.
pub fn parse_lab_rate(s: &str) -> Result<u64, String> {
    lab::parse_rate_bps(s).map_err(|e| e.to_string())
}
