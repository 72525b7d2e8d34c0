//! The emulated driver: aws-neuronx-dkms's ioctl semantics in user space
//! over the simulated device.
//!
//! It receives what the kernel receives, `(cmd, &mut [u8])`, decodes the
//! argument struct itself and answers with an `errno`, as `ncdev_ioctl`
//! does: memory handles (small integers, 0 invalid) over the simulator's
//! pools, DMA queues owned by the process that initialised them,
//! semaphore and event registers, notification rings mapped into the
//! caller, and the cross-process core lock (NC_RANGE_MARK over the same
//! flock'ed lock files the simulator's reservation uses, so processes
//! contend exactly as they do on the simulator). One `EmulatedDriver` is
//! one open file of `/dev/neuronN`.
//!
//! What it reaches of the simulator is the `nrt_hal::Device` contract
//! (the bytes, registers and rings any device has), never its internals.

use crate::abi::{self, Arg, cmd, ext};
use crate::ffi;
use crate::transport::Transport;
use nrt_hal::{
    CoreId, CoreReservation, Device, DeviceAddr, DmaQueueId, DmaQueueStatus, DmaRingConfig, EngineId, EngineRun,
    EngineWaitOn, HalError, MemoryLocation, NqRing, NqSpec, NqType,
};
use nrt_hal::status::{self, SlotWriter};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// One memory chunk a handle names.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    pa: DeviceAddr,
    size: u64,
    host: bool,
}

/// A queue this file initialised.
#[derive(Clone, Copy, Debug)]
struct Queue {
    core: CoreId,
    id: DmaQueueId,
    config: DmaRingConfig,
    tx_handle: u64,
    rx_handle: u64,
}

/// The driver of one simulated device, as one open file of it.
pub struct EmulatedDriver {
    device: Arc<dyn Device>,
    chunks: Mutex<HashMap<u64, Chunk>>,
    next_handle: AtomicU64,
    queues: Mutex<HashMap<(u32, u32), Queue>>,
    nqs: Mutex<HashMap<u64, Arc<dyn NqRing>>>,
    next_nq: AtomicU64,
    locks: Mutex<HashMap<u32, CoreReservation>>,
    /// HBM windows by mmap offset (RESOURCE_MMAP_INFO answered them).
    hbm: Mutex<HashMap<u64, nrt_hal::HostWindow>>,
    /// The datastore entry this file acquired (ACQUIRE_NEURON_DS), kept
    /// until RELEASE_NEURON_DS or the file's close.
    ds: Mutex<Option<Arc<SlotWriter>>>,
}

