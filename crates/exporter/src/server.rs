//! The HTTP side: hyper's HTTP/1.1 server on a one-thread tokio runtime, probes on its
//! blocking pool. `/probe`, `/metrics` and an index; bounded headers, header read time,
//! connections and connection lifetime; optional TLS and basic auth.

use crate::config::Config;
use crate::conns::{refusal_response, ConnRefusal, Conns};
use crate::exposition::{encode, probe_registry, wants_openmetrics};
use crate::gate::{Gate, Refusal};
use crate::own::OwnMetrics;
use crate::probe::{cut_short, failure_log, run_probe_reporting, ProbeRun};
use crate::target::{check_allowed, resolve, Target};
use crate::webconfig::WebConfig;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};

/// The header Prometheus sends with its scrape timeout (seconds, a decimal).
pub const SCRAPE_TIMEOUT_HEADER: &str = "x-prometheus-scrape-timeout-seconds";

/// Limits of the HTTP side.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// A client must send its request headers within this (slow clients are cut off).
    pub header_read_timeout: Duration,
    /// Connections open at once; more are answered 503 and closed on accept.
    pub max_connections: usize,
    /// Connections one client (its address; an IPv6 one by /64) may hold open at once;
    /// more are answered 503 and closed on accept, so one address cannot take every
    /// connection.
    pub max_connections_per_client: usize,
    /// A connection is closed (after its current request) when it is this old.
    pub max_connection_age: Duration,
    /// Largest request head, bytes (hyper's read buffer; at least 8 KiB).
    pub max_header_bytes: usize,
    /// Name lookups and password (bcrypt) checks running at once on blocking threads;
    /// a request that needs one more is refused at once (503), so clients that send and
    /// hang up cannot pile up work ahead of Prometheus' scrapes.
    pub max_blocking_checks: usize,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            header_read_timeout: Duration::from_secs(10),
            max_connections: 256,
            max_connections_per_client: 32,
            max_connection_age: Duration::from_secs(600),
            max_header_bytes: 16 * 1024,
            max_blocking_checks: 8,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on {addr}: {source}; is another exporter running there? choose another --listen address")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the exporter's runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

struct State {
    archive: Option<crate::archive::Archive>,
    config: Config,
    web: WebConfig,
    gate: Gate,
    own: OwnMetrics,
    /// Permits for name lookups and bcrypt checks on the blocking pool.
    checks: Arc<tokio::sync::Semaphore>,
    max_checks: usize,
}

/// Why work was not run on the blocking pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Offload {
    /// Every permit is taken: refused at once.
    Saturated,
    /// The work stopped unexpectedly (it panicked, or the runtime is shutting down).
    Stopped,
}

/// Run `f` on the blocking pool when one of `checks`' permits is free, else refuse at
/// once. The permit goes with `f`: it is released when `f` ends, whatever happens to the
/// request that asked.
async fn off_thread<T: Send + 'static>(
    checks: &Arc<tokio::sync::Semaphore>,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Offload> {
    let permit = checks
        .clone()
        .try_acquire_owned()
        .map_err(|_| Offload::Saturated)?;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        f()
    })
    .await
    .map_err(|_| Offload::Stopped)
}

/// The answer when every blocking permit is taken.
fn saturated(state: &State, what: &str) -> Reply {
    state.own.refused("overloaded");
    text(
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "the exporter is busy: all its {} slots for name lookups and password checks are taken, so {what} cannot start now; try again shortly\n",
            state.max_checks
        ),
    )
}

