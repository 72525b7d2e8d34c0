use super::pattern::{MAX_PATTERN_DIMS, PATTERN_MAGIC, Side};
use super::*;
use crate::dtype::Dtype;
use proptest::prelude::*;

#[test]
fn plain_copy_meta_is_the_driver_default() {
    assert_eq!(MetaCtrl::plain_copy().to_u32(), DEFAULT_COPY_META_CTRL);
    assert_eq!(MetaCtrl::from_u32(DEFAULT_COPY_META_CTRL), Ok(MetaCtrl::plain_copy()));
}

#[test]
fn plain_copy_pair_bytes() {
    let pairs = plain_copy_pairs(0x1000, 0x2_0000_0000, 0x100, 1).unwrap();
    assert_eq!(pairs.len(), 1);
    let (tx, rx) = pairs[0];
    let tx_bytes = DmaDescriptor::Tx(tx).to_bytes().unwrap();
    assert_eq!(
        tx_bytes,
        [0x00, 0x01, 0x00, 0x0D, 0x03, 0x00, 0x08, 0x01, 0x00, 0x10, 0, 0, 0, 0, 0, 0]
    );
    let rx_bytes = DmaDescriptor::Rx(rx).to_bytes().unwrap();
    assert_eq!(rx_bytes, [0x00, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0]);
    assert_eq!(DmaDescriptor::from_bytes(&tx_bytes, RingSide::Tx), Ok(DmaDescriptor::Tx(tx)));
    assert_eq!(DmaDescriptor::from_bytes(&rx_bytes, RingSide::Rx), Ok(DmaDescriptor::Rx(rx)));
}

#[test]
fn full_64k_length_is_stored_as_zero() {
    let ctrl = LenCtrl::new(MAX_BD_LENGTH, 2).unwrap();
    assert_eq!(ctrl.to_u32().unwrap(), 0x0200_0000);
    assert_eq!(LenCtrl::from_u32(0x0200_0000).unwrap().length, MAX_BD_LENGTH);
    assert_eq!(LenCtrl::new(0, 1), Err(DmaDescError::BadLength(0)));
    assert_eq!(LenCtrl::new(MAX_BD_LENGTH + 1, 1), Err(DmaDescError::BadLength(MAX_BD_LENGTH + 1)));
    assert_eq!(LenCtrl::new(8, 4), Err(DmaDescError::BadRingId(4)));
}

#[test]
fn pattern_pair_bytes() {
    let (tx, rx) = pattern_pair(0x7700, 2).unwrap();
    let tx = DmaDescriptor::Tx(tx).to_bytes().unwrap();
    let rx = DmaDescriptor::Rx(rx).to_bytes().unwrap();
    assert_eq!(&tx[0..8], &[0x80, 0x00, 0x00, 0x8E, 0x03, 0x00, 0x08, 0x01]);
    assert_eq!(&rx[0..8], &[0x80, 0x00, 0x00, 0x82, 0, 0, 0, 0]);
    assert_eq!(&tx[8..], &0x7700u64.to_le_bytes());
    assert_eq!(&rx[8..], &0x7700u64.to_le_bytes());
    assert_eq!(pattern_pair(0, 4), Err(DmaDescError::BadRingId(4)));
}

#[test]
fn chunked_copies_split_at_64k() {
    let pairs = plain_copy_pairs(0x10, 0x8000, 0x2_5000, 3).unwrap();
    let lens: Vec<u32> = pairs.iter().map(|(t, _)| t.len_ctrl.length).collect();
    assert_eq!(lens, vec![0x1_0000, 0x1_0000, 0x5000]);
    assert_eq!(pairs[2].0.buf_ptr, 0x2_0010);
    assert_eq!(pairs[2].1.buf_ptr, 0x2_8000);
    assert!(pairs.iter().all(|(t, r)| t.len_ctrl.first && t.len_ctrl.last && r.len_ctrl.ring_id == 3));
    assert!(plain_copy_pairs(0, 0, 0, 1).unwrap().is_empty());
    assert_eq!(plain_copy_pairs(0, 0, 1, 9), Err(DmaDescError::BadRingId(9)));
}

