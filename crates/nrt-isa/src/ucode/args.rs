//! The argument block LOAD_POOL_ARGUMENT points at (`docs/gpsimd.md` §5):
//! libnrt's 504-byte ArgExtractor (count, ten 48-byte
//! `NEURON_ISA_TPB_CUSTOM_OP_ARG_TENSOR` descriptors, ten kind bytes)
//! followed by the destination descriptor, 576 bytes in all.

use thiserror::Error;

/// Bytes of one argument descriptor.
pub const ARG_TENSOR_BYTES: usize = 48;
/// Bytes of the whole argument block.
pub const ARG_BLOCK_BYTES: usize = 576;
/// At most this many positional arguments.
pub const MAX_ARGS: usize = 10;
/// Argument index that names the destination tensor in `tensor_read` /
/// `tensor_write`.
pub const ARG_DST: u32 = 10;
/// Offset of the kind bytes.
const KINDS_AT: usize = 0x1E8;
/// Offset of the has_dst word.
const HAS_DST_AT: usize = 0x1F8;
/// Offset of the dst descriptor.
const DST_AT: usize = 0x200;

/// Why an argument block or descriptor is malformed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ArgsError {
    /// Fewer bytes than the layout.
    #[error("argument block needs {expected} bytes, got {got}")]
    Truncated {
        /// Bytes needed.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
    /// num_args above 10.
    #[error("{0} arguments; a custom op takes at most 10")]
    TooMany(u64),
    /// A kind byte outside 1..=3 for a used slot.
    #[error("argument {index}: kind {kind} (expected 1 tensor, 2 int, 3 float)")]
    BadKind {
        /// Slot.
        index: usize,
        /// Kind byte.
        kind: u8,
    },
    /// has_dst is neither 0 nor 1.
    #[error("has_dst is {0}, expected 0 or 1")]
    BadHasDst(u64),
    /// A descriptor field is invalid.
    #[error("argument {index}: {why}")]
    BadTensor {
        /// Slot (10 = dst).
        index: usize,
        /// What is wrong.
        why: String,
    },
}

/// Where a tensor lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgLocation {
    /// In SBUF: `addr` is `partition << 18 | byte offset` from the op's
    /// SBUF base, `per_block` elements per partition.
    Sbuf {
        /// Partition and byte offset of element 0.
        addr: u32,
        /// Partitions spanned.
        partitions: u8,
        /// Elements per partition.
        per_block: u32,
    },
    /// In device memory, contiguous from `addr`.
    Hbm {
        /// Device address of element 0.
        addr: u64,
    },
}

/// What a positional argument is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// A tensor.
    Tensor = 1,
    /// An integer scalar (a 1-element tensor).
    Int = 2,
    /// A floating-point scalar (a 1-element tensor).
    Float = 3,
}

impl ArgKind {
    fn from_code(c: u8) -> Option<ArgKind> {
        match c {
            1 => Some(ArgKind::Tensor),
            2 => Some(ArgKind::Int),
            3 => Some(ArgKind::Float),
            _ => None,
        }
    }
}

/// One 48-byte argument descriptor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArgTensor {
    /// Storage.
    pub location: ArgLocation,
    /// Element type: an ISA dtype code (`NEURON_ISA_TPB_DTYPE`, see
    /// [`isa_dtype`]).
    pub dtype: u8,
    /// Dimensions, outermost first (1..=8 of them).
    pub dims: Vec<u32>,
    /// Whether the shape is stored as 4 × u32 (else 8 × u16).
    pub shape4d: bool,
}

/// ISA dtype codes (`NEURON_ISA_TPB_DTYPE`) a kernel argument may carry.
pub mod isa_dtype {
    /// uint64.
    pub const UINT64: u8 = 1;
    /// int8.
    pub const INT8: u8 = 2;
    /// uint8.
    pub const UINT8: u8 = 3;
    /// int16.
    pub const INT16: u8 = 4;
    /// uint16.
    pub const UINT16: u8 = 5;
    /// bfloat16.
    pub const BFLOAT16: u8 = 6;
    /// fp16.
    pub const FP16: u8 = 7;
    /// int32.
    pub const INT32: u8 = 8;
    /// uint32.
    pub const UINT32: u8 = 9;
    /// fp32.
    pub const FP32: u8 = 10;
    /// fp32 (round mode variant).
    pub const FP32R: u8 = 11;
    /// int64.
    pub const INT64: u8 = 12;
}

