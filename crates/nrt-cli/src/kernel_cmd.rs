//! `nrt kernel build`: compiles a GPSIMD kernel crate to WebAssembly,
//! checks it against the device ABI and writes the library file (UCPL
//! header + module + kernel table, `docs/gpsimd.md` §2) that a NEFF's
//! `ucode_lib` entry carries.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Where cargo puts the kernel build: `--target-dir`, else
/// `$CARGO_TARGET_DIR/wasm-kernels`, else `<crate>/target`.
fn kernel_target_dir(crate_dir: &Path, explicit: Option<&Path>) -> PathBuf {
    if let Some(d) = explicit {
        return d.to_path_buf();
    }
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d).join("wasm-kernels"),
        None => crate_dir.join("target"),
    }
}

/// Builds the crate in `crate_dir` and writes the library to `output`
/// (default `<crate directory name>.ucpl` in the current directory).
pub fn build(crate_dir: &Path, output: Option<&Path>, target_dir: Option<&Path>) -> Result<()> {
    let target = kernel_target_dir(crate_dir, target_dir);
    let (lib, names) = nrt_sim::q7::build::build_library(crate_dir, &target)
        .with_context(|| format!("building kernel crate {}", crate_dir.display()))?;
    let out = match output {
        Some(p) => p.to_path_buf(),
        None => {
            let stem = crate_dir
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "kernels".into());
            PathBuf::from(format!("{stem}.ucpl"))
        }
    };
    let file = lib.to_file();
    std::fs::write(&out, &file).with_context(|| format!("writing {}", out.display()))?;
    println!("wrote {} ({} bytes: {}-byte module, {} kernels)", out.display(), file.len(), lib.wasm.len(), names.len());
    for (row, name) in lib.table.iter().zip(&names) {
        println!("  spec {:>3}  opcode {:#04x}  kernel {}  {name}", row.spec, row.opcode, row.func);
    }
    Ok(())
}
