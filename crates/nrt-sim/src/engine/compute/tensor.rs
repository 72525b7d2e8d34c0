//! Tensor ops shared by DVE and POOL (and COPY on ACT): TENSOR_TENSOR,
//! TENSOR_SCALAR, POOL reductions, COPY / CAST and COPY_PREDICATED.
//!
//! Arithmetic happens in f32 on gathered tiles and the result is narrowed
//! to the output dtype with round-to-nearest-even; COPY with matching
//! dtypes and COPY_PREDICATED move elements bit-exactly.

use super::operand::{self, Operand};
use super::context::{ComputeContext, Done, OpError, OpResult};
use crate::port::Bus;
use crate::cost;
use crate::kernels::copy::copy_cast;
use crate::kernels::elementwise::{AluOp as K, ScalarStage, tensor_scalar as k_tensor_scalar, tensor_tensor as k_tensor_tensor};
use crate::kernels::pattern::{Axis, MAX_AXES, Pattern, gather, gather_raw, scatter, scatter_raw};
use crate::kernels::reduce::{ReduceOp as KR, reduce_free};
use crate::kernels::simd::ScalarOperand;
use nrt_isa::dtype::Rounding;
use nrt_isa::instr::{AluOp, CopyPredicated, DtypeCode, Pool, ReduceOp, TensorScalar, TensorTensor};
use nrt_isa::operand::Tensor4d;

/// The kernel operator of an ALU op, and whether its operands must be
/// swapped: the ISA's `bypass` yields its *first* operand, the kernel's
/// its second.
pub(crate) fn kernel_alu(op: AluOp) -> Result<(K, bool), OpError> {
    Ok(match op {
        AluOp::Bypass => (K::Bypass, true),
        AluOp::Add => (K::Add, false),
        AluOp::Sub => (K::Subtract, false),
        AluOp::Mult => (K::Multiply, false),
        AluOp::Divide => (K::Divide, false),
        AluOp::Max => (K::Max, false),
        AluOp::Min => (K::Min, false),
        AluOp::Pow => (K::Pow, false),
        AluOp::AbsDiff => (K::AbsDiff, false),
        AluOp::IsEq => (K::Eq, false),
        AluOp::NotEq => (K::Ne, false),
        AluOp::IsLt => (K::Lt, false),
        AluOp::IsLe => (K::Le, false),
        AluOp::IsGt => (K::Gt, false),
        AluOp::IsGe => (K::Ge, false),
        AluOp::And | AluOp::Or | AluOp::Xor | AluOp::Mod | AluOp::ShiftLeft | AluOp::ShiftRight => {
            return Err(OpError::Unsupported("bitwise, mod and shift ALU ops have no tensor kernel yet"));
        }
    })
}

fn same_len(a: (&str, &Operand), b: (&str, &Operand)) -> Result<(), OpError> {
    if a.1.pattern.free_len() != b.1.pattern.free_len() {
        return Err(OpError::Bad(format!(
            "{} has {} elements per partition, {} has {}",
            a.0,
            a.1.pattern.free_len(),
            b.0,
            b.1.pattern.free_len()
        )));
    }
    Ok(())
}

/// TENSOR_TENSOR: `out = in0 op in1`.
pub(crate) fn tensor_tensor(i: &TensorTensor, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    let (op, swap) = kernel_alu(i.op)?;
    let parts = usize::from(i.partitions);
    let a = operand::tensor3d("in0", &i.in0, parts, operand::dtype("in0 dtype", i.in_dtypes.first)?)?;
    let b = operand::tensor3d("in1", &i.in1, parts, operand::dtype("in1 dtype", i.in_dtypes.second)?)?;
    let out = operand::tensor3d("out", &i.out, parts, operand::dtype("out_dtype", i.out_dtype)?)?;
    let chip = ctx.onchip();
    for (role, o) in [("in0", &a), ("in1", &b), ("out", &out)] {
        chip.check(role, o)?;
    }
    same_len(("in0", &a), ("in1", &b))?;
    same_len(("in0", &a), ("out", &out))?;
    let ta = gather(&chip.view(a.space), &a.pattern, a.dtype)?;
    let tb = gather(&chip.view(b.space), &b.pattern, b.dtype)?;
    let y = if swap { k_tensor_tensor(&tb, &ta, op)? } else { k_tensor_tensor(&ta, &tb, op)? };
    scatter(&mut chip.view(out.space), &out.pattern, out.dtype, &y, &mut Rounding::NearestEven)?;
    Ok(Done { cycles: cost::lane_cycles(y.free() as u64), output: Some(out), oob: None, flops: 0 })
}

