//! The simulated NeuronCore device.
