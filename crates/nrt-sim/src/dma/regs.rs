//! The decode of an offset in a core's DMA engines' register units into
//! the queue and register it names (a leaf: the address routing and the
//! [`crate::port::StoreRoute`] of a doorbell keep its answer). The units
//! are the driver's (`udma/udma_regs.h`): queue `q`'s M2S registers at
//! `m2s_q[q]`, its S2M registers at `s2m_q[q]`.

use nrt_hal::arch::{DMA_ENGINE_REGS_SIZE, DMA_M2S_GROUP, DMA_QUEUE_REGS_STRIDE, DMA_S2M_GROUP};

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

/// Queue register blocks per group in a unit (`m2s_q[16]`, `s2m_q[16]`).
const QUEUES_PER_ENGINE: u64 = 16;

/// Decodes an offset into the core's DMA register units (engine `e`'s
/// unit at `e * DMA_ENGINE_REGS_SIZE`); `None` for the engine-wide
/// registers (state, AXI, interrupt and general blocks), which the
/// simulated engines do not have.
pub fn reg_ref(offset: u64) -> Option<RegRef> {
    let engine = offset / DMA_ENGINE_REGS_SIZE;
    let in_unit = offset % DMA_ENGINE_REGS_SIZE;
    let span = QUEUES_PER_ENGINE * DMA_QUEUE_REGS_STRIDE;
    let (rx, in_group) = if let Some(o) = in_unit.checked_sub(DMA_S2M_GROUP).filter(|o| *o < span) {
        (true, o)
    } else if let Some(o) = in_unit.checked_sub(DMA_M2S_GROUP).filter(|o| *o < span) {
        (false, o)
    } else {
        return None;
    };
    let queue = engine * QUEUES_PER_ENGINE + in_group / DMA_QUEUE_REGS_STRIDE;
    Some(RegRef { queue: queue as usize, rx, reg: in_group % DMA_QUEUE_REGS_STRIDE })
}

