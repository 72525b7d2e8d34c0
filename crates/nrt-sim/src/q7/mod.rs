//! The POOL engine's Q7 cluster: eight cores running WebAssembly kernels
//! (`docs/gpsimd.md`).
//!
//! - this module: the per-NeuronCore [`Cluster`]: CSRs, the IRAM / DRAM
//!   apertures the host writes through the device portal, the argument
//!   block LOAD_POOL_ARGUMENT latched, and the op in flight.
//! - [`wasm`]: the process-wide wasmtime engine, the epoch ticker and the
//!   compiled-library cache; [`wasm::check_library`] for `nrt kernel build`.
//! - [`dispatch`]: what the POOL sequencer does with LOAD_POOL_ARGUMENT
//!   and EXTENDED_INST (argument loading, the op's start, its completion
//!   gate), over a core, the device's [`crate::port::Bus`] and
//!   [`crate::signals::Signals`].
//! - [`resolve`]: EXTENDED_INST's walk (library set, then the installed
//!   image's `kernel_info_table`).
//! - [`invoke`]: one Q7 core running one kernel (imports, traps, watchdog);
//!   its tensor copies go through the pages `pins` keeps.
//! - [`stdio`]: the stdio rings kernels print into.
//!
//! Without the `q7` cargo feature (on by default) `wasm` and `invoke` are
//! the stand-ins of `absent.rs`: no wasmtime in the build, and every
//! library is refused with `MISSING_FEATURE` where it would compile.
//!
//! The cores are not threads: each invocation is a scheduler task
//! ([`crate::scheduler::Task::Q7`]), run to completion, a trap, or the
//! watchdog.

#[cfg(not(feature = "q7"))]
mod absent;
pub mod build;
pub mod dispatch;
#[cfg(not(feature = "q7"))]
pub use absent::{MISSING_FEATURE, invoke, wasm};
#[cfg(feature = "q7")]
pub mod invoke;
mod job;
#[cfg(feature = "q7")]
mod pins;
pub use job::Latched;
pub mod resolve;
pub mod stdio;
#[cfg(feature = "q7")]
pub mod wasm;

use nrt_hal::arch::{Q7_CORE_STRIDE, Q7_CSR_SIZE, Q7_DRAM_OFFSET, Q7_IRAM_OFFSET};
use nrt_hal::{ArchDesc, DeviceAddr, HalError, HalResult};
use nrt_isa::ucode::{GpsimdCause, csr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Q7 cores per cluster.
pub const Q7_CORES: usize = 8;

/// Where an offset inside the Q7 portal lands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortalTarget {
    /// A CSR at this offset.
    Csr(u64),
    /// Q7 core `.0`'s IRAM at byte `.1`.
    Iram(usize, u64),
    /// Q7 core `.0`'s DRAM at byte `.1`.
    Dram(usize, u64),
}

/// Maps a portal offset and length to one target, or an error naming the
/// aperture it misses.
pub fn portal_target(arch: &ArchDesc, off: u64, len: u64) -> Option<PortalTarget> {
    let l = len.max(1);
    if off + l <= Q7_CSR_SIZE {
        return Some(PortalTarget::Csr(off));
    }
    for (base, size, iram) in [(Q7_IRAM_OFFSET, arch.q7_iram_bytes, true), (Q7_DRAM_OFFSET, arch.q7_dram_bytes, false)] {
        if off >= base && off < base + 8 * Q7_CORE_STRIDE {
            let q = ((off - base) / Q7_CORE_STRIDE) as usize;
            let o = (off - base) % Q7_CORE_STRIDE;
            if o + l <= size {
                return Some(if iram { PortalTarget::Iram(q, o) } else { PortalTarget::Dram(q, o) });
            }
            return None;
        }
    }
    None
}

/// The cluster's writable configuration and counters.
#[derive(Debug)]
struct Csrs {
    libset: u64,
    libset_rows: u32,
    stdio: u64,
    watchdog_ms: u32,
    run_stall: u32,
    ops_done: u32,
    exceptions: u32,
    last_cause: u32,
}

