//! Execution of compute instructions (PE, ACT, DVE / POOL tensor ops) on
//! the numerical kernels.
//!
//! The sequencer decodes each record with `nrt_isa::instr::Instruction`
//! and hands every instruction it does not execute itself to [`execute`].
//! Each engine family has a module: [`pe`] (LDWEIGHTS / MATMUL), [`act`]
//! (ACTIVATE, ACTIVATION_TABLE_LOAD), [`tensor`] (TENSOR_TENSOR,
//! TENSOR_SCALAR, POOL, COPY, CAST, COPY_PREDICATED) and [`special`]
//! (STREAM_TRANSPOSE, IOTA / memset, EMBEDDING_UPDATE, DEBUG_TENSOR_READ). Operand addresses are resolved by
//! [`operand`]. An instruction's operands are gathered into dense f32 tiles
//! (or moved bit-exactly when no conversion is needed), the kernel runs, and
//! the result is scattered back; malformed operands become
//! [`DeviceFault::BadOperands`], which the sequencer turns into an error
//! notification naming the instruction.

pub mod act;
pub mod context;
pub mod operand;
pub mod pe;
pub mod special;
pub mod tensor;

pub use context::{ComputeContext, Cycles, DeviceFault, Done, EngineState};
use context::OpError;
use crate::kernels::pattern::OnChipWrite;
use crate::port::Bus;
use nrt_isa::dtype::{Rounding, f32_to_bytes};
use nrt_isa::instr::Instruction;
use operand::Operand;

/// Executes one compute instruction.
pub fn execute(instr: &Instruction, ctx: &mut ComputeContext<'_, impl Bus>) -> Result<Done, DeviceFault> {
    let opcode = instr.opcode().to_u8();
    let name = instr.opcode().name().unwrap_or("unknown");
    let engine = ctx.engine;
    let unsupported = |why| DeviceFault::UnsupportedInstruction { opcode, name, engine, why };
    let res = match instr {
        Instruction::LdWeights(i) => pe::ldweights(i, ctx),
        Instruction::Matmul(i) => pe::matmul(i, ctx),
        Instruction::Activate(i) => act::activate(i, ctx),
        Instruction::ActivationTableLoad(_) => Ok(act::table_load()),
        Instruction::TensorTensor(i) => tensor::tensor_tensor(i, ctx),
        Instruction::TensorScalar(i) => tensor::tensor_scalar(i, ctx),
        Instruction::Pool(i) => tensor::pool(i, ctx),
        Instruction::Copy(i) => tensor::copy(&i.src, i.in_dtype, &i.dst, i.out_dtype, i.partitions, ctx),
        Instruction::Cast(i) => tensor::copy(&i.src, i.in_dtype, &i.dst, i.out_dtype, i.partitions, ctx),
        Instruction::CopyPredicated(i) => tensor::copy_predicated(i, ctx),
        Instruction::StreamTranspose(i) => special::stream_transpose(i, ctx),
        Instruction::Iota(i) => special::iota(i, ctx),
        Instruction::Fill(i) => special::fill(i, ctx),
        Instruction::EmbeddingUpdate(i) => special::embedding_update(i, ctx),
        Instruction::DebugTensorRead(i) => special::debug_tensor_read(i, ctx),
        Instruction::LoadPoolArgument(_) | Instruction::ExtendedInst(_) => {
            return Err(unsupported("GpSimd (Q7) kernels arrive with custom-op support"));
        }
        Instruction::Raw { bytes } if nrt_isa::opcode::Opcode::from_u8(bytes[0]).is_pseudo() => {
            return Err(unsupported("pseudo-instructions are rewritten by the runtime before the device sees them"));
        }
        _ => return Err(unsupported("no typed layout for this opcode, or not a compute instruction")),
    };
    res.map_err(|e| match e {
        OpError::Bad(reason) => DeviceFault::BadOperands { opcode, name, reason },
        OpError::Kernel(k) => DeviceFault::BadOperands { opcode, name, reason: k.to_string() },
        OpError::Unsupported(why) => unsupported(why),
    })
}

/// Overwrites the first element of `out` with NaN (the `nan` fault's
/// evidence on a compute output). Integer outputs get the dtype's
/// conversion of NaN.
pub fn poison_first_element(ctx: &ComputeContext<'_, impl Bus>, out: &Operand) {
    let esize = out.dtype.size_bytes();
    let mut bytes = vec![0u8; esize];
    if f32_to_bytes(&[f32::NAN], out.dtype, &mut bytes, &mut Rounding::NearestEven).is_ok() {
        let mut view = ctx.onchip().view(out.space);
        view.write_partition(out.pattern.start_partition(), out.pattern.offset(), &bytes);
    }
}
