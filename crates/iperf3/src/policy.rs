//! The limits of the server that runs us (`dualperf server --max-*`) applied to an
//! iperf3 test's parameters before any stream is opened: the same limits and the same
//! words as the dualperf port gives (`engine::server_ctx::check_limits`), each refusal
//! carrying the iperf3 error code whose message an unmodified client prints (the
//! closest one a 3.12 client knows: it has no code for "the server's limit").
//! Pure: parameters and the peer's address in, a decision out.

use crate::json::{Params, Protocol, DEFAULT_UDP_BANDWIDTH_BPS, MAX_STREAMS, MAX_TIME_S};
use std::net::IpAddr;
use std::time::Duration;
use wire::spec::Family;

/// iperf3 error codes a refusal is sent with (src/iperf_api.h; what 3.12 prints).
pub mod code {
    /// IEDURATION: "test duration too long".
    pub const DURATION: i32 = 5;
    /// IENUMSTREAMS: "number of parallel streams too large".
    pub const STREAMS: i32 = 6;
    /// IEBLOCKSIZE: "block size too large" (TCP).
    pub const TCP_BLOCK: i32 = 7;
    /// IEUDPBLOCKSIZE: "block size invalid" (UDP).
    pub const UDP_BLOCK: i32 = 20;
    /// IETOTALRATE: "total required bandwidth is larger than server limit".
    pub const TOTAL_RATE: i32 = 27;
    /// IEACCESSDENIED: "the server is busy running a test. try again later".
    pub const BUSY: i32 = 121;
    /// IEAUTHTEST: "test authorization failed".
    pub const AUTH: i32 = 142;
}

/// The server's limits for one iperf3 test.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Largest `-P` (`parallel`; with `--bidir` that many each way, as the dualperf port
    /// counts `--streams`).
    pub max_streams: u32,
    /// Longest test (`-t` plus `-O`); a bytes- or blocks-bound test (`-n`, `-k`) is
    /// ended by the server after this long.
    pub max_duration: Duration,
    /// Total UDP rate the server may be asked to send (`-u -R`, `-u --bidir`), bit/s of
    /// IP packets: `-b`'s payload bits with each datagram's UDP and IP headers; `None` =
    /// unlimited. Unpaced (`-b 0`) sending only to a
    /// loopback peer while set.
    pub max_send_rate_bps: Option<u64>,
    /// Largest `-l`; `None` = iperf3's own maxima.
    pub max_payload_bytes: Option<u32>,
}

impl Default for Policy {
    /// iperf3's own limits: what a plain `iperf3 -s` accepts.
    fn default() -> Policy {
        Policy {
            max_streams: MAX_STREAMS,
            max_duration: Duration::from_secs(MAX_TIME_S as u64),
            max_send_rate_bps: None,
            max_payload_bytes: None,
        }
    }
}

/// Why a test is refused: the iperf3 code sent to the client, the `dualperf server`
/// flag that refused it, and the reason in words for the server's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: i32,
    pub flag: &'static str,
    pub message: String,
}

fn refuse(code: i32, flag: &'static str, message: String) -> Result<(), Refusal> {
    Err(Refusal {
        code,
        flag,
        message,
    })
}

impl Policy {
    /// Checks `p` from a client at `peer`.
    pub fn check(&self, p: &Params, peer: IpAddr) -> Result<(), Refusal> {
        if p.parallel > self.max_streams {
            return refuse(
                code::STREAMS,
                "--max-streams",
                format!(
                    "the server allows at most {} streams per test (--max-streams); {} asked for",
                    self.max_streams, p.parallel
                ),
            );
        }
        if let Some(max) = self.max_payload_bytes {
            if p.len_bytes > max {
                let code = match p.protocol {
                    Protocol::Udp => code::UDP_BLOCK,
                    _ => code::TCP_BLOCK,
                };
                return refuse(
                    code,
                    "--max-payload",
                    format!(
                        "the server allows payloads of at most {max} bytes (--max-payload); {} asked for",
                        p.len_bytes
                    ),
                );
            }
        }
        self.check_duration(p)?;
        self.check_rate(p, peer)
    }

