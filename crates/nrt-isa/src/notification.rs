//! The 16-byte notification-queue (NQ) record and NQ rings.
//!
//! Engines report to the host by writing 16-byte records into NQ rings in
//! device or host memory; the host polls them. The hardware layout
//! (little-endian):
//!
//! | bytes | bits | field |
//! |---|---|---|
//! | 0..3 | 0..20 | `program_counter`: instruction index (20 bits) |
//! | 2 | 20..24 | `debug_hint` (4 bits; high nibble of byte 2) |
//! | 3 | 24..29 | `notific_type` ([`NotificType`]) |
//! | 3 | 29 | software queue overflow |
//! | 3 | 30 | hardware queue overflow |
//! | 3 | 31 | phase (toggles on every ring wrap) |
//! | 4..8 | | `metadata_2` |
//! | 8..16 | | timestamp in picoseconds |
//!
//! Infer-status records put the runtime subtype ([`RuntimeSubtype`]) in the
//! high half of `metadata_2` and, for `Custom`, the sub-id
//! ([`CustomSubId`]) in the low half. The runtime's completion code reads the
//! same bytes positionally ([`ComplView`]); both views agree by construction.
//!
//! Submodules: [`types`] (code tables), [`error`] (error-ring records),
//! [`dma`] (DMA trace records), [`ring`] (ring arithmetic with the phase
//! bit).

pub mod dma;
pub mod error;
pub mod ring;
pub mod types;

pub use dma::{DmaCompletion, DmaEdge};
pub use error::{ErrorRecord, InferErrorSubtype};
pub use ring::{NqConsumer, NqProducer, NqRing, OverflowPolicy, PushOutcome};
pub use types::{CustomSubId, EngineEvent, NotificType, NqClass, NqEngine, RuntimeSubtype};

/// Size of one NQ record in bytes.
pub const NQ_RECORD_SIZE: usize = 16;
/// Largest program counter the 20-bit field holds.
pub const MAX_PROGRAM_COUNTER: u32 = (1 << 20) - 1;

const PC_MASK: u32 = MAX_PROGRAM_COUNTER;
const HINT_SHIFT: u32 = 20;
const TYPE_SHIFT: u32 = 24;
const SW_OVERFLOW_BIT: u32 = 1 << 29;
const HW_OVERFLOW_BIT: u32 = 1 << 30;
const PHASE_BIT: u32 = 1 << 31;

/// Why a record could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NqError {
    /// A field value does not fit its bit width.
    #[error("{field} = {value:#x} does not fit in {bits} bits")]
    FieldOverflow {
        /// Field name.
        field: &'static str,
        /// Value given.
        value: u32,
        /// Width of the field.
        bits: u32,
    },
    /// A record slice that is not 16 bytes.
    #[error("an NQ record is 16 bytes, got {0}")]
    WrongSize(usize),
    /// Ring memory not a power-of-two multiple of the record size.
    #[error("NQ ring of {0} bytes: size must be a power of two and at least 16")]
    BadRingSize(usize),
    /// Ring memory slice of the wrong length for the ring.
    #[error("NQ ring memory is {got} bytes, the ring is {expected}")]
    RingMemorySize {
        /// Bytes expected.
        expected: usize,
        /// Bytes supplied.
        got: usize,
    },
    /// Lossless ring full.
    #[error("NQ ring full: {entries} records pending and the overflow policy is lossless")]
    RingFull {
        /// Ring capacity in records.
        entries: u64,
    },
    /// An error-ring record with an unknown subtype.
    #[error("error record subtype {0} is unknown")]
    UnknownErrorSubtype(u8),
    /// An error-ring record naming an engine index outside 0..=4 / 0xFF.
    #[error("error record engine index {0} is not 0..=4 (PE, ACT, POOL, DVE, SP) or 0xFF (none)")]
    BadErrorEngine(u8),
    /// An error-ring record whose notific_type is not an error type.
    #[error("notific_type {0:#x} is not an error type (expected 0x03 or 0x1F)")]
    NotAnErrorRecord(u8),
}

