//! The signal door's one implementation: [`Signals`] and [`Env`] for
//! [`Shared`]: routed register stores, the wakes of blocked engines (the
//! tuned shapes of the wake path: one fence, the published key compared
//! first, the held wake of the device's own register calls) and the
//! scheduling of engine, DMA and Q7 tasks.

use super::Shared;
use super::instance::Instance;
use crate::core::Core;
use crate::dma::{self, walk};
use crate::fault::FaultState;
use crate::port::StoreRoute;
use crate::scheduler::{RunnerHandle, Task};
use crate::signals::{Env, Signals};
use crate::wake::{Change, DmaWake};
use nrt_hal::{ArchDesc, CoreId, DeviceAddr, HalResult};
use std::sync::Arc;
use std::sync::atomic::Ordering;


impl Signals for Shared {
    #[inline]
    fn store_word(&self, route: StoreRoute, addr: DeviceAddr, value: u32, now: u64, by: Option<(&Core, usize)>) -> HalResult<()> {
        Shared::store_word(self, route, addr, value, now, by)
    }
    #[inline]
    fn wake_others(&self, core: &Core, change: Change, by: Option<usize>) {
        Shared::wake_others(self, core, change, by)
    }
    #[inline]
    fn wake_all_of(&self, core: &Core, changes: &[Change], by: Option<usize>) {
        Shared::wake_all_of(self, core, changes, by)
    }
    #[inline]
    fn wake_dma(&self, core: &Core, wake: DmaWake, by: Option<usize>) {
        Shared::wake_dma(self, core, wake, by)
    }
    #[inline]
    fn schedule_q7(&self, core: &Core, q: u8) {
        Shared::schedule_q7(self, core, q)
    }
}

impl Env for Shared {
    #[inline]
    fn arch(&self) -> &'static ArchDesc {
        self.arch
    }
    #[inline]
    fn faults(&self) -> &FaultState {
        &self.faults
    }
}

impl Shared {
    /// Stores the 32-bit `value` at `addr` through its [`StoreRoute`]
    /// (what [`Shared::store_route`] answered for `addr`), as
    /// [`Shared::write_at`] would: a DMA register write without the
    /// address decode, the byte loop or the register decode.
    ///
    /// A sequencer's store (`by`: its core and engine index) to a DMA
    /// tail register that leaves pairs submitted walks them right here, on
    /// the writer's thread ([`Shared::walk_at_doorbell`]). A store to the
    /// writer's own core (the lowered DMA trigger's) finds the core
    /// through `by`, without the device's core lookup.
    pub fn store_word(&self, route: StoreRoute, addr: DeviceAddr, value: u32, now: u64, by: Option<(&Core, usize)>) -> HalResult<()> {
        match route {
            StoreRoute::DmaReg(c, r) => {
                let core: &Core = match by {
                    Some((writer, _)) if writer.id == c => writer,
                    _ => self.core_borrowed(c)?,
                };
                let q = &core.dma[r.queue];
                // A tail add of at least one leaves its own side pending:
                // only the other side is looked at.
                if dma::write_reg(q, r, value) && (if value > 0 { q.side_pending(!r.rx) } else { q.has_pending() }) {
                    self.walk_at_doorbell(core, r.queue, by.map(|(writer, e)| (writer.id, e)));
                }
                Ok(())
            }
            StoreRoute::Other(t) => self.write_routed(t, addr, &value.to_le_bytes(), now),
        }
    }

    /// A sequencer's doorbell of DMA queue `qi` that left both sides with
    /// submitted pairs (the caller checked): one slice of the queue's walk
    /// runs at once, on the writer's thread and inside its step (a queue
    /// with more left after the slice gets a task as usual). A doorbell
    /// that leaves only one side submitted does not get here (the queue
    /// stays idle for DRAIN, and the other side's doorbell walks it).
    ///
    /// The DMA then starts at the writer's clock, which the sequencer
    /// publishes before a WRITE, rather than at whatever the core's clock
    /// has reached when a queued task gets to it; and the writer, whose
    /// next record is usually the wait for the completion semaphore, finds
    /// it met instead of blocking, being woken and stepped again. The
    /// wake of the slice skips the writer (it is running and checks its
    /// next wait against the registers anyway).
    pub(super) fn walk_at_doorbell(&self, core: &Core, qi: usize, by: Option<(CoreId, usize)>) {
        // The writer is left out of the walk's wake only on its own
        // core (a store to another core's queue wakes that core's
        // engine of the same index like any other).
        let by = by.and_then(|(c, e)| (c == core.id).then_some(e));
        self.walk_queue(core, qi, by);
    }

