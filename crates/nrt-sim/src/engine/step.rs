//! The sequencer's issue loop: one scheduling slice of an engine over the
//! state of [`super`] (its [`Sequencer`] and [`Issuer`]).
//!
//! Per record: (1) check the waits of the events block (and the extended
//! block of EVENT_SEMAPHORE); if unmet, the engine blocks until a register
//! of its core changes; (2) on the first record of an execution, write a
//! START record into the engine's NOTIFY queue; (3) apply issue-time
//! updates; (4) execute (control ops here, compute ops through
//! [`compute::execute`]); (5) apply completion-time updates and advance the
//! engine's virtual clock by the cost.
//!
//! The loop sees its device only through [`Env`]: memory through its
//! [`crate::port::Bus`], register stores and wakes through its
//! [`crate::signals::Signals`], reports through the core's rings. Every
//! wake is made where the record's effects call for it, in the order the
//! records issue (lockstep runs depend on that order).

use super::keys::{EXTENDED_INST, KeySpan, reset_change};
use super::record::{self, op};
use super::sync::{self, WaitCheck};
use super::{BAD_OPERANDS_DETAIL, MALFORMED_RECORD_DETAIL, PollPage, RunState, Sequencer, Issuer, StepOutcome, compute, icache, regs};
use crate::core::Core;
use crate::cost;
use crate::fault::{FaultKind, InstrSite};
use crate::nq::record as nqr;
use crate::signals::Env;
use crate::wake::{Change, Changes, WaitKey};
use nrt_hal::{DeviceAddr, EngineId, NqType};
use nrt_isa::instr::{CtrlAl, CtrlBr, CtrlEr, CtrlPollSem, Instruction, Notify, PseudoSub, ResetTarget, Write};
use nrt_isa::notification::{EngineEvent, InferErrorSubtype, RuntimeSubtype};
use std::sync::Arc;

impl Sequencer {
    /// Runs at most `budget` records.
    ///
    /// The engine's clock reaches the core's clock ([`Core::observe`]) at
    /// the end of the step and before any record that hands work to
    /// another agent (a memory or register write, a DMA, a Q7 op, a compute
    /// instruction), not after every record: nothing else reads the core's
    /// clock in between, and each publish is an atomic read-modify-write.
    ///
    /// The interrupt line of the engine's own NOTIFY queue is raised once
    /// per execution, with its END record, for the records the execution
    /// wrote there, or at the end of the step for those an unfinished
    /// execution wrote (see [`Issuer::push_own_notify`]).
    pub fn step(&mut self, dev: &impl Env, core: &Arc<Core>, budget: usize) -> StepOutcome {
        let outcome = self.step_records(dev, core, budget);
        core.observe(self.st.clock);
        if self.st.signal_pending {
            self.st.raise_signal(core);
        }
        outcome
    }

    fn step_records(&mut self, dev: &impl Env, core: &Arc<Core>, budget: usize) -> StepOutcome {
        let st = &mut self.st;
        if st.state != RunState::Running {
            return StepOutcome::Stopped;
        }
        let Some((base, count)) = st.program else {
            st.state = RunState::Idle;
            return StepOutcome::Stopped;
        };
        let slice = Slice::new(st.engine, dev);
        let pool = st.engine == EngineId::Pool;
        // The block of the last lookup, held across records until a
        // record misses it (see `icache::Cursor`).
        // A cursor holds records of the program below `count` only, so a
        // record it hands out needs no test against the stream's end.
        let mut cursor = self.icache.cursor(base, count).unwrap_or_default();
        let mut left = budget;
        while left != 0 {
            left -= 1;
            // A Q7 kernel raised a GPSIMD exception: its record is written,
            // the POOL engine stops (docs/gpsimd.md §8).
            if pool && core.q7.take_halt() {
                st.state = RunState::Halted;
                return StepOutcome::Stopped;
            }
            let entry = match cursor.hit(st.pc) {
                Some(e) => e,
                None => {
                    if st.pc >= count {
                        // An execution never ends with a Q7 op in flight.
                        if pool && core.q7.busy() {
                            return StepOutcome::Blocked(WaitKey::Q7);
                        }
                        st.end_execution(dev, core, 0);
                        st.state = RunState::Idle;
                        return StepOutcome::Stopped;
                    }
                    // Fetch, decode or revalidate; the cursor then follows
                    // the block the lookup settled on.
                    let Some(slot) = self.icache.lookup(dev, base, count, st.pc) else {
                        return st.fatal(dev, core, InferErrorSubtype::SwSequencer, 0xFFFF);
                    };
                    cursor = self.icache.cursor(base, count).unwrap_or_default();
                    match self.icache.entry(slot) {
                        Some(e) => e,
                        None => return st.fatal(dev, core, InferErrorSubtype::SwSequencer, 0xFFFF),
                    }
                }
            };
            // A quick record goes straight on to the next one (the quick
            // path's arms `continue` the loop without an outcome value to
            // test); any other, or a quick record the quick path declines,
            // goes the general way. An issue that stops the sequencer
            // (HALT, a fault) ends the step with its outcome.
            if entry.flags & slice.quick_mask == icache::flag::QUICK {
                match st.issue_quick(dev, core, base, count, entry, &slice) {
                    Issued::Next => continue,
                    Issued::End(outcome) => return outcome,
                    Issued::General => {}
                }
            }
            if let Some(outcome) = st.issue_general(dev, core, base, count, entry, &slice) {
                return outcome;
            }
        }
        StepOutcome::Yield
    }
}

