//! One simulated NeuronCore: on-chip memories, the EVT_SEM unit, DMA
//! queues, notification-queue bindings and the five sequencers.
//!
//! A core is created on first use (see [`crate::device`]); until then it
//! costs nothing. Its on-chip memories are lazily backed as well.

use crate::dma::DmaQueue;
use crate::engine::Sequencer;
use crate::memory::onchip::{OnChipMemory, OnChipView};
use crate::nq::{NqState, RingMemory};
use crate::semaphore::SyncBlock;
use nrt_hal::{ArchDesc, CoreId, EngineId, NQ_RECORD_BYTES, NqType};
use nrt_isa::notification::InferErrorSubtype;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A sequencer plus its scheduling flag.
#[derive(Debug)]
pub struct EngineSlot {
    /// The sequencer state; locked by the worker stepping it.
    pub seq: Mutex<Sequencer>,
    /// Whether a step task is queued (prevents duplicates).
    pub queued: AtomicBool,
    /// Whether the sequencer has a program and is not stopped (wakes only
    /// go to active engines).
    pub active: AtomicBool,
    /// What the sequencer is blocked on (wakes only go to engines whose
    /// wait a change can satisfy).
    pub wait: crate::wake::EngineWait,
}

/// Engine indices (sequencer and DMA engines) whose notification queues
/// have a fast slot.
pub const NQ_FAST_ENGINES: usize = 16;

/// One fast notification-queue slot.
#[derive(Debug, Default)]
struct NqSlot {
    /// Whether a queue is bound (checked without the lock: most slots,
    /// e.g. the trace rings, are never bound).
    bound: AtomicBool,
    state: Mutex<Option<Arc<NqState>>>,
}

fn nq_slot_index(engine_index: u8, ty: NqType) -> Option<usize> {
    let e = usize::from(engine_index);
    (e < NQ_FAST_ENGINES).then(|| e * NqType::ALL.len() + ty as usize)
}

/// The state of one core.
#[derive(Debug)]
pub struct Core {
    /// Physical index.
    pub id: CoreId,
    /// State Buffer: one slice per partition.
    pub sbuf: OnChipMemory,
    /// PSUM: one slice per partition.
    pub psum: OnChipMemory,
    /// Semaphores and events.
    pub sync: SyncBlock,
    /// DMA queues, `engine * queues_per_engine + queue`.
    pub dma: Box<[DmaQueue]>,
    /// Notification queues by (engine index, type); change them with
    /// [`Core::bind_nq`] / [`Core::unbind_nq`], which keep the fast slots
    /// in step.
    nqs: Mutex<BTreeMap<(u8, NqType), Arc<NqState>>>,
    /// The queues of engine indices below [`NQ_FAST_ENGINES`], one slot per
    /// (engine, type): a record push finds its ring (or that it has none)
    /// without searching the map or touching a reference count.
    nq_fast: Box<[NqSlot]>,
    /// Bumped by every bind and unbind of a notification queue, so a
    /// producer that keeps a queue's handle (a sequencer's own NOTIFY
    /// queue) can tell with one load that the handle is still the bound
    /// one.
    nq_generation: AtomicU64,
    /// The interrupt line every notification queue of the core raises.
    pub nq_signal: Arc<crate::nq::NqSignal>,
    /// The five engines, by [`EngineId::index`].
    pub engines: [EngineSlot; 5],
    /// The POOL engine's Q7 cluster (WebAssembly kernels).
    pub q7: Arc<crate::q7::Cluster>,
    /// Latest virtual time (ps) any agent of this core has reached; host
    /// register writes are stamped with it.
    pub now: AtomicU64,
    /// Busy time and executions counted into the datastore entry.
    pub activity: crate::status::CoreActivity,
}

impl Core {
    /// A fresh core with everything zero and idle.
    pub fn new(id: CoreId, arch: &ArchDesc) -> Core {
        let slot = |e: EngineId| EngineSlot {
            seq: Mutex::new(Sequencer::new(e)),
            queued: AtomicBool::new(false),
            active: AtomicBool::new(false),
            wait: crate::wake::EngineWait::default(),
        };
        Core {
            id,
            sbuf: OnChipMemory::new(arch.sbuf_partitions as usize, arch.sbuf_partition_bytes as usize),
            psum: OnChipMemory::new(arch.sbuf_partitions as usize, arch.psum_partition_bytes as usize),
            sync: SyncBlock::new(arch.semaphores, arch.events),
            dma: (0..arch.dma_queues_per_core()).map(|_| DmaQueue::default()).collect(),
            nqs: Mutex::new(BTreeMap::new()),
            nq_fast: (0..NQ_FAST_ENGINES * NqType::ALL.len()).map(|_| NqSlot::default()).collect(),
            nq_generation: AtomicU64::new(0),
            nq_signal: Arc::default(),
            engines: EngineId::ALL.map(slot),
            q7: Arc::new(crate::q7::Cluster::new(arch)),
            now: AtomicU64::new(0),
            activity: crate::status::CoreActivity::default(),
        }
    }

