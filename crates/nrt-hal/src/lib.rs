//! The driver portal: the `Device` trait every backend implements, and the
//! per-architecture descriptions both sides read.
//!
//! - [`addr`]: typed device addresses and hardware ids.
//! - [`backend`]: the backends `NRT_DEVICE` chooses between.
//! - [`arch`]: trn1 / inf2 / trn2 / trn3 numbers.
//! - [`topology`]: instance types: devices, PCI addresses, routing ids,
//!   links, EFA NICs.
//! - [`device`]: the `Device` trait, discovery info, NQ and DMA ring types.
//! - [`error`]: the four device errors.
//! - [`reservation`]: exclusive core reservation through lock files.
//! - [`conformance`]: the backend-independent conformance suite.
//! - [`status`], [`status_read`]: the per-device datastore the tools read.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod addr;
pub mod arch;
pub mod backend;
pub mod conformance;
pub mod device;
pub mod error;
pub mod reservation;
pub mod status;
pub mod status_read;
pub mod topology;

pub use addr::{CoreId, DeviceAddr, DmaQueueId, EngineId};
pub use arch::{Arch, ArchDesc, HbmChannelDesc, InstanceType};
pub use backend::DeviceBackend;
pub use device::{
    Device, DeviceInfo, DmaQueueState, DmaQueueStatus, DmaRingConfig, EngineRun, EngineState,
    EngineWaitOn, HostWindow, MemoryLocation, NqRing, NqSpec, NqType, NQ_RECORD_BYTES,
};
pub use error::{HalError, HalResult};
pub use reservation::CoreReservation;
pub use topology::{PciBdf, Topology};
