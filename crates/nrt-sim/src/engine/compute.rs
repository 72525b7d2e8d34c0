//! Dispatch of compute instructions (MATMUL, ACTIVATE, TENSOR_* ...) to
//! the numerical kernels.
//!
//! The sequencer calls [`execute`] for every opcode it does not execute
//! itself. Wiring each opcode to `crate::kernels` happens here (one match
//! arm per instruction); until an opcode is wired, the device reports it
//! the way hardware reports an instruction it cannot run: an
//! unsupported-instruction device fault, which the sequencer turns into an
//! error notification.

use crate::core::Core;
use crate::engine::record::{Record, op};
use crate::memory::Memory;
use nrt_hal::EngineId;

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
    /// Device memory (HBM, host).
    pub memory: &'a Memory,
}

/// A device-side fault raised by an instruction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceFault {
    /// The opcode is not implemented by this device.
    #[error("unsupported instruction opcode {opcode:#04x} ({name}) on {engine}")]
    UnsupportedInstruction {
        /// Opcode byte.
        opcode: u8,
        /// Its name if known.
        name: &'static str,
        /// Engine that fetched it.
        engine: EngineId,
    },
    /// The instruction's operands are malformed or out of range.
    #[error("bad operands for opcode {opcode:#04x}: {reason}")]
    BadOperands {
        /// Opcode byte.
        opcode: u8,
        /// What was wrong.
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

/// Executes one compute instruction.
pub fn execute(rec: &Record, ctx: &mut ComputeContext<'_>) -> Result<Cycles, DeviceFault> {
    Err(DeviceFault::UnsupportedInstruction {
        opcode: rec.opcode,
        name: op::name(rec.opcode).unwrap_or("unknown"),
        engine: ctx.engine,
    })
}
