//! The `sync` shim the protocol code is compiled against under loom.
//!
//! nrt-sim and nrt import their atomics through a `crate::sync` module
//! (std's types there); compiled into this crate, the same source files
//! get the types below instead, so the models exercise the code that
//! ships.
//!
//! loom treats a `SeqCst` load, store or read-modify-write as `AcqRel`
//! (loom's README, "Unsupported features"), which would report false
//! lost wake-ups for every Dekker-style handshake built on `SeqCst`
//! accesses; its `fence(SeqCst)` is modelled exactly. The atomics here
//! therefore run a `SeqCst` access as a `SeqCst` fence followed by the
//! access with the strongest ordering loom models (`Acquire` loads,
//! `Release` stores, `AcqRel` read-modify-writes): the leading-fence
//! mapping compilers use for `SeqCst` on Power, which gives every pair of
//! `SeqCst` accesses of one thread a fence between them. It is at least
//! as strong as C++'s `SeqCst` access, so a mutation that only turns a
//! `SeqCst` read-modify-write into `AcqRel` right before another `SeqCst`
//! access goes unseen (see docs/reliability.md); the mutations the models
//! check weaken the accesses that carry a handshake.
//!
//! [`weakened_seqcst`] runs a closure with that fence left out (loom's own
//! `AcqRel` reading of `SeqCst`): the mutation check of the protocols whose
//! only ordering is their `SeqCst` accesses.

use std::cell::Cell;

pub use loom::sync::{Arc, Condvar, Mutex, MutexGuard};

thread_local! {
    static WEAK: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a whole `loom::model` call) with `SeqCst` accesses weakened
/// to `AcqRel`, for the mutation checks. loom runs a model's threads on
/// the calling thread, so the flag reaches all of them.
pub fn weakened_seqcst<R>(f: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            WEAK.with(|w| w.set(false));
        }
    }
    WEAK.with(|w| w.set(true));
    let _reset = Reset;
    f()
}

/// Atomics with the `SeqCst` mapping of the module docs.
pub mod atomic {
    pub use std::sync::atomic::Ordering;
    use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};

    /// A `SeqCst` fence, modelled by loom.
    pub fn fence(order: Ordering) {
        loom::sync::atomic::fence(order)
    }

    /// The leading fence of a `SeqCst` access, and the ordering loom runs
    /// the access itself with.
    fn lead(order: Ordering, strongest: Ordering) -> Ordering {
        if order != SeqCst {
            return order;
        }
        if !super::WEAK.with(|w| w.get()) {
            loom::sync::atomic::fence(SeqCst);
        }
        strongest
    }

    fn load_order(o: Ordering) -> Ordering {
        lead(o, Acquire)
    }
    fn store_order(o: Ordering) -> Ordering {
        lead(o, Release)
    }
    fn rmw_order(o: Ordering) -> Ordering {
        lead(o, AcqRel)
    }
    /// A compare-and-swap's orderings: one leading fence for both.
    fn cas_orders(success: Ordering, failure: Ordering) -> (Ordering, Ordering) {
        let s = rmw_order(success);
        let f = match failure {
            SeqCst => Acquire,
            o => o,
        };
        // A failure ordering may not be stronger than the success one.
        let f = if s == Release && f == Acquire {
            Relaxed
        } else {
            f
        };
        (s, f)
    }

    macro_rules! atomic_int {
        ($name:ident, $t:ty) => {
            /// loom's atomic of the same name with the shim's `SeqCst`.
            #[derive(Debug, Default)]
            pub struct $name(loom::sync::atomic::$name);

            #[allow(dead_code)]
            impl $name {
                pub fn new(v: $t) -> Self {
                    Self(loom::sync::atomic::$name::new(v))
                }
                pub fn load(&self, o: Ordering) -> $t {
                    self.0.load(load_order(o))
                }
                pub fn store(&self, v: $t, o: Ordering) {
                    self.0.store(v, store_order(o))
                }
                pub fn swap(&self, v: $t, o: Ordering) -> $t {
                    self.0.swap(v, rmw_order(o))
                }
                pub fn fetch_add(&self, v: $t, o: Ordering) -> $t {
                    self.0.fetch_add(v, rmw_order(o))
                }
                pub fn fetch_sub(&self, v: $t, o: Ordering) -> $t {
                    self.0.fetch_sub(v, rmw_order(o))
                }
                pub fn fetch_and(&self, v: $t, o: Ordering) -> $t {
                    self.0.fetch_and(v, rmw_order(o))
                }
                pub fn fetch_or(&self, v: $t, o: Ordering) -> $t {
                    self.0.fetch_or(v, rmw_order(o))
                }
                pub fn fetch_max(&self, v: $t, o: Ordering) -> $t {
                    self.0.fetch_max(v, rmw_order(o))
                }
                pub fn fetch_min(&self, v: $t, o: Ordering) -> $t {
                    self.0.fetch_min(v, rmw_order(o))
                }
                pub fn compare_exchange(
                    &self,
                    cur: $t,
                    new: $t,
                    s: Ordering,
                    f: Ordering,
                ) -> Result<$t, $t> {
                    let (s, f) = cas_orders(s, f);
                    self.0.compare_exchange(cur, new, s, f)
                }
                pub fn compare_exchange_weak(
                    &self,
                    cur: $t,
                    new: $t,
                    s: Ordering,
                    f: Ordering,
                ) -> Result<$t, $t> {
                    let (s, f) = cas_orders(s, f);
                    self.0.compare_exchange_weak(cur, new, s, f)
                }
            }
        };
    }

    atomic_int!(AtomicU8, u8);
    atomic_int!(AtomicU32, u32);
    atomic_int!(AtomicI32, i32);
    atomic_int!(AtomicU64, u64);
    atomic_int!(AtomicUsize, usize);

    /// loom's `AtomicBool` with the shim's `SeqCst`.
    #[derive(Debug, Default)]
    pub struct AtomicBool(loom::sync::atomic::AtomicBool);

    #[allow(dead_code)]
    impl AtomicBool {
        pub fn new(v: bool) -> Self {
            Self(loom::sync::atomic::AtomicBool::new(v))
        }
        pub fn load(&self, o: Ordering) -> bool {
            self.0.load(load_order(o))
        }
        pub fn store(&self, v: bool, o: Ordering) {
            self.0.store(v, store_order(o))
        }
        pub fn swap(&self, v: bool, o: Ordering) -> bool {
            self.0.swap(v, rmw_order(o))
        }
        pub fn compare_exchange(
            &self,
            cur: bool,
            new: bool,
            s: Ordering,
            f: Ordering,
        ) -> Result<bool, bool> {
            let (s, f) = cas_orders(s, f);
            self.0.compare_exchange(cur, new, s, f)
        }
    }
}
