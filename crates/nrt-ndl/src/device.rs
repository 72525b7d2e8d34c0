//! [`NdlDevice`]: `nrt_hal::Device` over the driver's ioctls, every call
//! one (or a few) `ioctl`s on a [`Transport`] — the kernel's or the
//! emulated driver's.
//!
//! Like libnrt's ndl layer it keeps the table the driver's ABI needs on
//! the caller's side: the memory handle behind every allocation (the HAL
//! speaks device addresses, the driver speaks handles). Every ioctl is
//! counted per command ([`NdlDevice::ioctl_count`]), which is how the
//! tests show what an execute costs at the kernel boundary.

use crate::abi::{self, Arg, cmd, ext};
use crate::transport::Transport;
use nrt_hal::{
    CoreId, CoreReservation, Device, DeviceAddr, DeviceInfo, DmaQueueId, DmaQueueState, DmaQueueStatus, DmaRingConfig,
    EngineId, EngineRun, EngineState, EngineWaitOn, HalError, HalResult, HbmChannelDesc, HostWindow, MemoryLocation,
    NqRing, NqSpec,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use nrt_hal::status::SlotWriter;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// An ioctl that failed: the command, its errno and the driver's words.
#[derive(Debug)]
pub(crate) struct IoctlError {
    /// The command number.
    pub cmd: u32,
    /// The errno.
    pub errno: i32,
    /// What the driver said (the emulator's message; the kernel's is in dmesg).
    pub detail: Option<String>,
}

impl std::fmt::Display for IoctlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let os = std::io::Error::from_raw_os_error(self.errno);
        write!(f, "{} failed: errno {} ({os})", abi::command_name(self.cmd), self.errno)?;
        if let Some(d) = &self.detail {
            write!(f, ": {d}")?;
        }
        Ok(())
    }
}

impl IoctlError {
    /// The device error this failure is, for an access of `len` bytes at
    /// `addr` (0, 0 when the call names no memory).
    fn hal(self, addr: DeviceAddr, len: u64) -> HalError {
        match self.errno {
            libc::EINVAL | libc::EFAULT => HalError::invalid(addr, len, self.to_string()),
            libc::ENODEV | libc::ENXIO => HalError::DeviceLost { reason: self.to_string() },
            libc::ENOTTY if abi::ext::is_ext(self.cmd) => HalError::Unsupported {
                reason: format!("{self}: the Neuron driver has no command for this (docs/hardware.md)"),
            },
            libc::EOPNOTSUPP | libc::ENOTTY => HalError::Unsupported { reason: self.to_string() },
            _ => HalError::System { reason: self.to_string() },
        }
    }
}

/// One allocation: its handle and size.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    handle: u64,
    size: u64,
}

/// The open driver file and the count of what was sent through it
/// (shared with the core reservations, which unmark through it on drop).
struct Portal {
    transport: Arc<dyn Transport>,
    /// Ioctls issued, by `_IOC_NR` (driver commands) and 256 + nr (extensions).
    counts: [AtomicU64; 512],
}

impl Portal {
    fn slot(cmd: u32) -> usize {
        usize::from(abi::nr(cmd)) + if ext::is_ext(cmd) { 256 } else { 0 }
    }

    /// One ioctl with `arg` encoded into a stack buffer (no allocation),
    /// decoded back on success (out fields).
    fn call<A: Arg>(&self, cmd: u32, arg: &mut A) -> Result<(), IoctlError> {
        let mut buf = [0u8; abi::MAX_ARG];
        arg.encode(&mut buf);
        self.counts[Self::slot(cmd)].fetch_add(1, Ordering::Relaxed);
        match self.transport.ioctl(cmd, &mut buf[..A::SIZE]) {
            Ok(()) => {
                *arg = A::decode(&buf);
                Ok(())
            }
            Err(errno) => Err(IoctlError { cmd, errno, detail: self.transport.last_message() }),
        }
    }

    /// Releases core marks (CRWL_NC_RANGE_UNMARK_EXT0).
    fn unmark(&self, cores: &[CoreId]) {
        if cores.is_empty() {
            return;
        }
        let mut a = abi::CrwlNcMapExt { nc_count: cores.len() as u32, start_nc_index: 0, end_nc_index: 0, max_nc_available: 0, bitmap: [0; 8] };
        for c in cores {
            a.bitmap[(c.0 / 64) as usize] |= 1 << (c.0 % 64);
        }
        // Unmarking cannot fail in the driver; a dead transport drops the
        // marks with the file anyway.
        let _ = self.call(cmd::CRWL_NC_RANGE_UNMARK_EXT0, &mut a);
    }
}

