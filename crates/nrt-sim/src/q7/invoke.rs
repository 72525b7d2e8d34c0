//! One Q7 core running one kernel: the store and instance it keeps, the
//! `env` imports, the watchdog, and how a trap becomes a cause.

use super::pins::PinCache;
use super::wasm::{self, CompiledLib, MAX_GUEST_MEMORY};
pub use super::job::{Job, Outcome, tensor_sizes};
use super::Cluster;
use crate::port::Bus;
use nrt_hal::{ArchDesc, EngineId};
use nrt_isa::ucode::{ARG_BLOCK_BYTES, ArgLocation, ArgTensor, GpsimdCause};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use wasmtime::{Caller, Extern, Instance, Linker, Memory, Store, StoreLimits, StoreLimitsBuilder, Trap, TypedFunc, UpdateDeadline};

/// The device context one call runs with: device memory (through a
/// handle the store may keep, so a `dyn` one; the tensor copies mostly go
/// through the pins of [`PinCache`] without it), the core's cluster
/// (reset epoch, stdio table) and the op.
struct CallCtx {
    dev: Arc<dyn Bus>,
    cluster: Arc<Cluster>,
    job: Arc<Job>,
    /// Bytes per SBUF partition (for tensor arguments in SBUF).
    partition_bytes: u64,
}

/// A core's store data.
pub(crate) struct HostState {
    q7: u32,
    call: Option<CallCtx>,
    limits: StoreLimits,
    deadline: Instant,
    reset_epoch: u64,
    /// Set by an import that traps on purpose.
    cause: Option<GpsimdCause>,
    /// The watchdog (not a reset) stopped the call.
    timed_out: bool,
    bytes: u64,
    /// The instance's `memory` export, looked up once at instantiation
    /// (the tensor imports run per chunk; a by-name lookup each time
    /// showed in profiles).
    memory: Option<Memory>,
    /// Device pages this core's tensor copies went through in the op.
    pins: PinCache,
}

impl HostState {
    fn new(q7: u32) -> HostState {
        HostState {
            q7,
            call: None,
            limits: StoreLimitsBuilder::new().memory_size(MAX_GUEST_MEMORY).instances(1).build(),
            deadline: Instant::now(),
            reset_epoch: 0,
            cause: None,
            timed_out: false,
            bytes: 0,
            memory: None,
            pins: PinCache::default(),
        }
    }
}

/// A core's live instance of one library.
pub(crate) struct CoreInstance {
    lib: Arc<CompiledLib>,
    reset_epoch: u64,
    store: Store<HostState>,
    instance: Instance,
    /// The kernel export the last invocation called, by name: an op
    /// after op of the same kernel skips the by-name export lookup and
    /// its type check.
    entry: Option<(String, TypedFunc<(), i32>)>,
}

impl std::fmt::Debug for CoreInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreInstance").field("kernels", &self.lib.kernels).field("reset_epoch", &self.reset_epoch).finish()
    }
}

fn trap(st: &mut HostState, cause: GpsimdCause, why: String) -> wasmtime::Error {
    st.cause = Some(cause);
    wasmtime::Error::msg(why)
}

#[inline]
fn memory(c: &mut Caller<'_, HostState>) -> wasmtime::Result<Memory> {
    if let Some(m) = c.data().memory {
        return Ok(m);
    }
    match c.get_export("memory") {
        Some(Extern::Memory(m)) => Ok(m),
        _ => Err(trap(c.data_mut(), GpsimdCause::BadImage, "kernel has no memory export".into())),
    }
}

/// Calls `f(device address, offset into the guest buffer, length)` for
/// each contiguous device range of tensor bytes `off..off + len`, in
/// order, stopping at the first error (no allocation: this runs per
/// chunk a kernel moves).
fn for_segments<E>(t: &ArgTensor, sbuf_base: u64, partition_bytes: u64, off: u64, len: u64, mut f: impl FnMut(u64, usize, usize) -> Result<(), E>) -> Result<(), E> {
    match t.location {
        ArgLocation::Hbm { addr } => f(addr.wrapping_add(off), 0, len as usize),
        ArgLocation::Sbuf { addr, per_block, .. } => {
            let es = t.elem_bytes().max(1);
            let (p0, off0) = (u64::from(addr >> 18), u64::from(addr & 0x3FFFF));
            let row = u64::from(per_block) * es;
            let mut pos = off;
            while pos < off + len {
                let (p, within) = (pos / row, pos % row);
                let n = (row - within).min(off + len - pos);
                f(sbuf_base + (p0 + p) * partition_bytes + off0 + within, (pos - off) as usize, n as usize)?;
                pos += n;
            }
            Ok(())
        }
    }
}

