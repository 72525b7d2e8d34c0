//! The harvest state machine: learns how an execution ended by reading
//! notification-queue records only.
//!
//! `INIT -> WAIT_BARRIER_PROXY -> WAIT_CORE -> DONE`; per (core, engine)
//! `START_PENDING -> END_PENDING -> COMPLETE`. [`Harvest::step`] is the one
//! step function: the synchronous caller drives it (spin, then park), and
//! an asynchronous worker can drive the same function later. It allocates
//! nothing: records are read into a stack buffer.

use crate::exec::dispatch::EngineSet;
use crate::exec::errors::{Verdict, custom_verdict, error_verdict};
use crate::status::NrtStatus;
use nrt_hal::NQ_RECORD_BYTES;
use nrt_isa::notification::{CustomSubId, ErrorRecord, NotificationRecord, RuntimeSubtype};
use std::time::{Duration, Instant};

/// Physical cores one execution can span (the largest LNC size).
pub const MAX_CORES: usize = 4;
/// Sequencer engines per core.
pub const ENGINES: usize = 5;
/// Records read per ring per sweep (libnrt reads at most 16).
pub const RECORDS_PER_SWEEP: usize = 16;

/// Where the harvest reads from: one model's cores' NQ rings. Reads
/// advance (and acknowledge) the consumer position.
pub trait NqSource {
    /// Cores of the execution.
    fn cores(&self) -> usize;
    /// Reads the next records of (core, engine)'s notification ring.
    fn read_notify(&self, core: usize, engine: usize, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize;
    /// Reads the next records of (core, engine)'s error ring.
    fn read_errors(&self, core: usize, engine: usize, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize;
    /// The software-overflow flag of (core, engine)'s notification ring.
    fn overflowed(&self, core: usize, engine: usize) -> bool;
    /// The engines the program starts on `core`: the others write no
    /// START/END and begin every execution COMPLETE. All five by default.
    fn started_engines(&self, core: usize) -> EngineSet {
        let _ = core;
        EngineSet::ALL
    }
    /// A tensor-completion record (custom sub-id 7) named output `var`
    /// (streaming outputs: it may arrive before the execution is DONE).
    fn output_completed(&self, var: u32) {
        let _ = var;
    }
    /// The execution's network proxy (in-NEFF collectives whose replica
    /// group has ranks in other processes); [`Network::None`] without one.
    fn network(&self) -> Network {
        Network::None
    }
    /// Names what (core, engine) was executing at device program counter
    /// `pc`, for messages (error path only).
    fn describe_pc(&self, core: usize, engine: usize, pc: u64) -> String {
        let _ = (core, engine);
        format!("instruction {pc}")
    }
    /// Whether the DMA queue a queue-level error record names (its
    /// core-relative index) carries tensor transfers rather than the
    /// execution's DMA: such a record is the transfer's, which learns of
    /// its failure from its own queue (`crate::transfer`). None by default.
    fn is_transfer_queue(&self, queue_index: u16) -> bool {
        let _ = queue_index;
        false
    }
}

/// What an execution's network proxy is doing, as the harvest sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Network {
    /// No proxy: every rank of the collectives is in this process.
    None,
    /// Waiting for the peers in other processes to reach the execution
    /// (the cross-process part of the barrier).
    Barrier,
    /// The peers reached it; bytes are moving (or all have).
    Running,
    /// The proxy failed with this status.
    Failed(NrtStatus),
}

/// Execution phase (`exec_state_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Not started.
    Init,
    /// Waiting for collectives barrier proxies (none without collectives).
    WaitBarrierProxy,
    /// Waiting for every engine's END.
    WaitCore,
    /// Finished; the status is final.
    Done,
}

/// Per-engine sub-state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineState {
    /// Waiting for START.
    StartPending,
    /// Started, waiting for END.
    EndPending,
    /// Ended.
    Complete,
}

/// What a step reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Still in flight: call again.
    InFlight,
    /// Finished with this status.
    Done(NrtStatus),
}

