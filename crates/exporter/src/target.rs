//! Targets: the `target=HOST[:PORT]` a scrape names, the allow-list it must pass, and its
//! resolution to one IPv4 and one IPv6 address (A and AAAA).

use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use wire::spec::Family;

/// Longest host name (RFC 1035 §2.3.4: 255 octets on the wire, 253 as text).
pub const MAX_HOST_CHARS: usize = 253;

/// Why a scrape's `target` is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("the target is empty: give target=HOST or target=HOST:PORT")]
    Empty,
    #[error(
        "the target is {chars} characters long; a host name has at most {}",
        MAX_HOST_CHARS
    )]
    TooLong { chars: usize },
    #[error("target '{target}': '[' without ']'")]
    UnclosedBracket { target: String },
    #[error("target '{target}': '{inside}' is not an IPv6 address")]
    NotIpv6 { target: String, inside: String },
    #[error("target '{target}': expected ':PORT' after the bracketed address")]
    AfterBracket { target: String },
    #[error(
        "target '{target}': '{port}' is not a port (1-65535); IPv6 addresses with a port go \
         in brackets: [2001:db8::1]:5301"
    )]
    BadPort { target: String, port: String },
    #[error(
        "target '{target}': '{host}' is neither an IP address nor a host name (letters, \
         digits, '-' and '.')"
    )]
    BadHost { target: String, host: String },
}

/// Why `allowed_targets` is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowListError {
    #[error("the list is empty: the exporter could probe nothing")]
    Empty,
    #[error("'any' allows every target: give it alone")]
    AnyNotAlone,
    #[error("'{entry}' is not a CIDR (e.g. 10.0.0.0/8, 2001:db8::/32)")]
    BadCidr { entry: String },
    #[error("'{entry}' is neither a host name, an IP address, a CIDR nor 'any'")]
    BadEntry { entry: String },
}

/// Why a target has no address of one family (kept per family in [`Resolved`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoAddress {
    /// The target is an address of the other family.
    #[error("the target is the address {ip}: it has no {}", record(*family))]
    OtherFamily { ip: IpAddr, family: Family },
    /// The name has no record of this family.
    #[error("{host} has no {} record", record(*family))]
    NoRecord { host: String, family: Family },
    /// The name could not be resolved at all.
    #[error("cannot resolve '{host}': {reason}")]
    Unresolved { host: String, reason: String },
}

/// The DNS record that holds a family's address.
fn record(family: Family) -> &'static str {
    match family {
        Family::V4 => "A",
        Family::V6 => "AAAA",
    }
}

/// Why a target is not probed: the allow-list does not cover it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAllowed {
    #[error("target '{host}' is not in allowed_targets and resolves to no address")]
    NoAddress { host: String },
    #[error(
        "target '{host}' ({ip}) is not in allowed_targets; add the host, its address or a \
         CIDR covering it to the exporter's configuration"
    )]
    Address { host: String, ip: IpAddr },
}

/// A target as a scrape names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// A host name (lower case) or an IP address as text, without brackets.
    pub host: String,
    pub port: Option<u16>,
}

impl Target {
    /// `host`, `host:port`, `192.0.2.1:5301`, `[2001:db8::1]:5301`, or a bare IPv6 address.
    pub fn parse(s: &str) -> Result<Target, TargetError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(TargetError::Empty);
        }
        if s.len() > MAX_HOST_CHARS + 8 {
            return Err(TargetError::TooLong { chars: s.len() });
        }
        if let Ok(ip) = s.parse::<Ipv6Addr>() {
            return Ok(Target {
                host: ip.to_string(),
                port: None,
            });
        }
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let (inside, after) = rest
                .split_once(']')
                .ok_or_else(|| TargetError::UnclosedBracket { target: s.into() })?;
            let ip: Ipv6Addr = inside.parse().map_err(|_| TargetError::NotIpv6 {
                target: s.into(),
                inside: inside.into(),
            })?;
            let port = match after {
                "" => None,
                p => Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| TargetError::AfterBracket { target: s.into() })?,
                ),
            };
            (ip.to_string(), port)
        } else {
            match s.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (s.to_string(), None),
            }
        };
        let port = port
            .map(|p| match p.parse::<u16>() {
                Ok(n) if n > 0 => Ok(n),
                _ => Err(TargetError::BadPort {
                    target: s.into(),
                    port: p.into(),
                }),
            })
            .transpose()?;
        if host.parse::<IpAddr>().is_err() && !is_host_name(&host) {
            return Err(TargetError::BadHost {
                target: s.into(),
                host,
            });
        }
        Ok(Target {
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    /// The target's own address, when it is an IP address.
    pub fn ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }

    /// `host:port` as a scrape would write it (an IPv6 address in brackets).
    pub fn with_port(&self, port: u16) -> String {
        match self.ip() {
            Some(IpAddr::V6(_)) => format!("[{}]:{port}", self.host),
            _ => format!("{}:{port}", self.host),
        }
    }
}

