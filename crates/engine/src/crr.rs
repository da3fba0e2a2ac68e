//! tcp-crr (Netperf TCP_CRR): one TCP connection per transaction. The client connects,
//! writes the data binding and one request, reads one response and the server's close,
//! then closes; the server accepts one connection at a time, checks the binding, answers
//! and closes first.
//!
//! TIME_WAIT: the side that closes first keeps each connection's 4-tuple in TIME_WAIT
//! (60 s on Linux). Netperf's client closes (or races the server) and so rotates its own
//! ports; a fast loop then runs out of ephemeral ports (~28 000 ports / 60 s ≈ 470
//! connections/s sustained). Here the server closes first and the client closes only
//! after the server's FIN has arrived, so TIME_WAIT is held by the server and the
//! client's port is free the moment its close is acknowledged: a run of any length never
//! exhausts the client's ephemeral ports. (On the server the TIME_WAIT tuples all share
//! its data port and differ by the client's port; a new SYN on a tuple still in
//! TIME_WAIT is accepted by the server's kernel, RFC 6191 with timestamps.)

use crate::data::{Outcome, SendBound, Shared, POLL};
use crate::tcp::{count_transaction, pattern, read_full, timed_out, write_full};
use crate::DataBinding;
use measure::LatencyHistogram;
use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wire::spec::SocketOpts;

/// The run metadata key that says where TIME_WAIT goes, and its value.
pub const TIME_WAIT_KEY: &str = "tcp_crr.time_wait";
pub const TIME_WAIT_HOLDER: &str = "held by the server; the client's ports are reusable at once";

/// How long one connection may take to be established before the run stops with an
/// error (as the data connections of the other tests).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long the server waits for a new connection's binding bytes: a stranger that
/// connects and sends nothing holds the server this long at most.
const BINDING_WAIT: Duration = Duration::from_secs(1);

