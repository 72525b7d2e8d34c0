//! Per-physical-core execution resources the runtime owns: the dispatcher
//! streams and the instruction arena they run over, the request buffer,
//! the NOTIFY and ERROR rings with their consumer positions, the pool of
//! DMA queues models claim, the shared scratchpad, and the lock that
//! serialises executions on the core. Installing a core also sets up its
//! tensor-transfer queues (`crate::transfer`).
//!
//! Installed once per core (libnrt starts its "exec-ready program" on every
//! core at init) and shared by every model loaded there.

use crate::exec::arena::Arena;
use crate::exec::dispatch::{self, DISPATCHER_RECORDS};
use crate::exec::request::REQUEST_BUFFER_BYTES;
use crate::memory::{DeviceMemory, MemOwner, MemUsage};
use crate::model::ModelId;
use crate::status::{NrtError, NrtResult};
use nrt_hal::{CoreId, Device, DeviceAddr, DmaQueueId, DmaRingConfig, EngineId, NQ_RECORD_BYTES, NqRing, NqSpec, NqType};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Default size of a core's instruction arena (dispatchers + model images).
pub const DEFAULT_ARENA_BYTES: u64 = 16 << 20;
/// Bytes of each NOTIFY / ERROR ring (256 records).
pub const NQ_RING_BYTES: u32 = 4096;
/// Granularity of the shared scratchpad.
pub const SCRATCHPAD_PAGE: u64 = 4096;

/// What the core's execution lock protects.
#[derive(Debug, Default)]
pub struct CoreExec {
    /// The model whose request was posted last (drives `do_model_switch`).
    pub last_model: Option<ModelId>,
    /// Model switches posted on this core.
    pub switches: u64,
    /// The request bytes the buffer holds (written by the last execution);
    /// an identical request, a repeat of the same model, is not rewritten.
    pub posted: Option<[u8; crate::exec::request::REQUEST_BUFFER_BYTES]>,
    /// The model whose repeat request (no model switch) `posted` holds: a
    /// further repeat of it needs neither building nor comparing.
    pub posted_repeat_of: Option<ModelId>,
}

#[derive(Debug, Default)]
struct Scratchpad {
    addr: Option<DeviceAddr>,
    size: u64,
    users: u32,
}

/// One installed core.
pub struct CoreDispatch {
    core: CoreId,
    device: Arc<dyn Device>,
    memory: Arc<DeviceMemory>,
    arena_base: DeviceAddr,
    arena: Mutex<Arena>,
    request: DeviceAddr,
    notify: Vec<Arc<dyn NqRing>>,
    errors: Vec<Arc<dyn NqRing>>,
    notify_head: [AtomicU64; 5],
    error_head: [AtomicU64; 5],
    ring_memory: Vec<DeviceAddr>,
    queues: Mutex<BTreeSet<DmaQueueId>>,
    /// The in-NEFF collectives' resources no loaded model holds yet: the
    /// core's pool of collectives DMA queues and the semaphores of the
    /// collectives block (`cc::neff`).
    cc_free: Mutex<CcFree>,
    /// How each claimed queue was programmed, replayed after a core reset.
    queue_configs: Mutex<BTreeMap<DmaQueueId, DmaRingConfig>>,
    scratchpad: Mutex<Scratchpad>,
    exec: Mutex<CoreExec>,
    doorbells: AtomicU64,
    q7: Mutex<Option<crate::custom_ops::Q7Cluster>>,
    /// The TRACE rings of a core while a profile holds them
    /// ([`CoreDispatch::enable_trace`], [`CoreDispatch::release_trace`]).
    trace: Mutex<Option<TraceRings>>,
}

/// The in-NEFF collectives resources of a core that are free.
#[derive(Debug)]
struct CcFree {
    queues: BTreeSet<DmaQueueId>,
    sems: BTreeSet<u32>,
}

