//! The runtime's own device programs: the per-engine dispatcher that waits
//! for the doorbell and jumps into the requested model, and the frame
//! (PREAMBLE / MODEL_SWITCH / POSTAMBLE) around each model's lowered code.
//!
//! Several models share a core because nothing model-specific is started
//! on the engines: each engine runs one dispatcher stream, started once per
//! core. Per execution:
//!
//! 1. the host writes the 56-byte request into the core's request buffer
//!    and increments [`DOORBELL_SEM`] (the one doorbell);
//! 2. SP's dispatcher takes the doorbell unit with its first CTRL_POLL_SEM
//!    (the take is that record's wait and update), loads its
//!    instruction-block address (lo/hi) from the request and branches
//!    (CTRL_BR register form) to it;
//! 3. the address is one of two entries of the model's image
//!    ([`FrameHead`]): the *switch entry* when the request's
//!    `do_model_switch` is set, the *repeat entry* otherwise, so the
//!    device does not read the flag and test it on every execution (a
//!    poll and a branch per engine less); the host writes the flag
//!    anyway, as libnrt's request carries it;
//! 4. SP's PREAMBLE starts the other engines the model has programs for, by
//!    incrementing their go semaphores ([`go_sem`]); their dispatchers then
//!    load their own addresses the same way and branch into their images;
//! 5. on the switch path the PREAMBLE is followed by the MODEL_SWITCH
//!    region; MAIN is the model; the POSTAMBLE joins the started engines on
//!    [`DONE_SEM`], SP resets the model's semaphores, and every started
//!    engine EXITs, which reports END and returns the sequencer to its
//!    dispatcher.
//!
//! An engine the model gives no instructions (a `copy` model has only a
//! DMA program on SP) is not started at all: it writes no START/END, the
//! harvest starts its sub-state at COMPLETE ([`EngineSet`]) and SP's join
//! does not wait for it. A compiler NEFF programs all five engines and so
//! starts all five, as libnrt does; the saving is for small models, where
//! an idle engine's dispatch, frame and two notifications were most of the
//! device's work per execution.
//!
//! The simulator's CTRL_BR register form only jumps inside the stream the
//! engine was started on, so every dispatcher is started on a stream that
//! runs to the end of the core's instruction arena, where model images are
//! placed ([`crate::exec::cores`]).

use crate::exec::request;
use nrt_hal::EngineId;
use nrt_isa::instr::{
    BranchCmp, BranchTarget, CtrlBr, CtrlEr, CtrlPollSem, DtypeCode, EventSemaphore, ExtUpdate, ExtWait, Head, Nop,
    Notify, ResetTarget, slots,
};
use nrt_isa::dtype::Dtype;
use nrt_isa::record::{Events, RecordBytes, UpdateMode, WaitMode};

/// Semaphore the host increments once per execution (the doorbell).
pub const DOORBELL_SEM: u32 = 255;
/// First per-engine go semaphore (PE .. DVE use 250..=253; SP takes the doorbell).
pub const GO_SEM_BASE: u32 = 250;
/// Semaphore the engines count up in their postamble; SP waits for the other four.
pub const DONE_SEM: u32 = 249;
/// Semaphore SP's MODEL_SWITCH region increments: how many switches the device executed.
pub const SWITCH_COUNT_SEM: u32 = 248;
/// Semaphores `0..MODEL_SEMAPHORES` belong to models; the postamble resets them.
/// `MODEL_SEMAPHORES..248` are the in-NEFF collectives' block (`cc::neff`:
/// the ready counters loaded models take per replica group set, and the
/// done counter), which a peer may raise across the end of an execution and
/// so must survive the reset. Compiler NEFFs use low indices
/// (spec/real-isa-observed.md: 0..27).
pub const MODEL_SEMAPHORES: u32 = 192;

/// Sequencer register receiving the low 32 bits of the model's block address.
pub const REG_ADDR_LO: u8 = 1;
/// Sequencer register receiving the high 32 bits.
pub const REG_ADDR_HI: u8 = 2;

