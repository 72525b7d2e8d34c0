//! The death of an execution unit's worker (model of nrt/src/xu/unit.rs
//! `Shared::die` against `ExecUnit::wait`): the dying worker's guard
//! completes the request it held and every queued one (`head` published
//! `Release` for each), then publishes `dead` (`SeqCst`) and notifies the
//! done event count (shipped); a waiter for the last request reads
//! `head` (`Acquire`), then `dead` (`SeqCst`), and, seeing it dead, reads
//! `head` again before it reports that the request can never complete.
//! The waiter must return, and with the request completed.

use super::{check, must_fail};
use crate::event_count::EventCount;
use crate::sync::Arc;
use crate::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use loom::thread;
use std::time::Duration;

struct Unit {
    head: AtomicU64,
    dead: AtomicBool,
    done: EventCount,
}

/// Requests 1 (held by the worker) and 2 (queued).
const LAST: u64 = 2;

impl Unit {
    fn die(&self) {
        for n in 1..=LAST {
            self.head.store(n + 1, Ordering::Release);
        }
        self.dead.store(true, Ordering::SeqCst);
        self.done.notify();
    }

    /// `Ok(true)`: completed; `Err`: reported as never completing.
    fn wait(&self, n: u64, reread: bool) -> Result<bool, ()> {
        loop {
            let seen = self.done.count();
            if n < self.head.load(Ordering::Acquire) {
                return Ok(true);
            }
            if self.dead.load(Ordering::SeqCst) {
                if reread && n < self.head.load(Ordering::Acquire) {
                    return Ok(true);
                }
                return Err(());
            }
            self.done.wait(seen, Duration::from_secs(3600));
        }
    }
}

fn die_against_wait(reread: bool) {
    let u = Arc::new(Unit { head: AtomicU64::new(1), dead: AtomicBool::new(false), done: EventCount::new() });
    let w = u.clone();
    let waiter = thread::spawn(move || w.wait(LAST, reread));
    let d = u.clone();
    let worker = thread::spawn(move || d.die());
    worker.join().unwrap();
    let got = waiter.join().unwrap();
    assert_eq!(got, Ok(true), "the waiter of a request the dead worker completed got {got:?}");
}

#[test]
fn a_waiter_of_a_dead_worker_returns_with_its_request_completed() {
    check(|| die_against_wait(true));
}

/// Mutation: the waiter trusts the `head` it read before it saw `dead`.
#[test]
fn mutation_no_second_look_at_head_reports_a_completed_request_lost() {
    let msg = must_fail(|| die_against_wait(false));
    assert!(msg.contains("got Err(())"), "{msg}");
}
