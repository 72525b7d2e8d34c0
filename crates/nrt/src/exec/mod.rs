//! Synchronous execute: bind -> stage -> doorbell -> harvest (seed 002).
//!
//! - bind: tensor sets are matched by name to the model's inputs and
//!   outputs; device tensors are bound in place by rewriting the IO patch
//!   sites (descriptor `buf_ptr`s, pointer vars, DGE entries) only when the
//!   bound address changes; host tensors go through the IO staging buffers,
//!   their bytes moved by the home core's transfer queues (`crate::transfer`);
//! - stage: the 56-byte request (engine image addresses, model-switch
//!   flags) is written into each core's request buffer;
//! - doorbell: one semaphore increment per physical core, all cores armed
//!   first, then all fired;
//! - harvest: [`harvest::Harvest::step`], driven by whichever thread runs
//!   the execution (the synchronous caller, or an execution unit's worker
//!   in `crate::xu`): `drive_harvest` lends the thread to the device
//!   ([`nrt_hal::Device::assist`]) while it has queued work, else spins for
//!   [`SPIN_BUDGET`], then blocks on the NQ rings' interrupt line
//!   ([`nrt_hal::NqRing::wait_signal`]) and steps again as soon as the
//!   device writes a record.
//!
//! The steady state allocates nothing on the heap: every buffer, the
//! harvest state and the patch lists were built at load.

pub mod arena;
pub mod cores;
pub mod dispatch;
pub mod errors;
pub mod harvest;
pub mod published;
pub mod request;
pub mod traced;

use crate::load::ModelHost;
use crate::log::Module;
use crate::model::{CoreProgram, DeviceProgram, LoadedModel, ModelId};
use crate::status::{NrtError, NrtResult, NrtStatus};
use crate::tensor::{Placement, Tensor, TensorSet};
use cores::CoreExec;
use harvest::{Failure, NqSource, Step};
use nrt_hal::NQ_RECORD_BYTES;
use request::ExecRequest;
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

/// How long the waiting thread polls the rings before it blocks on their
/// interrupt line (short: on a 2-core machine the simulator's workers need
/// the CPU a spinning waiter would take).
pub const SPIN_BUDGET: Duration = Duration::from_micros(20);
/// Device slices the waiting thread runs between two sweeps of the rings.
pub const ASSIST_BURST: usize = 64;
/// Longest single block on the interrupt line; the harvest's own timeout
/// is re-checked at least this often.
pub const MAX_BLOCK: Duration = Duration::from_millis(10);

/// The NQ rings of one model's cores, as the harvest reads them, and the
/// output tensors streaming completion records name.
struct ModelRings<'a> {
    prog: &'a DeviceProgram,
    outputs: &'a TensorSet,
    n_in: usize,
    /// Each output slot's position in `outputs`, when the execution
    /// reuses the sets the last one matched (empty: match by name).
    output_positions: &'a [usize],
    /// The execution's network proxies (cross-process collectives), by
    /// core: one per ring channel, the physical cores of the logical core.
    proxies: &'a Proxies,
}

/// An execution's network proxies, by the index of the program's core
/// whose chain of cross-process collectives each runs (LNC 2: one per
/// physical core); a fixed array, so an execution allocates none.
type Proxies = [Option<Arc<crate::cc::proxy::Proxy>>; harvest::MAX_CORES];

/// Ends the execution's proxies after the harvest returned `status`
/// ([`crate::cc::neff_net::NeffNet::finish`]): the first proxy error in
/// core order, the cause when one failed.
fn finish_proxies(prog: &DeviceProgram, proxies: &Proxies, status: NrtStatus) -> Option<NrtError> {
    let mut first = None;
    for (c, p) in prog.cores.iter().zip(proxies) {
        if let (Some(n), Some(p)) = (&c.cc_net, p) {
            let e = n.finish(p, status);
            first = first.or(e);
        }
    }
    first
}

