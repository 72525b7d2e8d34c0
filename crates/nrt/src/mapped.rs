//! Device memory mapped into the process, and the calls that take host
//! addresses of it.
//!
//! Under NEURON_RT_MAP_HBM init maps every HBM channel of every device
//! ([`crate::memory::DeviceMemory::map_hbm`], the device-open `map_hbm`
//! of libnrt's driver layer). A device tensor's VA is then its bytes in
//! that window, and these calls work on such addresses:
//! `nrt_get_hbm_mmap_va` ([`Runtime::hbm_window`]), `nrt_memcpy_to_device`
//! ([`Runtime::memcpy_to_device`]), `nrt_get_dmabuf_fd`
//! ([`Runtime::dmabuf_fd`]) and `nrt_get_attached_efa_bdf`
//! ([`Runtime::attached_efa_bdf`]). The instance facts behind the last one
//! (and `nrt_host_device_id_rid_map_get`) are [`Runtime::instance_topology`].

use crate::runtime::Runtime;
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::{DeviceAddr, HalError, HostWindow, PciBdf, Topology};
use std::os::fd::OwnedFd;

/// What a mapped host address is: the device position and the device
/// address of its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappedAddr {
    /// Position of the device in the runtime's device list.
    pub device: usize,
    /// The device address.
    pub addr: DeviceAddr,
}

fn not_mapped(what: &str, va: usize, len: u64) -> NrtError {
    NrtError::invalid(format!("{what}: host address {va:#x} (+{len} bytes) is not inside HBM mapped into this process (mapped with NEURON_RT_MAP_HBM=1)"))
}

impl Runtime {
    /// The instance the devices belong to: its PCI addresses, routing
    /// ids, links and EFA NICs. In no-device mode, the pretended
    /// instance's.
    pub fn instance_topology(&self) -> Topology {
        match (&self.config().fake_instance, self.devices().first()) {
            (Some(f), _) => Topology::of(&f.name, f.arch, f.devices),
            (None, Some(d)) => d.info().topology,
            (None, None) => Topology::of("", nrt_hal::Arch::Trn2, 0),
        }
    }

    /// HBM region `hbm_idx` of the device at position `device` as mapped
    /// into the process, `None` past the last region (the header's "no
    /// more regions", NRT_INVALID_HANDLE). NRT_INVALID when the device
    /// does not exist or its HBM is not mapped (NEURON_RT_MAP_HBM off: the
    /// interface is not available).
    pub fn hbm_window(&self, device: usize, hbm_idx: u32) -> NrtResult<Option<HostWindow>> {
        let m = self.memory(device)?;
        let windows = m.hbm_windows().ok_or_else(|| {
            NrtError::invalid(format!("the HBM of neuron device {device} is not mapped into this process; NEURON_RT_MAP_HBM=1 maps it at init"))
        })?;
        Ok(windows.get(hbm_idx as usize).copied())
    }

    /// The device and device address of the mapped host range
    /// `va .. va + len`, when it lies inside one mapped HBM channel.
    pub fn locate_mapped(&self, va: usize, len: u64) -> Option<MappedAddr> {
        (0..self.devices().len()).find_map(|d| {
            let addr = self.memory(d).ok()?.device_addr_of(va, len)?;
            Some(MappedAddr { device: d, addr })
        })
    }

    /// `nrt_memcpy_to_device` into mapped HBM: writes `data` through the
    /// device at the device address `va` maps to, so the device sees the
    /// change as it sees any write (a sequencer's decoded instructions of
    /// those bytes are dropped; a plain store through the mapping is not
    /// seen by them, as on hardware). `Ok(false)` when `va` is not mapped
    /// device memory (nothing written).
    pub fn memcpy_to_device(&self, va: usize, data: &[u8]) -> NrtResult<bool> {
        let Some(at) = self.locate_mapped(va, data.len() as u64) else { return Ok(false) };
        self.device(at.device)?
            .write(at.addr, data)
            .map_err(|e| NrtError::failure(format!("nrt_memcpy_to_device of {} bytes to {va:#x} ({}): {e}", data.len(), at.addr)))?;
        Ok(true)
    }

    /// `nrt_get_dmabuf_fd`: a descriptor for `size` bytes of mapped HBM at
    /// host address `va` (inside one channel), which the caller closes.
    /// What the descriptor is depends on the backend (the simulator's is
    /// documented in `docs/c-api.md`). NRT_INVALID for a range outside
    /// mapped HBM or of size 0, NRT_FAILURE when the OS refuses a
    /// descriptor.
    pub fn dmabuf_fd(&self, va: u64, size: u64) -> NrtResult<OwnedFd> {
        let v = usize::try_from(va).map_err(|_| not_mapped("nrt_get_dmabuf_fd", usize::MAX, size))?;
        if size == 0 {
            return Err(NrtError::invalid(format!("nrt_get_dmabuf_fd at {va:#x}: size 0; a dma-buf covers at least one byte")));
        }
        let at = self.locate_mapped(v, size).ok_or_else(|| not_mapped("nrt_get_dmabuf_fd", v, size))?;
        self.device(at.device)?.dmabuf_fd(v, size).map_err(|e| match e {
            HalError::InvalidAddress { .. } | HalError::Unsupported { .. } => NrtError::invalid(format!("nrt_get_dmabuf_fd: {e}")),
            e => NrtError::failure(format!("nrt_get_dmabuf_fd: {e}")),
        })
    }

    /// `nrt_get_attached_efa_bdf`: the PCI address of the EFA NIC attached
    /// to the device holding mapped HBM address `va`. NRT_FAILURE when
    /// `va` is not mapped device memory or the instance has no EFA NIC
    /// there (the header's "other errors").
    pub fn attached_efa_bdf(&self, va: usize) -> NrtResult<PciBdf> {
        let at = self
            .locate_mapped(va, 1)
            .ok_or_else(|| NrtError::new(NrtStatus::Failure, format!("{va:#x} is not the address of memory allocated on a Neuron device (HBM mapped with NEURON_RT_MAP_HBM=1)")))?;
        let info = self.device(at.device)?.info();
        info.topology.attached_efa_bdf(info.device_index).ok_or_else(|| {
            NrtError::new(NrtStatus::Failure, format!("no EFA device is attached to neuron device {} (the instance has {} EFA NICs)", info.device_index, info.topology.efa_nics))
        })
    }
}