/// A core's TRACE rings and how far the runtime has read them: one per
/// engine, then one TRACE_DMA ring per DMA engine (but the tensor
/// transfers', whose ring the transfers keep).
struct TraceRings {
    rings: Vec<Arc<dyn NqRing>>,
    heads: Vec<u64>,
    memory: Vec<DeviceAddr>,
    /// The profiles holding them: a model profiled from its load, a
    /// capture on a model (one per core of its program).
    holders: u32,
}

/// Bytes of each DMA engine's TRACE_DMA ring of a profiled core (4096
/// records: 2048 packets per DMA engine and execution before the oldest
/// are overwritten).
pub const DMA_TRACE_RING_BYTES: u32 = 1 << 16;

impl std::fmt::Debug for CoreDispatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreDispatch").field("core", &self.core).field("arena", &self.arena_base).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn hal(core: CoreId, what: &str, e: impl std::fmt::Display) -> NrtError {
    NrtError::failure(format!("NC {}: {what} failed: {e}", core.0))
}

impl CoreDispatch {
    /// Installs the dispatcher on `core`: allocates and writes the arena,
    /// request buffer and NQ rings, clears the dispatch semaphores and
    /// starts every engine's dispatcher. Rolls back on failure.
    pub fn install(memory: &Arc<DeviceMemory>, core: CoreId, arena_bytes: u64) -> NrtResult<CoreDispatch> {
        let device = memory.device().clone();
        let mut taken: Vec<DeviceAddr> = Vec::new();
        let result = Self::install_inner(memory, &device, core, arena_bytes, &mut taken);
        if result.is_err() {
            for a in taken.into_iter().rev() {
                let _ = memory.free(a);
            }
        }
        result
    }

    fn install_inner(
        memory: &Arc<DeviceMemory>,
        device: &Arc<dyn Device>,
        core: CoreId,
        arena_bytes: u64,
        taken: &mut Vec<DeviceAddr>,
    ) -> NrtResult<CoreDispatch> {
        let slot = DISPATCHER_RECORDS * 64;
        let reserved = slot * EngineId::ALL.len() as u64;
        if arena_bytes < reserved * 2 {
            return Err(NrtError::invalid(format!("instruction arena of {arena_bytes} bytes is too small; at least {} needed", reserved * 2)));
        }
        let mut alloc = |usage: MemUsage, size: u64, align: u64| -> NrtResult<DeviceAddr> {
            let a = memory.alloc(core, MemOwner::Runtime, usage, size, align)?;
            taken.push(a);
            Ok(a)
        };
        let arena_base = alloc(MemUsage::InstrSp, arena_bytes, 4096)?;
        let request = alloc(MemUsage::Generic, REQUEST_BUFFER_BYTES as u64, 64)?;
        let mut ring_memory = Vec::new();
        let mut rings = |ty: NqType| -> NrtResult<Vec<Arc<dyn NqRing>>> {
            let mut v = Vec::with_capacity(5);
            for e in EngineId::ALL {
                let ring = alloc(MemUsage::Notification, u64::from(NQ_RING_BYTES), u64::from(NQ_RING_BYTES))?;
                ring_memory.push(ring);
                let spec = NqSpec { core, engine_index: e.index() as u8, nq_type: ty, ring, size_bytes: NQ_RING_BYTES };
                v.push(device.nq_init(spec).map_err(|err| hal(core, "notification queue init", err))?);
            }
            Ok(v)
        };
        let notify = rings(NqType::Notify)?;
        let errors = rings(NqType::Error)?;
        device.write(request, &[0u8; REQUEST_BUFFER_BYTES]).map_err(|e| hal(core, "request buffer init", e))?;
        for s in [dispatch::DOORBELL_SEM, dispatch::DONE_SEM, dispatch::SWITCH_COUNT_SEM]
            .into_iter()
            .chain(EngineId::ALL.into_iter().filter(|e| *e != EngineId::Sp).map(dispatch::go_sem))
        {
            device.semaphore_set(core, s, 0).map_err(|e| hal(core, "semaphore init", e))?;
        }
        // The core's tensor-transfer queues come up with it (runtime
        // memory, released when the device memory is closed).
        memory.transfers().prepare(memory, core)?;
        start_dispatchers(&**device, core, arena_base, arena_bytes, request)?;
        let info = device.info();
        let queues = (0..info.dma_engines())
            .flat_map(|e| (0..info.dma_queues_per_engine()).map(move |q| DmaQueueId { engine: e as u8, queue: q as u8 }))
            // The custom-op queues (one per Q7 core) are never handed to models.
            .filter(|q| !crate::custom_ops::is_custom_op_dma(u32::from(q.engine), u32::from(q.queue)))
            // Nor the collectives' queues.
            .filter(|q| !crate::cc::compose::is_cc_queue(u32::from(q.engine), u32::from(q.queue)))
            .filter(|q| !crate::cc::neff::is_neff_cc_queue(u32::from(q.engine), u32::from(q.queue)))
            // Nor the tensor transfers' engine.
            .filter(|q| !crate::transfer::is_transfer_queue(u32::from(q.engine), u32::from(q.queue)))
            .collect();
        Ok(CoreDispatch {
            core,
            device: device.clone(),
            memory: memory.clone(),
            arena_base,
            arena: Mutex::new(Arena::new(arena_bytes, reserved)),
            request,
            notify,
            errors,
            notify_head: Default::default(),
            error_head: Default::default(),
            ring_memory,
            queues: Mutex::new(queues),
            cc_free: Mutex::new(CcFree { queues: crate::cc::neff::pool_queues().collect(), sems: crate::cc::neff::READY_SEMS.collect() }),
            queue_configs: Mutex::default(),
            scratchpad: Mutex::new(Scratchpad::default()),
            exec: Mutex::new(CoreExec::default()),
            doorbells: AtomicU64::new(0),
            q7: Mutex::new(None),
            trace: Mutex::new(None),
        })
    }

