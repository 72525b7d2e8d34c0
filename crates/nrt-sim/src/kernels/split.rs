//! Fork-join of one large kernel call across threads that have nothing
//! else to do.
//!
//! A big matmul on one engine should use every CPU the simulator is not
//! using for something else, and none that it is. [`run_parts`] posts a
//! job of numbered parts on a process-wide board; the calling thread
//! claims parts one at a time and runs them, and any thread that calls
//! [`help`] meanwhile claims and runs parts too. The helpers are threads
//! that would otherwise spin: the simulator's idle worker polling for its
//! next task and a runtime thread lent to the device while it waits
//! (`Scheduler::spin_for_work`, `SimDevice::assist`). So a part runs on a
//! second CPU exactly when one is idle, and when every CPU is busy (the
//! other core of an LNC-2 program multiplying at the same time, or a
//! deterministic device, which has no workers) the caller runs every part
//! itself, with no thread woken and no CPU oversubscribed.
//!
//! The caller never waits for a part nobody has started: it waits only
//! for parts a helper has claimed, each of which is running (bounded by
//! that part's work). A hand-off is a few atomic operations, no lock, no
//! system call and no allocation (the execute path must not allocate).
//!
//! Why not rayon (or the `gemm` crate's threading, built on it): work
//! injected into its pool from outside (the simulator's workers are not
//! rayon threads) goes through a queue that allocates a block every 63
//! jobs, and its threads are extra threads competing with the
//! simulator's own for the same two CPUs.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

/// Jobs that can be on the board at once; a caller that finds every slot
/// taken runs its parts alone.
pub const SLOTS: usize = 4;

/// Nothing posted; a caller may take the slot.
const FREE: u8 = 0;
/// A caller is writing its job into the slot.
const SETUP: u8 = 1;
/// Parts may be claimed.
const OPEN: u8 = 2;
/// The caller is done claiming and waits for the helpers inside to leave.
const CLOSING: u8 = 3;

/// The caller's closure with its lifetime erased (see [`Slot`]'s `Sync`).
type Job = *const (dyn Fn(usize) + Sync);

struct Slot {
    state: AtomicU8,
    /// Written by the caller in SETUP, read by helpers that saw OPEN.
    job: UnsafeCell<Option<Job>>,
    parts: AtomicUsize,
    /// The next part to claim (claims past `parts` find nothing).
    next: AtomicUsize,
    /// Helpers between their entry and their exit (see [`help`]).
    inside: AtomicUsize,
    /// A part run by a helper panicked.
    panicked: AtomicBool,
}

// SAFETY: `job` is written only by the caller that moved `state` from FREE
// to SETUP, before it publishes OPEN (SeqCst), and read only by a helper
// that counted itself in `inside` and then saw OPEN (SeqCst); the caller
// keeps the closure alive until it has seen `inside` at zero after leaving
// OPEN, so no helper reads or calls it after that. The closure is `Sync`.
unsafe impl Sync for Slot {}

static BOARD: [Slot; SLOTS] = [const {
    Slot {
        state: AtomicU8::new(FREE),
        job: UnsafeCell::new(None),
        parts: AtomicUsize::new(0),
        next: AtomicUsize::new(0),
        inside: AtomicUsize::new(0),
        panicked: AtomicBool::new(false),
    }
}; SLOTS];

/// Jobs open on the board (what an idle thread polls: one load).
static OPEN_JOBS: AtomicUsize = AtomicUsize::new(0);

/// Whether some job has parts a helper might claim (a cheap test for a
/// polling loop before it calls [`help`]).
#[inline]
pub fn wanted() -> bool {
    OPEN_JOBS.load(Ordering::Relaxed) != 0
}

