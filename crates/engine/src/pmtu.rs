//! pmtu: the path MTU of one family, found the way RFC 8899 (DPLPMTUD) probes it, on
//! datagrams. The client sends don't-fragment UDP probes (IP_PMTUDISC_PROBE /
//! IPV6_DONTFRAG: every size goes on the wire up to the interface MTU, whatever the
//! kernel has cached) of a searched IP packet size; the server acknowledges each with a
//! header-only reply, so the return path's MTU does not matter. A size counts as lost
//! only after [`TRIES`] probes of it went unanswered (RFC 8899 §5.1.2's MAX_PROBES: one
//! loss is not a verdict). Beside the probes the client reads its socket error queue
//! (IP_RECVERR / IPV6_RECVERR) for an ICMPv6 Packet Too Big / ICMP
//! fragmentation-needed and who sent it, and at the end the path MTU its kernel learned
//! (IP_MTU / IPV6_MTU).
//!
//! The search ([`MtuSearch`]) is pure: between the family's minimum (1280 for IPv6,
//! RFC 8200 §5; 68 for IPv4, RFC 791) and the largest IP packet, bisection to the byte,
//! trying first the MTU a Packet Too Big named (and one byte above it). A size above the
//! interface MTU fails at once (EMSGSIZE on send), so the search costs time only where
//! probes vanish on the path.

use crate::data::{Outcome, SendBound, Shared};
use measure::LatencyHistogram;
use net::pathmtu::{self, ErrorOrigin, QueuedErrorKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::net::{IpAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::datagram::{DatagramHeader, DatagramView, FLAG_RESPONSE, HEADER_BYTES};
use wire::spec::Family;

/// Probes of one size before it counts as not crossing the path (RFC 8899 §5.1.2
/// suggests MAX_PROBES = 3).
pub const TRIES: u32 = 3;
/// Probe sizes one search tries at most (bisection of 68..65535 takes 17; a Packet Too
/// Big hint two more): bounds the run whatever the path answers.
pub const MAX_SIZES: usize = 40;
/// The largest IP packet (IPv4 total length, and the IPv6 packet without jumbograms
/// whose payload a UDP datagram can fill).
pub const MAX_PACKET_BYTES: u32 = 65_535;

/// The smallest IP packet a path of `family` must carry: IPv6 1280 (RFC 8200 §5),
/// IPv4 68 (RFC 791).
pub fn min_packet_bytes(family: Family) -> u32 {
    match family {
        Family::V4 => 68,
        Family::V6 => 1280,
    }
}

/// IP and UDP header bytes of a probe: payload = packet size − this.
pub fn probe_overhead_bytes(family: Family) -> u32 {
    family.ip_header_bytes() + 8
}

/// What became of the probes of one size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeFate {
    /// The server acknowledged one.
    Answered,
    /// This host refused to send it (above the interface MTU).
    TooBigLocally,
    /// No acknowledgement after [`TRIES`] probes.
    Vanished,
}

/// The pure search for the largest IP packet size that crosses the path.
#[derive(Debug, Clone)]
pub struct MtuSearch {
    min_bytes: u32,
    /// Largest size answered.
    pass: Option<u32>,
    /// Smallest size that failed, and how (`None` = nothing failed yet; the bound is
    /// then [`MAX_PACKET_BYTES`] + 1).
    fail: Option<(u32, SizeFate)>,
    /// The MTU a Packet Too Big named.
    hint: Option<u32>,
    tried: BTreeSet<u32>,
}

impl MtuSearch {
    pub fn new(min_bytes: u32) -> MtuSearch {
        MtuSearch {
            min_bytes,
            pass: None,
            fail: None,
            hint: None,
            tried: BTreeSet::new(),
        }
    }

    fn fail_bound(&self) -> u32 {
        self.fail.map_or(MAX_PACKET_BYTES + 1, |(s, _)| s)
    }

    /// The next size to probe, or `None` when the search is over: the minimum first;
    /// nothing more if it failed; else the size a Packet Too Big named and the one above
    /// it when they lie inside the open bracket, then its midpoint, until the largest
    /// pass and the smallest failure are one byte apart.
    pub fn next(&self) -> Option<u32> {
        let Some(pass) = self.pass else {
            return (!self.tried.contains(&self.min_bytes)).then_some(self.min_bytes);
        };
        let fail = self.fail_bound();
        if fail <= pass + 1 || self.tried.len() >= MAX_SIZES {
            return None;
        }
        let inside = |s: u32| s > pass && s < fail && !self.tried.contains(&s);
        if let Some(h) = self.hint {
            if let Some(s) = [h, h.saturating_add(1)].into_iter().find(|&s| inside(s)) {
                return Some(s);
            }
        }
        Some(pass + (fail - pass) / 2)
    }

    /// Record what became of the probes of `size`.
    pub fn record(&mut self, size: u32, fate: SizeFate) {
        self.tried.insert(size);
        match fate {
            SizeFate::Answered => self.pass = Some(self.pass.map_or(size, |p| p.max(size))),
            SizeFate::TooBigLocally | SizeFate::Vanished => {
                if size < self.fail_bound() {
                    self.fail = Some((size, fate));
                }
            }
        }
        // A path that answered a larger size than one that failed (loss, or a path
        // that changed): the failure above the pass is what bounds the search.
        if let (Some(p), Some((f, _))) = (self.pass, self.fail) {
            if f <= p {
                self.fail = None;
            }
        }
    }

    /// A Packet Too Big / fragmentation-needed named `mtu_bytes`: probed next.
    pub fn signalled(&mut self, mtu_bytes: u32) {
        if mtu_bytes >= self.min_bytes {
            self.hint = Some(mtu_bytes);
        }
    }

    /// The largest size answered (the path MTU once the search is over).
    pub fn largest_answered(&self) -> Option<u32> {
        self.pass
    }

    /// The smallest size that failed, and how.
    pub fn smallest_failed(&self) -> Option<(u32, SizeFate)> {
        self.fail
    }

    pub fn done(&self) -> bool {
        self.next().is_none()
    }
}

/// An ICMPv6 Packet Too Big or ICMP fragmentation-needed that reached the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TooBigSignal {
    /// The MTU it named, bytes.
    pub mtu_bytes: u32,
    /// Who sent it (the hop that could not forward the probe).
    pub from: Option<IpAddr>,
}

