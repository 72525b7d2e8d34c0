//! One tensor-transfer queue of one core: its descriptor rings and
//! completion words in host-DMA memory, its bounce buffer, the batches it
//! submits and the bounded wait for what the device reports.
//!
//! Memory (all host-DMA, booked to the runtime):
//!
//! ```text
//! block:  [TX ring: RING_DESCRIPTORS x 16][RX ring: same]
//!         [marker source words: 2 x u32][completion slots: 2 x u32]
//! bounce: [half 0: CHUNK_BYTES][half 1: CHUNK_BYTES]   (host<->device lanes)
//! patterns: [half 0: PATTERN_PAIRS x 128][half 1: same]  (made on first use)
//! ```
//!
//! A batch moves at most [`CHUNK_BYTES`] as plain copy pairs of at most
//! 64 KiB, followed by one 4-byte marker pair that copies the batch's
//! sequence number from its half's source word into its half's completion
//! slot: the driver's own copy completion (neuron-facts §3.7, "Driver copy
//! completion"), so the host learns that every earlier pair landed from
//! bytes the device wrote. Batches alternate between the two halves; at
//! most one batch per half is in flight, so two batches (at most
//! 2 x [`BATCH_PAIRS`] descriptors) share a ring of [`RING_DESCRIPTORS`].
//! A patterned batch ([`Lane::submit_patterns`]: casts and element-wise
//! reductions, `crate::tensor_ops`) is at most [`PATTERN_PAIRS`] pattern
//! pairs, each naming a 128-byte pattern block in its half's pattern
//! area, and the same marker.

use super::queues::Direction;
use super::{CHUNK_BYTES, TransferCtx};
use crate::memory::{DeviceMemory, MemOwner, MemUsage};
use crate::status::{NrtError, NrtResult, NrtStatus};
use nrt_hal::{CoreId, DeviceAddr, DmaQueueStatus, DmaRingConfig};
use nrt_isa::dma_desc::{DmaDescriptor, LenCtrl, MAX_BD_LENGTH, MetaCtrl, PATTERN_BLOCK_SIZE, RxDescriptor, TxDescriptor, pattern_pair};
use std::time::Instant;

/// Descriptors of each ring (a multiple of 16, at least 32: the ring
/// rules of neuron-facts §3.7).
pub const RING_DESCRIPTORS: u32 = 64;
/// Descriptor pairs of the largest batch: its data pieces and the marker.
pub const BATCH_PAIRS: usize = (CHUNK_BYTES / MAX_BD_LENGTH as u64) as usize + 1;
const _: () = assert!(2 * BATCH_PAIRS <= RING_DESCRIPTORS as usize);
/// Pattern pairs of the largest patterned batch (the marker is the last pair).
pub const PATTERN_PAIRS: usize = BATCH_PAIRS - 1;
/// Bytes of one half of the pattern area.
const PATTERN_HALF_BYTES: u64 = (PATTERN_PAIRS * PATTERN_BLOCK_SIZE) as u64;

/// Bytes of a ring.
const RING_BYTES: u64 = RING_DESCRIPTORS as u64 * 16;
/// Offset in the block of the two marker source words.
const WORDS_AT: u64 = 2 * RING_BYTES;
/// Offset in the block of the two completion slots.
const SLOTS_AT: u64 = WORDS_AT + 8;
/// Bytes of the block.
const BLOCK_BYTES: u64 = SLOTS_AT + 8;
/// Ring phase written into every descriptor (the rings are never
/// re-walked with another meaning; docs/runtime.md, "Known limits").
const RING_ID: u8 = 1;

/// A submitted batch: the sequence number its marker carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch(u32);

impl Batch {
    /// The bounce-buffer half (and completion slot) the batch uses.
    pub fn half(self) -> usize {
        (self.0 & 1) as usize
    }
}

