//! nec.h: the runtime side of Neuron Elastic Collectives, over the
//! runtime core's `nrt::nec` (MLA / routing-id maps over the topology
//! table, pods, semaphore doorbells, dynamic size tables).
//!
//! The header mixes return conventions; failures are logged and answered
//! with each function's value for "none": NRT_STATUS functions their
//! status, `int` ones -1 (the MLA-index ones `NEC_UNKNOWN_MLA_DEV`),
//! `size_t` ones 0, `bool` false, `void` ones nothing. Outputs are
//! written only on success.

use crate::global::{self, Hosts};
use crate::ptr::{self, non_null};
use crate::shim::{call, value};
use crate::status::NRT_STATUS;
use nrt_core::nec::{DynRow, DynamicSizes, MlaMap, PodType};
use nrt_core::{NrtError, NrtResult};
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex};

/// `NEC_UNKNOWN_MLA_DEV`: an MLA index that names no device.
pub const UNKNOWN_MLA_DEV: c_int = -3;

/// `enc_host_mem_t` (32 bytes).
#[repr(C)]
pub struct EncHostMem {
    /// The allocation's handle (unused here).
    pub mem_handle: *mut c_void,
    /// Host address of the bytes.
    pub va: *mut c_void,
    /// Device-visible address (unused here).
    pub pa: u64,
    /// Bytes at `va`.
    pub size: usize,
}

/// `nec_version_info_t`'s fixed part (56 bytes).
#[repr(C)]
pub struct NecVersionInfo {
    /// Major version.
    pub major: u64,
    /// Minor version.
    pub minor: u64,
    /// Patch.
    pub patch: u64,
    /// Maintenance.
    pub maintenance: u64,
    /// Git hash prefix, NUL-terminated.
    pub git_hash: [c_char; 16],
    /// Compatibility version.
    pub compatibility_version: u64,
}

/// The MLA maps `nec_build_port_and_rid_map` gave, by local device, for
/// the runtime they were built under (dropped when it changes).
static MLA_MAPS: Mutex<Option<(usize, BTreeMap<u32, MlaMap>)>> = Mutex::new(None);

/// The MLA map device `local` sees: the one built for it, else the identity.
fn mla_map(h: &Arc<Hosts>, local: c_int) -> NrtResult<MlaMap> {
    let t = h.rt.instance_topology();
    let d = u32::try_from(local).ok().filter(|d| *d < t.devices).ok_or_else(|| NrtError::invalid(format!("local device {local} is not a device of this instance (0..{})", t.devices)))?;
    let key = Arc::as_ptr(&h.rt) as usize;
    let maps = MLA_MAPS.lock().unwrap_or_else(|e| e.into_inner());
    Ok(match &*maps {
        Some((k, m)) if *k == key => m.get(&d).cloned(),
        _ => None,
    }
    .unwrap_or_else(|| MlaMap::identity(&t)))
}

/// `nec_inc_semaphore`: a store of `val` to a semaphore increment
/// register. An address of the runtime's doorbell window adds `val` to
/// that simulated semaphore; any other address gets the plain volatile
/// store the register write is. NULL is logged and ignored.
///
/// # Safety
/// `sem_inc_addr` must be NULL, a doorbell of the runtime's, or a
/// writable, aligned `uint32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_inc_semaphore(sem_inc_addr: *mut u32, val: u32) {
    value("nec_inc_semaphore", || {
        non_null(sem_inc_addr, "sem_inc_addr")?;
        if let Ok(h) = global::hosts()
            && h.rt.doorbells().ring(sem_inc_addr as usize, val)?
        {
            return Ok(());
        }
        if !(sem_inc_addr as usize).is_multiple_of(4) {
            return Err(NrtError::invalid(format!("semaphore register address {sem_inc_addr:p} is not 4-byte aligned")));
        }
        // SAFETY: the caller gives a writable, aligned register word.
        unsafe { std::ptr::write_volatile(sem_inc_addr, val) };
        Ok(())
    });
}