    /// The physical core.
    pub fn core(&self) -> CoreId {
        self.core
    }

    /// The device.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// Device address of the request buffer.
    pub fn request_addr(&self) -> DeviceAddr {
        self.request
    }

    /// Device address of the instruction arena (the runtime allocation
    /// model images are carved from, for the ledger).
    pub fn arena_addr(&self) -> DeviceAddr {
        self.arena_base
    }

    /// Where engine `engine`'s dispatcher stream starts: the device counts
    /// that engine's program counter from here.
    pub fn engine_stream_addr(&self, engine: usize) -> Option<DeviceAddr> {
        (engine < EngineId::ALL.len()).then(|| self.arena_base.offset(engine as u64 * DISPATCHER_RECORDS * 64))
    }

    /// Takes `len` bytes of the instruction arena for a model image.
    pub fn alloc_image(&self, len: u64) -> NrtResult<DeviceAddr> {
        let mut a = lock(&self.arena);
        match a.alloc(len, 64) {
            Some(off) => Ok(self.arena_base.offset(off)),
            None => Err(NrtError::resource(format!(
                "NC {}: instruction arena full: {len} bytes requested, {} of {} free",
                self.core.0,
                a.free_bytes(),
                a.size()
            ))),
        }
    }

    /// Returns a model image's arena space.
    pub fn free_image(&self, addr: DeviceAddr) -> bool {
        addr.get().checked_sub(self.arena_base.get()).is_some_and(|off| lock(&self.arena).free(off))
    }

    /// Brings up the core's Q7 cluster with `setup` (once; later calls
    /// keep the running cluster).
    pub fn install_q7(&self, setup: &crate::custom_ops::Q7Setup) -> NrtResult<()> {
        let mut q7 = lock(&self.q7);
        if q7.is_none() {
            *q7 = Some(crate::custom_ops::Q7Cluster::install(&self.memory, self.core, setup)?);
        }
        Ok(())
    }

    /// Copies what the Q7 kernels printed into the log (libnrt's
    /// `pool_stdio_queue_consume_all_entries`); the texts, in queue order.
    pub fn drain_q7_stdio(&self) -> Vec<String> {
        lock(&self.q7).as_ref().map(|q| q.drain_stdio()).unwrap_or_default()
    }