/// Records reserved per engine for its dispatcher at the start of the arena.
pub const DISPATCHER_RECORDS: u64 = 16;

/// The engines one subgraph's program runs on a core: SP always (it takes
/// the doorbell and ends every execution), each other engine when the
/// subgraph gives it an instruction stream. The frame of SP's image starts
/// and joins exactly these, and the harvest expects START/END from exactly
/// these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EngineSet(u8);

impl EngineSet {
    /// All five engines (every compiler NEFF).
    pub const ALL: EngineSet = EngineSet(0x1F);

    /// SP and the engines for which `has_program` is true.
    pub fn with_programs(has_program: impl Fn(EngineId) -> bool) -> EngineSet {
        let mut bits = 1u8 << EngineId::Sp.index();
        for e in EngineId::ALL {
            if has_program(e) {
                bits |= 1 << e.index();
            }
        }
        EngineSet(bits)
    }

    /// The set as a bit mask (bit `i`: the engine of index `i` runs).
    pub fn bits(self) -> u8 {
        self.0
    }

    /// Whether `engine` runs.
    pub fn contains(self, engine: EngineId) -> bool {
        self.0 & (1 << engine.index()) != 0
    }

    /// Whether the engine of index `index` (0..5) runs.
    pub fn contains_index(self, index: usize) -> bool {
        index < EngineId::ALL.len() && self.0 & (1 << index) != 0
    }

    /// The engines SP starts and joins (all but SP), in engine order.
    pub fn others(self) -> impl Iterator<Item = EngineId> {
        EngineId::ALL.into_iter().filter(move |e| *e != EngineId::Sp && self.contains(*e))
    }
}

/// The go semaphore of a non-SP engine.
pub fn go_sem(engine: EngineId) -> u32 {
    GO_SEM_BASE + engine.index() as u32
}

fn sem(i: u32) -> u8 {
    i as u8
}

fn poll(dst_reg: u8, addr: u64, events: Events) -> RecordBytes {
    CtrlPollSem { head: Head::with_events(events), dst_reg, count: 1, addr }.encode()
}

/// The dispatcher stream of `engine` on a core whose request buffer is at
/// `request_addr`: three records, the first of which waits for the
/// engine's semaphore (the doorbell on SP, its go semaphore elsewhere).
pub fn dispatcher(engine: EngineId, request_addr: u64) -> Vec<RecordBytes> {
    let mut out = Vec::with_capacity(3);
    let (wait, dec) = if engine == EngineId::Sp { (DOORBELL_SEM, DOORBELL_SEM) } else { (go_sem(engine), go_sem(engine)) };
    // Take one unit (wait >= 1 and decrement, as one step) before the
    // first load, so the address read is the request this unit rang for.
    let take = Events { wait_mode: WaitMode::SemGeImm, wait_idx: sem(wait), update_mode: UpdateMode::SemDecRead, update_idx: sem(dec), value: 1 };
    let e = engine.index() as u64;
    out.push(poll(REG_ADDR_LO, request_addr + request::ENG_ADDR_LO as u64 + 4 * e, take));
    out.push(poll(REG_ADDR_HI, request_addr + request::ENG_ADDR_HI as u64 + 4 * e, Events::NONE));
    out.push(
        CtrlBr {
            head: Head { debug_hint: slots::BRANCH_DEBUG_HINT, ..Head::default() },
            cmp: BranchCmp::Always,
            dtype: DtypeCode::of(Dtype::Uint32),
            target: BranchTarget::Register,
            target_reg_lo: REG_ADDR_LO,
            target_reg_hi: REG_ADDR_HI,
            ..CtrlBr::default()
        }
        .encode(),
    );
    debug_assert!(out.len() as u64 <= DISPATCHER_RECORDS);
    out
}