/// Bytes of one element of ISA dtype `code` (`None` for codes a kernel
/// cannot address).
pub fn dtype_bytes(code: u8) -> Option<u64> {
    Some(match code {
        2 | 3 | 13 | 14 | 15 => 1,
        4..=7 => 2,
        8..=11 => 4,
        1 | 12 => 8,
        _ => return None,
    })
}

impl ArgTensor {
    /// A contiguous device-memory tensor.
    pub fn hbm(addr: u64, dtype: u8, dims: &[u32]) -> ArgTensor {
        ArgTensor { location: ArgLocation::Hbm { addr }, dtype, dims: dims.to_vec(), shape4d: dims.iter().any(|&d| d > 0xFFFF) }
    }

    /// Element count (product of the dimensions).
    pub fn num_elem(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d)).product()
    }

    /// Bytes of one element.
    pub fn elem_bytes(&self) -> u64 {
        dtype_bytes(self.dtype).unwrap_or(0)
    }

    /// Total bytes.
    pub fn bytes(&self) -> u64 {
        self.num_elem() * self.elem_bytes()
    }

    /// The 48 descriptor bytes.
    pub fn encode(&self) -> [u8; ARG_TENSOR_BYTES] {
        let mut b = [0u8; ARG_TENSOR_BYTES];
        b[2] = self.dtype;
        if self.shape4d {
            b[1] = 2;
            for (i, d) in self.dims.iter().take(4).enumerate() {
                b[8 + 4 * i..12 + 4 * i].copy_from_slice(&d.to_le_bytes());
            }
        } else {
            b[1] = 0;
            for (i, d) in self.dims.iter().take(8).enumerate() {
                b[8 + 2 * i..10 + 2 * i].copy_from_slice(&(*d as u16).to_le_bytes());
            }
        }
        let n = self.num_elem() as u32;
        match self.location {
            ArgLocation::Hbm { addr } => {
                b[0] = 2;
                b[24..32].copy_from_slice(&addr.to_le_bytes());
                b[32..36].copy_from_slice(&n.to_le_bytes());
            }
            ArgLocation::Sbuf { addr, partitions, per_block } => {
                b[0] = 1;
                b[24..28].copy_from_slice(&addr.to_le_bytes());
                b[28..32].copy_from_slice(&n.to_le_bytes());
                b[32] = partitions;
                b[36..40].copy_from_slice(&per_block.to_le_bytes());
            }
        }
        b
    }

    /// Decodes and checks a descriptor (`index` names it in errors).
    pub fn decode(b: &[u8; ARG_TENSOR_BYTES], index: usize) -> Result<ArgTensor, ArgsError> {
        let bad = |why: String| ArgsError::BadTensor { index, why };
        let dtype = b[2];
        if dtype_bytes(b[2]).is_none() {
            return Err(bad(format!("dtype code {} is not an addressable ISA dtype", b[2])));
        }
        if b[3..8].iter().any(|&x| x != 0) || b[40..48].iter().any(|&x| x != 0) {
            return Err(bad("reserved bytes are not zero".into()));
        }
        let (dims, shape4d): (Vec<u32>, bool) = match b[1] {
            0 => ((0..8).map(|i| u32::from(u16::from_le_bytes([b[8 + 2 * i], b[9 + 2 * i]]))).collect(), false),
            2 => ((0..4).map(|i| u32::from_le_bytes([b[8 + 4 * i], b[9 + 4 * i], b[10 + 4 * i], b[11 + 4 * i]])).collect(), true),
            1 => return Err(bad("out-of-line shapes are host-only".into())),
            t => return Err(bad(format!("shape type {t} (expected 0 inline 8-D or 2 inline 4-D)"))),
        };
        let rank = dims.iter().take_while(|&&d| d != 0).count();
        if rank == 0 {
            return Err(bad("rank 0 (a tensor needs at least one dimension)".into()));
        }
        if dims[rank..].iter().any(|&d| d != 0) {
            return Err(bad("a zero dimension is followed by a nonzero one".into()));
        }
        let dims = dims[..rank].to_vec();
        let product: u64 = dims.iter().map(|&d| u64::from(d)).try_fold(1u64, |a, d| a.checked_mul(d)).ok_or_else(|| bad("element count overflows".into()))?;
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let (location, num_elem) = match b[0] {
            2 => {
                if u32_at(36) != 0 {
                    return Err(bad("HBM storage word at +36 is not zero".into()));
                }
                (ArgLocation::Hbm { addr: u64::from_le_bytes(b[24..32].try_into().expect("8 bytes")) }, u32_at(32))
            }
            1 => {
                let per_block = u32_at(36);
                let partitions = b[32];
                if per_block == 0 || partitions == 0 || b[33..36].iter().any(|&x| x != 0) {
                    return Err(bad("SBUF storage needs partitions >= 1, per_block >= 1 and zero padding".into()));
                }
                (ArgLocation::Sbuf { addr: u32_at(24), partitions, per_block }, u32_at(28))
            }
            l => return Err(bad(format!("location {l} (expected 1 SBUF or 2 HBM)"))),
        };
        if u64::from(num_elem) != product {
            return Err(bad(format!("num_elem {num_elem} differs from the shape's {product} elements")));
        }
        if let ArgLocation::Sbuf { partitions, per_block, .. } = location
            && u64::from(partitions) * u64::from(per_block) < product
        {
            return Err(bad(format!("{partitions} partitions x {per_block} elements cannot hold {product} elements")));
        }
        Ok(ArgTensor { location, dtype, dims, shape4d })
    }
}

