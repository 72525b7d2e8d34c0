//! `nrt asm` and `nrt disasm`.

use anyhow::{Context, Result};
use std::path::Path;

/// Assembles the program text at `input` and writes its records to `output`.
pub fn assemble(input: &Path, output: &Path) -> Result<()> {
    let text = std::fs::read_to_string(input).with_context(|| format!("reading {}", input.display()))?;
    let bytes = nrt_isa::asm::assemble(&text).map_err(|e| anyhow::anyhow!("{}:{e}", input.display()))?;
    std::fs::write(output, &bytes).with_context(|| format!("writing {}", output.display()))?;
    Ok(())
}

/// Prints the disassembly of the instruction stream at `input`.
pub fn disassemble(input: &Path) -> Result<()> {
    let bytes = std::fs::read(input).with_context(|| format!("reading {}", input.display()))?;
    let text = nrt_isa::asm::disassemble(&bytes).with_context(|| format!("decoding {}", input.display()))?;
    print!("{text}");
    Ok(())
}
