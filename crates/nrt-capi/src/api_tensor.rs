//! nrt.h tensors and tensor sets.

use crate::ctensor::{CTensor, View};
use crate::global::{self, CTensorSet, SETS, TENSORS};
use crate::ptr::{self, non_null};
use crate::shim::{call, value};
use crate::status::NRT_STATUS;
use nrt_core::tensor::{Tensor, Tracking};
use nrt_core::{NrtError, NrtResult, NrtStatus};
use std::ffi::{c_char, c_int, c_void};
use std::time::{Duration, Instant};

/// `nrt_tensor_batch_op_t` (24 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct BatchOpC {
    /// Byte offset in the tensor.
    pub offset: u64,
    /// Byte count.
    pub size: u64,
    /// Host buffer.
    pub buffer: *mut c_void,
}

/// `nrt_tensor_batch_t` (24 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct BatchC {
    /// The tensor.
    pub tensor: *const c_void,
    /// Its operations.
    pub ops: *const BatchOpC,
    /// Number of operations.
    pub num_ops: u32,
}

/// `nrt_tensor_device_allocation_info_t` (24 bytes).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DeviceAllocationInfoC {
    /// Device address.
    pub physical_address: u64,
    /// Allocation size.
    pub size: usize,
    /// HBM index.
    pub hbm_index: c_int,
}

const PLACEMENT_DEVICE: u32 = 0;
const PLACEMENT_HOST: u32 = 1;
const PLACEMENT_VIRTUAL: u32 = 2;

fn tensor(handle: *const c_void) -> NrtResult<std::sync::Arc<CTensor>> {
    global::hosts()?;
    TENSORS.get(handle as usize)
}

/// `nrt_tensor_allocate`: device placement on logical core `vnc`, host
/// (deprecated) and virtual placement in host memory.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_allocate(placement: u32, vnc: c_int, size: usize, name: *const c_char, tensor: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_tensor_allocate", || {
        let h = global::hosts()?;
        non_null(tensor, "tensor")?;
        // SAFETY: C string or NULL.
        let name = unsafe { ptr::string_or_empty(name) };
        if size == 0 {
            return Err(NrtError::invalid(format!("tensor {name:?}: size 0; expected at least one byte")));
        }
        let ct = match placement {
            PLACEMENT_DEVICE => {
                let v = u32::try_from(vnc).map_err(|_| NrtError::invalid(format!("device tensor {name:?}: vnc {vnc} is not a logical core")))?;
                let (d, local) = h.rt.locate_vnc(v)?;
                let host = h.host(d)?;
                let core = host.vcores().get(local as usize).and_then(|c| c.first().copied()).ok_or_else(|| NrtError::invalid(format!("logical core {v} has no cores")))?;
                CTensor::owning(name.clone(), Tensor::allocate_device(host.memory(), core, size as u64, &name)?, Some(d))
            }
            PLACEMENT_HOST | PLACEMENT_VIRTUAL => CTensor::owning(name.clone(), Tensor::allocate_host(size as u64, &name)?, None),
            p => return Err(NrtError::invalid(format!("tensor placement {p} is not valid; expected 0 (DEVICE), 1 (HOST) or 2 (VIRTUAL)"))),
        };
        let handle = TENSORS.insert(ct);
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(tensor, handle as *mut c_void) };
        Ok(())
    })
}

/// `nrt_tensor_free`: frees the tensor (storage shared with slices lives
/// on until they are freed) and NULLs the caller's pointer.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_free(tensor: *mut *mut c_void) {
    call("nrt_tensor_free", || {
        non_null(tensor, "tensor")?;
        // SAFETY: checked non-NULL.
        let h = unsafe { *tensor };
        if h.is_null() {
            return Ok(());
        }
        let t = TENSORS.remove(h as usize)?;
        t.release();
        // Sets that resolved this tensor before let go of its storage.
        for s in SETS.values() {
            s.forget(&t);
        }
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(tensor, std::ptr::null_mut()) };
        Ok(())
    });
}

/// `nrt_tensor_read`: tensor -> host buffer.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_read(tensor_h: *const c_void, buf: *mut c_void, offset: usize, size: usize) -> NRT_STATUS {
    call("nrt_tensor_read", || {
        let t = tensor(tensor_h)?;
        // SAFETY: the caller gives `size` writable bytes.
        let b = unsafe { ptr::bytes_mut(buf, size, "buf") }?;
        t.read(offset as u64, b)
    })
}

/// `nrt_tensor_write`: host buffer -> tensor.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_write(tensor_h: *mut c_void, buf: *const c_void, offset: usize, size: usize) -> NRT_STATUS {
    call("nrt_tensor_write", || {
        let t = tensor(tensor_h)?;
        // SAFETY: the caller gives `size` readable bytes.
        let b = unsafe { ptr::bytes(buf, size, "buf") }?;
        t.write(offset as u64, b)
    })
}