/// The records of an image before its MAIN, and where a repeat enters
/// them. Laid out `[PREAMBLE][MODEL_SWITCH]([BRANCH][PREAMBLE])`: the
/// switch entry is record 0 and runs the PREAMBLE, the MODEL_SWITCH
/// region and MAIN; the repeat entry runs the PREAMBLE and MAIN. When the
/// PREAMBLE is not empty (SP starting other engines) the switch path
/// branches over the repeat path's copy of it; otherwise the repeat entry
/// is MAIN itself and neither path executes a record it does not need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameHead {
    /// The records, in image order.
    pub records: Vec<RecordBytes>,
    /// Index of the first record a repeat executes (`records.len()`: MAIN).
    pub repeat_entry: usize,
}

/// The head of a model image that runs on all five engines
/// ([`frame_head`] with [`EngineSet::ALL`]).
pub fn preamble(engine: EngineId) -> Vec<RecordBytes> {
    frame_head(engine, EngineSet::ALL).records
}

/// The records of [`frame_head`] (the image's records before MAIN).
pub fn preamble_for(engine: EngineId, engines: EngineSet) -> Vec<RecordBytes> {
    frame_head(engine, engines).records
}

/// The head of `engine`'s image in a program that runs on `engines`: SP's
/// PREAMBLE starts the other engines (their go semaphores, two per
/// record; the other engines' PREAMBLE is empty). SP's MODEL_SWITCH
/// region counts the switch on [`SWITCH_COUNT_SEM`] (where a real core
/// reloads its sequencer configuration); the other engines' is a NOP.
pub fn frame_head(engine: EngineId, engines: EngineSet) -> FrameHead {
    let mut starts = Vec::new();
    if engine == EngineId::Sp {
        let others: Vec<EngineId> = engines.others().collect();
        for pair in others.chunks(2) {
            let first = Events { update_mode: UpdateMode::SemAddImmRead, update_idx: sem(go_sem(pair[0])), value: 1, ..Events::NONE };
            let ext = pair
                .get(1)
                .map(|e| ExtUpdate { mode: UpdateMode::SemAddImmRead, idx: sem(go_sem(*e)), value: 1 })
                .unwrap_or_default();
            starts.push(EventSemaphore { head: Head::with_events(first), ext_update: ext, ..EventSemaphore::default() }.encode());
        }
    }
    let switch = if engine == EngineId::Sp {
        EventSemaphore {
            ext_update: ExtUpdate { mode: UpdateMode::SemAddImmRead, idx: sem(SWITCH_COUNT_SEM), value: 1 },
            ..EventSemaphore::default()
        }
        .encode()
    } else {
        Nop::default().encode()
    };
    let mut records = starts.clone();
    records.push(switch);
    if !starts.is_empty() {
        // Over the repeat path's PREAMBLE, to MAIN.
        let rel = 1 + starts.len() as i32;
        let mut br = slots::branch_relative(BranchCmp::Always, 0, 0, rel, Events::NONE);
        br.rel_offset = i64::from(rel);
        records.push(br.encode());
    }
    let repeat_entry = records.len();
    records.extend(starts);
    FrameHead { records, repeat_entry }
}

/// The POSTAMBLE of `engine`'s image in a program that runs on all five
/// engines ([`postamble_for`] with [`EngineSet::ALL`]).
pub fn postamble(engine: EngineId) -> Vec<RecordBytes> {
    postamble_for(engine, EngineSet::ALL)
}

/// The POSTAMBLE: every started non-SP engine counts itself done and
/// EXITs; SP waits for them (no wait when it runs alone), resets the model
/// semaphores and the join counter, then EXITs (its END is therefore the
/// last of the execution).
pub fn postamble_for(engine: EngineId, engines: EngineSet) -> Vec<RecordBytes> {
    if engine == EngineId::Sp {
        let others = engines.others().count() as u32;
        let mut out = Vec::with_capacity(3);
        if others > 0 {
            out.push(
                EventSemaphore {
                    head: Head::with_events(Events::wait_sem_ge(sem(DONE_SEM), others)),
                    ext_wait: ExtWait::default(),
                    ext_update: ExtUpdate { mode: UpdateMode::SemSubImmRead, idx: sem(DONE_SEM), value: others },
                }
                .encode(),
            );
        }
        out.push(CtrlEr { head: Head::default(), target: ResetTarget::Semaphores, first: 0, last: sem(MODEL_SEMAPHORES - 1) }.encode());
        out.push(slots::exit_execution().encode());
        out
    } else {
        vec![
            EventSemaphore {
                ext_update: ExtUpdate { mode: UpdateMode::SemAddImmComplete, idx: sem(DONE_SEM), value: 1 },
                ..EventSemaphore::default()
            }
            .encode(),
            slots::exit_execution().encode(),
        ]
    }
}

