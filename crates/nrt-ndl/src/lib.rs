//! The driver portal: nrt-rs over the Neuron driver's ioctl ABI.
//!
//! libnrt reaches the device through ioctls and mmaps of `/dev/neuronN`
//! (its `ndl_*` layer). This crate is that layer in Rust:
//!
//! - [`abi`]: the driver's command numbers (magic 'N', with the
//!   size-overloaded siblings), argument structs and enums, checked
//!   against the driver's own header by `tests/c_layout.rs`.
//! - `transport`: where an ioctl goes, `(cmd, &mut [u8])` in, errno out:
//!   the kernel (`ioctl(2)` on `/dev/neuronN`) or [`EmulatedDriver`].
//! - [`EmulatedDriver`]: the driver's semantics in user space over any
//!   `nrt_hal::Device` (the simulator), decoding the same struct bytes.
//! - [`NdlDevice`]: `nrt_hal::Device` over a transport, every call one or
//!   a few ioctls, each counted.
//! - [`devices`]: the device list of the backend `NRT_DEVICE` chose.
//! - [`nds`]: the datastore as the tools read it (the process list, then
//!   each process's entry by pid).
//! - `ffi`: the crate's only `unsafe` code.
//!
//! What runs on hardware and what was tested only against the emulator is
//! in `docs/hardware.md`.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod abi;
mod device;
mod emulator;
#[allow(unsafe_code)]
mod ffi;
pub mod nds;
mod transport;

pub use device::NdlDevice;
pub use emulator::EmulatedDriver;
pub use transport::device_path;

use nrt_hal::{Device, DeviceBackend};
use std::sync::Arc;

/// The devices of `backend`: the simulator's (`sims`, built only when
/// needed) as they are, the same behind the emulated driver, or every
/// `/dev/neuronN`. The one place the backend choice becomes devices; every
/// entry point's bring-up calls it.
pub fn devices(
    backend: DeviceBackend,
    sims: impl FnOnce() -> Result<Vec<Arc<dyn Device>>, String>,
) -> Result<Vec<Arc<dyn Device>>, String> {
    match backend {
        DeviceBackend::Sim => sims(),
        DeviceBackend::EmulatedDriver => {
            let sims = sims()?;
            let n = sims.len() as u32;
            sims.into_iter()
                .enumerate()
                .map(|(i, sim)| {
                    let info = sim.info().clone();
                    let driver = Arc::new(EmulatedDriver::open(sim));
                    NdlDevice::open(driver, i as u32, n, Some(info))
                        .map(|d| Arc::new(d) as Arc<dyn Device>)
                        .map_err(|e| format!("emulated Neuron driver of ND {i}: {e}"))
                })
                .collect()
        }
        DeviceBackend::Neuron => {
            let n = (0..).take_while(|&i| device_path(i).exists()).count() as u32;
            if n == 0 {
                return Err(format!(
                    "NRT_DEVICE=neuron but {} does not exist: is the Neuron driver (aws-neuronx-dkms) loaded?",
                    device_path(0).display()
                ));
            }
            (0..n)
                .map(|i| {
                    let t = transport::KernelTransport::open(i).map_err(|e| format!("cannot open {}: {e}", device_path(i).display()))?;
                    NdlDevice::open(Arc::new(t), i, n, None)
                        .map(|d| Arc::new(d) as Arc<dyn Device>)
                        .map_err(|e| format!("{}: {e}", device_path(i).display()))
                })
                .collect()
        }
    }
}

/// An [`NdlDevice`] over the emulated driver of `device` (tests and tools
/// that want the portal path and its ioctl counts by hand).
pub fn emulated(device: Arc<dyn Device>, index: u32, devices: u32) -> nrt_hal::HalResult<NdlDevice> {
    let info = device.info().clone();
    NdlDevice::open(Arc::new(EmulatedDriver::open(device)), index, devices, Some(info))
}
