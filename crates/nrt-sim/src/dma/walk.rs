//! The DMA engine's walk of one queue: fetch descriptor pairs, move the
//! bytes, signal completion.
//!
//! Behaviour over a core's queue state: memory through the [`Bus`] given,
//! reports into the core's rings, and the wake the slice's changes call
//! for returned to the caller (the device's scheduler), which makes it
//! right after the walk, as the walk's last act.

use crate::core::Core;
use crate::cost;
use crate::dma::pattern::{self, Bytes};
use crate::dma::rings::{CopyPins, Fetched, Pair, PatternBlocks};
use crate::fault::{FaultKind, FaultState};
use crate::port::Bus;
use crate::wake::DmaWake;
use nrt_hal::{ArchDesc, DeviceAddr, DmaQueueStatus, HalResult, NqType};
use nrt_isa::notification::InferErrorSubtype;
use std::sync::atomic::Ordering;

/// Descriptor pairs processed per scheduling slice.
pub const BUDGET: usize = 64;

/// Walks queue `qi` of `core` for one slice, reading and writing through
/// `dev`, with `faults` armed. Returns whether submitted work remains (the
/// caller re-queues the task) and the wake the slice calls for (DRAIN
/// waiters, the completion semaphore and event), which the caller makes
/// at once ([`crate::signals::Signals::wake_dma`]).
pub fn run_queue(dev: &impl Bus, faults: &FaultState, arch: &ArchDesc, core: &Core, qi: usize) -> (bool, Option<DmaWake>) {
    let q = &core.dma[qi];
    let mut regs = q.regs.lock().unwrap_or_else(|e| e.into_inner());
    if regs.status != DmaQueueStatus::Enabled || regs.config.descriptors == 0 {
        return (false, None);
    }
    let n = u64::from(regs.config.descriptors);
    let mut progressed = false;
    let mut completed = (None, None);
    // The tails are read once: a doorbell rung after this read walks or
    // queues the queue itself (every tail writer does after its add), so
    // the slice walks the pairs submitted when it began, up to its budget.
    // Sequentially consistent, like the doorbell's add and the task's
    // clear of `queued` before this walk: with `Acquire` loads the clear
    // and this read may pass each other, the doorbell then sees the walk
    // still queued and this read misses its add, stranding its
    // descriptors (found by crates/nrt-loom's dma_doorbell model). A plain
    // load on x86.
    let tx_tail = q.tx_tail.load(Ordering::SeqCst);
    let rx_tail = q.rx_tail.load(Ordering::SeqCst);
    let (tx_ready, rx_ready) = (tx_tail.saturating_sub(regs.tx_head), rx_tail.saturating_sub(regs.rx_head));
    // A tail more than a ring ahead of its head names descriptors that
    // were never written: once both sides have pairs, the engine refuses
    // (ring overrun) instead of walking stale slots.
    let ready = tx_ready.min(rx_ready);
    let ready = if ready > 0 && (tx_ready > n || rx_ready > n) {
        regs.status = DmaQueueStatus::Aborted;
        core.error_record(dev, None, qi as u64, InferErrorSubtype::DmaAbort, qi as u16, regs.clock.max(core.now()));
        0
    } else {
        ready
    };
    // Whether the slice walks every pair submitted (nothing left then).
    let caught_up = ready <= BUDGET as u64;
    for _ in 0..ready.min(BUDGET as u64) {
        let (tx_at, rx_at) = regs.next_descriptors();
        let fetched = regs.rings.fetch_pair(dev, tx_at, rx_at);
        let start = regs.clock.max(core.now());
        let abort = |regs: &mut crate::dma::QueueRegs| {
            regs.status = DmaQueueStatus::Aborted;
            core.error_record(dev, None, qi as u64, InferErrorSubtype::DmaAbort, qi as u16, start);
        };
        let Some(pair) = fetched else {
            abort(&mut regs);
            break;
        };
        let fault = if pair.first() { faults.on_dma_packet(core.id.0) } else { None };
        if !pair.lengths_match() || fault == Some(FaultKind::DmaAbort) {
            abort(&mut regs);
            break;
        }
        // A plain copy between the pages of the queue's last one goes page
        // to page here; anything else (new pages, on-chip memory, a
        // register window, a pattern block) out of line.
        let fast = !pair.pattern() && regs.copy_pins.copy(pair.src, pair.dst, u64::from(pair.len));
        let (bytes, nan_at) = if fast {
            (u64::from(pair.len), pair.dst)
        } else {
            let r = &mut *regs;
            match move_bytes(dev, faults, core.id.0, &mut r.copy_pins, &mut r.blocks, &pair, start) {
                Ok(done) => done,
                Err(_) => {
                    abort(&mut regs);
                    break;
                }
            }
        };
        let end = start + cost::dma(bytes);
        if pair.first() {
            regs.packet = (start, 0);
        }
        regs.packet.1 += bytes;
        if fault == Some(FaultKind::Nan) && bytes >= 4 {
            let _ = dev.write_at(DeviceAddr(nan_at), &f32::NAN.to_le_bytes(), end);
            core.error_record(dev, None, qi as u64, InferErrorSubtype::Numerical, qi as u16, end);
        }
        regs.clock = end;
        regs.advance(n);
        if pair.last() {
            // The trace ring of the queue's DMA engine (queue 0 of its block).
            // The record is only built when that ring is bound (it rarely
            // is); a ring found unbound is not looked up again until the
            // core's bindings change. The generation is read before the
            // lookup, so a binding the lookup missed moves it.
            let generation = core.nq_generation();
            if regs.trace_unbound_at != generation {
                let dma_engine = (qi / arch.queues_per_dma_engine.max(1) as usize) as u8;
                let head = regs.tx_head;
                let (began, moved) = regs.packet;
                let pushed = core.with_nq(dma_engine, NqType::TraceDma, |nq| {
                    nq.push_unsignalled(dev, crate::nq::record::dma_start(qi as u16, head, moved, began));
                    nq.push(dev, crate::nq::record::dma(qi as u16, head, moved, end))
                });
                regs.trace_unbound_at = if pushed.is_none() { generation } else { u64::MAX };
            }
            if let Some(s) = regs.config.completion_semaphore.filter(|&s| s < core.sync.semaphores()) {
                core.sync.add_sem(s, 1, end);
                completed.0 = Some(s);
            }
            if let Some(e) = regs.config.completion_event.filter(|&e| e < core.sync.events()) {
                core.sync.set_event(e, true, end);
                completed.1 = Some(e);
            }
        }
        progressed = true;
    }
    if progressed {
        // Published once per slice: the heads for the lock-free pending
        // checks (DRAIN), the queue's clock for the core's.
        q.tx_head_pub.store(regs.tx_head, Ordering::Release);
        q.rx_head_pub.store(regs.rx_head, Ordering::Release);
        core.observe(regs.clock);
    }
    let more = !caught_up && regs.status == DmaQueueStatus::Enabled && q.has_pending();
    drop(regs);
    // The queue moved or went idle (DRAIN waiters), and its completion
    // semaphore / event may have changed: one wake for all three.
    let wake = (progressed || !more).then(|| DmaWake::new(completed.0, completed.1));
    (more, wake)
}

