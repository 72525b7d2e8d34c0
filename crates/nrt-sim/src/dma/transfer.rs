//! The DMA engine's walk of one queue: fetch descriptor pairs, move the
//! bytes, signal completion.

use crate::core::Core;
use crate::cost;
use crate::device::Shared;
use crate::dma::desc::Descriptor;
use crate::fault::FaultKind;
use crate::wake::DmaWake;
use nrt_isa::notification::InferErrorSubtype;
use crate::dma::pattern::{self, Bytes};
use nrt_hal::{DeviceAddr, DmaQueueStatus, HalError, HalResult, NqType};
use nrt_isa::dma_desc::{PATTERN_BLOCK_SIZE, PatternBlock, RingSide};
use crate::memory::pages::PinnedRange;
use std::sync::atomic::Ordering;

/// Descriptor pairs processed per scheduling slice.
pub const BUDGET: usize = 64;

/// Walks queue `qi` of `core` for one slice. Returns whether submitted
/// work remains (the caller re-queues the task). `by` is the engine whose
/// doorbell runs the walk inside its step, if any: the slice's wake
/// leaves it alone (see [`Shared::wake_dma`]).
pub fn run_queue(dev: &Shared, core: &Core, qi: usize, by: Option<usize>) -> bool {
    let q = &core.dma[qi];
    let mut regs = q.regs.lock().unwrap_or_else(|e| e.into_inner());
    if regs.status != DmaQueueStatus::Enabled || regs.config.descriptors == 0 {
        return false;
    }
    let n = u64::from(regs.config.descriptors);
    let mut progressed = false;
    let mut completed = (None, None);
    // The tails are read once: a doorbell rung after this read walks or
    // queues the queue itself (every tail writer does after its add), so
    // the slice walks the pairs submitted when it began, up to its budget.
    let tx_tail = q.tx_tail.load(Ordering::Acquire);
    let rx_tail = q.rx_tail.load(Ordering::Acquire);
    let (tx_ready, rx_ready) = (tx_tail.saturating_sub(regs.tx_head), rx_tail.saturating_sub(regs.rx_head));
    // A tail more than a ring ahead of its head names descriptors that
    // were never written: once both sides have pairs, the engine refuses
    // (ring overrun) instead of walking stale slots.
    let ready = tx_ready.min(rx_ready);
    let ready = if ready > 0 && (tx_ready > n || rx_ready > n) {
        regs.status = DmaQueueStatus::Aborted;
        dev.error_record(core, None, qi as u64, InferErrorSubtype::DmaAbort, qi as u16, regs.clock.max(core.now()));
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
            dev.error_record(core, None, qi as u64, InferErrorSubtype::DmaAbort, qi as u16, start);
        };
        let Some(pair) = fetched else {
            abort(&mut regs);
            break;
        };
        let fault = if pair.first() { dev.faults.on_dma_packet(core.id.0) } else { None };
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
            match move_bytes(dev, &mut regs.copy_pins, &pair, start) {
                Ok(done) => done,
                Err(_) => {
                    abort(&mut regs);
                    break;
                }
            }
        };
        let end = start + cost::dma(bytes);
        if fault == Some(FaultKind::Nan) && bytes >= 4 {
            let _ = dev.write_at(DeviceAddr(nan_at), &f32::NAN.to_le_bytes(), end);
            dev.error_record(core, None, qi as u64, InferErrorSubtype::Numerical, qi as u16, end);
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
                let dma_engine = (qi / dev.arch.queues_per_dma_engine.max(1) as usize) as u8;
                let head = regs.tx_head;
                let pushed = core.with_nq(dma_engine, NqType::TraceDma, |nq| nq.push(dev, crate::nq::record::dma(qi as u16, head, bytes, end)));
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
    if progressed || !more {
        // The queue moved or went idle (DRAIN waiters), and its completion
        // semaphore / event may have changed: one wake for all three.
        dev.wake_dma(core, DmaWake::new(completed.0, completed.1), by);
    }
    more
}

