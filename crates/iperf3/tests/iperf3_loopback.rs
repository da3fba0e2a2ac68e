//! Our client against our server (no iperf3 binary needed), and our server against
//! hostile control connections: garbage, silence and bad cookies must not stop it from
//! serving the next client.

mod common;

use common::OurServer;
use dualperf_iperf3::server::ServerOptions;
use dualperf_iperf3::{run, ClientOptions, Iperf3Error};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use wire::spec::{Bound, Direction, Family, Rate, TestKind, TestSpec};

fn spec(kind: TestKind, family: Family, payload: u32, ms: u64) -> TestSpec {
    let mut s = TestSpec::new(kind, family, payload);
    s.bound = Bound::DurationNs(ms * 1_000_000);
    s
}

#[test]
fn our_client_and_server_agree_on_udp_loss_made_by_both_hooks() {
    let opts = ServerOptions {
        drop_every_nth_datagram: Some(10),
        ..ServerOptions::default()
    };
    let server = OurServer::start("[::1]:0", opts);
    let mut s = spec(TestKind::UdpStream, Family::V6, 300, 400);
    s.rate = Some(Rate::BitsPerSec(4_000_000));
    s.direction = Direction::Bidir;
    let copts = ClientOptions {
        drop_every_nth_received: Some(20),
        ..ClientOptions::default()
    };
    let r = run("::1", server.addr.port(), &s, &copts).unwrap();
    let report = &server.wait_reports(1)[0];
    assert_eq!(report.error, None);
    let (f, rev) = (r.forward.unwrap(), r.reverse.unwrap());
    let served_up = report.streams.iter().find(|x| !x.server_sends).unwrap();
    let served_down = report.streams.iter().find(|x| x.server_sends).unwrap();
    let up = served_up.outcome.udp.clone().unwrap();
    assert_eq!(f.lost_packets, Some(up.errors));
    assert!(
        up.errors as u64 + 1 >= served_up.outcome.dropped_by_hook && up.errors > 20,
        "{up:?}"
    );
    assert_eq!(rev.sent_packets, Some(served_down.outcome.sent_packets));
    let down_lost = rev.lost_packets.unwrap();
    let down_expected = rev.highest_seq.unwrap() / 20;
    assert!(
        down_lost as u64 + 1 >= down_expected && down_lost as u64 <= down_expected + 3,
        "{rev:?}"
    );
}

#[test]
fn our_client_and_server_count_tcp_bytes_identically_with_a_block_count() {
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let mut s = spec(TestKind::TcpStream, Family::V4, 10_000, 0);
    s.bound = Bound::Count(500);
    s.streams = 2;
    let r = run(
        "127.0.0.1",
        server.addr.port(),
        &s,
        &ClientOptions::default(),
    )
    .unwrap();
    let f = r.forward.unwrap();
    assert_eq!(f.sent_bytes, 500 * 10_000, "500 blocks over both streams");
    assert_eq!(
        f.recv_bytes, f.sent_bytes,
        "our server drains after TEST_END"
    );
    assert_eq!(server.wait_reports(1)[0].error, None);
}

#[test]
fn garbage_and_silence_do_not_stop_our_server() {
    let opts = ServerOptions {
        control_timeout: Duration::from_millis(500),
        handshake_timeout: Duration::from_millis(500),
        ..ServerOptions::default()
    };
    let server = OurServer::start("127.0.0.1:0", opts);
    // An HTTP request: the first 37 bytes pass as a cookie, "er-A" is a huge length.
    let mut http = TcpStream::connect(server.addr).unwrap();
    http.write_all(b"GET / HTTP/1.1\r\nHost: example.org\r\nUser-Agent: curl/8\r\n\r\n")
        .unwrap();
    let mut reply = Vec::new();
    http.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = http.read_to_end(&mut reply);
    // PARAM_EXCHANGE (unless the close's RST overtook it), then the connection is closed.
    assert!(reply.is_empty() || reply == vec![9], "{reply:?}");
    let reports = server.wait_reports(1);
    assert!(
        reports[0]
            .error
            .as_deref()
            .unwrap_or("")
            .contains("exceeds the limit"),
        "{reports:?}"
    );
    // A silent client is dropped at the handshake deadline, and while it is connected
    // it holds a handshake place, not the test slot: a real client is served.
    let silent = TcpStream::connect(server.addr).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let s = spec(TestKind::TcpStream, Family::V4, 1000, 100);
    let r = run(
        "127.0.0.1",
        server.addr.port(),
        &s,
        &ClientOptions::default(),
    )
    .unwrap();
    assert!(r.forward.unwrap().recv_bytes > 0);
    let reports = server.wait_reports(3);
    assert!(
        reports[1..]
            .iter()
            .any(|r| r.params.is_none() && r.error.as_deref().unwrap_or("").contains("timed out")),
        "{reports:?}"
    );
    drop(silent);
    // A normal test afterwards works.
    let r = run(
        "127.0.0.1",
        server.addr.port(),
        &s,
        &ClientOptions::default(),
    )
    .unwrap();
    assert!(r.forward.unwrap().recv_bytes > 0);
}

