//! Architecture descriptions as data.
//!
//! Every number the runtime or the simulator needs about a chip generation
//! lives here, in one table per architecture, so neither side hard-codes
//! sizes (instance types and their topology are in [`crate::topology`]). Values come from the public driver and documentation (see
//! `spec/neuron-facts.md` §3 and §5); the few that are guesses are marked
//! `GUESS` in the comments and in [`ArchDesc::guesses`].

use crate::addr::{CoreId, DeviceAddr, DmaQueueId, EngineId};
use std::fmt;

/// A NeuronCore chip generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// Trainium1 (NeuronCore-v2, driver arch V2).
    Trn1,
    /// Inferentia2 (same NeuronCore-v2 device as Trn1).
    Inf2,
    /// Trainium2 (NeuronCore-v3, driver arch V3).
    Trn2,
    /// Trainium3 (NeuronCore-v4); several numbers are guesses.
    Trn3,
}

impl Arch {
    /// The static description of this architecture.
    pub fn desc(self) -> &'static ArchDesc {
        match self {
            Arch::Trn1 => &TRN1,
            Arch::Inf2 => &INF2,
            Arch::Trn2 => &TRN2,
            Arch::Trn3 => &TRN3,
        }
    }

    /// The lower-case family name (`trn1`, `inf2`, ...).
    pub fn name(self) -> &'static str {
        self.desc().name
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One HBM channel (stack) of a device: where it sits in the device address
/// space and how many bytes of it are usable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HbmChannelDesc {
    /// First device address of the channel.
    pub base: DeviceAddr,
    /// Usable bytes (the "active" size; the address window may be larger).
    pub size: u64,
}

/// Offsets of the per-core register and memory windows inside a core's
/// TPB window (`tpb_base + tpb_stride * core`).
///
/// SBUF and the semaphore block sit where the driver's mmap table puts
/// them; PSUM and the Q7 portal are placed by this project. A core's DMA
/// engines' registers are not in the TPB window: they sit where the
/// driver's address map puts them ([`DmaEngineMap`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreWindowLayout {
    /// SBUF, partition-major: partition `p` starts at `p * sbuf_partition_bytes`.
    pub sbuf: u64,
    /// PSUM, partition-major: partition `p` starts at `p * psum_partition_bytes`.
    pub psum: u64,
    /// The EVT_SEM block: events at +0x0, semaphore read/set/inc/dec aliases
    /// at +0x1000/+0x1400/+0x1800/+0x1C00, four bytes per register.
    pub evt_sem: u64,
    /// The Q7 cluster portal (ours, `docs/gpsimd.md` §1): CSRs at +0,
    /// Q7 core `q`'s IRAM at +[`Q7_IRAM_OFFSET`] + `q` * [`Q7_CORE_STRIDE`],
    /// its DRAM at +[`Q7_DRAM_OFFSET`] + `q` * [`Q7_CORE_STRIDE`].
    pub q7: u64,
}

/// Portal offset of Q7 core 0's IRAM (later cores every [`Q7_CORE_STRIDE`]).
pub const Q7_IRAM_OFFSET: u64 = 0x10_0000;
/// Portal offset of Q7 core 0's DRAM (later cores every [`Q7_CORE_STRIDE`]).
pub const Q7_DRAM_OFFSET: u64 = 0x30_0000;
/// Distance between two Q7 cores' IRAM (or DRAM) apertures.
pub const Q7_CORE_STRIDE: u64 = 0x4_0000;
/// Bytes of the Q7 cluster's CSR page at the start of the portal.
pub const Q7_CSR_SIZE: u64 = 0x4000;
/// Bytes the Q7 portal spans inside a core window.
pub const Q7_PORTAL_SIZE: u64 = Q7_DRAM_OFFSET + 8 * Q7_CORE_STRIDE;