fn is_host_name(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= MAX_HOST_CHARS
        && h.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// Which targets the exporter may probe.
#[derive(Debug, Clone, PartialEq)]
pub enum AllowList {
    /// `allowed_targets = ["any"]`: stated explicitly, never a default.
    Any,
    Listed {
        hosts: Vec<String>,
        nets: Vec<IpNet>,
    },
}

impl AllowList {
    /// The default: this host's loopback addresses and `localhost`.
    pub fn loopback() -> AllowList {
        AllowList::Listed {
            hosts: vec!["localhost".into()],
            nets: vec![
                IpNet::new(Ipv4Addr::LOCALHOST.into(), 8).unwrap_or_default(),
                IpNet::new(Ipv6Addr::LOCALHOST.into(), 128).unwrap_or_default(),
            ],
        }
    }

    pub fn is_loopback_only(&self) -> bool {
        *self == AllowList::loopback()
    }

    /// Entries: `any` (alone), host names, IP addresses, CIDRs (`10.0.0.0/8`).
    pub fn parse(entries: &[String]) -> Result<AllowList, AllowListError> {
        if entries.is_empty() {
            return Err(AllowListError::Empty);
        }
        if entries.iter().any(|e| e.trim().eq_ignore_ascii_case("any")) {
            if entries.len() > 1 {
                return Err(AllowListError::AnyNotAlone);
            }
            return Ok(AllowList::Any);
        }
        let (mut hosts, mut nets) = (Vec::new(), Vec::new());
        for e in entries {
            let e = e.trim();
            if let Ok(n) = e.parse::<IpNet>() {
                nets.push(canonical_net(n.trunc()));
            } else if let Ok(ip) = e.parse::<IpAddr>() {
                nets.push(IpNet::from(ip.to_canonical()));
            } else if e.contains('/') {
                return Err(AllowListError::BadCidr { entry: e.into() });
            } else if is_host_name(e) {
                hosts.push(e.to_ascii_lowercase());
            } else {
                return Err(AllowListError::BadEntry { entry: e.into() });
            }
        }
        Ok(AllowList::Listed { hosts, nets })
    }

    /// Whether the list names this host (so any address it resolves to is allowed).
    pub fn allows_name(&self, host: &str) -> bool {
        match self {
            AllowList::Any => true,
            AllowList::Listed { hosts, .. } => hosts.iter().any(|h| h == host),
        }
    }

    /// Whether the list covers this address, taken as the address a connection to it
    /// reaches: an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is its IPv4 address.
    pub fn allows_ip(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        match self {
            AllowList::Any => true,
            AllowList::Listed { nets, .. } => nets.iter().any(|n| n.contains(&ip)),
        }
    }
}

/// An allow-list CIDR inside the IPv4-mapped range (`::ffff:10.0.0.0/104`) as the IPv4
/// network it reaches (`10.0.0.0/8`); any other as written.
fn canonical_net(n: IpNet) -> IpNet {
    match n {
        IpNet::V6(v6) if v6.prefix_len() >= 96 => match v6.addr().to_ipv4_mapped() {
            Some(v4) => IpNet::new(v4.into(), v6.prefix_len() - 96).unwrap_or(n),
            None => n,
        },
        n => n,
    }
}

/// A target's address for each family, or why it has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub v4: Result<IpAddr, NoAddress>,
    pub v6: Result<IpAddr, NoAddress>,
}

