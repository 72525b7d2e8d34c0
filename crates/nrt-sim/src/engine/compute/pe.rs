//! The PE (tensor engine): LDWEIGHTS loads the stationary operand into the
//! array, MATMUL streams the moving operand through it into PSUM.
//!
//! Layouts and semantics follow `real-isa-observed` §3.3-3.4: the weights
//! pattern walks `rows` partitions (K) and `cols` elements (M) in reverse
//! order; MATMUL's accumulate byte holds start (bit 0) / stop (bit 1); with
//! the transpose flag the PSUM result keeps the input dtype (a bit-exact
//! move when the moving operand is the identity), otherwise it is fp32.

use super::operand::{self, Space};
use super::context::{ComputeContext, Done, OpError, OpResult};
use crate::port::Bus;
use crate::cost;
use crate::kernels::lowp::LowFormat;
use crate::kernels::pattern::{gather, gather_raw, scatter, scatter_raw};
use crate::kernels::pe::{AccFlags, Moving, Weights, matmul_moving_into_psum, matmul_transpose, matmul_transpose_raw};
use nrt_isa::dtype::{Dtype, Rounding};
use nrt_isa::instr::{LdWeights, Matmul};

fn check_origin(row_start: u8, col_start: u8) -> Result<(), OpError> {
    if row_start != 0 || col_start != 0 {
        return Err(OpError::Unsupported("row_start / col_start offsets (0 in every observed record)"));
    }
    Ok(())
}

/// LDWEIGHTS: gather `rows x cols` weights and keep them in the array.
pub(crate) fn ldweights(i: &LdWeights, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    check_origin(i.row_start, i.col_start)?;
    let dt = operand::dtype("weights", i.dtype)?;
    let w = operand::tensor3d("weights", &i.weights, usize::from(i.rows), dt)?;
    let chip = ctx.onchip();
    chip.check("weights", &w)?;
    if w.pattern.free_len() != usize::from(i.cols) {
        return Err(OpError::Bad(format!(
            "weights pattern enumerates {} elements per partition, expected cols = {}",
            w.pattern.free_len(),
            i.cols
        )));
    }
    // bf16 / fp16 / fp8 weights stay raw; the GEMM widens them while packing.
    // The compiler's walk (one backwards run per partition) is read forwards,
    // which is the logical column order, instead of gathered and reversed.
    let view = chip.view(w.space);
    let forward = w.pattern.reversed_as_forward(dt.size_bytes());
    let weights = match (LowFormat::of(dt), forward) {
        (Some(f), Some(fwd)) => Weights::from_raw_columns(gather_raw(&view, &fwd, f.size_bytes())?, f)?,
        (Some(f), None) => Weights::from_ldweights_raw(gather_raw(&view, &w.pattern, f.size_bytes())?, f)?,
        (None, Some(fwd)) => Weights::from_columns(gather(&view, &fwd, dt)?),
        (None, None) => Weights::from_ldweights_order(gather(&view, &w.pattern, dt)?),
    };
    ctx.state.weights = Some((weights, dt));
    Ok(Done { cycles: cost::ldweights_cycles(u64::from(i.rows)), output: None, oob: None, flops: 0 })
}

/// MATMUL: `psum (+)= weightsᵀ · moving`, or a transpose pass.
pub(crate) fn matmul(i: &Matmul, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    check_origin(i.row_start, i.col_start)?;
    let Some((weights, wdt)) = ctx.state.weights.as_ref() else {
        return Err(OpError::Bad("MATMUL before any LDWEIGHTS: the PE array holds no weights".into()));
    };
    let (k, m) = (usize::from(i.rows), usize::from(i.cols));
    if (weights.contraction(), weights.columns()) != (k, m) {
        return Err(OpError::Bad(format!(
            "rows x cols = {k}x{m}, but the loaded weights are {}x{}",
            weights.contraction(),
            weights.columns()
        )));
    }
    let dt = operand::dtype("moving", i.dtype)?;
    let moving = operand::tensor3d("moving", &i.moving, k, dt)?;
    let chip = ctx.onchip();
    chip.check("moving", &moving)?;
    let n = moving.pattern.free_len();
    let out_dt = if i.transpose { *wdt } else { Dtype::Float32 };
    let out = operand::tensor3d("psum", &i.psum, m, out_dt)?;
    if out.space != Space::Psum {
        return Err(OpError::Bad(format!(
            "output address {:#x} is in SBUF, expected PSUM (0x2000000 + offset)",
            i.psum.start.0
        )));
    }
    chip.check("psum", &out)?;
    let mut psum = chip.psum;
    if i.transpose {
        // The compiler's transpose (low-precision weights against the
        // identity) moves raw elements; anything else multiplies in fp32.
        let raw_t = match LowFormat::of(dt) {
            Some(format) if *wdt == dt => {
                let x = gather_raw(&chip.view(moving.space), &moving.pattern, format.size_bytes())?;
                matmul_transpose_raw(weights, &x, format)?
            }
            _ => None,
        };
        match raw_t {
            Some(t) => scatter_raw(&mut psum, &out.pattern, &t)?,
            None => {
                let x = gather(&chip.view(moving.space), &moving.pattern, dt)?;
                let t = matmul_transpose(weights, &x)?;
                scatter(&mut psum, &out.pattern, out_dt, &t, &mut Rounding::NearestEven)?;
            }
        }
    } else {
        let flags = AccFlags::from_bits(i.accumulate.to_u8())?;
        // bf16 / fp16 / fp8 operands are read raw and widened inside the GEMM.
        match LowFormat::of(dt) {
            Some(format) => {
                let raw = gather_raw(&chip.view(moving.space), &moving.pattern, format.size_bytes())?;
                matmul_moving_into_psum(&mut psum, &out.pattern, weights, Moving::Low { raw: &raw, format }, flags)?;
            }
            None => {
                let x = gather(&chip.view(moving.space), &moving.pattern, dt)?;
                matmul_moving_into_psum(&mut psum, &out.pattern, weights, Moving::Wide(&x), flags)?;
            }
        }
    }
    let cycles = cost::matmul_cycles(k as u64, m as u64, n as u64);
    // A multiply and an add per weight per moving element, transposes
    // included (the array does the same work against the identity).
    let flops = 2 * (k as u64) * (m as u64) * (n as u64);
    Ok(Done { cycles, output: Some(out), oob: None, flops })
}
