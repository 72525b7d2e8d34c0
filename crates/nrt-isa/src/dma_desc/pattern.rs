//! Ours: the pattern block, for DMA transfers the public descriptor cannot
//! express.
//!
//! NEFF DMA descriptors can cast between dtypes, compute (fma with a scale,
//! add, min, max), transpose, and walk access patterns of up to 4 dims per
//! side. The public 16-byte UDMA descriptor carries only a length and one
//! address, so the simulated device accepts an extension:
//!
//! - A TX descriptor with [`super::PATTERN_BIT`] (len_ctrl bit 31, reserved
//!   in the public layout) set has `buf_ptr` = device address of a
//!   [`PATTERN_BLOCK_SIZE`]-byte pattern block and length =
//!   `PATTERN_BLOCK_SIZE`. The block names both sides, so one such TX
//!   descriptor performs the whole transfer. Its RX partner carries the same
//!   flag, length and block address, keeping the two rings in lockstep.
//! - Two 64-bit addresses plus 2 x 4 (step, size) pairs do not fit in 64
//!   bytes, so the block is 128 bytes (two 64-byte lines), little-endian:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0x00 | u8 | op ([`DmaOp`]; numbering of the runtime's DMA op enum) |
//! | 0x01 | u8 | source dtype (`nrt_dtype_t` code) |
//! | 0x02 | u8 | destination dtype |
//! | 0x03 | u8 | source dim count, 1..=4 |
//! | 0x04 | u8 | destination dim count, 1..=4 |
//! | 0x05 | u8 | transpose element size in bytes (2 or 4; 0 unless transpose) |
//! | 0x06 | u8 | constant dtype: 0 none, 0x8 int32, 0x9 uint32, 0xA float32 |
//! | 0x07 | u8 | magic [`PATTERN_MAGIC`] |
//! | 0x08 | f32 | fma scale (1.0 for other ops) |
//! | 0x0C | u32 | constant bits (per the constant dtype; 0 when none) |
//! | 0x10 | u64 | source address |
//! | 0x18 | u64 | destination address |
//! | 0x20 | 4 x (i32 step, u32 size) | source dims, innermost first |
//! | 0x40 | 4 x (i32 step, u32 size) | destination dims, innermost first |
//! | 0x60 | 4 x u32 | transpose shape (0 unless transpose) |
//! | 0x70 | 16 bytes | reserved, zero |
//!
//! Dims mean what def.json's `*_steps` / `*_sizes` mean: steps are byte
//! strides; the innermost size is in bytes (a whole number of elements),
//! the others are counts. Unused dims are zero. Both sides must cover the
//! same number of elements.
//!
//! Semantics per element (src converted to f32 when the op computes,
//! result rounded into the destination dtype):
//! - `Copy`: dst = src (a cast when the dtypes differ);
//! - `Fma`: dst = src * scale + dst;
//! - `Add` / `Min` / `Max`: dst = op(src, constant) when a constant is
//!   given, else op(src, dst);
//! - `Transpose`: src viewed as `transpose_shape` elements of
//!   `transpose_elem_size` bytes, written with the two innermost axes swapped.

use crate::dtype::Dtype;

/// Size of a pattern block in bytes.
pub const PATTERN_BLOCK_SIZE: usize = 128;
/// Most dims an access pattern may have (`XPOSE_NUM_DIMS` / def.json limit).
pub const MAX_PATTERN_DIMS: usize = 4;
/// Byte 7 of every pattern block, so a stray pointer is caught early.
pub const PATTERN_MAGIC: u8 = 0xA7;

/// What a DMA transfer does to the data (the runtime's DMA op numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DmaOp {
    /// Move (and cast, when the dtypes differ).
    Copy = 0,
    /// dst = src * scale + dst.
    Fma = 1,
    /// Element-wise add.
    Add = 2,
    /// Element-wise minimum.
    Min = 3,
    /// Element-wise maximum.
    Max = 4,
    /// Swap the two innermost axes.
    Transpose = 5,
}

impl DmaOp {
    /// The op with numeric code `code`.
    pub fn from_code(code: u8) -> Option<Self> {
        [DmaOp::Copy, DmaOp::Fma, DmaOp::Add, DmaOp::Min, DmaOp::Max, DmaOp::Transpose].get(usize::from(code)).copied()
    }

    /// The def.json `op` spelling ("copy", "fma", ...).
    pub fn name(self) -> &'static str {
        match self {
            DmaOp::Copy => "copy",
            DmaOp::Fma => "fma",
            DmaOp::Add => "add",
            DmaOp::Min => "min",
            DmaOp::Max => "max",
            DmaOp::Transpose => "transpose",
        }
    }
}

