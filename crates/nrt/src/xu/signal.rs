//! An event count: a counter that moves on every event plus a way to block
//! until it moves. The notifying side pays two atomic operations when
//! nobody waits; it takes the lock and wakes only when a waiter has
//! registered. Used for "work arrived" (submitter -> worker) and "a
//! request completed" (worker -> waiting host threads).

use crate::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use crate::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// See the module docs.
#[derive(Debug, Default)]
pub struct EventCount {
    count: AtomicU64,
    waiters: AtomicU32,
    lock: Mutex<()>,
    wake: Condvar,
}

impl EventCount {
    /// A new event count at 0 (usable in a `static`).
    #[cfg(not(loom))]
    pub const fn new() -> EventCount {
        EventCount {
            count: AtomicU64::new(0),
            waiters: AtomicU32::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// A new event count at 0 (loom's atomics are not `const`).
    #[cfg(loom)]
    pub fn new() -> EventCount {
        EventCount {
            count: AtomicU64::new(0),
            waiters: AtomicU32::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// The current count.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Moves the count and wakes every waiter.
    pub fn notify(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        // Pairs with `wait`: a waiter registers, then reads the count; the
        // notifier moves the count, then reads the waiters. Under SeqCst at
        // least one of the two sees the other, so no wake-up is lost.
        if self.waiters.load(Ordering::SeqCst) > 0 {
            drop(self.lock.lock().unwrap_or_else(|e| e.into_inner()));
            self.wake.notify_all();
        }
    }

    /// Blocks until the count differs from `seen` or `timeout` passes;
    /// returns the count. Allocation-free.
    pub fn wait(&self, seen: u64, timeout: Duration) -> u64 {
        let deadline = Instant::now().checked_add(timeout);
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let now = loop {
            let now = self.count.load(Ordering::SeqCst);
            if now != seen {
                break now;
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                break now;
            }
            guard = self
                .wake
                .wait_timeout(guard, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        drop(guard);
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        now
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_notify_wakes_a_blocked_waiter_and_a_timeout_returns_unchanged() {
        let e = Arc::new(EventCount::default());
        assert_eq!(e.wait(0, Duration::from_millis(1)), 0);
        let w = {
            let e = e.clone();
            std::thread::spawn(move || e.wait(0, Duration::from_secs(60)))
        };
        std::thread::sleep(Duration::from_millis(5));
        let t = Instant::now();
        e.notify();
        assert_eq!(w.join().unwrap(), 1);
        assert!(t.elapsed() < Duration::from_secs(30));
        // A stale `seen` returns at once.
        assert_eq!(e.wait(0, Duration::from_secs(60)), 1);
    }

    #[test]
    fn no_wake_up_is_lost_under_races() {
        let e = Arc::new(EventCount::default());
        let rounds = 2000u64;
        let waiter = {
            let e = e.clone();
            std::thread::spawn(move || {
                let mut seen = 0;
                while seen < rounds {
                    seen = e.wait(seen, Duration::from_secs(60));
                }
                seen
            })
        };
        for _ in 0..rounds {
            e.notify();
        }
        assert_eq!(waiter.join().unwrap(), rounds);
    }
}
