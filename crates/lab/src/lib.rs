//! dualperf-lab: Linux network-namespace testbeds (the only crate that runs `ip` / `tc`).
//!
//! A lab is a set of network namespaces named `dpl-NAME-client`, `dpl-NAME-server` and,
//! for the client-server topology, `dpl-NAME-router`, joined by veth pairs that are
//! created directly inside the namespaces (nothing is ever added to the root namespace).
//! Each host gets a private IPv4 address (10.231.x.0/24) and an IPv6 ULA (fd00:231:x::/64,
//! `nodad`), loopback is up everywhere, and `--rate` shapes each host's egress with tbf.
//!
//! Modules: `plan` (pure: names, addresses and the list of setup steps), `exec` (running
//! `ip` / `tc`, root check), `lab` (the [`Lab`] handle: create, describe, teardown, list),
//! `ns` ([`enter_ns`], [`spawn_in_ns`], processes inside a namespace) and `guard` (the
//! registry of live labs torn down on SIGINT/SIGTERM, stale temporary labs).

mod exec;
mod guard;
mod lab;
mod ns;
mod path;
mod plan;

pub use exec::check_privileges;
pub use guard::{cleanup_stale, disable_signal_guard, install_signal_guard, teardown_all_live};
pub use lab::{destroy, list_labs, Lab, LabInfo};
pub use ns::{enter_ns, own_process_group, shell_exit_code, spawn_in_ns};
pub use path::{PathDrop, PathDrops, PathSpec, MAX_PATH_MTU, MIN_PATH_MTU, NFT_TABLE};
pub use plan::{ns_name, Role, NS_PREFIX};

use std::fmt;
use std::str::FromStr;