impl NqSource for ModelRings<'_> {
    fn cores(&self) -> usize {
        self.prog.cores.len()
    }
    fn read_notify(&self, core: usize, engine: usize, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        self.prog.cores[core].core.read_notify(engine, out)
    }
    fn read_errors(&self, core: usize, engine: usize, out: &mut [[u8; NQ_RECORD_BYTES]]) -> usize {
        self.prog.cores[core].core.read_errors(engine, out)
    }
    fn overflowed(&self, core: usize, engine: usize) -> bool {
        self.prog.cores[core].core.notify_overflowed(engine)
    }
    fn started_engines(&self, core: usize) -> dispatch::EngineSet {
        self.prog.cores[core].engines
    }
    fn network(&self) -> harvest::Network {
        use crate::cc::proxy::ProxyState;
        // Failed when any channel's proxy failed; at the barrier while
        // any waits for its peers.
        let mut net = harvest::Network::None;
        for p in self.proxies.iter().flatten() {
            match p.state() {
                ProxyState::Failed(s) => return harvest::Network::Failed(s),
                ProxyState::Barrier => net = harvest::Network::Barrier,
                ProxyState::Running if net == harvest::Network::None => net = harvest::Network::Running,
                ProxyState::Running => {}
            }
        }
        net
    }
    fn describe_pc(&self, core: usize, engine: usize, pc: u64) -> String {
        self.prog.cores.get(core).map_or_else(|| format!("instruction {pc}"), |c| c.describe_pc(engine, pc))
    }
    fn is_transfer_queue(&self, queue_index: u16) -> bool {
        crate::transfer::is_transfer_queue_index(u32::from(queue_index), self.device().info().dma_queues_per_engine())
    }
    fn output_completed(&self, var: u32) {
        let t = match self.output_positions.get(var as usize) {
            Some(&i) => self.outputs.at(i),
            None => self.prog.io.get(self.n_in + var as usize).and_then(|io| find(self.outputs, &io.name)),
        };
        if let Some(t) = t {
            t.complete_output();
        }
    }
}

impl ModelRings<'_> {
    fn signal_count(&self, core: usize) -> u64 {
        self.prog.cores[core].core.signal_count()
    }
    fn wait_signal(&self, core: usize, seen: u64, timeout: Duration) -> u64 {
        self.prog.cores[core].core.wait_signal(seen, timeout)
    }
    /// The device the model runs on (all its cores are on one).
    fn device(&self) -> &dyn nrt_hal::Device {
        self.prog.cores[0].core.device().as_ref()
    }
    /// Lends the waiting thread to the device (one slice of its pending
    /// work); whether there was any.
    fn assist(&self) -> bool {
        assist(self.device())
    }
}

