//! The device's shared state: the one object every worker's door leads to,
//! held only by the device root (this module's siblings, the device handle
//! and the scheduler's tasks): the cores (created on first use), memory,
//! faults, the instance it belongs to (its peers and the scheduler they
//! share) and the lost flag; how a scheduled task runs.

use crate::config::SimConfig;
use crate::core::Core;
use crate::engine::{RunState, StepOutcome};
use crate::fault::FaultState;
use crate::memory::{Memory, Target, decode};
use super::instance::Instance;
use crate::scheduler::Task;
use crate::wake::Change;
use nrt_hal::{ArchDesc, CoreId, DeviceAddr, DeviceInfo, EngineId, HalError, HalResult};
use nrt_isa::notification::InferErrorSubtype;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Instructions an engine runs per scheduling slice.
const ENGINE_BUDGET: usize = 256;

/// State shared by the device handle, its workers and mapped NQ views.
#[derive(Debug)]
pub(crate) struct Shared {
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
    /// The instance: the peer window's devices and the scheduler every
    /// device of it shares.
    pub(super) instance: Arc<Instance>,
    pub(super) cores: Box<[OnceLock<Arc<Core>>]>,
    /// Set by [`SimDevice::lose`]: why the device is gone.
    pub(super) lost: Mutex<Option<String>>,
    /// Whether `lost` is set (every `Device` call checks this first).
    pub(super) is_lost: std::sync::atomic::AtomicBool,
    pub(super) me: Weak<Shared>,
    /// This process's datastore entry, claimed at the first core
    /// reservation (`None` inside when publishing is off or failed).
    pub(super) status: OnceLock<Option<Arc<nrt_hal::status::SlotWriter>>>,
}

impl Shared {
    /// Runs one slice of a device-local `task` (the instance's scheduler
    /// found the device, [`Instance`]).
    #[inline]
    pub(super) fn run_task(self: &Arc<Self>, task: Task) {
        match task {
            Task::Engine(c, e) => {
                let Some(core) = self.core_ref(CoreId(c)) else { return };
                self.step_engine(core, usize::from(e));
            }
            Task::Dma(c, q) => {
                let Some(core) = self.core_ref(CoreId(c)) else { return };
                core.dma[q as usize].queued.store(false, Ordering::SeqCst);
                self.walk_queue(core, q as usize, None);
            }
            Task::Q7(c, q) => {
                let Some(core) = self.core_ref(CoreId(c)) else { return };
                self.run_q7(core, usize::from(q));
            }
        }
    }

    /// The index the instance's scheduler gives `core` of this device in
    /// a task.
    #[inline]
    pub(super) fn task_core(&self, core: CoreId) -> u32 {
        self.instance.task_core(self.info.device_index, core.0)
    }
}

impl Shared {
    /// One scheduling slice of engine `e` of `core` (a [`Task::Engine`]):
    /// its sequencer stepped under its lock, with the wait handshake of
    /// [`crate::wake`] around the step.
    #[inline]
    pub(super) fn step_engine(self: &Arc<Self>, core: &Arc<Core>, e: usize) {
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
        let outcome = seq.step(&**self, core, ENGINE_BUDGET);
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

impl Shared {
    #[inline]
    pub(super) fn arc(&self) -> Arc<Shared> {
        // `me` points at the Arc that owns `self`, which is alive while
        // `&self` is.
        self.me.upgrade().unwrap_or_else(|| unreachable!("Shared used after its Arc dropped"))
    }

    pub(super) fn target(&self, addr: DeviceAddr, len: u64) -> HalResult<Target> {
        decode(self.arch, &self.memory, self.info.physical_cores, addr, len)
    }

    /// The device of the instance a peer-window target names
    /// ([`Target::Peer`]); this device itself when it names this one.
    pub(super) fn peer(&self, device: u32, addr: DeviceAddr, len: u64) -> HalResult<Arc<Shared>> {
        if device == self.info.device_index {
            return Ok(self.arc());
        }
        self.instance.peer(device, addr, len)
    }

    #[inline]
    pub(super) fn check_core(&self, core: CoreId) -> HalResult<()> {
        if core.0 < self.info.physical_cores { Ok(()) } else { Err(self.no_such_core(core)) }
    }

    /// The error of a core index past the device's (built out of line).
    #[cold]
    #[inline(never)]
    pub(super) fn no_such_core(&self, core: CoreId) -> HalError {
        HalError::invalid(DeviceAddr(0), 0, format!("core {} does not exist; the device has {} physical cores", core.0, self.info.physical_cores))
    }

    /// The core, creating it on first use.
    pub fn core(&self, core: CoreId) -> HalResult<Arc<Core>> {
        self.core_borrowed(core).cloned()
    }

    /// [`Shared::core`] borrowed (no reference-count traffic: a created
    /// core lives as long as the device).
    pub(super) fn core_borrowed(&self, core: CoreId) -> HalResult<&Arc<Core>> {
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

    pub(super) fn aligned_words(addr: DeviceAddr, len: u64) -> HalResult<()> {
        if addr.is_aligned(4) && len.is_multiple_of(4) {
            Ok(())
        } else {
            Err(HalError::invalid(addr, len, "register windows take whole, 4-byte aligned 32-bit words"))
        }
    }

    pub(super) fn pool(&self, channel: Option<usize>) -> &crate::memory::Pool {
        match channel {
            Some(c) => &self.memory.hbm[c],
            None => &self.memory.host,
        }
    }

    pub(super) fn q7_target(&self, addr: DeviceAddr, off: u64, len: u64) -> HalResult<crate::q7::PortalTarget> {
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

    /// Runs Q7 core `q`'s share of the op in flight and reports its end:
    /// an exception record, the completion write, a wake of the engines.
    pub(super) fn run_q7(self: &Arc<Self>, core: &Arc<Core>, q: usize) {
        let Some(job) = core.q7.job(Some(core.q7.current_op())) else { return };
        let (outcome, end) = crate::q7::invoke::run(self, self.arch, &core.q7, &job, q);
        self.end_q7(core, q, &job, outcome, end);
    }

    /// Ends Q7 core `q`'s invocation of `job` with `outcome` at `end`:
    /// the fault record, the op's completion, the wake.
    pub(super) fn end_q7(self: &Arc<Self>, core: &Arc<Core>, q: usize, job: &crate::q7::invoke::Job, outcome: crate::q7::invoke::Outcome, end: u64) {
        if let crate::q7::invoke::Outcome::Fault(cause) = outcome {
            let detail = cause.detail(q as u8);
            if core.q7.fault(job.op_id, detail) {
                let pool = EngineId::Pool.index() as u8;
                core.error_record(&**self, Some(pool), job.pc, InferErrorSubtype::GpsimdException, detail, end);
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
}
