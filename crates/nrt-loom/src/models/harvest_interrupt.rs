//! The harvest's block (nrt/src/exec/mod.rs `drive_harvest`): it reads the
//! ring's interrupt count *before* it sweeps the rings, and blocks only
//! until the count moves past that reading; the device publishes a record
//! (`produced`, `Release`) and then raises the interrupt (nrt-sim's
//! `NqState::push` then `NqSignal::raise`). A record written after the
//! sweep moves the count past what was read, so the block returns. The
//! interrupt is the shipped `EventCount` (the protocol of `NqSignal`).

use super::{check, must_abort};
use crate::event_count::EventCount;
use crate::sync::Arc;
use crate::sync::atomic::{AtomicU64, Ordering};
use loom::thread;
use std::time::Duration;

struct Ring {
    produced: AtomicU64,
    signal: EventCount,
}

fn harvest(count_before_sweep: bool) {
    let ring = Arc::new(Ring {
        produced: AtomicU64::new(0),
        signal: EventCount::new(),
    });
    let r = ring.clone();
    let device = thread::spawn(move || {
        r.produced.store(1, Ordering::Release);
        r.signal.notify();
    });
    let harvest = thread::spawn(move || {
        // Two passes: the first sweep, then one block and the sweep after it.
        let mut seen = count_before_sweep.then(|| ring.signal.count());
        let mut found = ring.produced.load(Ordering::Acquire) == 1;
        if !found {
            let before = match seen.take() {
                Some(s) => s,
                None => ring.signal.count(),
            };
            ring.signal.wait(before, Duration::from_secs(3600));
            found = ring.produced.load(Ordering::Acquire) == 1;
        }
        found
    });
    device.join().unwrap();
    let found = harvest.join().unwrap();
    assert!(found, "the harvest woke without the record");
}

#[test]
fn the_harvest_never_sleeps_through_a_record() {
    check(|| harvest(true));
}

/// The weakened model, run in a child process by the mutation check.
#[test]
#[ignore = "run by mutation_count_read_after_the_sweep_sleeps_forever in a child process (loom aborts on a deadlock)"]
fn count_after_the_sweep() {
    check(|| harvest(false));
}

/// Mutation: the interrupt count read after the sweep instead of before.
#[test]
fn mutation_count_read_after_the_sweep_sleeps_forever() {
    must_abort(
        "models::harvest_interrupt::count_after_the_sweep",
        "deadlock",
    );
}
