//! Behaviour on a path with a small MTU, on the loopback of a private network namespace
//! set to MTU 1280 (root only; skipped otherwise): `dont_fragment` turns an oversized
//! datagram into EMSGSIZE instead of local fragmentation, and UDP GSO refused for a
//! segment size above the MTU is switched off for that size only.
#![cfg(target_os = "linux")]

use dualperf_net::udp::{BatchConfig, Datapath, UdpBatch, Wait};
use dualperf_net::{udp_bind, udp_connect};
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::Duration;
use wire::spec::SocketOpts;

const LO_MTU: i32 = 1280;

#[repr(C)]
struct IfReqFlags {
    name: [u8; 16],
    flags: i16,
    pad: [u8; 22],
}

#[repr(C)]
struct IfReqMtu {
    name: [u8; 16],
    mtu: i32,
    pad: [u8; 20],
}

fn lo_name() -> [u8; 16] {
    let mut name = [0u8; 16];
    name[..2].copy_from_slice(b"lo");
    name
}

/// Bring `lo` up with a 1280-byte MTU in this thread's namespace.
fn lo_up_with_small_mtu() -> std::io::Result<()> {
    // Any AF_INET socket can carry interface ioctls.
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None)?;
    let fd = sock.as_raw_fd();
    let mut flags = IfReqFlags {
        name: lo_name(),
        flags: 0,
        pad: [0; 22],
    };
    // SAFETY: `flags` is an ifreq-sized buffer naming "lo"; the kernel reads/writes it.
    if unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut flags) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    flags.flags |= libc::IFF_UP as i16;
    // SAFETY: as above.
    if unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &mut flags) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut mtu = IfReqMtu {
        name: lo_name(),
        mtu: LO_MTU,
        pad: [0; 20],
    };
    // SAFETY: `mtu` is an ifreq-sized buffer naming "lo"; the kernel reads it.
    if unsafe { libc::ioctl(fd, libc::SIOCSIFMTU, &mut mtu) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Run `f` in a new network namespace whose lo is up with MTU 1280.
fn with_small_mtu_lo(f: impl FnOnce() + Send + 'static) {
    let ran = std::thread::spawn(move || {
        // SAFETY: unshare only changes this thread's namespaces.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            println!(
                "cannot create a network namespace ({}), skipped",
                std::io::Error::last_os_error()
            );
            return false;
        }
        if let Err(e) = lo_up_with_small_mtu() {
            println!("cannot configure lo in the namespace ({e}), skipped");
            return false;
        }
        f();
        true
    })
    .join();
    if let Err(panic) = ran {
        std::panic::resume_unwind(panic);
    }
}

fn pair(df: bool) -> (UdpSocket, UdpSocket) {
    let opts = SocketOpts {
        dont_fragment: df,
        rcvbuf_bytes: Some(1 << 20),
        ..SocketOpts::default()
    };
    let (rx, _) = udp_bind("127.0.0.1:0".parse().unwrap(), &opts).unwrap();
    let (tx, applied) = udp_bind("127.0.0.1:0".parse().unwrap(), &opts).unwrap();
    assert_eq!(applied.dont_fragment, Some(df));
    udp_connect(&tx, rx.local_addr().unwrap(), &opts).unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    (tx, rx)
}

#[test]
fn dont_fragment_refuses_a_datagram_above_the_mtu() {
    with_small_mtu_lo(|| {
        let (tx, rx) = pair(true);
        let err = tx
            .send(&[7u8; 1400])
            .expect_err("1400 bytes sent over MTU 1280 with DF");
        assert_eq!(err.raw_os_error(), Some(libc::EMSGSIZE), "{err}");
        assert_eq!(tx.send(&[7u8; 1200]).unwrap(), 1200);

        let (tx, rx2) = pair(false);
        assert_eq!(tx.send(&[9u8; 1400]).unwrap(), 1400, "fragmented locally");
        let mut buf = [0u8; 2048];
        assert_eq!(rx2.recv(&mut buf).unwrap(), 1400);
        assert_eq!(rx.recv(&mut buf).unwrap(), 1200);
    });
}

#[test]
fn gso_above_the_mtu_is_switched_off_for_that_size_only() {
    with_small_mtu_lo(|| {
        let (tx, rx) = pair(false);
        let cfg = BatchConfig {
            datapath: Some(Datapath::Batched),
            ..BatchConfig::default()
        };
        let mut tx = UdpBatch::new(tx, cfg.clone());
        let mut rx = UdpBatch::new(rx, cfg);
        if !tx.gso_enabled() {
            println!("UDP GSO not available, skipped");
            return;
        }
        let big = vec![vec![1u8; 1400]; 8];
        assert_eq!(tx.send_batch(&big).unwrap(), 8);
        assert_eq!(tx.stats().gso_sends, 0);
        assert_eq!(tx.notes().len(), 1, "{:?}", tx.notes());
        assert!(tx.notes()[0].contains("1400-byte"), "{:?}", tx.notes());
        let small = vec![vec![2u8; 1000]; 8];
        assert_eq!(tx.send_batch(&small).unwrap(), 8);
        assert_eq!(tx.stats().gso_sends, 1, "smaller datagrams still use GSO");
        assert!(tx.gso_enabled());

        let mut batch = rx.recv_buffers();
        let mut lens = Vec::new();
        while lens.len() < 16 {
            let n = rx
                .recv_batch(&mut batch, Wait::Timeout(Duration::from_secs(1)))
                .unwrap();
            assert!(n > 0, "datagrams missing: got {lens:?}");
            lens.extend(batch.iter().map(|d| d.payload.len()));
        }
        assert_eq!(lens.iter().filter(|&&l| l == 1400).count(), 8);
        assert_eq!(lens.iter().filter(|&&l| l == 1000).count(), 8);
    });
}