/// Bytes of one DMA engine's UDMA register unit (`V2_APB_SENG_UDMA_SIZE`
/// in the driver's `v2/address_map.h`; `struct unit_regs_v4` of
/// `udma/udma_regs.h` fits inside): the M2S block at +0, the S2M block at
/// +0x2_0000, the engine's general registers from +0x3_8000.
pub const DMA_ENGINE_REGS_SIZE: u64 = 0x4_0000;
/// Offset of the M2S (transmit, source side) queue 0 registers in an
/// engine's unit: `offsetof(struct unit_regs_v4, m2s)` +
/// `offsetof(struct udma_m2s_regs_v4, m2s_q)` (`udma/udma_regs.h`). Queue
/// `q`'s block is [`DMA_QUEUE_REGS_STRIDE`] * `q` further.
pub const DMA_M2S_GROUP: u64 = 0x1000;
/// Offset of the S2M (receive, destination side) queue 0 registers in an
/// engine's unit: `offsetof(struct unit_regs_v4, s2m)` (0x2_0000) +
/// `offsetof(struct udma_s2m_regs_v4, s2m_q)` (0x1000).
pub const DMA_S2M_GROUP: u64 = 0x2_1000;
/// Bytes of one queue's register block in either group
/// (`sizeof(struct udma_m2s_q)` = `sizeof(struct udma_s2m_q)`).
pub const DMA_QUEUE_REGS_STRIDE: u64 = 0x1000;
/// UDMA queue register: ring status and information (`status`). The
/// simulated queue answers its software status there (`enum
/// udma_queue_status` of `udma/udma.h`: DISABLED 1, ENABLED 2, ABORTED
/// 3); the hardware register's bits are not published.
pub const DMA_REG_STATUS: u64 = 0x24;
/// UDMA queue register: ring base, low 32 bits (`tdrbp_low` / `rdrbp_low`).
pub const DMA_REG_DRBP_LOW: u64 = 0x28;
/// UDMA queue register: ring base, high 32 bits (`tdrbp_high` / `rdrbp_high`).
pub const DMA_REG_DRBP_HIGH: u64 = 0x2C;
/// UDMA queue register: ring length in descriptors (`tdrl` / `rdrl`).
pub const DMA_REG_DRL: u64 = 0x30;
/// UDMA queue register: head, the next descriptor the engine will process (`tdrhp` / `rdrhp`).
pub const DMA_REG_DRHP: u64 = 0x34;
/// UDMA queue register: the tail-increment doorbell, written with the number of new descriptors (`tdrtp_inc` / `rdrtp_inc`).
pub const DMA_REG_DRTP_INC: u64 = 0x38;
/// UDMA queue register: tail, one past the last submitted descriptor (`tdrtp` / `rdrtp`).
pub const DMA_REG_DRTP: u64 = 0x3C;

/// Where a generation's DMA engines' register units sit in the device
/// address space, as the driver's address map places them: the engines
/// of one SEngine follow each other `engine_stride` apart from its base,
/// the engines of its first core first. v2 (`v2/address_map.h`): one
/// core per SEngine, `V2_APB_SENG_n_UDMA_0_BASE`, 0x4_0000 apart; v3
/// (`v3/address_map.h`, `neuron_dhal_v3.c`'s engine init): two cores per
/// SEngine, `V3_APB_SE_n_SDMA_0_BASE`, `V3_APB_SDMA_DIST` (0x10_0000)
/// apart, the UDMA unit first in each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaEngineMap {
    /// Device address of engine 0 of each SEngine, in SEngine order.
    pub seng_bases: &'static [u64],
    /// Physical cores one SEngine's engines serve.
    pub cores_per_seng: u32,
    /// Distance between two engines' units inside an SEngine.
    pub engine_stride: u64,
}

/// EVT_SEM block offset of the event registers.
pub const EVT_SEM_EVENTS: u64 = 0x0000;
/// EVT_SEM block offset of the semaphore READ alias.
pub const EVT_SEM_SEM_READ: u64 = 0x1000;
/// EVT_SEM block offset of the semaphore SET alias.
pub const EVT_SEM_SEM_SET: u64 = 0x1400;
/// EVT_SEM block offset of the semaphore INC alias (a write adds the value).
pub const EVT_SEM_SEM_INC: u64 = 0x1800;
/// EVT_SEM block offset of the semaphore DEC alias (a write subtracts the value).
pub const EVT_SEM_SEM_DEC: u64 = 0x1C00;
/// Size of the EVT_SEM block as mapped by the driver.
pub const EVT_SEM_SIZE: u64 = 0x2000;