/// How an execution failed, for the caller's log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No END within the timeout.
    Timeout {
        /// Core index within the execution that was incomplete.
        core: usize,
        /// The timeout.
        timeout_ms: u64,
        /// The engines of that core (bit = engine index) that wrote no END.
        engines: u8,
    },
    /// A record came out of order and the ring had overflowed.
    Overflow {
        /// Core index.
        core: usize,
        /// Engine index.
        engine: usize,
    },
    /// A record came out of order without overflow, or was unexpected.
    Unexpected {
        /// Core index.
        core: usize,
        /// Engine index.
        engine: usize,
        /// Raw notification type.
        notific_type: u8,
    },
    /// A collective started (CC_START) but never ended (no CC_END) within
    /// the timeout: a lost notification or a peer that stopped.
    Collectives {
        /// Core index.
        core: usize,
        /// The collective that hung (0-based: how many had ended).
        op: u32,
        /// Collectives per execution.
        total: u32,
    },
    /// The execution's network proxy failed (a peer in another process
    /// died, disagreed or the network failed); its error says how.
    Network {
        /// Core index.
        core: usize,
    },
    /// The collectives barrier (the group's other ranks reaching the
    /// collective) did not pass within the peers' bound.
    CollectivesBarrier {
        /// Core index.
        core: usize,
        /// How long it waited, in seconds.
        waited_s: u64,
    },
    /// An error record stopped an engine.
    EngineStopped {
        /// Core index.
        core: usize,
        /// Engine index, if the record names one.
        engine: Option<usize>,
        /// Instruction index of the fault.
        pc: u32,
    },
}

/// One execution's harvest state (preallocated with the model and reset per
/// execution).
#[derive(Clone, Debug)]
pub struct Harvest {
    phase: Phase,
    cores: usize,
    /// Per core, the engines whose sub-state is not COMPLETE (bit per
    /// engine index): a sweep learns whether the execution is done from
    /// one word per core.
    pending: [u8; MAX_CORES],
    /// Per core, the pending engines whose START was seen. With `pending`
    /// it is every engine's sub-state ([`Harvest::engine`]): START_PENDING
    /// (pending, no START), END_PENDING (pending, START seen), COMPLETE
    /// (not pending), so an execution starts with two stores per core.
    start_seen: [u8; MAX_CORES],
    /// Per core, the engines the program starts (asked of the source once
    /// per execution): a sweep reads their notification and error rings,
    /// and engine 0's error ring (the core's DMA-side errors) always.
    started: [EngineSet; MAX_CORES],
    status: NrtStatus,
    engine_stopped: bool,
    failure: Option<Failure>,
    core_start: Option<Instant>,
    timeout: Duration,
    numerical_errors: bool,
    /// Tensor-completion records the device program writes per execution.
    expected_outputs: u32,
    /// Tensor-completion records seen in this execution.
    outputs_seen: u32,
    /// The device-side timeline kept for the system trace (when observed).
    hw: crate::trace::hw::HwObservation,
    /// In-NEFF collectives per execution (0: none, no barrier phase).
    collectives: u32,
    /// CC_START / CC_END records seen in this execution.
    cc_started: u32,
    cc_ended: u32,
    /// The barrier phase: its bound, its warning threshold (doubles each
    /// time it is passed) and when it began.
    barrier_timeout: Duration,
    barrier_warn: Duration,
    barrier_start: Option<Instant>,
}

/// The first warning threshold of the collectives barrier (libnrt's 120 s).
pub const BARRIER_WARN: Duration = Duration::from_secs(120);

impl Harvest {
    /// A harvest for executions over `cores` physical cores.
    pub fn new(cores: usize, timeout: Duration, numerical_errors: bool) -> Harvest {
        Harvest {
            phase: Phase::Init,
            cores: cores.clamp(1, MAX_CORES),
            pending: [0; MAX_CORES],
            start_seen: [0; MAX_CORES],
            started: [EngineSet::ALL; MAX_CORES],
            status: NrtStatus::Success,
            engine_stopped: false,
            failure: None,
            core_start: None,
            timeout,
            numerical_errors,
            expected_outputs: 0,
            outputs_seen: 0,
            hw: crate::trace::hw::HwObservation::default(),
            collectives: 0,
            cc_started: 0,
            cc_ended: 0,
            barrier_timeout: Duration::ZERO,
            barrier_warn: BARRIER_WARN,
            barrier_start: None,
        }
    }

    /// The program runs `n` in-NEFF collectives per execution: until the
    /// first CC_START the execution is in WAIT_BARRIER_PROXY (the group's
    /// other ranks reaching the collective), which does not run the
    /// execution clock, warns at 120 s (then doubling) and fails with
    /// NRT_EXEC_HW_ERR_COLLECTIVES after `barrier_timeout`
    /// (NEURON_RT_CC_NET_TIMEOUT); a CC_START without its CC_END at the
    /// execution timeout is NRT_EXEC_HW_ERR_COLLECTIVES too.
    pub fn expect_collectives(&mut self, n: u32, barrier_timeout: Duration) {
        self.collectives = n;
        self.barrier_timeout = barrier_timeout;
    }

