//! The types every compute family shares: what an instruction may touch
//! ([`ComputeContext`]), what it reports ([`Done`], [`DeviceFault`]) and
//! the engine state kept between instructions. A leaf of the compute
//! module: the families ([`super::pe`], [`super::act`], [`super::tensor`],
//! [`super::special`]) and their dispatch ([`super::execute`]) all build
//! on it.

use super::operand::{OnChip, Operand};
use crate::kernels::KernelError;
use crate::kernels::pe::Weights;
use crate::port::Bus;
use nrt_hal::EngineId;

/// What a compute instruction may touch: the core's SBUF and PSUM as
/// `[partition][bytes]` views (adapters to the kernels' `OnChipRead` /
/// `OnChipWrite`), device memory through `dev` (table operands in HBM or
/// host memory), and the engine's own state. Not the core, not the device.
pub struct ComputeContext<'a, B> {
    /// Architecture numbers (partition sizes).
    pub arch: &'static nrt_hal::ArchDesc,
    /// The engine executing.
    pub engine: EngineId,
    /// The core's SBUF and PSUM.
    pub chip: OnChip<'a>,
    /// Device memory (HBM and host memory for table operands).
    pub dev: &'a B,
    /// State the engine keeps between instructions.
    pub state: &'a mut EngineState,
}

impl<'a, B: Bus> ComputeContext<'a, B> {
    /// The on-chip views.
    pub(crate) fn onchip(&self) -> OnChip<'a> {
        self.chip
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
    /// Floating-point operations of the PE array (two per
    /// multiply-accumulate of a MATMUL; 0 for every other instruction),
    /// published to the status file for the tools' FLOPS.
    pub flops: u64,
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

