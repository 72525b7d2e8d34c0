//! Numerical kernels of the simulated engines (being written).