/// What a scheduling slice works out once for all the records it issues,
/// so an ordinary record tests one flag byte against `rare` and nothing
/// else before its handshake and its execution.
struct Slice {
    /// The [`icache::flag`] bits that send a record of this engine down
    /// the issue path's rare branches: DRAIN and the per-instruction trace
    /// on every engine, the Q7 join and the EVENT_SEMAPHORE completion gate
    /// on POOL only (elsewhere those flags change nothing).
    rare: u8,
    /// Whether any fault is armed. Read once per slice: faults are armed
    /// by the host, and every execution starts a new slice (each engine
    /// blocks at the end of one execution until the next is dispatched),
    /// so a fault armed before an execution is seen by all its records.
    faults: bool,
    /// The virtual duration of a control record on this engine.
    control_ps: u64,
    /// The flag bits whose value must be exactly [`icache::flag::QUICK`]
    /// for a record to take the quick issue path: QUICK and the rare
    /// bits, or nothing (never quick) while a fault is armed.
    quick_mask: u8,
}

impl Slice {
    fn new(engine: EngineId, dev: &impl Env) -> Slice {
        use icache::flag;
        let pool_only = if engine == EngineId::Pool { flag::POOL_Q7_JOIN | flag::EVENT_SEMAPHORE } else { 0 };
        let rare = flag::DRAIN | flag::TRACE_START | flag::TRACE_END | pool_only;
        let faults = dev.faults().armed();
        Slice { rare, faults, control_ps: cost::control(engine), quick_mask: if faults { 0 } else { flag::QUICK | rare } }
    }
}

/// What [`Issuer::issue_quick`] did with a record.
enum Issued {
    /// Issued; the step goes on with the next record.
    Next,
    /// The step ends with this outcome (blocked, or the sequencer stopped).
    End(StepOutcome),
    /// Not a quick record after all: nothing done, the general path
    /// issues it.
    General,
}

impl Issuer {
    /// Writes an infer-status record of type code `kind` (one of
    /// `self.kinds`) into this engine's NOTIFY queue.
    #[inline]
    fn notify(&mut self, dev: &impl Env, core: &Core, kind: u8, subtype: RuntimeSubtype, hint: u8, sub_id: u16) {
        let rec = nqr::engine_record(kind, nqr::subtype_word(subtype as u16, sub_id), self.pc, hint, self.clock);
        self.push_own_notify(dev, core, rec);
    }

    /// Writes a record into this engine's NOTIFY queue through the handle
    /// kept in `notify_queue` (refreshed when the core's bindings change),
    /// skipping the per-record search of the core's queues. The record is
    /// published at once; the queue's interrupt line is raised with the
    /// execution's END, or at the end of the step if the execution has
    /// not ended by then ([`Sequencer::step`]): once for the START, a
    /// model's NOTIFYs and the END of a small execution (one locked add
    /// instead of three; a host blocked on the line wakes once, and reads
    /// every record then).
    #[inline]
    fn push_own_notify(&mut self, dev: &impl Env, core: &Core, rec: [u8; nrt_hal::NQ_RECORD_BYTES]) {
        let generation = core.nq_generation();
        if self.notify_queue.as_ref().is_none_or(|(g, _)| *g != generation) {
            self.refresh_notify_queue(core, generation);
        }
        if let Some((_, Some(q))) = &self.notify_queue
            && q.push_unsignalled(dev, rec)
        {
            self.signal_pending = true;
        }
    }

    /// Raises the interrupt line of the records [`Issuer::push_own_notify`]
    /// wrote: the kept queue's (the core's line, for every ring the device
    /// binds), or the core's if the queue was unbound since.
    #[inline(never)]
    fn raise_signal(&mut self, core: &Core) {
        self.signal_pending = false;
        match &self.notify_queue {
            Some((_, Some(q))) => q.signal().raise(),
            _ => core.nq_signal.raise(),
        }
    }

