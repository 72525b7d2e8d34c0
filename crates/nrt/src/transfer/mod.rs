//! Tensor transfers: every tensor byte the runtime moves goes through the
//! device's DMA engines, as libnrt's do (libnrt-api-delta §4 "Data path",
//! seed-siblings §9.1).
//!
//! What moves here: `nrt_tensor_read` / `write` / `memset` / `copy`, their
//! `nrta_*` forms (run by the tensor execution units through the same
//! [`crate::tensor::Tensor`] methods), an execution's host-input staging
//! and host-output copy-back. Per physical core the runtime keeps three
//! queues of one DMA engine ([`queues`]): host-to-device, device-to-host and
//! device-to-device, each a [`lane::Lane`] whose descriptor rings sit in
//! host-DMA memory. A host-side transfer is chunked through a bounce
//! buffer of two [`CHUNK_BYTES`] halves in host-DMA memory (the window the
//! device reaches by DMA, `MemoryLocation::Host`): the host copies a chunk
//! into one half while the device moves the other. Each batch ends with a
//! marker pair whose 4 bytes the device copies into a host completion slot
//! (the driver's own copy completion); the host learns completion only
//! from that slot, and waits with the bound of [`Transfers::timeout`].
//!
//! Host stores into (and loads from) host-DMA memory are the process's own
//! accesses through its mapping of that memory (`Device::write` / `read`
//! of a host-DMA address, see the `nrt_hal::Device` docs), never a device
//! transfer. libnrt 2.30 pins the caller's buffer instead (zero-copy,
//! `MEM_BUF_ZEROCOPY64`); docs/runtime.md says why this runtime stages.
//!
//! The transfer engine's TRACE_DMA ring (one per core, in host-DMA memory)
//! receives one record per packet: [`Transfers::read_trace`] hands them out
//! (queue, bytes, device time), and its interrupt line wakes a waiting
//! transfer. The simulated device's cost model advances the queues' clocks
//! for every packet, so transfers take device time as executions do.
//!
//! A transfer's DMA abort (or injected NaN) leaves an error record naming
//! its queue on the core's ERROR ring; executions skip such records
//! ([`queues::is_transfer_queue_index`]), the transfer returns the failure.

pub mod lane;
pub mod queues;

pub use queues::{Direction, TRANSFER_ENGINE, is_transfer_queue, is_transfer_queue_index};

use crate::memory::{DeviceMemory, MemOwner, MemUsage};
use crate::status::{NrtError, NrtResult, NrtStatus};
use lane::Lane;
use nrt_hal::{CoreId, Device, DeviceAddr, NQ_RECORD_BYTES, NqRing, NqSpec, NqType};
use nrt_isa::notification::{DmaCompletion, DmaEdge, NotificationRecord};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Bytes of one bounce-buffer half: the largest batch (libnrt's copies go
/// in chunks of at most 1 MiB through a double-buffered bounce buffer).
pub const CHUNK_BYTES: u64 = 1 << 20;
/// Default bound on one batch: how long a transfer waits for a batch's
/// completion marker before it fails with NRT_TIMEOUT naming the queue.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes of each core's transfer trace ring (4096 records).
pub const TRACE_RING_BYTES: u32 = 64 << 10;

/// What a lane needs for one transfer: the device, the core's trace ring
/// (its interrupt line) and the wait bound.
pub struct TransferCtx<'a> {
    /// The device.
    pub device: &'a dyn Device,
    /// Its index, for messages.
    pub device_index: u32,
    /// The transfer engine's trace ring of the core.
    pub trace: &'a dyn NqRing,
    /// Bound on each batch's wait.
    pub timeout: Duration,
}

/// The trace ring of one core's transfer engine and how far it was read.
struct TraceRing {
    ring: Arc<dyn NqRing>,
    memory: DeviceAddr,
    head: u64,
}

/// One core's transfer queues (created on first use) and trace ring.
#[derive(Default)]
struct CoreTransfers {
    lanes: [Mutex<Option<Lane>>; 3],
    trace: Mutex<Option<TraceRing>>,
}

/// The tensor-transfer queues of one device, per physical core. Lives in
/// the device's [`DeviceMemory`], which every tensor holds.
pub struct Transfers {
    cores: Vec<CoreTransfers>,
    timeout_ns: AtomicU64,
    closed: AtomicBool,
}