/// One transfer queue of a core, programmed and owned by the runtime.
#[derive(Debug)]
pub struct Lane {
    direction: Direction,
    core: CoreId,
    block: DeviceAddr,
    bounce: Option<DeviceAddr>,
    /// Pattern blocks of patterned batches, two halves (allocated by the
    /// first one).
    patterns: Option<DeviceAddr>,
    /// Pairs submitted since the queue was last programmed.
    submitted: u64,
    /// The last batch's sequence number (its marker value).
    sequence: u32,
    /// The batch in flight on each half.
    in_flight: [Option<Batch>; 2],
    /// Whether the queue holds our programming (false after a failure,
    /// so the next transfer programs it afresh).
    programmed: bool,
}

impl Lane {
    /// Allocates the lane's memory on `core` and zeroes its completion
    /// words; the queue is programmed by the first transfer.
    pub fn create(memory: &DeviceMemory, core: CoreId, direction: Direction) -> NrtResult<Lane> {
        let block = memory.alloc_host(core, MemOwner::Runtime, MemUsage::DmaRing, BLOCK_BYTES, 4096)?;
        let bounce = if direction.bounces() {
            match memory.alloc_host(core, MemOwner::Runtime, MemUsage::Generic, 2 * CHUNK_BYTES, 64 << 10) {
                Ok(b) => Some(b),
                Err(e) => {
                    let _ = memory.free(block);
                    return Err(e);
                }
            }
        } else {
            None
        };
        let lane = Lane { direction, core, block, bounce, patterns: None, submitted: 0, sequence: 0, in_flight: [None; 2], programmed: false };
        if let Err(e) = memory.device().write(block.offset(WORDS_AT), &[0u8; 16]) {
            lane.release(memory);
            return Err(NrtError::failure(format!("ND {} NC {}: clearing the {direction} transfer words: {e}", memory.device_index(), core.0)));
        }
        Ok(lane)
    }

    /// Frees the lane's memory (the queue itself is left as it is).
    pub fn release(self, memory: &DeviceMemory) {
        for a in [Some(self.block), self.bounce, self.patterns].into_iter().flatten() {
            if let Err(e) = memory.free(a) {
                crate::log_error!(crate::log::Module::Tdrv, "freeing a {} transfer buffer: {e}", self.direction);
            }
        }
    }

    /// The bounce buffer's half `half` (host-to-device and device-to-host
    /// lanes only).
    pub fn bounce(&self, half: usize) -> NrtResult<DeviceAddr> {
        self.bounce
            .map(|b| b.offset(half as u64 * CHUNK_BYTES))
            .ok_or_else(|| NrtError::failure(format!("the {} transfer queue has no bounce buffer", self.direction)))
    }

    /// The half the next batch will use.
    pub fn next_half(&self) -> usize {
        Batch(self.sequence.wrapping_add(1)).half()
    }

    /// Makes sure the queue runs our rings from a clean start: programs it
    /// (DMA_QUEUE_INIT) unless it is enabled with every pair we submitted
    /// walked. A core reset, an abort or a transfer that timed out leaves
    /// it otherwise.
    pub fn prepare(&mut self, ctx: &TransferCtx<'_>) -> NrtResult<()> {
        let queue = self.direction.queue();
        let ready = self.programmed
            && ctx
                .device
                .dma_queue_state(self.core, queue)
                .is_ok_and(|s| s.status == DmaQueueStatus::Enabled && s.tx_tail == self.submitted && s.tx_head == self.submitted);
        if ready {
            return Ok(());
        }
        let config = DmaRingConfig {
            tx_ring: self.block,
            rx_ring: self.block.offset(RING_BYTES),
            descriptors: RING_DESCRIPTORS,
            completion_semaphore: None,
            completion_event: None,
        };
        ctx.device.dma_queue_init(self.core, queue, config).map_err(|e| self.hal(ctx, "programming", e))?;
        self.submitted = 0;
        self.in_flight = [None; 2];
        self.programmed = true;
        Ok(())
    }

    /// Forgets the queue's state after a failed transfer: the next one
    /// programs it again, dropping whatever it still held.
    pub fn invalidate(&mut self) {
        self.programmed = false;
        self.in_flight = [None; 2];
    }