    /// Records that some agent reached virtual time `t`.
    pub fn observe(&self, t: u64) {
        // Most instructions do not move the core's clock past what another
        // agent already reached: a load settles those without an atomic RMW.
        if self.now.load(Ordering::Acquire) < t {
            self.now.fetch_max(t, Ordering::AcqRel);
        }
    }

    /// The core's current virtual time.
    pub fn now(&self) -> u64 {
        self.now.load(Ordering::Acquire)
    }

    /// The NQ bound to (engine index, type), if any.
    pub fn nq(&self, engine_index: u8, ty: NqType) -> Option<Arc<NqState>> {
        self.nqs.lock().unwrap_or_else(|e| e.into_inner()).get(&(engine_index, ty)).cloned()
    }

    /// Runs `f` on the NQ bound to (engine index, type); `None` if there is
    /// none. The hot path of every notification record; the test of an
    /// unbound ring (a DMA queue's trace ring, looked at after every
    /// packet) is inline.
    #[inline]
    pub fn with_nq<R>(&self, engine_index: u8, ty: NqType, f: impl FnOnce(&NqState) -> R) -> Option<R> {
        if let Some(i) = nq_slot_index(engine_index, ty)
            && !self.nq_fast[i].bound.load(Ordering::Acquire)
        {
            return None;
        }
        self.with_bound_nq(engine_index, ty, f)
    }

    /// [`Core::with_nq`] past its unbound test.
    fn with_bound_nq<R>(&self, engine_index: u8, ty: NqType, f: impl FnOnce(&NqState) -> R) -> Option<R> {
        match nq_slot_index(engine_index, ty) {
            Some(i) => {
                let slot = &self.nq_fast[i];
                if !slot.bound.load(Ordering::Acquire) {
                    return None;
                }
                let g = slot.state.lock().unwrap_or_else(|e| e.into_inner());
                g.as_deref().map(f)
            }
            None => self.nq(engine_index, ty).map(|q| f(&q)),
        }
    }

    /// Binds `state` to its (engine index, type); returns the queue it
    /// replaces.
    pub fn bind_nq(&self, state: Arc<NqState>) -> Option<Arc<NqState>> {
        let spec = state.spec();
        let mut map = self.nqs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = nq_slot_index(spec.engine_index, spec.nq_type) {
            *self.nq_fast[i].state.lock().unwrap_or_else(|e| e.into_inner()) = Some(state.clone());
            self.nq_fast[i].bound.store(true, Ordering::Release);
        }
        let old = map.insert((spec.engine_index, spec.nq_type), state);
        self.nq_generation.fetch_add(1, Ordering::AcqRel);
        old
    }

    /// The generation of the core's queue bindings (see
    /// [`Core::nq_generation`]'s field): equal readings mean no queue was
    /// bound or unbound in between.
    pub fn nq_generation(&self) -> u64 {
        self.nq_generation.load(Ordering::Acquire)
    }

    /// Unbinds the queue of (engine index, type); returns it.
    pub fn unbind_nq(&self, engine_index: u8, ty: NqType) -> Option<Arc<NqState>> {
        let mut map = self.nqs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = nq_slot_index(engine_index, ty) {
            self.nq_fast[i].bound.store(false, Ordering::Release);
            *self.nq_fast[i].state.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
        let old = map.remove(&(engine_index, ty));
        self.nq_generation.fetch_add(1, Ordering::AcqRel);
        old
    }

    /// SBUF as `[partition][bytes]` for the numerical kernels.
    pub fn sbuf_view(&self) -> OnChipView<'_> {
        OnChipView::new(&self.sbuf)
    }

    /// PSUM as `[partition][bytes]` for the numerical kernels.
    pub fn psum_view(&self) -> OnChipView<'_> {
        OnChipView::new(&self.psum)
    }

    /// Writes a record into the core's (engine, type) queue, if bound,
    /// through `mem` (the device's ring memory).
    pub fn push_record(&self, mem: &dyn RingMemory, engine_index: u8, ty: NqType, rec: [u8; NQ_RECORD_BYTES]) -> bool {
        self.with_nq(engine_index, ty, |nq| nq.push(mem, rec)).unwrap_or(false)
    }

    /// Writes an error record into the reporting engine's ERROR queue,
    /// falling back to engine 0's ERROR queue (the core's error ring).
    /// `engine` is `None` for DMA-side errors, which go to the core ring.
    pub fn error_record(&self, mem: &dyn RingMemory, engine: Option<u8>, pc: u64, subtype: InferErrorSubtype, detail: u16, ts: u64) {
        let rec = crate::nq::record::error(engine, pc, subtype, detail, ts);
        let e = engine.unwrap_or(0);
        if !self.push_record(mem, e, NqType::Error, rec) && e != 0 {
            self.push_record(mem, 0, NqType::Error, rec);
        }
    }

    /// Whether any DMA queue has submitted work not yet processed.
    pub fn dma_busy(&self) -> bool {
        self.dma.iter().any(|q| q.has_pending())
    }
}
