//! What the command's integration tests share: the `nrt` binary as a
//! command that reserves its cores in a directory of its own.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh directory for one invocation's core reservations
/// (`XDG_RUNTIME_DIR`).
pub fn lock_dir() -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let d = std::env::temp_dir().join(format!("nrt-cli-test-locks-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `nrt` with its own reservation directory: each invocation brings the
/// runtime up as libnrt.so does and reserves every core it may use, so
/// tests running side by side would otherwise find each other's cores
/// taken.
pub fn nrt_command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nrt"));
    c.env("XDG_RUNTIME_DIR", lock_dir());
    c
}