/// One Q7 core's local memories (allocated on first write).
#[derive(Debug, Default)]
pub struct CoreMem {
    /// IRAM bytes (empty until written).
    pub iram: Vec<u8>,
    /// DRAM bytes (empty until written).
    pub dram: Vec<u8>,
    /// Bumped on every write, so the compiled image is re-resolved.
    pub generation: u64,
    /// The image compiled at `generation` (or why it is unusable).
    pub(crate) compiled: Option<(u64, Result<Arc<wasm::CompiledLib>, String>)>,
}

/// The op in flight.
#[derive(Debug, Default)]
struct OpState {
    /// Id of the op in flight (0 = none ever).
    id: u64,
    busy: bool,
    hung: bool,
    /// An exception was raised since the last reset (STATUS bit 2).
    faulted: bool,
    /// The op in flight raised an exception (its record is written).
    op_faulted: bool,
    /// A fault the POOL sequencer has not yet acted on.
    halt_pool: bool,
    remaining: u32,
    completion_addr: u64,
    /// Virtual time the latest op finished.
    end_clock: u64,
}

/// One NeuronCore's Q7 cluster.
#[derive(Debug)]
pub struct Cluster {
    csrs: Mutex<Csrs>,
    mem: [Mutex<CoreMem>; Q7_CORES],
    latched: Mutex<Option<Latched>>,
    op: Mutex<OpState>,
    /// The op the Q7 tasks run.
    job: Mutex<Option<Arc<invoke::Job>>>,
    /// Per-core instances (`invoke`), dropped when the reset epoch moves.
    #[cfg_attr(not(feature = "q7"), allow(dead_code))]
    pub(crate) instances: [Mutex<Option<invoke::CoreInstance>>; Q7_CORES],
    /// Bumped by `reset`: abandons the op in flight and every instance.
    pub(crate) reset_epoch: AtomicU64,
    pub(crate) iram_bytes: u64,
    pub(crate) dram_bytes: u64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why an op could not start (reported as a GPSIMD exception).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchError {
    /// The cause.
    pub cause: GpsimdCause,
    /// The Q7 core it concerns (`0xF` for the cluster).
    pub q7: u8,
    /// Human-readable detail (for logs and tests).
    pub why: String,
}

impl Cluster {
    /// A cluster out of reset: empty memories, every core stalled.
    pub fn new(arch: &ArchDesc) -> Cluster {
        Cluster {
            csrs: Mutex::new(Csrs {
                libset: 0,
                libset_rows: 0,
                stdio: 0,
                watchdog_ms: 0,
                run_stall: csr::RUN_STALL_RESET,
                ops_done: 0,
                exceptions: 0,
                last_cause: 0,
            }),
            mem: Default::default(),
            latched: Mutex::new(None),
            op: Mutex::new(OpState::default()),
            job: Mutex::new(None),
            instances: Default::default(),
            reset_epoch: AtomicU64::new(0),
            iram_bytes: arch.q7_iram_bytes,
            dram_bytes: arch.q7_dram_bytes,
        }
    }

    /// Reads portal bytes.
    pub fn read(&self, t: PortalTarget, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        match t {
            PortalTarget::Csr(off) => {
                words(addr, buf.len() as u64)?;
                for (k, w) in buf.chunks_exact_mut(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let v = self.csr_read(o).ok_or_else(|| HalError::invalid(addr, 4, format!("no Q7 CSR at offset {o:#x}")))?;
                    w.copy_from_slice(&v.to_le_bytes());
                }
            }
            PortalTarget::Iram(q, off) | PortalTarget::Dram(q, off) => {
                let m = lock(&self.mem[q]);
                let src = if matches!(t, PortalTarget::Iram(..)) { &m.iram } else { &m.dram };
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = src.get(off as usize + i).copied().unwrap_or(0);
                }
            }
        }
        Ok(())
    }

    /// Writes portal bytes (CSR writes take effect at once).
    pub fn write(&self, t: PortalTarget, addr: DeviceAddr, data: &[u8]) -> HalResult<()> {
        match t {
            PortalTarget::Csr(off) => {
                words(addr, data.len() as u64)?;
                for (k, w) in data.chunks_exact(4).enumerate() {
                    let o = off + 4 * k as u64;
                    let v = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                    self.csr_write(o, v).map_err(|why| HalError::invalid(addr, 4, why))?;
                }
            }
            PortalTarget::Iram(q, off) | PortalTarget::Dram(q, off) => {
                let mut m = lock(&self.mem[q]);
                let (dst, size) =
                    if matches!(t, PortalTarget::Iram(..)) { (&mut m.iram, self.iram_bytes) } else { (&mut m.dram, self.dram_bytes) };
                if dst.is_empty() {
                    dst.resize(size as usize, 0);
                }
                dst[off as usize..off as usize + data.len()].copy_from_slice(data);
                m.generation += 1;
            }
        }
        Ok(())
    }

