//! Asynchronous execution: execution units (XUs), their queues and
//! workers, and the calls of the explicit async API (`nrta_*`) and of
//! implicit async mode (seed 002 §4, users-and-tools §2.7).
//!
//! - [`seq`]: XU ids and sequence ids (`xu_id << 48 | n`);
//! - [`queue`]: the bounded single-producer / single-consumer request ring;
//! - [`signal`]: the event count workers and waiters block on;
//! - [`unit`](mod@unit): one XU: queue, worker thread, health, completion watchers;
//! - [`Xus`] (here): every XU of a runtime, created on first use (one per
//!   logical core, kind and queue), and the schedule calls that validate a
//!   request completely before queueing it, so a refused call has no
//!   side effect.
//!
//! Design note: a core has one request buffer, so the device runs one
//! execution at a time per core and the worker stages each request when it
//! reaches the front of the queue (bind, stage, doorbell and harvest, all
//! by [`crate::exec::execute`]); submitters only validate and enqueue. The
//! worker starts the next request the moment the previous one's harvest
//! sees DONE, so queued requests run back to back.

#[cfg(test)]
mod model_check;
pub mod queue;
pub mod seq;
pub mod signal;
pub mod unit;

use crate::model::LoadedModel;
use crate::status::{NrtError, NrtResult, NrtStatus};
use crate::tensor::{Placement, Tensor, TensorSet};
use seq::{XuId, XuKind};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use unit::{ExecUnit, Notifier, OnComplete, Request, TensorJob, Work};

/// Receives the bytes of an asynchronous tensor read, on the worker.
pub type ReadSink = Box<dyn FnOnce(&[u8]) + Send>;

/// The message libnrt gives when an async path meets a host tensor.
pub const HOST_TENSOR_MESSAGE: &str = "Async exec mode only supports device allocated tensors";

/// Queue depths and bounds of the units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XuSettings {
    /// Requests a compute unit holds (NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS).
    pub compute_depth: u64,
    /// Requests a tensor-op or collectives unit holds (the same default).
    pub other_depth: u64,
    /// The longest one request may take: an execution's bound
    /// (NEURON_RT_EXEC_TIMEOUT) after its collectives barrier's
    /// (NEURON_RT_CC_NET_TIMEOUT). A wait with no timeout of its own
    /// (drain, the implicit-async retry, a host access to a tensor in
    /// flight, the join at shutdown) gives up when nothing completes for
    /// this long.
    pub request_limit: Duration,
    /// `NEURON_SIM_INJECT=xu_panic:after=N`: every unit's worker panics
    /// holding request N+1.
    pub panic_after: Option<u64>,
}

impl Default for XuSettings {
    fn default() -> XuSettings {
        let d = u64::from(crate::config::DEFAULT_XU_QUEUED_REQUESTS);
        XuSettings { compute_depth: d, other_depth: d, request_limit: crate::config::DEFAULT_EXEC_TIMEOUT + crate::cc::world::DEFAULT_PEER_TIMEOUT, panic_after: None }
    }
}

impl XuSettings {
    /// What a runtime's configuration asks for: in implicit async mode
    /// the compute queue holds NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS
    /// executions (libnrt's in-flight limit), else
    /// NEURON_RT_XU_COMPUTE_MAX_QUEUED_REQUESTS; the request limit from
    /// its execution and collectives bounds.
    pub fn for_runtime(rt: &crate::Runtime) -> XuSettings {
        let c = rt.config();
        let compute = if c.async_exec_max_inflight_requests > 0 { c.async_exec_max_inflight_requests } else { c.xu_compute_max_queued_requests };
        XuSettings {
            compute_depth: u64::from(compute),
            request_limit: c.exec_timeout + c.collectives.net_timeout,
            panic_after: crate::inject::after(rt.env(), crate::inject::XU_PANIC),
            ..XuSettings::default()
        }
    }
}

/// The request limit of the last [`Xus`] made, in milliseconds (tensors,
/// which wait for the implicit-async executions using them, know no
/// runtime; the process has one).
static REQUEST_LIMIT_MS: AtomicU64 = AtomicU64::new(0);

