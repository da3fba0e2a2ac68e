//! The lab plan, with no I/O: namespace and interface names, addresses, and the ordered
//! list of setup steps (`ip` / `tc` invocations and sysctls) that builds a topology.
//! Executing the steps is `lab.rs`'s job; everything here is unit-tested as data.

use crate::{LabError, LabSpec, PathSpec, Topology};
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
    /// Load an nftables ruleset into `ns` (`nft -f -`, the ruleset on stdin).
    Nft {
        ns: String,
        ruleset: String,
    },
}

/// Names, addresses and steps of one lab.
#[derive(Debug, Clone)]
pub struct Plan {
    pub spec: LabSpec,
    /// What the router does to the path (client-server only).
    pub path: PathSpec,
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
#[cfg(test)]
pub fn plan(spec: &LabSpec) -> Result<Plan, LabError> {
    plan_with_path(spec, &PathSpec::default())
}

/// Validates the spec and the path options and lays the lab out: [`plan`] plus, on the
/// router, a route MTU toward the server and the nftables drop rules.
pub fn plan_with_path(spec: &LabSpec, path: &PathSpec) -> Result<Plan, LabError> {
    crate::validate_name(&spec.name)?;
    if !path.is_plain() && spec.topology != Topology::ClientServer {
        return Err(LabError::PathNeedsRouter(spec.topology));
    }
    path.check(spec.mtu.unwrap_or(1500))?;
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
            ns: router.clone(),
            key: "net/ipv6/conf/all/forwarding",
            value: "1",
        });
        if let Some(mtu) = path.mtu_bytes {
            // Replace the connected routes (as the kernel made them) with the same
            // routes carrying an MTU: forwarding honours a route's MTU (RFC 1191 /
            // RFC 8201 messages name it) while the veths keep theirs.
            let toward_server = links[1].b.clone();
            steps.extend(route_mtu_steps(&router, &toward_server, mtu));
        }
        if let Some(ruleset) = path.nft_ruleset() {
            steps.push(Step::Nft {
                ns: router,
                ruleset,
            });
        }
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
        path: *path,
        links,
        steps,
    })
}

/// The router's connected routes over `end` (its end of the link to the server), for
/// both families, again with `mtu N`.
fn route_mtu_steps(router: &str, end: &End, mtu: u32) -> [Step; 2] {
    let mtu = mtu.to_string();
    let net4 = std::net::Ipv4Addr::from(u32::from(end.v4) & 0xffff_ff00);
    let mut net6 = end.v6.segments();
    net6[4..].fill(0);
    let net6 = Ipv6Addr::from(net6);
    [
        ip(
            router,
            &[
                "route",
                "replace",
                &format!("{net4}/24"),
                "dev",
                end.dev,
                "proto",
                "kernel",
                "scope",
                "link",
                "src",
                &end.v4.to_string(),
                "mtu",
                &mtu,
            ],
        ),
        ip(
            router,
            &[
                "-6",
                "route",
                "replace",
                &format!("{net6}/64"),
                "dev",
                end.dev,
                "proto",
                "kernel",
                "metric",
                "256",
                "mtu",
                &mtu,
            ],
        ),
    ]
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
    fn a_routed_path_narrows_the_routers_routes_to_the_server_and_loads_its_rules() {
        let mut s = spec(Topology::ClientServer);
        s.mtu = None;
        let path = PathSpec {
            mtu_bytes: Some(1280),
            drops: [crate::PathDrop::IcmpTooBig].into_iter().collect(),
        };
        let p = plan_with_path(&s, &path).unwrap();
        let lines = ip_lines(&p);
        let mtu_lines: Vec<&String> = lines.iter().filter(|l| l.ends_with("mtu 1280")).collect();
        assert_eq!(
            mtu_lines,
            vec![
                "dpl-t1-router: route replace 10.231.2.0/24 dev dp-rs proto kernel scope link \
                 src 10.231.2.1 mtu 1280",
                "dpl-t1-router: -6 route replace fd00:231:2::/64 dev dp-rs proto kernel metric \
                 256 mtu 1280"
            ]
        );
        assert!(
            !lines
                .iter()
                .any(|l| l.contains("link set") && l.contains(" mtu ")),
            "no veth MTU changes: {lines:?}"
        );
        let nft: Vec<_> = p
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Nft { ns, ruleset } => Some((ns.as_str(), ruleset.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(nft.len(), 1);
        assert_eq!(nft[0].0, "dpl-t1-router");
        assert!(
            nft[0].1.contains("icmpv6 type packet-too-big"),
            "{}",
            nft[0].1
        );
        // The rules come after forwarding is on and the routes exist.
        let nft_at = p.steps.iter().position(|s| matches!(s, Step::Nft { .. }));
        let fwd_at = p.steps.iter().position(
            |s| matches!(s, Step::Sysctl { key, .. } if *key == "net/ipv6/conf/all/forwarding"),
        );
        assert!(fwd_at < nft_at);
    }

    #[test]
    fn a_path_on_a_p2p_lab_or_above_the_link_mtu_is_refused() {
        let path = PathSpec {
            mtu_bytes: Some(1280),
            ..PathSpec::default()
        };
        let e = plan_with_path(&spec(Topology::P2p), &path).unwrap_err();
        assert!(
            matches!(e, LabError::PathNeedsRouter(Topology::P2p)),
            "{e:?}"
        );
        let mut s = spec(Topology::ClientServer);
        s.mtu = Some(1400);
        let wide = PathSpec {
            mtu_bytes: Some(1500),
            ..PathSpec::default()
        };
        let e = plan_with_path(&s, &wide).unwrap_err();
        assert!(
            matches!(
                e,
                LabError::InvalidPathMtu {
                    mtu_bytes: 1500,
                    ..
                }
            ),
            "{e:?}"
        );
        let plain = plan_with_path(&s, &PathSpec::default()).unwrap();
        assert!(!plain.steps.iter().any(|s| matches!(s, Step::Nft { .. })));
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