/// Moves the bytes of the descriptor pair `pair` that the queue's copy
/// pins could not: a pattern block's transfer, a plain copy between
/// other pages (re-pinning them) or through on-chip memory, or one with a
/// register window on either side through a bounce buffer, so its writes
/// take effect at `start` plus the transfer's duration. Returns the bytes
/// moved and the address a NaN fault poisons.
#[inline(never)]
fn move_bytes(dev: &Shared, pins: &mut CopyPins, pair: &Pair, start: u64) -> HalResult<(u64, u64)> {
    if pair.pattern() {
        let mut block = [0u8; PATTERN_BLOCK_SIZE];
        let at = Stamped { dev, now: start };
        dev.read(DeviceAddr(pair.src), &mut block)?;
        let b = PatternBlock::from_bytes(&block).map_err(|e| HalError::invalid(DeviceAddr(pair.src), PATTERN_BLOCK_SIZE as u64, e.to_string()))?;
        return pattern::execute(&at, &b).map(|n| (n, b.dst.addr));
    }
    let len = u64::from(pair.len);
    if dev.copy_direct(DeviceAddr(pair.src), DeviceAddr(pair.dst), len)? {
        pins.refresh(dev, pair.src, pair.dst, len);
        return Ok((len, pair.dst));
    }
    let mut buf = vec![0u8; pair.len as usize];
    dev.read(DeviceAddr(pair.src), &mut buf)?;
    dev.write_at(DeviceAddr(pair.dst), &buf, start + cost::dma(len))?;
    Ok((len, pair.dst))
}

/// What the walk uses of a decoded descriptor pair (TX, RX), in one small
/// value: the source (TX buffer), destination (RX buffer), the TX length
/// and the flags, so the walk's common path moves 24 bytes per pair
/// instead of two whole descriptors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The TX descriptor's buffer: the source (or a pattern block).
    pub src: u64,
    /// The RX descriptor's buffer: the destination.
    pub dst: u64,
    /// The TX descriptor's length.
    pub len: u32,
    /// [`Pair::FIRST`], [`Pair::LAST`], [`Pair::PATTERN`] (the TX
    /// descriptor's bits) and [`Pair::LENGTHS_MATCH`].
    flags: u8,
}

impl Pair {
    const FIRST: u8 = 1;
    const LAST: u8 = 2;
    const PATTERN: u8 = 4;
    const LENGTHS_MATCH: u8 = 8;

    /// The pair of TX descriptor `tx` and RX descriptor `rx`.
    pub fn of(tx: &Descriptor, rx: &Descriptor) -> Pair {
        let flags = (u8::from(tx.first) * Pair::FIRST)
            | (u8::from(tx.last) * Pair::LAST)
            | (u8::from(tx.pattern) * Pair::PATTERN)
            | (u8::from(tx.len == rx.len) * Pair::LENGTHS_MATCH);
        Pair { src: tx.addr, dst: rx.addr, len: tx.len, flags }
    }

    /// The TX descriptor starts a packet (a fault may fire on it).
    #[inline]
    pub fn first(&self) -> bool {
        self.flags & Pair::FIRST != 0
    }

    /// The TX descriptor ends a packet (its completion is signalled).
    #[inline]
    pub fn last(&self) -> bool {
        self.flags & Pair::LAST != 0
    }

    /// The TX buffer is a pattern block describing the transfer.
    #[inline]
    pub fn pattern(&self) -> bool {
        self.flags & Pair::PATTERN != 0
    }

    /// Both descriptors give the same length (else the queue aborts).
    #[inline]
    pub fn lengths_match(&self) -> bool {
        self.flags & Pair::LENGTHS_MATCH != 0
    }
}

/// Decoded descriptors kept per ring line (direct-mapped by descriptor
/// address).
const DESC_LINES: usize = 64;

/// A queue's two ring sides ([`DescRing`]) and the pairs the walk
/// decoded from them.
///
/// A small model's queue walks the same few pairs again and again: a
/// pair keeps both descriptors with the versions of the 1 KiB lines they were
/// read from and the pin generation of each side, so while both lines are
/// unmodified (and neither side re-pinned) the next walk of the same two
/// slots costs two compares of the slots, two of the generations and two
/// line-version loads, without either side's line lookup.
#[derive(Clone, Debug, Default)]
pub struct DescRings {
    sides: [DescRing; 2],
    /// Pairs by TX slot (direct-mapped like the sides' lines; allocated
    /// on the first pair kept): a queue whose heads go round its ring
    /// walks a different slot each execution.
    pairs: Vec<Option<LastPair>>,
}

/// A pair [`DescRings`] keeps (see there).
#[derive(Clone, Copy, Debug)]
struct LastPair {
    at: [u64; 2],
    pins: [u64; 2],
    /// The page lines ([`PinnedRange::line_of`]) the two descriptors were
    /// read from, through the pins of generation `pins`.
    lines: [usize; 2],
    versions: [u64; 2],
    pair: Pair,
}

