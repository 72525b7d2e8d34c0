//! Lowering of PSEUDO_EMBEDDING_UPDATE (0xCA), the compiler's GPSIMD
//! custom-op pseudo, into the fixed POOL micro-program of seed 000 §4:
//!
//! ```text
//! [dma_config_base (read side)][dma_config_base (write side)][dma_config_size]
//! [LOAD_POOL_ARGUMENT 0x107A][DRAIN 0x10A2][EVENT_SEMAPHORE update_mode 0x13]
//! ```
//!
//! The EXTENDED_INST 0xF0 the compiler places after the pseudo stays in the
//! stream and hands the op to the Q7 cluster.
//!
//! - The three DMA-config records are WRITEs into the registers of the
//!   op's custom-op DMA queue (one of the eight the staging walk picked,
//!   chosen by the pseudo's `queue` byte): the low words of the M2S
//!   (read) and S2M (write) ring bases, then the M2S ring length in
//!   descriptors. The pseudo's wait moves onto the first of them.
//! - LOAD_POOL_ARGUMENT is built byte for byte by
//!   [`nrt_isa::instr::slots::load_pool_argument_slot`]: the pseudo's
//!   embedding-table SBUF offset (lo, lo + 4), the SBUF base, the
//!   event-accelerator address as `one_value_read_addr` and the
//!   semaphore-increment address as `completion_write_addr`.
//! - DRAIN joins the eight Q7 cores (there is no Q7 collective).
//! - EVENT_SEMAPHORE increments the pseudo's update semaphore when it
//!   completes (update_mode 0x13, SEM_INC_COMPLETE): the op's completion
//!   gate the rest of the model waits on. `completion_write_addr` is the
//!   increment register of that same semaphore, so the device makes the
//!   gate's one increment when the Q7 cores are done (`docs/gpsimd.md`
//!   §5): the semaphore counts 1 per op.

use super::queues::CustomOpQueue;
use crate::load::lower::write_record;
use nrt_hal::arch::{DMA_M2S_GROUP, DMA_REG_DRBP_LOW, DMA_REG_DRL, DMA_REG_DRTP_INC, DMA_S2M_GROUP};
use nrt_isa::instr::{PseudoEmbeddingUpdate, slots};
use nrt_isa::opcode::Opcode;
use nrt_isa::record::{EVENTS_OFFSET, Events, INST_WORD_LEN, RecordBytes, UpdateMode, WaitMode};

/// Event register whose address is the event-accelerator read address
/// (`one_value_read_addr`) the runtime marshals.
pub const EVT_ACCEL_EVENT: u32 = 1;

/// Records one PSEUDO_EMBEDDING_UPDATE becomes.
pub const MICRO_PROGRAM_RECORDS: usize = 6;

/// What the lowering needs from the staged core: the op's queue and the
/// three device addresses LOAD_POOL_ARGUMENT marshals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CustomOpEnv {
    /// The custom-op queue the op's DMA configuration goes to.
    pub queue: CustomOpQueue,
    /// Device address of the core's SBUF (the op's `sbuf_base_addr` when
    /// the pseudo leaves it 0).
    pub sbuf_base_addr: u64,
    /// Event-accelerator address the kernel reads its scalar from.
    pub one_value_read_addr: u64,
    /// Semaphore-increment address the kernel writes when done.
    pub completion_write_addr: u64,
}

/// Why a 0xCA record cannot be lowered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CustomOpLowerError {
    /// The record does not decode.
    #[error("PSEUDO_EMBEDDING_UPDATE does not decode: {0}")]
    Decode(String),
    /// The pseudo names no completion semaphore.
    #[error("PSEUDO_EMBEDDING_UPDATE must increment a semaphore when done (update_mode SEM_INC_COMPLETE or SEM_INC_READ); found {0:?}")]
    NoCompletion(UpdateMode),
}

/// Register address `reg` of the queue's M2S (`group` = DMA_M2S_GROUP) or
/// S2M side.
fn queue_reg(q: &CustomOpQueue, group: u64, reg: u64) -> u64 {
    // m2s/s2m are the tail-increment registers; the bank base is below them.
    let side = if group == DMA_S2M_GROUP { q.s2m_addr() } else { q.m2s_addr() };
    side - DMA_REG_DRTP_INC + reg
}

