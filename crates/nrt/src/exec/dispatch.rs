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
//! 2. SP's dispatcher takes the doorbell unit and fans it out to the other
//!    engines' go semaphores ([`go_sem`]);
//! 3. every dispatcher loads its engine's instruction-block address (lo/hi)
//!    and the `do_model_switch` flag from the request with CTRL_POLL_SEM,
//!    and branches (CTRL_BR register form) to the model's image;
//! 4. the image's PREAMBLE skips the MODEL_SWITCH region unless the flag is
//!    set; MAIN is the model; the POSTAMBLE joins all engines on
//!    [`DONE_SEM`], SP resets the model's semaphores, and every engine
//!    EXITs, which reports END and returns the sequencer to its dispatcher.
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
pub const MODEL_SEMAPHORES: u32 = 248;

/// Sequencer register receiving the low 32 bits of the model's block address.
pub const REG_ADDR_LO: u8 = 1;
/// Sequencer register receiving the high 32 bits.
pub const REG_ADDR_HI: u8 = 2;
/// Sequencer register receiving `do_model_switch`.
pub const REG_SWITCH: u8 = 3;

/// Records reserved per engine for its dispatcher at the start of the arena.
pub const DISPATCHER_RECORDS: u64 = 16;

/// The go semaphore of a non-SP engine.
pub fn go_sem(engine: EngineId) -> u32 {
    GO_SEM_BASE + engine.index() as u32
}

fn sem(i: u32) -> u8 {
    i as u8
}

fn poll(dst_reg: u8, addr: u64) -> RecordBytes {
    CtrlPollSem { head: Head::default(), dst_reg, count: 1, addr }.encode()
}

