//! Batched and per-call UDP datapaths on loopback: every datagram sent arrives once and
//! intact, GSO/GRO split correctly, timeouts return, both paths forced explicitly.
#![cfg(target_os = "linux")]

use dualperf_net::udp::{BatchConfig, Datapath, RecvBatch, UdpBatch, Wait, NO_BATCH_ENV};
use dualperf_net::{check_ipv6, udp_bind, udp_connect, wall_ns};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use wire::spec::SocketOpts;

fn families() -> Vec<&'static str> {
    match check_ipv6() {
        Ok(()) => vec!["127.0.0.1:0", "[::1]:0"],
        Err(e) => {
            println!("IPv6 part skipped: {e}");
            vec!["127.0.0.1:0"]
        }
    }
}

fn config(path: Datapath) -> BatchConfig {
    BatchConfig {
        datapath: Some(path),
        ..BatchConfig::default()
    }
}

/// A receiver with a big buffer and a sender connected to it.
fn pair(bind: &str, tx_cfg: BatchConfig, rx_cfg: BatchConfig) -> (UdpBatch, UdpBatch) {
    let big = SocketOpts {
        rcvbuf_bytes: Some(8 << 20),
        sndbuf_bytes: Some(8 << 20),
        ..SocketOpts::default()
    };
    let addr: SocketAddr = bind.parse().unwrap();
    let (rx, _) = udp_bind(addr, &big).unwrap();
    let (tx, _) = udp_bind(addr, &big).unwrap();
    udp_connect(&tx, rx.local_addr().unwrap(), &SocketOpts::default()).unwrap();
    (UdpBatch::new(tx, tx_cfg), UdpBatch::new(rx, rx_cfg))
}

/// Payload: 8-byte seq then a byte pattern derived from it.
fn payload(seq: u64, len: usize) -> Vec<u8> {
    let mut p = vec![0u8; len.max(8)];
    p[..8].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in p.iter_mut().enumerate().skip(8) {
        *b = (seq as usize + i) as u8;
    }
    p.truncate(len.max(8));
    p
}

/// Receive until `expect` datagrams arrived or 2 s passed; seq → (len, intact, rx_ns).
fn drain(rx: &mut UdpBatch, expect: usize) -> BTreeMap<u64, Vec<(usize, bool, Option<u64>)>> {
    let mut batch = rx.recv_buffers();
    let mut got: BTreeMap<u64, Vec<(usize, bool, Option<u64>)>> = BTreeMap::new();
    let mut total = 0;
    let deadline = Instant::now() + Duration::from_secs(2);
    while total < expect && Instant::now() < deadline {
        let n = rx
            .recv_batch(&mut batch, Wait::Timeout(Duration::from_millis(100)))
            .unwrap();
        assert_eq!(n, batch.len());
        for d in batch.iter() {
            let seq = u64::from_be_bytes(d.payload[..8].try_into().unwrap());
            let intact = d.payload == payload(seq, d.payload.len()).as_slice() && !d.truncated;
            got.entry(seq)
                .or_default()
                .push((d.payload.len(), intact, d.kernel_rx_ns));
        }
        total += n;
    }
    got
}

fn send_all(tx: &mut UdpBatch, sizes: &[usize]) {
    let payloads: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(seq, &len)| payload(seq as u64, len))
        .collect();
    let mut sent = 0;
    while sent < payloads.len() {
        let chunk: Vec<&[u8]> = payloads[sent..(sent + 32).min(payloads.len())]
            .iter()
            .map(Vec::as_slice)
            .collect();
        let n = tx.send_batch(&chunk).unwrap();
        assert!(n > 0);
        sent += n;
    }
}

fn check_every_datagram_arrives_once(path: Datapath, gso: bool) {
    check_arrivals(path, gso, true);
}

