//! The routed lab's path options against real traffic, through net's path-MTU
//! primitives: a narrow route MTU on the router answers with Packet Too Big /
//! fragmentation-needed (and the kernel learns it), `icmp-too-big` makes a black hole,
//! `fragments` loses fragmented datagrams, `hop-by-hop` loses Hop-by-Hop headers while
//! Destination Options pass. Each case sends a handful of datagrams; receive timeouts
//! are generous upper bounds, never timing assertions. Needs root (skips with a reason
//! outside CI).
#![cfg(target_os = "linux")]

mod common;

use common::*;
use dualperf_lab::{Lab, LabSpec, PathDrop, PathSpec, Topology};
use net::pathmtu::{
    drain_queued_errors, enable_error_queue, kernel_path_mtu, set_df_mode, set_ext_header,
    wait_queued_errors, DfMode, ErrorOrigin, ExtHeader, QueuedError, QueuedErrorKind,
};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;
use wire::spec::Family;

const FAMILIES: [Family; 2] = [Family::V4, Family::V6];
/// How long a receiver or the error queue is waited for: an upper bound only.
const WAIT: Duration = Duration::from_millis(1500);
/// Datagrams sent per case.
const TRIES: usize = 3;

fn routed_lab(tag: &str, mtu_bytes: Option<u32>, drops: &[PathDrop]) -> Lab {
    let spec = LabSpec {
        name: unique_name(tag),
        topology: Topology::ClientServer,
        rate_bps: None,
        mtu: None,
    };
    let path = PathSpec {
        mtu_bytes,
        drops: drops.iter().copied().collect(),
    };
    Lab::create_with_path(&spec, &path, None).expect("build the routed lab")
}

/// Collects the first byte (a tag) and size of every datagram reaching the server's
/// `port` until nothing came for [`WAIT`]; returns once the socket is bound.
fn receiver(lab: &Lab, fam: Family, port: u16) -> JoinHandle<Vec<(u8, usize)>> {
    let addr = SocketAddr::new(lab.server_addr(fam), port);
    let (ready_tx, ready_rx) = mpsc::channel();
    let h = in_ns(lab.server_ns(), move || {
        let sock = UdpSocket::bind(addr).expect("bind receiver");
        sock.set_read_timeout(Some(WAIT)).unwrap();
        ready_tx.send(()).unwrap();
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65536];
        // Bounded: the senders send at most 4 * TRIES datagrams.
        while got.len() < 8 * TRIES {
            match sock.recv(&mut buf) {
                Ok(n) => got.push((buf[0], n)),
                Err(_) => break,
            }
        }
        got
    });
    ready_rx.recv_timeout(WAIT * 2).expect("receiver ready");
    h
}

/// A UDP socket in the client namespace connected to the server's `port`.
fn client_socket(fam: Family, server: IpAddr, port: u16) -> UdpSocket {
    let local: SocketAddr = match fam {
        Family::V4 => "0.0.0.0:0".parse().unwrap(),
        Family::V6 => "[::]:0".parse().unwrap(),
    };
    let sock = UdpSocket::bind(local).expect("client bind");
    sock.connect(SocketAddr::new(server, port))
        .expect("connect");
    sock
}

/// `tag` followed by zeros, `len` bytes.
fn datagram(tag: u8, len: usize) -> Vec<u8> {
    let mut d = vec![0u8; len];
    d[0] = tag;
    d
}

/// What a DF probe of `big` bytes (after one small datagram) meets: the errors queued
/// within [`WAIT`], the kernel's path MTU afterwards, and what the server received.
struct Probe {
    errors: Vec<QueuedError>,
    kernel_mtu: u32,
    received: Vec<(u8, usize)>,
}

