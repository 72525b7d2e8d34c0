//! nrt_async.h (the explicit `nrta_*` API, version node NRT_3.0.0) and the
//! legacy implicit-async callback of nrt_experimental.h, over the runtime
//! core's execution units (`nrt::xu`).
//!
//! Each schedule call validates everything first (handles, queue, device
//! tensors only, sizes) so a refusal has no side effect, then queues the
//! request and writes its sequence id. The optional `NRT_STATUS *ret` is
//! written by the worker when the request completes, before the sequence
//! counts as completed (the caller keeps it alive until then, as libnrt
//! requires). Completion descriptors are eventfds: the runtime writes 1
//! to its own duplicate of the caller's descriptor, so a caller may close
//! theirs at any time.
//!
//! The tensor calls are libnrt 2.29's eight-argument form: `lnc_idx`
//! before `queue` names the logical core whose TENSOR_OP unit runs the
//! request and whose DMA queues move the bytes.

use crate::api_core::runtime_set_for_async;
use crate::ctensor::CTensor;
use crate::global::{self, Hosts, MODELS, SETS, TENSORS};
use crate::ptr::{self, non_null};
use crate::shim::call;
use crate::status::NRT_STATUS;
use nrt_core::tensor::Tracking;
use nrt_core::xu::seq::XuKind;
use nrt_hal::CoreId;
use nrt_core::xu::unit::{Notifier, OnComplete};
use nrt_core::{NrtError, NrtResult, NrtStatus};
use std::ffi::{c_int, c_void};
use std::io::Write;
use std::os::fd::BorrowedFd;
use std::sync::{Arc, Mutex};

/// A caller address the worker writes through later. The caller's
/// contract (libnrt's) keeps it valid until the request completes.
#[derive(Clone, Copy)]
struct Addr(usize);

/// Where the final status goes: `ret` if the caller gave one.
fn status_writer(ret: *mut NRT_STATUS) -> Option<OnComplete> {
    (!ret.is_null()).then(|| OnComplete::Fn(write_status, ret as usize as u64))
}

/// Writes a completed request's status where its schedule call said.
fn write_status(ret: u64, _seq: u64, s: NrtStatus) {
    // SAFETY: `ret` is the non-NULL `NRT_STATUS *` of the schedule call,
    // which the caller keeps valid until completion (API contract).
    unsafe { ptr::write(ret as usize as *mut NRT_STATUS, s.code()) }
}

/// An eventfd the runtime owns (a duplicate of the caller's): each
/// completion adds 1 to its counter.
struct EventFd(std::fs::File);

impl EventFd {
    /// Duplicates the caller's descriptor (close-on-exec), so the
    /// caller's `close` never races our write.
    fn dup(fd: c_int) -> NrtResult<EventFd> {
        if fd < 0 {
            return Err(NrtError::invalid(format!("event fd {fd} is not a descriptor")));
        }
        // SAFETY: `fd` is only borrowed for the duplication; an invalid
        // descriptor makes the dup fail, which is reported.
        let owned = unsafe { BorrowedFd::borrow_raw(fd) }
            .try_clone_to_owned()
            .map_err(|e| NrtError::invalid(format!("event fd {fd} cannot be used: {e}")))?;
        Ok(EventFd(std::fs::File::from(owned)))
    }

    fn signal(&self) {
        let _ = (&self.0).write(&1u64.to_ne_bytes());
    }
}

fn seq_notifier(efd: EventFd) -> Notifier {
    let cell = Mutex::new(Some(efd));
    Arc::new(move |_, _| {
        // Fire once, then close our duplicate.
        if let Some(e) = cell.lock().unwrap_or_else(|e| e.into_inner()).take() {
            e.signal();
        }
    })
}

/// The device position and physical core of a whole device tensor, or
/// libnrt's host-tensor refusal.
fn device_of(ct: &CTensor) -> NrtResult<(usize, CoreId)> {
    let (d, core, _) = ct
        .device_placement()
        .ok_or_else(|| NrtError::invalid(format!("{} (tensor {:?} is not in device memory)", nrt_core::xu::HOST_TENSOR_MESSAGE, ct.name)))?;
    Ok((d, core))
}