    /// Claims `n` DMA queues for a model.
    pub fn claim_queues(&self, n: usize) -> NrtResult<Vec<DmaQueueId>> {
        let mut free = lock(&self.queues);
        if free.len() < n {
            return Err(NrtError::resource(format!("NC {}: {n} DMA queues needed, {} free", self.core.0, free.len())));
        }
        let picked: Vec<DmaQueueId> = free.iter().take(n).copied().collect();
        for q in &picked {
            free.remove(q);
        }
        Ok(picked)
    }

    /// Takes `queues` DMA queues of the core's collectives pool and `sems`
    /// semaphores of its collectives block for a loaded model's in-NEFF
    /// collectives, with the semaphores set to 0; they come back when the
    /// claim is dropped. NRT_RESOURCE names what ran out.
    pub fn claim_collectives(self: &Arc<Self>, queues: usize, sems: usize) -> NrtResult<crate::cc::neff::CcClaim> {
        let mut free = lock(&self.cc_free);
        if free.queues.len() < queues {
            return Err(NrtError::resource(format!(
                "NC {}: a NEFF with collectives needs {queues} collectives DMA queues, {} of the core's {} are free (each loaded NEFF with collectives holds {queues}; unload one)",
                self.core.0,
                free.queues.len(),
                crate::cc::neff::POOL_QUEUES
            )));
        }
        if free.sems.len() < sems {
            return Err(NrtError::resource(format!(
                "NC {}: a NEFF with collectives needs {sems} collectives semaphores (one per replica group set it uses), {} of the core's {} are free (semaphores {}..{}; unload a NEFF with collectives)",
                self.core.0,
                free.sems.len(),
                crate::cc::neff::READY_SEMS.len(),
                crate::cc::neff::READY_SEMS.start,
                crate::cc::neff::READY_SEMS.end
            )));
        }
        let q: Vec<DmaQueueId> = free.queues.iter().take(queues).copied().collect();
        let s: Vec<u32> = free.sems.iter().take(sems).copied().collect();
        for x in &q {
            free.queues.remove(x);
        }
        for x in &s {
            free.sems.remove(x);
        }
        drop(free);
        let claim = crate::cc::neff::CcClaim::new(self.clone(), q, s);
        for &x in claim.semaphores() {
            self.device.semaphore_set(self.core, x, 0).map_err(|e| hal(self.core, "collectives semaphore reset", e))?;
        }
        Ok(claim)
    }

    /// Gives a dropped collectives claim's queues and semaphores back.
    pub(crate) fn release_collectives(&self, queues: &[DmaQueueId], sems: &[u32]) {
        let mut configs = lock(&self.queue_configs);
        for q in queues {
            configs.remove(q);
        }
        drop(configs);
        let mut free = lock(&self.cc_free);
        free.queues.extend(queues.iter().copied());
        free.sems.extend(sems.iter().copied());
    }

    /// Returns DMA queues to the pool.
    pub fn release_queues(&self, queues: &[DmaQueueId]) {
        let mut configs = lock(&self.queue_configs);
        for q in queues {
            configs.remove(q);
        }
        drop(configs);
        lock(&self.queues).extend(queues.iter().copied());
    }

    /// Programs a claimed DMA queue's rings (DMA_QUEUE_INIT) and remembers
    /// the programming, so [`CoreDispatch::recover`] can restore it after a
    /// core reset.
    pub fn program_queue(&self, queue: DmaQueueId, config: DmaRingConfig) -> NrtResult<()> {
        self.device.dma_queue_init(self.core, queue, config).map_err(|e| hal(self.core, "programming a DMA queue", e))?;
        lock(&self.queue_configs).insert(queue, config);
        Ok(())
    }

    /// How a claimed DMA queue was programmed (profiles name the queue an
    /// engine waited on by its completion semaphore).
    pub fn queue_config(&self, queue: DmaQueueId) -> Option<DmaRingConfig> {
        lock(&self.queue_configs).get(&queue).copied()
    }