/// A Neuron device reached through the driver's ioctl ABI.
pub struct NdlDevice {
    portal: Arc<Portal>,
    info: DeviceInfo,
    /// Allocations by start address.
    chunks: RwLock<BTreeMap<u64, Chunk>>,
    /// Device memory this device mapped into the process (`map_hbm`), as
    /// (host address, bytes): unmapped when the device goes.
    mapped: Mutex<Vec<(usize, u64)>>,
    /// This process's datastore entry (ACQUIRE_NEURON_DS and its mapping),
    /// acquired by the runtime's first publication.
    ds: OnceLock<Option<Arc<SlotWriter>>>,
}

impl Drop for NdlDevice {
    fn drop(&mut self) {
        if let Some(Some(_)) = self.ds.get() {
            self.release_ds();
        }
        let mapped = std::mem::take(self.mapped.get_mut().unwrap_or_else(|e| e.into_inner()));
        for (va, len) in mapped {
            self.portal.transport.unmap(va, len);
        }
    }
}

impl std::fmt::Debug for NdlDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NdlDevice").field("backend", &self.info.backend).field("device", &self.info.device_index).finish()
    }
}

/// The driver's answers at open: what the device is and which ABI it takes.
struct Discovery {
    architecture: u32,
    cores: u32,
}

impl NdlDevice {
    /// Opens the device behind `transport`: checks the driver speaks our
    /// ABI (COMPATIBLE_VERSION, DRIVER_INFO_GET's feature flags) and
    /// discovers it (DEVICE_BASIC_INFO, sysfs `core_count`). `info` is the
    /// description to check the answers against (the emulated device's);
    /// `None` builds it from the answers and the architecture tables.
    pub(crate) fn open(transport: Arc<dyn Transport>, index: u32, devices: u32, info: Option<DeviceInfo>) -> HalResult<NdlDevice> {
        let mut dev = NdlDevice {
            info: placeholder_info(transport.backend()),
            portal: Arc::new(Portal { transport, counts: std::array::from_fn(|_| AtomicU64::new(0)) }),
            chunks: RwLock::new(BTreeMap::new()),
            mapped: Mutex::new(Vec::new()),
            ds: OnceLock::new(),
        };
        let d = dev.discover(index)?;
        dev.info = match info {
            Some(mut i) => {
                if i.arch.driver_arch != d.architecture || i.physical_cores != d.cores {
                    return Err(HalError::DeviceLost {
                        reason: format!(
                            "the driver describes ND {index} as architecture {} with {} cores, the device is {} with {}",
                            d.architecture, d.cores, i.arch.driver_arch, i.physical_cores
                        ),
                    });
                }
                i.backend = dev.portal.transport.backend();
                i
            }
            None => kernel_info(index, devices, &d)?,
        };
        Ok(dev)
    }

    fn discover(&self, index: u32) -> HalResult<Discovery> {
        let hal = |e: IoctlError| e.hal(DeviceAddr(0), 0);
        let mut basic = abi::DeviceBasicInfo { architecture: 0, revision: 0 };
        self.call(cmd::DEVICE_BASIC_INFO, &mut basic).map_err(hal)?;
        let mut v = abi::CompatibleVersion { max: 0, min: 0 };
        self.call(cmd::COMPATIBLE_VERSION, &mut v).map_err(hal)?;
        let ours = abi::rt_version(basic.architecture);
        if v.max < ours || v.min > ours {
            return Err(HalError::Unsupported {
                reason: format!(
                    "the Neuron driver of ND {index} accepts runtime versions {}..={}, nrt-rs speaks version {ours}: \
                     install a driver (aws-neuronx-dkms) that accepts it",
                    v.min, v.max
                ),
            });
        }
        let mut di = abi::DriverInfo { architecture: 0, revision: 0, version: 0, size: 0, feature_flags1: 0 };
        self.call(cmd::DRIVER_INFO_GET, &mut di).map_err(hal)?;
        if di.feature_flags1 & abi::FEATURE_MEM_ALLOC64 == 0 {
            return Err(HalError::Unsupported {
                reason: format!(
                    "the Neuron driver of ND {index} lacks MEM_ALLOC_V2MT64 (feature flags {:#x}), which nrt-rs allocates with: \
                     install a newer aws-neuronx-dkms",
                    di.feature_flags1
                ),
            });
        }
        let cores = self.portal.transport.core_count().map_err(|errno| HalError::System {
            reason: format!("cannot read core_count of ND {index}: {}", std::io::Error::from_raw_os_error(errno)),
        })?;
        Ok(Discovery { architecture: basic.architecture, cores })
    }

