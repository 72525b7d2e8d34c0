//! Device memory: libnrt's two-tier `dmem` allocator and its ledger.
//!
//! - [`DeviceMemory`] (one per device, `Arc`-shared) is the global tier:
//!   every allocation on the device goes through it, booked under a
//!   [`MemUsage`] and an owner, so the ledger knows the bytes per device,
//!   per physical core, per model and per HBM channel.
//! - [`ModelMemory`] is one model's tier: it remembers what it allocated
//!   and frees all of it in one call at unload (or when dropped).
//!
//! Addresses come from the device (`Device::alloc`); the runtime keeps its
//! own accounting on top and refuses allocations that would overfill a
//! channel, with NRT_RESOURCE and the OOM report in the log.

pub mod host;
mod ledger;
mod memlog;
mod report;
mod usage;

pub use ledger::{ChannelUsage, LedgerSnapshot, MemOwner, UsageTotals};
pub use memlog::{MemEvent, MemEventKind};
pub use report::{FailedAlloc, render_table};
pub use usage::{MEM_USAGE_COUNT, MemUsage, ReportColumn, human_bytes};

use crate::log::Module;
use crate::model::ModelId;
use crate::status::{NrtError, NrtResult, NrtStatus};
use ledger::Ledger;
use memlog::MemLog;
use nrt_hal::{CoreId, Device, DeviceAddr, HalError, HostWindow, MemoryLocation};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// One live allocation as the ledger knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// Physical core it is booked to.
    pub core: CoreId,
    /// Global tier or a model's.
    pub owner: MemOwner,
    /// Usage type.
    pub usage: MemUsage,
    /// The pool it lives in (an HBM channel or host-DMA memory).
    pub location: MemoryLocation,
    /// Bytes booked.
    pub size: u64,
}

/// Bytes of a live allocation re-booked to another owner and usage: a
/// model's share of memory the runtime allocated once and hands out in
/// pieces (model instruction images in a core's instruction arena). The
/// device memory is not allocated again; only the ledger moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carve {
    /// Start of the runtime allocation the bytes are carved from.
    pub parent: DeviceAddr,
    /// Physical core the parent is booked to.
    pub core: CoreId,
    /// The parent's pool.
    pub location: MemoryLocation,
    /// New owner of the bytes.
    pub owner: MemOwner,
    /// Their usage under the new owner.
    pub usage: MemUsage,
    /// Bytes carved.
    pub size: u64,
}

#[derive(Debug)]
struct State {
    ledger: Ledger,
    live: HashMap<DeviceAddr, Allocation>,
    /// Bytes of each live allocation currently carved out to other owners.
    carved: HashMap<DeviceAddr, u64>,
    model_names: BTreeMap<ModelId, String>,
    memlog: MemLog,
}

/// The global (per-device, per-core) tier of the device-memory allocator
/// and the device's ledger. Exists so every byte the runtime puts on a
/// device is accounted for by owner and usage.
pub struct DeviceMemory {
    device: Arc<dyn Device>,
    index: u32,
    physical_cores: u32,
    oom_log: AtomicBool,
    state: Mutex<State>,
    /// The HBM channels' host windows, by channel, once the device's
    /// memory is mapped into the process ([`DeviceMemory::map_hbm`]).
    windows: OnceLock<Vec<HostWindow>>,
    /// The device's tensor-transfer queues (`crate::transfer`): here
    /// because every tensor reaches its device through this object.
    transfers: crate::transfer::Transfers,
}

impl std::fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMemory").field("device", &self.index).finish_non_exhaustive()
    }
}

/// Default bound of the allocation log (NEURON_RT_DEBUG_MEMLOG_MAX_SIZE).
pub const DEFAULT_MEMLOG_ENTRIES: usize = 1 << 20;

/// The HBM channel that serves a physical core: cores are spread evenly
/// over the channels in order (trn2: two cores per channel; trn1: one).
pub fn hbm_channel_of(core: CoreId, physical_cores: u32, channels: u32) -> u32 {
    if channels == 0 || physical_cores == 0 {
        return 0;
    }
    let per = physical_cores.div_ceil(channels).max(1);
    (core.0 / per).min(channels - 1)
}

