//! One simulated NeuronCore: on-chip memories, the EVT_SEM unit, DMA
//! queues, notification-queue bindings and the five sequencers.
//!
//! A core is created on first use (see [`crate::device`]); until then it
//! costs nothing. Its on-chip memories are lazily backed as well.

use crate::dma::DmaQueue;
use crate::engine::Sequencer;
use crate::memory::onchip::{OnChipMemory, OnChipView};
use crate::nq::NqState;
use crate::semaphore::SyncBlock;
use nrt_hal::{ArchDesc, CoreId, EngineId, NqType};
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
    /// Notification queues by (engine index, type).
    pub nqs: Mutex<BTreeMap<(u8, NqType), Arc<NqState>>>,
    /// The interrupt line every notification queue of the core raises.
    pub nq_signal: Arc<crate::nq::NqSignal>,
    /// The five engines, by [`EngineId::index`].
    pub engines: [EngineSlot; 5],
    /// The POOL engine's Q7 cluster (WebAssembly kernels).
    pub q7: crate::q7::Cluster,
    /// Latest virtual time (ps) any agent of this core has reached; host
    /// register writes are stamped with it.
    pub now: AtomicU64,
}

impl Core {
    /// A fresh core with everything zero and idle.
    pub fn new(id: CoreId, arch: &ArchDesc) -> Core {
        let slot = |e: EngineId| EngineSlot {
            seq: Mutex::new(Sequencer::new(e)),
            queued: AtomicBool::new(false),
            active: AtomicBool::new(false),
        };
        Core {
            id,
            sbuf: OnChipMemory::new(arch.sbuf_partitions as usize, arch.sbuf_partition_bytes as usize),
            psum: OnChipMemory::new(arch.sbuf_partitions as usize, arch.psum_partition_bytes as usize),
            sync: SyncBlock::new(arch.semaphores, arch.events),
            dma: (0..arch.dma_queues_per_core()).map(|_| DmaQueue::default()).collect(),
            nqs: Mutex::new(BTreeMap::new()),
            nq_signal: Arc::default(),
            engines: EngineId::ALL.map(slot),
            q7: crate::q7::Cluster::new(arch),
            now: AtomicU64::new(0),
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

    /// SBUF as `[partition][bytes]` for the numerical kernels.
    pub fn sbuf_view(&self) -> OnChipView<'_> {
        OnChipView::new(&self.sbuf)
    }

    /// PSUM as `[partition][bytes]` for the numerical kernels.
    pub fn psum_view(&self) -> OnChipView<'_> {
        OnChipView::new(&self.psum)
    }

    /// Whether any DMA queue has submitted work not yet processed.
    pub fn dma_busy(&self) -> bool {
        self.dma.iter().any(|q| q.has_pending())
    }
}