/// The process-local logical core of a device tensor.
pub(crate) fn tensor_vnc(h: &Hosts, ct: &CTensor) -> NrtResult<u32> {
    let (d, core) = device_of(ct)?;
    h.rt.vnc_holding(d, core).map_err(|e| e.context(format_args!("tensor {:?}", ct.name)))
}

/// Where an async tensor call with `lnc_idx` runs: that logical core's
/// TENSOR_OP unit, and the physical core of it whose DMA queues move the
/// tensor's bytes (the runtime's rule, [`nrt_core::Runtime::transfer_core`]:
/// any logical core of the tensor's device; another device's is NRT_INVALID).
fn transfer_target(h: &Hosts, ct: &CTensor, lnc_idx: c_int) -> NrtResult<(u32, CoreId)> {
    let (d, core) = device_of(ct)?;
    let vnc = u32::try_from(lnc_idx)
        .map_err(|_| NrtError::invalid(format!("lnc_idx {lnc_idx} is not a logical NeuronCore (visible: 0..{})", h.rt.visible_vnc_count())))?;
    let via = h.rt.transfer_core(vnc, d, core).map_err(|e| e.context(format_args!("lnc_idx {lnc_idx}")))?;
    Ok((vnc, via))
}

/// What an async tensor read or write checks before it queues anything:
/// the sequence output, the tensor, `lnc_idx` ([`transfer_target`]) and
/// the span. Returns the tensor, the logical core, the engines' core and
/// the byte count.
fn transfer_request(h: &Hosts, seq: *mut u64, tensor: *mut c_void, lnc_idx: c_int, offset: u64, size: u64) -> NrtResult<(Arc<CTensor>, u32, CoreId, usize)> {
    out_seq(seq)?;
    let ct = TENSORS.get(tensor as usize)?;
    let (vnc, via) = transfer_target(h, &ct, lnc_idx)?;
    check_span(&ct, offset, size)?;
    let n = usize::try_from(size).map_err(|_| NrtError::invalid(format!("size {size} does not fit in memory")))?;
    Ok((ct, vnc, via, n))
}

fn check_span(ct: &CTensor, offset: u64, size: u64) -> NrtResult<()> {
    match offset.checked_add(size) {
        Some(end) if end <= ct.size() => Ok(()),
        _ => Err(NrtError::invalid(format!("tensor {:?}: {size} bytes at offset {offset} exceed its size of {} bytes", ct.name, ct.size()))),
    }
}

fn out_seq(seq: *mut u64) -> NrtResult<()> {
    if seq.is_null() { Err(NrtError::invalid("req_sequence is a required parameter")) } else { Ok(()) }
}

/// Writes the sequence id.
fn give(seq: *mut u64, s: u64) {
    // SAFETY: checked non-NULL by `out_seq` before scheduling.
    unsafe { ptr::write(seq, s) }
}

/// `nrta_execute_schedule`: queues one execution on the compute unit of
/// the model's logical core.
#[unsafe(no_mangle)]
pub extern "C" fn nrta_execute_schedule(model: *mut c_void, input: *const c_void, output: *mut c_void, queue: c_int, ret: *mut NRT_STATUS, seq: *mut u64) -> NRT_STATUS {
    call("nrta_execute_schedule", || {
        let h = global::hosts()?;
        out_seq(seq)?;
        let m = MODELS.get(model as usize)?;
        let inputs = runtime_set_for_async(&*SETS.get(input as usize)?)?;
        // Outputs are whole device tensors: the runtime counts their
        // completions (streaming records).
        let outputs = runtime_set_for_async(&*SETS.get(output as usize)?)?;
        let loaded = h.model(&m)?;
        let s = h.xus.schedule_execute(m.vnc, loaded, inputs, outputs, queue.into(), status_writer(ret))?;
        give(seq, s);
        Ok(())
    })
}

