//! The execution unit's request ring (model of nrt/src/xu/queue.rs): one
//! producer (submitters serialise on the unit's submit lock) and one
//! consumer (the worker). The producer loads `tail` (`Relaxed`, its own)
//! and `head` (`Acquire`), refuses when full, fills slot `tail % cap` and
//! publishes `tail + 1` (`Release`); the consumer loads `tail`
//! (`Acquire`), takes slot `head % cap`, runs it and publishes `head + 1`
//! (`Release`). The shipped slots are uncontended mutexes (the crate
//! forbids `unsafe`); here they are loom cells, so the cursors alone must
//! carry the hand-off and loom reports a slot touched by both sides at
//! once as a data race.

use super::{check, must_fail};
use crate::sync::Arc;
use crate::sync::atomic::{AtomicU64, Ordering};
use loom::cell::UnsafeCell;
use loom::thread;

const CAP: u64 = 1;

struct Ring {
    slots: [UnsafeCell<Option<u32>>; CAP as usize],
    head: AtomicU64,
    tail: AtomicU64,
}

#[derive(Clone, Copy)]
struct Orders {
    publish_tail: Ordering,
    publish_head: Ordering,
}

const SHIPPED: Orders = Orders {
    publish_tail: Ordering::Release,
    publish_head: Ordering::Release,
};

impl Ring {
    fn push(&self, item: u32, o: Orders) -> bool {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        if tail - head >= CAP {
            return false;
        }
        self.slots[(tail % CAP) as usize].with_mut(|s| unsafe {
            assert!((*s).is_none(), "a slot was overwritten before it was taken");
            *s = Some(item);
        });
        self.tail.store(tail + 1, o.publish_tail);
        true
    }

    fn take_and_complete(&self, o: Orders) -> Option<u32> {
        let head = self.head.load(Ordering::Relaxed);
        if head == self.tail.load(Ordering::Acquire) {
            return None;
        }
        let item = self.slots[(head % CAP) as usize].with_mut(|s| unsafe { (*s).take() });
        assert!(item.is_some(), "a published slot was empty");
        self.head.store(head + 1, o.publish_head);
        item
    }
}

fn producer_against_worker(o: Orders) {
    let r = Arc::new(Ring {
        slots: [UnsafeCell::new(None)],
        head: AtomicU64::new(1),
        tail: AtomicU64::new(1),
    });
    let p = r.clone();
    let producer = thread::spawn(move || (1..=2u32).filter(|&i| p.push(i, o)).collect::<Vec<_>>());
    let c = r.clone();
    let worker = thread::spawn(move || {
        let mut got = Vec::new();
        for _ in 0..2 {
            got.extend(c.take_and_complete(o));
        }
        got
    });
    let sent = producer.join().unwrap();
    let mut got = worker.join().unwrap();
    while let Some(i) = r.take_and_complete(o) {
        got.push(i);
    }
    assert_eq!(got, sent, "requests lost, duplicated or reordered");
}

#[test]
fn every_request_is_handed_over_once_in_order() {
    check(|| producer_against_worker(SHIPPED));
}

/// Mutation: `tail` published `Relaxed` (the worker may read the slot
/// before the producer's write).
#[test]
fn mutation_relaxed_tail_races_the_slot() {
    must_fail(|| {
        producer_against_worker(Orders {
            publish_tail: Ordering::Relaxed,
            ..SHIPPED
        })
    });
}

/// Mutation: `head` published `Relaxed` (the producer may refill a slot
/// the worker is still reading).
#[test]
fn mutation_relaxed_head_races_the_slot() {
    must_fail(|| {
        producer_against_worker(Orders {
            publish_head: Ordering::Relaxed,
            ..SHIPPED
        })
    });
}
