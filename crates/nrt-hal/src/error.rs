//! The few errors a device can return.
//!
//! The portal is thin and trusting: the runtime validates once, so a device
//! only reports what a caller cannot foresee (memory exhausted, an address
//! or register index the device does not have, the device gone, a feature
//! it lacks, an OS call that failed) plus `Busy` when cores are reserved
//! by someone else.

use crate::device::MemoryLocation;
use crate::addr::DeviceAddr;

/// Result alias for device calls.
pub type HalResult<T> = Result<T, HalError>;

/// A device-level failure. Each variant names what was asked and what the
/// device could offer instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HalError {
    /// The memory pool cannot satisfy an allocation.
    #[error(
        "device out of memory: {requested} bytes (align {align}) requested from {location}, \
         largest free block is {largest_free} bytes of {capacity} bytes"
    )]
    OutOfMemory {
        /// Pool the allocation was asked from.
        location: MemoryLocation,
        /// Bytes requested.
        requested: u64,
        /// Alignment requested.
        align: u64,
        /// Largest contiguous free block at the time.
        largest_free: u64,
        /// Total size of the pool.
        capacity: u64,
    },
    /// An address, address range or register index the device does not have
    /// (or, for `free`, an address that is not the start of an allocation).
    #[error("invalid device address {addr} (+{len} bytes): {reason}")]
    InvalidAddress {
        /// First address of the offending access.
        addr: DeviceAddr,
        /// Length of the access in bytes.
        len: u64,
        /// What was wrong and what the device expected.
        reason: String,
    },
    /// The device stopped responding or was torn down.
    #[error("device lost: {reason}")]
    DeviceLost {
        /// Why the device is considered lost.
        reason: String,
    },
    /// Cores requested for reservation are held by another owner.
    #[error("cores {cores:?} of device {device} are already reserved ({holder})")]
    Busy {
        /// Device index.
        device: u32,
        /// The physical cores that could not be reserved.
        cores: Vec<u32>,
        /// Who holds them, as far as the lock files tell (e.g. "pid 1234").
        holder: String,
    },
    /// The device does not offer what was asked (a backend whose memory
    /// cannot be mapped into the process, say).
    #[error("not supported by this device: {reason}")]
    Unsupported {
        /// What is missing and why.
        reason: String,
    },
    /// An operating-system call the device needed failed (a file
    /// descriptor could not be made, say).
    #[error("{reason}")]
    System {
        /// The call, what it was for and the OS error.
        reason: String,
    },
}

impl HalError {
    /// Shorthand for an [`HalError::InvalidAddress`] with a reason.
    pub fn invalid(addr: DeviceAddr, len: u64, reason: impl Into<String>) -> HalError {
        HalError::InvalidAddress { addr, len, reason: reason.into() }
    }
}
