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

use nrt_isa::dtype::{Dtype, Rounding};

use super::error::{KernelError, KernelResult, shape};
use super::gemm::{MatMut, MatRef, gemm};
use super::pattern::{OnChipWrite, Pattern, gather_into, scatter};
use super::tile::Tile;
use super::transpose::transpose;

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
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    tile: Tile,
}

impl Weights {
    /// From a tile gathered with the LDWEIGHTS access pattern, whose free
    /// order is the hardware's reversed walk: element `i` of each row feeds
    /// column `M - 1 - i`.
    pub fn from_ldweights_order(mut walk: Tile) -> Self {
        for p in 0..walk.partitions() {
            walk.row_mut(p).reverse();
        }
        Self { tile: walk }
    }

    /// From a tile already in logical column order (row `k`, column `m`).
    pub fn from_columns(tile: Tile) -> Self {
        Self { tile }
    }

    /// K: the contraction size (partitions of the stationary tile).
    pub fn contraction(&self) -> usize {
        self.tile.partitions()
    }

    /// M: columns, which become the output's partitions.
    pub fn columns(&self) -> usize {
        self.tile.free()
    }

    /// The stationary tile in logical order.
    pub fn tile(&self) -> &Tile {
        &self.tile
    }
}

fn check_moving(weights: &Weights, moving: &Tile) -> KernelResult<()> {
    if moving.partitions() != weights.contraction() {
        return Err(KernelError::ShapeMismatch {
            op: "matmul moving operand",
            expected: format!("{} partitions (the stationary contraction size)", weights.contraction()),
            got: shape(moving.partitions(), moving.free()),
        });
    }
    Ok(())
}

/// `psum = weightsᵀ · moving` (flags.start) or `psum += weightsᵀ · moving`,
/// in fp32; `psum` must be `M x N`.
pub fn matmul(weights: &Weights, moving: &Tile, psum: &mut Tile, flags: AccFlags) -> KernelResult<()> {
    check_moving(weights, moving)?;
    let (k, m, n) = (weights.contraction(), weights.columns(), moving.free());
    psum.expect_shape("matmul PSUM tile", m, n)?;
    let a = MatRef::row_major(weights.tile.as_slice(), k, m)?.t();
    let b = MatRef::row_major(moving.as_slice(), k, n)?;
    gemm(a, b, &mut MatMut::row_major(psum.as_mut_slice(), m, n)?, !flags.start)
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
    check_moving(weights, moving)?;
    if is_identity(moving) {
        return Ok(transpose(&weights.tile));
    }
    let mut out = Tile::zeros(weights.columns(), moving.free());
    matmul(weights, moving, &mut out, AccFlags::SINGLE)?;
    Ok(out)
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
    check_moving(weights, moving)?;
    let (m, n) = (weights.columns(), moving.free());
    if (out.partitions(), out.free_len()) != (m, n) {
        return Err(KernelError::ShapeMismatch {
            op: "matmul PSUM pattern",
            expected: shape(m, n),
            got: shape(out.partitions(), out.free_len()),
        });
    }
    let mut acc = Tile::zeros(m, n);
    if !flags.start {
        gather_into(&*psum, out, Dtype::Float32, &mut acc)?;
    }
    matmul(weights, moving, &mut acc, flags)?;
    scatter(psum, out, Dtype::Float32, &acc, &mut Rounding::NearestEven)
}

#[cfg(test)]
mod tests;