/// The decoded argument block.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ArgBlock {
    /// Positional arguments with their kinds.
    pub args: Vec<(ArgKind, ArgTensor)>,
    /// The destination tensor, if any.
    pub dst: Option<ArgTensor>,
}

impl ArgBlock {
    /// The 576 block bytes.
    pub fn encode(&self) -> [u8; ARG_BLOCK_BYTES] {
        let mut b = [0u8; ARG_BLOCK_BYTES];
        b[..8].copy_from_slice(&(self.args.len() as u64).to_le_bytes());
        for (i, (kind, t)) in self.args.iter().take(MAX_ARGS).enumerate() {
            b[8 + ARG_TENSOR_BYTES * i..8 + ARG_TENSOR_BYTES * (i + 1)].copy_from_slice(&t.encode());
            b[KINDS_AT + i] = *kind as u8;
        }
        if let Some(d) = &self.dst {
            b[HAS_DST_AT] = 1;
            b[DST_AT..DST_AT + ARG_TENSOR_BYTES].copy_from_slice(&d.encode());
        }
        b
    }

    /// Decodes and checks a block.
    pub fn decode(b: &[u8]) -> Result<ArgBlock, ArgsError> {
        if b.len() < ARG_BLOCK_BYTES {
            return Err(ArgsError::Truncated { expected: ARG_BLOCK_BYTES, got: b.len() });
        }
        let n = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        if n > MAX_ARGS as u64 {
            return Err(ArgsError::TooMany(n));
        }
        let mut args = Vec::with_capacity(n as usize);
        for i in 0..n as usize {
            let kind = ArgKind::from_code(b[KINDS_AT + i]).ok_or(ArgsError::BadKind { index: i, kind: b[KINDS_AT + i] })?;
            let d: &[u8; ARG_TENSOR_BYTES] = b[8 + ARG_TENSOR_BYTES * i..8 + ARG_TENSOR_BYTES * (i + 1)].try_into().expect("48 bytes");
            let t = ArgTensor::decode(d, i)?;
            if kind != ArgKind::Tensor && t.num_elem() != 1 {
                return Err(ArgsError::BadTensor { index: i, why: format!("a scalar has 1 element, this one {}", t.num_elem()) });
            }
            args.push((kind, t));
        }
        let has_dst = u64::from_le_bytes(b[HAS_DST_AT..HAS_DST_AT + 8].try_into().expect("8 bytes"));
        let dst = match has_dst {
            0 => None,
            1 => Some(ArgTensor::decode(b[DST_AT..DST_AT + ARG_TENSOR_BYTES].try_into().expect("48 bytes"), ARG_DST as usize)?),
            v => return Err(ArgsError::BadHasDst(v)),
        };
        Ok(ArgBlock { args, dst })
    }

