//! Debian's `iperf3 -c` against our server: the numbers the iperf3 client prints must be
//! the ones our server counted.

mod common;

use common::{f64_at, u64_at, Iperf3, OurServer};
use dualperf_iperf3::server::{ServerOptions, SessionReport};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

fn counted(report: &SessionReport, server_sends: bool) -> u64 {
    report
        .streams
        .iter()
        .filter(|s| s.server_sends == server_sends)
        .map(|s| s.outcome.bytes)
        .sum()
}

fn only_report(server: &OurServer) -> SessionReport {
    let reports = server.wait_reports(1);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let r = reports[0].clone();
    assert_eq!(r.error, None, "{r:?}");
    r
}

#[test]
fn iperf3_tcp_client_bytes_match_our_server_v4() {
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let port = server.port();
    let args = [
        "-c",
        "127.0.0.1",
        "-p",
        &port,
        "-J",
        "-n",
        "30M",
        "-C",
        "reno",
        "-N",
        "-w",
        "256K",
    ];
    let run = Iperf3::spawn(&args).finish(WAIT);
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    let j = run.json();
    let report = only_report(&server);
    let sent = u64_at(&j, &["end", "sum_sent", "bytes"]);
    let received = u64_at(&j, &["end", "sum_received", "bytes"]);
    assert!(sent >= 30 * 1024 * 1024, "{sent}");
    assert_eq!(received, counted(&report, false));
    assert_eq!(
        sent, received,
        "our server drains every byte the client sent"
    );
    // -C reno reached our data socket and came back as congestion_used.
    assert_eq!(j["end"]["receiver_tcp_congestion"], "reno");
}

fn udp_loss_is_reported_identically(bind: &str, host: &str, extra: &[&str]) {
    let opts = ServerOptions {
        drop_every_nth_datagram: Some(25),
        ..ServerOptions::default()
    };
    let server = OurServer::start(bind, opts);
    let mut args = vec![
        "-c", host, "-p", "0", "-J", "-u", "-b", "8M", "-l", "400", "-t", "1",
    ];
    let port = server.port();
    args[3] = &port;
    args.extend_from_slice(extra);
    let run = Iperf3::spawn(&args).finish(WAIT);
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    let j = run.json();
    let report = only_report(&server);
    let ours = report.streams[0]
        .outcome
        .udp
        .clone()
        .expect("UDP receiver stats");
    let dropped = report.streams[0].outcome.dropped_by_hook;
    let lost = u64_at(&j, &["end", "sum_received", "lost_packets"]);
    let packets = u64_at(&j, &["end", "sum_received", "packets"]);
    let sent_packets = u64_at(&j, &["end", "sum_sent", "packets"]);
    assert!(dropped > 60, "the hook dropped {dropped} of {sent_packets}");
    assert_eq!(
        lost as i64, ours.errors,
        "iperf3 prints the loss our server counted"
    );
    assert_eq!(packets, ours.max_seq);
    // Every datagram the hook dropped is lost (one fewer if the very last one was
    // dropped); a loaded host may lose a few more on its own.
    assert!(
        lost + 1 >= dropped && lost <= dropped + dropped / 10,
        "lost {lost}, dropped {dropped}"
    );
    assert_eq!(u64_at(&j, &["end", "sum_received", "bytes"]), ours.bytes);
    let jitter_ms = f64_at(&j, &["end", "sum_received", "jitter_ms"]);
    assert!(
        (jitter_ms - ours.jitter_s() * 1e3).abs() < 1e-9,
        "{jitter_ms} vs {}",
        ours.jitter_s()
    );
    let client = report.client_results.expect("client results");
    assert_eq!(client.streams[0].packets as u64, sent_packets);
}

#[test]
fn iperf3_udp_client_reports_the_loss_our_server_made_v4() {
    udp_loss_is_reported_identically("127.0.0.1:0", "127.0.0.1", &[]);
}

#[test]
fn iperf3_udp_client_with_64bit_counters_over_v6() {
    udp_loss_is_reported_identically("[::1]:0", "::1", &["-6", "--udp-counters-64bit"]);
}

#[test]
fn iperf3_reverse_tcp_client_receives_what_our_server_sent() {
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let run = Iperf3::spawn(&[
        "-c",
        "127.0.0.1",
        "-p",
        &server.port(),
        "-J",
        "-R",
        "-t",
        "1",
    ])
    .finish(WAIT);
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    let j = run.json();
    let report = only_report(&server);
    let sent = u64_at(&j, &["end", "sum_sent", "bytes"]);
    let received = u64_at(&j, &["end", "sum_received", "bytes"]);
    assert_eq!(sent, counted(&report, true));
    assert!(
        received > 0 && received <= sent,
        "received {received}, sent {sent}"
    );
    assert_eq!(report.client_results.unwrap().streams[0].bytes, received);
}

#[test]
fn iperf3_bidir_two_streams_each_way_v6() {
    let server = OurServer::start("[::1]:0", ServerOptions::default());
    let args = [
        "-c",
        "::1",
        "-6",
        "-p",
        &server.port(),
        "-J",
        "--bidir",
        "-P",
        "2",
        "-t",
        "1",
    ];
    let run = Iperf3::spawn(&args).finish(WAIT);
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    let j = run.json();
    let report = only_report(&server);
    assert_eq!(report.streams.len(), 4);
    let ids: Vec<i64> = report.streams.iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![1, 3, 4, 5]);
    // Client → server: the client's count equals ours (we drain after TEST_END).
    let up_sent = u64_at(&j, &["end", "sum_sent", "bytes"]);
    let up_received = u64_at(&j, &["end", "sum_received", "bytes"]);
    assert_eq!(up_received, counted(&report, false));
    assert_eq!(up_sent, up_received);
    // Server → client: what the client says we sent is what we sent.
    let down_sent = u64_at(&j, &["end", "sum_sent_bidir_reverse", "bytes"]);
    assert_eq!(down_sent, counted(&report, true));
    assert!(down_sent > 0 && up_sent > 0);
}

