//! Execution of compute instructions (PE, ACT, DVE / POOL tensor ops) on
//! the numerical kernels.
//!
//! The sequencer decodes each record with `nrt_isa::instr::Instruction`
//! and hands every instruction it does not execute itself to [`execute`].
//! Each engine family has a module: [`pe`] (LDWEIGHTS / MATMUL), [`act`]
//! (ACTIVATE, ACTIVATION_TABLE_LOAD), [`tensor`] (TENSOR_TENSOR,
//! TENSOR_SCALAR, POOL, COPY, CAST, COPY_PREDICATED) and [`special`]
//! (STREAM_TRANSPOSE, IOTA / memset, EMBEDDING_UPDATE). Operand addresses are resolved by
//! [`operand`]. An instruction's operands are gathered into dense f32 tiles
//! (or moved bit-exactly when no conversion is needed), the kernel runs, and
//! the result is scattered back; malformed operands become
//! [`DeviceFault::BadOperands`], which the sequencer turns into an error
//! notification naming the instruction.

pub mod act;
pub mod operand;
pub mod pe;
pub mod special;
pub mod tensor;

use crate::core::Core;
use crate::kernels::KernelError;
use crate::kernels::pattern::OnChipWrite;
use crate::kernels::pe::Weights;
use crate::device::Shared;
use nrt_hal::EngineId;
use nrt_isa::dtype::{Rounding, f32_to_bytes};
use nrt_isa::instr::Instruction;
use operand::{OnChip, Operand};

/// What a compute instruction may touch. SBUF and PSUM are reached as
/// `[partition][bytes]` through [`Core::sbuf_view`] / [`Core::psum_view`]
/// (adapters to the kernels' `OnChipRead` / `OnChipWrite`).
pub struct ComputeContext<'a> {
    /// Architecture numbers (partition sizes).
    pub arch: &'static nrt_hal::ArchDesc,
    /// The engine executing.
    pub engine: EngineId,
    /// The core (SBUF, PSUM, semaphores).
    pub core: &'a Core,
    /// The device (HBM and host memory for table operands).
    pub dev: &'a Shared,
    /// State the engine keeps between instructions.
    pub state: &'a mut EngineState,
}

impl ComputeContext<'_> {
    fn onchip(&self) -> OnChip<'_> {
        OnChip { sbuf: self.core.sbuf_view(), psum: self.core.psum_view() }
    }
}

/// Per-engine state that outlives one instruction: the stationary operand
/// loaded into the PE array by LDWEIGHTS, used by every later MATMUL until
/// the next LDWEIGHTS (or a program start).
#[derive(Debug, Default, Clone)]
pub struct EngineState {
    /// The loaded weights and their element type.
    pub weights: Option<(Weights, nrt_isa::dtype::Dtype)>,
}

/// A device-side fault raised by an instruction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceFault {
    /// The opcode is not implemented by this device.
    #[error("unsupported instruction opcode {opcode:#04x} ({name}) on {engine}: {why}")]
    UnsupportedInstruction {
        /// Opcode byte.
        opcode: u8,
        /// Its name if known.
        name: &'static str,
        /// Engine that fetched it.
        engine: EngineId,
        /// Why it cannot run here.
        why: &'static str,
    },
    /// The instruction's operands are malformed or out of range.
    #[error("bad operands for {name} (opcode {opcode:#04x}): {reason}")]
    BadOperands {
        /// Opcode byte.
        opcode: u8,
        /// Instruction name.
        name: &'static str,
        /// What was wrong, and what was expected.
        reason: String,
    },
    /// NaN or Inf was produced.
    #[error("numerical error (NaN/Inf) in opcode {opcode:#04x}")]
    Numerical {
        /// Opcode byte.
        opcode: u8,
    },
}

/// Engine cycles a compute instruction took.
pub type Cycles = u64;

/// What an executed compute instruction reports back to the sequencer.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    /// Engine cycles taken (see `crate::cost`).
    pub cycles: Cycles,
    /// The operand the instruction wrote, if any (where an injected NaN goes).
    pub output: Option<Operand>,
    /// An out-of-bounds notification to raise (custom sub-id), the
    /// instruction having skipped the offending element.
    pub oob: Option<nrt_isa::notification::CustomSubId>,
}

/// Operand / kernel problems of one instruction, before the sequencer
/// names the instruction.
#[derive(Debug)]
pub(crate) enum OpError {
    /// A field or operand is wrong (text names it and the expectation).
    Bad(String),
    /// The kernels refused the operands.
    Kernel(KernelError),
    /// The instruction's option is not implemented.
    Unsupported(&'static str),
}

impl From<KernelError> for OpError {
    fn from(e: KernelError) -> Self {
        OpError::Kernel(e)
    }
}

impl From<String> for OpError {
    fn from(e: String) -> Self {
        OpError::Bad(e)
    }
}

/// Result type of the per-family executors.
pub(crate) type OpResult = Result<Done, OpError>;

/// Executes one compute instruction.
pub fn execute(instr: &Instruction, ctx: &mut ComputeContext<'_>) -> Result<Done, DeviceFault> {
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
        Instruction::EmbeddingUpdate(i) => special::embedding_update(i, ctx),
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
pub fn poison_first_element(ctx: &ComputeContext<'_>, out: &Operand) {
    let esize = out.dtype.size_bytes();
    let mut bytes = vec![0u8; esize];
    if f32_to_bytes(&[f32::NAN], out.dtype, &mut bytes, &mut Rounding::NearestEven).is_ok() {
        let mut view = ctx.onchip().view(out.space);
        view.write_partition(out.pattern.start_partition(), out.pattern.offset(), &bytes);
    }
}
