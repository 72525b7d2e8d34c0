//! libnrt's C ABI over the `nrt` runtime core: builds `libnrt.so`
//! (SONAME `libnrt.so.1`) and `libnrt.a`.
//!
//! The exports are thin: each one goes through [`shim::call`] (panic
//! catching, status mapping, failure logging), checks its pointers with
//! the helpers in [`ptr`], resolves handles through the registries in
//! [`handles`] and hands the work to the runtime held in [`global`].
//! Symbol versions (NRT_2.0.0 for `nrt_*`, NRT_3.0.0 for `nrta_*`) are set
//! in [`symbols`] and the linker script `libnrt.map`.
//!
//! Modules by header: [`api_core`] (nrt.h lifecycle, counts, info, model
//! load/execute, memory stats, nrt_status.h, nrt_version.h), [`api_tensor`] (nrt.h
//! tensors and tensor sets), [`api_experimental`] (nrt_experimental.h),
//! [`api_async`] (nrt_async.h and the implicit-async callback),
//! [`api_instance`] (nrt.h's host device ids, routing ids, mapped HBM,
//! dma-buf and EFA queries), [`api_cc`] (collectives), [`api_profile`]
//! (nrt_profile.h), [`api_sys_trace`] (nrt_sys_trace.h), [`api_sendrecv`]
//! (nrt_async_sendrecv.h), [`api_nec`] (nec.h, version node NRT_2.0.0),
//! [`api_debug`] (ndebug_stream.h).

pub mod api_async;
pub mod api_cc;
pub mod api_debug;
pub mod api_core;
pub mod api_experimental;
pub mod api_instance;
pub mod api_nec;
pub mod api_profile;
pub mod api_sendrecv;
pub mod api_sys_trace;
pub mod api_tensor;
pub mod ctensor;
pub mod cmem;
pub mod global;
pub mod handles;
pub mod ptr;
pub mod shim;
pub mod status;
mod symbols;

pub use status::NRT_STATUS;
