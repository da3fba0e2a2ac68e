//! What a QUIC test measured: goodput at the receiver, handshake time, request/response
//! RTTs, and each end's view of the path (quinn's `Connection::stats()`), plus the
//! segmentation offload its socket offered. The server's figures travel to the client at
//! the end of the test as one fixed-size message ([`ServerFigures`]).

use serde::{Deserialize, Serialize};
use wire::spec::Family;

use crate::codec::{Reader, Writer};
use crate::spec::{Congestion, QuicTest};

/// Why there is no retransmitted-packet count: QUIC never retransmits a packet (RFC 9000
/// §13.3); the frames of a lost packet go out again in new packets, and
/// [`PathFigures::lost_packets`] counts the packets declared lost.
pub const RETRANSMITTED_PACKETS_UNAVAILABLE: &str = "QUIC never retransmits a packet: the frames of a lost packet are sent again in new packets; see lost packets";

/// One end's view of the connection's path at the end of the test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathFigures {
    /// Smoothed RTT (RFC 9002 §5.3).
    pub smoothed_rtt_ns: u64,
    /// Smallest RTT sample.
    pub min_rtt_ns: u64,
    /// Congestion window of this end's sending.
    pub cwnd_bytes: u64,
    pub congestion_events: u64,
    /// Packets this end declared lost (RFC 9002 §6).
    pub lost_packets: u64,
    pub lost_bytes: u64,
    pub sent_packets: u64,
    /// The UDP payload size the connection settled on: DPLPMTUD's result (RFC 8899),
    /// starting from QUIC's 1200-byte minimum.
    pub current_mtu_bytes: u16,
    /// UDP datagrams sent and the system calls that sent them (datagrams per call > 1:
    /// GSO in use).
    pub udp_tx_datagrams: u64,
    pub udp_tx_calls: u64,
    /// UDP datagrams received. (quinn counts received packets, not receive calls, so
    /// GRO's use on receive is not measured; [`SocketOffload::gro_segments`] says
    /// whether the socket offers it.)
    pub udp_rx_datagrams: u64,
}

impl PathFigures {
    pub(crate) fn of(conn: &quinn::Connection) -> PathFigures {
        let s = conn.stats();
        PathFigures {
            smoothed_rtt_ns: ns(s.path.rtt),
            min_rtt_ns: ns(s.path.min_rtt),
            cwnd_bytes: s.path.cwnd,
            congestion_events: s.path.congestion_events,
            lost_packets: s.path.lost_packets,
            lost_bytes: s.path.lost_bytes,
            sent_packets: s.path.sent_packets,
            current_mtu_bytes: s.path.current_mtu,
            udp_tx_datagrams: s.udp_tx.datagrams,
            udp_tx_calls: s.udp_tx.ios,
            udp_rx_datagrams: s.udp_rx.datagrams,
        }
    }

    fn encode(&self, w: &mut Writer) {
        for v in [
            self.smoothed_rtt_ns,
            self.min_rtt_ns,
            self.cwnd_bytes,
            self.congestion_events,
            self.lost_packets,
            self.lost_bytes,
            self.sent_packets,
            self.udp_tx_datagrams,
            self.udp_tx_calls,
            self.udp_rx_datagrams,
        ] {
            w.u64(v);
        }
        w.u16(self.current_mtu_bytes);
    }

    fn decode(r: &mut Reader<'_>) -> Result<PathFigures, String> {
        Ok(PathFigures {
            smoothed_rtt_ns: r.u64()?,
            min_rtt_ns: r.u64()?,
            cwnd_bytes: r.u64()?,
            congestion_events: r.u64()?,
            lost_packets: r.u64()?,
            lost_bytes: r.u64()?,
            sent_packets: r.u64()?,
            udp_tx_datagrams: r.u64()?,
            udp_tx_calls: r.u64()?,
            udp_rx_datagrams: r.u64()?,
            current_mtu_bytes: r.u16()?,
        })
    }
}

pub(crate) fn ns(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// The segmentation offload a socket offers at the start (quinn-udp's probe of the
/// kernel): the most datagrams one send may carry (GSO; 1 = none) and the most one
/// receive may return (GRO; 1 = none). quinn stops using GSO by itself if the kernel
/// later refuses it; [`PathFigures::udp_tx_calls`] shows what was used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketOffload {
    pub max_gso_segments: u32,
    pub gro_segments: u32,
}

impl SocketOffload {
    pub(crate) fn probe(socket: &std::net::UdpSocket) -> Result<SocketOffload, std::io::Error> {
        let state = quinn::udp::UdpSocketState::new(socket.into())?;
        Ok(SocketOffload {
            max_gso_segments: u32::try_from(state.max_gso_segments()).unwrap_or(u32::MAX),
            gro_segments: u32::try_from(state.gro_segments()).unwrap_or(u32::MAX),
        })
    }
}