/// The batch calls: every op of every batch in order, each waiting for
/// the implicit-async executions using its tensor unless `tracking` is
/// [`Tracking::Skip`] (the calls' `unsafe`).
unsafe fn batch(api: &str, batches: *const BatchC, num: u64, read: bool, tracking: Tracking) -> NRT_STATUS {
    call(api, || {
        global::hosts()?;
        if num == 0 {
            return Ok(());
        }
        non_null(batches, "batches")?;
        let n = usize::try_from(num).map_err(|_| NrtError::invalid("num_batches too large"))?;
        // SAFETY: the caller gives `num_batches` entries.
        let list = unsafe { std::slice::from_raw_parts(batches, n) };
        for (i, b) in list.iter().enumerate() {
            let t = TENSORS.get(b.tensor as usize).map_err(|e| NrtError::new(e.status, format!("batch {i}: {}", e.message)))?;
            if b.num_ops == 0 {
                continue;
            }
            non_null(b.ops, "ops")?;
            // SAFETY: the caller gives `num_ops` entries.
            let ops = unsafe { std::slice::from_raw_parts(b.ops, b.num_ops as usize) };
            for (j, op) in ops.iter().enumerate() {
                let len = usize::try_from(op.size).map_err(|_| NrtError::invalid("op size too large"))?;
                let r = if read {
                    // SAFETY: the caller gives `size` writable bytes.
                    unsafe { ptr::bytes_mut(op.buffer, len, "buffer") }.and_then(|buf| t.read_with(op.offset, buf, tracking))
                } else {
                    // SAFETY: the caller gives `size` readable bytes.
                    unsafe { ptr::bytes(op.buffer, len, "buffer") }.and_then(|buf| t.write_with(op.offset, buf, tracking))
                };
                r.map_err(|e| NrtError::new(e.status, format!("batch {i} op {j}: {}", e.message)))?;
            }
        }
        Ok(())
    })
}

fn tracking(unsafe_: bool) -> Tracking {
    if unsafe_ { Tracking::Skip } else { Tracking::Wait }
}

/// `nrt_tensor_read_batch`: many reads; with `unsafe` they skip tensor
/// tracking (do not wait for implicit-async executions using a tensor).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_read_batch(batches: *const BatchC, num_batches: u64, unsafe_: bool) -> NRT_STATUS {
    // SAFETY: forwarded caller guarantees.
    unsafe { batch("nrt_tensor_read_batch", batches, num_batches, true, tracking(unsafe_)) }
}

/// `nrt_tensor_write_batch`: many writes; `unsafe` as in
/// [`nrt_tensor_read_batch`].
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_write_batch(batches: *const BatchC, num_batches: u64, unsafe_: bool) -> NRT_STATUS {
    // SAFETY: forwarded caller guarantees.
    unsafe { batch("nrt_tensor_write_batch", batches, num_batches, false, tracking(unsafe_)) }
}

/// `nrt_tensor_copy`: tensor -> tensor (device tensors on one device).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_copy(src: *const c_void, src_offset: usize, dst: *mut c_void, dst_offset: usize, size: usize) -> NRT_STATUS {
    call("nrt_tensor_copy", || {
        let s = tensor(src)?;
        let d = tensor(dst)?;
        d.copy_from(dst_offset as u64, &s, src_offset as u64, size as u64)
    })
}

/// `nrt_tensor_get_size`: bytes; 0 for an invalid handle (logged).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_get_size(t: *const c_void) -> usize {
    value("nrt_tensor_get_size", || Ok(tensor(t)?.size() as usize)).unwrap_or(0)
}

/// `nrt_tensor_get_lnc_index` (libnrt 2.33's callers; the header that
/// declares it is not published): the process-local logical core holding
/// a device tensor (a slice: its parent's), the `lnc_idx` to pass to
/// `nrta_tensor_read` / `nrta_tensor_write` for the tensor's own engines.
/// Host, virtual and attached tensors have none: NRT_INVALID.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_get_lnc_index(t: *const c_void, lnc_idx: *mut c_int) -> NRT_STATUS {
    call("nrt_tensor_get_lnc_index", || {
        let h = global::hosts()?;
        non_null(lnc_idx, "lnc_idx")?;
        let vnc = crate::api_async::tensor_vnc(&h, &*TENSORS.get(t as usize)?)?;
        let v = c_int::try_from(vnc).map_err(|_| NrtError::failure(format!("logical core {vnc} does not fit an int")))?;
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(lnc_idx, v) };
        Ok(())
    })
}