impl std::fmt::Debug for Transfers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transfers").field("cores", &self.cores.len()).field("timeout", &self.timeout()).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Transfers {
    /// No queue set up yet on any of `physical_cores` cores.
    pub fn new(physical_cores: u32) -> Transfers {
        Transfers {
            cores: (0..physical_cores).map(|_| CoreTransfers::default()).collect(),
            timeout_ns: AtomicU64::new(DEFAULT_TIMEOUT.as_nanos() as u64),
            closed: AtomicBool::new(false),
        }
    }

    /// The bound on each batch's wait.
    pub fn timeout(&self) -> Duration {
        Duration::from_nanos(self.timeout_ns.load(Ordering::Relaxed))
    }

    /// Sets the bound on each batch's wait (default [`DEFAULT_TIMEOUT`]).
    pub fn set_timeout(&self, timeout: Duration) {
        self.timeout_ns.store(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    fn core(&self, memory: &DeviceMemory, core: CoreId) -> NrtResult<&CoreTransfers> {
        if self.closed.load(Ordering::Acquire) {
            return Err(NrtError::new(NrtStatus::Closed, "NRT already closed: the device's transfer queues are gone"));
        }
        self.cores.get(core.0 as usize).ok_or_else(|| {
            NrtError::invalid(format!("ND {} has physical cores 0..{}; no transfer queues on NC {}", memory.device_index(), self.cores.len(), core.0))
        })
    }

    /// The core's trace ring, bound on first use.
    fn trace_ring(&self, memory: &DeviceMemory, core: CoreId, c: &CoreTransfers) -> NrtResult<Arc<dyn NqRing>> {
        let mut t = lock(&c.trace);
        if let Some(t) = t.as_ref() {
            return Ok(t.ring.clone());
        }
        let bytes = u64::from(TRACE_RING_BYTES);
        let at = memory.alloc_host(core, MemOwner::Runtime, MemUsage::Notification, bytes, bytes)?;
        let spec = NqSpec { core, engine_index: TRANSFER_ENGINE, nq_type: NqType::TraceDma, ring: at, size_bytes: TRACE_RING_BYTES };
        match memory.device().nq_init(spec) {
            Ok(ring) => {
                *t = Some(TraceRing { ring: ring.clone(), memory: at, head: 0 });
                Ok(ring)
            }
            Err(e) => {
                let _ = memory.free(at);
                Err(NrtError::failure(format!("ND {} NC {}: binding the transfer trace ring: {e}", memory.device_index(), core.0)))
            }
        }
    }

    /// Sets up `core`'s transfer queues (trace ring, the three lanes' rings
    /// and bounce buffers) ahead of the first transfer: what a core's
    /// bring-up does, as libnrt's brings up its host-copy queues with the
    /// core. On failure whatever this call set up is released again.
    pub fn prepare(&self, memory: &DeviceMemory, core: CoreId) -> NrtResult<()> {
        let c = self.core(memory, core)?;
        let had_trace = lock(&c.trace).is_some();
        let mut made: Vec<Direction> = Vec::new();
        let mut result = self.trace_ring(memory, core, c).map(drop);
        for d in Direction::ALL {
            if result.is_err() {
                break;
            }
            let mut slot = lock(&c.lanes[d.index()]);
            if slot.is_none() {
                result = Lane::create(memory, core, d).map(|lane| {
                    *slot = Some(lane);
                    made.push(d);
                });
            }
        }
        if result.is_err() {
            for d in made {
                if let Some(lane) = lock(&c.lanes[d.index()]).take() {
                    lane.release(memory);
                }
            }
            if !had_trace {
                self.release_trace(memory, c);
            }
        }
        result
    }

    /// Unbinds and frees `c`'s trace ring, if it has one.
    fn release_trace(&self, memory: &DeviceMemory, c: &CoreTransfers) {
        if let Some(t) = lock(&c.trace).take() {
            let _ = memory.device().nq_destroy(t.ring.spec());
            if let Err(e) = memory.free(t.memory) {
                crate::log_error!(crate::log::Module::Tdrv, "freeing a transfer trace ring: {e}");
            }
        }
    }

    /// Runs `f` on the `direction` lane of `core`, holding it (one transfer
    /// per queue at a time), the queue programmed and the calling thread
    /// lent to the device. A failure leaves the lane to be programmed
    /// again by the next transfer.
    fn run<R>(&self, memory: &DeviceMemory, core: CoreId, direction: Direction, f: impl FnOnce(&mut Lane, &TransferCtx<'_>) -> NrtResult<R>) -> NrtResult<R> {
        let c = self.core(memory, core)?;
        let mut slot = lock(&c.lanes[direction.index()]);
        // Checked again under the lane's lock: `close` flags first, then
        // takes every lane's lock, so it either finds this lane (and frees
        // it after this transfer) or this check sees the flag.
        if self.closed.load(Ordering::Acquire) {
            return Err(NrtError::new(NrtStatus::Closed, "NRT already closed: the device's transfer queues are gone"));
        }
        let trace = self.trace_ring(memory, core, c)?;
        let lane = match slot.take() {
            Some(lane) => slot.insert(lane),
            None => slot.insert(Lane::create(memory, core, direction)?),
        };
        let device: &dyn Device = memory.device().as_ref();
        let ctx = TransferCtx { device, device_index: memory.device_index(), trace: &*trace, timeout: self.timeout() };
        let _lent = crate::exec::Lending::begin(device);
        let r = lane.prepare(&ctx).and_then(|()| f(lane, &ctx)).and_then(|v| lane.drain(&ctx).map(|()| v));
        if r.is_err() {
            lane.invalidate();
        }
        r
    }

    /// Host-to-device: `data` to device address `dst` through `core`'s
    /// host-to-device queue.
    pub fn write(&self, memory: &DeviceMemory, core: CoreId, dst: DeviceAddr, data: &[u8]) -> NrtResult<()> {
        if data.is_empty() {
            return Ok(());
        }
        self.run(memory, core, Direction::HostToDevice, |lane, ctx| {
            for (i, chunk) in data.chunks(CHUNK_BYTES as usize).enumerate() {
                let half = lane.next_half();
                lane.reclaim(ctx, half)?;
                let bounce = lane.bounce(half)?;
                ctx.device.write(bounce, chunk).map_err(|e| staging_error(ctx, core, "filling the bounce buffer", e))?;
                lane.submit(ctx, bounce, false, dst.offset(i as u64 * CHUNK_BYTES), chunk.len() as u64)?;
            }
            Ok(())
        })
    }

    /// Device-to-host: `buf.len()` bytes at device address `src` into
    /// `buf` through `core`'s device-to-host queue, two chunks in flight.
    pub fn read(&self, memory: &DeviceMemory, core: CoreId, src: DeviceAddr, buf: &mut [u8]) -> NrtResult<()> {
        if buf.is_empty() {
            return Ok(());
        }
        self.run(memory, core, Direction::DeviceToHost, |lane, ctx| {
            let total = buf.len() as u64;
            let n = total.div_ceil(CHUNK_BYTES) as usize;
            let piece = |i: usize| (i as u64 * CHUNK_BYTES, (total - i as u64 * CHUNK_BYTES).min(CHUNK_BYTES));
            let mut halves = [0usize; 2];
            for i in 0..n.min(2) {
                let (off, len) = piece(i);
                halves[i % 2] = lane.submit(ctx, src.offset(off), false, lane.bounce(lane.next_half())?, len)?.half();
            }
            for i in 0..n {
                let (off, len) = piece(i);
                let half = halves[i % 2];
                lane.reclaim(ctx, half)?;
                let out = &mut buf[off as usize..(off + len) as usize];
                ctx.device.read(lane.bounce(half)?, out).map_err(|e| staging_error(ctx, core, "emptying the bounce buffer", e))?;
                if i + 2 < n {
                    let (off, len) = piece(i + 2);
                    halves[i % 2] = lane.submit(ctx, src.offset(off), false, lane.bounce(lane.next_half())?, len)?.half();
                }
            }
            Ok(())
        })
    }

    /// Fills `len` bytes at device address `dst` with `value`: one bounce
    /// half filled by the host, then descriptors that all read it.
    pub fn fill(&self, memory: &DeviceMemory, core: CoreId, dst: DeviceAddr, value: u8, len: u64) -> NrtResult<()> {
        if len == 0 {
            return Ok(());
        }
        self.run(memory, core, Direction::HostToDevice, |lane, ctx| {
            let source = lane.bounce(0)?;
            ctx.device.memset(source, value, len.min(CHUNK_BYTES)).map_err(|e| staging_error(ctx, core, "filling the bounce buffer", e))?;
            let mut off = 0;
            while off < len {
                let n = (len - off).min(CHUNK_BYTES);
                lane.submit(ctx, source, true, dst.offset(off), n)?;
                off += n;
            }
            Ok(())
        })
    }

    /// Device-to-device: `len` bytes from `src` to `dst` through `core`'s
    /// device-to-device queue (no host bytes involved).
    pub fn copy(&self, memory: &DeviceMemory, core: CoreId, src: DeviceAddr, dst: DeviceAddr, len: u64) -> NrtResult<()> {
        if len == 0 {
            return Ok(());
        }
        self.run(memory, core, Direction::DeviceToDevice, |lane, ctx| {
            let mut off = 0;
            while off < len {
                let n = (len - off).min(CHUNK_BYTES);
                lane.submit(ctx, src.offset(off), false, dst.offset(off), n)?;
                off += n;
            }
            Ok(())
        })
    }

    /// Device-to-device work described by pattern blocks (casts and
    /// element-wise reductions, `crate::tensor_ops`), run in order on
    /// `core`'s device-to-device queue; returns when the last has landed.
    pub fn patterned(&self, memory: &DeviceMemory, core: CoreId, blocks: &[nrt_isa::dma_desc::PatternBlock]) -> NrtResult<()> {
        let encoded = blocks
            .iter()
            .map(|b| b.to_bytes().map_err(|e| NrtError::invalid(format!("a pattern block: {e}"))))
            .collect::<NrtResult<Vec<_>>>()?;
        if encoded.is_empty() {
            return Ok(());
        }
        self.run(memory, core, Direction::DeviceToDevice, |lane, ctx| {
            for chunk in encoded.chunks(lane::PATTERN_PAIRS) {
                lane.submit_patterns(ctx, memory, chunk)?;
            }
            Ok(())
        })
    }

    /// Appends to `out` the DMA trace records of `core`'s transfer engine
    /// written since the last call (one per packet: its queue, bytes and
    /// device time) and returns how many the ring overwrote unread. A core
    /// that never transferred has none.
    pub fn read_trace(&self, core: CoreId, out: &mut Vec<DmaCompletion>) -> u64 {
        let Some(c) = self.cores.get(core.0 as usize) else { return 0 };
        let mut t = lock(&c.trace);
        let Some(t) = t.as_mut() else { return 0 };
        let produced = t.ring.produced();
        let lost = produced.saturating_sub(t.head).saturating_sub(u64::from(t.ring.capacity()));
        t.head += lost;
        let mut buf = [[0u8; NQ_RECORD_BYTES]; 64];
        loop {
            let n = t.ring.read(t.head, &mut buf);
            if n == 0 {
                break;
            }
            out.extend(buf[..n].iter().filter_map(|r| DmaCompletion::from_record(&NotificationRecord::from_bytes(r))).filter(|c| c.edge == DmaEdge::End));
            t.head += n as u64;
        }
        t.ring.set_consumed(t.head);
        lost
    }

    /// Releases every queue's memory and trace ring and refuses later
    /// transfers (runtime close). Waits for transfers in flight (each
    /// bounded by [`Transfers::timeout`] per batch).
    pub fn close(&self, memory: &DeviceMemory) {
        self.closed.store(true, Ordering::Release);
        for c in &self.cores {
            for l in &c.lanes {
                if let Some(lane) = lock(l).take() {
                    lane.release(memory);
                }
            }
            self.release_trace(memory, c);
        }
    }
}

fn staging_error(ctx: &TransferCtx<'_>, core: CoreId, what: &str, e: impl std::fmt::Display) -> NrtError {
    NrtError::failure(format!("ND {} NC {}: {what}: {e}", ctx.device_index, core.0))
}

/// The transfers of one physical core of a device: what a tensor holds
/// (through its [`DeviceMemory`]) to move its bytes.
#[derive(Clone, Copy)]
pub struct CoreDma<'a> {
    memory: &'a DeviceMemory,
    core: CoreId,
}

impl<'a> CoreDma<'a> {
    /// The transfers of `core` of `memory`'s device.
    pub fn new(memory: &'a DeviceMemory, core: CoreId) -> CoreDma<'a> {
        CoreDma { memory, core }
    }

    /// [`Transfers::write`] on this core.
    pub fn write(self, dst: DeviceAddr, data: &[u8]) -> NrtResult<()> {
        self.memory.transfers().write(self.memory, self.core, dst, data)
    }

    /// [`Transfers::read`] on this core.
    pub fn read(self, src: DeviceAddr, buf: &mut [u8]) -> NrtResult<()> {
        self.memory.transfers().read(self.memory, self.core, src, buf)
    }

    /// [`Transfers::fill`] on this core.
    pub fn fill(self, dst: DeviceAddr, value: u8, len: u64) -> NrtResult<()> {
        self.memory.transfers().fill(self.memory, self.core, dst, value, len)
    }

    /// [`Transfers::copy`] on this core.
    pub fn copy(self, src: DeviceAddr, dst: DeviceAddr, len: u64) -> NrtResult<()> {
        self.memory.transfers().copy(self.memory, self.core, src, dst, len)
    }
}
