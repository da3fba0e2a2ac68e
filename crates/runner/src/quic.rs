//! QUIC tests for the engine: the [`engine::QuicHook`] this binary gives its client,
//! its embedded server and `dualperf server`, built on `dualperf-quic`. The one place
//! where a test spec becomes a QUIC test and the engine server's limits become the QUIC
//! endpoint's.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Instant;

use engine::{QuicEndpoint, QuicHook, QuicRun, ServerConfig};
use quic::{Congestion, PathFigures, QuicKind, QuicServer, QuicTest};
use wire::proto::QuicSide;
use wire::spec::{TestKind, TestSpec};

/// The hook to put in a `ClientConfig` or `ServerConfig`.
pub fn hook() -> Arc<dyn QuicHook> {
    Arc::new(Quinn)
}

/// The congestion controllers a QUIC test may ask for (`--congestion`), by name.
pub fn congestion_names() -> Vec<&'static str> {
    Congestion::ALL.iter().map(|c| c.name()).collect()
}

/// The QUIC test of `spec`, asked with the control session's `token`.
pub fn test_of(spec: &TestSpec, token: &[u8]) -> Result<QuicTest, String> {
    let kind = match spec.kind {
        TestKind::QuicStream => QuicKind::Stream {
            streams: spec.streams,
            direction: spec.direction,
        },
        TestKind::QuicRr => QuicKind::Rr,
        other => return Err(format!("{other} is not a QUIC test")),
    };
    let congestion = match spec.socket.congestion.as_deref() {
        None => Congestion::default(),
        Some(name) => Congestion::from_name(name).ok_or_else(|| {
            format!(
                "QUIC offers the congestion controllers {}, not '{name}'",
                congestion_names().join(", ")
            )
        })?,
    };
    let mut session = [0u8; quic::SESSION_BYTES];
    if token.len() > session.len() {
        return Err(format!(
            "a session token of {} bytes does not fit a QUIC request",
            token.len()
        ));
    }
    session[..token.len()].copy_from_slice(token);
    Ok(QuicTest {
        kind,
        bound: spec.bound,
        payload_bytes: spec.payload_bytes,
        congestion,
        rate_bps: spec.rate_bps(),
        session,
    })
}

/// The engine server's limits as the QUIC endpoint's: every `--max-*` of the server
/// holds for QUIC tests (busy and the pre-shared key hold through the control session).
pub fn limits_of(cfg: &ServerConfig) -> quic::Limits {
    quic::Limits {
        max_duration: cfg.max_duration,
        max_streams: cfg.max_streams,
        max_payload_bytes: cfg
            .max_payload_bytes
            .unwrap_or(wire::proto::MAX_TCP_PAYLOAD_BYTES),
        max_send_rate_bps: cfg.max_send_rate_bps,
    }
}

#[derive(Debug)]
struct Quinn;

struct Endpoint {
    server: QuicServer,
}

impl QuicHook for Quinn {
    fn bind(
        &self,
        socket: UdpSocket,
        spec: &TestSpec,
        cfg: &ServerConfig,
        peer: IpAddr,
    ) -> Result<(Vec<u8>, Box<dyn QuicEndpoint>), String> {
        let limits = limits_of(cfg);
        // The token is not known yet; the limits do not look at it.
        quic::check(&test_of(spec, &[])?, &limits, peer)?;
        let (server, cert) = QuicServer::bind(socket, limits).map_err(|e| e.to_string())?;
        Ok((cert.to_vec(), Box::new(Endpoint { server })))
    }

