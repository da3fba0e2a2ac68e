//! Who may probe now: probes of one target never overlap (a second waits in a queue, or
//! is refused when it could not finish in time), at most `max_probes_per_client` run at
//! once for one scrape client and at most `max_concurrent_probes` over all. Also the
//! alternation of the family order per target.
//!
//! A target is the socket addresses a probe connects to (after lookup), not the text a
//! scrape gave: `127.1`, `0x7f.0.1` and `[::ffff:127.0.0.1]` are one target.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};

/// Most target addresses whose state is kept at once (their probe counts); beyond it a
/// new one waits for others' probes to end (with `allowed_targets = ["any"]` this bounds
/// memory).
pub const MAX_TRACKED_TARGETS: usize = 4096;

/// Most scrape clients whose probe permits are kept at once (clients with a probe
/// asked or running; each holds a connection, so the connection limit binds first).
pub const MAX_TRACKED_CLIENTS: usize = 4096;

/// Per target address: the number of probes run so far (even: IPv4 first, odd: IPv6
/// first).
type TargetSlot = Arc<tokio::sync::Mutex<u64>>;

pub struct Gate {
    global: Arc<Semaphore>,
    limit: usize,
    per_client: usize,
    targets: Mutex<HashMap<SocketAddr, TargetSlot>>,
    clients: Mutex<HashMap<IpAddr, Arc<Semaphore>>>,
    queued: AtomicI64,
}

/// Held while a probe runs.
#[derive(Debug)]
pub struct Admission {
    /// One per address the probe connects to, in address order.
    targets: Vec<OwnedMutexGuard<u64>>,
    _client: OwnedSemaphorePermit,
    _global: OwnedSemaphorePermit,
}

impl Admission {
    /// Whether this probe runs IPv6 first (the count of its first address decides);
    /// counts the probe at each of its addresses.
    pub fn v6_first(&mut self) -> bool {
        let n = self.targets.first().map(|t| **t).unwrap_or(0);
        for t in &mut self.targets {
            **t = t.wrapping_add(1);
        }
        n % 2 == 1
    }
}

/// One waiter in the queue gauge, taken off when dropped.
struct Queued<'a>(&'a AtomicI64);

