//! nrt-sim's `semaphore.rs` (shipped code): the quick-path take and the
//! dirty bits behind CTRL_ER's range reset.
//!
//! The take is the loop of `engine::sync::claim_plan`'s `SemTake` shape
//! (nrt-sim/src/engine/sync.rs): load the value (`Acquire`), check the
//! wait, compare-and-swap the updated value (`SeqCst` / `Acquire`),
//! re-checking the wait on every failure, then `touch_sem`. It runs here
//! on the shipped `SyncBlock`'s cell.

use super::{check, must_fail};
use crate::semaphore::SyncBlock;
use crate::sync::Arc;
use crate::sync::atomic::Ordering;
use crate::sync::weakened_seqcst;
use crate::wake::{Change, EngineWait, WaitKey, key_woken};
use loom::thread;

/// `claim_plan`'s take of one unit of semaphore `i` if it holds at least
/// one; true when taken.
fn take(sync: &SyncBlock, i: u32, now: u64) -> bool {
    let Some((cell, _time)) = sync.sem_register(i) else {
        return false;
    };
    let mut cur = cell.load(Ordering::Acquire);
    if cur < 1 {
        return false;
    }
    while let Err(actual) =
        cell.compare_exchange_weak(cur, cur - 1, Ordering::SeqCst, Ordering::Acquire)
    {
        cur = actual;
        if cur < 1 {
            return false;
        }
    }
    sync.touch_sem(i, now);
    true
}

/// The take with its compare-and-swap replaced by a store of the value
/// the check read (the mutation: check-then-act without atomicity).
fn take_by_store(sync: &SyncBlock, i: u32, now: u64) -> bool {
    let Some((cell, _)) = sync.sem_register(i) else {
        return false;
    };
    let cur = cell.load(Ordering::Acquire);
    if cur < 1 {
        return false;
    }
    cell.store(cur - 1, Ordering::SeqCst);
    sync.touch_sem(i, now);
    true
}

/// Two engines take one unit; a third waits for the semaphore to reach 0
/// and is woken by the taker through `word_sc`, as the quick path does.
fn two_takers(take: fn(&SyncBlock, u32, u64) -> bool) {
    let sync = Arc::new(SyncBlock::new(2, 1));
    sync.set_sem(0, 1, 0);
    let waiter = Arc::new(EngineWait::default());
    waiter.blocked_on(WaitKey::Sem(1));
    let takers: Vec<_> = (0..2u64)
        .map(|t| {
            let (s, w) = (sync.clone(), waiter.clone());
            thread::spawn(move || {
                let took = take(&s, 0, 10 + t);
                (
                    took,
                    took && key_woken(w.word_sc(), &[Change::Sem(0).key_range()]),
                )
            })
        })
        .collect();
    let (s, w) = (sync.clone(), waiter.clone());
    let engine = thread::spawn(move || {
        w.begin_step();
        let met = s.sem(0) == 0;
        if !met {
            w.blocked_on(WaitKey::Sem(0));
        }
        met
    });
    let results: Vec<(bool, bool)> = takers.into_iter().map(|t| t.join().unwrap()).collect();
    let met = engine.join().unwrap();
    let takes = results.iter().filter(|r| r.0).count();
    assert_eq!(
        (takes, sync.sem(0)),
        (1, 0),
        "the one unit was taken twice or not at all"
    );
    assert!(
        met || results.iter().any(|r| r.1),
        "lost wake-up: the waiter blocked on semaphore 0 after missing the take, and the taker read a stale key"
    );
}

#[test]
fn a_take_is_exact_and_wakes_the_waiters() {
    check(|| two_takers(take));
}

/// Mutation: the take's compare-and-swap replaced by a plain store.
#[test]
fn mutation_take_by_store_takes_twice() {
    let msg = must_fail(|| two_takers(take_by_store));
    assert!(msg.contains("taken twice"), "{msg}");
}

/// Mutation: the take and the key read weakened from SeqCst.
#[test]
fn mutation_weaker_take_loses_the_wake_up() {
    let msg = weakened_seqcst(|| must_fail(|| two_takers(take)));
    assert!(msg.contains("lost wake-up"), "{msg}");
}

/// A write racing a range reset: after both, one more reset must leave
/// the register zero (the write's dirty bit survived, or the racing reset
/// saw the value). The register was written before (its bit set), so the
/// writer may skip setting it.
fn write_against_reset() {
    let sync = Arc::new(SyncBlock::new(64, 1));
    sync.set_sem(5, 0, 0);
    let s = sync.clone();
    let writer = thread::spawn(move || s.set_sem(5, 7, 10));
    let r = sync.clone();
    let reset = thread::spawn(move || {
        r.reset_sems(0, 63, 20);
    });
    writer.join().unwrap();
    reset.join().unwrap();
    sync.reset_sems(0, 63, 30);
    assert_eq!(
        sync.sem(5),
        0,
        "a reset missed a written register: the write skipped its dirty bit and the racing reset read the old value"
    );
}

#[test]
fn a_range_reset_never_misses_a_written_register() {
    check(write_against_reset);
}

/// Mutation: the dirty bits' and registers' SeqCst loads, stores and
/// exchanges weakened to Acquire/Release/AcqRel.
#[test]
fn mutation_weaker_dirty_bits_miss_a_register() {
    let msg = weakened_seqcst(|| must_fail(write_against_reset));
    assert!(msg.contains("missed a written register"), "{msg}");
}
