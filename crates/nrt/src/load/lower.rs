//! Lowering and relocation of one engine stream, and assembly of the
//! engine's device image `[PREAMBLE][MODEL_SWITCH][MAIN][POSTAMBLE]`.
//!
//! - PSEUDO_DMA_TRIGGER becomes two WRITEs of the block's descriptor count
//!   to the queue's tail-increment registers (TX then RX); the trigger's
//!   wait moves onto the first WRITE and its update onto the second.
//! - The compiler's 0xD4 DMA (`dma2d`) becomes the same two WRITEs on the
//!   queue its completion semaphore names (its descriptors are on that
//!   queue's ring, one packet per completion increment).
//! - PSEUDO_EMBEDDING_UPDATE (0xCA, a GPSIMD custom op) becomes the six
//!   records of [`crate::custom_ops::lower`]'s micro-program.
//! - PSEUDO_TRIGGER_COLLECTIVE (0xC8) becomes the records
//!   [`crate::cc::neff`] composed for it at load (the ready barrier, the
//!   doorbells of this rank's first steps, the wait for its done count).
//! - PSEUDO_BRANCH_LABEL is consumed.
//! - PSEUDO_INST EXIT becomes a branch to the POSTAMBLE, so the runtime's
//!   own completion path (join, semaphore reset, END) always runs.
//! - Relative branches are re-targeted to where their target record moved.
//! - Anything the device cannot execute fails with libnrt's message.

use crate::custom_ops::lower::MICRO_PROGRAM_RECORDS;
use crate::exec::dispatch::{self, EngineSet};
use crate::load::sites::ImageMap;
use crate::program::opcodes::{CUSTOM_OP_OPCODE, DMA_DIRECT2D_OPCODE, OpcodeHandling, TRIGGER_COLLECTIVE_OPCODE, handling};
use nrt_hal::EngineId;
use nrt_isa::instr::{BranchCmp, BranchTarget, CtrlBr, PseudoDmaTrigger, slots};
use nrt_isa::record::{EVENTS_OFFSET, Events, RecordBytes, UpdateMode, WaitMode};
use thiserror::Error;

/// WRITE 0xA3 (the device's register/memory write; u64 address at +0x10,
/// u32 value at +0x18).
pub const WRITE_OPCODE: u8 = 0xA3;

/// Why a stream cannot be lowered.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LowerError {
    /// An opcode the device cannot execute (libnrt's wording first).
    #[error("Unsupported hardware operator code {opcode} found in neff ({engine} instruction {index}{} of {subgraph})", quoted(.name))]
    UnsupportedOpcode {
        /// The compiler's name of the instruction (from the debug info).
        name: Option<String>,
        /// Opcode byte.
        opcode: u8,
        /// Engine name.
        engine: &'static str,
        /// Instruction index in the engine's stream.
        index: usize,
        /// Subgraph.
        subgraph: String,
    },
    /// A record whose operands make no sense for its opcode.
    #[error("{subgraph}: {engine} instruction {index}: {reason}")]
    BadRecord {
        /// Subgraph.
        subgraph: String,
        /// Engine name.
        engine: &'static str,
        /// Instruction index.
        index: usize,
        /// What is wrong and what was expected.
        reason: String,
    },
}

/// ` 'name'` for an instruction with a debug name, nothing otherwise.
fn quoted(name: &Option<String>) -> String {
    name.as_ref().map(|n| format!(" '{n}'")).unwrap_or_default()
}

/// Where a trigger's descriptors go: the tail-increment register addresses
/// of its hardware queue (TX, RX) and the descriptor count it submits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriggerTarget {
    /// M2S tail-increment register.
    pub tx_tail_inc: u64,
    /// S2M tail-increment register.
    pub rx_tail_inc: u64,
    /// Descriptors submitted.
    pub count: u32,
}

/// What a lowered record submits descriptors for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerRef<'a> {
    /// A PSEUDO_DMA_TRIGGER of DMA block `block_id` on queue set (or instance) `queue`.
    Block {
        /// Queue set or instance name.
        queue: &'a str,
        /// Block id.
        block_id: u32,
    },
    /// A 0xD4 DMA record (found by the engine and record index).
    Direct2d,
}

/// Encodes a WRITE of `value` to `addr` carrying `events`.
pub fn write_record(addr: u64, value: u32, events: Events) -> RecordBytes {
    let mut r = [0u8; 64];
    r[0] = WRITE_OPCODE;
    r[1] = nrt_isa::record::INST_WORD_LEN;
    events.write_at(&mut r, EVENTS_OFFSET);
    r[0x10..0x18].copy_from_slice(&addr.to_le_bytes());
    r[0x18..0x1C].copy_from_slice(&value.to_le_bytes());
    r
}