/// The dispatcher stream of `engine` on a core whose request buffer is at
/// `request_addr`.
pub fn dispatcher(engine: EngineId, request_addr: u64) -> Vec<RecordBytes> {
    let mut out = Vec::with_capacity(8);
    if engine == EngineId::Sp {
        // Take one doorbell unit (wait >= 1 and decrement, as one step).
        let take = Events { wait_mode: WaitMode::SemGeImm, wait_idx: sem(DOORBELL_SEM), update_mode: UpdateMode::SemDecRead, update_idx: sem(DOORBELL_SEM), value: 1 };
        let others: Vec<EngineId> = EngineId::ALL.into_iter().filter(|e| *e != EngineId::Sp).collect();
        out.push(
            EventSemaphore {
                head: Head::with_events(take),
                ext_update: ExtUpdate { mode: UpdateMode::SemAddImmRead, idx: sem(go_sem(others[0])), value: 1 },
                ..EventSemaphore::default()
            }
            .encode(),
        );
        for pair in others[1..].chunks(2) {
            let first = Events { update_mode: UpdateMode::SemAddImmRead, update_idx: sem(go_sem(pair[0])), value: 1, ..Events::NONE };
            let ext = pair
                .get(1)
                .map(|e| ExtUpdate { mode: UpdateMode::SemAddImmRead, idx: sem(go_sem(*e)), value: 1 })
                .unwrap_or_default();
            out.push(EventSemaphore { head: Head::with_events(first), ext_update: ext, ..EventSemaphore::default() }.encode());
        }
    } else {
        let take = Events { wait_mode: WaitMode::SemGeImm, wait_idx: sem(go_sem(engine)), update_mode: UpdateMode::SemDecRead, update_idx: sem(go_sem(engine)), value: 1 };
        out.push(Nop { head: Head::with_events(take) }.encode());
    }
    let e = engine.index() as u64;
    out.push(poll(REG_SWITCH, request_addr + request::DO_MODEL_SWITCH as u64));
    out.push(poll(REG_ADDR_LO, request_addr + request::ENG_ADDR_LO as u64 + 4 * e));
    out.push(poll(REG_ADDR_HI, request_addr + request::ENG_ADDR_HI as u64 + 4 * e));
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

/// The PREAMBLE and MODEL_SWITCH regions of a model image: skip the switch
/// region unless the request's `do_model_switch` is set. SP's switch region
/// counts the switch on [`SWITCH_COUNT_SEM`] (where a real core reloads its
/// sequencer configuration); the other engines' is a NOP.
pub fn preamble(engine: EngineId) -> Vec<RecordBytes> {
    let skip = slots::branch_relative(BranchCmp::Eq, REG_SWITCH, 0, 2, Events::NONE).encode();
    let switch = if engine == EngineId::Sp {
        EventSemaphore {
            ext_update: ExtUpdate { mode: UpdateMode::SemAddImmRead, idx: sem(SWITCH_COUNT_SEM), value: 1 },
            ..EventSemaphore::default()
        }
        .encode()
    } else {
        Nop::default().encode()
    };
    vec![skip, switch]
}

/// The POSTAMBLE: every non-SP engine counts itself done and EXITs; SP
/// waits for the other four, resets the model semaphores and the join
/// counter, then EXITs (its END is therefore the last of the execution).
pub fn postamble(engine: EngineId) -> Vec<RecordBytes> {
    let others = (EngineId::ALL.len() - 1) as u32;
    if engine == EngineId::Sp {
        vec![
            EventSemaphore {
                head: Head::with_events(Events::wait_sem_ge(sem(DONE_SEM), others)),
                ext_wait: ExtWait::default(),
                ext_update: ExtUpdate { mode: UpdateMode::SemSubImmRead, idx: sem(DONE_SEM), value: others },
            }
            .encode(),
            CtrlEr { head: Head::default(), target: ResetTarget::Semaphores, first: 0, last: sem(MODEL_SEMAPHORES - 1) }.encode(),
            slots::exit_execution().encode(),
        ]
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
/// engine's main program, and so every output write, has finished) and
/// before it resets the model semaphores and exits. Returns false if the
/// image does not end with SP's postamble.
pub fn insert_after_join(sp_image: &mut Vec<RecordBytes>, records: Vec<RecordBytes>) -> bool {
    let tail = postamble(EngineId::Sp).len() - 1;
    if sp_image.len() < tail + 1 || sp_image[sp_image.len() - tail..] != postamble(EngineId::Sp)[1..] {
        return false;
    }
    let at = sp_image.len() - tail;
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
            for r in &d {
                Instruction::decode(r).unwrap();
            }
        }
        // SP fans the doorbell out to the four other go semaphores.
        let sp = dispatcher(EngineId::Sp, 0);
        let mut targets = Vec::new();
        for r in &sp[..3] {
            if r[6] != 0 {
                targets.push(r[7]);
            }
            if r[0x22] != 0 {
                targets.push(r[0x23]);
            }
        }
        targets.retain(|t| u32::from(*t) != DOORBELL_SEM);
        targets.sort();
        assert_eq!(targets, vec![250, 251, 252, 253]);
    }

    #[test]
    fn frames_end_with_exit_and_sp_resets_model_semaphores() {
        for e in EngineId::ALL {
            let p = postamble(e);
            assert!(slots::is_exit_record(p.last().unwrap()));
            assert_eq!(preamble(e).len(), 2);
        }
        let sp = postamble(EngineId::Sp);
        assert_eq!((sp[1][0], sp[1][0x0D], sp[1][0x0E]), (0xB0, 0, (MODEL_SEMAPHORES - 1) as u8));
    }

    #[test]
    fn output_notifications_go_between_the_join_and_the_exit() {
        let mut img = preamble(EngineId::Sp);
        img.extend(postamble(EngineId::Sp));
        let n = img.len();
        assert!(insert_after_join(&mut img, output_notifications(2)));
        assert_eq!(img.len(), n + 2);
        let join = n - 3;
        for (k, r) in img[join + 1..join + 3].iter().enumerate() {
            match Instruction::decode(r).unwrap() {
                Instruction::Notify(x) => assert_eq!((x.queue, x.subtype, x.sub_id, x.payload), (4, 6, 7, k as u32)),
                other => panic!("expected NOTIFY, got {other:?}"),
            }
        }
        assert!(slots::is_exit_record(img.last().unwrap()));
        // Not an SP image: refused.
        let mut act = postamble(EngineId::Act);
        assert!(!insert_after_join(&mut act, output_notifications(1)));
    }
}
