//! What the router of a client-server ("routed") lab does to packets, with no I/O: a
//! narrower path MTU on its link to the server (`--lab-path-mtu`) and drop rules
//! (`--lab-drop`), as `ip route` arguments and an nftables ruleset for `nft -f -`; how
//! that is recorded in the lab's description and read back for `--resume`.
//!
//! The path MTU is a route MTU on the router (`ip route replace SERVER-NET dev dp-rs
//! … mtu N`, both families): forwarded packets toward the server above N get an ICMP
//! fragmentation-needed / ICMPv6 Packet Too Big from the router (RFC 1191, RFC 8201),
//! or are fragmented by it (IPv4 without DF). The veths keep their MTU, so neither host
//! lowers the MSS it advertises (which would hide the narrow hop) and the server's
//! replies are not silently dropped by a veth whose MTU is below their size.

use crate::LabError;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The nftables table the drop rules live in (family `inet`: IPv4 and IPv6).
pub const NFT_TABLE: &str = "dualperf_path";

/// The smallest path MTU a lab accepts: the lab is dual-stack and IPv6 needs 1280
/// (RFC 8200 §5). IPv4 alone would allow 68 (RFC 791), but one route MTU per link serves
/// both families here.
pub const MIN_PATH_MTU: u32 = 1280;
/// The largest (what a veth carries).
pub const MAX_PATH_MTU: u32 = 65535;

/// One class of packets the router drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathDrop {
    /// ICMPv6 Packet Too Big and ICMP fragmentation-needed, the router's own (output
    /// hook) and forwarded ones: a path-MTU black hole.
    IcmpTooBig,
    /// IPv4 fragments (MF set or a non-zero offset) and IPv6 packets with a Fragment
    /// header, forwarded.
    Fragments,
    /// IPv6 packets with a Hop-by-Hop Options header, forwarded.
    HopByHop,
    /// IPv6 packets with a Destination Options header, forwarded.
    DestOpts,
}

impl PathDrop {
    pub const ALL: [PathDrop; 4] = [
        PathDrop::IcmpTooBig,
        PathDrop::Fragments,
        PathDrop::HopByHop,
        PathDrop::DestOpts,
    ];

    /// The name as users type it (`--lab-drop NAME`).
    pub fn name(self) -> &'static str {
        match self {
            PathDrop::IcmpTooBig => "icmp-too-big",
            PathDrop::Fragments => "fragments",
            PathDrop::HopByHop => "hop-by-hop",
            PathDrop::DestOpts => "dest-opts",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }

    /// The nft rules (`(chain, rule)`) that implement the drop.
    pub fn nft_rules(self) -> &'static [(&'static str, &'static str)] {
        match self {
            PathDrop::IcmpTooBig => &[
                ("forward", "icmpv6 type packet-too-big counter drop"),
                (
                    "forward",
                    "icmp type destination-unreachable icmp code frag-needed counter drop",
                ),
                ("output", "icmpv6 type packet-too-big counter drop"),
                (
                    "output",
                    "icmp type destination-unreachable icmp code frag-needed counter drop",
                ),
            ],
            // frag-off holds the flags too: 0x2000 is MF, 0x1fff the offset.
            PathDrop::Fragments => &[
                ("forward", "ip frag-off & 0x3fff != 0 counter drop"),
                ("forward", "exthdr frag exists counter drop"),
            ],
            PathDrop::HopByHop => &[("forward", "exthdr hbh exists counter drop")],
            PathDrop::DestOpts => &[("forward", "exthdr dst exists counter drop")],
        }
    }

    /// What the rule does, in words.
    pub fn describe(self) -> &'static str {
        match self {
            PathDrop::IcmpTooBig => {
                "ICMPv6 Packet Too Big and ICMP fragmentation-needed dropped (a path-MTU black hole)"
            }
            PathDrop::Fragments => "IPv4 fragments and IPv6 Fragment headers dropped",
            PathDrop::HopByHop => "IPv6 Hop-by-Hop Options headers dropped",
            PathDrop::DestOpts => "IPv6 Destination Options headers dropped",
        }
    }
}

impl fmt::Display for PathDrop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PathDrop {
    type Err = LabError;
    fn from_str(s: &str) -> Result<PathDrop, LabError> {
        PathDrop::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| LabError::InvalidDrop(s.to_string()))
    }
}

/// A set of [`PathDrop`]s (small and `Copy`, so requests carrying it stay `Copy`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PathDrops(u8);

