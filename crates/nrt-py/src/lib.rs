//! Python bindings for the nrt-rs runtime.
//!
//! Will expose `import nrt` (PyO3 + numpy): load a NEFF, bind numpy arrays as
//! tensors, execute, and read results, over the `nrt` runtime core.
