//! `dualperf server`: serve tests on port 5301 (IPv4 and IPv6, one listener each, or
//! the `--bind` addresses) until Ctrl-C, one log line per test on stdout.

use anyhow::Context;
use clap::Args;
use engine::{ServerConfig, TestLog};
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use wire::spec::Direction;

mod iperf3_side;

#[derive(Args, Debug)]
pub struct ServerArgs {
    /// Control port.
    #[arg(short, long, default_value_t = engine::DEFAULT_PORT)]
    port: u16,
    /// Address to listen on (repeatable): an IP (uses --port) or IP:PORT / [IPv6]:PORT;
    /// `localhost` is 127.0.0.1 and ::1.
    /// Default: 0.0.0.0 and :: (IPv6 only when available).
    #[arg(long = "bind", value_name = "ADDR")]
    binds: Vec<String>,
    /// Also serve unmodified iperf3 clients on this port (e.g. 5201), on the same
    /// addresses (default: one dual-stack socket for IPv4 and IPv6).
    #[arg(long, value_name = "PORT")]
    iperf3_port: Option<u16>,
    /// Serve only iperf3 clients that authenticate (iperf3's `--username`,
    /// `--rsa-public-key-path`): the RSA private key in PEM, as for `iperf3 -s
    /// --rsa-private-key-path` (with --iperf3-authorized-users).
    #[arg(long, value_name = "FILE", requires = "iperf3_authorized_users")]
    iperf3_rsa_private_key: Option<std::path::PathBuf>,
    /// The iperf3 users file, as for `iperf3 -s --authorized-users-path`: lines
    /// `USER,HASH` with HASH the sha256 of `{USER}PASSWORD` (with --iperf3-rsa-private-key).
    #[arg(long, value_name = "FILE", requires = "iperf3_rsa_private_key")]
    iperf3_authorized_users: Option<std::path::PathBuf>,
    /// With --psk-file, open the iperf3 port without iperf3 authentication: anyone who
    /// can reach it can run tests there.
    #[arg(long, conflicts_with = "iperf3_rsa_private_key")]
    iperf3_no_auth: bool,
    /// Tests run at once; a client asking for another is told "busy".
    #[arg(long, value_name = "N", default_value_t = 1)]
    max_tests: usize,
    /// Parallel streams one test may ask for.
    #[arg(long, value_name = "N", default_value_t = 16)]
    max_streams: u16,
    /// UDP datapath of this server's sockets when the client asks for auto: auto (batched; GSO at the sender and GRO at the receiver for streams unpaced or paced above 20 kpps: the default),
    /// per-datagram (one datagram per system call, as Netperf, iperf3, nuttcp and qperf
    /// send: the studies' method), batched (no offloads) or gso (GSO
    /// and GRO even when paced). Recorded with every run as applied.udp_datapath_calls.
    #[arg(long, value_name = "PATH", default_value = "auto")]
    udp_datapath: wire::spec::UdpDatapath,
    /// Longest test, seconds; count-bound tests are ended after this long too.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    max_duration: f64,
    /// Total UDP rate the server sends (reverse / bidir), all tests at once, bit/s
    /// (k/M/G) of IP packets: payload as --rate counts it plus UDP and IP headers;
    /// 0 = unlimited. Unpaced server sending is allowed to
    /// loopback clients only while this is set.
    #[arg(long, value_name = "RATE", default_value = "10G")]
    max_rate: String,
    /// Largest payload a test may ask for, bytes [default: the family's datagram
    /// maximum for UDP (65507 IPv4, 65527 IPv6), 1 MiB for TCP].
    #[arg(long, value_name = "BYTES")]
    max_payload: Option<u32>,
    /// Control connections served at once; more are told "busy" and closed.
    #[arg(long, value_name = "N", default_value_t = 32)]
    max_connections: usize,
    /// Require clients to prove this pre-shared key (HMAC-SHA256 challenge-response; the
    /// key never crosses the wire) and bind their data streams to the session. Make one
    /// with `openssl rand -hex 32 > FILE; chmod 600 FILE`. Without it, anyone who can
    /// reach the port can run tests (a warning is printed for non-loopback addresses).
    #[arg(long, value_name = "FILE")]
    psk_file: Option<std::path::PathBuf>,
}