/// What the pmtu test found for one family.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PmtuReport {
    pub family: Family,
    /// The smallest size the search starts from (the family's minimum).
    pub min_bytes: u32,
    /// The largest IP packet answered; `None` when not even the minimum was.
    pub path_mtu_bytes: Option<u32>,
    /// The smallest size that did not cross, and whether this host refused it (above
    /// its interface MTU) rather than the path losing it.
    pub first_failed_bytes: Option<u32>,
    pub failed_locally: bool,
    /// The first Packet Too Big / fragmentation-needed that arrived.
    pub too_big: Option<TooBigSignal>,
    /// IP_MTU / IPV6_MTU after the probes; `None` when unreadable.
    pub kernel_path_mtu_bytes: Option<u32>,
    pub probes_sent: u64,
    /// False when the test's time or count ran out before the search ended: the path
    /// MTU is then a lower bound.
    pub complete: bool,
}

impl PmtuReport {
    /// Probes above the path MTU vanished on the path and no Packet Too Big came back:
    /// `Some(true)`; `None` when no probe was answered at all or the search was cut short.
    pub fn black_hole(&self) -> Option<bool> {
        self.path_mtu_bytes?;
        if !self.complete {
            return None;
        }
        Some(self.first_failed_bytes.is_some() && !self.failed_locally && self.too_big.is_none())
    }

