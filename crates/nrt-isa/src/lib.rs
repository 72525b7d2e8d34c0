//! The bytes the NeuronCore executes.
