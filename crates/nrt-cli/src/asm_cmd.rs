//! `nrt asm` and `nrt disasm`.

use anyhow::{Context, Result, bail};
use nrt_neff::{EngineKind, Neff};
use std::path::Path;

/// Assembles the program text at `input` and writes its records to `output`.
pub fn assemble(input: &Path, output: &Path) -> Result<()> {
    let text = std::fs::read_to_string(input).with_context(|| format!("reading {}", input.display()))?;
    let bytes = nrt_isa::asm::assemble(&text).map_err(|e| anyhow::anyhow!("{}:{e}", input.display()))?;
    std::fs::write(output, &bytes).with_context(|| format!("writing {}", output.display()))?;
    Ok(())
}

/// Prints the disassembly of `input`: a bare instruction stream, or every
/// engine stream of a NEFF (filtered by `subgraph` / `engine`), each record
/// annotated with the compiler's instruction name when the NEFF's debug
/// info has one.
pub fn disassemble(input: &Path, subgraph: Option<&str>, engine: Option<&str>) -> Result<()> {
    let bytes = std::fs::read(input).with_context(|| format!("reading {}", input.display()))?;
    if !looks_like_neff(&bytes) {
        if subgraph.is_some() || engine.is_some() {
            bail!("{} is an instruction stream, not a NEFF; --subgraph/--engine apply to NEFFs", input.display());
        }
        let text = nrt_isa::asm::disassemble(&bytes).with_context(|| format!("decoding {}", input.display()))?;
        print!("{text}");
        return Ok(());
    }
    let neff = Neff::parse(&bytes).with_context(|| format!("{}", input.display()))?;
    let wanted_engine = match engine {
        Some(key) => Some(EngineKind::from_key(key).with_context(|| format!("unknown --engine {key:?}, expected pe, act, pool, dve or sp"))?),
        None => None,
    };
    if let Some(sg) = subgraph
        && !neff.subgraphs.iter().any(|s| s.name == sg)
    {
        let known: Vec<&str> = neff.subgraphs.iter().map(|s| s.name.as_str()).collect();
        bail!("no subgraph {sg:?} in {}; it has {}", input.display(), known.join(", "));
    }
    for sg in neff.subgraphs.iter().filter(|s| subgraph.is_none_or(|want| s.name == want)) {
        for program in sg.engines.iter().filter(|p| wanted_engine.is_none_or(|e| p.engine == e)) {
            let names = neff
                .instruction_names(&sg.name, program.engine)
                .with_context(|| format!("reading the debug info of {}/{}", sg.name, program.engine.key()))?;
            let text = nrt_isa::asm::disassemble_with_names(&program.instructions, &names)
                .with_context(|| format!("decoding {}/{}", sg.name, program.engine.key()))?;
            println!("# {} {} ({} records)", sg.name, program.engine.key(), program.instruction_count());
            print!("{text}");
        }
    }
    Ok(())
}

/// A NEFF starts with a 1024-byte header whose first field, pkg_version, is
/// 1 or 2; an instruction stream's second byte is always 0x10.
fn looks_like_neff(bytes: &[u8]) -> bool {
    bytes.len() >= 1024 && matches!(u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default()), 1 | 2)
}