    fn check_duration(&self, p: &Params) -> Result<(), Refusal> {
        let max_secs = self.max_duration.as_secs_f64();
        let count_bound = p.num_bytes > 0 || p.blockcount > 0;
        let asked_s = p.time_s.saturating_add(p.omit_s);
        if !count_bound && p.time_s == 0 {
            return refuse(
                code::DURATION,
                "--max-duration",
                format!(
                    "the server allows tests of at most {max_secs} s (--max-duration); an unbounded test (-t 0) asked for"
                ),
            );
        }
        if !count_bound && asked_s as f64 > max_secs {
            return refuse(
                code::DURATION,
                "--max-duration",
                format!(
                    "the server allows tests of at most {max_secs} s (--max-duration); {asked_s} s asked for"
                ),
            );
        }
        // A count at a set rate that cannot finish in time is refused now rather than cut.
        let per_stream_bps = p.bandwidth_bps.unwrap_or(match p.protocol {
            Protocol::Udp => DEFAULT_UDP_BANDWIDTH_BPS,
            _ => 0,
        });
        let total_bps = per_stream_bps.saturating_mul(u64::from(p.parallel));
        let bytes = if p.num_bytes > 0 {
            p.num_bytes
        } else {
            p.blockcount.saturating_mul(u64::from(p.len_bytes))
        };
        if count_bound && total_bps > 0 {
            let secs = bytes as f64 * 8.0 / total_bps as f64;
            if secs > max_secs {
                return refuse(
                    code::DURATION,
                    "--max-duration",
                    format!(
                        "the server allows tests of at most {max_secs} s (--max-duration); {bytes} bytes at {} Mbit/s take {secs:.0} s",
                        total_bps / 1_000_000
                    ),
                );
            }
        }
        Ok(())
    }

    fn check_rate(&self, p: &Params, peer: IpAddr) -> Result<(), Refusal> {
        let server_sends = p.protocol == Protocol::Udp && (p.reverse || p.bidirectional);
        let Some(max_bps) = self.max_send_rate_bps.filter(|_| server_sends) else {
            return Ok(());
        };
        match ip_send_bps(p, peer) {
            None if is_loopback(peer) => Ok(()),
            None => refuse(
                code::TOTAL_RATE,
                "--max-rate",
                format!(
                    "the server sends UDP at most at {} Mbit/s in total (--max-rate): ask for a rate (-b)",
                    max_bps / 1_000_000
                ),
            ),
            Some(total) if total > max_bps as f64 => refuse(
                code::TOTAL_RATE,
                "--max-rate",
                format!(
                    "the server sends UDP at most at {} Mbit/s in total (--max-rate); {} Mbit/s asked for (payload with its UDP and IP headers)",
                    max_bps / 1_000_000,
                    (total / 1e6) as u64
                ),
            ),
            Some(_) => Ok(()),
        }
    }

    /// What an admitted test takes of the server's `--max-rate` total, IP bit/s: 0
    /// when the server sends no UDP or has no limit, the whole limit when unpaced.
    pub fn send_bps(&self, p: &Params, peer: IpAddr) -> u64 {
        let server_sends = p.protocol == Protocol::Udp && (p.reverse || p.bidirectional);
        match self.max_send_rate_bps.filter(|_| server_sends) {
            None => 0,
            // Saturating: f64 → u64 `as` clamps.
            Some(max) => ip_send_bps(p, peer).map_or(max, |b| b as u64),
        }
    }
}

/// The UDP the server sends for `p`, bit/s of IP packets (`None`: unpaced, `-b 0`).
/// iperf3's -b counts payload bits; --max-rate bounds what the network carries (as on
/// the dualperf port): each datagram with its UDP and IP headers, from the overhead
/// model, on the control connection's family.
fn ip_send_bps(p: &Params, peer: IpAddr) -> Option<f64> {
    let per_stream_bps = p.bandwidth_bps.unwrap_or(DEFAULT_UDP_BANDWIDTH_BPS);
    if per_stream_bps == 0 {
        return None;
    }
    let family = if is_v4(peer) { Family::V4 } else { Family::V6 };
    let per_byte = model::OverheadModel::udp_ip_bytes_per_payload_byte(family, p.len_bytes);
    Some(per_stream_bps as f64 * f64::from(p.parallel) * per_byte)
}

/// An IPv4 peer, including one on a dual-stack socket (v4-mapped).
fn is_v4(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(_) => true,
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some(),
    }
}