fn tensor_io(c: &mut Caller<'_, HostState>, arg: i32, off: i64, ptr: i32, len: i32, write: bool) -> wasmtime::Result<i32> {
    let mem = memory(c)?;
    let (data, st) = mem.data_and_store_mut(&mut *c);
    // Borrowed field by field: this runs per chunk on every Q7 core at
    // once, and cloning the shared device / job `Arc`s here made their
    // reference counts bounce between the CPUs running the cores.
    let HostState { call, pins, bytes, cause, .. } = st;
    let fail = |cause: &mut Option<GpsimdCause>, why: String| {
        *cause = Some(GpsimdCause::TensorOob);
        wasmtime::Error::msg(why)
    };
    let Some(CallCtx { dev, job, partition_bytes, .. }) = call.as_ref() else {
        return Err(fail(cause, "tensor access outside an op".into()));
    };
    let dev = &**dev;
    let Some((t, size)) = u32::try_from(arg).ok().and_then(|a| Some((job.latched.args.tensor(a)?, *job.tensor_bytes.get(a as usize)?))) else {
        return Err(fail(cause, format!("argument {arg} does not exist")));
    };
    let (off, len, ptr) = (off as u64, len as u64, ptr as u32 as u64);
    if off > size || len > size - off {
        let why = format!("bytes {off}+{len} outside argument {arg} of {size} bytes");
        return Err(fail(cause, why));
    }
    if ptr + len > data.len() as u64 {
        return Err(fail(cause, format!("guest range {ptr:#x}+{len} outside the core's memory")));
    }
    let guest = &mut data[ptr as usize..(ptr + len) as usize];
    let now = job.start_clock;
    let moved = match t.location {
        // One contiguous range: straight to the pins.
        ArgLocation::Hbm { addr } if write => pins.write(dev, addr.wrapping_add(off), guest, now),
        ArgLocation::Hbm { addr } => pins.read(dev, addr.wrapping_add(off), guest),
        ArgLocation::Sbuf { .. } => for_segments(t, job.latched.sbuf_base, *partition_bytes, off, len, |addr, at, n| {
            if write {
                pins.write(dev, addr, &guest[at..at + n], now)
            } else {
                pins.read(dev, addr, &mut guest[at..at + n])
            }
        }),
    };
    if let Err(e) = moved {
        return Err(fail(cause, format!("argument {arg}: {e}")));
    }
    *bytes += len;
    Ok(0)
}