    /// Looks this engine's NOTIFY queue up again (the core's bindings
    /// changed since the kept handle was taken, generation `generation`).
    #[inline(never)]
    fn refresh_notify_queue(&mut self, core: &Core, generation: u64) {
        self.notify_queue = Some((generation, core.nq(self.eidx(), NqType::Notify)));
    }

    /// The first record of an execution: its START record.
    #[inline]
    fn start_execution(&mut self, dev: &impl Env, core: &Core, hint: u8) {
        self.in_execution = true;
        core.activity.started(core.id.0);
        self.notify(dev, core, self.kinds.start, RuntimeSubtype::Start, hint, 0);
    }

    #[inline]
    fn end_execution(&mut self, dev: &impl Env, core: &Core, hint: u8) {
        if self.in_execution {
            self.notify(dev, core, self.kinds.end, RuntimeSubtype::End, hint, 0);
            if self.signal_pending {
                self.raise_signal(core);
            }
            self.in_execution = false;
            self.executions += 1;
            core.activity.ended(core.id.0);
        }
    }

    #[inline(never)]
    fn fatal(&mut self, dev: &impl Env, core: &Core, subtype: InferErrorSubtype, detail: u16) -> StepOutcome {
        core.error_record(dev, Some(self.eidx()), self.pc, subtype, detail, self.clock);
        self.state = RunState::Halted;
        StepOutcome::Stopped
    }

    /// Issues a quick record ([`icache::flag::QUICK`]: a
    /// control record executed here whose handshake, if any, is a common
    /// shape without completion steps, no rare flag of this engine, no
    /// fault armed): the claim through its shape, the START record of an
    /// execution's first record, no trace or fault, nothing to complete;
    /// the same arms as the general path, then the clock, the wake of what
    /// the record changed, and the program counter. [`Issued::General`]
    /// (nothing done) for a record that is not quick after all.
    #[inline]
    fn issue_quick(&mut self, dev: &impl Env, core: &Arc<Core>, base: DeviceAddr, count: u64, entry: &icache::Entry, slice: &Slice) -> Issued {
        // QUICK records all decode (`Entry::decode`).
        let instr = &entry.instr;
        let synced = entry.flags & icache::flag::SYNC != 0;
        if synced {
            match sync::claim_plan(&entry.plan, &core.sync, self.clock) {
                WaitCheck::Met(t) => self.clock = self.clock.max(t),
                WaitCheck::Unmet(key) => return Issued::End(StepOutcome::Blocked(key)),
                WaitCheck::Unsupported(mode) => {
                    return Issued::End(self.fatal(dev, core, InferErrorSubtype::SwSequencer, u16::from(mode)));
                }
            }
        }
        if !self.in_execution {
            self.start_execution(dev, core, entry.rec.debug_hint);
        }
        let cost_ps = slice.control_ps;
        match instr {
            Instruction::EventSemaphore(_) | Instruction::Nop(_) | Instruction::PrologueB1(_) => {}
            Instruction::Notify(n) => self.exec_notify(dev, core, n, entry.rec.debug_hint),
            Instruction::Write(w) => {
                // It hands work to another agent (see `Sequencer::step`).
                core.observe(self.clock);
                if let Err(outcome) = self.exec_write(dev, core, entry.route, w) {
                    return Issued::End(outcome);
                }
            }
            Instruction::CtrlAl(a) => {
                if let Err(outcome) = self.exec_al(dev, core, a) {
                    return Issued::End(outcome);
                }
            }
            Instruction::CtrlBr(b) => match self.exec_branch(dev, core, b, base, count) {
                // A taken branch ends its record here, so the common end
                // below carries no next program counter.
                Ok(Some(target)) => {
                    self.complete_quick(dev, core, entry, cost_ps);
                    self.pc = target;
                    return Issued::Next;
                }
                Ok(None) => {}
                Err(outcome) => return Issued::End(outcome),
            },
            Instruction::CtrlPollSem(p) => {
                if let Err(outcome) = self.exec_poll(dev, core, p, entry.rec.opcode) {
                    return Issued::End(outcome);
                }
            }
            Instruction::CtrlEr(e) => {
                // Its range, woken only when another engine may wait on
                // it (see `others_may_wait`); the release store of the
                // reset needs the fence first. A record that also took a
                // semaphore wakes for it below, after its reset's wake.
                if let Some(r) = self.exec_reset(core, e) {
                    crate::wake::publish_change();
                    if others_may_wait(core, self.engine, entry.reset_keys) {
                        dev.wake_all_of(core, &[r], Some(self.engine.index()));
                    }
                }
            }
            Instruction::PseudoInst(p) if p.sub == PseudoSub::ExitExecution => {
                self.clock += cost_ps;
                self.end_execution(dev, core, entry.rec.debug_hint);
                self.pc = 0;
                return Issued::Next;
            }
            // Not a quick record after all (`Entry::decode` sets QUICK
            // only for the arms above): an unsynchronised one goes the
            // general way; one whose handshake was claimed here cannot be
            // issued twice, and reports its record as malformed.
            _ if !synced => return Issued::General,
            _ => {
                return Issued::End(self.fatal(dev, core, InferErrorSubtype::SwSequencer, MALFORMED_RECORD_DETAIL | u16::from(entry.rec.opcode)));
            }
        }
        self.complete_quick(dev, core, entry, cost_ps);
        self.pc += 1;
        Issued::Next
    }