/// The iperf3 port's admission through the dualperf port's: a refusal names the limit
/// whose budget the running tests hold.
fn shared_admission(adm: engine::Admission) -> iperf3::server::SharedAdmission {
    iperf3::server::SharedAdmission(Arc::new(move |send_bps| {
        adm.try_admit(send_bps)
            .map(|g| Box::new(g) as Box<dyn Send>)
            .map_err(|e| {
                let flag = match e {
                    engine::AdmitError::RateTaken { .. } => "--max-rate",
                    _ => "--max-tests",
                };
                (flag, e.to_string())
            })
    }))
}

/// The warning for a server without a key on an address other hosts can reach.
pub fn open_server_warning(listening: &[SocketAddr], keyed: bool) -> Option<String> {
    let exposed: Vec<String> = listening
        .iter()
        .filter(|a| !a.ip().is_loopback())
        .map(|a| a.to_string())
        .collect();
    (!keyed && !exposed.is_empty()).then(|| {
        format!(
            "warning: listening on {} without a pre-shared key: anyone who can reach it can \
             run tests through this host; use --psk-file (and the --max-* limits)",
            exposed.join(", ")
        )
    })
}

/// `--max-rate`: "0" = unlimited, else a bit rate.
fn parse_max_rate(text: &str) -> anyhow::Result<Option<u64>> {
    if text.trim() == "0" {
        return Ok(None);
    }
    let bps = crate::args::parse_bit_rate(text).map_err(|e| anyhow::anyhow!("--max-rate: {e}"))?;
    Ok(Some(wire::bounds::in_range(
        "--max-rate",
        bps,
        1,
        study::spec::MAX_RATE_BPS,
        "bit/s (or 0 for unlimited)",
    )?))
}

/// Parse `--bind` values: "1.2.3.4", "::1", "1.2.3.4:5301", "[::1]:5301", and
/// "localhost" (or "localhost:5301"): both loopback addresses, 127.0.0.1 and ::1
/// (RFC 6761, `net::host`).
pub fn parse_bind(text: &str, port: u16) -> anyhow::Result<Vec<SocketAddr>> {
    let t = text.trim();
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    let (name, port) = match t.rsplit_once(':') {
        Some((n, p)) if net::host::is_localhost(n) => (
            n,
            p.parse()
                .with_context(|| format!("--bind '{text}': '{p}' is not a port"))?,
        ),
        _ => (t, port),
    };
    if net::host::is_localhost(name) {
        let all = net::host::addresses(name)?;
        return Ok(all
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect());
    }
    let ip: IpAddr = net::host::bare(t)
        .parse()
        .with_context(|| format!("--bind '{text}' is not an IP address, IP:PORT or localhost"))?;
    Ok(vec![SocketAddr::new(ip, port)])
}

/// Most tests and control connections one server may be asked to serve at once.
pub const MAX_SERVER_TESTS: usize = 1024;
pub const MAX_SERVER_CONNECTIONS: usize = 65_536;

/// The `--max-*` limits, range-checked at startup (a limit no test can satisfy, such
/// as `--max-duration 1e-320` or `--max-payload 0`, is refused with the valid range).
struct Limits {
    max_tests: usize,
    max_streams: u16,
    max_duration: std::time::Duration,
    max_payload_bytes: Option<u32>,
    max_connections: usize,
}

fn checked_limits(args: &ServerArgs) -> anyhow::Result<Limits> {
    use wire::bounds::{in_range, secs_to_duration};
    let min_payload = wire::datagram::HEADER_BYTES as u32;
    Ok(Limits {
        max_tests: in_range("--max-tests", args.max_tests, 1, MAX_SERVER_TESTS, "")?,
        max_streams: in_range(
            "--max-streams",
            args.max_streams,
            1,
            wire::proto::MAX_STREAMS,
            "",
        )?,
        max_duration: secs_to_duration(
            "--max-duration",
            args.max_duration,
            std::time::Duration::from_millis(10),
            std::time::Duration::from_nanos(wire::proto::MAX_DURATION_NS),
        )?,
        max_payload_bytes: args
            .max_payload
            .map(|p| {
                in_range(
                    "--max-payload",
                    p,
                    min_payload,
                    wire::proto::MAX_TCP_PAYLOAD_BYTES,
                    "bytes",
                )
            })
            .transpose()?,
        max_connections: in_range(
            "--max-connections",
            args.max_connections,
            1,
            MAX_SERVER_CONNECTIONS,
            "",
        )?,
    })
}