impl DeviceMemory {
    /// The allocator of `device`, with an empty ledger.
    pub fn new(device: Arc<dyn Device>) -> DeviceMemory {
        let info = device.info();
        let (index, physical_cores) = (info.device_index, info.physical_cores);
        let ledger = Ledger::new(index, info.hbm.iter().map(|c| c.size), info.host_memory.size);
        DeviceMemory {
            device,
            index,
            physical_cores,
            oom_log: AtomicBool::new(true),
            transfers: crate::transfer::Transfers::new(physical_cores),
            state: Mutex::new(State {
                ledger,
                live: HashMap::new(),
                carved: HashMap::new(),
                model_names: BTreeMap::new(),
                memlog: MemLog::new(DEFAULT_MEMLOG_ENTRIES),
            }),
            windows: OnceLock::new(),
        }
    }

    /// Maps every HBM channel of the device into the process, once (what
    /// init does under NEURON_RT_MAP_HBM), and returns the windows by
    /// channel. A device that cannot map its memory is NRT_INVALID (the
    /// header's "interface isn't supported"), another failure NRT_FAILURE.
    pub fn map_hbm(&self) -> NrtResult<&[HostWindow]> {
        if let Some(w) = self.windows.get() {
            return Ok(w);
        }
        let mut windows = Vec::new();
        for channel in 0u32.. {
            match self.device.map_hbm(channel) {
                Ok(Some(w)) => windows.push(w),
                Ok(None) => break,
                Err(e @ HalError::Unsupported { .. }) => return Err(NrtError::invalid(format!("mapping the HBM of ND {}: {e}", self.index))),
                Err(e) => return Err(NrtError::failure(format!("mapping HBM channel {channel} of ND {}: {e}", self.index))),
            }
        }
        Ok(self.windows.get_or_init(|| windows))
    }

    /// The HBM channels' host windows, when the memory is mapped.
    pub fn hbm_windows(&self) -> Option<&[HostWindow]> {
        self.windows.get().map(Vec::as_slice)
    }

    /// The host address of device address `addr`, when its HBM channel is
    /// mapped into the process.
    pub fn host_va(&self, addr: DeviceAddr) -> Option<usize> {
        self.hbm_windows()?.iter().find_map(|w| w.host_addr(addr))
    }

    /// The device address of the mapped host range `va .. va + len`, when
    /// it lies inside one mapped HBM channel of this device.
    pub fn device_addr_of(&self, va: usize, len: u64) -> Option<DeviceAddr> {
        self.hbm_windows()?.iter().find_map(|w| w.device_addr(va, len))
    }

    /// Turns the OOM report in the log on or off
    /// (NEURON_RT_ENABLE_DEVICE_MEMORY_OOM_LOG).
    pub fn set_oom_log(&self, on: bool) {
        self.oom_log.store(on, Ordering::Relaxed);
    }

    /// Bounds the allocation log (NEURON_RT_DEBUG_MEMLOG_MAX_SIZE; 0 turns
    /// it off). Older entries are dropped first.
    pub fn set_memlog_capacity(&self, entries: usize) {
        self.lock().memlog.set_capacity(entries);
    }

    /// The allocation log, oldest first, and how many entries fell out.
    pub fn memlog(&self) -> (Vec<MemEvent>, u64) {
        let st = self.lock();
        (st.memlog.events(), st.memlog.dropped())
    }

    /// The allocation log as CSV (`seq,op,address,size,usage,nc,owner`).
    pub fn memlog_csv(&self) -> String {
        self.lock().memlog.csv()
    }

    /// The device index.
    pub fn device_index(&self) -> u32 {
        self.index
    }

    /// The device this allocator carves.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The device's tensor-transfer queues.
    pub fn transfers(&self) -> &crate::transfer::Transfers {
        &self.transfers
    }

    /// Tensor transfers through the DMA queues of physical core `core`.
    pub fn dma(&self, core: CoreId) -> crate::transfer::CoreDma<'_> {
        crate::transfer::CoreDma::new(self, core)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The HBM channel serving `core`.
    pub fn channel_of(&self, core: CoreId) -> u32 {
        hbm_channel_of(core, self.physical_cores, self.device.info().hbm.len() as u32)
    }

