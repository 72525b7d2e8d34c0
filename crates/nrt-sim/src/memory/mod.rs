//! Device memory: HBM channels and host-DMA memory (pools with an
//! allocator and lazily backed bytes), and the address map that routes a
//! device address to its region.
//!
//! # Address map
//!
//! | Range | Region |
//! |---|---|
//! | `hbm[c].base .. + size` | HBM channel `c` (bases from the arch table) |
//! | `host_dma_base .. + host size` | host-DMA memory |
//! | `tpb_base + tpb_stride*n + windows.sbuf` | core `n` SBUF, partition-major (`p * partition_bytes + offset`) |
//! | `... + windows.psum` | core `n` PSUM, partition-major (16 KiB per partition = 8 banks of 2 KiB) |
//! | `... + windows.evt_sem` | core `n` EVT_SEM block (events, semaphore READ/SET/INC/DEC aliases) |
//! | `... + windows.q7` | core `n` Q7 cluster portal: CSRs, 8 IRAM and 8 DRAM apertures |
//! | `dma_engine_regs(n, e) .. + DMA_ENGINE_REGS_SIZE` | core `n`'s DMA engine `e`'s UDMA register unit, where the driver's address map puts it (`nrt_hal::arch::DmaEngineMap`) |
//! | `PEER_WINDOW_TAG \| d << PEER_DEVICE_SHIFT \| a` | device `d`'s address `a` (the peer window, `nrt_hal::arch::ArchDesc::peer_addr`), routed by the instance |
//!
//! Anything else is an invalid address. An access must lie inside one
//! region.

pub mod alloc;
pub mod copy;
#[cfg(all(target_os = "linux", not(miri)))]
#[allow(unsafe_code)]
pub mod mapping;
#[cfg(not(all(target_os = "linux", not(miri))))]
#[path = "mapping_absent.rs"]
pub mod mapping;
pub mod onchip;
pub mod pages;
#[allow(unsafe_code)]
pub mod slab;

use crate::memory::alloc::{AllocError, FreeListAllocator};
use crate::memory::pages::SparsePages;
use nrt_hal::arch::{ArchDesc, DMA_ENGINE_REGS_SIZE, EVT_SEM_SIZE};
use nrt_hal::{CoreId, DeviceAddr, HalError, HalResult, HbmChannelDesc, HostWindow, MemoryLocation};
use std::sync::Mutex;

/// One allocatable memory pool: an address window, its bytes and its
/// allocator.
#[derive(Debug)]
pub struct Pool {
    /// Pool identity, for errors.
    pub location: MemoryLocation,
    /// First device address.
    pub base: DeviceAddr,
    /// Backing bytes.
    pub bytes: SparsePages,
    allocator: Mutex<FreeListAllocator>,
    /// Serialises [`Pool::map`].
    mapping: Mutex<()>,
}

impl Pool {
    fn new(location: MemoryLocation, desc: HbmChannelDesc) -> Pool {
        Pool {
            location,
            base: desc.base,
            bytes: SparsePages::new(desc.size),
            allocator: Mutex::new(FreeListAllocator::new(desc.size)),
            mapping: Mutex::new(()),
        }
    }

    /// Allocates and returns the device address.
    pub fn alloc(&self, size: u64, align: u64) -> HalResult<DeviceAddr> {
        let mut a = self.allocator.lock().unwrap_or_else(|e| e.into_inner());
        match a.alloc(size, align) {
            Ok(off) => Ok(self.base.offset(off)),
            Err(AllocError::Exhausted { largest_free, .. }) => Err(HalError::OutOfMemory {
                location: self.location,
                requested: size,
                align,
                largest_free,
                capacity: a.capacity(),
            }),
            Err(e) => Err(HalError::invalid(self.base, size, e.to_string())),
        }
    }

    /// Frees the allocation starting at `addr`.
    pub fn free(&self, addr: DeviceAddr) -> HalResult<()> {
        let off = addr.get() - self.base.get();
        self.allocator
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .free(off)
            .map_err(|e| HalError::invalid(addr, 0, format!("free in {}: {e}", self.location)))
    }

    /// Bytes currently allocated.
    pub fn used(&self) -> u64 {
        self.allocator.lock().unwrap_or_else(|e| e.into_inner()).used()
    }