/// Tag of the peer window (ours: no public source gives how a device's
/// DMA engines name another device's memory over NeuronLink): an address
/// with this bit set, the target device's index in the bits from
/// [`PEER_DEVICE_SHIFT`] and a device-local address below them, is device
/// `index`'s address as the instance's bus routes it. Every generation's
/// local map (HBM, the host-DMA tag, the TPB windows) lies below bit 52,
/// so a peer address never aliases a local one. See
/// [`ArchDesc::peer_addr`].
pub const PEER_WINDOW_TAG: u64 = 1 << 60;
/// First bit of the target device's index in a peer-window address.
pub const PEER_DEVICE_SHIFT: u32 = 52;
/// Devices the peer window can name (the bits between
/// [`PEER_DEVICE_SHIFT`] and [`PEER_WINDOW_TAG`]).
pub const PEER_DEVICES: u32 = 1 << (60 - PEER_DEVICE_SHIFT);

/// Everything that differs between chip generations, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchDesc {
    /// The generation.
    pub arch: Arch,
    /// Lower-case family name.
    pub name: &'static str,
    /// Driver `enum neuron_arch` value (V2 = 2, V3 = 3; trn3 = 4 is a GUESS).
    pub driver_arch: u32,
    /// PCI device id, when public.
    pub pci_device_id: Option<u16>,
    /// Physical NeuronCores per device.
    pub cores_per_device: u32,
    /// Default logical-core size (physical cores per LNC).
    pub default_lnc: u32,
    /// HBM channels in device-address order.
    pub hbm: &'static [HbmChannelDesc],
    /// Tag OR-ed into host-DMA addresses as the device sees them.
    pub host_dma_base: DeviceAddr,
    /// SBUF partitions (lanes).
    pub sbuf_partitions: u32,
    /// SBUF bytes per partition.
    pub sbuf_partition_bytes: u64,
    /// PSUM bytes per partition.
    pub psum_partition_bytes: u64,
    /// PSUM banks per partition (2 KiB each).
    pub psum_banks: u32,
    /// Semaphores per core.
    pub semaphores: u32,
    /// Events per core.
    pub events: u32,
    /// DMA engines per core.
    pub dma_engines_per_core: u32,
    /// Queues per DMA engine.
    pub queues_per_dma_engine: u32,
    /// The sequencer-driven engines of a core.
    pub engines: &'static [EngineId],
    /// Notification-queue types per core.
    pub nq_types: u32,
    /// Notification queues per type (indexed by engine index).
    pub nqs_per_type: u32,
    /// Programmable Q7 cores of the POOL engine.
    pub pool_cores: u32,
    /// Device address of core 0's TPB window.
    pub tpb_base: DeviceAddr,
    /// Distance between two cores' TPB windows.
    pub tpb_stride: u64,
    /// Layout inside one TPB window.
    pub windows: CoreWindowLayout,
    /// Where the DMA engines' register units are.
    pub dma_engines: DmaEngineMap,
    /// IRAM bytes of one Q7 core (`seed-siblings` §8.1: 64 KiB on v2,
    /// 128 KiB on v3/v4); a larger code image is "ucode too big".
    pub q7_iram_bytes: u64,
    /// DRAM bytes of one Q7 core (64 KiB on v2, 256 KiB on v3/v4).
    pub q7_dram_bytes: u64,
    /// Which of the numbers above are guesses rather than public facts.
    pub guesses: &'static str,
}

impl ArchDesc {
    /// Total HBM bytes of one device.
    pub fn hbm_total(&self) -> u64 {
        self.hbm.iter().map(|c| c.size).sum()
    }

    /// SBUF bytes per core.
    pub fn sbuf_bytes(&self) -> u64 {
        self.sbuf_partition_bytes * u64::from(self.sbuf_partitions)
    }

    /// PSUM bytes per core.
    pub fn psum_bytes(&self) -> u64 {
        self.psum_partition_bytes * u64::from(self.sbuf_partitions)
    }

    /// DMA queues per core.
    pub fn dma_queues_per_core(&self) -> u32 {
        self.dma_engines_per_core * self.queues_per_dma_engine
    }

    /// Base of a core's TPB window.
    pub fn tpb_window(&self, core: CoreId) -> DeviceAddr {
        self.tpb_base.offset(self.tpb_stride * u64::from(core.0))
    }

    /// Device address of a core's SBUF (partition 0, byte 0).
    pub fn sbuf_addr(&self, core: CoreId) -> DeviceAddr {
        self.tpb_window(core).offset(self.windows.sbuf)
    }

