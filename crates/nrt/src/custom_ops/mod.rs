//! The runtime's GPSIMD custom-op path (seeds 000 and 001): everything the
//! host does so a model's POOL stream can hand ops to the eight Q7 cores.
//!
//! - [`ucode`]: the Q7 image and `nrt_set_pool_eng_ucode`'s state rules
//!   (stored before init, silently replacing the stock image at init).
//! - [`queues`]: the queue-bundle table, the custom-op queue classifier
//!   and the staging walk that picks one queue per Q7 core.
//! - [`libs`]: staging a model's libraries (the single extended-ISA
//!   library shared per core, multi-library sets per model) and the
//!   resolver table.
//! - [`q7`]: a core's Q7 cluster brought up (image install, stdio rings,
//!   run-stall release) and its stdio drained into the log.
//! - [`lower`]: PSEUDO_EMBEDDING_UPDATE (0xCA) lowered into the fixed POOL
//!   micro-program around LOAD_POOL_ARGUMENT (0x107A).
//!
//! The host never runs a kernel: it installs, stages and lowers at
//! init/load, rings one doorbell per execution and reaps completion.

pub mod libs;
pub mod lower;
pub mod q7;
pub mod queues;
pub mod ucode;

pub use libs::{LibStaging, StagedLibSet};
pub use lower::{CustomOpEnv, lower_pseudo_embedding_update};
pub use queues::{CustomOpQueue, is_custom_op_dma, stage_custom_op_queues};
pub use q7::{Q7Cluster, Q7Setup};
pub use ucode::{Q7Image, resolve_install_image};
