//! The NRT_STATUS taxonomy: libnrt's public status values and names, the
//! worst-status ranking used when several cores report, and the error type
//! every fallible runtime call returns.

use std::fmt;

macro_rules! statuses {
    ($( $(#[doc = $doc:literal])* $variant:ident = $value:literal, $name:literal; )*) => {
        /// A public `NRT_STATUS` value (nrt_status.h); the numbers are ABI.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        pub enum NrtStatus {
            $( $(#[doc = $doc])* $variant = $value, )*
        }

        impl NrtStatus {
            /// Every status, in numeric order.
            pub const ALL: &'static [NrtStatus] = &[ $( NrtStatus::$variant, )* ];

            /// The C name, e.g. `NRT_EXEC_BAD_INPUT`.
            pub const fn name(self) -> &'static str {
                match self { $( NrtStatus::$variant => $name, )* }
            }

            /// The status with this numeric value, if it is one.
            pub const fn from_code(code: i32) -> Option<NrtStatus> {
                match code { $( $value => Some(NrtStatus::$variant), )* _ => None }
            }
        }
    };
}

statuses! {
    /// The call succeeded.
    Success = 0, "NRT_SUCCESS";
    /// A non-specific failure.
    Failure = 1, "NRT_FAILURE";
    /// An argument or input was invalid.
    Invalid = 2, "NRT_INVALID";
    /// A handle (model, tensor, set) does not name a live object.
    InvalidHandle = 3, "NRT_INVALID_HANDLE";
    /// Out of a resource (device memory, queue slots, ...).
    Resource = 4, "NRT_RESOURCE";
    /// An execution did not complete within NEURON_RT_EXEC_TIMEOUT.
    Timeout = 5, "NRT_TIMEOUT";
    /// A hardware error.
    HwError = 6, "NRT_HW_ERROR";
    /// An execution queue is full; nothing was queued.
    QueueFull = 7, "NRT_QUEUE_FULL";
    /// Not enough NeuronCores for the load.
    LoadNotEnoughNc = 9, "NRT_LOAD_NOT_ENOUGH_NC";
    /// The NEFF's version or feature bits are newer than this runtime.
    UnsupportedNeffVersion = 10, "NRT_UNSUPPORTED_NEFF_VERSION";
    /// Host memory allocation failed (deprecated, kept for compatibility).
    FailHostMemAlloc = 11, "NRT_FAIL_HOST_MEM_ALLOC";
    /// The runtime is not initialised (nrt_init not called).
    Uninitialized = 13, "NRT_UNINITIALIZED";
    /// The runtime was closed.
    Closed = 14, "NRT_CLOSED";
    /// A queue is empty.
    QueueEmpty = 15, "NRT_QUEUE_EMPTY";
    /// An execution unit hit a fatal fault and takes no more work.
    ExecUnitUnrecoverable = 101, "NRT_EXEC_UNIT_UNRECOVERABLE";
    /// Input tensors do not match the model.
    ExecBadInput = 1002, "NRT_EXEC_BAD_INPUT";
    /// The execution completed, but produced NaN.
    ExecCompletedWithNumErr = 1003, "NRT_EXEC_COMPLETED_WITH_NUM_ERR";
    /// The execution completed with an error.
    ExecCompletedWithErr = 1004, "NRT_EXEC_COMPLETED_WITH_ERR";
    /// The NeuronCore is busy.
    ExecNcBusy = 1005, "NRT_EXEC_NC_BUSY";
    /// An out-of-bounds access (indirect DMA, embedding update).
    ExecOob = 1006, "NRT_EXEC_OOB";
    /// A collective operation is pending.
    CollPending = 1100, "NRT_COLL_PENDING";
    /// Collectives hardware error or hang.
    ExecHwErrCollectives = 1200, "NRT_EXEC_HW_ERR_COLLECTIVES";
    /// Uncorrectable HBM error.
    ExecHwErrHbmUe = 1201, "NRT_EXEC_HW_ERR_HBM_UE";
    /// Uncorrectable on-chip (NeuronCore SRAM) memory error.
    ExecHwErrNcUe = 1202, "NRT_EXEC_HW_ERR_NC_UE";
    /// A DMA engine aborted.
    ExecHwErrDmaAbort = 1203, "NRT_EXEC_HW_ERR_DMA_ABORT";
    /// A software notification queue overflowed.
    ExecSwNqOverflow = 1204, "NRT_EXEC_SW_NQ_OVERFLOW";
    /// Uncorrectable HBM error that a reload can repair.
    ExecHwErrRepairableHbmUe = 1205, "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE";
    /// The network proxy failed.
    NetworkProxyFailure = 1206, "NRT_NETWORK_PROXY_FAILURE";
}

/// How bad a status is when picking one out of several cores' results
/// (libnrt's `nrt_get_status_priority`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StatusPriority {
    /// Success.
    None = 0,
    /// An ordinary failure.
    Medium = 1,
    /// Timeouts, hardware errors, collectives and NQ trouble.
    High = 2,
    /// The device state is undefined (memory errors, DMA abort, OOB...).
    Critical = 3,
}

impl NrtStatus {
    /// The numeric value.
    pub const fn code(self) -> i32 {
        self as i32
    }

    /// The ranking libnrt applies to per-core results.
    pub const fn priority(self) -> StatusPriority {
        priority_of(self.code())
    }

    /// The worse of two statuses; on a tie the first is kept, as libnrt does.
    pub fn worst(self, other: NrtStatus) -> NrtStatus {
        if other.priority() > self.priority() { other } else { self }
    }

    /// Whether a failure with this status is one a user would report,
    /// so it is logged with the infodump block: the statuses libnrt ranks
    /// high or critical (timeouts, hardware and device errors,
    /// collectives and NQ trouble). Argument and usage errors are not.
    pub const fn is_reportable(self) -> bool {
        matches!(self.priority(), StatusPriority::High | StatusPriority::Critical)
    }

    /// Whether the execution still produced its outputs (only NaN and
    /// "completed with error" are soft).
    pub const fn is_soft(self) -> bool {
        matches!(self, NrtStatus::ExecCompletedWithNumErr | NrtStatus::ExecCompletedWithErr)
    }
}

/// `nrt_get_status_priority` over any integer, known status or not.
pub const fn priority_of(code: i32) -> StatusPriority {
    match code {
        0 => StatusPriority::None,
        5 | 6 => StatusPriority::High,
        1004 => StatusPriority::Critical,
        1200 | 1204 | 1206 => StatusPriority::High,
        1005..=1203 => StatusPriority::Critical,
        1205 => StatusPriority::Critical,
        _ => StatusPriority::Medium,
    }
}

impl fmt::Display for NrtStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}

