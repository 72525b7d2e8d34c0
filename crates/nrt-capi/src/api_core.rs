//! nrt.h lifecycle, core counts, instance info, model load / unload /
//! execute and memory stats; nrt_status.h and nrt_version.h.

use crate::global::{self, BoundSet, CTensorSet, MODELS, SETS, TENSORS};
use crate::ptr::{self, non_null};
use crate::shim::call;
use crate::status::NRT_STATUS;
use nrt_core::config::Env;
use nrt_core::runtime::{self, FrameworkType};
use nrt_core::tensor::{Tensor, TensorSet};
use nrt_core::{NrtError, NrtResult, NrtStatus};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Arc;

/// `nrt_instance_info_t` (32 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct InstanceInfoC {
    /// NRT_INSTANCE_* family.
    pub family: u32,
    /// NRT_INSTANCE_SIZE_* size.
    pub size: u32,
    /// Architecture name, NUL-terminated.
    pub arch_name: [c_char; 16],
    /// Device revision, NUL-terminated.
    pub device_revision: [c_char; 8],
}

/// `nrt_version_t` (224 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VersionC {
    /// Major.
    pub rt_major: u64,
    /// Minor.
    pub rt_minor: u64,
    /// Patch.
    pub rt_patch: u64,
    /// Maintenance.
    pub rt_maintenance: u64,
    /// Version text.
    pub rt_detail: [c_char; 128],
    /// Git hash text.
    pub git_hash: [c_char; 64],
}

/// `nrt_vnc_memory_stats_t` (16 bytes, append-only).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VncMemoryStatsC {
    /// Bytes in use.
    pub bytes_used: usize,
    /// Bytes available in total.
    pub bytes_limit: usize,
}

/// Copies the first `min(len, size_of::<T>())` bytes of `v` to `dst`
/// (libnrt's size-versioned structs: older callers pass smaller sizes).
///
/// # Safety
/// `dst` must be valid for `len` bytes of writes.
pub unsafe fn copy_versioned<T: Copy>(dst: *mut c_void, len: usize, v: &T) -> usize {
    let n = len.min(size_of::<T>());
    // SAFETY: `v` is `size_of::<T>()` readable bytes, `dst` has `len`.
    unsafe { std::ptr::copy_nonoverlapping((v as *const T).cast::<u8>(), dst.cast::<u8>(), n) };
    n
}

fn framework(v: u32) -> NrtResult<FrameworkType> {
    Ok(match v {
        1 => FrameworkType::NoFw,
        2 => FrameworkType::Tensorflow,
        3 => FrameworkType::Pytorch,
        4 => FrameworkType::Mxnet,
        5 => FrameworkType::Precheck,
        _ => return Err(NrtError::invalid(format!("framework type {v} is not valid; expected 1 (NO_FW) to 5 (PRECHECK)"))),
    })
}

/// `nrt_init`: starts the runtime over the simulated devices.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_init(framework_type: u32, fw_version: *const c_char, fal_version: *const c_char) -> NRT_STATUS {
    call("nrt_init", || {
        let fw = framework(framework_type)?;
        // SAFETY: C strings or NULL per the API.
        let (a, b) = unsafe { (ptr::string_or_empty(fw_version), ptr::string_or_empty(fal_version)) };
        global::init(fw, a, b)
    })
}

/// `nrt_close`: unloads everything and releases the devices.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_close() {
    call("nrt_close", global::close);
}

/// # Safety
/// `out` must be NULL or valid for a `u32` write.
unsafe fn count(api: &str, out: *mut u32, f: impl FnOnce() -> NrtResult<u32>) -> NRT_STATUS {
    call(api, || {
        non_null(out, "vnc_count")?;
        let n = f()?;
        // SAFETY: checked non-NULL; caller provides a u32.
        unsafe { ptr::write(out, n) };
        Ok(())
    })
}

fn total() -> NrtResult<u32> {
    match global::hosts() {
        Ok(h) => Ok(h.rt.total_vnc_count()),
        Err(_) => runtime::total_vnc_count(&Env::from_process(), &global::devices()?),
    }
}

fn visible() -> NrtResult<u32> {
    match global::hosts() {
        Ok(h) => Ok(h.rt.visible_vnc_count()),
        Err(_) => runtime::visible_vnc_count(&Env::from_process(), &global::devices()?),
    }
}

/// `nrt_get_total_vnc_count` (works before init).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_total_vnc_count(vnc_count: *mut u32) -> NRT_STATUS {
    // SAFETY: forwarded caller guarantees.
    unsafe { count("nrt_get_total_vnc_count", vnc_count, total) }
}

