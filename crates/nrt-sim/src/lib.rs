//! The simulated NeuronCore device (the embedded default backend).
//!
//! It implements [`nrt_hal::Device`] by interpreting bytes in its own
//! memory, as the hardware does: instruction records fetched by five
//! sequencers per core, 16-byte DMA descriptors walked on a tail
//! increment, semaphores and events behind the EVT_SEM window, and
//! notification records written into rings the runtime polls.
//!
//! - [`config`]: `NEURON_SIM_*` configuration and its builder.
//! - [`device`]: [`SimDevice`], its shared state, the one implementation
//!   of the doors below, the `Device` impl.
//! - [`port`]: the memory door (`Bus`) every worker reads and writes
//!   device memory through.
//! - [`signals`]: the signal door (`Signals`, `Env`): register stores,
//!   wakes, task scheduling.
//! - [`memory`]: lazily backed pools, allocator, address map.
//! - [`core`]: one NeuronCore's state.
//! - [`semaphore`]: the EVT_SEM unit.
//! - [`dma`]: queues, descriptors and transfers.
//! - [`nq`]: notification rings and the record format.
//! - [`engine`]: sequencers and compute dispatch.
//! - [`scheduler`]: cooperative stepping (pool or deterministic).
//! - [`cost`]: virtual durations.
//! - [`fault`]: fault injection.
//! - [`wake`]: targeted wake-ups of blocked sequencers.
//! - [`status`]: the memory-mapped datastore the tools read.
//! - [`kernels`]: the numerical kernels of the compute engines.
//! - [`q7`]: the POOL engine's eight Q7 cores running WebAssembly
//!   custom-op kernels (`docs/gpsimd.md`).
//!
//! The device infrastructure (everything but `kernels`) contains no
//! `unsafe` outside `memory::slab` and `status` (the datastore's mapping), which hands out the pages' bytes from
//! huge-page-sized slabs; the memory core is built on per-page locks.
//! `deny(unsafe_code)` enforces it: those two modules alone allow it.
//!
//! The layout (tiers, doors, who sees what) is described in the crate's
//! README and checked by `tests/layout.rs`.

#![deny(unsafe_code)]

pub mod config;
pub mod core;
pub mod cost;
pub mod device;
pub mod dma;
pub mod engine;
pub mod fault;
#[allow(unsafe_code)]
pub mod kernels;
pub mod memory;
pub mod nq;
pub mod port;
pub mod q7;
pub mod scheduler;
pub mod semaphore;
pub mod signals;
pub mod status;
mod sync;
pub mod wake;

pub use config::{ConfigError, SimConfig, SimConfigBuilder};
pub use device::SimDevice;
pub use fault::{FaultKind, FaultSpec, InstrSelector, Trigger};
