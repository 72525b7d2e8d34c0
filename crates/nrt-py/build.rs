//! Empty on purpose: cargo resolves `[build-dependencies]` only for a
//! package with a build script, and Cargo.toml's `syn` entry is there so
//! that this package, built alone by maturin, shares the workspace build's
//! proc-macro crates (its comment says why).
fn main() {}
