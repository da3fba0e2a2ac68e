//! The lab plan, with no I/O: namespace and interface names, addresses, and the ordered
//! list of setup steps (`ip` / `tc` invocations and sysctls) that builds a topology.
//! Executing the steps is `lab.rs`'s job; everything here is unit-tested as data.

use crate::{LabError, LabSpec, Topology};
use std::net::{Ipv4Addr, Ipv6Addr};

/// Every lab namespace starts with this, so labs are found across processes.
pub const NS_PREFIX: &str = "dpl-";

/// tbf bucket: the first 64 KiB leave at line rate (the baseline's `burst 64kb`).
pub const TBF_BURST_BYTES: u64 = 64 * 1024;
/// tbf queue bound expressed as delay (`latency 50ms`).
pub const TBF_LATENCY_MS: u32 = 50;

/// The part a namespace plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Client,
    Server,
    Router,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Client, Role::Server, Role::Router];

    pub fn name(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
            Role::Router => "router",
        }
    }
}

/// The namespace of `role` in lab `lab_name`: `dpl-NAME-ROLE`.
pub fn ns_name(lab_name: &str, role: Role) -> String {
    format!("{NS_PREFIX}{lab_name}-{}", role.name())
}

/// Splits a namespace name back into (lab name, role), if it is a lab namespace.
pub(crate) fn parse_ns_name(ns: &str) -> Option<(String, Role)> {
    let rest = ns.strip_prefix(NS_PREFIX)?;
    Role::ALL.into_iter().find_map(|role| {
        let name = rest.strip_suffix(role.name())?.strip_suffix('-')?;
        crate::validate_name(name).ok()?;
        Some((name.to_string(), role))
    })
}

/// One end of a veth pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    pub role: Role,
    pub ns: String,
    pub dev: &'static str,
    pub v4: Ipv4Addr,
    pub v6: Ipv6Addr,
}

/// A veth pair; `a` is created first, `b` is its peer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    pub a: End,
    pub b: End,
}

/// A setup step. `Ip`/`Tc` args exclude the program and run against namespace `ns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    AddNs(String),
    /// Write a sysctl (path under /proc/sys) inside `ns`.
    Sysctl {
        ns: String,
        key: &'static str,
        value: &'static str,
    },
    Ip {
        ns: String,
        args: Vec<String>,
    },
    /// `tc qdisc add dev DEV root KIND ...`; a missing qdisc only warns.
    Shape {
        ns: String,
        dev: &'static str,
        args: Vec<String>,
    },
    /// Wait until DEV reports operstate UP: the kernel activates a device's qdisc (and
    /// so passes packets) only then, up to a second after `link set up`.
    WaitUp {
        ns: String,
        dev: &'static str,
    },
}

/// Names, addresses and steps of one lab.
#[derive(Debug, Clone)]
pub struct Plan {
    pub spec: LabSpec,
    pub links: Vec<Link>,
    pub steps: Vec<Step>,
}

impl Plan {
    pub fn end(&self, role: Role) -> Option<&End> {
        let ends = self.links.iter().flat_map(|l| [&l.a, &l.b]);
        // The host roles appear once; the router has two ends (the first one is toward the client).
        ends.into_iter().find(|e| e.role == role)
    }

    #[cfg(test)]
    pub fn namespaces(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::AddNs(ns) => Some(ns.clone()),
                _ => None,
            })
            .collect()
    }

    /// The (namespace, device) pairs that carry the tbf shaper.
    #[cfg(test)]
    pub fn shaped_devices(&self) -> Vec<(String, &'static str)> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Shape { ns, dev, .. } => Some((ns.clone(), *dev)),
                _ => None,
            })
            .collect()
    }
}

fn v4(net: u8, host: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 231, net, host)
}

fn v6(net: u16, host: u16) -> Ipv6Addr {
    Ipv6Addr::new(0xfd00, 0x231, net, 0, 0, 0, 0, host)
}

