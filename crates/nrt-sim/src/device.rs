//! The simulated device: routes every device-address access, owns the
//! lazily created cores, and implements [`nrt_hal::Device`].

use crate::config::SimConfig;
use crate::core::Core;
use crate::dma::{self, transfer};
use crate::engine::{RunState, StepOutcome};
use crate::fault::{FaultSpec, FaultState};
use crate::memory::pages::Stamp;
use crate::memory::{Memory, Target, decode};
use crate::nq::{self, NqState, NqView, RingMemory};
use crate::scheduler::{HasScheduler, Runner, RunnerHandle, Scheduler, Task};
use crate::semaphore::{WindowOp, window_op};
use crate::wake::Change;
use nrt_hal::{
    ArchDesc, CoreId, CoreReservation, Device, DeviceAddr, DeviceInfo, DmaQueueId, DmaQueueState, DmaRingConfig,
    EngineId, HalError, HalResult, HbmChannelDesc, MemoryLocation, NqRing, NqSpec, NqType, NQ_RECORD_BYTES,
};
use nrt_isa::notification::InferErrorSubtype;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Instructions an engine runs per scheduling slice.
const ENGINE_BUDGET: usize = 256;

/// State shared by the device handle, its workers and mapped NQ views.
#[derive(Debug)]
pub struct Shared {
    /// Architecture numbers.
    pub arch: &'static ArchDesc,
    /// Discovery answer.
    pub info: DeviceInfo,
    /// The configuration the device was built from.
    pub config: SimConfig,
    /// HBM and host pools.
    pub memory: Memory,
    /// Armed faults.
    pub faults: FaultState,
    scheduler: Scheduler,
    cores: Box<[OnceLock<Arc<Core>>]>,
    /// Set by [`SimDevice::lose`]: why the device is gone.
    lost: Mutex<Option<String>>,
    /// Whether `lost` is set (every `Device` call checks this first).
    is_lost: std::sync::atomic::AtomicBool,
    me: Weak<Shared>,
}

impl HasScheduler for Shared {
    fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }
}

impl Runner for Shared {
    fn run(self: &Arc<Self>, task: Task) {
        match task {
            Task::Engine(c, e) => {
                let Some(core) = self.core_ref(CoreId(c)) else { return };
                self.step_engine(core, usize::from(e));
            }
            Task::Dma(c, q) => {
                let Some(core) = self.core_ref(CoreId(c)) else { return };
                core.dma[q as usize].queued.store(false, Ordering::SeqCst);
                if transfer::run_queue(self, core, q as usize, None) {
                    self.schedule_dma(core, q as usize);
                }
            }
            Task::Q7(c, q) => {
                let Some(core) = self.core_ref(CoreId(c)) else { return };
                self.run_q7(core, usize::from(q));
            }
        }
    }
}

impl Shared {
    /// One scheduling slice of engine `e` of `core` (a [`Task::Engine`]):
    /// its sequencer stepped under its lock, with the wait handshake of
    /// [`crate::wake`] around the step.
    #[inline]
    fn step_engine(self: &Arc<Self>, core: &Arc<Core>, e: usize) {
        let Some(slot) = core.engines.get(e) else { return };
        // Relaxed is enough: `begin_step`'s fence orders this store
        // before the step's register reads, and a waker fences
        // between its register change and its read of the flag, so
        // either the waker sees the flag clear and re-queues, or
        // the step sees the change.
        slot.queued.store(false, Ordering::Relaxed);
        let mut seq = slot.seq.lock().unwrap_or_else(|p| p.into_inner());
        // The wait key is only ever written with the sequencer
        // locked, so two tasks of one engine cannot leave a stale key.
        slot.wait.begin_step();
        let outcome = seq.step(self, core, ENGINE_BUDGET);
        if let StepOutcome::Blocked(key) = outcome {
            slot.wait.blocked_on(key);
        }
        // Published under the sequencer lock too: a stale task's
        // store after the lock could clear the flag of a run started
        // meanwhile, and wakes would skip that engine for good.
        slot.active.store(seq.state() == RunState::Running, Ordering::Release);
        drop(seq);
        if outcome == StepOutcome::Yield {
            self.schedule_engine(core, e);
        }
    }
}

impl RingMemory for Shared {
    fn read_ring(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        self.read(addr, buf)
    }
    fn write_ring(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()> {
        match self.target(addr, data.len() as u64)? {
            Target::EvtSem(..) | Target::DmaRegs(..) | Target::Q7(..) => {
                Err(HalError::invalid(addr, data.len() as u64, "notification rings must be in memory, not registers"))
            }
            Target::Pool(ch, off) => {
                self.pool(ch).bytes.write(off, data);
                Ok(())
            }
            _ => self.write_at(addr, data, 0),
        }
    }
}

impl Shared {
    #[inline]
    fn arc(&self) -> Arc<Shared> {
        // `me` points at the Arc that owns `self`, which is alive while
        // `&self` is.
        self.me.upgrade().unwrap_or_else(|| unreachable!("Shared used after its Arc dropped"))
    }

