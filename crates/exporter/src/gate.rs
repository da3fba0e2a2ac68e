//! Who may probe now: probes of one target never overlap (a second waits in a queue, or
//! is refused when it could not finish in time), and at most `max_concurrent_probes` run
//! at once over all targets. Also the alternation of the family order per target.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};

/// Most targets whose state is kept at once (their probe counts); beyond it a new target
/// waits for others' probes to end (with `allowed_targets = ["any"]` this bounds memory).
pub const MAX_TRACKED_TARGETS: usize = 4096;

/// Per target: the number of probes run so far (even: IPv4 first, odd: IPv6 first).
type TargetSlot = Arc<tokio::sync::Mutex<u64>>;

pub struct Gate {
    global: Arc<Semaphore>,
    limit: usize,
    targets: Mutex<HashMap<String, TargetSlot>>,
    queued: AtomicI64,
}

/// Held while a probe runs.
pub struct Admission {
    target: OwnedMutexGuard<u64>,
    _global: OwnedSemaphorePermit,
}

impl Admission {
    /// Whether this probe runs IPv6 first; counts the probe.
    pub fn v6_first(&mut self) -> bool {
        let n = *self.target;
        *self.target = n.wrapping_add(1);
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

impl Gate {
    pub fn new(max_concurrent: usize) -> Gate {
        Gate {
            global: Arc::new(Semaphore::new(max_concurrent)),
            limit: max_concurrent,
            targets: Mutex::new(HashMap::new()),
            queued: AtomicI64::new(0),
        }
    }

    /// Probes waiting for their turn now.
    pub fn queued(&self) -> i64 {
        self.queued.load(Ordering::Relaxed)
    }

    fn slot(&self, key: &str) -> Result<TargetSlot, Refusal> {
        let mut map = self
            .targets
            .lock()
            .map_err(|_| Refusal::Busy("internal state poisoned".into()))?;
        if let Some(s) = map.get(key) {
            return Ok(s.clone());
        }
        if map.len() >= MAX_TRACKED_TARGETS {
            // Forget targets nobody is probing (their order restarts with IPv4).
            map.retain(|_, s| Arc::strong_count(s) > 1);
            if map.len() >= MAX_TRACKED_TARGETS {
                return Err(Refusal::Busy(format!(
                    "{MAX_TRACKED_TARGETS} targets are being probed; try again later"
                )));
            }
        }
        let s = TargetSlot::default();
        map.insert(key.to_string(), s.clone());
        Ok(s)
    }

    /// Wait at most `wait` for the target to be free and a global slot.
    pub async fn admit(&self, key: &str, wait: Duration) -> Result<Admission, Refusal> {
        let slot = self.slot(key)?;
        // Counted while waiting, also when the request is dropped mid-wait (its client
        // hung up): the guard's drop takes it off.
        let queued = Queued::new(&self.queued);
        let got = tokio::time::timeout(wait, async {
            let target = slot.lock_owned().await;
            let global = self.global.clone().acquire_owned().await;
            (target, global)
        })
        .await;
        drop(queued);
        match got {
            Ok((target, Ok(global))) => Ok(Admission {
                target,
                _global: global,
            }),
            Ok((_, Err(_))) => Err(Refusal::Busy("the exporter is shutting down".into())),
            Err(_) => Err(Refusal::Busy(format!(
                "another probe of '{key}' (or {} probes of other targets, max_concurrent_probes) still running after waiting {:.1} s, all the scrape timeout leaves; lengthen scrape_interval and scrape_timeout or shorten the module",
                self.limit,
                wait.as_secs_f64()
            ))),
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

    #[test]
    fn probes_of_one_target_never_overlap_and_alternate_families() {
        rt().block_on(async {
            let g = Gate::new(4);
            let mut a = g.admit("t", Duration::from_secs(5)).await.unwrap();
            assert!(!a.v6_first());
            // While the first is held, a second of the same target cannot get in.
            let e = g.admit("t", Duration::from_millis(1)).await;
            assert!(matches!(e, Err(Refusal::Busy(ref m)) if m.contains("another probe of 't'")));
            assert_eq!(g.queued(), 0);
            // Another target can.
            let _b = g.admit("u", Duration::from_millis(1)).await.unwrap();
            drop(a);
            let mut a = g.admit("t", Duration::from_secs(5)).await.unwrap();
            assert!(a.v6_first());
            drop(a);
            let mut a = g.admit("t", Duration::from_secs(5)).await.unwrap();
            assert!(!a.v6_first());
        });
    }

    #[test]
    fn a_waiter_dropped_while_queued_leaves_the_queue() {
        rt().block_on(async {
            let g = Gate::new(4);
            let _a = g.admit("t", Duration::from_secs(5)).await.unwrap();
            {
                let waiting = g.admit("t", Duration::from_secs(60));
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
            let g = Gate::new(1);
            let a = g.admit("t", Duration::from_secs(5)).await.unwrap();
            assert!(g.admit("u", Duration::from_millis(1)).await.is_err());
            drop(a);
            assert!(g.admit("u", Duration::from_millis(1)).await.is_ok());
        });
    }
}