/// The semaphores an events block touches (for the reserved-range check).
pub fn semaphores_used(rec: &RecordBytes) -> impl Iterator<Item = u8> {
    let ev = Events::read_at(rec, EVENTS_OFFSET);
    let wait = matches!(ev.wait_mode, WaitMode::SemEqImm | WaitMode::SemLtImm | WaitMode::SemLeImm | WaitMode::SemGtImm | WaitMode::SemGeImm)
        .then_some(ev.wait_idx);
    let is_evt = matches!(ev.update_mode, UpdateMode::None | UpdateMode::EvtSetRead | UpdateMode::EvtClrRead | UpdateMode::EvtSetComplete | UpdateMode::EvtClrComplete);
    let update = (!is_evt).then_some(ev.update_idx);
    wait.into_iter().chain(update)
}

/// Fails on the first record of `records` the device cannot execute and
/// the lowering does not rewrite (checked before anything is staged).
/// `names` are the records' debug names (may be shorter or empty).
pub fn check_opcodes(subgraph: &str, engine: EngineId, records: &[RecordBytes], names: &[Option<String>]) -> Result<(), LowerError> {
    match records.iter().position(|r| handling(r) == OpcodeHandling::Unsupported) {
        Some(index) => Err(LowerError::UnsupportedOpcode {
            opcode: records[index][0],
            engine: engine.name(),
            index,
            subgraph: subgraph.to_string(),
            name: names.get(index).cloned().flatten(),
        }),
        None => Ok(()),
    }
}

/// What one input record turns into.
enum Emit {
    Keep,
    Drop,
    Trigger(TriggerTarget),
    Exit,
    CustomOp(Box<[RecordBytes; MICRO_PROGRAM_RECORDS]>),
    Records(Vec<RecordBytes>),
}