    /// The execution timeout (NEURON_RT_EXEC_TIMEOUT).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether the execution is waiting at the collectives barrier.
    pub fn in_barrier(&self) -> bool {
        self.collectives > 0 && self.cc_started == 0 && self.phase != Phase::Done
    }

    /// Whether this execution keeps its device timeline for the system
    /// trace (call after [`Harvest::reset`]).
    #[inline]
    pub fn observe(&mut self, on: bool) {
        self.hw.reset(on);
    }

    /// The device timeline of the last execution (its notable records
    /// only when it was observed; its START / END span always).
    pub fn observation(&self) -> &crate::trace::hw::HwObservation {
        &self.hw
    }

    /// How many tensor-completion records this execution's program writes
    /// before its END (0 for a program that does not stream outputs). A
    /// DONE with fewer is an error: NRT_EXEC_SW_NQ_OVERFLOW if a ring
    /// dropped records, else an unexpected-notification failure.
    pub fn expect_output_records(&mut self, n: u32) {
        self.expected_outputs = n;
    }

    /// Back to INIT for the next execution.
    pub fn reset(&mut self) {
        // What an execution changes; the per-core masks are set again at
        // WAIT_BARRIER_PROXY, the expected output count by the caller.
        self.phase = Phase::Init;
        self.pending = [0; MAX_CORES];
        self.status = NrtStatus::Success;
        self.engine_stopped = false;
        self.failure = None;
        self.core_start = None;
        self.outputs_seen = 0;
        self.cc_started = 0;
        self.cc_ended = 0;
        self.barrier_warn = BARRIER_WARN;
        self.barrier_start = None;
    }

    /// Current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Sub-state of (core, engine).
    pub fn engine(&self, core: usize, engine: usize) -> EngineState {
        let bit = 1u8 << engine;
        if self.pending[core] & bit == 0 {
            EngineState::Complete
        } else if self.start_seen[core] & bit == 0 {
            EngineState::StartPending
        } else {
            EngineState::EndPending
        }
    }

    /// Whether an error record reported a stopped engine.
    pub fn engine_stopped(&self) -> bool {
        self.engine_stopped
    }

    /// How the execution failed, once it has.
    pub fn failure(&self) -> Option<Failure> {
        self.failure
    }

    /// The first core with an engine that has not ended (what a waiting
    /// thread should block on), or `None` before WAIT_CORE / when all ended.
    pub fn pending_core(&self) -> Option<usize> {
        if self.phase != Phase::WaitCore {
            return None;
        }
        (0..self.cores).find(|&c| self.pending[c] != 0)
    }

    /// Time left before the WAIT_CORE timeout fires (the whole timeout
    /// before the clock starts).
    pub fn time_left(&self, now: Instant) -> Duration {
        match self.core_start {
            Some(t) => self.timeout.saturating_sub(now.saturating_duration_since(t)),
            None => self.timeout,
        }
    }

    fn merge(&mut self, v: Verdict) {
        self.status = self.status.worst(v.status);
        self.engine_stopped |= v.stops_engine;
    }

    fn fail(&mut self, status: NrtStatus, why: Failure) {
        self.status = self.status.worst(status);
        if self.failure.is_none() {
            self.failure = Some(why);
        }
        self.phase = Phase::Done;
    }

    fn out_of_order(&mut self, src: &dyn NqSource, core: usize, engine: usize, notific_type: u8) {
        if src.overflowed(core, engine) {
            self.fail(NrtStatus::ExecSwNqOverflow, Failure::Overflow { core, engine });
        } else {
            self.fail(NrtStatus::Failure, Failure::Unexpected { core, engine, notific_type });
        }
    }

