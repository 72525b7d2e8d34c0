//! `nrt kernel build` on the example kernel crate: a library file whose
//! header, table and module the device accepts, and clear errors for a
//! directory that is not a kernel crate.

mod common;

use std::path::PathBuf;
use std::process::Command;

fn nrt(args: &[&str]) -> std::process::Output {
    common::nrt_command().args(args).output().expect("run nrt")
}

fn wasm_target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d).join("wasm-kernels"),
        None => std::env::current_exe().unwrap().ancestors().nth(3).unwrap().join("wasm-kernels"),
    }
}

#[test]
fn builds_the_example_library() {
    if Command::new("rustup").arg("--version").output().is_err() {
        nrt_test_support::skip!("rustup is not installed (nrt kernel build needs the wasm32-unknown-unknown target)");
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../nrt-kernel/kernels/examples");
    let out = std::env::temp_dir().join(format!("nrt-kernel-build-{}.ucpl", std::process::id()));
    let target = wasm_target_dir();
    let o = nrt(&["kernel", "build", dir, "-o", out.to_str().unwrap(), "--target-dir", target.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("3 kernels"), "{text}");
    assert!(text.contains("spec   2  opcode 0xf0  kernel 2  softmax"), "{text}");
    let file = std::fs::read(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let lib = nrt_isa::ucode::LibraryImage::from_file(&file).unwrap();
    assert_eq!(lib.table.len(), 3);
    assert_eq!(nrt_sim::q7::wasm::check_library(&file).unwrap(), ["relu", "add", "softmax"]);
}

#[test]
fn a_directory_without_a_kernel_crate_is_refused() {
    let d = std::env::temp_dir().join(format!("nrt-kernel-empty-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let o = nrt(&["kernel", "build", d.to_str().unwrap(), "-o", d.join("x.ucpl").to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&d);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("nrt: error: building kernel crate") && err.contains("Cargo.toml"), "{err}");
}