    /// Ioctls of command `cmd` issued so far (commands sharing an
    /// `_IOC_NR` count together).
    pub fn ioctl_count(&self, cmd: u32) -> u64 {
        self.portal.counts[Portal::slot(cmd)].load(Ordering::Relaxed)
    }

    /// Every command issued so far with its count, by name (size-overloaded
    /// siblings under the first name [`abi::COMMANDS`] gives their number).
    pub fn ioctl_counts(&self) -> Vec<(&'static str, u64)> {
        let mut seen = [false; 512];
        abi::COMMANDS
            .iter()
            .chain(ext::COMMANDS)
            .filter(|&&(_, c)| !std::mem::replace(&mut seen[Portal::slot(c)], true))
            .map(|&(name, c)| (name, self.ioctl_count(c)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// The total of all ioctls issued so far.
    pub fn ioctl_total(&self) -> u64 {
        self.portal.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    fn call<A: Arg>(&self, cmd: u32, arg: &mut A) -> Result<(), IoctlError> {
        self.portal.call(cmd, arg)
    }

    /// This process's datastore entry: ACQUIRE_NEURON_DS (pid 0) and the
    /// mapping of the offset it answers, once; `None` (said once on
    /// stderr) when the driver has no entry for us or it cannot be mapped.
    fn ds(&self) -> Option<&Arc<SlotWriter>> {
        self.ds
            .get_or_init(|| {
                let mut a = abi::NeuronDsInfo { pid: 0, mmap_offset: 0, size: 0 };
                if let Err(e) = self.call(cmd::ACQUIRE_NEURON_DS, &mut a) {
                    // ENOMEM: no entry for us (every one taken, or the
                    // emulated device publishes nothing), which the device
                    // side reports itself.
                    if e.errno != libc::ENOMEM {
                        eprintln!("nrt-ndl: ND {}: not publishing to the datastore: {e}", self.info.device_index);
                    }
                    return None;
                }
                match self.portal.transport.map_ds(a.mmap_offset) {
                    Ok(w) => Some(w),
                    Err(errno) => {
                        let os = std::io::Error::from_raw_os_error(errno);
                        eprintln!("nrt-ndl: ND {}: not publishing to the datastore: cannot map it at {:#x}: {os}", self.info.device_index, a.mmap_offset);
                        self.release_ds();
                        None
                    }
                }
            })
            .as_ref()
    }

    /// RELEASE_NEURON_DS of our own entry.
    fn release_ds(&self) {
        let mut a = abi::NeuronDsInfo { pid: 0, mmap_offset: 0, size: 0 };
        // Releasing cannot fail in the driver; a dead transport drops the
        // entry with the file anyway.
        let _ = self.call(cmd::RELEASE_NEURON_DS, &mut a);
    }

    /// The allocation holding `addr .. addr + len`: its handle and the
    /// offset of `addr` in it.
    fn chunk_of(&self, addr: DeviceAddr, len: u64) -> Option<(u64, u64)> {
        let chunks = self.chunks.read().unwrap_or_else(|e| e.into_inner());
        let (&start, c) = chunks.range(..=addr.get()).next_back()?;
        let off = addr.get() - start;
        (off.checked_add(len)? <= c.size).then_some((c.handle, off))
    }

    fn eng_id(&self, core: CoreId, q: DmaQueueId) -> u32 {
        core.0 * self.info.dma_engines() + u32::from(q.engine)
    }

    /// 32-bit register accesses outside any allocation (the register
    /// windows), through BAR_READ / BAR_WRITE.
    fn bar(&self, write: bool, addr: DeviceAddr, data: &mut [u8]) -> HalResult<()> {
        let len = data.len() as u64;
        if !len.is_multiple_of(4) || !addr.get().is_multiple_of(4) {
            return Err(HalError::invalid(addr, len, "outside every allocation; register windows take aligned 32-bit accesses"));
        }
        let addrs: Vec<u64> = (0..len / 4).map(|i| addr.get() + i * 4).collect();
        let mut words: Vec<u32> = data.chunks(4).map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]])).collect();
        let mut a = abi::BarRw {
            bar: 0,
            address: addrs.as_ptr() as u64,
            data: words.as_mut_ptr() as u64,
            count: words.len() as u32,
        };
        self.call(if write { cmd::BAR_WRITE } else { cmd::BAR_READ }, &mut a).map_err(|e| e.hal(addr, len))?;
        if !write {
            for (w, out) in words.iter().zip(data.chunks_mut(4)) {
                out.copy_from_slice(&w.to_ne_bytes());
            }
        }
        Ok(())
    }