/// One 16-byte notification record (generic hardware view).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct NotificationRecord {
    /// Instruction index of the reporting instruction (20 bits).
    pub program_counter: u32,
    /// Debug hint (4 bits): 0 silent, 1 drain to subscribers.
    pub debug_hint: u8,
    /// Raw `notific_type` (5 bits); see [`NotificationRecord::kind`].
    pub notific_type: u8,
    /// The software queue overflowed before this record.
    pub sw_overflow: bool,
    /// The hardware queue overflowed before this record.
    pub hw_overflow: bool,
    /// Phase bit: the producer's pass parity over the ring.
    pub phase: bool,
    /// Type-specific payload (infer status: subtype << 16 | custom sub-id).
    pub metadata_2: u32,
    /// Device timestamp in picoseconds.
    pub timestamp_ps: u64,
}

fn fits(field: &'static str, value: u32, bits: u32) -> Result<(), NqError> {
    if value >> bits == 0 { Ok(()) } else { Err(NqError::FieldOverflow { field, value, bits }) }
}

impl NotificationRecord {
    /// An infer-status record (START / END / CUSTOM ...) from engine
    /// notification type `kind`.
    pub fn infer_status(
        kind: NotificType,
        subtype: RuntimeSubtype,
        custom_sub_id: u16,
        program_counter: u32,
        timestamp_ps: u64,
    ) -> Self {
        NotificationRecord {
            program_counter,
            notific_type: kind.code(),
            metadata_2: (u32::from(subtype as u16) << 16) | u32::from(custom_sub_id),
            timestamp_ps,
            ..Default::default()
        }
    }

    /// Decode 16 bytes. Every bit pattern is a record, so this cannot fail;
    /// interpret codes with [`Self::kind`] / [`Self::runtime_subtype`].
    #[inline]
    pub fn from_bytes(b: &[u8; NQ_RECORD_SIZE]) -> Self {
        let word0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&b[8..16]);
        NotificationRecord {
            program_counter: word0 & PC_MASK,
            debug_hint: ((word0 >> HINT_SHIFT) & 0xF) as u8,
            notific_type: ((word0 >> TYPE_SHIFT) & 0x1F) as u8,
            sw_overflow: word0 & SW_OVERFLOW_BIT != 0,
            hw_overflow: word0 & HW_OVERFLOW_BIT != 0,
            phase: word0 & PHASE_BIT != 0,
            metadata_2: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            timestamp_ps: u64::from_le_bytes(ts),
        }
    }

    /// Decode from an untrusted slice that must be 16 bytes.
    pub fn from_slice(b: &[u8]) -> Result<Self, NqError> {
        let arr: &[u8; NQ_RECORD_SIZE] = b.try_into().map_err(|_| NqError::WrongSize(b.len()))?;
        Ok(Self::from_bytes(arr))
    }

    /// Encode to 16 bytes; fails when a field exceeds its bit width.
    pub fn to_bytes(&self) -> Result<[u8; NQ_RECORD_SIZE], NqError> {
        fits("program_counter", self.program_counter, 20)?;
        fits("debug_hint", u32::from(self.debug_hint), 4)?;
        fits("notific_type", u32::from(self.notific_type), 5)?;
        Ok(self.to_bytes_truncated())
    }

    /// Encodes with each narrow field cut to its width (program counter 20
    /// bits, debug hint 4, `notific_type` 5): the same bytes as
    /// [`Self::to_bytes`] for a record whose fields fit, without the
    /// checks, for a producer that writes records on its hot path.
    #[inline]
    pub fn to_bytes_truncated(&self) -> [u8; NQ_RECORD_SIZE] {
        let flag = |on: bool, bit: u32| if on { bit } else { 0 };
        let word0 = (self.program_counter & PC_MASK)
            | u32::from(self.debug_hint & 0xF) << HINT_SHIFT
            | u32::from(self.notific_type & 0x1F) << TYPE_SHIFT
            | flag(self.sw_overflow, SW_OVERFLOW_BIT)
            | flag(self.hw_overflow, HW_OVERFLOW_BIT)
            | flag(self.phase, PHASE_BIT);
        let mut out = [0u8; NQ_RECORD_SIZE];
        out[0..4].copy_from_slice(&word0.to_le_bytes());
        out[4..8].copy_from_slice(&self.metadata_2.to_le_bytes());
        out[8..16].copy_from_slice(&self.timestamp_ps.to_le_bytes());
        out
    }

    /// The typed `notific_type`, `None` for unassigned codes.
    pub fn kind(&self) -> Option<NotificType> {
        NotificType::from_code(self.notific_type)
    }

    /// Runtime subtype code (high half of `metadata_2`).
    pub fn subtype_code(&self) -> u16 {
        (self.metadata_2 >> 16) as u16
    }

    /// Custom sub-id code (low half of `metadata_2`).
    pub fn custom_sub_id_code(&self) -> u16 {
        self.metadata_2 as u16
    }

    /// The typed runtime subtype, `None` for codes the runtime rejects.
    pub fn runtime_subtype(&self) -> Option<RuntimeSubtype> {
        RuntimeSubtype::from_code(self.subtype_code())
    }

    /// The typed custom sub-id of a `Custom` record.
    pub fn custom_sub_id(&self) -> Option<CustomSubId> {
        match self.runtime_subtype() {
            Some(RuntimeSubtype::Custom) => CustomSubId::from_code(self.custom_sub_id_code()),
            _ => None,
        }
    }

    /// The runtime's positional view of the same record.
    pub fn compl_view(&self) -> Result<ComplView, NqError> {
        Ok(ComplView::from_bytes(&self.to_bytes()?))
    }
}

