//! The dualperf server: one TCP listener per bind address (one per family by default,
//! IPv6 sockets v6-only so each family is tested natively), a thread per control
//! connection (capped), one test at a time ("server busy" otherwise), and a clean stop
//! that wakes and joins every thread. [`EmbeddedServer`] is the in-process loopback one.

use crate::error::{EngineError, IoContext};
use crate::server_ctx::{ServerConfig, ServerCtx};
use crate::server_session::serve_conn;
use std::collections::VecDeque;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running server; stops (and joins every thread) on [`ServerHandle::stop`] or drop.
pub struct ServerHandle {
    ctx: Arc<ServerCtx>,
    addrs: Vec<SocketAddr>,
    acceptors: Vec<JoinHandle<()>>,
}

impl ServerHandle {
    /// The addresses actually bound (ports resolved).
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// This server's admissions, for another port of the same server to take its tests
    /// through (see [`crate::server_ctx::Admission`]).
    pub fn admission(&self) -> crate::server_ctx::Admission {
        crate::server_ctx::Admission(self.ctx.clone())
    }

    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if self.ctx.stop.swap(true, Ordering::AcqRel) {
            return;
        }
        // Wake each blocking accept with a connection to it.
        for a in &self.addrs {
            let target = match a.ip() {
                IpAddr::V4(ip) if ip.is_unspecified() => {
                    SocketAddr::new(Ipv4Addr::LOCALHOST.into(), a.port())
                }
                IpAddr::V6(ip) if ip.is_unspecified() => {
                    SocketAddr::new(Ipv6Addr::LOCALHOST.into(), a.port())
                }
                _ => *a,
            };
            let _ = TcpStream::connect_timeout(&target, Duration::from_millis(200));
        }
        for h in self.acceptors.drain(..) {
            let _ = h.join();
        }
        let handlers = match self.ctx.handlers.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        };
        for h in handlers {
            let _ = h.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// A control listener: v6-only on IPv6, SO_REUSEADDR, no test options (each test's
/// data sockets get those).
fn listen(addr: SocketAddr) -> Result<TcpListener, net::NetError> {
    net::tcp_listen(addr, &wire::spec::SocketOpts::default()).map(|(l, _)| l)
}

/// Bind every address and start serving in background threads.
pub fn start_server(mut cfg: ServerConfig) -> Result<ServerHandle, EngineError> {
    // A count-bound test may not outlast the longest duration-bound one.
    cfg.limits.count_run_max = cfg.limits.count_run_max.min(cfg.max_duration);
    let binds = if cfg.binds.is_empty() {
        default_binds(cfg.port)
    } else {
        cfg.binds.clone()
    };
    let mut listeners = Vec::new();
    for (i, b) in binds.iter().enumerate() {
        match listen(*b) {
            Ok(l) => listeners.push(l),
            // The default IPv6 listener is optional when the host has no IPv6.
            Err(_) if cfg.binds.is_empty() && i > 0 => {}
            Err(e) => return Err(EngineError::Net(e)),
        }
    }
    let mut addrs = Vec::new();
    for l in &listeners {
        addrs.push(l.local_addr().ctx("cannot read the listening address")?);
    }
    let ctx = Arc::new(ServerCtx::new(cfg));
    let mut acceptors = Vec::new();
    for l in listeners {
        let c = ctx.clone();
        let h = std::thread::Builder::new()
            .name("dp-accept".into())
            .spawn(move || accept_loop(l, c))
            .ctx("cannot start the accept thread")?;
        acceptors.push(h);
    }
    Ok(ServerHandle {
        ctx,
        addrs,
        acceptors,
    })
}

/// Serve until `stop` becomes true (the CLI's Ctrl-C handler sets it).
pub fn run_server(cfg: ServerConfig, stop: &AtomicBool) -> Result<(), EngineError> {
    let handle = start_server(cfg)?;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    handle.stop();
    Ok(())
}

pub fn default_binds(port: u16) -> Vec<SocketAddr> {
    vec![
        SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), port),
        SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), port),
    ]
}

/// Connections turned away at the cap, kept open a little so that our "busy" reply is
/// read before the close (closing with unread input would reset the connection).
const LINGERING_MAX: usize = 64;