/// `stamps`: the receiver asks for kernel timestamps (control messages: `recvmsg` on the
/// per-call path); without them and with SO_MEMINFO drop counts it receives with
/// `recvfrom`.
fn check_arrivals(path: Datapath, gso: bool, stamps: bool) {
    const N: usize = 300;
    for bind in families() {
        let tx_cfg = BatchConfig {
            gso,
            ..config(path)
        };
        let rx_cfg = BatchConfig {
            kernel_timestamps: stamps,
            ..config(path)
        };
        let (mut tx, mut rx) = pair(bind, tx_cfg, rx_cfg);
        assert_eq!(tx.datapath(), path);
        assert_eq!(rx.datapath(), path);
        let t0 = wall_ns();
        send_all(&mut tx, &[256; N]);
        let got = drain(&mut rx, N);
        assert_eq!(got.len(), N, "{bind} {path:?}: distinct seqs received");
        for (seq, copies) in &got {
            assert_eq!(copies.len(), 1, "seq {seq} arrived {} times", copies.len());
            let (len, intact, rx_ns) = copies[0];
            assert_eq!(len, 256);
            assert!(intact, "seq {seq} corrupted");
            if stamps {
                let rx_ns = rx_ns.expect("kernel timestamp missing");
                assert!(rx_ns + 1_000_000_000 > t0 && rx_ns < wall_ns() + 1_000_000_000);
            } else {
                assert_eq!(rx_ns, None, "no stamp was asked for");
            }
        }
        assert!(tx.notes().is_empty(), "{:?}", tx.notes());
        let (txs, rxs) = (tx.stats(), rx.stats());
        assert_eq!(txs.sent_datagrams, N as u64);
        assert_eq!(rxs.recv_datagrams, N as u64);
        match path {
            Datapath::PerCall => {
                assert_eq!(txs.send_calls, N as u64, "one call per datagram");
                assert_eq!(rxs.recv_calls, N as u64);
                assert_eq!(txs.gso_sends, 0);
            }
            Datapath::Batched => {
                assert_eq!(txs.send_calls, N.div_ceil(32) as u64, "one sendmmsg per 32");
                assert!(rxs.recv_calls < N as u64 / 4, "recvmmsg batches: {rxs:?}");
                if gso && tx.gso_enabled() {
                    assert!(txs.gso_sends > 0, "{txs:?}");
                } else {
                    assert_eq!(txs.gso_sends, 0);
                }
            }
        }
    }
}

#[test]
fn batched_path_delivers_every_datagram_once() {
    check_every_datagram_arrives_once(Datapath::Batched, false);
}

#[test]
fn batched_path_with_gso_delivers_every_datagram_once() {
    check_every_datagram_arrives_once(Datapath::Batched, true);
}

#[test]
fn per_call_fallback_delivers_every_datagram_once() {
    check_every_datagram_arrives_once(Datapath::PerCall, true);
}

/// The per-call receive without control messages (`recvfrom`): the same datagrams, once
/// each, intact, one call each.
#[test]
fn per_call_receive_without_control_messages_delivers_every_datagram_once() {
    check_arrivals(Datapath::PerCall, false, false);
}

#[test]
fn gso_runs_of_mixed_sizes_arrive_with_their_own_lengths() {
    let (mut tx, mut rx) = pair(
        "127.0.0.1:0",
        config(Datapath::Batched),
        config(Datapath::Batched),
    );
    if !tx.gso_enabled() {
        println!(
            "UDP GSO not available on this kernel, skipped: {:?}",
            tx.notes()
        );
        return;
    }
    let sizes = [100, 100, 100, 50, 1400, 1400, 1400, 1400, 9, 100, 100];
    send_all(&mut tx, &sizes);
    let got = drain(&mut rx, sizes.len());
    assert_eq!(got.len(), sizes.len());
    for (seq, copies) in &got {
        assert_eq!(copies[0].0, sizes[*seq as usize], "seq {seq}");
        assert!(copies[0].1);
    }
    // runs: [100 x3] [50] [1400 x4] [9] [100 x2] → 3 GSO messages in one sendmmsg
    assert!(tx.notes().is_empty(), "{:?}", tx.notes());
    assert_eq!(tx.stats().gso_sends, 3);
    assert_eq!(tx.stats().send_calls, 1);
}

