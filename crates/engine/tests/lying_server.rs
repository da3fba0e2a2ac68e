//! Issue 11.5: a server that lies in its result. A proxy on the control connection
//! rewrites the real server's `result` message; the client must fail the run naming
//! the impossible number, never return it as data.

use dualperf_engine::{run_client, ClientConfig, EmbeddedServer, EngineError, NullRecorder};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use wire::proto::{encode_frame, FrameDecoder, Msg, SideStats, PROTOCOL_VERSION};
use wire::spec::{Bound, Family, TestKind, TestSpec};

/// Forward one control connection to `server_port`, passing `lie` every server stats.
fn lying_proxy(server_port: u16, lie: fn(&mut SideStats)) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        let Ok((client, _)) = l.accept() else { return };
        let server = TcpStream::connect(("127.0.0.1", server_port)).unwrap();
        let (mut c_rd, mut s_wr) = (client.try_clone().unwrap(), server.try_clone().unwrap());
        thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(n) = c_rd.read(&mut buf) {
                if n == 0 || s_wr.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        });
        let (mut s_rd, mut c_wr) = (server, client);
        let mut dec = FrameDecoder::new(PROTOCOL_VERSION);
        let mut buf = [0u8; 65536];
        while let Ok(n) = s_rd.read(&mut buf) {
            if n == 0 {
                break;
            }
            dec.push(&buf[..n]);
            while let Ok(Some(mut msg)) = dec.next_msg() {
                if let Msg::Result { stats } = &mut msg {
                    lie(stats);
                }
                if c_wr
                    .write_all(&encode_frame(&msg, PROTOCOL_VERSION))
                    .is_err()
                {
                    return;
                }
            }
        }
    });
    port
}

fn run_against_liar(kind: TestKind, lie: fn(&mut SideStats)) -> Result<(), EngineError> {
    let srv = EmbeddedServer::start().unwrap();
    let port = lying_proxy(srv.port(), lie);
    let mut spec = TestSpec::new(kind, Family::V4, 1000);
    spec.bound = Bound::DurationNs(200_000_000);
    run_client(
        &ClientConfig::new("127.0.0.1", port, spec),
        &mut NullRecorder,
    )
    .map(|_| ())
}

#[test]
fn an_honest_server_behind_the_proxy_passes() {
    for kind in [TestKind::TcpStream, TestKind::UdpStream, TestKind::TcpRr] {
        run_against_liar(kind, |_| {}).unwrap_or_else(|e| panic!("{kind}: {e}"));
    }
}

type Lie = (TestKind, &'static str, fn(&mut SideStats));

#[test]
fn impossible_numbers_from_the_server_fail_the_run_with_the_reason() {
    let lies: [Lie; 5] = [
        (TestKind::TcpStream, "bytes received", |s| {
            s.recv_bytes = u64::MAX
        }),
        (TestKind::TcpStream, "process CPU", |s| {
            if let Some(c) = s.cpu.as_mut() {
                c.proc_pct = -1e308;
            } else {
                s.cpu = Some(wire::proto::CpuStats {
                    proc_pct: -1e308,
                    ..Default::default()
                });
            }
        }),
        (TestKind::UdpStream, "datagrams received", |s| {
            s.recv_packets += 1_000_000
        }),
        (TestKind::UdpStream, "jitter", |s| {
            s.jitter_rfc3550_ns = Some(-1e9)
        }),
        (TestKind::UdpStream, "receive time", |s| {
            s.recv_elapsed_ns = u64::MAX
        }),
    ];
    for (kind, words, lie) in lies {
        match run_against_liar(kind, lie) {
            Err(e @ EngineError::Implausible(_)) => {
                let msg = e.to_string();
                assert!(msg.contains(words), "{kind} {words}: {msg}");
            }
            other => panic!("{kind} {words}: expected an implausible-result error, got {other:?}"),
        }
    }
}