    /// The finding in words: "path MTU 1280, signalled by fd02::1", "black hole:
    /// datagrams above 1280 B vanish and no Packet Too Big arrives", "1500, clean".
    pub fn verdict(&self) -> String {
        let ptb = match self.family {
            Family::V6 => "Packet Too Big",
            Family::V4 => "fragmentation-needed",
        };
        let Some(mtu) = self.path_mtu_bytes else {
            return format!(
                "no answer: not even {} B probes were acknowledged (the path or the server's UDP port drops them)",
                self.min_bytes
            );
        };
        if !self.complete {
            return format!(
                "path MTU at least {mtu} (the test ended before the search did; give it more time with -d)"
            );
        }
        match (self.first_failed_bytes, self.too_big) {
            (None, _) => format!("{mtu} or more (the largest probe), clean"),
            (Some(_), _) if self.failed_locally => format!("{mtu}, clean"),
            (Some(_), Some(sig)) => {
                let from = sig
                    .from
                    .map_or("an unnamed hop".to_string(), |a| a.to_string());
                let named = if sig.mtu_bytes == mtu {
                    String::new()
                } else {
                    format!(" (it named {} B)", sig.mtu_bytes)
                };
                format!("path MTU {mtu}, signalled by {from}{named}")
            }
            (Some(_), None) => {
                format!("black hole: datagrams above {mtu} B vanish and no {ptb} arrives")
            }
        }
    }
}

/// Reads the error queue without waiting and keeps the first Packet Too Big (or
/// fragmentation-needed) from the path; errors of this host's own sends are not one.
fn read_signals(sock: &UdpSocket, first: &mut Option<TooBigSignal>, search: &mut MtuSearch) {
    let Ok(errors) = pathmtu::drain_queued_errors(sock) else {
        return;
    };
    for e in errors {
        let from_path = matches!(e.origin, ErrorOrigin::Icmp | ErrorOrigin::Icmp6);
        if let (QueuedErrorKind::MessageTooBig, true, Some(mtu)) = (e.kind, from_path, e.mtu_bytes)
        {
            search.signalled(mtu);
            if first.is_none() {
                *first = Some(TooBigSignal {
                    mtu_bytes: mtu,
                    from: e.offender,
                });
            }
        }
    }
}

/// Prepares a connected UDP socket for probing: don't-fragment ignoring the cached path
/// MTU, and ICMP errors on the error queue.
pub(crate) fn prepare(sock: &UdpSocket) -> Result<(), pathmtu::PathError> {
    pathmtu::set_df_mode(sock, pathmtu::DfMode::Probe)?;
    pathmtu::enable_error_queue(sock)
}

