//! DVE / Pool elementwise arithmetic: tensor-tensor, tensor-scalar (NKI's
//! two-operator chain with reverse flags), select and memset.
//!
//! Semantics, all on f32 values:
//! - arithmetic follows IEEE f32 (`divide` by 0 gives ±inf, `pow` is `powf`);
//! - `max` / `min` return the non-NaN operand when exactly one is NaN
//!   (IEEE maxNum/minNum, as `f32::max` does);
//! - comparisons produce `1.0` (true) or `0.0` (false); any comparison with
//!   NaN is false except `ne`;
//! - logical ops treat any nonzero (including NaN) as true and produce 1.0/0.0.
//!
//! The operator is matched once per call; each arm is a tight loop over rows
//! that vectorises (with AVX2 when present, see [`super::simd`]).

use super::error::{KernelError, KernelResult, shape};
use super::simd::{ScalarOperand, multiversion};
use super::tile::Tile;

/// A binary ALU operator of the vector engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AluOp {
    /// `a + b`.
    Add,
    /// `a - b`.
    Subtract,
    /// `a * b`.
    Multiply,
    /// `a / b`.
    Divide,
    /// `max(a, b)` (maxNum).
    Max,
    /// `min(a, b)` (minNum).
    Min,
    /// `a` raised to `b` (`powf`, not vectorised).
    Pow,
    /// `|a - b|`.
    AbsDiff,
    /// `a == b` as 1.0 / 0.0.
    Eq,
    /// `a != b` as 1.0 / 0.0.
    Ne,
    /// `a < b` as 1.0 / 0.0.
    Lt,
    /// `a <= b` as 1.0 / 0.0.
    Le,
    /// `a > b` as 1.0 / 0.0.
    Gt,
    /// `a >= b` as 1.0 / 0.0.
    Ge,
    /// Both nonzero, as 1.0 / 0.0.
    LogicalAnd,
    /// Either nonzero, as 1.0 / 0.0.
    LogicalOr,
    /// Exactly one nonzero, as 1.0 / 0.0.
    LogicalXor,
    /// `b`, ignoring `a` (NKI `bypass`: lets a chain apply only one operator).
    Bypass,
}

impl AluOp {
    /// Every operator, for tests and benchmarks.
    pub const ALL: [AluOp; 18] = [
        AluOp::Add,
        AluOp::Subtract,
        AluOp::Multiply,
        AluOp::Divide,
        AluOp::Max,
        AluOp::Min,
        AluOp::Pow,
        AluOp::AbsDiff,
        AluOp::Eq,
        AluOp::Ne,
        AluOp::Lt,
        AluOp::Le,
        AluOp::Gt,
        AluOp::Ge,
        AluOp::LogicalAnd,
        AluOp::LogicalOr,
        AluOp::LogicalXor,
        AluOp::Bypass,
    ];

    /// The operator applied to one pair (same arithmetic as the loops).
    pub fn apply(self, a: f32, b: f32) -> f32 {
        let mut out = [a];
        binary_rows(self, &mut out, Rhs::Row(&[b]), false);
        out[0]
    }
}

#[inline(always)]
fn flag(c: bool) -> f32 {
    if c { 1.0 } else { 0.0 }
}

/// The right-hand operand of one row operation.
#[derive(Clone, Copy)]
enum Rhs<'a> {
    Row(&'a [f32]),
    Scalar(f32),
}

/// `out[i] = f(out[i], rhs[i])` (or `f(rhs[i], out[i])` when `reverse`).
#[inline(always)]
fn zip_in_place(out: &mut [f32], rhs: Rhs<'_>, reverse: bool, f: impl Fn(f32, f32) -> f32) {
    match (rhs, reverse) {
        (Rhs::Row(b), false) => out.iter_mut().zip(b).for_each(|(a, &b)| *a = f(*a, b)),
        (Rhs::Row(b), true) => out.iter_mut().zip(b).for_each(|(a, &b)| *a = f(b, *a)),
        (Rhs::Scalar(s), false) => out.iter_mut().for_each(|a| *a = f(*a, s)),
        (Rhs::Scalar(s), true) => out.iter_mut().for_each(|a| *a = f(s, *a)),
    }
}

