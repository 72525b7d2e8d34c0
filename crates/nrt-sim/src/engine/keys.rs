//! The keys the sequencer's decode works out once per record (kept with
//! each instruction-cache entry) and the step tests on every issue: the
//! key span of a change, the registers a CTRL_ER resets, whether an
//! instruction hands work to another agent, the EXTENDED_INST opcode.
//!
//! A leaf: the instruction cache ([`super::icache`]) and the issue loop
//! ([`super::step`]) both use it, neither through the other.

use crate::wake::Change;
use nrt_isa::instr::{CtrlEr, Instruction, ResetTarget};

/// Whether executing `instr` can hand work to another agent that reads
/// the core's clock (see [`super::Sequencer::step`]): everything but the
/// sequencer's own control records.
pub fn hands_off_work(instr: &Instruction) -> bool {
    !matches!(
        instr,
        Instruction::EventSemaphore(_)
            | Instruction::Nop(_)
            | Instruction::PrologueB1(_)
            | Instruction::Drain(_)
            | Instruction::Halt(_)
            | Instruction::Notify(_)
            | Instruction::CtrlAl(_)
            | Instruction::CtrlBr(_)
            | Instruction::CtrlPollSem(_)
            | Instruction::CtrlEr(_)
            | Instruction::PseudoInst(_)
    )
}

/// An encoded key range ([`Change::key_range`]) as the branch-free key
/// test [`crate::wake::key_in_range`] takes it: the first key word and the
/// range's length minus one, worked out once when a record is decoded
/// instead of on every test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySpan {
    /// The first key word of the range (`u32::MAX` for an empty range).
    pub lo: u32,
    /// The last key word minus `lo` (0 for an empty range).
    pub span: u32,
}

impl KeySpan {
    /// The empty range: matches only the words that read as
    /// [`crate::wake::WaitKey::Any`] (a record that changes no register).
    pub const EMPTY: KeySpan = KeySpan { lo: u32::MAX, span: 0 };

    /// The span of the inclusive range `(lo, hi)`; `lo > hi` is
    /// [`KeySpan::EMPTY`].
    pub fn of((lo, hi): (u32, u32)) -> KeySpan {
        if lo <= hi { KeySpan { lo, span: hi - lo } } else { KeySpan::EMPTY }
    }
}

/// The registers a CTRL_ER resets, as the change its wake names.
pub fn reset_change(e: &CtrlEr) -> Change {
    let (first, last) = (u32::from(e.first), u32::from(e.last));
    if e.target == ResetTarget::Events { Change::Events(first, last) } else { Change::Sems(first, last) }
}

/// The EXTENDED_INST opcode byte (hands an op to the Q7 cluster).
pub const EXTENDED_INST: u8 = 0xF0;

