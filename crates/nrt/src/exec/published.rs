//! What an execution tells the device's datastore (`docs/status-file.md`):
//! its outcome, error class and latencies, counted with a few atomic adds
//! so the allocation-free execute path stays so.

use crate::NrtStatus;
use nrt_hal::status::{ErrorClass, Outcome};

/// neuron-monitor's execution outcome and error class of a status.
pub fn classify(status: NrtStatus) -> (Outcome, Option<ErrorClass>) {
    match status {
        NrtStatus::Success => (Outcome::Completed, None),
        NrtStatus::ExecCompletedWithNumErr => (Outcome::CompletedWithNumErr, Some(ErrorClass::Numerical)),
        NrtStatus::ExecBadInput | NrtStatus::Invalid | NrtStatus::InvalidHandle => (Outcome::IncorrectInput, Some(ErrorClass::Model)),
        NrtStatus::Timeout => (Outcome::TimedOut, Some(ErrorClass::Transient)),
        NrtStatus::QueueFull | NrtStatus::ExecNcBusy => (Outcome::FailedToQueue, Some(ErrorClass::Transient)),
        NrtStatus::HwError
        | NrtStatus::ExecHwErrCollectives
        | NrtStatus::ExecHwErrHbmUe
        | NrtStatus::ExecHwErrNcUe
        | NrtStatus::ExecHwErrDmaAbort
        | NrtStatus::ExecHwErrRepairableHbmUe
        | NrtStatus::ExecUnitUnrecoverable => (Outcome::CompletedWithErr, Some(ErrorClass::Hardware)),
        NrtStatus::ExecCompletedWithErr | NrtStatus::ExecOob => (Outcome::CompletedWithErr, Some(ErrorClass::Generic)),
        _ => (Outcome::CompletedWithErr, Some(ErrorClass::Runtime)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_monitor_counters() {
        assert_eq!(classify(NrtStatus::Success), (Outcome::Completed, None));
        assert_eq!(classify(NrtStatus::ExecCompletedWithNumErr).1, Some(ErrorClass::Numerical));
        assert_eq!(classify(NrtStatus::Timeout).0, Outcome::TimedOut);
        assert_eq!(classify(NrtStatus::ExecHwErrHbmUe).1, Some(ErrorClass::Hardware));
        assert_eq!(classify(NrtStatus::ExecBadInput).0, Outcome::IncorrectInput);
    }
}