    /// Submits one batch: `len` (at most [`CHUNK_BYTES`]) bytes from `src`
    /// to `dst` in pieces of at most 64 KiB, each piece reading from `src`
    /// plus its offset, or from `src` itself when `src_fixed` (a fill
    /// repeats one source), then the batch's marker. Waits first for the
    /// batch in flight on the half it takes. Allocation-free.
    pub fn submit(&mut self, ctx: &TransferCtx<'_>, src: DeviceAddr, src_fixed: bool, dst: DeviceAddr, len: u64) -> NrtResult<Batch> {
        let half = self.next_half();
        self.reclaim(ctx, half)?;
        let batch = Batch(self.sequence.wrapping_add(1));
        let mut tx = [[0u8; 16]; BATCH_PAIRS];
        let mut rx = [[0u8; 16]; BATCH_PAIRS];
        let mut n = 0;
        let mut off = 0u64;
        while off < len && n + 1 < BATCH_PAIRS {
            let piece = (len - off).min(u64::from(MAX_BD_LENGTH));
            let from = if src_fixed { src } else { src.offset(off) };
            (tx[n], rx[n]) = copy_pair(from, dst.offset(off), piece as u32);
            n += 1;
            off += piece;
        }
        if off < len {
            return Err(NrtError::failure(format!("a {} batch of {len} bytes exceeds {CHUNK_BYTES}", self.direction)));
        }
        self.ring_batch(ctx, half, batch, &mut tx, &mut rx, n)
    }

    /// Submits one patterned batch: each of `blocks` (at most
    /// [`PATTERN_PAIRS`] encoded pattern blocks) is written into the
    /// half's pattern area and run by one pattern pair, in order, then the
    /// batch's marker. Waits first for the batch in flight on the half.
    pub fn submit_patterns(&mut self, ctx: &TransferCtx<'_>, memory: &DeviceMemory, blocks: &[[u8; PATTERN_BLOCK_SIZE]]) -> NrtResult<Batch> {
        if blocks.is_empty() || blocks.len() > PATTERN_PAIRS {
            return Err(NrtError::failure(format!("a patterned batch takes 1..={PATTERN_PAIRS} blocks, got {}", blocks.len())));
        }
        let area = match self.patterns {
            Some(a) => a,
            None => *self.patterns.insert(memory.alloc_host(self.core, MemOwner::Runtime, MemUsage::DmaRing, 2 * PATTERN_HALF_BYTES, 4096)?),
        };
        let half = self.next_half();
        self.reclaim(ctx, half)?;
        let at = area.offset(half as u64 * PATTERN_HALF_BYTES);
        ctx.device.write(at, &blocks.concat()).map_err(|e| self.hal(ctx, "writing pattern blocks", e))?;
        let batch = Batch(self.sequence.wrapping_add(1));
        let mut tx = [[0u8; 16]; BATCH_PAIRS];
        let mut rx = [[0u8; 16]; BATCH_PAIRS];
        for (i, _) in blocks.iter().enumerate() {
            let (t, r) = pattern_pair(at.offset((i * PATTERN_BLOCK_SIZE) as u64).get(), RING_ID).map_err(|e| NrtError::failure(format!("a pattern descriptor: {e}")))?;
            tx[i] = DmaDescriptor::Tx(t).to_bytes().map_err(|e| NrtError::failure(format!("a pattern descriptor: {e}")))?;
            rx[i] = DmaDescriptor::Rx(r).to_bytes().map_err(|e| NrtError::failure(format!("a pattern descriptor: {e}")))?;
        }
        self.ring_batch(ctx, half, batch, &mut tx, &mut rx, blocks.len())
    }

