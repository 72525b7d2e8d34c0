//! The sequencer's instruction cache: blocks of fetched records with their
//! decodes, kept across executions and checked against the memory they
//! came from.
//!
//! A sequencer runs the same few streams again and again (the runtime's
//! dispatcher, then a model image, then back), so fetching and decoding a
//! record once per execution would be most of the cost of a small model.
//! Each cached block remembers the [`Stamp`] of the memory pages it was
//! read from; a lookup first checks that stamp (one atomic load per page),
//! so any write to those pages (host, DMA, another engine) since the fetch
//! is seen before the next record of the block executes, exactly as an
//! uncached fetch would see it. When the pages changed, the versions of
//! the block's own 1 KiB lines decide: writes elsewhere on the pages (a
//! small tensor the allocator put beside the program) keep the block
//! ([`Stamp::revalidate`]), a write into its lines refetches it. Memory
//! that cannot be stamped (a register window) is re-read on every lookup.

use crate::port::{Bus, StoreRoute};
use crate::engine::record::{RECORD_BYTES, Record};
use crate::memory::pages::Stamp;
use nrt_hal::DeviceAddr;
use nrt_isa::instr::{DecodeError, Instruction};
use std::sync::atomic::{AtomicU64, Ordering};

/// Records per cached block (4 KiB of instructions).
pub const BLOCK_RECORDS: u64 = 64;

/// Blocks a sequencer keeps (dispatcher, image regions, loops).
pub const BLOCKS: usize = 8;

/// One fetched record, decoded (the raw bytes stay in the block).
#[derive(Clone, Debug)]
pub struct Entry {
    /// Header and synchronisation fields.
    pub rec: Record,
    /// The typed decode; a record that does not decode holds a NOP here
    /// and its error in `malformed` (see [`Entry::decoded`]), so the
    /// quick issue path, whose records all decode, matches the
    /// instruction without testing the result first.
    pub instr: Instruction,
    /// Why the record does not decode (raised when it executes); `None`
    /// when `instr` is its decode.
    pub malformed: Option<DecodeError>,
    /// Whether the record neither waits nor updates anything
    /// ([`Record::is_unsynchronised`], worked out once at decode).
    pub plain: bool,
    /// Whether the record is PSEUDO_INST EXIT_EXECUTION (the POOL engine
    /// joins the Q7 cluster before it).
    pub exit: bool,
    /// The registers the record changes when it issues and completes
    /// ([`crate::engine::sync::changes`]), whose waiters it wakes.
    pub changes: crate::wake::Changes,
    /// The record's semaphore / event handshake, parsed once.
    pub plan: crate::engine::sync::Plan,
    /// What the issue path must look at besides the handshake ([`flag`]),
    /// worked out once so an ordinary record tests one byte.
    pub flags: u8,
    /// The encoded key range ([`crate::wake::Change::key_range`]) of the
    /// record's one change, when it has exactly one (a take, an update),
    /// as the step's key test takes it ([`crate::engine::keys::KeySpan`]): the
    /// step tests the other engines' published keys against it before it
    /// calls the wake. `None` with no change or several.
    pub key_range: Option<crate::engine::keys::KeySpan>,
    /// The encoded key range of the registers a CTRL_ER resets
    /// ([`crate::wake::Change::key_range`] of its [`crate::wake::Change::Sems`]
    /// or [`crate::wake::Change::Events`] range), worked out at decode so
    /// the reset's wake test needs no call; empty for any other record.
    pub reset_keys: crate::engine::keys::KeySpan,
    /// Where a WRITE's 32-bit store lands, resolved through the device's
    /// address map once per fetch (the map never changes; see
    /// `Bus::store_route`); `None` for other records and for addresses
    /// that do not decode (the store then reports the error when it
    /// executes).
    pub route: Option<StoreRoute>,
}