/// Bulk data in one direction, counted at both ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Goodput {
    /// Payload bytes the sender wrote (all streams).
    pub sent_bytes: u64,
    /// Payload bytes the receiver read to the end of every stream: equal to
    /// `sent_bytes` when the test completes (streams are reliable).
    pub received_bytes: u64,
    /// The receiver's time from its start signal to the last stream's last byte.
    pub receive_ns: u64,
}

impl Goodput {
    /// Goodput at the receiver, bit/s of payload.
    pub fn bps(&self) -> f64 {
        if self.receive_ns == 0 {
            return 0.0;
        }
        self.received_bytes as f64 * 8e9 / self.receive_ns as f64
    }
}

/// Request/response figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RrFigures {
    /// Exchanges the client completed (and timed).
    pub transactions: u64,
    /// Requests the server answered: equal to `transactions` when the test completes.
    pub server_transactions: u64,
    /// Time from a request's first byte written to its response's last byte read.
    pub rtt: measure::latency::LatencySummary,
    /// The client's time from the start signal to its last response.
    pub elapsed_ns: u64,
}

/// What the server tells the client at the end of a test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerFigures {
    /// Bytes the server read (forward / bidir) and its receive time.
    pub received_bytes: u64,
    pub receive_ns: u64,
    /// Bytes the server wrote (reverse / bidir).
    pub sent_bytes: u64,
    /// Requests answered (rr).
    pub transactions: u64,
    pub path: PathFigures,
    pub offload: SocketOffload,
}

/// Most bytes a server's figures may take (the message is fixed-size; this bounds the
/// read).
pub(crate) const SERVER_FIGURES_MAX_BYTES: usize = 256;

impl ServerFigures {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.u64(self.received_bytes);
        w.u64(self.receive_ns);
        w.u64(self.sent_bytes);
        w.u64(self.transactions);
        self.path.encode(&mut w);
        w.u32(self.offload.max_gso_segments);
        w.u32(self.offload.gro_segments);
        w.into_bytes()
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<ServerFigures, String> {
        let mut r = Reader::new(bytes);
        let figures = ServerFigures {
            received_bytes: r.u64()?,
            receive_ns: r.u64()?,
            sent_bytes: r.u64()?,
            transactions: r.u64()?,
            path: PathFigures::decode(&mut r)?,
            offload: SocketOffload {
                max_gso_segments: r.u32()?,
                gro_segments: r.u32()?,
            },
        };
        r.end()?;
        Ok(figures)
    }
}

/// Everything one QUIC test measured, as the client reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuicResult {
    pub test: QuicTest,
    pub family: Family,
    /// The congestion controller both ends used.
    pub congestion: Congestion,
    /// Client's time from sending its first Initial packet to the handshake's
    /// completion (1 RTT plus the crypto on both ends).
    pub handshake_ns: u64,
    /// Client → server bulk data (forward, bidir).
    pub forward: Option<Goodput>,
    /// Server → client bulk data (reverse, bidir).
    pub reverse: Option<Goodput>,
    /// Request/response (rr).
    pub rr: Option<RrFigures>,
    pub client_path: PathFigures,
    pub server_path: PathFigures,
    pub client_offload: SocketOffload,
    pub server_offload: SocketOffload,
}

/// What a server reports of the test it served.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSide {
    pub test: QuicTest,
    pub peer: std::net::SocketAddr,
    pub figures: ServerFigures,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_figures_survive_their_encoding_and_refuse_trailing_bytes() {
        let f = ServerFigures {
            received_bytes: 1,
            receive_ns: 2,
            sent_bytes: 3,
            transactions: 4,
            path: PathFigures {
                smoothed_rtt_ns: 5,
                min_rtt_ns: 6,
                cwnd_bytes: 7,
                congestion_events: 8,
                lost_packets: 9,
                lost_bytes: 10,
                sent_packets: 11,
                current_mtu_bytes: 1452,
                udp_tx_datagrams: 12,
                udp_tx_calls: 13,
                udp_rx_datagrams: 14,
            },
            offload: SocketOffload {
                max_gso_segments: 64,
                gro_segments: 16,
            },
        };
        let bytes = f.encode();
        assert!(bytes.len() <= SERVER_FIGURES_MAX_BYTES);
        assert_eq!(ServerFigures::decode(&bytes), Ok(f));
        let mut long = bytes.clone();
        long.push(0);
        assert!(ServerFigures::decode(&long)
            .unwrap_err()
            .contains("unexpected bytes"));
        assert!(ServerFigures::decode(&bytes[..bytes.len() - 1])
            .unwrap_err()
            .contains("ends early"));
    }

    #[test]
    fn goodput_is_received_bits_over_the_receive_time() {
        let g = Goodput {
            sent_bytes: 1_000,
            received_bytes: 1_000,
            receive_ns: 1_000_000,
        };
        assert_eq!(g.bps(), 8_000_000.0);
    }
}