/// The iperf3 side's settings: the same limits as the dualperf port, and its key.
fn iperf3_options(
    args: &ServerArgs,
    limits: &Limits,
    max_rate_bps: Option<u64>,
) -> anyhow::Result<Option<iperf3::ServerOptions>> {
    let auth_flags = args.iperf3_rsa_private_key.is_some() || args.iperf3_no_auth;
    if args.iperf3_port.is_none() {
        if auth_flags {
            anyhow::bail!(
                "--iperf3-rsa-private-key, --iperf3-authorized-users and --iperf3-no-auth \
                 are for the iperf3 port: add --iperf3-port PORT"
            );
        }
        return Ok(None);
    }
    let auth = match (&args.iperf3_rsa_private_key, &args.iperf3_authorized_users) {
        (Some(key), Some(users)) => Some(Arc::new({
            if let Some(w) = iperf3::auth::private_key_file_warning(key) {
                eprintln!("{w}");
            }
            iperf3::auth::ServerAuth::from_files(key, users)
                .map_err(|e| anyhow::anyhow!("{e}"))
                .context("cannot set up iperf3 authentication")?
        })),
        _ => None,
    };
    if args.psk_file.is_some() && auth.is_none() && !args.iperf3_no_auth {
        anyhow::bail!(
            "a keyed server (--psk-file) does not open an iperf3 port anyone can use: give \
             --iperf3-rsa-private-key FILE and --iperf3-authorized-users FILE (iperf3's own \
             authentication), or --iperf3-no-auth to open it to anyone"
        );
    }
    Ok(Some(iperf3::ServerOptions {
        policy: iperf3::policy::Policy {
            max_streams: u32::from(limits.max_streams),
            max_duration: limits.max_duration,
            max_send_rate_bps: max_rate_bps,
            max_payload_bytes: limits.max_payload_bytes,
        },
        max_handshakes: limits.max_connections,
        auth,
        ..iperf3::ServerOptions::default()
    }))
}

fn log_line(t: &TestLog) -> String {
    let what = match &t.spec {
        Some(s) => {
            let dir = match s.direction {
                Direction::Forward => "forward",
                Direction::Reverse => "reverse",
                Direction::Bidir => "bidir",
            };
            format!(
                "{} {} {} B {dir} x{}",
                s.kind, s.family, s.payload_bytes, s.streams
            )
        }
        None => "no test".into(),
    };
    // UDP counts datagrams; TCP keeps no message boundaries, so its counts are bytes
    // only (the client's `run` says what its message counts are).
    let udp = t.spec.as_ref().is_some_and(|s| s.kind.is_udp());
    let outcome = match &t.outcome {
        Ok(st) if udp => format!(
            "ok: sent {} B / {} datagrams, received {} B / {} datagrams",
            st.sent_bytes, st.sent_packets, st.recv_bytes, st.recv_packets
        ),
        Ok(st) => format!("ok: sent {} B, received {} B", st.sent_bytes, st.recv_bytes),
        Err(e) => format!("failed: {e}"),
    };
    format!(
        "dualperf server: {} {what} in {:.2} s, {outcome}",
        t.peer,
        t.elapsed.as_secs_f64()
    )
}