fn stage(op: AluOp, scalar: f32, reverse: bool) -> Result<ScalarStage<'static>, OpError> {
    let (k, swap) = kernel_alu(op)?;
    Ok(ScalarStage { op: k, operand: ScalarOperand::Imm(scalar), reverse: reverse ^ swap })
}

/// TENSOR_SCALAR: `t = in op0 scalar0`, `out = t op1 scalar1`.
pub(crate) fn tensor_scalar(i: &TensorScalar, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    let parts = usize::from(i.partitions);
    let input = operand::tensor3d("input", &i.input, parts, operand::dtype("in_dtype", i.in_dtype)?)?;
    let output = operand::tensor3d("output", &i.output, parts, operand::dtype("out_dtype", i.out_dtype)?)?;
    let chip = ctx.onchip();
    chip.check("input", &input)?;
    chip.check("output", &output)?;
    same_len(("input", &input), ("output", &output))?;
    let first = stage(i.op0, i.scalar0.get(), i.reverse0)?;
    // `t bypass scalar1` is `t`: the second stage is skipped.
    let second = if i.op1 == AluOp::Bypass && !i.reverse1 { None } else { Some(stage(i.op1, i.scalar1.get(), i.reverse1)?) };
    let x = gather(&chip.view(input.space), &input.pattern, input.dtype)?;
    let y = k_tensor_scalar(&x, first, second)?;
    scatter(&mut chip.view(output.space), &output.pattern, output.dtype, &y, &mut Rounding::NearestEven)?;
    Ok(Done { cycles: cost::lane_cycles(y.free() as u64), output: Some(output), oob: None, flops: 0 })
}

/// POOL: reduce the input along the dimensions set in `axes`.
///
/// The input is gathered with its axes reordered so the reduced ones are
/// innermost; one `reduce_free` over groups of their combined size then
/// leaves the kept dimensions in their original order.
pub(crate) fn pool(i: &Pool, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    if i.axes & !0b111 != 0 {
        return Err(OpError::Bad(format!("axes {:#04x}: only bits 0..=2 (the three input dimensions) exist", i.axes)));
    }
    let op = match i.op {
        ReduceOp::Sum => KR::Sum,
        ReduceOp::Max => KR::Max,
        ReduceOp::Min => KR::Min,
        ReduceOp::Mean => KR::Mean,
    };
    let parts = usize::from(i.partitions);
    let input = operand::tensor3d("input", &i.input, parts, operand::dtype("in_dtype", i.in_dtype)?)?;
    let output = operand::tensor3d("output", &i.output, parts, operand::dtype("out_dtype", i.out_dtype)?)?;
    let chip = ctx.onchip();
    chip.check("input", &input)?;
    chip.check("output", &output)?;
    let axes = input.pattern.axes();
    let reduced = (0..axes.len()).filter(|k| i.axes & (1 << k) != 0);
    let kept = (0..axes.len()).filter(|k| i.axes & (1 << k) == 0);
    let mut order = [Axis::new(0, 1); MAX_AXES];
    for (o, k) in order.iter_mut().zip(reduced.clone().chain(kept.clone())) {
        *o = axes[k];
    }
    let order = &order[..axes.len()];
    let group: usize = reduced.map(|k| axes[k].count as usize).product();
    let kept_len: usize = kept.map(|k| axes[k].count as usize).product();
    if output.pattern.free_len() != kept_len {
        return Err(OpError::Bad(format!(
            "output has {} elements per partition, expected {kept_len} (the kept dimensions)",
            output.pattern.free_len()
        )));
    }
    let p = &input.pattern;
    let walk = Pattern::new(p.start_partition(), p.partitions(), p.offset(), order)?;
    let x = gather(&chip.view(input.space), &walk, input.dtype)?;
    if group == 0 {
        return Err(OpError::Bad("a reduced dimension has count 0".into()));
    }
    let y = reduce_free(&x, op, group)?;
    scatter(&mut chip.view(output.space), &output.pattern, output.dtype, &y, &mut Rounding::NearestEven)?;
    Ok(Done { cycles: cost::lane_cycles(x.free() as u64), output: Some(output), oob: None, flops: 0 })
}