    fn target(&self, addr: DeviceAddr, len: u64) -> HalResult<Target> {
        decode(self.arch, &self.memory, self.info.physical_cores, addr, len)
    }

    /// Where `addr..addr+len` lands in the device's address map (fixed
    /// for the device's life, so a caller may keep the answer and store
    /// through [`Shared::write_routed`]; a WRITE record keeps its
    /// [`StoreRoute`] instead).
    pub fn route(&self, addr: DeviceAddr, len: u64) -> HalResult<Target> {
        self.target(addr, len)
    }

    #[inline]
    fn check_core(&self, core: CoreId) -> HalResult<()> {
        if core.0 < self.info.physical_cores { Ok(()) } else { Err(self.no_such_core(core)) }
    }

    /// The error of a core index past the device's (built out of line).
    #[cold]
    #[inline(never)]
    fn no_such_core(&self, core: CoreId) -> HalError {
        HalError::invalid(DeviceAddr(0), 0, format!("core {} does not exist; the device has {} physical cores", core.0, self.info.physical_cores))
    }

    /// The core, creating it on first use.
    pub fn core(&self, core: CoreId) -> HalResult<Arc<Core>> {
        self.core_borrowed(core).cloned()
    }

    /// [`Shared::core`] borrowed (no reference-count traffic: a created
    /// core lives as long as the device).
    fn core_borrowed(&self, core: CoreId) -> HalResult<&Arc<Core>> {
        self.check_core(core)?;
        Ok(self.cores[core.0 as usize].get_or_init(|| Arc::new(Core::new(core, self.arch))))
    }

    /// The core if it was ever used.
    pub fn started_core(&self, core: CoreId) -> Option<Arc<Core>> {
        self.core_ref(core).cloned()
    }

    /// The core if it was ever used, borrowed (no reference-count traffic
    /// on the stepping path: a created core lives as long as the device).
    pub fn core_ref(&self, core: CoreId) -> Option<&Arc<Core>> {
        self.cores.get(core.0 as usize)?.get()
    }

    fn aligned_words(addr: DeviceAddr, len: u64) -> HalResult<()> {
        if addr.is_aligned(4) && len.is_multiple_of(4) {
            Ok(())
        } else {
            Err(HalError::invalid(addr, len, "register windows take whole, 4-byte aligned 32-bit words"))
        }
    }

    /// Reads device bytes from any window.
    pub fn read(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        let len = buf.len() as u64;
        match self.target(addr, len)? {
            Target::Pool(ch, off) => self.pool(ch).bytes.read(off, buf),
            Target::Sbuf(c, off) => match self.started_core(c) {
                Some(core) => core.sbuf.read(off, buf),
                None => buf.fill(0),
            },
            Target::Psum(c, off) => match self.started_core(c) {
                Some(core) => core.psum.read(off, buf),
                None => buf.fill(0),
            },
            Target::EvtSem(c, off) => {
                Self::aligned_words(addr, len)?;
                let core = self.core(c)?;
                for (k, word) in buf.chunks_exact_mut(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let op = window_op(o, core.sync.semaphores(), core.sync.events())
                        .ok_or_else(|| HalError::invalid(addr, len, format!("no register at EVT_SEM offset {o:#x}")))?;
                    word.copy_from_slice(&core.sync.read_window(op).to_le_bytes());
                }
            }
            Target::Q7(c, off) => {
                let t = self.q7_target(addr, off, len)?;
                self.core(c)?.q7.read(t, addr, buf)?;
            }
            Target::DmaRegs(c, off) => {
                Self::aligned_words(addr, len)?;
                let core = self.core(c)?;
                for (k, word) in buf.chunks_exact_mut(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let r = dma::reg_ref(o)
                        .ok_or_else(|| HalError::invalid(addr, len, format!("no DMA register at offset {o:#x}")))?;
                    word.copy_from_slice(&dma::read_reg(&core.dma[r.queue], r).to_le_bytes());
                }
            }
        }
        Ok(())
    }

    /// The whole backing page around `addr..addr+len` when that range is
    /// HBM or host memory inside one page: the page's first device address
    /// and its pin (see [`crate::memory::pages::PinnedRange`]). `None` for
    /// on-chip memory, register windows, ranges across pages and bad
    /// addresses.
    pub fn pin_page(&self, addr: DeviceAddr, len: u64) -> Option<(DeviceAddr, crate::memory::pages::PinnedRange)> {
        self.pin_page_with(addr, len, true)
    }

    /// [`Shared::pin_page`] for a page that is already backed; `None` for
    /// an untouched one (a reader pins only what exists, so reading
    /// untouched memory still costs no page).
    pub fn pin_resident_page(&self, addr: DeviceAddr, len: u64) -> Option<(DeviceAddr, crate::memory::pages::PinnedRange)> {
        self.pin_page_with(addr, len, false)
    }

    fn pin_page_with(&self, addr: DeviceAddr, len: u64, materialise: bool) -> Option<(DeviceAddr, crate::memory::pages::PinnedRange)> {
        use crate::memory::pages::PAGE_SIZE;
        let Ok(Target::Pool(ch, off)) = self.target(addr, len) else { return None };
        let bytes = &self.pool(ch).bytes;
        let start = off - off % PAGE_SIZE;
        let span = PAGE_SIZE.min(bytes.len() - start);
        if off + len > start + span {
            return None;
        }
        let pin = if materialise { bytes.pin(start, span)? } else { bytes.pin_resident(start, span)? };
        Some((DeviceAddr(addr.get() - (off - start)), pin))
    }

