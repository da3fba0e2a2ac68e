//! `dualperf server --iperf3-port PORT`: an iperf3-compatible server (the `iperf3`
//! crate's `Server`) beside the engine server, for unmodified iperf3 clients. Owns its
//! listener addresses (the engine's binds with the iperf3 port; by default one
//! dual-stack `[::]` socket, or `0.0.0.0` without IPv6), the serving thread, and the log
//! thread that prints one line per finished iperf3 test. Stops with the server's
//! Ctrl-C flag.

use anyhow::{anyhow, Context};
use iperf3::server::SessionReport;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the log thread looks for finished tests.
const LOG_POLL: Duration = Duration::from_millis(100);

/// The running iperf3 side of `dualperf server`.
pub struct Iperf3Side {
    serve: JoinHandle<()>,
    log: JoinHandle<()>,
    addrs: Vec<SocketAddr>,
}

/// Where to listen: each `--bind` address with the iperf3 port (an unspecified IPv6
/// address already covers IPv4, so `0.0.0.0` is dropped next to it); none = `[::]`.
pub fn listen_addrs(binds: &[SocketAddr], port: u16) -> Vec<SocketAddr> {
    let mut ips: Vec<IpAddr> = Vec::new();
    for b in binds {
        if !ips.contains(&b.ip()) {
            ips.push(b.ip());
        }
    }
    if ips.is_empty() {
        ips.push(IpAddr::V6(Ipv6Addr::UNSPECIFIED));
    }
    let has_any6 = ips.contains(&IpAddr::V6(Ipv6Addr::UNSPECIFIED));
    ips.into_iter()
        .filter(|ip| !(has_any6 && *ip == IpAddr::V4(Ipv4Addr::UNSPECIFIED)))
        .map(|ip| SocketAddr::new(ip, port))
        .collect()
}

/// Binds and starts serving with `opts` (the server's limits and key); `stop` ends
/// both threads.
pub fn start(
    binds: &[SocketAddr],
    port: u16,
    stop: Arc<AtomicBool>,
    opts: iperf3::ServerOptions,
) -> anyhow::Result<Iperf3Side> {
    let addrs = listen_addrs(binds, port);
    let server = match iperf3::Server::bind(&addrs) {
        Ok(s) => s,
        // No IPv6 on this host: the default falls back to IPv4 only.
        Err(_) if binds.is_empty() => {
            iperf3::Server::bind(&[SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)])
                .map_err(|e| anyhow!("{e}"))
                .with_context(|| format!("cannot serve iperf3 clients on port {port}"))?
        }
        Err(e) => {
            return Err(anyhow!("{e}"))
                .with_context(|| format!("cannot serve iperf3 clients on port {port}"))
        }
    };
    let server = server.with_options(opts);
    let addrs = server.local_addrs();
    let reports = server.reports();
    let serve_stop = stop.clone();
    let serve = std::thread::Builder::new()
        .name("iperf3-server".into())
        .spawn(move || {
            if let Err(e) = server.serve(&serve_stop) {
                eprintln!("dualperf server: iperf3 server stopped: {e}");
            }
        })
        .context("cannot start the iperf3 server thread")?;
    let log = std::thread::Builder::new()
        .name("iperf3-log".into())
        .spawn(move || log_loop(&reports, &stop))
        .context("cannot start the iperf3 log thread")?;
    Ok(Iperf3Side { serve, log, addrs })
}

impl Iperf3Side {
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Waits for both threads (after the stop flag is set); the last tests get logged.
    pub fn join(self) {
        let _ = self.serve.join();
        let _ = self.log.join();
    }
}

fn log_loop(reports: &Mutex<Vec<SessionReport>>, stop: &AtomicBool) {
    let mut printed = 0;
    loop {
        // Read the flag before draining, so reports finished before the stop are printed.
        let stopping = stop.load(Ordering::SeqCst);
        let fresh: Vec<String> = match reports.lock() {
            Ok(r) => r.iter().skip(printed).map(log_line).collect(),
            Err(_) => return,
        };
        printed += fresh.len();
        for line in fresh {
            // As the engine's log: a closed stdout does not stop serving.
            let _ = outln!("{}", wire::text::terminal_safe_line(&line));
        }
        if stopping {
            return;
        }
        std::thread::sleep(LOG_POLL);
    }
}