/// The dynamic size table of `dyn_input` for `rank_n` ranks.
///
/// # Safety
/// `dyn_input` must be NULL or point to an `enc_host_mem_t` whose `va`
/// holds `size` accessible bytes.
unsafe fn dyn_table<'a>(dyn_input: *mut EncHostMem, rank_n: c_int) -> NrtResult<DynamicSizes<'a>> {
    non_null(dyn_input, "dyn_input")?;
    // SAFETY: checked non-NULL; the caller's struct.
    let m = unsafe { &*dyn_input };
    let n = usize::try_from(rank_n).unwrap_or(0);
    let need = DynamicSizes::bytes(n).min(m.size);
    // SAFETY: the caller's `va` holds `size` bytes; `need` <= size.
    let bytes = unsafe { ptr::bytes_mut(m.va, need, "dyn_input->va") }?;
    DynamicSizes::new(bytes, rank_n)
}

/// One row entry of a dynamic size table in bytes, or 0 (logged).
///
/// # Safety
/// As [`dyn_table`].
unsafe fn dyn_bytes(api: &str, dyn_input: *mut EncHostMem, row: DynRow, elem: usize, rank: c_int, rank_n: c_int) -> usize {
    value(api, || {
        if elem == 0 {
            return Err(NrtError::invalid("data_type_sz is 0"));
        }
        // SAFETY: forwarded caller contract.
        unsafe { dyn_table(dyn_input, rank_n) }?.bytes_of(row, rank, elem)
    })
    .unwrap_or(0)
}

/// `nec_get_dynamic_send_size_bytes`: bytes sent to `dst_rank`.
///
/// # Safety
/// As the header documents: `dyn_input` NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_get_dynamic_send_size_bytes(dyn_input: *mut EncHostMem, data_type_sz: usize, dst_rank: c_int, rank_n: c_int) -> usize {
    // SAFETY: forwarded caller contract.
    unsafe { dyn_bytes("nec_get_dynamic_send_size_bytes", dyn_input, DynRow::SendCount, data_type_sz, dst_rank, rank_n) }
}

/// `nec_get_dynamic_send_offset_bytes`: where the send to `dst_rank`
/// starts in the send buffer.
///
/// # Safety
/// As the header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_get_dynamic_send_offset_bytes(dyn_input: *mut EncHostMem, data_type_sz: usize, dst_rank: c_int, rank_n: c_int) -> usize {
    // SAFETY: forwarded caller contract.
    unsafe { dyn_bytes("nec_get_dynamic_send_offset_bytes", dyn_input, DynRow::SendOffset, data_type_sz, dst_rank, rank_n) }
}

/// `nec_get_dynamic_recv_offset_bytes`: where the receive from
/// `src_rank` lands in the receive buffer.
///
/// # Safety
/// As the header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_get_dynamic_recv_offset_bytes(dyn_input: *mut EncHostMem, data_type_sz: usize, src_rank: c_int, rank_n: c_int) -> usize {
    // SAFETY: forwarded caller contract.
    unsafe { dyn_bytes("nec_get_dynamic_recv_offset_bytes", dyn_input, DynRow::RecvOffset, data_type_sz, src_rank, rank_n) }
}

/// `nec_set_recv_size_bytes`: records the bytes received from `src_rank`.
///
/// # Safety
/// As the header documents.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_set_recv_size_bytes(dyn_input: *mut EncHostMem, recv_size_bytes: usize, data_type_sz: usize, src_rank: c_int, rank_n: c_int) {
    value("nec_set_recv_size_bytes", || {
        // SAFETY: forwarded caller contract.
        unsafe { dyn_table(dyn_input, rank_n) }?.set_bytes(DynRow::RecvCount, src_rank, recv_size_bytes, data_type_sz)
    });
}

