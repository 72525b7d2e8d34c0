//! The simulated device: routes every device-address access, owns the
//! lazily created cores, and implements [`nrt_hal::Device`].
//!
//! The root of the crate's layout (see the README): the only module that
//! holds the shared state every worker's door leads to.
//!
//! - this file: [`SimDevice`] and its `Device` impl (validation, the
//!   host's register calls and their held wakes).
//! - `shared`: `Shared` (cores, memory, faults, scheduler, the lost
//!   flag) and how a scheduled task runs.
//! - `bus`: the memory door ([`crate::port::Bus`]) and its routing.
//! - `fanout`: the signal door ([`crate::signals::Signals`],
//!   [`crate::signals::Env`]): routed register stores, the wake fan-out,
//!   task scheduling.
//! - `panicked`: the evidence a task that panicked leaves.
//! - `instance`: the devices of one instance (the peer window's routing
//!   table) and the scheduler they share.

mod bus;
mod fanout;
mod instance;
mod panicked;
mod shared;

use crate::config::SimConfig;
use crate::core::Core;
use crate::engine::RunState;
use crate::fault::{FaultSpec, FaultState};
use crate::memory::{Memory, Target};
use crate::nq::{NqState, NqView, RingMemory};
use crate::scheduler::{HasScheduler, Scheduler};
use instance::Instance;
use crate::wake::Change;
use nrt_hal::{
    CoreId, CoreReservation, Device, DeviceAddr, DeviceInfo, DmaQueueId, DmaQueueState, DmaRingConfig, EngineId,
    HalError, HalResult, HbmChannelDesc, MemoryLocation, NQ_RECORD_BYTES, NqRing, NqSpec,
};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};


pub(crate) use shared::Shared;

/// The error of a register index past the core's `count` (built out of
/// line, off the register calls' path).
#[cold]
#[inline(never)]
fn no_such_register(core: CoreId, index: u32, count: u32, what: &str) -> HalError {
    HalError::invalid(DeviceAddr(0), 0, format!("{what} {index} does not exist; {core} has {count}"))
}

/// A simulated Neuron device. Cheap to create: memory, cores and worker
/// threads all appear on first use.
#[derive(Debug)]
pub struct SimDevice {
    shared: Arc<Shared>,
}

impl SimDevice {
    /// Device `index` of the instance described by `config`, alone: the
    /// peer window reaches no other device and it has a scheduler of its
    /// own ([`SimDevice::all`] builds the devices of one instance).
    pub fn new(config: &SimConfig, index: u32) -> SimDevice {
        let instance = Arc::new(SimDevice::instance_of(config, index + 1));
        SimDevice::in_instance(config, index, instance)
    }

    /// The shared part of an instance of `devices` devices.
    fn instance_of(config: &SimConfig, devices: u32) -> Instance {
        Instance::new(
            Scheduler::new(config.deterministic, config.threads, config.deterministic_drain_limit),
            devices,
            config.arch.desc().cores_per_device,
        )
    }