#[test]
fn gro_receive_splits_coalesced_datagrams() {
    let rx_cfg = BatchConfig {
        gro: true,
        ..config(Datapath::Batched)
    };
    let (mut tx, mut rx) = pair("127.0.0.1:0", config(Datapath::Batched), rx_cfg);
    if !tx.gso_enabled() || !rx.gro_enabled() {
        println!(
            "GSO/GRO not available, skipped: {:?} {:?}",
            tx.notes(),
            rx.notes()
        );
        return;
    }
    const N: usize = 640;
    send_all(&mut tx, &[128; N]);
    let got = drain(&mut rx, N);
    assert_eq!(got.len(), N);
    assert!(got
        .values()
        .all(|c| c.len() == 1 && c[0].0 == 128 && c[0].1));
    let rxs = rx.stats();
    println!("GRO: {rxs:?}");
    assert!(rxs.gro_buffers > 0, "no coalesced buffer seen: {rxs:?}");
    assert!(rxs.recv_calls < N as u64 / 16);
}

/// `offload_segments` is what one offloaded send carries: that many datagrams sent in one
/// call leave as one GSO super-datagram and, with GRO, arrive as one buffer.
#[test]
fn one_offloaded_send_carries_offload_segments_datagrams() {
    let plain = UdpBatch::new(
        udp_bind("127.0.0.1:0".parse().unwrap(), &SocketOpts::default())
            .unwrap()
            .0,
        BatchConfig {
            gso: false,
            ..config(Datapath::Batched)
        },
    );
    assert_eq!(
        plain.offload_segments(128),
        1,
        "no GSO: one datagram a send"
    );
    for (size, expect) in [(128, 64), (1408, 46), (9000, 7), (65_000, 1)] {
        let rx_cfg = BatchConfig {
            gro: true,
            ..config(Datapath::Batched)
        };
        let (mut tx, mut rx) = pair("127.0.0.1:0", config(Datapath::Batched), rx_cfg);
        if !tx.gso_enabled() || !rx.gro_enabled() {
            println!("GSO/GRO not available, skipped: {:?}", tx.notes());
            return;
        }
        assert_eq!(tx.offload_segments(size), expect, "{size}-byte datagrams");
        assert_eq!(tx.offload_segments(0), 1);
        assert_eq!(tx.offload_segments(70_000), 1);
        let payloads: Vec<Vec<u8>> = (0..expect).map(|i| payload(i as u64, size)).collect();
        assert_eq!(
            tx.send_batch(&payloads).unwrap(),
            expect,
            "{size}: one call"
        );
        let got = drain(&mut rx, expect);
        assert_eq!(got.len(), expect, "{size}");
        assert!(got
            .values()
            .all(|c| c.len() == 1 && c[0].0 == size && c[0].1));
        let (txs, rxs) = (tx.stats(), rx.stats());
        assert_eq!(
            (txs.send_calls, txs.sent_datagrams),
            (1, expect as u64),
            "{size}"
        );
        assert_eq!(txs.gso_sends, u64::from(expect > 1), "{size}: {txs:?}");
        assert_eq!(rxs.recv_datagrams, expect as u64, "{size}");
        assert_eq!(rxs.gro_buffers, u64::from(expect > 1), "{size}: {rxs:?}");
    }
}

#[test]
fn send_to_an_unconnected_peer_reports_the_source() {
    for bind in families() {
        let addr: SocketAddr = bind.parse().unwrap();
        let (rx, _) = udp_bind(addr, &SocketOpts::default()).unwrap();
        let (tx, _) = udp_bind(addr, &SocketOpts::default()).unwrap();
        let tx_addr = tx.local_addr().unwrap();
        let dst = rx.local_addr().unwrap();
        for path in [Datapath::Batched, Datapath::PerCall] {
            let mut txb = UdpBatch::new(tx.try_clone().unwrap(), config(path));
            let mut rxb = UdpBatch::new(rx.try_clone().unwrap(), config(path));
            // owned buffers work as well as slices
            let data = [payload(1, 64), payload(2, 64)];
            assert_eq!(txb.send_batch_to(&data, dst).unwrap(), 2);
            let mut batch = rxb.recv_buffers();
            let mut n = 0;
            while n < 2 {
                let got = rxb
                    .recv_batch(&mut batch, Wait::Timeout(Duration::from_secs(1)))
                    .unwrap();
                assert!(got > 0, "{path:?}: datagrams lost on loopback");
                for d in batch.iter() {
                    assert_eq!(d.src, tx_addr);
                }
                n += got;
            }
        }
    }
}