/// Validates the spec and lays the lab out.
pub fn plan(spec: &LabSpec) -> Result<Plan, LabError> {
    crate::validate_name(&spec.name)?;
    if let Some(mtu_bytes) = spec.mtu {
        if mtu_bytes < 1280 {
            return Err(LabError::InvalidMtu {
                mtu_bytes,
                reason: "IPv6 needs at least 1280 bytes (RFC 8200)",
            });
        }
        if mtu_bytes > 65535 {
            return Err(LabError::InvalidMtu {
                mtu_bytes,
                reason: "veth allows at most 65535 bytes",
            });
        }
    }
    let ns = |role| ns_name(&spec.name, role);
    let end = |role, dev, net, host| End {
        role,
        ns: ns(role),
        dev,
        v4: v4(net, host),
        v6: v6(net.into(), host.into()),
    };
    let links = match spec.topology {
        Topology::P2p => vec![Link {
            a: end(Role::Client, "dp-c", 0, 1),
            b: end(Role::Server, "dp-s", 0, 2),
        }],
        Topology::ClientServer => vec![
            Link {
                a: end(Role::Client, "dp-c", 1, 2),
                b: end(Role::Router, "dp-rc", 1, 1),
            },
            Link {
                a: end(Role::Server, "dp-s", 2, 2),
                b: end(Role::Router, "dp-rs", 2, 1),
            },
        ],
    };
    let roles: &[Role] = match spec.topology {
        Topology::P2p => &[Role::Client, Role::Server],
        Topology::ClientServer => &[Role::Client, Role::Server, Role::Router],
    };
    let mut steps = Vec::new();
    for &role in roles {
        steps.push(Step::AddNs(ns(role)));
    }
    for &role in roles {
        // New namespaces copy the root's `default` devconf: make sure IPv6 is on, and
        // skip duplicate address detection also for the veths' link-local addresses: a
        // router whose link-local is still tentative sends no neighbour solicitation
        // (RFC 4861 §7.2.2 wants a usable source), which delays forwarding by ~2 s.
        for key in [
            "net/ipv6/conf/all/disable_ipv6",
            "net/ipv6/conf/default/disable_ipv6",
            "net/ipv6/conf/all/accept_dad",
            "net/ipv6/conf/default/accept_dad",
        ] {
            steps.push(Step::Sysctl {
                ns: ns(role),
                key,
                value: "0",
            });
        }
        steps.push(ip(&ns(role), &["link", "set", "lo", "up"]));
    }
    for link in &links {
        let (a, b) = (&link.a, &link.b);
        steps.push(ip(
            &a.ns,
            &[
                "link", "add", a.dev, "type", "veth", "peer", "name", b.dev, "netns", &b.ns,
            ],
        ));
    }
    for e in links.iter().flat_map(|l| [&l.a, &l.b]) {
        if let Some(mtu) = spec.mtu {
            steps.push(ip(
                &e.ns,
                &["link", "set", "dev", e.dev, "mtu", &mtu.to_string()],
            ));
        }
        steps.push(ip(
            &e.ns,
            &["addr", "add", &format!("{}/24", e.v4), "dev", e.dev],
        ));
        steps.push(ip(
            &e.ns,
            &[
                "-6",
                "addr",
                "add",
                &format!("{}/64", e.v6),
                "dev",
                e.dev,
                "nodad",
            ],
        ));
        steps.push(ip(&e.ns, &["link", "set", "dev", e.dev, "up"]));
    }
    if spec.topology == Topology::ClientServer {
        let router = ns(Role::Router);
        steps.push(Step::Sysctl {
            ns: router.clone(),
            key: "net/ipv4/ip_forward",
            value: "1",
        });
        steps.push(Step::Sysctl {
            ns: router,
            key: "net/ipv6/conf/all/forwarding",
            value: "1",
        });
        for link in &links {
            let (host, gw) = (&link.a, &link.b);
            steps.push(ip(
                &host.ns,
                &[
                    "route",
                    "add",
                    "default",
                    "via",
                    &gw.v4.to_string(),
                    "dev",
                    host.dev,
                ],
            ));
            steps.push(ip(
                &host.ns,
                &[
                    "-6",
                    "route",
                    "add",
                    "default",
                    "via",
                    &gw.v6.to_string(),
                    "dev",
                    host.dev,
                ],
            ));
        }
    }
    if let Some(rate_bps) = spec.rate_bps {
        // Shape each host's egress: one bottleneck per direction, at the sender, so a
        // sender is flow-controlled by its socket buffer rather than losing packets.
        let burst_bytes = TBF_BURST_BYTES.max(2 * u64::from(spec.mtu.unwrap_or(1500)) + 64);
        for role in [Role::Client, Role::Server] {
            let Some(e) = links
                .iter()
                .flat_map(|l| [&l.a, &l.b])
                .find(|e| e.role == role)
            else {
                continue;
            };
            steps.push(Step::Shape {
                ns: e.ns.clone(),
                dev: e.dev,
                args: tbf_args(rate_bps, burst_bytes),
            });
        }
    }
    for e in links.iter().flat_map(|l| [&l.a, &l.b]) {
        steps.push(Step::WaitUp {
            ns: e.ns.clone(),
            dev: e.dev,
        });
    }
    Ok(Plan {
        spec: spec.clone(),
        links,
        steps,
    })
}

/// `tbf rate Rbit burst B latency 50ms`.
pub fn tbf_args(rate_bps: u64, burst_bytes: u64) -> Vec<String> {
    [
        "tbf",
        "rate",
        &format!("{rate_bps}bit"),
        "burst",
        &burst_bytes.to_string(),
        "latency",
        &format!("{TBF_LATENCY_MS}ms"),
    ]
    .map(String::from)
    .to_vec()
}