    /// The end of a quick record but its next program counter: the clock,
    /// and what the handshake changed, woken only when another engine may
    /// wait on it (see `others_may_wait`). A quick record's handshake
    /// changes at most its take's one semaphore (`Entry::key_range`), with
    /// a sequentially consistent compare-and-swap, so the keys are read
    /// without a fence.
    #[inline(always)]
    fn complete_quick(&mut self, dev: &impl Env, core: &Core, entry: &icache::Entry, cost_ps: u64) {
        self.clock += cost_ps;
        if let Some(range) = entry.key_range
            && others_may_wait(core, self.engine, range)
        {
            dev.wake_all_of(core, entry.changes.as_slice(), Some(self.engine.index()));
        }
    }

    /// Issues, executes and completes the record `entry` (at `pc`), or
    /// finds it blocked: any record, with one test of `rare` guarding every
    /// branch that only DRAIN, the trace, fault injection or POOL's Q7
    /// hand-off need, in the same order as ever; the first record of an
    /// execution adds its START record. `None`: go on with the next
    /// record; `Some`: the step ends (always when the record stopped the
    /// sequencer).
    #[inline(always)]
    fn issue_general(&mut self, dev: &impl Env, core: &Arc<Core>, base: DeviceAddr, count: u64, entry: &icache::Entry, slice: &Slice) -> Option<StepOutcome> {
        use icache::flag;
        let rec = &entry.rec;
        let flags = entry.flags;
        // The first record of an execution only adds the START record
        // (after the handshake); the rare branches are for the rare flags
        // and armed faults.
        let rare = flags & slice.rare != 0 || slice.faults;

        // (1) DRAIN's wait for the DMA queues and the Q7 join.
        if rare && let Some(outcome) = self.before_claim(core, entry) {
            return Some(outcome);
        }
        // The waits, taking any issue-time updates with them.
        let plain = entry.plain;
        if !plain {
            match sync::claim_plan(&entry.plan, &core.sync, self.clock) {
                WaitCheck::Met(t) => self.clock = self.clock.max(t),
                WaitCheck::Unmet(key) => return Some(StepOutcome::Blocked(key)),
                WaitCheck::Unsupported(mode) => {
                    return Some(self.fatal(dev, core, InferErrorSubtype::SwSequencer, u16::from(mode)));
                }
            }
        }

        // (2) start of an execution, the INST_START trace, injected faults.
        let mut poison_output = false;
        if rare {
            match self.after_claim(dev, core, entry, slice.faults) {
                Ok(poison) => poison_output = poison,
                Err(outcome) => return Some(outcome),
            }
        } else if !self.in_execution {
            self.start_execution(dev, core, rec.debug_hint);
        }

        // (4) execute the typed decode (nrt-isa's) the cache holds.
        let instr = match entry.decoded() {
            Ok(i) => i,
            Err(_) => {
                return Some(self.fatal(dev, core, InferErrorSubtype::SwSequencer, MALFORMED_RECORD_DETAIL | u16::from(rec.opcode)));
            }
        };
        let mut cost_ps = slice.control_ps;
        let mut next_pc = self.pc + 1;
        let mut reset = None;
        if flags & flag::HANDS_OFF != 0 {
            core.observe(self.clock);
        }
        match instr {
            Instruction::EventSemaphore(_) | Instruction::Nop(_) | Instruction::PrologueB1(_) | Instruction::Drain(_) => {}
            Instruction::Halt(_) => {
                self.end_execution(dev, core, rec.debug_hint);
                self.state = RunState::Halted;
            }
            Instruction::Notify(n) => self.exec_notify(dev, core, n, rec.debug_hint),
            Instruction::LoadPoolArgument(l) => match crate::q7::dispatch::load_arguments(dev, l) {
                Ok(latched) => core.q7.latch(latched),
                Err(_) => {
                    return Some(self.fatal(dev, core, InferErrorSubtype::SwSequencer, BAD_OPERANDS_DETAIL | u16::from(rec.opcode)));
                }
            },
            Instruction::ExtendedInst(x) => match crate::q7::dispatch::dispatch(dev, core, x.spec, self.pc, self.clock) {
                crate::q7::dispatch::Dispatch::Started => {}
                crate::q7::dispatch::Dispatch::Wait => return Some(StepOutcome::Blocked(WaitKey::Q7)),
                crate::q7::dispatch::Dispatch::NoArguments => {
                    return Some(self.fatal(dev, core, InferErrorSubtype::SwSequencer, BAD_OPERANDS_DETAIL | u16::from(rec.opcode)));
                }
                crate::q7::dispatch::Dispatch::Failed(e) => {
                    return Some(self.fatal(dev, core, InferErrorSubtype::GpsimdException, e.cause.detail(e.q7)));
                }
            },
            Instruction::Write(w) => {
                if let Err(outcome) = self.exec_write(dev, core, entry.route, w) {
                    return Some(outcome);
                }
            }
            Instruction::CtrlAl(a) => {
                if let Err(outcome) = self.exec_al(dev, core, a) {
                    return Some(outcome);
                }
            }
            Instruction::CtrlBr(b) => match self.exec_branch(dev, core, b, base, count) {
                Ok(Some(target)) => next_pc = target,
                Ok(None) => {}
                Err(outcome) => return Some(outcome),
            },
            Instruction::CtrlPollSem(p) => {
                if let Err(outcome) = self.exec_poll(dev, core, p, rec.opcode) {
                    return Some(outcome);
                }
            }
            Instruction::CtrlEr(e) => reset = self.exec_reset(core, e),
            Instruction::PseudoInst(p) if p.sub == PseudoSub::ExitExecution => {
                self.clock += cost_ps;
                self.end_execution(dev, core, rec.debug_hint);
                self.pc = 0;
                // EXIT completes nothing, but its issue-time updates happened.
                if !plain && !entry.changes.is_empty() {
                    wake_changed(dev, core, self.engine, &entry.changes, None);
                }
                return None;
            }
            _ => match self.execute_compute(dev, core, instr, rec, poison_output) {
                Ok(c) => cost_ps = c,
                Err(outcome) => return Some(outcome),
            },
        }

        // (5) completion.
        self.clock += cost_ps;
        if rare {
            return self.complete_rare(dev, core, entry, next_pc, reset);
        }
        if !plain && let Err(mode) = sync::complete_plan(&entry.plan, &core.sync, self.clock) {
            return Some(self.fatal(dev, core, InferErrorSubtype::SwSequencer, u16::from(mode)));
        }
        // A wait without updates (the common synchronised record) changed
        // nothing and wakes nobody.
        if (!plain && !entry.changes.is_empty()) || reset.is_some() {
            wake_changed(dev, core, self.engine, &entry.changes, reset);
        }
        self.advance_or_stop(next_pc)
    }

