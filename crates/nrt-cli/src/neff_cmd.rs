//! `nrt neff unpack` and `nrt neff pack`.

use anyhow::{Context, Result, bail};
use nrt_neff::{HashKind, Members, ReadOptions};
use std::path::Path;

/// Extracts a NEFF into `dir`.
pub fn unpack(file: &Path, dir: &Path) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let header = nrt_neff::unpack_to_dir(&bytes, dir, &ReadOptions::default())
        .with_context(|| format!("unpacking {}", file.display()))?;
    println!("unpacked {} ({}) into {}", file.display(), header.name(), dir.display());
    Ok(())
}

/// Packs `dir` into the NEFF `file`, assembling `*.asm` programs first.
/// The tree is taken as `nrt run` takes it ([`crate::model_io::source_tree`]).
pub fn pack(dir: &Path, file: &Path, name: Option<String>, hash: Option<&str>) -> Result<()> {
    let (mut header, members) = crate::model_io::source_tree(dir)?;
    if let Some(name) = &name {
        header.set_name(name)?;
    }
    let hash = match hash {
        Some("sha256") => HashKind::Sha256,
        Some("md5") => HashKind::Md5,
        Some(other) => bail!("unknown --hash {other:?}, expected sha256 or md5"),
        None => HashKind::from_pkg_version(header.pkg_version)?,
    };
    let members = assemble_programs(members)?;
    let format = nrt_neff::writer::default_format(hash);
    let bytes = nrt_neff::pack_members(&header, &members, hash, format)?;
    // Prove the result loads through the same reader the runtime uses.
    nrt_neff::Neff::parse(&bytes).with_context(|| format!("the packed NEFF from {} does not read back", dir.display()))?;
    std::fs::write(file, &bytes).with_context(|| format!("writing {}", file.display()))?;
    println!("packed {} members into {} ({} bytes)", members.len(), file.display(), bytes.len());
    Ok(())
}

/// Packs source-tree members behind `header` into NEFF bytes (md5 digest,
/// gzip tar), assembling `*.asm` programs: what `nrt run` and `nrt bench`
/// load when given a directory.
pub fn pack_members_to_bytes(header: &nrt_neff::NeffHeader, members: Members) -> Result<Vec<u8>> {
    let members = assemble_programs(members)?;
    let hash = HashKind::from_pkg_version(header.pkg_version).unwrap_or(HashKind::Md5);
    Ok(nrt_neff::pack_members(header, &members, hash, nrt_neff::writer::default_format(hash))?)
}

/// Replaces every `X.asm` member by the assembled `X.bin`. A directory may
/// not hold both, since it would be unclear which one is meant.
fn assemble_programs(members: Members) -> Result<Members> {
    let mut out = Members::new();
    let mut programs = Vec::new();
    for (path, bytes) in members {
        if let Some(stem) = path.strip_suffix(".asm") {
            programs.push((stem.to_string(), path, bytes));
        } else {
            out.insert(path, bytes);
        }
    }
    for (stem, path, text) in programs {
        let bin = format!("{stem}.bin");
        if out.contains_key(&bin) {
            bail!("{path} and {bin} are both present; keep only one of them");
        }
        let text = String::from_utf8(text).with_context(|| format!("{path} is not UTF-8 text"))?;
        let records = nrt_isa::asm::assemble(&text).map_err(|e| anyhow::anyhow!("{path}:{e}"))?;
        out.insert(bin, records);
    }
    Ok(out)
}