fn ip(ns: &str, args: &[&str]) -> Step {
    Step::Ip {
        ns: ns.to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(topology: Topology) -> LabSpec {
        LabSpec {
            name: "t1".into(),
            topology,
            rate_bps: Some(50_000_000),
            mtu: Some(9000),
        }
    }

    fn ip_lines(p: &Plan) -> Vec<String> {
        p.steps
            .iter()
            .filter_map(|s| match s {
                Step::Ip { ns, args } => Some(format!("{ns}: {}", args.join(" "))),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn ns_names_round_trip() {
        for role in Role::ALL {
            let ns = ns_name("my-lab-client", role);
            assert_eq!(
                parse_ns_name(&ns),
                Some(("my-lab-client".to_string(), role))
            );
        }
        assert_eq!(parse_ns_name("dpl--client"), None);
        assert_eq!(parse_ns_name("other-x-client"), None);
        assert_eq!(parse_ns_name("dpl-x-switch"), None);
    }

    #[test]
    fn p2p_puts_both_hosts_on_one_subnet_with_nodad_v6() {
        let p = plan(&spec(Topology::P2p)).unwrap();
        assert_eq!(p.namespaces(), vec!["dpl-t1-client", "dpl-t1-server"]);
        let (c, s) = (p.end(Role::Client).unwrap(), p.end(Role::Server).unwrap());
        assert_eq!(c.v4.octets()[..3], s.v4.octets()[..3]);
        assert_eq!(c.v6.segments()[..4], s.v6.segments()[..4]);
        assert!(c.v6.segments()[0] & 0xfe00 == 0xfc00, "ULA prefix");
        let lines = ip_lines(&p);
        assert!(lines
            .iter()
            .filter(|l| l.contains(" -6 addr add") || l.contains(": -6 addr add"))
            .all(|l| l.ends_with("nodad")));
        assert_eq!(lines.iter().filter(|l| l.contains("mtu 9000")).count(), 2);
        assert!(
            !lines.iter().any(|l| l.contains("route")),
            "p2p needs no routes"
        );
        assert_eq!(
            p.shaped_devices(),
            vec![
                ("dpl-t1-client".to_string(), "dp-c"),
                ("dpl-t1-server".to_string(), "dp-s")
            ]
        );
    }

    #[test]
    fn client_server_routes_through_a_forwarding_router() {
        let p = plan(&spec(Topology::ClientServer)).unwrap();
        assert_eq!(p.namespaces().len(), 3);
        let (c, s) = (p.end(Role::Client).unwrap(), p.end(Role::Server).unwrap());
        assert_ne!(
            c.v4.octets()[2],
            s.v4.octets()[2],
            "hosts on different subnets"
        );
        let lines = ip_lines(&p);
        assert!(
            lines.contains(&"dpl-t1-client: route add default via 10.231.1.1 dev dp-c".to_string())
        );
        assert!(lines.contains(
            &"dpl-t1-server: -6 route add default via fd00:231:2::1 dev dp-s".to_string()
        ));
        let sysctls: Vec<_> = p
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Sysctl {
                    ns,
                    key,
                    value: "1",
                } => Some((ns.as_str(), *key)),
                _ => None,
            })
            .collect();
        assert_eq!(
            sysctls,
            vec![
                ("dpl-t1-router", "net/ipv4/ip_forward"),
                ("dpl-t1-router", "net/ipv6/conf/all/forwarding")
            ]
        );
        assert_eq!(lines.iter().filter(|l| l.contains("mtu 9000")).count(), 4);
    }

    #[test]
    fn every_namespace_is_added_before_it_is_used() {
        let p = plan(&spec(Topology::ClientServer)).unwrap();
        let first_use = p
            .steps
            .iter()
            .position(|s| !matches!(s, Step::AddNs(_)))
            .unwrap();
        assert!(p.steps[first_use..]
            .iter()
            .all(|s| !matches!(s, Step::AddNs(_))));
    }

    #[test]
    fn unshaped_plan_has_no_qdisc_and_bad_mtus_are_refused() {
        let mut s = spec(Topology::P2p);
        s.rate_bps = None;
        assert!(plan(&s).unwrap().shaped_devices().is_empty());
        s.mtu = Some(1000);
        assert!(matches!(plan(&s), Err(LabError::InvalidMtu { .. })));
        s.mtu = Some(70000);
        assert!(matches!(plan(&s), Err(LabError::InvalidMtu { .. })));
    }

    #[test]
    fn tbf_args_carry_rate_in_bits_and_burst() {
        assert_eq!(
            tbf_args(50_000_000, 65536).join(" "),
            "tbf rate 50000000bit burst 65536 latency 50ms"
        );
        let mut s = spec(Topology::P2p);
        s.mtu = Some(65535);
        let p = plan(&s).unwrap();
        let burst = p.steps.iter().find_map(|s| match s {
            Step::Shape { args, .. } => Some(args[4].clone()),
            _ => None,
        });
        assert_eq!(
            burst.as_deref(),
            Some("131134"),
            "burst must hold two max-size frames"
        );
    }
}