    /// Maps the pool's bytes into the process (once; later calls return
    /// the same window): a memfd of the pool's size named `name`, the
    /// resident pages moved into it ([`SparsePages::map_into`]).
    pub fn map(&self, name: &str) -> HalResult<HostWindow> {
        let window = |m: &mapping::ChannelMap| HostWindow { va: m.va(), len: self.bytes.len(), base: self.base };
        let _one = self.mapping.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = self.bytes.mapping() {
            return Ok(window(m));
        }
        let unsupported = |why: String| HalError::Unsupported { reason: format!("{} cannot be mapped into the process: {why}", self.location) };
        let m = std::sync::Arc::new(mapping::ChannelMap::new(self.bytes.len(), name).map_err(|e| unsupported(e.to_string()))?);
        self.bytes.map_into(std::sync::Arc::clone(&m)).map_err(unsupported)?;
        Ok(window(&m))
    }
}

/// The allocatable memory of one device.
#[derive(Debug)]
pub struct Memory {
    /// HBM channels, by index.
    pub hbm: Vec<Pool>,
    /// Host-DMA memory.
    pub host: Pool,
}

impl Memory {
    /// Pools for the given channel sizes and host window.
    pub fn new(hbm: &[HbmChannelDesc], host: HbmChannelDesc) -> Memory {
        Memory {
            hbm: hbm
                .iter()
                .enumerate()
                .map(|(i, d)| Pool::new(MemoryLocation::Hbm { channel: i as u32 }, *d))
                .collect(),
            host: Pool::new(MemoryLocation::Host, host),
        }
    }

    /// The pool for a location.
    pub fn pool(&self, location: MemoryLocation) -> HalResult<&Pool> {
        match location {
            MemoryLocation::Host => Ok(&self.host),
            MemoryLocation::Hbm { channel } => self.hbm.get(channel as usize).ok_or_else(|| {
                HalError::invalid(
                    DeviceAddr(0),
                    0,
                    format!("HBM channel {channel} does not exist; the device has {}", self.hbm.len()),
                )
            }),
        }
    }

    fn pools(&self) -> impl Iterator<Item = &Pool> {
        self.hbm.iter().chain(std::iter::once(&self.host))
    }
}

/// Where a device address lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// An HBM channel (`Some(channel)`) or host memory (`None`), at an offset.
    Pool(Option<usize>, u64),
    /// A core's SBUF at an offset.
    Sbuf(CoreId, u64),
    /// A core's PSUM at an offset.
    Psum(CoreId, u64),
    /// A core's EVT_SEM block at an offset.
    EvtSem(CoreId, u64),
    /// A core's DMA engines' register units at an offset: engine `e`'s
    /// unit is `e * DMA_ENGINE_REGS_SIZE` on (see [`crate::dma::reg_ref`]).
    DmaRegs(CoreId, u64),
    /// A core's Q7 cluster portal (CSRs, IRAM, DRAM) at an offset.
    Q7(CoreId, u64),
    /// Another device of the instance (the peer window): its index and
    /// the device-local address, which that device routes.
    Peer(u32, DeviceAddr),
}

fn inside(addr: u64, len: u64, base: u64, size: u64) -> Option<u64> {
    let off = addr.checked_sub(base)?;
    (off < size && len <= size - off).then_some(off)
}

