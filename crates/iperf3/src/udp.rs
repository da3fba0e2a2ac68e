//! iperf3's UDP datagrams (§6.2–§7), pure: the connect/reply magic, the checked header
//! view, the receiver's jitter (RFC 3550 §6.4.1) and iperf3's sequence-based loss rule,
//! and the sender's pacing arithmetic. The socket loops live in `streams`.

use std::time::Duration;

/// What a 3.12+ client sends as its first datagram ("9876" on the wire, §6.2).
pub const CONNECT_MAGIC: [u8; 4] = *b"9876";
/// What a 3.12+ server answers ("6789" on the wire).
pub const CONNECT_REPLY: [u8; 4] = *b"6789";
/// The ≤ 3.11 reply (987654321 as a little-endian int); 3.12 clients accept it.
pub const LEGACY_CONNECT_REPLY: [u8; 4] = [0xb1, 0x68, 0xde, 0x3a];

/// Whether a datagram received while waiting for the connect reply is that reply.
/// A reply is exactly 4 bytes; its content is not checked by any iperf3 version, and
/// data datagrams (≥ 16 bytes) that overtake it are skipped.
pub fn is_connect_reply(datagram: &[u8]) -> bool {
    datagram.len() == 4
}

/// The header at the front of every data datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatagramHeader {
    pub sec: u32,
    pub usec: u32,
    pub seq: u64,
}

impl DatagramHeader {
    /// Header length: 12 bytes with the 32-bit counter, 16 with the 64-bit one.
    pub fn len(counters_64bit: bool) -> usize {
        if counters_64bit {
            16
        } else {
            12
        }
    }

    /// Parses a received datagram; `None` if it is too short to hold a header.
    pub fn parse(datagram: &[u8], counters_64bit: bool) -> Option<DatagramHeader> {
        let be32 = |at: usize| -> Option<u32> {
            let b = datagram.get(at..at + 4)?;
            Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        let seq = if counters_64bit {
            let b = datagram.get(8..16)?;
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_be_bytes(a)
        } else {
            u64::from(be32(8)?)
        };
        Some(DatagramHeader {
            sec: be32(0)?,
            usec: be32(4)?,
            seq,
        })
    }

    /// Writes the header into the front of `buf`; false if `buf` is too short.
    pub fn write(&self, buf: &mut [u8], counters_64bit: bool) -> bool {
        let Some(head) = buf.get_mut(..Self::len(counters_64bit)) else {
            return false;
        };
        head[0..4].copy_from_slice(&self.sec.to_be_bytes());
        head[4..8].copy_from_slice(&self.usec.to_be_bytes());
        if counters_64bit {
            head[8..16].copy_from_slice(&self.seq.to_be_bytes());
        } else {
            // The 32-bit counter wraps, as it does in iperf3.
            head[8..12].copy_from_slice(&(self.seq as u32).to_be_bytes());
        }
        true
    }

    /// The send time in seconds.
    pub fn time_s(&self) -> f64 {
        f64::from(self.sec) + f64::from(self.usec) / 1e6
    }

    /// A header stamped with `now` (time since any fixed origin; only differences matter).
    pub fn stamped(now: Duration, seq: u64) -> DatagramHeader {
        DatagramHeader {
            sec: now.as_secs() as u32,
            usec: now.subsec_micros(),
            seq,
        }
    }
}

/// What a UDP receiver counts, exactly as iperf3 3.12 does (§7).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UdpRecvStats {
    /// Payload bytes of every counted datagram.
    pub bytes: u64,
    /// Datagrams counted.
    pub received: u64,
    /// Highest sequence number seen (iperf3 reports this as `packets`).
    pub max_seq: u64,
    /// Net lost datagrams (iperf3's `errors`).
    pub errors: i64,
    /// Datagrams that arrived with a sequence number not above the highest seen.
    pub out_of_order: u64,
    /// RFC 3550 interarrival jitter (the one estimator, `measure`'s), over the senders'
    /// stamps and this receiver's arrival times.
    pub jitter: measure::Rfc3550Jitter,
}

impl UdpRecvStats {
    /// RFC 3550 interarrival jitter in seconds, as iperf3 reports it.
    pub fn jitter_s(&self) -> f64 {
        self.jitter.jitter_ns() / 1e9
    }

    /// Counts one datagram of `len_bytes` with header `hdr` that arrived at `arrival_s`
    /// (receiver clock, seconds).
    pub fn on_datagram(&mut self, len_bytes: usize, hdr: &DatagramHeader, arrival_s: f64) {
        self.bytes += len_bytes as u64;
        self.received += 1;
        let send_ns = u64::from(hdr.sec) * 1_000_000_000 + u64::from(hdr.usec) * 1000;
        self.jitter
            .record(send_ns, (arrival_s.max(0.0) * 1e9).round() as u64);
        if hdr.seq > self.max_seq {
            if hdr.seq > self.max_seq + 1 {
                let gap = hdr.seq - self.max_seq - 1;
                self.errors = self
                    .errors
                    .saturating_add(i64::try_from(gap).unwrap_or(i64::MAX));
            }
            self.max_seq = hdr.seq;
        } else {
            self.out_of_order += 1;
            if self.errors > 0 {
                self.errors -= 1;
            }
        }
    }
}