/// COPY / CAST: move `partitions` partitions from the src frame to the dst
/// frame, converting dtypes (bit-exact when they match).
pub(crate) fn copy(
    src: &Tensor4d,
    in_dt: DtypeCode,
    dst: &Tensor4d,
    out_dt: DtypeCode,
    partitions: u8,
    ctx: &mut ComputeContext<'_, impl Bus>,
) -> OpResult {
    let parts = usize::from(partitions);
    let s = operand::tensor4d("src", src, parts, operand::dtype("in_dtype", in_dt)?)?;
    let d = operand::tensor4d("dst", dst, parts, operand::dtype("out_dtype", out_dt)?)?;
    let chip = ctx.onchip();
    chip.check("src", &s)?;
    chip.check("dst", &d)?;
    let mut to = chip.view(d.space);
    copy_cast(&chip.view(s.space), &s.pattern, s.dtype, &mut to, &d.pattern, d.dtype, &mut Rounding::NearestEven)?;
    Ok(Done { cycles: cost::lane_cycles(s.pattern.free_len() as u64), output: Some(d), oob: None, flops: 0 })
}

/// COPY_PREDICATED: `dst = src` where `mask != 0` (`== 0` with `invert`),
/// moved bit-exactly; dst keeps its bytes elsewhere.
pub(crate) fn copy_predicated(i: &CopyPredicated, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    let parts = usize::from(i.partitions);
    let dt = operand::dtype("dtype", i.dtype)?;
    let mask = operand::tensor3d("mask", &i.mask, parts, operand::dtype("mask_dtype", i.mask_dtype)?)?;
    let src = operand::tensor3d("src", &i.src, parts, dt)?;
    let dst = operand::tensor3d("dst", &i.dst, parts, dt)?;
    let chip = ctx.onchip();
    for (role, o) in [("mask", &mask), ("src", &src), ("dst", &dst)] {
        chip.check(role, o)?;
    }
    same_len(("mask", &mask), ("src", &src))?;
    same_len(("mask", &mask), ("dst", &dst))?;
    let m = gather(&chip.view(mask.space), &mask.pattern, mask.dtype)?;
    let esize = dt.size_bytes();
    let from = gather_raw(&chip.view(src.space), &src.pattern, esize)?;
    let mut view = chip.view(dst.space);
    let mut to = gather_raw(&view, &dst.pattern, esize)?;
    select_raw(m.as_slice(), i.invert, &from.bytes, &mut to.bytes, esize);
    scatter_raw(&mut view, &dst.pattern, &to)?;
    Ok(Done { cycles: cost::lane_cycles(m.free() as u64), output: Some(dst), oob: None, flops: 0 })
}

/// Copies element `k` (`esize` bytes) of `from` into `to` wherever
/// `mask[k] != 0` differs from `invert` (a NaN mask counts as nonzero).
fn select_raw(mask: &[f32], invert: bool, from: &[u8], to: &mut [u8], esize: usize) {
    for ((m, s), d) in mask.iter().zip(from.chunks_exact(esize)).zip(to.chunks_exact_mut(esize)) {
        if (*m != 0.0) != invert {
            d.copy_from_slice(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bypass_yields_the_first_operand() {
        let (k, swap) = kernel_alu(AluOp::Bypass).unwrap();
        assert!(swap);
        // Swapped kernel call: Bypass(b, a) = a.
        assert_eq!(k.apply(2.0, 7.0), 7.0);
        assert!(matches!(kernel_alu(AluOp::Xor), Err(OpError::Unsupported(_))));
    }

    #[test]
    fn raw_select_is_bit_exact() {
        let from = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let mut to = [0u8; 8];
        select_raw(&[1.0, 0.0], false, &from, &mut to, 4);
        assert_eq!(to, [1, 2, 3, 4, 0, 0, 0, 0]);
        select_raw(&[f32::NAN, 0.0], true, &from, &mut to, 4);
        assert_eq!(to, [1, 2, 3, 4, 5, 6, 7, 8]);
    }
}