/// Bits of [`Entry::flags`].
pub mod flag {
    /// DRAIN: waits for the DMA queues (and the Q7 cluster).
    pub const DRAIN: u8 = 1 << 0;
    /// On POOL, joins the Q7 cluster first (HALT, EXTENDED_INST, EXIT).
    pub const POOL_Q7_JOIN: u8 = 1 << 1;
    /// Writes an INST_START trace record (debug_cmd 3 or 7).
    pub const TRACE_START: u8 = 1 << 2;
    /// Writes an INST_END trace record (debug_cmd 5 or 7).
    pub const TRACE_END: u8 = 1 << 3;
    /// Hands work to another agent (see `engine::keys::hands_off_work`).
    pub const HANDS_OFF: u8 = 1 << 4;
    /// EVENT_SEMAPHORE: on POOL its completion goes through the Q7 gate.
    pub const EVENT_SEMAPHORE: u8 = 1 << 5;
    /// One of the control records the sequencer's quick issue path
    /// executes (NOP, EVENT_SEMAPHORE, PROLOGUE, NOTIFY, WRITE, CTRL_AL,
    /// CTRL_BR, CTRL_POLL_SEM, CTRL_ER, EXIT) whose handshake is nothing
    /// or a common shape without completion steps
    /// ([`crate::engine::sync::Plan::claims_simply`]: one semaphore wait,
    /// a wait-and-take of one semaphore; EXIT only without any); the rare
    /// bits above still send it down the general path.
    pub const QUICK: u8 = 1 << 6;
    /// Waits or updates something (the record is not
    /// [`crate::engine::record::Record::is_unsynchronised`]): its
    /// handshake is claimed.
    pub const SYNC: u8 = 1 << 7;
}

/// Whether `instr` is executed by the sequencer's quick issue path when
/// the record is unsynchronised (see [`flag::QUICK`]).
fn quick_kind(instr: &Instruction) -> bool {
    use nrt_isa::instr::PseudoSub;
    match instr {
        Instruction::EventSemaphore(_)
        | Instruction::Nop(_)
        | Instruction::PrologueB1(_)
        | Instruction::Notify(_)
        | Instruction::Write(_)
        | Instruction::CtrlAl(_)
        | Instruction::CtrlBr(_)
        | Instruction::CtrlPollSem(_)
        | Instruction::CtrlEr(_) => true,
        Instruction::PseudoInst(p) => p.sub == PseudoSub::ExitExecution,
        _ => false,
    }
}

impl Entry {
    /// Decodes a fetched record: its synchronisation view, its typed
    /// decode and the flags the sequencer tests on every issue.
    pub fn decode(bytes: &[u8; RECORD_BYTES]) -> Entry {
        let rec = Record::decode(bytes);
        let decoded = Instruction::decode(bytes);
        let exit = nrt_isa::instr::slots::is_exit_record(bytes);
        let mut flags = 0;
        let mut set = |on: bool, bit: u8| {
            if on {
                flags |= bit;
            }
        };
        use crate::engine::record::op;
        set(rec.opcode == op::DRAIN, flag::DRAIN);
        set(rec.opcode == op::HALT || rec.opcode == crate::engine::keys::EXTENDED_INST || exit, flag::POOL_Q7_JOIN);
        set(matches!(rec.debug_cmd, 3 | 7), flag::TRACE_START);
        set(matches!(rec.debug_cmd, 5 | 7), flag::TRACE_END);
        set(decoded.as_ref().is_ok_and(crate::engine::keys::hands_off_work), flag::HANDS_OFF);
        set(rec.opcode == op::EVENT_SEMAPHORE, flag::EVENT_SEMAPHORE);
        let plain = rec.is_unsynchronised();
        let plan = crate::engine::sync::Plan::of(&rec);
        set((plain || (plan.claims_simply() && !exit)) && decoded.as_ref().is_ok_and(quick_kind), flag::QUICK);
        set(!plain, flag::SYNC);
        let changes = crate::wake::Changes::of(&crate::engine::sync::changes(&rec));
        let key_range = match changes.as_slice() {
            [one] => Some(crate::engine::keys::KeySpan::of(one.key_range())),
            _ => None,
        };
        let reset_keys = match &decoded {
            Ok(Instruction::CtrlEr(e)) => crate::engine::keys::KeySpan::of(crate::engine::keys::reset_change(e).key_range()),
            _ => crate::engine::keys::KeySpan::EMPTY,
        };
        let (instr, malformed) = match decoded {
            Ok(i) => (i, None),
            Err(e) => (Instruction::Nop(Default::default()), Some(e)),
        };
        Entry { flags, plain, exit, changes, key_range, reset_keys, plan, rec, instr, malformed, route: None }
    }

    /// The typed decode, or why the record does not decode.
    pub fn decoded(&self) -> Result<&Instruction, &DecodeError> {
        match &self.malformed {
            Some(e) => Err(e),
            None => Ok(&self.instr),
        }
    }

    /// [`Entry::decode`] plus what needs the device: the route of a WRITE.
    pub fn decode_for(dev: &impl Bus, bytes: &[u8; RECORD_BYTES]) -> Entry {
        let mut e = Entry::decode(bytes);
        if let Ok(Instruction::Write(w)) = e.decoded() {
            e.route = dev.store_route(DeviceAddr(w.addr)).ok();
        }
        e
    }
}