/// Tell a connection over the cap that the server is busy, without blocking: the reply
/// is small enough for any socket buffer.
fn refuse_busy(
    mut stream: TcpStream,
    ctx: &ServerCtx,
    lingering: &mut VecDeque<(Instant, TcpStream)>,
) {
    let _ = stream.set_nonblocking(true);
    let reply = wire::proto::encode_frame(
        &wire::proto::Msg::Error {
            code: wire::proto::ErrorCode::ConnectionLimit,
            message: "server busy: too many control connections open; try again shortly".into(),
        },
        ctx.cfg.protocol_version,
    );
    let _ = stream.write_all(&reply);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    if lingering.len() >= LINGERING_MAX {
        lingering.pop_front();
    }
    lingering.push_back((Instant::now(), stream));
}

fn accept_loop(listener: TcpListener, ctx: Arc<ServerCtx>) {
    if let Some(cpu) = ctx.cfg.pin_cpu {
        // Checked by whoever asked (the study pins its own thread first); a refusal
        // here leaves the server unpinned, which its caller records.
        let _ = net::pin_current_thread(cpu);
    }
    let mut lingering = VecDeque::new();
    loop {
        let accepted = listener.accept();
        if ctx.stopping() {
            return;
        }
        let Ok((stream, _)) = accepted else {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        };
        if ctx.conns.load(Ordering::Acquire) >= ctx.cfg.max_connections {
            refuse_busy(stream, &ctx, &mut lingering);
            continue;
        }
        // A turned-away peer has had a second to read its reply.
        lingering.retain(|(at, _)| at.elapsed() < Duration::from_secs(1));
        ctx.conns.fetch_add(1, Ordering::AcqRel);
        let c = ctx.clone();
        let spawned = std::thread::Builder::new()
            .name("dp-session".into())
            .spawn(move || {
                serve_conn(stream, &c);
                c.conns.fetch_sub(1, Ordering::AcqRel);
            });
        match spawned {
            Ok(h) => {
                if let Ok(mut g) = ctx.handlers.lock() {
                    g.retain(|h| !h.is_finished());
                    g.push(h);
                }
            }
            Err(_) => {
                ctx.conns.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }
}

/// An in-process server on 127.0.0.1 and ::1 (when IPv6 works) sharing one ephemeral
/// port; stops on drop.
pub struct EmbeddedServer {
    handle: ServerHandle,
    port: u16,
    has_ipv6: bool,
}

impl EmbeddedServer {
    pub fn start() -> Result<EmbeddedServer, EngineError> {
        EmbeddedServer::start_with(ServerConfig::private())
    }

    /// Start with `cfg` (its `binds` are replaced by the loopback pair).
    pub fn start_with(cfg: ServerConfig) -> Result<EmbeddedServer, EngineError> {
        let mut last_err = None;
        for _ in 0..8 {
            let v4 = listen(SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0))?;
            let port = v4
                .local_addr()
                .ctx("cannot read the listening address")?
                .port();
            drop(v4);
            let v6_addr = SocketAddr::new(Ipv6Addr::LOCALHOST.into(), port);
            let has_ipv6 = match listen(v6_addr) {
                Ok(_) => true,
                Err(e) if e.io_kind() == Some(std::io::ErrorKind::AddrInUse) => continue,
                Err(_) => false,
            };
            let mut c = cfg.clone();
            c.binds = vec![SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port)];
            if has_ipv6 {
                c.binds.push(v6_addr);
            }
            match start_server(c) {
                Ok(handle) => {
                    return Ok(EmbeddedServer {
                        handle,
                        port,
                        has_ipv6,
                    })
                }
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err.unwrap_or_else(|| {
            EngineError::io(
                "cannot find a free loopback port for the embedded server",
                std::io::ErrorKind::AddrInUse.into(),
            )
        }))
    }

    pub fn port(&self) -> u16 {
        self.port
    }
    pub fn has_ipv6(&self) -> bool {
        self.has_ipv6
    }
    pub fn local_addrs(&self) -> &[SocketAddr] {
        self.handle.local_addrs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_bound_tests_may_not_outlast_the_longest_duration_bound_one() {
        let h = start_server(ServerConfig {
            binds: vec![SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0)],
            max_duration: Duration::from_secs(10),
            ..ServerConfig::default()
        })
        .unwrap();
        assert_eq!(h.ctx.cfg.limits.count_run_max, Duration::from_secs(10));
    }
}
