//! Which workers each side runs for a spec, and starting them on ready sockets. Shared
//! by the client and the server so both ends agree on who sends and who receives.

use crate::data::{Pace, Role, SendBound, Shared, Workers};
use crate::error::{EngineError, IoContext};
use crate::{crr, tcp, tcp_model, udp};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;
use std::time::Duration;
use wire::spec::{Bound, Direction, SocketOpts, TestKind, TestSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Client,
    Server,
}

/// Server metadata key saying it answers clock queries (the client then asks them).
pub(crate) const CLOCK_QUERY_KEY: &str = "dualperf.clock_query";

/// The options this side applies: the user's, with TCP_NODELAY always on for tcp-rr
/// and tcp-crr (a request or response larger than one segment must not wait for an
/// ACK of the first).
pub(crate) fn effective_opts(spec: &TestSpec) -> SocketOpts {
    let mut o = spec.socket.clone();
    if spec.kind == TestKind::TcpRr || spec.kind == TestKind::TcpCrr {
        o.nodelay = true;
    }
    // A QUIC test's congestion controller is the QUIC library's, not the socket's.
    if spec.kind.is_quic() {
        o.congestion = None;
    }
    o
}

/// (this side sends, this side receives) for a stream test.
pub(crate) fn stream_roles(spec: &TestSpec, side: Side) -> (bool, bool) {
    let client_sends = spec.direction != Direction::Reverse;
    let server_sends = spec.direction != Direction::Forward;
    match side {
        Side::Client => (client_sends, server_sends),
        Side::Server => (server_sends, client_sends),
    }
}

/// Start the TCP workers on connected data streams.
pub(crate) fn start_tcp(
    spec: &TestSpec,
    side: Side,
    conns: Vec<TcpStream>,
    shared: &Arc<Shared>,
    workers: &mut Workers,
) -> Result<(), EngineError> {
    let payload = spec.payload_bytes as usize;
    let bound = SendBound::of(spec, shared.data_start());
    for (i, c) in conns.into_iter().enumerate() {
        let id = i as u16;
        let sh = shared.clone();
        if spec.kind == TestKind::TcpRr {
            let pace = Pace::of(spec, shared.data_start());
            let spawn = match side {
                Side::Client => workers.spawn(Role::Rr, "dp-tcp-rr", move || {
                    tcp::rr_client(c, id, payload, bound, pace, sh)
                }),
                Side::Server => workers.spawn(Role::Rr, "dp-tcp-echo", move || {
                    tcp::rr_server(c, payload, sh)
                }),
            };
            spawn.ctx("cannot start a data thread")?;
            continue;
        }
        let (sends, recvs) = stream_roles(spec, side);
        if recvs {
            let r = c.try_clone().ctx("cannot clone a data socket")?;
            let sh = shared.clone();
            workers
                .spawn(Role::Recv, "dp-tcp-recv", move || {
                    tcp::recv(r, id, payload, sh)
                })
                .ctx("cannot start a data thread")?;
        }
        if sends {
            let (model, pps) = (spec.traffic.clone(), spec.rate_pps());
            let zerocopy = spec.zerocopy;
            workers
                .spawn(Role::Send, "dp-tcp-send", move || match &model {
                    Some(m) => tcp_model::send(c, id, payload, m, pps, bound, sh),
                    None => tcp::send(c, id, payload, bound, zerocopy, sh),
                })
                .ctx("cannot start a data thread")?;
        }
    }
    Ok(())
}

/// Start UDP senders on connected sockets (stream id = index).
pub(crate) fn start_udp_senders(
    spec: &TestSpec,
    socks: Vec<UdpSocket>,
    shared: &Arc<Shared>,
    workers: &mut Workers,
) -> Result<(), EngineError> {
    let payload = spec.payload_bytes as usize;
    let bound = SendBound::of(spec, shared.data_start());
    let pps = spec.rate_pps();
    let datapath = spec.udp_datapath;
    for (i, s) in socks.into_iter().enumerate() {
        let sh = shared.clone();
        let model = spec.traffic.clone();
        workers
            .spawn(Role::Send, "dp-udp-send", move || match &model {
                Some(m) => udp::send_model(s, i as u16, payload, m, pps, bound, datapath, sh),
                None => udp::send(s, i as u16, payload, pps, bound, datapath, sh),
            })
            .ctx("cannot start a data thread")?;
    }
    Ok(())
}

