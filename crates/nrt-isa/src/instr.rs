//! Typed instructions: one variant per opcode whose layout is known (or
//! defined by us), each encoding to and decoding from a 64-byte record.
//!
//! Decoding is strict: every payload byte is either a field of the layout or
//! must be zero, so `encode(decode(bytes)) == bytes` whenever decode
//! succeeds. Opcodes without a layout decode to [`Instruction::Raw`], which
//! re-encodes exactly; [`Instruction::decode_or_raw`] also falls back to raw
//! for records that break their layout, so any stream decodes losslessly.
//!
//! All layouts live in `instr/layouts.rs` (one table entry each), with the origin of
//! each (observed in a real NEFF, taken from the runtime, or ours).

pub mod dma_operand;
pub mod enums;
pub mod field;
mod layouts;
pub mod slots;
pub mod sync;

pub use dma_operand::{DmaAccess, VarRef};
pub use enums::{
    Accumulate, ActFunc, AluOp, BranchCmp, BranchTarget, CollectiveType, DataSource, DtypeCode,
    DtypePair, PseudoSub, ReduceOp, ResetTarget,
};
pub use field::{F32Bits, Field, Name};
pub use layouts::*;
pub use sync::{ExtUpdate, ExtWait};

use crate::record::{
    EVENTS_OFFSET, Events, INST_WORD_LEN, PAYLOAD_OFFSET, RECORD_SIZE, RecordBytes, RecordStream,
    StreamError,
};
use thiserror::Error;

/// Where a layout comes from; docs/isa.md tags every layout with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutOrigin {
    /// Decoded from a real compiler NEFF.
    Observed,
    /// Taken from the runtime's own record builders (seeds).
    Runtime,
    /// Defined by us where no fact exists; expected to change when a real
    /// sample shows the hardware's layout.
    Ours,
}

/// One field of a layout: its name, record offset and owned byte spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// Field (and assembler key) name.
    pub name: &'static str,
    /// Byte offset in the record.
    pub offset: usize,
    /// `(start, len)` spans relative to `offset`.
    pub spans: &'static [(usize, usize)],
    /// Rust type of the field.
    pub ty: &'static str,
    /// What the field means.
    pub doc: &'static str,
}

impl FieldSpec {
    /// Total bytes the field owns.
    pub fn width(&self) -> usize {
        self.spans.iter().map(|&(_, len)| len).sum()
    }
}

/// A layout as a whole: mnemonic, opcode, origin, meaning and fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutInfo {
    /// Assembler mnemonic.
    pub mnemonic: &'static str,
    /// Opcode.
    pub opcode: crate::opcode::Opcode,
    /// Where the layout comes from.
    pub origin: LayoutOrigin,
    /// What the instruction does.
    pub doc: &'static str,
    /// Its fields.
    pub fields: &'static [FieldSpec],
}

/// The parts of the header and events block every typed instruction keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Head {
    /// Trace command (+2).
    pub debug_cmd: u8,
    /// Debug hint (+3).
    pub debug_hint: u8,
    /// Events block (+4).
    pub events: Events,
}

impl Head {
    /// A head that only carries events.
    pub fn with_events(events: Events) -> Head {
        Head {
            events,
            ..Head::default()
        }
    }

    fn read(rec: &RecordBytes) -> Head {
        Head {
            debug_cmd: rec[2],
            debug_hint: rec[3],
            events: Events::read_at(rec, EVENTS_OFFSET),
        }
    }

    fn write(&self, rec: &mut RecordBytes, opcode: u8) {
        rec[0] = opcode;
        rec[1] = INST_WORD_LEN;
        rec[2] = self.debug_cmd;
        rec[3] = self.debug_hint;
        self.events.write_at(rec, EVENTS_OFFSET);
    }

    #[cfg(test)]
    fn from_entropy(e: &mut field::Entropy) -> Head {
        let b: [u8; 10] = e.array();
        Head {
            debug_cmd: b[0],
            debug_hint: b[1],
            events: Events::from_u64(u64::from_le_bytes(b[2..10].try_into().expect("8 bytes"))),
        }
    }
}

/// Why a record does not fit the layout of its opcode.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// `inst_word_len` is not 0x10.
    #[error("{mnemonic}: inst_word_len is {found:#04x}, expected 0x10")]
    WordLen {
        /// Layout being decoded.
        mnemonic: &'static str,
        /// Byte found at +1.
        found: u8,
    },
    /// A byte the layout does not use is not zero.
    #[error(
        "{mnemonic}: byte +{offset:#04x} is {found:#04x}, expected 0 (not a field of this layout)"
    )]
    Reserved {
        /// Layout being decoded.
        mnemonic: &'static str,
        /// Offset of the byte.
        offset: usize,
        /// Its value.
        found: u8,
    },
    /// A field holds a value the layout does not allow.
    #[error("{mnemonic}: field `{field}` at +{offset:#04x} is invalid, expected {expected}")]
    Field {
        /// Layout being decoded.
        mnemonic: &'static str,
        /// Field name.
        field: &'static str,
        /// Field offset.
        offset: usize,
        /// What the bytes should have been.
        expected: &'static str,
    },
}

/// Why a named field could not be set from assembler text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetFieldError {
    /// The instruction has no field of that name.
    Unknown,
    /// The text is not a valid value; names what was expected.
    Value(&'static str),
}

fn check_layout(
    rec: &RecordBytes,
    mnemonic: &'static str,
    fields: &[FieldSpec],
) -> Result<(), DecodeError> {
    if rec[1] != INST_WORD_LEN {
        return Err(DecodeError::WordLen {
            mnemonic,
            found: rec[1],
        });
    }
    let mut owned = [false; RECORD_SIZE];
    for f in fields {
        for &(start, len) in f.spans {
            for b in &mut owned[f.offset + start..f.offset + start + len] {
                *b = true;
            }
        }
    }
    for offset in PAYLOAD_OFFSET..RECORD_SIZE {
        if !owned[offset] && rec[offset] != 0 {
            return Err(DecodeError::Reserved {
                mnemonic,
                offset,
                found: rec[offset],
            });
        }
    }
    Ok(())
}

impl Instruction {
    /// Decodes a record strictly: opcodes with a layout must fit it; other
    /// opcodes give [`Instruction::Raw`].
    pub fn decode(rec: &RecordBytes) -> Result<Instruction, DecodeError> {
        Instruction::decode_known(rec).unwrap_or(Ok(Instruction::Raw { bytes: *rec }))
    }

    /// Decodes a record, keeping it raw if it does not fit its layout.
    pub fn decode_or_raw(rec: &RecordBytes) -> Instruction {
        Instruction::decode(rec).unwrap_or(Instruction::Raw { bytes: *rec })
    }

    /// The events block (read from the bytes for raw records).
    pub fn events(&self) -> Events {
        match self.head() {
            Some(h) => h.events,
            None => Events::read_at(&self.encode(), EVENTS_OFFSET),
        }
    }
}

/// Decodes a whole stream; records that fit no layout stay raw.
pub fn decode_stream(bytes: &[u8]) -> Result<Vec<Instruction>, StreamError> {
    Ok(RecordStream::new(bytes)?
        .iter()
        .map(Instruction::decode_or_raw)
        .collect())
}

/// Encodes instructions back to a stream.
pub fn encode_stream(instrs: &[Instruction]) -> Vec<u8> {
    instrs.iter().flat_map(|i| i.encode()).collect()
}

#[cfg(test)]
mod tests;
