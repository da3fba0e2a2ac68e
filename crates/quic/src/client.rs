//! The client: connect with the pinned certificate, ask for the test on the control
//! stream, run it, read the server's figures and put the result together.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Instant;

use rustls::pki_types::CertificateDer;
use wire::spec::Family;

use crate::cert::{PinnedCertVerifier, SERVER_NAME};
use crate::data::{bulk, rr_client, Role};
use crate::figures::{
    ns, Goodput, PathFigures, QuicResult, RrFigures, ServerFigures, SocketOffload,
    SERVER_FIGURES_MAX_BYTES,
};
use crate::spec::{QuicKind, QuicTest};
use crate::transport::{client_config, closed_error, stream_error, CLOSE_DONE, CLOSE_FAILED, GO};
use crate::QuicError;

/// Run `test` against the server at `server`, over `socket` (bound to the family of
/// `server`, e.g. by `net::udp_bind`), trusting only the certificate `pinned` (the one
/// the server published through the control connection). Returns by `deadline`, with
/// [`QuicError::Deadline`] if the test has not ended by then.
pub fn run_client(
    socket: UdpSocket,
    server: SocketAddr,
    pinned: CertificateDer<'static>,
    test: &QuicTest,
    deadline: Instant,
) -> Result<QuicResult, QuicError> {
    run_with_request(socket, server, pinned, test, &test.encode(), deadline)
}

/// [`run_client`] sending `request` as the request's bytes (tests send malformed ones).
pub(crate) fn run_with_request(
    socket: UdpSocket,
    server: SocketAddr,
    pinned: CertificateDer<'static>,
    test: &QuicTest,
    request: &[u8],
    deadline: Instant,
) -> Result<QuicResult, QuicError> {
    let client_offload = SocketOffload::probe(&socket)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let limit = deadline.saturating_duration_since(Instant::now());
    runtime.block_on(async move {
        let session = session(socket, server, pinned, test, request, client_offload);
        match tokio::time::timeout(limit, session).await {
            Ok(result) => result,
            Err(_) => Err(QuicError::Deadline {
                after_s: limit.as_secs_f64(),
            }),
        }
    })
}

async fn session(
    socket: UdpSocket,
    server: SocketAddr,
    pinned: CertificateDer<'static>,
    test: &QuicTest,
    request: &[u8],
    client_offload: SocketOffload,
) -> Result<QuicResult, QuicError> {
    let endpoint = quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        None,
        socket,
        Arc::new(quinn::TokioRuntime),
    )?;
    let verifier = PinnedCertVerifier::new(pinned);
    let config = client_config(verifier.clone(), test.congestion)?;
    let t0 = Instant::now();
    let connecting = endpoint
        .connect_with(config, server, SERVER_NAME)
        .map_err(|e| QuicError::Connection(format!("connecting to {server}: {e}")))?;
    let conn = match connecting.await {
        Ok(conn) => conn,
        Err(e) => {
            return Err(match verifier.refused_sha256() {
                Some(presented_sha256) => QuicError::CertificateMismatch {
                    pinned_sha256: verifier.pinned_sha256(),
                    presented_sha256,
                },
                None => closed_error(&e),
            })
        }
    };
    let handshake_ns = ns(t0.elapsed());
    let measured = match measure(&conn, test, request).await {
        // A stream ended before the connection's close arrived (a loaded host reads
        // the one first): the close says why (the server's refusal or limit), if it
        // comes within a moment.
        Err(QuicError::Connection(why)) => {
            match tokio::time::timeout(CLOSE_WAIT, conn.closed()).await {
                Ok(reason) => match closed_error(&reason) {
                    QuicError::Connection(_) => Err(QuicError::Connection(why)),
                    e => Err(e),
                },
                Err(_) => Err(QuicError::Connection(why)),
            }
        }
        other => other,
    };
    match &measured {
        Ok(_) => conn.close(CLOSE_DONE.into(), b"done"),
        Err(_) => conn.close(CLOSE_FAILED.into(), b"the client failed"),
    }
    // Lets the close reach the server (a few PTOs at most; the deadline bounds it).
    endpoint.wait_idle().await;
    let m = measured?;
    let forward = test.client_sends().then_some(Goodput {
        sent_bytes: m.sent_bytes,
        received_bytes: m.server.received_bytes,
        receive_ns: m.server.receive_ns,
    });
    let reverse = test.server_sends().then_some(Goodput {
        sent_bytes: m.server.sent_bytes,
        received_bytes: m.received_bytes,
        receive_ns: m.receive_ns,
    });
    let rr = m.rtts.map(|rtts| RrFigures {
        transactions: rtts.count(),
        server_transactions: m.server.transactions,
        rtt: rtts.summary(),
        elapsed_ns: m.receive_ns,
    });
    Ok(QuicResult {
        test: *test,
        family: if server.is_ipv6() {
            Family::V6
        } else {
            Family::V4
        },
        congestion: test.congestion,
        handshake_ns,
        forward,
        reverse,
        rr,
        client_path: m.path,
        server_path: m.server.path,
        client_offload,
        server_offload: m.server.offload,
    })
}

/// How long a failed stream waits for the connection's close and its reason.
const CLOSE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// What the client measured on an open connection.
struct Measured {
    sent_bytes: u64,
    received_bytes: u64,
    receive_ns: u64,
    rtts: Option<measure::latency::LatencyHistogram>,
    path: PathFigures,
    server: ServerFigures,
}

async fn measure(
    conn: &quinn::Connection,
    test: &QuicTest,
    request: &[u8],
) -> Result<Measured, QuicError> {
    let (mut ctl_send, mut ctl_recv) = conn.open_bi().await.map_err(|e| stream_error(conn, e))?;
    ctl_send
        .write_all(request)
        .await
        .map_err(|e| stream_error(conn, e))?;
    ctl_send.finish().map_err(|e| stream_error(conn, e))?;
    let mut go = [0u8; 1];
    ctl_recv
        .read_exact(&mut go)
        .await
        .map_err(|e| stream_error(conn, e))?;
    if go != [GO] {
        return Err(QuicError::Protocol(format!(
            "the server answered the request with {:#04x}, not the start signal",
            go[0]
        )));
    }
    let start = Instant::now();
    let mut m = Measured {
        sent_bytes: 0,
        received_bytes: 0,
        receive_ns: 0,
        rtts: None,
        path: PathFigures::default(),
        server: ServerFigures::default(),
    };
    match test.kind {
        QuicKind::Stream { .. } => {
            let role = Role {
                sends: test.client_sends(),
                receives: test.server_sends(),
            };
            (m.sent_bytes, m.received_bytes, m.receive_ns) = bulk(conn, test, start, role).await?;
        }
        QuicKind::Rr => {
            let mut rtts = measure::latency::LatencyHistogram::new();
            rr_client(conn, test, start, &mut rtts).await?;
            m.receive_ns = ns(start.elapsed());
            m.rtts = Some(rtts);
        }
    }
    let figures = ctl_recv
        .read_to_end(SERVER_FIGURES_MAX_BYTES)
        .await
        .map_err(|e| stream_error(conn, e))?;
    m.server = ServerFigures::decode(&figures)
        .map_err(|e| QuicError::Protocol(format!("the server's figures: {e}")))?;
    m.path = PathFigures::of(conn);
    Ok(m)
}
