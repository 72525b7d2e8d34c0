//! Exports that need hardware the simulator does not have (dma-buf, EFA,
//! HBM mmap).
//! Each one is exported so clients link, and each returns a documented
//! status (NRT_FAILURE, output pointers untouched) with an error line
//! saying where it lands — never a crash and never a silent success.
//! The host device id query has real behaviour here (the collectives
//! exports are in `api_cc`).

use crate::global;
use crate::ptr::{self, non_null};
use crate::shim::call;
use crate::status::NRT_STATUS;
use nrt_core::NrtError;
use std::ffi::{c_char, c_int, c_void};

/// What the simulated devices cannot provide.
pub const NO_HARDWARE: &str = "not available on simulated devices (no dma-buf, EFA or host-mapped HBM)";

fn refuse(api: &str, why: &str) -> NRT_STATUS {
    call(api, || Err(NrtError::failure(format!("{api} is not supported in this release: {why}"))))
}

macro_rules! refused {
    ($why:expr; $( $name:ident ( $($ty:ty),* ) ; )*) => { $(
        #[doc = concat!("`", stringify!($name), "`: returns NRT_FAILURE and logs why (see the module docs).")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name($(_: $ty),*) -> NRT_STATUS { refuse(stringify!($name), $why) }
    )* };
}


refused! { NO_HARDWARE;
    nrt_get_dmabuf_fd(u64, u64, *mut c_int);
    nrt_host_device_id_rid_map_get(*mut u32, *mut u32);
    nrt_get_attached_efa_bdf(*const c_void, *mut c_char, *mut usize);
}

/// `nrt_get_hbm_mmap_va`: simulated HBM is not mapped into the process,
/// so there is no region at any index: NRT_INVALID_HANDLE, libnrt's
/// "no more regions" answer, which ends a client's enumeration loop at
/// once. Outputs are left untouched.
///
/// # Safety
/// Pointer arguments must be NULL or valid as the C header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nrt_get_hbm_mmap_va(device_id: c_int, hbm_idx: c_int, addr: *mut *mut c_void, size: *mut usize) -> NRT_STATUS {
    call("nrt_get_hbm_mmap_va", || {
        let h = global::hosts()?;
        non_null(addr, "addr")?;
        non_null(size, "size")?;
        if usize::try_from(device_id).map_or(true, |d| d >= h.rt.devices().len()) {
            return Err(NrtError::invalid(format!("neuron device {device_id} does not exist; the instance has {}", h.rt.devices().len())));
        }
        Err(NrtError::new(
            nrt_core::NrtStatus::InvalidHandle,
            format!("device {device_id} HBM region {hbm_idx}: no host-mapped HBM regions on simulated devices"),
        ))
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

crate::symbols::versioned!("NRT_2.0.0":
    nrt_get_hbm_mmap_va,
    nrt_host_device_id_get,
    nrt_get_dmabuf_fd,
    nrt_host_device_id_rid_map_get,
    nrt_get_attached_efa_bdf,
);