thread_local! {
    /// Depth of [`LentToDevice`] scopes on this thread (const-initialised:
    /// reading it never allocates, so a global allocator may).
    static LENT_TO_DEVICE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Lends the calling thread to `device` for one slice of its pending work
/// (marked as the device's own, [`lent_to_device`]); whether there was
/// any. Every runtime wait on the device (an execution's harvest, a
/// tensor transfer) lends itself this way.
pub(crate) fn assist(device: &dyn nrt_hal::Device) -> bool {
    let _lent = LentToDevice::enter();
    device.assist()
}

/// Marks the current thread as running the device's own work (a simulator
/// slice through `Device::assist`) for as long as it lives.
struct LentToDevice;

impl LentToDevice {
    fn enter() -> LentToDevice {
        let _ = LENT_TO_DEVICE.try_with(|d| d.set(d.get() + 1));
        LentToDevice
    }
}

impl Drop for LentToDevice {
    fn drop(&mut self) {
        let _ = LENT_TO_DEVICE.try_with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// The calling thread's announcement that it will wait for the device
/// and lend itself to it (`Device::lending_begin`) until dropped: the
/// doorbell's first slices are then left to it rather than handed to a
/// simulator worker on another core.
pub(crate) struct Lending<'a>(&'a dyn nrt_hal::Device);

impl<'a> Lending<'a> {
    /// Announces the lending (`Device::lending_begin`) until the guard drops.
    pub(crate) fn begin(device: &'a dyn nrt_hal::Device) -> Lending<'a> {
        device.lending_begin();
        Lending(device)
    }
}

impl Drop for Lending<'_> {
    fn drop(&mut self) {
        self.0.lending_end();
    }
}

/// Whether the calling thread is, right now, running device work it was
/// lent for while waiting on an execution. The runtime's own hot path
/// (bind, stage, doorbell, harvest) allocates nothing; the simulator's
/// kernels may, and when they run on a waiting runtime thread a per-thread
/// allocation count (`nrt bench`) must tell the two apart.
pub fn lent_to_device() -> bool {
    LENT_TO_DEVICE.try_with(|d| d.get() > 0).unwrap_or(false)
}

/// Drives `h` to DONE over `src`: the one wait loop of every execution
/// (the synchronous caller and the async workers both end up here). Each
/// round reads the interrupt-line count of the core still running, steps
/// the state machine, and if it is still in flight lends the thread to the
/// device (a simulator runs a burst of up to [`ASSIST_BURST`] queued slices
/// of the execution right here, with no hand-off to its workers), or else
/// spins (for the first
/// [`SPIN_BUDGET`]) or blocks until that core's rings receive a record.
/// Allocation-free.
fn drive_harvest(h: &mut harvest::Harvest, src: &ModelRings<'_>) -> NrtStatus {
    // The clock is read only once the execution is seen in flight: a
    // harvest that finds it done at the first sweep (a small program run
    // by the doorbell's own thread) never pays for it.
    let mut begin: Option<Instant> = None;
    let mut now: Option<Instant> = None;
    loop {
        let core = h.pending_core().unwrap_or(0).min(src.cores().saturating_sub(1));
        // The interrupt count a block waits past, read before the sweep
        // so no record written after the sweep is missed. The first pass
        // never blocks (it has spun for no time yet), so its sweep, the
        // one that usually finds the execution done, goes without it.
        let seen = begin.is_some().then(|| src.signal_count(core));
        if let Step::Done(s) = h.step(src, || *now.get_or_insert_with(Instant::now)) {
            return s;
        }
        let t = *now.get_or_insert_with(Instant::now);
        let begin = *begin.get_or_insert(t);
        if src.assist() {
            // Run what the device has queued before sweeping the rings
            // again (a sweep per slice costs more than a small slice),
            // a bounded burst so a program that never waits cannot keep
            // the harvest from checking its timeout.
            for _ in 1..ASSIST_BURST {
                if !src.assist() {
                    break;
                }
            }
        } else if let Some(seen) = seen
            && t.duration_since(begin) >= SPIN_BUDGET
        {
            // A blocked thread lends nothing: the device's queued work
            // is its workers' while this one sleeps.
            let device = src.device();
            device.lending_end();
            src.wait_signal(core, seen, h.time_left(t).min(MAX_BLOCK));
            device.lending_begin();
        } else {
            std::hint::spin_loop();
        }
        now = Some(Instant::now());
    }
}

fn find<'a>(set: &'a TensorSet, name: &str) -> Option<&'a Arc<Tensor>> {
    set.get(name)
}

/// Checks a tensor set against the model's IO slots `range` ("input" or
/// "output" in messages).
fn check_set(model: &LoadedModel, set: &TensorSet, kind: &str, sigs: &[nrt_neff::TensorSignature], sizes: &[u64]) -> NrtResult<()> {
    if set.len() != sigs.len() {
        // libnrt's line, then which names are extra and which absent.
        let unknown: Vec<&str> = set.iter().map(|(n, _)| n).filter(|n| !sigs.iter().any(|s| s.name == *n)).collect();
        let missing: Vec<&str> = sigs.iter().map(|s| s.name.as_str()).filter(|n| !set.iter().any(|(m, _)| m == *n)).collect();
        return Err(NrtError::invalid(format!(
            "Incorrect number of {kind}s, expected: {}, received: {} (model {} \"{}\"; not the model's: {unknown:?}; missing: {missing:?})",
            sigs.len(),
            set.len(),
            model.id,
            model.name
        )));
    }
    for (name, t) in set.iter() {
        let Some(i) = sigs.iter().position(|s| s.name == name) else {
            let known: Vec<&str> = sigs.iter().map(|s| s.name.as_str()).collect();
            return Err(NrtError::invalid(format!("unknown {kind} tensor name {name:?}; the model's {kind}s are {known:?}")));
        };
        if t.size() != sizes[i] {
            return Err(NrtError::new(
                NrtStatus::ExecBadInput,
                format!("{kind} tensor {name:?} has {} bytes, expected {} bytes", t.size(), sizes[i]),
            ));
        }
    }
    Ok(())
}

impl ModelHost {
    /// Runs a model once and waits for it (`nrt_execute`).
    pub fn execute(&self, id: ModelId, inputs: &TensorSet, outputs: &TensorSet) -> NrtResult<()> {
        let model = self.models.get(id).ok_or_else(|| NrtError::new(NrtStatus::InvalidHandle, format!("Failed to find model: {id}")))?;
        execute(&model, inputs, outputs)
    }