/// A running exporter; dropping it stops it (probes under way are given time to end).
pub struct Running {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serve until the process ends.
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Listen on `listen` and serve in a thread of its own.
pub fn start(
    config: Config,
    web: WebConfig,
    listen: SocketAddr,
    opts: ServerOptions,
) -> Result<Running, ServerError> {
    start_with_archive(config, web, listen, opts, None)
}

/// [`start`], also storing every probe in `archive` (`--db`).
pub fn start_with_archive(
    config: Config,
    web: WebConfig,
    listen: SocketAddr,
    opts: ServerOptions,
    archive: Option<crate::archive::Archive>,
) -> Result<Running, ServerError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        // Probes, name resolution and bcrypt; the gate admits at most
        // max_concurrent_probes probes, the rest is short.
        .max_blocking_threads(config.max_concurrent_probes + opts.max_blocking_checks.max(1))
        .thread_name("dualperf-exporter")
        .build()
        .map_err(ServerError::Runtime)?;
    let std_listener = std::net::TcpListener::bind(listen)
        .and_then(|l| l.set_nonblocking(true).map(|_| l))
        .map_err(|source| ServerError::Listen {
            addr: listen,
            source,
        })?;
    let addr = std_listener
        .local_addr()
        .map_err(|source| ServerError::Listen {
            addr: listen,
            source,
        })?;
    let listener = {
        let _enter = rt.enter();
        tokio::net::TcpListener::from_std(std_listener).map_err(|source| ServerError::Listen {
            addr: listen,
            source,
        })?
    };
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
    let state = Arc::new(State {
        gate: Gate::new(config.max_concurrent_probes, config.max_probes_per_client),
        own: OwnMetrics::new(config.modules.keys()),
        archive,
        config,
        web,
        checks: Arc::new(tokio::sync::Semaphore::new(
            opts.max_blocking_checks
                .min(tokio::sync::Semaphore::MAX_PERMITS),
        )),
        max_checks: opts.max_blocking_checks,
    });
    let thread = std::thread::Builder::new()
        .name("dualperf-exporter".into())
        .spawn(move || {
            rt.block_on(accept_loop(listener, state, opts, stop_rx));
            rt.shutdown_timeout(Duration::from_secs(30));
        })
        .map_err(ServerError::Runtime)?;
    Ok(Running {
        addr,
        stop: Some(stop_tx),
        thread: Some(thread),
    })
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    state: Arc<State>,
    opts: ServerOptions,
    mut stop: tokio::sync::oneshot::Receiver<()>,
) {
    let conns = Conns::new(opts.max_connections, opts.max_connections_per_client);
    let tls = state
        .web
        .tls
        .clone()
        .map(|a| Arc::new(tokio_native_tls::TlsAcceptor::from(a)));
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stop => return,
            r = listener.accept() => match r {
                Ok(s) => s,
                // Out of file descriptors or similar: wait a moment rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let permit = match conns.admit(peer.ip()) {
            Ok(p) => p,
            Err(why) => {
                state.own.refused("too_many_connections");
                refuse_at_once(stream, &why, tls.is_none());
                continue;
            }
        };
        let (state, opts, tls) = (state.clone(), opts.clone(), tls.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let _ = stream.set_nodelay(true);
            match tls {
                None => serve(stream, state, &opts, peer.ip()).await,
                Some(acceptor) => {
                    let hs =
                        tokio::time::timeout(opts.header_read_timeout, acceptor.accept(stream));
                    if let Ok(Ok(s)) = hs.await {
                        serve(s, state, &opts, peer.ip()).await;
                    }
                }
            }
        });
    }
}

/// Refuse a connection without a task or a wait: what the client already sent is read
/// (closing a socket with unread data resets it, and the client might lose the answer),
/// then, in plain HTTP, a 503 saying why is written in one non-blocking write into the
/// fresh socket's empty buffer, and the connection is closed. Under TLS nothing can be
/// said before a handshake, so it is closed at once.
fn refuse_at_once(stream: tokio::net::TcpStream, why: &ConnRefusal, plain: bool) {
    let Ok(mut s) = stream.into_std() else {
        return;
    };
    if plain {
        use std::io::{Read, Write};
        let mut sink = [0u8; 4096];
        for _ in 0..4 {
            match s.read(&mut sink) {
                Ok(n) if n > 0 => {}
                _ => break,
            }
        }
        let _ = s.write(&refusal_response(why));
    }
}

