//! NQ publish and the harvest's read (model of nrt-sim/src/nq.rs
//! `NqState::publish` and `NqView::read` / `read_and_consume`): the one
//! producer loads `produced` (`Relaxed`, it owns it) and `consumed`
//! (`Acquire`), drops the record when the consumer is a ring behind,
//! writes the slot with the phase bit of its pass and publishes
//! `produced + 1` (`Release`); the consumer loads `produced` (`Acquire`),
//! copies the slots and stores `consumed` (`Release`). The slot bytes are
//! plain memory, here loom cells, so loom reports any overlap of a slot's
//! write and read as a data race. A ring of one slot and two records makes
//! the second record reuse the slot the harvest reads.

use super::{check, must_fail};
use crate::sync::Arc;
use crate::sync::atomic::{AtomicU64, Ordering};
use loom::cell::UnsafeCell;
use loom::thread;

const CAP: u64 = 1;
const PHASE: u64 = 1 << 63;

struct Nq {
    slots: [UnsafeCell<u64>; CAP as usize],
    produced: AtomicU64,
    consumed: AtomicU64,
}

#[derive(Clone, Copy)]
struct Orders {
    publish: Ordering,
    consume: Ordering,
}

const SHIPPED: Orders = Orders {
    publish: Ordering::Release,
    consume: Ordering::Release,
};

impl Nq {
    /// `NqState::publish`: false if the record was dropped (ring full).
    fn publish(&self, rec: u64, o: Orders) -> bool {
        let idx = self.produced.load(Ordering::Relaxed);
        if idx - self.consumed.load(Ordering::Acquire).min(idx) >= CAP {
            return false;
        }
        let even = (idx / CAP) % 2 == 0;
        let word = if even { rec | PHASE } else { rec & !PHASE };
        self.slots[(idx % CAP) as usize].with_mut(|p| unsafe { *p = word });
        self.produced.store(idx + 1, o.publish);
        true
    }

    /// `NqView::read_and_consume` of what is there from `from`.
    fn read(&self, from: u64, o: Orders, out: &mut Vec<u64>) -> u64 {
        let produced = self.produced.load(Ordering::Acquire);
        let mut n = from;
        while n < produced {
            let word = self.slots[(n % CAP) as usize].with(|p| unsafe { *p });
            let even = (n / CAP) % 2 == 0;
            assert_eq!(
                word & PHASE != 0,
                even,
                "record {n} read with the phase bit of another pass"
            );
            out.push(word & !PHASE);
            n += 1;
        }
        if n > from {
            self.consumed.store(n, o.consume);
        }
        n
    }
}

fn publish_and_harvest(o: Orders) {
    let nq = Arc::new(Nq {
        slots: [UnsafeCell::new(0)],
        produced: AtomicU64::new(0),
        consumed: AtomicU64::new(0),
    });
    let q = nq.clone();
    let device = thread::spawn(move || {
        let mut sent = Vec::new();
        for rec in [11u64, 22] {
            if q.publish(rec, o) {
                sent.push(rec);
            }
        }
        sent
    });
    let harvest = thread::spawn(move || {
        let mut got = Vec::new();
        nq.read(0, o, &mut got);
        (nq, got)
    });
    let sent = device.join().unwrap();
    let (nq, mut got) = harvest.join().unwrap();
    let from = got.len() as u64;
    nq.read(from, o, &mut got);
    assert_eq!(
        got, sent,
        "the harvest lost, duplicated or misread a record"
    );
}

#[test]
fn records_are_read_once_whole_and_in_order() {
    check(|| publish_and_harvest(SHIPPED));
}

/// Mutation: `produced` published `Relaxed` (the harvest may read the slot
/// before its bytes are written).
#[test]
fn mutation_relaxed_publish_races_the_slot() {
    must_fail(|| {
        publish_and_harvest(Orders {
            publish: Ordering::Relaxed,
            ..SHIPPED
        })
    });
}

/// Mutation: `consumed` stored `Relaxed` (the producer may rewrite a slot
/// the harvest is still copying).
#[test]
fn mutation_relaxed_consume_races_the_slot() {
    must_fail(|| {
        publish_and_harvest(Orders {
            consume: Ordering::Relaxed,
            ..SHIPPED
        })
    });
}
