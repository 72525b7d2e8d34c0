//! Matmul as the PE (tensor engine) does it.
//!
//! LDWEIGHTS loads the *stationary* operand: K partitions (the contraction
//! dimension) by M columns. MATMUL streams the *moving* operand, K partitions
//! by N, and produces `stationaryᵀ · moving`, an `M x N` result (M PSUM
//! partitions), accumulated in fp32 in PSUM under accumulation-group flags.
//!
//! Observed in the real compiler output (spec/real-isa-observed.md §3.3,
//! §3.4): LDWEIGHTS always walks its tile backwards, so the first element the
//! access pattern enumerates feeds column M-1 ([`Weights::from_ldweights_order`]);
//! MATMUL byte +0x2B holds the accumulate flags (bit 0 = start: overwrite,
//! bit 1 = stop: last of the group; 0 = accumulate in the middle); and a
//! transpose is a matmul against the identity with the transpose flag set,
//! whose output keeps the input dtype. NKI documents the PE transpose as
//! bit-accurate from NeuronCore-v3, which [`matmul_transpose`] honours by
//! moving data instead of multiplying when the moving operand is the identity.

use std::borrow::Cow;

use nrt_isa::dtype::{Dtype, Rounding, bytes_to_f32};

use super::error::{KernelError, KernelResult, shape};
use super::gemm::{MatMut, MatRef, RowsMut};
use super::lowp::{LowFormat, LowRef, Operand, gemm_mixed, gemm_mixed_rows};
#[cfg(target_endian = "little")]
use super::pattern::{MAX_LENT_ROWS, f32_rows, f32_rows_mut};
use super::pattern::{OnChipWrite, Pattern, RawTile, gather_into, scatter};
use super::tile::Tile;
use super::transpose::{transpose, transpose_raw};

/// PSUM accumulation-group flags of a MATMUL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AccFlags {
    /// First matmul of the group: overwrite PSUM instead of adding to it.
    pub start: bool,
    /// Last matmul of the group (no numeric effect; marks the result final).
    pub stop: bool,
}

impl AccFlags {
    /// A single-shot group (flags = 3): overwrite, and final.
    pub const SINGLE: AccFlags = AccFlags { start: true, stop: true };
    /// The middle of a group (flags = 0): accumulate.
    pub const ACCUMULATE: AccFlags = AccFlags { start: false, stop: false };

    /// Decodes the flags byte; bits above 1 are not defined and rejected.
    pub fn from_bits(bits: u8) -> KernelResult<Self> {
        if bits & !3 != 0 {
            return Err(KernelError::InvalidPattern {
                detail: format!("matmul accumulate flags {bits:#04x}: only bits 0 (start) and 1 (stop) exist"),
            });
        }
        Ok(Self {
            start: bits & 1 != 0,
            stop: bits & 2 != 0,
        })
    }

    /// The flags byte.
    pub fn bits(self) -> u8 {
        self.start as u8 | (self.stop as u8) << 1
    }
}

/// The stationary operand as held by the PE array: K rows (partitions) by
/// M logical columns.
///
/// bf16 / fp16 / fp8 weights are kept as their raw elements and widened
/// while the GEMM packs them, so loading weights costs a byte copy rather
/// than a conversion pass; other dtypes are held as an f32 tile.
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    store: WeightStore,
}

#[derive(Debug, Clone, PartialEq)]
enum WeightStore {
    /// f32 values, row `k`, column `m`.
    Wide(Tile),
    /// Raw elements in logical column order, `k x m` row-major.
    Low { raw: RawTile, format: LowFormat },
}

/// Checks that a raw tile holds elements of `format`'s size.
fn check_raw(what: &'static str, raw: &RawTile, format: LowFormat) -> KernelResult<()> {
    let len = raw.partitions.checked_mul(raw.free).and_then(|n| n.checked_mul(raw.esize));
    if raw.esize != format.size_bytes() || len != Some(raw.bytes.len()) {
        return Err(KernelError::ShapeMismatch {
            op: what,
            expected: format!("{} bytes of {}-byte {format:?} elements", shape(raw.partitions, raw.free), format.size_bytes()),
            got: format!("{} bytes of {}-byte elements", raw.bytes.len(), raw.esize),
        });
    }
    Ok(())
}

