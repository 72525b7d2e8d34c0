//! The fields of the 16-byte UDMA descriptors (`neuron-facts` §3.7) the DMA
//! engines use, decoded with nrt-isa's descriptor codec
//! (`nrt_isa::dma_desc::DmaDescriptor`), so the project has one decoder of
//! the format. A descriptor with reserved bits set does not decode; the
//! queue walking it aborts.

use nrt_isa::dma_desc::{DmaDescError, DmaDescriptor, RingSide};

/// Bit of `len_ctrl`: first descriptor of a packet.
pub const FIRST: u32 = 1 << 26;
/// Bit of `len_ctrl`: last descriptor of a packet (completion point).
pub const LAST: u32 = 1 << 27;
/// Bit of `len_ctrl`: memory barrier.
pub const DMB: u32 = 1 << 30;
/// Bit of `len_ctrl` (ours, `nrt_isa::dma_desc::PATTERN_BIT`): the buffer
/// is a pattern block describing the whole transfer.
pub const PATTERN: u32 = nrt_isa::dma_desc::PATTERN_BIT;

/// The fields of one descriptor the simulator uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// Transfer length in bytes (1..=65536; the field's 0 means 65536).
    pub len: u32,
    /// FIRST bit.
    pub first: bool,
    /// LAST bit.
    pub last: bool,
    /// Pattern-block extension bit.
    pub pattern: bool,
    /// `meta_ctrl` (TX) or `buf2_ptr_lo` (RX) word.
    pub meta: u32,
    /// Buffer address: source for TX, destination for RX.
    pub addr: u64,
}

impl Descriptor {
    /// Decodes 16 little-endian bytes read from a ring of `side`.
    pub fn decode(b: &[u8; 16], side: RingSide) -> Result<Descriptor, DmaDescError> {
        let d = DmaDescriptor::from_bytes(b, side)?;
        let c = d.len_ctrl();
        let meta = match d {
            DmaDescriptor::Tx(t) => t.meta_ctrl.to_u32(),
            DmaDescriptor::Rx(r) => r.buf2_ptr_lo,
        };
        Ok(Descriptor { len: c.length, first: c.first, last: c.last, pattern: c.pattern, meta, addr: d.buf_ptr() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_hal::DeviceAddr;
    use nrt_hal::conformance::udma_copy_pair;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn decodes_the_conformance_encoder(src in any::<u64>(), dst in any::<u64>(), len in 1u32..=65536) {
            let (tx, rx) = udma_copy_pair(DeviceAddr(src), DeviceAddr(dst), len);
            let t = Descriptor::decode(&tx, RingSide::Tx).unwrap();
            let r = Descriptor::decode(&rx, RingSide::Rx).unwrap();
            prop_assert_eq!((t.len, t.first, t.last, t.addr, t.meta), (len, true, true, src, 0x0108_0003));
            prop_assert_eq!((r.len, r.addr), (len, dst));
        }

        /// Untrusted bytes decode or give a typed error, never a panic.
        #[test]
        fn any_bytes_decode_or_error(b in any::<[u8; 16]>()) {
            for side in [RingSide::Tx, RingSide::Rx] {
                if let Ok(d) = Descriptor::decode(&b, side) {
                    prop_assert!(d.len >= 1 && d.len <= 65536);
                }
            }
        }
    }
}
