//! The engines' sequencers: fetch 64-byte records from device memory,
//! wait on semaphore / event conditions, execute, update.
//!
//! Per record: (1) check the waits of the events block (and the extended
//! block of EVENT_SEMAPHORE); if unmet, the engine blocks until a register
//! of its core changes; (2) on the first record of an execution, write a
//! START record into the engine's NOTIFY queue; (3) apply issue-time
//! updates; (4) execute (control ops here, compute ops through
//! [`compute::execute`]); (5) apply completion-time updates and advance the
//! engine's virtual clock by the cost. PSEUDO EXIT writes END and branches
//! back to the top of the stream; running off the end of the stream
//! writes END and idles; HALT writes END and stops.

pub mod compute;
pub mod icache;
pub mod keys;
pub mod record;
pub mod regs;
mod step;
pub mod sync;

use crate::nq::record as nqr;
use crate::wake::WaitKey;
pub use keys::KeySpan;
use nrt_hal::{DeviceAddr, EngineId};
use std::sync::Arc;

/// Sequencer run state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// No program, or ran off the end of the stream.
    Idle,
    /// Fetching and executing.
    Running,
    /// Stopped by HALT or a fatal fault; needs a new start.
    Halted,
    /// Stopped silently by an injected hang.
    Hung,
}

/// Result of one scheduling slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    /// Waiting on a semaphore, event, DMA drain or the Q7 cluster (what,
    /// so that only a change of it wakes the engine).
    Blocked(WaitKey),
    /// Budget used up; more to do.
    Yield,
    /// Not running any more.
    Stopped,
}

/// One engine's sequencer: its instruction cache and the state an issue
/// changes, kept apart so a record is executed straight from its cache
/// entry (borrowed while the rest of the sequencer is mutated).
#[derive(Debug)]
pub struct Sequencer {
    /// Fetched and decoded records, checked against their memory on every
    /// lookup, so bytes the host or a DMA rewrites are seen.
    icache: icache::InstrCache,
    st: Issuer,
}

/// Everything of a sequencer but its instruction cache.
#[derive(Debug)]
struct Issuer {
    engine: EngineId,
    program: Option<(DeviceAddr, u64)>,
    pc: u64,
    state: RunState,
    in_execution: bool,
    clock: u64,
    executions: u64,
    regs: regs::Registers,
    /// Compute state kept between instructions (the PE's loaded weights).
    compute: compute::EngineState,
    /// The memory page CTRL_POLL_SEM read last (the runtime's request
    /// buffer, polled three times per execution), so a repeat poll skips
    /// the address decode, the page lookup and, while the polled line is
    /// unmodified, the page lock.
    poll_page: Option<PollPage>,
    /// The core's binding generation and the NOTIFY queue of this engine
    /// it had (see [`Issuer::push_own_notify`]).
    notify_queue: Option<(u64, Option<Arc<crate::nq::NqState>>)>,
    /// The type codes of this engine's START, END and explicit records.
    kinds: nqr::EngineKinds,
    /// Whether a record was written into the engine's own NOTIFY queue
    /// whose interrupt line has not been raised yet.
    signal_pending: bool,
}

impl Sequencer {
    /// An idle sequencer.
    pub fn new(engine: EngineId) -> Sequencer {
        Sequencer { icache: icache::InstrCache::default(), st: Issuer::new(engine) }
    }

    /// Points the sequencer at `records` records at `addr` and runs it.
    pub fn start(&mut self, addr: DeviceAddr, records: u64) {
        let st = &mut self.st;
        st.program = Some((addr, records));
        st.pc = 0;
        st.in_execution = false;
        st.state = RunState::Running;
        st.regs = regs::Registers::default();
        st.compute = compute::EngineState::default();
        self.icache.clear();
    }

    /// Stops and forgets the program (core reset).
    pub fn reset(&mut self) {
        *self = Sequencer { st: Issuer { clock: self.st.clock, ..Issuer::new(self.st.engine) }, ..Sequencer::new(self.st.engine) };
    }

    /// Run state.
    pub fn state(&self) -> RunState {
        self.st.state
    }

    /// The record executed next (or waited at), from the stream's start.
    pub fn pc(&self) -> u64 {
        self.st.pc
    }

    /// Virtual clock in picoseconds.
    pub fn clock(&self) -> u64 {
        self.st.clock
    }

    /// Completed executions since start.
    pub fn executions(&self) -> u64 {
        self.st.executions
    }

    /// A step of this sequencer panicked (a fault of the simulator itself,
    /// or an injected `sim_panic`): it halts where it was, and the engine's
    /// error ring gets a sequencer error whose detail is
    /// [`SIMULATOR_FAULT_DETAIL`], as for an instruction it cannot execute,
    /// so the host's harvest learns of it at once.
    pub fn halt_after_panic(&mut self, mem: &dyn crate::nq::RingMemory, core: &crate::core::Core) {
        let st = &mut self.st;
        core.error_record(mem, Some(st.eidx()), st.pc, nrt_isa::notification::InferErrorSubtype::SwSequencer, SIMULATOR_FAULT_DETAIL, st.clock);
        st.state = RunState::Halted;
    }
}

