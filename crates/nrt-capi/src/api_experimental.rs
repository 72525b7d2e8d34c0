//! nrt_experimental.h: model tensor info, instance count and model info,
//! pool-engine ucode, memcpy into mapped memory, drain, the on-demand OOM
//! report and the NCCL net plugin handle. Its collectives (`nrt_barrier`,
//! `nrt_all_gather`) are in `api_cc`, its trace calls in `api_profile`.

use crate::api_core::copy_versioned;
use crate::global::{self, MODELS, TENSORS};
use crate::ptr::{self, non_null};
use crate::shim::{call, value};
use crate::status::NRT_STATUS;
use nrt_core::log::{self, Level, Module};
use nrt_core::{NrtError, NrtResult};
use std::alloc::Layout;
use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

/// `NRT_TENSOR_NAME_MAX`.
pub const TENSOR_NAME_MAX: usize = 256;

/// `nrt_tensor_info_t` (296 bytes).
#[repr(C)]
pub struct TensorInfoC {
    /// Name, NUL-terminated.
    pub name: [c_char; TENSOR_NAME_MAX],
    /// 0 input, 1 output.
    pub usage: u32,
    /// Bytes.
    pub size: usize,
    /// `nrt_dtype_t` hardware code.
    pub dtype: u32,
    /// Dimensions (owned by the array).
    pub shape: *mut u32,
    /// Number of dimensions.
    pub ndim: u32,
}

/// `nrt_model_info_t` (4 bytes, append-only).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ModelInfoC {
    /// Logical core of the model.
    pub vnc: u32,
}

/// `nrt_ucode_img`.
#[repr(C)]
pub struct UcodeImgC {
    /// Image bytes.
    pub bin: *mut u8,
    /// Image size.
    pub size: usize,
}

/// `nrt_ucode_info`.
#[repr(C)]
pub struct UcodeInfoC {
    /// IRAM image.
    pub iram: UcodeImgC,
    /// DRAM image.
    pub dram: UcodeImgC,
}

/// The `nrt_dtype_t` a NEFF dtype name is reported as (the element-type
/// table's; 0, NRT_DTYPE_UNKNOWN, for a name no layer knows).
pub fn dtype_code(name: &str) -> u32 {
    nrt_isa::dtype::element_type(name).map_or(0, |t| u32::from(t.dtype.code()))
}

/// Arrays handed out by `nrt_get_model_tensor_info`, so a foreign pointer
/// passed to the free is refused.
static INFO_ARRAYS: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn info_layout(n: usize) -> NrtResult<Layout> {
    let bytes = n.checked_mul(size_of::<TensorInfoC>()).and_then(|b| b.checked_add(8)).ok_or_else(|| NrtError::resource("tensor info too large"))?;
    Layout::from_size_align(bytes, 8).map_err(|e| NrtError::resource(format!("tensor info layout: {e}")))
}

/// `nrt_get_model_tensor_info`: inputs then outputs, allocated by the
/// library; free with `nrt_free_model_tensor_info`.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_model_tensor_info(model: *mut c_void, tensor_info: *mut *mut c_void) -> NRT_STATUS {
    call("nrt_get_model_tensor_info", || {
        let h = global::hosts()?;
        let m = MODELS.get(model as usize)?;
        non_null(tensor_info, "tensor_info")?;
        let (ins, outs) = h.tensor_info(&m)?;
        let all: Vec<(u32, &nrt_neff::TensorSignature)> = ins.iter().map(|s| (0, s)).chain(outs.iter().map(|s| (1, s))).collect();
        let layout = info_layout(all.len())?;
        // SAFETY: non-zero size (>= 8 bytes), valid alignment.
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        if base.is_null() {
            return Err(NrtError::resource("out of host memory for tensor info"));
        }
        // SAFETY: the block starts with the u64 count, then the entries.
        unsafe {
            base.cast::<u64>().write(all.len() as u64);
            let entries = base.add(8).cast::<TensorInfoC>();
            for (i, (usage, sig)) in all.iter().enumerate() {
                let dims: Box<[u32]> = sig.shape.iter().map(|&d| u32::try_from(d).unwrap_or(u32::MAX)).collect();
                let ndim = dims.len() as u32;
                let shape = Box::into_raw(dims).cast::<u32>();
                let mut e = TensorInfoC { name: [0; TENSOR_NAME_MAX], usage: *usage, size: sig.size_bytes().unwrap_or(0) as usize, dtype: dtype_code(&sig.dtype), shape, ndim };
                ptr::fill_chars(&mut e.name, &sig.name);
                entries.add(i).write(e);
            }
        }
        INFO_ARRAYS.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashSet::new).insert(base as usize);
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(tensor_info, base.cast::<c_void>()) };
        Ok(())
    })
}