    /// One slice of DMA queue `qi`'s walk ([`walk::run_queue`]), then the
    /// wake it calls for (leaving engine `by` out, see
    /// [`Shared::wake_dma`]) and, with work left, the queue's next task.
    #[inline]
    pub(super) fn walk_queue(&self, core: &Core, qi: usize, by: Option<usize>) {
        let (more, wake) = walk::run_queue(self, &self.faults, self.arch, core, qi);
        if let Some(w) = wake {
            self.wake_dma(core, w, by);
        }
        if more {
            self.schedule_dma(core, qi);
        }
    }

    /// Queues a step of engine `e` unless one is queued already.
    pub fn schedule_engine(&self, core: &Core, e: usize) {
        self.schedule_engine_with(core, e, || &self.instance);
    }

    /// [`Shared::schedule_engine`] with the device's handle for the
    /// scheduler given (see [`RunnerHandle`]).
    #[inline]
    pub(super) fn schedule_engine_with<H: RunnerHandle<Instance>>(&self, core: &Core, e: usize, handle: impl Fn() -> H) {
        // Already queued: nothing to do, and no atomic RMW to pay (every
        // register change wakes every active engine of the core).
        if core.engines[e].queued.load(Ordering::SeqCst) {
            return;
        }
        if !core.engines[e].queued.swap(true, Ordering::SeqCst) {
            self.instance.scheduler.submit(handle, Task::Engine(self.task_core(core.id), e as u8));
        }
    }

    /// [`Shared::schedule_engine`] for the wake of a host register call
    /// ([`Shared::wake_held`]): an idle deterministic device runs the step
    /// here and now, with no queued mark to set and clear (see
    /// [`Scheduler::run_now`]). Out of line, so the wake's loop over the
    /// engines stays small.
    ///
    /// Its caller ([`Shared::wake_held`]) found the engine not queued just
    /// before; the queued mark it may have got since is looked at only on
    /// the way to a queued step.
    #[inline(never)]
    pub(super) fn schedule_engine_held(self: &Arc<Self>, core: &Arc<Core>, e: usize) {
        if self.instance.scheduler.run_now(|| &self.instance, Task::Engine(self.task_core(core.id), e as u8), |_: &Arc<Instance>| self.step_engine(core, e)) {
            return;
        }
        self.schedule_engine_with(core, e, || &self.instance);
    }

    /// Queues Q7 core `q`'s invocation of the core's op in flight.
    pub fn schedule_q7(&self, core: &Core, q: u8) {
        self.instance.scheduler.submit(|| &self.instance, Task::Q7(self.task_core(core.id), q));
    }

    /// Queues a walk of DMA queue `q` unless one is queued already.
    pub fn schedule_dma(&self, core: &Core, q: usize) {
        if core.dma[q].queued.load(Ordering::SeqCst) {
            return;
        }
        if !core.dma[q].queued.swap(true, Ordering::SeqCst) {
            self.instance.scheduler.submit(|| &self.instance, Task::Dma(self.task_core(core.id), q as u16));
        }
    }

    /// Re-queues, in fixed engine order, the active engines of the core
    /// whose wait `change` can satisfy (see [`crate::wake`]). Called after
    /// the change is made.
    pub fn wake(&self, core: &Core, change: Change) {
        self.wake_others(core, change, None);
    }

    /// [`Shared::wake`] on behalf of engine `by` (if any), which is not
    /// re-queued: it is running, and checks its next wait against the
    /// current registers anyway.
    pub fn wake_others(&self, core: &Core, change: Change, by: Option<usize>) {
        self.wake_all_of(core, &[change], by);
    }