/// One dim of an access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct PatternDim {
    /// Byte stride between consecutive indices (may be negative).
    pub step: i32,
    /// Innermost dim: bytes; outer dims: index count.
    pub size: u32,
}

/// One side (source or destination) of a patterned transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PatternSide {
    /// Device address of the first element.
    pub addr: u64,
    /// Element type on this side.
    pub dtype: Dtype,
    /// Dims in use, 1..=4.
    pub ndims: u8,
    /// Dims, innermost first; entries at `ndims..` are zero.
    pub dims: [PatternDim; MAX_PATTERN_DIMS],
}

impl PatternSide {
    /// A contiguous run of `elems` elements of `dtype` at `addr`.
    pub fn contiguous(addr: u64, dtype: Dtype, elems: u32) -> Self {
        let size = dtype.size_bytes() as u32;
        let mut dims = [PatternDim::default(); MAX_PATTERN_DIMS];
        dims[0] = PatternDim { step: size as i32, size: elems.saturating_mul(size) };
        PatternSide { addr, dtype, ndims: 1, dims }
    }

    /// The dims in use (clamped to 4 so a malformed count cannot overrun).
    pub fn used_dims(&self) -> &[PatternDim] {
        &self.dims[..usize::from(self.ndims).min(MAX_PATTERN_DIMS)]
    }

    /// Elements covered: innermost bytes / element size times outer counts.
    pub fn elements(&self) -> u64 {
        let dims = self.used_dims();
        let Some(inner) = dims.first() else { return 0 };
        let esize = self.dtype.size_bytes() as u64;
        dims[1..].iter().fold(u64::from(inner.size) / esize, |n, d| n.saturating_mul(u64::from(d.size)))
    }
}

/// A typed constant operand for add/min/max.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PatternConstant {
    /// float32 constant.
    F32(f32),
    /// int32 constant.
    I32(i32),
    /// uint32 constant.
    U32(u32),
}

/// Transpose parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TransposeSpec {
    /// The logical shape, 4 dims (`XPOSE_NUM_DIMS`).
    pub shape: [u32; 4],
    /// Element size in bytes: 2 or 4.
    pub elem_size: u8,
}

/// A decoded, validated pattern block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PatternBlock {
    /// What to do per element.
    pub op: DmaOp,
    /// Where and how to read.
    pub src: PatternSide,
    /// Where and how to write.
    pub dst: PatternSide,
    /// Multiplier for `Fma` (1.0 otherwise).
    pub scale: f32,
    /// Optional constant operand for `Add` / `Min` / `Max`.
    pub constant: Option<PatternConstant>,
    /// Required for `Transpose`, absent otherwise.
    pub transpose: Option<TransposeSpec>,
}

/// Which side of a transfer an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The source side.
    Source,
    /// The destination side.
    Destination,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Source => "source",
            Side::Destination => "destination",
        })
    }
}