/// `nrt_get_total_nc_count`: deprecated alias.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_total_nc_count(vnc_count: *mut u32) -> NRT_STATUS {
    // SAFETY: forwarded caller guarantees.
    unsafe { count("nrt_get_total_nc_count", vnc_count, total) }
}

/// `nrt_get_visible_vnc_count` (works before init).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_visible_vnc_count(vnc_count: *mut u32) -> NRT_STATUS {
    // SAFETY: forwarded caller guarantees.
    unsafe { count("nrt_get_visible_vnc_count", vnc_count, visible) }
}

/// `nrt_get_visible_nc_count`: deprecated alias.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_visible_nc_count(vnc_count: *mut u32) -> NRT_STATUS {
    // SAFETY: forwarded caller guarantees.
    unsafe { count("nrt_get_visible_nc_count", vnc_count, visible) }
}

/// `nrt_get_instance_info` (works before init).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_instance_info(info: *mut InstanceInfoC, instance_info_len: usize) -> NRT_STATUS {
    call("nrt_get_instance_info", || {
        non_null(info, "info")?;
        let i = match global::hosts() {
            Ok(h) => h.rt.instance_info().clone(),
            Err(_) => runtime::instance_info(&Env::from_process(), &global::devices()?)?,
        };
        let mut c = InstanceInfoC { family: i.family.value(), size: i.size.value(), arch_name: [0; 16], device_revision: [0; 8] };
        ptr::fill_chars(&mut c.arch_name, &i.arch_name);
        ptr::fill_chars(&mut c.device_revision, &i.device_revision);
        // SAFETY: the caller gives `instance_info_len` writable bytes.
        unsafe { copy_versioned(info.cast(), instance_info_len, &c) };
        Ok(())
    })
}

/// The libnrt release whose API (headers, behaviour) this library
/// implements: libnrt 2.32, the runtime of Neuron SDK 2.30 (the 2.28
/// headers with the 2.29+ async form, the eventfd registrations, implicit
/// async deprecated but working); docs/c-api.md lists what of it and of
/// later releases has no published signature (`NRT_RS_LIBNRT_MAJOR` /
/// `NRT_RS_LIBNRT_MINOR` in nrt_version.h).
pub const LIBNRT_ABI_VERSION: (u64, u64) = (2, 32);

/// `nrt_get_version`: fills `size` bytes (works before init).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_version(ver: *mut VersionC, size: usize) -> NRT_STATUS {
    call("nrt_get_version", || {
        non_null(ver, "ver")?;
        let v = runtime::version();
        // Clients gate features on rt_major / rt_minor, so those report
        // the libnrt release whose API we implement; nrt-rs's own version
        // is in rt_detail.
        let (major, minor) = LIBNRT_ABI_VERSION;
        let mut c = VersionC { rt_major: major, rt_minor: minor, rt_patch: 0, rt_maintenance: 0, rt_detail: [0; 128], git_hash: [0; 64] };
        ptr::fill_chars(&mut c.rt_detail, &format!("{} (libnrt {major}.{minor} API)", v.version));
        ptr::fill_chars(&mut c.git_hash, &v.git_sha);
        // SAFETY: the caller gives `size` writable bytes.
        unsafe { copy_versioned(ver.cast(), size, &c) };
        Ok(())
    })
}

static STATUS_NAMES: std::sync::LazyLock<Vec<(i32, std::ffi::CString)>> = std::sync::LazyLock::new(|| {
    NrtStatus::ALL.iter().map(|s| (s.code(), std::ffi::CString::new(s.name()).unwrap_or_default())).collect()
});

/// `nrt_get_status_as_str`: a static string for every status (unknown
/// codes get "NRT_UNKNOWN_STATUS").
#[unsafe(no_mangle)]
pub extern "C" fn nrt_get_status_as_str(status: c_int) -> *const c_char {
    crate::shim::value("nrt_get_status_as_str", || {
        Ok(STATUS_NAMES.iter().find(|(c, _)| *c == status).map_or(c"NRT_UNKNOWN_STATUS".as_ptr(), |(_, s)| s.as_ptr()))
    })
    .unwrap_or(c"NRT_UNKNOWN_STATUS".as_ptr())
}

/// libnrt ignores the deprecated `vnc_count` of the load calls (clients
/// such as nrtpy pass 1): any value is accepted, and the first one other
/// than -1 is warned about once per process.
fn ignore_vnc_count(vnc_count: i32) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    if vnc_count != -1 {
        WARNED.call_once(|| nrt_core::log_warn!(nrt_core::log::Module::Nrt, "vnc_count is deprecated and ignored (got {vnc_count}); pass -1"));
    }
}