/// The NQ engine index SP's records go to.
const SP_QUEUE: u8 = 4;

/// Streaming-output records (seed 002 §3): one NOTIFY per model output,
/// custom sub-id 7 (tensor completion) with the output's index as payload
/// (the simulator carries it in the record's 20-bit instruction field).
/// The harvest turns each into a completion of that output tensor.
pub fn output_notifications(outputs: usize) -> Vec<RecordBytes> {
    (0..outputs)
        .map(|k| {
            Notify {
                head: Head::default(),
                queue: SP_QUEUE,
                subtype: nrt_isa::notification::RuntimeSubtype::Custom as u16,
                sub_id: nrt_isa::notification::CustomSubId::TensorCompletion as u16,
                payload: k as u32,
            }
            .encode()
        })
        .collect()
}

/// Puts `records` into SP's image right after its POSTAMBLE join (every
/// started engine's main program, and so every output write, has
/// finished) and before it resets the model semaphores and exits. Returns
/// false if the image does not end with SP's postamble.
pub fn insert_after_join(sp_image: &mut Vec<RecordBytes>, records: Vec<RecordBytes>) -> bool {
    let full = postamble(EngineId::Sp);
    // The reset and the EXIT, whichever join came before them.
    let tail = &full[full.len() - 2..];
    if sp_image.len() < tail.len() || sp_image[sp_image.len() - tail.len()..] != *tail {
        return false;
    }
    let at = sp_image.len() - tail.len();
    sp_image.splice(at..at, records);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_isa::instr::Instruction;

    #[test]
    fn dispatchers_decode_and_end_in_a_register_branch() {
        for e in EngineId::ALL {
            let d = dispatcher(e, 0x1000);
            assert!(d.len() as u64 <= DISPATCHER_RECORDS);
            assert_eq!(d.last().unwrap()[0], 0xA9);
            assert_eq!(d.last().unwrap()[0x0E], 1, "register target");
            assert_eq!(d.len(), 3, "two loads and the branch");
            for r in &d {
                Instruction::decode(r).unwrap();
            }
        }
        // SP takes the doorbell, every other engine its own go semaphore.
        for e in EngineId::ALL {
            let take = Events::read_at(&dispatcher(e, 0)[0], 4);
            let want = if e == EngineId::Sp { DOORBELL_SEM } else { go_sem(e) };
            assert_eq!((take.wait_mode, u32::from(take.wait_idx), take.update_mode, u32::from(take.update_idx)), (WaitMode::SemGeImm, want, UpdateMode::SemDecRead, want));
        }
    }

    /// The go semaphores SP's preamble increments on the repeat path.
    fn started(pre: &[RecordBytes]) -> Vec<u8> {
        let mut targets = Vec::new();
        for r in pre.iter().filter(|r| r[0] == 0xA0) {
            if r[6] != 0 {
                targets.push(r[7]);
            }
            if r[0x22] != 0 {
                targets.push(r[0x23]);
            }
        }
        targets.retain(|t| u32::from(*t) != SWITCH_COUNT_SEM);
        targets.sort();
        targets
    }

    /// The records one entry of `head` executes up to MAIN (following
    /// relative branches), and whether the MODEL_SWITCH record was among them.
    fn path(head: &FrameHead, entry: usize) -> (Vec<RecordBytes>, bool) {
        let (mut pc, mut out, mut switched) = (entry, Vec::new(), false);
        while pc < head.records.len() {
            let r = head.records[pc];
            match Instruction::decode(&r).unwrap() {
                Instruction::CtrlBr(b) => {
                    assert_eq!(b.cmp, BranchCmp::Always);
                    pc = (pc as i64 + b.rel_offset) as usize;
                    continue;
                }
                Instruction::Nop(_) => switched = true,
                Instruction::EventSemaphore(e) if e.ext_update.idx as u32 == SWITCH_COUNT_SEM => switched = true,
                _ => out.push(r),
            }
            pc += 1;
        }
        assert_eq!(pc, head.records.len(), "both paths end at MAIN");
        (out, switched)
    }

    #[test]
    fn sp_starts_and_joins_exactly_the_engines_with_programs() {
        let join = |post: &[RecordBytes]| post.iter().find(|r| r[0] == 0xA0).map(|r| Events::read_at(r, 4).value);
        let pe_pool = EngineSet::with_programs(|e| matches!(e, EngineId::Pe | EngineId::Pool));
        assert!(pe_pool.contains(EngineId::Sp) && !pe_pool.contains(EngineId::Act));
        for (engines, want, joined) in [
            (EngineSet::ALL, vec![250, 251, 252, 253], Some(4)),
            (pe_pool, vec![go_sem(EngineId::Pe) as u8, go_sem(EngineId::Pool) as u8], Some(2)),
        ] {
            let head = frame_head(EngineId::Sp, engines);
            // Both entries start the same engines; only the switch entry
            // runs the MODEL_SWITCH region.
            let (switch_path, switched) = path(&head, 0);
            let (repeat_path, repeat_switched) = path(&head, head.repeat_entry);
            assert_eq!((switched, repeat_switched), (true, false));
            assert_eq!(started(&switch_path), want);
            assert_eq!(started(&repeat_path), want);
            assert_eq!(join(&postamble_for(EngineId::Sp, engines)), joined);
        }
        // SP alone: nothing to start, no join, just the reset and EXIT; the
        // repeat entry is MAIN itself.
        let alone = EngineSet::with_programs(|_| false);
        let head = frame_head(EngineId::Sp, alone);
        assert_eq!((head.records.len(), head.repeat_entry), (1, 1));
        assert_eq!(postamble_for(EngineId::Sp, alone).len(), 2);
        for e in EngineId::ALL {
            let head = frame_head(e, alone);
            assert_eq!(path(&head, head.repeat_entry), (Vec::new(), false));
            for r in &head.records {
                Instruction::decode(r).unwrap();
            }
        }
    }

    #[test]
    fn frames_end_with_exit_and_sp_resets_model_semaphores() {
        for e in EngineId::ALL {
            let p = postamble(e);
            assert!(slots::is_exit_record(p.last().unwrap()));
            // SP's preamble starts the four other engines (two per record),
            // once on each path; the others have only the switch region.
            assert_eq!(preamble(e).len(), if e == EngineId::Sp { 6 } else { 1 });
        }
        let sp = postamble(EngineId::Sp);
        assert_eq!((sp[1][0], sp[1][0x0D], sp[1][0x0E]), (0xB0, 0, (MODEL_SEMAPHORES - 1) as u8));
    }

    #[test]
    fn output_notifications_go_between_the_join_and_the_exit() {
        for engines in [EngineSet::ALL, EngineSet::with_programs(|_| false)] {
            let mut img = preamble_for(EngineId::Sp, engines);
            img.extend(postamble_for(EngineId::Sp, engines));
            let n = img.len();
            assert!(insert_after_join(&mut img, output_notifications(2)));
            assert_eq!(img.len(), n + 2);
            // The two NOTIFYs sit right before the semaphore reset and EXIT.
            let at = n - 2;
            for (k, r) in img[at..at + 2].iter().enumerate() {
                match Instruction::decode(r).unwrap() {
                    Instruction::Notify(x) => assert_eq!((x.queue, x.subtype, x.sub_id, x.payload), (4, 6, 7, k as u32)),
                    other => panic!("expected NOTIFY, got {other:?}"),
                }
            }
            assert_eq!(img[at + 2][0], 0xB0);
            assert!(slots::is_exit_record(img.last().unwrap()));
        }
        // Not an SP image: refused.
        let mut act = postamble(EngineId::Act);
        assert!(!insert_after_join(&mut act, output_notifications(1)));
    }
}