/// `nrt_free_model_tensor_info`: frees an array from the call above
/// (anything else is NRT_INVALID_HANDLE).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_free_model_tensor_info(tensor_info: *mut c_void) -> NRT_STATUS {
    call("nrt_free_model_tensor_info", || {
        non_null(tensor_info, "tensor_info")?;
        let known = INFO_ARRAYS.lock().unwrap_or_else(|e| e.into_inner()).as_mut().is_some_and(|s| s.remove(&(tensor_info as usize)));
        if !known {
            return Err(NrtError::new(nrt_core::NrtStatus::InvalidHandle, "tensor_info was not returned by nrt_get_model_tensor_info (or was freed already)"));
        }
        let base = tensor_info.cast::<u8>();
        // SAFETY: the block was built by nrt_get_model_tensor_info: count,
        // entries whose shapes are boxed slices of `ndim` u32.
        unsafe {
            let n = base.cast::<u64>().read() as usize;
            let entries = base.add(8).cast::<TensorInfoC>();
            for i in 0..n {
                let e = &*entries.add(i);
                drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(e.shape, e.ndim as usize)));
            }
            std::alloc::dealloc(base, info_layout(n)?);
        }
        Ok(())
    })
}

/// `nrt_get_model_instance_count`: the staged copies of the model
/// (`Runtime::model_instance_count`).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_model_instance_count(model: *mut c_void, instance_count: *mut u32) -> NRT_STATUS {
    call("nrt_get_model_instance_count", || {
        let h = global::hosts()?;
        let m = MODELS.get(model as usize)?;
        non_null(instance_count, "instance_count")?;
        let n = h.rt.model_instance_count(&*h.model(&m)?);
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(instance_count, n) };
        Ok(())
    })
}

/// `nrt_get_model_info`: size-versioned (copies min(in, ours), reports ours).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_model_info(model: *const c_void, info: *mut ModelInfoC, info_size_in: usize, info_size_out: *mut usize) -> NRT_STATUS {
    call("nrt_get_model_info", || {
        global::hosts()?;
        let m = MODELS.get(model as usize)?;
        non_null(info, "info")?;
        non_null(info_size_out, "info_size_out")?;
        // SAFETY: the caller gives `info_size_in` bytes; out checked.
        unsafe {
            copy_versioned(info.cast(), info_size_in, &ModelInfoC { vnc: m.vnc });
            ptr::write(info_size_out, size_of::<ModelInfoC>());
        }
        Ok(())
    })
}

/// `nrt_set_pool_eng_ucode`: registers the POOL engine's Q7 image
/// ({IRAM, DRAM}) for the next `nrt_init`, where it silently replaces the
/// stock image. Accepted only before init: NRT_UNINITIALIZED (13) while
/// initialised and NRT_CLOSED (14) after `nrt_close`, as libnrt.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_set_pool_eng_ucode(ucode_info: *const UcodeInfoC) -> NRT_STATUS {
    call("nrt_set_pool_eng_ucode", || {
        non_null(ucode_info, "ucode_info")?;
        // SAFETY: checked non-NULL; the images are caller memory.
        let (iram, dram) = unsafe {
            let u = &*ucode_info;
            (ptr::bytes(u.iram.bin.cast(), u.iram.size, "iram.bin")?.to_vec(), ptr::bytes(u.dram.bin.cast(), u.dram.size, "dram.bin")?.to_vec())
        };
        global::set_pool_eng_ucode(nrt_core::custom_ops::Q7Image { iram, dram })?;
        log::write(Level::Debug, Module::Nrt, "nrt_set_pool_eng_ucode", format_args!("pool-engine ucode registered"));
        Ok(())
    })
}

/// `nrt_memcpy_to_device`: copies into memory this runtime mapped for the
/// caller: HBM mapped under NEURON_RT_MAP_HBM (written through the device,
/// so an execution or `nrt_tensor_read` sees it, and the device drops
/// what it cached of those bytes), or a host tensor's buffer (a range
/// `nrt_tensor_get_va` returned); other destinations are NRT_INVALID.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_memcpy_to_device(dest: *mut c_void, src: *const c_void, size: usize) -> NRT_STATUS {
    call("nrt_memcpy_to_device", || {
        let h = global::hosts()?;
        non_null(dest, "dest")?;
        // SAFETY: the caller gives `size` readable bytes.
        let data = unsafe { ptr::bytes(src, size, "src") }?;
        let d = dest as usize;
        if h.rt.memcpy_to_device(d, data)? {
            return Ok(());
        }
        let target = TENSORS.values().into_iter().find_map(|t| {
            let va = t.va()?;
            let end = va.checked_add(t.size() as usize)?;
            (d >= va && d.checked_add(size)? <= end).then(|| (t, d - va))
        });
        let (t, off) = target.ok_or_else(|| NrtError::invalid(format!("dest {d:#x} (+{size} bytes) is not inside memory mapped by this runtime")))?;
        t.write(off as u64, data)
    })
}