    /// `nrt_execute_repeat`: `repeat` 1 is [`ModelHost::execute`]; host loops are refused.
    pub fn execute_repeat(&self, id: ModelId, inputs: &TensorSet, outputs: &TensorSet, repeat: i32) -> NrtResult<()> {
        if repeat != 1 {
            return Err(NrtError::invalid(format!("Supports for loops on the host is deprecated (repeat count {repeat}; only 1 is accepted)")));
        }
        self.execute(id, inputs, outputs)
    }
}

/// Checks that `inputs` and `outputs` match the model's IO (count, names,
/// sizes) without touching the device: what an asynchronous schedule call
/// verifies before it queues anything.
pub fn validate(model: &LoadedModel, inputs: &TensorSet, outputs: &TensorSet) -> NrtResult<()> {
    let Some(prog) = &model.program else {
        return Ok(());
    };
    let n_in = model.inputs.len();
    check_sizes(model, inputs, "input", &model.inputs, &prog.io[..n_in])?;
    check_sizes(model, outputs, "output", &model.outputs, &prog.io[n_in..])?;
    check_placement(model, prog, inputs, "input")?;
    check_placement(model, prog, outputs, "output")
}

/// A device tensor bound to a model must be on one of the model's own
/// physical cores (its logical core) of its device: NRT_INVALID naming the
/// tensor otherwise, as the Python module refuses it, rather than the
/// model's DMA silently reading another core's (or another device's)
/// memory. Host tensors are staged through the model's core and may come
/// from anywhere.
fn check_placement(model: &LoadedModel, prog: &DeviceProgram, set: &TensorSet, kind: &str) -> NrtResult<()> {
    let device = prog.memory.device_memory().device_index();
    for (name, t) in set.iter() {
        let Placement::Device { core, .. } = t.placement() else { continue };
        let on_model = t.device_index() == Some(device) && prog.cores.iter().any(|c| c.core.core() == core);
        if !on_model {
            let cores: Vec<String> = prog.cores.iter().map(|c| c.core.core().to_string()).collect();
            return Err(NrtError::invalid(format!(
                "{kind} tensor {name:?} is in the memory of physical core {core} of ND {}, but model {} \"{}\" runs on {} of ND {device}; \
                 allocate it on the model's logical core, or as a host tensor the runtime stages",
                t.device_index().unwrap_or(device),
                model.id,
                model.name,
                cores.join("+"),
            )));
        }
    }
    Ok(())
}

/// Executes `model` on the calling thread and waits for it: bind, stage,
/// doorbell, then `drive_harvest`. While a system-trace session captures
/// execution events it goes through [`traced::execute_traced`] instead
/// (the same path, plus the events).
#[inline]
pub fn execute(model: &LoadedModel, inputs: &TensorSet, outputs: &TensorSet) -> NrtResult<()> {
    let started = Instant::now();
    let result = if crate::trace::wants_any(crate::trace::HARDWARE_MASK | crate::trace::EventType::NrtExecute.bit()) {
        traced::execute_traced(model, inputs, outputs)
    } else {
        execute_inner(model, inputs, outputs, None)
    };
    publish_execution(model, started, &result);
    result
}

/// Counts a finished execution into the device's datastore (the tools'
/// view): outcome, error class and host latency, on the model's first core.
#[inline]
fn publish_execution(model: &LoadedModel, started: Instant, result: &NrtResult<()>) {
    let Some(prog) = &model.program else { return };
    let c = &prog.cores[0].core;
    if let Some(s) = c.device().status() {
        let status = match result {
            Ok(()) => NrtStatus::Success,
            Err(e) => e.status,
        };
        let (outcome, class) = published::classify(status);
        s.execution(c.core().0, outcome, class, started.elapsed().as_nanos() as u64);
    }
}

