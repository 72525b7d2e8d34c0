//! Fork-join of one large kernel call across the machine's cores.
//!
//! A big matmul on one engine should use every core the simulator has, not
//! only the worker stepping that engine. [`run_parts`] runs part 0 of a
//! job on the calling thread and hands the other parts to helper threads
//! (one per extra core, started on first use, then parked), then waits for
//! them. A helper another caller is using is skipped and its part runs on
//! the caller, so two engines multiplying at once never queue behind each
//! other or oversubscribe the cores.
//!
//! Why not rayon: work injected into its pool from outside (the
//! simulator's workers are not rayon threads) goes through a queue that
//! allocates a block every 63 jobs, and the execute path must not
//! allocate. A hand-off here is a mutex, an atomic and a condvar, none of
//! which allocate; after a part the helper spins for 20 us before
//! parking, so back-to-back matmuls of one program hand off cheaply.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Most helper threads (parts beyond them run on the caller).
pub const MAX_HELPERS: usize = 7;

/// How long a helper spins for its next part before parking.
/// Short: on a loaded 2-core machine a spinning helper takes the CPU a
/// simulator worker needs.
const SPIN: Duration = Duration::from_micros(20);

const IDLE: u8 = 0;
const CLAIMED: u8 = 1;
const POSTED: u8 = 2;
const DONE: u8 = 3;
const PANICKED: u8 = 4;
/// A helper whose thread never started.
const DEAD: u8 = 5;
/// A helper whose thread died (outside a part, whose panics it catches):
/// its caller stops waiting, and nobody claims it again.
const LOST: u8 = 6;

/// A job as a helper sees it: the caller's closure with its lifetime
/// erased, and the part to run.
type Job = (*const (dyn Fn(usize) + Sync), usize);

struct Helper {
    state: AtomicU8,
    /// Written by the claiming caller before POSTED, read by the helper
    /// after it sees POSTED.
    job: UnsafeCell<Option<Job>>,
    park: Mutex<()>,
    wake: Condvar,
}

// SAFETY: `job` is written only by the caller that moved `state` from IDLE
// to CLAIMED, before it publishes POSTED (Release), and read only by the
// helper after it observes POSTED (Acquire); the closure it points to is
// `Sync` and outlives the hand-off (the caller waits for DONE).
unsafe impl Sync for Helper {}

/// The helper threads, started on first use (one per core beyond the
/// first, at most [`MAX_HELPERS`]). A helper whose thread could not start
/// stays DEAD, so no caller ever claims it.
fn helpers() -> &'static [Helper] {
    static HELPERS: OnceLock<&'static [Helper]> = OnceLock::new();
    HELPERS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let n = cores.saturating_sub(1).min(MAX_HELPERS);
        let all: &'static [Helper] = Box::leak(
            (0..n)
                .map(|_| Helper { state: AtomicU8::new(DEAD), job: UnsafeCell::new(None), park: Mutex::new(()), wake: Condvar::new() })
                .collect(),
        );
        for (i, h) in all.iter().enumerate() {
            if std::thread::Builder::new().name(format!("nrt-sim-split-{i}")).spawn(move || helper_loop(h)).is_ok() {
                h.state.store(IDLE, Ordering::Release);
            }
        }
        all
    })
}

/// Publishes [`LOST`] if the helper thread unwinds (its loop never ends
/// otherwise), so a caller waiting for its part does not wait for ever.
struct Lost(&'static Helper);

impl Drop for Lost {
    fn drop(&mut self) {
        self.0.state.store(LOST, Ordering::Release);
    }
}

fn helper_loop(h: &'static Helper) {
    let _lost = Lost(h);
    loop {
        let spin_until = Instant::now() + SPIN;
        while h.state.load(Ordering::Acquire) != POSTED && Instant::now() < spin_until {
            std::hint::spin_loop();
        }
        if h.state.load(Ordering::Acquire) != POSTED {
            let mut guard = h.park.lock().unwrap_or_else(|e| e.into_inner());
            while h.state.load(Ordering::Acquire) != POSTED {
                guard = h.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
            }
        }
        // SAFETY: POSTED was published after the job was written (see the
        // `Sync` impl); the caller keeps the closure alive until DONE.
        let (job, part) = unsafe { (*h.job.get()).take() }.expect("a posted part");
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*job)(part) })).is_ok();
        h.state.store(if ok { DONE } else { PANICKED }, Ordering::Release);
    }
}