/// Reverses the order of the `esize`-byte elements of `row` in place
/// (each element's bytes keep their order). Fixed sizes let the compiler
/// swap whole elements instead of looping over bytes.
fn reverse_elements(row: &mut [u8], esize: usize) {
    fn by<const N: usize>(row: &mut [u8]) {
        let (chunks, _) = row.as_chunks_mut::<N>();
        chunks.reverse();
    }
    match esize {
        1 => row.reverse(),
        2 => by::<2>(row),
        4 => by::<4>(row),
        _ => {
            // Reversing bytes reverses the elements and each element's
            // bytes; swapping them back within each element fixes that.
            row.reverse();
            for e in row.chunks_exact_mut(esize) {
                e.reverse();
            }
        }
    }
}

impl Weights {
    /// From a tile gathered with the LDWEIGHTS access pattern, whose free
    /// order is the hardware's reversed walk: element `i` of each row feeds
    /// column `M - 1 - i`.
    pub fn from_ldweights_order(mut walk: Tile) -> Self {
        for p in 0..walk.partitions() {
            walk.row_mut(p).reverse();
        }
        Self::from_columns(walk)
    }

    /// From a tile already in logical column order (row `k`, column `m`).
    pub fn from_columns(tile: Tile) -> Self {
        Self {
            store: WeightStore::Wide(tile),
        }
    }

    /// From raw `format` elements gathered with the LDWEIGHTS access pattern
    /// (reversed walk, as [`Self::from_ldweights_order`]), kept unwidened.
    pub fn from_ldweights_raw(mut walk: RawTile, format: LowFormat) -> KernelResult<Self> {
        check_raw("LDWEIGHTS raw tile", &walk, format)?;
        let (row_bytes, esize) = (walk.free * walk.esize, walk.esize);
        if row_bytes > 0 {
            for row in walk.bytes.chunks_exact_mut(row_bytes) {
                reverse_elements(row, esize);
            }
        }
        Ok(Self {
            store: WeightStore::Low { raw: walk, format },
        })
    }

    /// From raw `format` elements already in logical column order.
    pub fn from_raw_columns(raw: RawTile, format: LowFormat) -> KernelResult<Self> {
        check_raw("stationary raw tile", &raw, format)?;
        Ok(Self {
            store: WeightStore::Low { raw, format },
        })
    }

    /// K: the contraction size (partitions of the stationary tile).
    pub fn contraction(&self) -> usize {
        match &self.store {
            WeightStore::Wide(t) => t.partitions(),
            WeightStore::Low { raw, .. } => raw.partitions,
        }
    }

    /// M: columns, which become the output's partitions.
    pub fn columns(&self) -> usize {
        match &self.store {
            WeightStore::Wide(t) => t.free(),
            WeightStore::Low { raw, .. } => raw.free,
        }
    }

    /// The stationary tile in logical order, as f32 (widened on demand when
    /// the weights are held raw).
    pub fn tile(&self) -> Cow<'_, Tile> {
        match &self.store {
            WeightStore::Wide(t) => Cow::Borrowed(t),
            WeightStore::Low { raw, format } => {
                let mut t = Tile::zeros(raw.partitions, raw.free);
                // check_raw at construction guarantees the lengths agree and
                // every LowFormat names a decodable dtype.
                bytes_to_f32(&raw.bytes, format.dtype(), t.as_mut_slice()).expect("raw weights sized at construction");
                Cow::Owned(t)
            }
        }
    }

    /// The GEMM's A operand: the transpose of the stationary tile.
    fn operand(&self) -> KernelResult<Operand<'_>> {
        let (k, m) = (self.contraction(), self.columns());
        Ok(match &self.store {
            WeightStore::Wide(t) => Operand::F32(MatRef::row_major(t.as_slice(), k, m)?.t()),
            WeightStore::Low { raw, format } => Operand::Low(LowRef::row_major(&raw.bytes, *format, k, m)?.t()),
        })
    }
}

/// The moving operand of a MATMUL: an f32 tile, or raw low-precision
/// elements that the GEMM widens while packing.
#[derive(Debug, Clone, Copy)]
pub enum Moving<'a> {
    /// `K x N` f32 values.
    Wide(&'a Tile),
    /// `K x N` raw elements of `format` (from [`super::pattern::gather_raw`]).
    Low {
        /// The elements, row-major.
        raw: &'a RawTile,
        /// Their encoding.
        format: LowFormat,
    },
}