    /// Reads device bytes like [`Shared::read`] and, for HBM and host
    /// memory reads of at most one page (64 KiB), returns the stamp of the
    /// pages they came from, for callers that cache something derived from
    /// the bytes (instruction fetch). `Ok(None)` (bytes read, no stamp) for
    /// on-chip memory, register windows and longer reads.
    pub fn read_stamped(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<Option<Stamp>> {
        if let Target::Pool(ch, off) = self.target(addr, buf.len() as u64)?
            && let Some(stamp) = self.pool(ch).bytes.read_stamped(off, buf)
        {
            return Ok(Some(stamp));
        }
        self.read(addr, buf)?;
        Ok(None)
    }

    /// Writes device bytes; register windows take effect, stamped with
    /// virtual time `now` (0 = the core's current time).
    pub fn write_at(&self, addr: DeviceAddr, data: &[u8], now: u64) -> HalResult<()> {
        let target = self.target(addr, data.len() as u64)?;
        self.write_routed(target, addr, data, now)
    }

    /// Where a 32-bit store to `addr` lands, resolved once for a caller
    /// that stores there again and again (a WRITE record, decoded once per
    /// fetch): a DMA queue register (a doorbell, mostly) directly, anything
    /// else as its [`Target`].
    pub fn store_route(&self, addr: DeviceAddr) -> HalResult<StoreRoute> {
        let t = self.target(addr, 4)?;
        if let Target::DmaRegs(c, off) = t
            && addr.is_aligned(4)
            && let Some(r) = dma::reg_ref(off)
            && r.queue < self.arch.dma_queues_per_core() as usize
        {
            return Ok(StoreRoute::DmaReg(c, r));
        }
        Ok(StoreRoute::Other(t))
    }

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
    fn walk_at_doorbell(&self, core: &Core, qi: usize, by: Option<(CoreId, usize)>) {
        // The writer is left out of the walk's wake only on its own
        // core (a store to another core's queue wakes that core's
        // engine of the same index like any other).
        let by = by.and_then(|(c, e)| (c == core.id).then_some(e));
        if transfer::run_queue(self, core, qi, by) {
            self.schedule_dma(core, qi);
        }
    }

    /// [`Shared::write_at`] to an address already routed: `target` is what
    /// [`Shared::route`] answered for `addr` and `data.len()`.
    pub fn write_routed(&self, target: Target, addr: DeviceAddr, data: &[u8], now: u64) -> HalResult<()> {
        let len = data.len() as u64;
        match target {
            Target::Pool(ch, off) => self.pool(ch).bytes.write(off, data),
            Target::Sbuf(c, off) => self.core(c)?.sbuf.write(off, data),
            Target::Psum(c, off) => self.core(c)?.psum.write(off, data),
            Target::EvtSem(c, off) => {
                Self::aligned_words(addr, len)?;
                let core = self.core(c)?;
                let now = if now == 0 { core.now() } else { now };
                for (k, word) in data.chunks_exact(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let op = window_op(o, core.sync.semaphores(), core.sync.events())
                        .ok_or_else(|| HalError::invalid(addr, len, format!("no register at EVT_SEM offset {o:#x}")))?;
                    let v = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                    core.sync.apply(op, v, now);
                    self.wake(&core, window_change(op));
                }
            }
            Target::Q7(c, off) => {
                let t = self.q7_target(addr, off, len)?;
                self.core(c)?.q7.write(t, addr, data)?;
            }
            Target::DmaRegs(c, off) => {
                Self::aligned_words(addr, len)?;
                let core = self.core_borrowed(c)?;
                for (k, word) in data.chunks_exact(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let r = dma::reg_ref(o)
                        .ok_or_else(|| HalError::invalid(addr, len, format!("no DMA register at offset {o:#x}")))?;
                    let v = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                    if dma::write_reg(&core.dma[r.queue], r, v) {
                        self.schedule_dma(core, r.queue);
                    }
                }
            }
        }
        Ok(())
    }

    /// The backing pages of a memory target (not a register window), with
    /// the core that owns them kept alive.
    fn pages_of(&self, t: Target) -> HalResult<Option<(Option<Arc<Core>>, u64)>> {
        Ok(match t {
            Target::Pool(_, off) => Some((None, off)),
            Target::Sbuf(c, off) | Target::Psum(c, off) => Some((Some(self.core(c)?), off)),
            Target::EvtSem(..) | Target::DmaRegs(..) | Target::Q7(..) => None,
        })
    }

    /// Copies memory to memory without a bounce buffer when neither side
    /// is a register window; returns false (nothing done) otherwise.
    pub fn copy_direct(&self, src: DeviceAddr, dst: DeviceAddr, len: u64) -> HalResult<bool> {
        let (ts, td) = (self.target(src, len)?, self.target(dst, len)?);
        let (Some((sc, so)), Some((dc, doff))) = (self.pages_of(ts)?, self.pages_of(td)?) else {
            return Ok(false);
        };
        use crate::memory::onchip::{Region, copy};
        fn region<'a>(shared: &'a Shared, t: Target, c: &'a Option<Arc<Core>>) -> Option<Region<'a>> {
            match (t, c) {
                (Target::Pool(ch, _), _) => Some(Region::Paged(&shared.pool(ch).bytes)),
                (Target::Sbuf(..), Some(c)) => Some(Region::OnChip(&c.sbuf)),
                (_, Some(c)) => Some(Region::OnChip(&c.psum)),
                (_, None) => None,
            }
        }
        let (Some(sp), Some(dp)) = (region(self, ts, &sc), region(self, td, &dc)) else {
            return Ok(false);
        };
        copy(sp, so, dp, doff, len);
        Ok(true)
    }

    /// Device-to-device copy in 1 MiB chunks, register writes stamped at
    /// `now` (0 = the core's current time).
    pub fn copy_at(&self, src: DeviceAddr, dst: DeviceAddr, len: u64, now: u64) -> HalResult<()> {
        if self.copy_direct(src, dst, len)? {
            return Ok(());
        }
        let mut buf = vec![0u8; len.min(1 << 20) as usize];
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(buf.len() as u64) as usize;
            self.read(src.offset(done), &mut buf[..n])?;
            self.write_at(dst.offset(done), &buf[..n], now)?;
            done += n as u64;
        }
        Ok(())
    }