/// The longest one request of an execution unit may take
/// ([`XuSettings::request_limit`] of the runtime's units; the default
/// before any).
pub fn request_limit() -> Duration {
    match REQUEST_LIMIT_MS.load(Ordering::Relaxed) {
        0 => XuSettings::default().request_limit,
        ms => Duration::from_millis(ms),
    }
}

/// Every execution unit of a runtime (see the module docs).
#[derive(Debug)]
pub struct Xus {
    settings: XuSettings,
    units: Mutex<BTreeMap<XuId, Arc<ExecUnit>>>,
}

fn device_only(set: &TensorSet, kind: &str) -> NrtResult<()> {
    for (name, t) in set.iter() {
        if t.placement() == Placement::Host {
            return Err(NrtError::invalid(format!("{HOST_TENSOR_MESSAGE} ({kind} tensor {name:?} is in host memory)")));
        }
    }
    Ok(())
}

fn device_tensor(t: &Tensor) -> NrtResult<()> {
    match t.placement() {
        Placement::Device { .. } => Ok(()),
        Placement::Host => Err(NrtError::invalid(format!("{HOST_TENSOR_MESSAGE} (tensor {:?} is in host memory)", t.name()))),
    }
}

fn in_bounds(t: &Tensor, offset: u64, len: u64) -> NrtResult<()> {
    match offset.checked_add(len) {
        Some(end) if end <= t.size() => Ok(()),
        _ => Err(NrtError::invalid(format!("tensor {:?}: {len} bytes at offset {offset} exceed its {} bytes", t.name(), t.size()))),
    }
}

impl Xus {
    /// No units yet; they start on first use.
    pub fn new(settings: XuSettings) -> Xus {
        REQUEST_LIMIT_MS.store(u64::try_from(settings.request_limit.as_millis()).unwrap_or(u64::MAX).max(1), Ordering::Relaxed);
        Xus { settings, units: Mutex::new(BTreeMap::new()) }
    }

    /// The settings.
    pub fn settings(&self) -> XuSettings {
        self.settings
    }

    /// The unit `id`, started on first use.
    pub fn unit(&self, id: XuId) -> NrtResult<Arc<ExecUnit>> {
        let mut u = self.units.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(x) = u.get(&id) {
            return Ok(x.clone());
        }
        let depth = if id.kind == XuKind::Compute { self.settings.compute_depth } else { self.settings.other_depth };
        let x = Arc::new(ExecUnit::start_with(id, depth, self.settings.request_limit, self.settings.panic_after)?);
        u.insert(id, x.clone());
        Ok(x)
    }

    /// The unit named by a sequence id's top 16 bits, if it exists.
    pub fn unit_of_seq(&self, seq: u64) -> NrtResult<Arc<ExecUnit>> {
        let code = seq::seq_xu(seq);
        let id = XuId::from_code(code).ok_or_else(|| NrtError::invalid(format!("sequence id {seq:#x} names no execution unit (id {code:#06x})")))?;
        self.units
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
            .ok_or_else(|| NrtError::invalid(format!("sequence id {seq:#x}: {id} has not been used")))
    }

    /// `nrta_execute_schedule`: validates (queue 0, device tensors only,
    /// the model's IO names and sizes) and queues one execution of `model`
    /// on the compute unit of logical core `vnc`.
    pub fn schedule_execute(
        &self,
        vnc: u32,
        model: Arc<LoadedModel>,
        inputs: TensorSet,
        outputs: TensorSet,
        queue: i64,
        on_complete: Option<OnComplete>,
    ) -> NrtResult<u64> {
        let id = XuId::new(vnc, XuKind::Compute, queue)?;
        device_only(&inputs, "input")?;
        device_only(&outputs, "output")?;
        crate::exec::validate(&model, &inputs, &outputs)?;
        self.unit(id)?.submit(Request { work: Work::Execute { model, inputs, outputs, in_flight: false }, on_complete })
    }

