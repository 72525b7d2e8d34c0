//! `nrt neff lower`: what the runtime actually stages for each engine.
//!
//! The model is loaded on the simulated device exactly as `nrt run` loads
//! it (lowering, relocation, custom-op micro-programs, the runtime's
//! preamble and postamble), then each engine image is read back from the
//! device and printed one record per line: index, hex header word, opcode
//! name and the record disassembled.

use crate::model_io::{self, Loaded};
use anyhow::{Context, Result, anyhow, bail};
use nrt_hal::{DeviceAddr, EngineId};
use nrt_isa::instr::slots::is_exit_record;
use nrt_isa::opcode::Opcode;
use nrt_isa::record::RecordBytes;
use std::path::Path;

/// Most records read back per image before giving up on finding its end.
const MAX_IMAGE_RECORDS: usize = 1 << 20;
/// Records read from the device per step.
const READ_CHUNK: usize = 256;

/// `pe|act|pool|dve|sp` (any case) to the engine.
pub fn parse_engine(name: &str) -> Result<EngineId> {
    EngineId::ALL
        .into_iter()
        .find(|e| e.name().eq_ignore_ascii_case(name))
        .ok_or_else(|| anyhow!("unknown engine {name:?}, expected pe, act, pool, dve or sp"))
}

/// Reads an engine image from the device: every record up to and
/// including the terminating EXIT (the runtime's postamble ends with it).
fn read_image(device: &dyn nrt_hal::Device, at: DeviceAddr) -> Result<Vec<RecordBytes>> {
    let mut out: Vec<RecordBytes> = Vec::new();
    let mut buf = vec![0u8; READ_CHUNK * 64];
    while out.len() < MAX_IMAGE_RECORDS {
        let addr = at.offset(out.len() as u64 * 64);
        device.read(addr, &mut buf).map_err(|e| anyhow!("reading the image at {addr}: {e}"))?;
        for chunk in buf.chunks_exact(64) {
            let rec: RecordBytes = chunk.try_into().expect("64-byte chunk");
            out.push(rec);
            if is_exit_record(&rec) {
                return Ok(out);
            }
        }
    }
    bail!("the image at {at} has no EXIT record in its first {MAX_IMAGE_RECORDS} records")
}

/// One line per record: index, header word, opcode name, disassembly.
pub fn format_record(index: usize, rec: &RecordBytes) -> String {
    let word = u16::from_le_bytes([rec[0], rec[1]]);
    let op = Opcode::from_u8(rec[0]);
    let name = op.name().map_or_else(|| format!("OPCODE_{:02X}", rec[0]), str::to_string);
    let text = nrt_isa::asm::disassemble(rec).map(|t| t.trim_end().to_string()).unwrap_or_else(|e| format!("<{e}>"));
    format!("{index:6}  {word:04x}  {name:<26} {text}")
}

/// Prints the staged image of every engine (or only `engine`) of every
/// subgraph of the model at `path` (a NEFF file or source directory).
pub fn lower(path: &Path, engine: Option<&str>) -> Result<()> {
    let only = engine.map(parse_engine).transpose()?;
    let bytes = model_io::neff_bytes(path)?;
    let names: Vec<String> = nrt_neff::Neff::parse(&bytes)
        .with_context(|| format!("reading {}", path.display()))?
        .subgraphs
        .iter()
        .map(|s| s.name.clone())
        .collect();
    let loaded = Loaded::new(&bytes, path)?;
    let result = print_images(&loaded, &names, only);
    let closed = loaded.close();
    result.and(closed)
}

fn print_images(loaded: &Loaded, names: &[String], only: Option<EngineId>) -> Result<()> {
    let model = loaded.host().models().get(loaded.id).ok_or_else(|| anyhow!("the loaded model vanished"))?;
    let program = model.program.as_ref().ok_or_else(|| anyhow!("the model has no device program"))?;
    let device = loaded.host().device();
    for (i, core) in program.cores.iter().enumerate() {
        let sg = names.get(i).map_or_else(|| format!("subgraph {i}"), String::clone);
        for e in EngineId::ALL.into_iter().filter(|e| only.is_none_or(|o| o == *e)) {
            let recs = read_image(device.as_ref(), core.images[e.index()])?;
            println!("{sg} {} ({} records, NC {})", e.name(), recs.len(), core.core.core().0);
            let sites = &core.sites[e.index()];
            for (k, r) in recs.iter().enumerate() {
                println!("{}  # {}", format_record(k, r), origin(sites, k as u64));
            }
        }
    }
    Ok(())
}

/// Where image record `k` came from: the runtime's frame, or NEFF
/// instruction `i` (with its compiler name, and which of the records it
/// became when lowering expanded it).
fn origin(sites: &nrt::load::sites::ImageMap, k: u64) -> String {
    use nrt::load::sites::ImageSite;
    match sites.site(k) {
        ImageSite::Preamble(_) => "runtime preamble".to_string(),
        ImageSite::LibraryConfig(_) => "runtime: GPSIMD library configuration".to_string(),
        ImageSite::Postamble(_) => "runtime postamble".to_string(),
        ImageSite::Source { index, part, len } => {
            let name = sites.name(index).map(|n| format!(" '{n}'")).unwrap_or_default();
            let of = if len > 1 { format!(" ({} of {len})", part + 1) } else { String::new() };
            format!("neff {index}{name}{of}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_parse_by_name_in_any_case() {
        assert_eq!(parse_engine("pool").unwrap(), EngineId::Pool);
        assert_eq!(parse_engine("SP").unwrap(), EngineId::Sp);
        assert!(parse_engine("gpsimd").unwrap_err().to_string().contains("expected pe, act, pool, dve or sp"));
    }

    #[test]
    fn a_record_line_has_the_header_word_and_name() {
        let rec = nrt_isa::instr::slots::load_pool_argument_slot(0x10, 0x20, 0x30, 0x40, None);
        let line = format_record(7, &rec);
        assert!(line.starts_with("     7  107a  LOAD_POOL_ARGUMENT"), "{line}");
    }
}
