//! The nrt-rs runtime core: what libnrt does between its C API and the
//! device, in safe Rust.
//!
//! It talks to devices only through `nrt-hal`'s [`Device`](nrt_hal::Device)
//! trait: it installs, lowers and stages bytes, rings doorbells and learns
//! results from notification queues (ARCHITECTURE.md, "the device only sees
//! bytes").
//!
//! Modules:
//! - [`status`]: the NRT_STATUS taxonomy and the error type.
//! - `config`, `log`, `topology`, `memory`, `runtime`: configuration from
//!   NEURON_RT_* variables, libnrt-format logging, virtual cores and
//!   reservation, the device memory allocator and ledger, the lifecycle.
//! - [`hosts`]: the one bring-up every entry point (C ABI, Python, the
//!   `nrt` command) uses: the runtime, its model hosts, its execution units.
//! - `program`, `load`, `model`, `tensor`, `exec`: the NEFF load pipeline,
//!   the model database, tensors, and execution (bind, stage, doorbell,
//!   harvest).
//! - [`custom_ops`]: the GPSIMD custom-op path (Q7 image, custom-op queues,
//!   library staging, the 0xCA lowering).
//! - [`cc`]: collectives between logical cores of the process, as DMA
//!   work on the devices (the ring schedule, its descriptors, the rendezvous).
//! - [`host_memory`]: host buffers sized by a caller, refused or
//!   allocated fallibly instead of aborting.
//! - [`transfer`]: tensor bytes between host and device (and device to
//!   device) through the cores' DMA queues: reads, writes, fills, copies,
//!   an execution's host-tensor staging.
//! - [`tensor_ops`]: element-wise cast and ADD / MIN / MAX of device
//!   tensors without a NEFF (nrtpy's `tensor_cast` / `tensor_compute`),
//!   run by the DMA engine.
//! - [`debug_stream`]: device prints (DEBUG_TENSOR_READ) drained from the
//!   engines' debug rings into per-logical-core streams (ndebug_stream.h).
//! - `xu`: asynchronous execution: execution units, their queues and
//!   workers, the `nrta_*` calls and implicit async mode.
//! - [`nec`]: the runtime side of nec.h (MLA / routing-id maps over the
//!   topology table, pods, semaphore doorbells, dynamic size tables).
//! - [`worker`]: the panic guard of the runtime's threads; [`inject`]: the
//!   runtime's own `NEURON_SIM_INJECT` kinds (failures of those threads).
#![forbid(unsafe_code)]

pub mod cache_line;
pub mod cc;
pub mod capi_support;
pub mod config;
pub mod custom_ops;
pub mod debug_stream;
pub mod exec;
pub mod host_memory;
pub mod hosts;
pub mod inject;
pub mod load;
pub mod log;
pub mod mapped;
pub mod memory;
pub mod model;
pub mod nec;
pub mod profile;
pub mod program;
pub mod runtime;
pub mod status;
mod sync;
pub mod tensor;
pub mod tensor_ops;
pub mod topology;
pub mod trace;
pub mod transfer;
pub mod worker;
pub mod xu;

pub use hosts::RuntimeHosts;
pub use runtime::{Lifecycle, Runtime, RuntimeOptions};
pub use status::{NrtError, NrtResult, NrtStatus, StatusPriority};