/// [`execute`]'s body; `trace` is filled in for a traced execution.
fn execute_inner(model: &LoadedModel, inputs: &TensorSet, outputs: &TensorSet, mut trace: Option<&mut traced::ExecTrace>) -> NrtResult<()> {
    if let Some(s) = model.poisoned() {
        return Err(NrtError::new(s, format!("model {} \"{}\" stopped after an earlier {s}; unload it", model.id, model.name)));
    }
    let Some(prog) = &model.program else {
        // Fake-instance mode: no device program, success at once.
        return Ok(());
    };
    let n_in = model.inputs.len();
    let mut st = model.exec.lock().unwrap_or_else(|e| e.into_inner());
    // The sets of the last execution, unchanged: validated and bound.
    let same_sets = st.last_sets.as_ref().is_some_and(|(i, o)| inputs.has_token(i) && outputs.has_token(o));
    if !same_sets {
        st.last_sets = None;
        validate(model, inputs, outputs)?;
    }
    // Borrowed, not cloned: the program holds the device for as long as
    // the model exists (an `Arc` clone is two locked operations a call).
    let device: &Arc<dyn nrt_hal::Device> = prog.cores[0].core.device();
    // Host tensors move through the home core's transfer queues.
    let staging = prog.memory.device_memory().dma(prog.cores[0].core.core());
    // Bind.
    let mut all_device = true;
    for (slot, io) in prog.io.iter().enumerate().filter(|_| !same_sets) {
        let (set, is_input) = if slot < n_in { (inputs, true) } else { (outputs, false) };
        let t = find(set, &io.name).ok_or_else(|| NrtError::invalid(format!("tensor {:?} is missing", io.name)))?;
        let addr = match t.placement() {
            Placement::Device { addr, .. } => addr.get(),
            Placement::Host => {
                all_device = false;
                if is_input {
                    t.with_host(|b| staging.write(io.staging, b))
                        .unwrap_or(Ok(()))
                        .map_err(|e| e.context(format_args!("staging host input {:?}", io.name)))?;
                }
                io.staging.get()
            }
        };
        if st.bound[slot] != addr {
            for p in prog.patches.iter().filter(|p| p.slot == slot) {
                device
                    .write(p.addr, &(addr + p.offset).to_le_bytes())
                    .map_err(|e| NrtError::failure(format!("binding {:?}: {e}", io.name)))?;
            }
            st.bound[slot] = addr;
        }
    }
    if !same_sets && all_device {
        st.last_sets = Some((inputs.token(), outputs.token()));
        let positions = prog.io[n_in..].iter().map(|io| outputs.position(&io.name).unwrap_or(usize::MAX));
        st.output_positions.clear();
        st.output_positions.extend(positions);
    } else if !same_sets {
        st.output_positions.clear();
    }
    // Stage and ring the doorbells, cores locked in ascending order.
    let mut guards = CoreGuards::lock(prog);
    for (i, c) in prog.cores.iter().enumerate() {
        let g = guards.get(i);
        let switch = g.last_model != Some(model.id);
        if switch && let Some(t) = trace.as_deref_mut() {
            t.switched |= 1 << i;
        }
        if !switch && g.posted_repeat_of == Some(model.id) {
            // The buffer holds this model's repeat request already.
            continue;
        }
        let req = ExecRequest {
            do_model_switch: switch,
            // The switch entry runs the MODEL_SWITCH region, the repeat
            // entry skips it (`dispatch::FrameHead`).
            engine_addresses: if switch { c.images } else { c.repeat_entries }.map(|a| a.get()),
            reload_seq_config: switch,
            load_act_dve_tables: false,
            cc_dma_increment: 0,
        };
        // A repeat of the same model posts the same bytes: the buffer
        // already holds them (only executions write it, one at a time).
        let bytes = req.to_bytes();
        if g.posted != Some(bytes) {
            g.posted = None;
            g.posted_repeat_of = None;
            device
                .write(c.core.request_addr(), &bytes)
                .map_err(|e| NrtError::failure(format!("Unable to copy execution request to device: {e}")))?;
            g.posted = Some(bytes);
        }
        g.posted_repeat_of = (!switch).then_some(model.id);
    }
    // Collectives with ranks in other processes: each core's chain (its
    // ring channel) has a proxy, running from before the doorbell to the
    // end of the harvest.
    let mut proxies: Proxies = Default::default();
    for (i, c) in prog.cores.iter().enumerate() {
        if let Some(n) = &c.cc_net {
            match n.begin() {
                Ok(p) => proxies[i] = Some(p),
                Err(e) => {
                    finish_proxies(prog, &proxies, e.status);
                    return Err(e);
                }
            }
        }
    }
    // From the doorbell to the end of the harvest this thread lends
    // itself to the device.
    let lending = Lending::begin(device.as_ref());
    if let Some(t) = trace.as_deref_mut() {
        t.doorbell_ns = crate::trace::now_ns();
    }
    for (i, c) in prog.cores.iter().enumerate() {
        let g = guards.get(i);
        if let Err(e) = c.core.ring_doorbell(g) {
            model.poison(NrtStatus::ExecUnitUnrecoverable);
            finish_proxies(prog, &proxies, NrtStatus::ExecUnitUnrecoverable);
            return Err(e);
        }
        if g.last_model != Some(model.id) {
            g.switches += 1;
            g.last_model = Some(model.id);
        }
    }
    // Harvest: spin, then block on the rings' interrupt line.
    st.harvest.reset();
    st.harvest.observe(trace.is_some() && crate::trace::wants_group(crate::trace::Group::Hardware));
    let expected = if streams_outputs(prog) { (prog.io.len() - n_in) as u32 } else { 0 };
    st.harvest.expect_output_records(expected);
    // Split borrows of the execution state: the harvest is driven while
    // the ring source reads the output positions.
    let state = &mut *st;
    let src = ModelRings { prog, outputs, n_in, output_positions: &state.output_positions, proxies: &proxies };
    let status = drive_harvest(&mut state.harvest, &src);
    drop(lending);
    // The proxies end with the execution; when one failed, its error is
    // the cause (a peer in another process, the network).
    let net_error = finish_proxies(prog, &proxies, status);
    let status = net_error.as_ref().map_or(status, |e| e.status);
    if let Some(s) = device.status()
        && let Some(ps) = st.harvest.observation().device_time_ps()
    {
        s.device_latency(ps / 1000);
    }
    // What the Q7 kernels printed goes to the log, whatever the outcome.
    for c in prog.cores.iter().filter(|c| c.runs_q7) {
        c.core.drain_q7_stdio();
    }
    // What the model's DEBUG_TENSOR_READs printed, to the debug stream.
    crate::debug_stream::drain(prog, model.vnc);
    // A profiled execution's trace, read while the cores are still ours.
    let device_time = st.harvest.observation().device_time();
    let collected = match st.profile.as_mut() {
        Some(p) => p.after_execution(model.id, &model.name, model.vnc, prog, status == NrtStatus::Success, device_time),
        None => false,
    };
    if st.capture.is_some() {
        let state = &mut *st;
        let already = if collected { state.profile.as_ref().and_then(|p| p.last()).map(|(_, t)| t.clone()) } else { None };
        if let Some(c) = state.capture.as_mut() {
            c.after_execution(prog, already, status, device_time);
        }
    }
    let status = if status == NrtStatus::Success { status } else { status.worst(aborted_queues(prog)) };
    if let Some(t) = trace.as_deref() {
        traced::record_device_events(model, prog, st.harvest.observation(), t, status);
    }
    let mut detail = String::new();
    if let Some(e) = &net_error {
        crate::log_error!(Module::Nrt, "collectives of model {} \"{}\" across processes failed: {}", model.id, model.name, e.message);
        detail = format!(": {}", e.message);
        model.poison(status);
        for c in &prog.cores {
            c.core.discard_pending();
        }
    } else if status != NrtStatus::Success {
        detail = report_failure(model, prog, &st.harvest, status);
        if errors::poisons(status, st.harvest.engine_stopped()) {
            model.poison(status);
            for c in &prog.cores {
                c.core.discard_pending();
            }
        }
    }
    drop(guards);
    // Results back to host outputs (sets reused as they were matched hold
    // device tensors only).
    if !same_sets && (status == NrtStatus::Success || (status.is_soft() && !st.harvest.engine_stopped())) {
        for io in &prog.io[n_in..] {
            if let Some(t) = find(outputs, &io.name)
                && let Some(r) = t.with_host(|b| staging.read(io.staging, b))
            {
                r.map_err(|e| e.context(format_args!("copying output {:?} back", io.name)))?;
            }
        }
    }
    if status == NrtStatus::Success {
        if !streams_outputs(prog) {
            // No device records for this model: every output completes now.
            for (_, t) in outputs.iter() {
                t.complete_output();
            }
        }
        Ok(())
    } else {
        Err(NrtError::new(status, format!("execution of model {} \"{}\" finished with {status}{detail}", model.id, model.name)))
    }
}

