//! The simulated NeuronCore device.

pub mod kernels;