impl<'a> Queued<'a> {
    fn new(n: &'a AtomicI64) -> Queued<'a> {
        n.fetch_add(1, Ordering::Relaxed);
        Queued(n)
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Why a probe was not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Another probe of the target (or too many probes overall) would not end in time.
    Busy(String),
}

/// The key a scrape client is counted under: its address, an IPv4-mapped one as the
/// IPv4 address (a dual-stack listener sees IPv4 peers so), an IPv6 one by its /64 (a
/// host usually holds a whole /64, so one address per connection would evade a
/// per-address limit).
pub fn client_key(peer: IpAddr) -> IpAddr {
    match peer.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        v4 => v4,
    }
}

/// A client key as messages name it: an IPv4 address, or an IPv6 /64 (`2001:db8::/64`).
pub fn client_name(key: IpAddr) -> String {
    match key {
        IpAddr::V6(_) => format!("{key}/64"),
        v4 => v4.to_string(),
    }
}

/// The entry of `key` in `map`, made when missing; entries nobody holds are forgotten
/// when the map is full, and `None` if it is still full.
fn entry<K: std::hash::Hash + Eq + Copy, V>(
    map: &Mutex<HashMap<K, Arc<V>>>,
    key: K,
    max: usize,
    make: impl FnOnce() -> V,
) -> Option<Arc<V>> {
    let mut map = map.lock().ok()?;
    if let Some(s) = map.get(&key) {
        return Some(s.clone());
    }
    if map.len() >= max {
        map.retain(|_, s| Arc::strong_count(s) > 1);
        if map.len() >= max {
            return None;
        }
    }
    let s = Arc::new(make());
    map.insert(key, s.clone());
    Some(s)
}

/// `addrs` as a message names them: `127.0.0.1:5301, [::1]:5301`.
fn names(addrs: &[SocketAddr]) -> String {
    addrs
        .iter()
        .map(SocketAddr::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Gate {
    /// At most `max_concurrent` probes at once, `per_client` of them for one client.
    pub fn new(max_concurrent: usize, per_client: usize) -> Gate {
        Gate {
            global: Arc::new(Semaphore::new(max_concurrent)),
            limit: max_concurrent,
            per_client: per_client.max(1),
            targets: Mutex::new(HashMap::new()),
            clients: Mutex::new(HashMap::new()),
            queued: AtomicI64::new(0),
        }
    }

    /// Probes waiting for their turn now.
    pub fn queued(&self) -> i64 {
        self.queued.load(Ordering::Relaxed)
    }

    /// Scrape clients and target addresses whose state is kept now.
    pub fn tracked(&self) -> (usize, usize) {
        fn len<K, V>(m: &Mutex<HashMap<K, V>>) -> usize {
            m.lock().map(|m| m.len()).unwrap_or(0)
        }
        (len(&self.clients), len(&self.targets))
    }

    /// Wait at most `wait` for a permit of `client` (its peer address), then for every
    /// address of `target` (the socket addresses the probe connects to) to be free, then
    /// for a global slot. Taken in this order, the addresses sorted: a client queued
    /// behind its own probes holds no target, and no two probes wait for each other.
    pub async fn admit(
        &self,
        target: &[SocketAddr],
        client: IpAddr,
        wait: Duration,
    ) -> Result<Admission, Refusal> {
        let mut addrs = target.to_vec();
        addrs.sort();
        addrs.dedup();
        let client = client_key(client);
        let permits = entry(&self.clients, client, MAX_TRACKED_CLIENTS, || {
            Semaphore::new(self.per_client)
        })
        .ok_or_else(|| {
            Refusal::Busy(format!(
                "{MAX_TRACKED_CLIENTS} scrape clients have probes asked; try again later"
            ))
        })?;
        let slots = addrs
            .iter()
            .map(|a| {
                entry(&self.targets, *a, MAX_TRACKED_TARGETS, Default::default).ok_or_else(|| {
                    Refusal::Busy(format!(
                        "{MAX_TRACKED_TARGETS} target addresses are being probed; try again later"
                    ))
                })
            })
            .collect::<Result<Vec<TargetSlot>, Refusal>>()?;
        // Counted while waiting, also when the request is dropped mid-wait (its client
        // hung up): the guard's drop takes it off.
        let queued = Queued::new(&self.queued);
        // How far the wait got, for the message when it runs out.
        let mut stage = 0;
        let got = tokio::time::timeout(wait, async {
            let client = permits.acquire_owned().await?;
            stage = 1;
            let mut targets = Vec::with_capacity(slots.len());
            for s in slots {
                targets.push(s.lock_owned().await);
            }
            stage = 2;
            let global = self.global.clone().acquire_owned().await?;
            Ok::<_, tokio::sync::AcquireError>(Admission {
                targets,
                _client: client,
                _global: global,
            })
        })
        .await;
        drop(queued);
        let waited = wait.as_secs_f64();
        match got {
            Ok(Ok(a)) => Ok(a),
            Ok(Err(_)) => Err(Refusal::Busy("the exporter is shutting down".into())),
            Err(_) => Err(Refusal::Busy(match stage {
                0 => format!(
                    "{} probes asked by {} (max_probes_per_client) still running after waiting {waited:.1} s, all the scrape timeout leaves; let them end first",
                    self.per_client,
                    client_name(client)
                ),
                1 => format!(
                    "another probe of '{}' still running after waiting {waited:.1} s, all the scrape timeout leaves; lengthen scrape_interval and scrape_timeout or shorten the module",
                    names(&addrs)
                ),
                _ => format!(
                    "{} probes of other targets (max_concurrent_probes) still running after waiting {waited:.1} s, all the scrape timeout leaves; lengthen scrape_interval and scrape_timeout or shorten the module",
                    self.limit
                ),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    fn at(s: &str) -> Vec<SocketAddr> {
        s.split(' ').map(|a| a.parse().unwrap()).collect()
    }

    const C: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    #[test]
    fn probes_of_one_target_never_overlap_and_alternate_families() {
        rt().block_on(async {
            let g = Gate::new(4, 4);
            let t = at("127.0.0.1:1");
            let mut a = g.admit(&t, C, Duration::from_secs(5)).await.unwrap();
            assert!(!a.v6_first());
            // While the first is held, a second of the same target cannot get in.
            let e = g.admit(&t, C, Duration::from_millis(1)).await;
            assert!(
                matches!(e, Err(Refusal::Busy(ref m)) if m.contains("another probe of '127.0.0.1:1'")),
                "{e:?}"
            );
            assert_eq!(g.queued(), 0);
            // Another target can.
            let _b = g.admit(&at("127.0.0.1:2"), C, Duration::from_millis(1)).await.unwrap();
            drop(a);
            let mut a = g.admit(&t, C, Duration::from_secs(5)).await.unwrap();
            assert!(a.v6_first());
            drop(a);
            let mut a = g.admit(&t, C, Duration::from_secs(5)).await.unwrap();
            assert!(!a.v6_first());
        });
    }

    #[test]
    fn a_target_is_each_address_it_connects_to() {
        rt().block_on(async {
            let g = Gate::new(4, 4);
            // A dual-stack name holds both its addresses …
            let _dual = g
                .admit(&at("[::1]:1 127.0.0.1:1"), C, Duration::from_secs(5))
                .await
                .unwrap();
            // … so the IPv4 address alone, or the IPv6 one, waits for it.
            for t in ["127.0.0.1:1", "[::1]:1"] {
                let e = g.admit(&at(t), C, Duration::from_millis(1)).await;
                assert!(
                    matches!(e, Err(Refusal::Busy(ref m)) if m.contains("another probe of")),
                    "{t}: {e:?}"
                );
            }
            // Another port of the same host is another target.
            assert!(g
                .admit(&at("127.0.0.1:2"), C, Duration::from_millis(1))
                .await
                .is_ok());
        });
    }

    #[test]
    fn one_client_cannot_take_every_probe_slot() {
        rt().block_on(async {
            let g = Gate::new(3, 2);
            let (a, b): (IpAddr, IpAddr) = ("127.0.0.2".parse().unwrap(), "127.0.0.3".parse().unwrap());
            let first = g.admit(&at("127.0.0.1:1"), a, Duration::from_secs(5)).await.unwrap();
            let second = g.admit(&at("127.0.0.1:2"), a, Duration::from_secs(5)).await.unwrap();
            // The client's third probe, of a free target, waits for its own two.
            let e = g.admit(&at("127.0.0.1:3"), a, Duration::from_millis(1)).await;
            assert!(
                matches!(e, Err(Refusal::Busy(ref m)) if m.contains("2 probes asked by 127.0.0.2 (max_probes_per_client)")),
                "{e:?}"
            );
            // Queued behind its own probes, it held no target: another client gets it.
            let other = g.admit(&at("127.0.0.1:3"), b, Duration::from_millis(1)).await.unwrap();
            // The total holds over clients.
            let e = g.admit(&at("127.0.0.1:4"), b, Duration::from_millis(1)).await;
            assert!(
                matches!(e, Err(Refusal::Busy(ref m)) if m.contains("3 probes of other targets (max_concurrent_probes)")),
                "{e:?}"
            );
            // IPv6 clients count by /64: another address of the prefix is the same client.
            let v6 = |s: &str| s.parse::<IpAddr>().unwrap();
            assert_eq!(client_key(v6("2001:db8::1")), client_key(v6("2001:db8::ffff:2")));
            assert_ne!(client_key(v6("2001:db8::1")), client_key(v6("2001:db8:0:1::1")));
            assert_eq!(client_key(v6("::ffff:127.0.0.2")), a);
            assert_eq!(client_name(client_key(v6("2001:db8::1"))), "2001:db8::/64");
            drop((first, second, other));
        });
    }

    #[test]
    fn a_waiter_dropped_while_queued_leaves_the_queue() {
        rt().block_on(async {
            let g = Gate::new(4, 4);
            let t = at("127.0.0.1:1");
            let _a = g.admit(&t, C, Duration::from_secs(5)).await.unwrap();
            {
                let waiting = g.admit(&t, C, Duration::from_secs(60));
                let mut waiting = std::pin::pin!(waiting);
                // One poll: it is queued behind `_a`; then it is dropped, as hyper drops
                // the handler of a client that hung up.
                let polled = futures_poll_once(waiting.as_mut()).await;
                assert!(polled.is_none());
                assert_eq!(g.queued(), 1);
            }
            assert_eq!(g.queued(), 0);
        });
    }

    /// Poll a future once: its output, or `None` when it is pending.
    async fn futures_poll_once<F: std::future::Future + Unpin>(f: F) -> Option<F::Output> {
        let mut f = f;
        std::future::poll_fn(|cx| {
            std::task::Poll::Ready(match std::pin::Pin::new(&mut f).poll(cx) {
                std::task::Poll::Ready(v) => Some(v),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }

    #[test]
    fn the_global_limit_holds_across_targets() {
        rt().block_on(async {
            let g = Gate::new(1, 1);
            let c2: IpAddr = "127.0.0.2".parse().unwrap();
            let a = g
                .admit(&at("127.0.0.1:1"), C, Duration::from_secs(5))
                .await
                .unwrap();
            assert!(g
                .admit(&at("127.0.0.1:2"), c2, Duration::from_millis(1))
                .await
                .is_err());
            drop(a);
            assert!(g
                .admit(&at("127.0.0.1:2"), c2, Duration::from_millis(1))
                .await
                .is_ok());
        });
    }
}
