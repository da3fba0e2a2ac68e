//! The server: one endpoint on a socket from `net`, a fresh self-signed certificate, and
//! one test at a time, each checked against the server's [`Limits`] before any data
//! flows. A refused test is closed with the reason, which the client reports.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::CertificateDer;

use crate::cert::ServerIdentity;
use crate::data::{bulk, rr_server, Role};
use crate::figures::{PathFigures, ServerFigures, ServerSide, SocketOffload};
use crate::spec::{check, Congestion, Limits, QuicKind, QuicTest, REQUEST_BYTES};
use crate::transport::{
    closed_error, server_config, stream_error, CLOSE_FAILED, CLOSE_REFUSED, CLOSE_SHUTDOWN, GO,
};
use crate::QuicError;

/// Past its longest test, the time a server gives senders to drain before it gives up.
const DRAIN_GRACE: Duration = Duration::from_secs(5);
/// The longest a server waits for a closed connection's last packets to go.
const CLOSE_LINGER: Duration = Duration::from_secs(2);

/// A QUIC test server on one UDP socket.
pub struct QuicServer {
    endpoint: quinn::Endpoint,
    identity: ServerIdentity,
    limits: Limits,
    offload: SocketOffload,
    // Dropped last: the endpoint's driver runs on it.
    runtime: tokio::runtime::Runtime,
}

/// Closes a server's endpoint from another thread (shutdown, or a test's peer that
/// goes away): every connection is closed with "the server is shutting down".
#[derive(Clone)]
pub struct ServerCloser {
    endpoint: quinn::Endpoint,
}

impl ServerCloser {
    pub fn close(&self) {
        self.endpoint
            .close(CLOSE_SHUTDOWN.into(), b"the server is shutting down");
    }

    /// Connections open on the server's endpoint.
    pub fn open_connections(&self) -> usize {
        self.endpoint.open_connections()
    }
}

impl QuicServer {
    /// A server on `socket` (bound by `net::udp_bind`) with a fresh self-signed
    /// certificate; returns the certificate to publish to clients (through the
    /// authenticated control connection).
    pub fn bind(
        socket: UdpSocket,
        limits: Limits,
    ) -> Result<(QuicServer, CertificateDer<'static>), QuicError> {
        let identity = ServerIdentity::generate()?;
        let offload = SocketOffload::probe(&socket)?;
        // One worker runs the endpoint and connections between and during tests, so a
        // close is sent even when no test is being served.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("quic-server")
            .enable_all()
            .build()?;
        let endpoint = {
            let _context = runtime.enter();
            quinn::Endpoint::new(
                quinn::EndpointConfig::default(),
                Some(server_config(&identity, Congestion::default())?),
                socket,
                Arc::new(quinn::TokioRuntime),
            )?
        };
        let cert = identity.cert.clone();
        let server = QuicServer {
            endpoint,
            identity,
            limits,
            offload,
            runtime,
        };
        Ok((server, cert))
    }

    pub fn local_addr(&self) -> Result<SocketAddr, QuicError> {
        Ok(self.endpoint.local_addr()?)
    }