impl Resolved {
    pub fn of(&self, f: Family) -> &Result<IpAddr, NoAddress> {
        match f {
            Family::V4 => &self.v4,
            Family::V6 => &self.v6,
        }
    }

    /// The first address of each family among `addrs` (the resolver's order), each as
    /// the address a connection reaches: an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`,
    /// which an IPv6 socket connects to over IPv4) is the IPv4 address.
    pub fn pick(target: &Target, addrs: &[IpAddr]) -> Resolved {
        let first = |family: Family| {
            addrs
                .iter()
                .map(|a| a.to_canonical())
                .find(|a| a.is_ipv4() == (family == Family::V4))
                .ok_or_else(|| match target.ip().map(|a| a.to_canonical()) {
                    Some(ip) => NoAddress::OtherFamily { ip, family },
                    None => NoAddress::NoRecord {
                        host: target.host.clone(),
                        family,
                    },
                })
        };
        Resolved {
            v4: first(Family::V4),
            v6: first(Family::V6),
        }
    }

    /// The socket addresses a probe of `families` connects to, sorted, each once: what
    /// "one probe per target" is keyed by, so that every spelling of a host (`127.1`,
    /// `0x7f.0.1`, `[::ffff:127.0.0.1]`, a name) is one target.
    pub fn endpoints(
        &self,
        families: impl IntoIterator<Item = Family>,
        port: u16,
    ) -> Vec<SocketAddr> {
        let mut out: Vec<SocketAddr> = families
            .into_iter()
            .filter_map(|f| self.of(f).as_ref().ok())
            .map(|ip| SocketAddr::new(*ip, port))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The same reason for both families (the name could not be resolved).
    pub fn neither(why: NoAddress) -> Resolved {
        Resolved {
            v4: Err(why.clone()),
            v6: Err(why),
        }
    }
}

/// Resolve (blocking: getaddrinfo) a target's addresses of both families.
pub fn resolve(target: &Target) -> Result<Resolved, NoAddress> {
    if let Some(ip) = target.ip() {
        return Ok(Resolved::pick(target, &[ip]));
    }
    // net's one resolver: `localhost` is both loopback addresses (RFC 6761 §6.3)
    // whatever /etc/hosts says, as for `run` and `study`.
    let mut addrs: Vec<IpAddr> =
        net::host::addresses(&target.host).map_err(|e| NoAddress::Unresolved {
            host: target.host.clone(),
            reason: e.to_string(),
        })?;
    addrs.truncate(64);
    Ok(Resolved::pick(target, &addrs))
}

/// Refuse a target the allow-list does not cover: its name, or every address a probe
/// would use.
pub fn check_allowed(allow: &AllowList, target: &Target, r: &Resolved) -> Result<(), NotAllowed> {
    if target.ip().is_none() && allow.allows_name(&target.host) {
        return Ok(());
    }
    if r.v4.is_err() && r.v6.is_err() && *allow != AllowList::Any {
        return Err(NotAllowed::NoAddress {
            host: target.host.clone(),
        });
    }
    for ip in [&r.v4, &r.v6].into_iter().flatten() {
        if !allow.allows_ip(*ip) {
            return Err(NotAllowed::Address {
                host: target.host.clone(),
                ip: *ip,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_and_without_port() {
        let t = |s: &str| Target::parse(s).unwrap();
        assert_eq!(t("Host.Example").host, "host.example");
        assert_eq!(t("host.example:5302").port, Some(5302));
        assert_eq!(t("127.0.0.1:5301").host, "127.0.0.1");
        assert_eq!(
            t("[::1]:5301"),
            Target {
                host: "::1".into(),
                port: Some(5301)
            }
        );
        assert_eq!(
            t("[::1]"),
            Target {
                host: "::1".into(),
                port: None
            }
        );
        assert_eq!(
            t("2001:db8::1"),
            Target {
                host: "2001:db8::1".into(),
                port: None
            }
        );
        assert_eq!(t("[::1]").with_port(5301), "[::1]:5301");
        assert_eq!(t("Host.Example").with_port(1), "host.example:1");
    }

    #[test]
    fn malformed_targets_are_refused_with_the_reason() {
        let cases = [
            ("", "empty"),
            ("host:0", "not a port"),
            ("host:99999", "not a port"),
            ("host:http", "not a port"),
            ("[::1", "without ']'"),
            ("[zz]:1", "not an IPv6 address"),
            ("[::1]x", "':PORT'"),
            ("a b", "neither an IP address nor a host name"),
            ("evil/../x", "neither"),
            ("-x.example", "neither"),
            ("http://h", "not a port"),
        ];
        for (s, want) in cases {
            let e = Target::parse(s).unwrap_err().to_string();
            assert!(e.contains(want), "{s:?}: {e}");
        }
        let long = "a".repeat(300);
        assert_eq!(
            Target::parse(&long),
            Err(TargetError::TooLong { chars: 300 })
        );
        assert!(TargetError::TooLong { chars: 300 }
            .to_string()
            .contains("300 characters long; a host name has at most 253"));
    }

    #[test]
    fn allow_list_covers_hosts_addresses_and_cidrs() {
        let a = AllowList::parse(&[
            "10.0.0.0/8".into(),
            "2001:db8::1".into(),
            "Lab.Example".into(),
        ])
        .unwrap();
        assert!(a.allows_ip("10.1.2.3".parse().unwrap()));
        assert!(!a.allows_ip("11.1.2.3".parse().unwrap()));
        assert!(a.allows_ip("2001:db8::1".parse().unwrap()));
        assert!(!a.allows_ip("2001:db8::2".parse().unwrap()));
        assert!(a.allows_name("lab.example"));
        assert!(!a.allows_name("other.example"));
        assert_eq!(AllowList::parse(&["any".into()]).unwrap(), AllowList::Any);
        for bad in [
            vec![],
            vec!["any".to_string(), "x".into()],
            vec!["1.2.3.0/40".into()],
            vec!["a b".into()],
        ] {
            assert!(AllowList::parse(&bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn default_allow_list_is_loopback_only() {
        let a = AllowList::loopback();
        let t = Target::parse("192.0.2.1").unwrap();
        let r = Resolved::pick(&t, &["192.0.2.1".parse().unwrap()]);
        let e = check_allowed(&a, &t, &r).unwrap_err().to_string();
        assert!(e.contains("not in allowed_targets"), "{e}");
        let t = Target::parse("::1").unwrap();
        let r = Resolved::pick(&t, &["::1".parse().unwrap()]);
        assert_eq!(check_allowed(&a, &t, &r), Ok(()));
        // A name resolving to an outside address is refused unless the name is listed.
        let t = Target::parse("sneaky.example").unwrap();
        let r = Resolved::pick(
            &t,
            &["127.0.0.1".parse().unwrap(), "2001:db8::5".parse().unwrap()],
        );
        assert_eq!(
            check_allowed(&a, &t, &r),
            Err(NotAllowed::Address {
                host: "sneaky.example".into(),
                ip: "2001:db8::5".parse().unwrap()
            })
        );
    }

    #[test]
    fn an_ipv4_mapped_address_is_the_ipv4_address_it_connects_to() {
        let mapped = Target::parse("[::ffff:127.0.0.1]:5301").unwrap();
        let r = Resolved::pick(&mapped, &[mapped.ip().unwrap()]);
        assert_eq!(r.v4, Ok("127.0.0.1".parse().unwrap()));
        assert_eq!(
            r.v6.clone().unwrap_err().to_string(),
            "the target is the address 127.0.0.1: it has no AAAA"
        );
        // `::/0` covers the mapped range as written, but the connection is IPv4: refused.
        let v6_only = AllowList::parse(&["::/0".into()]).unwrap();
        assert_eq!(
            check_allowed(&v6_only, &mapped, &r),
            Err(NotAllowed::Address {
                host: "::ffff:127.0.0.1".into(),
                ip: "127.0.0.1".parse().unwrap()
            })
        );
        assert!(!v6_only.allows_ip("::ffff:127.0.0.1".parse().unwrap()));
        // An IPv4 CIDR covering the address admits it, however it is spelt.
        let v4 = AllowList::parse(&["127.0.0.0/8".into()]).unwrap();
        assert_eq!(check_allowed(&v4, &mapped, &r), Ok(()));
        assert!(v4.allows_ip("::ffff:127.0.0.1".parse().unwrap()));
        // A mapped entry is the IPv4 network it reaches.
        let entry =
            AllowList::parse(&["::ffff:10.0.0.0/104".into(), "::ffff:192.0.2.7".into()]).unwrap();
        assert!(entry.allows_ip("10.1.2.3".parse().unwrap()));
        assert!(entry.allows_ip("192.0.2.7".parse().unwrap()));
        assert!(!entry.allows_ip("11.1.2.3".parse().unwrap()));
        // A resolver's (or `[hosts]`') mapped address too.
        let t = Target::parse("lab.example").unwrap();
        let r = Resolved::pick(&t, &["::ffff:192.0.2.1".parse().unwrap()]);
        assert_eq!(r.v4, Ok("192.0.2.1".parse().unwrap()));
        assert!(r.v6.is_err());
    }

    #[test]
    fn endpoints_are_the_addresses_connected_whatever_the_spelling() {
        let both = |t: &str, addrs: &[&str]| {
            let t = Target::parse(t).unwrap();
            let ips: Vec<IpAddr> = addrs.iter().map(|a| a.parse().unwrap()).collect();
            Resolved::pick(&t, &ips).endpoints([Family::V4, Family::V6], 5301)
        };
        let want: Vec<SocketAddr> = vec!["127.0.0.1:5301".parse().unwrap()];
        assert_eq!(both("127.0.0.1", &["127.0.0.1"]), want);
        assert_eq!(both("[::ffff:127.0.0.1]", &["::ffff:127.0.0.1"]), want);
        // A name resolving to the address (as `127.1` or `0x7f.0.1` through getaddrinfo).
        assert_eq!(both("127.1", &["127.0.0.1"]), want);
        assert_eq!(
            both("[0000:0000::0001]", &["::1"]),
            vec!["[::1]:5301".parse::<SocketAddr>().unwrap()]
        );
        // Only the families the module runs.
        let t = Target::parse("dual.test").unwrap();
        let r = Resolved::pick(&t, &["::1".parse().unwrap(), "127.0.0.1".parse().unwrap()]);
        assert_eq!(
            r.endpoints([Family::V4], 1),
            vec!["127.0.0.1:1".parse().unwrap()]
        );
        assert_eq!(r.endpoints([Family::V6, Family::V4], 1).len(), 2);
    }

    #[test]
    fn localhost_is_both_loopback_addresses_whatever_the_hosts_file_says() {
        // RFC 6761 §6.3, as for `run` and `study`: stock Debian's /etc/hosts has no
        // `::1 localhost`, and the IPv6 family must not fail for want of an AAAA record.
        for name in ["localhost", "LOCALHOST", "probe.localhost"] {
            let r = resolve(&Target::parse(name).unwrap()).unwrap();
            assert_eq!(r.v4, Ok("127.0.0.1".parse().unwrap()), "{name}");
            assert_eq!(r.v6, Ok("::1".parse().unwrap()), "{name}");
        }
    }

    #[test]
    fn resolution_names_the_missing_record() {
        let t = Target::parse("127.0.0.1").unwrap();
        let r = resolve(&t).unwrap();
        assert_eq!(r.v4, Ok("127.0.0.1".parse().unwrap()));
        assert_eq!(
            r.v6.unwrap_err().to_string(),
            "the target is the address 127.0.0.1: it has no AAAA"
        );
        let t = Target::parse("v4only.example").unwrap();
        let r = Resolved::pick(&t, &["192.0.2.1".parse().unwrap()]);
        assert_eq!(
            r.v6.unwrap_err().to_string(),
            "v4only.example has no AAAA record"
        );
    }
}
