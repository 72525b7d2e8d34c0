//! What of a program the device cannot run, found without executing it:
//! `nrt neff check` prints it, and the load refuses a NEFF that has any,
//! listing all of it in one message.
//!
//! A record cannot run when its opcode is neither executed by the device
//! nor rewritten by the load ([`super::opcodes`]), or when its opcode has a
//! typed layout (docs/isa.md §5) but the record breaks it (a reserved byte
//! set, an unknown selector): the device decodes strictly and would fault
//! on it. Records are grouped by engine, opcode and reason, in the order
//! their first instance appears.

use super::opcodes::{OpcodeHandling, handling};
use super::Program;
use nrt_isa::instr::Instruction;
use nrt_isa::opcode::Opcode;
use std::fmt;

/// One kind of record the device cannot run, with how often it occurs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unrunnable {
    /// Engine name (`PE`, `ACT`, `POOL`, `DVE`, `SP`).
    pub engine: &'static str,
    /// Opcode byte.
    pub opcode: u8,
    /// Why it cannot run.
    pub reason: String,
    /// Records of this kind in the whole program (every subgraph).
    pub count: usize,
    /// Subgraph of the first one.
    pub first_subgraph: String,
    /// Stream index of the first one.
    pub first_index: usize,
    /// The compiler's name of the first one (debug info), if any.
    pub first_name: Option<String>,
}

impl fmt::Display for Unrunnable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = Opcode::from_u8(self.opcode).name().map(|n| format!(" ({n})")).unwrap_or_default();
        write!(f, "opcode {:#04x}{name} on {} x{}: {}; first: {} instruction {}", self.opcode, self.engine, self.count, self.reason, self.first_subgraph, self.first_index)?;
        if let Some(n) = &self.first_name {
            write!(f, " '{n}'")?;
        }
        Ok(())
    }
}

/// Why `rec` cannot run, or `None` when it can.
pub fn reason(rec: &[u8; 64]) -> Option<String> {
    match handling(rec) {
        OpcodeHandling::Unsupported => Some("no execution for this opcode (not an instruction the device runs, nor one the load rewrites)".into()),
        OpcodeHandling::Execute if Instruction::has_layout(Opcode::from_u8(rec[0])) => {
            Instruction::decode(rec).err().map(|e| format!("does not decode: {e}"))
        }
        _ => None,
    }
}

/// Every kind of record of `program` the device cannot run (empty when it can run all of it).
pub fn unrunnable(program: &Program) -> Vec<Unrunnable> {
    let mut out: Vec<Unrunnable> = Vec::new();
    for sg in &program.subgraphs {
        for s in &sg.streams {
            for (index, rec) in s.records.iter().enumerate() {
                let Some(reason) = reason(rec) else { continue };
                let engine = s.engine.name();
                match out.iter_mut().find(|u| u.engine == engine && u.opcode == rec[0] && u.reason == reason) {
                    Some(u) => u.count += 1,
                    None => out.push(Unrunnable {
                        engine,
                        opcode: rec[0],
                        reason,
                        count: 1,
                        first_subgraph: sg.name.clone(),
                        first_index: index,
                        first_name: s.names.get(index).cloned().flatten(),
                    }),
                }
            }
        }
    }
    out
}

/// The records of `program` in total, and how many streams hold them.
pub fn record_counts(program: &Program) -> (usize, usize) {
    let streams = program.subgraphs.iter().flat_map(|sg| &sg.streams);
    streams.fold((0, 0), |(r, s), st| (r + st.records.len(), s + 1))
}

/// The load's refusal: libnrt's message for the first record, then the whole list.
pub fn refusal(list: &[Unrunnable]) -> Option<String> {
    let first = list.first()?;
    let name = first.first_name.as_ref().map(|n| format!(" '{n}'")).unwrap_or_default();
    let all = list.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
    Some(format!(
        "Unsupported hardware operator code {} found in neff ({} instruction {}{name} of {}); the device cannot run {} kind(s) of record: {all}",
        first.opcode, first.engine, first.first_index, first.first_subgraph, list.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(op: u8) -> [u8; 64] {
        let mut r = [0u8; 64];
        r[0] = op;
        r[1] = 0x10;
        r
    }

    #[test]
    fn unknown_opcodes_and_broken_layouts_are_reasons() {
        assert!(reason(&rec(0xA4)).is_none());
        assert!(reason(&rec(0x0D)).unwrap().contains("no execution"));
        let mut nop = rec(0xA4);
        nop[0x30] = 1;
        assert!(reason(&nop).unwrap().contains("does not decode"), "a NOP with a payload byte set breaks its layout");
        assert!(reason(&rec(0xCC)).is_none(), "labels are consumed at load");
    }

    #[test]
    fn the_refusal_starts_with_libnrts_wording_and_lists_everything() {
        let u = |op: u8, count| Unrunnable { engine: "DVE", opcode: op, reason: "r".into(), count, first_subgraph: "sg00".into(), first_index: 3, first_name: Some("I-1-0".into()) };
        let msg = refusal(&[u(0x0D, 2), u(0x0E, 1)]).unwrap();
        assert!(msg.starts_with("Unsupported hardware operator code 13 found in neff (DVE instruction 3 'I-1-0' of sg00); the device cannot run 2 kind(s)"), "{msg}");
        assert!(msg.contains("opcode 0x0d on DVE x2: r; first: sg00 instruction 3 'I-1-0'; opcode 0x0e"), "{msg}");
        assert!(refusal(&[]).is_none());
    }
}