/// The pmtu client: runs the search on a connected, [`prepare`]d socket; each probe
/// waits up to `timeout` for its acknowledgement. The report is in `Outcome::pmtu`.
pub(crate) fn probe_client(
    sock: UdpSocket,
    family: Family,
    timeout: Duration,
    bound: SendBound,
    shared: Arc<Shared>,
) -> Outcome {
    let overhead = probe_overhead_bytes(family);
    let mut search = MtuSearch::new(min_packet_bytes(family));
    let mut o = Outcome::default();
    let mut rtt = LatencyHistogram::new();
    let mut too_big = None;
    let mut probe = vec![0u8; (MAX_PACKET_BYTES - overhead) as usize];
    let mut reply = vec![0u8; 2048];
    let mut seq = 0u64;
    let mut complete = true;
    let timeout = timeout.max(Duration::from_millis(1));
    'sizes: while let Some(size) = search.next() {
        let payload = (size - overhead).max(HEADER_BYTES as u32) as usize;
        let mut fate = SizeFate::Vanished;
        for _ in 0..TRIES {
            let t0 = Instant::now();
            if bound.done(seq, t0) || shared.aborted() {
                complete = false;
                break 'sizes;
            }
            let buf = &mut probe[..payload];
            if let Ok(mut v) = DatagramView::new_checked(&mut buf[..]) {
                v.set_header(&DatagramHeader {
                    seq,
                    send_time_ns: shared.ns_since_go(t0),
                    stream_id: 0,
                    flags: 0,
                    token: shared.token,
                });
            }
            let this = seq;
            seq += 1;
            match sock.send(buf) {
                Ok(_) => {
                    o.sent_packets += 1;
                    o.sent_bytes += payload as u64;
                    shared.add_sent(payload as u64, 1);
                }
                Err(e) if pathmtu::is_message_too_big(&e) => {
                    fate = SizeFate::TooBigLocally;
                    break;
                }
                Err(e) => {
                    // An ICMP error reported on this call (IP_RECVERR), a full queue: the
                    // probe did not leave; the try counts, and the error is kept once.
                    read_signals(&sock, &mut too_big, &mut search);
                    let text = format!("pmtu probe send: {e}");
                    if !o.errors.contains(&text) && o.errors.len() < 8 {
                        o.errors.push(text);
                    }
                    continue;
                }
            }
            if await_ack(
                &sock,
                this,
                t0 + timeout,
                &mut reply,
                &mut o,
                &shared,
                &mut rtt,
            ) {
                fate = SizeFate::Answered;
            }
            read_signals(&sock, &mut too_big, &mut search);
            if fate == SizeFate::Answered {
                break;
            }
        }
        search.record(size, fate);
    }
    read_signals(&sock, &mut too_big, &mut search);
    let failed = search.smallest_failed();
    o.pmtu = Some(PmtuReport {
        family,
        min_bytes: min_packet_bytes(family),
        path_mtu_bytes: search.largest_answered(),
        first_failed_bytes: failed.map(|(s, _)| s),
        failed_locally: failed.is_some_and(|(_, f)| f == SizeFate::TooBigLocally),
        too_big,
        kernel_path_mtu_bytes: pathmtu::kernel_path_mtu(&sock).ok(),
        probes_sent: o.sent_packets,
        complete: complete && search.done(),
    });
    o.last_send_ns = shared.ns_since_go(Instant::now());
    o.last_recv_ns = o.last_recv_ns.max(o.last_send_ns);
    o.rtt = Some(rtt);
    o
}