    fn buf_copy(&self, addr: DeviceAddr, len: u64, buffer: u64, to_device: bool) -> HalResult<()> {
        let Some((handle, offset)) = self.chunk_of(addr, len) else {
            return Err(HalError::invalid(addr, len, "not inside an allocation"));
        };
        let mut a = abi::MemBufCopy64 { mem_handle: handle, buffer, size: len, offset, copy_to_mem_handle: u32::from(to_device) };
        self.call(cmd::MEM_BUF_COPY64, &mut a).map_err(|e| e.hal(addr, len))
    }

    fn sem(&self, c: u32, core: CoreId, index: u32, value: u32) -> HalResult<u32> {
        let mut a = abi::Semaphore { nc_id: core.0, semaphore_index: index, value };
        self.call(c, &mut a).map_err(|e| e.hal(DeviceAddr(0), 0))?;
        Ok(a.value)
    }

    fn event(&self, c: u32, core: CoreId, index: u32, value: u32) -> HalResult<u32> {
        let mut a = abi::Event { nc_id: core.0, event_index: index, value };
        self.call(c, &mut a).map_err(|e| e.hal(DeviceAddr(0), 0))?;
        Ok(a.value)
    }
}

/// The description a device has before discovery fills it.
fn placeholder_info(backend: &'static str) -> DeviceInfo {
    let arch = nrt_hal::Arch::Trn1.desc();
    DeviceInfo {
        backend,
        arch,
        device_index: 0,
        physical_cores: 0,
        hbm: Vec::new(),
        host_memory: HbmChannelDesc { base: arch.host_dma_base, size: 0 },
        topology: nrt_hal::Topology::of("", arch.arch, 1),
    }
}

/// A hardware device's description from the driver's answers and the
/// architecture table.
fn kernel_info(index: u32, devices: u32, d: &Discovery) -> HalResult<DeviceInfo> {
    let arch = match d.architecture {
        abi::ARCH_V2 => nrt_hal::Arch::Trn1,
        abi::ARCH_V3 => nrt_hal::Arch::Trn2,
        other => {
            return Err(HalError::Unsupported { reason: format!("ND {index} is driver architecture {other}, which nrt-rs does not drive") });
        }
    }
    .desc();
    // Host-DMA memory is the machine's: the driver allocates it on demand.
    let host = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().find_map(|l| l.strip_prefix("MemTotal:").map(|v| v.trim().trim_end_matches("kB").trim().to_string())))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024);
    Ok(DeviceInfo {
        backend: "neuron",
        arch,
        device_index: index,
        physical_cores: d.cores,
        hbm: arch.hbm.to_vec(),
        host_memory: HbmChannelDesc { base: arch.host_dma_base, size: host },
        topology: nrt_hal::Topology::of("", arch.arch, devices),
    })
}