#[test]
fn receive_timeout_and_non_blocking_return_zero() {
    for path in [Datapath::Batched, Datapath::PerCall] {
        let (_tx, mut rx) = pair("127.0.0.1:0", config(path), config(path));
        let mut batch = rx.recv_buffers();
        let t0 = Instant::now();
        assert_eq!(rx.recv_batch(&mut batch, Wait::NonBlocking).unwrap(), 0);
        // Non-blocking means "no wait for data"; the bound only has to tell that apart
        // from blocking, with room for a test thread descheduled on a loaded machine.
        assert!(t0.elapsed() < Duration::from_millis(500));
        let t0 = Instant::now();
        let n = rx
            .recv_batch(&mut batch, Wait::Timeout(Duration::from_millis(50)))
            .unwrap();
        assert_eq!(n, 0);
        assert!(batch.is_empty());
        let waited = t0.elapsed();
        assert!(
            waited >= Duration::from_millis(45),
            "{path:?} waited {waited:?}"
        );
        assert!(waited < Duration::from_millis(500));
    }
}

#[test]
fn a_datagram_longer_than_the_buffer_is_flagged_truncated() {
    // Per call both ways: recvmsg (stamps asked for) and recvfrom (none).
    for (path, stamps) in [
        (Datapath::Batched, true),
        (Datapath::PerCall, true),
        (Datapath::PerCall, false),
    ] {
        let rx_cfg = BatchConfig {
            max_datagram_bytes: 100,
            kernel_timestamps: stamps,
            ..config(path)
        };
        let (mut tx, mut rx) = pair("127.0.0.1:0", config(path), rx_cfg);
        let long = payload(7, 300);
        let short = payload(8, 60);
        assert_eq!(tx.send_batch(&[&long, &short]).unwrap(), 2);
        let mut batch = rx.recv_buffers();
        let mut got = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(2);
        while got.len() < 2 && Instant::now() < deadline {
            rx.recv_batch(&mut batch, Wait::Timeout(Duration::from_millis(100)))
                .unwrap();
            got.extend(batch.iter().map(|d| (d.truncated, d.payload.to_vec())));
        }
        assert_eq!(got.len(), 2, "{path:?} stamps={stamps}");
        assert!(
            got[0].0,
            "{path:?} stamps={stamps}: the long one is flagged"
        );
        assert_eq!(got[0].1, long[..100], "its first 100 bytes");
        assert!(
            !got[1].0,
            "{path:?} stamps={stamps}: the short one is whole"
        );
        assert_eq!(got[1].1, short);
    }
}

#[test]
fn recv_batch_buffers_can_be_made_by_hand() {
    let (mut tx, mut rx) = pair(
        "127.0.0.1:0",
        config(Datapath::Batched),
        config(Datapath::Batched),
    );
    send_all(&mut tx, &[64; 10]);
    let mut batch = RecvBatch::new(4, 2048);
    let n = rx
        .recv_batch(&mut batch, Wait::Timeout(Duration::from_secs(1)))
        .unwrap();
    assert!((1..=4).contains(&n), "at most the 4 slots fill: {n}");
}

#[test]
fn no_batch_env_selects_the_per_call_path() {
    // The only test that reads the environment (others pass the datapath explicitly).
    let before = std::env::var(NO_BATCH_ENV).ok();
    std::env::set_var(NO_BATCH_ENV, "1");
    let from_env = Datapath::from_env();
    let (tx, _) = udp_bind("127.0.0.1:0".parse().unwrap(), &SocketOpts::default()).unwrap();
    let b = UdpBatch::new(tx, BatchConfig::default());
    std::env::set_var(NO_BATCH_ENV, "0");
    let unset = Datapath::from_env();
    match before {
        Some(v) => std::env::set_var(NO_BATCH_ENV, v),
        None => std::env::remove_var(NO_BATCH_ENV),
    }
    assert_eq!(from_env, Datapath::PerCall);
    assert_eq!(b.datapath(), Datapath::PerCall);
    assert!(!b.gso_enabled());
    assert_eq!(unset, Datapath::Batched);
}