    #[inline]
    fn on_notification(&mut self, src: &dyn NqSource, core: usize, engine: usize, rec: &NotificationRecord) {
        let bit = 1u8 << engine;
        let (pending, seen) = (self.pending[core] & bit != 0, self.start_seen[core] & bit != 0);
        let subtype = rec.runtime_subtype();
        // The device time (first START to last END) of every execution.
        match subtype {
            Some(RuntimeSubtype::Start) => self.hw.start(core, rec.timestamp_ps),
            Some(RuntimeSubtype::End) => self.hw.end(core, rec.timestamp_ps),
            _ => {}
        }
        if self.hw.on {
            self.observe_record(core, engine, subtype, rec);
        }
        match subtype {
            // START_PENDING -> END_PENDING
            Some(RuntimeSubtype::Start) if pending && !seen => self.start_seen[core] |= bit,
            // END_PENDING -> COMPLETE
            Some(RuntimeSubtype::End) if pending && seen => self.pending[core] &= !bit,
            Some(RuntimeSubtype::Start | RuntimeSubtype::End) => self.out_of_order(src, core, engine, rec.notific_type),
            Some(RuntimeSubtype::Custom) => {
                if rec.custom_sub_id() == Some(CustomSubId::TensorCompletion) {
                    // A completion record's verdict is NONE: nothing to merge.
                    self.outputs_seen += 1;
                    src.output_completed(rec.program_counter);
                } else {
                    self.merge(custom_verdict(rec.custom_sub_id_code()))
                }
            }
            Some(RuntimeSubtype::CcStart) => self.cc_started += 1,
            Some(RuntimeSubtype::CcEnd) => self.cc_ended += 1,
            None => self.fail(NrtStatus::Failure, Failure::Unexpected { core, engine, notific_type: rec.notific_type }),
        }
    }

    /// Keeps what the system trace needs of a notification record.
    #[inline(never)]
    fn observe_record(&mut self, core: usize, engine: usize, subtype: Option<RuntimeSubtype>, rec: &NotificationRecord) {
        use crate::trace::{EventType, Phase, hw::HwNote};
        let note = |ty, phase, detail| HwNote { ty, phase, core: core as u8, engine: engine as u8, pc: rec.program_counter, detail, ts_ps: rec.timestamp_ps };
        match subtype {
            Some(RuntimeSubtype::Custom) => self.hw.note(note(EventType::HwNotify, Phase::Instant, u32::from(rec.custom_sub_id_code()))),
            Some(RuntimeSubtype::CcStart) => self.hw.note(note(EventType::CcRunning, Phase::Start, 0)),
            Some(RuntimeSubtype::CcEnd) => self.hw.note(note(EventType::CcRunning, Phase::Stop, 0)),
            Some(RuntimeSubtype::Start | RuntimeSubtype::End) | None => {}
        }
    }

    fn on_error(&mut self, src: &dyn NqSource, core: usize, raw: &[u8; NQ_RECORD_BYTES]) {
        let rec = NotificationRecord::from_bytes(raw);
        match ErrorRecord::from_record(&rec) {
            // A DMA queue's record (no engine) naming a tensor-transfer
            // queue: not this execution's.
            Ok(e) if e.engine.is_none() && src.is_transfer_queue(e.detail) => {}
            Ok(e) => {
                if self.hw.on && e.subtype == nrt_isa::notification::InferErrorSubtype::Numerical {
                    self.hw.note(crate::trace::hw::HwNote {
                        ty: crate::trace::EventType::NumericalErr,
                        phase: crate::trace::Phase::Instant,
                        core: core as u8,
                        engine: e.engine.map_or(0xFF, |x| x as u8),
                        pc: e.program_counter,
                        detail: u32::from(e.detail),
                        ts_ps: e.timestamp_ps,
                    });
                }
                let v = error_verdict(e.subtype, self.numerical_errors);
                if e.subtype == nrt_isa::notification::InferErrorSubtype::GpsimdException {
                    let (cause, q7) = nrt_isa::ucode::GpsimdCause::from_detail(e.detail).map_or(("UNKNOWN", 0xFF), |(c, q)| (c.name(), q));
                    let who = if q7 == nrt_isa::ucode::exception::CLUSTER_Q7 { "the Q7 cluster".to_string() } else { format!("Q7 core {q7}") };
                    crate::log_error!(
                        crate::log::Module::Tdrv,
                        "GPSIMD EXCEPTION OCCURRED: {cause} on {who} of core {core} (at {}); status {}",
                        src.describe_pc(core, nrt_hal::EngineId::Pool.index(), u64::from(e.program_counter)),
                        v.status
                    );
                }
                self.merge(v);
                if v.stops_engine {
                    let engine = e.engine.map(|x| x as usize);
                    self.fail(v.status, Failure::EngineStopped { core, engine, pc: e.program_counter });
                }
            }
            // An undecodable error record is still an error.
            Err(_) => self.merge(Verdict { status: NrtStatus::ExecCompletedWithErr, stops_engine: false }),
        }
    }