    /// Brings the core back to a clean state after a fatal fault left it
    /// in an undefined one (an engine halted by an error, a Q7 op that
    /// never finished): libnrt's answer to a poisoned core is a core reset
    /// followed by a fresh bring-up, done here through the device.
    ///
    /// Under the core's execution lock: RESET_NCS stops every sequencer,
    /// DMA queue and Q7 core and clears the semaphores and events; then
    /// the dispatch semaphores are re-armed (the switch counter keeps the
    /// host's count), the DMA queues of the models still loaded are
    /// reprogrammed, the dispatchers are rewritten and restarted, the Q7
    /// cluster is brought up again with its image and stdio rings, the
    /// notification rings are skipped past whatever the failed execution
    /// left, and the next execution performs a model switch.
    pub fn recover(&self) -> NrtResult<()> {
        let mut exec = lock(&self.exec);
        let core = self.core;
        self.device.reset_core(core).map_err(|e| hal(core, "core reset", e))?;
        for s in [dispatch::DOORBELL_SEM, dispatch::DONE_SEM].into_iter().chain(EngineId::ALL.into_iter().filter(|e| *e != EngineId::Sp).map(dispatch::go_sem)) {
            self.device.semaphore_set(core, s, 0).map_err(|e| hal(core, "semaphore init", e))?;
        }
        let switches = i32::try_from(exec.switches).unwrap_or(i32::MAX);
        self.device.semaphore_set(core, dispatch::SWITCH_COUNT_SEM, switches).map_err(|e| hal(core, "semaphore init", e))?;
        let configs: Vec<(DmaQueueId, DmaRingConfig)> = lock(&self.queue_configs).iter().map(|(q, c)| (*q, *c)).collect();
        for (q, cfg) in configs {
            self.device.dma_queue_init(core, q, cfg).map_err(|e| hal(core, "reprogramming a DMA queue", e))?;
        }
        let arena_bytes = lock(&self.arena).size();
        start_dispatchers(&*self.device, core, self.arena_base, arena_bytes, self.request)?;
        if let Some(q7) = lock(&self.q7).as_ref() {
            q7.reinstall()?;
        }
        self.discard_pending();
        exec.last_model = None;
        exec.posted = None;
        exec.posted_repeat_of = None;
        Ok(())
    }

    /// Joins the shared scratchpad with a need of `size` bytes: its address,
    /// or `None` when it is in use by other models and too small (the
    /// caller then allocates privately). Grows only while nobody uses it,
    /// since descriptors hold its physical address.
    pub fn acquire_scratchpad(&self, size: u64) -> NrtResult<Option<DeviceAddr>> {
        let mut s = lock(&self.scratchpad);
        let need = size.div_ceil(SCRATCHPAD_PAGE) * SCRATCHPAD_PAGE;
        if s.addr.is_none() || s.size < need {
            if s.users > 0 {
                return Ok(None);
            }
            if let Some(old) = s.addr.take() {
                self.memory.free(old)?;
            }
            s.addr = Some(self.memory.alloc(self.core, MemOwner::Runtime, MemUsage::Scratchpad, need, SCRATCHPAD_PAGE)?);
            s.size = need;
        }
        s.users += 1;
        Ok(s.addr)
    }

    /// Leaves the shared scratchpad; the last user frees it.
    pub fn release_scratchpad(&self) {
        let mut s = lock(&self.scratchpad);
        s.users = s.users.saturating_sub(1);
        if s.users == 0
            && let Some(a) = s.addr.take()
        {
            s.size = 0;
            if let Err(e) = self.memory.free(a) {
                crate::log_error!(crate::log::Module::Tdrv, "NC {}: freeing the shared scratchpad: {e}", self.core.0);
            }
        }
    }