/// `nrta_tensor_write` (the eight-argument form of libnrt 2.29+):
/// copies `size` bytes of `buf` (read now) into the device tensor at
/// `offset`, on TENSOR_OP queue `queue` of logical core `lnc_idx`, whose
/// DMA queues move the bytes.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn nrta_tensor_write(
    tensor: *mut c_void,
    buf: *const c_void,
    offset: u64,
    size: u64,
    lnc_idx: c_int,
    queue: c_int,
    ret: *mut NRT_STATUS,
    seq: *mut u64,
) -> NRT_STATUS {
    call("nrta_tensor_write", || {
        let h = global::hosts()?;
        let (ct, vnc, via, n) = transfer_request(&h, seq, tensor, lnc_idx, offset, size)?;
        // SAFETY: the caller gives `size` readable bytes at `buf`.
        let data = nrt_core::host_memory::copy_of(unsafe { ptr::bytes(buf, n, "buf") }?, format_args!("copy of the {n} bytes written to tensor {:?}", ct.name))?;
        let job = move || ct.write_via(offset, &data, Tracking::Wait, Some(via));
        let s = h.xus.schedule_job(vnc, queue.into(), Box::new(job), status_writer(ret))?;
        give(seq, s);
        Ok(())
    })
}

/// `nrta_tensor_read` (the eight-argument form of libnrt 2.29+): copies
/// `size` bytes of the device tensor at `offset` into `buf` when the
/// request runs, on TENSOR_OP queue `queue` of logical core `lnc_idx`.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents;
/// `buf` must stay valid until the request completes.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn nrta_tensor_read(
    buf: *mut c_void,
    tensor: *mut c_void,
    offset: u64,
    size: u64,
    lnc_idx: c_int,
    queue: c_int,
    ret: *mut NRT_STATUS,
    seq: *mut u64,
) -> NRT_STATUS {
    call("nrta_tensor_read", || {
        let h = global::hosts()?;
        let (ct, vnc, via, n) = transfer_request(&h, seq, tensor, lnc_idx, offset, size)?;
        if n > 0 {
            non_null(buf, "buf")?;
        }
        let dst = Addr(buf as usize);
        let job = move || {
            let dst = dst;
            // SAFETY: the caller keeps `size` writable bytes at `buf` until completion.
            let out = unsafe { ptr::bytes_mut(dst.0 as *mut c_void, n, "buf") }?;
            ct.read_via(offset, out, Tracking::Wait, Some(via))
        };
        let s = h.xus.schedule_job(vnc, queue.into(), Box::new(job), status_writer(ret))?;
        give(seq, s);
        Ok(())
    })
}

/// `nrta_tensor_copy`: device-to-device copy within one logical core, on
/// its TENSOR_OP queue `queue`. The documented form (libnrt 2.29-2.32's
/// API reference): no `lnc_idx`, since no source shows one added here;
/// the tensors' own logical core runs it.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn nrta_tensor_copy(src: *mut c_void, src_offset: u64, dst: *mut c_void, dst_offset: u64, size: u64, queue: c_int, ret: *mut NRT_STATUS, seq: *mut u64) -> NRT_STATUS {
    call("nrta_tensor_copy", || {
        let h = global::hosts()?;
        out_seq(seq)?;
        let s_t = TENSORS.get(src as usize)?;
        let d_t = TENSORS.get(dst as usize)?;
        let vnc = tensor_vnc(&h, &s_t)?;
        let dvnc = tensor_vnc(&h, &d_t)?;
        if vnc != dvnc {
            return Err(NrtError::invalid(format!("nrta_tensor_copy needs both tensors on one logical core; src is on {vnc}, dst on {dvnc}")));
        }
        check_span(&s_t, src_offset, size)?;
        check_span(&d_t, dst_offset, size)?;
        let s = h.xus.schedule_job(vnc, queue.into(), Box::new(move || d_t.copy_from(dst_offset, &s_t, src_offset, size)), status_writer(ret))?;
        give(seq, s);
        Ok(())
    })
}

/// `nrta_is_completed`: NRT_INVALID for a sequence id never issued.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrta_is_completed(seq: u64, is_completed: *mut bool) -> NRT_STATUS {
    call("nrta_is_completed", || {
        let h = global::hosts()?;
        non_null(is_completed, "is_completed")?;
        let done = h.xus.is_completed(seq)?;
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(is_completed, done) };
        Ok(())
    })
}

fn xu_kind(h: &Hosts, lnc: u32, xu: u32) -> NrtResult<XuKind> {
    h.rt.vcore(lnc)?;
    XuKind::from_code(xu).ok_or_else(|| NrtError::invalid(format!("execution unit type {xu} does not exist (0 TENSOR_OP, 1 COMPUTE, 2 COLLECTIVES)")))
}

