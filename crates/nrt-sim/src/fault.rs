//! Fault injection: what can go wrong on purpose, when, and the device-side
//! evidence it leaves.
//!
//! # Syntax (`NEURON_SIM_INJECT`)
//!
//! A comma-separated list of `kind[@core=N][:after=N|:at=INSTR]`:
//!
//! - `kind`: `hbm_ue`, `hbm_ue_repairable`, `sram_parity`, `dma_abort`,
//!   `nq_overflow`, `hang`, `nan`, `oob`, `sem_lost`, `sim_panic`; and
//!   `proxy_fail`, `proxy_panic`, `proxy_thread_panic`, `proxy_slow` and
//!   `xu_panic`, which the runtime acts on ([`RUNTIME_KINDS`]);
//! - `@core=N`: only on physical core `N` (default: any core);
//! - `:after=N`: let `N` executions (for `dma_abort` and `nan`: `N` DMA
//!   packets; for `sem_lost`: `N` DMA writes into semaphore registers)
//!   complete normally, then fire (default `after=0`);
//! - `:at=INSTR`: fire on the instruction with that record index in the
//!   stream, or that opcode name (e.g. `NOTIFY`, `MATMUL`). Engine faults
//!   and `nan` (which then poisons that compute instruction's output);
//!   not `dma_abort`.
//!
//! Each fault fires once. Evidence, never a direct status:
//!
//! | kind | evidence |
//! |---|---|
//! | `hbm_ue`, `hbm_ue_repairable`, `sram_parity` | error NQ record (subtype HbmUncorrectable / HbmRepairable / EccUncorrectable of `nrt_isa::notification::InferErrorSubtype`); the engine stops (no END) |
//! | `hang` | the engine stops silently (no END record) |
//! | `nq_overflow` | the engine's next notification is dropped and the ring's overflow flag/bit is raised |
//! | `oob` | a CUSTOM notification (subtype 6, sub-id 2: indirect copy out of bounds) on the engine's ring |
//! | `dma_abort` | the queue goes to ABORTED, a DmaAbort error record (detail = queue index) is written, no completion semaphore |
//! | `sem_lost` | a DMA write into a semaphore register (a collective's "done" or a peer's notification) is dropped: the packet completes, the semaphore does not move; nothing else is recorded (a lost notification) |
//! | `nan` (`:after=N`) | the DMA packet's first f32 at the destination becomes NaN and a Numerical error record (detail = queue index) is written |
//! | `nan:at=INSTR` | the compute instruction runs, then the first element of its output becomes NaN (in the output dtype) and a Numerical error record (detail = opcode) is written; the engine continues. On a non-compute instruction nothing happens and the fault is spent |
//! | `sim_panic` | the simulator panics inside the engine's step, on whichever thread runs it (a worker, or a runtime thread lent to the device); the scheduler's guard turns it into a sequencer error record (detail `SIMULATOR_FAULT_DETAIL`) and halts the engine (`device::panicked`) |

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The faults the simulator can inject.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// Uncorrectable HBM error.
    HbmUe,
    /// Uncorrectable HBM error that row repair can fix.
    HbmUeRepairable,
    /// On-chip SRAM (SBUF/PSUM) parity error.
    SramParity,
    /// DMA queue abort.
    DmaAbort,
    /// Notification-queue overflow.
    NqOverflow,
    /// Engine hang.
    Hang,
    /// NaN production.
    Nan,
    /// Out-of-bounds indirect access.
    Oob,
    /// A DMA write into a semaphore register is lost.
    SemLost,
    /// The simulator panics inside the engine's step (its own failure).
    SimPanic,
}

impl FaultKind {
    /// Every kind with its spelling in `NEURON_SIM_INJECT`.
    pub const ALL: [(FaultKind, &'static str); 10] = [
        (FaultKind::HbmUe, "hbm_ue"),
        (FaultKind::HbmUeRepairable, "hbm_ue_repairable"),
        (FaultKind::SramParity, "sram_parity"),
        (FaultKind::DmaAbort, "dma_abort"),
        (FaultKind::NqOverflow, "nq_overflow"),
        (FaultKind::Hang, "hang"),
        (FaultKind::Nan, "nan"),
        (FaultKind::Oob, "oob"),
        (FaultKind::SemLost, "sem_lost"),
        (FaultKind::SimPanic, "sim_panic"),
    ];

    /// The spelling in `NEURON_SIM_INJECT`.
    pub fn name(self) -> &'static str {
        FaultKind::ALL.iter().find(|(k, _)| *k == self).map(|(_, n)| *n).unwrap_or("?")
    }

