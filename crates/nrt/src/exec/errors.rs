//! Error model: NQ records decoded and mapped to NRT statuses.
//!
//! Error-ring records carry an infer-error subtype (seed 001 §5.3); custom
//! notifications on the engines' rings report out-of-bounds accesses. What
//! each means for the execution:
//!
//! | evidence | status | engine keeps running? |
//! |---|---|---|
//! | NUMERICAL | 1003 when numerical-error reporting is on, else success | yes |
//! | TRANSIENT | 1004 | yes |
//! | SW_SEQUENCER | 1004 | no: the sequencer halted |
//! | GPSIMD exception (Q7 kernel trap) | 1004 | no: the POOL engine halted |
//! | ECC uncorrectable (SBUF/PSUM parity) | 1202 | no |
//! | ECC correctable | none (logged) | yes |
//! | DMA abort | 1203 | no (the queue is ABORTED) |
//! | HBM uncorrectable / repairable | 1201 / 1205 | no |
//! | CUSTOM sub-id 0..=5, 9, 10 (OOB) | 1006 | yes |
//! | CUSTOM sub-id 6, 7, 8 | none | yes |

use crate::status::NrtStatus;
use nrt_isa::notification::{CustomSubId, InferErrorSubtype};

/// What one piece of device evidence does to an execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The status it contributes (`Success` for none).
    pub status: NrtStatus,
    /// The reporting engine stopped: no END will come, finish now.
    pub stops_engine: bool,
}

impl Verdict {
    const NONE: Verdict = Verdict { status: NrtStatus::Success, stops_engine: false };
    const fn keep(status: NrtStatus) -> Verdict {
        Verdict { status, stops_engine: false }
    }
    const fn stop(status: NrtStatus) -> Verdict {
        Verdict { status, stops_engine: true }
    }
}

/// Maps an error-ring subtype. `numerical_errors` is whether numerical-error
/// reporting is enabled (NEURON_RT_NUMERICAL_ERRORS_VERBOSITY=critical or
/// NEURON_FAIL_ON_NAN=1).
pub fn error_verdict(subtype: InferErrorSubtype, numerical_errors: bool) -> Verdict {
    match subtype {
        InferErrorSubtype::Numerical if numerical_errors => Verdict::keep(NrtStatus::ExecCompletedWithNumErr),
        InferErrorSubtype::Numerical => Verdict::NONE,
        InferErrorSubtype::Transient => Verdict::keep(NrtStatus::ExecCompletedWithErr),
        InferErrorSubtype::SwSequencer => Verdict::stop(NrtStatus::ExecCompletedWithErr),
        InferErrorSubtype::EccUncorrectable => Verdict::stop(NrtStatus::ExecHwErrNcUe),
        InferErrorSubtype::EccCorrectable => Verdict::NONE,
        InferErrorSubtype::DmaAbort => Verdict::stop(NrtStatus::ExecHwErrDmaAbort),
        InferErrorSubtype::HbmUncorrectable => Verdict::stop(NrtStatus::ExecHwErrHbmUe),
        InferErrorSubtype::HbmRepairable => Verdict::stop(NrtStatus::ExecHwErrRepairableHbmUe),
        // A Q7 kernel trapped; the POOL engine halted (docs/gpsimd.md §8).
        InferErrorSubtype::GpsimdException => Verdict::stop(NrtStatus::ExecCompletedWithErr),
    }
}

/// Maps a custom notification's sub-id code (subtype 6).
pub fn custom_verdict(sub_id: u16) -> Verdict {
    match CustomSubId::from_code(sub_id) {
        Some(
            CustomSubId::EmbeddingUpdateOob
            | CustomSubId::EmbeddingUpdateOobLine
            | CustomSubId::IndirectCopyOob
            | CustomSubId::IndirectCopyOobAlt
            | CustomSubId::ScalarDgeOob
            | CustomSubId::VectorDgeOob
            | CustomSubId::ScalarDgeTransposeOob
            | CustomSubId::VectorDgeTransposeOob,
        ) => Verdict::keep(NrtStatus::ExecOob),
        Some(CustomSubId::DebugValue | CustomSubId::TensorCompletion | CustomSubId::DebugTensorRead) => Verdict::NONE,
        // libnrt: "unknown custom notification type", status 6.
        None => Verdict::keep(NrtStatus::HwError),
    }
}

/// Whether a status leaves the model usable (success and the soft
/// "completed with" statuses) or poisons it (fail-stop).
pub fn poisons(status: NrtStatus, engine_stopped: bool) -> bool {
    engine_stopped || !(status == NrtStatus::Success || status.is_soft())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_subtype_maps_as_the_table_says() {
        use InferErrorSubtype as S;
        assert_eq!(error_verdict(S::Numerical, true).status.code(), 1003);
        assert_eq!(error_verdict(S::Numerical, false).status, NrtStatus::Success);
        assert_eq!(error_verdict(S::Transient, false), Verdict::keep(NrtStatus::ExecCompletedWithErr));
        assert_eq!(error_verdict(S::SwSequencer, false).status.code(), 1004);
        assert!(error_verdict(S::SwSequencer, false).stops_engine);
        assert_eq!(error_verdict(S::EccUncorrectable, false).status.code(), 1202);
        assert_eq!(error_verdict(S::EccCorrectable, false).status, NrtStatus::Success);
        assert_eq!(error_verdict(S::DmaAbort, false).status.code(), 1203);
        assert_eq!(error_verdict(S::HbmUncorrectable, false).status.code(), 1201);
        assert_eq!(error_verdict(S::HbmRepairable, false).status.code(), 1205);
        // Agrees with nrt-isa's own table wherever that one names a status.
        for s in [S::Numerical, S::Transient, S::SwSequencer, S::EccUncorrectable, S::DmaAbort, S::HbmUncorrectable, S::HbmRepairable, S::GpsimdException] {
            assert_eq!(s.nrt_status(), Some(error_verdict(s, true).status.code() as u32));
        }
    }

    #[test]
    fn custom_notifications() {
        for oob in [0u16, 1, 2, 3, 4, 5, 9, 10] {
            assert_eq!(custom_verdict(oob).status.code(), 1006);
        }
        for benign in [6u16, 7, 8] {
            assert_eq!(custom_verdict(benign).status, NrtStatus::Success);
        }
        assert_eq!(custom_verdict(0x77).status.code(), 6);
    }

    #[test]
    fn poisoning() {
        assert!(!poisons(NrtStatus::Success, false));
        assert!(!poisons(NrtStatus::ExecCompletedWithNumErr, false));
        assert!(poisons(NrtStatus::ExecCompletedWithErr, true));
        assert!(poisons(NrtStatus::Timeout, false));
        assert!(poisons(NrtStatus::ExecOob, false));
    }
}