/// `nrta_get_sequence`: the last completed sequence id of (lnc, xu, queue).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrta_get_sequence(lnc: u32, xu: u32, queue: c_int, seq: *mut u64) -> NRT_STATUS {
    call("nrta_get_sequence", || {
        let h = global::hosts()?;
        non_null(seq, "seq")?;
        let kind = xu_kind(&h, lnc, xu)?;
        let s = h.xus.last_completed(lnc, kind, queue.into())?;
        give(seq, s);
        Ok(())
    })
}

/// `nrta_event_register_seq_id_completion`: adds 1 to eventfd `efd` when
/// `seq` completes (at once if it has).
#[unsafe(no_mangle)]
pub extern "C" fn nrta_event_register_seq_id_completion(seq: u64, efd: c_int) -> NRT_STATUS {
    call("nrta_event_register_seq_id_completion", || {
        let h = global::hosts()?;
        h.xus.is_completed(seq)?;
        h.xus.watch_seq(seq, seq_notifier(EventFd::dup(efd)?))
    })
}

/// `nrta_event_register_xu_completion`: adds 1 to eventfd `efd` on every
/// later completion of (lnc, xu, queue). `lnc` is an `int`, as the
/// callers of libnrt 2.32 (Neuron SDK 2.30), which added it, pass it.
#[unsafe(no_mangle)]
pub extern "C" fn nrta_event_register_xu_completion(lnc: c_int, xu: u32, queue: c_int, efd: c_int) -> NRT_STATUS {
    call("nrta_event_register_xu_completion", || {
        let h = global::hosts()?;
        let lnc = u32::try_from(lnc).map_err(|_| NrtError::invalid(format!("logical NeuronCore {lnc} does not exist (visible: 0..{})", h.rt.visible_vnc_count())))?;
        let kind = xu_kind(&h, lnc, xu)?;
        let e = EventFd::dup(efd)?;
        h.xus.watch_unit(lnc, kind, queue.into(), Arc::new(move |_, _| e.signal()))
    })
}

/// The implicit-async status callback and its parameter.
type Callback = extern "C" fn(*mut c_void, u32, u32, u64, NRT_STATUS);

static CALLBACK: Mutex<Option<(Callback, usize)>> = Mutex::new(None);

/// `nrt_register_async_exec_callback`: the callback implicit async mode
/// (NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS > 0) calls with (params,
/// model id, vnc, job id, status) when an execution completes; a new call
/// replaces the old one, NULL restores the default (log failures).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_register_async_exec_callback(callback: Option<Callback>, params: *mut c_void) -> NRT_STATUS {
    call("nrt_register_async_exec_callback", || {
        *CALLBACK.lock().unwrap_or_else(|e| e.into_inner()) = callback.map(|c| (c, params as usize));
        Ok(())
    })
}

/// The completion report of an implicit-async execution: the registered
/// callback, or the default one (a log line for a failure).
/// The job id is the execution's sequence id.
pub fn implicit_completion(model_id: u32, vnc: u32) -> OnComplete {
    OnComplete::Fn(report_implicit, (u64::from(model_id) << 32) | u64::from(vnc))
}

/// [`implicit_completion`]'s report: `ids` is model id << 32 | vnc.
fn report_implicit(ids: u64, job_id: u64, s: NrtStatus) {
    let (model_id, vnc) = ((ids >> 32) as u32, ids as u32);
    let cb = *CALLBACK.lock().unwrap_or_else(|e| e.into_inner());
    match cb {
        Some((f, params)) => f(params as *mut c_void, model_id, vnc, job_id, s.code()),
        None if s != NrtStatus::Success => nrt_core::log::write(
            nrt_core::log::Level::Error,
            nrt_core::log::Module::Nrt,
            "async_exec",
            format_args!("asynchronous execution {job_id} of model {model_id} on vnc {vnc} finished with {s}"),
        ),
        None => {}
    }
}

crate::symbols::versioned!("NRT_3.0.0":
    nrta_execute_schedule,
    nrta_tensor_write,
    nrta_tensor_read,
    nrta_tensor_copy,
    nrta_is_completed,
    nrta_get_sequence,
    nrta_event_register_seq_id_completion,
    nrta_event_register_xu_completion,
);

crate::symbols::versioned!("NRT_2.0.0":
    nrt_register_async_exec_callback,
);
