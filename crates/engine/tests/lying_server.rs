//! A server that lies. A proxy on the control connection rewrites the real server's
//! messages: an impossible `result` must fail the run naming the number, never be
//! returned as data; forged `clock_reply` messages must be rejected and counted, and
//! one-way delay reported unavailable with the reason, never as an exact figure.

use dualperf_engine::{
    run_client, ClientConfig, EmbeddedServer, EngineError, NullRecorder, RunResult,
};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use wire::proto::{encode_frame, FrameDecoder, Msg, SideStats, PROTOCOL_VERSION};
use wire::spec::{Bound, Family, Rate, TestKind, TestSpec};

/// Forward one control connection to `server_port`, passing `lie` every message the
/// server sends.
fn lying_proxy(server_port: u16, lie: impl Fn(&mut Msg) + Send + 'static) -> u16 {
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
                lie(&mut msg);
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
    let port = lying_proxy(srv.port(), move |msg| {
        if let Msg::Result { stats } = msg {
            lie(stats)
        }
    });
    let mut spec = TestSpec::new(kind, Family::V4, 1000);
    spec.bound = Bound::DurationNs(200_000_000);
    if kind == TestKind::UdpStream {
        // Paced, so the client sends about 2 000 datagrams and a million more received
        // is a lie whatever the host (unpaced, GSO on loopback sends millions a second).
        spec.rate = Some(Rate::PacketsPerSec(10_000));
    }
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
    let lies: [Lie; 8] = [
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
        // Issue 38: one-way delay min 4.59 ms > mean 0.59 ms > max −0.41 ms; 0 datagrams
        // received with 9.99 Mbit/s of goodput; jitter of 1e300 ns.
        (
            TestKind::UdpStream,
            "one-way transit min (ns) = 4590000 is greater than one-way transit mean (ns) = 590000",
            |s| {
                s.transit_min_ns = Some(4_590_000);
                s.transit_mean_ns = Some(590_000.0);
                s.transit_max_ns = Some(-410_000);
            },
        ),
        (
            TestKind::UdpStream,
            "in 0 datagrams of at most 65507 bytes",
            |s| {
                s.recv_packets = 0;
                s.streams.clear();
            },
        ),
        (
            TestKind::UdpStream,
            "jitter (ns) = 1.000e300 is longer than the run's",
            |s| s.jitter_rfc3550_ns = Some(1e300),
        ),
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

/// A paced UDP stream (per-datagram send stamps, so one-way delay is measured) through a
/// proxy that rewrites every clock reply with `forge`.
fn udp_run_with_forged_clock(forge: fn(&mut u64, &mut u64, &mut u64)) -> RunResult {
    udp_run_through_liar(move |msg| {
        if let Msg::ClockReply {
            t1_ns,
            t2_ns,
            t3_ns,
        } = msg
        {
            forge(t1_ns, t2_ns, t3_ns)
        }
    })
}

/// A paced UDP stream through a proxy that passes `lie` every message of the server.
fn udp_run_through_liar(lie: impl Fn(&mut Msg) + Send + 'static) -> RunResult {
    let srv = EmbeddedServer::start().unwrap();
    let port = lying_proxy(srv.port(), lie);
    let mut spec = TestSpec::new(TestKind::UdpStream, Family::V4, 200);
    spec.bound = Bound::DurationNs(200_000_000);
    spec.rate = Some(Rate::PacketsPerSec(1000));
    run_client(
        &ClientConfig::new("127.0.0.1", port, spec),
        &mut NullRecorder,
    )
    .unwrap()
}

#[test]
fn forged_clock_replies_are_rejected_and_one_way_delay_is_unavailable() {
    // The attack of issue 28: the reply claims the server held the query 50 ms, longer
    // than the whole round trip, and shifts its clock by 2.95 s. Before the checks this
    // gave "offset 2949.949 ms ±0.0 µs".
    let held_too_long = udp_run_with_forged_clock(|_, t2, t3| {
        *t2 += 2_949_949_000_000;
        *t3 = *t2 + 50_000_000;
    });
    // A reply that does not echo the query's t1.
    let wrong_echo = udp_run_with_forged_clock(|t1, _, _| *t1 ^= 1);
    // A reply sent before the query was received.
    let negative_hold = udp_run_with_forged_clock(|_, t2, t3| *t3 = t2.saturating_sub(1));
    for (what, r) in [
        ("hold > round trip", held_too_long),
        ("wrong echo", wrong_echo),
        ("negative hold", negative_hold),
    ] {
        assert!(r.clock.is_none(), "{what}: {:?}", r.clock);
        let why = r.one_way_delay().unwrap_err().to_string();
        assert!(
            why.contains("0 of 8 clock exchanges passed the checks"),
            "{what}: {why}"
        );
        let m = r.metrics();
        assert!(
            !m.iter().any(|x| x.name == wire::metrics::OWD_MEAN_NS
                || x.name == wire::metrics::CLOCK_OFFSET_NS),
            "{what}: no offset or one-way delay may be stored: {m:?}"
        );
    }
}

#[test]
fn honest_clock_replies_give_an_offset_with_a_bound_of_at_least_a_microsecond() {
    let r = udp_run_with_forged_clock(|_, _, _| {});
    let c = r.clock.expect("an honest server's replies are used");
    assert_eq!(c.rejected_exchanges, 0);
    assert!(
        c.uncertainty_ns >= measure::owd::MIN_UNCERTAINTY_NS,
        "{c:?}"
    );
    assert!(c.method.contains("NTP-style"), "{c:?}");
}

/// Issue 38: a server that copies the client's boot id into its `welcome` (here the
/// embedded server has it anyway: one host) and answers every clock query with
/// t2 = t1 + 1 µs, t3 = t1 + 2 µs, as one clock would order them, was taken for the
/// same host: offset 0 "±0.0 µs". The offset is estimated from the exchanges like any
/// other, with the bound of their round trip, and never stated as exact.
#[test]
fn a_forged_same_host_clock_is_never_taken_as_exact() {
    let boot_id = net::sysinfo::capture(None)
        .get(net::sysinfo::BOOT_ID_KEY)
        .cloned();
    let r = udp_run_through_liar(move |msg| match msg {
        Msg::Welcome { server_info, .. } => {
            if let Some(id) = &boot_id {
                server_info.insert(net::sysinfo::BOOT_ID_KEY.into(), id.clone());
            }
        }
        Msg::ClockReply {
            t1_ns,
            t2_ns,
            t3_ns,
        } => {
            *t2_ns = *t1_ns + 1_000;
            *t3_ns = *t1_ns + 2_000;
        }
        _ => {}
    });
    let c = r.clock.clone().expect("the forged replies pass the checks");
    assert!(
        c.uncertainty_ns >= measure::owd::MIN_UNCERTAINTY_NS,
        "{c:?}"
    );
    assert!(c.method.contains("NTP-style"), "{c:?}");
    let bound = |name: &str| r.metrics().iter().find(|x| x.name == name).map(|x| x.value);
    assert!(
        bound(wire::metrics::CLOCK_OFFSET_UNCERTAINTY_NS)
            .is_some_and(|u| u >= measure::owd::MIN_UNCERTAINTY_NS as f64),
        "{:?}",
        r.metrics()
    );
    // A delay, if shown, carries the offset's bound.
    if let Ok(d) = r.one_way_delay() {
        assert!(d.uncertainty_ns >= measure::owd::MIN_UNCERTAINTY_NS as f64);
    }
}

/// A server that floods its `applied` settings (300 keys of 10 000 bytes, 3 MB in one
/// result) gets the cap any peer's metadata gets: the run keeps at most 64 keys of at
/// most 4 KiB each and says what was cut, so a study does not store megabytes per run.
#[test]
fn a_flood_of_server_settings_is_capped_as_any_peer_metadata() {
    let srv = EmbeddedServer::start().unwrap();
    let port = lying_proxy(srv.port(), |msg| {
        if let Msg::Result { stats } = msg {
            for i in 0..300 {
                stats
                    .applied
                    .insert(format!("junk{i:03}"), "x".repeat(10_000));
            }
        }
    });
    let mut spec = TestSpec::new(TestKind::TcpStream, Family::V4, 1000);
    spec.bound = Bound::DurationNs(200_000_000);
    let r = run_client(
        &ClientConfig::new("127.0.0.1", port, spec),
        &mut NullRecorder,
    )
    .unwrap();
    let applied = &r.server.applied;
    assert!(
        applied.len() <= wire::text::MAX_META_KEYS + 1,
        "{} keys",
        applied.len()
    );
    assert!(applied
        .values()
        .all(|v| v.len() <= wire::text::MAX_META_BYTES));
    let note = &applied[wire::text::META_TRUNCATED_KEY];
    assert!(note.contains("keys dropped"), "{note}");
}

/// Issue 38's second form: the replies forged to look like one clock (t2 = t1 + 1 µs,
/// t3 = t1 + 2 µs) while the server's clock runs 2.95 s ahead (its result's start says
/// so): "2949949 ms ±0.0 µs". The start, put on the client's clock with the replies'
/// offset, falls seconds outside the time the server can have started: no offset, and
/// the one-way delay is unavailable with that reason.
#[test]
fn a_server_whose_clock_contradicts_its_replies_gives_no_offset() {
    let r = udp_run_through_liar(|msg| match msg {
        Msg::ClockReply {
            t1_ns,
            t2_ns,
            t3_ns,
        } => {
            *t2_ns = *t1_ns + 1_000;
            *t3_ns = *t1_ns + 2_000;
        }
        Msg::Result { stats } => {
            if let Some(go) = stats.realtime_at_go_ns.as_mut() {
                *go += 2_950_000_000;
            }
        }
        _ => {}
    });
    assert!(r.clock.is_none(), "{:?}", r.clock);
    let why = r.one_way_delay().unwrap_err().to_string();
    assert!(
        why.contains("the server's clock contradicts its replies") && why.contains("+29"),
        "{why}"
    );
    assert!(
        !r.metrics()
            .iter()
            .any(|x| x.name == wire::metrics::OWD_MEAN_NS
                || x.name == wire::metrics::CLOCK_OFFSET_NS),
        "{:?}",
        r.metrics()
    );
}