    /// The tensor `tensor_read`/`tensor_write` argument `index` names
    /// (0..10 positional, [`ARG_DST`] the destination).
    pub fn tensor(&self, index: u32) -> Option<&ArgTensor> {
        if index == ARG_DST { self.dst.as_ref() } else { self.args.get(index as usize).map(|(_, t)| t) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn f32c() -> u8 {
        isa_dtype::FP32
    }

    #[test]
    fn block_layout_is_byte_exact() {
        let x = ArgTensor::hbm(0x1234_5678, f32c(), &[4, 256]);
        let k = ArgTensor::hbm(0x99, isa_dtype::INT64, &[1]);
        let y = ArgTensor { location: ArgLocation::Sbuf { addr: 3 << 18 | 0x40, partitions: 4, per_block: 256 }, ..x.clone() };
        let blk = ArgBlock { args: vec![(ArgKind::Tensor, x.clone()), (ArgKind::Int, k)], dst: Some(y) };
        let b = blk.encode();
        assert_eq!(b[0], 2);
        assert_eq!((b[8], b[9], b[10]), (2, 0, 10));
        assert_eq!(&b[16..20], &[4, 0, 0, 1]);
        assert_eq!(u64::from_le_bytes(b[32..40].try_into().unwrap()), 0x1234_5678);
        assert_eq!(u32::from_le_bytes(b[40..44].try_into().unwrap()), 1024);
        assert_eq!((b[0x1E8], b[0x1E9], b[0x1EA]), (1, 2, 0));
        assert_eq!(b[0x1F8], 1);
        assert_eq!(b[0x200], 1);
        assert_eq!(u32::from_le_bytes(b[0x218..0x21C].try_into().unwrap()), 3 << 18 | 0x40);
        assert_eq!(ArgBlock::decode(&b).unwrap(), blk);
        assert_eq!(blk.tensor(ARG_DST).unwrap().bytes(), 4096);
        assert_eq!(blk.tensor(0).unwrap(), &x);
        assert!(blk.tensor(2).is_none());
    }

    #[test]
    fn malformed_blocks_are_refused_with_reasons() {
        let x = ArgTensor::hbm(0x100, f32c(), &[8]);
        let good = ArgBlock { args: vec![(ArgKind::Tensor, x)], dst: None }.encode();
        let mut b = good;
        b[0] = 11;
        assert_eq!(ArgBlock::decode(&b), Err(ArgsError::TooMany(11)));
        let mut b = good;
        b[0x1E8] = 7;
        assert!(matches!(ArgBlock::decode(&b), Err(ArgsError::BadKind { index: 0, kind: 7 })));
        let mut b = good;
        b[8 + 32] = 9; // num_elem no longer the product
        assert!(matches!(ArgBlock::decode(&b), Err(ArgsError::BadTensor { index: 0, .. })));
        let mut b = good;
        b[9] = 1;
        assert!(matches!(ArgBlock::decode(&b), Err(ArgsError::BadTensor { .. })));
        let mut b = good;
        b[8 + 8] = 0;
        assert!(matches!(ArgBlock::decode(&b), Err(ArgsError::BadTensor { .. })), "rank 0");
        let mut b = good;
        b[0x1F8] = 2;
        assert_eq!(ArgBlock::decode(&b), Err(ArgsError::BadHasDst(2)));
        assert!(matches!(ArgBlock::decode(&good[..100]), Err(ArgsError::Truncated { .. })));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn random_blocks_never_panic(bytes in prop::collection::vec(any::<u8>(), ARG_BLOCK_BYTES), n in 0u8..12) {
            let mut b = bytes;
            b[..8].copy_from_slice(&u64::from(n).to_le_bytes());
            let _ = ArgBlock::decode(&b);
        }

        #[test]
        fn encoded_blocks_decode(dims in prop::collection::vec(1u32..12, 1..8), addr in any::<u64>(), nargs in 0usize..=10, dst in any::<bool>()) {
            let t = ArgTensor::hbm(addr, f32c(), &dims);
            let blk = ArgBlock { args: vec![(ArgKind::Tensor, t.clone()); nargs], dst: dst.then_some(t) };
            prop_assert_eq!(ArgBlock::decode(&blk.encode()).unwrap(), blk);
        }
    }
}
