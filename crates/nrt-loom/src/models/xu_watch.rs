//! The sequence-watch handshake (model of nrt/src/xu/unit.rs `watch_seq`
//! and `Shared::complete`): the watcher registers under the pending lock,
//! stores the count (`SeqCst`), fences (`SeqCst`) and reads `head`
//! (`Acquire`), firing at once (and unregistering) if its request is
//! done; the worker publishes `head + 1` (`Release`), fences (`SeqCst`)
//! and, if the count (`SeqCst`) says a watcher is registered, fires under
//! the lock those whose request is now below `head`. A watcher must fire
//! exactly once.

use super::{check, must_fail};
use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};
use crate::sync::{Arc, Mutex};
use loom::thread;

struct Unit {
    head: AtomicU64,
    pending: Mutex<Vec<u64>>,
    pending_count: AtomicUsize,
    fired: AtomicUsize,
}

impl Unit {
    fn watch_seq(&self, n: u64, fenced: bool) {
        let mut p = self.pending.lock().unwrap();
        p.push(n);
        self.pending_count.store(p.len(), Ordering::SeqCst);
        if fenced {
            fence(Ordering::SeqCst);
        }
        if n < self.head.load(Ordering::Acquire) {
            p.pop();
            self.pending_count.store(p.len(), Ordering::SeqCst);
            self.fired.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn complete(&self, n: u64) {
        self.head.store(n + 1, Ordering::Release);
        fence(Ordering::SeqCst);
        if self.pending_count.load(Ordering::SeqCst) > 0 {
            let mut p = self.pending.lock().unwrap();
            let head = self.head.load(Ordering::Acquire);
            let before = p.len();
            p.retain(|&w| w >= head);
            self.fired.fetch_add(before - p.len(), Ordering::Relaxed);
            self.pending_count.store(p.len(), Ordering::SeqCst);
        }
    }
}

fn watch_against_complete(fenced: bool) {
    let u = Arc::new(Unit {
        head: AtomicU64::new(1),
        pending: Mutex::new(Vec::new()),
        pending_count: AtomicUsize::new(0),
        fired: AtomicUsize::new(0),
    });
    let w = u.clone();
    let watcher = thread::spawn(move || w.watch_seq(1, fenced));
    let c = u.clone();
    let worker = thread::spawn(move || c.complete(1));
    watcher.join().unwrap();
    worker.join().unwrap();
    let fired = u.fired.load(Ordering::Relaxed);
    assert_eq!(
        fired, 1,
        "the watcher of a completed request fired {fired} times"
    );
}

#[test]
fn a_sequence_watcher_fires_exactly_once() {
    check(|| watch_against_complete(true));
}

/// Mutation: the watcher's fence between its registration and its read
/// of `head` left out.
#[test]
fn mutation_watch_without_its_fence_never_fires() {
    let msg = must_fail(|| watch_against_complete(false));
    assert!(msg.contains("fired 0 times"), "{msg}");
}