    /// Allocates `size` bytes aligned to `align` (a power of two; 0 = the
    /// device's default) in the HBM channel of `core`, booked to `owner`
    /// under `usage`. A request that does not fit returns NRT_RESOURCE and
    /// logs the OOM report.
    pub fn alloc(&self, core: CoreId, owner: MemOwner, usage: MemUsage, size: u64, align: u64) -> NrtResult<DeviceAddr> {
        let location = MemoryLocation::Hbm { channel: self.channel_of(core) };
        self.alloc_in(location, core, owner, usage, size, align)
    }

    /// Allocates host-DMA memory (host memory the device reaches by DMA),
    /// booked to `core` and `owner` under `usage`. Scratchpads and
    /// collectives buffers are device-only, as in libnrt.
    pub fn alloc_host(&self, core: CoreId, owner: MemOwner, usage: MemUsage, size: u64, align: u64) -> NrtResult<DeviceAddr> {
        if !usage.allowed_on_host() {
            return Err(NrtError::invalid(format!(
                "Invalid mem_usage_type {} ({usage}) for host memory: scratchpads and collectives buffers must be in device memory",
                usage.code()
            )));
        }
        self.alloc_in(MemoryLocation::Host, core, owner, usage, size, align)
    }

    fn alloc_in(&self, location: MemoryLocation, core: CoreId, owner: MemOwner, usage: MemUsage, size: u64, align: u64) -> NrtResult<DeviceAddr> {
        if core.0 >= self.physical_cores {
            return Err(NrtError::invalid(format!(
                "device memory allocation on ND {}:NC {}: the device has physical cores 0..{}",
                self.index, core.0, self.physical_cores
            )));
        }
        if size == 0 {
            return Err(NrtError::invalid(format!(
                "device memory allocation of 0 bytes ({usage}) on ND {}:NC {}: size must be at least 1",
                self.index, core.0
            )));
        }
        if align != 0 && !align.is_power_of_two() {
            return Err(NrtError::invalid(format!(
                "device memory allocation alignment {align} is not a power of two (0 = default)"
            )));
        }
        let mut st = self.lock();
        let pool = st.ledger.pool(location);
        let fits = pool.is_some_and(|c| c.used.checked_add(size).is_some_and(|u| u <= c.capacity));
        let result = if fits {
            self.device.alloc(location, size, align)
        } else {
            Err(HalError::OutOfMemory {
                location,
                requested: size,
                align,
                largest_free: 0,
                capacity: pool.map_or(0, |c| c.capacity),
            })
        };
        match result {
            Ok(addr) => {
                st.ledger.book(core, owner, usage, location, size);
                self.publish(core, owner, usage, location, size as i64);
                st.memlog.push(MemEventKind::Alloc, addr, size, usage, core, owner);
                st.live.insert(addr, Allocation { core, owner, usage, location, size });
                Ok(addr)
            }
            Err(HalError::OutOfMemory { .. }) => {
                st.memlog.push(MemEventKind::Failed, DeviceAddr(0), size, usage, core, owner);
                let failed = FailedAlloc { size, align, usage, device: self.index, core };
                let mut headline = failed.headline();
                if location == MemoryLocation::Host {
                    headline.push_str(" (host-DMA memory)");
                }
                if self.oom_log.load(Ordering::Relaxed) {
                    let table = render_table(&st.ledger.snapshot(), &st.model_names);
                    crate::log_error!(Module::Tdrv, "{headline}");
                    crate::log::emit_block(crate::log::Level::Error, Module::Tdrv, &table);
                    crate::log_error!(
                        Module::Tdrv,
                        "allocation log of ND {}: {} entries kept, {} dropped (DeviceMemory::memlog_csv)",
                        self.index,
                        st.memlog.len(),
                        st.memlog.dropped()
                    );
                }
                Err(NrtError::new(NrtStatus::Resource, headline))
            }
            Err(e) => Err(NrtError::failure(format!(
                "device memory allocation of {size} bytes ({usage}) in {location} for ND {}:NC {} failed: {e}",
                self.index, core.0
            ))),
        }
    }