    /// The end of a general issue: the next record if the sequencer still
    /// runs, else the step ends (HALT stopped it).
    #[inline(always)]
    fn advance_or_stop(&mut self, next_pc: u64) -> Option<StepOutcome> {
        if self.state == RunState::Running {
            self.pc = next_pc;
            None
        } else {
            Some(StepOutcome::Stopped)
        }
    }

    /// NOTIFY: writes its record into the NOTIFY queue it names (this
    /// engine's through the kept handle).
    #[inline(always)]
    fn exec_notify(&mut self, dev: &impl Env, core: &Core, n: &Notify, hint: u8) {
        // A tensor-completion record (subtype 6, sub-id 7) names the
        // finished output in its instruction field.
        let completion = n.subtype == RuntimeSubtype::Custom as u16 && n.sub_id == nrt_isa::notification::CustomSubId::TensorCompletion as u16;
        let pc = if completion { u64::from(n.payload) } else { self.pc };
        let r = nqr::engine_record(self.kinds.explicit, nqr::subtype_word(n.subtype, n.sub_id), pc, hint, self.clock);
        if n.queue == self.eidx() {
            self.push_own_notify(dev, core, r);
        } else {
            core.push_record(dev, n.queue, NqType::Notify, r);
        }
    }

    /// WRITE: the 32-bit store, through the route decoded with the record
    /// when there is one. `Err`: the address cannot be written (a fault).
    #[inline(always)]
    fn exec_write(&mut self, dev: &impl Env, core: &Core, route: Option<crate::port::StoreRoute>, w: &Write) -> Result<(), StepOutcome> {
        let stored = match route {
            Some(r) => dev.store_word(r, DeviceAddr(w.addr), w.data, self.clock, Some((core, self.engine.index()))),
            None => dev.write_at(DeviceAddr(w.addr), &w.data.to_le_bytes(), self.clock),
        };
        // The error is moved into its arm, so the Ok path drops nothing.
        if let Err(e) = stored {
            drop(e);
            return Err(self.fatal(dev, core, InferErrorSubtype::SwSequencer, u16::from(op::WRITE)));
        }
        Ok(())
    }