impl Issuer {
    fn new(engine: EngineId) -> Issuer {
        Issuer {
            engine,
            program: None,
            pc: 0,
            state: RunState::Idle,
            in_execution: false,
            clock: 0,
            executions: 0,
            regs: regs::Registers::default(),
            compute: compute::EngineState::default(),
            poll_page: None,
            notify_queue: None,
            kinds: nqr::EngineKinds::of(engine.index() as u8),
            signal_pending: false,
        }
    }

    fn eidx(&self) -> u8 {
        self.engine.index() as u8
    }
}

/// Bytes per CTRL_POLL_SEM read window (the runtime's 56-byte request
/// fits one).
const POLL_WINDOW: usize = 64;

/// The pinned page of the last CTRL_POLL_SEM and a copy of the aligned
/// window around the last polled word, valid while the version of the
/// page's 1 KiB line holding the window is the one it was read at (a
/// write to the line in between bumps it; writes elsewhere on the page,
/// such as the notification rings next to the runtime's request buffer,
/// do not).
#[derive(Debug)]
struct PollPage {
    /// Device address of the pin's first byte.
    base: u64,
    pin: crate::memory::pages::PinnedRange,
    /// (offset in the pin, line version, bytes) of the window.
    window: Option<(usize, u64, [u8; POLL_WINDOW])>,
}

impl PollPage {
    /// The word at offset `at` of the pin from the window, if the window
    /// holds it and its line is unmodified since it was copied.
    #[inline(always)]
    fn hit(&self, at: usize) -> Option<[u8; 4]> {
        let (start, version, bytes) = self.window.as_ref()?;
        let i = at.checked_sub(*start)?;
        let word = bytes.get(i..i + 4)?;
        if self.pin.line_version(*start) != *version {
            return None;
        }
        word.try_into().ok()
    }

    /// Reads the word at offset `at` of the pin: from the window if the
    /// line is unmodified since it was copied, else by refreshing the
    /// window (or, at the end of a short pin, straight from the page).
    fn read(&mut self, at: usize, w: &mut [u8; 4]) -> bool {
        if let Some((start, version, bytes)) = &self.window
            && at >= *start
            && at + 4 <= start + POLL_WINDOW
            && self.pin.line_version(*start) == *version
        {
            w.copy_from_slice(&bytes[at - start..at - start + 4]);
            return true;
        }
        let start = at - at % POLL_WINDOW;
        let mut bytes = [0u8; POLL_WINDOW];
        if start + POLL_WINDOW <= self.pin.len()
            && let Some(version) = self.pin.read_array_line(start, &mut bytes)
        {
            w.copy_from_slice(&bytes[at - start..at - start + 4]);
            self.window = Some((start, version, bytes));
            return true;
        }
        self.window = None;
        self.pin.read(at, w)
    }
}

/// Error-record detail bit of a record that does not fit its opcode's
/// nrt-isa layout (reserved bytes set, an unknown enum value, a wrong
/// `inst_word_len`); the low byte is the opcode.
pub const MALFORMED_RECORD_DETAIL: u16 = 0x800;

/// Error-record detail bit of a compute instruction whose operands are
/// malformed (the low byte is the opcode); without it the detail is the
/// opcode of an instruction the device cannot execute.
pub const BAD_OPERANDS_DETAIL: u16 = 0x400;

/// Error-record detail of a sequencer error that is the simulator's own
/// failure (a step that panicked: [`Sequencer::halt_after_panic`]).
pub const SIMULATOR_FAULT_DETAIL: u16 = 0x1000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SimConfig, SimDevice};
    use nrt_hal::{CoreId, Device, MemoryLocation, NqSpec, NqType};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Untrusted instruction bytes never panic the sequencer: every
        /// record either executes, blocks, or faults into an error record.
        #[test]
        fn random_streams_never_panic(recs in prop::collection::vec(prop::collection::vec(any::<u8>(), 64), 1..24), bias in any::<[u8; 24]>()) {
            let dev = SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build(), 0);
            let hbm = MemoryLocation::Hbm { channel: 0 };
            let mut stream = Vec::new();
            for (i, mut r) in recs.into_iter().enumerate() {
                // Bias half the records towards the opcodes the sequencer executes.
                if bias[i] & 1 == 1 {
                    r[0] = [0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA6, 0xA8, 0xA9, 0xB0, 0xB3, 0xB8, 0xDF][usize::from(bias[i] >> 4) % 12];
                }
                stream.extend_from_slice(&r);
            }
            let at = dev.alloc(hbm, stream.len() as u64, 64).unwrap();
            dev.write(at, &stream).unwrap();
            let ring = dev.alloc(hbm, 256, 256).unwrap();
            for ty in [NqType::Notify, NqType::Error, NqType::Trace] {
                let _ = dev.nq_init(NqSpec { core: CoreId(0), engine_index: 4, nq_type: ty, ring, size_bytes: 256 });
            }
            let shared = dev.shared().clone();
            let core = shared.core(CoreId(0)).unwrap();
            let mut seq = Sequencer::new(EngineId::Sp);
            seq.start(at, stream.len() as u64 / 64);
            for _ in 0..8 {
                let _ = seq.step(&*shared, &core, 64);
            }
            dev.reset_core(CoreId(0)).unwrap();
        }
    }
}