    /// Device address of a core's PSUM (partition 0, byte 0).
    pub fn psum_addr(&self, core: CoreId) -> DeviceAddr {
        self.tpb_window(core).offset(self.windows.psum)
    }

    /// Device address of a core's EVT_SEM block.
    pub fn evt_sem_addr(&self, core: CoreId) -> DeviceAddr {
        self.tpb_window(core).offset(self.windows.evt_sem)
    }

    /// Device address of event `index`'s register (write 1 sets, 0 clears).
    pub fn event_addr(&self, core: CoreId, index: u32) -> DeviceAddr {
        self.evt_sem_addr(core)
            .offset(EVT_SEM_EVENTS + 4 * u64::from(index))
    }

    /// Device address of semaphore `index` in the alias window `alias`
    /// (one of the `EVT_SEM_SEM_*` offsets). A 32-bit write to the INC
    /// alias is how a DMA descriptor rings a semaphore doorbell.
    pub fn semaphore_addr(&self, core: CoreId, alias: u64, index: u32) -> DeviceAddr {
        self.evt_sem_addr(core).offset(alias + 4 * u64::from(index))
    }

    /// Device address of DMA engine `engine`'s register unit of `core`
    /// (`core` below [`ArchDesc::cores_per_device`]; a larger index
    /// answers an address outside every window).
    pub fn dma_engine_regs(&self, core: CoreId, engine: u32) -> DeviceAddr {
        let m = &self.dma_engines;
        let Some(base) = m.seng_bases.get((core.0 / m.cores_per_seng) as usize) else {
            return DeviceAddr(!(DMA_ENGINE_REGS_SIZE - 1));
        };
        let index = (core.0 % m.cores_per_seng) * self.dma_engines_per_core + engine;
        DeviceAddr(base + u64::from(index) * m.engine_stride)
    }

    /// Device address of a queue's register block in one direction
    /// ([`DMA_M2S_GROUP`] or [`DMA_S2M_GROUP`]): `m2s_q[queue]` or
    /// `s2m_q[queue]` of its engine's unit.
    pub fn dma_queue_regs(&self, core: CoreId, q: DmaQueueId, group: u64) -> DeviceAddr {
        self.dma_engine_regs(core, u32::from(q.engine))
            .offset(group + u64::from(q.queue) * DMA_QUEUE_REGS_STRIDE)
    }

    /// The core, engine and offset inside the engine's register unit an
    /// address names, or `None` outside every DMA engine's unit (the
    /// inverse of [`ArchDesc::dma_engine_regs`]).
    pub fn dma_engine_at(&self, addr: DeviceAddr) -> Option<(CoreId, u32, u64)> {
        let m = &self.dma_engines;
        let engines = u64::from(m.cores_per_seng * self.dma_engines_per_core);
        let a = addr.get();
        let (seng, rel) = m.seng_bases.iter().enumerate().find_map(|(s, &b)| {
            let rel = a.checked_sub(b)?;
            (rel < engines * m.engine_stride).then_some((s as u32, rel))
        })?;
        let (index, off) = ((rel / m.engine_stride) as u32, rel % m.engine_stride);
        if off >= DMA_ENGINE_REGS_SIZE {
            return None;
        }
        let core = seng * m.cores_per_seng + index / self.dma_engines_per_core;
        Some((CoreId(core), index % self.dma_engines_per_core, off))
    }

    /// Device address of a core's Q7 cluster CSR page.
    pub fn q7_csr_addr(&self, core: CoreId) -> DeviceAddr {
        self.tpb_window(core).offset(self.windows.q7)
    }

    /// Device address of Q7 core `q`'s IRAM (0..[`ArchDesc::pool_cores`]).
    pub fn q7_iram_addr(&self, core: CoreId, q: u32) -> DeviceAddr {
        self.q7_csr_addr(core).offset(Q7_IRAM_OFFSET + Q7_CORE_STRIDE * u64::from(q))
    }

    /// Device address of Q7 core `q`'s DRAM (0..[`ArchDesc::pool_cores`]).
    pub fn q7_dram_addr(&self, core: CoreId, q: u32) -> DeviceAddr {
        self.q7_csr_addr(core).offset(Q7_DRAM_OFFSET + Q7_CORE_STRIDE * u64::from(q))
    }