    /// Tells the device's datastore (the tools' view, `docs/status-file.md`)
    /// that `delta` bytes of `usage` moved on `core`, as libnrt tells the
    /// driver's datastore.
    fn publish(&self, core: CoreId, owner: MemOwner, usage: MemUsage, location: MemoryLocation, delta: i64) {
        if let Some(s) = self.device.status() {
            let core = matches!(location, MemoryLocation::Hbm { .. }).then_some(core.0);
            s.add_memory(core, usage.status_category_of(owner), delta);
        }
    }

    /// Frees an allocation by its address and takes it off the ledger.
    pub fn free(&self, addr: DeviceAddr) -> NrtResult<()> {
        let mut st = self.lock();
        let Some(a) = st.live.get(&addr).copied() else {
            return Err(NrtError::invalid(format!(
                "device address {addr} is not the start of a live allocation on ND {}",
                self.index
            )));
        };
        self.device.free(addr).map_err(|e| {
            NrtError::failure(format!("freeing {} bytes ({}) at {addr} on ND {}: {e}", a.size, a.usage, self.index))
        })?;
        st.live.remove(&addr);
        // Carved bytes stay booked to their owners until they are returned.
        let carved = st.carved.remove(&addr).unwrap_or(0);
        st.ledger.release(a.core, a.owner, a.usage, a.location, a.size - carved.min(a.size));
        self.publish(a.core, a.owner, a.usage, a.location, -((a.size - carved.min(a.size)) as i64));
        st.memlog.push(MemEventKind::Free, addr, a.size, a.usage, a.core, a.owner);
        Ok(())
    }

    /// Re-books `size` bytes of the live allocation at `parent` to `owner`
    /// under `usage` (the device memory is the parent's; only the ledger
    /// moves). Fails if `parent` is not live or has fewer uncarved bytes.
    pub fn carve(&self, parent: DeviceAddr, owner: MemOwner, usage: MemUsage, size: u64) -> NrtResult<Carve> {
        let mut st = self.lock();
        let Some(a) = st.live.get(&parent).copied() else {
            return Err(NrtError::invalid(format!("device address {parent} is not the start of a live allocation on ND {}", self.index)));
        };
        let carved = st.carved.get(&parent).copied().unwrap_or(0);
        if carved.checked_add(size).is_none_or(|c| c > a.size) {
            return Err(NrtError::invalid(format!(
                "cannot book {size} more bytes of the {} bytes ({}) at {parent} on ND {}: {carved} are booked out already",
                a.size, a.usage, self.index
            )));
        }
        st.ledger.rebook(a.core, (a.owner, a.usage), (owner, usage), a.location, size);
        self.publish(a.core, a.owner, a.usage, a.location, -(size as i64));
        self.publish(a.core, owner, usage, a.location, size as i64);
        st.carved.insert(parent, carved + size);
        Ok(Carve { parent, core: a.core, location: a.location, owner, usage, size })
    }

    /// Returns carved bytes to their parent's booking (or, if the parent
    /// was freed meanwhile, just takes them off the ledger).
    pub fn uncarve(&self, c: &Carve) {
        let mut st = self.lock();
        if let Some(a) = st.live.get(&c.parent).copied() {
            st.ledger.rebook(c.core, (c.owner, c.usage), (a.owner, a.usage), c.location, c.size);
            self.publish(c.core, c.owner, c.usage, c.location, -(c.size as i64));
            self.publish(c.core, a.owner, a.usage, c.location, c.size as i64);
            let left = st.carved.get(&c.parent).copied().unwrap_or(0).saturating_sub(c.size);
            if left == 0 {
                st.carved.remove(&c.parent);
            } else {
                st.carved.insert(c.parent, left);
            }
        } else {
            st.ledger.drop_bytes(c.core, c.owner, c.usage, c.location, c.size);
            self.publish(c.core, c.owner, c.usage, c.location, -(c.size as i64));
        }
    }