/// One block of the cache as a sequencer's step loop holds it between
/// lookups: a record of the block costs the range compare, one load of
/// its page's version and the entry's presence test, with the block, its
/// program base, its fill state and its page's version counter settled
/// once when the cursor is taken ([`InstrCache::cursor`]). Borrowing the
/// cache, it lives until the next lookup that may refetch.
#[derive(Clone, Copy, Debug)]
pub struct Cursor<'a> {
    /// Program counter of the block's first record.
    first: u64,
    /// The block's entries (one per fetched record).
    entries: &'a [Option<Entry>],
    /// The version counter of the page the block was read from.
    version: &'a AtomicU64,
    /// The page's version when the block was read (or last revalidated).
    stamped: u64,
}

/// The version counter of [`Cursor::default`], which holds no block.
static NO_BLOCK_VERSION: AtomicU64 = AtomicU64::new(0);

impl Default for Cursor<'_> {
    /// A cursor that holds no records (every [`Cursor::hit`] misses): the
    /// step loop's cursor while no block qualifies, so the loop tests one
    /// range instead of an `Option` and a range.
    fn default() -> Self {
        Cursor { first: 0, entries: &[], version: &NO_BLOCK_VERSION, stamped: 0 }
    }
}

impl<'a> Cursor<'a> {
    /// The decoded entry at `pc` if the block holds it, it is decoded and
    /// the block's pages are unmodified since the fetch (as
    /// [`InstrCache::hit`] decides it).
    #[inline]
    pub fn hit(&self, pc: u64) -> Option<&'a Entry> {
        let entry = self.entries.get(usize::try_from(pc.wrapping_sub(self.first)).ok()?)?;
        if self.version.load(Ordering::Acquire) != self.stamped {
            return None;
        }
        entry.as_ref()
    }
}

#[derive(Debug, Default)]
struct Block {
    /// Program base the block was fetched for.
    base: u64,
    /// Program counter of the first record.
    first: u64,
    /// Records fetched.
    len: u64,
    /// Raw bytes of the block.
    bytes: Vec<u8>,
    /// Decodes, filled as records are first looked up.
    entries: Vec<Option<Entry>>,
    /// Versions of the pages read; `None` when uncacheable.
    stamp: Option<Stamp>,
    /// Whether the block holds a fetch at all.
    filled: bool,
    /// Lookup tick at which the block last became the current one (the
    /// block least recently switched to is replaced; staying in a block
    /// costs no bookkeeping).
    used: u64,
}

impl Block {
    #[inline]
    fn holds(&self, base: DeviceAddr, pc: u64) -> bool {
        self.filled && self.base == base.get() && pc >= self.first && pc < self.first + self.len
    }

    #[inline]
    fn fresh(&self) -> bool {
        self.stamp.as_ref().is_some_and(Stamp::is_current)
    }

    /// [`Block::fresh`], or made fresh again when the writes to its pages
    /// since the fetch all lay outside the block's own lines (a small
    /// tensor next to the program, written every execution): the decodes
    /// stay and nothing is fetched.
    fn fresh_or_revalidated(&mut self) -> bool {
        self.stamp.as_mut().is_some_and(|s| s.is_current() || s.revalidate())
    }
}

/// Where a looked-up record sits in the cache (valid until the next
/// lookup or clear).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    block: usize,
    index: usize,
}

/// The instruction cache of one sequencer.
#[derive(Debug, Default)]
pub struct InstrCache {
    blocks: Vec<Block>,
    /// Index of the block the last lookup hit.
    current: usize,
    tick: u64,
}

impl InstrCache {
    /// Forgets every block (a new program, or a core reset).
    pub fn clear(&mut self) {
        for b in &mut self.blocks {
            b.filled = false;
            b.len = 0;
            b.stamp = None;
        }
    }

    /// The record at `pc` of the program of `count` records at `base`,
    /// fetched (and decoded) if it is not cached or its memory changed.
    /// `None` if the fetch fails (the address does not exist). The
    /// sequencer tries [`InstrCache::hit`] first and calls this only when
    /// it misses.
    #[inline]
    pub fn get(&mut self, dev: &impl Bus, base: DeviceAddr, count: u64, pc: u64) -> Option<&Entry> {
        let slot = self.lookup(dev, base, count, pc)?;
        self.entry(slot)
    }

    /// The fast path of [`InstrCache::get`]: the decoded entry at `pc` if
    /// the block the last lookup hit holds it and the block's pages are
    /// unmodified (one range compare, one version load per stamped page
    /// and the entry's presence test; no bookkeeping). A block that holds
    /// no fetch has `len` 0 (see [`InstrCache::clear`]), so the one
    /// wrapping range compare also rejects it.
    #[inline]
    pub fn hit(&self, base: DeviceAddr, pc: u64) -> Option<&Entry> {
        let b = self.blocks.get(self.current)?;
        let index = pc.wrapping_sub(b.first);
        if index >= b.len || b.base != base.get() || !b.fresh() {
            return None;
        }
        b.entries.get(index as usize)?.as_ref()
    }