    /// Ends a batch of `n` descriptor pairs on `half` and rings it: the
    /// marker (the batch's number, from its half's source word, a store
    /// into the host-DMA mapping, into its half's slot) as the last pair,
    /// both rings written, the queue's tail moved; the batch is then the
    /// half's one in flight.
    fn ring_batch(&mut self, ctx: &TransferCtx<'_>, half: usize, batch: Batch, tx: &mut [[u8; 16]; BATCH_PAIRS], rx: &mut [[u8; 16]; BATCH_PAIRS], n: usize) -> NrtResult<Batch> {
        let word = self.block.offset(WORDS_AT + 4 * half as u64);
        let slot = self.block.offset(SLOTS_AT + 4 * half as u64);
        ctx.device.write(word, &batch.0.to_le_bytes()).map_err(|e| self.hal(ctx, "writing the completion marker", e))?;
        (tx[n], rx[n]) = copy_pair(word, slot, 4);
        let n = n + 1;
        self.write_ring(ctx, 0, &tx[..n])?;
        self.write_ring(ctx, RING_BYTES, &rx[..n])?;
        ctx.device.dma_tail_increment(self.core, self.direction.queue(), n as u32, n as u32).map_err(|e| self.hal(ctx, "ringing", e))?;
        self.submitted += n as u64;
        self.sequence = batch.0;
        self.in_flight[half] = Some(batch);
        Ok(batch)
    }

    /// Writes `descs` into the ring at `ring_at` (offset in the block) from
    /// the slot after the last submitted one, wrapping at the ring's end.
    fn write_ring(&self, ctx: &TransferCtx<'_>, ring_at: u64, descs: &[[u8; 16]]) -> NrtResult<()> {
        let start = (self.submitted % u64::from(RING_DESCRIPTORS)) as usize;
        let first = descs.len().min(RING_DESCRIPTORS as usize - start);
        let mut bytes = [0u8; 16 * BATCH_PAIRS];
        for (part, at) in [(&descs[..first], start), (&descs[first..], 0)] {
            if part.is_empty() {
                continue;
            }
            for (i, d) in part.iter().enumerate() {
                bytes[16 * i..16 * i + 16].copy_from_slice(d);
            }
            let addr = self.block.offset(ring_at + 16 * at as u64);
            ctx.device.write(addr, &bytes[..16 * part.len()]).map_err(|e| self.hal(ctx, "writing descriptors", e))?;
        }
        Ok(())
    }

    /// Waits until the batch in flight on `half` (if any) has landed.
    pub fn reclaim(&mut self, ctx: &TransferCtx<'_>, half: usize) -> NrtResult<()> {
        if let Some(b) = self.in_flight[half] {
            self.wait(ctx, b)?;
            self.in_flight[half] = None;
        }
        Ok(())
    }

    /// Waits until every batch in flight has landed, oldest first.
    pub fn drain(&mut self, ctx: &TransferCtx<'_>) -> NrtResult<()> {
        let older = self.next_half();
        self.reclaim(ctx, older)?;
        self.reclaim(ctx, 1 - older)
    }