impl Device for NdlDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, location: MemoryLocation, size: u64, align: u64) -> HalResult<DeviceAddr> {
        let mut handle = 0u64;
        let (host_memory, dram_channel) = match location {
            MemoryLocation::Host => (1, 0),
            MemoryLocation::Hbm { channel } => (0, channel),
        };
        let mut a = abi::MemAllocV2Mt64 {
            size, align, host_memory, dram_channel, dram_region: 0, nc_id: 0, mem_type: 0,
            mem_handle: &mut handle as *mut u64 as u64, pad: 0,
        };
        if let Err(e) = self.call(cmd::MEM_ALLOC_V2MT64, &mut a) {
            if e.errno == libc::ENOMEM {
                let capacity = match location {
                    MemoryLocation::Host => self.info.host_memory.size,
                    MemoryLocation::Hbm { channel } => self.info.hbm.get(channel as usize).map_or(0, |c| c.size),
                };
                // The driver does not say how large its largest free block
                // is: 0 here means "not reported".
                return Err(HalError::OutOfMemory { location, requested: size, align, largest_free: 0, capacity });
            }
            return Err(e.hal(DeviceAddr(0), size));
        }
        let mut x = abi::MemGetExtendedInfo {
            mem_handle: handle, version: abi::MEM_GET_EXTENDED_INFO_VERSION, host_memory: 0, mmap_offset: 0, pa: 0, pid: 0, size: 0,
        };
        self.call(cmd::MEM_GET_EXTENDED_INFO, &mut x).map_err(|e| e.hal(DeviceAddr(0), size))?;
        self.chunks.write().unwrap_or_else(|e| e.into_inner()).insert(x.pa, Chunk { handle, size });
        Ok(DeviceAddr(x.pa))
    }

    fn free(&self, addr: DeviceAddr) -> HalResult<()> {
        let Some(c) = self.chunks.write().unwrap_or_else(|e| e.into_inner()).remove(&addr.get()) else {
            return Err(HalError::invalid(addr, 0, "not the start of an allocation"));
        };
        let mut a = abi::MemFree { mem_handle: c.handle };
        self.call(cmd::MEM_FREE, &mut a).map_err(|e| e.hal(addr, 0))
    }

    fn read(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        if self.chunk_of(addr, buf.len() as u64).is_none() {
            return self.bar(false, addr, buf);
        }
        self.buf_copy(addr, buf.len() as u64, buf.as_mut_ptr() as u64, false)
    }

    fn write(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()> {
        if self.chunk_of(addr, data.len() as u64).is_none() {
            let mut copy = data.to_vec();
            return self.bar(true, addr, &mut copy);
        }
        self.buf_copy(addr, data.len() as u64, data.as_ptr() as u64, true)
    }

    fn memset(&self, addr: DeviceAddr, value: u8, len: u64) -> HalResult<()> {
        let Some((handle, offset)) = self.chunk_of(addr, len) else {
            return Err(HalError::invalid(addr, len, "not inside an allocation"));
        };
        let mut a = abi::Memset64 { mem_handle: handle, offset, value: u32::from(value), size: len };
        self.call(cmd::MEMSET64, &mut a).map_err(|e| e.hal(addr, len))
    }

    fn copy(&self, src: DeviceAddr, dst: DeviceAddr, len: u64) -> HalResult<()> {
        let (Some((sh, so)), Some((dh, doff))) = (self.chunk_of(src, len), self.chunk_of(dst, len)) else {
            return Err(HalError::invalid(src, len, format!("a copy to {dst} must stay inside allocations")));
        };
        let mut a = abi::MemCopy64 { src_mem_handle: sh, dst_mem_handle: dh, size: len, src_offset: so, dst_offset: doff };
        self.call(cmd::MEM_COPY64, &mut a).map_err(|e| e.hal(src, len))
    }

    fn semaphore_read(&self, core: CoreId, index: u32) -> HalResult<i32> {
        self.sem(cmd::SEMAPHORE_READ, core, index, 0).map(|v| v as i32)
    }

    fn semaphore_set(&self, core: CoreId, index: u32, value: i32) -> HalResult<()> {
        self.sem(cmd::SEMAPHORE_WRITE, core, index, value as u32).map(drop)
    }

    fn semaphore_increment(&self, core: CoreId, index: u32, by: u32) -> HalResult<()> {
        self.sem(cmd::SEMAPHORE_INCREMENT, core, index, by).map(drop)
    }

    fn semaphore_decrement(&self, core: CoreId, index: u32, by: u32) -> HalResult<()> {
        self.sem(cmd::SEMAPHORE_DECREMENT, core, index, by).map(drop)
    }

    fn event_read(&self, core: CoreId, index: u32) -> HalResult<bool> {
        self.event(cmd::EVENT_GET, core, index, 0).map(|v| v != 0)
    }

    fn event_set(&self, core: CoreId, index: u32) -> HalResult<()> {
        self.event(cmd::EVENT_SET, core, index, 1).map(drop)
    }

    fn event_clear(&self, core: CoreId, index: u32) -> HalResult<()> {
        self.event(cmd::EVENT_SET, core, index, 0).map(drop)
    }

    fn dma_queue_init(&self, core: CoreId, queue: DmaQueueId, config: DmaRingConfig) -> HalResult<()> {
        let bytes = u64::from(config.descriptors) * 16;
        let ring = |addr: DeviceAddr| {
            self.chunk_of(addr, bytes).ok_or_else(|| HalError::invalid(addr, bytes, "a DMA ring must lie inside an allocation (the driver takes its handle)"))
        };
        let ((tx_handle, tx_offset), (rx_handle, rx_offset)) = (ring(config.tx_ring)?, ring(config.rx_ring)?);
        let eng_id = self.eng_id(core, queue);
        let mut a = abi::DmaQueueInit {
            eng_id, qid: u32::from(queue.queue), tx_desc_count: config.descriptors, rx_desc_count: config.descriptors,
            tx_handle, rx_handle, rxc_handle: 0, axi_port: 0,
        };
        self.call(cmd::DMA_QUEUE_INIT, &mut a).map_err(|e| e.hal(config.tx_ring, bytes))?;
        let placed = tx_offset != 0 || rx_offset != 0;
        if placed || config.completion_semaphore.is_some() || config.completion_event.is_some() {
            let mut c = ext::DmaQueueConfig {
                eng_id, qid: u32::from(queue.queue),
                semaphore: config.completion_semaphore.map_or(0, |s| s + 1),
                event: config.completion_event.map_or(0, |e| e + 1),
                tx_offset, rx_offset,
            };
            self.call(ext::DMA_QUEUE_CONFIG, &mut c).map_err(|e| e.hal(config.tx_ring, bytes))?;
        }
        Ok(())
    }

    fn dma_queue_state(&self, core: CoreId, queue: DmaQueueId) -> HalResult<DmaQueueState> {
        let zero = abi::DmaQueueStateOut {
            hw_status: 0, sw_status: 0, base_addr: 0, length: 0, head_pointer: 0, tail_pointer: 0, completion_base_addr: 0, completion_head: 0,
        };
        let mut tx = [0u8; abi::DmaQueueStateOut::SIZE];
        let mut rx = [0u8; abi::DmaQueueStateOut::SIZE];
        zero.encode(&mut tx);
        zero.encode(&mut rx);
        let mut a = abi::DmaQueueGetState {
            eng_id: self.eng_id(core, queue), qid: u32::from(queue.queue),
            tx: tx.as_mut_ptr() as u64, rx: rx.as_mut_ptr() as u64,
        };
        self.call(cmd::DMA_QUEUE_GET_STATE, &mut a).map_err(|e| e.hal(DeviceAddr(0), 0))?;
        let (tx, rx) = (abi::DmaQueueStateOut::decode(&tx), abi::DmaQueueStateOut::decode(&rx));
        let status = match tx.sw_status {
            abi::QUEUE_SW_ENABLED => DmaQueueStatus::Enabled,
            abi::QUEUE_SW_ABORTED => DmaQueueStatus::Aborted,
            _ => DmaQueueStatus::Disabled,
        };
        Ok(DmaQueueState {
            status,
            tx_head: u64::from(tx.head_pointer),
            tx_tail: u64::from(tx.tail_pointer),
            rx_head: u64::from(rx.head_pointer),
            rx_tail: u64::from(rx.tail_pointer),
        })
    }

    fn dma_tail_increment(&self, core: CoreId, queue: DmaQueueId, tx: u32, rx: u32) -> HalResult<()> {
        let mut a = abi::DmaQueueCopyStart { eng_id: self.eng_id(core, queue), qid: u32::from(queue.queue), tx_desc_count: tx, rx_desc_count: rx };
        self.call(cmd::DMA_QUEUE_COPY_START, &mut a).map_err(|e| e.hal(DeviceAddr(0), 0))
    }

    fn nq_init(&self, spec: NqSpec) -> HalResult<Arc<dyn NqRing>> {
        let mut a = ext::NqInit {
            nc_id: spec.core.0, engine_index: u32::from(spec.engine_index), nq_type: spec.nq_type as u32,
            size: spec.size_bytes, pa: spec.ring.get(), mmap_offset: 0,
        };
        self.call(ext::NQ_INIT, &mut a).map_err(|e| e.hal(spec.ring, u64::from(spec.size_bytes)))?;
        let t = &self.portal.transport;
        t.map_nq(a.mmap_offset).map_err(|errno| {
            IoctlError { cmd: ext::NQ_INIT, errno, detail: t.last_message() }.hal(spec.ring, u64::from(spec.size_bytes))
        })
    }

    fn nq_destroy(&self, spec: NqSpec) -> HalResult<()> {
        let mut a = ext::NqDestroy { nc_id: spec.core.0, engine_index: u32::from(spec.engine_index), nq_type: spec.nq_type as u32 };
        self.call(ext::NQ_DESTROY, &mut a).map_err(|e| e.hal(spec.ring, 0))
    }

    fn reserve_cores(&self, cores: &[CoreId]) -> HalResult<CoreReservation> {
        let mut marked: Vec<CoreId> = Vec::with_capacity(cores.len());
        let mut busy = Vec::new();
        let mut detail = None;
        let mut sorted = cores.to_vec();
        sorted.sort();
        sorted.dedup();
        for &c in &sorted {
            let mut a = abi::CrwlNcMapExt { nc_count: 1, start_nc_index: c.0, end_nc_index: c.0, max_nc_available: 0, bitmap: [0; 8] };
            match self.call(cmd::CRWL_NC_RANGE_MARK_EXT0, &mut a) {
                Ok(()) => marked.push(c),
                Err(e) if e.errno == libc::EBUSY => {
                    busy.push(c.0);
                    detail.get_or_insert_with(|| e.to_string());
                }
                Err(e) => {
                    self.portal.unmark(&marked);
                    return Err(e.hal(DeviceAddr(0), 0));
                }
            }
        }
        if !busy.is_empty() {
            self.portal.unmark(&marked);
            return Err(HalError::Busy { device: self.info.device_index, cores: busy, holder: detail.unwrap_or_default() });
        }
        let portal = Arc::clone(&self.portal);
        Ok(CoreReservation::with_release(self.info.device_index, sorted, Box::new(move |cores| portal.unmark(cores))))
    }

    fn start_engine(&self, core: CoreId, engine: EngineId, addr: DeviceAddr, len: u64) -> HalResult<()> {
        let mut a = ext::EngineStart { nc_id: core.0, engine: engine.index() as u32, addr: addr.get(), len };
        self.call(ext::ENGINE_START, &mut a).map_err(|e| e.hal(addr, len))
    }

    fn engine_state(&self, core: CoreId, engine: EngineId) -> HalResult<Option<EngineState>> {
        let mut a = ext::EngineState { nc_id: core.0, engine: engine.index() as u32, run: 0, wait_kind: 0, pc: 0, wait_index: 0 };
        self.call(ext::ENGINE_STATE, &mut a).map_err(|e| e.hal(DeviceAddr(0), 0))?;
        let run = match a.run {
            0 => return Ok(None),
            1 => EngineRun::Idle,
            2 => EngineRun::Running,
            3 => EngineRun::Halted,
            _ => EngineRun::Hung,
        };
        let waiting_on = match a.wait_kind {
            1 => EngineWaitOn::Semaphore(a.wait_index),
            2 => EngineWaitOn::Event(a.wait_index),
            3 => EngineWaitOn::DmaIdle,
            4 => EngineWaitOn::CustomOp,
            _ => EngineWaitOn::Nothing,
        };
        Ok(Some(EngineState { run, pc: a.pc, waiting_on }))
    }

    /// RESOURCE_MMAP_INFO for the channel's device memory (block HBM,
    /// resource DMEM), then an mmap of the offset and size the driver
    /// gives. The driver answers EINVAL for a channel its table does not
    /// have: no more channels. The window's device address is the mmap
    /// offset, as the driver's offsets of device memory are its physical
    /// addresses (MEM_GET_EXTENDED_INFO's `mmap_offset` equals `pa`).
    fn map_hbm(&self, channel: u32) -> HalResult<Option<HostWindow>> {
        let mut a = abi::ResourceMmapInfo { block: abi::DM_BLOCK_HBM, block_id: channel, resource: abi::DM_RESOURCE_DMEM, offset: 0, size: 0 };
        match self.call(cmd::RESOURCE_MMAP_INFO, &mut a) {
            Ok(()) => {}
            Err(e) if e.errno == libc::EINVAL => return Ok(None),
            Err(e) => return Err(e.hal(DeviceAddr(0), 0)),
        }
        let va = self.portal.transport.map(a.offset, a.size).map_err(|errno| HalError::System {
            reason: format!(
                "mmap of HBM {channel} ({} bytes at offset {:#x}) failed: errno {errno} ({})",
                a.size,
                a.offset,
                std::io::Error::from_raw_os_error(errno)
            ),
        })?;
        self.mapped.lock().unwrap_or_else(|e| e.into_inner()).push((va, a.size));
        Ok(Some(HostWindow { va, len: a.size, base: DeviceAddr(a.offset) }))
    }

    /// DMABUF_FD for mapped device memory.
    fn dmabuf_fd(&self, va: usize, len: u64) -> HalResult<std::os::fd::OwnedFd> {
        let mut fd: i32 = -1;
        let mut a = abi::DmabufFd { va: va as u64, size: len, fd: std::ptr::from_mut(&mut fd) as u64 };
        self.call(cmd::DMABUF_FD, &mut a).map_err(|e| e.hal(DeviceAddr(0), len))?;
        crate::ffi::own_fd(fd).ok_or_else(|| HalError::System { reason: format!("NEURON_IOCTL_DMABUF_FD succeeded without a descriptor ({fd})") })
    }

    fn reset_core(&self, core: CoreId) -> HalResult<()> {
        let mut r = abi::DeviceReset { nc_map: 1 << core.0, request_id: 0 };
        self.call(cmd::NC_RESET, &mut r).map_err(|e| e.hal(DeviceAddr(0), 0))?;
        let mut ready = abi::DeviceReady { request_id: r.request_id, result: 0 };
        self.call(cmd::NC_RESET_READY, &mut ready).map_err(|e| e.hal(DeviceAddr(0), 0))?;
        if ready.result != 0 {
            return Err(HalError::DeviceLost { reason: format!("reset of {core} failed: NC_RESET_READY result {}", ready.result) });
        }
        Ok(())
    }

    fn status(&self) -> Option<&SlotWriter> {
        self.ds().map(|w| &**w)
    }

    fn datastore(&self) -> Option<Arc<SlotWriter>> {
        self.ds().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver answering discovery with a fixed compatible-version range
    /// and feature flags.
    struct Driver {
        min: u32,
        max: u32,
        features: u64,
    }

    impl Transport for Driver {
        fn backend(&self) -> &'static str {
            "neuron"
        }
        fn ioctl(&self, c: u32, arg: &mut [u8]) -> Result<(), i32> {
            match c {
                cmd::DEVICE_BASIC_INFO => abi::DeviceBasicInfo { architecture: abi::ARCH_V3, revision: 0 }.encode(arg),
                cmd::COMPATIBLE_VERSION => abi::CompatibleVersion { max: self.max, min: self.min }.encode(arg),
                cmd::DRIVER_INFO_GET => abi::DriverInfo {
                    architecture: abi::ARCH_V3, revision: 0, version: 0, size: 24, feature_flags1: self.features,
                }
                .encode(arg),
                _ => return Err(libc::ENOTTY),
            }
            Ok(())
        }
        fn map_nq(&self, _: u64) -> Result<Arc<dyn NqRing>, i32> {
            Err(libc::ENOTTY)
        }
        fn map(&self, _: u64, _: u64) -> Result<usize, i32> {
            Err(libc::ENOTTY)
        }
        fn unmap(&self, _: usize, _: u64) {}
        fn map_ds(&self, _: u64) -> Result<Arc<SlotWriter>, i32> {
            Err(libc::ENOTTY)
        }
        fn core_count(&self) -> Result<u32, i32> {
            Ok(8)
        }
    }

    fn open(min: u32, max: u32, features: u64) -> HalResult<NdlDevice> {
        NdlDevice::open(Arc::new(Driver { min, max, features }), 0, 1, None)
    }

    #[test]
    fn a_driver_older_than_our_abi_is_refused_with_both_versions() {
        match open(10, 10, abi::FEATURE_MEM_ALLOC64) {
            Err(HalError::Unsupported { reason }) => {
                assert!(reason.contains("accepts runtime versions 10..=10") && reason.contains("speaks version 11"), "{reason}");
            }
            other => panic!("an old driver must be refused: {other:?}"),
        }
        match open(10, 11, 0) {
            Err(HalError::Unsupported { reason }) => assert!(reason.contains("MEM_ALLOC_V2MT64"), "{reason}"),
            other => panic!("a driver without MEM_ALLOC64 must be refused: {other:?}"),
        }
        let dev = open(10, 11, abi::FEATURE_MEM_ALLOC64).expect("a current driver opens");
        assert_eq!((dev.info().backend, dev.info().arch.arch, dev.info().physical_cores), ("neuron", nrt_hal::Arch::Trn2, 8));
    }

    #[test]
    fn an_extension_the_kernel_lacks_is_unsupported_not_a_crash() {
        let dev = open(10, 11, abi::FEATURE_MEM_ALLOC64).unwrap();
        match dev.start_engine(CoreId(0), EngineId::Act, DeviceAddr(0), 64) {
            Err(HalError::Unsupported { reason }) => assert!(reason.contains("NRT_EXT_ENGINE_START") && reason.contains("hardware.md"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
}