/// The EVENT_SEMAPHORE completion gate: header 0x10A0 and the events
/// block incrementing `sem` when the instruction completes.
pub fn completion_gate(sem: u8) -> RecordBytes {
    let mut r = [0u8; 64];
    r[0] = Opcode::EventSemaphore.to_u8();
    r[1] = INST_WORD_LEN;
    Events { update_mode: UpdateMode::SemIncComplete, update_idx: sem, ..Events::NONE }.write_at(&mut r, EVENTS_OFFSET);
    r
}

/// Lowers one 0xCA record into the six-record micro-program.
pub fn lower_pseudo_embedding_update(rec: &RecordBytes, env: &CustomOpEnv) -> Result<[RecordBytes; MICRO_PROGRAM_RECORDS], CustomOpLowerError> {
    let p = PseudoEmbeddingUpdate::decode(rec).map_err(|e| CustomOpLowerError::Decode(e.to_string()))?;
    let ev = p.head.events;
    if !matches!(ev.update_mode, UpdateMode::SemIncComplete | UpdateMode::SemIncRead) {
        return Err(CustomOpLowerError::NoCompletion(ev.update_mode));
    }
    let wait = Events { update_mode: UpdateMode::None, update_idx: 0, ..ev };
    let q = &env.queue;
    let sbuf = if p.sbuf_base_addr == 0 { env.sbuf_base_addr } else { p.sbuf_base_addr };
    let descriptors = p.bytes.div_ceil(nrt_isa::dma_desc::MAX_BD_LENGTH).max(1);
    Ok([
        write_record(queue_reg(q, DMA_M2S_GROUP, DMA_REG_DRBP_LOW), p.src_addr as u32, wait),
        write_record(queue_reg(q, DMA_S2M_GROUP, DMA_REG_DRBP_LOW), p.dst_addr as u32, Events::NONE),
        write_record(queue_reg(q, DMA_M2S_GROUP, DMA_REG_DRL), descriptors, Events::NONE),
        slots::load_pool_argument_slot(p.embedding_table, sbuf, env.one_value_read_addr, env.completion_write_addr, None),
        slots::drain_slot(None),
        completion_gate(ev.update_idx),
    ])
}