/// `nec_get_device_count`: the instance's device count; the first
/// `array_size` host device ids are written to the array. -1 before init
/// or for a NULL array with a size.
///
/// # Safety
/// `available_devices_array` must hold `array_size` ints (or be NULL with 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_get_device_count(available_devices_array: *mut c_int, array_size: u32) -> c_int {
    value("nec_get_device_count", || {
        let h = global::hosts()?;
        if array_size > 0 {
            non_null(available_devices_array, "available_devices_array")?;
        }
        let ids: Vec<u32> = h.rt.devices().iter().map(|d| d.info().device_index).collect();
        for (i, id) in ids.iter().take(array_size as usize).enumerate() {
            // SAFETY: the caller's array holds `array_size` entries.
            unsafe { ptr::write(available_devices_array.add(i), *id as c_int) };
        }
        c_int::try_from(ids.len()).map_err(|_| NrtError::failure("device count overflows an int"))
    })
    .unwrap_or(-1)
}

/// `nec_get_device_pci_bdf`: device `neuron_dev`'s PCI address from the
/// topology table; 0, or -1 (outputs untouched).
///
/// # Safety
/// Pointer arguments must be NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_get_device_pci_bdf(neuron_dev: c_int, domain: *mut u32, bus_num: *mut u32, pci_slot: *mut u8, dev_func: *mut u8) -> c_int {
    value("nec_get_device_pci_bdf", || {
        let h = global::hosts()?;
        non_null(domain, "domain")?;
        non_null(bus_num, "bus_num")?;
        non_null(pci_slot, "pci_slot")?;
        non_null(dev_func, "dev_func")?;
        let t = h.rt.instance_topology();
        let d = u32::try_from(neuron_dev).ok().filter(|d| *d < t.devices).ok_or_else(|| NrtError::invalid(format!("neuron device {neuron_dev} does not exist; the instance has {}", t.devices)))?;
        let bdf = t.device_bdf(d);
        // SAFETY: checked non-NULL.
        unsafe {
            ptr::write(domain, u32::from(bdf.domain));
            ptr::write(bus_num, u32::from(bdf.bus));
            ptr::write(pci_slot, bdf.device);
            ptr::write(dev_func, bdf.function);
        }
        Ok(0)
    })
    .unwrap_or(-1)
}

/// `nec_get_virtual_core_size`: physical cores per logical core.
///
/// # Safety
/// Pointer arguments must be NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_get_virtual_core_size(virtual_core_size: *mut u32) -> NRT_STATUS {
    call("nec_get_virtual_core_size", || {
        let h = global::hosts()?;
        non_null(virtual_core_size, "virtual_core_size")?;
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(virtual_core_size, h.rt.topology().lnc()) };
        Ok(())
    })
}

/// `nec_get_version_info`: the libnrt release whose API we implement (as
/// `nrt_get_version`), the first 15 hex digits of our git hash, and
/// compatibility version 0 (libnrt's numbering is not published). Works
/// in any state.
///
/// # Safety
/// `version_info` must be NULL or hold the 56-byte fixed part.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_get_version_info(version_info: *mut NecVersionInfo) -> NRT_STATUS {
    call("nec_get_version_info", || {
        non_null(version_info, "version_info")?;
        let (major, minor) = crate::api_core::LIBNRT_ABI_VERSION;
        let mut v = NecVersionInfo { major, minor, patch: 0, maintenance: 0, git_hash: [0; 16], compatibility_version: 0 };
        ptr::fill_chars(&mut v.git_hash, &nrt_core::runtime::version().git_sha);
        // SAFETY: checked non-NULL; the caller's struct.
        unsafe { ptr::write(version_info, v) };
        Ok(())
    })
}

