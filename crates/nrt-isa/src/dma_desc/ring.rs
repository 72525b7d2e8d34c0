//! Descriptor-ring geometry and wrap-around index arithmetic.
//!
//! Public UDMA rules: a ring's base and end are 256-byte aligned (so its
//! descriptor count is a multiple of 16), it holds at least 32 and at most
//! 2^24 - 16 descriptors, and a 2-bit ring id ("phase") starts at 1 and
//! increments (mod 4) every time the producer wraps. Our rings are also a
//! power of two long, so positions are free-running `u32` counters and a
//! slot is `counter & mask`; `tail - head` (wrapping) is the fill level.

/// Ring base and end alignment in bytes.
pub const RING_ALIGN: u64 = 256;
/// Descriptor counts must be a multiple of this (256 B / 16 B).
pub const RING_DESC_MULTIPLE: u32 = 16;
/// Fewest descriptors a ring may have.
pub const RING_MIN_DESCS: u32 = 32;
/// Most descriptors a ring may have (2^24 - 16).
pub const RING_MAX_DESCS: u32 = (1 << 24) - 16;
/// Ring id of the first pass over a fresh ring.
pub const RING_ID_INITIAL: u8 = 1;
/// Descriptor count of the host-to-device copy (H2T) rings.
pub const H2T_DESC_COUNT: u32 = 4096;
/// Most descriptors per packet on UDMA v4.
pub const MAX_DESCS_PER_PACKET_V4: u32 = 128;
/// Most descriptors per packet on UDMA v2 and v3.
pub const MAX_DESCS_PER_PACKET_V2_V3: u32 = 64;
/// DMA queues per engine (`DMA_MAX_Q_V4`).
pub const QUEUES_PER_ENGINE: u32 = 16;

/// Why a ring geometry was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RingError {
    /// Count below the minimum.
    #[error("ring of {0} descriptors is too small: at least {RING_MIN_DESCS}")]
    TooSmall(u32),
    /// Count above the maximum.
    #[error("ring of {0} descriptors is too large: at most {RING_MAX_DESCS}")]
    TooLarge(u32),
    /// Count not a power of two.
    #[error("ring of {0} descriptors is not a power of two")]
    NotPowerOfTwo(u32),
    /// Base address not 256-byte aligned.
    #[error("ring base {0:#x} is not {RING_ALIGN}-byte aligned")]
    Misaligned(u64),
}

/// A validated power-of-two descriptor ring geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DescRing {
    count: u32,
}

impl DescRing {
    /// A ring of `count` descriptors; `count` must be a power of two within
    /// the public limits (which also makes it a multiple of 16).
    pub fn new(count: u32) -> Result<Self, RingError> {
        if count < RING_MIN_DESCS {
            return Err(RingError::TooSmall(count));
        }
        if count > RING_MAX_DESCS {
            return Err(RingError::TooLarge(count));
        }
        if !count.is_power_of_two() {
            return Err(RingError::NotPowerOfTwo(count));
        }
        Ok(DescRing { count })
    }

    /// Check that a ring base address is 256-byte aligned.
    pub fn check_base(base: u64) -> Result<(), RingError> {
        if base.is_multiple_of(RING_ALIGN) { Ok(()) } else { Err(RingError::Misaligned(base)) }
    }

    /// Descriptor count.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Ring size in bytes.
    pub fn bytes(&self) -> u64 {
        u64::from(self.count) * super::DESC_SIZE as u64
    }

    /// Slot index of a free-running position.
    pub fn slot(&self, position: u32) -> u32 {
        position & (self.count - 1)
    }

    /// Byte offset within the ring of a free-running position.
    pub fn byte_offset(&self, position: u32) -> u64 {
        u64::from(self.slot(position)) * super::DESC_SIZE as u64
    }

    /// Descriptors between consumer `head` and producer `tail`.
    pub fn used(&self, head: u32, tail: u32) -> u32 {
        tail.wrapping_sub(head)
    }

    /// Slots the producer may still fill; 0 if the counters are
    /// inconsistent (more used than the ring holds).
    pub fn free(&self, head: u32, tail: u32) -> u32 {
        self.count.saturating_sub(self.used(head, tail))
    }

    /// Ring id (phase) of the descriptor written at free-running `position`:
    /// 1 on the first pass, +1 mod 4 per wrap.
    pub fn ring_id(&self, position: u32) -> u8 {
        let wraps = position >> self.count.trailing_zeros();
        (wraps.wrapping_add(u32::from(RING_ID_INITIAL)) & 0x3) as u8
    }
}

/// A wrapped ring index with its phase, for code that stores the slot
/// index rather than a free-running counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RingCursor {
    /// Slot index, always below the ring's count.
    pub index: u32,
    /// Ring id of the current pass.
    pub ring_id: u8,
}

impl Default for RingCursor {
    fn default() -> Self {
        RingCursor { index: 0, ring_id: RING_ID_INITIAL }
    }
}

impl RingCursor {
    /// Move `n` slots forward on `ring`, bumping the ring id once per wrap.
    pub fn advance(&mut self, ring: &DescRing, n: u32) {
        let total = u64::from(self.index % ring.count) + u64::from(n);
        let wraps = total / u64::from(ring.count);
        self.index = (total % u64::from(ring.count)) as u32;
        self.ring_id = ((u64::from(self.ring_id) + wraps) & 0x3) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn geometry_rules() {
        assert_eq!(DescRing::new(16), Err(RingError::TooSmall(16)));
        assert_eq!(DescRing::new(48), Err(RingError::NotPowerOfTwo(48)));
        assert_eq!(DescRing::new(1 << 24), Err(RingError::TooLarge(1 << 24)));
        let r = DescRing::new(H2T_DESC_COUNT).unwrap();
        assert_eq!(r.bytes(), 65536);
        assert_eq!(DescRing::check_base(0x1000), Ok(()));
        assert_eq!(DescRing::check_base(0x1010), Err(RingError::Misaligned(0x1010)));
    }

    #[test]
    fn wrap_and_phase() {
        let r = DescRing::new(32).unwrap();
        assert_eq!(r.slot(33), 1);
        assert_eq!(r.byte_offset(33), 16);
        assert_eq!(r.ring_id(0), 1);
        assert_eq!(r.ring_id(31), 1);
        assert_eq!(r.ring_id(32), 2);
        assert_eq!(r.ring_id(96), 0);
        assert_eq!(r.used(u32::MAX - 1, 3), 5);
        assert_eq!(r.free(u32::MAX - 1, 3), 27);
        assert_eq!(r.free(0, 40), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn cursor_agrees_with_counter(log in 5u32..12, steps in proptest::collection::vec(0u32..5000, 0..20)) {
            let ring = DescRing::new(1 << log).unwrap();
            let mut cursor = RingCursor::default();
            let mut position = 0u32;
            for n in steps {
                cursor.advance(&ring, n);
                position = position.wrapping_add(n);
                prop_assert_eq!(cursor.index, ring.slot(position));
                prop_assert_eq!(cursor.ring_id, ring.ring_id(position));
            }
        }
    }
}