/// Moves the bytes of the descriptor pair `pair` that the queue's copy
/// pins could not: a pattern block's transfer, a plain copy between
/// other pages (re-pinning them) or through on-chip memory, or one with a
/// register window on either side through a bounce buffer, so its writes
/// take effect at `start` plus the transfer's duration. Returns the bytes
/// moved and the address a NaN fault poisons.
#[inline(never)]
fn move_bytes(dev: &impl Bus, faults: &FaultState, core: u32, pins: &mut CopyPins, blocks: &mut PatternBlocks, pair: &Pair, start: u64) -> HalResult<(u64, u64)> {
    if pair.pattern() {
        let at = Stamped { dev, now: start };
        return match blocks.fetch(dev, pair.src)? {
            Fetched::Kept(b, Some(plan)) => {
                // A plain copy between memories: its runs page to page,
                // routed when the block was kept.
                for &(s, d, n) in plan.runs() {
                    dev.copy_routed(s, d, n)?;
                }
                Ok((plan.bytes(), b.dst.addr))
            }
            Fetched::Kept(b, None) => pattern::execute(&at, b).map(|n| (n, b.dst.addr)),
            Fetched::Read(b) => pattern::execute(&at, &b).map(|n| (n, b.dst.addr)),
        };
    }
    let len = u64::from(pair.len);
    if dev.copy_direct(DeviceAddr(pair.src), DeviceAddr(pair.dst), len)? {
        pins.refresh(dev, pair.src, pair.dst, len);
        return Ok((len, pair.dst));
    }
    if faults.armed() && dev.lands_in_semaphores(DeviceAddr(pair.dst)) && faults.on_semaphore_write(core) {
        // `sem_lost`: the notification never lands.
        return Ok((len, pair.dst));
    }
    // Register writes (a semaphore raise, a doorbell: 4 bytes) bounce
    // through the stack, so a collective's signals allocate nothing.
    let mut small = [0u8; 64];
    let mut large = Vec::new();
    let buf: &mut [u8] = match small.get_mut(..pair.len as usize) {
        Some(b) => b,
        None => {
            large.resize(pair.len as usize, 0);
            &mut large
        }
    };
    dev.read(DeviceAddr(pair.src), buf)?;
    dev.write_at(DeviceAddr(pair.dst), buf, start + cost::dma(len))?;
    Ok((len, pair.dst))
}