/// `nec_build_port_and_rid_map`: device `local_nec_dev_id` numbers the
/// instance's devices from now on as `mla_indexes[i]` ->
/// `host_device_ids[i]` (a bad list changes nothing).
///
/// # Safety
/// Both arrays must hold `count` ints.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_build_port_and_rid_map(local_nec_dev_id: c_int, mla_indexes: *mut c_int, host_device_ids: *mut c_int, count: c_int) -> NRT_STATUS {
    call("nec_build_port_and_rid_map", || {
        let h = global::hosts()?;
        non_null(mla_indexes, "mla_indexes")?;
        non_null(host_device_ids, "host_device_ids")?;
        let t = h.rt.instance_topology();
        let local = u32::try_from(local_nec_dev_id).ok().filter(|d| *d < t.devices).ok_or_else(|| NrtError::invalid(format!("local device {local_nec_dev_id} is not a device of this instance (0..{})", t.devices)))?;
        let n = usize::try_from(count).ok().filter(|n| *n <= t.devices as usize).ok_or_else(|| NrtError::invalid(format!("count {count} is not in 0..={}", t.devices)))?;
        // SAFETY: the caller's arrays hold `count` entries.
        let pairs: Vec<(i32, i32)> = (0..n).map(|i| unsafe { (*mla_indexes.add(i), *host_device_ids.add(i)) }).collect();
        let map = MlaMap::build(&t, &pairs)?;
        let key = Arc::as_ptr(&h.rt) as usize;
        let mut maps = MLA_MAPS.lock().unwrap_or_else(|e| e.into_inner());
        if !matches!(&*maps, Some((k, _)) if *k == key) {
            *maps = Some((key, BTreeMap::new()));
        }
        if let Some((_, m)) = maps.as_mut() {
            m.insert(local, map);
        }
        Ok(())
    })
}

/// `nec_is_mla_available`: whether MLA index `mla_idx` names a device.
#[unsafe(no_mangle)]
pub extern "C" fn nec_is_mla_available(local_nec_dev_id: c_int, mla_idx: c_int) -> bool {
    value("nec_is_mla_available", || Ok(mla_map(&global::hosts()?, local_nec_dev_id)?.device(mla_idx).is_some())).unwrap_or(false)
}

/// `nec_mla_idx_to_rid`: the routing id of MLA index `mla_idx`, or -1.
#[unsafe(no_mangle)]
pub extern "C" fn nec_mla_idx_to_rid(local_nec_dev_id: c_int, mla_idx: c_int) -> c_int {
    value("nec_mla_idx_to_rid", || {
        let h = global::hosts()?;
        Ok(mla_map(&h, local_nec_dev_id)?.to_rid(&h.rt.instance_topology(), mla_idx).map_or(-1, |r| r as c_int))
    })
    .unwrap_or(-1)
}

/// `nec_rid_to_mla_idx`: the MLA index of routing id `rid`, or
/// `NEC_UNKNOWN_MLA_DEV`.
#[unsafe(no_mangle)]
pub extern "C" fn nec_rid_to_mla_idx(local_nec_dev_id: c_int, rid: c_int) -> c_int {
    value("nec_rid_to_mla_idx", || {
        let h = global::hosts()?;
        Ok(mla_map(&h, local_nec_dev_id)?.from_rid(&h.rt.instance_topology(), rid).unwrap_or(UNKNOWN_MLA_DEV))
    })
    .unwrap_or(UNKNOWN_MLA_DEV)
}

/// `nec_get_peer_mla_idx`: the MLA index at the other end of link `port`
/// of `mla_idx`, or `NEC_UNKNOWN_MLA_DEV`.
#[unsafe(no_mangle)]
pub extern "C" fn nec_get_peer_mla_idx(local_nec_dev_id: c_int, mla_idx: c_int, port: c_int) -> c_int {
    value("nec_get_peer_mla_idx", || {
        let h = global::hosts()?;
        Ok(mla_map(&h, local_nec_dev_id)?.peer(&h.rt.instance_topology(), mla_idx, port).unwrap_or(UNKNOWN_MLA_DEV))
    })
    .unwrap_or(UNKNOWN_MLA_DEV)
}

