//! Zero-copy sending on loopback (127.0.0.1 and ::1): every byte arrives intact and in
//! order, every send's completion is read from the error queue, and no more sends than
//! the bound ever wait for theirs.
#![cfg(target_os = "linux")]

use dualperf_net::zerocopy::{check_supported, SendFile, ZeroCopy};
use dualperf_net::{check_ipv6, tcp_connect, tcp_listen};
use std::io::{self, Read};
use std::net::SocketAddr;
use std::time::Duration;
use wire::spec::SocketOpts;

const WRITE_BYTES: usize = 64 * 1024;
const WRITES: usize = 400;
const MAX_OUTSTANDING: u64 = 4;

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// A listener on `listen` whose one connection is read to its end by a thread that
/// checks every byte against the pattern (restarting every `WRITE_BYTES`); the thread
/// returns the byte count.
fn checking_receiver(listen: SocketAddr) -> (SocketAddr, std::thread::JoinHandle<usize>) {
    let (listener, _) = tcp_listen(listen, &SocketOpts::default()).unwrap();
    let addr = listener.local_addr().unwrap();
    let receiver = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut buf = vec![0u8; 100_000];
        let mut total = 0usize;
        loop {
            let n = s.read(&mut buf).unwrap();
            if n == 0 {
                return total;
            }
            for (i, b) in buf[..n].iter().enumerate() {
                let at = (total + i) % WRITE_BYTES;
                assert_eq!(*b, (at % 251) as u8, "byte {} differs", total + i);
            }
            total += n;
        }
    });
    (addr, receiver)
}

#[test]
fn sendfile_from_a_memory_file_delivers_every_byte() {
    let (addr, receiver) = checking_receiver("127.0.0.1:0".parse().unwrap());
    let (s, _) = tcp_connect(addr, &SocketOpts::default(), Duration::from_secs(5)).unwrap();
    let mut f = SendFile::new(&pattern(WRITE_BYTES)).unwrap();
    for _ in 0..WRITES {
        let mut off = 0;
        while off < WRITE_BYTES {
            let n = f.send(&s, off).unwrap();
            assert!(n > 0, "sendfile sent nothing");
            off += n;
        }
    }
    assert!(f.calls() >= WRITES as u64);
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(receiver.join().unwrap(), WRITE_BYTES * WRITES);
}

/// Send `WRITES` writes with MSG_ZEROCOPY to a receiver thread that checks every byte;
/// returns the sender's final state.
fn send_all(listen: SocketAddr) -> ZeroCopy {
    let opts = SocketOpts::default();
    let (addr, receiver) = checking_receiver(listen);
    let (s, _) = tcp_connect(addr, &opts, Duration::from_secs(5)).unwrap();
    s.set_write_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let mut zc = ZeroCopy::enable(&s, MAX_OUTSTANDING).unwrap();
    let buf = pattern(WRITE_BYTES);
    let mut peak_seen = 0;
    for _ in 0..WRITES {
        let mut off = 0;
        let mut tries = 0;
        while off < buf.len() {
            match zc.send(&s, &buf[off..], Duration::from_millis(20)) {
                Ok(n) => off += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("zero-copy send: {e}"),
            }
            peak_seen = peak_seen.max(zc.outstanding());
            tries += 1;
            assert!(tries < 10_000, "no progress sending");
        }
    }
    assert!(
        zc.drain(&s, Duration::from_secs(10)).unwrap(),
        "completions left: {}",
        zc.outstanding()
    );
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let received = receiver.join().unwrap();
    assert_eq!(received, WRITE_BYTES * WRITES, "every byte delivered");
    assert!(peak_seen <= MAX_OUTSTANDING, "outstanding {peak_seen}");
    zc
}

fn check(listen: SocketAddr) {
    let zc = send_all(listen);
    let st = zc.stats();
    assert!(st.sends >= WRITES as u64, "{st:?}");
    assert_eq!(st.completed, st.sends, "every completion read: {st:?}");
    assert_eq!(zc.outstanding(), 0);
    assert!(
        (1..=MAX_OUTSTANDING).contains(&st.peak_outstanding),
        "{st:?}"
    );
    assert!(st.copied <= st.completed, "{st:?}");
    println!("{listen}: {st:?} ({})", st.kernel_copied());
}

#[test]
fn zero_copy_sends_deliver_every_byte_and_drain_their_completions() {
    check_supported().unwrap();
    check("127.0.0.1:0".parse().unwrap());
    if check_ipv6().is_ok() {
        check("[::1]:0".parse().unwrap());
    }
}

/// On loopback the receiving socket cannot hold the sender's pages: the kernel copies,
/// and the completions say so (the case the run's applied settings must record).
#[test]
fn loopback_completions_say_the_kernel_copied() {
    let zc = send_all("127.0.0.1:0".parse().unwrap());
    let st = zc.stats();
    assert_eq!(st.copied, st.completed, "{st:?}");
}
