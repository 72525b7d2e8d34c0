//! The one place that says which opcodes a loaded program may contain.
//!
//! An opcode is accepted when the device executes it (the sequencer's
//! control set and the compute instructions the simulator's kernels run)
//! or when the lowering rewrites it into such instructions. Everything
//! else fails the load with libnrt's "Unsupported hardware operator code"
//! message, naming the engine and the instruction index.

use nrt_isa::opcode::Opcode;

/// What the lowering does with a record of a given opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpcodeHandling {
    /// Copied to the device image as is.
    Execute,
    /// Rewritten by the lowering (PSEUDO_DMA_TRIGGER and the 0xD4 DMA ->
    /// queue-tail writes; EXIT -> a branch to the postamble;
    /// PSEUDO_EMBEDDING_UPDATE -> the custom-op micro-program).
    Lower,
    /// Consumed at load; emits nothing (block labels).
    Drop,
    /// Not executable and not lowered: the load fails.
    Unsupported,
}

/// Control instructions the device's sequencer executes itself.
const SEQUENCER: &[u8] = &[0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA6, 0xA8, 0xA9, 0xB0, 0xB1, 0xB3];

/// Compute instructions the device's engines execute: the nrt-isa layouts
/// the simulator's `engine::compute` dispatches to kernels, and EXTENDED_INST,
/// which hands a custom op to the POOL engine's Q7 cores. (LOAD_POOL_ARGUMENT
/// is only ever produced by the lowering, never accepted from a NEFF.)
const COMPUTE: &[Opcode] = &[
    Opcode::LdWeights,
    Opcode::Matmul,
    Opcode::Activate,
    Opcode::ActivationTableLoad,
    Opcode::TensorTensorArith,
    Opcode::TensorScalarArith,
    Opcode::Pool,
    Opcode::Copy,
    Opcode::Cast,
    Opcode::Fill,
    Opcode::CopyPredicatedReduce,
    Opcode::StreamTranspose,
    Opcode::Iota,
    Opcode::EmbeddingUpdate,
    Opcode::DebugTensorRead,
    Opcode::ExtendedInst,
];

/// The compiler's 0xD4 DMA pseudo-instruction (`dma2d`), lowered to
/// descriptor-ring work on the issuing engine's dynamic queue set.
pub const DMA_DIRECT2D_OPCODE: u8 = 0xD4;

/// PSEUDO_EMBEDDING_UPDATE, the compiler's GPSIMD custom-op pseudo,
/// lowered to the POOL micro-program around LOAD_POOL_ARGUMENT.
pub const CUSTOM_OP_OPCODE: u8 = 0xCA;

/// PSEUDO_TRIGGER_COLLECTIVE, lowered to the records `cc::neff` composes
/// for the collective at load.
pub const TRIGGER_COLLECTIVE_OPCODE: u8 = 0xC8;

/// PSEUDO_INST sub-opcode EXIT_EXECUTION (the program terminator).
pub const PSEUDO_EXIT_SUB: u8 = 1;

/// How the load treats `record` (decided from byte 0 and, for PSEUDO_INST,
/// the sub-opcode at +0x0C).
pub fn handling(record: &[u8; 64]) -> OpcodeHandling {
    let op = record[0];
    if SEQUENCER.contains(&op) || COMPUTE.iter().any(|c| c.to_u8() == op) {
        return OpcodeHandling::Execute;
    }
    match Opcode::from_u8(op) {
        Opcode::PseudoDmaTrigger | Opcode::PseudoDmaDirect2d | Opcode::PseudoEmbeddingUpdate | Opcode::PseudoTriggerCollective => OpcodeHandling::Lower,
        Opcode::PseudoBranchLabel => OpcodeHandling::Drop,
        Opcode::PseudoInst if record[0x0C] == PSEUDO_EXIT_SUB => OpcodeHandling::Lower,
        _ => OpcodeHandling::Unsupported,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(op: u8, sub: u8) -> [u8; 64] {
        let mut r = [0u8; 64];
        r[0] = op;
        r[1] = 0x10;
        r[0x0C] = sub;
        r
    }

    #[test]
    fn control_compute_pseudo_and_unknown() {
        assert_eq!(handling(&rec(0xA0, 0)), OpcodeHandling::Execute);
        assert_eq!(handling(&rec(0x02, 0)), OpcodeHandling::Execute);
        assert_eq!(handling(&rec(0xC1, 0)), OpcodeHandling::Lower);
        assert_eq!(handling(&rec(0xDF, 1)), OpcodeHandling::Lower);
        assert_eq!(handling(&rec(0xDF, 2)), OpcodeHandling::Unsupported);
        assert_eq!(handling(&rec(0xCC, 0)), OpcodeHandling::Drop);
        assert_eq!(handling(&rec(0xD4, 0)), OpcodeHandling::Lower);
        assert_eq!(handling(&rec(0xB1, 0)), OpcodeHandling::Execute, "the compiler's per-stream prologue record runs as a no-op");
        assert_eq!(handling(&rec(0x00, 0)), OpcodeHandling::Unsupported);
        assert_eq!(handling(&rec(0x68, 0)), OpcodeHandling::Unsupported, "GATHER has no kernel yet");
        assert_eq!(handling(&rec(0x7A, 0)), OpcodeHandling::Unsupported, "LOAD_POOL_ARGUMENT comes from the lowering only");
        assert_eq!(handling(&rec(0xCA, 0)), OpcodeHandling::Lower);
        assert_eq!(handling(&rec(0xC8, 0)), OpcodeHandling::Lower, "collectives are lowered at load");
        assert_eq!(handling(&rec(0xF0, 0)), OpcodeHandling::Execute);
        assert_eq!(handling(&rec(0xB8, 0)), OpcodeHandling::Unsupported, "DMAMEMCPY has no public layout");
    }
}
