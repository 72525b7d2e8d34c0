//! What the workspace's tests share.
//!
//! A test that cannot run here (a tool, a library or the compiler's sample
//! NEFF is missing) must not pass silently: it ends through [`skip!`],
//! which writes one marker line, `SKIPPED: <test> - <reason>`, that
//! `scripts/test-all` counts as skipped (and takes off the runner's
//! passed count) and lists with its reason above the closing line.
//!
//! The crate's own integration tests are the workspace-level checks: the
//! documentation against the source (links, stated counts, the
//! dependency diagram).

pub mod skip;

pub use skip::{MARKER, report};

/// The repository's root (the directory holding the workspace `Cargo.toml`).
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository root exists")
}