/// Runs one unclaimed part of a posted job on the calling thread, if
/// there is one; returns whether it ran a part. For threads that have
/// nothing else to do; a part's panic is caught and handed to the job's
/// caller.
pub fn help() -> bool {
    if !wanted() {
        return false;
    }
    for slot in &BOARD {
        if slot.state.load(Ordering::Relaxed) != OPEN {
            continue;
        }
        slot.inside.fetch_add(1, Ordering::SeqCst);
        let ran = claim_and_run(slot);
        slot.inside.fetch_sub(1, Ordering::SeqCst);
        if ran {
            return true;
        }
    }
    false
}

/// Inside `slot` (counted): claims one part if the job is still open.
fn claim_and_run(slot: &Slot) -> bool {
    if slot.state.load(Ordering::SeqCst) != OPEN {
        return false;
    }
    let part = slot.next.fetch_add(1, Ordering::AcqRel);
    if part >= slot.parts.load(Ordering::Acquire) {
        return false;
    }
    // SAFETY: OPEN was seen after this thread counted itself inside, so
    // the caller has not yet looked for `inside` at zero and keeps the
    // closure alive; `job` was written before OPEN was published.
    let Some(job) = (unsafe { *slot.job.get() }) else { return false };
    // SAFETY: as above; the closure is `Sync`.
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*job)(part) })).is_ok();
    if !ok {
        slot.panicked.store(true, Ordering::Release);
    }
    true
}

/// The caller's hold on a slot: closes it (and waits for the helpers
/// inside) when dropped, also when the caller's own part panics, since
/// the closure must outlive every helper's use of it.
struct Posted {
    slot: &'static Slot,
}

impl Posted {
    /// Stops claims, waits until no helper is inside, frees the slot;
    /// returns whether a helper's part panicked.
    fn close(&self) -> bool {
        let slot = self.slot;
        slot.state.store(CLOSING, Ordering::SeqCst);
        OPEN_JOBS.fetch_sub(1, Ordering::Relaxed);
        // A helper inside is running a part it claimed (or leaving): the
        // wait is bounded by one part's work.
        let mut spins = 0u32;
        while slot.inside.load(Ordering::SeqCst) != 0 {
            spins = spins.wrapping_add(1);
            if spins < 1 << 10 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        // SAFETY: no helper is inside and none can see OPEN again, so no
        // one reads `job` any more.
        unsafe { *slot.job.get() = None };
        let panicked = slot.panicked.swap(false, Ordering::AcqRel);
        slot.state.store(FREE, Ordering::Release);
        panicked
    }
}

impl Drop for Posted {
    fn drop(&mut self) {
        self.close();
    }
}

/// Posts `job` with `parts` parts on a free slot (None when every slot is
/// taken).
fn post(parts: usize, job: &(dyn Fn(usize) + Sync)) -> Option<Posted> {
    let slot = BOARD.iter().find(|s| s.state.compare_exchange(FREE, SETUP, Ordering::Acquire, Ordering::Relaxed).is_ok())?;
    // SAFETY: the lifetime is erased only for the hand-off; `Posted`
    // closes the slot and waits for every helper before this frame ends.
    let erased: Job = unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), Job>(job) };
    // SAFETY: SETUP gives this caller sole access to `job`.
    unsafe { *slot.job.get() = Some(erased) };
    slot.parts.store(parts, Ordering::Relaxed);
    slot.next.store(0, Ordering::Relaxed);
    slot.state.store(OPEN, Ordering::SeqCst);
    OPEN_JOBS.fetch_add(1, Ordering::Relaxed);
    Some(Posted { slot })
}