thread_local! {
    /// The driver's words about this thread's last failed call (its dmesg).
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Where NQ mmap offsets start (ours: page-aligned, past any chunk offset).
const NQ_MMAP_BASE: u64 = 1 << 40;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The errno a device error becomes, with its words kept for
/// [`Transport::last_message`].
fn errno_of(e: HalError) -> i32 {
    let n = match &e {
        HalError::InvalidAddress { .. } => libc::EINVAL,
        HalError::OutOfMemory { .. } => libc::ENOMEM,
        HalError::DeviceLost { .. } => libc::ENODEV,
        HalError::Busy { .. } => libc::EBUSY,
        HalError::Unsupported { .. } => libc::EOPNOTSUPP,
        HalError::System { .. } => libc::EIO,
    };
    LAST.with(|l| *l.borrow_mut() = Some(e.to_string()));
    n
}

/// Fails with `errno`, saying why.
fn refuse(errno: i32, why: impl Into<String>) -> i32 {
    LAST.with(|l| *l.borrow_mut() = Some(why.into()));
    errno
}

type R = Result<(), i32>;

impl EmulatedDriver {
    /// Opens the emulation of `device` (the simulator behind it).
    pub fn open(device: Arc<dyn Device>) -> EmulatedDriver {
        EmulatedDriver {
            device,
            chunks: Mutex::new(HashMap::new()),
            next_handle: AtomicU64::new(1),
            queues: Mutex::new(HashMap::new()),
            nqs: Mutex::new(HashMap::new()),
            next_nq: AtomicU64::new(0),
            locks: Mutex::new(HashMap::new()),
            hbm: Mutex::new(HashMap::new()),
            ds: Mutex::new(None),
        }
    }

    /// The device behind the emulation.
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    fn chunk(&self, handle: u64, offset: u64, len: u64) -> Result<Chunk, i32> {
        let c = lock(&self.chunks).get(&handle).copied().ok_or_else(|| refuse(libc::EINVAL, format!("invalid mem handle {handle}")))?;
        if offset.checked_add(len).is_none_or(|end| end > c.size) {
            return Err(refuse(libc::EINVAL, format!("offset {offset} + {len} bytes past the {} bytes of mem handle {handle}", c.size)));
        }
        Ok(c)
    }

    fn core(&self, nc: u32) -> Result<CoreId, i32> {
        if nc >= self.device.info().physical_cores {
            return Err(refuse(libc::EINVAL, format!("nc {nc} does not exist")));
        }
        Ok(CoreId(nc))
    }

    /// The (core, core-relative queue) of a device-wide DMA engine id.
    fn queue_of(&self, eng_id: u32, qid: u32) -> Result<(CoreId, DmaQueueId), i32> {
        let info = self.device.info();
        let per_core = info.dma_engines();
        if qid >= info.dma_queues_per_engine() {
            return Err(refuse(libc::EINVAL, format!("queue {qid} of DMA engine {eng_id} does not exist")));
        }
        let core = self.core(eng_id / per_core)?;
        Ok((core, DmaQueueId { engine: (eng_id % per_core) as u8, queue: qid as u8 }))
    }

    fn arg<A: Arg>(buf: &[u8]) -> Result<A, i32> {
        if buf.len() < A::SIZE {
            return Err(refuse(libc::EFAULT, format!("{} argument of {} bytes, {} expected", A::C_NAME, buf.len(), A::SIZE)));
        }
        Ok(A::decode(buf))
    }

    fn out<A: Arg>(buf: &mut [u8], a: &A) -> R {
        if buf.len() < A::SIZE {
            return Err(refuse(libc::EFAULT, format!("{} argument of {} bytes, {} expected", A::C_NAME, buf.len(), A::SIZE)));
        }
        a.encode(buf);
        Ok(())
    }

    /// Writes an out value's bytes (`to_ne_bytes`) to caller memory.
    fn put_user(ptr: u64, bytes: &[u8]) -> R {
        ffi::copy_to_user(ptr, bytes).ok_or_else(|| refuse(libc::EFAULT, "null out pointer"))
    }

    fn dispatch(&self, c: u32, buf: &mut [u8]) -> R {
        let dev = &*self.device;
        let hal = errno_of;
        match c {
            cmd::SEMAPHORE_INCREMENT | cmd::SEMAPHORE_DECREMENT | cmd::SEMAPHORE_READ | cmd::SEMAPHORE_WRITE => {
                let mut a: abi::Semaphore = Self::arg(buf)?;
                let core = self.core(a.nc_id)?;
                match c {
                    cmd::SEMAPHORE_INCREMENT => dev.semaphore_increment(core, a.semaphore_index, a.value).map_err(hal)?,
                    cmd::SEMAPHORE_DECREMENT => dev.semaphore_decrement(core, a.semaphore_index, a.value).map_err(hal)?,
                    cmd::SEMAPHORE_WRITE => dev.semaphore_set(core, a.semaphore_index, a.value as i32).map_err(hal)?,
                    _ => {
                        a.value = dev.semaphore_read(core, a.semaphore_index).map_err(hal)? as u32;
                        Self::out(buf, &a)?;
                    }
                }
                Ok(())
            }
            cmd::EVENT_SET | cmd::EVENT_GET => {
                let mut a: abi::Event = Self::arg(buf)?;
                let core = self.core(a.nc_id)?;
                if c == cmd::EVENT_GET {
                    a.value = u32::from(dev.event_read(core, a.event_index).map_err(hal)?);
                    Self::out(buf, &a)?;
                } else if a.value != 0 {
                    dev.event_set(core, a.event_index).map_err(hal)?;
                } else {
                    dev.event_clear(core, a.event_index).map_err(hal)?;
                }
                Ok(())
            }
            cmd::MEM_ALLOC_V2MT64 => {
                let a: abi::MemAllocV2Mt64 = Self::arg(buf)?;
                let host = a.host_memory != 0;
                let location = if host { MemoryLocation::Host } else { MemoryLocation::Hbm { channel: a.dram_channel } };
                let pa = dev.alloc(location, a.size, a.align).map_err(hal)?;
                let h = self.next_handle.fetch_add(1, Ordering::Relaxed);
                lock(&self.chunks).insert(h, Chunk { pa, size: a.size, host });
                if let Err(e) = Self::put_user(a.mem_handle, &h.to_ne_bytes()) {
                    lock(&self.chunks).remove(&h);
                    let _ = dev.free(pa);
                    return Err(e);
                }
                Ok(())
            }
            cmd::RESOURCE_MMAP_INFO => {
                let mut a: abi::ResourceMmapInfo = Self::arg(buf)?;
                if a.block != abi::DM_BLOCK_HBM || a.resource != abi::DM_RESOURCE_DMEM {
                    return Err(refuse(libc::EINVAL, format!("resource {} of block {}: the emulated driver maps HBM device memory only", a.resource, a.block)));
                }
                let w = dev.map_hbm(a.block_id).map_err(hal)?.ok_or_else(|| refuse(libc::EINVAL, format!("HBM {} does not exist", a.block_id)))?;
                lock(&self.hbm).insert(w.base.get(), w);
                a.offset = w.base.get();
                a.size = w.len;
                Self::out(buf, &a)
            }
            cmd::DMABUF_FD => {
                let a: abi::DmabufFd = Self::arg(buf)?;
                if a.fd == 0 {
                    return Err(refuse(libc::EFAULT, "null fd pointer"));
                }
                let fd = dev.dmabuf_fd(a.va as usize, a.size).map_err(hal)?;
                Self::put_user(a.fd, &std::os::fd::IntoRawFd::into_raw_fd(fd).to_ne_bytes())
            }
            cmd::MEM_FREE => {
                let a: abi::MemFree = Self::arg(buf)?;
                let c = lock(&self.chunks).remove(&a.mem_handle).ok_or_else(|| refuse(libc::EINVAL, format!("invalid mem handle {}", a.mem_handle)))?;
                dev.free(c.pa).map_err(hal)
            }
            cmd::MEM_GET_EXTENDED_INFO => {
                let mut a: abi::MemGetExtendedInfo = Self::arg(buf)?;
                if a.version != abi::MEM_GET_EXTENDED_INFO_VERSION {
                    return Err(refuse(libc::EINVAL, format!("mem_get_extended_info version {} (1 expected)", a.version)));
                }
                let c = self.chunk(a.mem_handle, 0, 0)?;
                a.host_memory = u32::from(c.host);
                a.pa = c.pa.get();
                a.size = c.size;
                a.mmap_offset = c.pa.get();
                a.pid = u64::from(std::process::id());
                Self::out(buf, &a)?;
                Ok(())
            }
            cmd::MEM_BUF_COPY64 => {
                let a: abi::MemBufCopy64 = Self::arg(buf)?;
                let c = self.chunk(a.mem_handle, a.offset, a.size)?;
                let at = c.pa.offset(a.offset);
                let len = a.size as usize;
                let r = if a.copy_to_mem_handle != 0 {
                    ffi::with_user(a.buffer, len, |src| dev.write(at, src))
                } else {
                    ffi::with_user_mut(a.buffer, len, |dst| dev.read(at, dst))
                };
                r.ok_or_else(|| refuse(libc::EFAULT, "null buffer"))?.map_err(hal)
            }
            cmd::MEM_COPY64 => {
                let a: abi::MemCopy64 = Self::arg(buf)?;
                let s = self.chunk(a.src_mem_handle, a.src_offset, a.size)?;
                let d = self.chunk(a.dst_mem_handle, a.dst_offset, a.size)?;
                dev.copy(s.pa.offset(a.src_offset), d.pa.offset(a.dst_offset), a.size).map_err(hal)
            }
            cmd::MEMSET64 => {
                let a: abi::Memset64 = Self::arg(buf)?;
                let c = self.chunk(a.mem_handle, a.offset, a.size)?;
                dev.memset(c.pa.offset(a.offset), a.value as u8, a.size).map_err(hal)
            }
            cmd::BAR_READ | cmd::BAR_WRITE => {
                // Register accesses by address (the emulated BAR0 is the
                // device address space itself).
                let a: abi::BarRw = Self::arg(buf)?;
                for i in 0..u64::from(a.count) {
                    let mut addr = [0u8; 8];
                    ffi::read_user(a.address + i * 8, &mut addr).ok_or_else(|| refuse(libc::EFAULT, "null address array"))?;
                    let addr = DeviceAddr(u64::from_ne_bytes(addr));
                    let slot = a.data + i * 4;
                    if c == cmd::BAR_READ {
                        let mut v = [0u8; 4];
                        dev.read(addr, &mut v).map_err(hal)?;
                        ffi::copy_to_user(slot, &v).ok_or_else(|| refuse(libc::EFAULT, "null data array"))?;
                    } else {
                        let mut v = [0u8; 4];
                        ffi::read_user(slot, &mut v).ok_or_else(|| refuse(libc::EFAULT, "null data array"))?;
                        dev.write(addr, &v).map_err(hal)?;
                    }
                }
                Ok(())
            }
            cmd::DMA_QUEUE_INIT => {
                let a: abi::DmaQueueInit = Self::arg(buf)?;
                let (core, id) = self.queue_of(a.eng_id, a.qid)?;
                if a.tx_desc_count != a.rx_desc_count {
                    return Err(refuse(libc::EINVAL, "tx and rx rings of different lengths"));
                }
                let bytes = u64::from(a.tx_desc_count) * 16;
                let tx = self.chunk(a.tx_handle, 0, bytes)?.pa;
                let rx = self.chunk(a.rx_handle, 0, bytes)?.pa;
                let config = DmaRingConfig {
                    tx_ring: tx, rx_ring: rx, descriptors: a.tx_desc_count,
                    completion_semaphore: None, completion_event: None,
                };
                dev.dma_queue_init(core, id, config).map_err(hal)?;
                lock(&self.queues).insert((a.eng_id, a.qid), Queue { core, id, config, tx_handle: a.tx_handle, rx_handle: a.rx_handle });
                Ok(())
            }
            ext::DMA_QUEUE_CONFIG => {
                let a: ext::DmaQueueConfig = Self::arg(buf)?;
                let mut q = self.owned_queue(a.eng_id, a.qid)?;
                let bytes = u64::from(q.config.descriptors) * 16;
                let (tx, rx) = (q.tx_handle, q.rx_handle);
                q.config.tx_ring = self.chunk(tx, a.tx_offset, bytes)?.pa.offset(a.tx_offset);
                q.config.rx_ring = self.chunk(rx, a.rx_offset, bytes)?.pa.offset(a.rx_offset);
                q.config.completion_semaphore = a.semaphore.checked_sub(1);
                q.config.completion_event = a.event.checked_sub(1);
                dev.dma_queue_init(q.core, q.id, q.config).map_err(hal)?;
                lock(&self.queues).insert((a.eng_id, a.qid), q);
                Ok(())
            }
            cmd::DMA_QUEUE_RELEASE => {
                let a: abi::DmaQueueRelease = Self::arg(buf)?;
                self.owned_queue(a.eng_id, a.qid)?;
                lock(&self.queues).remove(&(a.eng_id, a.qid));
                Ok(())
            }
            cmd::DMA_QUEUE_COPY_START => {
                let a: abi::DmaQueueCopyStart = Self::arg(buf)?;
                let (core, id) = self.queue_of(a.eng_id, a.qid)?;
                dev.dma_tail_increment(core, id, a.tx_desc_count, a.rx_desc_count).map_err(hal)
            }
            cmd::DMA_ACK_COMPLETED => {
                let a: abi::DmaAckCompleted = Self::arg(buf)?;
                self.owned_queue(a.eng_id, a.qid).map(|_| ())
            }
            cmd::DMA_QUEUE_GET_STATE => {
                let a: abi::DmaQueueGetState = Self::arg(buf)?;
                let (core, id) = self.queue_of(a.eng_id, a.qid)?;
                let st = dev.dma_queue_state(core, id).map_err(hal)?;
                let sw = match st.status {
                    DmaQueueStatus::Disabled => abi::QUEUE_SW_DISABLED,
                    DmaQueueStatus::Enabled => abi::QUEUE_SW_ENABLED,
                    DmaQueueStatus::Aborted => abi::QUEUE_SW_ABORTED,
                };
                let cfg = lock(&self.queues).get(&(a.eng_id, a.qid)).map(|q| q.config);
                for (ptr, head, tail, base) in [
                    (a.tx, st.tx_head, st.tx_tail, cfg.map_or(0, |c| c.tx_ring.get())),
                    (a.rx, st.rx_head, st.rx_tail, cfg.map_or(0, |c| c.rx_ring.get())),
                ] {
                    let out = abi::DmaQueueStateOut {
                        hw_status: 0, sw_status: sw, base_addr: base, length: cfg.map_or(0, |c| c.descriptors),
                        head_pointer: head as u32, tail_pointer: tail as u32, completion_base_addr: 0, completion_head: 0,
                    };
                    let mut b = [0u8; abi::MAX_ARG];
                    out.encode(&mut b);
                    ffi::copy_to_user(ptr, &b[..abi::DmaQueueStateOut::SIZE]).ok_or_else(|| refuse(libc::EFAULT, "null state pointer"))?;
                }
                Ok(())
            }
            ext::ENGINE_START => {
                let a: ext::EngineStart = Self::arg(buf)?;
                let core = self.core(a.nc_id)?;
                let e = EngineId::from_index(a.engine as usize).ok_or_else(|| refuse(libc::EINVAL, format!("engine {}", a.engine)))?;
                dev.start_engine(core, e, DeviceAddr(a.addr), a.len).map_err(hal)
            }
            ext::ENGINE_STATE => {
                let mut a: ext::EngineState = Self::arg(buf)?;
                let core = self.core(a.nc_id)?;
                let e = EngineId::from_index(a.engine as usize).ok_or_else(|| refuse(libc::EINVAL, format!("engine {}", a.engine)))?;
                (a.run, a.pc, a.wait_kind, a.wait_index) = match dev.engine_state(core, e).map_err(hal)? {
                    None => (0, 0, 0, 0),
                    Some(s) => {
                        let run = match s.run {
                            EngineRun::Idle => 1,
                            EngineRun::Running => 2,
                            EngineRun::Halted => 3,
                            EngineRun::Hung => 4,
                        };
                        let (k, i) = match s.waiting_on {
                            EngineWaitOn::Nothing => (0, 0),
                            EngineWaitOn::Semaphore(n) => (1, n),
                            EngineWaitOn::Event(n) => (2, n),
                            EngineWaitOn::DmaIdle => (3, 0),
                            EngineWaitOn::CustomOp => (4, 0),
                        };
                        (run, s.pc, k, i)
                    }
                };
                Self::out(buf, &a)?;
                Ok(())
            }
            ext::NQ_INIT => {
                let mut a: ext::NqInit = Self::arg(buf)?;
                let core = self.core(a.nc_id)?;
                let nq_type = NqType::ALL.get(a.nq_type as usize).copied().ok_or_else(|| refuse(libc::EINVAL, format!("nq type {}", a.nq_type)))?;
                let spec = NqSpec { core, engine_index: a.engine_index as u8, nq_type, ring: DeviceAddr(a.pa), size_bytes: a.size };
                let ring = dev.nq_init(spec).map_err(hal)?;
                let off = NQ_MMAP_BASE + self.next_nq.fetch_add(1, Ordering::Relaxed) * 4096;
                lock(&self.nqs).insert(off, ring);
                a.mmap_offset = off;
                Self::out(buf, &a)?;
                Ok(())
            }
            ext::NQ_DESTROY => {
                let a: ext::NqDestroy = Self::arg(buf)?;
                let core = self.core(a.nc_id)?;
                let nq_type = NqType::ALL.get(a.nq_type as usize).copied().ok_or_else(|| refuse(libc::EINVAL, format!("nq type {}", a.nq_type)))?;
                lock(&self.nqs).retain(|_, r| {
                    let s = r.spec();
                    !(s.core == core && u32::from(s.engine_index) == a.engine_index && s.nq_type == nq_type)
                });
                let spec = NqSpec { core, engine_index: a.engine_index as u8, nq_type, ring: DeviceAddr(0), size_bytes: 0 };
                dev.nq_destroy(spec).map_err(hal)
            }
            cmd::NOTIFICATIONS_DESTROY_V1 => {
                // A no-op in the driver (neuron-facts §3.3); validated only.
                Self::arg::<abi::NotificationsDestroy>(buf).map(|_| ())
            }
            cmd::NC_RESET => {
                let mut a: abi::DeviceReset = Self::arg(buf)?;
                let n = dev.info().physical_cores;
                for core in (0..n).filter(|&c| a.nc_map == abi::NC_MAP_DEVICE || a.nc_map & (1 << c) != 0) {
                    dev.reset_core(CoreId(core)).map_err(hal)?;
                }
                a.request_id = std::process::id();
                Self::out(buf, &a)?;
                Ok(())
            }
            cmd::NC_RESET_READY => {
                // Resets complete inside NC_RESET here: ready at once.
                let mut a: abi::DeviceReady = Self::arg(buf)?;
                a.result = 0;
                Self::out(buf, &a)?;
                Ok(())
            }
            cmd::CRWL_NC_RANGE_MARK_EXT0 => {
                let mut a: abi::CrwlNcMapExt = Self::arg(buf)?;
                self.range_mark(&mut a)?;
                Self::out(buf, &a)?;
                Ok(())
            }
            cmd::CRWL_NC_RANGE_UNMARK_EXT0 => {
                let a: abi::CrwlNcMapExt = Self::arg(buf)?;
                let mut held = lock(&self.locks);
                for core in 0..512u32 {
                    if a.bitmap[(core / 64) as usize] & (1 << (core % 64)) != 0 {
                        held.remove(&core);
                    }
                }
                Ok(())
            }
            cmd::ACQUIRE_NEURON_DS => {
                let mut a: abi::NeuronDsInfo = Self::arg(buf)?;
                let w = self.acquire_ds(a.pid)?;
                a.mmap_offset = status::entry_offset(w.index());
                a.size = status::ENTRY_BYTES as u32;
                Self::out(buf, &a)?;
                Ok(())
            }
            cmd::RELEASE_NEURON_DS => {
                // The owner's release drops this file's reference; the
                // device lets go of its own when it closes, and the last
                // reference clears the entry (neuron_ds.h's reference count).
                let a: abi::NeuronDsInfo = Self::arg(buf)?;
                if a.pid == 0 || a.pid as u32 == std::process::id() {
                    lock(&self.ds).take();
                }
                Ok(())
            }
            cmd::COMPATIBLE_VERSION => {
                let arch = arch_number(dev);
                let v = abi::CompatibleVersion { max: abi::rt_version(arch), min: if arch == abi::ARCH_V3 { 10 } else { 5 } };
                Self::out(buf, &v)?;
                Ok(())
            }
            cmd::DEVICE_BASIC_INFO => {
                Self::out(buf, &abi::DeviceBasicInfo { architecture: arch_number(dev), revision: 0 })?;
                Ok(())
            }
            cmd::DRIVER_INFO_GET => {
                let size = abi::DriverInfo::SIZE as u32;
                let v = abi::DriverInfo {
                    architecture: arch_number(dev), revision: 0, version: 0, size,
                    feature_flags1: abi::FEATURE_MEM_ALLOC64 | abi::FEATURE_DMABUF,
                };
                Self::out(buf, &v)?;
                Ok(())
            }
            cmd::DEVICE_BDF_EXT => {
                let mut a: abi::DeviceBdfExt = Self::arg(buf)?;
                let info = dev.info();
                let bdf = info.topology.device_bdf(info.device_index);
                a.domain = u32::from(bdf.domain);
                a.bus_number = u32::from(bdf.bus);
                a.slot = bdf.device;
                a.func = bdf.function;
                Self::out(buf, &a)?;
                Ok(())
            }
            cmd::HOST_DEVICE_ID_TO_RID_MAP => {
                let topo = &dev.info().topology;
                let mut a = abi::HostDeviceIdToRidMap { count: topo.devices.min(64), host_did_to_rid_map: [0; 64] };
                for d in 0..a.count {
                    a.host_did_to_rid_map[d as usize] = topo.routing_id(d).unwrap_or(d);
                }
                Self::out(buf, &a)?;
                Ok(())
            }
            other => Err(refuse(libc::ENOTTY, format!("ioctl {other:#010x} ({}) is not emulated", abi::command_name(other)))),
        }
    }

    /// ACQUIRE_NEURON_DS: pid 0 (or our own) acquires this process's
    /// entry, creating it; another pid finds that process's entry
    /// (ENOENT when it has none), as `neuron_ds_acquire_pid` does.
    fn acquire_ds(&self, pid: i32) -> Result<Arc<SlotWriter>, i32> {
        let own = self.device.datastore().ok_or_else(|| refuse(libc::ENOMEM, "no datastore entry: publishing is off or every entry is taken"))?;
        if pid == 0 || pid as u32 == std::process::id() {
            *lock(&self.ds) = Some(Arc::clone(&own));
            return Ok(own);
        }
        match own.entry_of(pid as u32) {
            Some(_) => Err(refuse(libc::EACCES, format!("the datastore of pid {pid} is read by mapping the store (nrt_ndl::nds), not through this file"))),
            None => Err(refuse(libc::ENOENT, format!("pid {pid} has no datastore entry"))),
        }
    }

    fn owned_queue(&self, eng_id: u32, qid: u32) -> Result<Queue, i32> {
        lock(&self.queues)
            .get(&(eng_id, qid))
            .copied()
            .ok_or_else(|| refuse(libc::EINVAL, format!("DMA engine {eng_id} queue {qid} was not initialised by this process")))
    }

    /// NC_RANGE_MARK: claims `nc_count` free cores in `[start, end]`,
    /// answering their bitmap, or EBUSY with how many were free.
    fn range_mark(&self, a: &mut abi::CrwlNcMapExt) -> R {
        let n = self.device.info().physical_cores;
        if a.end_nc_index >= n || a.start_nc_index > a.end_nc_index || a.nc_count == 0 {
            return Err(refuse(libc::EINVAL, format!("nc range {}..={} of {} cores", a.start_nc_index, a.end_nc_index, n)));
        }
        let mut held = lock(&self.locks);
        let mut got = Vec::new();
        let mut last_busy = None;
        for core in a.start_nc_index..=a.end_nc_index {
            if got.len() as u32 == a.nc_count {
                break;
            }
            if held.contains_key(&core) {
                continue;
            }
            match self.device.reserve_cores(&[CoreId(core)]) {
                Ok(r) => got.push((core, r)),
                Err(HalError::Busy { holder, .. }) => last_busy = Some((core, holder)),
                Err(e) => return Err(errno_of(e)),
            }
        }
        if (got.len() as u32) < a.nc_count {
            a.max_nc_available = got.len() as u32;
            a.bitmap = [0; 8];
            let why = match last_busy {
                Some((c, holder)) => format!("nc {c} is marked by another process ({holder}); {} of {} available", got.len(), a.nc_count),
                None => format!("{} of {} cores available", got.len(), a.nc_count),
            };
            return Err(refuse(libc::EBUSY, why));
        }
        a.bitmap = [0; 8];
        for (core, r) in got {
            a.bitmap[(core / 64) as usize] |= 1 << (core % 64);
            held.insert(core, r);
        }
        a.max_nc_available = a.nc_count;
        Ok(())
    }
}

/// The `enum neuron_arch` number of the device (the architecture
/// table's `driver_arch`).
fn arch_number(dev: &dyn Device) -> u32 {
    dev.info().arch.driver_arch
}

impl Transport for EmulatedDriver {
    fn backend(&self) -> &'static str {
        "emulated-driver"
    }

    fn ioctl(&self, cmd: u32, arg: &mut [u8]) -> Result<(), i32> {
        self.dispatch(cmd, arg)
    }

    fn map_nq(&self, mmap_offset: u64) -> Result<Arc<dyn NqRing>, i32> {
        lock(&self.nqs).get(&mmap_offset).cloned().ok_or_else(|| refuse(libc::EINVAL, format!("no NQ at mmap offset {mmap_offset:#x}")))
    }

    /// The simulator's own mapping of the channel RESOURCE_MMAP_INFO
    /// answered for (the emulated driver lives in the caller's process,
    /// so "mapping into the caller" is handing over that window).
    fn map(&self, offset: u64, len: u64) -> Result<usize, i32> {
        match lock(&self.hbm).get(&offset) {
            Some(w) if w.len == len => Ok(w.va),
            Some(w) => Err(refuse(libc::EINVAL, format!("mmap of {len} bytes at offset {offset:#x}: the region there has {} (partial maps are refused)", w.len))),
            None => Err(refuse(libc::EINVAL, format!("nothing to mmap at offset {offset:#x}"))),
        }
    }

    /// The simulator keeps its mapping for its own life.
    fn unmap(&self, _va: usize, _len: u64) {}

    fn map_ds(&self, mmap_offset: u64) -> Result<Arc<SlotWriter>, i32> {
        lock(&self.ds)
            .as_ref()
            .filter(|w| status::entry_offset(w.index()) == mmap_offset)
            .cloned()
            .ok_or_else(|| refuse(libc::EINVAL, format!("no datastore acquired at mmap offset {mmap_offset:#x}")))
    }

    fn core_count(&self) -> Result<u32, i32> {
        Ok(self.device.info().physical_cores)
    }

    fn last_message(&self) -> Option<String> {
        LAST.with(|l| l.borrow_mut().take())
    }
}
