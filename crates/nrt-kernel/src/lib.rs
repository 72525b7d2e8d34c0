//! SDK for GPSIMD custom-op kernels.
//!
//! Will hold the `no_std` kernel-side API (argument descriptors, Q7 memory
//! windows, SPMD core id, stdio ring) that custom-op kernels compile against
//! for the wasm32 target the simulated POOL engine's Q7 cores execute.
#![no_std]