    fn pool(&self, channel: Option<usize>) -> &crate::memory::Pool {
        match channel {
            Some(c) => &self.memory.hbm[c],
            None => &self.memory.host,
        }
    }

    /// Queues a step of engine `e` unless one is queued already.
    pub fn schedule_engine(&self, core: &Core, e: usize) {
        self.schedule_engine_with(core, e, || self.arc());
    }

    /// [`Shared::schedule_engine`] with the device's handle for the
    /// scheduler given (see [`RunnerHandle`]).
    #[inline]
    fn schedule_engine_with<H: RunnerHandle<Shared>>(&self, core: &Core, e: usize, handle: impl Fn() -> H) {
        // Already queued: nothing to do, and no atomic RMW to pay (every
        // register change wakes every active engine of the core).
        if core.engines[e].queued.load(Ordering::SeqCst) {
            return;
        }
        if !core.engines[e].queued.swap(true, Ordering::SeqCst) {
            self.scheduler.submit(handle, Task::Engine(core.id.0, e as u8));
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
    fn schedule_engine_held(self: &Arc<Self>, core: &Arc<Core>, e: usize) {
        if self.scheduler.run_now(|| self, |dev: &Arc<Shared>| dev.step_engine(core, e)) {
            return;
        }
        self.schedule_engine_with(core, e, || self);
    }

    fn q7_target(&self, addr: DeviceAddr, off: u64, len: u64) -> HalResult<crate::q7::PortalTarget> {
        crate::q7::portal_target(self.arch, off, len).ok_or_else(|| {
            HalError::invalid(
                addr,
                len,
                format!(
                    "not inside one Q7 aperture (CSRs, IRAM {} B or DRAM {} B per Q7 core)",
                    self.arch.q7_iram_bytes, self.arch.q7_dram_bytes
                ),
            )
        })
    }

    /// Queues Q7 core `q`'s invocation of the core's op in flight.
    pub fn schedule_q7(&self, core: &Core, q: u8) {
        self.scheduler.submit(|| self.arc(), Task::Q7(core.id.0, q));
    }

    /// Runs Q7 core `q`'s share of the op in flight and reports its end:
    /// an exception record, the completion write, a wake of the engines.
    fn run_q7(self: &Arc<Self>, core: &Arc<Core>, q: usize) {
        let Some(job) = core.q7.job(Some(core.q7.current_op())) else { return };
        let (outcome, end) = crate::q7::invoke::run(self, core, &job, q);
        if let crate::q7::invoke::Outcome::Fault(cause) = outcome {
            let detail = cause.detail(q as u8);
            if core.q7.fault(job.op_id, detail) {
                let pool = EngineId::Pool.index() as u8;
                self.error_record(core, Some(pool), job.pc, InferErrorSubtype::GpsimdException, detail, end);
            }
        }
        if let Some(addr) = core.q7.finish(job.op_id, outcome, end)
            && addr != 0
        {
            // A completion address that is not writable is the host's
            // mistake; the op still ends (the engines are woken).
            let _ = self.write_at(DeviceAddr(addr), &1u32.to_le_bytes(), end);
        }
        core.observe(end);
        // Engines waiting on the cluster wait for the op's end (DRAIN, a
        // new dispatch, the end of the execution) or for a fault (POOL
        // halts): an invocation that ends fine while others still run
        // changes nothing they wait for, and waking them anyway re-ran
        // the POOL sequencer once per Q7 core per op.
        if outcome != crate::q7::invoke::Outcome::Ok || !core.q7.busy() {
            self.wake(core, Change::Q7);
        }
    }

    /// Queues a walk of DMA queue `q` unless one is queued already.
    pub fn schedule_dma(&self, core: &Core, q: usize) {
        if core.dma[q].queued.load(Ordering::SeqCst) {
            return;
        }
        if !core.dma[q].queued.swap(true, Ordering::SeqCst) {
            self.scheduler.submit(|| self.arc(), Task::Dma(core.id.0, q as u16));
        }
    }

    /// Re-queues every active engine of the core (a core-wide change), in
    /// fixed engine order.
    pub fn wake_core(&self, core: &Core) {
        self.wake(core, Change::Everything);
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
    fn wake_range(&self, core: &Core, range: (u32, u32), by: Option<usize>) {
        self.wake_range_with(core, range, by, || self.arc());
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
    fn wake_range_with<H: RunnerHandle<Shared>>(&self, core: &Core, (lo, hi): (u32, u32), by: Option<usize>, handle: impl Fn() -> H) {
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

    /// The wake at the end of a DMA slice ([`crate::wake::DmaWake`]: DRAIN
    /// waiters and the waiters of the completion semaphore and event it
    /// changed), as [`Shared::wake_all_of`] of those changes would, with
    /// the per-engine test a few compares of the published key.
    /// Engine `by` (if any) is not re-queued, as for [`Shared::wake_others`].
    /// Inline into the walk, its one caller.
    #[inline]
    pub fn wake_dma(&self, core: &Core, wake: crate::wake::DmaWake, by: Option<usize>) {
        crate::wake::publish_change();
        for (e, slot) in core.engines.iter().enumerate() {
            if Some(e) != by && wake.wakes(slot.wait.word()) && slot.active.load(Ordering::Acquire) && !slot.queued.load(Ordering::SeqCst) {
                self.schedule_engine(core, e);
            }
        }
    }

    /// Writes a record into the core's (engine, type) queue, if bound.
    pub fn push_record(&self, core: &Core, engine_index: u8, ty: NqType, rec: [u8; NQ_RECORD_BYTES]) -> bool {
        core.with_nq(engine_index, ty, |nq| nq.push(self, rec)).unwrap_or(false)
    }

    /// Writes an error record into the reporting engine's ERROR queue,
    /// falling back to engine 0's ERROR queue (the core's error ring).
    /// `engine` is `None` for DMA-side errors, which go to the core ring.
    pub fn error_record(&self, core: &Core, engine: Option<u8>, pc: u64, subtype: InferErrorSubtype, detail: u16, ts: u64) {
        let rec = nq::record::error(engine, pc, subtype, detail, ts);
        let e = engine.unwrap_or(0);
        if !self.push_record(core, e, NqType::Error, rec) && e != 0 {
            self.push_record(core, 0, NqType::Error, rec);
        }
    }
}

/// Where a 32-bit store lands ([`Shared::store_route`]); the device's
/// address map never changes, so a caller may keep it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreRoute {
    /// A register of DMA queue `RegRef::queue` of the core (4-byte aligned).
    DmaReg(CoreId, dma::RegRef),
    /// Anything else, stored through [`Shared::write_routed`].
    Other(Target),
}

/// The error of a register index past the core's `count` (built out of
/// line, off the register calls' path).
#[cold]
#[inline(never)]
fn no_such_register(core: CoreId, index: u32, count: u32, what: &str) -> HalError {
    HalError::invalid(DeviceAddr(0), 0, format!("{what} {index} does not exist; {core} has {count}"))
}

/// The register an EVT_SEM window write changed.
fn window_change(op: WindowOp) -> Change {
    match op {
        WindowOp::Event(i) => Change::Event(i),
        WindowOp::Set(i) | WindowOp::Inc(i) | WindowOp::Dec(i) => Change::Sem(i),
    }
}

/// A simulated Neuron device. Cheap to create: memory, cores and worker
/// threads all appear on first use.
#[derive(Debug)]
pub struct SimDevice {
    shared: Arc<Shared>,
}

impl SimDevice {
    /// Device `index` of the instance described by `config`.
    pub fn new(config: &SimConfig, index: u32) -> SimDevice {
        let arch = config.arch.desc();
        let hbm: Vec<HbmChannelDesc> = arch
            .hbm
            .iter()
            .map(|c| HbmChannelDesc { base: c.base, size: config.hbm_bytes_per_channel.map_or(c.size, |s| s.min(c.size)) })
            .collect();
        let host = HbmChannelDesc { base: arch.host_dma_base, size: config.host_memory_bytes };
        let info = DeviceInfo {
            backend: "sim",
            arch,
            device_index: index,
            physical_cores: arch.cores_per_device,
            hbm: hbm.clone(),
            host_memory: host,
        };
        let shared = Arc::new_cyclic(|me| Shared {
            arch,
            info,
            config: config.clone(),
            memory: Memory::new(&hbm, host),
            faults: FaultState::default(),
            scheduler: Scheduler::new(config.deterministic, config.threads, config.deterministic_drain_limit),
            cores: (0..arch.cores_per_device).map(|_| OnceLock::new()).collect(),
            lost: Mutex::new(None),
            is_lost: std::sync::atomic::AtomicBool::new(false),
            me: me.clone(),
        });
        shared.faults.arm_all(&config.faults);
        SimDevice { shared }
    }

    /// Every device of the configured instance.
    pub fn all(config: &SimConfig) -> Vec<SimDevice> {
        (0..config.devices).map(|i| SimDevice::new(config, i)).collect()
    }

    /// The shared state, for in-crate tests that drive engines directly.
    #[cfg(test)]
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Every device of the instance the `NEURON_SIM_*` environment
    /// describes (the runtime's default backend).
    pub fn all_from_env() -> Result<Vec<SimDevice>, crate::config::ConfigError> {
        Ok(SimDevice::all(&SimConfig::from_env()?))
    }

    /// Simulates losing the device (a PCIe drop, a driver reset): every
    /// later `Device` call fails with `DeviceLost` naming `reason`, and
    /// the device stops stepping its engines and queues.
    pub fn lose(&self, reason: &str) {
        *self.shared.lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason.to_string());
        self.shared.is_lost.store(true, Ordering::Release);
        self.shared.scheduler().shutdown();
    }

    #[inline]
    fn alive(&self) -> HalResult<()> {
        if !self.shared.is_lost.load(Ordering::Acquire) {
            return Ok(());
        }
        self.lost_error()
    }

    /// [`SimDevice::alive`] once the device may be lost: the error naming
    /// why (kept out of line, off every device call's path).
    #[cold]
    #[inline(never)]
    fn lost_error(&self) -> HalResult<()> {
        match &*self.shared.lost.lock().unwrap_or_else(|e| e.into_inner()) {
            None => Ok(()),
            Some(reason) => Err(HalError::DeviceLost { reason: format!("simulated device {}: {reason}", self.shared.info.device_index) }),
        }
    }

    /// Arms a fault at run time (the test API of fault injection).
    pub fn inject(&self, fault: FaultSpec) {
        self.shared.faults.arm(fault);
    }

    /// Worker threads started so far (0 for an idle or deterministic device).
    pub fn worker_threads(&self) -> usize {
        self.shared.scheduler().workers()
    }

    /// Cores that have been touched (an idle core is never created).
    pub fn started_cores(&self) -> Vec<CoreId> {
        (0..self.shared.info.physical_cores).map(CoreId).filter(|c| self.shared.started_core(*c).is_some()).collect()
    }

    /// Backing pages materialised across HBM and host memory (for
    /// checking that untouched memory costs nothing).
    pub fn resident_pages(&self) -> usize {
        self.shared.memory.hbm.iter().map(|p| p.bytes.resident_pages()).sum::<usize>()
            + self.shared.memory.host.bytes.resident_pages()
    }

    /// Virtual clock (ps) of an engine, for profiles and tests.
    pub fn engine_clock(&self, core: CoreId, engine: EngineId) -> Option<u64> {
        let c = self.shared.started_core(core)?;
        let seq = c.engines[engine.index()].seq.lock().unwrap_or_else(|e| e.into_inner());
        Some(seq.clock())
    }

    /// Run state of an engine's sequencer.
    pub fn engine_state(&self, core: CoreId, engine: EngineId) -> Option<RunState> {
        let c = self.shared.started_core(core)?;
        let seq = c.engines[engine.index()].seq.lock().unwrap_or_else(|e| e.into_inner());
        Some(seq.state())
    }

    /// The core (borrowed: no reference-count traffic on the doorbell's
    /// path) if register `index` of `count` exists.
    #[inline]
    fn index_check(&self, core: CoreId, index: u32, count: u32, what: &str) -> HalResult<&Arc<Core>> {
        let c = self.shared.core_borrowed(core)?;
        if index >= count {
            return Err(no_such_register(core, index, count, what));
        }
        Ok(c)
    }

    fn queue_index(&self, queue: DmaQueueId) -> HalResult<usize> {
        let a = self.shared.arch;
        if u32::from(queue.engine) >= a.dma_engines_per_core || u32::from(queue.queue) >= a.queues_per_dma_engine {
            return Err(HalError::invalid(
                DeviceAddr(0),
                0,
                format!(
                    "DMA queue {queue} does not exist; cores have {} engines x {} queues",
                    a.dma_engines_per_core, a.queues_per_dma_engine
                ),
            ));
        }
        Ok(usize::from(queue.engine) * a.queues_per_dma_engine as usize + usize::from(queue.queue))
    }
}

impl Drop for SimDevice {
    fn drop(&mut self) {
        self.shared.scheduler().shutdown();
    }
}

impl Device for SimDevice {
    fn info(&self) -> &DeviceInfo {
        &self.shared.info
    }

    fn alloc(&self, location: MemoryLocation, size: u64, align: u64) -> HalResult<DeviceAddr> {
        self.alive()?;
        self.shared.memory.pool(location)?.alloc(size, align)
    }

    fn free(&self, addr: DeviceAddr) -> HalResult<()> {
        self.alive()?;
        match self.shared.target(addr, 0)? {
            Target::Pool(ch, _) => self.shared.pool(ch).free(addr),
            _ => Err(HalError::invalid(addr, 0, "only HBM and host-DMA allocations can be freed")),
        }
    }

    fn read(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        self.alive()?;
        self.shared.read(addr, buf)
    }

    fn write(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()> {
        self.alive()?;
        self.shared.write_at(addr, data, 0)
    }

    fn memset(&self, addr: DeviceAddr, value: u8, len: u64) -> HalResult<()> {
        self.alive()?;
        match self.shared.target(addr, len)? {
            Target::Pool(ch, off) => self.shared.pool(ch).bytes.fill(off, len, value),
            Target::Sbuf(c, off) => self.shared.core(c)?.sbuf.fill(off, len, value),
            Target::Psum(c, off) => self.shared.core(c)?.psum.fill(off, len, value),
            _ => {
                let buf = vec![value; len as usize];
                self.shared.write_at(addr, &buf, 0)?;
            }
        }
        Ok(())
    }

    fn copy(&self, src: DeviceAddr, dst: DeviceAddr, len: u64) -> HalResult<()> {
        self.alive()?;
        self.shared.copy_at(src, dst, len, 0)
    }

    fn semaphore_read(&self, core: CoreId, index: u32) -> HalResult<i32> {
        self.alive()?;
        let c = self.index_check(core, index, self.shared.arch.semaphores, "semaphore")?;
        Ok(c.sync.sem(index))
    }

    fn semaphore_set(&self, core: CoreId, index: u32, value: i32) -> HalResult<()> {
        self.alive()?;
        let c = self.index_check(core, index, self.shared.arch.semaphores, "semaphore")?;
        c.sync.set_sem(index, value, c.now());
        self.shared.wake_held(c, Change::Sem(index));
        Ok(())
    }

    fn semaphore_increment(&self, core: CoreId, index: u32, by: u32) -> HalResult<()> {
        self.alive()?;
        let c = self.index_check(core, index, self.shared.arch.semaphores, "semaphore")?;
        c.sync.add_sem(index, by as i32, c.now());
        self.shared.wake_held(c, Change::Sem(index));
        Ok(())
    }

    fn semaphore_decrement(&self, core: CoreId, index: u32, by: u32) -> HalResult<()> {
        self.alive()?;
        let c = self.index_check(core, index, self.shared.arch.semaphores, "semaphore")?;
        c.sync.add_sem(index, (by as i32).wrapping_neg(), c.now());
        self.shared.wake_held(c, Change::Sem(index));
        Ok(())
    }

    fn event_read(&self, core: CoreId, index: u32) -> HalResult<bool> {
        self.alive()?;
        let c = self.index_check(core, index, self.shared.arch.events, "event")?;
        Ok(c.sync.event(index))
    }

    fn event_set(&self, core: CoreId, index: u32) -> HalResult<()> {
        self.alive()?;
        let c = self.index_check(core, index, self.shared.arch.events, "event")?;
        c.sync.set_event(index, true, c.now());
        self.shared.wake_held(c, Change::Event(index));
        Ok(())
    }

    fn event_clear(&self, core: CoreId, index: u32) -> HalResult<()> {
        self.alive()?;
        let c = self.index_check(core, index, self.shared.arch.events, "event")?;
        c.sync.set_event(index, false, c.now());
        self.shared.wake_held(c, Change::Event(index));
        Ok(())
    }

    fn dma_queue_init(&self, core: CoreId, queue: DmaQueueId, config: DmaRingConfig) -> HalResult<()> {
        self.alive()?;
        let qi = self.queue_index(queue)?;
        let c = self.shared.core(core)?;
        for ring in [config.tx_ring, config.rx_ring] {
            self.shared.target(ring, u64::from(config.descriptors) * 16)?;
        }
        c.dma[qi].init(config);
        Ok(())
    }

    fn dma_queue_state(&self, core: CoreId, queue: DmaQueueId) -> HalResult<DmaQueueState> {
        self.alive()?;
        let qi = self.queue_index(queue)?;
        Ok(self.shared.core(core)?.dma[qi].state())
    }

    fn dma_tail_increment(&self, core: CoreId, queue: DmaQueueId, tx: u32, rx: u32) -> HalResult<()> {
        self.alive()?;
        let qi = self.queue_index(queue)?;
        let c = self.shared.core(core)?;
        c.dma[qi].ring_doorbell(tx, rx);
        self.shared.schedule_dma(&c, qi);
        Ok(())
    }

    fn nq_init(&self, spec: NqSpec) -> HalResult<Arc<dyn NqRing>> {
        self.alive()?;
        let c = self.shared.core(spec.core)?;
        if !spec.size_bytes.is_power_of_two() || (spec.size_bytes as usize) < NQ_RECORD_BYTES {
            return Err(HalError::invalid(
                spec.ring,
                u64::from(spec.size_bytes),
                "NQ size must be a power of two of at least 16 bytes",
            ));
        }
        let size = u64::from(spec.size_bytes);
        let pin = match self.shared.target(spec.ring, size)? {
            Target::EvtSem(..) | Target::DmaRegs(..) | Target::Q7(..) => {
                return Err(HalError::invalid(spec.ring, size, "NQ ring must be memory"));
            }
            // HBM and host rings are resolved to their page once.
            Target::Pool(ch, off) => self.shared.pool(ch).bytes.pin(off, size),
            _ => None,
        };
        let mut state = NqState::with_signal(spec, c.nq_signal.clone());
        if let Some(p) = pin {
            state = state.pinned_to(p);
        }
        let state = Arc::new(state);
        if let Some(old) = c.bind_nq(state.clone()) {
            old.disable();
        }
        let mem: Arc<dyn RingMemory> = self.shared.clone();
        Ok(Arc::new(NqView::new(state, mem)))
    }

    fn nq_destroy(&self, spec: NqSpec) -> HalResult<()> {
        self.alive()?;
        let c = self.shared.core(spec.core)?;
        if let Some(old) = c.unbind_nq(spec.engine_index, spec.nq_type) {
            old.disable();
        }
        Ok(())
    }

    fn reserve_cores(&self, cores: &[CoreId]) -> HalResult<CoreReservation> {
        self.alive()?;
        for &c in cores {
            self.shared.check_core(c)?;
        }
        let cfg = &self.shared.config;
        CoreReservation::acquire(&cfg.lock_dir, &cfg.lock_namespace, self.shared.info.device_index, cores)
    }

    fn start_engine(&self, core: CoreId, engine: EngineId, addr: DeviceAddr, len: u64) -> HalResult<()> {
        self.alive()?;
        let c = self.shared.core(core)?;
        self.shared.target(addr, len)?;
        let slot = &c.engines[engine.index()];
        let mut seq = slot.seq.lock().unwrap_or_else(|e| e.into_inner());
        seq.start(addr, len / 64);
        slot.active.store(true, Ordering::Release);
        drop(seq);
        self.shared.schedule_engine(&c, engine.index());
        Ok(())
    }

    fn assist(&self) -> bool {
        self.shared.scheduler.run_one(&self.shared)
    }

    fn lending_begin(&self) {
        self.shared.scheduler.lending_begin();
    }

    fn lending_end(&self) {
        self.shared.scheduler.lending_end();
    }

    fn reset_core(&self, core: CoreId) -> HalResult<()> {
        self.alive()?;
        self.shared.check_core(core)?;
        let Some(c) = self.shared.started_core(core) else { return Ok(()) };
        for slot in c.engines.iter() {
            slot.active.store(false, Ordering::Release);
            slot.seq.lock().unwrap_or_else(|e| e.into_inner()).reset();
        }
        for q in c.dma.iter() {
            q.reset();
        }
        c.sync.reset();
        c.q7.reset();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SimConfig;
    use crate::wake::WaitKey;
    use nrt_hal::arch::{DMA_M2S_GROUP, DMA_S2M_GROUP};
    use nrt_hal::conformance::udma_copy_pair;

    /// A sequencer's tail stores walk the queue at once, and the walk's
    /// wake leaves out only the writer itself: engine 0 of another core,
    /// blocked on the queue's completion semaphore, is stepped.
    #[test]
    fn a_tail_store_walks_at_once_and_wakes_the_other_cores_engine_of_the_writers_index() {
        let dev = SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build(), 0);
        let hbm = MemoryLocation::Hbm { channel: 0 };
        let (tx, rx) = (dev.alloc(hbm, 16, 64).unwrap(), dev.alloc(hbm, 16, 64).unwrap());
        let (src, dst) = (dev.alloc(hbm, 64, 64).unwrap(), dev.alloc(hbm, 64, 64).unwrap());
        dev.write(src, &[9; 64]).unwrap();
        let (c1, q) = (CoreId(1), DmaQueueId { engine: 0, queue: 4 });
        dev.dma_queue_init(c1, q, DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: 1, completion_semaphore: Some(3), completion_event: None }).unwrap();
        let (t, r) = udma_copy_pair(src, dst, 64);
        dev.write(tx, &t).unwrap();
        dev.write(rx, &r).unwrap();
        let shared = dev.shared();
        let core1 = shared.core(c1).unwrap();
        // Engine 0 of core 1 as if blocked on the completion semaphore (its
        // sequencer never started, so a step of it stops it).
        core1.engines[0].active.store(true, Ordering::Release);
        core1.engines[0].wait.blocked_on(WaitKey::Sem(3));
        let arch = shared.arch;
        let core0 = shared.core(CoreId(0)).unwrap();
        let by = Some((&*core0, 0));
        for group in [DMA_M2S_GROUP, DMA_S2M_GROUP] {
            let addr = arch.dma_tail_inc_addr(c1, q, group);
            let route = shared.store_route(addr).unwrap();
            assert!(matches!(route, StoreRoute::DmaReg(..)));
            shared.store_word(route, addr, 1, 0, by).unwrap();
        }
        let mut got = [0u8; 64];
        dev.read(dst, &mut got).unwrap();
        assert_eq!(got, [9; 64], "walked by the second tail store");
        assert_eq!(dev.semaphore_read(c1, 3).unwrap(), 1);
        assert!(!core1.engines[0].active.load(Ordering::Acquire), "core 1's engine 0 was woken and stepped");
        assert_eq!(dev.dma_queue_state(c1, q).unwrap().tx_head, 1);
    }
}
