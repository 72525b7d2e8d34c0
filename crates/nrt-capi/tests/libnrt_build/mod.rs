//! Bringing libnrt.so up to date for the C tests, in the profile the test
//! binary itself was built with.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `cargo build --workspace --all-targets --profile P` for the profile whose
/// output directory holds the running test binary, and returns that
/// directory (where libnrt.so now is). `cargo test` does not rebuild the
/// cdylib, so without this a library left by an earlier build could be
/// stale; and a `cargo test --release` run must not build (and then miss)
/// the debug one. The whole workspace, not `-p nrt-capi`: cargo unifies
/// dependency features over the packages it builds, and `-p nrt-capi`
/// alone turns some off (memchr's `default`, from dev-dependencies),
/// which rebuilt object, wasmtime and cranelift a second time in every
/// `cargo test --workspace` run (minutes of CI); the workspace build is
/// the one the test command just did, so here it only links the cdylib.
pub fn libnrt_dir(repo: &Path) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile = exe.parent().and_then(|d| d.parent()).expect("profile dir").to_path_buf();
    let target = profile.parent().expect("target dir");
    let mut args = vec!["build".to_string(), "--workspace".into(), "--all-targets".into()];
    // `debug` holds what `cargo test` builds with the test profile: the
    // library is built with that profile so it links from the tests' own
    // artifacts (the dev profile has the same settings, Cargo.toml, but
    // naming the tests' profile keeps that true if they part). The other
    // directories carry their profile's name.
    let name = match profile.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "test",
        Some(name) => name,
    };
    args.extend(["--profile".to_string(), name.to_string()]);
    let status = Command::new(env!("CARGO"))
        .args(&args)
        .env("CARGO_TARGET_DIR", target)
        .current_dir(repo)
        .status()
        .expect("run cargo build --workspace --all-targets");
    assert!(status.success(), "cargo build --workspace --all-targets (for libnrt.so) failed");
    profile
}
