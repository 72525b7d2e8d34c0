//! nrt.h's queries about the instance and about device memory mapped into
//! the process: host device ids and the routing-id map (the instance's
//! topology, `nrt_hal::topology`), HBM regions mapped under
//! NEURON_RT_MAP_HBM, the dma-buf descriptor of mapped HBM and the EFA
//! NIC attached to the device holding an address (`nrt::mapped`).
//! `nrt_memcpy_to_device` is in `api_experimental`, by its header.

use crate::global;
use crate::ptr::{self, non_null};
use crate::shim::call;
use crate::status::NRT_STATUS;
use nrt_core::{NrtError, NrtStatus};
use std::ffi::{c_char, c_int, c_void};
use std::os::fd::IntoRawFd;

/// `nrt_get_hbm_mmap_va`: HBM region `hbm_idx` of device `device_id` as
/// mapped into the process (NEURON_RT_MAP_HBM): its address and size.
/// NRT_INVALID_HANDLE past the last region ("no more regions", which ends
/// a client's enumeration); NRT_INVALID for an unknown device, a negative
/// index, or HBM not mapped (the interface is not available). Outputs are
/// written only on success.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_hbm_mmap_va(device_id: c_int, hbm_idx: c_int, addr: *mut *mut c_void, size: *mut usize) -> NRT_STATUS {
    call("nrt_get_hbm_mmap_va", || {
        let h = global::hosts()?;
        non_null(addr, "addr")?;
        non_null(size, "size")?;
        let d = usize::try_from(device_id)
            .ok()
            .filter(|d| *d < h.rt.devices().len())
            .ok_or_else(|| NrtError::invalid(format!("neuron device {device_id} does not exist; the instance has {}", h.rt.devices().len())))?;
        let idx = u32::try_from(hbm_idx).map_err(|_| NrtError::invalid(format!("HBM index {hbm_idx} is negative")))?;
        let w = h.rt.hbm_window(d, idx)?.ok_or_else(|| {
            NrtError::new(NrtStatus::InvalidHandle, format!("neuron device {device_id} has no HBM region {hbm_idx} (no more regions)"))
        })?;
        let len = usize::try_from(w.len).map_err(|_| NrtError::failure("HBM region larger than the address space"))?;
        // SAFETY: checked non-NULL.
        unsafe {
            ptr::write(addr, w.va as *mut c_void);
            ptr::write(size, len);
        }
        Ok(())
    })
}

/// `nrt_host_device_id_get`: simulated devices are not containerised, so
/// the host id of device `neuron_dev` is `neuron_dev` itself.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_host_device_id_get(neuron_dev: c_int, host_device_id: *mut u32) -> NRT_STATUS {
    call("nrt_host_device_id_get", || {
        let h = global::hosts()?;
        non_null(host_device_id, "host_device_id")?;
        let d = usize::try_from(neuron_dev).ok().filter(|d| *d < h.rt.devices().len()).ok_or_else(|| {
            NrtError::invalid(format!("neuron device {neuron_dev} does not exist; the instance has {}", h.rt.devices().len()))
        })?;
        let id = h.rt.devices()[d].info().device_index;
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(host_device_id, id) };
        Ok(())
    })
}

/// `nrt_host_device_id_rid_map_get`: the instance's routing ids indexed
/// by host device id (the driver's map, `nrt_hal::topology`). `*count`
/// is the table's capacity on entry and the entries written on return;
/// a table smaller than the instance's device count is NRT_INVALID
/// (nothing written).
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_host_device_id_rid_map_get(count: *mut u32, host_did_to_rid_map: *mut u32) -> NRT_STATUS {
    call("nrt_host_device_id_rid_map_get", || {
        let h = global::hosts()?;
        non_null(count, "count")?;
        non_null(host_did_to_rid_map, "host_did_to_rid_map")?;
        let ids: Vec<u32> = h.rt.instance_topology().routing_ids().collect();
        // SAFETY: checked non-NULL.
        let capacity = unsafe { count.read_unaligned() };
        if (capacity as usize) < ids.len() {
            return Err(NrtError::invalid(format!("the routing-id table holds {capacity} entries; the instance has {} devices", ids.len())));
        }
        // SAFETY: non-NULL, and the caller's table holds `capacity` entries.
        unsafe {
            for (i, r) in ids.iter().enumerate() {
                ptr::write(host_did_to_rid_map.add(i), *r);
            }
            ptr::write(count, ids.len() as u32);
        }
        Ok(())
    })
}

/// `nrt_get_dmabuf_fd`: a descriptor for `size` bytes of mapped HBM at
/// `va`, which the caller closes. On the simulator it is the HBM
/// channel's memfd opened anew, positioned at the channel offset of `va`
/// (docs/c-api.md says how that differs from a dma-buf). NRT_INVALID for
/// a range outside mapped HBM or of size 0.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_dmabuf_fd(va: u64, size: u64, fd: *mut c_int) -> NRT_STATUS {
    call("nrt_get_dmabuf_fd", || {
        let h = global::hosts()?;
        non_null(fd, "fd")?;
        let owned = h.rt.dmabuf_fd(va, size)?;
        // SAFETY: checked non-NULL; the caller takes the descriptor.
        unsafe { ptr::write(fd, owned.into_raw_fd()) };
        Ok(())
    })
}

/// `nrt_get_attached_efa_bdf`: the PCI address (`0000:bb:dd.f`) of the
/// EFA NIC attached to the device holding mapped HBM address `va`.
/// `*len` is the buffer's size (with the NUL) on entry and the string's
/// length (without it) on return; a buffer too small is NRT_RESOURCE.
/// NRT_FAILURE when `va` is not mapped device memory or no EFA NIC is
/// attached there.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_attached_efa_bdf(va: *const c_void, efa_bdf: *mut c_char, len: *mut usize) -> NRT_STATUS {
    call("nrt_get_attached_efa_bdf", || {
        let h = global::hosts()?;
        non_null(efa_bdf, "efa_bdf")?;
        non_null(len, "len")?;
        let text = h.rt.attached_efa_bdf(va as usize)?.to_string();
        // SAFETY: checked non-NULL.
        let room = unsafe { len.read_unaligned() };
        if room <= text.len() {
            return Err(NrtError::new(NrtStatus::Resource, format!("the BDF {text:?} needs {} bytes with its NUL; the buffer has {room}", text.len() + 1)));
        }
        // SAFETY: the caller's buffer holds `room` > text.len() bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), efa_bdf.cast::<u8>(), text.len());
            efa_bdf.add(text.len()).write(0);
            ptr::write(len, text.len());
        }
        Ok(())
    })
}

crate::symbols::versioned!("NRT_2.0.0":
    nrt_get_hbm_mmap_va,
    nrt_host_device_id_get,
    nrt_get_dmabuf_fd,
    nrt_host_device_id_rid_map_get,
    nrt_get_attached_efa_bdf,
);
