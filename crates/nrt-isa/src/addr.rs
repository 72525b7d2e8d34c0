//! The on-chip address map compute and DMA operands use.
//!
//! * SBUF: `partition << 18 | offset`. Each of the 128 partitions has a
//!   0x40000-byte stride of which 224 KiB (0x38000) is usable; groups of 32
//!   partitions form quadrants whose bases are 0x800000 apart.
//! * PSUM: a window at 0x2000000; each partition holds 16 KiB in eight 2 KiB
//!   banks. Our reading places partition `p` at `0x2000000 + p * 0x4000`;
//!   the window runs to 0x2203FFF as the ISA header states.

use thiserror::Error;

/// Number of SBUF (and PSUM) partitions.
pub const PARTITIONS: u32 = 128;
/// Bit position of the partition number in an SBUF address.
pub const SBUF_PARTITION_SHIFT: u32 = 18;
/// Distance between two SBUF partitions.
pub const SBUF_PARTITION_STRIDE: u32 = 1 << SBUF_PARTITION_SHIFT;
/// Usable bytes per SBUF partition (224 KiB).
pub const SBUF_PARTITION_BYTES: u32 = 0x38000;
/// Partitions per quadrant.
pub const QUADRANT_PARTITIONS: u32 = 32;
/// Distance between two quadrant bases.
pub const QUADRANT_STRIDE: u32 = QUADRANT_PARTITIONS * SBUF_PARTITION_STRIDE;
/// Base of the PSUM window (also the end of the SBUF aperture).
pub const PSUM_BASE: u32 = 0x0200_0000;
/// Bytes per PSUM partition (16 KiB).
pub const PSUM_PARTITION_BYTES: u32 = 0x4000;
/// Bytes per PSUM bank (2 KiB = 512 fp32).
pub const PSUM_BANK_BYTES: u32 = 0x800;
/// Banks per PSUM partition.
pub const PSUM_BANKS: u32 = 8;
/// One past the last PSUM address.
pub const PSUM_END: u32 = 0x0220_4000;

/// What an on-chip address points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// A byte inside an SBUF partition.
    Sbuf {
        /// Partition 0..128.
        partition: u32,
        /// Byte offset inside the partition (< 0x38000).
        offset: u32,
    },
    /// A byte inside a PSUM partition.
    Psum {
        /// Partition number (our reading of the window layout).
        partition: u32,
        /// Byte offset inside the partition (< 16 KiB).
        offset: u32,
        /// Bank 0..8 holding the offset.
        bank: u32,
    },
    /// Outside both memories (or in an SBUF partition's unusable tail).
    Unmapped,
}

/// A construction request outside the address map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AddrError {
    /// Partition number too large.
    #[error("partition {partition} out of range, expected < 128")]
    Partition {
        /// The partition asked for.
        partition: u32,
    },
    /// Offset beyond the usable bytes of a partition.
    #[error("offset {offset:#x} out of range, expected < {limit:#x}")]
    Offset {
        /// The offset asked for.
        offset: u32,
        /// The exclusive limit.
        limit: u32,
    },
}

fn check(partition: u32, offset: u32, limit: u32) -> Result<(), AddrError> {
    if partition >= PARTITIONS {
        return Err(AddrError::Partition { partition });
    }
    if offset >= limit {
        return Err(AddrError::Offset { offset, limit });
    }
    Ok(())
}

/// The SBUF address of `offset` inside `partition`.
pub fn sbuf_addr(partition: u32, offset: u32) -> Result<u32, AddrError> {
    check(partition, offset, SBUF_PARTITION_BYTES)?;
    Ok(partition << SBUF_PARTITION_SHIFT | offset)
}

/// The PSUM address of `offset` inside `partition`.
pub fn psum_addr(partition: u32, offset: u32) -> Result<u32, AddrError> {
    check(partition, offset, PSUM_PARTITION_BYTES)?;
    Ok(PSUM_BASE + partition * PSUM_PARTITION_BYTES + offset)
}

/// Base address of SBUF quadrant `q` (0..4).
pub const fn quadrant_base(q: u32) -> u32 {
    q * QUADRANT_STRIDE
}

/// Quadrant holding `partition`.
pub const fn quadrant_of(partition: u32) -> u32 {
    partition / QUADRANT_PARTITIONS
}

/// Classifies an address.
pub fn classify(addr: u32) -> Region {
    if addr < PSUM_BASE {
        let partition = addr >> SBUF_PARTITION_SHIFT;
        let offset = addr & (SBUF_PARTITION_STRIDE - 1);
        if offset < SBUF_PARTITION_BYTES {
            return Region::Sbuf { partition, offset };
        }
        return Region::Unmapped;
    }
    if addr < PSUM_END {
        let rel = addr - PSUM_BASE;
        let partition = rel / PSUM_PARTITION_BYTES;
        let offset = rel % PSUM_PARTITION_BYTES;
        return Region::Psum {
            partition,
            offset,
            bank: offset / PSUM_BANK_BYTES,
        };
    }
    Region::Unmapped
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn observed_addresses_classify() {
        assert_eq!(
            classify(0x37b00),
            Region::Sbuf {
                partition: 0,
                offset: 0x37b00
            }
        );
        assert_eq!(
            classify(0x2000800),
            Region::Psum {
                partition: 0,
                offset: 0x800,
                bank: 1
            }
        );
        assert_eq!(
            classify(0x2000900),
            Region::Psum {
                partition: 0,
                offset: 0x900,
                bank: 1
            }
        );
        assert_eq!(classify(0x38000), Region::Unmapped);
        assert_eq!(classify(PSUM_END), Region::Unmapped);
    }

    #[test]
    fn quadrants_are_0x800000_apart() {
        assert_eq!(quadrant_base(1), 0x800000);
        assert_eq!(quadrant_base(3), 0x1800000);
        assert_eq!(sbuf_addr(32, 0).unwrap(), quadrant_base(1));
        assert_eq!(quadrant_of(95), 2);
    }

    #[test]
    fn construction_checks_ranges() {
        assert_eq!(
            sbuf_addr(128, 0),
            Err(AddrError::Partition { partition: 128 })
        );
        assert_eq!(
            sbuf_addr(0, 0x38000),
            Err(AddrError::Offset {
                offset: 0x38000,
                limit: SBUF_PARTITION_BYTES
            })
        );
        assert_eq!(
            psum_addr(0, 0x4000).unwrap_err(),
            AddrError::Offset {
                offset: 0x4000,
                limit: 0x4000
            }
        );
        assert_eq!(psum_addr(127, 0x3fff).unwrap(), 0x21FFFFF);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn sbuf_construct_classify(p in 0u32..128, off in 0u32..SBUF_PARTITION_BYTES) {
            let a = sbuf_addr(p, off).unwrap();
            prop_assert_eq!(classify(a), Region::Sbuf { partition: p, offset: off });
        }

        #[test]
        fn psum_construct_classify(p in 0u32..128, off in 0u32..PSUM_PARTITION_BYTES) {
            let a = psum_addr(p, off).unwrap();
            prop_assert_eq!(classify(a), Region::Psum { partition: p, offset: off, bank: off / 0x800 });
        }
    }
}
