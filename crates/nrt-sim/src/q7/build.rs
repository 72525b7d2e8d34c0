//! Building a kernel library crate into a library file: cargo for
//! `wasm32-unknown-unknown` with `+simd128` (release), then the ABI check
//! and the UCPL packing. Used by `nrt kernel build`, the tests and the
//! benches.

use super::wasm;
use nrt_isa::ucode::LibraryImage;
use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

/// The wasm target kernels are built for.
pub const KERNEL_TARGET: &str = "wasm32-unknown-unknown";

/// Why a kernel crate did not become a library.
#[derive(Debug, Error)]
pub enum BuildError {
    /// `cargo` could not be run.
    #[error("cannot run cargo: {0}")]
    Cargo(std::io::Error),
    /// cargo failed (its stderr is included).
    #[error("cargo build for {KERNEL_TARGET} failed in {dir}:\n{stderr}")]
    Failed {
        /// The crate directory.
        dir: PathBuf,
        /// cargo's error output.
        stderr: String,
    },
    /// No Cargo.toml, or no cdylib output.
    #[error("{0}")]
    Layout(String),
    /// The module does not follow the kernel ABI.
    #[error("the kernel library does not follow the GPSIMD ABI: {0}")]
    Abi(String),
}

/// The `.wasm` artifact's stem: the `[lib]` name if set, else the
/// `[package]` name, with `-` turned into `_` as cargo does.
fn artifact_name(manifest: &str) -> Option<String> {
    let (mut section, mut package, mut lib) = (String::new(), None, None);
    for line in manifest.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            section = l.to_string();
            continue;
        }
        if let Some(rest) = l.strip_prefix("name") {
            let Some(v) = rest.trim_start().strip_prefix('=') else { continue };
            let v = v.trim().trim_matches('"').replace('-', "_");
            match section.as_str() {
                "[package]" => package = Some(v),
                "[lib]" => lib = Some(v),
                _ => {}
            }
        }
    }
    lib.or(package)
}

/// Runs cargo on the kernel crate in `dir` with build output under
/// `target_dir`; returns the `.wasm` bytes.
pub fn cargo_build(dir: &Path, target_dir: &Path) -> Result<Vec<u8>, BuildError> {
    let manifest_path = dir.join("Cargo.toml");
    let manifest = std::fs::read_to_string(&manifest_path)
        .map_err(|e| BuildError::Layout(format!("{}: {e} (a kernel crate needs a Cargo.toml)", manifest_path.display())))?;
    let name = artifact_name(&manifest)
        .ok_or_else(|| BuildError::Layout(format!("{}: no [package] name", manifest_path.display())))?;
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .arg("build")
        .arg("--release")
        .arg("--target")
        .arg(KERNEL_TARGET)
        .arg("--manifest-path")
        .arg(&manifest_path)
        .env("CARGO_TARGET_DIR", target_dir)
        .env("RUSTFLAGS", "-C target-feature=+simd128")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .output()
        .map_err(BuildError::Cargo)?;
    if !out.status.success() {
        return Err(BuildError::Failed { dir: dir.to_path_buf(), stderr: String::from_utf8_lossy(&out.stderr).into_owned() });
    }
    let wasm = target_dir.join(KERNEL_TARGET).join("release").join(format!("{name}.wasm"));
    std::fs::read(&wasm).map_err(|e| {
        BuildError::Layout(format!("{}: {e} (is the crate a cdylib with crate-type = [\"cdylib\"]?)", wasm.display()))
    })
}

/// Packs a kernel module into a library: checks the ABI, lists the
/// kernels and registers kernel `i` as `{spec i, 0xF0, i}`.
pub fn library_from_wasm(wasm_bytes: Vec<u8>) -> Result<(LibraryImage, Vec<String>), BuildError> {
    let probe = LibraryImage::new(wasm_bytes, Vec::new());
    let names = wasm::check_library(&probe.to_file()).map_err(BuildError::Abi)?;
    if names.len() > 256 {
        return Err(BuildError::Abi(format!("{} kernels; EXTENDED_INST's spec byte addresses at most 256", names.len())));
    }
    let lib = LibraryImage::with_sequential_table(probe.wasm, names.len() as u32);
    Ok((lib, names))
}

/// Builds the crate in `dir` into a library (see [`cargo_build`] and
/// [`library_from_wasm`]).
pub fn build_library(dir: &Path, target_dir: &Path) -> Result<(LibraryImage, Vec<String>), BuildError> {
    library_from_wasm(cargo_build(dir, target_dir)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_names_follow_cargo() {
        let m = "[package]\nname = \"nrt-kernel-examples\"\nversion = \"0.1.0\"\n[lib]\nname = \"other\"\n";
        assert_eq!(artifact_name(m).as_deref(), Some("other"));
        assert_eq!(artifact_name("[package]\nname = \"nrt-kernel-examples\"\n").as_deref(), Some("nrt_kernel_examples"));
        assert_eq!(artifact_name("[dependencies]\nname = \"x\"\n"), None);
    }
}