/// Routes `addr..addr+len` to one region, or explains why it cannot.
pub fn decode(arch: &ArchDesc, memory: &Memory, cores: u32, addr: DeviceAddr, len: u64) -> HalResult<Target> {
    let a = addr.get();
    if a.checked_add(len).is_none() {
        return Err(HalError::invalid(addr, len, "access wraps the 64-bit address space"));
    }
    if let Some((device, local)) = arch.peer_of(addr) {
        if local.get().checked_add(len).is_none_or(|end| end > 1 << nrt_hal::arch::PEER_DEVICE_SHIFT) {
            return Err(HalError::invalid(addr, len, "access runs past the end of a peer-window device's range"));
        }
        return Ok(Target::Peer(device, local));
    }
    for (i, p) in memory.pools().enumerate() {
        if let Some(off) = inside(a, len.max(1), p.base.get(), p.bytes.len()) {
            let which = (i < memory.hbm.len()).then_some(i);
            return Ok(Target::Pool(which, off));
        }
    }
    let window_span = arch.tpb_stride * u64::from(cores);
    if let Some(rel) = inside(a, 0, arch.tpb_base.get(), window_span) {
        let core = CoreId((rel / arch.tpb_stride) as u32);
        let off = rel % arch.tpb_stride;
        let w = &arch.windows;
        let l = len.max(1);
        if let Some(o) = inside(off, l, w.sbuf, arch.sbuf_bytes()) {
            return Ok(Target::Sbuf(core, o));
        }
        if let Some(o) = inside(off, l, w.psum, arch.psum_bytes()) {
            return Ok(Target::Psum(core, o));
        }
        if let Some(o) = inside(off, l, w.evt_sem, EVT_SEM_SIZE) {
            return Ok(Target::EvtSem(core, o));
        }
        if let Some(o) = inside(off, l, w.q7, nrt_hal::arch::Q7_PORTAL_SIZE) {
            return Ok(Target::Q7(core, o));
        }
        return Err(HalError::invalid(
            addr,
            len,
            format!("not inside one window of {core}'s TPB space (SBUF, PSUM, EVT_SEM or Q7 portal)"),
        ));
    }
    if let Some((core, engine, off)) = arch.dma_engine_at(addr)
        && core.0 < cores
    {
        if off + len > DMA_ENGINE_REGS_SIZE {
            return Err(HalError::invalid(addr, len, format!("runs past the end of {core}'s DMA engine {engine}'s registers")));
        }
        return Ok(Target::DmaRegs(core, u64::from(engine) * DMA_ENGINE_REGS_SIZE + off));
    }
    Err(HalError::invalid(
        addr,
        len,
        "not inside one HBM channel, host-DMA memory, a core window or a DMA engine's registers",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_hal::arch::TRN2;

    #[test]
    fn routes_every_region() {
        let m = Memory::new(TRN2.hbm, HbmChannelDesc { base: TRN2.host_dma_base, size: 1 << 30 });
        let d = |a: u64, l: u64| decode(&TRN2, &m, 8, DeviceAddr(a), l);
        assert_eq!(d(0x10, 4).unwrap(), Target::Pool(Some(0), 0x10));
        assert_eq!(d(0x8040_0000_0000 + 5, 4).unwrap(), Target::Pool(Some(3), 5));
        assert_eq!(d(TRN2.host_dma_base.get(), 4).unwrap(), Target::Pool(None, 0));
        assert_eq!(d(TRN2.sbuf_addr(CoreId(1)).get() + 7, 1).unwrap(), Target::Sbuf(CoreId(1), 7));
        assert_eq!(d(TRN2.psum_addr(CoreId(7)).get(), 2048).unwrap(), Target::Psum(CoreId(7), 0));
        assert_eq!(d(TRN2.evt_sem_addr(CoreId(2)).get() + 0x1800, 4).unwrap(), Target::EvtSem(CoreId(2), 0x1800));
        let q = nrt_hal::DmaQueueId { engine: 3, queue: 9 };
        let tail = TRN2.dma_tail_inc_addr(CoreId(5), q, nrt_hal::arch::DMA_S2M_GROUP);
        assert_eq!(d(tail.get(), 4).unwrap(), Target::DmaRegs(CoreId(5), 3 * DMA_ENGINE_REGS_SIZE + 0x2_1000 + 9 * 0x1000 + 0x38));
        assert!(d(TRN2.dma_engine_regs(CoreId(5), 3).get() + DMA_ENGINE_REGS_SIZE - 4, 8).is_err(), "runs past the unit");
        assert!(d((24 << 30) - 2, 4).is_err(), "straddles the end of HBM 0");
        assert!(d(TRN2.tpb_window(CoreId(8)).get(), 4).is_err(), "core 8 does not exist");
        assert!(d(TRN2.sbuf_addr(CoreId(0)).get() + TRN2.sbuf_bytes(), 4).is_err(), "gap after SBUF");
        assert!(d(u64::MAX, 2).is_err());
        let p = TRN2.peer_addr(5, TRN2.evt_sem_addr(CoreId(1))).unwrap();
        assert_eq!(d(p.get(), 4).unwrap(), Target::Peer(5, TRN2.evt_sem_addr(CoreId(1))));
        let end = TRN2.peer_addr(5, DeviceAddr((1 << nrt_hal::arch::PEER_DEVICE_SHIFT) - 4)).unwrap();
        assert!(d(end.get(), 8).is_err(), "straddles the next device's range");
    }
}