#[test]
fn gso_refused_by_the_kernel_degrades_once_and_still_delivers() {
    let (mut tx, mut rx) = pair(
        "127.0.0.1:0",
        config(Datapath::Batched),
        config(Datapath::Batched),
    );
    if !tx.gso_enabled() {
        println!("UDP GSO not available on this kernel, skipped");
        return;
    }
    // With UDP checksums off (SO_NO_CHECK) Linux refuses GSO sends with EINVAL.
    let one: i32 = 1;
    // SAFETY: `one` lives for the call and its size is passed.
    let rc = unsafe {
        libc::setsockopt(
            std::os::fd::AsRawFd::as_raw_fd(tx.socket()),
            libc::SOL_SOCKET,
            libc::SO_NO_CHECK,
            (&one as *const i32).cast(),
            4,
        )
    };
    assert_eq!(rc, 0);
    // four sendmmsg calls of 32: the first meets the refusal, the rest remember it
    send_all(&mut tx, &[200; 128]);
    let got = drain(&mut rx, 128);
    assert_eq!(got.len(), 128);
    assert_eq!(tx.notes().len(), 1, "degraded once: {:?}", tx.notes());
    assert!(tx.notes()[0].contains("200-byte"), "{:?}", tx.notes());
    assert_eq!(tx.stats().gso_sends, 0);
    assert_eq!(tx.stats().sent_datagrams, 128);
}

/// Both paths wait inside their receive call: a datagram sent while one waits (for
/// ever, or with a long timeout) wakes it, the wait may change from call to call (a long
/// timeout, then a short one, then none), and every datagram arrives once, in order. A
/// waiting per-call receive takes one datagram per system call; a waiting batched one
/// at least one.
#[test]
fn receives_wait_in_the_call_and_follow_each_calls_wait() {
    for path in [Datapath::PerCall, Datapath::Batched] {
        check_waits_in_the_call(path);
    }
}

fn check_waits_in_the_call(path: Datapath) {
    let (mut tx, mut rx) = pair("127.0.0.1:0", config(path), config(path));
    let mut batch = rx.recv_buffers();
    // Each wait is ended by a datagram sent 50 ms into it.
    for wait in [Wait::Forever, Wait::Timeout(Duration::from_secs(3))] {
        let sender = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(tx.send_batch(&[payload(0, 64)]).unwrap(), 1);
            tx
        });
        assert_eq!(
            rx.recv_batch(&mut batch, wait).unwrap(),
            1,
            "{path:?} {wait:?}"
        );
        tx = sender.join().unwrap();
    }
    let t0 = Instant::now();
    let n = rx
        .recv_batch(&mut batch, Wait::Timeout(Duration::from_millis(20)))
        .unwrap();
    assert_eq!(n, 0, "{path:?}: nothing queued");
    let waited = t0.elapsed();
    assert!(waited >= Duration::from_millis(15), "{path:?} {waited:?}");
    assert!(
        waited < Duration::from_millis(2500),
        "{path:?}: the 3 s timeout stuck: {waited:?}"
    );
    let n = rx
        .recv_batch(&mut batch, Wait::Timeout(Duration::ZERO))
        .unwrap();
    assert_eq!(n, 0, "{path:?}: a zero wait does not wait");

    send_all(&mut tx, &[64; 10]);
    let mut seqs = Vec::new();
    let before = rx.stats();
    let deadline = Instant::now() + Duration::from_secs(5);
    while seqs.len() < 10 && Instant::now() < deadline {
        let n = rx
            .recv_batch(&mut batch, Wait::Timeout(Duration::from_millis(100)))
            .unwrap();
        if path == Datapath::PerCall {
            assert!(n <= 1, "a waiting call takes one datagram, got {n}");
        }
        seqs.extend(
            batch
                .iter()
                .map(|d| u64::from_be_bytes(d.payload[..8].try_into().unwrap())),
        );
    }
    assert_eq!(seqs, (0..10).collect::<Vec<u64>>(), "{path:?}");
    let st = rx.stats();
    assert_eq!(st.recv_datagrams - before.recv_datagrams, 10, "{path:?}");
    let calls = st.recv_calls - before.recv_calls;
    match path {
        Datapath::PerCall => assert_eq!(calls, 10),
        Datapath::Batched => assert!((1..=10).contains(&calls), "{calls} calls"),
    }
}