impl Moving<'_> {
    fn shape(&self) -> (usize, usize) {
        match self {
            Moving::Wide(t) => t.shape(),
            Moving::Low { raw, .. } => (raw.partitions, raw.free),
        }
    }

    fn operand(&self) -> KernelResult<Operand<'_>> {
        let (k, n) = self.shape();
        Ok(match self {
            Moving::Wide(t) => Operand::F32(MatRef::row_major(t.as_slice(), k, n)?),
            Moving::Low { raw, format } => {
                check_raw("matmul moving raw tile", raw, *format)?;
                Operand::Low(LowRef::row_major(&raw.bytes, *format, k, n)?)
            }
        })
    }
}

fn check_moving(weights: &Weights, (k, n): (usize, usize)) -> KernelResult<()> {
    if k != weights.contraction() {
        return Err(KernelError::ShapeMismatch {
            op: "matmul moving operand",
            expected: format!("{} partitions (the stationary contraction size)", weights.contraction()),
            got: shape(k, n),
        });
    }
    Ok(())
}

/// `psum = weightsᵀ · moving` (flags.start) or `psum += weightsᵀ · moving`,
/// in fp32; `psum` must be `M x N`.
pub fn matmul(weights: &Weights, moving: &Tile, psum: &mut Tile, flags: AccFlags) -> KernelResult<()> {
    matmul_moving(weights, Moving::Wide(moving), psum, flags)
}

/// [`matmul`] for a moving operand of any [`Moving`] form: low-precision
/// operands (stationary or moving) are widened inside the GEMM's packing,
/// with results bit-identical to widening them into f32 tiles first.
pub fn matmul_moving(weights: &Weights, moving: Moving<'_>, psum: &mut Tile, flags: AccFlags) -> KernelResult<()> {
    let (k, n) = moving.shape();
    check_moving(weights, (k, n))?;
    let m = weights.columns();
    psum.expect_shape("matmul PSUM tile", m, n)?;
    gemm_mixed(
        weights.operand()?,
        moving.operand()?,
        &mut MatMut::row_major(psum.as_mut_slice(), m, n)?,
        !flags.start,
    )
}

/// Whether `t` is a square identity matrix.
fn is_identity(t: &Tile) -> bool {
    t.partitions() == t.free()
        && (0..t.partitions()).all(|p| t.row(p).iter().enumerate().all(|(j, &v)| v == if j == p { 1.0 } else { 0.0 }))
}

/// A MATMUL with the transpose flag: returns the fresh `M x N` product,
/// which with the identity as moving operand (the compiler's only use) is
/// exactly `weightsᵀ`, moved bit for bit (NaN, -0 and infinities intact).
/// Any other moving operand gets the ordinary fp32 product.
pub fn matmul_transpose(weights: &Weights, moving: &Tile) -> KernelResult<Tile> {
    check_moving(weights, moving.shape())?;
    if is_identity(moving) {
        return Ok(transpose(&weights.tile()));
    }
    let mut out = Tile::zeros(weights.columns(), moving.free());
    matmul(weights, moving, &mut out, AccFlags::SINGLE)?;
    Ok(out)
}

/// Whether the raw `format` elements of `t` form a square identity (1.0 on
/// the diagonal, +0.0 or -0.0 elsewhere), checked on the codes so the PE
/// transpose of low-precision weights never widens anything.
fn is_identity_raw(t: &RawTile, format: LowFormat) -> bool {
    let n = t.partitions;
    if t.free != n || t.esize != format.size_bytes() || t.bytes.len() != n * n * t.esize {
        return false;
    }
    let (one, zero_mask): (u16, u16) = match format {
        LowFormat::Bfloat16 => (0x3F80, 0x7FFF),
        LowFormat::Float16 => (0x3C00, 0x7FFF),
        LowFormat::Fp8(kind) => {
            let table = kind.decode_table();
            return t.bytes.chunks_exact(n).enumerate().all(|(p, row)| {
                row.iter().enumerate().all(|(j, &b)| table[usize::from(b)] == if j == p { 1.0 } else { 0.0 })
            });
        }
    };
    // Per row: the diagonal code is 1.0, and the other codes OR-ed together
    // (sign bits masked off) are zero; the folds vectorise.
    let zeros = |codes: &[[u8; 2]]| codes.iter().fold(0u16, |a, w| a | u16::from_le_bytes(*w)) & zero_mask == 0;
    t.bytes.chunks_exact(2 * n).enumerate().all(|(p, row)| {
        let codes = row.as_chunks::<2>().0;
        u16::from_le_bytes(codes[p]) == one && zeros(&codes[..p]) && zeros(&codes[p + 1..])
    })
}