    /// CTRL_AL on the sequencer's registers.
    #[inline(always)]
    fn exec_al(&mut self, dev: &impl Env, core: &Core, a: &CtrlAl) -> Result<(), StepOutcome> {
        regs::ctrl_al(a, &mut self.regs).map_err(|f| self.fatal(dev, core, InferErrorSubtype::SwSequencer, reg_fault_detail(f)))
    }

    /// CTRL_BR: the target of a taken branch, `None` when it falls through.
    #[inline(always)]
    fn exec_branch(&mut self, dev: &impl Env, core: &Core, b: &CtrlBr, base: DeviceAddr, count: u64) -> Result<Option<u64>, StepOutcome> {
        regs::ctrl_br(b, &self.regs, self.pc, base.get(), count).map_err(|f| self.fatal(dev, core, InferErrorSubtype::SwSequencer, reg_fault_detail(f)))
    }

    /// CTRL_POLL_SEM: the polled word into its register.
    #[inline(always)]
    fn exec_poll(&mut self, dev: &impl Env, core: &Core, p: &CtrlPollSem, opcode: u8) -> Result<(), StepOutcome> {
        let mut w = [0u8; 4];
        if !self.poll_read(dev, p.addr, &mut w) {
            return Err(self.fatal(dev, core, InferErrorSubtype::SwSequencer, u16::from(opcode)));
        }
        // Every poll of a quiescent register reads the same value, so the
        // minimum over `count` reads is that value.
        self.regs.set(p.dst_reg, u32::from_le_bytes(w));
        Ok(())
    }

    /// CTRL_ER: resets the range; the change to wake for, `None` when the
    /// reset changed nothing (every register of the range already zero),
    /// which cannot let any wait hold.
    #[inline(always)]
    fn exec_reset(&mut self, core: &Core, e: &CtrlEr) -> Option<Change> {
        let (first, last) = (u32::from(e.first), u32::from(e.last));
        let changed = if e.target == ResetTarget::Events {
            core.sync.reset_events(first, last, self.clock)
        } else {
            core.sync.reset_sems(first, last, self.clock)
        };
        changed.then(|| reset_change(e))
    }

    /// Executes a compute instruction (the engines' kernels): `Ok` with
    /// its virtual duration, `Err` when it faults the sequencer. Kept out
    /// of the issue path, which runs control records far more often.
    #[inline(never)]
    fn execute_compute(&mut self, dev: &impl Env, core: &Arc<Core>, instr: &Instruction, rec: &record::Record, poison_output: bool) -> Result<u64, StepOutcome> {
        let chip = compute::operand::OnChip { sbuf: core.sbuf_view(), psum: core.psum_view() };
        let mut ctx = compute::ComputeContext { arch: dev.arch(), engine: self.engine, chip, dev, state: &mut self.compute };
        match compute::execute(instr, &mut ctx) {
            Ok(done) => {
                if poison_output && let Some(out) = &done.output {
                    compute::poison_first_element(&ctx, out);
                    let detail = u16::from(rec.opcode);
                    core.error_record(dev, Some(self.eidx()), self.pc, InferErrorSubtype::Numerical, detail, self.clock);
                }
                if let Some(sub) = done.oob {
                    self.notify(dev, core, self.kinds.explicit, RuntimeSubtype::Custom, 0, sub as u16);
                }
                if done.flops > 0 {
                    core.activity.macs(core.id.0, done.flops / 2);
                }
                Ok(cost::cycles(self.engine, done.cycles))
            }
            Err(compute::DeviceFault::Numerical { opcode }) => {
                core.error_record(dev, Some(self.eidx()), self.pc, InferErrorSubtype::Numerical, u16::from(opcode), self.clock);
                Ok(cost::control(self.engine))
            }
            Err(compute::DeviceFault::BadOperands { .. }) => {
                Err(self.fatal(dev, core, InferErrorSubtype::SwSequencer, BAD_OPERANDS_DETAIL | u16::from(rec.opcode)))
            }
            Err(compute::DeviceFault::UnsupportedInstruction { .. }) => {
                Err(self.fatal(dev, core, InferErrorSubtype::SwSequencer, u16::from(rec.opcode)))
            }
        }
    }

    /// The rare branches before the handshake: DRAIN waits for the DMA
    /// queues; DRAIN (any engine) and, on POOL, a new dispatch or the end
    /// of the execution wait for the Q7 op in flight.
    #[inline(never)]
    fn before_claim(&mut self, core: &Core, entry: &icache::Entry) -> Option<StepOutcome> {
        use icache::flag;
        let flags = entry.flags;
        if flags & flag::DRAIN != 0 && core.dma_busy() {
            return Some(StepOutcome::Blocked(WaitKey::DmaIdle));
        }
        if flags & (flag::DRAIN | flag::POOL_Q7_JOIN) != 0 {
            let exit = self.engine == EngineId::Pool && entry.exit;
            if self.q7_join(entry.rec.opcode, exit, core) {
                return Some(StepOutcome::Blocked(WaitKey::Q7));
            }
        }
        None
    }