    /// Whether the fault fires on DMA packets rather than on instructions
    /// (`nan` does unless it names an instruction with `:at=`).
    pub fn is_dma(self) -> bool {
        matches!(self, FaultKind::DmaAbort | FaultKind::Nan | FaultKind::SemLost)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which instruction an `at=` trigger names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstrSelector {
    /// Record index in the engine's stream.
    Index(u64),
    /// Opcode name, upper-case.
    Name(String),
}

/// When a fault fires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// After `N` normal executions (or DMA packets), at the first opportunity.
    After(u64),
    /// On a specific instruction.
    At(InstrSelector),
}

/// One fault to inject.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultSpec {
    /// What goes wrong.
    pub kind: FaultKind,
    /// Only on this physical core (None = any).
    pub core: Option<u32>,
    /// When.
    pub trigger: Trigger,
}

impl FaultSpec {
    /// Whether the fault fires on instructions (engine faults, and `nan`
    /// with an `at=` trigger) rather than on DMA packets.
    pub fn fires_on_instructions(&self) -> bool {
        !self.kind.is_dma() || (self.kind == FaultKind::Nan && matches!(self.trigger, Trigger::At(_)))
    }

    /// A fault of `kind` on any core at the first opportunity.
    pub fn new(kind: FaultKind) -> FaultSpec {
        FaultSpec { kind, core: None, trigger: Trigger::After(0) }
    }
    /// Restricts the fault to one core.
    pub fn on_core(mut self, core: u32) -> FaultSpec {
        self.core = Some(core);
        self
    }
    /// Fires after `n` executions (or DMA packets).
    pub fn after(mut self, n: u64) -> FaultSpec {
        self.trigger = Trigger::After(n);
        self
    }
    /// Fires on an instruction.
    pub fn at(mut self, sel: InstrSelector) -> FaultSpec {
        self.trigger = Trigger::At(sel);
        self
    }
}

/// Why a `NEURON_SIM_INJECT` entry could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fault spec {entry:?}: {problem}; expected kind[@core=N][:after=N|:at=INSTR] with kind one of {kinds}")]
pub struct FaultParseError {
    /// The offending entry.
    pub entry: String,
    /// What was wrong.
    pub problem: String,
    /// The accepted kinds, listed.
    pub kinds: String,
}

/// Kinds of `NEURON_SIM_INJECT` that the runtime, not the device, acts
/// on: `proxy_fail[:after=N]` makes the runtime's collectives network
/// proxy fail after N messages (NRT_NETWORK_PROXY_FAILURE),
/// `proxy_panic[:after=N]` makes it panic there,
/// `proxy_thread_panic[:after=N]` makes a persistent proxy thread panic
/// outside its operations, `proxy_slow:ms=D` delays each landing the
/// proxy rings, `xu_panic[:after=N]` makes an execution unit's worker
/// panic holding request N+1. The
/// device sees neither the network nor the runtime's threads, so the
/// simulator accepts and skips them (the runtime's `inject` module reads
/// them).
pub const RUNTIME_KINDS: [&str; 5] = ["proxy_fail", "proxy_panic", "proxy_thread_panic", "proxy_slow", "xu_panic"];

/// Parses a comma-separated fault list (see the module docs); entries of
/// [`RUNTIME_KINDS`] are skipped.
pub fn parse_faults(text: &str) -> Result<Vec<FaultSpec>, FaultParseError> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .filter(|s| !RUNTIME_KINDS.iter().any(|k| s.split([':', '@']).next() == Some(*k)))
        .map(parse_one)
        .collect()
}

