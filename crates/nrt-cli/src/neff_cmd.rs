//! `nrt neff unpack` and `nrt neff pack`.

use anyhow::{Context, Result};
use nrt_neff::ReadOptions;
use std::path::Path;

/// Extracts a NEFF into `dir`.
pub fn unpack(file: &Path, dir: &Path) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let header = nrt_neff::unpack_to_dir(&bytes, dir, &ReadOptions::default())
        .with_context(|| format!("unpacking {}", file.display()))?;
    println!("unpacked {} ({}) into {}", file.display(), header.name(), dir.display());
    Ok(())
}

/// Packs `dir` into the NEFF `file` with the packer `nrt run` and Python
/// share ([`nrt_pack::pack_file`]).
pub fn pack(dir: &Path, file: &Path, name: Option<&str>, hash: Option<&str>) -> Result<()> {
    println!("{}", nrt_pack::pack_file(dir, file, name, hash)?);
    Ok(())
}