async fn serve<I>(io: I, state: Arc<State>, opts: &ServerOptions, peer: IpAddr)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let svc = hyper::service::service_fn(move |req| {
        let state = state.clone();
        async move { Ok::<_, Infallible>(handle(state, req, peer).await) }
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(opts.header_read_timeout)
        .max_buf_size(opts.max_header_bytes.max(8192))
        .serve_connection(TokioIo::new(io), svc);
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = tokio::time::sleep(opts.max_connection_age) => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

type Reply = Response<Full<Bytes>>;

fn text(status: StatusCode, body: String) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

async fn handle(state: Arc<State>, req: Request<Incoming>, peer: IpAddr) -> Reply {
    if state.web.auth.is_some() {
        let header = req
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let remembered = state
            .web
            .auth
            .as_ref()
            .is_some_and(|a| a.remembered(header.as_deref()));
        let ok = if remembered {
            true
        } else {
            let st = state.clone();
            match off_thread(&state.checks, move || {
                st.web
                    .auth
                    .as_ref()
                    .is_some_and(|a| a.check(header.as_deref()))
            })
            .await
            {
                Ok(ok) => ok,
                Err(Offload::Saturated) => return saturated(&state, "the password check"),
                Err(Offload::Stopped) => false,
            }
        };
        if !ok {
            state.own.refused("unauthorized");
            let mut r = text(
                StatusCode::UNAUTHORIZED,
                "unauthorized: give a user and password of the exporter's basic_auth_users\n"
                    .into(),
            );
            r.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"dualperf exporter\""),
            );
            return r;
        }
    }
    if req.method() != Method::GET {
        return text(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("method {} not allowed: use GET\n", req.method()),
        );
    }
    let openmetrics = wants_openmetrics(
        req.headers()
            .get(hyper::header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    );
    match req.uri().path() {
        "/probe" => probe(&state, &req, openmetrics, peer).await,
        "/metrics" => {
            let (body, ct) = state.own.encode(state.gate.queued(), openmetrics);
            let mut r = text(StatusCode::OK, body);
            r.headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static(ct));
            r
        }
        "/" => text(StatusCode::OK, index(&state.config)),
        p => text(
            StatusCode::NOT_FOUND,
            format!(
                "no page {}: use /probe?target=HOST&module=NAME or /metrics\n",
                p.chars().take(100).collect::<String>()
            ),
        ),
    }
}

fn index(c: &Config) -> String {
    let mut s = String::from(
        "dualperf exporter\n\n/probe?target=HOST[:PORT]&module=NAME  runs the module over IPv4 and IPv6\n/metrics                              the exporter's own metrics\n\nmodules:\n",
    );
    for (name, m) in &c.modules {
        let fams: Vec<String> = m.specs().map(|s| s.family.to_string()).collect();
        if let Some(spec) = m.specs().next() {
            s.push_str(&format!(
                "  {name}: {} {} bytes, {:.1} s per family, {}\n",
                spec.kind,
                spec.payload_bytes,
                m.test_time.as_secs_f64(),
                fams.join(" and ")
            ));
        }
    }
    s
}

/// What a scrape asks: its parameters and its time budget.
#[derive(Debug, Clone)]
pub struct ProbeAsk {
    pub target: Target,
    pub module: String,
    pub budget: Duration,
}

/// Why a scrape was refused: the reason label of `dualperf_exporter_refused_total` and
/// the words the scraper reads.
pub type ProbeRefusal = (&'static str, String);

fn parse_ask(config: &Config, req: &Request<Incoming>) -> Result<ProbeAsk, ProbeRefusal> {
    parse_probe_request(
        config,
        req.uri().query().unwrap_or(""),
        req.headers()
            .get(SCRAPE_TIMEOUT_HEADER)
            .map(|v| v.to_str().unwrap_or("(not text)")),
    )
}

/// A `/probe` request from its query string and its scrape-timeout header: the first
/// `target` and `module` count, the module must be configured, the target must parse,
/// and the header (when sent) must be a number of seconds. Pure: fuzzed as
/// `exporter_request`.
pub fn parse_probe_request(
    config: &Config,
    query: &str,
    scrape_timeout: Option<&str>,
) -> Result<ProbeAsk, ProbeRefusal> {
    let (mut target, mut module) = (None, None);
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "target" if target.is_none() => target = Some(v.into_owned()),
            "module" if module.is_none() => module = Some(v.into_owned()),
            _ => {}
        }
    }
    let known = || {
        config
            .modules
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let module = module.ok_or_else(|| {
        (
            "bad_request",
            format!(
                "the module parameter is missing: add &module=NAME, one of {}",
                known()
            ),
        )
    })?;
    if !config.modules.contains_key(&module) {
        return Err((
            "unknown_module",
            format!(
                "unknown module '{}': use one of {}",
                module.chars().take(100).collect::<String>(),
                known()
            ),
        ));
    }
    let target = target.ok_or_else(|| {
        (
            "bad_request",
            "the target parameter is missing: add ?target=HOST or HOST:PORT".to_string(),
        )
    })?;
    let target = Target::parse(&target).map_err(|e| ("bad_request", e.to_string()))?;
    let budget = scrape_budget(scrape_timeout, config.timeout_offset)
        .map_err(|e| ("bad_request", e.to_string()))?;
    Ok(ProbeAsk {
        target,
        module,
        budget,
    })
}

