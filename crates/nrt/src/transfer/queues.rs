//! The DMA queues the runtime keeps for tensor transfers, one per
//! direction, and the test the model queue pool and the harvest use to
//! leave them alone.
//!
//! libnrt moves tensor bytes with the device's host-copy DMA engines
//! (neuron-facts §3.7: on v2 D2H engine 32 and H2D engine 33, queue 0;
//! libnrt 2.30 gives reads and writes separate queues). The simulated core
//! has no engines besides its 16, so the runtime sets one of them aside,
//! [`TRANSFER_ENGINE`], as the core's host-copy engine: queue 0 carries
//! host-to-device writes (and fills), queue 1 device-to-host reads,
//! queue 2 device-to-device copies. The whole engine stays out of the
//! model queue pool, so its DMA trace ring holds tensor transfers only.

use nrt_hal::DmaQueueId;
use std::fmt;

/// The DMA engine of every core that carries tensor transfers.
pub const TRANSFER_ENGINE: u8 = 6;

/// Which way a transfer moves bytes, and so which queue it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Direction {
    /// Host memory into device memory (tensor writes, fills, input staging).
    HostToDevice = 0,
    /// Device memory into host memory (tensor reads, output copy-back).
    DeviceToHost = 1,
    /// Device memory to device memory (tensor copies).
    DeviceToDevice = 2,
}

impl Direction {
    /// Every direction, in queue order.
    pub const ALL: [Direction; 3] = [Direction::HostToDevice, Direction::DeviceToHost, Direction::DeviceToDevice];

    /// The queue of [`TRANSFER_ENGINE`] the direction uses.
    pub const fn queue(self) -> DmaQueueId {
        DmaQueueId { engine: TRANSFER_ENGINE, queue: self as u8 }
    }

    /// Position in [`Direction::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Whether the direction stages host bytes through a bounce buffer in
    /// host-DMA memory (device-to-device copies need none).
    pub const fn bounces(self) -> bool {
        !matches!(self, Direction::DeviceToDevice)
    }

    /// How messages name it.
    pub const fn name(self) -> &'static str {
        match self {
            Direction::HostToDevice => "host-to-device",
            Direction::DeviceToHost => "device-to-host",
            Direction::DeviceToDevice => "device-to-device",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether queue `queue` of DMA engine `engine` belongs to the tensor
/// transfers (the model queue pool never hands these out).
pub fn is_transfer_queue(engine: u32, _queue: u32) -> bool {
    engine == u32::from(TRANSFER_ENGINE)
}

/// Whether the core-relative queue index `index` (`engine *
/// queues_per_engine + queue`, how the device names a queue in its
/// records) is a tensor-transfer queue.
pub fn is_transfer_queue_index(index: u32, queues_per_engine: u32) -> bool {
    queues_per_engine > 0 && is_transfer_queue(index / queues_per_engine, index % queues_per_engine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_direction_has_its_own_queue_on_the_transfer_engine() {
        let qs: Vec<DmaQueueId> = Direction::ALL.iter().map(|d| d.queue()).collect();
        assert_eq!(qs, [0, 1, 2].map(|q| DmaQueueId { engine: TRANSFER_ENGINE, queue: q }));
        for (i, d) in Direction::ALL.iter().enumerate() {
            assert_eq!(d.index(), i);
            assert!(is_transfer_queue(u32::from(d.queue().engine), u32::from(d.queue().queue)));
            assert!(is_transfer_queue_index(u32::from(TRANSFER_ENGINE) * 16 + i as u32, 16));
        }
        assert!(!is_transfer_queue(5, 0) && !is_transfer_queue(7, 2));
        assert!(!is_transfer_queue_index(7 * 16 + 14, 16) && !is_transfer_queue_index(6, 0));
        assert!(Direction::HostToDevice.bounces() && Direction::DeviceToHost.bounces() && !Direction::DeviceToDevice.bounces());
    }

    #[test]
    fn the_transfer_engine_holds_no_custom_op_nor_collectives_queue() {
        for q in 0..16 {
            let e = u32::from(TRANSFER_ENGINE);
            assert!(!crate::custom_ops::is_custom_op_dma(e, q));
            assert!(!crate::cc::compose::is_cc_queue(e, q));
            assert!(!crate::cc::neff::is_neff_cc_queue(e, q));
        }
    }
}