impl DescRings {
    /// The descriptor pair at ring addresses `tx_at` and `rx_at` (as the
    /// walk uses it, [`Pair`]): `None` when either side cannot be read or does not decode (the RX side is
    /// read only when the TX side decodes).
    #[inline]
    pub fn fetch_pair(&mut self, dev: &Shared, tx_at: DeviceAddr, rx_at: DeviceAddr) -> Option<Pair> {
        let slot = (tx_at.get() / 16) as usize % DESC_LINES;
        // The same pin generations mean the same pages the lines were
        // worked out on.
        if let Some(Some(p)) = self.pairs.get(slot)
            && p.at == [tx_at.get(), rx_at.get()]
            && p.pins == [self.sides[0].pins, self.sides[1].pins]
            && let (Some((_, tp)), Some((_, rp))) = (&self.sides[0].page, &self.sides[1].page)
            && tp.line_version_of(p.lines[0]) == p.versions[0]
            && rp.line_version_of(p.lines[1]) == p.versions[1]
        {
            return Some(p.pair);
        }
        self.fetch_pair_slow(dev, tx_at, rx_at)
    }

    /// [`DescRings::fetch_pair`] of another pair (or a changed one):
    /// through each side's line cache, keeping the pair when both sides
    /// came through their pins.
    #[inline(never)]
    fn fetch_pair_slow(&mut self, dev: &Shared, tx_at: DeviceAddr, rx_at: DeviceAddr) -> Option<Pair> {
        let slot = (tx_at.get() / 16) as usize % DESC_LINES;
        if let Some(kept) = self.pairs.get_mut(slot) {
            *kept = None;
        }
        let [tx_ring, rx_ring] = &mut self.sides;
        let tx = tx_ring.fetch(dev, tx_at, RingSide::Tx)?;
        let rx = rx_ring.fetch(dev, rx_at, RingSide::Rx)?;
        let at = [tx_at.get(), rx_at.get()];
        let pair = Pair::of(&tx, &rx);
        if let (Some(tv), Some(rv)) = (tx_ring.cached_version(at[0]), rx_ring.cached_version(at[1]))
            && let (Some(tl), Some(rl)) = (tx_ring.pinned_line(at[0]), rx_ring.pinned_line(at[1]))
        {
            if self.pairs.is_empty() {
                self.pairs = vec![None; DESC_LINES];
            }
            self.pairs[slot] = Some(LastPair { at, pins: [tx_ring.pins, rx_ring.pins], lines: [tl, rl], versions: [tv, rv], pair });
        }
        Some(pair)
    }
}

/// One ring side of a queue as the engine walks it: the pinned page the
/// last descriptor was read through and the descriptors decoded from it.
///
/// A walk of a small model's queue reads the same few descriptors every
/// execution; a line keeps the decode with the version of the 1 KiB page
/// line it was read from ([`PinnedRange::line_version`]), so while that
/// line is unmodified the next walk of the slot costs one version load
/// instead of a locked read and a decode (the tensors and notification
/// rings sharing the page do not invalidate it); after a write to the
/// line it costs a read and a 16-byte compare. Every cached line was read
/// through the current pin (the lines are dropped when the pin changes),
/// so an equal version means equal bytes.
#[derive(Clone, Debug, Default)]
pub struct DescRing {
    page: Option<(u64, PinnedRange)>,
    lines: Vec<Option<DescLine>>,
    /// Bumped whenever `page` is replaced (the lines are dropped then):
    /// a version read through the pin means the same bytes only while
    /// this reads the same.
    pins: u64,
}

#[derive(Clone, Copy, Debug)]
struct DescLine {
    addr: u64,
    version: u64,
    bytes: [u8; 16],
    desc: Option<Descriptor>,
}

impl DescRing {
    /// The version of the page line holding ring address `a` through the
    /// side's pin; `None` without a pin that holds `a`.
    #[inline]
    fn pinned_line_version(&self, a: u64) -> Option<u64> {
        let (base, pin) = self.page.as_ref()?;
        (a >= *base).then(|| pin.line_version((a - *base) as usize))
    }

    /// The page line ([`PinnedRange::line_of`]) of ring address `a`
    /// through the side's pin; `None` without a pin that holds `a`.
    fn pinned_line(&self, a: u64) -> Option<usize> {
        let (base, pin) = self.page.as_ref()?;
        (a >= *base).then(|| pin.line_of((a - *base) as usize))
    }

    /// The line version kept with the decode of the descriptor at ring
    /// address `a`, if that decode is kept and its line still reads that
    /// version through the current pin (what [`DescRing::fetch`] would
    /// return from its cache).
    fn cached_version(&self, a: u64) -> Option<u64> {
        let line = (a / 16) as usize % DESC_LINES;
        let kept = self.lines.get(line).copied().flatten().filter(|l| l.addr == a)?;
        (self.pinned_line_version(a) == Some(kept.version)).then_some(kept.version)
    }