fn load_common(bytes: *const c_void, size: usize, vnc: i32, vnc_count: i32, model: *mut *mut c_void) -> NrtResult<()> {
    load_as(bytes, size, vnc, vnc_count, model, None)
}

/// [`load_common`] as rank `cc` of a collectives world (None: `nrt_load`).
fn load_as(bytes: *const c_void, size: usize, vnc: i32, vnc_count: i32, model: *mut *mut c_void, cc: Option<(u32, u32)>) -> NrtResult<()> {
    let h = global::hosts()?;
    non_null(model, "model")?;
    if size == 0 {
        return Err(NrtError::invalid("NEFF size is 0; expected the NEFF file's bytes"));
    }
    // SAFETY: the caller gives `size` readable bytes.
    let neff = unsafe { ptr::bytes(bytes, size, "neff_bytes") }?;
    ignore_vnc_count(vnc_count);
    let m = match cc {
        None => h.load(neff, vnc, -1)?,
        Some((id, count)) => {
            // The rank's logical core in the world: the one named, or 0
            // for "first free" (-1), as before the load picks one.
            let v = u32::try_from(vnc).unwrap_or(0);
            h.rt.vcore(v)?;
            let rank = nrt_core::cc::neff::CcRank::joining(&h.rt, v, id, count)?;
            h.load_cc(neff, vnc, -1, &rank)?
        }
    };
    let handle = MODELS.insert(m);
    // SAFETY: checked non-NULL.
    unsafe { ptr::write(model, handle as *mut c_void) };
    Ok(())
}

/// `nrt_load`: loads a NEFF onto logical core `vnc` (-1: first free).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_load(neff_bytes: *const c_void, size: usize, vnc: i32, vnc_count: i32, model: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_load", || load_common(neff_bytes, size, vnc, vnc_count, model))
}

/// `nrt_load_collectives`: loads as rank `ctx_device_id` of the NEFF
/// collectives' global communicator (context 0), creating it as
/// `ctx_device_id` of `ctx_device_count` when absent (spec §3.1); the
/// NEFF's collectives meet their peers' loads, bounded by
/// NEURON_RT_CC_NET_TIMEOUT.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_load_collectives(
    neff_bytes: *const c_void,
    size: usize,
    vnc: i32,
    vnc_count: i32,
    ctx_device_id: u32,
    ctx_device_count: u32,
    model: *mut *mut c_void,
) -> NRT_STATUS {
    call("nrt_load_collectives", || {
        global::hosts()?;
        non_null(model, "model")?;
        load_as(neff_bytes, size, vnc, vnc_count, model, Some((ctx_device_id, ctx_device_count)))
    })
}


/// `nrt_unload`.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_unload(model: *mut c_void) -> NRT_STATUS {
    call("nrt_unload", || {
        let h = global::hosts()?;
        let m = MODELS.get(model as usize)?;
        MODELS.remove(model as usize)?;
        h.unload(&m)
    })
}

/// # Safety
/// `out` must be NULL or valid for a `u32` write.
unsafe fn model_vnc_count(api: &str, model: *const c_void, out: *mut u32) -> NRT_STATUS {
    call(api, || {
        let h = global::hosts()?;
        non_null(out, "vnc_count")?;
        let m = MODELS.get(model as usize)?;
        let n = h.rt.model_vnc_count(&*h.model(&m)?, m.device);
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(out, n) };
        Ok(())
    })
}

/// `nrt_get_model_vnc_count`: the logical cores the model's programs
/// occupy (`Runtime::model_vnc_count`).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_model_vnc_count(model: *const c_void, vnc_count: *mut u32) -> NRT_STATUS {
    // SAFETY: forwarded caller guarantees.
    unsafe { model_vnc_count("nrt_get_model_vnc_count", model, vnc_count) }
}

/// `nrt_get_model_nc_count`: the deprecated alias (the 2.28 header counts
/// VNCs for both).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_model_nc_count(model: *const c_void, vnc_count: *mut u32) -> NRT_STATUS {
    // SAFETY: forwarded caller guarantees.
    unsafe { model_vnc_count("nrt_get_model_nc_count", model, vnc_count) }
}

/// A staged C tensor and the temporary host tensor bound in its place.
type StagedTensor = (Arc<crate::ctensor::CTensor>, Arc<Tensor>);

/// The tensors [`runtime_set`] staged.
type Staged = Vec<StagedTensor>;

