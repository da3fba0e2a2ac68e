//! Loopback datagrams/s of each UDP datapath, one sender and one receiver thread, as fast
//! as possible for a fixed time. `cargo run --release -p dualperf-net --example udp_pps
//! [-- SECONDS [PAYLOAD_BYTES [RECV_BATCH]]]`.

use dualperf_net::udp::{BatchConfig, Datapath, UdpBatch, Wait};
use dualperf_net::{check_ipv6, now_ns, udp_bind, udp_connect};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use wire::spec::SocketOpts;

fn run(bind: &str, name: &str, tx_cfg: BatchConfig, rx_cfg: BatchConfig, secs: f64, size: usize) {
    let opts = SocketOpts {
        rcvbuf_bytes: Some(4 << 20),
        sndbuf_bytes: Some(4 << 20),
        ..SocketOpts::default()
    };
    let addr: SocketAddr = bind.parse().expect("literal address");
    let (rx, _) = udp_bind(addr, &opts).expect("bind receiver");
    let (tx, _) = udp_bind(addr, &opts).expect("bind sender");
    udp_connect(&tx, rx.local_addr().expect("local addr"), &opts).expect("connect");
    let stop = Arc::new(AtomicBool::new(false));
    let stop_rx = stop.clone();
    let receiver = std::thread::spawn(move || {
        let mut rx = UdpBatch::new(rx, rx_cfg);
        let mut batch = rx.recv_buffers();
        let mut n = 0u64;
        while !stop_rx.load(Ordering::Relaxed) {
            n += rx
                .recv_batch(&mut batch, Wait::Timeout(Duration::from_millis(20)))
                .unwrap_or(0) as u64;
        }
        (n, rx.stats())
    });
    let mut tx = UdpBatch::new(tx, tx_cfg);
    let payload = vec![0x5au8; size];
    let datagrams: Vec<&[u8]> = (0..32).map(|_| payload.as_slice()).collect();
    let t0 = now_ns();
    let end = t0 + (secs * 1e9) as u64;
    let mut sent = 0u64;
    while now_ns() < end {
        sent += tx.send_batch(&datagrams).unwrap_or(0) as u64;
    }
    let elapsed_s = (now_ns() - t0) as f64 / 1e9;
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    let (received, rxs) = receiver.join().expect("receiver thread");
    let txs = tx.stats();
    println!(
        "{bind:<12} {name:<18} sent {:>10.0}/s  received {:>10.0}/s  loss {:>5.1}%  \
         datagrams/send-call {:>5.1}  datagrams/recv-call {:>5.1}",
        sent as f64 / elapsed_s,
        received as f64 / elapsed_s,
        100.0 * (sent.saturating_sub(received)) as f64 / sent.max(1) as f64,
        txs.sent_datagrams as f64 / txs.send_calls.max(1) as f64,
        rxs.recv_datagrams as f64 / rxs.recv_calls.max(1) as f64,
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let size: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(128);
    let max_batch: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(32);
    let cfg = |path, gso, gro| BatchConfig {
        datapath: Some(path),
        gso,
        gro,
        max_batch,
        max_datagram_bytes: 2048,
        ..BatchConfig::default()
    };
    let mut binds = vec!["127.0.0.1:0"];
    if check_ipv6().is_ok() {
        binds.push("[::1]:0");
    }
    println!("payload {size} bytes, receive batch {max_batch}, {secs} s per line");
    for bind in binds {
        let per_call = cfg(Datapath::PerCall, false, false);
        run(bind, "per-call", per_call.clone(), per_call, secs, size);
        let mm = cfg(Datapath::Batched, false, false);
        run(bind, "mmsg", mm.clone(), mm, secs, size);
        let gso = cfg(Datapath::Batched, true, false);
        run(bind, "mmsg+gso", gso.clone(), gso.clone(), secs, size);
        run(
            bind,
            "mmsg+gso+gro",
            gso,
            cfg(Datapath::Batched, true, true),
            secs,
            size,
        );
    }
}