/// How long a sender at `rate_bps` (0 = unlimited) must wait before its next send,
/// having sent `sent_bytes` in `elapsed`. iperf3 keeps the average rate at or below the
/// target; so do we.
pub fn pacing_delay(rate_bps: u64, sent_bytes: u64, elapsed: Duration) -> Option<Duration> {
    if rate_bps == 0 {
        return None;
    }
    let due_s = sent_bytes as f64 * 8.0 / rate_bps as f64;
    let ahead_s = due_s - elapsed.as_secs_f64();
    (ahead_s > 0.0).then(|| Duration::from_secs_f64(ahead_s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captured_headers_parse() {
        // §6.3: 00000187 000bc0c2 00000001 = 391 s, 770242 µs, seq 1.
        let d = [0, 0, 1, 0x87, 0, 0x0b, 0xc0, 0xc2, 0, 0, 0, 1, 0x6e, 0xa5];
        let h = DatagramHeader::parse(&d, false).unwrap();
        assert_eq!(
            h,
            DatagramHeader {
                sec: 391,
                usec: 770_242,
                seq: 1
            }
        );
        let d64 = [0, 0, 1, 0x60, 0, 6, 0x71, 0x3a, 0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(DatagramHeader::parse(&d64, true).unwrap().seq, 1);
        assert_eq!(DatagramHeader::parse(&d64[..15], true), None);
        assert_eq!(DatagramHeader::parse(&d[..11], false), None);
        assert_eq!(DatagramHeader::parse(&[], false), None);
    }

    #[test]
    fn headers_round_trip_in_both_widths() {
        for wide in [false, true] {
            let h = DatagramHeader {
                sec: 7,
                usec: 999_999,
                seq: 123_456,
            };
            let mut buf = [0u8; 20];
            assert!(h.write(&mut buf, wide));
            assert_eq!(DatagramHeader::parse(&buf, wide), Some(h));
            assert!(!h.write(&mut buf[..DatagramHeader::len(wide) - 1], wide));
        }
    }

    #[test]
    fn loss_rule_matches_real_3_12_server() {
        // §7: the sequence 1, 2, 5, 3, 6, 9, 7 gave "errors":2,"packets":9.
        let mut st = UdpRecvStats::default();
        for seq in [1, 2, 5, 3, 6, 9, 7] {
            st.on_datagram(
                128,
                &DatagramHeader {
                    sec: 0,
                    usec: 0,
                    seq,
                },
                0.0,
            );
        }
        assert_eq!((st.errors, st.max_seq, st.out_of_order), (2, 9, 2));
        assert_eq!(st.received, 7);
        assert_eq!(st.bytes, 7 * 128);
    }

    #[test]
    fn jitter_follows_rfc3550() {
        let mut st = UdpRecvStats::default();
        // Transit alternates 1 ms and 2 ms: |D| = 1 ms every step after the first.
        for i in 0..200u64 {
            let sent_s = i as f64 * 0.01;
            let transit = if i % 2 == 0 { 0.001 } else { 0.002 };
            let hdr = DatagramHeader::stamped(Duration::from_secs_f64(sent_s), i + 1);
            st.on_datagram(64, &hdr, hdr.time_s() + transit);
        }
        assert!(
            (st.jitter_s() - 0.001).abs() < 1e-5,
            "jitter {}",
            st.jitter_s()
        );
        let mut one = UdpRecvStats::default();
        one.on_datagram(
            64,
            &DatagramHeader {
                sec: 1,
                usec: 0,
                seq: 1,
            },
            5.0,
        );
        assert_eq!(one.jitter_s(), 0.0, "a single datagram has no jitter");
    }

    #[test]
    fn pacing_keeps_average_rate_at_target() {
        assert_eq!(pacing_delay(0, 1 << 30, Duration::ZERO), None);
        // 1 Mbit/s, 125000 bytes sent = 1 s due; at 0.5 s we must wait 0.5 s.
        let wait = pacing_delay(1_000_000, 125_000, Duration::from_millis(500)).unwrap();
        assert!((wait.as_secs_f64() - 0.5).abs() < 1e-9);
        assert_eq!(
            pacing_delay(1_000_000, 125_000, Duration::from_secs(2)),
            None
        );
    }

    #[test]
    fn connect_reply_is_any_four_bytes() {
        assert!(is_connect_reply(&CONNECT_REPLY));
        assert!(is_connect_reply(&LEGACY_CONNECT_REPLY));
        assert!(!is_connect_reply(&[0u8; 16]));
    }
}
