//! The devices of one simulated instance: the routing table of the peer
//! window (`nrt_hal::arch::PEER_WINDOW_TAG`: a DMA engine of one device
//! writing into another's memory or registers, the NeuronLink analogue)
//! and the one scheduler they share, so an instance of 16 devices steps
//! its engines and queues on one small pool (`SimConfig::threads`
//! workers in all), not on 16.
//!
//! A task names its core by its index in the instance
//! (`device * cores_per_device + core`, [`Instance::task_core`]); running
//! it looks the device up and hands the device-local task to it. A lost
//! device's tasks are dropped (it steps nothing more); the others run on.

use super::shared::Shared;
use crate::scheduler::{HasScheduler, Runner, Scheduler, Task};
use nrt_hal::{DeviceAddr, HalError, HalResult};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// The devices of one instance and their scheduler.
#[derive(Debug)]
pub(crate) struct Instance {
    pub(super) scheduler: Scheduler,
    /// Each device by its index, once it exists (weak: the devices own
    /// the instance, not the other way round).
    devices: Box<[OnceLock<Weak<Shared>>]>,
    /// Physical cores per device (the divisor of a task's core index).
    cores_per_device: u32,
    /// Device handles alive; the last one to go stops the workers.
    live: AtomicUsize,
}

impl Instance {
    /// An instance of `devices` devices of `cores_per_device` cores each,
    /// none of them created yet.
    pub(super) fn new(scheduler: Scheduler, devices: u32, cores_per_device: u32) -> Instance {
        Instance { scheduler, devices: (0..devices).map(|_| OnceLock::new()).collect(), cores_per_device: cores_per_device.max(1), live: AtomicUsize::new(0) }
    }

    /// Enters device `index` (called once per device, as it is created).
    pub(super) fn join(&self, index: u32, device: &Arc<Shared>) {
        if let Some(slot) = self.devices.get(index as usize) {
            let _ = slot.set(Arc::downgrade(device));
        }
        self.live.fetch_add(1, Ordering::AcqRel);
    }

    /// A device handle went away: the last one stops the workers (a
    /// parked worker holds the instance, so it would never drop).
    pub(super) fn leave(&self) {
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.scheduler.shutdown();
        }
    }

    /// The index a task gives `core` of device `device`.
    #[inline]
    pub(super) fn task_core(&self, device: u32, core: u32) -> u32 {
        device * self.cores_per_device + core
    }

    /// Device `index` while it exists.
    pub(super) fn device(&self, index: u32) -> Option<Arc<Shared>> {
        self.devices.get(index as usize)?.get()?.upgrade()
    }

    /// The device a peer-window address names, for an access of `len`
    /// bytes at `addr` (the address as the writer's device saw it): a
    /// device of this instance that is not lost, or why not.
    pub(super) fn peer(&self, device: u32, addr: DeviceAddr, len: u64) -> HalResult<Arc<Shared>> {
        let Some(d) = self.device(device) else {
            return Err(HalError::invalid(addr, len, format!("the peer window names device {device}, which the instance does not have ({} devices)", self.devices.len())));
        };
        if d.is_lost.load(Ordering::Acquire) {
            return Err(HalError::DeviceLost { reason: format!("simulated device {device} (reached through the peer window) is lost") });
        }
        Ok(d)
    }

    /// Splits a task's instance-wide core index into the device and the
    /// device-local task.
    #[inline]
    fn local(&self, task: Task) -> (u32, Task) {
        let n = self.cores_per_device;
        match task {
            Task::Engine(c, e) => (c / n, Task::Engine(c % n, e)),
            Task::Dma(c, q) => (c / n, Task::Dma(c % n, q)),
            Task::Q7(c, q) => (c / n, Task::Q7(c % n, q)),
        }
    }
}

impl HasScheduler for Instance {
    fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }
}

impl Runner for Instance {
    #[inline]
    fn run(self: &Arc<Self>, task: Task) {
        let (d, task) = self.local(task);
        let Some(dev) = self.device(d) else { return };
        if dev.is_lost.load(Ordering::Acquire) {
            return;
        }
        dev.run_task(task);
    }

    fn panicked(self: &Arc<Self>, task: Task, why: &str) {
        let (d, task) = self.local(task);
        if let Some(dev) = self.device(d) {
            dev.task_panicked(task, why);
        }
    }
}
