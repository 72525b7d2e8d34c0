//! The deterministic scheduler's drain claim and pending count (model of
//! nrt-sim/src/scheduler.rs: `submit` -> `drain_here` and `drain_from`'s
//! end). A submitter queues its task under the queue lock, stores the
//! count (`Release`), fences (`SeqCst`) and tries the claim
//! (`compare_exchange`, `SeqCst`); the drainer, finding the count zero
//! (`SeqCst` load), lets the claim go (`SeqCst` store), looks at the count
//! once more (`SeqCst`) and, if a task arrived, tries to take the claim
//! back. A task must never be stranded in the queue with nobody draining,
//! and only the claim holder runs tasks.

use super::{check, must_fail};
use crate::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::sync::{Arc, Mutex};
use loom::thread;

struct Sched {
    queue: Mutex<Vec<u32>>,
    pending: AtomicUsize,
    draining: AtomicBool,
    ran: AtomicUsize,
    running: AtomicBool,
}

#[derive(Clone, Copy)]
struct Orders {
    /// The drainer's letting go of the claim.
    release: Ordering,
    /// The drainer's looks at the count around it.
    look: Ordering,
}

const SHIPPED: Orders = Orders {
    release: Ordering::SeqCst,
    look: Ordering::SeqCst,
};

impl Sched {
    fn take_claim(&self) -> bool {
        self.draining
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// `drain_from` with the claim held: run the queue until it is empty,
    /// then the release-and-look-again end.
    fn drain(&self, o: Orders) {
        loop {
            if self.pending.load(o.look) == 0 {
                self.draining.store(false, o.release);
                if self.pending.load(o.look) == 0 {
                    return;
                }
                if !self.take_claim() {
                    return;
                }
                continue;
            }
            let batch = std::mem::take(&mut *self.queue.lock().unwrap());
            self.pending.store(0, Ordering::Release);
            for _t in batch {
                assert!(
                    !self.running.swap(true, Ordering::Relaxed),
                    "two threads ran tasks at once"
                );
                self.ran.fetch_add(1, Ordering::Relaxed);
                self.running.store(false, Ordering::Relaxed);
            }
        }
    }

    /// `submit` of one task from a thread that is not draining.
    fn submit(&self, task: u32, o: Orders) {
        {
            let mut q = self.queue.lock().unwrap();
            q.push(task);
            self.pending.store(q.len(), Ordering::Release);
        }
        crate::sync::atomic::fence(Ordering::SeqCst);
        if self.take_claim() {
            self.drain(o);
        }
    }
}

fn submit_against_drain_end(o: Orders) {
    let s = Arc::new(Sched {
        queue: Mutex::new(Vec::new()),
        pending: AtomicUsize::new(0),
        draining: AtomicBool::new(true),
        ran: AtomicUsize::new(0),
        running: AtomicBool::new(false),
    });
    let sub = s.clone();
    let submitter = thread::spawn(move || sub.submit(7, o));
    // The drainer holds the claim and has run everything queued so far.
    let d = s.clone();
    let drainer = thread::spawn(move || d.drain(o));
    submitter.join().unwrap();
    drainer.join().unwrap();
    assert_eq!(
        s.ran.load(Ordering::Relaxed),
        1,
        "a task was stranded: queued with nobody draining"
    );
}

#[test]
fn no_task_is_stranded_at_a_drains_end() {
    check(|| submit_against_drain_end(SHIPPED));
}

/// Mutation: the drainer's release of the claim and its looks at the
/// count weakened from SeqCst to Release / Acquire.
#[test]
fn mutation_weaker_release_and_look_strand_a_task() {
    let msg = must_fail(|| {
        submit_against_drain_end(Orders {
            release: Ordering::Release,
            look: Ordering::Acquire,
        })
    });
    assert!(msg.contains("stranded"), "{msg}");
}