pub fn main(args: ServerArgs) -> anyhow::Result<ExitCode> {
    let mut binds = Vec::new();
    for b in &args.binds {
        binds.extend(parse_bind(b, args.port)?);
    }
    let iperf3_binds = binds.clone();
    let limits = checked_limits(&args)?;
    let max_rate_bps = parse_max_rate(&args.max_rate)?;
    let iperf3_opts = iperf3_options(&args, &limits, max_rate_bps)?;
    let cfg = ServerConfig {
        binds,
        port: args.port,
        max_tests: limits.max_tests,
        max_streams: limits.max_streams,
        udp_datapath: args.udp_datapath,
        max_duration: limits.max_duration,
        max_send_rate_bps: max_rate_bps,
        max_payload_bytes: limits.max_payload_bytes,
        max_connections: limits.max_connections,
        psk: crate::args::load_psk(args.psk_file.as_deref())?,
        quic: Some(runner::quic::hook()),
        on_test: Some(Arc::new(|t: &TestLog| {
            // The log is for whoever watches; a closed stdout does not stop serving.
            let _ = outln!("{}", wire::text::terminal_safe_line(&log_line(t)));
        })),
        ..ServerConfig::default()
    };
    let stop = crate::interrupt::stop_flag()?;
    let iperf3_keyed = iperf3_opts.as_ref().is_some_and(|o| o.auth.is_some());
    let keyed = cfg.psk.is_some();
    let handle = engine::start_server(cfg).map_err(|e| anyhow::anyhow!("{e}"))?;
    let iperf3 = match (args.iperf3_port, iperf3_opts) {
        (Some(p), Some(mut opts)) => {
            // One server: an iperf3 test takes one of --max-tests and counts in the
            // --max-rate total with the dualperf port's tests.
            opts.shared_admission = Some(shared_admission(handle.admission()));
            match iperf3_side::start(&iperf3_binds, p, stop.clone(), opts) {
                Ok(side) => Some(side),
                Err(e) => {
                    stop.store(true, Ordering::SeqCst);
                    handle.stop();
                    return Err(e);
                }
            }
        }
        _ => None,
    };
    if let Some(side) = &iperf3 {
        let addrs: Vec<String> = side.local_addrs().iter().map(|a| a.to_string()).collect();
        outln!(
            "dualperf server: iperf3 clients served on {}{}",
            addrs.join(", "),
            if iperf3_keyed {
                " (iperf3 authentication required)"
            } else {
                " without authentication: the iperf3 port is open to anyone"
            }
        )?;
    }
    let addrs: Vec<String> = handle.local_addrs().iter().map(|a| a.to_string()).collect();
    if let Some(w) = open_server_warning(handle.local_addrs(), keyed) {
        eprintln!("{w}");
    }
    outln!(
        "dualperf server: listening on {}{}; Ctrl-C to stop",
        addrs.join(", "),
        match (keyed, iperf3.is_some() && !iperf3_keyed) {
            (true, true) => " (pre-shared key required here; the iperf3 port is open to anyone)",
            (true, false) => " (pre-shared key required)",
            (false, _) => "",
        }
    )?;
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    handle.stop();
    if let Some(side) = iperf3 {
        side.join();
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_localhost_is_both_loopback_addresses() {
        let lo = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert_eq!(
            parse_bind("localhost", 5301).unwrap(),
            vec![lo("127.0.0.1:5301"), lo("[::1]:5301")]
        );
        assert_eq!(
            parse_bind("localhost:7000", 5301).unwrap(),
            vec![lo("127.0.0.1:7000"), lo("[::1]:7000")]
        );
        assert_eq!(parse_bind("[::1]", 9).unwrap(), vec![lo("[::1]:9")]);
        let e = parse_bind("example.org", 9).unwrap_err().to_string();
        assert!(e.contains("not an IP address"), "{e}");
        assert!(parse_bind("localhost:x", 9).is_err());
    }

    #[test]
    fn keyless_server_on_a_reachable_address_is_warned_about() {
        let lo: SocketAddr = "127.0.0.1:5301".parse().unwrap();
        let lo6: SocketAddr = "[::1]:5301".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:5301".parse().unwrap();
        assert_eq!(open_server_warning(&[lo, lo6], false), None);
        assert_eq!(open_server_warning(&[lo, any], true), None);
        let w = open_server_warning(&[lo, any], false).unwrap();
        assert!(w.contains("0.0.0.0:5301 without a pre-shared key"), "{w}");
        assert!(w.contains("--psk-file"), "{w}");
        assert!(!w.contains("127.0.0.1"), "{w}");
    }

    /// The log line counts datagrams for UDP and only bytes for TCP, which keeps no
    /// message boundaries.
    #[test]
    fn the_log_line_counts_datagrams_for_udp_and_bytes_for_tcp() {
        let stats = wire::proto::SideStats {
            sent_bytes: 2800,
            sent_packets: 2,
            recv_bytes: 1400,
            recv_packets: 1,
            ..Default::default()
        };
        let log = |kind| TestLog {
            peer: "127.0.0.1:40000".parse().unwrap(),
            spec: Some(wire::spec::TestSpec::new(
                kind,
                wire::spec::Family::V4,
                1400,
            )),
            outcome: Ok(stats.clone()),
            elapsed: std::time::Duration::from_secs(1),
        };
        let udp = log_line(&log(wire::spec::TestKind::UdpStream));
        assert!(
            udp.ends_with("ok: sent 2800 B / 2 datagrams, received 1400 B / 1 datagrams"),
            "{udp}"
        );
        let tcp = log_line(&log(wire::spec::TestKind::TcpStream));
        assert!(tcp.ends_with("ok: sent 2800 B, received 1400 B"), "{tcp}");
    }
}