/// `nec_get_p2p_pod_peer_node`: the node `port_distance` ports from
/// `node` in a point-to-point pod: `node` itself at distance 0 (0
/// returned), none otherwise (-1, nothing written), as the simulated
/// instance is a node outside any pod.
///
/// # Safety
/// `peer_node` must be NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_get_p2p_pod_peer_node(nec_dev_id: u32, node: c_int, port_distance: u32, peer_node: *mut c_int) -> c_int {
    value("nec_get_p2p_pod_peer_node", || {
        let h = global::hosts()?;
        non_null(peer_node, "peer_node")?;
        match nrt_core::nec::pod_peer_node(&h.rt.instance_topology(), nec_dev_id, node, port_distance)? {
            Some(p) => {
                // SAFETY: checked non-NULL.
                unsafe { ptr::write(peer_node, p) };
                Ok(0)
            }
            None => Ok(-1),
        }
    })
    .unwrap_or(-1)
}

/// `nec_pod_node_can_access_peer_node`: whether a device of one node
/// reaches a device of another directly (same node only: no pod).
///
/// # Safety
/// `can_access_peer` must be NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_pod_node_can_access_peer_node(
    pod_type: u32,
    local_rid: u32,
    local_node_id: u32,
    remote_rid: u32,
    remote_node_id: u32,
    can_access_peer: *mut c_int,
) -> NRT_STATUS {
    call("nec_pod_node_can_access_peer_node", || {
        let h = global::hosts()?;
        non_null(can_access_peer, "can_access_peer")?;
        let pod = PodType::from_code(pod_type)?;
        let ok = nrt_core::nec::pod_can_access(&h.rt.instance_topology(), pod, local_rid, local_node_id, remote_rid, remote_node_id)?;
        // SAFETY: checked non-NULL.
        unsafe { ptr::write(can_access_peer, c_int::from(ok)) };
        Ok(())
    })
}

/// `nec_ndl_printk`: the driver's kernel-log line; here the runtime log
/// at INFO (module HAL, the device portal) with `action`. NULL or a zero size is logged as
/// an error and ignored.
///
/// # Safety
/// `str` must hold `size` readable bytes (or a NUL before them).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn nec_ndl_printk(str: *mut c_char, size: u32, action: u32) {
    value("nec_ndl_printk", || {
        if size == 0 {
            return Err(NrtError::invalid("size is 0"));
        }
        // SAFETY: the caller gives `size` readable bytes.
        let bytes = unsafe { ptr::bytes(str.cast::<c_void>(), size as usize, "str") }?;
        let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
        let text = String::from_utf8_lossy(&bytes[..end]);
        nrt_core::log::write(nrt_core::log::Level::Info, nrt_core::log::Module::Hal, "nec_ndl_printk", format_args!("[action {action}] {}", text.trim_end()));
        Ok(())
    });
}

crate::symbols::versioned!("NRT_2.0.0":
    nec_inc_semaphore,
    nec_get_dynamic_send_size_bytes,
    nec_get_dynamic_send_offset_bytes,
    nec_get_dynamic_recv_offset_bytes,
    nec_set_recv_size_bytes,
    nec_get_device_count,
    nec_get_device_pci_bdf,
    nec_get_virtual_core_size,
    nec_get_version_info,
    nec_build_port_and_rid_map,
    nec_is_mla_available,
    nec_mla_idx_to_rid,
    nec_rid_to_mla_idx,
    nec_get_peer_mla_idx,
    nec_get_p2p_pod_peer_node,
    nec_pod_node_can_access_peer_node,
    nec_ndl_printk,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_c_structs_have_the_header_layout() {
        assert_eq!(std::mem::size_of::<EncHostMem>(), 32);
        assert_eq!(std::mem::size_of::<NecVersionInfo>(), 56);
        assert_eq!(std::mem::offset_of!(NecVersionInfo, compatibility_version), 48);
    }
}