impl PathDrops {
    pub fn insert(&mut self, d: PathDrop) {
        self.0 |= d.bit();
    }

    pub fn contains(self, d: PathDrop) -> bool {
        self.0 & d.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = PathDrop> {
        PathDrop::ALL.into_iter().filter(move |d| self.contains(*d))
    }
}

impl FromIterator<PathDrop> for PathDrops {
    fn from_iter<I: IntoIterator<Item = PathDrop>>(iter: I) -> PathDrops {
        let mut s = PathDrops::default();
        for d in iter {
            s.insert(d);
        }
        s
    }
}

/// `icmp-too-big,fragments`, or `none`.
impl fmt::Display for PathDrops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("none");
        }
        let names: Vec<&str> = self.iter().map(PathDrop::name).collect();
        f.write_str(&names.join(","))
    }
}

/// Reads the [`fmt::Display`] form back (`none` or a comma-separated list).
impl FromStr for PathDrops {
    type Err = LabError;
    fn from_str(s: &str) -> Result<PathDrops, LabError> {
        if s.trim().eq_ignore_ascii_case("none") || s.trim().is_empty() {
            return Ok(PathDrops::default());
        }
        s.split(',').map(str::parse).collect()
    }
}

/// What the router does to the path: the routed lab's options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PathSpec {
    /// Route MTU on the router's link toward the server, bytes; `None` = the links' MTU.
    pub mtu_bytes: Option<u32>,
    pub drops: PathDrops,
}

/// Description keys (see [`PathSpec::describe_into`]).
pub const KEY_PATH_MTU: &str = "lab.path_mtu_bytes";
pub const KEY_DROPS: &str = "lab.path_drops";
pub const KEY_RULES: &str = "lab.path_rules";
pub const KEY_PATH: &str = "lab.path";

impl PathSpec {
    /// True when the router does nothing beyond forwarding.
    pub fn is_plain(&self) -> bool {
        self.mtu_bytes.is_none() && self.drops.is_empty()
    }

    /// Checks the path MTU against the range and the links' MTU (`link_mtu`).
    pub fn check(&self, link_mtu: u32) -> Result<(), LabError> {
        let Some(mtu_bytes) = self.mtu_bytes else {
            return Ok(());
        };
        let bad = |reason: String| Err(LabError::InvalidPathMtu { mtu_bytes, reason });
        if mtu_bytes < MIN_PATH_MTU {
            return bad(format!(
                "the lab is dual-stack and IPv6 needs at least {MIN_PATH_MTU} bytes (RFC 8200)"
            ));
        }
        if mtu_bytes > MAX_PATH_MTU {
            return bad(format!("a veth carries at most {MAX_PATH_MTU} bytes"));
        }
        if mtu_bytes > link_mtu {
            return bad(format!(
                "larger than the links' MTU {link_mtu}, so nothing would narrow; raise --lab-mtu or lower the path MTU"
            ));
        }
        Ok(())
    }