/// The runtime completion code's positional reading of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ComplView {
    /// u16 at +0: ISA instruction line, low 16 bits.
    pub isa_line: u16,
    /// Byte 2 (program-counter bits 16..20 and the debug hint).
    pub byte2: u8,
    /// Byte 3 (`notific_type` plus the overflow and phase bits).
    pub byte3: u8,
    /// u16 at +4: custom sub-id.
    pub custom_sub_id: u16,
    /// u16 at +6: runtime subtype.
    pub subtype: u16,
    /// u64 at +8: device timestamp.
    pub timestamp: u64,
}

impl ComplView {
    /// Read the fields by position.
    pub fn from_bytes(b: &[u8; NQ_RECORD_SIZE]) -> Self {
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&b[8..16]);
        ComplView {
            isa_line: u16::from_le_bytes([b[0], b[1]]),
            byte2: b[2],
            byte3: b[3],
            custom_sub_id: u16::from_le_bytes([b[4], b[5]]),
            subtype: u16::from_le_bytes([b[6], b[7]]),
            timestamp: u64::from_le_bytes(ts),
        }
    }

    /// The "NQ-id tag": `byte3 & 0x1F`, which is the hardware `notific_type`.
    pub fn nq_tag(&self) -> u8 {
        self.byte3 & 0x1F
    }

    /// The debug hint: high nibble of byte 2.
    pub fn debug_hint(&self) -> u8 {
        self.byte2 >> 4
    }

    /// The line number of out-of-bounds custom records: u16 at +0 combined
    /// with byte 2 shifted up 16.
    pub fn oob_line(&self) -> u32 {
        u32::from(self.isa_line) | u32::from(self.byte2) << 16
    }

    /// The runtime's fix-up for POOL custom records on arch > 2: keep the
    /// overflow and phase bits, retag as `PoolExplicit` (0x0E).
    pub fn retag_pool_explicit(record: &mut [u8; NQ_RECORD_SIZE]) {
        record[3] = (record[3] & 0xE0) | NotificType::PoolExplicit.code();
    }
}

#[cfg(test)]
mod tests;