    /// Queues a host-side tensor job on tensor-op queue `queue` of `vnc`
    /// (the caller validated it).
    pub fn schedule_job(&self, vnc: u32, queue: i64, job: TensorJob, on_complete: Option<OnComplete>) -> NrtResult<u64> {
        let id = XuId::new(vnc, XuKind::TensorOp, queue)?;
        self.unit(id)?.submit(Request { work: Work::Tensor(job), on_complete })
    }

    /// Queues a collective (`nrta_cc_schedule`) on collectives queue
    /// `queue` (0..=2) of `vnc`; the job runs this rank's part of it.
    pub fn schedule_collective(&self, vnc: u32, queue: i64, job: TensorJob, on_complete: Option<OnComplete>) -> NrtResult<u64> {
        let id = XuId::new(vnc, XuKind::Collectives, queue)?;
        self.unit(id)?.submit(Request { work: Work::Tensor(job), on_complete })
    }

    /// `nrta_tensor_write`: `data` into device tensor `t` at `offset`.
    pub fn tensor_write(&self, vnc: u32, t: Arc<Tensor>, offset: u64, data: Vec<u8>, queue: i64, on_complete: Option<OnComplete>) -> NrtResult<u64> {
        device_tensor(&t)?;
        in_bounds(&t, offset, data.len() as u64)?;
        self.schedule_job(vnc, queue, Box::new(move || t.write(offset, &data)), on_complete)
    }

    /// `nrta_tensor_read`: `len` bytes of device tensor `t` at `offset`,
    /// handed to `into` on the worker when read.
    #[allow(clippy::too_many_arguments)]
    pub fn tensor_read(
        &self,
        vnc: u32,
        t: Arc<Tensor>,
        offset: u64,
        len: u64,
        into: ReadSink,
        queue: i64,
        on_complete: Option<OnComplete>,
    ) -> NrtResult<u64> {
        device_tensor(&t)?;
        in_bounds(&t, offset, len)?;
        // The staging buffer is taken now, so a size the host cannot hold
        // is the call's NRT_RESOURCE rather than a failed job.
        let mut buf = crate::host_memory::zeroed(len, format_args!("staging buffer of a {len}-byte read of tensor {:?}", t.name()))?;
        let job = move || {
            t.read(offset, &mut buf)?;
            into(&buf);
            Ok(())
        };
        self.schedule_job(vnc, queue, Box::new(job), on_complete)
    }

    /// `nrta_tensor_copy`: `len` bytes from `src` at `src_offset` to `dst`
    /// at `dst_offset` (both device tensors).
    #[allow(clippy::too_many_arguments)]
    pub fn tensor_copy(
        &self,
        vnc: u32,
        src: Arc<Tensor>,
        src_offset: u64,
        dst: Arc<Tensor>,
        dst_offset: u64,
        len: u64,
        queue: i64,
        on_complete: Option<OnComplete>,
    ) -> NrtResult<u64> {
        device_tensor(&src)?;
        device_tensor(&dst)?;
        in_bounds(&src, src_offset, len)?;
        in_bounds(&dst, dst_offset, len)?;
        self.schedule_job(vnc, queue, Box::new(move || dst.copy_from(dst_offset, &src, src_offset, len)), on_complete)
    }

    /// `nrta_is_completed`.
    pub fn is_completed(&self, seq: u64) -> NrtResult<bool> {
        self.unit_of_seq(seq)?.is_completed(seq::seq_num(seq))
    }

    /// `nrta_get_sequence`: the last completed sequence id of (vnc, kind,
    /// queue); sequence number 0 if nothing completed (or the unit was
    /// never used).
    pub fn last_completed(&self, vnc: u32, kind: XuKind, queue: i64) -> NrtResult<u64> {
        let id = XuId::new(vnc, kind, queue)?;
        let u = self.units.lock().unwrap_or_else(|e| e.into_inner()).get(&id).cloned();
        Ok(u.map_or(id.seq(0), |u| u.last_completed()))
    }