/// Waits until `deadline` for the acknowledgement of probe `seq`; errors the kernel
/// reports on the socket meanwhile (a Packet Too Big is one) do not end the wait.
fn await_ack(
    sock: &UdpSocket,
    seq: u64,
    deadline: Instant,
    reply: &mut [u8],
    o: &mut Outcome,
    shared: &Shared,
    rtt: &mut LatencyHistogram,
) -> bool {
    loop {
        let now = Instant::now();
        if now >= deadline || shared.aborted() {
            return false;
        }
        let _ = sock.set_read_timeout(Some((deadline - now).max(Duration::from_micros(1))));
        match sock.recv(reply) {
            Ok(n) => {
                let Ok(v) = DatagramView::new_checked(&reply[..n]) else {
                    continue;
                };
                if v.seq() != seq || v.flags() & FLAG_RESPONSE == 0 || v.token() != shared.token {
                    continue;
                }
                let t1 = Instant::now();
                let sent = shared.go + Duration::from_nanos(v.send_time_ns());
                let ns = t1.saturating_duration_since(sent).as_nanos().max(1);
                rtt.record(u64::try_from(ns).unwrap_or(u64::MAX));
                o.recv_packets += 1;
                o.recv_bytes += n as u64;
                o.transactions += 1;
                shared.add_recv(n as u64, 1);
                o.last_recv_ns = shared.ns_since_go(t1);
                return true;
            }
            Err(_) => {
                // A timeout is seen at the loop head; an ICMP error is read afterwards.
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a path that answers sizes up to `path_mtu`, refuses
    /// locally above `iface_mtu` and (when `ptb`) names `path_mtu` on the first vanished
    /// probe; returns (path MTU found, sizes tried).
    fn simulate(min: u32, path_mtu: u32, iface_mtu: u32, ptb: bool) -> (MtuSearch, usize) {
        let mut s = MtuSearch::new(min);
        let mut tried = 0;
        while let Some(size) = s.next() {
            tried += 1;
            let fate = if size > iface_mtu {
                SizeFate::TooBigLocally
            } else if size > path_mtu {
                if ptb {
                    s.signalled(path_mtu);
                }
                SizeFate::Vanished
            } else {
                SizeFate::Answered
            };
            s.record(size, fate);
            assert!(tried <= MAX_SIZES, "the search does not end");
        }
        (s, tried)
    }

    #[test]
    fn the_search_finds_the_path_mtu_to_the_byte() {
        for (min, path, iface) in [
            (1280, 1400, 1500),
            (1280, 1280, 1500),
            (68, 1400, 1500),
            (68, 1500, 1500),
            (1280, 1499, 9000),
            (68, 576, 1500),
        ] {
            for ptb in [false, true] {
                let (s, _) = simulate(min, path, iface, ptb);
                assert_eq!(
                    s.largest_answered(),
                    Some(path),
                    "{min} {path} {iface} {ptb}"
                );
                let (failed, fate) = s.smallest_failed().unwrap();
                assert_eq!(failed, path + 1);
                let want = if path == iface {
                    SizeFate::TooBigLocally
                } else {
                    SizeFate::Vanished
                };
                assert_eq!(fate, want);
            }
        }
    }

    #[test]
    fn a_packet_too_big_hint_is_verified_in_two_probes() {
        // Minimum, then the first bisection probe vanishes with a PTB naming 1400:
        // 1400 and 1401 settle it.
        let (with, n_with) = simulate(1280, 1400, 1500, true);
        let (_, n_without) = simulate(1280, 1400, 1500, false);
        assert_eq!(with.largest_answered(), Some(1400));
        assert!(n_with < n_without, "{n_with} vs {n_without}");
    }

    #[test]
    fn nothing_answered_at_the_minimum_ends_the_search_without_a_path_mtu() {
        let mut s = MtuSearch::new(1280);
        assert_eq!(s.next(), Some(1280));
        s.record(1280, SizeFate::Vanished);
        assert_eq!(s.next(), None);
        assert_eq!(s.largest_answered(), None);
    }

    #[test]
    fn a_hint_outside_the_bracket_is_ignored() {
        let mut s = MtuSearch::new(1280);
        s.record(1280, SizeFate::Answered);
        s.record(1500, SizeFate::Vanished);
        s.signalled(9000);
        assert_eq!(s.next(), Some(1390));
        s.signalled(100);
        assert_eq!(s.next(), Some(1390));
    }

    fn report(too_big: Option<TooBigSignal>, failed_locally: bool) -> PmtuReport {
        PmtuReport {
            family: Family::V6,
            min_bytes: 1280,
            path_mtu_bytes: Some(1280),
            first_failed_bytes: Some(1281),
            failed_locally,
            too_big,
            kernel_path_mtu_bytes: Some(1280),
            probes_sent: 30,
            complete: true,
        }
    }

    #[test]
    fn the_verdict_names_the_signal_the_black_hole_or_a_clean_path() {
        let sig = TooBigSignal {
            mtu_bytes: 1280,
            from: Some("fd02::1".parse().unwrap()),
        };
        let r = report(Some(sig), false);
        assert_eq!(r.verdict(), "path MTU 1280, signalled by fd02::1");
        assert_eq!(r.black_hole(), Some(false));
        let r = report(None, false);
        assert_eq!(
            r.verdict(),
            "black hole: datagrams above 1280 B vanish and no Packet Too Big arrives"
        );
        assert_eq!(r.black_hole(), Some(true));
        let mut r = report(None, true);
        r.path_mtu_bytes = Some(1500);
        assert_eq!(r.verdict(), "1500, clean");
        assert_eq!(r.black_hole(), Some(false));
        let mut r = report(None, false);
        r.path_mtu_bytes = None;
        assert!(r.verdict().starts_with("no answer"), "{}", r.verdict());
        assert_eq!(r.black_hole(), None);
        let mut r = report(None, false);
        r.complete = false;
        assert!(r.verdict().contains("at least 1280"), "{}", r.verdict());
        assert_eq!(r.black_hole(), None);
    }
}