/// Whether a lowered record sequence is the micro-program in order (for
/// checks and `nrt neff lower`): WRITE, WRITE, WRITE, 0x107A, 0x10A2,
/// 0x10A0 with update_mode 0x13.
pub fn is_micro_program(recs: &[RecordBytes]) -> bool {
    let hw = |r: &RecordBytes| u16::from_le_bytes([r[0], r[1]]);
    recs.len() == MICRO_PROGRAM_RECORDS
        && recs[..3].iter().all(|r| r[0] == crate::load::lower::WRITE_OPCODE)
        && hw(&recs[3]) == 0x107A
        && hw(&recs[4]) == 0x10A2
        && hw(&recs[5]) == 0x10A0
        && recs[5][EVENTS_OFFSET + 2] == 0x13
        && Events::read_at(&recs[5], EVENTS_OFFSET).wait_mode == WaitMode::None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::custom_ops::queues::stage_custom_op_queues;
    use nrt_hal::{Arch, CoreId};
    use nrt_isa::asm::assemble;

    fn env() -> CustomOpEnv {
        let q = stage_custom_op_queues(Arch::Trn1.desc(), CoreId(0))[2];
        CustomOpEnv { queue: q, sbuf_base_addr: 0x2_0000_0000, one_value_read_addr: 0x0270_0004, completion_write_addr: 0x0270_1800 + 4 * 200 }
    }

    fn pseudo(text: &str) -> RecordBytes {
        assemble(text).unwrap()[..64].try_into().unwrap()
    }

    fn u64_at(r: &RecordBytes, o: usize) -> u64 {
        u64::from_le_bytes(r[o..o + 8].try_into().unwrap())
    }

    #[test]
    fn the_micro_program_is_byte_exact() {
        let e = env();
        let rec = pseudo("pseudo_embedding_update queue=2 embedding_table=0x1000 sbuf_base_addr=0 src_addr=0x5000 dst_addr=0x6000 bytes=0x20000 wait=sem3>=1 update=sem4++\n");
        let out = lower_pseudo_embedding_update(&rec, &e).unwrap();
        assert!(is_micro_program(&out));
        // dma_config_base x2 + size: WRITEs into queue 15 of DMA engine 10's registers.
        assert_eq!(u64_at(&out[0], 0x10), e.queue.m2s_addr() - DMA_REG_DRTP_INC + DMA_REG_DRBP_LOW);
        assert_eq!(u32::from_le_bytes(out[0][0x18..0x1C].try_into().unwrap()), 0x5000);
        let w = Events::read_at(&out[0], 4);
        assert_eq!((w.wait_mode, w.wait_idx, w.value, w.update_mode), (WaitMode::SemGeImm, 3, 1, UpdateMode::None));
        assert_eq!(u64_at(&out[1], 0x10), e.queue.s2m_addr() - DMA_REG_DRTP_INC + DMA_REG_DRBP_LOW);
        assert_eq!(u32::from_le_bytes(out[1][0x18..0x1C].try_into().unwrap()), 0x6000);
        assert_eq!(u64_at(&out[2], 0x10), e.queue.m2s_addr() - DMA_REG_DRTP_INC + DMA_REG_DRL);
        assert_eq!(u32::from_le_bytes(out[2][0x18..0x1C].try_into().unwrap()), 0x20000u32.div_ceil(nrt_isa::dma_desc::MAX_BD_LENGTH));
        // LOAD_POOL_ARGUMENT, field by field (seed 000 §3.2).
        let l = &out[3];
        assert_eq!(&l[..4], &[0x7A, 0x10, 0, 0]);
        assert_eq!(&l[4..12], &[0; 8], "no events on the argument load");
        assert_eq!((l[0x0C], l[0x0D], l[0x0E], l[0x0F]), (0, 0, 3, 0));
        assert_eq!(&l[0x10..0x20], &[0; 16]);
        assert_eq!(u32::from_le_bytes(l[0x20..0x24].try_into().unwrap()), 0x1000);
        assert_eq!(u32::from_le_bytes(l[0x24..0x28].try_into().unwrap()), 0x1004);
        assert_eq!(u64_at(l, 0x28), e.sbuf_base_addr);
        assert_eq!(u64_at(l, 0x30), e.one_value_read_addr);
        assert_eq!(u64_at(l, 0x38), e.completion_write_addr);
        // DRAIN: header only.
        let mut drain = [0u8; 64];
        drain[..2].copy_from_slice(&[0xA2, 0x10]);
        assert_eq!(out[4], drain);
        // EVENT_SEMAPHORE: header 0x10A0, update_mode 0x13 on the pseudo's semaphore, nothing else.
        let mut gate = [0u8; 64];
        gate[..2].copy_from_slice(&[0xA0, 0x10]);
        gate[6] = 0x13;
        gate[7] = 4;
        assert_eq!(out[5], gate);
    }

    #[test]
    fn an_explicit_sbuf_base_is_kept_and_a_missing_completion_is_refused() {
        let rec = pseudo("pseudo_embedding_update queue=0 embedding_table=8 sbuf_base_addr=0x77 src_addr=0 dst_addr=0 bytes=0 update=sem1++\n");
        let out = lower_pseudo_embedding_update(&rec, &env()).unwrap();
        assert_eq!(u64_at(&out[3], 0x28), 0x77);
        let rec = pseudo("pseudo_embedding_update queue=0 embedding_table=8 sbuf_base_addr=0 src_addr=0 dst_addr=0 bytes=0\n");
        assert!(matches!(lower_pseudo_embedding_update(&rec, &env()), Err(CustomOpLowerError::NoCompletion(UpdateMode::None))));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Any 0xCA record either lowers to the six records in the fixed
        /// order or is refused; never a panic.
        #[test]
        fn any_record_lowers_in_order_or_fails(mut raw in proptest::collection::vec(proptest::prelude::any::<u8>(), 64)) {
            raw[0] = 0xCA;
            let rec: RecordBytes = raw.as_slice().try_into().unwrap();
            if let Ok(out) = lower_pseudo_embedding_update(&rec, &env()) {
                proptest::prop_assert!(is_micro_program(&out));
                proptest::prop_assert_eq!(out[5][7], rec[7]);
            }
        }
    }
}