/// Builds a runtime tensor set from a C set: whole runtime tensors bind in
/// place; slices and attached buffers are staged through temporary host
/// tensors (returned so outputs can be copied back).
fn runtime_set(set: &CTensorSet, inputs: bool) -> NrtResult<(TensorSet, Staged, Vec<Arc<crate::ctensor::CTensor>>)> {
    let entries = set.entries.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let mut out = TensorSet::new();
    let mut staged = Vec::new();
    let mut all = Vec::new();
    for (name, th) in entries {
        let ct = TENSORS.get(th).map_err(|e| NrtError::new(e.status, format!("tensor set entry {name:?}: {}", e.message)))?;
        match ct.whole()? {
            Some(t) => out.add(&name, t),
            None => {
                let mut bytes = nrt_core::host_memory::zeroed(ct.size(), format_args!("staging buffer of tensor {:?} (set entry {name:?})", ct.name))?;
                if inputs {
                    ct.read(0, &mut bytes)?;
                }
                let tmp = Arc::new(Tensor::from_host_bytes(bytes, &name));
                out.add(&name, Arc::clone(&tmp));
                staged.push((Arc::clone(&ct), tmp));
            }
        }
        all.push(ct);
    }
    Ok((out, staged, all))
}

/// The C set resolved to whole runtime tensors, or the name of the first
/// entry that is a slice or an attached buffer (such sets take
/// [`runtime_set`]'s staging path). The resolution is kept on the set and
/// reused while its entries, the tensors their handles name and those
/// tensors' storage are the same objects as when it was made; anything
/// else resolves afresh, so a freed handle or a changed tensor is still
/// reported (or bound) as before, and an unchanged set costs a few
/// lookups and no allocation (and the runtime, handed the very set it
/// bound last time, skips matching and binding it again).
pub fn bound_set(set: &CTensorSet) -> NrtResult<Result<Arc<BoundSet>, String>> {
    let entries = set.entries.lock().unwrap_or_else(|e| e.into_inner());
    let mut bound = set.bound.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(b) = bound.as_ref()
        && b.entries == *entries
        && b.tensors.iter().zip(&b.roots).zip(entries.iter()).all(|((ct, root), (_, h))| {
            TENSORS.get(*h).is_ok_and(|now| Arc::ptr_eq(&now, ct)) && matches!(ct.whole(), Ok(Some(r)) if Arc::ptr_eq(&r, root))
        })
    {
        return Ok(Ok(b.clone()));
    }
    *bound = None;
    let mut tensors = Vec::with_capacity(entries.len());
    let mut roots = Vec::with_capacity(entries.len());
    let mut rt = TensorSet::new();
    for (name, th) in entries.iter() {
        let ct = TENSORS.get(*th).map_err(|e| NrtError::new(e.status, format!("tensor set entry {name:?}: {}", e.message)))?;
        let Some(root) = ct.whole()? else { return Ok(Err(name.clone())) };
        rt.add(name, root.clone());
        roots.push(root);
        tensors.push(ct);
    }
    let b = Arc::new(BoundSet { entries: entries.clone(), tensors, roots, set: rt });
    *bound = Some(b.clone());
    Ok(Ok(b))
}

/// A runtime tensor set for an asynchronous path: every entry must be a
/// whole runtime tensor (slices and attached buffers would need staging,
/// which only the synchronous path does).
pub fn runtime_set_for_async(set: &CTensorSet) -> NrtResult<TensorSet> {
    match bound_set(set)? {
        Ok(b) => Ok(b.set.clone()),
        Err(name) => Err(NrtError::invalid(format!("{} (tensor {name:?} is a slice or an attached buffer)", nrt_core::xu::HOST_TENSOR_MESSAGE))),
    }
}