/// The PE transpose on raw operands: when the weights are held raw in
/// `format` and `moving` is the identity in that format, returns `weightsᵀ`
/// as raw elements (the bytes moved, NaN payloads included), ready to be
/// stored in the input dtype. `None` for anything else, which the caller
/// multiplies with [`matmul_transpose`].
pub fn matmul_transpose_raw(weights: &Weights, moving: &RawTile, format: LowFormat) -> KernelResult<Option<RawTile>> {
    check_moving(weights, (moving.partitions, moving.free))?;
    let WeightStore::Low { raw, format: held } = &weights.store else {
        return Ok(None);
    };
    if *held != format || !is_identity_raw(moving, format) {
        return Ok(None);
    }
    transpose_raw(raw).map(Some)
}

/// A full MATMUL into fp32 PSUM bytes: reads the current PSUM values when
/// accumulating, multiplies, and writes the fp32 result back through `out`
/// (an `M`-partition, `N`-element pattern).
pub fn matmul_into_psum<M: OnChipWrite + ?Sized>(
    psum: &mut M,
    out: &Pattern,
    weights: &Weights,
    moving: &Tile,
    flags: AccFlags,
) -> KernelResult<()> {
    matmul_moving_into_psum(psum, out, weights, Moving::Wide(moving), flags)
}

/// [`matmul_into_psum`] for a moving operand of any [`Moving`] form (the
/// simulator passes bf16 / fp16 / fp8 operands raw, unwidened).
pub fn matmul_moving_into_psum<M: OnChipWrite + ?Sized>(
    psum: &mut M,
    out: &Pattern,
    weights: &Weights,
    moving: Moving<'_>,
    flags: AccFlags,
) -> KernelResult<()> {
    let (k, n) = moving.shape();
    check_moving(weights, (k, n))?;
    let m = weights.columns();
    if (out.partitions(), out.free_len()) != (m, n) {
        return Err(KernelError::ShapeMismatch {
            op: "matmul PSUM pattern",
            expected: shape(m, n),
            got: shape(out.partitions(), out.free_len()),
        });
    }
    #[cfg(target_endian = "little")]
    if let Some(done) = matmul_in_place(psum, out, weights, moving, flags) {
        return done;
    }
    // Every element is written before it is read: by the gather when the
    // group resumes, by the GEMM (which then starts from +0.0) otherwise.
    let mut acc = Tile::for_overwrite(m, n);
    if !flags.start {
        gather_into(&*psum, out, Dtype::Float32, &mut acc)?;
    }
    matmul_moving(weights, moving, &mut acc, flags)?;
    scatter(psum, out, Dtype::Float32, &acc, &mut Rounding::NearestEven)
}

/// The MATMUL into PSUM's own rows, when the output is one fp32 run per
/// partition and the memory lends its rows (`OnChipWrite::with_rows_mut`):
/// the GEMM resumes from and stores into PSUM directly, the same
/// elements in the same order as gathering them into a tile, multiplying
/// and scattering the tile back. `None` when it cannot (the caller copies).
#[cfg(target_endian = "little")]
fn matmul_in_place<M: OnChipWrite + ?Sized>(
    psum: &mut M,
    out: &Pattern,
    weights: &Weights,
    moving: Moving<'_>,
    flags: AccFlags,
) -> Option<KernelResult<()>> {
    let (m, n) = (out.partitions(), out.free_len());
    let offset = f32_rows(out, Dtype::Float32)?;
    if m == 0 || n == 0 {
        return None;
    }
    let (a, b) = match (weights.operand(), moving.operand()) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
    };
    let mut done = None;
    psum.with_rows_mut(out.start_partition(), m, offset, n * 4, &mut |rows| {
        let mut f32_rows: [&mut [f32]; MAX_LENT_ROWS] = std::array::from_fn(|_| Default::default());
        if let Some(count) = f32_rows_mut(rows, &mut f32_rows) {
            done = Some(RowsMut::new(&mut f32_rows[..count], n).and_then(|mut c| gemm_mixed_rows(a, b, &mut c, !flags.start)));
        }
    });
    done
}

#[cfg(test)]
mod tests;
