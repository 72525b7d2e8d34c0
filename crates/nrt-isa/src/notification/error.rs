//! Error-ring records (NQ class `Error`, ring #2).
//!
//! The runtime reads error records with a different layout in the same 16
//! bytes; that layout is not public, so this one is ours. It keeps the
//! generic header word (program counter, notific_type `Error` 0x03 or
//! `TpbError` 0x1F, overflow and phase bits) and the timestamp, and packs
//! `metadata_2` as:
//!
//! | bits | field |
//! |---|---|
//! | 0..8 | infer-error subtype ([`InferErrorSubtype`]) |
//! | 8..16 | engine index (0 PE, 1 ACT, 2 POOL, 3 DVE, 4 SP; 0xFF none) |
//! | 16..32 | detail (e.g. DMA queue id, semaphore, bank) |

use super::{NotificType, NotificationRecord, NqEngine, NqError};

/// What went wrong, and how the runtime maps it to `NRT_STATUS`.
///
/// NUMERICAL 1, TRANSIENT 2 and SW_SEQUENCER 8 are the runtime's codes; the
/// hardware-fault kinds use codes 16.. of ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum InferErrorSubtype {
    /// NaN/Inf produced: status 1003 (COMPLETED_WITH_NUM_ERR).
    Numerical = 1,
    /// Transient failure: status 1004 (COMPLETED_WITH_ERR).
    Transient = 2,
    /// Sequencer error: status 1004 plus the sequencer error text.
    SwSequencer = 8,
    /// Ours: uncorrectable on-chip memory error: status 1202 (HW_ERR_NC_UE).
    EccUncorrectable = 16,
    /// Ours: corrected memory error: logged, status unchanged.
    EccCorrectable = 17,
    /// Ours: a DMA engine aborted: status 1203 (HW_ERR_DMA_ABORT).
    DmaAbort = 18,
    /// Ours: uncorrectable HBM error: status 1201 (HW_ERR_HBM_UE).
    HbmUncorrectable = 19,
    /// Ours: repairable HBM error: status 1205 (HW_ERR_REPAIRABLE_HBM_UE).
    HbmRepairable = 20,
    /// Ours: a GPSIMD (Q7) kernel trapped or could not be dispatched; the
    /// detail is `(q7 << 8) | cause` ([`crate::ucode::GpsimdCause`]) and
    /// the POOL engine stops: status 1004 (COMPLETED_WITH_ERR).
    GpsimdException = 21,
}

impl InferErrorSubtype {
    /// The subtype with code `code`.
    pub fn from_code(code: u8) -> Option<Self> {
        use InferErrorSubtype::*;
        [Numerical, Transient, SwSequencer, EccUncorrectable, EccCorrectable, DmaAbort, HbmUncorrectable, HbmRepairable, GpsimdException]
            .into_iter()
            .find(|s| *s as u8 == code)
    }

    /// The `NRT_STATUS` value this error sets, `None` when it only logs.
    pub fn nrt_status(self) -> Option<u32> {
        match self {
            InferErrorSubtype::Numerical => Some(1003),
            InferErrorSubtype::Transient | InferErrorSubtype::SwSequencer | InferErrorSubtype::GpsimdException => Some(1004),
            InferErrorSubtype::EccUncorrectable => Some(1202),
            InferErrorSubtype::EccCorrectable => None,
            InferErrorSubtype::DmaAbort => Some(1203),
            InferErrorSubtype::HbmUncorrectable => Some(1201),
            InferErrorSubtype::HbmRepairable => Some(1205),
        }
    }
}

/// A typed error-ring record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ErrorRecord {
    /// `Error` (engine-level) or `TpbError` (TPB-level).
    pub kind: NotificType,
    /// Instruction index that faulted (20 bits).
    pub program_counter: u32,
    /// What went wrong.
    pub subtype: InferErrorSubtype,
    /// Engine that reported it, if any.
    pub engine: Option<NqEngine>,
    /// Kind-specific detail.
    pub detail: u16,
    /// Device timestamp in picoseconds.
    pub timestamp_ps: u64,
}

impl ErrorRecord {
    /// Pack into a generic record (phase and overflow bits clear; the ring
    /// producer sets the phase).
    pub fn to_record(&self) -> NotificationRecord {
        let engine = self.engine.map_or(0xFF, |e| e as u32);
        NotificationRecord {
            program_counter: self.program_counter,
            notific_type: self.kind.code(),
            metadata_2: u32::from(self.subtype as u8) | engine << 8 | u32::from(self.detail) << 16,
            timestamp_ps: self.timestamp_ps,
            ..Default::default()
        }
    }

    /// Interpret a generic record read from an error ring.
    pub fn from_record(rec: &NotificationRecord) -> Result<Self, NqError> {
        let kind = match rec.kind() {
            Some(k @ (NotificType::Error | NotificType::TpbError)) => k,
            _ => return Err(NqError::NotAnErrorRecord(rec.notific_type)),
        };
        let code = rec.metadata_2 as u8;
        let subtype = InferErrorSubtype::from_code(code).ok_or(NqError::UnknownErrorSubtype(code))?;
        let engine = match (rec.metadata_2 >> 8) as u8 {
            0xFF => None,
            i => Some(NqEngine::from_index(i).ok_or(NqError::BadErrorEngine(i))?),
        };
        Ok(ErrorRecord {
            kind,
            program_counter: rec.program_counter,
            subtype,
            engine,
            detail: (rec.metadata_2 >> 16) as u16,
            timestamp_ps: rec.timestamp_ps,
        })
    }
}