/// Speaks the protocol by hand: a data connection with a wrong cookie gets 0xFF and
/// the test goes on with the right one (§6.1).
#[test]
fn bad_data_cookie_gets_access_denied_and_the_test_goes_on() {
    use dualperf_iperf3::json::{Params, Protocol, Results, StreamResult};
    use dualperf_iperf3::proto::{decode_json_frame, encode_json};
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let cookie = *b"abcdefghijklmnopqrstuvwxyz2345672345\0";
    let read_n = |c: &mut TcpStream, n: usize| {
        let mut b = vec![0u8; n];
        c.read_exact(&mut b).unwrap();
        b
    };
    let mut ctl = TcpStream::connect(server.addr).unwrap();
    ctl.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    ctl.write_all(&cookie).unwrap();
    assert_eq!(read_n(&mut ctl, 1), [9]);
    ctl.write_all(&encode_json(&Params::new(Protocol::Tcp, 1).to_json()))
        .unwrap();
    assert_eq!(read_n(&mut ctl, 1), [10]);
    let mut bad = TcpStream::connect(server.addr).unwrap();
    bad.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    bad.write_all(b"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\0")
        .unwrap();
    assert_eq!(read_n(&mut bad, 1), [0xff]);
    let mut good = TcpStream::connect(server.addr).unwrap();
    good.write_all(&cookie).unwrap();
    assert_eq!(read_n(&mut ctl, 2), [1, 2]);
    good.write_all(&[7u8; 5000]).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    ctl.write_all(&[4]).unwrap();
    assert_eq!(read_n(&mut ctl, 1), [13]);
    let ours = Results {
        sender_has_retransmits: 0,
        streams: vec![StreamResult {
            id: 1,
            bytes: 5000,
            retransmits: -1,
            ..Default::default()
        }],
        ..Default::default()
    };
    ctl.write_all(&encode_json(&ours.to_json())).unwrap();
    let len = u32::from_be_bytes(read_n(&mut ctl, 4).try_into().unwrap()) as usize;
    let mut framed = (len as u32).to_be_bytes().to_vec();
    framed.extend(read_n(&mut ctl, len));
    let (theirs, _) = decode_json_frame(&framed, 1 << 20).unwrap().unwrap();
    assert_eq!(theirs["streams"][0]["bytes"], 5000, "{theirs}");
    assert_eq!(theirs["streams"][0]["id"], 1);
    assert_eq!(theirs["sender_has_retransmits"], -1, "receive-only side");
    assert_eq!(read_n(&mut ctl, 1), [14]);
    ctl.write_all(&[16]).unwrap();
    assert_eq!(server.wait_reports(1)[0].error, None);
}

#[test]
fn client_vanishing_while_streams_open_frees_our_server_at_once() {
    use dualperf_iperf3::json::{Params, Protocol};
    use dualperf_iperf3::proto::encode_json;
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    for (i, protocol) in [Protocol::Tcp, Protocol::Udp].into_iter().enumerate() {
        let mut ctl = TcpStream::connect(server.addr).unwrap();
        ctl.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        ctl.write_all(b"abcdefghijklmnopqrstuvwxyz2345672345\0")
            .unwrap();
        let mut b = [0u8; 1];
        ctl.read_exact(&mut b).unwrap();
        let mut p = Params::new(protocol, 1);
        p.len_bytes = 1000;
        ctl.write_all(&encode_json(&p.to_json())).unwrap();
        ctl.read_exact(&mut b).unwrap();
        assert_eq!(b, [10], "CREATE_STREAMS");
        drop(ctl); // gone before opening any stream
        let left = std::time::Instant::now();
        let reports = server.wait_reports(i + 1);
        assert_eq!(reports.len(), i + 1);
        assert!(
            left.elapsed() < Duration::from_secs(1),
            "{protocol:?}: noticed after {:?}",
            left.elapsed()
        );
        let error = reports[i].error.as_deref().unwrap_or("");
        assert!(
            error.contains("while opening streams"),
            "{protocol:?}: {error}"
        );
    }
    let s = spec(TestKind::UdpStream, Family::V4, 500, 200);
    assert!(run(
        "127.0.0.1",
        server.addr.port(),
        &s,
        &ClientOptions::default()
    )
    .is_ok());
}

#[test]
fn one_port_serves_both_families_dual_stack_and_per_address() {
    // `[::]` is dual-stack like iperf3's listener: IPv4 arrives v4-mapped, TCP and UDP.
    let any = OurServer::start("[::]:0", ServerOptions::default());
    // Two addresses, port 0 twice: the second reuses the first one's port.
    let pair = dualperf_iperf3::Server::bind(&[
        "127.0.0.1:0".parse().unwrap(),
        "[::1]:0".parse().unwrap(),
    ])
    .unwrap();
    let addrs = pair.local_addrs();
    assert_eq!(addrs[0].port(), addrs[1].port());
    let shutdown = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = shutdown.clone();
    let serving = std::thread::spawn(move || pair.serve(&flag));
    for port in [any.addr.port(), addrs[0].port()] {
        for (host, family) in [("127.0.0.1", Family::V4), ("::1", Family::V6)] {
            for kind in [TestKind::TcpStream, TestKind::UdpStream] {
                let mut s = spec(kind, family, 1200, 150);
                s.rate = Some(Rate::BitsPerSec(2_000_000));
                // The previous session may still be closing (our server then answers
                // busy, as iperf3 does to a second client): retry for up to 2 s.
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
                let r = loop {
                    match run(host, port, &s, &ClientOptions::default()) {
                        Err(Iperf3Error::Busy) if std::time::Instant::now() < deadline => {
                            std::thread::sleep(std::time::Duration::from_millis(50));
                        }
                        other => break other,
                    }
                }
                .unwrap_or_else(|e| panic!("{host} {kind} on port {port}: {e}"));
                assert!(r.forward.unwrap().recv_bytes > 0, "{host} {kind}");
            }
        }
    }
    shutdown.store(true, std::sync::atomic::Ordering::Relaxed);
    serving.join().unwrap().unwrap();
}
