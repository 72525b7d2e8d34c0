//! Reading a source tree ([`source_tree`]) and packing it ([`pack_file`],
//! [`pack_members`]).

use crate::{custom_ops_data, example_data, tp_mlp_data};
use anyhow::{Context, Result, anyhow, bail};
use nrt_neff::{HashKind, Members, NeffHeader};
use std::path::Path;

/// A NEFF source tree's header and members, as `nrt neff pack`, `nrt run`,
/// `nrt bench` and `python -m nrt neff pack` all take it: for the examples
/// whose members are generated (the mlp examples' constants, the tp-mlp
/// rank trees' shards, custom_ops' argument blocks and kernel libraries)
/// the missing ones are generated in memory, so a fresh checkout packs and
/// runs without a setup step; any other `file` var whose member the tree
/// lacks is refused here, naming it, rather than packed into a NEFF that
/// fails at load.
pub fn source_tree(path: &Path) -> Result<(NeffHeader, Members)> {
    let contents = nrt_neff::read_dir(path).with_context(|| format!("reading {}", path.display()))?;
    let header = contents.header.unwrap_or_default();
    let mut members = contents.members;
    if let Some(constants) = example_data::constants_for(path) {
        for (member, bytes) in constants {
            members.entry(member.to_string()).or_insert(bytes);
        }
    }
    if let Some(constants) = tp_mlp_data::constants_for(path) {
        for (member, bytes) in constants? {
            members.entry(member).or_insert(bytes);
        }
    }
    // The custom_ops example: argument blocks and kernel libraries are
    // generated (the example kernel crate is built with cargo).
    if custom_ops_data::is_custom_ops(path) {
        let missing = |m: &&str| !members.contains_key(*m);
        let names = [custom_ops_data::ARGS_RELU, custom_ops_data::ARGS_SOFTMAX, custom_ops_data::STOCK_LIB, custom_ops_data::KERNELS_LIB];
        if names.iter().any(missing) {
            let generated = custom_ops_data::members(&custom_ops_data::kernel_target_dir())
                .map_err(|e| anyhow!("generating the custom_ops members: {e}"))?;
            for (member, bytes) in generated {
                members.entry(member.to_string()).or_insert(bytes);
            }
        }
    }
    if let Some((member, def, var)) = missing_constant(&members)? {
        bail!(
            "{}: {member} is missing ({def} names it as the file of var {var:?}); add it to the tree \
             (in a copy of an example, `nrt example-data DIR` writes the examples' generated members under DIR)",
            path.display()
        );
    }
    Ok((header, members))
}

/// The first `file` var of any `def.json` among `members` whose constant
/// member is absent: (member, def.json path, var name).
fn missing_constant(members: &Members) -> Result<Option<(String, String, String)>> {
    for (def_path, bytes) in members.iter().filter(|(p, _)| *p == "def.json" || p.ends_with("/def.json")) {
        let def: nrt_neff::DefJson = serde_json::from_slice(bytes).with_context(|| format!("{def_path} is not a valid def.json"))?;
        let dir = def_path.rsplit_once('/').map_or("", |(d, _)| d);
        for (var, v) in &def.var {
            let Some(file) = v.file_name.as_deref().filter(|_| v.ty == nrt_neff::VarType::File) else { continue };
            let member = if dir.is_empty() { file.to_string() } else { format!("{dir}/{file}") };
            if !members.contains_key(&member) {
                return Ok(Some((member, def_path.clone(), var.clone())));
            }
        }
    }
    Ok(None)
}

/// `nrt neff pack DIR FILE [--name N] [--hash sha256|md5]`: packs the
/// source tree `dir` ([`source_tree`]) into the NEFF `file`, assembling
/// `*.asm` programs, and proves the result reads back through the
/// runtime's reader before writing it. `hash` is `sha256` or `md5`
/// (default: the one the header's package version implies). Returns the
/// line the command prints.
pub fn pack_file(dir: &Path, file: &Path, name: Option<&str>, hash: Option<&str>) -> Result<String> {
    let (mut header, members) = source_tree(dir)?;
    if let Some(name) = name {
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
    Ok(format!("packed {} members into {} ({} bytes)", members.len(), file.display(), bytes.len()))
}

/// Packs source-tree members behind `header` into NEFF bytes (the digest
/// the header's package version implies, else md5; gzip tar), assembling
/// `*.asm` programs: what `nrt run` and `nrt bench` load when given a
/// directory.
pub fn pack_members(header: &NeffHeader, members: Members) -> Result<Vec<u8>> {
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
        let records = nrt_isa::asm::assemble(&text).map_err(|e| anyhow!("{path}:{e}"))?;
        out.insert(bin, records);
    }
    Ok(out)
}