#[test]
fn iperf3_udp_reverse_64bit_counters_client_sees_our_datagrams() {
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let args = [
        "-c",
        "127.0.0.1",
        "-p",
        &server.port(),
        "-J",
        "-u",
        "-R",
        "-b",
        "5M",
        "-l",
        "1000",
        "-t",
        "1",
        "--udp-counters-64bit",
        // A 2 MB receive buffer holds 3 s of this stream: a client descheduled on a
        // loaded machine (85 of 625 datagrams lost with the default buffer and a busy
        // loop on one core) still loses nothing, so "no loss" stays exact.
        "-w",
        "2M",
    ];
    let run = Iperf3::spawn(&args).finish(WAIT);
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    let j = run.json();
    let report = only_report(&server);
    let sent_by_us = report.streams[0].outcome.sent_packets;
    assert_eq!(u64_at(&j, &["end", "sum_sent", "packets"]), sent_by_us);
    // ~5 Mbit/s of 1000-byte datagrams for 1 s: about 625.
    assert!((500..=700).contains(&sent_by_us), "{sent_by_us}");
    // The iperf3 client stops counting at TEST_END; it saw (almost) all of them in order.
    let client = report.client_results.unwrap();
    let highest = client.streams[0].packets as u64;
    assert!(
        highest + 5 >= sent_by_us && highest <= sent_by_us,
        "{highest} of {sent_by_us}"
    );
    assert_eq!(client.streams[0].errors, 0, "no loss on loopback");
}

#[test]
fn second_iperf3_client_is_told_the_server_is_busy() {
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let first = Iperf3::spawn(&[
        "-c",
        "127.0.0.1",
        "-p",
        &server.port(),
        "-t",
        "1",
        "-b",
        "10M",
    ]);
    // Wait until the first test is running (its parameters arrived).
    std::thread::sleep(Duration::from_millis(300));
    let second = Iperf3::spawn(&["-c", "127.0.0.1", "-p", &server.port(), "-t", "1"]).finish(WAIT);
    assert!(!second.success);
    assert!(
        second.stderr.contains("busy") || second.stdout.contains("busy"),
        "{}\n{}",
        second.stdout,
        second.stderr
    );
    let first = first.finish(WAIT);
    assert!(
        first.success,
        "the running test was not affected: {}",
        first.stderr
    );
    assert_eq!(server.wait_reports(1)[0].error, None);
}

#[test]
fn our_server_survives_a_killed_iperf3_client_and_serves_the_next() {
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let victims = [
        vec!["-t", "30"],
        vec!["-u", "-b", "10M", "-t", "30"],
        vec!["-R", "-t", "30"],
    ];
    for (i, args) in victims.into_iter().enumerate() {
        let mut full = vec!["-c", "127.0.0.1", "-p", "0"];
        let port = server.port();
        full[3] = &port;
        full.extend_from_slice(&args);
        let mut victim = Iperf3::spawn(&full);
        std::thread::sleep(Duration::from_millis(400));
        victim.kill(); // SIGKILL mid-test
                       // The server notices at once (EOF on the control connection) and frees itself.
        assert_eq!(
            server.wait_reports(i + 1).len(),
            i + 1,
            "session {i} did not end"
        );
    }
    let next =
        Iperf3::spawn(&["-c", "127.0.0.1", "-p", &server.port(), "-J", "-n", "10M"]).finish(WAIT);
    assert!(next.success, "{}\n{}", next.stdout, next.stderr);
    let reports = server.wait_reports(4);
    assert_eq!(reports.len(), 4, "{reports:?}");
    assert!(
        reports[..3].iter().all(|r| r.error.is_some()),
        "{reports:?}"
    );
    assert_eq!(reports[3].error, None);
    assert_eq!(
        u64_at(&next.json(), &["end", "sum_received", "bytes"]),
        counted(&reports[3], false)
    );
}

fn omit_run(reverse: bool) {
    let server = OurServer::start("127.0.0.1:0", ServerOptions::default());
    let port = server.port();
    let mut args = vec![
        "-c",
        "127.0.0.1",
        "-p",
        &port,
        "-J",
        "-O",
        "1",
        "-t",
        "1",
        "-b",
        "80M",
    ];
    if reverse {
        args.push("-R");
    }
    let run = Iperf3::spawn(&args).finish(WAIT);
    assert!(run.success, "{}\n{}", run.stdout, run.stderr);
    let j = run.json();
    let sent = u64_at(&j, &["end", "sum_sent", "bytes"]) as f64;
    let received = u64_at(&j, &["end", "sum_received", "bytes"]) as f64;
    // 1 s at 80 Mbit/s after the omitted second: about 10 MB each side (20 MB if the
    // omitted second were counted). The two timers start a few ms apart.
    assert!(
        (8e6..12e6).contains(&sent),
        "reverse={reverse}: sent {sent}"
    );
    assert!(
        (received / sent - 1.0).abs() < 0.05,
        "reverse={reverse}: {received} vs {sent}"
    );
    assert_eq!(only_report(&server).params.unwrap().omit_s, 1);
}

#[test]
fn iperf3_omit_period_is_left_out_by_our_server_both_ways() {
    // Both directions at once: 2 s of traffic in all.
    let reverse = std::thread::spawn(|| omit_run(true));
    omit_run(false);
    reverse.join().unwrap();
}
