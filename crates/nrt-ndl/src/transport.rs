//! How an ioctl reaches a driver: the kernel's (`/dev/neuronN`) or the
//! emulated one's, behind one trait.
//!
//! Both receive `(cmd, &mut [u8])`: the command number and the argument
//! struct's bytes exactly as `ioctl(2)` passes them, and answer `Ok` or an
//! `errno`. The trait is crate-private: an argument's pointer fields must
//! follow [`crate::ffi`]'s pointer contract, which only this crate's ops
//! guarantee.

use crate::abi;
use crate::ffi;
use nrt_hal::NqRing;
use nrt_hal::status::SlotWriter;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;

/// A driver endpoint: one open `/dev/neuronN` (or its emulation).
pub(crate) trait Transport: Send + Sync {
    /// What answers: `neuron` or `emulated-driver`.
    fn backend(&self) -> &'static str;
    /// One ioctl.
    fn ioctl(&self, cmd: u32, arg: &mut [u8]) -> Result<(), i32>;
    /// The notification ring behind an NQ's mmap offset (the mapping of
    /// the ring into this process).
    fn map_nq(&self, mmap_offset: u64) -> Result<Arc<dyn NqRing>, i32>;
    /// Maps `len` bytes of the device at an mmap offset the driver gave
    /// (RESOURCE_MMAP_INFO, MEM_GET_EXTENDED_INFO) into this process: the
    /// host address of the first byte.
    fn map(&self, offset: u64, len: u64) -> Result<usize, i32>;
    /// Undoes one [`Transport::map`].
    fn unmap(&self, va: usize, len: u64);
    /// The datastore entry behind ACQUIRE_NEURON_DS's mmap offset (its
    /// mapping into this process, read-write for the owner).
    fn map_ds(&self, mmap_offset: u64) -> Result<Arc<SlotWriter>, i32>;
    /// The device's physical core count (sysfs `core_count`).
    fn core_count(&self) -> Result<u32, i32>;
    /// The driver's own words about the last failure of this thread's
    /// call (the kernel's go to `dmesg`; the emulator keeps them here).
    fn last_message(&self) -> Option<String> {
        None
    }
}

/// `/dev/neuronN` through the kernel driver.
pub(crate) struct KernelTransport {
    fd: OwnedFd,
    index: u32,
}

impl KernelTransport {
    /// Opens `/dev/neuron{index}` read-write (attaching this process to the
    /// device, as libnrt does).
    pub(crate) fn open(index: u32) -> std::io::Result<KernelTransport> {
        let f = std::fs::OpenOptions::new().read(true).write(true).open(device_path(index))?;
        Ok(KernelTransport { fd: OwnedFd::from(f), index })
    }
}

/// `/dev/neuron{index}`.
pub fn device_path(index: u32) -> PathBuf {
    PathBuf::from(format!("/dev/neuron{index}"))
}

impl Transport for KernelTransport {
    fn backend(&self) -> &'static str {
        "neuron"
    }

    fn ioctl(&self, cmd: u32, arg: &mut [u8]) -> Result<(), i32> {
        // An extension command is never sent to the kernel: the driver has
        // no such command (and another driver might).
        if abi::ext::is_ext(cmd) {
            return Err(libc::ENOTTY);
        }
        ffi::ioctl(&self.fd, cmd, arg)
    }

    fn map_nq(&self, _mmap_offset: u64) -> Result<Arc<dyn NqRing>, i32> {
        // Rings on caller memory are an extension the kernel refuses
        // (NRT_EXT_NQ_INIT), so no offset of ours reaches here; the
        // driver's own NQ record format is not public (docs/hardware.md).
        Err(libc::ENOTTY)
    }

    fn map(&self, offset: u64, len: u64) -> Result<usize, i32> {
        ffi::mmap(&self.fd, offset, len)
    }

    fn unmap(&self, va: usize, len: u64) {
        ffi::munmap(va, len);
    }

    fn map_ds(&self, _mmap_offset: u64) -> Result<Arc<SlotWriter>, i32> {
        // The kernel's store is libnrt's to fill: its counters are
        // published, where libnrt puts its objects is not, and our writer
        // would put ours there (docs/hardware.md). The runtime does not
        // publish through the kernel driver.
        Err(libc::EOPNOTSUPP)
    }

    fn core_count(&self) -> Result<u32, i32> {
        let p = format!("/sys/class/neuron_device/neuron{}/core_count", self.index);
        let s = std::fs::read_to_string(p).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
        s.trim().parse().map_err(|_| libc::EINVAL)
    }
}