/// `nrt_tensor_memset`: byte fill (the low 8 bits of `value`).
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_memset(t: *mut c_void, offset: u64, value: c_int, size: usize) -> NRT_STATUS {
    call("nrt_tensor_memset", || tensor(t)?.memset(offset, value as u8, size as u64))
}

/// `nrt_tensor_allocate_empty`: a tensor without storage.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_allocate_empty(name: *const c_char, tensor: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_tensor_allocate_empty", || {
        global::hosts()?;
        non_null(tensor, "tensor")?;
        // SAFETY: C string or NULL.
        let name = unsafe { ptr::string_or_empty(name) };
        let handle = TENSORS.insert(CTensor::new(name, View::Empty));
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(tensor, handle as *mut c_void) };
        Ok(())
    })
}

/// `nrt_tensor_attach_buffer`: the tensor now uses caller memory
/// (placement VIRTUAL); its old storage is released.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_attach_buffer(t: *mut c_void, buffer: *mut c_void, size: usize) -> NRT_STATUS {
    call("nrt_tensor_attach_buffer", || {
        let ct = tensor(t)?;
        non_null(buffer, "buffer")?;
        if size == 0 || size > isize::MAX as usize {
            return Err(NrtError::invalid(format!("buffer size {size} is not valid; expected 1..=isize::MAX bytes")));
        }
        ct.set_view(View::Attached { addr: buffer as usize, size: size as u64 });
        Ok(())
    })
}

/// `nrt_tensor_allocate_slice`: a view of `size` bytes at `offset` of the
/// source's storage (shared and kept alive).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_allocate_slice(source: *const c_void, offset: usize, size: usize, name: *const c_char, slice: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_tensor_allocate_slice", || {
        let src = tensor(source)?;
        non_null(slice, "tensor_slice")?;
        // SAFETY: C string or NULL.
        let name = unsafe { ptr::string_or_empty(name) };
        let (off, len) = (offset as u64, size as u64);
        let fits = |total: u64| off.checked_add(len).is_some_and(|e| e <= total) && len > 0;
        let view = match src.view() {
            View::Empty => return Err(NrtError::invalid(format!("slice {name:?}: source tensor {:?} has no storage", src.name))),
            View::Runtime { root, device, offset: base, size: total } if fits(total) => View::Runtime { root, device, offset: base + off, size: len },
            View::Attached { addr, size: total } if fits(total) => View::Attached { addr: addr + offset, size: len },
            v => {
                let total = match v {
                    View::Runtime { size, .. } | View::Attached { size, .. } => size,
                    View::Empty => 0,
                };
                return Err(NrtError::invalid(format!(
                    "slice {name:?}: {size} bytes at offset {offset} do not fit in source {:?} of {total} bytes (and must be non-empty)",
                    src.name
                )));
            }
        };
        let handle = TENSORS.insert(CTensor::new(name, view));
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(slice, handle as *mut c_void) };
        Ok(())
    })
}

/// `nrt_tensor_get_va`: host address of host / attached storage, or of a
/// device tensor's bytes in its HBM mapped under NEURON_RT_MAP_HBM; NULL
/// for device storage whose HBM is not mapped, or a bad handle.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_get_va(t: *const c_void) -> *mut c_void {
    value("nrt_tensor_get_va", || Ok(tensor(t)?.va())).flatten().map_or(std::ptr::null_mut(), |a| a as *mut c_void)
}

/// `nrt_tensor_get_device_allocation_info`: device address, size and HBM
/// index of a device tensor (NRT_INVALID for host storage).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_tensor_get_device_allocation_info(t: *const c_void, info: *mut DeviceAllocationInfoC) -> NRT_STATUS {
    call("nrt_tensor_get_device_allocation_info", || {
        let h = global::hosts()?;
        let ct = TENSORS.get(t as usize)?;
        non_null(info, "alloc_info")?;
        let (d, core, addr) = ct.device_placement().ok_or_else(|| NrtError::invalid(format!("tensor {:?} is not in device memory", ct.name)))?;
        let hbm = h.host(d)?.memory().channel_of(core);
        let c = DeviceAllocationInfoC { physical_address: addr, size: ct.size() as usize, hbm_index: hbm as c_int };
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(info, c) };
        Ok(())
    })
}