/// Loopback, including an IPv4 loopback client of a dual-stack socket.
fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(v6.is_loopback(), |v4| v4.is_loopback()),
        IpAddr::V4(v4) => v4.is_loopback(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited() -> Policy {
        Policy {
            max_streams: 4,
            max_duration: Duration::from_secs(5),
            max_send_rate_bps: Some(100_000_000),
            max_payload_bytes: Some(2000),
        }
    }

    fn far() -> IpAddr {
        "192.0.2.1".parse().unwrap()
    }

    fn udp(time_s: i64) -> Params {
        Params::new(Protocol::Udp, time_s)
    }

    #[test]
    fn each_limit_refuses_with_its_flag_and_iperf3_code() {
        let pol = limited();
        let mut p = Params::new(Protocol::Tcp, 3600);
        p.len_bytes = 2000;
        p.parallel = 128;
        let r = pol.check(&p, far()).unwrap_err();
        assert_eq!((r.code, r.flag), (code::STREAMS, "--max-streams"));
        assert!(r.message.contains("at most 4 streams"), "{}", r.message);

        p.parallel = 4;
        let r = pol.check(&p, far()).unwrap_err();
        assert_eq!((r.code, r.flag), (code::DURATION, "--max-duration"));
        assert!(r.message.contains("3600 s asked for"), "{}", r.message);

        let mut p = udp(3);
        p.len_bytes = 60_000;
        let r = pol.check(&p, far()).unwrap_err();
        assert_eq!((r.code, r.flag), (code::UDP_BLOCK, "--max-payload"));
        let mut t = Params::new(Protocol::Tcp, 3);
        t.len_bytes = 2001;
        assert_eq!(pol.check(&t, far()).unwrap_err().code, code::TCP_BLOCK);

        let mut p = udp(3);
        p.reverse = true;
        p.bandwidth_bps = Some(10_000_000_000);
        let r = pol.check(&p, far()).unwrap_err();
        assert_eq!((r.code, r.flag), (code::TOTAL_RATE, "--max-rate"));
        assert!(
            r.message.contains("10191 Mbit/s asked for"),
            "{}",
            r.message
        );
    }

    #[test]
    fn what_fits_is_admitted() {
        let pol = limited();
        let mut p = udp(3);
        p.omit_s = 2;
        p.parallel = 4;
        p.len_bytes = 2000;
        p.bidirectional = true;
        // 4 × 24 Mbit/s of payload in 2000-byte datagrams: 97.3 Mbit/s of IPv4 packets.
        p.bandwidth_bps = Some(24_000_000);
        assert_eq!(pol.check(&p, far()), Ok(()));
        // Forward traffic is the client's to send: --max-rate bounds what we send.
        let mut f = udp(3);
        f.bandwidth_bps = Some(100_000_000_000);
        assert_eq!(pol.check(&f, far()), Ok(()));
        // TCP is not rate-limited on either port (congestion control paces it).
        let mut t = Params::new(Protocol::Tcp, 5);
        t.len_bytes = 1000;
        t.reverse = true;
        t.bandwidth_bps = Some(0);
        assert_eq!(pol.check(&t, far()), Ok(()));
        assert_eq!(Policy::default().check(&udp(86_400), far()), Ok(()));
    }

    #[test]
    fn duration_counts_omit_and_refuses_unbounded_tests() {
        let pol = limited();
        let mut p = udp(4);
        p.omit_s = 2;
        assert_eq!(pol.check(&p, far()).unwrap_err().code, code::DURATION);
        let r = pol.check(&udp(0), far()).unwrap_err();
        assert!(r.message.contains("unbounded"), "{}", r.message);
    }

    #[test]
    fn count_bound_tests_are_admitted_unless_their_rate_cannot_finish_in_time() {
        let pol = limited();
        let mut p = udp(0);
        p.num_bytes = 1_000_000_000; // 8 Gbit at 1 Mbit/s: 8000 s
        assert_eq!(pol.check(&p, far()).unwrap_err().flag, "--max-duration");
        p.num_bytes = 500_000; // 4 s
        assert_eq!(pol.check(&p, far()), Ok(()));
        let mut t = Params::new(Protocol::Tcp, 0);
        t.len_bytes = 1000;
        t.blockcount = 1 << 40; // no rate: bounded by the server's clock instead
        assert_eq!(pol.check(&t, far()), Ok(()));
    }

    #[test]
    fn unpaced_udp_from_the_server_goes_to_loopback_only() {
        let pol = limited();
        let mut p = udp(3);
        p.reverse = true;
        p.bandwidth_bps = Some(0);
        let r = pol.check(&p, far()).unwrap_err();
        assert!(r.message.contains("ask for a rate"), "{}", r.message);
        for lo in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(pol.check(&p, lo.parse().unwrap()), Ok(()), "{lo}");
        }
        assert!(pol.check(&p, "::ffff:192.0.2.1".parse().unwrap()).is_err());
        // Absent -b means iperf3's 1 Mbit/s.
        p.bandwidth_bps = None;
        assert_eq!(pol.check(&p, far()), Ok(()));
    }

    /// `--max-rate` bounds IP packets: 100-byte datagrams at 1 Mbit/s of payload (`-b`)
    /// are 1.28 Mbit/s over IPv4 (28 bytes of headers each) and 1.48 over IPv6 (48).
    #[test]
    fn the_limit_counts_each_datagrams_udp_and_ip_headers_on_its_family() {
        let pol = Policy {
            max_send_rate_bps: Some(1_300_000),
            ..Policy::default()
        };
        let mut p = udp(3);
        p.reverse = true;
        p.len_bytes = 100;
        p.bandwidth_bps = Some(1_000_000);
        assert_eq!(pol.check(&p, far()), Ok(()));
        assert_eq!(pol.check(&p, "::ffff:192.0.2.1".parse().unwrap()), Ok(()));
        let r = pol.check(&p, "2001:db8::1".parse().unwrap()).unwrap_err();
        assert_eq!((r.code, r.flag), (code::TOTAL_RATE, "--max-rate"));
        assert!(
            r.message
                .contains("; 1 Mbit/s asked for (payload with its UDP and IP headers)"),
            "{}",
            r.message
        );
        p.bandwidth_bps = Some(1_015_700);
        assert!(pol.check(&p, far()).is_err());
    }
}
