//! The bytes the simulated (and real) NeuronCore executes.
//!
//! Module map (see docs/isa.md):
//! - `record`, `opcode`, `operand`, `instr`, `addr`, `asm`: the 64-byte
//!   instruction records, their opcodes, operand sub-structs, typed
//!   instructions, the on-chip address map, and the text assembler /
//!   disassembler.
//! - `collective`: PSEUDO_TRIGGER_COLLECTIVE (0xC8) checked into a plannable collective.
//! - `debug_ring`: the ring DEBUG_TENSOR_READ writes tiles into for the host.
//! - `dtype`: element types (nrt_dtype_t) and their conversions.
//! - `dma_desc`: the 16-byte DMA descriptors the DMA engines walk.
//! - `notification`: the 16-byte notification-queue (NQ) records.
//! - `ucode`: GPSIMD custom-op images, argument blocks, library sets,
//!   stdio rings and Q7 CSRs (`docs/gpsimd.md`).
//!
//! Typical use: [`instr::decode_stream`] turns an engine's `.bin` stream into
//! [`instr::Instruction`]s (typed where the layout is known, raw otherwise,
//! always re-encodable byte for byte); [`asm::assemble`] and
//! [`asm::disassemble`] convert between bytes and the text form;
//! [`instr::slots`] builds the exact records the runtime emits when it lowers
//! pseudo-instructions.

pub mod addr;
pub mod asm;
pub mod collective;
pub mod debug_ring;
pub mod dma_desc;
pub mod dtype;
pub mod instr;
pub mod notification;
pub mod opcode;
pub mod operand;
pub mod record;
pub mod ucode;
