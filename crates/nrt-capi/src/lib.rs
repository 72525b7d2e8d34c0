//! libnrt's C ABI over the `nrt` runtime core.
//!
//! Will build `libnrt.so` (SONAME `libnrt.so.1`) and `libnrt.a` exporting the
//! public `nrt_*` / `nrta_*` functions under the NRT_2.0.0 / NRT_3.0.0 symbol
//! versions, with thin, panic-catching shims and no logic of its own.
//! Filled in by the C ABI issue.