#[test]
fn reserved_bits_and_sizes_are_refused() {
    let mut b = DmaDescriptor::Tx(plain_copy_pairs(0, 0, 4, 1).unwrap()[0].0).to_bytes().unwrap();
    b[2] = 0x01; // len_ctrl bit 16 is reserved
    assert!(matches!(DmaDescriptor::from_bytes(&b, RingSide::Tx), Err(DmaDescError::ReservedLenCtrl { bits: 0x1_0000, .. })));
    b[2] = 0;
    b[7] |= 0x80; // meta_ctrl bit 31 is reserved
    assert!(matches!(DmaDescriptor::from_bytes(&b, RingSide::Tx), Err(DmaDescError::ReservedMetaCtrl { .. })));
    // The RX view has no meta_ctrl, so the same word is a pointer half.
    assert!(DmaDescriptor::from_bytes(&b, RingSide::Rx).is_ok());
    assert_eq!(DmaDescriptor::from_slice(&b[..15], RingSide::Tx), Err(DmaDescError::WrongSize(15)));
}

fn pattern_example() -> PatternBlock {
    let mut src = PatternSide::contiguous(0x4000, Dtype::Float32, 64);
    src.ndims = 2;
    src.dims[0] = PatternDim { step: 4, size: 256 };
    src.dims[1] = PatternDim { step: 512, size: 2 };
    PatternBlock {
        op: DmaOp::Fma,
        src,
        dst: PatternSide::contiguous(0x9000, Dtype::Bfloat16, 128),
        scale: 0.5,
        constant: None,
        transpose: None,
    }
}

#[test]
fn pattern_block_layout() {
    let b = pattern_example().to_bytes().unwrap();
    assert_eq!(&b[0..8], &[1, 0x0A, 0x06, 2, 1, 0, 0, PATTERN_MAGIC]);
    assert_eq!(&b[0x08..0x0C], &0.5f32.to_le_bytes());
    assert_eq!(&b[0x10..0x18], &0x4000u64.to_le_bytes());
    assert_eq!(&b[0x18..0x20], &0x9000u64.to_le_bytes());
    assert_eq!(&b[0x20..0x30], &[4, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 2, 0, 0, 0]);
    assert_eq!(&b[0x40..0x48], &[2, 0, 0, 0, 0, 1, 0, 0]);
    assert!(b[0x48..].iter().all(|&x| x == 0));
    assert_eq!(PatternBlock::from_bytes(&b), Ok(pattern_example()));
}

#[test]
fn pattern_block_errors() {
    let good = pattern_example();
    let mut bad = good;
    bad.dst = PatternSide::contiguous(0x9000, Dtype::Bfloat16, 100);
    assert_eq!(bad.validate(), Err(PatternError::ElementCountMismatch { src: 128, dst: 100 }));
    let mut bad = good;
    bad.src.dims[1].size = 0;
    assert_eq!(bad.validate(), Err(PatternError::ZeroSize { side: Side::Source, dim: 1 }));
    let mut bad = good;
    bad.src.ndims = 5;
    assert_eq!(bad.validate(), Err(PatternError::BadDimCount { side: Side::Source, ndims: 5 }));
    let mut bad = good;
    bad.dst.dims[3].step = 8;
    assert_eq!(bad.validate(), Err(PatternError::UnusedDimSet { side: Side::Destination, dim: 3 }));
    let mut bad = good;
    bad.src.dims[0].size = 6;
    assert!(matches!(bad.validate(), Err(PatternError::PartialElement { .. })));
    let mut bad = good;
    bad.op = DmaOp::Copy;
    assert!(matches!(bad.validate(), Err(PatternError::UnexpectedScale(..))));
    bad.scale = 1.0;
    bad.constant = Some(PatternConstant::F32(1.0));
    assert_eq!(bad.validate(), Err(PatternError::UnexpectedConstant("copy")));
    bad.constant = None;
    bad.op = DmaOp::Transpose;
    assert_eq!(bad.validate(), Err(PatternError::TransposeMismatch("transpose")));
    bad.transpose = Some(TransposeSpec { shape: [1, 2, 3, 4], elem_size: 3 });
    assert_eq!(bad.validate(), Err(PatternError::BadTransposeElemSize(3)));

    let bytes = good.to_bytes().unwrap();
    assert_eq!(PatternBlock::from_bytes(&bytes[..64]), Err(PatternError::WrongSize(64)));
    let mut b = bytes;
    b[7] = 0;
    assert_eq!(PatternBlock::from_bytes(&b), Err(PatternError::BadMagic { found: 0 }));
    let mut b = bytes;
    b[0] = 9;
    assert_eq!(PatternBlock::from_bytes(&b), Err(PatternError::UnknownOp(9)));
    let mut b = bytes;
    b[1] = 0;
    assert_eq!(PatternBlock::from_bytes(&b), Err(PatternError::BadDtype { side: Side::Source, code: 0 }));
    let mut b = bytes;
    b[0x7F] = 1;
    assert_eq!(PatternBlock::from_bytes(&b), Err(PatternError::ReservedNotZero));
    let mut b = bytes;
    b[6] = 0x7;
    assert_eq!(PatternBlock::from_bytes(&b), Err(PatternError::BadConstantDtype(7)));
    let mut b = bytes;
    b[0x0C] = 1;
    assert_eq!(PatternBlock::from_bytes(&b), Err(PatternError::StrayConstantBits(1)));
}