    /// What the ledger knows about a live allocation.
    pub fn allocation(&self, addr: DeviceAddr) -> Option<Allocation> {
        self.lock().live.get(&addr).copied()
    }

    /// A new, empty model tier for `model` on physical core `core`.
    pub fn model_tier(self: &Arc<Self>, core: CoreId, model: ModelId) -> ModelMemory {
        ModelMemory {
            memory: Arc::clone(self),
            core,
            model,
            live: Mutex::new(Vec::new()),
            carved: Mutex::new(Vec::new()),
            total: AtomicU64::new(0),
        }
    }

    /// Names a model in the OOM report's id-to-name map.
    pub fn set_model_name(&self, model: ModelId, name: &str) {
        self.lock().model_names.insert(model, name.to_string());
    }

    /// Drops a model's name from the id-to-name map.
    pub fn forget_model_name(&self, model: ModelId) {
        self.lock().model_names.remove(&model);
    }

    /// A copy of the ledger.
    pub fn ledger(&self) -> LedgerSnapshot {
        self.lock().ledger.snapshot()
    }

    /// The usage table as the OOM report prints it.
    pub fn oom_report(&self) -> String {
        let st = self.lock();
        render_table(&st.ledger.snapshot(), &st.model_names)
    }

    /// Frees every live allocation (close), the transfer queues' first
    /// (later transfers are refused): returns the first failure after
    /// attempting all of them.
    pub fn free_everything(&self) -> NrtResult<()> {
        self.transfers.close(self);
        let addrs: Vec<DeviceAddr> = self.lock().live.keys().copied().collect();
        let mut first = Ok(());
        for a in addrs {
            if let Err(e) = self.free(a)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }
}

/// One model's tier of the allocator: everything it allocates is booked
/// to the model and released together by [`ModelMemory::free_all`] (also
/// on drop), which is what makes unload independent of other models.
pub struct ModelMemory {
    memory: Arc<DeviceMemory>,
    core: CoreId,
    model: ModelId,
    live: Mutex<Vec<DeviceAddr>>,
    carved: Mutex<Vec<Carve>>,
    total: AtomicU64,
}

impl std::fmt::Debug for ModelMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelMemory")
            .field("device", &self.memory.index)
            .field("core", &self.core)
            .field("model", &self.model)
            .field("total", &self.total())
            .finish()
    }
}

impl ModelMemory {
    /// Allocates on the tier's own core.
    pub fn alloc(&self, usage: MemUsage, size: u64, align: u64) -> NrtResult<DeviceAddr> {
        self.alloc_on(self.core, usage, size, align)
    }

    /// Allocates on another physical core of the same device (a model on a
    /// logical core of two physical cores needs memory near both).
    pub fn alloc_on(&self, core: CoreId, usage: MemUsage, size: u64, align: u64) -> NrtResult<DeviceAddr> {
        let addr = self.memory.alloc(core, MemOwner::Model(self.model), usage, size, align)?;
        self.live.lock().unwrap_or_else(|e| e.into_inner()).push(addr);
        self.total.fetch_add(size, Ordering::Relaxed);
        Ok(addr)
    }

    /// Allocates host-DMA memory for the model (see
    /// [`DeviceMemory::alloc_host`]).
    pub fn alloc_host(&self, usage: MemUsage, size: u64, align: u64) -> NrtResult<DeviceAddr> {
        let addr = self.memory.alloc_host(self.core, MemOwner::Model(self.model), usage, size, align)?;
        self.live.lock().unwrap_or_else(|e| e.into_inner()).push(addr);
        self.total.fetch_add(size, Ordering::Relaxed);
        Ok(addr)
    }

    /// Books `size` bytes of the runtime allocation at `parent` to this
    /// model under `usage` (its instruction images in a core's arena);
    /// [`ModelMemory::free_all`] gives them back.
    pub fn book_carved(&self, parent: DeviceAddr, usage: MemUsage, size: u64) -> NrtResult<()> {
        let c = self.memory.carve(parent, MemOwner::Model(self.model), usage, size)?;
        self.carved.lock().unwrap_or_else(|e| e.into_inner()).push(c);
        self.total.fetch_add(size, Ordering::Relaxed);
        Ok(())
    }

