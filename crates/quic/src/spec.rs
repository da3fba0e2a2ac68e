//! What a QUIC test asks for ([`QuicTest`]), what a server allows ([`Limits`]), the one
//! check between them ([`check`]) and the request's bytes on the wire (the first
//! bidirectional stream of the connection, [`REQUEST_BYTES`] long, checked on decode).

use std::net::IpAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use wire::spec::{Bound, Direction};

use crate::codec::{Reader, Writer};

/// What the test does on its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuicKind {
    /// Bulk transfer on `streams` unidirectional streams of one connection, in
    /// `direction` (forward: client → server; reverse: server → client; bidir: both at
    /// once, `streams` each way).
    Stream { streams: u16, direction: Direction },
    /// Request/response on one bidirectional stream: the client writes `payload_bytes`,
    /// the server writes them back, the client times each exchange.
    Rr,
}

/// The congestion controllers quinn offers (`quinn::congestion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Congestion {
    /// CUBIC (RFC 9438), quinn's default.
    #[default]
    Cubic,
    /// NewReno (RFC 9002 §7).
    NewReno,
    /// BBR (quinn marks its BBR experimental).
    Bbr,
}

impl Congestion {
    pub const ALL: [Congestion; 3] = [Congestion::Cubic, Congestion::NewReno, Congestion::Bbr];

    /// The name a user types and a report shows.
    pub fn name(self) -> &'static str {
        match self {
            Congestion::Cubic => "cubic",
            Congestion::NewReno => "new-reno",
            Congestion::Bbr => "bbr",
        }
    }

    /// The controller of that name; `None` for a name quinn does not offer.
    pub fn from_name(name: &str) -> Option<Congestion> {
        Congestion::ALL.into_iter().find(|c| c.name() == name)
    }

    fn code(self) -> u8 {
        match self {
            Congestion::Cubic => 0,
            Congestion::NewReno => 1,
            Congestion::Bbr => 2,
        }
    }
}

/// One QUIC test as the control connection agrees it and the client asks it in band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuicTest {
    pub kind: QuicKind,
    /// Duration-bound: each sender stops writing after this long. Count-bound: each
    /// stream sends this many writes (stream test), or the client makes this many
    /// exchanges (rr).
    pub bound: Bound,
    /// Bytes of one write (stream test) or one request and one response (rr).
    pub payload_bytes: u32,
    /// The congestion controller of both ends (the sender's is the one that matters).
    pub congestion: Congestion,
    /// Stream test: payload bit rate of each sending side, all its streams together;
    /// `None` = as fast as the congestion controller lets. Ignored by rr.
    pub rate_bps: Option<u64>,
    /// The control session's token (dualperf's data binding: the 8-byte keyless token
    /// or the 16-byte keyed session token, zero-padded), so that only the peer of that
    /// session can take the server's test.
    pub session: [u8; SESSION_BYTES],
}

/// Bytes of a request's session token.
pub const SESSION_BYTES: usize = 16;

impl QuicTest {
    /// Whether the client sends bulk data (forward or bidir stream test).
    pub fn client_sends(&self) -> bool {
        matches!(self.kind, QuicKind::Stream { direction, .. } if direction != Direction::Reverse)
    }

    /// Whether the server sends bulk data (reverse or bidir stream test).
    pub fn server_sends(&self) -> bool {
        matches!(self.kind, QuicKind::Stream { direction, .. } if direction != Direction::Forward)
    }

    /// Streams each sending side opens (1 for rr).
    pub fn streams(&self) -> u16 {
        match self.kind {
            QuicKind::Stream { streams, .. } => streams,
            QuicKind::Rr => 1,
        }
    }
}

/// What a server allows one QUIC test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest duration-bound test; count-bound tests end (failed) after this long too.
    pub max_duration: Duration,
    /// Streams one direction of a stream test may open.
    pub max_streams: u16,
    /// Largest write / request.
    pub max_payload_bytes: u32,
    /// Payload bit rate the server may be asked to send (reverse / bidir); `None` =
    /// unlimited. While it is set, unpaced server sending is allowed to a loopback
    /// peer only (as for the engine's tests).
    pub max_send_rate_bps: Option<u64>,
}

impl Default for Limits {
    /// The engine server's defaults: 16 streams, 60 s, 10 Gbit/s, 1 MiB writes.
    fn default() -> Limits {
        Limits {
            max_duration: Duration::from_secs(60),
            max_streams: 16,
            max_payload_bytes: wire::proto::MAX_TCP_PAYLOAD_BYTES,
            max_send_rate_bps: Some(10_000_000_000),
        }
    }
}

