//! The ACT (scalar / activation) engine: ACTIVATE and
//! ACTIVATION_TABLE_LOAD.
//!
//! ACTIVATE computes `out = func(in · scale + bias)` with the bias an
//! immediate or, with `bias_from_sbuf`, one fp32 per partition read from
//! `bias_addr` (an SBUF operand address). The function tables the hardware
//! loads are implicit in our kernels, so ACTIVATION_TABLE_LOAD only costs
//! time.

use super::operand::{self, Operand, Space};
use super::context::{ComputeContext, Done, OpError, OpResult};
use crate::port::Bus;
use crate::cost;
use crate::kernels::activation::{ActFunc as K, activation};
use crate::kernels::pattern::{Pattern, gather, scatter};
use crate::kernels::simd::ScalarOperand;
use nrt_isa::dtype::{Dtype, Rounding};
use nrt_isa::instr::{ActFunc, Activate};
use nrt_isa::operand::Addr4;

/// Cycles of loading a function table.
pub const TABLE_LOAD_CYCLES: u64 = 128;

/// The kernel function of an instruction's function code.
pub(crate) fn kernel_func(f: ActFunc) -> Result<K, OpError> {
    Ok(match f {
        ActFunc::Identity => K::Identity,
        ActFunc::Relu => K::Relu,
        ActFunc::Gelu => K::Gelu,
        ActFunc::GeluTanh => K::GeluTanh,
        ActFunc::Tanh => K::Tanh,
        ActFunc::Sigmoid => K::Sigmoid,
        ActFunc::Exp => K::Exp,
        ActFunc::Log => K::Log,
        ActFunc::Rsqrt => K::Rsqrt,
        ActFunc::Reciprocal => K::Reciprocal,
        ActFunc::Silu => K::Silu,
        ActFunc::Sqrt => K::Sqrt,
        ActFunc::Square => K::Square,
        ActFunc::Abs => K::Abs,
        ActFunc::Sign => K::Sign,
        ActFunc::Softplus => K::Softplus,
        ActFunc::Erf | ActFunc::Sin | ActFunc::Cos => {
            return Err(OpError::Unsupported("activation functions erf, sin and cos have no kernel yet"));
        }
    })
}

/// ACTIVATION_TABLE_LOAD: accepted; the cost of a table load.
pub(crate) fn table_load() -> Done {
    Done { cycles: TABLE_LOAD_CYCLES, output: None, oob: None, flops: 0 }
}

/// ACTIVATE.
pub(crate) fn activate(i: &Activate, ctx: &mut ComputeContext<'_, impl Bus>) -> OpResult {
    let func = kernel_func(i.func)?;
    let parts = usize::from(i.partitions);
    let input = operand::tensor3d("input", &i.input, parts, operand::dtype("in_dtype", i.in_dtype)?)?;
    let output = operand::tensor3d("output", &i.output, parts, operand::dtype("out_dtype", i.out_dtype)?)?;
    let chip = ctx.onchip();
    chip.check("input", &input)?;
    chip.check("output", &output)?;
    if input.pattern.free_len() != output.pattern.free_len() {
        return Err(OpError::Bad(format!(
            "input has {} elements per partition, output {}",
            input.pattern.free_len(),
            output.pattern.free_len()
        )));
    }
    let x = gather(&chip.view(input.space), &input.pattern, input.dtype)?;
    let bias_col;
    let bias = if i.bias_from_sbuf {
        let (space, start, offset) = operand::locate("bias_addr", Addr4(i.bias_addr))?;
        let b = Operand { space, pattern: Pattern::contiguous(start, parts, offset, 1), dtype: Dtype::Float32 };
        if space != Space::Sbuf {
            return Err(OpError::Bad(format!("bias_addr {:#x} is not an SBUF address", i.bias_addr)));
        }
        chip.check("bias", &b)?;
        bias_col = gather(&chip.sbuf, &b.pattern, Dtype::Float32)?;
        ScalarOperand::PerPartition(bias_col.as_slice())
    } else {
        ScalarOperand::Imm(i.bias.get())
    };
    let y = activation(&x, func, ScalarOperand::Imm(i.scale.get()), bias)?;
    let mut dst = chip.view(output.space);
    scatter(&mut dst, &output.pattern, output.dtype, &y, &mut Rounding::NearestEven)?;
    Ok(Done { cycles: cost::lane_cycles(x.free() as u64), output: Some(output), oob: None, flops: 0 })
}