/// Device memory seen by a pattern transfer, with register writes stamped
/// at the transfer's virtual time.
struct Stamped<'a, B> {
    dev: &'a B,
    now: u64,
}

impl<B: Bus> Bytes for Stamped<'_, B> {
    fn read_bytes(&self, addr: DeviceAddr, buf: &mut [u8]) -> HalResult<()> {
        self.dev.read(addr, buf)
    }
    fn write_bytes(&self, addr: DeviceAddr, data: &[u8]) -> HalResult<()> {
        self.dev.write_at(addr, data, self.now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dma::desc::Descriptor;
    use crate::{SimConfig, SimDevice};
    use nrt_hal::{CoreId, Device, DmaRingConfig, MemoryLocation};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Untrusted descriptor bytes never panic a DMA engine: the queue
        /// either completes the pairs or aborts.
        #[test]
        fn random_descriptors_never_panic(descs in prop::collection::vec((any::<[u8; 16]>(), any::<[u8; 16]>(), any::<bool>()), 1..16), block in prop::collection::vec(any::<u8>(), 128)) {
            let dev = SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build(), 0);
            let hbm = MemoryLocation::Hbm { channel: 0 };
            let tx = dev.alloc(hbm, 32 * 16, 256).unwrap();
            let rx = dev.alloc(hbm, 32 * 16, 256).unwrap();
            let blk = dev.alloc(hbm, 128, 64).unwrap();
            dev.write(blk, &block).unwrap();
            let n = descs.len() as u32;
            for (i, (mut t, r, aim)) in descs.into_iter().enumerate() {
                if aim {
                    // Point some descriptors at real memory / the pattern block.
                    t[8..16].copy_from_slice(&blk.get().to_le_bytes());
                }
                dev.write(tx.offset(i as u64 * 16), &t).unwrap();
                dev.write(rx.offset(i as u64 * 16), &r).unwrap();
            }
            let q = nrt_hal::DmaQueueId { engine: 0, queue: 1 };
            dev.dma_queue_init(CoreId(0), q, DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: 32, completion_semaphore: Some(3), completion_event: Some(4) }).unwrap();
            dev.dma_tail_increment(CoreId(0), q, n, n).unwrap();
            let st = dev.dma_queue_state(CoreId(0), q).unwrap();
            prop_assert!(st.status == DmaQueueStatus::Aborted || st.tx_head == u64::from(n));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// A pair keeps every field of its two descriptors the walk uses.
        #[test]
        fn a_pair_keeps_what_the_walk_uses(src in any::<u64>(), dst in any::<u64>(), tl in 1u32..=65536, rl in 1u32..=65536, first: bool, last: bool, pattern: bool) {
            let tx = Descriptor { len: tl, first, last, pattern, meta: 7, addr: src };
            let rx = Descriptor { len: rl, first: !first, last: !last, pattern: !pattern, meta: 9, addr: dst };
            let p = Pair::of(&tx, &rx);
            prop_assert_eq!((p.src, p.dst, p.len), (src, dst, tl));
            prop_assert_eq!((p.first(), p.last(), p.pattern(), p.lengths_match()), (first, last, pattern, tl == rl));
        }
    }

    /// The descriptor cache sees a descriptor rewritten in place (and
    /// keeps serving one whose page changed elsewhere).
    #[test]
    fn rewritten_descriptors_are_seen_on_the_next_walk() {
        use nrt_hal::conformance::udma_copy_pair;
        let dev = SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build(), 0);
        let hbm = MemoryLocation::Hbm { channel: 0 };
        let tx = dev.alloc(hbm, 16, 64).unwrap();
        let rx = dev.alloc(hbm, 16, 64).unwrap();
        let bufs: Vec<DeviceAddr> = (0..4).map(|_| dev.alloc(hbm, 64, 64).unwrap()).collect();
        for (i, b) in bufs.iter().enumerate() {
            dev.write(*b, &[i as u8 + 1; 64]).unwrap();
        }
        let q = nrt_hal::DmaQueueId { engine: 0, queue: 3 };
        dev.dma_queue_init(CoreId(0), q, DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: 1, completion_semaphore: None, completion_event: None }).unwrap();
        let program = |src: DeviceAddr, dst: DeviceAddr| {
            let (t, r) = udma_copy_pair(src, dst, 64);
            dev.write(tx, &t).unwrap();
            dev.write(rx, &r).unwrap();
        };
        let mut got = [0u8; 64];
        program(bufs[0], bufs[1]);
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        dev.read(bufs[1], &mut got).unwrap();
        assert_eq!(got, [1; 64]);
        // Same descriptors, the page written elsewhere: copied again.
        dev.write(bufs[0], &[7; 64]).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        dev.read(bufs[1], &mut got).unwrap();
        assert_eq!(got, [7; 64]);
        // Rewritten in place: the new source and destination.
        program(bufs[2], bufs[3]);
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        dev.read(bufs[3], &mut got).unwrap();
        assert_eq!(got, [3; 64]);
        dev.read(bufs[1], &mut got).unwrap();
        assert_eq!(got, [7; 64], "the old destination is left alone");
        assert_eq!(dev.dma_queue_state(CoreId(0), q).unwrap().tx_head, 3);
    }

    /// The pairs kept per slot follow a ring walked round and round: each
    /// slot's pair is reused while its lines hold, and a slot rewritten
    /// between rounds (another source, destination and length) is walked
    /// as rewritten, on both sides.
    #[test]
    fn kept_pairs_follow_a_ring_walked_round_and_rewritten() {
        use nrt_hal::conformance::udma_copy_pair;
        let dev = SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build(), 0);
        let hbm = MemoryLocation::Hbm { channel: 0 };
        let slots = 4u64;
        let tx = dev.alloc(hbm, slots * 16, 64).unwrap();
        let rx = dev.alloc(hbm, slots * 16, 64).unwrap();
        let src: Vec<DeviceAddr> = (0..slots + 1).map(|_| dev.alloc(hbm, 128, 64).unwrap()).collect();
        let dst: Vec<DeviceAddr> = (0..slots + 1).map(|_| dev.alloc(hbm, 128, 64).unwrap()).collect();
        let q = nrt_hal::DmaQueueId { engine: 2, queue: 5 };
        dev.dma_queue_init(CoreId(0), q, DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: slots as u32, completion_semaphore: Some(7), completion_event: None }).unwrap();
        let program = |slot: u64, s: DeviceAddr, d: DeviceAddr, len: u32| {
            let (t, r) = udma_copy_pair(s, d, len);
            dev.write(tx.offset(slot * 16), &t).unwrap();
            dev.write(rx.offset(slot * 16), &r).unwrap();
        };
        for slot in 0..slots {
            program(slot, src[slot as usize], dst[slot as usize], 64);
        }
        let mut got = [0u8; 128];
        for round in 0..3u8 {
            if round == 2 {
                // Slot 2 now copies 128 bytes from the spare buffers.
                program(2, src[slots as usize], dst[slots as usize], 128);
            }
            for (slot, s) in src[..slots as usize].iter().enumerate() {
                dev.write(*s, &[round * 16 + slot as u8 + 1; 128]).unwrap();
            }
            dev.write(src[slots as usize], &[0xEE; 128]).unwrap();
            for _ in 0..slots {
                dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
            }
            for (slot, d) in dst[..slots as usize].iter().enumerate() {
                dev.read(*d, &mut got).unwrap();
                // Round 2 rewrote slot 2: its old destination keeps round 1's bytes.
                let want = if round == 2 && slot == 2 { 16 + 3 } else { round * 16 + slot as u8 + 1 };
                assert_eq!(&got[..64], &[want; 64][..], "round {round}, slot {slot}");
                assert_eq!(&got[64..], &[0; 64][..], "only 64 bytes copied");
            }
            dev.read(dst[slots as usize], &mut got).unwrap();
            assert_eq!(got, if round == 2 { [0xEE; 128] } else { [0; 128] }, "round {round}: the rewritten slot");
        }
        assert_eq!(dev.semaphore_read(CoreId(0), 7).unwrap(), 12, "every packet completed");
    }

    /// A trace ring bound after walks that found none gets the records of
    /// the walks after it (the skipped lookup follows the bindings), and
    /// one unbound again gets none.
    #[test]
    fn a_trace_ring_bound_between_walks_gets_their_records() {
        use nrt_hal::conformance::udma_copy_pair;
        use nrt_hal::{NqSpec, NqType};
        let dev = SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build(), 0);
        let hbm = MemoryLocation::Hbm { channel: 0 };
        let tx = dev.alloc(hbm, 16, 64).unwrap();
        let rx = dev.alloc(hbm, 16, 64).unwrap();
        let (src, dst) = (dev.alloc(hbm, 64, 64).unwrap(), dev.alloc(hbm, 64, 64).unwrap());
        let q = nrt_hal::DmaQueueId { engine: 1, queue: 0 };
        dev.dma_queue_init(CoreId(0), q, DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: 1, completion_semaphore: Some(2), completion_event: None }).unwrap();
        let (t, r) = udma_copy_pair(src, dst, 64);
        dev.write(tx, &t).unwrap();
        dev.write(rx, &r).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        let ring = dev.alloc(hbm, 256, 256).unwrap();
        let spec = NqSpec { core: CoreId(0), engine_index: 1, nq_type: NqType::TraceDma, ring, size_bytes: 256 };
        let trace = dev.nq_init(spec).unwrap();
        assert_eq!(trace.produced(), 0);
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        assert_eq!(trace.produced(), 4, "a start and an end record per packet once the ring is bound");
        dev.nq_destroy(spec).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        assert_eq!(trace.produced(), 4);
        assert_eq!(dev.semaphore_read(CoreId(0), 2).unwrap(), 5, "every packet completed");
    }

    /// A pattern block kept with its copy runs (a tile into SBUF rows)
    /// moves the source's current bytes on every walk; rewritten in place
    /// it is walked as rewritten (another destination, then a cast the
    /// kept runs must not serve); one whose destination is a semaphore
    /// register still raises it, through the general path.
    #[test]
    fn kept_pattern_blocks_follow_their_bytes() {
        use nrt_hal::conformance::udma_copy_pair;
        use nrt_isa::dma_desc::{DmaOp, PATTERN_BIT, PATTERN_BLOCK_SIZE, PatternBlock, PatternDim, PatternSide};
        use nrt_isa::dtype::Dtype;
        let config = SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build();
        let arch = config.arch.desc();
        let dev = SimDevice::new(&config, 0);
        let hbm = MemoryLocation::Hbm { channel: 0 };
        let (rows, row_bytes) = (4u32, 64u32);
        let src = dev.alloc(hbm, u64::from(rows * row_bytes), 64).unwrap();
        let cast_dst = dev.alloc(hbm, u64::from(rows * row_bytes) / 2, 64).unwrap();
        let sbuf = arch.sbuf_addr(CoreId(0)).get();
        let pb = arch.sbuf_partition_bytes;
        // Rows of `src` into partitions 0..4 at byte `at` (fp32, as is).
        let into_rows = |at: u64| PatternBlock {
            op: DmaOp::Copy,
            src: PatternSide::contiguous(src.get(), Dtype::Float32, rows * row_bytes / 4),
            dst: PatternSide {
                addr: sbuf + at,
                dtype: Dtype::Float32,
                ndims: 2,
                dims: [PatternDim { step: 4, size: row_bytes }, PatternDim { step: pb as i32, size: rows }, PatternDim::default(), PatternDim::default()],
            },
            scale: 1.0,
            constant: None,
            transpose: None,
        };
        let block = dev.alloc(hbm, PATTERN_BLOCK_SIZE as u64, 128).unwrap();
        let tx = dev.alloc(hbm, 16, 64).unwrap();
        let rx = dev.alloc(hbm, 16, 64).unwrap();
        let (mut t, mut r) = udma_copy_pair(block, block, PATTERN_BLOCK_SIZE as u32);
        t[3] |= (PATTERN_BIT >> 24) as u8;
        r[3] |= (PATTERN_BIT >> 24) as u8;
        dev.write(tx, &t).unwrap();
        dev.write(rx, &r).unwrap();
        let q = nrt_hal::DmaQueueId { engine: 0, queue: 4 };
        dev.dma_queue_init(CoreId(0), q, DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: 1, completion_semaphore: Some(5), completion_event: None }).unwrap();
        let fill = |seed: u8| {
            let bytes: Vec<u8> = (0..rows * row_bytes).map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed)).collect();
            dev.write(src, &bytes).unwrap();
            bytes
        };
        let rows_at = |at: u64| -> Vec<u8> {
            let mut got = vec![0u8; (rows * row_bytes) as usize];
            for (p, row) in got.chunks_mut(row_bytes as usize).enumerate() {
                dev.read(DeviceAddr(sbuf + p as u64 * pb + at), row).unwrap();
            }
            got
        };
        dev.write(block, &into_rows(128).to_bytes().unwrap()).unwrap();
        for seed in [1u8, 2] {
            let want = fill(seed);
            dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
            assert_eq!(rows_at(128), want, "walk with source seed {seed}");
        }
        // Rewritten in place: another destination offset.
        let want = fill(3);
        dev.write(block, &into_rows(1024).to_bytes().unwrap()).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        assert_eq!(rows_at(1024), want);
        assert_ne!(rows_at(128), want, "the old destination is left alone");
        // Rewritten as a cast to bf16: converted, not copied as is.
        let vals: Vec<f32> = (0..rows * row_bytes / 4).map(|i| i as f32 * 1.25 + 0.1).collect();
        dev.write(src, &vals.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
        let n = rows * row_bytes / 4;
        dev.write(block, &PatternBlock::contiguous_copy(src.get(), Dtype::Float32, cast_dst.get(), Dtype::Bfloat16, n).to_bytes().unwrap()).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        let mut got = vec![0u8; 2 * n as usize];
        dev.read(cast_dst, &mut got).unwrap();
        let want: Vec<u8> = vals.iter().flat_map(|v| half::bf16::from_f32(*v).to_le_bytes()).collect();
        assert_eq!(got, want);
        // A block into a semaphore's SET register (4 bytes, as is).
        let one = dev.alloc(hbm, 64, 64).unwrap();
        dev.write(one, &9u32.to_le_bytes()).unwrap();
        let sem = arch.semaphore_addr(CoreId(0), nrt_hal::arch::EVT_SEM_SEM_SET, 40).get();
        dev.write(block, &PatternBlock::contiguous_copy(one.get(), Dtype::Uint32, sem, Dtype::Uint32, 1).to_bytes().unwrap()).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        assert_eq!(dev.semaphore_read(CoreId(0), 40).unwrap(), 9);
        assert_eq!(dev.semaphore_read(CoreId(0), 5).unwrap(), 5, "every packet completed");
    }

    #[test]
    fn tail_overrun_aborts_the_queue() {
        let dev = SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build(), 0);
        let hbm = MemoryLocation::Hbm { channel: 0 };
        let tx = dev.alloc(hbm, 32 * 16, 256).unwrap();
        let rx = dev.alloc(hbm, 32 * 16, 256).unwrap();
        let q = nrt_hal::DmaQueueId { engine: 0, queue: 2 };
        dev.dma_queue_init(CoreId(0), q, DmaRingConfig { tx_ring: tx, rx_ring: rx, descriptors: 32, completion_semaphore: None, completion_event: None }).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 33, 33).unwrap();
        let st = dev.dma_queue_state(CoreId(0), q).unwrap();
        assert_eq!((st.status, st.tx_head), (DmaQueueStatus::Aborted, 0));
    }
}