    /// Waits for `batch`'s marker in its completion slot: lends the thread
    /// to the device while it has queued work, spins for
    /// [`crate::exec::SPIN_BUDGET`], then blocks on the core's notification
    /// line (the transfer engine's trace ring raises it for every packet)
    /// at most [`crate::exec::MAX_BLOCK`] at a time. Ends with an error when
    /// the queue aborted or was reset, or when the batch has not landed
    /// within the transfer timeout. Allocation-free.
    fn wait(&self, ctx: &TransferCtx<'_>, batch: Batch) -> NrtResult<()> {
        let slot = self.block.offset(SLOTS_AT + 4 * batch.half() as u64);
        let mut begin: Option<Instant> = None;
        loop {
            let seen = ctx.trace.signal_count();
            let mut word = [0u8; 4];
            ctx.device.read(slot, &mut word).map_err(|e| self.hal(ctx, "reading the completion slot", e))?;
            if u32::from_le_bytes(word) == batch.0 {
                return Ok(());
            }
            if crate::exec::assist(ctx.device) {
                continue;
            }
            let now = Instant::now();
            let waited = now.duration_since(*begin.get_or_insert(now));
            if waited < crate::exec::SPIN_BUDGET {
                std::hint::spin_loop();
                continue;
            }
            let state = ctx.device.dma_queue_state(self.core, self.direction.queue()).map_err(|e| self.hal(ctx, "reading the state of", e))?;
            match state.status {
                DmaQueueStatus::Enabled => {}
                DmaQueueStatus::Aborted => {
                    return Err(NrtError::failure(format!(
                        "DMA abort on queue {} ({}) of ND {} NC {}: the device stopped the transfer at descriptor {} of {}",
                        self.direction.queue(),
                        self.direction,
                        ctx.device_index,
                        self.core.0,
                        state.tx_head,
                        state.tx_tail
                    )));
                }
                DmaQueueStatus::Disabled => {
                    return Err(NrtError::failure(format!(
                        "DMA queue {} ({}) of ND {} NC {} was reset while a transfer was in flight",
                        self.direction.queue(),
                        self.direction,
                        ctx.device_index,
                        self.core.0
                    )));
                }
            }
            if waited >= ctx.timeout {
                return Err(NrtError::new(
                    NrtStatus::Timeout,
                    format!(
                        "DMA queue {} ({}) of ND {} NC {}: the completion marker of batch {} never came within {} ms ({} of {} descriptors walked)",
                        self.direction.queue(),
                        self.direction,
                        ctx.device_index,
                        self.core.0,
                        batch.0,
                        ctx.timeout.as_millis(),
                        state.tx_head,
                        state.tx_tail
                    ),
                ));
            }
            ctx.trace.wait_signal(seen, (ctx.timeout - waited).min(crate::exec::MAX_BLOCK));
        }
    }

    fn hal(&self, ctx: &TransferCtx<'_>, what: &str, e: impl std::fmt::Display) -> NrtError {
        NrtError::failure(format!("{what} DMA queue {} ({}) of ND {} NC {}: {e}", self.direction.queue(), self.direction, ctx.device_index, self.core.0))
    }
}

/// The descriptor pair of a plain copy of `len` (1..=64 KiB) bytes, as
/// the driver builds it (FIRST|LAST, the plain-copy `meta_ctrl`).
fn copy_pair(src: DeviceAddr, dst: DeviceAddr, len: u32) -> ([u8; 16], [u8; 16]) {
    let ctrl = LenCtrl { length: len, ring_id: RING_ID, first: false, last: false, int_en: false, dmb: false, pattern: false };
    let tx = TxDescriptor { len_ctrl: LenCtrl { first: true, last: true, ..ctrl }, meta_ctrl: MetaCtrl::plain_copy(), buf_ptr: src.get() };
    let rx = RxDescriptor { len_ctrl: ctrl, buf2_ptr_lo: 0, buf_ptr: dst.get() };
    // Lengths 1..=64 KiB and ring id 1 always encode.
    let enc = |d: DmaDescriptor| d.to_bytes().unwrap_or([0; 16]);
    (enc(DmaDescriptor::Tx(tx)), enc(DmaDescriptor::Rx(rx)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nrt_isa::dma_desc::RingSide;

    #[test]
    fn pairs_are_the_drivers_plain_copies() {
        for len in [1u32, 4, 4096, 65536] {
            let (tx, rx) = copy_pair(DeviceAddr(0x1000), DeviceAddr(0x2000), len);
            let (etx, erx) = nrt_hal::conformance::udma_copy_pair(DeviceAddr(0x1000), DeviceAddr(0x2000), len);
            assert_eq!((tx, rx), (etx, erx));
            let DmaDescriptor::Tx(t) = DmaDescriptor::from_bytes(&tx, RingSide::Tx).unwrap() else { unreachable!() };
            assert!(t.len_ctrl.first && t.len_ctrl.last && t.len_ctrl.length == len);
        }
    }

    #[test]
    fn batches_alternate_halves() {
        assert_eq!([1, 2, 3, 4].map(|s| Batch(s).half()), [1, 0, 1, 0]);
        assert_eq!(Batch(u32::MAX).half(), 1);
        assert_eq!(BATCH_PAIRS, 17);
    }
}
