//! The atomics the lock-free protocols are written against: std's here;
//! crates/nrt-loom compiles the same protocol files against loom's (its
//! own `sync` module), so the models check the code that ships.

pub(crate) use std::sync::atomic;
