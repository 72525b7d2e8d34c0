//! DMA ring images: the descriptors of every trigger of a queue, in the
//! order the owning engine fires them, built once at load.
//!
//! One execution consumes `per_execution` descriptors. The ring holds that
//! sequence repeated until its length is a multiple of 16 and at least 32,
//! so every execution starts at the same place of the sequence and the
//! ring never needs rewriting. Each block is one packet (FIRST on its first
//! TX descriptor, LAST on its last), so the queue's completion semaphore
//! rises by one per block.
//!
//! Descriptors that touch model inputs/outputs point at the model's IO
//! staging buffers; their `buf_ptr` positions are returned as patch sites
//! so an execution can bind a device tensor in place.

use nrt_isa::dma_desc::{DESC_SIZE, DmaDescError, DmaDescriptor, LenCtrl, MAX_BD_LENGTH, MetaCtrl, RxDescriptor, TxDescriptor, pattern_pair};

/// Offset of `buf_ptr` inside a 16-byte descriptor.
pub const BUF_PTR_OFFSET: u64 = 8;
/// Ring id (phase) written into descriptors.
pub const RING_ID: u8 = 1;

/// Where a descriptor side points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A fixed device address.
    Fixed(u64),
    /// Byte `offset` of IO slot `slot` (bound per execution).
    Io {
        /// IO slot (inputs first, then outputs).
        slot: usize,
        /// Byte offset in the tensor.
        offset: u64,
    },
}

/// One transfer to place on a ring: a contiguous copy, or one pattern
/// descriptor pair running the pattern block already staged at
/// `pattern_block` (whose own address fields carry src and dst).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copy {
    /// Source.
    pub src: Endpoint,
    /// Destination.
    pub dst: Endpoint,
    /// Bytes (contiguous copies).
    pub len: u64,
    /// Device address of the pattern block, for patterned transfers.
    pub pattern_block: Option<u64>,
}

/// Which ring of the pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// M2S (source side).
    Tx,
    /// S2M (destination side).
    Rx,
}

/// A descriptor field that must hold an IO tensor's address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingPatch {
    /// Ring.
    pub side: Side,
    /// Byte offset of the `buf_ptr` field inside the ring.
    pub ring_offset: u64,
    /// IO slot.
    pub slot: usize,
    /// Offset added to the tensor's address.
    pub offset: u64,
}

/// A queue's ring contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RingImage {
    /// TX ring bytes.
    pub tx: Vec<u8>,
    /// RX ring bytes.
    pub rx: Vec<u8>,
    /// Descriptors per ring.
    pub descriptors: u32,
    /// Descriptors one execution submits.
    pub per_execution: u32,
    /// IO patch sites.
    pub patches: Vec<RingPatch>,
}

/// Descriptors a block of `copies` needs.
pub fn descriptor_count(copies: &[Copy]) -> u64 {
    copies.iter().map(|c| if c.pattern_block.is_some() { 1 } else { c.len.div_ceil(u64::from(MAX_BD_LENGTH)) }).sum()
}

/// The ring length for `n` descriptors per execution: the smallest
/// multiple of `n` that is a multiple of 16 and at least 32.
pub fn ring_length(n: u32) -> Option<u32> {
    if n == 0 {
        return None;
    }
    let mut m = 1u32;
    loop {
        let l = n.checked_mul(m)?;
        if l % 16 == 0 && l >= 32 {
            return Some(l);
        }
        m += 1;
    }
}

fn addr_of(e: Endpoint, io_default: &dyn Fn(usize) -> u64) -> u64 {
    match e {
        Endpoint::Fixed(a) => a,
        Endpoint::Io { slot, offset } => io_default(slot) + offset,
    }
}

/// One descriptor pair of the per-execution sequence, with the IO slot
/// (and offset) each side is bound to, if any.
type SeqEntry = (TxDescriptor, RxDescriptor, Option<(usize, u64)>, Option<(usize, u64)>);