/// Everything that can go wrong while building, using or removing a lab.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("dualperf labs need Linux network namespaces; this is {0} (run `dualperf lab` and --lab on a Linux host)")]
    Unsupported(&'static str),
    #[error("dualperf lab needs root (CAP_NET_ADMIN) to create network namespaces; run it as root or with sudo")]
    NotRoot,
    #[error("the `{0}` command was not found; install iproute2 (e.g. `apt-get install iproute2`)")]
    ToolMissing(&'static str),
    #[error("invalid lab name {name:?}: {reason}")]
    InvalidName { name: String, reason: &'static str },
    #[error("a lab named {name:?} already exists (namespace {ns}); pick another --name or remove it with `dualperf lab down {name}`")]
    Exists { name: String, ns: String },
    #[error("no lab named {0:?} (see `dualperf lab list`)")]
    NotFound(String),
    #[error("invalid rate {input:?}: {reason}")]
    InvalidRate { input: String, reason: &'static str },
    #[error("invalid MTU {mtu_bytes}: {reason}")]
    InvalidMtu {
        mtu_bytes: u32,
        reason: &'static str,
    },
    #[error("invalid topology {0:?}: expected p2p or client-server (alias routed)")]
    InvalidTopology(String),
    #[error("invalid path MTU {mtu_bytes}: {reason}")]
    InvalidPathMtu { mtu_bytes: u32, reason: String },
    #[error("unknown drop rule {0:?}: expected icmp-too-big, fragments, hop-by-hop, dest-opts")]
    InvalidDrop(String),
    #[error("a path MTU and drop rules act on the router: they need the client-server (routed) topology, not {0}")]
    PathNeedsRouter(Topology),
    #[error("the `nft` command was not found; the lab's drop rules are nftables rules: install Debian's nftables package (`apt-get install nftables`)")]
    NftMissing,
    #[error("`{cmd}` failed: {stderr}")]
    Command { cmd: String, stderr: String },
    #[error("IPv6 is not available in namespace {ns} ({detail}); dualperf labs are dual-stack and need IPv6 enabled in the kernel")]
    Ipv6Unavailable { ns: String, detail: String },
    #[error("cannot enter network namespace {ns}: {source}")]
    EnterNs { ns: String, source: std::io::Error },
    #[error("cannot start {program} in namespace {ns}: {source}")]
    Spawn {
        program: String,
        ns: String,
        source: std::io::Error,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("lab setup interrupted (the process is shutting down)")]
    ShuttingDown,
    #[error("teardown of lab {name:?} failed: {errors}")]
    Teardown { name: String, errors: String },
    #[error("injected failure at setup step {0} (test hook)")]
    Injected(usize),
    #[error("{0}")]
    Emulation(String),
}

/// The shape of the testbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Topology {
    /// Two hosts on one link (the studies' peer-to-peer setup).
    P2p,
    /// Client and server on two links joined by a forwarding router (the access point);
    /// `routed` is another name for it. Its router can narrow the path MTU and drop
    /// packets ([`PathSpec`], [`Lab::create_with_path`]).
    ClientServer,
}

impl Topology {
    pub const ALL: [Topology; 2] = [Topology::P2p, Topology::ClientServer];

    /// The name as users type it.
    pub fn name(self) -> &'static str {
        match self {
            Topology::P2p => "p2p",
            Topology::ClientServer => "client-server",
        }
    }
}

impl LabError {
    /// Labs on a system without Linux network namespaces.
    pub fn unsupported() -> LabError {
        LabError::Unsupported(match std::env::consts::OS {
            "windows" => "Windows",
            "macos" => "macOS",
            "freebsd" => "FreeBSD",
            other => other,
        })
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Topology {
    type Err = LabError;
    fn from_str(s: &str) -> Result<Topology, LabError> {
        match s.to_ascii_lowercase().as_str() {
            "p2p" | "peer-to-peer" | "peer-peer" => Ok(Topology::P2p),
            "client-server" | "cs" | "router" | "routed" => Ok(Topology::ClientServer),
            _ => Err(LabError::InvalidTopology(s.to_string())),
        }
    }
}

/// What to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabSpec {
    /// Lab name: 1–32 characters of `[A-Za-z0-9_-]`, starting with a letter or digit.
    pub name: String,
    pub topology: Topology,
    /// tbf rate on each host's egress; `None` = unshaped.
    pub rate_bps: Option<u64>,
    /// MTU of every veth; `None` = the kernel default (1500).
    pub mtu: Option<u32>,
}

/// A link emulated by shaping: tbf at `rate_bps` with `overhead_bytes` added to every
/// packet's length (tc-tbf `overhead`), e.g. an 802.11 link whose fixed airtime per
/// frame becomes bytes at the PHY rate (see dualperf-model's `wifi::emulation`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkEmulation {
    /// The link's name as the user gave it (`802.11g:54`).
    pub link: String,
    pub rate_bps: u64,
    pub overhead_bytes: u32,
    /// What the per-packet overhead stands for.
    pub overhead_covers: String,
    /// What the emulation does not reproduce.
    pub leaves_out: String,
    /// For 802.11n/ac/ax: the MPDUs per A-MPDU the overhead was sized for (the report's
    /// airtime model needs it); `None` for other links.
    pub ampdu: Option<u32>,
}

impl LinkEmulation {
    /// The tbf rate and per-packet overhead that stand for `link` on veths of `mtu`
    /// bytes (default 1500): for 802.11 the airtime model's fixed airtime per packet
    /// under its default assumptions and `ampdu` MPDUs per A-MPDU (n/ac/ax; default 1),
    /// see `model::wifi::emulation`; for `ethernet:RATE` the FCS, preamble and gap;
    /// `tbf:RATE` nothing.
    pub fn of(
        link: &model::Link,
        mtu: Option<u32>,
        ampdu: Option<u32>,
    ) -> Result<LinkEmulation, LabError> {
        use model::wifi::{emulation::tbf_emulation, emulation::LEAVES_OUT, Assumptions};
        use model::{Link, LinkModel};
        let name = link.to_string();
        Ok(match *link {
            Link::Wifi(phy) => {
                let a = Assumptions {
                    mtu_bytes: mtu.unwrap_or(1500),
                    ampdu: ampdu.unwrap_or(1),
                    ..Assumptions::default()
                };
                let t = tbf_emulation(&phy, &a)
                    .map_err(|e| LabError::Emulation(format!("emulating {name}: {e}")))?;
                LinkEmulation {
                    link: name,
                    rate_bps: t.rate_bps,
                    overhead_bytes: t.overhead_bytes,
                    overhead_covers: format!(
                        "{} ({:.1} µs per packet over {} packet(s) per access: contention with {} \
                         and the mean backoff, preamble, SIFS and ACK at the basic rate) and 802.11 \
                         framing beyond the Ethernet header (MAC header, FCS, LLC/SNAP)",
                        phy.describe(),
                        t.fixed_ns_per_packet / 1000.0,
                        t.packets_per_access,
                        a.access_for(&phy).name()
                    ),
                    leaves_out: LEAVES_OUT.to_string(),
                    ampdu: phy.is_high_throughput().then_some(a.ampdu),
                }
            }
            _ if ampdu.is_some() => {
                return Err(LabError::Emulation(format!(
                    "an A-MPDU length applies to 802.11n, ac and ax links, not {name}"
                )))
            }
            Link::Ethernet {
                rate_bps: Some(rate_bps),
            } => LinkEmulation {
                link: name,
                rate_bps,
                // Line bytes beyond what tbf counts on a veth (the 14-byte header).
                overhead_bytes: LinkModel::Ethernet.line_bytes(1500)
                    - LinkModel::TbfVeth.line_bytes(1500),
                overhead_covers: "Ethernet FCS, preamble and inter-frame gap".to_string(),
                leaves_out: "the 64-byte minimum frame".to_string(),
                ampdu: None,
            },
            Link::Tbf { rate_bps } => LinkEmulation {
                link: name,
                rate_bps,
                overhead_bytes: 0,
                overhead_covers: "nothing".to_string(),
                leaves_out: "nothing".to_string(),
                ampdu: None,
            },
            Link::Ethernet { rate_bps: None } => {
                return Err(LabError::Emulation(
                    "an ethernet link needs a rate to emulate, e.g. ethernet:1G".to_string(),
                ))
            }
            Link::Loopback => {
                return Err(LabError::Emulation(
                    "loopback has nothing to emulate; leave the link out".to_string(),
                ))
            }
        })
    }
}

impl LabSpec {
    /// A spec with a process-unique temporary name (`tmpPID-N`) that
    /// [`cleanup_stale`] removes once this process is gone.
    pub fn temporary(topology: Topology) -> LabSpec {
        LabSpec {
            name: guard::temporary_name(),
            topology,
            rate_bps: None,
            mtu: None,
        }
    }
}

/// Checks a lab name (it becomes part of namespace names).
pub fn validate_name(name: &str) -> Result<(), LabError> {
    let bad = |reason| {
        Err(LabError::InvalidName {
            name: name.to_string(),
            reason,
        })
    };
    if name.is_empty() || name.len() > 32 {
        return bad("use 1 to 32 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return bad("use only letters, digits, '-' and '_'");
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return bad("start with a letter or digit");
    }
    Ok(())
}

/// Checks that a shaping rate (parsed by `wire::quantity::parse_bit_rate`, the one
/// grammar for rates) is one tc can apply: at least 1 kbit/s, at most 4 Tbit/s.
pub fn check_rate_bps(rate_bps: u64) -> Result<u64, LabError> {
    let bad = |reason| {
        Err(LabError::InvalidRate {
            input: wire::quantity::format_bit_rate(rate_bps),
            reason,
        })
    };
    if rate_bps < 1000 {
        return bad("a shaped link needs at least 1kbit");
    }
    if rate_bps > 4_000_000_000_000 {
        return bad("larger than tc can shape (4 Tbit/s)");
    }
    Ok(rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shaping_rates_outside_what_tc_can_apply_are_refused() {
        assert_eq!(check_rate_bps(100_000_000).unwrap(), 100_000_000);
        assert_eq!(check_rate_bps(1000).unwrap(), 1000);
        let e = check_rate_bps(999).unwrap_err().to_string();
        assert!(e.contains("at least 1kbit"), "{e}");
        assert!(check_rate_bps(5_000_000_000_000).is_err());
    }

    #[test]
    fn an_emulation_records_its_aggregation_and_refuses_what_it_cannot_emulate() {
        let parse = |s: &str| model::link::parse(s).unwrap();
        let g = LinkEmulation::of(&parse("802.11g:54"), None, None).unwrap();
        assert_eq!(
            (g.rate_bps, g.overhead_bytes, g.ampdu),
            (54_000_000, 1155, None)
        );
        let ac = parse("802.11ac:mcs=9,nss=2,width=80,gi=short");
        let one = LinkEmulation::of(&ac, None, None).unwrap();
        let many = LinkEmulation::of(&ac, None, Some(32)).unwrap();
        assert_eq!((one.ampdu, many.ampdu), (Some(1), Some(32)));
        assert!(many.overhead_bytes < one.overhead_bytes, "{many:?}");
        for (link, ampdu, words) in [
            ("loopback", None, "nothing to emulate"),
            ("ethernet", None, "needs a rate"),
            ("tbf:10mbit", Some(4), "802.11n, ac and ax"),
            ("802.11g:54", Some(4), "802.11n, ac or ax"),
        ] {
            let e = LinkEmulation::of(&parse(link), None, ampdu).unwrap_err();
            assert!(e.to_string().contains(words), "{link}: {e}");
        }
    }

    #[test]
    fn names_are_checked() {
        assert!(validate_name("p2p-1").is_ok());
        assert!(validate_name("a_b").is_ok());
        for bad in ["", "-x", "a/b", "a b", "x".repeat(33).as_str(), "ü"] {
            assert!(validate_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn topologies_round_trip() {
        for t in Topology::ALL {
            assert_eq!(t.name().parse::<Topology>().unwrap(), t);
        }
        assert!("star".parse::<Topology>().is_err());
    }
}