/// Whether `test` is within `limits` and makes sense at all; the reason, in words a user
/// can act on, when not. `peer` is the client's address (unpaced server sending is for a
/// loopback peer only while the server has a send-rate limit).
pub fn check(test: &QuicTest, limits: &Limits, peer: IpAddr) -> Result<(), String> {
    let max_streams = limits.max_streams.min(wire::proto::MAX_STREAMS);
    match test.kind {
        QuicKind::Stream { streams: 0, .. } => {
            return Err("a stream test needs at least one stream".into())
        }
        QuicKind::Stream { streams, .. } if streams > max_streams => {
            return Err(format!(
                "{streams} streams asked; this server allows at most {max_streams}"
            ))
        }
        _ => {}
    }
    let max_payload = limits
        .max_payload_bytes
        .min(wire::proto::MAX_TCP_PAYLOAD_BYTES);
    if test.payload_bytes == 0 || test.payload_bytes > max_payload {
        return Err(format!(
            "a payload of {} bytes asked; this server allows 1 to {max_payload}",
            test.payload_bytes
        ));
    }
    let max_duration = limits
        .max_duration
        .min(Duration::from_nanos(wire::proto::MAX_DURATION_NS));
    match test.bound {
        Bound::DurationNs(0) => return Err("a test of zero duration measures nothing".into()),
        Bound::Count(0) => return Err("a test of zero writes measures nothing".into()),
        Bound::DurationNs(ns) if Duration::from_nanos(ns) > max_duration => {
            return Err(format!(
                "a test of {:.3} s asked; this server allows at most {:.3} s",
                ns as f64 / 1e9,
                max_duration.as_secs_f64()
            ))
        }
        _ => {}
    }
    if test.rate_bps == Some(0) {
        return Err("a rate of 0 bit/s sends nothing".into());
    }
    if let (true, Some(max_bps)) = (test.server_sends(), limits.max_send_rate_bps) {
        match test.rate_bps {
            Some(bps) if bps > max_bps => {
                return Err(format!(
                    "the server was asked to send at {bps} bit/s; it allows at most {max_bps} bit/s"
                ))
            }
            None if !peer.is_loopback() => {
                return Err(format!(
                    "the server sends unpaced to a loopback peer only; ask for a rate of at most {max_bps} bit/s"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// Magic of a request: "dQ".
const REQUEST_MAGIC: [u8; 2] = *b"dQ";
/// The request format this build speaks.
const REQUEST_VERSION: u8 = 2;
/// Bytes of an encoded request.
pub const REQUEST_BYTES: usize = 48;

impl QuicTest {
    /// The request's bytes: magic, version, kind, direction, congestion, streams,
    /// payload, bound (tag + value), rate (0 = unpaced), session token.
    pub fn encode(&self) -> [u8; REQUEST_BYTES] {
        let (kind, direction, streams) = match self.kind {
            QuicKind::Stream { streams, direction } => (0u8, direction_code(direction), streams),
            QuicKind::Rr => (1, 0, 1),
        };
        let (bound_tag, bound_value) = match self.bound {
            Bound::DurationNs(ns) => (0u8, ns),
            Bound::Count(n) => (1, n),
        };
        let mut w = Writer::default();
        w.bytes(&REQUEST_MAGIC);
        w.u8(REQUEST_VERSION);
        w.u8(kind);
        w.u8(direction);
        w.u8(self.congestion.code());
        w.u16(streams);
        w.u32(self.payload_bytes);
        w.u8(bound_tag);
        w.bytes(&[0; 3]);
        w.u64(bound_value);
        w.u64(self.rate_bps.unwrap_or(0));
        w.bytes(&self.session);
        let mut out = [0u8; REQUEST_BYTES];
        out.copy_from_slice(&w.into_bytes());
        out
    }

    /// A request from its bytes, or what is wrong with them.
    pub fn decode(bytes: &[u8]) -> Result<QuicTest, String> {
        if bytes.len() != REQUEST_BYTES {
            return Err(format!(
                "a request is {REQUEST_BYTES} bytes, not {}",
                bytes.len()
            ));
        }
        let mut r = Reader::new(bytes);
        if r.take(2)? != REQUEST_MAGIC {
            return Err("not a dualperf QUIC request (bad magic)".into());
        }
        let version = r.u8()?;
        if version != REQUEST_VERSION {
            return Err(format!(
                "request format {version}; this server speaks {REQUEST_VERSION}"
            ));
        }
        let kind = r.u8()?;
        let direction = r.u8()?;
        let congestion = r.u8()?;
        let streams = r.u16()?;
        let payload_bytes = r.u32()?;
        let bound_tag = r.u8()?;
        r.take(3)?;
        let bound_value = r.u64()?;
        let rate = r.u64()?;
        let mut session = [0u8; SESSION_BYTES];
        session.copy_from_slice(r.take(SESSION_BYTES)?);
        let kind = match (kind, direction, streams) {
            (0, d, streams) => QuicKind::Stream {
                streams,
                direction: code_direction(d)?,
            },
            (1, 0, 1) => QuicKind::Rr,
            (1, _, _) => return Err("an rr request has one stream and no direction".into()),
            (k, _, _) => return Err(format!("unknown test kind {k}")),
        };
        let congestion = Congestion::ALL
            .into_iter()
            .find(|c| c.code() == congestion)
            .ok_or_else(|| format!("unknown congestion controller {congestion}"))?;
        let bound = match bound_tag {
            0 => Bound::DurationNs(bound_value),
            1 => Bound::Count(bound_value),
            t => return Err(format!("unknown bound {t}")),
        };
        Ok(QuicTest {
            kind,
            bound,
            payload_bytes,
            congestion,
            rate_bps: (rate != 0).then_some(rate),
            session,
        })
    }
}

fn direction_code(d: Direction) -> u8 {
    match d {
        Direction::Forward => 0,
        Direction::Reverse => 1,
        Direction::Bidir => 2,
    }
}

fn code_direction(code: u8) -> Result<Direction, String> {
    match code {
        0 => Ok(Direction::Forward),
        1 => Ok(Direction::Reverse),
        2 => Ok(Direction::Bidir),
        d => Err(format!("unknown direction {d}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn stream(streams: u16, direction: Direction) -> QuicTest {
        QuicTest {
            kind: QuicKind::Stream { streams, direction },
            bound: Bound::DurationNs(1_000_000_000),
            payload_bytes: 65_536,
            congestion: Congestion::Cubic,
            rate_bps: None,
            session: [0; 16],
        }
    }

    const LOOPBACK: IpAddr = IpAddr::V6(Ipv6Addr::LOCALHOST);
    const REMOTE: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));

    #[test]
    fn every_request_survives_its_encoding() {
        let mut tests = vec![];
        for d in [Direction::Forward, Direction::Reverse, Direction::Bidir] {
            for c in Congestion::ALL {
                let mut t = stream(7, d);
                t.congestion = c;
                t.rate_bps = Some(123_456_789);
                t.bound = Bound::Count(99);
                tests.push(t);
            }
        }
        tests.push(QuicTest {
            kind: QuicKind::Rr,
            ..stream(1, Direction::Forward)
        });
        for t in tests {
            assert_eq!(QuicTest::decode(&t.encode()), Ok(t));
        }
    }

    #[test]
    fn congestion_controllers_are_known_by_their_names() {
        for c in Congestion::ALL {
            assert_eq!(Congestion::from_name(c.name()), Some(c));
        }
        assert_eq!(Congestion::from_name("vegas"), None);
    }

    #[test]
    fn a_malformed_request_is_named_not_trusted() {
        let good = stream(1, Direction::Forward).encode();
        assert!(QuicTest::decode(&good[..10])
            .unwrap_err()
            .contains("48 bytes"));
        let mut bad = good;
        bad[0] = b'x';
        assert!(QuicTest::decode(&bad).unwrap_err().contains("bad magic"));
        let mut bad = good;
        bad[2] = 9;
        assert!(QuicTest::decode(&bad).unwrap_err().contains("format 9"));
        let mut bad = good;
        bad[3] = 7;
        assert!(QuicTest::decode(&bad).unwrap_err().contains("kind 7"));
        let mut bad = good;
        bad[4] = 5;
        assert!(QuicTest::decode(&bad).unwrap_err().contains("direction 5"));
        let mut bad = good;
        bad[5] = 3;
        assert!(QuicTest::decode(&bad)
            .unwrap_err()
            .contains("congestion controller 3"));
        let mut bad = good;
        bad[12] = 4;
        assert!(QuicTest::decode(&bad).unwrap_err().contains("bound 4"));
    }

    #[test]
    fn limits_refuse_absurd_and_excessive_tests_with_the_reason() {
        let limits = Limits {
            max_streams: 4,
            max_duration: Duration::from_secs(10),
            max_payload_bytes: 1 << 16,
            max_send_rate_bps: Some(1_000_000),
        };
        let ok = stream(4, Direction::Forward);
        assert_eq!(check(&ok, &limits, REMOTE), Ok(()));
        let err = |t: QuicTest| check(&t, &limits, REMOTE).unwrap_err();
        assert_eq!(
            err(stream(60_000, Direction::Forward)),
            "60000 streams asked; this server allows at most 4"
        );
        assert_eq!(
            err(stream(0, Direction::Forward)),
            "a stream test needs at least one stream"
        );
        let mut t = ok;
        t.bound = Bound::DurationNs(0);
        assert_eq!(err(t), "a test of zero duration measures nothing");
        t.bound = Bound::Count(0);
        assert_eq!(err(t), "a test of zero writes measures nothing");
        t.bound = Bound::DurationNs(11_000_000_000);
        assert_eq!(
            err(t),
            "a test of 11.000 s asked; this server allows at most 10.000 s"
        );
        let mut t = ok;
        t.payload_bytes = (1 << 16) + 1;
        assert_eq!(
            err(t),
            "a payload of 65537 bytes asked; this server allows 1 to 65536"
        );
        let mut t = stream(1, Direction::Reverse);
        t.rate_bps = Some(2_000_000);
        assert_eq!(
            err(t),
            "the server was asked to send at 2000000 bit/s; it allows at most 1000000 bit/s"
        );
        t.rate_bps = None;
        assert!(err(t).contains("unpaced to a loopback peer only"));
        assert_eq!(check(&t, &limits, LOOPBACK), Ok(()));
        // The client's own sending is not the server's to bound.
        let mut t = stream(1, Direction::Forward);
        t.rate_bps = Some(5_000_000);
        assert_eq!(check(&t, &limits, REMOTE), Ok(()));
    }
}