    fn run_client(
        &self,
        socket: UdpSocket,
        server: SocketAddr,
        cert_der: Vec<u8>,
        spec: &TestSpec,
        token: &[u8],
        deadline: Instant,
    ) -> Result<QuicRun, String> {
        let test = test_of(spec, token)?;
        let cert = quic::CertificateDer::from(cert_der);
        let r =
            quic::run_client(socket, server, cert, &test, deadline).map_err(|e| e.to_string())?;
        let mut run = QuicRun {
            transactions: r.rr.map_or(0, |rr| rr.transactions),
            rtt: r.rr.map(|rr| rr.rtt),
            side: side_of(&r.client_path, r.congestion),
            ..QuicRun::default()
        };
        run.side.handshake_ns = r.handshake_ns;
        if let Some(f) = r.forward {
            run.sent_bytes = f.sent_bytes;
        }
        if let Some(g) = r.reverse {
            run.recv_bytes = g.received_bytes;
            run.recv_ns = g.receive_ns;
        }
        if let Some(rr) = r.rr {
            let bytes = rr.transactions * u64::from(test.payload_bytes);
            (run.sent_bytes, run.recv_bytes) = (bytes, bytes);
            (run.send_ns, run.recv_ns) = (rr.elapsed_ns, rr.elapsed_ns);
        }
        Ok(run)
    }
}

impl QuicEndpoint for Endpoint {
    fn serve(
        self: Box<Self>,
        spec: &TestSpec,
        token: &[u8],
        deadline: Instant,
    ) -> Result<QuicRun, String> {
        let test = test_of(spec, token)?;
        let s = self
            .server
            .serve_one(&test, deadline)
            .map_err(|e| e.to_string())?;
        let f = s.figures;
        let payload = u64::from(test.payload_bytes);
        Ok(QuicRun {
            sent_bytes: f.sent_bytes.max(f.transactions * payload),
            recv_bytes: f.received_bytes.max(f.transactions * payload),
            send_ns: 0,
            recv_ns: f.receive_ns,
            transactions: f.transactions,
            rtt: None,
            side: side_of(&f.path, test.congestion),
        })
    }
}

fn side_of(p: &PathFigures, congestion: Congestion) -> QuicSide {
    QuicSide {
        handshake_ns: 0,
        smoothed_rtt_ns: p.smoothed_rtt_ns,
        cwnd_bytes: p.cwnd_bytes,
        lost_packets: p.lost_packets,
        path_mtu_bytes: p.current_mtu_bytes,
        udp_tx_datagrams: p.udp_tx_datagrams,
        udp_tx_calls: p.udp_tx_calls,
        congestion: congestion.name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::spec::{Direction, Family};

    #[test]
    fn a_server_without_the_hook_refuses_quic_tests_with_the_reason() {
        let server = engine::EmbeddedServer::start_with(ServerConfig::private()).unwrap();
        let mut spec = TestSpec::new(TestKind::QuicStream, Family::V4, 1000);
        spec.bound = wire::spec::Bound::Count(1);
        let mut cfg = engine::ClientConfig::new("127.0.0.1", server.port(), spec);
        cfg.quic = Some(hook());
        let e = engine::run_client(&cfg, &mut engine::NullRecorder)
            .unwrap_err()
            .to_string();
        assert!(e.contains(engine::NO_QUIC), "{e}");
    }

    #[test]
    fn the_servers_limits_are_the_quic_endpoints() {
        let cfg = ServerConfig {
            max_duration: std::time::Duration::from_secs(3),
            max_streams: 2,
            max_payload_bytes: Some(5000),
            max_send_rate_bps: Some(1_000_000),
            ..ServerConfig::default()
        };
        let l = limits_of(&cfg);
        assert_eq!(l.max_duration, cfg.max_duration);
        assert_eq!(l.max_streams, 2);
        assert_eq!(l.max_payload_bytes, 5000);
        assert_eq!(l.max_send_rate_bps, Some(1_000_000));
        let mut spec = TestSpec::new(TestKind::QuicStream, Family::V4, 1000);
        spec.streams = 3;
        spec.direction = Direction::Bidir;
        let t = test_of(&spec, &[1, 2, 3]).unwrap();
        assert_eq!(&t.session[..4], &[1, 2, 3, 0]);
        let why = quic::check(&t, &l, "192.0.2.1".parse().unwrap()).unwrap_err();
        assert_eq!(why, "3 streams asked; this server allows at most 2");
    }
}