fn check_vnc(vnc: i32) -> NrtResult<()> {
    let h = global::hosts()?;
    let v = u32::try_from(vnc).map_err(|_| NrtError::invalid(format!("vnc {vnc} is not a logical core")))?;
    h.rt.vcore(v).map(|_| ())
}

/// `nrt_async_drain_queued_execs`: a barrier: returns when every request
/// queued so far on `vnc`'s execution units (implicit async executions
/// and `nrta_*` requests) has completed.
#[unsafe(no_mangle)]
pub extern "C" fn nrt_async_drain_queued_execs(vnc: i32) -> NRT_STATUS {
    call("nrt_async_drain_queued_execs", || {
        check_vnc(vnc)?;
        let h = global::hosts()?;
        h.xus.drain(vnc as u32)
    })
}

/// The network plugin libnrt hands to its collectives library: the
/// aws-ofi-nccl plugin of the `aws-neuronx-collectives` package.
pub const NCCL_NET_LIBRARY: &str = "libnccom-net.so";

/// `nrt_get_libnccl_net`: as libnrt, opens the NCCL network plugin
/// (`libnccom-net.so`, found through the loader's search path) and returns
/// its `dlopen` handle, from which the caller looks up
/// `ncclNetPlugin_v6`. Without the plugin it returns NULL with `*err = 1`
/// and the loader's reason plus the package to install in `err_msg`.
/// nrt-rs's own collectives do not go through it (they use libfabric
/// directly, docs/collectives.md).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_libnccl_net(err: *mut c_int, err_msg: *mut c_char, err_msg_size: usize) -> *mut c_void {
    let name = std::ffi::CString::new(NCCL_NET_LIBRARY).expect("no NUL in the library name");
    // SAFETY: a NUL-terminated name; dlopen has no other precondition.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    let failed = handle.is_null();
    let msg = if failed {
        // SAFETY: dlerror returns NULL or a NUL-terminated string owned by
        // the loader, read before any other dl call on this thread.
        let why = unsafe {
            let e = libc::dlerror();
            if e.is_null() { "not found".to_string() } else { std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned() }
        };
        format!("Error opening {NCCL_NET_LIBRARY}: {why} (the NCCL network plugin of package aws-neuronx-collectives)")
    } else {
        String::new()
    };
    value("nrt_get_libnccl_net", || {
        if !err.is_null() {
            // SAFETY: non-NULL int pointer from the caller.
            unsafe { ptr::write(err, c_int::from(failed)) };
        }
        if !err_msg.is_null() && err_msg_size > 0 {
            // SAFETY: the caller gives `err_msg_size` bytes.
            let dst = unsafe { std::slice::from_raw_parts_mut(err_msg, err_msg_size) };
            ptr::fill_chars(dst, &msg);
        }
        if failed { Err(NrtError::failure(msg.clone())) } else { Ok(()) }
    });
    handle
}

crate::symbols::versioned!("NRT_2.0.0":
    nrt_get_model_tensor_info,
    nrt_free_model_tensor_info,
    nrt_get_model_instance_count,
    nrt_get_model_info,
    nrt_set_pool_eng_ucode,
    nrt_memcpy_to_device,
    nrt_async_drain_queued_execs,
    nrt_get_libnccl_net,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_header() {
        assert_eq!(size_of::<TensorInfoC>(), 296);
        assert_eq!(std::mem::offset_of!(TensorInfoC, size), 264);
        assert_eq!(std::mem::offset_of!(TensorInfoC, shape), 280);
        assert_eq!(size_of::<UcodeInfoC>(), 32);
        assert_eq!(size_of::<ModelInfoC>(), 4);
    }

    #[test]
    fn dtype_codes() {
        assert_eq!(dtype_code("float32"), 0xA);
        assert_eq!(dtype_code("bfloat16"), 6);
        assert_eq!(dtype_code("mystery"), 0);
        assert_eq!(dtype_code("float8_e3m4"), 0xD);
        assert_eq!(dtype_code("bool"), 0x3);
    }
}