    fn csr_read(&self, off: u64) -> Option<u32> {
        let c = lock(&self.csrs);
        let op = lock(&self.op);
        Some(match off {
            csr::ID => csr::ID_VALUE,
            csr::IRAM_BYTES => self.iram_bytes as u32,
            csr::DRAM_BYTES => self.dram_bytes as u32,
            csr::LIBSET_LO => c.libset as u32,
            csr::LIBSET_HI => (c.libset >> 32) as u32,
            csr::LIBSET_ROWS => c.libset_rows,
            csr::STDIO_LO => c.stdio as u32,
            csr::STDIO_HI => (c.stdio >> 32) as u32,
            csr::WATCHDOG_MS => c.watchdog_ms,
            csr::STATUS => {
                u32::from(op.busy) * csr::STATUS_BUSY + u32::from(op.hung) * csr::STATUS_HUNG + u32::from(op.faulted) * csr::STATUS_FAULTED
            }
            csr::OPS_DONE => c.ops_done,
            csr::EXCEPTIONS => c.exceptions,
            csr::LAST_CAUSE => c.last_cause,
            csr::RUN_STALL => c.run_stall,
            _ => return None,
        })
    }

    fn csr_write(&self, off: u64, v: u32) -> Result<(), String> {
        let mut c = lock(&self.csrs);
        match off {
            csr::LIBSET_LO => c.libset = (c.libset & !0xFFFF_FFFF) | u64::from(v),
            csr::LIBSET_HI => c.libset = (c.libset & 0xFFFF_FFFF) | u64::from(v) << 32,
            csr::LIBSET_ROWS => {
                if v > nrt_isa::ucode::MAX_LIBSET_ROWS {
                    return Err(format!("LIBSET_ROWS {v} exceeds {} rows", nrt_isa::ucode::MAX_LIBSET_ROWS));
                }
                c.libset_rows = v;
            }
            csr::STDIO_LO => c.stdio = (c.stdio & !0xFFFF_FFFF) | u64::from(v),
            csr::STDIO_HI => c.stdio = (c.stdio & 0xFFFF_FFFF) | u64::from(v) << 32,
            csr::WATCHDOG_MS => c.watchdog_ms = v,
            csr::RUN_STALL => c.run_stall = v & 0xFF,
            csr::ID | csr::IRAM_BYTES | csr::DRAM_BYTES | csr::STATUS | csr::OPS_DONE | csr::EXCEPTIONS | csr::LAST_CAUSE => {
                return Err(format!("Q7 CSR {off:#x} is read-only"));
            }
            _ => return Err(format!("no Q7 CSR at offset {off:#x}")),
        }
        Ok(())
    }

    /// The library set (address, rows).
    pub fn libset(&self) -> (u64, u32) {
        let c = lock(&self.csrs);
        (c.libset, c.libset_rows)
    }

    /// The stdio table address (0 = none).
    pub fn stdio_table(&self) -> u64 {
        lock(&self.csrs).stdio
    }

    /// The watchdog bound in milliseconds.
    pub fn watchdog_ms(&self) -> u32 {
        match lock(&self.csrs).watchdog_ms {
            0 => csr::DEFAULT_WATCHDOG_MS,
            v => v,
        }
    }

    /// Whether Q7 core `q` is held in run-stall.
    pub fn stalled(&self, q: usize) -> bool {
        lock(&self.csrs).run_stall & (1 << q) != 0
    }

