//! Where a remote target is, per family: `HOST` (a name or an address), and an address
//! (or name) for one family only (`--host4`, `--host6`), which wins for its family. A
//! host with one address per family and no name that has both (two addresses of one
//! machine, a name with only an A record and an IPv6 address) is studied as
//! `--host4 A --host6 B`. Names resolve through `net::host` (`localhost` is 127.0.0.1 and
//! ::1 whatever /etc/hosts says).

use crate::resolve::literal_family;
use std::net::IpAddr;
use wire::spec::Family;

/// The remote target as given; all `None`: the embedded server (or a lab).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hosts {
    /// `HOST`: a name or an address, for every family it has.
    pub host: Option<String>,
    /// `--host4`: the IPv4 server (an address or a name's A record).
    pub host4: Option<String>,
    /// `--host6`: the IPv6 server (an address or a name's AAAA record).
    pub host6: Option<String>,
}

/// Client metadata keys recording the server given for each family (`--host4`,
/// `--host6`, or HOST), so `--resume` and a reader know where each family's runs went.
pub const TARGET_HOST4_KEY: &str = "study.target_ipv4";
pub const TARGET_HOST6_KEY: &str = "study.target_ipv6";

impl Hosts {
    /// `HOST` alone.
    pub fn one(host: &str) -> Hosts {
        Hosts {
            host: Some(host.to_string()),
            ..Hosts::default()
        }
    }

    /// Whether any remote host is given (else: the embedded server or a lab).
    pub fn is_remote(&self) -> bool {
        self.host.is_some() || self.host4.is_some() || self.host6.is_some()
    }

    /// The host a test in `family` goes to: `--host4`/`--host6` for its family, else
    /// HOST unless HOST is an address of the other family.
    pub fn for_family(&self, family: Family) -> Option<&str> {
        let own = match family {
            Family::V4 => &self.host4,
            Family::V6 => &self.host6,
        };
        own.as_deref().or_else(|| {
            self.host
                .as_deref()
                .filter(|h| literal_family(h).is_none_or(|f| f == family))
        })
    }

    /// The families this target can be tested in when that is not both (an address
    /// HOST, or one of `--host4`/`--host6` alone); `None` for both, or no remote host.
    pub fn families(&self) -> Option<Vec<Family>> {
        if !self.is_remote() {
            return None;
        }
        let fams: Vec<Family> = [Family::V4, Family::V6]
            .into_iter()
            .filter(|&f| self.for_family(f).is_some())
            .collect();
        (fams.len() < 2).then_some(fams)
    }

    /// The target as the user named it: "HOST", or "A (IPv4), B (IPv6)" when the
    /// families differ; `None` without a remote host.
    pub fn text(&self) -> Option<String> {
        if !self.is_remote() {
            return None;
        }
        let (h4, h6) = (self.for_family(Family::V4), self.for_family(Family::V6));
        Some(match (h4, h6) {
            (Some(a), Some(b)) if a == b => a.to_string(),
            (Some(a), Some(b)) => format!("{a} (IPv4), {b} (IPv6)"),
            (Some(a), None) => a.to_string(),
            (None, Some(b)) => b.to_string(),
            (None, None) => self.host.clone().unwrap_or_default(),
        })
    }

    /// Where each of `families` would go: the address it resolves to, or why it cannot
    /// be tested there (what `study --dry-run` shows before anything runs).
    pub fn resolve_each(&self, families: &[Family]) -> Vec<(Family, Result<IpAddr, String>)> {
        families
            .iter()
            .map(|&f| {
                let r = match self.for_family(f) {
                    None => Err(format!(
                        "no {f} server given (add --host{} ADDR, or give a HOST name with \
                         {} records)",
                        f.number(),
                        net::host::record(f)
                    )),
                    Some(h) => net::host::address_in(h, f).map_err(|e| match e {
                        net::host::HostError::NoAddress { .. } => format!(
                            "{e}; give its {f} address with --host{}, or use --families {}",
                            f.number(),
                            f.other().number()
                        ),
                        other => other.to_string(),
                    }),
                };
                (f, r)
            })
            .collect()
    }

    /// The per-family lines of `--dry-run`: "IPv4: localhost = 127.0.0.1" or
    /// "IPv6: cannot run: …".
    pub fn resolution_text(&self, families: &[Family]) -> String {
        let mut out = String::new();
        for (f, r) in self.resolve_each(families) {
            let given = self.for_family(f).unwrap_or("-");
            match r {
                Ok(ip) if given == ip.to_string() => {
                    out.push_str(&format!("  {f}: {ip}\n"));
                }
                Ok(ip) => out.push_str(&format!("  {f}: {given} = {ip}\n")),
                Err(why) => out.push_str(&format!("  {f}: cannot run: {why}\n")),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(host: Option<&str>, h4: Option<&str>, h6: Option<&str>) -> Hosts {
        Hosts {
            host: host.map(str::to_string),
            host4: h4.map(str::to_string),
            host6: h6.map(str::to_string),
        }
    }

    #[test]
    fn each_family_goes_to_its_own_host_when_one_is_given() {
        let h = hosts(None, Some("192.0.2.7"), Some("2001:db8::7"));
        assert_eq!(h.for_family(Family::V4), Some("192.0.2.7"));
        assert_eq!(h.for_family(Family::V6), Some("2001:db8::7"));
        assert_eq!(h.families(), None, "both families");
        assert_eq!(h.text().unwrap(), "192.0.2.7 (IPv4), 2001:db8::7 (IPv6)");
        // A name for both, with one family's address given apart.
        let h = hosts(Some("v4only.example"), None, Some("2001:db8::7"));
        assert_eq!(h.for_family(Family::V4), Some("v4only.example"));
        assert_eq!(h.for_family(Family::V6), Some("2001:db8::7"));
        // One family alone decides the families.
        assert_eq!(
            hosts(None, Some("192.0.2.7"), None).families(),
            Some(vec![Family::V4])
        );
        assert_eq!(
            hosts(Some("::1"), None, None).families(),
            Some(vec![Family::V6])
        );
        assert_eq!(hosts(Some("::1"), None, None).for_family(Family::V4), None);
        assert_eq!(Hosts::default().families(), None);
    }

    #[test]
    fn a_dry_run_says_where_each_family_goes_or_why_it_cannot() {
        // localhost is both loopback addresses whatever /etc/hosts says (here it has
        // no `::1 localhost`).
        let t = Hosts::one("localhost").resolution_text(&[Family::V4, Family::V6]);
        assert_eq!(
            t,
            "  IPv4: localhost = 127.0.0.1\n  IPv6: localhost = ::1\n"
        );
        let t = Hosts::one("127.0.0.1").resolution_text(&[Family::V4, Family::V6]);
        assert!(t.contains("  IPv4: 127.0.0.1\n"), "{t}");
        assert!(
            t.contains("IPv6: cannot run: no IPv6 server given (add --host6 ADDR"),
            "{t}"
        );
        let t =
            hosts(Some("127.0.0.1"), None, Some("::1")).resolution_text(&[Family::V4, Family::V6]);
        assert_eq!(t, "  IPv4: 127.0.0.1\n  IPv6: ::1\n");
        // A host given for IPv6 that has only an IPv4 address.
        let t = hosts(None, None, Some("127.0.0.1")).resolution_text(&[Family::V6]);
        assert!(
            t.contains("IPv6: cannot run: host 127.0.0.1 has no IPv6 address (AAAA); give its IPv6 address with --host6"),
            "{t}"
        );
    }
}
