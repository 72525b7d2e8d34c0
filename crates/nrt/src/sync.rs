//! The atomics and locks the lock-free hand-offs are written against:
//! std's here; crates/nrt-loom compiles the same files against loom's
//! (its own `sync` module), so the models check the code that ships.

pub(crate) use std::sync::{Condvar, Mutex, atomic};