fn probe(lab: &Lab, fam: Family, port: u16, big: usize) -> Probe {
    let rx = receiver(lab, fam, port);
    let server = lab.server_addr(fam);
    let client = in_ns(lab.client_ns(), move || {
        let sock = client_socket(fam, server, port);
        set_df_mode(&sock, DfMode::Probe).expect("DF probe mode");
        enable_error_queue(&sock).expect("IP_RECVERR");
        sock.send(&datagram(b's', 200)).expect("send small");
        // An error queued by the first probe makes the next send fail once (EMSGSIZE).
        for _ in 0..TRIES {
            let _ = sock.send(&datagram(b'b', big));
        }
        let mut errors = Vec::new();
        if wait_queued_errors(&sock, WAIT).expect("poll") {
            errors = drain_queued_errors(&sock).expect("drain");
        }
        (errors, kernel_path_mtu(&sock).expect("IP_MTU"))
    });
    let (errors, kernel_mtu) = client.join().expect("client thread");
    Probe {
        errors,
        kernel_mtu,
        received: rx.join().expect("receiver thread"),
    }
}

fn sizes_with_tag(got: &[(u8, usize)], tag: u8) -> Vec<usize> {
    got.iter()
        .filter(|(t, _)| *t == tag)
        .map(|(_, n)| *n)
        .collect()
}

#[test]
fn a_datagram_too_big_for_the_path_brings_packet_too_big_from_the_router() {
    if !labs_available() {
        return;
    }
    let lab = routed_lab("ptb", Some(1280), &[]);
    for (fam, port) in FAMILIES.into_iter().zip([46101, 46102]) {
        // 1400 B of payload: 1428 B (IPv4) / 1448 B (IPv6) packets, under the veths'
        // 1500 and over the router's 1280.
        let p = probe(&lab, fam, port, 1400);
        let ptb: Vec<&QueuedError> = p
            .errors
            .iter()
            .filter(|e| e.kind == QueuedErrorKind::MessageTooBig)
            .collect();
        assert!(
            !ptb.is_empty(),
            "IPv{}: no Packet Too Big: {:?}",
            fam.number(),
            p.errors
        );
        let want_origin = match fam {
            Family::V4 => ErrorOrigin::Icmp,
            Family::V6 => ErrorOrigin::Icmp6,
        };
        for e in ptb {
            assert_eq!(e.origin, want_origin, "{e:?}");
            assert_eq!(e.errno, libc::EMSGSIZE, "{e:?}");
            assert_eq!(e.mtu_bytes, Some(1280), "{e:?}");
            assert_eq!(e.offender, Some(lab.router_addr(fam)), "{e:?}");
        }
        assert_eq!(p.kernel_mtu, 1280, "IPv{}", fam.number());
        assert_eq!(sizes_with_tag(&p.received, b's'), vec![200]);
        assert_eq!(sizes_with_tag(&p.received, b'b'), Vec::<usize>::new());
    }
}

#[test]
fn with_packet_too_big_dropped_the_datagram_vanishes_without_a_word() {
    if !labs_available() {
        return;
    }
    let lab = routed_lab("hole", Some(1280), &[PathDrop::IcmpTooBig]);
    for (fam, port) in FAMILIES.into_iter().zip([46111, 46112]) {
        let p = probe(&lab, fam, port, 1400);
        assert_eq!(
            p.errors,
            Vec::new(),
            "IPv{}: a black hole says nothing",
            fam.number()
        );
        // The kernel never learned the narrow hop: the veth's 1500 stands.
        assert_eq!(p.kernel_mtu, 1500, "IPv{}", fam.number());
        assert_eq!(
            sizes_with_tag(&p.received, b's'),
            vec![200],
            "the path works"
        );
        assert_eq!(sizes_with_tag(&p.received, b'b'), Vec::<usize>::new());
    }
}

/// Sends one small datagram and [`TRIES`] datagrams of 3000 B allowed to fragment;
/// returns the sizes of the big ones that arrived (and checks the small one did).
fn fragmented_delivery(lab: &Lab, fam: Family, port: u16) -> Vec<usize> {
    let rx = receiver(lab, fam, port);
    let server = lab.server_addr(fam);
    in_ns(lab.client_ns(), move || {
        let sock = client_socket(fam, server, port);
        set_df_mode(&sock, DfMode::Fragment).expect("fragment mode");
        sock.send(&datagram(b's', 200)).expect("send small");
        for _ in 0..TRIES {
            sock.send(&datagram(b'f', 3000)).expect("send fragmented");
        }
    })
    .join()
    .expect("client thread");
    let got = rx.join().expect("receiver thread");
    assert_eq!(sizes_with_tag(&got, b's'), vec![200], "the path works");
    sizes_with_tag(&got, b'f')
}