    /// How a DMA engine of one device of an instance names `addr` of
    /// device `device` (its index in the instance): the peer window
    /// ([`PEER_WINDOW_TAG`], ours). The one function a composer calls to
    /// reach another device's memory or registers (the NeuronLink
    /// analogue); `None` for a device the window cannot name or an
    /// address that is not device-local.
    pub fn peer_addr(&self, device: u32, addr: DeviceAddr) -> Option<DeviceAddr> {
        (device < PEER_DEVICES && addr.get() < 1 << PEER_DEVICE_SHIFT)
            .then(|| DeviceAddr(PEER_WINDOW_TAG | u64::from(device) << PEER_DEVICE_SHIFT | addr.get()))
    }

    /// The device and device-local address a peer-window address names
    /// (the inverse of [`ArchDesc::peer_addr`]); `None` for any other
    /// address.
    pub fn peer_of(&self, addr: DeviceAddr) -> Option<(u32, DeviceAddr)> {
        let a = addr.get();
        if a & !((PEER_WINDOW_TAG << 1) - 1) != 0 || a & PEER_WINDOW_TAG == 0 {
            return None;
        }
        let device = ((a >> PEER_DEVICE_SHIFT) & u64::from(PEER_DEVICES - 1)) as u32;
        Some((device, DeviceAddr(a & ((1 << PEER_DEVICE_SHIFT) - 1))))
    }

    /// Device address of a queue's tail-increment doorbell for one
    /// direction (`DMA_M2S_GROUP` or `DMA_S2M_GROUP`).
    pub fn dma_tail_inc_addr(&self, core: CoreId, q: DmaQueueId, group: u64) -> DeviceAddr {
        self.dma_queue_regs(core, q, group).offset(DMA_REG_DRTP_INC)
    }
}

const V2_WINDOWS: CoreWindowLayout = CoreWindowLayout {
    sbuf: 0,
    psum: 0x0200_0000,
    evt_sem: 0x0270_0000,
    q7: 0x0300_0000,
};

const ENGINES: [EngineId; 5] = EngineId::ALL;

/// v2: `V2_APB_SENG_0_UDMA_0_BASE`, `V2_APB_SENG_1_UDMA_0_BASE`.
const V2_DMA_ENGINES: DmaEngineMap = DmaEngineMap {
    seng_bases: &[0x0FFF_F000_0000, 0x0FFF_F070_0000],
    cores_per_seng: 1,
    engine_stride: DMA_ENGINE_REGS_SIZE,
};

/// v3: `V3_APB_SE_0_SDMA_0_BASE` .. `V3_APB_SE_3_SDMA_0_BASE`.
const V3_DMA_ENGINES: DmaEngineMap = DmaEngineMap {
    seng_bases: &[0x10_0200_0000, 0x50_0400_0000, 0x8010_0200_0000, 0x8050_0400_0000],
    cores_per_seng: 2,
    engine_stride: 0x10_0000,
};

const V2_HBM: [HbmChannelDesc; 2] = [
    HbmChannelDesc { base: DeviceAddr(0), size: 16 << 30 },
    HbmChannelDesc { base: DeviceAddr(0x10_0000_0000), size: 16 << 30 },
];

const V3_HBM: [HbmChannelDesc; 4] = [
    HbmChannelDesc { base: DeviceAddr(0), size: 24 << 30 },
    HbmChannelDesc { base: DeviceAddr(0x40_0000_0000), size: 24 << 30 },
    HbmChannelDesc { base: DeviceAddr(0x8000_0000_0000), size: 24 << 30 },
    HbmChannelDesc { base: DeviceAddr(0x8040_0000_0000), size: 24 << 30 },
];

// GUESS: Trn3 is publicly 144 GB of HBM; the split into four 36 GiB stacks
// at the Trn2 bases is our assumption.
const V4_HBM: [HbmChannelDesc; 4] = [
    HbmChannelDesc { base: DeviceAddr(0), size: 36 << 30 },
    HbmChannelDesc { base: DeviceAddr(0x40_0000_0000), size: 36 << 30 },
    HbmChannelDesc { base: DeviceAddr(0x8000_0000_0000), size: 36 << 30 },
    HbmChannelDesc { base: DeviceAddr(0x8040_0000_0000), size: 36 << 30 },
];