    /// [`Shared::wake_others`] for several changes at once: one fence,
    /// each engine re-queued at most once. An engine whose published key
    /// the changes cannot satisfy is skipped on that one compare; an
    /// engine already queued is skipped too (its queued step re-reads
    /// every register anyway).
    pub fn wake_all_of(&self, core: &Core, changes: &[Change], by: Option<usize>) {
        if let [one] = changes {
            return self.wake_range(core, one.key_range(), by);
        }
        let mut ranges = [(1u32, 0u32); 5];
        let n = changes.len().min(ranges.len());
        for (r, c) in ranges.iter_mut().zip(changes) {
            *r = c.key_range();
        }
        if changes.len() > ranges.len() {
            ranges[4] = Change::Everything.key_range();
        }
        crate::wake::publish_change();
        // The published key first: most engines of a core wait for some
        // other register, and that one compare settles them. Each of the
        // three reads follows the fence on its own (see `crate::wake`), so
        // their order does not matter for the hand-shake.
        for (e, slot) in core.engines.iter().enumerate() {
            if Some(e) == by || !crate::wake::key_woken(slot.wait.word(), &ranges[..n]) {
                continue;
            }
            if slot.active.load(Ordering::Acquire) && !slot.queued.load(Ordering::SeqCst) {
                self.schedule_engine(core, e);
            }
        }
    }

    /// [`Shared::wake_all_of`] of one change, given as its key range: the
    /// common wake (a doorbell, a take, a reset) compares each published
    /// key against one range.
    pub(super) fn wake_range(&self, core: &Core, range: (u32, u32), by: Option<usize>) {
        self.wake_range_with(core, range, by, || &self.instance);
    }

    /// [`Shared::wake`] of a change made by a sequentially consistent
    /// atomic operation (a semaphore's or event's store or addition) from
    /// a caller that holds the device's `Arc` (the device handle's
    /// register calls, the runtime's doorbell among them): no fence before
    /// the key reads (see [`crate::wake::publish_change`]), and a lockstep
    /// drain the wake starts borrows the `Arc` instead of upgrading the
    /// device's weak self and releasing it after. Inline into each
    /// register call, where the change's kind is known, so its key range
    /// is a constant (the runtime's doorbell: -12 instructions).
    #[inline(always)]
    pub fn wake_held(self: &Arc<Self>, core: &Arc<Core>, change: Change) {
        let (lo, hi) = change.key_range();
        for (e, slot) in core.engines.iter().enumerate() {
            if !crate::wake::key_woken(slot.wait.word_sc(), &[(lo, hi)]) {
                continue;
            }
            if slot.active.load(Ordering::Acquire) && !slot.queued.load(Ordering::SeqCst) {
                self.schedule_engine_held(core, e);
            }
        }
    }

    /// [`Shared::wake_range`] with the device's handle for the scheduler
    /// given (see [`RunnerHandle`]).
    #[inline]
    pub(super) fn wake_range_with<H: RunnerHandle<Instance>>(&self, core: &Core, (lo, hi): (u32, u32), by: Option<usize>, handle: impl Fn() -> H) {
        crate::wake::publish_change();
        for (e, slot) in core.engines.iter().enumerate() {
            if Some(e) == by || !crate::wake::key_woken(slot.wait.word(), &[(lo, hi)]) {
                continue;
            }
            if slot.active.load(Ordering::Acquire) && !slot.queued.load(Ordering::SeqCst) {
                self.schedule_engine_with(core, e, &handle);
            }
        }
    }

    /// The wake at the end of a DMA slice ([`DmaWake`]: DRAIN
    /// waiters and the waiters of the completion semaphore and event it
    /// changed), as [`Shared::wake_all_of`] of those changes would, with
    /// the per-engine test a few compares of the published key.
    /// Engine `by` (if any) is not re-queued, as for [`Shared::wake_others`].
    /// Inline into the walk, its one caller.
    #[inline]
    pub fn wake_dma(&self, core: &Core, wake: DmaWake, by: Option<usize>) {
        crate::wake::publish_change();
        for (e, slot) in core.engines.iter().enumerate() {
            if Some(e) != by && wake.wakes(slot.wait.word()) && slot.active.load(Ordering::Acquire) && !slot.queued.load(Ordering::SeqCst) {
                self.schedule_engine(core, e);
            }
        }
    }
}
