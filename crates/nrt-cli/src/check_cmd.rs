//! `nrt neff check FILE`: what of a NEFF the simulator cannot run, found
//! without executing it (the same list the load refuses it with).

use anyhow::{Context, Result, bail};
use nrt::program::Program;
use nrt::program::support::{record_counts, unrunnable};
use std::path::Path;

/// Prints the kinds of record the device cannot run (opcode, engine,
/// count, reason, first instance with its compiler name), or that it can
/// run all of them; fails when there is any.
pub fn check(file: &Path) -> Result<()> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let neff = nrt::load::parse(&bytes, false).map_err(|e| anyhow::anyhow!("{}: {}", file.display(), e.message))?;
    let program = Program::from_neff(&neff).with_context(|| format!("{}: the program", file.display()))?;
    let (records, streams) = record_counts(&program);
    let list = unrunnable(&program);
    if list.is_empty() {
        println!("{}: the simulator can run all of it ({records} records in {streams} streams of {} subgraph(s))", file.display(), program.subgraphs.len());
        return Ok(());
    }
    println!("{:<8} {:<6} {:>7}  {:<24} reason", "opcode", "engine", "count", "first");
    for u in &list {
        let first = match &u.first_name {
            Some(n) => format!("{}[{}] {n}", u.first_subgraph, u.first_index),
            None => format!("{}[{}]", u.first_subgraph, u.first_index),
        };
        let name = nrt_isa::opcode::Opcode::from_u8(u.opcode).name().map(|n| format!(" {n}")).unwrap_or_default();
        println!("{:<8} {:<6} {:>7}  {:<24} {}{name}", format!("{:#04x}", u.opcode), u.engine, u.count, first, u.reason);
    }
    let total: usize = list.iter().map(|u| u.count).sum();
    bail!("{}: the simulator cannot run {total} of {records} records ({} kind(s))", file.display(), list.len())
}