/// Trainium1.
pub static TRN1: ArchDesc = ArchDesc {
    arch: Arch::Trn1,
    name: "trn1",
    driver_arch: 2,
    pci_device_id: Some(0x7164),
    cores_per_device: 2,
    default_lnc: 1,
    hbm: &V2_HBM,
    host_dma_base: DeviceAddr(0x0000_1000_0000_0000),
    sbuf_partitions: 128,
    sbuf_partition_bytes: 192 << 10,
    psum_partition_bytes: 16 << 10,
    psum_banks: 8,
    semaphores: 256,
    events: 256,
    dma_engines_per_core: 16,
    queues_per_dma_engine: 16,
    engines: &ENGINES,
    nq_types: 6,
    nqs_per_type: 16,
    pool_cores: 8,
    tpb_base: DeviceAddr(0x0FFF_C000_0000),
    tpb_stride: 0x0400_0000,
    windows: V2_WINDOWS,
    dma_engines: V2_DMA_ENGINES,
    q7_iram_bytes: 64 << 10,
    q7_dram_bytes: 64 << 10,
    guesses: "PSUM and Q7 portal window offsets are this project's choice",
};

/// Inferentia2: the same NeuronCore-v2 device as Trn1.
pub static INF2: ArchDesc = ArchDesc {
    arch: Arch::Inf2,
    name: "inf2",
    pci_device_id: Some(0x7264),
    ..TRN1
};

/// Trainium2.
pub static TRN2: ArchDesc = ArchDesc {
    arch: Arch::Trn2,
    name: "trn2",
    driver_arch: 3,
    pci_device_id: Some(0x7364),
    cores_per_device: 8,
    default_lnc: 2,
    hbm: &V3_HBM,
    host_dma_base: DeviceAddr(0x0000_4000_0000_0000),
    sbuf_partition_bytes: 224 << 10,
    nq_types: 5,
    tpb_base: DeviceAddr(0x20_0000_0000),
    dma_engines: V3_DMA_ENGINES,
    q7_iram_bytes: 128 << 10,
    q7_dram_bytes: 256 << 10,
    guesses: "PSUM and Q7 portal window offsets are this project's choice",
    ..TRN1
};

/// Trainium3. GUESS: core count, HBM layout, driver arch id and address map
/// follow Trn2; only the SBUF (32 MiB) and PSUM (2 MiB) sizes are public.
pub static TRN3: ArchDesc = ArchDesc {
    arch: Arch::Trn3,
    name: "trn3",
    driver_arch: 4,
    pci_device_id: None,
    hbm: &V4_HBM,
    sbuf_partition_bytes: 256 << 10,
    guesses: "driver arch id, core count (8), HBM layout (4 x 36 GiB), address map (trn2's, DMA engines included)",
    ..TRN2
};

