//! nrt's `EventCount` (nrt/src/xu/signal.rs, shipped code): a waiter
//! registers (`waiters += 1`) and then reads the count; a notifier moves
//! the count and then reads the waiters, taking the lock and waking only
//! when one is registered. The same handshake is nrt-sim's `NqSignal`, the
//! notification queues' interrupt. loom's timed wait never times out, so
//! a lost wake-up shows as a deadlock.

use super::{check, must_abort};
use crate::event_count::EventCount;
use crate::sync::Arc;
use crate::sync::weakened_seqcst;
use loom::thread;
use std::time::Duration;

fn notify_against_wait() {
    let e = Arc::new(EventCount::new());
    let w = e.clone();
    let waiter = thread::spawn(move || w.wait(0, Duration::from_secs(3600)));
    let n = e.clone();
    let notifier = thread::spawn(move || n.notify());
    notifier.join().unwrap();
    assert_eq!(waiter.join().unwrap(), 1);
}

#[test]
fn a_notify_always_reaches_a_waiter() {
    check(notify_against_wait);
}

/// The weakened model, run in a child process by the mutation check.
#[test]
#[ignore = "run by mutation_weaker_handshake_deadlocks in a child process (loom aborts on a deadlock)"]
fn weakened_handshake() {
    weakened_seqcst(|| check(notify_against_wait));
}

/// Mutation: the four SeqCst operations of the handshake weakened to
/// AcqRel/Acquire.
#[test]
fn mutation_weaker_handshake_deadlocks() {
    must_abort("models::event_count::weakened_handshake", "deadlock");
}