    /// A snapshot of Q7 core `q`'s memories (image bytes and generation).
    pub fn core_mem(&self, q: usize) -> MutexGuard<'_, CoreMem> {
        lock(&self.mem[q])
    }

    /// LOAD_POOL_ARGUMENT: keeps the argument block for the next dispatch.
    pub fn latch(&self, l: Latched) {
        *lock(&self.latched) = Some(l);
    }

    /// Where the latched op (not yet dispatched) writes its completion
    /// (`None`: nothing latched).
    pub fn latched_completion_addr(&self) -> Option<u64> {
        lock(&self.latched).as_ref().map(|l| l.completion_addr)
    }

    /// Takes the latched arguments.
    pub fn take_latched(&self) -> Option<Latched> {
        lock(&self.latched).take()
    }

    /// Whether an op is in flight (the join waits for this).
    pub fn busy(&self) -> bool {
        lock(&self.op).busy
    }

    /// Virtual time the last op finished.
    pub fn end_clock(&self) -> u64 {
        lock(&self.op).end_clock
    }

    /// Takes a pending exception the POOL sequencer must halt on.
    pub fn take_halt(&self) -> bool {
        std::mem::take(&mut lock(&self.op).halt_pool)
    }

    /// Starts an op on `cores` invocations; returns its id.
    pub(crate) fn begin(&self, cores: u32, completion_addr: u64) -> u64 {
        let mut op = lock(&self.op);
        op.id += 1;
        op.busy = true;
        op.hung = false;
        op.op_faulted = false;
        op.remaining = cores;
        op.completion_addr = completion_addr;
        op.id
    }

    /// Records an exception of op `op_id`; true when it is the op's first
    /// (the caller then writes the one error record).
    pub(crate) fn fault(&self, op_id: u64, detail: u16) -> bool {
        let mut op = lock(&self.op);
        if op.id != op_id || op.op_faulted {
            return false;
        }
        op.op_faulted = true;
        op.faulted = true;
        op.halt_pool = true;
        drop(op);
        let mut c = lock(&self.csrs);
        c.exceptions += 1;
        c.last_cause = u32::from(detail);
        true
    }

    /// Raises an exception outside any op (a dispatch failure).
    pub(crate) fn dispatch_fault(&self, detail: u16) {
        let mut op = lock(&self.op);
        op.faulted = true;
        drop(op);
        let mut c = lock(&self.csrs);
        c.exceptions += 1;
        c.last_cause = u32::from(detail);
    }

    /// One invocation of op `op_id` ended. Returns the completion address
    /// to write when this was the last one and the op succeeded.
    pub(crate) fn finish(&self, op_id: u64, outcome: invoke::Outcome, end_clock: u64) -> Option<u64> {
        let mut op = lock(&self.op);
        if op.id != op_id || !op.busy {
            return None;
        }
        op.end_clock = op.end_clock.max(end_clock);
        if outcome == invoke::Outcome::Hung {
            op.hung = true;
        }
        op.remaining = op.remaining.saturating_sub(1);
        if op.remaining > 0 {
            return None;
        }
        if op.hung {
            // A runaway: the op never completes; only a reset clears it.
            return None;
        }
        op.busy = false;
        if op.op_faulted || outcome != invoke::Outcome::Ok {
            return None;
        }
        let addr = op.completion_addr;
        drop(op);
        lock(&self.csrs).ops_done += 1;
        Some(addr)
    }

    /// The id of the op in flight, if it is still current.
    pub(crate) fn current_op(&self) -> u64 {
        lock(&self.op).id
    }

    /// Core reset: abandons the op in flight, its latch and every
    /// instance; images and configuration CSRs survive.
    pub fn reset(&self) {
        self.reset_epoch.fetch_add(1, Ordering::AcqRel);
        let mut op = lock(&self.op);
        let id = op.id + 1;
        *op = OpState { id, ..OpState::default() };
        drop(op);
        *lock(&self.latched) = None;
        *lock(&self.job) = None;
    }

    /// The op the Q7 tasks of op `op_id` run (None once stale).
    pub(crate) fn job(&self, op_id_hint: Option<u64>) -> Option<Arc<invoke::Job>> {
        let j = lock(&self.job).clone()?;
        match op_id_hint {
            Some(id) if id != j.op_id => None,
            _ => Some(j),
        }
    }
}

fn words(addr: DeviceAddr, len: u64) -> HalResult<()> {
    if addr.is_aligned(4) && len.is_multiple_of(4) {
        Ok(())
    } else {
        Err(HalError::invalid(addr, len, "Q7 CSRs take whole, 4-byte aligned 32-bit words"))
    }
}