/// Matches `op` once and runs its loop over one row.
#[inline(always)]
fn binary_rows(op: AluOp, out: &mut [f32], rhs: Rhs<'_>, reverse: bool) {
    match op {
        AluOp::Add => zip_in_place(out, rhs, reverse, |a, b| a + b),
        AluOp::Subtract => zip_in_place(out, rhs, reverse, |a, b| a - b),
        AluOp::Multiply => zip_in_place(out, rhs, reverse, |a, b| a * b),
        AluOp::Divide => zip_in_place(out, rhs, reverse, |a, b| a / b),
        AluOp::Max => zip_in_place(out, rhs, reverse, f32::max),
        AluOp::Min => zip_in_place(out, rhs, reverse, f32::min),
        AluOp::Pow => zip_in_place(out, rhs, reverse, f32::powf),
        AluOp::AbsDiff => zip_in_place(out, rhs, reverse, |a, b| (a - b).abs()),
        AluOp::Eq => zip_in_place(out, rhs, reverse, |a, b| flag(a == b)),
        AluOp::Ne => zip_in_place(out, rhs, reverse, |a, b| flag(a != b)),
        AluOp::Lt => zip_in_place(out, rhs, reverse, |a, b| flag(a < b)),
        AluOp::Le => zip_in_place(out, rhs, reverse, |a, b| flag(a <= b)),
        AluOp::Gt => zip_in_place(out, rhs, reverse, |a, b| flag(a > b)),
        AluOp::Ge => zip_in_place(out, rhs, reverse, |a, b| flag(a >= b)),
        AluOp::LogicalAnd => zip_in_place(out, rhs, reverse, |a, b| flag(a != 0.0 && b != 0.0)),
        AluOp::LogicalOr => zip_in_place(out, rhs, reverse, |a, b| flag(a != 0.0 || b != 0.0)),
        AluOp::LogicalXor => zip_in_place(out, rhs, reverse, |a, b| flag((a != 0.0) != (b != 0.0))),
        AluOp::Bypass => zip_in_place(out, rhs, reverse, |_, b| b),
    }
}

fn same_shape(op: &'static str, a: &Tile, b: &Tile) -> KernelResult<()> {
    if a.shape() != b.shape() {
        return Err(KernelError::ShapeMismatch {
            op,
            expected: shape(a.partitions(), a.free()),
            got: shape(b.partitions(), b.free()),
        });
    }
    Ok(())
}

/// `a <op> b` elementwise over two tiles of the same shape (NKI `tensor_tensor`).
pub fn tensor_tensor(a: &Tile, b: &Tile, op: AluOp) -> KernelResult<Tile> {
    same_shape("tensor_tensor", a, b)?;
    let mut out = a.clone();
    tensor_tensor_rows(&mut out, b, op);
    Ok(out)
}

multiversion! {
    /// `out <op>= b`, row by row.
    fn tensor_tensor_rows(out: &mut Tile, b: &Tile, op: AluOp) {
        for p in 0..out.partitions() {
            binary_rows(op, out.row_mut(p), Rhs::Row(b.row(p)), false);
        }
    }
}

/// One stage of a tensor-scalar chain: operator, scalar operand, and
/// whether the operand goes on the left (`operand <op> data`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalarStage<'a> {
    /// The operator.
    pub op: AluOp,
    /// Immediate or per-partition operand.
    pub operand: ScalarOperand<'a>,
    /// `true` computes `operand <op> data` instead of `data <op> operand`.
    pub reverse: bool,
}

