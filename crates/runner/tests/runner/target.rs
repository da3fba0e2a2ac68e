//! The embedded target on loopback (one short TCP and one UDP test, and a study through
//! the target as an executor), and the targets refused before anything starts.

use crate::support::{self, Db, Seen};
use runner::target::{DualperfTarget, LabRequest, Place, PINNING_KEY};
use runner::{Peer, Target, TargetError, TargetOptions};
use wire::metrics as m;
use wire::spec::{Bound, Family, Rate, TestKind, TestSpec};

fn embedded() -> DualperfTarget {
    DualperfTarget::open(&TargetOptions::default(), &[Family::V4], &mut |n| {
        panic!("unexpected notice: {n}")
    })
    .expect("the embedded server starts")
}

#[test]
fn a_tcp_stream_on_the_embedded_server_delivers_every_byte_sent() {
    let target = embedded();
    assert!(matches!(target.place(), Place::Embedded { .. }));
    let mut spec = TestSpec::new(TestKind::TcpStream, Family::V4, 1408);
    spec.bound = Bound::DurationNs(200_000_000);
    let mut rec = engine::VecRecorder::default();
    let r = target
        .run_test(&spec, None, &mut rec)
        .expect("the test runs");
    assert!(r.client.sent_bytes > 0);
    // TCP is reliable: what the client wrote, the server read, whatever the load.
    assert_eq!(r.client.sent_bytes, r.server.recv_bytes);
    assert_eq!(r.metric(m::SENT_BYTES), Some(r.client.sent_bytes as f64));
    assert!(r.server_addr.starts_with("127.0.0.1"), "{}", r.server_addr);
    target.close().unwrap();
}

#[test]
fn a_udp_stream_on_the_embedded_server_counts_every_datagram_once() {
    let target = embedded();
    let mut spec = TestSpec::new(TestKind::UdpStream, Family::V4, 1000);
    spec.bound = Bound::Count(200);
    spec.rate = Some(Rate::BitsPerSec(20_000_000));
    let mut rec = engine::VecRecorder::default();
    let r = target
        .run_test(&spec, None, &mut rec)
        .expect("the test runs");
    assert_eq!(r.client.sent_packets, 200, "a count bound sends that many");
    let recv = r.server.recv_packets;
    assert!(recv > 0 && recv <= 200, "received {recv}");
    assert_eq!(r.server.dup_packets, 0);
    assert_eq!(r.metric(m::LOST_PACKETS), Some((200 - recv) as f64));
}

#[test]
fn a_study_runs_through_the_embedded_target_as_its_executor() {
    let db = Db::new();
    let spec = support::spec(
        "tests=['tcp-rr','udp-stream']\nfamilies=[4]\nsizes=[128]\nruns=1\ncount=50\nudp_method='fixed'\n",
    );
    let mut target = Target::open(&TargetOptions::default(), &spec.families, &mut |n| {
        panic!("unexpected notice: {n}")
    })
    .expect("the embedded server starts");
    target.set_study(&spec);
    let client = target.initial_client_info(&TargetOptions::default(), "0", "x");
    assert_eq!(client.metadata[PINNING_KEY], "none (--no-pin)");
    let campaign = runner::lifecycle::create(
        db.open(),
        &db.target,
        &spec,
        &target,
        &client,
        &support::info(),
    )
    .unwrap();
    let id = campaign.id;
    let ran = support::run(campaign, &mut target, Seen::default());
    assert_eq!(support::failed_cells(&ran.end), 0, "{:?}", ran.end);
    let runs = ran.store.runs(id).unwrap();
    assert_eq!(runs.len(), 2);
    let rr = runs.iter().find(|r| r.kind == TestKind::TcpRr).unwrap();
    assert_eq!(rr.metrics.get(m::TRANSACTIONS), Some(&50.0));
    let udp = runs.iter().find(|r| r.kind == TestKind::UdpStream).unwrap();
    assert_eq!(udp.metrics.get(m::SENT_PACKETS), Some(&50.0));
    let server = ran.store.campaign(id).unwrap().hosts;
    assert!(server.iter().any(|h| h.role == "server"), "{server:?}");
    target.close().unwrap();
}

#[test]
fn targets_that_cannot_work_are_refused_before_anything_starts() {
    let iperf3 = TargetOptions {
        peer: Peer::Iperf3,
        ..TargetOptions::default()
    };
    let e = Target::open(&iperf3, &[Family::V4], &mut |_| {})
        .err()
        .unwrap();
    assert!(matches!(e, TargetError::Refused(_)), "{e:?}");
    assert!(e.to_string().contains("needs the HOST"), "{e}");

    let lab = LabRequest {
        topology: lab::Topology::P2p,
        rate_bps: None,
        mtu_bytes: None,
        link: None,
        ampdu: None,
        path: lab::PathSpec::default(),
    };
    let no_port = TargetOptions {
        lab: Some(lab),
        port: 0,
        server_exe: Some("/nonexistent/dualperf".into()),
        ..TargetOptions::default()
    };
    let e = Target::open(&no_port, &[Family::V4], &mut |_| {})
        .err()
        .unwrap();
    assert!(e.to_string().contains("--port 0"), "{e}");
    let no_exe = TargetOptions {
        lab: Some(lab),
        ..TargetOptions::default()
    };
    let e = Target::open(&no_exe, &[Family::V4], &mut |_| {})
        .err()
        .unwrap();
    assert!(matches!(e, TargetError::NoServerExe), "{e:?}");
}

#[test]
fn preflight_finds_a_server_that_answers_and_names_one_that_does_not() {
    use runner::target::preflight::{check_remote, PreflightError};
    let server = embedded();
    let remote = |port: u16, peer: Peer, host: &str| TargetOptions {
        hosts: runner::Hosts::one(host),
        port,
        peer,
        ..TargetOptions::default()
    };
    check_remote(
        &remote(server.port(), Peer::Dualperf, "127.0.0.1"),
        &[Family::V4],
    )
    .expect("the embedded server answers the handshake");

    // A port nobody listens on (taken from the kernel, then released).
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let e = check_remote(&remote(free, Peer::Dualperf, "127.0.0.1"), &[Family::V4]).unwrap_err();
    assert!(matches!(e, PreflightError::NoAnswer { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains(&format!("127.0.0.1:{free} does not answer")),
        "{e}"
    );
    // An iperf3 server is only resolved: its first run checks it.
    check_remote(&remote(free, Peer::Iperf3, "127.0.0.1"), &[Family::V4]).unwrap();

    // An address has one family: the other is refused with the fix.
    let e = check_remote(&remote(free, Peer::Dualperf, "::1"), &[Family::V4]).unwrap_err();
    assert!(matches!(e, PreflightError::NoAddress { .. }), "{e:?}");
    assert!(e.to_string().contains("--families 6"), "{e}");
    server.close().unwrap();
}