/// Wait for the peer's close after the whole response. `Ok(false)`: abort.
fn read_eof(s: &mut TcpStream, shared: &Shared) -> io::Result<bool> {
    let mut drain_seen = None;
    let mut one = [0u8; 1];
    loop {
        match s.read(&mut one) {
            Ok(0) => return Ok(true),
            Ok(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the server sent more than one response",
                ))
            }
            Err(e) if timed_out(&e) => {
                if shared.should_quit(&mut drain_seen) {
                    return Ok(false);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// The client's loop: connect, binding + request, response, the server's close, close;
/// until the bound. Connect and transaction times per connection (both from just before
/// the socket is made).
pub(crate) fn client(
    server: SocketAddr,
    opts: SocketOpts,
    prefix: Vec<u8>,
    payload_bytes: usize,
    bound: SendBound,
    shared: Arc<Shared>,
) -> Outcome {
    // The binding and the request leave in one write (one segment when they fit).
    let mut req = prefix;
    req.extend(pattern(payload_bytes));
    let mut resp = vec![0u8; payload_bytes];
    let mut o = Outcome::default();
    let mut connect = LatencyHistogram::new();
    let mut txn = LatencyHistogram::new();
    o.io.insert(TIME_WAIT_KEY.into(), TIME_WAIT_HOLDER.into());
    loop {
        let t0 = Instant::now();
        if bound.done(o.transactions, t0) || shared.aborted() {
            break;
        }
        let mut s = match net::tcp_connect_again(server, &opts, CONNECT_TIMEOUT) {
            Ok(s) => s,
            Err(e) => {
                o.errors.push(format!(
                    "tcp-crr connection {}: {e}",
                    o.transactions.saturating_add(1)
                ));
                break;
            }
        };
        let t1 = Instant::now();
        let _ = s.set_write_timeout(Some(POLL));
        let _ = s.set_read_timeout(Some(POLL));
        let r = write_full(&mut s, &req, &shared)
            .and_then(|ok| Ok(ok && read_full(&mut s, &mut resp, &shared)?))
            .and_then(|ok| Ok(ok && read_eof(&mut s, &shared)?));
        match r {
            Ok(true) => {
                let t2 = Instant::now();
                let c_ns = t1.duration_since(t0).as_nanos().max(1) as u64;
                let t_ns = t2.duration_since(t0).as_nanos().max(1) as u64;
                connect.record(c_ns);
                txn.record(t_ns);
                count_transaction(&mut o, &shared, payload_bytes, t_ns, t2);
                if o.transactions == 1 {
                    // What the kernel applied, read once, outside the timed span.
                    if let Ok(a) = net::read_applied(&s) {
                        o.io.extend(crate::sockopt::to_map(&a));
                    }
                }
            }
            Ok(false) => break,
            Err(e) => {
                o.errors.push(format!(
                    "tcp-crr connection {}: {e}",
                    o.transactions.saturating_add(1)
                ));
                break;
            }
        }
        // Dropped here, after the server's FIN: a passive close, no TIME_WAIT here.
    }
    o.last_send_ns = o.last_recv_ns;
    o.rtt = Some(txn);
    o.connect = Some(connect);
    o
}

/// The server's loop: accept one connection at a time until the client has finished
/// (drain), the run is aborted or `limit` transactions are answered (a count-bound
/// run: no connection beyond what the session admitted is answered). A connection
/// that does not start with the binding within [`BINDING_WAIT`] is closed uncounted.
pub(crate) fn server(
    l: TcpListener,
    binding: DataBinding,
    payload_bytes: usize,
    limit: Option<u64>,
    shared: Arc<Shared>,
) -> Outcome {
    let mut o = Outcome::default();
    if let Err(e) = net::set_accept_timeout(&l, Some(POLL)) {
        o.errors.push(format!("tcp-crr listener: {e}"));
        return o;
    }
    let mut buf = vec![0u8; payload_bytes];
    let (mut strangers, mut failed) = (0u64, 0u64);
    loop {
        if shared.aborted() || shared.drain.load(Relaxed) {
            break;
        }
        if limit.is_some_and(|n| o.transactions >= n) {
            break;
        }
        let mut s = match l.accept() {
            Ok((s, _)) => s,
            Err(e) if timed_out(&e) => continue,
            Err(e) => {
                o.errors.push(format!("tcp-crr accept: {e}"));
                break;
            }
        };
        let _ = s.set_write_timeout(Some(POLL));
        let _ = s.set_read_timeout(Some(POLL));
        if !bound_to_session(&mut s, &binding, &shared) {
            strangers += 1;
            continue;
        }
        let r = read_full(&mut s, &mut buf, &shared)
            .and_then(|ok| Ok(ok && write_full(&mut s, &buf, &shared)?));
        match r {
            Ok(true) => {
                o.transactions += 1;
                o.recv_packets += 1;
                o.sent_packets += 1;
                o.recv_bytes += payload_bytes as u64;
                o.sent_bytes += payload_bytes as u64;
                shared.add_recv(payload_bytes as u64, 1);
                shared.add_sent(payload_bytes as u64, 1);
                let now_ns = shared.ns_since_go(Instant::now());
                o.last_recv_ns = now_ns;
                o.last_send_ns = now_ns;
            }
            // The peer closed early, or the run is ending (the loop's head sees it).
            Ok(false) => {}
            Err(e) => {
                failed += 1;
                if failed == 1 {
                    o.errors.push(format!("tcp-crr responder: {e}"));
                }
            }
        }
        // Dropped: the server closes first and keeps the TIME_WAIT.
    }
    if failed > 1 {
        o.errors.push(format!(
            "tcp-crr responder: {failed} connections failed in all"
        ));
    }
    if strangers > 0 {
        o.io.insert("tcp_crr.refused_connections".into(), strangers.to_string());
    }
    o
}

/// Whether `s` starts with the session's binding bytes within [`BINDING_WAIT`].
fn bound_to_session(s: &mut TcpStream, binding: &DataBinding, shared: &Shared) -> bool {
    let deadline = Instant::now() + BINDING_WAIT;
    let mut got = vec![0u8; binding.prefix.len()];
    let mut off = 0;
    while off < got.len() {
        if Instant::now() >= deadline || shared.aborted() {
            return false;
        }
        match s.read(&mut got[off..]) {
            Ok(0) => return false,
            Ok(n) => off += n,
            Err(e) if timed_out(&e) => {}
            Err(_) => return false,
        }
    }
    binding.matches(&got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// One connection to `addr` that writes `bytes` and reads until the server closes:
    /// what it got back.
    fn connect_and_send(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
        let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
            return Vec::new();
        };
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = s.write_all(bytes);
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        got
    }

    /// A connection flood gets no more than the session admitted: connections without
    /// the session's binding are closed unanswered and uncounted, and a count-bound
    /// test answers exactly its count, then closes its listener.
    #[test]
    fn the_server_answers_only_bound_connections_and_no_more_than_the_count() {
        let (l, _) =
            net::tcp_listen("127.0.0.1:0".parse().unwrap(), &SocketOpts::default()).unwrap();
        let addr = l.local_addr().unwrap();
        let binding = DataBinding::keyless(0x0102_0304_0506_0708);
        let shared = Shared::new(Instant::now(), binding.token, None);
        let (sh, b) = (shared.clone(), binding.clone());
        let server = std::thread::spawn(move || server(l, b, 4, Some(3), sh));
        let request = |prefix: &[u8]| [prefix, &[9u8, 8, 7, 6][..]].concat();
        // Strangers: a wrong binding, and a connection that sends nothing (held for
        // BINDING_WAIT at most).
        assert!(connect_and_send(addr, &request(&[0; 8])).is_empty());
        assert!(connect_and_send(addr, &[]).is_empty());
        for _ in 0..3 {
            assert_eq!(
                connect_and_send(addr, &request(&binding.prefix)),
                [9, 8, 7, 6]
            );
        }
        // A fourth bound connection is not answered: refused, or reset with the
        // listener once the server has stopped.
        assert!(connect_and_send(addr, &request(&binding.prefix)).is_empty());
        shared.drain.store(true, Relaxed);
        let o = server.join().unwrap();
        assert_eq!(o.transactions, 3);
        assert_eq!((o.recv_bytes, o.sent_bytes), (12, 12));
        assert_eq!(o.io["tcp_crr.refused_connections"], "2");
        assert!(o.errors.is_empty(), "{:?}", o.errors);
    }

    /// The client's loop: one connection per transaction, connect time within its
    /// transaction's, and the statement of where TIME_WAIT goes in its settings.
    #[test]
    fn the_client_counts_one_connection_per_transaction() {
        let (l, _) =
            net::tcp_listen("127.0.0.1:0".parse().unwrap(), &SocketOpts::default()).unwrap();
        let addr = l.local_addr().unwrap();
        let binding = DataBinding::keyless(7);
        let shared = Shared::new(Instant::now(), binding.token, None);
        let (sh, b) = (shared.clone(), binding.clone());
        let server = std::thread::spawn(move || server(l, b, 16, Some(20), sh));
        let bound = SendBound {
            deadline: None,
            count: Some(20),
        };
        let o = client(
            addr,
            SocketOpts::default(),
            binding.prefix.clone(),
            16,
            bound,
            shared,
        );
        let s = server.join().unwrap();
        assert!(o.errors.is_empty(), "{:?}", o.errors);
        assert_eq!((o.transactions, s.transactions), (20, 20));
        let (c, t) = (o.connect.unwrap(), o.rtt.unwrap());
        assert_eq!((c.count(), t.count()), (20, 20));
        assert!(c.summary().max_ns <= t.summary().max_ns);
        assert!(c.summary().mean_ns <= t.summary().mean_ns);
        assert_eq!(o.io[TIME_WAIT_KEY], TIME_WAIT_HOLDER);
    }
}
