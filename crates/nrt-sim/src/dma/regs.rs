//! The decode of an offset in a core's DMA register window into the
//! queue and register it names (a leaf: the address routing and the
//! [`crate::port::StoreRoute`] of a doorbell keep its answer).

use nrt_hal::arch::{DMA_M2S_GROUP, DMA_QUEUE_BANK_STRIDE, DMA_S2M_GROUP};

/// Which register of which queue a DMA-window offset names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegRef {
    /// Queue index within the core (engine * 16 + queue).
    pub queue: usize,
    /// True for the S2M (RX) group.
    pub rx: bool,
    /// Register offset within the group.
    pub reg: u64,
}

/// Decodes an offset inside the core's DMA register window.
pub fn reg_ref(offset: u64) -> Option<RegRef> {
    let queue = (offset / DMA_QUEUE_BANK_STRIDE) as usize;
    let in_bank = offset % DMA_QUEUE_BANK_STRIDE;
    let (rx, reg) = if (DMA_S2M_GROUP..DMA_S2M_GROUP + 0x100).contains(&in_bank) {
        (true, in_bank - DMA_S2M_GROUP)
    } else if in_bank < DMA_M2S_GROUP + 0x100 {
        (false, in_bank - DMA_M2S_GROUP)
    } else {
        return None;
    };
    Some(RegRef { queue, rx, reg })
}