    /// A [`Cursor`] on the block the last lookup hit, if that block holds
    /// a stamped fetch of the program of `count` records at `base` from
    /// one page (`None` otherwise, a block across two pages included: the
    /// caller then looks records up with [`InstrCache::lookup`]). The
    /// cursor hands out records below `count` only.
    #[inline]
    pub fn cursor(&self, base: DeviceAddr, count: u64) -> Option<Cursor<'_>> {
        let b = self.blocks.get(self.current)?;
        if !b.filled || b.base != base.get() {
            return None;
        }
        let (version, stamped) = b.stamp.as_ref()?.single_page()?;
        let len = b.len.min(count.saturating_sub(b.first));
        let entries = b.entries.get(..usize::try_from(len).ok()?)?;
        Some(Cursor { first: b.first, entries, version, stamped })
    }

    /// The entry at a slot returned by the last [`InstrCache::lookup`]
    /// (`None` if the cache was cleared since).
    pub fn entry(&self, slot: Slot) -> Option<&Entry> {
        self.blocks.get(slot.block)?.entries.get(slot.index)?.as_ref()
    }

    /// Like [`InstrCache::get`], returning the slot instead of a borrow.
    ///
    /// The common case (the record is in the block the last lookup hit,
    /// already decoded, and the block's pages are unmodified) costs the
    /// range compare and one version load per stamped page.
    #[inline]
    pub fn lookup(&mut self, dev: &impl Bus, base: DeviceAddr, count: u64, pc: u64) -> Option<Slot> {
        if let Some(b) = self.blocks.get(self.current)
            && b.holds(base, pc)
            && b.fresh()
        {
            let index = (pc - b.first) as usize;
            if b.entries.get(index).is_some_and(Option::is_some) {
                return Some(Slot { block: self.current, index });
            }
        }
        self.lookup_slow(dev, base, count, pc)
    }

    /// [`InstrCache::lookup`] outside its fast path: another block, a
    /// refetch, or a record not decoded yet.
    #[inline(never)]
    fn lookup_slow(&mut self, dev: &impl Bus, base: DeviceAddr, count: u64, pc: u64) -> Option<Slot> {
        self.tick += 1;
        let hit = if self.blocks.get(self.current).is_some_and(|b| b.holds(base, pc)) {
            Some(self.current)
        } else {
            self.blocks.iter().position(|b| b.holds(base, pc))
        };
        let i = match hit {
            Some(i) if self.blocks[i].fresh_or_revalidated() => i,
            Some(i) => {
                self.fill(i, dev, base, count, pc)?;
                i
            }
            None => {
                let i = self.victim();
                self.fill(i, dev, base, count, pc)?;
                i
            }
        };
        self.current = i;
        let block = &mut self.blocks[i];
        block.used = self.tick;
        let slot = (pc - block.first) as usize;
        let at = slot * RECORD_BYTES;
        if block.entries[slot].is_none() {
            let mut bytes = [0u8; RECORD_BYTES];
            bytes.copy_from_slice(&block.bytes[at..at + RECORD_BYTES]);
            block.entries[slot] = Some(Entry::decode_for(dev, &bytes));
        }
        Some(Slot { block: i, index: slot })
    }

    /// A block to (re)fill: an empty one while the cache grows, else the
    /// one least recently switched to.
    fn victim(&mut self) -> usize {
        if self.blocks.len() < BLOCKS {
            self.blocks.push(Block::default());
            return self.blocks.len() - 1;
        }
        if let Some(i) = self.blocks.iter().position(|b| !b.filled) {
            return i;
        }
        let mut best = 0;
        for (i, b) in self.blocks.iter().enumerate() {
            if b.used < self.blocks[best].used {
                best = i;
            }
        }
        best
    }

    /// Fetches the aligned block around `pc` into block `i`.
    fn fill(&mut self, i: usize, dev: &impl Bus, base: DeviceAddr, count: u64, pc: u64) -> Option<()> {
        let first = pc - pc % BLOCK_RECORDS;
        let len = BLOCK_RECORDS.min(count - first);
        let b = &mut self.blocks[i];
        // Until the fetch succeeds the block holds nothing (`len` 0 keeps
        // the fast path of `hit` away from its old entries).
        b.filled = false;
        b.len = 0;
        b.bytes.resize(len as usize * RECORD_BYTES, 0);
        b.stamp = dev.read_stamped(base.offset(first * RECORD_BYTES as u64), &mut b.bytes).ok()?;
        b.entries.clear();
        b.entries.resize(len as usize, None);
        b.base = base.get();
        b.first = first;
        b.len = len;
        b.filled = true;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::record::build;
    use crate::{SimConfig, SimDevice};
    use nrt_hal::{Device, MemoryLocation};

    fn program(n: usize) -> Vec<u8> {
        (0..n).flat_map(|i| build::write(0x1000 + i as u64 * 4, i as u32)).collect()
    }

    #[test]
    fn hits_until_the_memory_changes() {
        let dev = SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build(), 0);
        let at = dev.alloc(MemoryLocation::Hbm { channel: 0 }, 200 * 64, 4096).unwrap();
        dev.write(at, &program(200)).unwrap();
        let shared = dev.shared().clone();
        let mut c = InstrCache::default();
        for pc in [0u64, 5, 63, 64, 130, 199, 3] {
            let e = c.get(&*shared, at, 200, pc).unwrap();
            assert_eq!(e.decoded().ok().cloned(), Instruction::decode(&build::write(0x1000 + pc * 4, pc as u32)).ok(), "pc {pc}");
        }
        assert_eq!(c.blocks.len(), 4, "blocks of 64 records: 0, 64, 128, 192");
        // A write into the program is seen at the next lookup.
        dev.write(at.offset(5 * 64), &build::exit()).unwrap();
        assert!(c.get(&*shared, at, 200, 5).unwrap().exit);
        // A write elsewhere on the same page (another line) keeps the
        // block: no hit until revalidated, then the decodes are still there.
        assert!(c.get(&*shared, at, 200, 7).is_some());
        dev.write(at.offset(150 * 64 + 16), &[0u8; 4]).unwrap();
        assert!(c.hit(at, 7).is_none(), "the page changed: the fast path declines");
        assert!(c.cursor(at, 200).is_some_and(|k| k.hit(7).is_none()), "the cursor declines too");
        assert_eq!(c.get(&*shared, at, 200, 6).unwrap().decoded().ok().cloned(), Instruction::decode(&build::write(0x1000 + 24, 6)).ok());
        assert!(c.hit(at, 7).is_some(), "not refetched: pc 7's decode was kept");
        assert!(c.cursor(at, 200).is_some_and(|k| k.hit(7).is_some() && k.hit(6).is_some()), "the cursor hits what the block holds");
        assert!(c.cursor(at, 200).is_some_and(|k| k.hit(64).is_none()), "a record past the block misses");
        assert!(c.cursor(at, 7).is_some_and(|k| k.hit(6).is_some() && k.hit(7).is_none()), "nothing at or past the stream's end");
        assert!(c.cursor(DeviceAddr(at.get() + 64), 200).is_none(), "no cursor for another program");
        // A write into the block's own lines refetches it.
        dev.write(at.offset(7 * 64), &build::exit()).unwrap();
        assert!(c.get(&*shared, at, 200, 6).is_some());
        assert!(c.hit(at, 7).is_none(), "refetched: only pc 6 is decoded again");
        assert!(c.get(&*shared, at, 200, 7).unwrap().exit);
        // Past the end of memory: no entry.
        let end = DeviceAddr(shared.info.hbm[0].base.get() + shared.info.hbm[0].size - 64);
        assert!(c.get(&*shared, end, 2, 1).is_none());
    }

    #[test]
    fn least_recently_used_block_is_replaced() {
        let dev = SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(16 << 20).build(), 0);
        let n = (BLOCKS as u64 + 2) * BLOCK_RECORDS;
        let at = dev.alloc(MemoryLocation::Hbm { channel: 0 }, n * 64, 4096).unwrap();
        dev.write(at, &program(n as usize)).unwrap();
        let shared = dev.shared().clone();
        let mut c = InstrCache::default();
        for k in 0..n / BLOCK_RECORDS {
            c.get(&*shared, at, n, k * BLOCK_RECORDS + 1).unwrap();
            c.get(&*shared, at, n, 1).unwrap();
        }
        assert_eq!(c.blocks.len(), BLOCKS);
        assert!(c.blocks.iter().any(|b| b.holds(at, 1)), "the block used every time stays");
        c.clear();
        assert!(c.blocks.iter().all(|b| !b.filled));
        assert_eq!(c.get(&*shared, at, n, 2).unwrap().decoded().ok().cloned(), Instruction::decode(&build::write(0x1000 + 8, 2)).ok());
    }
}