fn arb_len_ctrl() -> impl Strategy<Value = LenCtrl> {
    (1u32..=MAX_BD_LENGTH, 0u8..4, any::<[bool; 5]>()).prop_map(|(length, ring_id, f)| LenCtrl {
        length,
        ring_id,
        first: f[0],
        last: f[1],
        int_en: f[2],
        dmb: f[3],
        pattern: f[4],
    })
}

fn arb_side() -> impl Strategy<Value = PatternSide> {
    let dtype = (1u8..=15).prop_map(|c| Dtype::from_code(c).unwrap());
    (any::<u64>(), dtype, 1u8..=4, proptest::collection::vec((any::<i32>(), 1u32..1000), 4)).prop_map(
        |(addr, dtype, ndims, raw)| {
            let mut dims = [PatternDim::default(); MAX_PATTERN_DIMS];
            for (i, (step, size)) in raw.into_iter().enumerate().take(usize::from(ndims)) {
                let size = if i == 0 { size * dtype.size_bytes() as u32 } else { size };
                dims[i] = PatternDim { step, size };
            }
            PatternSide { addr, dtype, ndims, dims }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn descriptor_round_trip(ctrl in arb_len_ctrl(), word in any::<u32>(), ptr in any::<u64>(), tx in any::<bool>()) {
        let desc = if tx {
            let meta = MetaCtrl::from_u32(word & !((1 << 2) | (0x1F << 27))).unwrap();
            DmaDescriptor::Tx(TxDescriptor { len_ctrl: ctrl, meta_ctrl: meta, buf_ptr: ptr })
        } else {
            DmaDescriptor::Rx(RxDescriptor { len_ctrl: ctrl, buf2_ptr_lo: word, buf_ptr: ptr })
        };
        let bytes = desc.to_bytes().unwrap();
        prop_assert_eq!(DmaDescriptor::from_bytes(&bytes, desc.side()), Ok(desc));
    }

    #[test]
    fn decoded_bytes_reencode_identically(bytes in any::<[u8; 16]>(), tx in any::<bool>()) {
        let side = if tx { RingSide::Tx } else { RingSide::Rx };
        if let Ok(desc) = DmaDescriptor::from_bytes(&bytes, side) {
            // Length 65536 is stored as 0 and decodes back to 0, so every
            // accepted pattern re-encodes to the same bytes.
            prop_assert_eq!(desc.to_bytes().unwrap(), bytes);
        }
    }

    #[test]
    fn pattern_round_trip(src in arb_side(), scale in any::<f32>(), c in any::<u32>(), op in 0u8..6) {
        let dst = PatternSide { addr: src.addr ^ 0xFFFF, ..src };
        let op = DmaOp::from_code(op).unwrap();
        let block = PatternBlock {
            op,
            src,
            dst,
            scale: if op == DmaOp::Fma { scale } else { 1.0 },
            constant: matches!(op, DmaOp::Add | DmaOp::Min | DmaOp::Max).then_some(PatternConstant::U32(c)),
            transpose: (op == DmaOp::Transpose).then_some(TransposeSpec { shape: [c, 1, 2, 3], elem_size: 4 }),
        };
        let bytes = block.to_bytes().unwrap();
        let back = PatternBlock::from_bytes(&bytes).unwrap();
        prop_assert_eq!(back.to_bytes().unwrap(), bytes);
    }

    #[test]
    fn mutated_pattern_blocks_decode_or_fail_cleanly(at in 0usize..PATTERN_BLOCK_SIZE, value in any::<u8>()) {
        let mut bytes = pattern_example().to_bytes().unwrap();
        bytes[at] = value;
        if let Ok(block) = PatternBlock::from_bytes(&bytes) {
            prop_assert_eq!(block.to_bytes().unwrap(), bytes);
        }
    }
}