fn parse_one(entry: &str) -> Result<FaultSpec, FaultParseError> {
    let err = |problem: String| FaultParseError {
        entry: entry.to_string(),
        problem,
        kinds: FaultKind::ALL.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(", "),
    };
    let mut parts = entry.split(':');
    let head = parts.next().unwrap_or_default();
    let (kind_text, core_text) = match head.split_once('@') {
        Some((k, c)) => (k, Some(c)),
        None => (head, None),
    };
    let kind = FaultKind::ALL
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(kind_text.trim()))
        .map(|(k, _)| *k)
        .ok_or_else(|| err(format!("unknown fault kind {kind_text:?}")))?;
    let mut spec = FaultSpec::new(kind);
    if let Some(c) = core_text {
        let n = c
            .strip_prefix("core=")
            .ok_or_else(|| err(format!("{c:?} after '@' must be core=N")))?;
        spec.core = Some(n.parse().map_err(|_| err(format!("core {n:?} is not a core number")))?);
    }
    let mut trigger_seen = false;
    for p in parts {
        if trigger_seen {
            return Err(err("give at most one of :after= and :at=".into()));
        }
        trigger_seen = true;
        if let Some(n) = p.strip_prefix("after=") {
            spec.trigger = Trigger::After(n.parse().map_err(|_| err(format!("after={n:?} is not a count")))?);
        } else if let Some(a) = p.strip_prefix("at=") {
            if kind == FaultKind::DmaAbort {
                return Err(err(format!("{kind} fires on DMA packets; use :after=N, not :at=")));
            }
            if a.is_empty() {
                return Err(err("at= needs an instruction index or opcode name".into()));
            }
            spec.trigger = Trigger::At(match a.parse::<u64>() {
                Ok(i) => InstrSelector::Index(i),
                Err(_) => InstrSelector::Name(a.to_ascii_uppercase()),
            });
        } else {
            return Err(err(format!("unknown option {p:?}")));
        }
    }
    Ok(spec)
}

#[derive(Debug)]
struct Armed {
    spec: FaultSpec,
    fired: bool,
    packets: u64,
}

/// Where an engine is when it asks whether a fault fires.
#[derive(Clone, Copy, Debug)]
pub struct InstrSite<'a> {
    /// Physical core.
    pub core: u32,
    /// Executions this engine completed before the current one.
    pub executions: u64,
    /// Whether this is the first instruction of the execution.
    pub first_in_execution: bool,
    /// Record index.
    pub pc: u64,
    /// Opcode name, if known.
    pub opcode_name: Option<&'a str>,
}

/// The armed faults of a device.
#[derive(Debug, Default)]
pub struct FaultState {
    any: AtomicBool,
    armed: Mutex<Vec<Armed>>,
}

impl FaultState {
    /// Arms a fault.
    pub fn arm(&self, spec: FaultSpec) {
        self.armed.lock().unwrap_or_else(|e| e.into_inner()).push(Armed { spec, fired: false, packets: 0 });
        self.any.store(true, Ordering::Release);
    }

    /// Whether any fault was ever armed (the engines skip building an
    /// [`InstrSite`] per record while none is).
    pub fn armed(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    /// Arms every fault in the list.
    pub fn arm_all(&self, specs: &[FaultSpec]) {
        for s in specs {
            self.arm(s.clone());
        }
    }

    /// The engine fault that fires at this instruction, if any.
    pub fn on_instruction(&self, site: InstrSite<'_>) -> Option<FaultKind> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        let mut armed = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        let hit = armed.iter_mut().find(|a| {
            !a.fired
                && a.spec.fires_on_instructions()
                && a.spec.core.is_none_or(|c| c == site.core)
                && match &a.spec.trigger {
                    Trigger::After(n) => site.first_in_execution && site.executions >= *n,
                    Trigger::At(InstrSelector::Index(i)) => site.pc == *i,
                    Trigger::At(InstrSelector::Name(n)) => site.opcode_name == Some(n.as_str()),
                }
        })?;
        hit.fired = true;
        Some(hit.spec.kind)
    }

    /// The DMA fault that fires on this packet of `core`, if any. The
    /// test for no armed fault is inline (every packet of a DMA walk).
    #[inline]
    pub fn on_dma_packet(&self, core: u32) -> Option<FaultKind> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        self.on_dma_packet_armed(core)
    }

    /// [`FaultState::on_dma_packet`] with some fault armed.
    #[inline(never)]
    fn on_dma_packet_armed(&self, core: u32) -> Option<FaultKind> {
        let mut armed = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        for a in armed.iter_mut() {
            if a.fired || a.spec.fires_on_instructions() || a.spec.kind == FaultKind::SemLost || a.spec.core.is_some_and(|c| c != core) {
                continue;
            }
            let Trigger::After(n) = a.spec.trigger else { continue };
            if a.packets >= n {
                a.fired = true;
                return Some(a.spec.kind);
            }
            a.packets += 1;
        }
        None
    }
}