/// The execution locks of a model's cores, taken in ascending core order
/// and held from staging to the end of the harvest. A single-core model
/// (the common case) holds its one guard without the array a multi-core
/// model needs, so taking, reaching and releasing it costs no more than
/// the lock itself.
enum CoreGuards<'a> {
    /// The one core of a single-core model.
    One(MutexGuard<'a, CoreExec>),
    /// Per core index, the guard of each core of the model.
    Many([Option<MutexGuard<'a, CoreExec>>; harvest::MAX_CORES]),
}

impl<'a> CoreGuards<'a> {
    /// Locks every core of `prog`, in `prog.lock_order`.
    fn lock(prog: &'a DeviceProgram) -> CoreGuards<'a> {
        if let [only] = &prog.cores[..] {
            return CoreGuards::One(only.core.lock_exec());
        }
        let mut all: [Option<MutexGuard<'a, CoreExec>>; harvest::MAX_CORES] = Default::default();
        for &i in &prog.lock_order {
            all[i] = Some(prog.cores[i].core.lock_exec());
        }
        CoreGuards::Many(all)
    }

    /// What core `i` (an index into the program's cores) holds.
    fn get(&mut self, i: usize) -> &mut CoreExec {
        match self {
            CoreGuards::One(g) => g,
            CoreGuards::Many(all) => all[i].as_mut().expect("every core of the program is locked"),
        }
    }
}

/// Whether the model's device program writes a tensor-completion record
/// per output (single-core programs: SP's postamble, see
/// [`dispatch::output_notifications`]); multi-core programs count their
/// outputs when the execution ends.
pub fn streams_outputs(prog: &DeviceProgram) -> bool {
    prog.cores.len() == 1
}

fn check_sizes(model: &LoadedModel, set: &TensorSet, kind: &str, sigs: &[nrt_neff::TensorSignature], slots: &[crate::model::IoSlot]) -> NrtResult<()> {
    if set.len() == sigs.len() && slots.iter().all(|s| find(set, &s.name).is_some_and(|t| t.size() == s.size)) {
        return Ok(());
    }
    let sizes: Vec<u64> = slots.iter().map(|s| s.size).collect();
    check_set(model, set, kind, sigs, &sizes)?;
    // Same count, all names known and sizes right: some slot is absent.
    let missing = slots.iter().find(|s| find(set, &s.name).is_none()).map(|s| s.name.clone()).unwrap_or_default();
    Err(NrtError::invalid(format!("{kind} tensor {missing:?} is missing")))
}

/// NRT_EXEC_HW_ERR_DMA_ABORT if any of the model's DMA queues is in the
/// ABORTED state (checked after a failed execution only).
fn aborted_queues(prog: &DeviceProgram) -> NrtStatus {
    for c in &prog.cores {
        for q in &c.queues {
            if let Ok(st) = c.core.device().dma_queue_state(c.core.core(), *q)
                && st.status == nrt_hal::DmaQueueStatus::Aborted
            {
                return NrtStatus::ExecHwErrDmaAbort;
            }
        }
    }
    NrtStatus::Success
}

fn engine_name(i: Option<usize>) -> &'static str {
    i.and_then(nrt_hal::EngineId::from_index).map_or("TPB", |e| e.name())
}

/// Where engine `e` of core program `c` is: "waiting on semaphore 3
/// (value 0) at sg00 ... instruction 5 ...", from the device's debug
/// registers; `None` when the device has none or the engine is not there.
fn where_engine_is(c: &CoreProgram, e: usize) -> Option<String> {
    let engine = nrt_hal::EngineId::from_index(e)?;
    let dev = c.core.device();
    let st = dev.engine_state(c.core.core(), engine).ok().flatten()?;
    let what = match st.waiting_on {
        nrt_hal::EngineWaitOn::Nothing => match st.run {
            nrt_hal::EngineRun::Running => "running".to_string(),
            nrt_hal::EngineRun::Idle => "idle".to_string(),
            nrt_hal::EngineRun::Halted => "halted".to_string(),
            nrt_hal::EngineRun::Hung => "stopped".to_string(),
        },
        nrt_hal::EngineWaitOn::Semaphore(n) => match dev.semaphore_read(c.core.core(), n) {
            Ok(v) => format!("waiting on semaphore {n} (value {v})"),
            Err(_) => format!("waiting on semaphore {n}"),
        },
        w => format!("waiting on {w}"),
    };
    Some(format!("{what} at {}", c.describe_pc(e, st.pc)))
}

/// Logs an execution's failure as libnrt does and returns what the
/// caller's error message adds (e.g. which engines never ended).
fn report_failure(model: &LoadedModel, prog: &DeviceProgram, h: &harvest::Harvest, status: NrtStatus) -> String {
    let nc = |core: usize| prog.cores.get(core).map_or(0, |c| c.core.core().0);
    let nd = prog.cores[0].core.device().info().device_index;
    match h.failure() {
        Some(Failure::Timeout { core, timeout_ms, engines }) => {
            // libnrt's per-engine line, then the fatal one; our message adds
            // the engines that never wrote END (still running or waiting).
            let names: Vec<&str> = (0..8).filter(|e| engines & (1 << e) != 0).map(|e| engine_name(Some(e))).collect();
            for e in (0..8).filter(|e| engines & (1 << e) != 0) {
                crate::log_error!(Module::Kmgr, "[ND {nd}][NC {}] Missing infer_status notification: (end:{e}) engine {}", nc(core), engine_name(Some(e)));
            }
            crate::log_error!(
                Module::Kmgr,
                "(FATAL-RT-UNDEFINED-STATE) [ND {nd}][NC {}] execution timeout ({timeout_ms} ms) on model {}, waiting for execution completion notification",
                nc(core),
                model.name
            );
            // Where each of them is, from the sequencers' debug registers:
            // the instruction it is stuck on and what it waits for.
            let at: Vec<String> = (0..8)
                .filter(|e| engines & (1 << e) != 0)
                .filter_map(|e| Some((e, where_engine_is(prog.cores.get(core)?, e)?)))
                .map(|(e, w)| format!("{} {w}", engine_name(Some(e))))
                .collect();
            for line in &at {
                crate::log_error!(Module::Kmgr, "[ND {nd}][NC {}] engine {line}", nc(core));
            }
            let at = if at.is_empty() { String::new() } else { format!("; {}", at.join("; ")) };
            return format!(": no END from engine(s) {} of NC {} within {timeout_ms} ms (NEURON_RT_EXEC_TIMEOUT){at}", names.join(", "), nc(core));
        }
        Some(Failure::Collectives { core, op, total }) => {
            let line = format!("missing collectives status on Neuron Device {nd} NC {}, model {} - suspected hang in collectives operation {op} out of {total}", nc(core), model.name);
            crate::log_error!(Module::Kmgr, "(FATAL-RT-UNDEFINED-STATE) {line}");
            return format!(": (FATAL-RT-UNDEFINED-STATE) {line}: a CC_START without its CC_END within {} ms (NEURON_RT_EXEC_TIMEOUT); possibly caused by a hardware error on another worker", h.timeout().as_millis());
        }
        // The proxy's error is the message (execute_inner).
        Some(Failure::Network { .. }) => {}
        Some(Failure::CollectivesBarrier { core, waited_s }) => {
            crate::log_error!(Module::Kmgr, "(FATAL-RT-UNDEFINED-STATE) missing collectives status on model {}. Suspected hang in waiting for barrier", model.name);
            return format!(
                ": (FATAL-RT-UNDEFINED-STATE) missing collectives status on model {}. Suspected hang in waiting for barrier: the replica group's other ranks did not reach the collective on NC {} within {waited_s} sec (NEURON_RT_CC_NET_TIMEOUT)",
                model.name,
                nc(core)
            );
        }
        Some(Failure::Overflow { core, engine }) => crate::log_error!(
            Module::Kmgr,
            "[ND {nd}][NC {}] notification queue of engine {engine} overflowed on model {} ({status})",
            nc(core),
            model.name
        ),
        Some(Failure::EngineStopped { core, engine, pc }) => {
            // Name the instruction as the compiler did, not by a raw counter.
            let at = match (prog.cores.get(core), engine) {
                (Some(c), Some(e)) => c.describe_pc(e, u64::from(pc)),
                _ => format!("device record {pc}"),
            };
            crate::log_error!(
                Module::Kmgr,
                "(FATAL-RT-UNDEFINED-STATE) [ND {nd}][NC {}] engine {} stopped at {at} on model {} ({status})",
                nc(core),
                engine_name(engine),
                model.name
            )
        }
        Some(Failure::Unexpected { core, engine, notific_type }) => crate::log_error!(
            Module::Kmgr,
            "[ND {nd}][NC {}] Recieved unexpected notification on engine {engine}. Notification Type: {notific_type} (model {})",
            nc(core),
            model.name
        ),
        None => crate::log_warn!(Module::Kmgr, "[ND {nd}] execution of model {} completed with {status}", model.name),
    }
    String::new()
}
