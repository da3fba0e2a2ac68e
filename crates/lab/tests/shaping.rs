//! The tbf shaper against its arithmetic, measured with a tiny UDP blaster inside a p2p
//! lab (independent of the engine): goodput = rate × payload / (payload + 8 + IP + 14),
//! because tbf charges the Ethernet frame without preamble, FCS or gap. The first 64 KiB
//! leave as a burst, so the rate is taken between arrivals after a 0.3 s settling time.
//! Tolerance 0.5%: tight enough that forgetting the 14-byte Ethernet header (1% at
//! 1408 B) fails, loose enough for a loaded 2-core machine (measured error ≤ 0.03%).

mod common;

use common::*;
use dualperf_lab::{Lab, LabSpec, Topology};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::spec::Family;

const RATE_BPS: u64 = 50_000_000;
const SETTLE: Duration = Duration::from_millis(300);
const WINDOW: Duration = Duration::from_millis(1000);

/// Payload bytes per second received between SETTLE and SETTLE+WINDOW after the first datagram.
fn blast(lab: &Lab, fam: Family, payload_bytes: usize, port: u16) -> f64 {
    let addr = lab.server_addr(fam);
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let receiver = in_ns(lab.server_ns(), move || -> (u64, Duration) {
        let sock = UdpSocket::bind(SocketAddr::new(addr, port)).expect("bind receiver");
        sock.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        ready_tx.send(()).unwrap();
        let mut buf = vec![0u8; 65536];
        let _ = sock.recv(&mut buf).expect("first datagram");
        let first = Instant::now();
        let (mut bytes, mut start, mut last) = (0u64, None, first);
        loop {
            let Ok(n) = sock.recv(&mut buf) else { break };
            let now = now_since(first);
            if now < SETTLE {
                continue;
            }
            if now > SETTLE + WINDOW {
                break;
            }
            // Bytes are counted after the first in-window arrival, over the time since it.
            match start {
                None => start = Some(now),
                Some(_) => bytes += n as u64,
            }
            last = first + now;
        }
        let span = last.duration_since(first + start.expect("datagrams inside the window"));
        (bytes, span)
    });
    ready_rx
        .recv_timeout(Duration::from_secs(3))
        .expect("receiver ready");
    let stop_tx = stop.clone();
    let sender = in_ns(lab.client_ns(), move || -> u64 {
        let local: SocketAddr = match addr {
            IpAddr::V4(_) => "0.0.0.0:0".parse().unwrap(),
            IpAddr::V6(_) => "[::]:0".parse().unwrap(),
        };
        let sock = UdpSocket::bind(local).unwrap();
        sock.connect(SocketAddr::new(addr, port)).unwrap();
        let payload = vec![0x5au8; payload_bytes];
        let deadline = Instant::now() + SETTLE + WINDOW + Duration::from_millis(300);
        let mut sent = 0u64;
        while Instant::now() < deadline && !stop_tx.load(Ordering::Relaxed) {
            if sock.send(&payload).is_ok() {
                sent += 1;
            }
        }
        sent
    });
    let (bytes, span) = receiver.join().expect("receiver");
    stop.store(true, Ordering::Relaxed);
    let sent = sender.join().expect("sender");
    assert!(sent > 100, "sender sent only {sent} datagrams");
    bytes as f64 / span.as_secs_f64()
}

fn now_since(t0: Instant) -> Duration {
    Instant::now().duration_since(t0)
}

/// Goodput in bytes/s the shaper allows for this payload: tbf counts payload+UDP+IP+Ethernet.
fn model_goodput_bytes_per_s(fam: Family, payload_bytes: usize) -> f64 {
    let frame_bytes = payload_bytes as f64 + 8.0 + f64::from(fam.ip_header_bytes()) + 14.0;
    RATE_BPS as f64 / 8.0 * payload_bytes as f64 / frame_bytes
}

#[test]
fn udp_goodput_under_tbf_matches_the_header_overhead_model() {
    if !labs_available() {
        return;
    }
    let spec = LabSpec {
        name: unique_name("tbf"),
        topology: Topology::P2p,
        rate_bps: Some(RATE_BPS),
        mtu: None,
    };
    let lab = Lab::create(&spec).expect("shaped p2p lab");
    assert!(lab.is_shaped(), "{:?}", lab.warnings());
    let mut ratio = Vec::new();
    for payload_bytes in [128usize, 1408] {
        let mut by_fam = Vec::new();
        for (i, fam) in [Family::V4, Family::V6].into_iter().enumerate() {
            let measured = blast(&lab, fam, payload_bytes, 7100 + i as u16);
            let model = model_goodput_bytes_per_s(fam, payload_bytes);
            let err = measured / model - 1.0;
            eprintln!(
                "IPv{} {payload_bytes} B: measured {:.3} Mbit/s, model {:.3} Mbit/s, error {:+.3}%",
                fam.number(),
                measured * 8e-6,
                model * 8e-6,
                err * 100.0
            );
            assert!(
                err.abs() < 0.005,
                "IPv{} {payload_bytes} B off the model by {:+.2}%",
                fam.number(),
                err * 100.0
            );
            by_fam.push((measured, model));
        }
        let measured_ratio = by_fam[1].0 / by_fam[0].0;
        let model_ratio = by_fam[1].1 / by_fam[0].1;
        ratio.push((payload_bytes, measured_ratio, model_ratio));
    }
    for (payload_bytes, m, p) in ratio {
        eprintln!(
            "{payload_bytes} B: IPv6/IPv4 measured {:.4}, model {:.4}",
            m, p
        );
        assert!(
            (m - p).abs() < 0.005,
            "IPv6/IPv4 ratio at {payload_bytes} B: {m:.4} vs model {p:.4}"
        );
    }
    drop(lab);
    assert_nothing_left(&spec.name);
}