    /// The descriptor at `addr` of a ring of `side`: `None` when its
    /// bytes cannot be read or do not decode (the queue aborts either
    /// way, so the walk's common path carries no error value).
    #[inline]
    pub fn fetch(&mut self, dev: &Shared, addr: DeviceAddr, side: RingSide) -> Option<Descriptor> {
        let a = addr.get();
        let line = (a / 16) as usize % DESC_LINES;
        if let Some((base, pin)) = &self.page
            && a >= *base
            && let Some(Some(l)) = self.lines.get(line)
            && l.addr == a
            && pin.line_version((a - *base) as usize) == l.version
        {
            return l.desc;
        }
        self.fetch_slow(dev, addr, side)
    }

    /// [`DescRing::fetch`] of a descriptor not cached (or whose line
    /// changed): read it and decode it unless its bytes are the cached ones.
    #[inline(never)]
    fn fetch_slow(&mut self, dev: &Shared, addr: DeviceAddr, side: RingSide) -> Option<Descriptor> {
        let a = addr.get();
        let line = (a / 16) as usize % DESC_LINES;
        let mut b = [0u8; 16];
        let version = self.read(dev, addr, &mut b).ok()?;
        // The page changed (rings share pages with tensors the execution
        // writes) but maybe not the descriptor: equal bytes, same decode.
        let desc = match self.lines.get(line) {
            Some(Some(l)) if l.addr == a && l.bytes == b => l.desc,
            _ => Descriptor::decode(&b, side).ok(),
        };
        if let Some(version) = version {
            if self.lines.is_empty() {
                self.lines = vec![None; DESC_LINES];
            }
            self.lines[line] = Some(DescLine { addr: a, version, bytes: b, desc });
        }
        desc
    }

    /// Reads the 16 bytes at `addr`: through the pinned page of the
    /// ring's last read when it holds them (no address decode or
    /// page-table lookup), else by pinning their page if it is backed
    /// memory (dropping the lines), else through the device's address
    /// decode. Returns the version of the page line the bytes lie in when
    /// they came through a pin.
    fn read(&mut self, dev: &Shared, addr: DeviceAddr, out: &mut [u8; 16]) -> HalResult<Option<u64>> {
        let a = addr.get();
        if let Some((base, pin)) = &self.page
            && a >= *base
            && let Some(v) = pin.read_line_versioned((a - *base) as usize, out)
        {
            return Ok(Some(v));
        }
        if let Some((base, pin)) = dev.pin_resident_page(addr, out.len() as u64)
            && let Some(v) = pin.read_line_versioned((a - base.get()) as usize, out)
        {
            self.page = Some((base.get(), pin));
            self.pins = self.pins.wrapping_add(1);
            self.lines.clear();
            return Ok(Some(v));
        }
        dev.read(addr, out)?;
        Ok(None)
    }
}

/// The source and destination pages of a queue's last plain copy, so a
/// walk that copies between the same two pages again (every execution
/// of a small model) skips the address decode and both page-table
/// lookups.
#[derive(Clone, Debug, Default)]
pub struct CopyPins {
    pins: Option<[(u64, PinnedRange); 2]>,
}

impl CopyPins {
    /// Copies `len` bytes from `src` to `dst` through the pins when both
    /// ranges lie inside them; false (nothing done) otherwise.
    fn copy(&self, src: u64, dst: u64, len: u64) -> bool {
        let Some([(sb, sp), (db, dp)]) = &self.pins else { return false };
        src >= *sb && dst >= *db && len <= usize::MAX as u64 && sp.copy_to((src - sb) as usize, dp, (dst - db) as usize, len as usize)
    }

    /// After a memory-to-memory copy the pins could not do: pins the two
    /// pages when each range lies in one backed page (else forgets them).
    fn refresh(&mut self, dev: &Shared, src: u64, dst: u64, len: u64) {
        self.pins = match (dev.pin_resident_page(DeviceAddr(src), len), dev.pin_resident_page(DeviceAddr(dst), len)) {
            (Some((sb, sp)), Some((db, dp))) => Some([(sb.get(), sp), (db.get(), dp)]),
            _ => None,
        };
    }
}

/// Device memory seen by a pattern transfer, with register writes stamped
/// at the transfer's virtual time.
struct Stamped<'a> {
    dev: &'a Shared,
    now: u64,
}

impl Bytes for Stamped<'_> {
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
        assert_eq!(trace.produced(), 2, "one record per packet once the ring is bound");
        dev.nq_destroy(spec).unwrap();
        dev.dma_tail_increment(CoreId(0), q, 1, 1).unwrap();
        assert_eq!(trace.produced(), 2);
        assert_eq!(dev.semaphore_read(CoreId(0), 2).unwrap(), 5, "every packet completed");
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
