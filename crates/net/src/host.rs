//! Host names into addresses: the one lookup every client (`run`, `study`, the iperf3
//! client, the exporter) and `server --bind` share.
//!
//! An IP literal (`192.0.2.7`, `::1`, `[::1]`) is itself. `localhost` and any name
//! ending in `.localhost` are the loopback addresses of both families, 127.0.0.1 and
//! ::1, whatever /etc/hosts or DNS say (RFC 6761 §6.3: such names resolve to loopback
//! and are not sent to DNS; curl does the same). Debian's stock /etc/hosts has no
//! `::1 localhost`, so the system resolver would give IPv4 only and the comparison would
//! lose half its families. Any other name goes to the system resolver (A and AAAA).

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};
use wire::spec::Family;

/// Whether `name` is `localhost` or ends in `.localhost` (case-insensitive, a trailing
/// dot allowed): a loopback name by RFC 6761 §6.3.
pub fn is_localhost(name: &str) -> bool {
    let n = name.trim().trim_end_matches('.').to_ascii_lowercase();
    n == "localhost" || n.ends_with(".localhost")
}

/// `host` without the brackets of an IPv6 literal (`[::1]` is `::1`).
pub fn bare(host: &str) -> &str {
    host.trim().trim_start_matches('[').trim_end_matches(']')
}

/// Every address of `host`, in the resolver's order: the literal itself, both loopback
/// addresses for a localhost name, or what the system resolver returns (duplicates
/// removed). An empty list is possible (a resolver may answer with no address).
pub fn addresses(host: &str) -> io::Result<Vec<IpAddr>> {
    let h = bare(host);
    if let Ok(ip) = h.parse::<IpAddr>() {
        return Ok(vec![ip]);
    }
    if is_localhost(h) {
        return Ok(vec![
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
        ]);
    }
    let mut out: Vec<IpAddr> = Vec::new();
    for a in (h, 0).to_socket_addrs()? {
        if !out.contains(&a.ip()) {
            out.push(a.ip());
        }
    }
    Ok(out)
}

/// The DNS record that holds a family's addresses: A or AAAA.
pub fn record(family: Family) -> &'static str {
    match family {
        Family::V4 => "A",
        Family::V6 => "AAAA",
    }
}

/// Whether `ip` is of `family` (an IPv4-mapped IPv6 address is IPv6: it is sent over an
/// IPv6 socket).
pub fn is_family(ip: &IpAddr, family: Family) -> bool {
    matches!(
        (ip, family),
        (IpAddr::V4(_), Family::V4) | (IpAddr::V6(_), Family::V6)
    )
}

/// Why a host has no address to test in a family.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("cannot resolve host {host}: {source}")]
    Resolve {
        host: String,
        #[source]
        source: io::Error,
    },
    #[error("host {host} has no {family} address ({})", record(*family))]
    NoAddress {
        host: String,
        family: Family,
        /// It has addresses of the other family (so `--families`/`-f` of that one works).
        has_other: bool,
    },
}

/// The first address of `host` in `family`, or why there is none.
pub fn address_in(host: &str, family: Family) -> Result<IpAddr, HostError> {
    let all = addresses(host).map_err(|source| HostError::Resolve {
        host: host.to_string(),
        source,
    })?;
    all.iter()
        .copied()
        .find(|ip| is_family(ip, family))
        .ok_or_else(|| HostError::NoAddress {
            host: host.to_string(),
            family,
            has_other: !all.is_empty(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_is_both_loopback_addresses_whatever_the_hosts_file_says() {
        // This machine's /etc/hosts may well lack `::1 localhost` (Debian's stock one
        // does); RFC 6761 §6.3 makes the name loopback in both families anyway.
        for name in [
            "localhost",
            "LOCALHOST",
            "localhost.",
            "db.localhost",
            "[localhost]",
        ] {
            assert_eq!(
                addresses(name).unwrap(),
                vec![
                    IpAddr::V4(Ipv4Addr::LOCALHOST),
                    IpAddr::V6(Ipv6Addr::LOCALHOST)
                ],
                "{name}"
            );
            assert_eq!(
                address_in(name, Family::V6).unwrap(),
                IpAddr::V6(Ipv6Addr::LOCALHOST)
            );
        }
        assert!(!is_localhost("localhost.example"));
        assert!(!is_localhost("notlocalhost"));
    }

    #[test]
    fn a_literal_is_itself_and_has_no_address_of_the_other_family() {
        assert_eq!(
            addresses("[::1]").unwrap(),
            vec!["::1".parse::<IpAddr>().unwrap()]
        );
        let e = address_in("127.0.0.1", Family::V6).unwrap_err();
        assert!(matches!(
            e,
            HostError::NoAddress {
                has_other: true,
                ..
            }
        ));
        assert_eq!(e.to_string(), "host 127.0.0.1 has no IPv6 address (AAAA)");
        assert_eq!(
            address_in("::1", Family::V4).unwrap_err().to_string(),
            "host ::1 has no IPv4 address (A)"
        );
    }
}