/// Runs `job(0)`, ..., `job(parts - 1)`, each exactly once, on the calling
/// thread and on whichever threads [`help`] meanwhile; returns when all
/// have finished. A panic in any part is resumed on the caller once every
/// part has stopped.
pub fn run_parts(parts: usize, job: &(dyn Fn(usize) + Sync)) {
    if parts <= 1 {
        if parts == 1 {
            job(0);
        }
        return;
    }
    let Some(posted) = post(parts, job) else {
        for part in 0..parts {
            job(part);
        }
        return;
    };
    let slot = posted.slot;
    loop {
        let part = slot.next.fetch_add(1, Ordering::AcqRel);
        if part >= parts {
            break;
        }
        job(part);
    }
    let panicked = posted.close();
    std::mem::forget(posted);
    if panicked {
        panic!("a part of a split kernel panicked on a helper thread");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    /// Jobs per caller in the concurrency tests (few under Miri).
    const JOBS: usize = if cfg!(miri) { 5 } else { 200 };

    /// A thread calling [`help`] until told to stop; counts the parts it ran.
    struct Helper {
        stop: Arc<AtomicBool>,
        thread: Option<std::thread::JoinHandle<usize>>,
    }

    impl Helper {
        fn start() -> Helper {
            let stop = Arc::new(AtomicBool::new(false));
            let s = stop.clone();
            let thread = std::thread::spawn(move || {
                let mut ran = 0;
                while !s.load(Ordering::Acquire) {
                    if help() {
                        ran += 1;
                    } else {
                        std::hint::spin_loop();
                    }
                }
                ran
            });
            Helper { stop, thread: Some(thread) }
        }

        fn finish(mut self) -> usize {
            self.stop.store(true, Ordering::Release);
            self.thread.take().unwrap().join().unwrap()
        }
    }

    #[test]
    fn every_part_runs_once_with_and_without_helpers() {
        for helpers in [0, 1, 3] {
            let hs: Vec<Helper> = (0..helpers).map(|_| Helper::start()).collect();
            for parts in [0, 1, 2, 3, 9, 20, 64] {
                let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
                run_parts(parts, &|p| {
                    hits[p].fetch_add(1, Ordering::Relaxed);
                });
                assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "{parts} parts, {helpers} helpers");
            }
            for h in hs {
                h.finish();
            }
        }
    }

    #[test]
    fn an_idle_helper_takes_parts() {
        let h = Helper::start();
        let me = std::thread::current().id();
        // Parts long enough that the helper, polling the board, claims
        // some before the caller has run them all; jobs until it has (the
        // deadline only bounds a machine that never runs the helper).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let elsewhere = AtomicUsize::new(0);
        let mut jobs = 0;
        while elsewhere.load(Ordering::Relaxed) == 0 && std::time::Instant::now() < deadline {
            let hits: Vec<AtomicUsize> = (0..8).map(|_| AtomicUsize::new(0)).collect();
            run_parts(8, &|p| {
                let t = std::time::Instant::now();
                while t.elapsed() < std::time::Duration::from_micros(200) {
                    std::hint::spin_loop();
                }
                hits[p].fetch_add(1, Ordering::Relaxed);
                if std::thread::current().id() != me {
                    elsewhere.fetch_add(1, Ordering::Relaxed);
                }
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            jobs += 1;
        }
        h.finish();
        assert!(elsewhere.load(Ordering::Relaxed) > 0, "no part ran on a helper in {jobs} jobs");
    }

    #[test]
    fn concurrent_callers_share_the_board() {
        let total = AtomicUsize::new(0);
        let h = Helper::start();
        std::thread::scope(|s| {
            // More callers than slots: the ones left out run alone.
            for _ in 0..SLOTS + 2 {
                s.spawn(|| {
                    for _ in 0..JOBS {
                        run_parts(4, &|p| {
                            total.fetch_add(p + 1, Ordering::Relaxed);
                        });
                    }
                });
            }
        });
        h.finish();
        assert_eq!(total.load(Ordering::Relaxed), (SLOTS + 2) * JOBS * (1 + 2 + 3 + 4));
    }

    #[test]
    fn a_panic_in_a_part_reaches_the_caller() {
        let h = Helper::start();
        for _ in 0..(JOBS / 10).max(1) {
            let r = std::panic::catch_unwind(|| run_parts(4, &|p| assert!(p != 1, "part 1 fails")));
            assert!(r.is_err());
        }
        // The board is usable afterwards.
        let n = AtomicUsize::new(0);
        run_parts(3, &|_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 3);
        h.finish();
    }
}