/// Start the UDP receiver for all streams on one socket.
pub(crate) fn start_udp_receiver(
    spec: &TestSpec,
    sock: UdpSocket,
    shared: &Arc<Shared>,
    workers: &mut Workers,
) -> Result<(), EngineError> {
    let expected = match spec.bound {
        Bound::Count(n) => Some(n),
        Bound::DurationNs(_) => None,
    };
    let (streams, payload, sh) = (spec.streams, spec.payload_bytes as usize, shared.clone());
    // A size distribution may draw datagrams larger than the test's payload size.
    let payload = match spec.traffic.as_ref().and_then(|m| m.size.as_ref()) {
        Some(_) => udp::MAX_MODEL_PAYLOAD,
        None => payload,
    };
    // A traffic model's sender stamps every datagram as it leaves: per-datagram timing.
    let timing = if spec.traffic.as_ref().is_some_and(|m| m.idt.is_some()) {
        udp::RxTiming::PerDatagram
    } else {
        udp::RxTiming::of(spec.rate_pps())
    };
    let datapath = spec.udp_datapath;
    workers
        .spawn(Role::Recv, "dp-udp-recv", move || {
            udp::recv(sock, streams, payload, expected, timing, datapath, sh)
        })
        .ctx("cannot start a data thread")
}

/// Start UDP request/response clients on connected sockets.
pub(crate) fn start_udp_rr_clients(
    spec: &TestSpec,
    socks: Vec<UdpSocket>,
    shared: &Arc<Shared>,
    workers: &mut Workers,
) -> Result<(), EngineError> {
    let payload = spec.payload_bytes as usize;
    let bound = SendBound::of(spec, shared.data_start());
    let timeout = Duration::from_nanos(spec.rr_timeout_ns);
    for (i, s) in socks.into_iter().enumerate() {
        let sh = shared.clone();
        let pace = Pace::of(spec, shared.data_start());
        workers
            .spawn(Role::Rr, "dp-udp-rr", move || {
                let mut o = udp::rr_client(s, i as u16, payload, timeout, bound, pace, sh);
                // Each stream's requests and answers (ext-headers tells its datagram
                // kinds apart by stream).
                o.streams.push(wire::proto::StreamStats {
                    stream_id: i as u16,
                    sent_bytes: o.sent_bytes,
                    sent_packets: o.sent_packets,
                    recv_bytes: o.recv_bytes,
                    recv_packets: o.transactions,
                });
                o
            })
            .ctx("cannot start a data thread")?;
    }
    Ok(())
}

/// Start the pmtu search on the first connected socket (the test probes one path).
pub(crate) fn start_pmtu_client(
    spec: &TestSpec,
    socks: Vec<UdpSocket>,
    shared: &Arc<Shared>,
    workers: &mut Workers,
) -> Result<(), EngineError> {
    let bound = SendBound::of(spec, shared.data_start());
    let timeout = Duration::from_nanos(spec.rr_timeout_ns);
    let family = spec.family;
    if let Some(s) = socks.into_iter().next() {
        let sh = shared.clone();
        workers
            .spawn(Role::Rr, "dp-pmtu", move || {
                crate::pmtu::probe_client(s, family, timeout, bound, sh)
            })
            .ctx("cannot start a data thread")?;
    }
    Ok(())
}

/// Start the tcp-crr client: one connection per transaction to `server`, each starting
/// with the session's `prefix`.
pub(crate) fn start_crr_client(
    spec: &TestSpec,
    server: SocketAddr,
    prefix: Vec<u8>,
    shared: &Arc<Shared>,
    workers: &mut Workers,
) -> Result<(), EngineError> {
    let payload = spec.payload_bytes as usize;
    let bound = SendBound::of(spec, shared.data_start());
    let (opts, sh) = (effective_opts(spec), shared.clone());
    workers
        .spawn(Role::Rr, "dp-tcp-crr", move || {
            crr::client(server, opts, prefix, payload, bound, sh)
        })
        .ctx("cannot start a data thread")
}

/// Start the tcp-crr server on the test's data listener: it answers at most the
/// spec's count of connections (a count-bound run), one at a time.
pub(crate) fn start_crr_server(
    spec: &TestSpec,
    listener: TcpListener,
    binding: crate::DataBinding,
    shared: &Arc<Shared>,
    workers: &mut Workers,
) -> Result<(), EngineError> {
    let payload = spec.payload_bytes as usize;
    let limit = match spec.bound {
        Bound::Count(n) => Some(n),
        Bound::DurationNs(_) => None,
    };
    let sh = shared.clone();
    workers
        .spawn(Role::Rr, "dp-tcp-crr-echo", move || {
            crr::server(listener, binding, payload, limit, sh)
        })
        .ctx("cannot start a data thread")
}
