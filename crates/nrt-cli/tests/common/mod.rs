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

/// (header, data) of an .npy file.
pub fn read_npy(path: &std::path::Path) -> (nrt_neff::NpyHeader, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let h = nrt_neff::npy::parse_npy_header(&path.display().to_string(), &bytes).unwrap();
    let data = bytes[h.data_offset..].to_vec();
    (h, data)
}

/// Whether libfabric (`libfabric.so.1`) is installed, which `--processes`
/// runs need; the calling test reports itself skipped if not.
pub fn libfabric_installed() -> bool {
    let found = Command::new("ldconfig").arg("-p").output().map(|o| String::from_utf8_lossy(&o.stdout).contains("libfabric.so.1")).unwrap_or(false);
    if !found {
        nrt_test_support::skip!(return false; "libfabric.so.1 is not installed (Debian package libfabric1; scripts/test-all installs it)");
    }
    true
}