/// A per-call receiver that coalesces its wake-ups (timed waits between reads once
/// datagrams are arriving): every datagram of bursts sent while it reads arrives once and
/// intact, the reads after the first of each burst wait on a timer (counted, and said in
/// the datapath), and once the queue is empty a read waits on the socket again for its
/// whole timeout instead of returning at once.
#[test]
fn a_napping_per_call_receiver_takes_every_datagram_once_and_sleeps_on_the_socket_when_idle() {
    for bind in families() {
        let rx_cfg = BatchConfig {
            kernel_timestamps: false,
            coalesce_wakeups: true,
            ..config(Datapath::PerCall)
        };
        let (mut tx, mut rx) = pair(bind, config(Datapath::PerCall), rx_cfg);
        assert!(rx.naps_enabled(), "{bind}: {:?}", rx.notes());
        assert_eq!(rx.datapath_calls(), "linux:send/recvfrom+naps");
        assert!(!tx.naps_enabled(), "a sender's config asked for none");
        const BURSTS: usize = 20;
        const PER_BURST: usize = 100;
        let sender = std::thread::spawn(move || {
            for b in 0..BURSTS {
                let sizes = vec![200; PER_BURST];
                let payloads: Vec<Vec<u8>> = (0..PER_BURST)
                    .map(|i| payload((b * PER_BURST + i) as u64, sizes[i]))
                    .collect();
                let mut sent = 0;
                while sent < PER_BURST {
                    sent += tx.send_batch(&payloads[sent..]).unwrap();
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        let got = drain(&mut rx, BURSTS * PER_BURST);
        sender.join().unwrap();
        assert_eq!(got.len(), BURSTS * PER_BURST, "{bind}");
        assert!(got
            .values()
            .all(|c| c.len() == 1 && c[0] == (200, true, None)));
        let st = rx.stats();
        assert_eq!(st.recv_datagrams, (BURSTS * PER_BURST) as u64);
        // Every read after one that found datagrams is a timed one: at least one per
        // datagram read by a blocking call, and never more reads than datagrams plus the
        // one empty read that ends each run of them.
        assert!(st.naps >= 1, "{st:?}");
        assert!(st.naps <= 2 * st.recv_datagrams, "{st:?}");
        // Idle: the first read may be a timed one that finds nothing; from then on each
        // read waits on the socket for its timeout.
        let mut batch = rx.recv_buffers();
        let wait = Duration::from_millis(30);
        let _ = rx.recv_batch(&mut batch, Wait::Timeout(wait)).unwrap();
        let t = Instant::now();
        assert_eq!(rx.recv_batch(&mut batch, Wait::Timeout(wait)).unwrap(), 0);
        assert!(
            t.elapsed() >= Duration::from_millis(25),
            "{:?}",
            t.elapsed()
        );
    }
}

/// Naps need room: a receive buffer too small to hold what queues during one gets none,
/// and the path says so by not naming them.
#[test]
fn a_receiver_with_a_tiny_buffer_takes_no_naps() {
    let small = SocketOpts {
        rcvbuf_bytes: Some(4096),
        ..SocketOpts::default()
    };
    let (sock, _) = udp_bind("127.0.0.1:0".parse().unwrap(), &small).unwrap();
    let rx = UdpBatch::new(
        sock,
        BatchConfig {
            kernel_timestamps: false,
            coalesce_wakeups: true,
            max_datagram_bytes: 1408,
            ..config(Datapath::PerCall)
        },
    );
    assert!(!rx.naps_enabled());
    assert_eq!(rx.datapath_calls(), "linux:send/recvfrom");
}