    /// Frees everything this tier allocated (newest first) and returns its
    /// carved bytes. Every allocation is attempted; the first failure is
    /// returned.
    pub fn free_all(&self) -> NrtResult<()> {
        let carved = std::mem::take(&mut *self.carved.lock().unwrap_or_else(|e| e.into_inner()));
        for c in carved.iter().rev() {
            self.memory.uncarve(c);
            self.total.fetch_sub(c.size, Ordering::Relaxed);
        }
        let addrs = std::mem::take(&mut *self.live.lock().unwrap_or_else(|e| e.into_inner()));
        let mut first = Ok(());
        for addr in addrs.into_iter().rev() {
            let size = self.memory.allocation(addr).map_or(0, |a| a.size);
            match self.memory.free(addr) {
                Ok(()) => {
                    self.total.fetch_sub(size, Ordering::Relaxed);
                }
                Err(e) => {
                    if first.is_ok() {
                        first = Err(e);
                    }
                }
            }
        }
        first
    }

    /// Bytes currently allocated by this tier.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// The model it belongs to.
    pub fn model(&self) -> ModelId {
        self.model
    }

    /// Its home physical core.
    pub fn core(&self) -> CoreId {
        self.core
    }

    /// The device allocator underneath.
    pub fn device_memory(&self) -> &Arc<DeviceMemory> {
        &self.memory
    }
}

impl Drop for ModelMemory {
    fn drop(&mut self) {
        if let Err(e) = self.free_all() {
            crate::log_error!(Module::Tdrv, "model {} memory not fully released: {e}", self.model);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_spread_cores_evenly() {
        let got: Vec<u32> = (0..8).map(|c| hbm_channel_of(CoreId(c), 8, 4)).collect();
        assert_eq!(got, vec![0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(hbm_channel_of(CoreId(1), 2, 2), 1);
        assert_eq!(hbm_channel_of(CoreId(0), 1, 2), 0);
        assert_eq!(hbm_channel_of(CoreId(3), 4, 0), 0);
    }

    #[test]
    fn carved_bytes_move_to_the_model_and_back() {
        let cfg = nrt_sim::SimConfig::builder().deterministic(true).hbm_bytes_per_channel(64 << 20).build();
        let mem = Arc::new(DeviceMemory::new(Arc::new(nrt_sim::SimDevice::new(&cfg, 0))));
        let empty = mem.ledger();
        let arena = mem.alloc(CoreId(0), MemOwner::Runtime, MemUsage::InstrSp, 1 << 20, 4096).unwrap();
        let before = mem.ledger();
        let id: ModelId = 7;
        let tier = mem.model_tier(CoreId(0), id);
        tier.book_carved(arena, MemUsage::InstrPe, 4096).unwrap();
        tier.book_carved(arena, MemUsage::InstrAct, 1024).unwrap();
        let l = mem.ledger();
        assert_eq!(l.total(), before.total(), "carving allocates nothing");
        assert_eq!(l.allocations, before.allocations);
        assert_eq!((l.model(id).get(MemUsage::InstrPe), l.model(id).get(MemUsage::InstrAct)), (4096, 1024));
        assert_eq!(l.core(CoreId(0)).get(MemUsage::InstrSp), (1 << 20) - 5120);
        assert_eq!(tier.total(), 5120);
        let e = tier.book_carved(arena, MemUsage::InstrPe, 1 << 20).unwrap_err();
        assert!(e.message.contains("booked out already"), "{}", e.message);
        assert!(tier.book_carved(DeviceAddr(0x1234), MemUsage::InstrPe, 1).is_err(), "not a live allocation");
        tier.free_all().unwrap();
        assert_eq!(mem.ledger(), before);
        // The parent freed first: the carve leaves the books on return.
        tier.book_carved(arena, MemUsage::InstrDve, 512).unwrap();
        mem.free(arena).unwrap();
        assert_eq!(mem.ledger().model(id).get(MemUsage::InstrDve), 512);
        tier.free_all().unwrap();
        assert_eq!(mem.ledger(), empty);
    }
}
