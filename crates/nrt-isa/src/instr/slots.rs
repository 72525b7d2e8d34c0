//! The exact records the runtime's micro-op builders emit, for lowering and
//! for byte-exact tests against the seeds.

use super::{
    AluOp, BranchCmp, BranchTarget, CtrlAl, CtrlBr, CtrlEr, DataSource, DtypeCode, EventSemaphore,
    ExtUpdate, Head, PseudoInst, PseudoSub, ResetTarget,
};
use crate::dtype::Dtype;
use crate::opcode::Opcode;
use crate::record::{EVENTS_OFFSET, Events, RECORD_SIZE, RecordBytes, UpdateMode};

/// `move_source` value the LOAD_POOL_ARGUMENT builder stores at +0x0E.
pub const LOAD_POOL_ARGUMENT_MOVE_SOURCE: u8 = 0x03;

const fn put_u32(rec: &mut RecordBytes, off: usize, v: u32) {
    let b = v.to_le_bytes();
    let mut i = 0;
    while i < 4 {
        rec[off + i] = b[i];
        i += 1;
    }
}

const fn put_u64(rec: &mut RecordBytes, off: usize, v: u64) {
    let b = v.to_le_bytes();
    let mut i = 0;
    while i < 8 {
        rec[off + i] = b[i];
        i += 1;
    }
}

const fn header(op: Opcode, events: Option<Events>) -> RecordBytes {
    let mut rec = [0u8; RECORD_SIZE];
    let word = op.header_word().to_le_bytes();
    rec[0] = word[0];
    rec[1] = word[1];
    if let Some(ev) = events {
        put_u64(&mut rec, EVENTS_OFFSET, ev.to_u64());
    }
    rec
}

/// The 0x107A LOAD_POOL_ARGUMENT record as the runtime builds it: header
/// 0x107A, events at +4 if given, move_source 3 at +0x0E, then the argument
/// union at +0x20: table offset lo, lo + 4, sbuf base, scalar-read address,
/// completion (semaphore-increment) address. Everything else is zero.
pub const fn load_pool_argument_slot(
    embedding_table_sb_offset: u32,
    sbuf_base_addr: u64,
    one_value_read_addr: u64,
    completion_write_addr: u64,
    events: Option<Events>,
) -> RecordBytes {
    let mut rec = header(Opcode::LoadPoolArgument, events);
    rec[0x0E] = LOAD_POOL_ARGUMENT_MOVE_SOURCE;
    put_u32(&mut rec, 0x20, embedding_table_sb_offset);
    put_u32(&mut rec, 0x24, embedding_table_sb_offset.wrapping_add(4));
    put_u64(&mut rec, 0x28, sbuf_base_addr);
    put_u64(&mut rec, 0x30, one_value_read_addr);
    put_u64(&mut rec, 0x38, completion_write_addr);
    rec
}

/// The 0x10A2 DRAIN record: header word 0x10A2, events at +4 if given,
/// all other bytes zero.
pub const fn drain_slot(events: Option<Events>) -> RecordBytes {
    header(Opcode::Drain, events)
}

/// `debug_hint` the runtime's branch builder writes into CTRL_BR records.
pub const BRANCH_DEBUG_HINT: u8 = 2;

/// The runtime's compare-and-branch micro-op: if `reg[cmp_reg] cmp imm`
/// (as int32), jump `rel_records` records relative to this one.
pub fn branch_relative(
    cmp: BranchCmp,
    cmp_reg: u8,
    imm: u32,
    rel_records: i32,
    events: Events,
) -> CtrlBr {
    CtrlBr {
        head: Head {
            debug_hint: BRANCH_DEBUG_HINT,
            ..Head::with_events(events)
        },
        cmp,
        dtype: DtypeCode::of(Dtype::Int32),
        target: BranchTarget::RelImm,
        imm,
        cmp_reg,
        rel_offset: i64::from(rel_records),
        ..CtrlBr::default()
    }
}

/// The runtime's add-immediate register op (descriptor 0x10804):
/// `reg[dst_reg] = reg[src_reg] + imm`.
pub fn alu_add_imm(src_reg: u8, dst_reg: u8, imm: u64) -> CtrlAl {
    CtrlAl {
        head: Head::default(),
        op: AluOp::Add,
        dtype: DtypeCode::of(Dtype::Int32),
        src1: DataSource::Imm,
        src0_reg: src_reg,
        dst_reg,
        imm,
    }
}

/// The runtime's semaphore increment: EVENT_SEMAPHORE whose extended block
/// adds `delta` to semaphore `sem` on completion (mode 0x15 at +0x22).
pub fn semaphore_add(sem: u8, delta: u32, events: Events) -> EventSemaphore {
    EventSemaphore {
        head: Head::with_events(events),
        ext_update: ExtUpdate {
            mode: UpdateMode::SemAddImmComplete,
            idx: sem,
            value: delta,
        },
        ..EventSemaphore::default()
    }
}

/// Resets semaphores `first..=last` to zero (the postamble's CTRL_ER).
pub fn reset_semaphores(first: u8, last: u8) -> CtrlEr {
    CtrlEr {
        head: Head::default(),
        target: ResetTarget::Semaphores,
        first,
        last,
    }
}

/// The program terminator the runtime scans for.
pub fn exit_execution() -> PseudoInst {
    PseudoInst {
        head: Head::default(),
        sub: PseudoSub::ExitExecution,
        index: 0,
    }
}

/// Whether a record is the EXIT terminator (byte 0 = 0xDF and byte 12 = 1),
/// the runtime's test for a well-formed program.
pub fn is_exit_record(rec: &RecordBytes) -> bool {
    rec[0] == Opcode::PseudoInst.to_u8() && rec[12] == PseudoSub::ExitExecution.to_u8()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_ops_carry_the_runtime_descriptors() {
        let br = branch_relative(BranchCmp::Gt, 3, 10, -2, Events::NONE).encode();
        assert_eq!(&br[..4], &[0xA9, 0x10, 0, 2]);
        assert_eq!(
            u32::from_le_bytes(br[0x0C..0x10].try_into().unwrap()) & 0xFF_FFFF,
            0x30806
        );
        assert_eq!(i64::from_le_bytes(br[0x30..0x38].try_into().unwrap()), -2);

        let al = alu_add_imm(1, 2, 5).encode();
        assert_eq!(
            u32::from_le_bytes(al[0x0C..0x10].try_into().unwrap()),
            0x10804
        );
        assert_eq!((al[0x10], al[0x14], al[0x18]), (1, 2, 5));

        let es = semaphore_add(9, 16, Events::NONE).encode();
        assert_eq!((es[0], es[0x22], es[0x23], es[0x28]), (0xA0, 0x15, 9, 16));

        let er = reset_semaphores(4, 55).encode();
        assert_eq!((er[0], er[0x0C], er[0x0D], er[0x0E]), (0xB0, 0, 4, 55));

        let exit = exit_execution().encode();
        assert!(is_exit_record(&exit));
        assert!(!is_exit_record(&drain_slot(None)));
    }
}