/// Builds a ring image from the blocks of one queue in trigger order.
/// `io_default` gives each IO slot's staging address.
pub fn build(blocks: &[&[Copy]], io_default: &dyn Fn(usize) -> u64) -> Result<RingImage, DmaDescError> {
    let mut seq: Vec<SeqEntry> = Vec::new();
    for block in blocks {
        let first_desc = seq.len();
        for c in block.iter() {
            if let Some(at) = c.pattern_block {
                let (tx, rx) = pattern_pair(at, RING_ID)?;
                seq.push((tx, rx, None, None));
                continue;
            }
            let mut done = 0u64;
            while done < c.len {
                let chunk = (c.len - done).min(u64::from(MAX_BD_LENGTH)) as u32;
                let src = addr_of(c.src, io_default) + done;
                let dst = addr_of(c.dst, io_default) + done;
                let tx = TxDescriptor { len_ctrl: LenCtrl::new(chunk, RING_ID)?, meta_ctrl: MetaCtrl::plain_copy(), buf_ptr: src };
                let rx = RxDescriptor { len_ctrl: LenCtrl::new(chunk, RING_ID)?, buf2_ptr_lo: 0, buf_ptr: dst };
                let io = |e: Endpoint| match e {
                    Endpoint::Io { slot, offset } => Some((slot, offset + done)),
                    Endpoint::Fixed(_) => None,
                };
                seq.push((tx, rx, io(c.src), io(c.dst)));
                done += u64::from(chunk);
            }
        }
        let last = seq.len();
        for (i, (tx, _, _, _)) in seq[first_desc..last].iter_mut().enumerate() {
            tx.len_ctrl.first = i == 0;
            tx.len_ctrl.last = first_desc + i + 1 == last;
            tx.meta_ctrl.first_block = tx.len_ctrl.first;
            tx.meta_ctrl.last_block = tx.len_ctrl.last;
        }
    }
    let n = u32::try_from(seq.len()).map_err(|_| DmaDescError::BadLength(u32::MAX))?;
    let l = ring_length(n).ok_or(DmaDescError::BadLength(0))?;
    let mut img = RingImage { tx: Vec::with_capacity(l as usize * DESC_SIZE), rx: Vec::with_capacity(l as usize * DESC_SIZE), descriptors: l, per_execution: n, patches: Vec::new() };
    for pos in 0..l as usize {
        let (tx, rx, src_io, dst_io) = &seq[pos % seq.len()];
        let ring_offset = (pos * DESC_SIZE) as u64 + BUF_PTR_OFFSET;
        img.tx.extend_from_slice(&DmaDescriptor::Tx(*tx).to_bytes()?);
        img.rx.extend_from_slice(&DmaDescriptor::Rx(*rx).to_bytes()?);
        if let Some((slot, offset)) = *src_io {
            img.patches.push(RingPatch { side: Side::Tx, ring_offset, slot, offset });
        }
        if let Some((slot, offset)) = *dst_io {
            img.patches.push(RingPatch { side: Side::Rx, ring_offset, slot, offset });
        }
    }
    Ok(img)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_isa::dma_desc::RingSide;
    use proptest::prelude::*;

    #[test]
    fn ring_lengths() {
        assert_eq!(ring_length(1), Some(32));
        assert_eq!(ring_length(4), Some(32));
        assert_eq!(ring_length(3), Some(48));
        assert_eq!(ring_length(48), Some(48));
        assert_eq!(ring_length(17), Some(272));
        assert_eq!(ring_length(0), None);
    }

    #[test]
    fn a_block_is_one_packet_and_io_sides_are_patch_sites() {
        let copies = [Copy { src: Endpoint::Io { slot: 0, offset: 0 }, dst: Endpoint::Fixed(0x9000_0000), len: 3 * 65536, pattern_block: None }];
        let img = build(&[&copies], &|slot| 0x1000_0000 * (slot as u64 + 1)).unwrap();
        assert_eq!((img.per_execution, img.descriptors), (3, 48));
        let d = |i: usize| DmaDescriptor::from_slice(&img.tx[i * 16..i * 16 + 16], RingSide::Tx).unwrap();
        let flags: Vec<(bool, bool)> = (0..3).map(|i| (d(i).len_ctrl().first, d(i).len_ctrl().last)).collect();
        assert_eq!(flags, vec![(true, false), (false, false), (false, true)]);
        assert_eq!(d(1).buf_ptr(), 0x1000_0000 + 65536);
        assert_eq!(d(4).buf_ptr(), 0x1000_0000 + 65536, "the sequence repeats");
        assert_eq!(img.patches.len(), 48);
        assert!(img.patches.iter().all(|p| p.side == Side::Tx && p.slot == 0));
        assert_eq!(img.patches[1].offset, 65536);
    }

    #[test]
    fn a_pattern_transfer_is_one_flagged_pair_inside_its_block_packet() {
        let copies = [
            Copy { src: Endpoint::Fixed(0x1000), dst: Endpoint::Fixed(0x2000), len: 64, pattern_block: None },
            Copy { src: Endpoint::Io { slot: 0, offset: 0 }, dst: Endpoint::Fixed(0), len: 4096, pattern_block: Some(0x7000) },
        ];
        let img = build(&[&copies], &|_| 0x5000).unwrap();
        assert_eq!(img.per_execution, 2);
        let d = |i: usize| DmaDescriptor::from_slice(&img.tx[i * 16..i * 16 + 16], RingSide::Tx).unwrap();
        assert!(d(1).len_ctrl().pattern && d(1).len_ctrl().last && !d(1).len_ctrl().first);
        assert_eq!(d(1).buf_ptr(), 0x7000);
        assert!(d(0).len_ctrl().first && !d(0).len_ctrl().last);
        assert!(img.patches.is_empty(), "the block, not the descriptor, carries the IO address");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Every ring holds whole repetitions of the per-execution sequence,
        /// and the bytes each execution moves equal the blocks' total.
        #[test]
        fn rings_repeat_whole_sequences(lens in prop::collection::vec(1u64..300_000, 1..5)) {
            let copies: Vec<Copy> = lens.iter().enumerate().map(|(i, &len)| Copy { src: Endpoint::Fixed(i as u64 * 1_000_000), dst: Endpoint::Fixed(0x8000_0000), len, pattern_block: None }).collect();
            let blocks: Vec<&[Copy]> = copies.chunks(1).collect();
            let img = build(&blocks, &|_| 0).unwrap();
            prop_assert_eq!(u64::from(img.per_execution), descriptor_count(&copies));
            prop_assert_eq!(img.descriptors % img.per_execution, 0);
            prop_assert!(img.descriptors.is_multiple_of(16) && img.descriptors >= 32);
            let mut moved = 0u64;
            let mut lasts = 0;
            for i in 0..img.per_execution as usize {
                let d = DmaDescriptor::from_slice(&img.tx[i * 16..i * 16 + 16], RingSide::Tx).unwrap();
                moved += u64::from(d.len_ctrl().length);
                lasts += u32::from(d.len_ctrl().last);
            }
            prop_assert_eq!(moved, lens.iter().sum::<u64>());
            prop_assert_eq!(lasts as usize, lens.len());
        }
    }
}
