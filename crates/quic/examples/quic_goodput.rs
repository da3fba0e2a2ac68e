//! QUIC goodput on loopback, for docs/benchmarks.md: one forward quic-stream test on
//! 127.0.0.1 or ::1 with the server on CPU 1 and the client on CPU 0 (split pinning, as
//! the other benchmarks), printed as one line of `key=value`.
//!
//! `cargo run -p dualperf-quic --example quic_goodput -- FAMILY SECONDS [STREAMS
//! [BUFFER_BYTES]]` (FAMILY 4 or 6; BUFFER_BYTES sets both sockets' send and receive
//! buffers, else the OS defaults).

use std::time::{Duration, Instant};

use dualperf_quic::{run_client, Congestion, Limits, QuicKind, QuicServer, QuicTest};
use wire::spec::{Bound, Direction, SocketOpts};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: quic_goodput 4|6 SECONDS [STREAMS [BUFFER_BYTES]]";
    let addr = match args.first().map(String::as_str) {
        Some("4") => "127.0.0.1:0",
        Some("6") => "[::1]:0",
        _ => return Err(usage.into()),
    };
    let seconds: f64 = args.get(1).ok_or(usage)?.parse()?;
    let streams: u16 = args.get(2).map_or(Ok(1), |s| s.parse())?;
    let test = QuicTest {
        kind: QuicKind::Stream {
            streams,
            direction: Direction::Forward,
        },
        bound: Bound::DurationNs((seconds * 1e9) as u64),
        payload_bytes: 131_072,
        congestion: Congestion::Cubic,
        rate_bps: None,
        session: [0; 16],
    };
    let buffer: Option<u32> = args.get(3).map(|s| s.parse()).transpose()?;
    let opts = SocketOpts {
        sndbuf_bytes: buffer,
        rcvbuf_bytes: buffer,
        ..SocketOpts::default()
    };
    let deadline = Instant::now() + Duration::from_secs_f64(seconds + 30.0);
    let (tx, rx) = std::sync::mpsc::channel();
    let server_socket = net::udp_bind(addr.parse()?, &opts)?.0;
    let served = std::thread::spawn(move || {
        // The server's runtime thread inherits this thread's CPU.
        net::pin_current_thread(1).map_err(|e| e.to_string())?;
        let (server, cert) =
            QuicServer::bind(server_socket, Limits::default()).map_err(|e| e.to_string())?;
        let local = server.local_addr().map_err(|e| e.to_string())?;
        tx.send((local, cert)).map_err(|e| e.to_string())?;
        server.serve_one(&test, deadline).map_err(|e| e.to_string())
    });
    let (server_addr, cert) = rx.recv()?;
    net::pin_current_thread(0)?;
    let r = run_client(
        net::udp_bind(addr.parse()?, &opts)?.0,
        server_addr,
        cert,
        &test,
        deadline,
    )?;
    served.join().map_err(|_| "server thread panicked")??;
    let g = r.forward.ok_or("no forward figures")?;
    println!(
        "family={} goodput_bps={:.0} bytes={} handshake_ns={} srtt_ns={} mtu={} lost={} tx_datagrams_per_call={:.2}",
        r.family,
        g.bps(),
        g.received_bytes,
        r.handshake_ns,
        r.client_path.smoothed_rtt_ns,
        r.client_path.current_mtu_bytes,
        r.client_path.lost_packets,
        r.client_path.udp_tx_datagrams as f64 / r.client_path.udp_tx_calls.max(1) as f64,
    );
    Ok(())
}