/// The error every fallible runtime call returns: the status the C API
/// reports and a message naming what was wrong and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NrtError {
    /// The status the C API returns.
    pub status: NrtStatus,
    /// What went wrong, for the log line.
    pub message: String,
}

impl NrtError {
    /// An error with `status` and `message`.
    pub fn new(status: NrtStatus, message: impl Into<String>) -> Self {
        NrtError { status, message: message.into() }
    }

    /// NRT_INVALID with `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        NrtError::new(NrtStatus::Invalid, message)
    }

    /// NRT_FAILURE with `message`.
    pub fn failure(message: impl Into<String>) -> Self {
        NrtError::new(NrtStatus::Failure, message)
    }

    /// NRT_RESOURCE with `message`.
    pub fn resource(message: impl Into<String>) -> Self {
        NrtError::new(NrtStatus::Resource, message)
    }

    /// The same status with `what` in front of the message ("what: message").
    pub fn context(self, what: std::fmt::Arguments<'_>) -> Self {
        NrtError { status: self.status, message: format!("{what}: {}", self.message) }
    }
}

impl fmt::Display for NrtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status.name(), self.message)
    }
}

impl std::error::Error for NrtError {}

/// Result of a runtime call.
pub type NrtResult<T> = Result<T, NrtError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_libnrts() {
        let expected = [
            (0, "NRT_SUCCESS"),
            (1, "NRT_FAILURE"),
            (2, "NRT_INVALID"),
            (3, "NRT_INVALID_HANDLE"),
            (4, "NRT_RESOURCE"),
            (5, "NRT_TIMEOUT"),
            (6, "NRT_HW_ERROR"),
            (7, "NRT_QUEUE_FULL"),
            (9, "NRT_LOAD_NOT_ENOUGH_NC"),
            (10, "NRT_UNSUPPORTED_NEFF_VERSION"),
            (11, "NRT_FAIL_HOST_MEM_ALLOC"),
            (13, "NRT_UNINITIALIZED"),
            (14, "NRT_CLOSED"),
            (15, "NRT_QUEUE_EMPTY"),
            (101, "NRT_EXEC_UNIT_UNRECOVERABLE"),
            (1002, "NRT_EXEC_BAD_INPUT"),
            (1003, "NRT_EXEC_COMPLETED_WITH_NUM_ERR"),
            (1004, "NRT_EXEC_COMPLETED_WITH_ERR"),
            (1005, "NRT_EXEC_NC_BUSY"),
            (1006, "NRT_EXEC_OOB"),
            (1100, "NRT_COLL_PENDING"),
            (1200, "NRT_EXEC_HW_ERR_COLLECTIVES"),
            (1201, "NRT_EXEC_HW_ERR_HBM_UE"),
            (1202, "NRT_EXEC_HW_ERR_NC_UE"),
            (1203, "NRT_EXEC_HW_ERR_DMA_ABORT"),
            (1204, "NRT_EXEC_SW_NQ_OVERFLOW"),
            (1205, "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE"),
            (1206, "NRT_NETWORK_PROXY_FAILURE"),
        ];
        assert_eq!(NrtStatus::ALL.len(), expected.len());
        for (code, name) in expected {
            let s = NrtStatus::from_code(code).unwrap();
            assert_eq!((s.code(), s.name()), (code, name));
        }
        assert_eq!(NrtStatus::from_code(8), None);
        assert_eq!(NrtStatus::from_code(12), None);
    }

    #[test]
    fn priorities_follow_libnrts_table() {
        use StatusPriority::*;
        let table = [
            (0, None),
            (1, Medium),
            (2, Medium),
            (5, High),
            (6, High),
            (1003, Medium),
            (1004, Critical),
            (1005, Critical),
            (1006, Critical),
            (1100, Critical),
            (1199, Critical),
            (1200, High),
            (1201, Critical),
            (1202, Critical),
            (1203, Critical),
            (1204, High),
            (1205, Critical),
            (1206, High),
            (1207, Medium),
            (-1, Medium),
        ];
        for (code, p) in table {
            assert_eq!(priority_of(code), p, "status {code}");
        }
    }

    #[test]
    fn worst_keeps_the_first_on_ties() {
        use NrtStatus::*;
        assert_eq!(Success.worst(Timeout), Timeout);
        assert_eq!(Timeout.worst(ExecSwNqOverflow), Timeout);
        assert_eq!(ExecSwNqOverflow.worst(Timeout), ExecSwNqOverflow);
        assert_eq!(Timeout.worst(ExecHwErrDmaAbort), ExecHwErrDmaAbort);
        assert_eq!(ExecCompletedWithNumErr.worst(Failure), ExecCompletedWithNumErr);
    }
}