    /// The rare branches between the handshake and the execution: the
    /// START record of an execution's first record, the INST_START trace,
    /// and an injected fault (`faults`: whether any is armed). `Ok`:
    /// whether the record's compute output is to be poisoned; `Err`: the
    /// step ends.
    #[inline(never)]
    fn after_claim(&mut self, dev: &impl Env, core: &Core, entry: &icache::Entry, faults: bool) -> Result<bool, StepOutcome> {
        use icache::flag;
        let rec = &entry.rec;
        let first = !self.in_execution;
        if first {
            self.start_execution(dev, core, rec.debug_hint);
        }

        // Per-instruction trace (debug_cmd START 3 / END 5 / START_END 7).
        if entry.flags & flag::TRACE_START != 0 {
            let r = nqr::trace(self.eidx(), EngineEvent::InstStart, rec.opcode, self.pc, rec.debug_hint, self.clock);
            core.push_record(dev, self.eidx(), NqType::Trace, r);
        }

        // Injected faults fire here, before the instruction takes effect.
        if !faults {
            return Ok(false);
        }
        let site = InstrSite {
            core: core.id.0,
            executions: self.executions,
            first_in_execution: first,
            pc: self.pc,
            opcode_name: op::name(rec.opcode),
        };
        let Some(kind) = dev.faults().on_instruction(site) else {
            return Ok(false);
        };
        match kind {
            FaultKind::Hang => {
                self.state = RunState::Hung;
                Err(StepOutcome::Stopped)
            }
            FaultKind::HbmUe => {
                core.activity.hardware_error(nrt_hal::status::HardwareError::HbmUncorrectable);
                Err(self.fatal(dev, core, InferErrorSubtype::HbmUncorrectable, 0))
            }
            FaultKind::HbmUeRepairable => {
                core.activity.hardware_error(nrt_hal::status::HardwareError::HbmRepairable);
                Err(self.fatal(dev, core, InferErrorSubtype::HbmRepairable, 0))
            }
            FaultKind::SramParity => {
                core.activity.hardware_error(nrt_hal::status::HardwareError::SramUncorrectable);
                Err(self.fatal(dev, core, InferErrorSubtype::EccUncorrectable, 0))
            }
            FaultKind::NqOverflow => {
                if let Some(nq) = core.nq(self.eidx(), NqType::Notify) {
                    nq.inject_overflow();
                }
                Ok(false)
            }
            FaultKind::Oob => {
                self.notify(dev, core, self.kinds.explicit, RuntimeSubtype::Custom, 0, nqr::OOB_SUB_ID as u16);
                Ok(false)
            }
            // `nan:at=` poisons this instruction's compute output.
            FaultKind::Nan => Ok(true),
            // DMA aborts and lost semaphore writes never fire on instructions.
            FaultKind::DmaAbort | FaultKind::SemLost => Ok(false),
            FaultKind::SimPanic => panic!("injected simulator panic (NEURON_SIM_INJECT=sim_panic) in engine {} of core {} at record {}", self.eidx(), core.id.0, self.pc),
        }
    }

    /// Completion on the rare path: a latched Q7 op's completion gate
    /// leaves its increment to the op's completion write
    /// (q7::completion_gate), and the INST_END trace follows the updates.
    #[inline(never)]
    fn complete_rare(&mut self, dev: &impl Env, core: &Core, entry: &icache::Entry, next_pc: u64, reset: Option<Change>) -> Option<StepOutcome> {
        use icache::flag;
        let flags = entry.flags;
        let plain = entry.plain;
        // The gate may drop a completion update, and with it a change.
        let gated;
        let (rec, changes, plan) = if flags & flag::EVENT_SEMAPHORE != 0 && self.engine == EngineId::Pool {
            let g = crate::q7::dispatch::completion_gate(dev.arch(), core, entry.rec);
            gated = (g, Changes::of(&sync::changes(&g)), sync::Plan::of(&g));
            (&gated.0, &gated.1, &gated.2)
        } else {
            (&entry.rec, &entry.changes, &entry.plan)
        };
        if !plain && let Err(mode) = sync::complete_plan(plan, &core.sync, self.clock) {
            return Some(self.fatal(dev, core, InferErrorSubtype::SwSequencer, u16::from(mode)));
        }
        if flags & flag::TRACE_END != 0 {
            let r = nqr::trace(self.eidx(), EngineEvent::InstEnd, rec.opcode, self.pc, rec.debug_hint, self.clock);
            core.push_record(dev, self.eidx(), NqType::Trace, r);
        }
        if !plain || reset.is_some() {
            wake_changed(dev, core, self.engine, changes, reset);
        }
        self.advance_or_stop(next_pc)
    }
}

