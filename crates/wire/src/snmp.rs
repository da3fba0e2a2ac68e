//! UDP error counters of a host's network stack, as Linux prints them in
//! `/proc/net/snmp` (a header line `Udp: Name Name …` and a value line `Udp: n n …`) and
//! `/proc/net/snmp6` (one `Udp6Name value` per line). Text in, numbers out; the reading
//! itself lives in `net` (re-exported as `measure::snmp`).
//!
//! The counters are system-wide (per network namespace), cumulative since boot:
//! `RcvbufErrors` counts datagrams dropped because a receiving socket's buffer was full,
//! `InErrors` every datagram the stack could not deliver (it includes `RcvbufErrors`).
//! A run uses the delta between two snapshots, and other programs' datagrams count too.

/// UDP delivery errors of both families, summed (IPv4 `Udp:` + IPv6 `Udp6`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpErrorCounters {
    /// Datagrams the stack could not deliver to a socket (includes `rcvbuf_errors`).
    pub in_errors: u64,
    /// Datagrams dropped because the receiving socket's buffer was full.
    pub rcvbuf_errors: u64,
}

impl UdpErrorCounters {
    /// `self` − `earlier`, saturating (a counter reset or wrap gives 0, not a huge value).
    pub fn since(&self, earlier: &UdpErrorCounters) -> UdpErrorCounters {
        UdpErrorCounters {
            in_errors: self.in_errors.saturating_sub(earlier.in_errors),
            rcvbuf_errors: self.rcvbuf_errors.saturating_sub(earlier.rcvbuf_errors),
        }
    }

    /// Add another family's counters.
    pub fn plus(&self, other: &UdpErrorCounters) -> UdpErrorCounters {
        UdpErrorCounters {
            in_errors: self.in_errors.saturating_add(other.in_errors),
            rcvbuf_errors: self.rcvbuf_errors.saturating_add(other.rcvbuf_errors),
        }
    }
}

/// The IPv4 `Udp:` counters of `/proc/net/snmp` text; `None` when the table is missing
/// or malformed (never `UdpLite:`).
pub fn parse_snmp(text: &str) -> Option<UdpErrorCounters> {
    let mut rows = text
        .lines()
        .filter_map(|l| l.strip_prefix("Udp:"))
        .map(|rest| rest.split_whitespace().collect::<Vec<&str>>());
    let names = rows.next()?;
    let values = rows.next()?;
    if names.len() != values.len() {
        return None;
    }
    let get = |want: &str| -> Option<u64> {
        let i = names.iter().position(|n| *n == want)?;
        values.get(i)?.parse().ok()
    };
    Some(UdpErrorCounters {
        in_errors: get("InErrors")?,
        rcvbuf_errors: get("RcvbufErrors")?,
    })
}

/// The IPv6 `Udp6InErrors` / `Udp6RcvbufErrors` counters of `/proc/net/snmp6` text.
pub fn parse_snmp6(text: &str) -> Option<UdpErrorCounters> {
    let get = |want: &str| -> Option<u64> {
        text.lines().find_map(|l| {
            let mut it = l.split_whitespace();
            (it.next()? == want).then(|| it.next()?.parse().ok())?
        })
    };
    Some(UdpErrorCounters {
        in_errors: get("Udp6InErrors")?,
        rcvbuf_errors: get("Udp6RcvbufErrors")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNMP: &str = "Ip: Forwarding DefaultTTL\nIp: 1 64\n\
        Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
        Udp: 31 0 17 32 12 0 0 0 0\n\
        UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n\
        UdpLite: 0 0 99 0 98 0 0 0 0\n";
    const SNMP6: &str = "Udp6InDatagrams                 \t5\nUdp6NoPorts \t0\n\
        Udp6InErrors                    \t9\nUdp6RcvbufErrors\t4\nUdpLite6InErrors 77\n";

    #[test]
    fn snmp_reads_the_udp_table_by_column_name_not_udplite() {
        let c = parse_snmp(SNMP).unwrap();
        assert_eq!(
            c,
            UdpErrorCounters {
                in_errors: 17,
                rcvbuf_errors: 12
            }
        );
    }

    #[test]
    fn snmp6_reads_udp6_lines() {
        let c = parse_snmp6(SNMP6).unwrap();
        assert_eq!(c.in_errors, 9);
        assert_eq!(c.rcvbuf_errors, 4);
        assert_eq!(c.plus(&parse_snmp(SNMP).unwrap()).rcvbuf_errors, 16);
    }

    #[test]
    fn malformed_or_missing_tables_give_none_and_deltas_saturate() {
        assert_eq!(parse_snmp(""), None);
        assert_eq!(parse_snmp("Udp: InErrors RcvbufErrors\nUdp: 1\n"), None);
        assert_eq!(parse_snmp("Udp: InErrors RcvbufErrors\nUdp: x 2\n"), None);
        assert_eq!(parse_snmp6("Udp6InErrors 1\n"), None);
        let a = UdpErrorCounters {
            in_errors: 5,
            rcvbuf_errors: 5,
        };
        let b = UdpErrorCounters {
            in_errors: 7,
            rcvbuf_errors: 3,
        };
        assert_eq!(
            b.since(&a),
            UdpErrorCounters {
                in_errors: 2,
                rcvbuf_errors: 0
            }
        );
    }
}