/// Prometheus sent a scrape-timeout header that is not a number of seconds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} '{value}' is not a number of seconds", SCRAPE_TIMEOUT_HEADER)]
pub struct ScrapeTimeoutError {
    /// The header's value, cut to 40 characters.
    pub value: String,
}

/// The time a probe may take: the scrape timeout Prometheus sent less the offset, or
/// the default budget without the header.
pub fn scrape_budget(
    header: Option<&str>,
    offset: Duration,
) -> Result<Duration, ScrapeTimeoutError> {
    let Some(h) = header else {
        return Ok(crate::config::DEFAULT_PROBE_BUDGET);
    };
    let secs: f64 = h
        .trim()
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s <= 86_400.0)
        .ok_or_else(|| ScrapeTimeoutError {
            value: h.chars().take(40).collect(),
        })?;
    Ok(Duration::from_secs_f64(secs).saturating_sub(offset))
}

async fn probe(
    state: &Arc<State>,
    req: &Request<Incoming>,
    openmetrics: bool,
    peer: IpAddr,
) -> Reply {
    let mut abandoned = state.own.abandoned();
    let r = probe_reply(state, req, openmetrics, peer).await;
    abandoned.answered();
    r
}

async fn probe_reply(
    state: &Arc<State>,
    req: &Request<Incoming>,
    openmetrics: bool,
    peer: IpAddr,
) -> Reply {
    let began = Instant::now();
    let ask = match parse_ask(&state.config, req) {
        Ok(a) => a,
        Err((why, msg)) => {
            state.own.refused(why);
            return text(StatusCode::BAD_REQUEST, msg + "\n");
        }
    };
    let module = &state.config.modules[&ask.module];
    let families = module.runs.len() as u32;
    let needed = (module.test_time + state.config.setup_allowance) * families;
    if needed > ask.budget {
        state.own.refused("scrape_timeout");
        return text(
            StatusCode::BAD_REQUEST,
            format!(
                "module '{}' needs {:.1} s ({} families × ({:.1} s test + {:.1} s setup)) but the scrape timeout leaves {:.1} s (after the {:.1} s offset): raise scrape_timeout in Prometheus or shorten the module\n",
                ask.module,
                needed.as_secs_f64(),
                families,
                module.test_time.as_secs_f64(),
                state.config.setup_allowance.as_secs_f64(),
                ask.budget.as_secs_f64(),
                state.config.timeout_offset.as_secs_f64()
            ),
        );
    }
    // An address, or a name of the configured hosts, needs no lookup; a name does, on
    // the blocking pool, within the permits and the time the budget leaves.
    let resolved = match (state.config.hosts.get(&ask.target.host), ask.target.ip()) {
        (Some(addrs), _) => crate::target::Resolved::pick(&ask.target, addrs),
        (None, Some(ip)) => crate::target::Resolved::pick(&ask.target, &[ip]),
        (None, None) => {
            let target = ask.target.clone();
            let lookup = off_thread(&state.checks, move || resolve(&target));
            match tokio::time::timeout(ask.budget - needed + Duration::from_millis(1), lookup).await
            {
                Ok(Ok(Ok(r))) => r,
                Ok(Ok(Err(e))) => crate::target::Resolved::neither(e),
                Ok(Err(Offload::Saturated)) => {
                    return saturated(state, &format!("resolving '{}'", ask.target.host))
                }
                Ok(Err(Offload::Stopped)) | Err(_) => {
                    state.own.refused("resolve_timeout");
                    return text(
                        StatusCode::SERVICE_UNAVAILABLE,
                        format!("resolving '{}' took too long\n", ask.target.host),
                    );
                }
            }
        }
    };
    if let Err(e) = check_allowed(&state.config.allow, &ask.target, &resolved) {
        state.own.refused("not_allowed");
        return text(StatusCode::FORBIDDEN, format!("{e}\n"));
    }
    let port = ask.target.port.unwrap_or(module.port);
    let key = ask.target.with_port(port);
    let key_text = key.clone();
    // One probe per address connected, however the target was spelt.
    let endpoints = resolved.endpoints(module.specs().map(|s| s.family), port);
    let wait = ask.budget.saturating_sub(needed + began.elapsed());
    let mut admission = match state.gate.admit(&endpoints, peer, wait).await {
        Ok(a) => a,
        Err(Refusal::Busy(msg)) => {
            state.own.refused("busy");
            return text(StatusCode::SERVICE_UNAVAILABLE, msg + "\n");
        }
    };
    let v6_first = admission.v6_first();
    let budget = ask.budget.saturating_sub(began.elapsed());
    let (module, allowance) = (module.clone(), state.config.setup_allowance);
    let ran = Instant::now();
    let st = state.clone();
    // The families' outcomes as they end, for an answer in time if the probe overruns.
    let finished = Arc::new(std::sync::Mutex::new(Vec::new()));
    let progress = finished.clone();
    let (m, r) = (module.clone(), resolved.clone());
    let blocking = tokio::task::spawn_blocking(move || {
        // The probe owns its admission: the target and the global slot stay taken until
        // it ends, also when its client hangs up (hyper then drops this handler, not the
        // blocking probe) or its answer was sent without it (budget overrun).
        let _admission = admission;
        let _in_flight = st.own.in_flight();
        let started = std::time::SystemTime::now();
        let run = ProbeRun {
            module: &m,
            resolved: &r,
            port,
            v6_first,
            budget,
            setup_allowance: allowance,
        };
        let p = run_probe_reporting(&run, &mut |o| {
            if let Ok(mut v) = progress.lock() {
                v.push(o.clone());
            }
        });
        if let Some(a) = &st.archive {
            if let Err(e) = a.record(&m, &key, started, &p) {
                let f = st.own.archive_failed();
                if f.log {
                    eprintln!(
                        "dualperf exporter: cannot store the probe of {key} in the results database: {e} ({} such errors so far; the first and every {}th are logged)",
                        f.count,
                        crate::own::ARCHIVE_LOG_EVERY
                    );
                }
            }
        }
        p
    });
    // Each family's waits are held to the budget (probe::FamilyLimits), so the probe
    // normally ends in it; whatever a target does, the answer is not later than that.
    let outcome = match tokio::time::timeout(budget, blocking).await {
        Ok(Ok(p)) => p,
        Ok(Err(_)) => {
            return text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the probe stopped unexpectedly\n".into(),
            )
        }
        Err(_) => {
            let done = finished.lock().map(|v| v.clone()).unwrap_or_default();
            let run = ProbeRun {
                module: &module,
                resolved: &resolved,
                port,
                v6_first,
                budget,
                setup_allowance: allowance,
            };
            cut_short(&run, &done)
        }
    };
    state.own.probed(&ask.module, &outcome, ran.elapsed());
    // The labels carry the reason only; the engine's words go to the log.
    for line in failure_log(&key_text, &ask.module, &outcome) {
        eprintln!("{line}");
    }
    let (body, ct) = encode(&probe_registry(&outcome), openmetrics);
    let mut r = text(StatusCode::OK, body);
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(ct));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocking_work_beyond_the_permits_is_refused_at_once() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let checks = Arc::new(tokio::sync::Semaphore::new(1));
            let (release, wait) = std::sync::mpsc::channel::<()>();
            let held = {
                let checks = checks.clone();
                tokio::spawn(async move {
                    off_thread(&checks, move || {
                        let _ = wait.recv();
                        1
                    })
                    .await
                })
            };
            // Bounded wait until the first lookup holds the permit.
            for _ in 0..10_000 {
                if checks.available_permits() == 0 {
                    break;
                }
                tokio::task::yield_now().await;
            }
            assert_eq!(checks.available_permits(), 0);
            // The next is refused without waiting (a pending future would hang here).
            assert_eq!(off_thread(&checks, || 2).await, Err(Offload::Saturated));
            release.send(()).unwrap();
            assert_eq!(held.await.unwrap(), Ok(1));
            assert_eq!(off_thread(&checks, || 3).await, Ok(3));
        });
    }

    #[test]
    fn the_scrape_timeout_header_sets_the_budget() {
        let off = Duration::from_millis(500);
        assert_eq!(
            scrape_budget(Some("10"), off),
            Ok(Duration::from_millis(9500))
        );
        assert_eq!(
            scrape_budget(Some(" 2.5 "), off),
            Ok(Duration::from_secs(2))
        );
        assert_eq!(scrape_budget(Some("0.2"), off), Ok(Duration::ZERO));
        assert_eq!(
            scrape_budget(None, off),
            Ok(crate::config::DEFAULT_PROBE_BUDGET)
        );
        for bad in ["", "x", "-1", "0", "inf", "NaN", "1e30"] {
            let e = scrape_budget(Some(bad), off).unwrap_err();
            assert_eq!(e.value, bad);
            let e = e.to_string();
            assert!(e.contains("is not a number of seconds"), "{bad}: {e}");
        }
    }
}