/// One line per iperf3 test, shaped like the engine server's lines.
pub fn log_line(r: &SessionReport) -> String {
    // An IPv4 client of the dual-stack socket shows as itself, not as ::ffff:a.b.c.d.
    let peer = r.peer.map_or("?".to_string(), |p| match p.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), p.port()).to_string(),
            None => p.to_string(),
        },
        IpAddr::V4(_) => p.to_string(),
    });
    let what = match &r.params {
        Some(p) => {
            let dir = if p.bidirectional {
                "bidir"
            } else if p.reverse {
                "reverse"
            } else {
                "forward"
            };
            format!(
                "{} {} B {dir} x{}",
                format!("{:?}", p.protocol).to_lowercase(),
                p.len_bytes,
                p.parallel
            )
        }
        None => "no test".into(),
    };
    let mut sent_bytes = 0u64;
    let mut recv_bytes = 0u64;
    let (mut lost, mut highest, mut udp) = (0i64, 0u64, false);
    for s in &r.streams {
        if s.server_sends {
            sent_bytes += s.outcome.bytes;
        } else {
            recv_bytes += s.outcome.bytes;
            if let Some(u) = &s.outcome.udp {
                udp = true;
                lost += u.errors.max(0);
                highest += u.max_seq;
            }
        }
    }
    let outcome = match (&r.refusal, &r.error) {
        (Some(refusal), _) => format!("refused ({}): {}", refusal.flag, refusal.message),
        (None, Some(e)) => format!("failed: {e}"),
        (None, None) => {
            let mut s = format!("ok: sent {sent_bytes} B, received {recv_bytes} B");
            if udp {
                s.push_str(&format!(", lost {lost} of {highest} datagrams"));
            }
            s
        }
    };
    let user = r
        .user
        .as_ref()
        .map_or(String::new(), |u| format!(" user {u:?}"));
    // What the server set up other than meant (a capped UDP receive buffer).
    let notes: String = r.notes.iter().map(|n| format!("; {n}")).collect();
    format!("dualperf server: iperf3 {peer}{user} {what}, {outcome}{notes}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_one_dual_stack_socket_and_binds_keep_their_ips() {
        assert_eq!(listen_addrs(&[], 5201), vec!["[::]:5201".parse().unwrap()]);
        let binds: Vec<SocketAddr> = vec![
            "10.0.0.1:5301".parse().unwrap(),
            "[fd00::1]:5301".parse().unwrap(),
            "10.0.0.1:5302".parse().unwrap(),
        ];
        assert_eq!(
            listen_addrs(&binds, 5201),
            vec![
                "10.0.0.1:5201".parse::<SocketAddr>().unwrap(),
                "[fd00::1]:5201".parse().unwrap()
            ]
        );
        let any: Vec<SocketAddr> = vec!["0.0.0.0:1".parse().unwrap(), "[::]:1".parse().unwrap()];
        assert_eq!(listen_addrs(&any, 7), vec!["[::]:7".parse().unwrap()]);
    }

    #[test]
    fn a_refused_test_names_the_flag_and_a_hostile_user_stays_one_safe_line() {
        let r = SessionReport {
            refusal: Some(iperf3::policy::Refusal {
                code: 6,
                flag: "--max-streams",
                message:
                    "the server allows at most 4 streams per test (--max-streams); 5 asked for"
                        .into(),
            }),
            error: Some("refused: the server allows at most 4 streams".into()),
            ..SessionReport::default()
        };
        let line = log_line(&r);
        assert!(
            line.contains("refused (--max-streams): the server allows at most 4"),
            "{line}"
        );
        for text in wire::text::HOSTILE_CORPUS {
            let r = SessionReport {
                user: Some(text.to_string()),
                ..SessionReport::default()
            };
            let shown = wire::text::terminal_safe_line(&log_line(&r)).into_owned();
            assert!(!shown.contains(['\n', '\r', '\x1b', '\0']), "{shown:?}");
        }
    }

    #[test]
    fn a_failed_session_says_why() {
        let r = SessionReport {
            error: Some("timed out waiting".into()),
            ..SessionReport::default()
        };
        let line = log_line(&r);
        assert!(line.contains("failed: timed out waiting"), "{line}");
        let noted = SessionReport {
            notes: vec!["SO_RCVBUF 4194304 capped by net.core.rmem_max".into()],
            ..SessionReport::default()
        };
        assert!(
            log_line(&noted).ends_with(
                "ok: sent 0 B, received 0 B; SO_RCVBUF 4194304 capped by net.core.rmem_max"
            ),
            "{}",
            log_line(&noted)
        );
        assert!(line.contains("no test"), "{line}");
        let mapped = SessionReport {
            peer: Some("[::ffff:127.0.0.1]:4000".parse().unwrap()),
            ..SessionReport::default()
        };
        assert!(
            log_line(&mapped).contains(" 127.0.0.1:4000 "),
            "{}",
            log_line(&mapped)
        );
    }
}