impl<'a> ScalarStage<'a> {
    /// `data <op> operand`.
    pub fn new(op: AluOp, operand: ScalarOperand<'a>) -> Self {
        Self {
            op,
            operand,
            reverse: false,
        }
    }

    /// `operand <op> data`.
    pub fn reversed(op: AluOp, operand: ScalarOperand<'a>) -> Self {
        Self {
            op,
            operand,
            reverse: true,
        }
    }
}

/// NKI `tensor_scalar`: `(data <op0> operand0) <op1> operand1`, the second
/// stage optional; each stage may be reversed. Intermediate results stay f32.
pub fn tensor_scalar(data: &Tile, first: ScalarStage<'_>, second: Option<ScalarStage<'_>>) -> KernelResult<Tile> {
    first.operand.check("tensor_scalar operand0", data.partitions())?;
    if let Some(s) = &second {
        s.operand.check("tensor_scalar operand1", data.partitions())?;
    }
    let mut out = data.clone();
    tensor_scalar_rows(&mut out, &first, second.as_ref());
    Ok(out)
}

multiversion! {
    /// The one- or two-stage scalar chain, row by row, in place.
    fn tensor_scalar_rows(out: &mut Tile, first: &ScalarStage<'_>, second: Option<&ScalarStage<'_>>) {
        for p in 0..out.partitions() {
            let row = out.row_mut(p);
            binary_rows(first.op, row, Rhs::Scalar(first.operand.at(p)), first.reverse);
            if let Some(s) = second {
                binary_rows(s.op, row, Rhs::Scalar(s.operand.at(p)), s.reverse);
            }
        }
    }
}

/// NKI `scalar_tensor_tensor`: `(data <op0> operand0) <op1> other`, where
/// `other` is a full tile of the same shape as `data`.
pub fn scalar_tensor_tensor(data: &Tile, first: ScalarStage<'_>, op1: AluOp, other: &Tile, reverse1: bool) -> KernelResult<Tile> {
    same_shape("scalar_tensor_tensor", data, other)?;
    first.operand.check("scalar_tensor_tensor operand0", data.partitions())?;
    let mut out = data.clone();
    scalar_tensor_tensor_rows(&mut out, &first, op1, other, reverse1);
    Ok(out)
}

multiversion! {
    /// `(out <op0> scalar) <op1> other`, row by row, in place.
    fn scalar_tensor_tensor_rows(out: &mut Tile, first: &ScalarStage<'_>, op1: AluOp, other: &Tile, reverse1: bool) {
        for p in 0..out.partitions() {
            let row = out.row_mut(p);
            binary_rows(first.op, row, Rhs::Scalar(first.operand.at(p)), first.reverse);
            binary_rows(op1, row, Rhs::Row(other.row(p)), reverse1);
        }
    }
}

/// `mask != 0 ? on_true : on_false`, elementwise (a NaN mask counts as true).
pub fn select(mask: &Tile, on_true: &Tile, on_false: &Tile) -> KernelResult<Tile> {
    same_shape("select on_true", mask, on_true)?;
    same_shape("select on_false", mask, on_false)?;
    let mut out = on_false.clone();
    select_rows(&mut out, mask, on_true);
    Ok(out)
}

multiversion! {
    /// Overwrites `out` with `on_true` where `mask` is nonzero.
    fn select_rows(out: &mut Tile, mask: &Tile, on_true: &Tile) {
        for p in 0..out.partitions() {
            for ((o, &m), &t) in out.row_mut(p).iter_mut().zip(mask.row(p)).zip(on_true.row(p)) {
                if m != 0.0 {
                    *o = t;
                }
            }
        }
    }
}

/// A `[partitions x free]` tile filled with `value` (NKI `memset`); the
/// engine scatters it to the destination dtype.
pub fn memset(partitions: usize, free: usize, value: f32) -> Tile {
    Tile::filled(partitions, free, value)
}

#[cfg(test)]
mod tests;
