//! Builds the example kernel crates (crates/nrt-kernel/kernels) with the
//! real toolchain, once per test binary. Returns `None`, with the calling
//! test reported skipped, only when rustup is not installed.

use nrt_isa::ucode::LibraryImage;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

fn target_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(d).join("wasm-kernels");
    }
    // target/<profile>/deps/<test binary>
    let exe = std::env::current_exe().expect("test binary path");
    exe.ancestors().nth(3).expect("target dir above the test binary").join("wasm-kernels")
}

fn toolchain_ready() -> bool {
    let Ok(out) = Command::new("rustup").args(["target", "list", "--installed"]).output() else {
        return false;
    };
    if !String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == "wasm32-unknown-unknown") {
        let st = Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]).status().expect("run rustup");
        assert!(st.success(), "rustup target add wasm32-unknown-unknown failed");
    }
    true
}

/// The library built from `crates/nrt-kernel/kernels/<name>` and its kernel names.
pub fn kernel_library(name: &str) -> Option<(LibraryImage, Vec<String>)> {
    static READY: OnceLock<bool> = OnceLock::new();
    if !*READY.get_or_init(toolchain_ready) {
        nrt_test_support::skip!(return None; "rustup is not installed (the kernel crates build for wasm32-unknown-unknown)");
    }
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../nrt-kernel/kernels")).join(name);
    match nrt_sim::q7::build::build_library(&dir, &target_dir()) {
        Ok(r) => Some(r),
        Err(e) => panic!("building kernel crate {}: {e}", dir.display()),
    }
}
