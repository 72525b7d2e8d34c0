//! Driver portal backend for real Neuron hardware.
//!
//! Will implement `nrt-hal`'s `Device` trait over `/dev/neuron*` through the
//! kernel driver's ioctl ABI (spec/neuron-facts.md §3), feature-gated so that
//! machines without the driver build and test without it.
