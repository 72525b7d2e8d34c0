//! Typed device addresses and hardware identifiers.
//!
//! Device addresses and host pointers must never mix: everything the device
//! sees is a [`DeviceAddr`], a plain number in the device's physical address
//! space, and the type system keeps it apart from offsets and sizes.

use std::fmt;

/// An address in the device's physical address space (HBM, host-DMA memory
/// tagged with the PCI host base, or an on-chip window such as SBUF or the
/// semaphore block). Exists so addresses cannot be confused with sizes,
/// offsets or host pointers.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DeviceAddr(pub u64);

impl DeviceAddr {
    /// The raw address value, for encoding into descriptors and records.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// The address `bytes` further on, or `None` if that overflows the
    /// 64-bit address space.
    pub const fn checked_add(self, bytes: u64) -> Option<DeviceAddr> {
        match self.0.checked_add(bytes) {
            Some(v) => Some(DeviceAddr(v)),
            None => None,
        }
    }

    /// The address `bytes` further on; wraps silently only in the
    /// impossible case of a 2^64 overflow, so callers that handle untrusted
    /// offsets use [`DeviceAddr::checked_add`] instead.
    pub const fn offset(self, bytes: u64) -> DeviceAddr {
        DeviceAddr(self.0.wrapping_add(bytes))
    }

    /// Whether the address is a multiple of `align` (which must be a power
    /// of two; 0 and 1 mean "no alignment").
    pub const fn is_aligned(self, align: u64) -> bool {
        align <= 1 || self.0 & (align - 1) == 0
    }
}

impl fmt::Debug for DeviceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceAddr({:#x})", self.0)
    }
}

impl fmt::Display for DeviceAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// A physical NeuronCore index within one device (0-based). Logical (LNC)
/// grouping is the runtime's business; the device only knows physical cores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CoreId(pub u32);

impl fmt::Display for CoreId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "nc{}", self.0)
    }
}

/// The five sequencer-driven engines of a NeuronCore, numbered as the
/// driver's `TPB_ENG_PER_NC` order and the exec request's engine arrays
/// (PE, ACT, POOL, DVE, SP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum EngineId {
    /// Tensor engine: the 128x128 systolic array (matmul into PSUM).
    Pe = 0,
    /// Scalar engine: activations.
    Act = 1,
    /// GpSimd engine (with the eight Q7 pool cores).
    Pool = 2,
    /// Vector engine.
    Dve = 3,
    /// Sync engine: a sequencer-only engine, mostly triggering DMAs.
    Sp = 4,
}

impl EngineId {
    /// All engines in their hardware index order.
    pub const ALL: [EngineId; 5] = [
        EngineId::Pe,
        EngineId::Act,
        EngineId::Pool,
        EngineId::Dve,
        EngineId::Sp,
    ];

    /// The hardware index (0..5).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The engine with hardware index `i`, if there is one.
    pub const fn from_index(i: usize) -> Option<EngineId> {
        match i {
            0 => Some(EngineId::Pe),
            1 => Some(EngineId::Act),
            2 => Some(EngineId::Pool),
            3 => Some(EngineId::Dve),
            4 => Some(EngineId::Sp),
            _ => None,
        }
    }

    /// The short upper-case name used in logs and profiles.
    pub const fn name(self) -> &'static str {
        match self {
            EngineId::Pe => "PE",
            EngineId::Act => "ACT",
            EngineId::Pool => "POOL",
            EngineId::Dve => "DVE",
            EngineId::Sp => "SP",
        }
    }
}

impl fmt::Display for EngineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One DMA queue of a core: DMA engine `engine` (0..16, core-relative) and
/// queue `queue` (0..16) within it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DmaQueueId {
    /// Core-relative DMA engine index.
    pub engine: u8,
    /// Queue index within the DMA engine.
    pub queue: u8,
}

impl fmt::Display for DmaQueueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dma{}q{}", self.engine, self.queue)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_index_roundtrip() {
        for e in EngineId::ALL {
            assert_eq!(EngineId::from_index(e.index()), Some(e));
        }
        assert_eq!(EngineId::from_index(5), None);
    }

    #[test]
    fn addr_arithmetic() {
        assert_eq!(DeviceAddr(0x10).offset(0x30), DeviceAddr(0x40));
        assert_eq!(DeviceAddr(u64::MAX).checked_add(1), None);
        assert!(DeviceAddr(0x1000).is_aligned(0x1000));
        assert!(!DeviceAddr(0x1008).is_aligned(0x10));
        assert!(DeviceAddr(0x1003).is_aligned(1));
        assert_eq!(format!("{}", DeviceAddr(255)), "0xff");
    }
}
