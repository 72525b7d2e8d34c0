//! The caches a DMA queue keeps between walks: the decoded descriptor
//! pairs of its two rings and the pages of its last plain copy. State of
//! the queue ([`super::QueueRegs`] holds them), reading device memory only
//! through the [`Bus`] passed to each call.

use crate::dma::desc::Descriptor;
use crate::dma::pattern::CopyPlan;
use crate::memory::Target;
use crate::memory::pages::PinnedRange;
use crate::port::Bus;
use nrt_hal::{DeviceAddr, HalError, HalResult};
use nrt_isa::dma_desc::RingSide;
use nrt_isa::dma_desc::{PATTERN_BLOCK_SIZE, PatternBlock};

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
    pub fn fetch_pair(&mut self, dev: &impl Bus, tx_at: DeviceAddr, rx_at: DeviceAddr) -> Option<Pair> {
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
    fn fetch_pair_slow(&mut self, dev: &impl Bus, tx_at: DeviceAddr, rx_at: DeviceAddr) -> Option<Pair> {
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
    pub fn fetch(&mut self, dev: &impl Bus, addr: DeviceAddr, side: RingSide) -> Option<Descriptor> {
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
    fn fetch_slow(&mut self, dev: &impl Bus, addr: DeviceAddr, side: RingSide) -> Option<Descriptor> {
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
    fn read(&mut self, dev: &impl Bus, addr: DeviceAddr, out: &mut [u8; 16]) -> HalResult<Option<u64>> {
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
            // Forget the lines but keep their storage: a queue whose rings
            // alternate between pages re-pins every execution, and must
            // not reallocate the table each time.
            self.lines.fill(None);
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
    #[inline]
    pub fn copy(&self, src: u64, dst: u64, len: u64) -> bool {
        let Some([(sb, sp), (db, dp)]) = &self.pins else { return false };
        src >= *sb && dst >= *db && len <= usize::MAX as u64 && sp.copy_to((src - sb) as usize, dp, (dst - db) as usize, len as usize)
    }

    /// After a memory-to-memory copy the pins could not do: pins the two
    /// pages when each range lies in one backed page (else forgets them).
    pub fn refresh(&mut self, dev: &impl Bus, src: u64, dst: u64, len: u64) {
        self.pins = match (dev.pin_resident_page(DeviceAddr(src), len), dev.pin_resident_page(DeviceAddr(dst), len)) {
            (Some((sb, sp)), Some((db, dp))) => Some([(sb.get(), sp), (db.get(), dp)]),
            _ => None,
        };
    }
}


/// Pattern blocks kept per queue (direct-mapped by block address).
const BLOCK_LINES: usize = 64;

/// The pattern blocks a queue's TX descriptors point at, decoded once:
/// each kept with the version of the 1 KiB page line it was read from
/// ([`PinnedRange::line_version`]) and, for a plain copy, its
/// [`CopyPlan`], routed ([`RoutedCopy`]). A small model's queue moves the same blocks every
/// execution; while a block's line is unmodified, the next transfer of it
/// costs one version load instead of a locked read, a parse and a walk of
/// both sides. A write to the line (the block rewritten, or anything else
/// sharing its line) makes the next transfer read and decode it again.
#[derive(Clone, Debug, Default)]
pub struct PatternBlocks {
    lines: Vec<Option<KeptBlock>>,
}

#[derive(Clone, Debug)]
struct KeptBlock {
    addr: u64,
    pin: PinnedRange,
    /// The page line of the block through `pin`, and its version when
    /// the block was read.
    line: usize,
    version: u64,
    block: PatternBlock,
    /// The block's copies as addresses (storage reused from block to
    /// block of the slot).
    plan: CopyPlan,
    /// The same copies routed, when the block is a plain copy
    /// ([`CopyPlan::rebuild`]) between memories (no register window or
    /// peer device on either side).
    routed: RoutedCopy,
    planned: bool,
}

/// A plain-copy block's runs with both sides routed once
/// ([`Bus::memory_route`]): a transfer of it is one
/// [`Bus::copy_routed`] per run, with no address decode.
#[derive(Clone, Debug, Default)]
pub struct RoutedCopy {
    runs: Vec<(Target, Target, u64)>,
    bytes: u64,
}

impl RoutedCopy {
    /// Routes every run of `plan`; false (and empty) when a side of one
    /// is not memory of this device.
    fn rebuild(&mut self, dev: &impl Bus, plan: &CopyPlan) -> bool {
        self.runs.clear();
        self.bytes = plan.bytes();
        for &(s, d, n) in plan.runs() {
            match (dev.memory_route(DeviceAddr(s), n), dev.memory_route(DeviceAddr(d), n)) {
                (Some(ts), Some(td)) => self.runs.push((ts, td, n)),
                _ => {
                    self.runs.clear();
                    return false;
                }
            }
        }
        true
    }

    /// The copies, `(source, destination, bytes)` in pattern order.
    pub fn runs(&self) -> &[(Target, Target, u64)] {
        &self.runs
    }

    /// Bytes the block writes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// What [`PatternBlocks::fetch`] found at a block address.
pub enum Fetched<'a> {
    /// A kept block (with its routed runs, when it is a plain copy).
    Kept(&'a PatternBlock, Option<&'a RoutedCopy>),
    /// A block read now that cannot be kept (its bytes are not in one
    /// line of a backed page).
    Read(PatternBlock),
}

impl PatternBlocks {
    /// The pattern block at `addr`: kept while its line holds, else read,
    /// decoded and kept. `Err`: the block cannot be read or does not
    /// decode (the queue aborts).
    #[inline]
    pub fn fetch(&mut self, dev: &impl Bus, addr: u64) -> HalResult<Fetched<'_>> {
        let slot = (addr / PATTERN_BLOCK_SIZE as u64) as usize % BLOCK_LINES;
        let hit = matches!(self.lines.get(slot), Some(Some(k)) if k.addr == addr && k.pin.line_version_of(k.line) == k.version);
        if !hit && let Some(b) = self.fetch_slow(dev, addr, slot)? {
            return Ok(Fetched::Read(b));
        }
        let Some(Some(k)) = self.lines.get(slot) else { unreachable!("kept just now") };
        Ok(Fetched::Kept(&k.block, k.planned.then_some(&k.routed)))
    }

    /// [`PatternBlocks::fetch`] of a block not kept (or changed): reads
    /// and decodes it, keeping it in `slot` when it came through a pin
    /// (`Ok(None)`), else returning it (`Ok(Some)`).
    #[inline(never)]
    fn fetch_slow(&mut self, dev: &impl Bus, addr: u64, slot: usize) -> HalResult<Option<PatternBlock>> {
        let mut bytes = [0u8; PATTERN_BLOCK_SIZE];
        let pinned = dev.pin_resident_page(DeviceAddr(addr), PATTERN_BLOCK_SIZE as u64).and_then(|(base, pin)| {
            let at = (addr - base.get()) as usize;
            let version = pin.read_line_versioned(at, &mut bytes)?;
            Some((pin.line_of(at), version, pin))
        });
        if pinned.is_none() {
            dev.read(DeviceAddr(addr), &mut bytes)?;
        }
        let block = PatternBlock::from_bytes(&bytes).map_err(|e| HalError::invalid(DeviceAddr(addr), PATTERN_BLOCK_SIZE as u64, e.to_string()))?;
        let Some((line, version, pin)) = pinned else { return Ok(Some(block)) };
        if self.lines.is_empty() {
            self.lines = vec![None; BLOCK_LINES];
        }
        // The slot's plan storage is reused for the new block.
        let (mut plan, mut routed) = self.lines[slot].take().map(|k| (k.plan, k.routed)).unwrap_or_default();
        let planned = plan.rebuild(&block) && routed.rebuild(dev, &plan);
        self.lines[slot] = Some(KeptBlock { addr, pin, line, version, block, plan, routed, planned });
        Ok(None)
    }
}