/// Lowers one engine stream into MAIN and assembles the engine's image.
/// `trigger` resolves where a PSEUDO_DMA_TRIGGER or 0xD4 DMA record
/// (with its index) submits its descriptors.
pub fn lower_engine(
    subgraph: &str,
    engine: EngineId,
    records: &[RecordBytes],
    trigger: impl FnMut(TriggerRef<'_>, usize) -> Result<TriggerTarget, LowerError>,
) -> Result<Vec<RecordBytes>, LowerError> {
    lower_engine_with(subgraph, engine, records, &[], trigger, |index, _| {
        Err(LowerError::BadRecord {
            subgraph: subgraph.to_string(),
            engine: engine.name(),
            index,
            reason: "PSEUDO_EMBEDDING_UPDATE needs the core's custom-op queues, which this lowering was not given".to_string(),
        })
    })
}

/// [`lower_engine`] with custom ops: `head` is placed at the start of MAIN
/// (the POOL engine's library configuration), and `custom_op` lowers a
/// 0xCA record (with its index) into its micro-program.
pub fn lower_engine_with(
    subgraph: &str,
    engine: EngineId,
    records: &[RecordBytes],
    head: &[RecordBytes],
    trigger: impl FnMut(TriggerRef<'_>, usize) -> Result<TriggerTarget, LowerError>,
    custom_op: impl FnMut(usize, &RecordBytes) -> Result<[RecordBytes; MICRO_PROGRAM_RECORDS], LowerError>,
) -> Result<Vec<RecordBytes>, LowerError> {
    let no_cc = |index: usize, _: &RecordBytes| {
        Err(LowerError::BadRecord {
            subgraph: subgraph.to_string(),
            engine: engine.name(),
            index,
            reason: "PSEUDO_TRIGGER_COLLECTIVE needs the load's collectives context, which this lowering was not given".to_string(),
        })
    };
    lower_engine_mapped(subgraph, engine, EngineSet::ALL, records, head, trigger, custom_op, no_cc).map(|(image, _)| image)
}

/// [`lower_engine_with`] for a subgraph that runs on `engines` (which sizes
/// SP's start-up and join), also returning the map from image records back
/// to the stream's instructions (for messages and traces that name them).
/// `collective` gives the records a 0xC8 record (with its index) becomes.
#[allow(clippy::too_many_arguments)]
pub fn lower_engine_mapped(
    subgraph: &str,
    engine: EngineId,
    engines: EngineSet,
    records: &[RecordBytes],
    head: &[RecordBytes],
    mut trigger: impl FnMut(TriggerRef<'_>, usize) -> Result<TriggerTarget, LowerError>,
    mut custom_op: impl FnMut(usize, &RecordBytes) -> Result<[RecordBytes; MICRO_PROGRAM_RECORDS], LowerError>,
    mut collective: impl FnMut(usize, &RecordBytes) -> Result<Vec<RecordBytes>, LowerError>,
) -> Result<(Vec<RecordBytes>, ImageMap), LowerError> {
    let bad = |index: usize, reason: String| LowerError::BadRecord { subgraph: subgraph.to_string(), engine: engine.name(), index, reason };
    // Pass 1: decide what each record becomes and where it lands in MAIN.
    let mut plan = Vec::with_capacity(records.len());
    let mut start = Vec::with_capacity(records.len() + 1);
    let mut at = head.len();
    for (index, rec) in records.iter().enumerate() {
        if let Some(s) = semaphores_used(rec).find(|s| u32::from(*s) >= dispatch::MODEL_SEMAPHORES) {
            return Err(bad(index, format!("uses semaphore {s}; models may use 0..{} (the rest belong to the runtime)", dispatch::MODEL_SEMAPHORES)));
        }
        let emit = match handling(rec) {
            OpcodeHandling::Execute => Emit::Keep,
            OpcodeHandling::Drop => Emit::Drop,
            OpcodeHandling::Unsupported => {
                return Err(LowerError::UnsupportedOpcode { opcode: rec[0], engine: engine.name(), index, subgraph: subgraph.to_string(), name: None });
            }
            // An EXIT that ends the stream and carries no semaphore or
            // event work would become a branch to the very next record
            // (the postamble): it is dropped instead, one record less per
            // execution.
            OpcodeHandling::Lower if slots::is_exit_record(rec) && index + 1 == records.len() && Events::read_at(rec, EVENTS_OFFSET) == Events::NONE => Emit::Drop,
            OpcodeHandling::Lower if slots::is_exit_record(rec) => Emit::Exit,
            OpcodeHandling::Lower if rec[0] == DMA_DIRECT2D_OPCODE => Emit::Trigger(trigger(TriggerRef::Direct2d, index)?),
            OpcodeHandling::Lower if rec[0] == TRIGGER_COLLECTIVE_OPCODE => Emit::Records(collective(index, rec)?),
            OpcodeHandling::Lower if rec[0] == CUSTOM_OP_OPCODE => {
                if engine != EngineId::Pool {
                    return Err(bad(index, format!("PSEUDO_EMBEDDING_UPDATE belongs to the POOL engine's stream, found on {}", engine.name())));
                }
                Emit::CustomOp(Box::new(custom_op(index, rec)?))
            }
            OpcodeHandling::Lower => {
                let t = PseudoDmaTrigger::decode(rec).map_err(|e| bad(index, format!("PSEUDO_DMA_TRIGGER does not decode: {e}")))?;
                if t.use_raw_count != 0 {
                    return Err(bad(index, "a raw-count DMA trigger is not supported; name a DMA block".to_string()));
                }
                Emit::Trigger(trigger(TriggerRef::Block { queue: &t.queue.0, block_id: t.block_id }, index)?)
            }
        };
        start.push(at);
        at += match emit {
            Emit::Keep | Emit::Exit => 1,
            Emit::Drop => 0,
            Emit::Trigger(_) => 2,
            Emit::CustomOp(_) => MICRO_PROGRAM_RECORDS,
            Emit::Records(ref r) => r.len(),
        };
        plan.push(emit);
    }
    start.push(at);
    let main_len = at;
    let pre = dispatch::preamble_for(engine, engines);
    // Pass 2: emit with branch targets moved.
    let mut main = Vec::with_capacity(main_len);
    main.extend_from_slice(head);
    for (index, (rec, emit)) in records.iter().zip(&plan).enumerate() {
        let here = start[index] as i64;
        match emit {
            Emit::Drop => {}
            Emit::Keep if rec[0] == 0xA9 => {
                let mut br = CtrlBr::decode(rec).map_err(|e| bad(index, format!("CTRL_BR does not decode: {e}")))?;
                match br.target {
                    BranchTarget::RelImm => {
                        let old = index as i64 + br.rel_offset;
                        if old < 0 || old > records.len() as i64 {
                            return Err(bad(index, format!("branch target {old} lies outside the stream of {} records", records.len())));
                        }
                        br.rel_offset = start[old as usize] as i64 - here;
                        main.push(br.encode());
                    }
                    BranchTarget::Register => main.push(*rec),
                    BranchTarget::RelRegister => {
                        return Err(bad(index, "a register-relative branch cannot be relocated".to_string()));
                    }
                }
            }
            Emit::Keep => main.push(*rec),
            Emit::Exit => {
                let ev = Events::read_at(rec, EVENTS_OFFSET);
                let rel = main_len as i64 - here;
                let mut br = slots::branch_relative(BranchCmp::Always, 0, 0, rel as i32, ev);
                br.rel_offset = rel;
                main.push(br.encode());
            }
            Emit::Trigger(t) => {
                let ev = Events::read_at(rec, EVENTS_OFFSET);
                let wait = Events { update_mode: UpdateMode::None, update_idx: 0, ..ev };
                let update = Events { wait_mode: WaitMode::None, wait_idx: 0, ..ev };
                main.push(write_record(t.tx_tail_inc, t.count, wait));
                main.push(write_record(t.rx_tail_inc, t.count, update));
            }
            Emit::CustomOp(recs) => main.extend_from_slice(&recs[..]),
            Emit::Records(recs) => main.extend_from_slice(recs),
        }
    }
    // `start` counts from the head's start; the map wants MAIN offsets after it.
    let starts: Vec<usize> = start.iter().map(|s| s - head.len()).collect();
    let map = ImageMap::new(pre.len(), head.len(), &starts, records);
    let mut image = pre;
    image.extend(main);
    image.extend(dispatch::postamble_for(engine, engines));
    Ok((image, map))
}

/// The image of SP when the subgraph gives it no stream: SP still takes
/// the doorbell, starts and joins the subgraph's `engines` and ends the
/// execution. (Other engines without a stream get no image: they are not
/// started.)
pub fn empty_sp(engines: EngineSet) -> Vec<RecordBytes> {
    let mut image = dispatch::preamble_for(EngineId::Sp, engines);
    image.extend(dispatch::postamble_for(EngineId::Sp, engines));
    image
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_isa::asm::assemble;

    fn recs(text: &str) -> Vec<RecordBytes> {
        assemble(text).unwrap().chunks(64).map(|c| c.try_into().unwrap()).collect()
    }

    fn target(t: TriggerRef<'_>, index: usize) -> Result<TriggerTarget, LowerError> {
        match t {
            TriggerRef::Block { block_id, .. } => Ok(TriggerTarget { tx_tail_inc: 0x1000, rx_tail_inc: 0x1100, count: block_id + 1 }),
            TriggerRef::Direct2d => Err(LowerError::BadRecord { subgraph: "sg00".into(), engine: "POOL", index, reason: "no dma2d ring in this test".into() }),
        }
    }

    #[test]
    fn trigger_becomes_two_tail_writes_with_split_sync() {
        let img = lower_engine("sg00", EngineId::Sp, &recs("dma_trigger queue=\"q\" block_id=3 wait=sem4>=2 update=sem5++\npseudo_inst sub=exit_execution\n"), target).unwrap();
        let pre = dispatch::preamble(EngineId::Sp).len();
        let (a, b) = (img[pre], img[pre + 1]);
        assert_eq!((a[0], b[0]), (WRITE_OPCODE, WRITE_OPCODE));
        assert_eq!(u64::from_le_bytes(a[0x10..0x18].try_into().unwrap()), 0x1000);
        assert_eq!(u64::from_le_bytes(b[0x10..0x18].try_into().unwrap()), 0x1100);
        assert_eq!(u32::from_le_bytes(a[0x18..0x1C].try_into().unwrap()), 4);
        let (ea, eb) = (Events::read_at(&a, 4), Events::read_at(&b, 4));
        assert_eq!((ea.wait_mode, ea.wait_idx, ea.update_mode), (WaitMode::SemGeImm, 4, UpdateMode::None));
        assert_eq!((eb.wait_mode, eb.update_mode, eb.update_idx), (WaitMode::None, UpdateMode::SemIncComplete, 5));
        // A bare EXIT at the end of the stream is dropped: the postamble
        // (ending with the real EXIT) follows the trigger directly.
        assert_eq!(img.len(), pre + 2 + dispatch::postamble(EngineId::Sp).len());
        assert!(slots::is_exit_record(img.last().unwrap()));
    }

    #[test]
    fn an_exit_inside_the_stream_or_with_events_becomes_a_branch_to_the_postamble() {
        for text in ["pseudo_inst sub=exit_execution\nnop\n", "nop\npseudo_inst sub=exit_execution wait=sem4>=2\n"] {
            let img = lower_engine("sg00", EngineId::Pe, &recs(text), target).unwrap();
            let pre = dispatch::preamble(EngineId::Pe).len();
            let at = pre + img[pre..].iter().position(|r| r[0] == 0xA9).unwrap();
            let br = CtrlBr::decode(&img[at]).unwrap();
            assert_eq!(at as i64 + br.rel_offset, (pre + 2) as i64, "{text}: branches to the postamble");
        }
    }

    #[test]
    fn dma2d_becomes_two_tail_writes_keeping_its_wait() {
        let text = "dma2d flags=0 sem=27 sem_add=16 src=[var0+0x4200; 0x40000,128; 0x1,1; 256] dst=[dge2+0x0; 0x100,128; 0x1,1; 128] src_dtype=float32 dst_dtype=float16 wait=sem4>=2\n";
        let tgt = |t: TriggerRef<'_>, index: usize| match t {
            TriggerRef::Direct2d if index == 0 => Ok(TriggerTarget { tx_tail_inc: 0x2000, rx_tail_inc: 0x2100, count: 16 }),
            _ => target(t, index),
        };
        let img = lower_engine("sg00", EngineId::Pool, &recs(text), tgt).unwrap();
        let pre = dispatch::preamble(EngineId::Pool).len();
        let (a, b) = (img[pre], img[pre + 1]);
        assert_eq!(u64::from_le_bytes(a[0x10..0x18].try_into().unwrap()), 0x2000);
        assert_eq!(u64::from_le_bytes(b[0x10..0x18].try_into().unwrap()), 0x2100);
        assert_eq!(u32::from_le_bytes(b[0x18..0x1C].try_into().unwrap()), 16);
        let ea = Events::read_at(&a, 4);
        assert_eq!((ea.wait_mode, ea.wait_idx, ea.value), (WaitMode::SemGeImm, 4, 2));
        assert_eq!(Events::read_at(&b, 4).wait_mode, WaitMode::None);
        // Without a staged ring the record is refused, naming it.
        assert!(lower_engine("sg00", EngineId::Pool, &recs(text), target).unwrap_err().to_string().contains("no dma2d ring"));
    }

    #[test]
    fn relative_branches_follow_moved_records() {
        // label (dropped), trigger (2 records), branch back to the trigger.
        let text = "branch_label\ndma_trigger queue=\"q\" block_id=0\nbranch cmp=always dtype=int32 target=rel_imm rel_offset=-1\n";
        let img = lower_engine("sg00", EngineId::Pe, &recs(text), target).unwrap();
        let pre = dispatch::preamble(EngineId::Pe).len();
        let br = CtrlBr::decode(&img[pre + 2]).unwrap();
        assert_eq!(br.rel_offset, -2);
    }

    #[test]
    fn unsupported_opcodes_name_engine_and_index() {
        let mut r = recs("nop\nnop\n");
        r[1][0] = 0x0D;
        let e = lower_engine("sg01", EngineId::Pool, &r, target).unwrap_err();
        assert_eq!(e.to_string(), "Unsupported hardware operator code 13 found in neff (POOL instruction 1 of sg01)");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Untrusted streams never panic the lowering: each either lowers
        /// to whole records framed by the runtime's preamble and postamble,
        /// or is refused with an error.
        #[test]
        fn random_streams_lower_or_fail_cleanly(raw in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 64), 0..12), ops in proptest::collection::vec(0usize..8, 12)) {
            let table = [0xA0u8, 0xA4, 0xA9, 0xC1, 0xCC, 0xDF, 0xD4, 0x46];
            let recs: Vec<RecordBytes> = raw.iter().zip(&ops).map(|(r, &o)| {
                let mut x: RecordBytes = r.as_slice().try_into().unwrap();
                x[0] = table[o];
                x
            }).collect();
            if let Ok(img) = lower_engine("sg00", EngineId::Act, &recs, target) {
                proptest::prop_assert!(slots::is_exit_record(img.last().unwrap()));
                proptest::prop_assert!(img.len() >= dispatch::preamble(EngineId::Act).len() + dispatch::postamble(EngineId::Act).len());
            }
        }
    }

    #[test]
    fn unsupported_opcode_messages_carry_the_debug_name() {
        let mut r = recs("nop\nnop\n");
        r[1][0] = 0x0D;
        let names = [None, Some("I-74-0".to_string())];
        let e = check_opcodes("sg00", EngineId::Pool, &r, &names).unwrap_err();
        assert_eq!(e.to_string(), "Unsupported hardware operator code 13 found in neff (POOL instruction 1 'I-74-0' of sg00)");
        assert!(check_opcodes("sg00", EngineId::Pool, &r[..1], &[]).is_ok());
    }

    #[test]
    fn runtime_semaphores_are_refused() {
        let e = lower_engine("sg00", EngineId::Sp, &recs("nop wait=sem250>=1\n"), target).unwrap_err();
        assert!(e.to_string().contains("semaphore 250"), "{e}");
    }
}