/// Why a pattern block is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Not exactly 128 bytes.
    #[error("a pattern block is {PATTERN_BLOCK_SIZE} bytes, got {0}")]
    WrongSize(usize),
    /// Byte 7 is not the magic.
    #[error("pattern block magic is {found:#04x}, expected {PATTERN_MAGIC:#04x}")]
    BadMagic {
        /// Byte found at offset 7.
        found: u8,
    },
    /// Unknown op code.
    #[error("unknown DMA op code {0}: expected 0 copy, 1 fma, 2 add, 3 min, 4 max or 5 transpose")]
    UnknownOp(u8),
    /// Dtype code not in `nrt_dtype_t` or `unknown`.
    #[error("{side} dtype code {code:#x} is not a convertible nrt_dtype_t (expected 0x1..=0xF)")]
    BadDtype {
        /// Side concerned.
        side: Side,
        /// Code found.
        code: u8,
    },
    /// Dim count outside 1..=4.
    #[error("{side} has {ndims} dims: expected 1..=4")]
    BadDimCount {
        /// Side concerned.
        side: Side,
        /// Count found.
        ndims: u8,
    },
    /// A used dim of size 0.
    #[error("{side} dim {dim} has size 0 (sizes cannot be 0)")]
    ZeroSize {
        /// Side concerned.
        side: Side,
        /// Dim index, innermost = 0.
        dim: usize,
    },
    /// An unused dim that is not all zero.
    #[error("{side} dim {dim} is beyond the dim count but not zero")]
    UnusedDimSet {
        /// Side concerned.
        side: Side,
        /// Dim index.
        dim: usize,
    },
    /// Innermost byte size is not a whole number of elements.
    #[error("{side} innermost size {size} bytes is not a multiple of the {elem_size}-byte element")]
    PartialElement {
        /// Side concerned.
        side: Side,
        /// Innermost size in bytes.
        size: u32,
        /// Element size of the side's dtype.
        elem_size: usize,
    },
    /// Source and destination cover different element counts.
    #[error("source covers {src} elements but destination covers {dst}")]
    ElementCountMismatch {
        /// Source elements.
        src: u64,
        /// Destination elements.
        dst: u64,
    },
    /// Constant dtype code not allowed.
    #[error("constant dtype code {0:#x} not allowed: expected 0 (none), 0x8 int32, 0x9 uint32 or 0xA float32")]
    BadConstantDtype(u8),
    /// Constant bits set while the constant dtype says "none".
    #[error("constant bits {0:#010x} set but constant dtype is 0 (none)")]
    StrayConstantBits(u32),
    /// Constant on an op that takes none.
    #[error("a constant is only meaningful for add, min and max, not {0}")]
    UnexpectedConstant(&'static str),
    /// Scale other than 1.0 on a non-fma op (scale kept as f32 bits).
    #[error("scale {scale} given for op {op}: only fma uses a scale", scale = f32::from_bits(*.0), op = .1)]
    UnexpectedScale(u32, &'static str),
    /// Transpose fields wrong for the op.
    #[error("transpose parameters must be present exactly when op is transpose (op {0})")]
    TransposeMismatch(&'static str),
    /// Transpose element size not 2 or 4.
    #[error("transpose element size {0} bytes: expected 2 or 4")]
    BadTransposeElemSize(u8),
    /// Reserved bytes not zero.
    #[error("reserved pattern-block bytes 0x70..0x80 are not zero")]
    ReservedNotZero,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn validate_side(side: Side, s: &PatternSide) -> Result<(), PatternError> {
    if s.dtype == Dtype::Unknown {
        return Err(PatternError::BadDtype { side, code: 0 });
    }
    if s.ndims == 0 || usize::from(s.ndims) > MAX_PATTERN_DIMS {
        return Err(PatternError::BadDimCount { side, ndims: s.ndims });
    }
    for (dim, d) in s.dims.iter().enumerate() {
        if dim < usize::from(s.ndims) {
            if d.size == 0 {
                return Err(PatternError::ZeroSize { side, dim });
            }
        } else if *d != PatternDim::default() {
            return Err(PatternError::UnusedDimSet { side, dim });
        }
    }
    let elem_size = s.dtype.size_bytes();
    let inner = s.dims[0].size;
    if !(inner as usize).is_multiple_of(elem_size) {
        return Err(PatternError::PartialElement { side, size: inner, elem_size });
    }
    Ok(())
}

impl PatternBlock {
    /// A plain copy/cast of `elems` contiguous elements.
    pub fn contiguous_copy(src: u64, src_dtype: Dtype, dst: u64, dst_dtype: Dtype, elems: u32) -> Self {
        PatternBlock {
            op: DmaOp::Copy,
            src: PatternSide::contiguous(src, src_dtype, elems),
            dst: PatternSide::contiguous(dst, dst_dtype, elems),
            scale: 1.0,
            constant: None,
            transpose: None,
        }
    }

    /// Check every rule in the module docs.
    pub fn validate(&self) -> Result<(), PatternError> {
        validate_side(Side::Source, &self.src)?;
        validate_side(Side::Destination, &self.dst)?;
        let (src, dst) = (self.src.elements(), self.dst.elements());
        if src != dst {
            return Err(PatternError::ElementCountMismatch { src, dst });
        }
        let name = self.op.name();
        if self.constant.is_some() && !matches!(self.op, DmaOp::Add | DmaOp::Min | DmaOp::Max) {
            return Err(PatternError::UnexpectedConstant(name));
        }
        if self.op != DmaOp::Fma && self.scale.to_bits() != 1.0f32.to_bits() {
            return Err(PatternError::UnexpectedScale(self.scale.to_bits(), name));
        }
        match (self.op, self.transpose) {
            (DmaOp::Transpose, Some(t)) if t.elem_size != 2 && t.elem_size != 4 => {
                Err(PatternError::BadTransposeElemSize(t.elem_size))
            }
            (DmaOp::Transpose, Some(_)) => Ok(()),
            (DmaOp::Transpose, None) | (_, Some(_)) => Err(PatternError::TransposeMismatch(name)),
            _ => Ok(()),
        }
    }

    /// Encode the 128 bytes after validating.
    pub fn to_bytes(&self) -> Result<[u8; PATTERN_BLOCK_SIZE], PatternError> {
        self.validate()?;
        let mut b = [0u8; PATTERN_BLOCK_SIZE];
        let (const_code, const_bits) = match self.constant {
            None => (0, 0),
            Some(PatternConstant::I32(v)) => (Dtype::Int32.code(), v as u32),
            Some(PatternConstant::U32(v)) => (Dtype::Uint32.code(), v),
            Some(PatternConstant::F32(v)) => (Dtype::Float32.code(), v.to_bits()),
        };
        let t = self.transpose.unwrap_or(TransposeSpec { shape: [0; 4], elem_size: 0 });
        b[0] = self.op as u8;
        b[1] = self.src.dtype.code();
        b[2] = self.dst.dtype.code();
        b[3] = self.src.ndims;
        b[4] = self.dst.ndims;
        b[5] = t.elem_size;
        b[6] = const_code;
        b[7] = PATTERN_MAGIC;
        b[0x08..0x0C].copy_from_slice(&self.scale.to_bits().to_le_bytes());
        b[0x0C..0x10].copy_from_slice(&const_bits.to_le_bytes());
        b[0x10..0x18].copy_from_slice(&self.src.addr.to_le_bytes());
        b[0x18..0x20].copy_from_slice(&self.dst.addr.to_le_bytes());
        for (base, side) in [(0x20, &self.src), (0x40, &self.dst)] {
            for (i, d) in side.dims.iter().enumerate() {
                let at = base + i * 8;
                b[at..at + 4].copy_from_slice(&d.step.to_le_bytes());
                b[at + 4..at + 8].copy_from_slice(&d.size.to_le_bytes());
            }
        }
        for (i, s) in t.shape.iter().enumerate() {
            b[0x60 + i * 4..0x64 + i * 4].copy_from_slice(&s.to_le_bytes());
        }
        Ok(b)
    }

    /// Decode and validate 128 untrusted bytes.
    pub fn from_bytes(b: &[u8]) -> Result<Self, PatternError> {
        if b.len() != PATTERN_BLOCK_SIZE {
            return Err(PatternError::WrongSize(b.len()));
        }
        if b[7] != PATTERN_MAGIC {
            return Err(PatternError::BadMagic { found: b[7] });
        }
        if b[0x70..].iter().any(|&x| x != 0) {
            return Err(PatternError::ReservedNotZero);
        }
        let op = DmaOp::from_code(b[0]).ok_or(PatternError::UnknownOp(b[0]))?;
        let side = |which: Side, dtype_code: u8, ndims: u8, addr_at: usize, dims_at: usize| {
            let dtype = Dtype::from_code(dtype_code)
                .filter(|d| *d != Dtype::Unknown)
                .ok_or(PatternError::BadDtype { side: which, code: dtype_code })?;
            let mut dims = [PatternDim::default(); MAX_PATTERN_DIMS];
            for (i, d) in dims.iter_mut().enumerate() {
                let at = dims_at + i * 8;
                *d = PatternDim { step: u32_at(b, at) as i32, size: u32_at(b, at + 4) };
            }
            Ok::<_, PatternError>(PatternSide { addr: u64_at(b, addr_at), dtype, ndims, dims })
        };
        let src = side(Side::Source, b[1], b[3], 0x10, 0x20)?;
        let dst = side(Side::Destination, b[2], b[4], 0x18, 0x40)?;
        let const_bits = u32_at(b, 0x0C);
        let constant = match b[6] {
            0 if const_bits == 0 => None,
            0 => return Err(PatternError::StrayConstantBits(const_bits)),
            0x8 => Some(PatternConstant::I32(const_bits as i32)),
            0x9 => Some(PatternConstant::U32(const_bits)),
            0xA => Some(PatternConstant::F32(f32::from_bits(const_bits))),
            other => return Err(PatternError::BadConstantDtype(other)),
        };
        let mut shape = [0u32; 4];
        for (i, s) in shape.iter_mut().enumerate() {
            *s = u32_at(b, 0x60 + i * 4);
        }
        let transpose = if b[5] != 0 || shape != [0; 4] { Some(TransposeSpec { shape, elem_size: b[5] }) } else { None };
        let block = PatternBlock { op, src, dst, scale: f32::from_bits(u32_at(b, 0x08)), constant, transpose };
        block.validate()?;
        Ok(block)
    }
}
