//! Decoding of the 16-byte UDMA descriptors the DMA engines walk
//! (`neuron-facts` §3.7): the TX (M2S, source) and RX (S2M, destination)
//! views of `len_ctrl` and the buffer pointer.

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
    /// Decodes 16 little-endian bytes. Every bit pattern is a descriptor,
    /// so this cannot fail.
    pub fn decode(b: &[u8; 16]) -> Descriptor {
        let ctrl = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let meta = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let addr = u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
        let len = match ctrl & 0xFFFF {
            0 => 65536,
            n => n,
        };
        Descriptor { len, first: ctrl & FIRST != 0, last: ctrl & LAST != 0, pattern: ctrl & PATTERN != 0, meta, addr }
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
            let t = Descriptor::decode(&tx);
            let r = Descriptor::decode(&rx);
            prop_assert_eq!((t.len, t.first, t.last, t.addr, t.meta), (len, true, true, src, 0x0108_0003));
            prop_assert_eq!((r.len, r.addr), (len, dst));
        }

        #[test]
        fn any_bytes_decode(b in any::<[u8; 16]>()) {
            let d = Descriptor::decode(&b);
            prop_assert!(d.len >= 1 && d.len <= 65536);
        }
    }
}
