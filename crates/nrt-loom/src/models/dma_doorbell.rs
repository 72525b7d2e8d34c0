//! DMA tail publication and the walker's catch-up (model of nrt-sim's
//! `DmaQueue::ring_doorbell` / `write_reg` and `Shared::schedule_dma`, and
//! of the `Task::Dma` run in device/shared.rs with `dma::walk::run_queue`):
//! a doorbell adds to the tail (`SeqCst`) and queues a walk unless one is
//! queued (`queued`: a `SeqCst` load, then a `SeqCst` swap); the walk
//! clears `queued` (`SeqCst` store), reads the tail once (`SeqCst`),
//! walks up to it and publishes the head (`Release`). A doorbell whose add
//! the walk's tail read missed must find `queued` clear and queue another
//! walk, or its descriptors are stranded until the next doorbell.
//!
//! The walk's tail read was `Acquire` (and the doorbell's add `Release`)
//! until this model showed the stranding: the clear of `queued` and the
//! tail read could pass each other. On x86 the clear is a locked exchange,
//! so the reordering could not happen there; on weaker hardware it could.

use super::{check, must_fail};
use crate::sync::Arc;
use crate::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::thread;

struct Queue {
    tail: AtomicU64,
    head_pub: AtomicU64,
    queued: AtomicBool,
}

impl Queue {
    /// One walk task: returns nothing; publishes the head it reached.
    fn walk(&self, tail_read: Ordering) {
        self.queued.store(false, Ordering::SeqCst);
        let tail = self.tail.load(tail_read);
        let head = self.head_pub.load(Ordering::Acquire);
        if tail > head {
            self.head_pub.store(tail, Ordering::Release);
        }
    }

    /// `schedule_dma`: true when this call queued a walk.
    fn schedule(&self) -> bool {
        if self.queued.load(Ordering::SeqCst) {
            return false;
        }
        !self.queued.swap(true, Ordering::SeqCst)
    }
}

fn doorbell_against_walk(tail_read: Ordering) {
    // One descriptor rung and its walk queued, not yet run.
    let q = Arc::new(Queue {
        tail: AtomicU64::new(1),
        head_pub: AtomicU64::new(0),
        queued: AtomicBool::new(true),
    });
    let d = q.clone();
    let doorbell = thread::spawn(move || {
        d.tail.fetch_add(1, Ordering::SeqCst);
        d.schedule()
    });
    let w = q.clone();
    let walker = thread::spawn(move || w.walk(tail_read));
    walker.join().unwrap();
    if doorbell.join().unwrap() {
        q.walk(tail_read);
    }
    assert_eq!(
        q.head_pub.load(Ordering::Acquire),
        2,
        "a doorbell's descriptor was stranded: the walk missed its tail and the doorbell saw the walk still queued"
    );
}

/// Mutation: the walker's tail read `Acquire`, as shipped before this
/// model ran.
#[test]
fn mutation_acquire_tail_read_strands_a_doorbell() {
    let msg = must_fail(|| doorbell_against_walk(Ordering::Acquire));
    assert!(msg.contains("stranded"), "{msg}");
}

/// The tail read `SeqCst` (as `run_queue` does): the clear of
/// `queued` and the tail read are ordered, so the doorbell's add is seen
/// or its schedule finds the walk gone.
#[test]
fn a_doorbell_is_always_walked() {
    check(|| doorbell_against_walk(Ordering::SeqCst));
}