    /// One in-flight sweep at the collectives barrier (WAIT_BARRIER_PROXY):
    /// warn-and-double at 120 s, fail at the peers' bound. While a network
    /// proxy waits for the peers of other processes, the bound is the
    /// proxy's (it fails naming the peer that never came).
    #[inline(never)]
    fn barrier_step(&mut self, core: usize, now: Instant, network: Network) -> Step {
        let t0 = *self.barrier_start.get_or_insert(now);
        let waited = now.saturating_duration_since(t0);
        if waited >= self.barrier_timeout && network != Network::Barrier {
            self.fail(NrtStatus::ExecHwErrCollectives, Failure::CollectivesBarrier { core, waited_s: waited.as_secs() });
            return Step::Done(self.status);
        }
        if waited >= self.barrier_warn {
            crate::log_warn!(crate::log::Module::Kmgr, "Timeout exceeded: Waiting on barrier proxy task: {} sec", waited.as_secs());
            self.barrier_warn *= 2;
        }
        Step::InFlight
    }

    /// Advances the state machine by one sweep over every ring. `now` is
    /// called only when the sweep leaves the execution in flight (for the
    /// timeout, whose clock starts at the first such sweep): a harvest that
    /// finds the execution done reads no clock.
    pub fn step(&mut self, src: &dyn NqSource, now: impl FnOnce() -> Instant) -> Step {
        match self.phase {
            Phase::Init => {
                self.phase = Phase::WaitBarrierProxy;
                return self.step(src, now);
            }
            Phase::WaitBarrierProxy => {
                // No collectives barrier proxies exist yet: every barrier is done.
                self.phase = Phase::WaitCore;
                for c in 0..self.cores.min(src.cores()) {
                    let started = src.started_engines(c);
                    self.started[c] = started;
                    // Every started engine waits for its START and END
                    // (START_PENDING); the others are COMPLETE.
                    self.pending[c] = started.bits();
                    self.start_seen[c] = 0;
                }
            }
            Phase::Done => return Step::Done(self.status),
            Phase::WaitCore => {}
        }
        let mut buf = [[0u8; NQ_RECORD_BYTES]; RECORDS_PER_SWEEP];
        let cores = self.cores.min(src.cores());
        for core in 0..cores {
            let started = self.started[core];
            // An engine that was not started writes nothing; engine 0's
            // error ring is also the core's (DMA-side errors), so it is
            // always read.
            let mut rings = started.bits() | 1;
            while rings != 0 {
                let engine = rings.trailing_zeros() as usize;
                rings &= rings - 1;
                let n = src.read_errors(core, engine, &mut buf);
                for raw in &buf[..n] {
                    self.on_error(src, core, raw);
                }
                if self.phase == Phase::Done {
                    return Step::Done(self.status);
                }
                if !started.contains_index(engine) {
                    continue;
                }
                let n = src.read_notify(core, engine, &mut buf);
                for raw in &buf[..n] {
                    self.on_notification(src, core, engine, &NotificationRecord::from_bytes(raw));
                    if self.phase == Phase::Done {
                        return Step::Done(self.status);
                    }
                }
            }
        }
        let incomplete = (0..cores).find(|&c| self.pending[c] != 0);
        let network = src.network();
        if let Network::Failed(s) = network {
            self.fail(s, Failure::Network { core: incomplete.unwrap_or(0) });
            return Step::Done(self.status);
        }
        match incomplete {
            None if self.outputs_seen < self.expected_outputs => {
                // Every engine ended but completion records are missing.
                let overflow = (0..cores).flat_map(|c| (0..ENGINES).map(move |e| (c, e))).find(|&(c, e)| src.overflowed(c, e));
                match overflow {
                    Some((core, engine)) => self.fail(NrtStatus::ExecSwNqOverflow, Failure::Overflow { core, engine }),
                    None => self.fail(NrtStatus::Failure, Failure::Unexpected { core: 0, engine: ENGINES - 1, notific_type: 0 }),
                }
                Step::Done(self.status)
            }
            None => {
                self.phase = Phase::Done;
                Step::Done(self.status)
            }
            Some(core) if self.in_barrier() || (self.collectives > 0 && network == Network::Barrier) => self.barrier_step(core, now(), network),
            Some(core) => {
                let now = now();
                let started = *self.core_start.get_or_insert(now);
                if now.saturating_duration_since(started) >= self.timeout {
                    let overflow = (0..cores).flat_map(|c| (0..ENGINES).map(move |e| (c, e))).find(|&(c, e)| src.overflowed(c, e));
                    match overflow {
                        Some((core, engine)) => self.fail(NrtStatus::ExecSwNqOverflow, Failure::Overflow { core, engine }),
                        None if self.cc_started > self.cc_ended => {
                            self.fail(NrtStatus::ExecHwErrCollectives, Failure::Collectives { core, op: self.cc_ended, total: self.collectives })
                        }
                        None => self.fail(NrtStatus::Timeout, Failure::Timeout { core, timeout_ms: self.timeout.as_millis() as u64, engines: self.pending[core] }),
                    }
                    Step::Done(self.status)
                } else {
                    Step::InFlight
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_hal::EngineId;
    use nrt_isa::notification::{InferErrorSubtype, NotificType, NqEngine};
    use std::cell::RefCell;
    use std::collections::VecDeque;

    /// Rings fed by the test.
    struct Fake {
        notify: RefCell<Vec<VecDeque<[u8; 16]>>>,
        errors: RefCell<Vec<VecDeque<[u8; 16]>>>,
        overflow: bool,
        completed: RefCell<Vec<u32>>,
        started: Vec<EngineSet>,
        network: std::cell::Cell<Network>,
    }

    impl Fake {
        fn new(cores: usize) -> Fake {
            Fake {
                notify: RefCell::new(vec![VecDeque::new(); cores * 5]),
                errors: RefCell::new(vec![VecDeque::new(); cores * 5]),
                overflow: false,
                completed: RefCell::new(Vec::new()),
                started: vec![EngineSet::ALL; cores],
                network: std::cell::Cell::new(Network::None),
            }
        }
        fn push(&self, core: usize, engine: usize, sub: RuntimeSubtype, custom: u16) {
            let kind = NotificType::for_engine(NqEngine::from_index(engine as u8).unwrap(), nrt_isa::notification::EngineEvent::Explicit);
            let r = NotificationRecord::infer_status(kind, sub, custom, 0, 0);
            self.notify.borrow_mut()[core * 5 + engine].push_back(r.to_bytes().unwrap());
        }
        fn push_error(&self, core: usize, engine: usize, subtype: InferErrorSubtype) {
            let r = ErrorRecord { kind: NotificType::Error, program_counter: 3, subtype, engine: NqEngine::from_index(engine as u8), detail: 0, timestamp_ps: 0 };
            self.errors.borrow_mut()[core * 5 + engine].push_back(r.to_record().to_bytes().unwrap());
        }
        fn all(&self, core: usize, sub: RuntimeSubtype) {
            for e in 0..5 {
                self.push(core, e, sub, 0);
            }
        }
    }

    fn drain(q: &mut VecDeque<[u8; 16]>, out: &mut [[u8; 16]]) -> usize {
        let mut n = 0;
        while n < out.len() {
            match q.pop_front() {
                Some(r) => {
                    out[n] = r;
                    n += 1;
                }
                None => break,
            }
        }
        n
    }

    impl NqSource for Fake {
        fn cores(&self) -> usize {
            self.notify.borrow().len() / 5
        }
        fn read_notify(&self, core: usize, engine: usize, out: &mut [[u8; 16]]) -> usize {
            drain(&mut self.notify.borrow_mut()[core * 5 + engine], out)
        }
        fn read_errors(&self, core: usize, engine: usize, out: &mut [[u8; 16]]) -> usize {
            drain(&mut self.errors.borrow_mut()[core * 5 + engine], out)
        }
        fn overflowed(&self, _: usize, _: usize) -> bool {
            self.overflow
        }
        fn started_engines(&self, core: usize) -> EngineSet {
            self.started[core]
        }
        fn output_completed(&self, var: u32) {
            self.completed.borrow_mut().push(var);
        }
        fn network(&self) -> Network {
            self.network.get()
        }
    }

    #[test]
    fn the_network_barrier_holds_the_clocks_until_the_peers_came_and_a_failed_proxy_ends_the_execution() {
        let src = Fake::new(1);
        let mut hv = h(1);
        // A barrier bound that has long passed: only the proxy may end a
        // network barrier.
        hv.expect_collectives(1, Duration::from_millis(1));
        hv.reset();
        src.all(0, RuntimeSubtype::Start);
        src.push(0, 0, RuntimeSubtype::CcStart, 0);
        src.network.set(Network::Barrier);
        let t0 = Instant::now();
        assert_eq!(hv.step(&src, || t0), Step::InFlight);
        let later = t0 + Duration::from_secs(100);
        assert_eq!(hv.step(&src, || later), Step::InFlight, "neither the barrier bound nor the execution timeout runs");
        assert!(hv.time_left(later) == Duration::from_secs(30), "the execution clock has not started");
        // The peers came: WAIT_CORE, whose clock starts now.
        src.network.set(Network::Running);
        assert_eq!(hv.step(&src, || later), Step::InFlight);
        assert_eq!(hv.step(&src, || later + Duration::from_secs(31)), Step::Done(NrtStatus::ExecHwErrCollectives));
        // A proxy failure ends the execution with its status.
        let mut hv = h(1);
        hv.expect_collectives(1, Duration::from_secs(600));
        hv.reset();
        src.all(0, RuntimeSubtype::Start);
        src.network.set(Network::Barrier);
        assert_eq!(hv.step(&src, Instant::now), Step::InFlight);
        src.network.set(Network::Failed(NrtStatus::NetworkProxyFailure));
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::NetworkProxyFailure));
        assert!(matches!(hv.failure(), Some(Failure::Network { .. })));
    }

    #[test]
    fn a_missing_completion_record_fails_the_execution() {
        let mut src = Fake::new(1);
        let mut hv = h(1);
        hv.expect_output_records(1);
        hv.reset();
        src.all(0, RuntimeSubtype::Start);
        src.all(0, RuntimeSubtype::End);
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::Failure));
        let mut hv = h(1);
        hv.expect_output_records(1);
        src.overflow = true;
        src.all(0, RuntimeSubtype::Start);
        src.all(0, RuntimeSubtype::End);
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::ExecSwNqOverflow));
    }

    #[test]
    fn tensor_completion_records_name_outputs_before_done() {
        let src = Fake::new(1);
        let mut hv = h(1);
        src.all(0, RuntimeSubtype::Start);
        for var in [1u32, 0] {
            let kind = NotificType::for_engine(NqEngine::Sp, nrt_isa::notification::EngineEvent::Explicit);
            let r = NotificationRecord::infer_status(kind, RuntimeSubtype::Custom, CustomSubId::TensorCompletion as u16, var, 0);
            src.notify.borrow_mut()[4].push_back(r.to_bytes().unwrap());
        }
        assert_eq!(hv.step(&src, Instant::now), Step::InFlight);
        assert_eq!(*src.completed.borrow(), vec![1, 0], "outputs complete while the execution is still in flight");
        src.all(0, RuntimeSubtype::End);
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::Success));
    }

    fn h(cores: usize) -> Harvest {
        Harvest::new(cores, Duration::from_secs(30), true)
    }

    #[test]
    fn engines_the_program_does_not_start_begin_complete() {
        let mut src = Fake::new(2);
        let mut hv = h(2);
        let sp = EngineId::Sp.index();
        // Core 0 runs SP alone, core 1 SP and PE.
        src.started = vec![EngineSet::with_programs(|_| false), EngineSet::with_programs(|e| e == EngineId::Pe)];
        for _ in 0..2 {
            src.push(0, sp, RuntimeSubtype::Start, 0);
            src.push(1, sp, RuntimeSubtype::Start, 0);
            src.push(1, EngineId::Pe.index(), RuntimeSubtype::Start, 0);
            src.push(0, sp, RuntimeSubtype::End, 0);
            src.push(1, sp, RuntimeSubtype::End, 0);
            assert_eq!(hv.step(&src, Instant::now), Step::InFlight);
            assert_eq!((hv.engine(0, EngineId::Act.index()), hv.pending_core()), (EngineState::Complete, Some(1)));
            src.push(1, EngineId::Pe.index(), RuntimeSubtype::End, 0);
            assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::Success));
            // The next execution starts from the same sets.
            hv.reset();
        }
        // Errors still count from the core's error ring (engine 0's), read
        // whether or not PE was started.
        src.push_error(0, 0, InferErrorSubtype::HbmUncorrectable);
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::ExecHwErrHbmUe));
    }

    #[test]
    fn a_harvest_that_finds_the_execution_done_reads_no_clock() {
        let src = Fake::new(1);
        src.all(0, RuntimeSubtype::Start);
        src.all(0, RuntimeSubtype::End);
        let mut hv = h(1);
        let step = hv.step(&src, || panic!("the clock was read for a finished execution"));
        assert_eq!(step, Step::Done(NrtStatus::Success));
        // In flight: the clock is read, and starts the timeout.
        let mut hv = h(1);
        let mut reads = 0;
        assert_eq!(
            hv.step(&src, || {
                reads += 1;
                Instant::now()
            }),
            Step::InFlight
        );
        assert_eq!(reads, 1);
    }

    #[test]
    fn start_then_end_on_every_engine_completes() {
        let src = Fake::new(2);
        let mut hv = h(2);
        let t = Instant::now();
        assert_eq!(hv.step(&src, || t), Step::InFlight);
        assert_eq!(hv.phase(), Phase::WaitCore);
        src.all(0, RuntimeSubtype::Start);
        src.all(1, RuntimeSubtype::Start);
        assert_eq!(hv.step(&src, || t), Step::InFlight);
        assert_eq!(hv.engine(1, 4), EngineState::EndPending);
        src.all(0, RuntimeSubtype::End);
        assert_eq!(hv.step(&src, || t), Step::InFlight);
        src.all(1, RuntimeSubtype::End);
        assert_eq!(hv.step(&src, || t), Step::Done(NrtStatus::Success));
        assert_eq!(hv.phase(), Phase::Done);
    }

    #[test]
    fn end_before_start_is_overflow_only_when_the_ring_says_so() {
        let mut src = Fake::new(1);
        src.push(0, 2, RuntimeSubtype::End, 0);
        let mut hv = h(1);
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::Failure));
        src.overflow = true;
        src.push(0, 2, RuntimeSubtype::End, 0);
        let mut hv = h(1);
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::ExecSwNqOverflow));
        assert_eq!(hv.failure(), Some(Failure::Overflow { core: 0, engine: 2 }));
    }

    #[test]
    fn timeout_and_overflow_probe() {
        let mut src = Fake::new(1);
        let mut hv = Harvest::new(1, Duration::from_millis(10), false);
        let t = Instant::now();
        src.all(0, RuntimeSubtype::Start);
        assert_eq!(hv.step(&src, || t), Step::InFlight);
        assert_eq!(hv.step(&src, || t + Duration::from_millis(11)), Step::Done(NrtStatus::Timeout));
        src.overflow = true;
        let mut hv = Harvest::new(1, Duration::from_millis(10), false);
        assert_eq!(hv.step(&src, || t), Step::InFlight);
        assert_eq!(hv.step(&src, || t + Duration::from_millis(11)), Step::Done(NrtStatus::ExecSwNqOverflow));
    }

    #[test]
    fn fatal_error_records_finish_at_once_and_soft_ones_wait_for_end() {
        let src = Fake::new(1);
        let mut hv = h(1);
        src.all(0, RuntimeSubtype::Start);
        src.push_error(0, 1, InferErrorSubtype::HbmUncorrectable);
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::ExecHwErrHbmUe));
        assert!(hv.engine_stopped());

        let src = Fake::new(1);
        let mut hv = h(1);
        src.all(0, RuntimeSubtype::Start);
        src.push_error(0, 4, InferErrorSubtype::Numerical);
        src.push(0, 3, RuntimeSubtype::Custom, 2);
        assert_eq!(hv.step(&src, Instant::now), Step::InFlight);
        src.all(0, RuntimeSubtype::End);
        // OOB (critical) outranks NaN (medium).
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::ExecOob));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Arbitrary ring contents never panic the harvest, and once it is
        /// done it stays done with the same status.
        #[test]
        fn random_records_never_panic(notify in proptest::collection::vec(proptest::prelude::any::<[u8; 16]>(), 0..40), errors in proptest::collection::vec(proptest::prelude::any::<[u8; 16]>(), 0..6), slots in proptest::collection::vec(0usize..10, 46)) {
            let src = Fake::new(2);
            for (r, s) in notify.iter().zip(&slots) {
                src.notify.borrow_mut()[*s].push_back(*r);
            }
            for (r, s) in errors.iter().zip(slots.iter().rev()) {
                src.errors.borrow_mut()[*s].push_back(*r);
            }
            let mut hv = Harvest::new(2, Duration::from_millis(5), true);
            let t = Instant::now();
            let mut last = Step::InFlight;
            for k in 0..4 {
                last = hv.step(&src, || t + Duration::from_millis(2 * k));
            }
            if let Step::Done(s) = last {
                proptest::prop_assert_eq!(hv.step(&src, || t), Step::Done(s));
            } else {
                proptest::prop_assert!(false, "a 5 ms timeout must have ended the harvest after 6 ms");
            }
        }
    }

    #[test]
    fn worst_status_over_cores_wins() {
        let src = Fake::new(2);
        let mut hv = h(2);
        src.all(0, RuntimeSubtype::Start);
        src.all(1, RuntimeSubtype::Start);
        src.push_error(0, 0, InferErrorSubtype::Numerical);
        src.push_error(1, 0, InferErrorSubtype::Transient);
        src.all(0, RuntimeSubtype::End);
        src.all(1, RuntimeSubtype::End);
        assert_eq!(hv.step(&src, Instant::now), Step::Done(NrtStatus::ExecCompletedWithErr));
    }
}