impl Issuer {
    /// Reads the polled word at `addr`: from the window of the last poll
    /// while its line is unmodified, else through the pinned page of the
    /// last poll when it holds the word, else pinning its page (memory) or
    /// through the device's address decode (register windows). False if
    /// the address cannot be read.
    #[inline(always)]
    fn poll_read(&mut self, dev: &impl Env, addr: u64, w: &mut [u8; 4]) -> bool {
        if let Some(page) = &self.poll_page
            && addr >= page.base
            && let Some(word) = page.hit((addr - page.base) as usize)
        {
            *w = word;
            return true;
        }
        self.poll_read_slow(dev, addr, w)
    }

    /// [`Issuer::poll_read`] past the window of the last poll.
    #[inline(never)]
    fn poll_read_slow(&mut self, dev: &impl Env, addr: u64, w: &mut [u8; 4]) -> bool {
        if let Some(page) = &mut self.poll_page
            && addr >= page.base
            && page.read((addr - page.base) as usize, w)
        {
            return true;
        }
        if let Some((base, pin)) = dev.pin_page(DeviceAddr(addr), 4) {
            let mut page = PollPage { base: base.get(), pin, window: None };
            let ok = page.read((addr - base.get()) as usize, w);
            self.poll_page = Some(page);
            if ok {
                return true;
            }
        }
        dev.read(DeviceAddr(addr), w).is_ok()
    }

    /// Whether `rec` must wait for the Q7 cluster: a DRAIN (any engine)
    /// or, on POOL, an EXTENDED_INST, HALT or EXIT while an op is in
    /// flight. A DRAIN that passes moves the clock to the op's end.
    fn q7_join(&mut self, opcode: u8, exit: bool, core: &Core) -> bool {
        let pool_join = self.engine == EngineId::Pool && (opcode == op::HALT || opcode == EXTENDED_INST || exit);
        if opcode != op::DRAIN && !pool_join {
            return false;
        }
        if core.q7.busy() {
            return true;
        }
        self.clock = self.clock.max(core.q7.end_clock());
        false
    }
}

/// Whether an engine of `core` other than `by` may have to re-check after
/// a change whose encoded key range ([`Change::key_range`]) is `(lo, hi)`:
/// its published key reads as [`WaitKey::Any`] (it is in the middle of a
/// step, or the word is unknown) or lies in the range, exactly as
/// [`crate::wake::key_woken`] decides. The device's wake then runs;
/// otherwise nobody waits on the change (SP's doorbell take and CTRL_ER's
/// reset of the model's semaphores, every execution) and the wake's call,
/// its fence and its per-engine loop are skipped.
///
/// The key loads must follow the change as the wake protocol needs (see
/// `crate::wake`): the caller either issued the sequentially consistent
/// fence after its change, or made the change with a sequentially
/// consistent atomic operation (a claim's compare-and-swap), which the
/// sequentially consistent key loads ([`crate::wake::EngineWait::word_sc`])
/// cannot pass: an engine's key published before its step's fence is seen,
/// or that engine's register reads after the fence see the change.
#[inline(always)]
fn others_may_wait(core: &Core, by: EngineId, KeySpan { lo, span }: KeySpan) -> bool {
    // Every engine's test into one bit, the issuer's own bit (its key
    // reads as Any while it steps) masked off at the end, with no
    // compare-and-branch per engine.
    let mut hits = 0u32;
    for (e, slot) in core.engines.iter().enumerate() {
        hits |= u32::from(crate::wake::key_in_range(slot.wait.word_sc(), lo, span)) << e;
    }
    hits & !(1 << by.index()) != 0
}

/// Wakes the engines waiting on a register `rec` changed (its updates and
/// self-clearing event waits) or on the range a CTRL_ER `reset`.
/// The engine that made the changes is not re-queued (it is running).
fn wake_changed(dev: &impl Env, core: &Core, by: EngineId, changes: &Changes, reset: Option<Change>) {
    let with_reset;
    let all = match reset {
        // A CTRL_ER without synchronisation (the common reset): its range
        // alone, without copying the record's list.
        Some(r) if changes.is_empty() => return dev.wake_all_of(core, &[r], Some(by.index())),
        Some(r) => {
            let mut c = *changes;
            c.push(r);
            with_reset = c;
            &with_reset
        }
        None => changes,
    };
    if !all.is_empty() {
        dev.wake_all_of(core, all.as_slice(), Some(by.index()));
    }
}

/// Error-record detail of a register-instruction fault.
fn reg_fault_detail(f: regs::RegFault) -> u16 {
    match f {
        regs::RegFault::DivideByZero => 0x100,
        regs::RegFault::BadTarget => 0x101,
        regs::RegFault::BadCode(c) => 0x200 | u16::from(c),
    }
}

