//! The DMA engine's walk of one queue: fetch descriptor pairs, move the
//! bytes, signal completion.

use crate::core::Core;
use crate::cost;
use crate::device::Shared;
use crate::dma::desc::Descriptor;
use crate::fault::FaultKind;
use nrt_isa::notification::InferErrorSubtype;
use nrt_hal::{DeviceAddr, DmaQueueStatus};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Descriptor pairs processed per scheduling slice.
pub const BUDGET: usize = 64;

/// Walks queue `qi` of `core` for one slice. Returns whether submitted
/// work remains (the caller re-queues the task).
pub fn run_queue(dev: &Arc<Shared>, core: &Arc<Core>, qi: usize) -> bool {
    let q = &core.dma[qi];
    let mut regs = q.regs.lock().unwrap_or_else(|e| e.into_inner());
    if regs.status != DmaQueueStatus::Enabled || regs.config.descriptors == 0 {
        return false;
    }
    let n = u64::from(regs.config.descriptors);
    let mut progressed = false;
    let mut buf = Vec::new();
    for _ in 0..BUDGET {
        let tx_tail = q.tx_tail.load(Ordering::Acquire);
        let rx_tail = q.rx_tail.load(Ordering::Acquire);
        if regs.tx_head >= tx_tail || regs.rx_head >= rx_tail {
            break;
        }
        let mut tb = [0u8; 16];
        let mut rb = [0u8; 16];
        let fetched = dev
            .read(regs.config.tx_ring.offset((regs.tx_head % n) * 16), &mut tb)
            .and_then(|_| dev.read(regs.config.rx_ring.offset((regs.rx_head % n) * 16), &mut rb));
        let start = regs.clock.max(core.now());
        let abort = |regs: &mut crate::dma::QueueRegs| {
            regs.status = DmaQueueStatus::Aborted;
            dev.error_record(core, None, qi as u64, InferErrorSubtype::DmaAbort, qi as u16, start);
        };
        if fetched.is_err() {
            abort(&mut regs);
            break;
        }
        let tx = Descriptor::decode(&tb);
        let rx = Descriptor::decode(&rb);
        let fault = if tx.first { dev.faults.on_dma_packet(core.id.0) } else { None };
        if tx.len != rx.len || fault == Some(FaultKind::DmaAbort) {
            abort(&mut regs);
            break;
        }
        buf.resize(tx.len as usize, 0);
        let end = start + cost::dma(u64::from(tx.len));
        let moved = dev
            .read(DeviceAddr(tx.addr), &mut buf)
            .and_then(|_| dev.write_at(DeviceAddr(rx.addr), &buf, end));
        if moved.is_err() {
            abort(&mut regs);
            break;
        }
        if fault == Some(FaultKind::Nan) && tx.len >= 4 {
            let _ = dev.write_at(DeviceAddr(rx.addr), &f32::NAN.to_le_bytes(), end);
            dev.error_record(core, None, qi as u64, InferErrorSubtype::Numerical, qi as u16, end);
        }
        regs.clock = end;
        regs.tx_head += 1;
        regs.rx_head += 1;
        q.tx_head_pub.store(regs.tx_head, Ordering::Release);
        q.rx_head_pub.store(regs.rx_head, Ordering::Release);
        core.observe(end);
        if tx.last {
            if let Some(s) = regs.config.completion_semaphore.filter(|&s| s < core.sync.semaphores()) {
                core.sync.add_sem(s, 1, end);
            }
            if let Some(e) = regs.config.completion_event.filter(|&e| e < core.sync.events()) {
                core.sync.set_event(e, true, end);
            }
        }
        progressed = true;
    }
    let more = regs.status == DmaQueueStatus::Enabled && q.has_pending();
    drop(regs);
    if progressed || !more {
        // Completion semaphores changed, or the queue went idle (DRAIN).
        dev.wake_core(core);
    }
    more
}