impl FaultState {
    /// Whether an armed `sem_lost` drops this DMA write of `core` into a
    /// semaphore register (counted per such write).
    #[inline(never)]
    pub fn on_semaphore_write(&self, core: u32) -> bool {
        if !self.any.load(Ordering::Acquire) {
            return false;
        }
        let mut armed = self.armed.lock().unwrap_or_else(|e| e.into_inner());
        for a in armed.iter_mut() {
            if a.fired || a.spec.kind != FaultKind::SemLost || a.spec.core.is_some_and(|c| c != core) {
                continue;
            }
            let Trigger::After(n) = a.spec.trigger else { continue };
            if a.packets >= n {
                a.fired = true;
                return true;
            }
            a.packets += 1;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_syntax() {
        let f = parse_faults("hang@core=1:after=2, nan ,oob:at=NOTIFY,hbm_ue:at=7").unwrap();
        assert_eq!(f[0], FaultSpec::new(FaultKind::Hang).on_core(1).after(2));
        assert_eq!(f[1], FaultSpec::new(FaultKind::Nan));
        assert_eq!(f[2], FaultSpec::new(FaultKind::Oob).at(InstrSelector::Name("NOTIFY".into())));
        assert_eq!(f[3].trigger, Trigger::At(InstrSelector::Index(7)));
        assert!(parse_faults("").unwrap().is_empty());
    }

    #[test]
    fn errors_name_the_entry_and_the_choices() {
        let e = parse_faults("hang,melt").unwrap_err();
        assert_eq!(e.entry, "melt");
        let msg = e.to_string();
        assert!(msg.contains("unknown fault kind") && msg.contains("hbm_ue_repairable"), "{msg}");
        assert_eq!(parse_faults("proxy_fail:after=3,sem_lost").unwrap().len(), 1, "the runtime's kinds are skipped");
        assert!(parse_faults("hang@cpu=1").unwrap_err().problem.contains("core=N"));
        assert!(parse_faults("hang:after=x").is_err());
        assert!(parse_faults("dma_abort:at=3").unwrap_err().problem.contains("after"));
        let nan_at = parse_faults("nan:at=MATMUL").unwrap();
        assert!(nan_at[0].fires_on_instructions());
        assert!(!parse_faults("nan:after=2").unwrap()[0].fires_on_instructions());
        assert!(parse_faults("hang:after=1:at=2").is_err());
        assert!(parse_faults("hang:when=1").is_err());
    }

    #[test]
    fn fires_once_at_its_trigger() {
        let s = FaultState::default();
        s.arm(FaultSpec::new(FaultKind::Hang).on_core(0).after(1));
        s.arm(FaultSpec::new(FaultKind::DmaAbort).after(2));
        let site = |execs, first| InstrSite { core: 0, executions: execs, first_in_execution: first, pc: 0, opcode_name: None };
        assert_eq!(s.on_instruction(site(0, true)), None);
        assert_eq!(s.on_instruction(site(1, false)), None);
        assert_eq!(s.on_instruction(site(1, true)), Some(FaultKind::Hang));
        assert_eq!(s.on_instruction(site(2, true)), None);
        assert_eq!(s.on_dma_packet(0), None);
        assert_eq!(s.on_dma_packet(3), None);
        assert_eq!(s.on_dma_packet(0), Some(FaultKind::DmaAbort));
        assert_eq!(s.on_dma_packet(0), None);
    }
}