#[test]
fn with_fragments_dropped_a_fragmented_datagram_is_lost_and_without_it_arrives() {
    if !labs_available() {
        return;
    }
    let open = routed_lab("fragok", None, &[]);
    let closed = routed_lab("fragno", None, &[PathDrop::Fragments]);
    for (fam, port) in FAMILIES.into_iter().zip([46121, 46122]) {
        assert_eq!(
            fragmented_delivery(&open, fam, port),
            vec![3000; TRIES],
            "IPv{} without the rule",
            fam.number()
        );
        assert_eq!(
            fragmented_delivery(&closed, fam, port),
            Vec::<usize>::new(),
            "IPv{} with fragments dropped",
            fam.number()
        );
    }
}

/// Over IPv6: [`TRIES`] datagrams with a Hop-by-Hop header (tag `h`), as many with a
/// Destination Options header (`d`) and plain (`p`); returns what arrived.
fn ext_header_delivery(lab: &Lab, port: u16) -> Vec<(u8, usize)> {
    let rx = receiver(lab, Family::V6, port);
    let server = lab.server_addr(Family::V6);
    in_ns(lab.client_ns(), move || {
        for (tag, header) in [
            (b'h', Some(ExtHeader::HopByHop)),
            (b'd', Some(ExtHeader::DestOpts)),
            (b'p', None),
        ] {
            let sock = client_socket(Family::V6, server, port);
            if let Some(h) = header {
                set_ext_header(&sock, h).expect("set the option header (root has CAP_NET_RAW)");
            }
            for _ in 0..TRIES {
                sock.send(&datagram(tag, 100)).expect("send");
            }
        }
    })
    .join()
    .expect("client thread");
    rx.join().expect("receiver thread")
}

#[test]
fn with_hop_by_hop_dropped_destination_options_still_arrive() {
    if !labs_available() {
        return;
    }
    let open = routed_lab("ehok", None, &[]);
    let got = ext_header_delivery(&open, 46131);
    for tag in [b'h', b'd', b'p'] {
        assert_eq!(
            sizes_with_tag(&got, tag),
            vec![100; TRIES],
            "{}",
            tag as char
        );
    }
    let closed = routed_lab("ehno", None, &[PathDrop::HopByHop]);
    let got = ext_header_delivery(&closed, 46132);
    assert_eq!(sizes_with_tag(&got, b'h'), Vec::<usize>::new());
    assert_eq!(sizes_with_tag(&got, b'd'), vec![100; TRIES]);
    assert_eq!(sizes_with_tag(&got, b'p'), vec![100; TRIES]);
}

#[test]
fn the_description_records_the_path_and_reads_back() {
    if !labs_available() {
        return;
    }
    let lab = routed_lab(
        "desc",
        Some(1400),
        &[PathDrop::DestOpts, PathDrop::IcmpTooBig],
    );
    let d = lab.describe();
    assert_eq!(d["lab.topology"], "client-server");
    assert_eq!(d["lab.path_mtu_bytes"], "1400");
    assert_eq!(d["lab.path_drops"], "icmp-too-big,dest-opts");
    assert!(
        d["lab.path_rules"].contains("exthdr dst exists counter drop"),
        "{d:?}"
    );
    assert_eq!(PathSpec::from_description(&d).unwrap(), *lab.path());
    // The rules really are in the router's namespace.
    let out = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            lab.router_ns().unwrap(),
            "nft",
            "list",
            "ruleset",
        ])
        .output()
        .expect("nft list ruleset");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("table inet dualperf_path"), "{listed}");
    assert!(listed.contains("exthdr dst exists"), "{listed}");
}