    /// Device `index` of `instance`.
    fn in_instance(config: &SimConfig, index: u32, instance: Arc<Instance>) -> SimDevice {
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
            topology: nrt_hal::Topology::of(&config.instance, config.arch, config.devices),
        };
        let shared = Arc::new_cyclic(|me| Shared {
            arch,
            info,
            config: config.clone(),
            memory: Memory::new(&hbm, host),
            faults: FaultState::default(),
            instance: Arc::clone(&instance),
            cores: (0..arch.cores_per_device).map(|_| OnceLock::new()).collect(),
            lost: Mutex::new(None),
            is_lost: std::sync::atomic::AtomicBool::new(false),
            me: me.clone(),
            status: OnceLock::new(),
        });
        shared.faults.arm_all(&config.faults);
        instance.join(index, &shared);
        SimDevice { shared }
    }

    /// This process's entry in the device's datastore, acquired on first
    /// call (`docs/status-file.md`); `None` when publishing is off or the
    /// store cannot be used (said once on stderr).
    fn status_slot(&self) -> Option<&Arc<nrt_hal::status::SlotWriter>> {
        self.shared
            .status
            .get_or_init(|| {
                let cfg = &self.shared.config;
                let dir = cfg.status_dir.as_ref()?;
                let info = &self.shared.info;
                let h = crate::status::HeaderInfo {
                    device_index: info.device_index,
                    physical_cores: info.physical_cores,
                    memory_bytes: info.hbm.iter().map(|c| c.size).sum(),
                    host_memory_bytes: info.host_memory.size,
                    arch: self.shared.arch.name,
                };
                let path = nrt_hal::status::status_file(dir, &cfg.lock_namespace, info.device_index);
                match crate::status::acquire(&path, &h) {
                    Ok(w) => Some(w),
                    Err(e) => {
                        eprintln!("nrt-sim: not publishing device status: {e}");
                        None
                    }
                }
            })
            .as_ref()
    }

    /// Marks `core` as used by this process in the datastore (a
    /// reservation or an engine brought up) and lets its engines count
    /// their busy time there.
    fn publish_core_use(&self, core: CoreId) -> HalResult<()> {
        if let Some(slot) = self.status_slot() {
            if core.0 < 64 {
                slot.add_cores(1 << core.0);
            }
            self.shared.core(core)?.activity.attach(Arc::clone(slot));
        }
        Ok(())
    }

    /// Every device of the configured instance: one address map (each
    /// reaches the others through the peer window,
    /// `nrt_hal::ArchDesc::peer_addr`) and one scheduler
    /// (`SimConfig::threads` workers for the whole instance).
    pub fn all(config: &SimConfig) -> Vec<SimDevice> {
        let instance = Arc::new(SimDevice::instance_of(config, config.devices));
        (0..config.devices).map(|i| SimDevice::in_instance(config, i, Arc::clone(&instance))).collect()
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
    /// later `Device` call fails with `DeviceLost` naming `reason`, the
    /// device stops stepping its engines and queues (the instance's
    /// scheduler drops its tasks) and a peer's DMA into it fails.
    pub fn lose(&self, reason: &str) {
        *self.shared.lost.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason.to_string());
        self.shared.is_lost.store(true, Ordering::Release);
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

    /// Worker threads started so far by the instance's scheduler (0 for
    /// an idle or deterministic instance).
    pub fn worker_threads(&self) -> usize {
        self.shared.instance.scheduler().workers()
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
        self.shared.instance.leave();
        if let Some(Some(s)) = self.shared.status.get() {
            crate::status::release(s);
        }
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
            Target::EvtSem(..) | Target::DmaRegs(..) | Target::Q7(..) | Target::Peer(..) => {
                return Err(HalError::invalid(spec.ring, size, "NQ ring must be the device's own memory"));
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
        let r = CoreReservation::acquire(&cfg.lock_dir, &cfg.lock_namespace, self.shared.info.device_index, cores)?;
        for &c in cores {
            self.publish_core_use(c)?;
        }
        Ok(r)
    }

    fn status(&self) -> Option<&nrt_hal::status::SlotWriter> {
        // Acquired by the first thing the runtime publishes (its first
        // allocation comes before any core is brought up).
        self.status_slot().map(|s| &**s)
    }

    fn datastore(&self) -> Option<Arc<nrt_hal::status::SlotWriter>> {
        self.status_slot().cloned()
    }

    fn start_engine(&self, core: CoreId, engine: EngineId, addr: DeviceAddr, len: u64) -> HalResult<()> {
        self.alive()?;
        self.publish_core_use(core)?;
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

    fn engine_state(&self, core: CoreId, engine: EngineId) -> HalResult<Option<nrt_hal::EngineState>> {
        use crate::engine::RunState;
        use crate::wake::WaitKey;
        use nrt_hal::{EngineRun, EngineWaitOn};
        self.alive()?;
        let c = self.shared.core(core)?;
        let slot = &c.engines[engine.index()];
        // Under the sequencer's lock the published wait key is the one its
        // last step ended on (see `Shared::step_engine`).
        let seq = slot.seq.lock().unwrap_or_else(|e| e.into_inner());
        let run = match seq.state() {
            RunState::Idle => EngineRun::Idle,
            RunState::Running => EngineRun::Running,
            RunState::Halted => EngineRun::Halted,
            RunState::Hung => EngineRun::Hung,
        };
        let waiting_on = match (run, slot.wait.key()) {
            (EngineRun::Running, WaitKey::Sem(n)) => EngineWaitOn::Semaphore(n),
            (EngineRun::Running, WaitKey::Event(n)) => EngineWaitOn::Event(n),
            (EngineRun::Running, WaitKey::DmaIdle) => EngineWaitOn::DmaIdle,
            (EngineRun::Running, WaitKey::Q7) => EngineWaitOn::CustomOp,
            _ => EngineWaitOn::Nothing,
        };
        Ok(Some(nrt_hal::EngineState { run, pc: seq.pc(), waiting_on }))
    }

    fn assist(&self) -> bool {
        self.shared.instance.scheduler.assist(&self.shared.instance)
    }

    fn lending_begin(&self) {
        self.shared.instance.scheduler.lending_begin();
    }

    fn lending_end(&self) {
        self.shared.instance.scheduler.lending_end();
    }

    fn map_hbm(&self, channel: u32) -> HalResult<Option<nrt_hal::HostWindow>> {
        self.alive()?;
        let Some(pool) = self.shared.memory.hbm.get(channel as usize) else { return Ok(None) };
        let name = format!("nrt-sim nd{} hbm{channel}", self.shared.info.device_index);
        pool.map(&name).map(Some)
    }

    /// The descriptor is the channel's memfd opened anew, its file
    /// position at the channel offset of `va` (`memory::mapping` says how
    /// that differs from a dma-buf).
    fn dmabuf_fd(&self, va: usize, len: u64) -> HalResult<std::os::fd::OwnedFd> {
        self.alive()?;
        for pool in &self.shared.memory.hbm {
            let Some(m) = pool.bytes.mapping() else { continue };
            let window = nrt_hal::HostWindow { va: m.va(), len: pool.bytes.len(), base: pool.base };
            if let Some(addr) = window.device_addr(va, len) {
                return m.open_at(addr.get() - pool.base.get()).map_err(|e| HalError::System { reason: format!("dma-buf fd of {len} bytes at {va:#x}: {e}") });
            }
        }
        Err(HalError::invalid(DeviceAddr(0), len, format!("host address {va:#x} (+{len} bytes) is not inside one mapped HBM channel of device {}", self.shared.info.device_index)))
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
    use crate::port::StoreRoute;
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