/// `nrt_tensor_check_output_completion`: waits up to `timeout` µs
/// (negative: forever) until `expected` executions wrote the tensor.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_check_output_completion(t: *const c_void, timeout: i64, expected: u64) -> NRT_STATUS {
    call("nrt_tensor_check_output_completion", || {
        let ct = tensor(t)?;
        let start = Instant::now();
        let limit = u64::try_from(timeout).ok().map(Duration::from_micros);
        let mut warned = false;
        loop {
            let seen = nrt_core::tensor::OUTPUT_COMPLETIONS.count();
            if ct.completions() >= expected {
                return Ok(());
            }
            let waited = start.elapsed();
            if let Some(l) = limit
                && waited >= l
            {
                return Err(NrtError::new(NrtStatus::Timeout, format!("tensor {:?}: {} of {expected} completions after {timeout} us", ct.name, ct.completions())));
            }
            if !warned && waited >= Duration::from_secs(30) {
                warned = true;
                nrt_core::log::write(nrt_core::log::Level::Warn, nrt_core::log::Module::Nrt, "nrt_tensor_check_output_completion", format_args!("still waiting for tensor {:?} after 30 s", ct.name));
            }
            // Block until some tensor's count moves (or the next deadline:
            // the caller's timeout or the 30 s warning).
            let next = match limit {
                Some(l) => l.saturating_sub(waited),
                None if !warned => Duration::from_secs(30).saturating_sub(waited),
                None => Duration::from_secs(3600),
            };
            nrt_core::tensor::OUTPUT_COMPLETIONS.wait(seen, next.max(Duration::from_micros(1)));
        }
    })
}

/// `nrt_tensor_reset_output_completion`: counter back to 0.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_tensor_reset_output_completion(t: *mut c_void) -> NRT_STATUS {
    call("nrt_tensor_reset_output_completion", || {
        tensor(t)?.reset_completions();
        Ok(())
    })
}

/// `nrt_allocate_tensor_set`: a new empty name -> tensor map.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_allocate_tensor_set(result: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_allocate_tensor_set", || {
        global::hosts()?;
        non_null(result, "result")?;
        let h = SETS.insert(CTensorSet::default());
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(result, h as *mut c_void) };
        Ok(())
    })
}

/// `nrt_destroy_tensor_set`: frees the set (not its tensors) and NULLs the
/// caller's pointer.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_destroy_tensor_set(set: *mut *mut c_void) {
    call("nrt_destroy_tensor_set", || {
        non_null(set, "tensor_set")?;
        // SAFETY: checked non-NULL.
        let h = unsafe { *set };
        if h.is_null() {
            return Ok(());
        }
        SETS.remove(h as usize)?;
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(set, std::ptr::null_mut()) };
        Ok(())
    });
}

/// `nrt_add_tensor_to_tensor_set`: adds or replaces by name.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_add_tensor_to_tensor_set(set: *mut c_void, name: *const c_char, t: *mut c_void) -> NRT_STATUS {
    call("nrt_add_tensor_to_tensor_set", || {
        global::hosts()?;
        let s = SETS.get(set as usize)?;
        // SAFETY: C string per the API.
        let name = unsafe { ptr::string(name, "tensor_name") }?;
        TENSORS.get(t as usize)?;
        let mut e = s.entries.lock().unwrap_or_else(|e| e.into_inner());
        match e.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = t as usize,
            None => e.push((name, t as usize)),
        }
        Ok(())
    })
}

/// `nrt_get_tensor_from_tensor_set`: NRT_FAILURE (output untouched) when
/// the name is missing.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_tensor_from_tensor_set(set: *mut c_void, name: *const c_char, t: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_get_tensor_from_tensor_set", || {
        global::hosts()?;
        let s = SETS.get(set as usize)?;
        // SAFETY: C string per the API.
        let name = unsafe { ptr::string(name, "tensor_name") }?;
        non_null(t, "tensor")?;
        let found = s.entries.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(n, _)| *n == name).map(|(_, h)| *h);
        let h = found.ok_or_else(|| NrtError::failure(format!("tensor set has no tensor named {name:?}")))?;
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(t, h as *mut c_void) };
        Ok(())
    })
}

crate::symbols::versioned!("NRT_2.0.0":
    nrt_tensor_allocate,
    nrt_tensor_free,
    nrt_tensor_read,
    nrt_tensor_write,
    nrt_tensor_read_batch,
    nrt_tensor_write_batch,
    nrt_tensor_copy,
    nrt_tensor_get_size,
    nrt_tensor_get_lnc_index,
    nrt_tensor_memset,
    nrt_tensor_allocate_empty,
    nrt_tensor_attach_buffer,
    nrt_tensor_allocate_slice,
    nrt_tensor_get_va,
    nrt_tensor_get_device_allocation_info,
    nrt_tensor_check_output_completion,
    nrt_tensor_reset_output_completion,
    nrt_allocate_tensor_set,
    nrt_destroy_tensor_set,
    nrt_add_tensor_to_tensor_set,
    nrt_get_tensor_from_tensor_set,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_header() {
        assert_eq!(size_of::<BatchOpC>(), 24);
        assert_eq!(size_of::<BatchC>(), 24);
        assert_eq!(size_of::<DeviceAllocationInfoC>(), 24);
    }
}