    /// Locks the core for one execution.
    pub fn lock_exec(&self) -> MutexGuard<'_, CoreExec> {
        lock(&self.exec)
    }

    /// Rings the doorbell: one semaphore increment. `_held` is the core's
    /// execution lock (from [`CoreDispatch::lock_exec`]): it serialises
    /// every ringing of this core, so the doorbell count is a load and a
    /// store, not a locked read-modify-write.
    pub fn ring_doorbell(&self, _held: &mut CoreExec) -> NrtResult<()> {
        self.device.semaphore_increment(self.core, dispatch::DOORBELL_SEM, 1).map_err(|e| {
            NrtError::failure(format!("Failed to post inference request, err: {e}"))
        })?;
        // One writer at a time (the lock above); readers see a whole value.
        self.doorbells.store(self.doorbells.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        Ok(())
    }

    /// Doorbells rung on this core so far.
    pub fn doorbells(&self) -> u64 {
        self.doorbells.load(Ordering::Relaxed)
    }

    /// Model switches the device executed (SP's MODEL_SWITCH region counter).
    pub fn device_switch_count(&self) -> NrtResult<i32> {
        self.device.semaphore_read(self.core, dispatch::SWITCH_COUNT_SEM).map_err(|e| hal(self.core, "semaphore read", e))
    }

    fn read(ring: &dyn NqRing, head: &AtomicU64, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        let from = head.load(Ordering::Relaxed);
        // One dynamic call: the records and their acknowledgement.
        let n = ring.read_and_consume(from, out);
        if n > 0 {
            head.store(from + n as u64, Ordering::Relaxed);
        }
        n
    }

    /// Reads the next records of an engine's NOTIFY ring.
    pub fn read_notify(&self, engine: usize, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        Self::read(&*self.notify[engine], &self.notify_head[engine], out)
    }

    /// Reads the next records of an engine's ERROR ring.
    pub fn read_errors(&self, engine: usize, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        Self::read(&*self.errors[engine], &self.error_head[engine], out)
    }

    /// Skips everything already in the rings (records of an execution that
    /// was abandoned, e.g. after a timeout).
    pub fn discard_pending(&self) {
        for (rings, heads) in [(&self.notify, &self.notify_head), (&self.errors, &self.error_head)] {
            for (r, h) in rings.iter().zip(heads.iter()) {
                let p = r.produced();
                h.store(p, Ordering::Relaxed);
                r.set_consumed(p);
            }
        }
    }

    /// The count of the core's NQ interrupt line (moves on every record
    /// the device writes to any of the core's rings).
    pub fn signal_count(&self) -> u64 {
        self.notify.last().map_or(0, |r| r.signal_count())
    }

    /// Blocks until the core's rings receive a record (the interrupt line
    /// count moves past `seen`) or `timeout` passes.
    pub fn wait_signal(&self, seen: u64, timeout: std::time::Duration) -> u64 {
        match self.notify.last() {
            Some(r) => r.wait_signal(seen, timeout),
            None => seen,
        }
    }

    /// Whether engine `engine`'s notification ring overflowed.
    pub fn notify_overflowed(&self, engine: usize) -> bool {
        self.notify[engine].overflowed()
    }

    /// Gives every engine of the core a TRACE ring of
    /// [`crate::profile::TRACE_RING_BYTES`] and every DMA engine but the
    /// transfers' a TRACE_DMA ring of [`DMA_TRACE_RING_BYTES`] for one
    /// more holder (a profile); a core that has them keeps them, and each
    /// call is matched by one [`CoreDispatch::release_trace`].
    pub fn enable_trace(&self) -> NrtResult<()> {
        let mut t = lock(&self.trace);
        if let Some(t) = t.as_mut() {
            t.holders += 1;
            return Ok(());
        }
        let dma_engines = (0..self.device.info().dma_engines() as u8).filter(|e| *e != crate::transfer::TRANSFER_ENGINE);
        let specs: Vec<(u8, NqType, u32)> = EngineId::ALL
            .into_iter()
            .map(|e| (e.index() as u8, NqType::Trace, crate::profile::TRACE_RING_BYTES))
            .chain(dma_engines.map(|e| (e, NqType::TraceDma, DMA_TRACE_RING_BYTES)))
            .collect();
        let mut rings = TraceRings { rings: Vec::with_capacity(specs.len()), heads: vec![0; specs.len()], memory: Vec::with_capacity(specs.len()), holders: 1 };
        let result = (|| {
            for (engine_index, nq_type, bytes) in specs {
                let ring = self.memory.alloc(self.core, MemOwner::Runtime, MemUsage::Notification, u64::from(bytes), u64::from(bytes))?;
                rings.memory.push(ring);
                let spec = NqSpec { core: self.core, engine_index, nq_type, ring, size_bytes: bytes };
                rings.rings.push(self.device.nq_init(spec).map_err(|err| hal(self.core, "trace queue init", err))?);
            }
            Ok(())
        })();
        match result {
            Ok(()) => {
                *t = Some(rings);
                Ok(())
            }
            Err(e) => {
                let _ = self.unbind_trace(rings);
                Err(e)
            }
        }
    }

    /// Ends one holder's use of the TRACE rings ([`CoreDispatch::enable_trace`]):
    /// the last unbinds them and frees their memory, so the core's DMA
    /// queues stop writing two trace records per packet and executions
    /// after a profile cost what they did before it.
    pub fn release_trace(&self) {
        let mut t = lock(&self.trace);
        let Some(rings) = t.as_mut() else { return };
        rings.holders = rings.holders.saturating_sub(1);
        if rings.holders > 0 {
            return;
        }
        if let Some(rings) = t.take()
            && let Err(e) = self.unbind_trace(rings)
        {
            crate::log_warn!(crate::log::Module::Tdrv, "NC {}: releasing the trace rings: {e}", self.core.0);
        }
    }

    /// Whether the core has TRACE rings bound (some profile holds them).
    pub fn traced(&self) -> bool {
        lock(&self.trace).is_some()
    }

    /// Unbinds `rings` from the device and frees their memory; the first
    /// error, after trying all.
    fn unbind_trace(&self, rings: TraceRings) -> NrtResult<()> {
        for r in &rings.rings {
            let _ = self.device.nq_destroy(r.spec());
        }
        let mut first = Ok(());
        for a in rings.memory {
            if let Err(e) = self.memory.free(a)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }

    /// Reads the next records of engine `engine`'s TRACE ring into `out`;
    /// returns how many it read and how many the ring overwrote unread.
    pub fn read_trace(&self, engine: usize, out: &mut [[u8; NQ_RECORD_BYTES]]) -> (usize, u64) {
        if engine >= EngineId::ALL.len() {
            return (0, 0);
        }
        self.read_trace_ring(engine, out)
    }

    /// How many TRACE_DMA rings [`CoreDispatch::read_dma_trace`] reads
    /// (none while no profile holds them).
    pub fn dma_trace_rings(&self) -> usize {
        lock(&self.trace).as_ref().map_or(0, |t| t.rings.len().saturating_sub(EngineId::ALL.len()))
    }

    /// Reads the next records of the core's `ring`-th TRACE_DMA ring into
    /// `out` (packet starts and ends, `nrt_isa::notification::dma`);
    /// returns how many it read and how many the ring overwrote unread.
    pub fn read_dma_trace(&self, ring: usize, out: &mut [[u8; NQ_RECORD_BYTES]]) -> (usize, u64) {
        self.read_trace_ring(EngineId::ALL.len() + ring, out)
    }

    fn read_trace_ring(&self, index: usize, out: &mut [[u8; NQ_RECORD_BYTES]]) -> (usize, u64) {
        let mut t = lock(&self.trace);
        let Some(t) = t.as_mut() else { return (0, 0) };
        let (Some(ring), Some(head)) = (t.rings.get(index), t.heads.get_mut(index)) else { return (0, 0) };
        let produced = ring.produced();
        let cap = u64::from(ring.capacity());
        let lost = produced.saturating_sub(*head).saturating_sub(cap);
        *head += lost;
        let n = ring.read(*head, out);
        *head += n as u64;
        ring.set_consumed(*head);
        (n, lost)
    }

    /// Drops every unread TRACE record.
    pub fn discard_trace(&self) {
        if let Some(t) = lock(&self.trace).as_mut() {
            for (r, h) in t.rings.iter().zip(t.heads.iter_mut()) {
                *h = r.produced();
                r.set_consumed(*h);
            }
        }
    }

    /// Stops the core and frees what [`CoreDispatch::install`] allocated.
    pub fn teardown(&self) -> NrtResult<()> {
        let mut first = self.device.reset_core(self.core).map_err(|e| hal(self.core, "core reset", e));
        if let Some(mut q7) = lock(&self.q7).take()
            && let Err(e) = q7.teardown()
            && first.is_ok()
        {
            first = Err(e);
        }
        for r in self.notify.iter().chain(self.errors.iter()) {
            let _ = self.device.nq_destroy(r.spec());
        }
        let mut addrs = vec![self.arena_base, self.request];
        addrs.extend(self.ring_memory.iter().copied());
        if let Some(t) = lock(&self.trace).take()
            && let Err(e) = self.unbind_trace(t)
            && first.is_ok()
        {
            first = Err(e);
        }
        if let Some(s) = lock(&self.scratchpad).addr.take() {
            addrs.push(s);
        }
        for a in addrs {
            if let Err(e) = self.memory.free(a)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }
}

/// Writes every engine's dispatcher into its slot at the start of the
/// arena and starts the engine on it (install and recovery).
fn start_dispatchers(device: &dyn Device, core: CoreId, arena_base: DeviceAddr, arena_bytes: u64, request: DeviceAddr) -> NrtResult<()> {
    let slot = DISPATCHER_RECORDS * 64;
    for (i, e) in EngineId::ALL.into_iter().enumerate() {
        let at = arena_base.offset(i as u64 * slot);
        let bytes: Vec<u8> = dispatch::dispatcher(e, request.get()).concat();
        device.write(at, &bytes).map_err(|err| hal(core, "dispatcher write", err))?;
        device.start_engine(core, e, at, arena_bytes - i as u64 * slot).map_err(|err| hal(core, "engine start", err))?;
    }
    Ok(())
}

/// Every installed core of one device.
#[derive(Debug, Default)]
pub struct CoreTable {
    cores: Mutex<BTreeMap<CoreId, Arc<CoreDispatch>>>,
    q7: crate::custom_ops::Q7Setup,
}

impl CoreTable {
    /// A table whose cores bring their Q7 cluster up with `q7`.
    pub fn with_q7(q7: crate::custom_ops::Q7Setup) -> CoreTable {
        CoreTable { cores: Mutex::default(), q7 }
    }

    /// The Q7 bring-up every core of the table gets.
    pub fn q7_setup(&self) -> &crate::custom_ops::Q7Setup {
        &self.q7
    }

    /// The installed core, installing it on first use.
    pub fn get_or_install(&self, memory: &Arc<DeviceMemory>, core: CoreId, arena_bytes: u64) -> NrtResult<Arc<CoreDispatch>> {
        let mut cores = lock(&self.cores);
        if let Some(c) = cores.get(&core) {
            return Ok(c.clone());
        }
        let c = Arc::new(CoreDispatch::install(memory, core, arena_bytes)?);
        if let Err(e) = c.install_q7(&self.q7) {
            let _ = c.teardown();
            return Err(e);
        }
        cores.insert(core, c.clone());
        Ok(c)
    }

    /// The installed core, if any.
    pub fn get(&self, core: CoreId) -> Option<Arc<CoreDispatch>> {
        lock(&self.cores).get(&core).cloned()
    }

    /// Tears every core down (runtime close).
    pub fn teardown_all(&self) -> NrtResult<()> {
        let cores = std::mem::take(&mut *lock(&self.cores));
        let mut first = Ok(());
        for c in cores.values() {
            if let Err(e) = c.teardown()
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }
}
