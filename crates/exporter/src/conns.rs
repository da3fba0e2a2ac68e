//! Connections open at once, in total and per client (its address, an IPv6 one by /64,
//! as [`crate::gate::client_key`]): a peer that opens connections and sends nothing
//! (slowloris) takes its own share only, so it cannot keep another address from
//! `/metrics` or `/probe`. Each connection is also held to the header read timeout and
//! the connection age (`server`).

use crate::gate::{client_key, client_name};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// The open connections, counted.
pub struct Conns {
    max_total: usize,
    max_per_client: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    total: usize,
    /// Client key → its open connections; an entry leaves at zero, so the map holds at
    /// most `max_total` entries.
    per_client: HashMap<IpAddr, usize>,
}

/// Why a connection was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnRefusal {
    #[error("the exporter is busy: {max} connections are open from {}, the most one client may hold; close some (or wait for idle ones to time out) and try again", client_name(*client))]
    Client { client: IpAddr, max: usize },
    #[error("the exporter is busy: all its {max} connections are open; try again shortly")]
    Total { max: usize },
}

/// One open connection, counted until dropped.
pub struct ConnSlot {
    conns: Arc<Conns>,
    client: IpAddr,
}

impl Drop for ConnSlot {
    fn drop(&mut self) {
        if let Ok(mut o) = self.conns.open.lock() {
            o.total = o.total.saturating_sub(1);
            if let Some(n) = o.per_client.get_mut(&self.client) {
                *n -= 1;
                if *n == 0 {
                    o.per_client.remove(&self.client);
                }
            }
        }
    }
}

impl Conns {
    pub fn new(max_total: usize, max_per_client: usize) -> Arc<Conns> {
        Arc::new(Conns {
            max_total,
            max_per_client: max_per_client.min(max_total),
            open: Mutex::new(Open::default()),
        })
    }

    /// Count a connection from `peer`, or say why not.
    pub fn admit(self: &Arc<Conns>, peer: IpAddr) -> Result<ConnSlot, ConnRefusal> {
        let client = client_key(peer);
        let mut o = self.open.lock().map_err(|_| ConnRefusal::Total {
            max: self.max_total,
        })?;
        let mine = o.per_client.get(&client).copied().unwrap_or(0);
        if mine >= self.max_per_client {
            return Err(ConnRefusal::Client {
                client,
                max: self.max_per_client,
            });
        }
        if o.total >= self.max_total {
            return Err(ConnRefusal::Total {
                max: self.max_total,
            });
        }
        o.total += 1;
        *o.per_client.entry(client).or_insert(0) += 1;
        Ok(ConnSlot {
            conns: self.clone(),
            client,
        })
    }

    /// Connections open now: in total, and the number of clients holding them.
    pub fn open(&self) -> (usize, usize) {
        self.open
            .lock()
            .map(|o| (o.total, o.per_client.len()))
            .unwrap_or((0, 0))
    }
}

/// The whole HTTP answer to a connection refused on accept: a 503 that fits one write
/// into an empty socket buffer, closing the connection.
pub fn refusal_response(why: &ConnRefusal) -> Vec<u8> {
    let body = format!("{why}\n");
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn connections_are_limited_per_client_and_in_total() {
        let c = Conns::new(5, 2);
        let a1 = c.admit(ip("127.0.0.2")).unwrap();
        let _a2 = c.admit(ip("::ffff:127.0.0.2")).unwrap();
        // The third from one client is refused; another client still gets in.
        assert_eq!(
            c.admit(ip("127.0.0.2")).err(),
            Some(ConnRefusal::Client {
                client: ip("127.0.0.2"),
                max: 2
            })
        );
        let _b1 = c.admit(ip("2001:db8::1")).unwrap();
        // The same /64 is the same client.
        let _b2 = c.admit(ip("2001:db8::2")).unwrap();
        let e = c.admit(ip("2001:db8::3")).err().unwrap().to_string();
        assert!(
            e.starts_with("the exporter is busy: 2 connections are open from 2001:db8::/64, "),
            "{e}"
        );
        let _d = c.admit(ip("127.0.0.4")).unwrap();
        assert_eq!(c.open(), (5, 3));
        assert_eq!(
            c.admit(ip("127.0.0.5")).err(),
            Some(ConnRefusal::Total { max: 5 })
        );
        // A closed connection frees its place, and a client with none leaves the map.
        drop(a1);
        assert_eq!(c.open(), (4, 3));
        let _e = c.admit(ip("127.0.0.5")).unwrap();
        let text = String::from_utf8(refusal_response(&ConnRefusal::Total { max: 5 })).unwrap();
        assert!(
            text.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
            "{text}"
        );
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.contains(&format!("content-length: {}", body.len())),
            "{text}"
        );
    }
}