    /// The certificate clients must pin.
    pub fn certificate(&self) -> &CertificateDer<'static> {
        &self.identity.cert
    }

    pub fn closer(&self) -> ServerCloser {
        ServerCloser {
            endpoint: self.endpoint.clone(),
        }
    }

    /// Serve the next connection: it must ask for `agreed` (the test the control
    /// connection agreed) and that test must be within the limits; other connections
    /// meanwhile are refused. Returns by `deadline`.
    pub fn serve_one(&self, agreed: &QuicTest, deadline: Instant) -> Result<ServerSide, QuicError> {
        let limit = deadline.saturating_duration_since(Instant::now());
        self.runtime.block_on(async {
            match tokio::time::timeout(limit, self.serve(agreed)).await {
                Ok(result) => result,
                Err(_) => Err(QuicError::Deadline {
                    after_s: limit.as_secs_f64(),
                }),
            }
        })
    }

    async fn serve(&self, agreed: &QuicTest) -> Result<ServerSide, QuicError> {
        let config = Arc::new(server_config(&self.identity, agreed.congestion)?);
        let incoming = self
            .endpoint
            .accept()
            .await
            .ok_or_else(|| QuicError::PeerClosed("the server's endpoint was closed".into()))?;
        let peer = incoming.remote_address();
        let conn = incoming
            .accept_with(config)
            .map_err(|e| closed_error(&e))?
            .await
            .map_err(|e| closed_error(&e))?;
        let endpoint = self.endpoint.clone();
        let _refuser = AbortOnDrop(tokio::spawn(async move {
            while let Some(other) = endpoint.accept().await {
                other.refuse();
            }
        }));
        match self.run_test(&conn, agreed, peer).await {
            Ok(side) => {
                // The client closes once it has the figures.
                conn.closed().await;
                Ok(side)
            }
            Err(e) => {
                match &e {
                    QuicError::Refused(reason) => {
                        conn.close(CLOSE_REFUSED.into(), reason.as_bytes())
                    }
                    QuicError::Connection(why) => conn.close(CLOSE_FAILED.into(), why.as_bytes()),
                    other => conn.close(CLOSE_FAILED.into(), other.to_string().as_bytes()),
                }
                // The close must reach the client before the server (and its runtime)
                // may go: a refusal is the client's only news of why.
                let _ = tokio::time::timeout(CLOSE_LINGER, self.endpoint.wait_idle()).await;
                Err(e)
            }
        }
    }

    async fn run_test(
        &self,
        conn: &quinn::Connection,
        agreed: &QuicTest,
        peer: SocketAddr,
    ) -> Result<ServerSide, QuicError> {
        let (mut ctl_send, mut ctl_recv) =
            conn.accept_bi().await.map_err(|e| stream_error(conn, e))?;
        let mut request = [0u8; REQUEST_BYTES];
        match ctl_recv.read_exact(&mut request).await {
            Ok(()) => {}
            Err(quinn::ReadExactError::FinishedEarly(n)) => {
                return Err(QuicError::Refused(format!(
                    "malformed request: it ends after {n} of {REQUEST_BYTES} bytes"
                )))
            }
            Err(quinn::ReadExactError::ReadError(e)) => return Err(stream_error(conn, e)),
        }
        let asked = QuicTest::decode(&request)
            .map_err(|why| QuicError::Refused(format!("malformed request: {why}")))?;
        check(&asked, &self.limits, peer.ip()).map_err(QuicError::Refused)?;
        // The token may be a keyed session's secret: compared in constant time, first.
        let differs = asked
            .session
            .iter()
            .zip(&agreed.session)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if std::hint::black_box(differs) != 0 {
            return Err(QuicError::Refused(
                "the QUIC connection does not carry the control session's token".into(),
            ));
        }
        if asked != *agreed {
            return Err(QuicError::Refused(
                "the test asked on the QUIC connection is not the one agreed on the control connection"
                    .into(),
            ));
        }
        ctl_send
            .write_all(&[GO])
            .await
            .map_err(|e| stream_error(conn, e))?;
        let start = Instant::now();
        let mut figures = ServerFigures {
            offload: self.offload,
            ..ServerFigures::default()
        };
        let longest = self.limits.max_duration + DRAIN_GRACE;
        let run = async {
            match asked.kind {
                QuicKind::Stream { .. } => {
                    let role = Role {
                        sends: asked.server_sends(),
                        receives: asked.client_sends(),
                    };
                    (
                        figures.sent_bytes,
                        figures.received_bytes,
                        figures.receive_ns,
                    ) = bulk(conn, &asked, start, role).await?;
                }
                QuicKind::Rr => figures.transactions = rr_server(conn, asked.payload_bytes).await?,
            }
            Ok::<(), QuicError>(())
        };
        tokio::time::timeout(longest, run).await.map_err(|_| {
            QuicError::Connection(format!(
                "the test ran past the server's longest test ({:.0} s) and its drain time",
                self.limits.max_duration.as_secs_f64()
            ))
        })??;
        figures.path = PathFigures::of(conn);
        ctl_send
            .write_all(&figures.encode())
            .await
            .map_err(|e| stream_error(conn, e))?;
        ctl_send.finish().map_err(|e| stream_error(conn, e))?;
        Ok(ServerSide {
            test: asked,
            peer,
            figures,
        })
    }
}

/// Aborts a task when dropped (the refuser of extra connections ends with its test).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