    /// Blocks until `seq` completes or `timeout` passes.
    pub fn wait(&self, seq: u64, timeout: Duration) -> NrtResult<bool> {
        self.unit_of_seq(seq)?.wait(seq::seq_num(seq), timeout)
    }

    /// Calls `notifier` once `seq` has completed.
    pub fn watch_seq(&self, seq: u64, notifier: Notifier) -> NrtResult<()> {
        self.unit_of_seq(seq)?.watch_seq(seq::seq_num(seq), notifier)
    }

    /// Calls `notifier` on every later completion of (vnc, kind, queue).
    pub fn watch_unit(&self, vnc: u32, kind: XuKind, queue: i64, notifier: Notifier) -> NrtResult<()> {
        self.unit(XuId::new(vnc, kind, queue)?)?.watch_all(notifier);
        Ok(())
    }

    /// Waits until every request queued so far on `vnc`'s units completed
    /// ([`ExecUnit::drain`]'s bound, per unit).
    pub fn drain(&self, vnc: u32) -> NrtResult<()> {
        let units: Vec<Arc<ExecUnit>> =
            self.units.lock().unwrap_or_else(|e| e.into_inner()).values().filter(|u| u32::from(u.id().vnc) == vnc).cloned().collect();
        for u in units {
            u.drain()?;
        }
        Ok(())
    }

    /// Implicit async `nrt_execute`: like [`Xus::schedule_execute`], but a
    /// full queue blocks until a slot frees (libnrt's in-flight semaphore)
    /// instead of returning NRT_QUEUE_FULL; NRT_TIMEOUT when the unit
    /// completes nothing for its request limit. The tensors are marked in
    /// flight until the execution completes, so host reads and writes of
    /// them wait for it.
    pub fn execute_implicit(&self, vnc: u32, model: Arc<LoadedModel>, inputs: TensorSet, outputs: TensorSet, on_complete: OnComplete) -> NrtResult<u64> {
        let id = XuId::new(vnc, XuKind::Compute, 0)?;
        device_only(&inputs, "input")?;
        device_only(&outputs, "output")?;
        crate::exec::validate(&model, &inputs, &outputs)?;
        let unit = self.unit(id)?;
        // The marks go with the request: its worker releases them when the
        // execution ends, before the callback runs.
        for (_, t) in inputs.iter().chain(outputs.iter()) {
            t.mark_in_flight();
        }
        let mut req = Request { work: Work::Execute { model, inputs, outputs, in_flight: true }, on_complete: Some(on_complete) };
        loop {
            let refused = match unit.submit_or_return(req) {
                Ok(seq) => return Ok(seq),
                Err((back, e)) if e.status == NrtStatus::QueueFull => {
                    // A slot frees when the oldest request completes. The
                    // worker may have drained the whole queue since the
                    // refusal: then nothing is outstanding and the submit
                    // is retried at once (waiting on a number not yet
                    // issued would be NRT_INVALID).
                    let oldest = seq::seq_num(unit.last_completed()) + 1;
                    if oldest > seq::seq_num(unit.last_submitted()) {
                        req = back;
                        continue;
                    }
                    match unit.wait_progressing(oldest, "implicit async execution waiting for a free slot of") {
                        Ok(()) => {
                            req = back;
                            continue;
                        }
                        Err(e) => (back, e),
                    }
                }
                Err(refused) => refused,
            };
            // Refused for good: the caller gets the error, not the
            // callback; the marks are released here.
            let (back, e) = refused;
            if let Work::Execute { inputs, outputs, .. } = &back.work {
                unit::release_in_flight(inputs, outputs);
            }
            return Err(e);
        }
    }

    /// Stops every unit (queued requests finish first).
    pub fn shutdown(&self) {
        let units: Vec<Arc<ExecUnit>> = self.units.lock().unwrap_or_else(|e| e.into_inner()).values().cloned().collect();
        for u in units {
            u.shutdown();
        }
    }
}

impl Drop for Xus {
    fn drop(&mut self) {
        self.shutdown();
    }
}