pub use crate::topology::{instance_type, InstanceType, INSTANCE_TYPES};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_public_facts() {
        assert_eq!(TRN1.hbm_total(), 32 << 30);
        assert_eq!(INF2.hbm_total(), 32 << 30);
        assert_eq!(TRN2.hbm_total(), 96 << 30);
        assert_eq!(TRN1.sbuf_bytes(), 24 << 20);
        assert_eq!(TRN2.sbuf_bytes(), 28 << 20);
        assert_eq!(TRN3.sbuf_bytes(), 32 << 20);
        for a in [&TRN1, &INF2, &TRN2, &TRN3] {
            assert_eq!(a.psum_bytes(), 2 << 20);
            assert_eq!(a.psum_partition_bytes, u64::from(a.psum_banks) * 2048);
            assert_eq!(a.dma_queues_per_core(), 256);
            assert_eq!(a.engines.len(), 5);
        }
        assert_eq!(TRN2.cores_per_device, 8);
        assert_eq!(TRN2.default_lnc, 2);
        assert_eq!(INF2.cores_per_device, 2);
    }

    #[test]
    fn q7_portal_sits_after_the_evt_sem_block_and_inside_the_window() {
        for a in [&TRN1, &TRN2, &TRN3] {
            let w = &a.windows;
            assert!(w.q7 >= w.evt_sem + EVT_SEM_SIZE && w.q7 >= w.sbuf + a.sbuf_bytes());
            assert!(w.q7 + Q7_PORTAL_SIZE <= a.tpb_stride);
            assert!(a.q7_iram_bytes <= Q7_CORE_STRIDE && a.q7_dram_bytes <= Q7_CORE_STRIDE);
            const { assert!(Q7_CSR_SIZE <= Q7_IRAM_OFFSET && Q7_IRAM_OFFSET + 8 * Q7_CORE_STRIDE <= Q7_DRAM_OFFSET) };
        }
        assert_eq!((TRN1.q7_iram_bytes, TRN1.q7_dram_bytes), (64 << 10, 64 << 10));
        assert_eq!((TRN2.q7_iram_bytes, TRN2.q7_dram_bytes), (128 << 10, 256 << 10));
        assert_eq!(TRN2.q7_iram_addr(CoreId(1), 2), DeviceAddr(0x20_0000_0000 + 0x400_0000 + 0x300_0000 + 0x10_0000 + 0x8_0000));
        assert_eq!(TRN2.q7_dram_addr(CoreId(0), 7), DeviceAddr(0x20_0000_0000 + 0x300_0000 + 0x30_0000 + 0x1C_0000));
    }

    #[test]
    fn windows_do_not_overlap_memory() {
        for a in [&TRN1, &TRN2, &TRN3] {
            let first = a.tpb_window(CoreId(0)).get();
            let last = a.tpb_window(CoreId(a.cores_per_device)).get();
            for h in a.hbm {
                let (lo, hi) = (h.base.get(), h.base.get() + h.size);
                assert!(last <= lo || first >= hi, "{} TPB windows overlap HBM", a.name);
            }
            assert!(a.host_dma_base.get() >= last || a.host_dma_base.get() + (1 << 40) <= first);
            // PSUM and EVT_SEM fit inside the TPB window.
            assert!(a.windows.psum >= a.sbuf_bytes());
            assert!(a.windows.evt_sem >= a.windows.psum + a.psum_bytes());
            assert!(a.windows.evt_sem + EVT_SEM_SIZE <= a.tpb_stride);
            // Every DMA engine's unit lies outside HBM, the host tag's
            // window and the TPB windows.
            for c in 0..a.cores_per_device {
                for e in 0..a.dma_engines_per_core {
                    let (lo, hi) = (a.dma_engine_regs(CoreId(c), e).get(), a.dma_engine_regs(CoreId(c), e).get() + DMA_ENGINE_REGS_SIZE);
                    assert!(hi <= first || lo >= last, "{} core {c} engine {e} inside the TPB windows", a.name);
                    assert!(a.hbm.iter().all(|h| hi <= h.base.get() || lo >= h.base.get() + h.size), "{} engine {e} inside HBM", a.name);
                    assert!(hi <= a.host_dma_base.get() || lo >= a.host_dma_base.get() + (1 << 40));
                    assert!(hi <= 1 << PEER_DEVICE_SHIFT);
                }
            }
        }
    }

    #[test]
    fn dma_engines_sit_at_the_drivers_published_bases() {
        // v2/address_map.h: V2_APB_SENG_0_UDMA_0_BASE, V2_APB_SENG_1_UDMA_3_BASE.
        assert_eq!(TRN1.dma_engine_regs(CoreId(0), 0), DeviceAddr(0x0FFF_F000_0000));
        assert_eq!(TRN1.dma_engine_regs(CoreId(1), 3), DeviceAddr(0x0FFF_F07C_0000));
        assert_eq!(INF2.dma_engine_regs(CoreId(0), 15), DeviceAddr(0x0FFF_F03C_0000));
        // v3: V3_APB_SE_1_SDMA_0_BASE + (16 + 5) * V3_APB_SDMA_DIST (core 3
        // is SEngine 1's second core).
        assert_eq!(TRN2.dma_engine_regs(CoreId(3), 5), DeviceAddr(0x50_0400_0000 + 21 * 0x10_0000));
        assert_eq!(TRN2.dma_engine_regs(CoreId(4), 0), DeviceAddr(0x8010_0200_0000));
        // Queue blocks: m2s_q[q] and s2m_q[q] of udma_regs.h.
        let q = DmaQueueId { engine: 2, queue: 7 };
        let e = TRN1.dma_engine_regs(CoreId(1), 2).get();
        assert_eq!(TRN1.dma_queue_regs(CoreId(1), q, DMA_M2S_GROUP).get(), e + 0x1000 + 7 * 0x1000);
        assert_eq!(TRN1.dma_tail_inc_addr(CoreId(1), q, DMA_S2M_GROUP).get(), e + 0x2_0000 + 0x1000 + 7 * 0x1000 + 0x38);
        assert_eq!(TRN2.dma_engine_regs(CoreId(8), 0).get() % DMA_ENGINE_REGS_SIZE, 0, "a core past the table");
        assert_eq!(TRN2.dma_engine_at(TRN2.dma_engine_regs(CoreId(8), 0)), None);
    }

    #[test]
    fn every_engines_unit_decodes_back_to_it() {
        for a in [&TRN1, &INF2, &TRN2, &TRN3] {
            for c in 0..a.cores_per_device {
                for e in 0..a.dma_engines_per_core {
                    let base = a.dma_engine_regs(CoreId(c), e);
                    for off in [0, DMA_M2S_GROUP + 0x38, DMA_S2M_GROUP + 15 * DMA_QUEUE_REGS_STRIDE + 0x3C, DMA_ENGINE_REGS_SIZE - 4] {
                        assert_eq!(a.dma_engine_at(base.offset(off)), Some((CoreId(c), e, off)), "{} core {c} engine {e} +{off:#x}", a.name);
                    }
                    if a.dma_engines.engine_stride > DMA_ENGINE_REGS_SIZE {
                        assert_eq!(a.dma_engine_at(base.offset(DMA_ENGINE_REGS_SIZE)), None, "the SDMA block after the unit");
                    }
                }
            }
            let first = a.dma_engines.seng_bases[0];
            assert_eq!(a.dma_engine_at(DeviceAddr(first - 4)), None);
            let per_seng = u64::from(a.dma_engines.cores_per_seng * a.dma_engines_per_core) * a.dma_engines.engine_stride;
            assert_eq!(a.dma_engine_at(DeviceAddr(first + per_seng)), None);
        }
    }

    #[test]
    fn peer_addresses_name_a_device_and_its_local_address() {
        for a in [&TRN1, &INF2, &TRN2, &TRN3] {
            // Every local region lies below the device bits.
            let last_hbm = a.hbm.iter().map(|h| h.base.get() + h.size).max().unwrap();
            let locals = [last_hbm - 1, a.host_dma_base.get() + (1 << 40), a.tpb_window(CoreId(a.cores_per_device)).get()];
            for l in locals {
                assert!(l < 1 << PEER_DEVICE_SHIFT, "{}: {l:#x} reaches the peer bits", a.name);
            }
            for (d, l) in [(0, 0x40u64), (15, a.semaphore_addr(CoreId(1), EVT_SEM_SEM_INC, 254).get()), (PEER_DEVICES - 1, a.host_dma_base.get())] {
                let p = a.peer_addr(d, DeviceAddr(l)).unwrap();
                assert_ne!(p.get(), l);
                assert_eq!(a.peer_of(p), Some((d, DeviceAddr(l))));
            }
            assert_eq!(a.peer_addr(PEER_DEVICES, DeviceAddr(0)), None);
            assert_eq!(a.peer_addr(0, DeviceAddr(1 << PEER_DEVICE_SHIFT)), None);
            assert_eq!(a.peer_of(DeviceAddr(0x40)), None);
            assert_eq!(a.peer_of(DeviceAddr(PEER_WINDOW_TAG << 1 | PEER_WINDOW_TAG)), None, "bits above the tag");
        }
        assert_eq!(TRN2.peer_addr(3, DeviceAddr(0x1000)), Some(DeviceAddr(0x1030_0000_0000_1000)));
    }

    #[test]
    fn trn2_semaphore_window_matches_driver_mmap() {
        assert_eq!(TRN2.evt_sem_addr(CoreId(0)), DeviceAddr(0x20_0270_0000));
        assert_eq!(TRN1.evt_sem_addr(CoreId(1)), DeviceAddr(0x0FFF_C670_0000));
        assert_eq!(
            TRN2.semaphore_addr(CoreId(0), EVT_SEM_SEM_INC, 3),
            DeviceAddr(0x20_0270_0000 + 0x1800 + 12)
        );
    }
}
