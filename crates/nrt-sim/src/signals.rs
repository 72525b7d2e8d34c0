//! The signal door: what a core's agents (a sequencer step, a Q7
//! dispatch) may make happen beyond memory: a register store with side
//! effects, the wake of engines waiting on a register change, a Q7 task.
//! [`Signals`] is implemented once, by the device's root
//! (`device/fanout.rs`); callers take it as `&impl Signals` (or through
//! [`Env`]), so the wake path's tuned code is inlined where it was.
//!
//! Ordering (every implementation keeps it, see [`crate::wake`]): a wake
//! is called after the change it announces is made; it issues the
//! sequentially consistent fence between that change and its reads of the
//! engines' published wait keys, so either the waker sees a key the
//! change satisfies and re-queues the engine, or the engine's step (which
//! fences after publishing its key) sees the change. Wakes re-queue
//! engines in fixed engine order, which lockstep runs rely on.

use crate::core::Core;
use crate::fault::FaultState;
use crate::port::{Bus, StoreRoute};
use crate::wake::{Change, DmaWake};
use nrt_hal::{ArchDesc, DeviceAddr, HalResult};

/// Register stores, wakes and task scheduling of a device's cores.
pub trait Signals {
    /// Stores the 32-bit `value` at `addr` through its [`StoreRoute`]
    /// (what [`Bus::store_route`] answered for `addr`), stamped `now`. A
    /// sequencer's store (`by`: its core and engine index) to a DMA tail
    /// that leaves pairs submitted walks the queue right there, on the
    /// writer's thread; a store to the writer's own core finds the core
    /// through `by`.
    fn store_word(&self, route: StoreRoute, addr: DeviceAddr, value: u32, now: u64, by: Option<(&Core, usize)>) -> HalResult<()>;

    /// Re-queues, in fixed engine order, the active engines of `core`
    /// whose wait `change` can satisfy, except engine `by` (the caller,
    /// running, checks its next wait against the registers anyway).
    fn wake_others(&self, core: &Core, change: Change, by: Option<usize>);

    /// [`Signals::wake_others`] for several changes at once: one fence,
    /// each engine re-queued at most once.
    fn wake_all_of(&self, core: &Core, changes: &[Change], by: Option<usize>);

    /// The wake at the end of a DMA slice (DRAIN waiters and the waiters
    /// of the completion semaphore and event it changed), leaving engine
    /// `by` out.
    fn wake_dma(&self, core: &Core, wake: DmaWake, by: Option<usize>);

    /// Queues Q7 core `q`'s invocation of the core's op in flight.
    fn schedule_q7(&self, core: &Core, q: u8);
}

/// What a sequencer step sees of its device: memory ([`Bus`]), signals
/// ([`Signals`]), the architecture's numbers and the armed faults.
pub trait Env: Bus + Signals {
    /// Architecture numbers.
    fn arch(&self) -> &'static ArchDesc;
    /// The faults armed on the device.
    fn faults(&self) -> &FaultState;
}