/// Waits for the helpers a caller posted to (also when the caller's own
/// part panics: the closure must outlive every helper's use of it). The
/// wait lasts as long as the slowest posted part computes (a part never
/// waits for anything); a helper thread that died ends it ([`LOST`]).
struct Posted<'a> {
    helpers: [Option<&'a Helper>; MAX_HELPERS],
}

impl Posted<'_> {
    fn wait(&mut self) -> bool {
        let mut ok = true;
        for h in self.helpers.iter_mut().filter_map(Option::take) {
            let mut spins = 0u32;
            let state = loop {
                let s = h.state.load(Ordering::Acquire);
                if s == DONE || s == PANICKED || s == LOST {
                    break s;
                }
                spins += 1;
                if spins < 1 << 12 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            };
            ok &= state == DONE;
            if state != LOST {
                h.state.store(IDLE, Ordering::Release);
            }
        }
        ok
    }
}

impl Drop for Posted<'_> {
    fn drop(&mut self) {
        self.wait();
    }
}

/// How many parts [`run_parts`] can run at once here: the caller plus the
/// helper threads.
pub fn parallelism() -> usize {
    helpers().len() + 1
}

/// Runs `job(0)`, ..., `job(parts - 1)`, each exactly once, part 0 on the
/// calling thread and others on idle helpers (or the caller, when none is
/// idle); returns when all have finished. A panic in any part is resumed
/// on the caller once every part has stopped.
// The part numbers are the job's argument as well as indices.
#[allow(clippy::needless_range_loop)]
pub fn run_parts(parts: usize, job: &(dyn Fn(usize) + Sync)) {
    let mut posted = Posted { helpers: [None; MAX_HELPERS] };
    let mut local = [false; MAX_HELPERS + 1];
    let mut free = helpers().iter();
    for part in 1..parts.min(MAX_HELPERS + 1) {
        let claimed = free.by_ref().find(|h| h.state.compare_exchange(IDLE, CLAIMED, Ordering::Acquire, Ordering::Relaxed).is_ok());
        match claimed {
            Some(h) => {
                // SAFETY: the lifetime is erased only for the hand-off;
                // `posted` waits for the helper before this frame ends.
                let erased: *const (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(job) };
                // SAFETY: CLAIMED gives this caller sole access to `job`.
                unsafe { *h.job.get() = Some((erased, part)) };
                let _guard = h.park.lock().unwrap_or_else(|e| e.into_inner());
                h.state.store(POSTED, Ordering::Release);
                h.wake.notify_one();
                posted.helpers[part - 1] = Some(h);
            }
            None => local[part] = true,
        }
    }
    job(0);
    for part in 1..parts {
        if part > MAX_HELPERS || local[part] {
            job(part);
        }
    }
    if !posted.wait() {
        panic!("a part of a split kernel panicked on a helper thread");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_part_runs_once() {
        for parts in [1, 2, 3, 9, 20] {
            let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
            run_parts(parts, &|p| {
                hits[p].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "{parts} parts");
        }
    }

    #[test]
    fn concurrent_callers_do_not_wait_on_each_other() {
        let total = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..200 {
                        run_parts(4, &|p| {
                            total.fetch_add(p + 1, Ordering::Relaxed);
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 4 * 200 * (1 + 2 + 3 + 4));
    }

    #[test]
    fn a_panic_in_a_part_reaches_the_caller() {
        let r = std::panic::catch_unwind(|| run_parts(2, &|p| assert!(p != 1, "part 1 fails")));
        assert!(r.is_err());
        // The helpers are usable afterwards.
        let n = AtomicUsize::new(0);
        run_parts(2, &|_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 2);
    }
}