fn linker() -> Result<&'static Linker<HostState>, String> {
    static LINKER: std::sync::OnceLock<Result<Linker<HostState>, String>> = std::sync::OnceLock::new();
    LINKER
        .get_or_init(|| {
            let mut l = Linker::new(wasm::engine()?);
            let r: wasmtime::Result<()> = (|| {
                l.func_wrap("env", "get_cpu_id", |c: Caller<'_, HostState>| c.data().q7 as i32)?;
                l.func_wrap("env", "get_cpu_count", |c: Caller<'_, HostState>| {
                    c.data().call.as_ref().map_or(0, |x| x.job.total as i32)
                })?;
                l.func_wrap("env", "one_value", |c: Caller<'_, HostState>| c.data().call.as_ref().map_or(0, |x| x.job.one_value as i32))?;
                l.func_wrap("env", "arg_block", |mut c: Caller<'_, HostState>, ptr: i32, len: i32| -> wasmtime::Result<i32> {
                    let mem = memory(&mut c)?;
                    let (data, st) = mem.data_and_store_mut(&mut c);
                    let block = match st.call.as_ref() {
                        Some(x) => x.job.latched.args.encode(),
                        None => return Err(trap(st, GpsimdCause::TensorOob, "arg_block outside an op".into())),
                    };
                    let n = (len.max(0) as usize).min(ARG_BLOCK_BYTES);
                    let p = ptr as u32 as usize;
                    match data.get_mut(p..p + n) {
                        Some(dst) => dst.copy_from_slice(&block[..n]),
                        None => return Err(trap(st, GpsimdCause::TensorOob, format!("arg_block destination {p:#x}+{n} outside memory"))),
                    }
                    Ok(ARG_BLOCK_BYTES as i32)
                })?;
                l.func_wrap("env", "tensor_read", |mut c: Caller<'_, HostState>, a: i32, o: i64, p: i32, n: i32| tensor_io(&mut c, a, o, p, n, false))?;
                l.func_wrap("env", "tensor_write", |mut c: Caller<'_, HostState>, a: i32, o: i64, p: i32, n: i32| tensor_io(&mut c, a, o, p, n, true))?;
                l.func_wrap("env", "stdio_write", |mut c: Caller<'_, HostState>, fd: i32, ptr: i32, len: i32| -> wasmtime::Result<i32> {
                    let mem = memory(&mut c)?;
                    let (data, st) = mem.data_and_store_mut(&mut c);
                    let p = ptr as u32 as usize;
                    let Some(text) = data.get(p..p.saturating_add(len.max(0) as usize)) else {
                        return Err(trap(st, GpsimdCause::TensorOob, format!("stdio_write source {p:#x}+{len} outside memory")));
                    };
                    let Some(ctx) = st.call.as_ref() else { return Ok(0) };
                    let taken = super::stdio::append(&*ctx.dev, ctx.cluster.stdio_table(), st.q7, fd == 2, text, ctx.job.start_clock);
                    Ok(taken as i32)
                })?;
                Ok(())
            })();
            r.map_err(|e| format!("cannot define the kernel imports: {e}"))?;
            Ok(l)
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn classify(e: &wasmtime::Error, st: &HostState) -> Outcome {
    if let Some(c) = st.cause {
        return Outcome::Fault(c);
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Outcome::Hung,
        Some(Trap::StackOverflow) => Outcome::Fault(GpsimdCause::StackOverflow),
        Some(Trap::MemoryOutOfBounds | Trap::TableOutOfBounds | Trap::HeapMisaligned) => Outcome::Fault(GpsimdCause::MemoryOob),
        _ => Outcome::Fault(GpsimdCause::IllegalInstruction),
    }
}

/// Runs Q7 core `q`'s share of `job` on `cluster` (a core's, of a device
/// with numbers `arch` and memory `dev`); returns the outcome and the
/// virtual time it ended.
pub(crate) fn run<B: Bus + 'static>(dev: &Arc<B>, arch: &ArchDesc, cluster: &Arc<Cluster>, job: &Arc<Job>, q: usize) -> (Outcome, u64) {
    let Some((lib, kernel)) = job.kernels.get(q).or_else(|| job.kernels.first()) else {
        return (Outcome::Fault(GpsimdCause::NoKernel), job.start_clock);
    };
    let epoch = cluster.reset_epoch.load(Ordering::Acquire);
    let mut slot = cluster.instances[q].lock().unwrap_or_else(|e| e.into_inner());
    let fresh = !matches!(&*slot, Some(i) if Arc::ptr_eq(&i.lib, lib) && i.reset_epoch == epoch);
    if fresh {
        *slot = None;
        let Ok(engine) = wasm::engine() else { return (Outcome::Fault(GpsimdCause::BadImage), job.start_clock) };
        let mut store = Store::new(engine, HostState::new(q as u32));
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_callback(|mut ctx| {
            let st = ctx.data_mut();
            let reset = st.call.as_ref().is_some_and(|c| c.cluster.reset_epoch.load(Ordering::Acquire) != st.reset_epoch);
            if reset {
                return Ok(UpdateDeadline::Interrupt);
            }
            if Instant::now() >= st.deadline {
                st.timed_out = true;
                return Ok(UpdateDeadline::Interrupt);
            }
            Ok(UpdateDeadline::Continue(1))
        });
        store.set_epoch_deadline(1);
        let inst = match linker().and_then(|l| l.instantiate(&mut store, &lib.module).map_err(|e| e.to_string())) {
            Ok(i) => i,
            Err(_) => return (Outcome::Fault(GpsimdCause::BadImage), job.start_clock),
        };
        store.data_mut().memory = inst.get_memory(&mut store, "memory");
        *slot = Some(CoreInstance { lib: lib.clone(), reset_epoch: epoch, store, instance: inst, entry: None });
    }
    let Some(ci) = slot.as_mut() else { return (Outcome::Fault(GpsimdCause::BadImage), job.start_clock) };
    let entry = match &ci.entry {
        Some((name, f)) if name == kernel => f.clone(),
        _ => match ci.instance.get_typed_func::<(), i32>(&mut ci.store, kernel) {
            Ok(f) => ci.entry.insert((kernel.clone(), f)).1.clone(),
            Err(_) => return (Outcome::Fault(GpsimdCause::BadImage), job.start_clock),
        },
    };
    {
        let st = ci.store.data_mut();
        st.call = Some(CallCtx { dev: dev.clone(), cluster: cluster.clone(), job: job.clone(), partition_bytes: arch.sbuf_partition_bytes });
        st.deadline = Instant::now() + Duration::from_millis(u64::from(cluster.watchdog_ms()));
        st.reset_epoch = epoch;
        st.cause = None;
        st.timed_out = false;
        st.bytes = 0;
    }
    ci.store.set_epoch_deadline(1);
    let running = wasm::Running::start();
    let r = entry.call(&mut ci.store, ());
    drop(running);
    let st = ci.store.data_mut();
    st.call = None;
    let outcome = match &r {
        Ok(0) => Outcome::Ok,
        Ok(_) => Outcome::Fault(GpsimdCause::KernelStatus),
        Err(e) => classify(e, st),
    };
    // 1.4 GHz; a fixed launch cost plus 16 bytes moved per cycle.
    let cycles = 2000 + st.bytes / 16;
    let end = job.start_clock + crate::cost::cycles(EngineId::Pool, cycles);
    if outcome != Outcome::Ok {
        // A trapped instance may hold broken state: start over next time.
        *slot = None;
    }
    (outcome, end)
}