fn execute(api: &str, model: *mut c_void, input_set: *const c_void, output_set: *mut c_void, repeat: i32) -> NRT_STATUS {
    call(api, || {
        let h = global::hosts()?;
        let m = MODELS.get(model as usize)?;
        let ins = SETS.get(input_set as usize)?;
        let outs = SETS.get(output_set as usize)?;
        if h.rt.config().async_exec_max_inflight_requests > 0 {
            // Implicit async: queue on the model's compute unit and return;
            // the status goes to the registered callback.
            if repeat != 1 {
                return Err(NrtError::invalid(format!("Supports for loops on the host is deprecated (repeat count {repeat}; only 1 is accepted)")));
            }
            let inputs = runtime_set_for_async(&ins)?;
            let outputs = runtime_set_for_async(&outs)?;
            let done = crate::api_async::implicit_completion(m.id, m.vnc);
            h.xus.execute_implicit(m.vnc, h.model(&m)?, inputs, outputs, done)?;
            return Ok(());
        }
        // An unchanged set of whole tensors is resolved once and reused
        // (no allocation on this path); others are built and staged anew.
        let inputs = match bound_set(&ins)? {
            Ok(b) => b.set.clone(),
            Err(_) => runtime_set(&ins, true)?.0,
        };
        let bound_out = bound_set(&outs)?;
        let fresh_out;
        let (outputs, staged, all_out): (TensorSet, &[StagedTensor], &[Arc<crate::ctensor::CTensor>]) = match &bound_out {
            Ok(b) => (b.set.clone(), &[], &b.tensors),
            Err(_) => {
                fresh_out = runtime_set(&outs, false)?;
                (fresh_out.0.clone(), &fresh_out.1, &fresh_out.2)
            }
        };
        h.execute(&m, &inputs, &outputs, repeat)?;
        for (ct, tmp) in staged {
            let mut bytes = nrt_core::host_memory::zeroed(tmp.size(), format_args!("copy-back buffer of tensor {:?}", ct.name))?;
            tmp.read(0, &mut bytes)?;
            ct.write(0, &bytes)?;
        }
        // Tensors bound in place were counted by the runtime (streaming
        // completion records); staged ones, and every output in no-device
        // mode, complete now.
        for ct in all_out {
            if m.device.is_none() || staged.iter().any(|(s, _)| Arc::ptr_eq(s, ct)) {
                ct.complete_one();
            }
        }
        Ok(())
    })
}

/// `nrt_execute`: runs the model once and waits.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_execute(model: *mut c_void, input_set: *const c_void, output_set: *mut c_void) -> NRT_STATUS {
    execute("nrt_execute", model, input_set, output_set, 1)
}

/// `nrt_execute_repeat`: `repeat_count` 1 runs once; host loops are refused
/// (NRT_INVALID) as the runtime core documents.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_execute_repeat(model: *mut c_void, input_set: *const c_void, output_set: *mut c_void, repeat_count: c_int) -> NRT_STATUS {
    execute("nrt_execute_repeat", model, input_set, output_set, repeat_count)
}

/// `nrt_get_vnc_memory_stats`: copies min(stats_size_in, ours) bytes and
/// reports our size in `*stats_size_out`.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_vnc_memory_stats(vnc: u32, stats: *mut VncMemoryStatsC, stats_size_in: usize, stats_size_out: *mut usize) -> NRT_STATUS {
    call("nrt_get_vnc_memory_stats", || {
        let h = global::hosts()?;
        non_null(stats, "stats")?;
        non_null(stats_size_out, "stats_size_out")?;
        let s = h.rt.vnc_memory_stats(vnc)?;
        let c = VncMemoryStatsC { bytes_used: s.bytes_used as usize, bytes_limit: s.bytes_limit as usize };
        // SAFETY: the caller gives `stats_size_in` writable bytes; out checked.
        unsafe {
            copy_versioned(stats.cast(), stats_size_in, &c);
            ptr::write(stats_size_out, size_of::<VncMemoryStatsC>());
        }
        Ok(())
    })
}

/// Reads a NUL-terminated status name (tests).
pub fn status_name(code: c_int) -> String {
    // SAFETY: nrt_get_status_as_str always returns a static C string.
    unsafe { CStr::from_ptr(nrt_get_status_as_str(code)) }.to_string_lossy().into_owned()
}

crate::symbols::versioned!("NRT_2.0.0":
    nrt_init,
    nrt_close,
    nrt_get_total_vnc_count,
    nrt_get_total_nc_count,
    nrt_get_visible_vnc_count,
    nrt_get_visible_nc_count,
    nrt_get_instance_info,
    nrt_get_version,
    nrt_get_status_as_str,
    nrt_load,
    nrt_load_collectives,
    nrt_unload,
    nrt_get_model_vnc_count,
    nrt_get_model_nc_count,
    nrt_execute,
    nrt_execute_repeat,
    nrt_get_vnc_memory_stats,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_header() {
        assert_eq!(size_of::<InstanceInfoC>(), 32);
        assert_eq!(size_of::<VersionC>(), 224);
        assert_eq!(size_of::<VncMemoryStatsC>(), 16);
    }

    #[test]
    fn status_names() {
        assert_eq!(status_name(0), "NRT_SUCCESS");
        assert_eq!(status_name(1002), "NRT_EXEC_BAD_INPUT");
        assert_eq!(status_name(8), "NRT_UNKNOWN_STATUS");
    }
}