    /// The nftables ruleset for the router (`nft -f -`), or `None` without drops.
    pub fn nft_ruleset(&self) -> Option<String> {
        if self.drops.is_empty() {
            return None;
        }
        let mut out = format!("table inet {NFT_TABLE} {{\n");
        for chain in ["forward", "output"] {
            let rules: Vec<&str> = self
                .drops
                .iter()
                .flat_map(|d| d.nft_rules().iter())
                .filter(|(c, _)| *c == chain)
                .map(|(_, r)| *r)
                .collect();
            if rules.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "  chain {chain} {{\n    type filter hook {chain} priority filter; policy accept;\n"
            ));
            for r in rules {
                out.push_str(&format!("    {r}\n"));
            }
            out.push_str("  }\n");
        }
        out.push_str("}\n");
        Some(out)
    }

    /// Adds the `lab.path*` keys: the path MTU (absent when not narrowed), the drops
    /// (`none` or the list), the ruleset on one line, and a sentence.
    pub fn describe_into(&self, m: &mut BTreeMap<String, String>, router_ns: &str) {
        if let Some(mtu) = self.mtu_bytes {
            m.insert(KEY_PATH_MTU.into(), mtu.to_string());
        }
        m.insert(KEY_DROPS.into(), self.drops.to_string());
        if let Some(rules) = self.nft_ruleset() {
            let one_line: Vec<&str> = rules.lines().map(str::trim).collect();
            m.insert(KEY_RULES.into(), one_line.join(" "));
        }
        let mut words = Vec::new();
        if let Some(mtu) = self.mtu_bytes {
            words.push(format!(
                "path MTU {mtu} B from client to server (route MTU on the router's link to the server)"
            ));
        }
        words.extend(self.drops.iter().map(|d| d.describe().to_string()));
        if words.is_empty() {
            words.push("plain forwarding".to_string());
        }
        m.insert(
            KEY_PATH.into(),
            format!("router {router_ns}: {}", words.join("; ")),
        );
    }

    /// The spec a lab description (campaign metadata) records; missing keys mean a lab
    /// from before these options: nothing narrowed, nothing dropped.
    pub fn from_description(md: &BTreeMap<String, String>) -> Result<PathSpec, LabError> {
        let mtu_bytes = match md.get(KEY_PATH_MTU) {
            None => None,
            Some(v) => Some(v.trim().parse::<u32>().map_err(|e| {
                LabError::Emulation(format!("stored {KEY_PATH_MTU} {v:?} is not a number: {e}"))
            })?),
        };
        let drops = match md.get(KEY_DROPS) {
            None => PathDrops::default(),
            Some(v) => v.parse()?,
        };
        Ok(PathSpec { mtu_bytes, drops })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_drops() -> PathSpec {
        PathSpec {
            mtu_bytes: Some(1280),
            drops: PathDrop::ALL.into_iter().collect(),
        }
    }

    #[test]
    fn drop_names_round_trip_and_unknown_ones_are_refused() {
        for d in PathDrop::ALL {
            assert_eq!(d.name().parse::<PathDrop>().unwrap(), d);
        }
        let e = "fragment".parse::<PathDrop>().unwrap_err().to_string();
        assert!(
            e.contains("icmp-too-big, fragments, hop-by-hop, dest-opts"),
            "{e}"
        );
        let set: PathDrops = "hop-by-hop,icmp-too-big".parse().unwrap();
        assert_eq!(set.to_string(), "icmp-too-big,hop-by-hop");
        assert_eq!("none".parse::<PathDrops>().unwrap(), PathDrops::default());
        assert_eq!(PathDrops::default().to_string(), "none");
    }

    #[test]
    fn the_ruleset_puts_each_drop_in_its_chains() {
        let only_hbh = PathSpec {
            mtu_bytes: None,
            drops: [PathDrop::HopByHop].into_iter().collect(),
        };
        assert_eq!(
            only_hbh.nft_ruleset().unwrap(),
            "table inet dualperf_path {\n  chain forward {\n    type filter hook forward \
             priority filter; policy accept;\n    exthdr hbh exists counter drop\n  }\n}\n"
        );
        let all = all_drops().nft_ruleset().unwrap();
        assert_eq!(all.matches("chain ").count(), 2, "{all}");
        assert_eq!(all.matches("packet-too-big").count(), 2, "{all}");
        assert!(PathSpec::default().nft_ruleset().is_none());
    }

    #[test]
    fn the_description_reads_back_to_the_same_spec() {
        for spec in [PathSpec::default(), all_drops()] {
            let mut m = BTreeMap::new();
            spec.describe_into(&mut m, "dpl-x-router");
            assert_eq!(PathSpec::from_description(&m).unwrap(), spec, "{m:?}");
        }
        let mut m = BTreeMap::new();
        all_drops().describe_into(&mut m, "dpl-x-router");
        assert!(
            m[KEY_PATH].starts_with("router dpl-x-router: path MTU 1280 B"),
            "{m:?}"
        );
        assert!(!m[KEY_RULES].contains('\n'));
        // A campaign recorded before these options: plain forwarding.
        assert_eq!(
            PathSpec::from_description(&BTreeMap::new()).unwrap(),
            PathSpec::default()
        );
        m.insert(KEY_DROPS.into(), "everything".into());
        assert!(PathSpec::from_description(&m).is_err());
    }

    #[test]
    fn path_mtus_outside_the_range_or_above_the_links_are_refused() {
        let with = |mtu| PathSpec {
            mtu_bytes: Some(mtu),
            drops: PathDrops::default(),
        };
        assert!(with(1280).check(1500).is_ok());
        assert!(with(9000).check(9000).is_ok());
        for (mtu, link, words) in [
            (1279, 1500, "IPv6 needs at least 1280"),
            (70000, 70000, "at most 65535"),
            (1501, 1500, "larger than the links' MTU 1500"),
        ] {
            let e = with(mtu).check(link).unwrap_err().to_string();
            assert!(e.contains(words), "{mtu}: {e}");
        }
    }
}
