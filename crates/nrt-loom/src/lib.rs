//! loom models of the lock-free protocols of the simulator (nrt-sim) and
//! the runtime (nrt), with a mutation check for each: the same model run
//! with the ordering it depends on weakened, which loom must reject.
//!
//! Built only with `RUSTFLAGS="--cfg loom"` (in its own target dir, see
//! docs/reliability.md); without it the crate is empty, so the ordinary
//! workspace build pays nothing for loom.
//!
//! Where the shipped code is small and self-contained it is compiled here
//! as is, from its own source file, against the loom atomics of [`sync`]
//! (the `crate::sync` imports of those files): the wake handshake
//! (`nrt-sim/src/wake.rs`), the semaphore block and its dirty bits
//! (`nrt-sim/src/semaphore.rs`) and the event count behind the execution
//! units' waits and the harvest's interrupt (`nrt/src/xu/signal.rs`).
//! Where it is not (a protocol spread over the scheduler, the DMA walker,
//! the NQ ring or the execution unit, whose files pull in the device and
//! wasmtime), `models` holds a model with the same atomic operations and
//! orderings in the same order; each says which code it mirrors.
#![cfg(loom)]

pub mod sync;

/// nrt-sim's wake keys and the waker's key tests, as shipped.
#[path = "../../nrt-sim/src/wake.rs"]
#[allow(dead_code)]
pub mod wake;

/// nrt-sim's EVT_SEM block (semaphores, events, dirty bits), as shipped.
#[path = "../../nrt-sim/src/semaphore.rs"]
#[allow(dead_code)]
pub mod semaphore;

/// nrt's event count (execution-unit waits, completion counts), as
/// shipped; nrt-sim's `NqSignal` (the NQ interrupt) is the same protocol.
#[path = "../../nrt/src/xu/signal.rs"]
#[allow(dead_code)]
pub mod event_count;

#[cfg(test)]
mod models;
