//! Lazily backed byte store: the memory core of the simulator.
//!
//! A region (an HBM channel, host-DMA memory, a core's SBUF or PSUM) is a
//! sparse table of fixed-size pages. A page is allocated on its first write;
//! reads of untouched pages return zeros without allocating, so a 96 GiB
//! device costs nothing until used.
//!
//! Concurrency model: the page table is behind an `RwLock` (read-locked for
//! lookups, write-locked only to insert a new page); each page has its own
//! `Mutex`. An access spanning several pages locks them one at a time, so it
//! is atomic per page, not as a whole, which is what a real memory system
//! guarantees too (only naturally aligned words are single-copy atomic, and
//! a 4-byte aligned word never spans two pages). The pages' bytes come
//! from [`super::slab`] (2 MiB slabs the OS may back with huge pages), or,
//! once the region is mapped into the process ([`SparsePages::map_into`],
//! an HBM channel under `NEURON_RT_MAP_HBM`), from the channel's mapping
//! ([`super::mapping`]); those two modules hold the `unsafe` of the memory
//! core. A mapped region's bytes may also change through the mapping,
//! without a lock or a version bump: reads see such stores, stamps do not
//! (the device does not snoop host stores; see `Device::map_hbm`).
//!
//! Every page carries a version that each modification bumps while it
//! holds the page lock. [`SparsePages::read_stamped`] returns a [`Stamp`]
//! of the versions its bytes came from, so a consumer that keeps derived
//! state (the sequencers' decoded instructions) can tell, with one atomic
//! load per page, whether the bytes are still the ones it derived it from.
//! Each 1 KiB line of a page has its own counter as well
//! ([`PinnedRange::line_version`]), for consumers of a few bytes that
//! share their page with busier data.

use super::copy::{copy_bytes, copy_within_bytes};
use super::mapping::ChannelMap;
use super::slab::PageBytes;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// Bytes per backing page.
pub const PAGE_SIZE: u64 = 64 << 10;

/// One backing page: its bytes and a modification counter.
#[derive(Debug)]
struct Page {
    bytes: Mutex<PageBytes>,
    /// Bumped (under the `bytes` lock) by every write, fill and copy into
    /// the page, and when the page is dropped from its region.
    version: AtomicU64,
    /// Set (under the `bytes` lock) when the page is dropped from its
    /// region: a [`PinnedRange`] holding it must not use it any more.
    detached: AtomicBool,
    /// One counter per [`LINE_SIZE`] bytes, bumped with `version` by the
    /// modifications that touch the line: a reader that keeps something
    /// derived from a few bytes (a DMA descriptor) is not invalidated by
    /// writes elsewhere on the page (the tensors and notification rings
    /// that share it).
    lines: [AtomicU64; LINES_PER_PAGE],
}

/// Bytes per versioned line of a page (see [`PinnedRange::line_version`]).
pub const LINE_SIZE: u64 = 1024;

const LINES_PER_PAGE: usize = (PAGE_SIZE / LINE_SIZE) as usize;

impl Page {
    fn over(bytes: PageBytes) -> Page {
        Page {
            bytes: Mutex::new(bytes),
            version: AtomicU64::new(0),
            detached: AtomicBool::new(false),
            lines: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PageBytes> {
        self.bytes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks a modification of `len` bytes at `off`; called with the page
    /// lock held.
    /// The lines go first: a lock-free reader that sees the new page
    /// version must see the line counters moved too ([`Stamp::revalidate`]).
    #[inline]
    fn bump(&self, off: usize, len: usize) {
        if len > 0 {
            let last = ((off + len - 1) / LINE_SIZE as usize).min(LINES_PER_PAGE - 1);
            let first = (off / LINE_SIZE as usize).min(last);
            if first == last {
                // A small write (a ring slot, a register-sized store).
                incr(&self.lines[last]);
            } else {
                self.bump_lines(first, last);
            }
        }
        incr(&self.version);
    }

    /// The line counters of a write spanning lines `first..=last`.
    #[inline(never)]
    fn bump_lines(&self, first: usize, last: usize) {
        for l in &self.lines[first..=last] {
            incr(l);
        }
    }

    /// Marks the whole page modified (dropped from its region).
    fn bump_all(&self) {
        self.bump(0, PAGE_SIZE as usize);
    }
}

/// Advances a page's modification counter (see [`Page::bump`]). Only a
/// holder of the page lock changes the counters, and the lock orders the
/// holders, so a plain load and store is an increment: no locked
/// read-modify-write per counter (nine of them for an 8 KiB write, on
/// every chunk a Q7 kernel writes). Lock-free readers only compare what
/// they load.
#[inline]
fn incr(c: &AtomicU64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Release);
}

/// Hasher of page indices: one multiply (Fibonacci hashing), so a page
/// lookup costs no SipHash rounds on the simulator's hot path.
#[derive(Default)]
struct PageIndexHasher(u64);

impl Hasher for PageIndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type PageTable = HashMap<u64, Arc<Page>, BuildHasherDefault<PageIndexHasher>>;

/// The page versions a read observed (at most two pages: stamped reads are
/// at most one page long), and the versions of the lines it read within
/// each. [`Stamp::is_current`] says whether every one of those pages is
/// still unmodified; [`Stamp::revalidate`] whether the bytes read are,
/// when something else on their pages was written.
#[derive(Clone, Debug, Default)]
pub struct Stamp {
    pages: [Option<(Arc<Page>, u64)>; 2],
    lines: [Option<LineStamp>; 2],
}

/// Most lines of one page a [`Stamp`] records one by one (an instruction
/// block of 4 KiB spans at most five); a read over more lines of a page is
/// revalidated by its page version only.
const STAMP_LINES: usize = 8;

/// The versions of the lines `first..first + n` of a page, as a read saw
/// them.
#[derive(Clone, Copy, Debug, Default)]
struct LineStamp {
    first: usize,
    n: usize,
    versions: [u64; STAMP_LINES],
}

impl LineStamp {
    /// The line versions of `page` over bytes `po..po + n` (n > 0), read
    /// under the page lock; `None` for more than [`STAMP_LINES`] lines.
    fn of(page: &Page, po: usize, n: usize) -> Option<LineStamp> {
        let first = po / LINE_SIZE as usize;
        let last = (po + n - 1) / LINE_SIZE as usize;
        let n = last - first + 1;
        if n > STAMP_LINES {
            return None;
        }
        let mut versions = [0; STAMP_LINES];
        for (v, l) in versions.iter_mut().zip(&page.lines[first..=last]) {
            *v = l.load(Ordering::Acquire);
        }
        Some(LineStamp { first, n, versions })
    }
}

impl Stamp {
    /// The version counter of the stamp's page and the version it read,
    /// when the read lay on one page (an instruction block inside its
    /// page): [`Stamp::is_current`] is then one load of the counter and a
    /// compare, which a caller may keep the two for.
    #[inline]
    pub fn single_page(&self) -> Option<(&AtomicU64, u64)> {
        match &self.pages {
            [Some((p, v)), None] => Some((&p.version, *v)),
            _ => None,
        }
    }

    /// Whether none of the stamped pages was modified since the read.
    #[inline]
    pub fn is_current(&self) -> bool {
        self.pages.iter().flatten().all(|(p, v)| p.version.load(Ordering::Acquire) == *v)
    }

    /// Whether the bytes the read returned are still what their pages
    /// hold, although the pages were modified: true if every modification
    /// since the read lay on other lines of those pages, and then the
    /// stamp takes the pages' current versions (so [`Stamp::is_current`]
    /// holds again until the next write to them). A small tensor or ring
    /// placed on an instruction stream's page is written every execution;
    /// this keeps the stream's decodes.
    ///
    /// Sound because a writer bumps the lines it touches before the page's
    /// version (see `Page::bump`): a page version loaded here that counts
    /// a write makes that write's line bump visible to the line loads that
    /// follow it.
    pub fn revalidate(&mut self) -> bool {
        for (page, lines) in self.pages.iter_mut().zip(&self.lines) {
            let Some((p, v)) = page else { continue };
            let now = p.version.load(Ordering::Acquire);
            if now == *v {
                continue;
            }
            let Some(ls) = lines else { return false };
            if p.detached.load(Ordering::Acquire) {
                return false;
            }
            let same = p.lines[ls.first..ls.first + ls.n].iter().zip(&ls.versions).all(|(l, want)| l.load(Ordering::Acquire) == *want);
            if !same {
                return false;
            }
            *v = now;
        }
        true
    }
}

/// A byte range inside one page, resolved once (the page-table lookup of
/// every later access skipped): the notification rings, which the device
/// writes and the runtime reads several times per execution. Accesses go
/// through the page lock and bump its version like any other; once the
/// page is dropped from its region (see [`SparsePages::clear`]) they
/// return false and the caller takes the ordinary path.
#[derive(Clone, Debug)]
pub struct PinnedRange {
    page: Arc<Page>,
    start: usize,
    len: usize,
}

impl PinnedRange {
    /// Bytes in the range.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `data` to offset `at` of the range; false (nothing written)
    /// if it does not fit or the page was dropped.
    pub fn write(&self, at: usize, data: &[u8]) -> bool {
        if at.checked_add(data.len()).is_none_or(|end| end > self.len) {
            return false;
        }
        let mut g = self.page.lock();
        if self.page.detached.load(Ordering::Acquire) {
            return false;
        }
        let o = self.start + at;
        copy_bytes(&mut g[o..o + data.len()], data);
        self.page.bump(o, data.len());
        true
    }

    /// [`PinnedRange::write`] of a fixed-size record (a notification
    /// ring slot): with the length known at compile time the copy is a
    /// few moves instead of a `memcpy` call.
    #[inline]
    pub fn write_array<const N: usize>(&self, at: usize, data: &[u8; N]) -> bool {
        if at.checked_add(N).is_none_or(|end| end > self.len) {
            return false;
        }
        let mut g = self.page.lock();
        if self.page.detached.load(Ordering::Acquire) {
            return false;
        }
        let o = self.start + at;
        let Some(dst) = g.get_mut(o..o + N).and_then(|d| <&mut [u8; N]>::try_from(d).ok()) else {
            return false;
        };
        *dst = *data;
        self.page.bump(o, N);
        true
    }

    /// Runs `f` with the page lock held (a sequence of accesses as one
    /// step: a notification ring's producer state changes under it too);
    /// `None` (nothing run) if the page was dropped.
    #[inline]
    pub fn with_locked<T>(&self, f: impl FnOnce(&mut LockedRange<'_>) -> T) -> Option<T> {
        let mut g = self.page.lock();
        if self.page.detached.load(Ordering::Acquire) {
            return None;
        }
        Some(f(&mut LockedRange { range: self, bytes: &mut g }))
    }

    /// [`PinnedRange::read_versioned`] of a fixed-size record (a
    /// notification ring slot, a polled window), copied with a few moves:
    /// the page version the bytes belong to, `None` (nothing read) if they
    /// do not fit or the page was dropped.
    #[inline]
    pub fn read_array<const N: usize>(&self, at: usize, out: &mut [u8; N]) -> Option<u64> {
        if at.checked_add(N).is_none_or(|end| end > self.len) {
            return None;
        }
        self.copy_array_locked(at, out, |p| p.version.load(Ordering::Acquire))
    }

    /// Copies the `N` bytes at `at` (in range: the caller checked) into
    /// `out` under the page lock and returns `version` of the page, read
    /// under the same lock; `None` if the page was dropped.
    #[inline]
    fn copy_array_locked<const N: usize>(&self, at: usize, out: &mut [u8; N], version: impl FnOnce(&Page) -> u64) -> Option<u64> {
        let g = self.page.lock();
        if self.page.detached.load(Ordering::Acquire) {
            return None;
        }
        let o = self.start + at;
        let src = g.get(o..o + N).and_then(|d| <&[u8; N]>::try_from(d).ok())?;
        *out = *src;
        Some(version(&self.page))
    }

    /// [`PinnedRange::read_array`] returning the version of the line the
    /// bytes lie in ([`PinnedRange::line_version`]) instead of the page's:
    /// a reader that keeps a copy of a few bytes (a polled window) is not
    /// invalidated by writes elsewhere on the page. `None` (nothing read)
    /// if they do not fit, span two lines, or the page was dropped.
    #[inline]
    pub fn read_array_line<const N: usize>(&self, at: usize, out: &mut [u8; N]) -> Option<u64> {
        let end = at.checked_add(N).filter(|&e| e <= self.len && N > 0)?;
        let line = (self.start + at) / LINE_SIZE as usize;
        if line != (self.start + end - 1) / LINE_SIZE as usize {
            return None;
        }
        self.copy_array_locked(at, out, |p| p.lines[line].load(Ordering::Acquire))
    }

    /// The page's modification counter (see [`Stamp`]): while it reads
    /// the same, bytes read from the range are unchanged. Dropping the
    /// page from its region bumps it too.
    pub fn version(&self) -> u64 {
        self.page.version.load(Ordering::Acquire)
    }

    /// The modification counter of the [`LINE_SIZE`]-byte line of the page
    /// holding offset `at` of the range: while it reads the same, bytes of
    /// that line are unchanged (whatever happens elsewhere on the page).
    /// Dropping the page from its region bumps it too.
    #[inline]
    pub fn line_version(&self, at: usize) -> u64 {
        self.line_version_of(self.line_of(at))
    }

    /// The page line holding offset `at` of the range, as
    /// [`PinnedRange::line_version_of`] takes it: a reader that checks the
    /// same line again and again works the index out once.
    #[inline]
    pub fn line_of(&self, at: usize) -> usize {
        ((self.start + at) / LINE_SIZE as usize).min(LINES_PER_PAGE - 1)
    }

    /// [`PinnedRange::line_version`] of the line [`PinnedRange::line_of`]
    /// answered (any index names some line of the page: it is taken
    /// modulo the page's line count).
    #[inline]
    pub fn line_version_of(&self, line: usize) -> u64 {
        self.page.lines[line % LINES_PER_PAGE].load(Ordering::Acquire)
    }

    /// Like [`PinnedRange::read`], returning the version of the line the
    /// bytes lie in ([`PinnedRange::line_version`]); `None` (nothing
    /// read) if they do not fit, span two lines, or the page was dropped.
    pub fn read_line_versioned(&self, at: usize, buf: &mut [u8]) -> Option<u64> {
        let end = at.checked_add(buf.len()).filter(|&e| e <= self.len && !buf.is_empty())?;
        let (first, last) = ((self.start + at) / LINE_SIZE as usize, (self.start + end - 1) / LINE_SIZE as usize);
        if first != last {
            return None;
        }
        self.read_locked(at, buf, |page| page.lines[first].load(Ordering::Acquire))
    }

    /// Like [`PinnedRange::read`], returning the page version the bytes
    /// belong to (`None`: nothing read).
    pub fn read_versioned(&self, at: usize, buf: &mut [u8]) -> Option<u64> {
        if at.checked_add(buf.len()).is_none_or(|end| end > self.len) {
            return None;
        }
        self.read_locked(at, buf, |page| page.version.load(Ordering::Acquire))
    }

    /// Copies the (bounds-checked) bytes at `at` into `buf` under the page
    /// lock and returns `version` read under the same lock, so the bytes
    /// and the version agree; `None` if the page was dropped.
    fn read_locked(&self, at: usize, buf: &mut [u8], version: impl FnOnce(&Page) -> u64) -> Option<u64> {
        let g = self.page.lock();
        if self.page.detached.load(Ordering::Acquire) {
            return None;
        }
        let o = self.start + at;
        copy_bytes(buf, &g[o..o + buf.len()]);
        Some(version(&self.page))
    }

    /// Copies `len` bytes at offset `at` of this range to offset `dst_at`
    /// of `dst` (another range or this one), like
    /// [`SparsePages::copy_between`] does inside one page pair: both page
    /// locks held, taken in address order, the destination's version
    /// bumped. False (nothing copied) if either side does not hold its
    /// bytes or its page was dropped.
    #[inline]
    pub fn copy_to(&self, at: usize, dst: &PinnedRange, dst_at: usize, len: usize) -> bool {
        if at.checked_add(len).is_none_or(|end| end > self.len) || dst_at.checked_add(len).is_none_or(|end| end > dst.len) {
            return false;
        }
        let (so, doff) = (self.start + at, dst.start + dst_at);
        if Arc::ptr_eq(&self.page, &dst.page) {
            let mut g = self.page.lock();
            if self.page.detached.load(Ordering::Acquire) {
                return false;
            }
            copy_within_bytes(&mut g, so, doff, len);
            self.page.bump(doff, len);
            return true;
        }
        let src_first = Arc::as_ptr(&self.page) < Arc::as_ptr(&dst.page);
        let (first, second) = if src_first { (&self.page, &dst.page) } else { (&dst.page, &self.page) };
        let g1 = first.lock();
        let g2 = second.lock();
        if self.page.detached.load(Ordering::Acquire) || dst.page.detached.load(Ordering::Acquire) {
            return false;
        }
        let (sg, mut dg) = if src_first { (g1, g2) } else { (g2, g1) };
        copy_bytes(&mut dg[doff..doff + len], &sg[so..so + len]);
        dst.page.bump(doff, len);
        true
    }

    /// Copies bytes at offset `at` of the range into `buf`; false (nothing
    /// read) if they do not fit or the page was dropped.
    pub fn read(&self, at: usize, buf: &mut [u8]) -> bool {
        self.read_versioned(at, buf).is_some()
    }

    /// [`PinnedRange::read`] of consecutive fixed-size records (a
    /// notification ring's harvest) into `out`, each copied with a few
    /// moves under one page lock instead of a `memcpy` call, and no
    /// version read; false (nothing read) if they do not fit or the page
    /// was dropped.
    #[inline]
    pub fn read_records<const N: usize>(&self, at: usize, out: &mut [[u8; N]]) -> bool {
        let Some(len) = out.len().checked_mul(N) else { return false };
        if at.checked_add(len).is_none_or(|end| end > self.len) {
            return false;
        }
        let g = self.page.lock();
        if self.page.detached.load(Ordering::Acquire) {
            return false;
        }
        let o = self.start + at;
        let Some(src) = g.get(o..o + len) else { return false };
        for (dst, rec) in out.iter_mut().zip(src.as_chunks::<N>().0) {
            *dst = *rec;
        }
        true
    }
}

/// A [`PinnedRange`] whose page lock is held ([`PinnedRange::with_locked`]).
pub struct LockedRange<'a> {
    range: &'a PinnedRange,
    bytes: &'a mut [u8],
}

impl LockedRange<'_> {
    /// [`PinnedRange::write_array`] under the held lock: false (nothing
    /// written) if the bytes do not fit the range.
    #[inline]
    pub fn write_array<const N: usize>(&mut self, at: usize, data: &[u8; N]) -> bool {
        if at.checked_add(N).is_none_or(|end| end > self.range.len) {
            return false;
        }
        let o = self.range.start + at;
        let Some(dst) = self.bytes.get_mut(o..o + N).and_then(|d| <&mut [u8; N]>::try_from(d).ok()) else {
            return false;
        };
        *dst = *data;
        self.range.page.bump(o, N);
        true
    }
}

/// A sparse, lazily allocated byte array of a fixed length.
#[derive(Debug)]
pub struct SparsePages {
    len: u64,
    pages: RwLock<PageTable>,
    /// The mapping the pages' bytes live in once the region is mapped
    /// ([`SparsePages::map_into`]); set under the table's write lock.
    map: OnceLock<Arc<ChannelMap>>,
}

impl SparsePages {
    /// A region of `len` bytes, all zero, costing no page memory yet.
    pub fn new(len: u64) -> SparsePages {
        SparsePages { len, pages: RwLock::new(PageTable::default()), map: OnceLock::new() }
    }

    /// Moves the region's bytes into `map` (at least the region's length,
    /// all zero) and keeps them there: every resident page's bytes are
    /// copied to its place in the mapping and the page points there from
    /// now on (its lock, versions and pins stay), and later pages are made
    /// over the mapping. The bytes do not change. Fails (nothing moved)
    /// when the region is mapped already or `map` is too short.
    pub fn map_into(&self, map: Arc<ChannelMap>) -> Result<(), String> {
        if map.len() < self.len {
            return Err(format!("a mapping of {} bytes cannot hold a region of {}", map.len(), self.len));
        }
        let table = self.pages.write().unwrap_or_else(|e| e.into_inner());
        if self.map.get().is_some() {
            return Err("the region is mapped already".into());
        }
        for (&index, page) in table.iter() {
            let mut g = page.lock();
            let Some(mut moved) = PageBytes::mapped(Arc::clone(&map), index) else {
                return Err(format!("page {index} lies outside the mapping"));
            };
            copy_bytes(&mut moved, &g);
            *g = moved;
        }
        self.map.set(map).map_err(|_| "the region is mapped already".to_string())
    }

    /// The mapping the region lives in, once [`SparsePages::map_into`] ran.
    pub fn mapping(&self) -> Option<&Arc<ChannelMap>> {
        self.map.get()
    }

    /// A new page for `index`: slab bytes of zeros, or the mapping's bytes
    /// there when the region is mapped.
    fn new_page(&self, index: u64) -> Page {
        match self.map.get().and_then(|m| PageBytes::mapped(Arc::clone(m), index)) {
            Some(b) => Page::over(b),
            None => Page::over(PageBytes::zeroed()),
        }
    }

    /// A new page for `index` holding `bytes` (exactly one page), built in
    /// one pass with no zero fill first.
    fn new_page_of(&self, index: u64, bytes: &[u8]) -> Page {
        match self.map.get().and_then(|m| PageBytes::mapped(Arc::clone(m), index)) {
            Some(mut b) => {
                copy_bytes(&mut b[..bytes.len()], bytes);
                Page::over(b)
            }
            None => Page::over(PageBytes::copy_of(bytes)),
        }
    }

    /// Reads bytes of page `index` (at `offset` in it) that no page of the
    /// table holds: zeros, or the mapping's bytes when the region is
    /// mapped (stores through the mapping land there). The caller holds
    /// the table lock, so no page for `index` appears meanwhile.
    fn read_absent(&self, index: u64, offset: usize, dst: &mut [u8]) {
        match self.map.get() {
            Some(m) => m.read_at(index * PAGE_SIZE + offset as u64, dst),
            None => dst.fill(0),
        }
    }

    /// Length of the region in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the region is zero-length.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Pages that have been materialised (the memory actually used).
    pub fn resident_pages(&self) -> usize {
        self.pages.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether `off..off+len` lies inside the region.
    pub fn contains(&self, off: u64, len: u64) -> bool {
        off.checked_add(len).is_some_and(|end| end <= self.len)
    }

    fn page(&self, index: u64) -> Option<Arc<Page>> {
        self.pages.read().unwrap_or_else(|e| e.into_inner()).get(&index).cloned()
    }

    fn page_or_insert(&self, index: u64) -> Arc<Page> {
        if let Some(p) = self.page(index) {
            return p;
        }
        let mut table = self.pages.write().unwrap_or_else(|e| e.into_inner());
        table.entry(index).or_insert_with(|| Arc::new(self.new_page(index))).clone()
    }

    /// Walks `off..off+len` page by page, calling `f(page_index, offset in
    /// page, buffer offset, chunk length)`.
    fn chunks(off: u64, len: u64, mut f: impl FnMut(u64, usize, usize, usize)) {
        let mut done = 0u64;
        while done < len {
            let a = off + done;
            let in_page = a % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(len - done);
            f(a / PAGE_SIZE, in_page as usize, done as usize, n as usize);
            done += n;
        }
    }

    /// Copies bytes at `off` into `buf`. The caller has checked bounds with
    /// [`SparsePages::contains`]; out-of-range parts read as zero.
    pub fn read(&self, off: u64, buf: &mut [u8]) {
        Self::chunks(off, buf.len() as u64, |pi, po, bo, n| {
            let dst = &mut buf[bo..bo + n];
            let table = self.pages.read().unwrap_or_else(|e| e.into_inner());
            match table.get(&pi) {
                Some(p) => copy_bytes(dst, &p.lock()[po..po + n]),
                None => self.read_absent(pi, po, dst),
            }
        });
    }

    /// Reads like [`SparsePages::read`] (at most [`PAGE_SIZE`] bytes, so
    /// at most two pages) and returns the versions the bytes came from.
    /// Pages the range touches are materialised, so a later write to them
    /// is seen by [`Stamp::is_current`]. Returns `None` for a longer read.
    pub fn read_stamped(&self, off: u64, buf: &mut [u8]) -> Option<Stamp> {
        if buf.len() as u64 > PAGE_SIZE {
            return None;
        }
        let mut stamp = Stamp::default();
        let mut k = 0;
        Self::chunks(off, buf.len() as u64, |pi, po, bo, n| {
            let p = self.page_or_insert(pi);
            let g = p.lock();
            copy_bytes(&mut buf[bo..bo + n], &g[po..po + n]);
            let v = p.version.load(Ordering::Acquire);
            stamp.lines[k] = if n > 0 { LineStamp::of(&p, po, n) } else { None };
            drop(g);
            stamp.pages[k] = Some((p, v));
            k += 1;
        });
        Some(stamp)
    }

    /// Resolves `off..off+len` to its page, materialising it, if the range
    /// lies inside one page (`None` otherwise). The caller has checked
    /// bounds.
    pub fn pin(&self, off: u64, len: u64) -> Option<PinnedRange> {
        let first = off / PAGE_SIZE;
        if len == 0 || (off + len - 1) / PAGE_SIZE != first {
            return None;
        }
        let page = self.page_or_insert(first);
        Some(PinnedRange { page, start: (off % PAGE_SIZE) as usize, len: len as usize })
    }

    /// Like [`SparsePages::pin`] but only for a page that is already
    /// backed (`None` for an untouched one): a reader that pins what it
    /// reads must not make zero pages resident.
    pub fn pin_resident(&self, off: u64, len: u64) -> Option<PinnedRange> {
        let first = off / PAGE_SIZE;
        if len == 0 || (off + len - 1) / PAGE_SIZE != first {
            return None;
        }
        let page = self.page(first)?;
        Some(PinnedRange { page, start: (off % PAGE_SIZE) as usize, len: len as usize })
    }

    /// Copies `data` to `off`, materialising pages as needed. The caller
    /// has checked bounds.
    pub fn write(&self, off: u64, data: &[u8]) {
        Self::chunks(off, data.len() as u64, |pi, po, bo, n| {
            if n as u64 == PAGE_SIZE && self.page(pi).is_none() {
                // A whole new page (bulk staging of constants): materialise it
                // from the data instead of zero-filling it and copying over.
                let mut table = self.pages.write().unwrap_or_else(|e| e.into_inner());
                if let std::collections::hash_map::Entry::Vacant(v) = table.entry(pi) {
                    v.insert(Arc::new(self.new_page_of(pi, &data[bo..bo + n])));
                    return;
                }
            }
            let p = self.page_or_insert(pi);
            let mut g = p.lock();
            copy_bytes(&mut g[po..po + n], &data[bo..bo + n]);
            p.bump(po, n);
        });
    }

    /// Fills `len` bytes at `off` with `value`. Filling untouched pages with
    /// zero costs nothing (in a mapped region it returns their memory).
    pub fn fill(&self, off: u64, len: u64, value: u8) {
        Self::chunks(off, len, |pi, po, _, n| {
            let page = if value == 0 { self.page_or_zero_absent(pi, po, n) } else { Some(self.page_or_insert(pi)) };
            if let Some(p) = page {
                let mut g = p.lock();
                g[po..po + n].fill(value);
                p.bump(po, n);
            }
        });
    }

    /// Page `index`, or, when no page holds it, `None` after zeroing
    /// `n` bytes at `offset` of it in the mapping (stores through the
    /// mapping may have put bytes there), under the table lock so no page
    /// appears meanwhile.
    fn page_or_zero_absent(&self, index: u64, offset: usize, n: usize) -> Option<Arc<Page>> {
        let table = self.pages.read().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = table.get(&index) {
            return Some(Arc::clone(p));
        }
        if let Some(m) = self.map.get() {
            m.zero(index * PAGE_SIZE + offset as u64, n as u64);
        }
        None
    }

    /// Copies `len` bytes from `src` at `src_off` to `dst` at `dst_off`
    /// with one memcpy per page pair, no intermediate buffer. Two page
    /// locks are held at once, always taken in address order, so
    /// concurrent copies in opposite directions cannot deadlock. Source
    /// and destination may be the same region (overlap copies forward in
    /// page-sized chunks, like a DMA engine does).
    pub fn copy_between(src: &SparsePages, src_off: u64, dst: &SparsePages, dst_off: u64, len: u64) {
        let mut done = 0u64;
        while done < len {
            let (s, d) = (src_off + done, dst_off + done);
            let (sp, so) = (s / PAGE_SIZE, (s % PAGE_SIZE) as usize);
            let (dp, doff) = (d / PAGE_SIZE, (d % PAGE_SIZE) as usize);
            let n = (PAGE_SIZE as usize - so).min(PAGE_SIZE as usize - doff).min((len - done) as usize);
            let dpage = dst.page_or_insert(dp);
            match src.page(sp) {
                None => {
                    // The source table's lock keeps a page from appearing
                    // while its absent bytes are read (taken before the
                    // page lock, as every reader does).
                    let table = src.pages.read().unwrap_or_else(|e| e.into_inner());
                    let mut g = dpage.lock();
                    match table.get(&sp) {
                        Some(p) if Arc::ptr_eq(p, &dpage) => copy_within_bytes(&mut g, so, doff, n),
                        Some(p) => {
                            let p = Arc::clone(p);
                            drop(g);
                            drop(table);
                            Self::copy_page_pair(&p, so, &dpage, doff, n);
                            done += n as u64;
                            continue;
                        }
                        None => src.read_absent(sp, so, &mut g[doff..doff + n]),
                    }
                    dpage.bump(doff, n);
                }
                Some(spage) if Arc::ptr_eq(&spage, &dpage) => {
                    let mut g = spage.lock();
                    copy_within_bytes(&mut g, so, doff, n);
                    spage.bump(doff, n);
                }
                Some(spage) => Self::copy_page_pair(&spage, so, &dpage, doff, n),
            }
            done += n as u64;
        }
    }

    /// Copies `n` bytes from `spage` at `so` to another page `dpage` at
    /// `doff`, both locks held (taken in address order).
    fn copy_page_pair(spage: &Arc<Page>, so: usize, dpage: &Arc<Page>, doff: usize, n: usize) {
        let src_first = Arc::as_ptr(spage) < Arc::as_ptr(dpage);
        let (first, second) = if src_first { (spage, dpage) } else { (dpage, spage) };
        let g1 = first.lock();
        let g2 = second.lock();
        let (sg, mut dg) = if src_first { (g1, g2) } else { (g2, g1) };
        copy_bytes(&mut dg[doff..doff + n], &sg[so..so + n]);
        dpage.bump(doff, n);
    }

    /// Drops every page (all bytes read as zero again; a mapped region's
    /// memory is returned).
    pub fn clear(&self) {
        let mut table = self.pages.write().unwrap_or_else(|e| e.into_inner());
        for p in table.values() {
            // Stamps and pins holding the page must see it go.
            let _g = p.lock();
            p.bump_all();
            p.detached.store(true, Ordering::Release);
        }
        table.clear();
        if let Some(m) = self.map.get() {
            m.zero(0, self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn huge_region_is_free_until_touched() {
        let m = SparsePages::new(96 << 30);
        let mut b = [1u8; 16];
        m.read(90 << 30, &mut b);
        assert_eq!(b, [0; 16]);
        assert_eq!(m.resident_pages(), 0);
        m.fill(0, 1 << 30, 0);
        assert_eq!(m.resident_pages(), 0);
        m.write((50 << 30) + PAGE_SIZE - 2, &[9, 9, 9, 9]);
        assert_eq!(m.resident_pages(), 2);
    }

    #[test]
    fn stamps_see_every_kind_of_modification() {
        let m = SparsePages::new(4 * PAGE_SIZE);
        let other = SparsePages::new(4 * PAGE_SIZE);
        let mut b = [0u8; 64];
        // Straddles pages 0 and 1; untouched pages are materialised.
        let s = m.read_stamped(PAGE_SIZE - 32, &mut b).unwrap();
        assert_eq!(m.resident_pages(), 2);
        assert!(s.is_current());
        m.write(3 * PAGE_SIZE, &[1]);
        assert!(s.is_current(), "a page the read did not touch");
        m.write(PAGE_SIZE + 100, &[1]);
        assert!(!s.is_current(), "write to the second page");
        let s = m.read_stamped(0, &mut b).unwrap();
        m.fill(10, 1, 7);
        assert!(!s.is_current(), "fill");
        let s = m.read_stamped(0, &mut b).unwrap();
        other.write(0, &[5; 8]);
        SparsePages::copy_between(&other, 0, &m, 8, 8);
        assert!(!s.is_current(), "copy into the page");
        let s = m.read_stamped(0, &mut b).unwrap();
        assert_eq!(&b[8..16], &[5; 8]);
        SparsePages::copy_between(&m, 0, &other, 0, 8);
        assert!(s.is_current(), "copying out of a page leaves it unmodified");
        m.clear();
        assert!(!s.is_current(), "clear");
        assert!(m.read_stamped(0, &mut vec![0u8; PAGE_SIZE as usize + 1]).is_none());
    }

    #[test]
    fn stamps_revalidate_when_only_other_lines_changed() {
        let m = SparsePages::new(4 * PAGE_SIZE);
        let mut b = [0u8; 64];
        // Line 63 of page 0 and line 0 of page 1.
        let mut s = m.read_stamped(PAGE_SIZE - 32, &mut b).unwrap();
        m.write(100, &[1; 8]);
        assert!(!s.is_current(), "the first page changed");
        assert!(s.revalidate(), "on another line");
        assert!(s.is_current(), "revalidating takes the new version");
        m.write(PAGE_SIZE + 2 * LINE_SIZE, &[1; 8]);
        assert!(s.revalidate(), "another line of the second page");
        m.write(PAGE_SIZE + LINE_SIZE - 1, &[1; 2]);
        assert!(!s.revalidate(), "a write starting in the stamped line 0 of the second page");
        let mut s = m.read_stamped(0, &mut b).unwrap();
        m.fill(LINE_SIZE - 4, 8, 9);
        assert!(!s.revalidate(), "a fill reaching into line 0");
        // Too many lines to recheck one by one: only the page version.
        let mut s = m.read_stamped(2 * PAGE_SIZE, &mut vec![0u8; 16 * LINE_SIZE as usize]).unwrap();
        m.write(3 * PAGE_SIZE - 8, &[1; 8]);
        assert!(!s.revalidate(), "a 16-line stamp is page-granular");
        let mut s = m.read_stamped(0, &mut b).unwrap();
        m.clear();
        assert!(!s.revalidate(), "clear drops the page");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
        /// After any writes, a stamp revalidates exactly when none of them
        /// touched a line the read covered, and then the bytes it read are
        /// still the memory's.
        #[test]
        fn revalidation_is_exact_at_line_granularity(
            start in 0u64..2 * PAGE_SIZE, len in 1u64..4096,
            writes in proptest::collection::vec((0u64..3 * PAGE_SIZE, 1u64..3000), 0..4),
        ) {
            let m = SparsePages::new(4 * PAGE_SIZE);
            m.write(0, &(0..3 * PAGE_SIZE).map(|i| (i * 7 % 251) as u8).collect::<Vec<_>>());
            let mut read = vec![0u8; len as usize];
            let mut s = m.read_stamped(start, &mut read).unwrap();
            let line = |a: u64| a / LINE_SIZE;
            let mut touched = false;
            for (off, n) in writes {
                let n = n.min(4 * PAGE_SIZE - off);
                m.write(off, &vec![0xEE; n as usize]);
                touched |= line(off) <= line(start + len - 1) && line(off + n - 1) >= line(start);
            }
            prop_assert_eq!(s.revalidate(), !touched);
            if !touched {
                let mut now = vec![0u8; len as usize];
                m.read(start, &mut now);
                prop_assert_eq!(now, read);
                prop_assert!(s.is_current());
            }
        }
    }

    #[test]
    fn record_reads_match_the_byte_reads() {
        let m = SparsePages::new(2 * PAGE_SIZE);
        let p = m.pin(PAGE_SIZE, 64).unwrap();
        let bytes: Vec<u8> = (0u8..64).collect();
        assert!(p.write(0, &bytes));
        let mut recs = [[0u8; 16]; 3];
        assert!(p.read_records(16, &mut recs));
        assert_eq!(recs.as_flattened(), &bytes[16..64]);
        assert!(p.read_records(64, &mut [[0u8; 16]; 0]), "nothing to read at the end");
        assert!(!p.read_records(32, &mut recs), "past the end of the range");
        assert!(!p.read_records(usize::MAX, &mut recs), "offset overflow");
        m.clear();
        assert!(!p.read_records(0, &mut recs), "page dropped");
    }

    #[test]
    fn fixed_size_pinned_accesses_match_the_slice_ones() {
        let m = SparsePages::new(2 * PAGE_SIZE);
        let p = m.pin(PAGE_SIZE, 64).unwrap();
        let s = m.read_stamped(PAGE_SIZE, &mut [0u8; 16]).unwrap();
        let line = p.line_version(16);
        assert!(p.write_array(16, &[5u8; 16]));
        assert!(!s.is_current(), "a fixed-size write bumps the page version");
        assert_eq!(p.line_version(16), line + 1, "and its line's");
        let mut b = [0u8; 16];
        m.read(PAGE_SIZE + 16, &mut b);
        assert_eq!(b, [5; 16]);
        let mut w = [0u8; 64];
        assert_eq!(p.read_array(0, &mut w), Some(p.version()));
        assert_eq!(&w[16..32], &[5; 16]);
        assert!(w[..16].iter().chain(&w[32..]).all(|&x| x == 0));
        assert!(!p.write_array(56, &[1u8; 16]), "past the end of the range");
        assert_eq!(p.read_array(49, &mut b), None, "past the end of the range");
        assert!(!p.write_array(usize::MAX, &[1u8; 16]), "offset overflow");
        m.clear();
        assert!(!p.write_array(0, &[1u8; 16]), "page dropped");
        assert_eq!(p.read_array(0, &mut b), None, "page dropped");
    }

    #[test]
    fn fixed_size_line_versioned_reads_follow_their_line_only() {
        let m = SparsePages::new(2 * PAGE_SIZE);
        let p = m.pin(PAGE_SIZE, PAGE_SIZE).unwrap();
        assert!(p.write_array(64, &[3u8; 16]));
        let mut w = [0u8; 64];
        let v = p.read_array_line(64, &mut w).unwrap();
        assert_eq!(v, p.line_version(64));
        assert_eq!(&w[..16], &[3; 16]);
        assert!(w[16..].iter().all(|&x| x == 0));
        assert!(p.write_array(LINE_SIZE as usize + 64, &[1u8; 16]));
        assert_eq!(p.line_version(64), v, "a write to another line of the page");
        assert!(p.write_array(1000, &[1u8; 16]));
        assert_ne!(p.line_version(64), v, "a write into the line");
        assert_eq!(p.read_array_line(LINE_SIZE as usize - 32, &mut w), None, "spans two lines");
        assert_eq!(p.read_array_line(PAGE_SIZE as usize - 32, &mut w), None, "past the end of the range");
        assert_eq!(p.read_array_line(usize::MAX, &mut w), None, "offset overflow");
        m.clear();
        assert_eq!(p.read_array_line(0, &mut w), None, "page dropped");
    }

    #[test]
    fn pinned_ranges_share_bytes_and_versions_until_the_page_goes() {
        let m = SparsePages::new(4 * PAGE_SIZE);
        assert!(m.pin(PAGE_SIZE - 8, 16).is_none(), "straddles two pages");
        assert!(m.pin(0, 0).is_none());
        let p = m.pin(PAGE_SIZE + 4096, 4096).unwrap();
        let mut b = [0u8; 16];
        let s = m.read_stamped(PAGE_SIZE + 4096, &mut b).unwrap();
        assert!(p.write(16, &[7; 16]));
        assert!(!s.is_current(), "a pinned write bumps the page version");
        m.read(PAGE_SIZE + 4096 + 16, &mut b);
        assert_eq!(b, [7; 16]);
        m.write(PAGE_SIZE + 4096 + 32, &[9; 16]);
        assert!(p.read(32, &mut b));
        assert_eq!(b, [9; 16]);
        assert!(!p.write(4090, &[0; 16]), "past the end of the range");
        assert!(!p.read(4096, &mut [0u8; 1]));
        assert!(m.pin_resident(3 * PAGE_SIZE, 16).is_none(), "untouched page");
        assert_eq!(m.resident_pages(), 1);
        let r = m.pin_resident(PAGE_SIZE, PAGE_SIZE).unwrap();
        assert!(r.read(4096 + 32, &mut b));
        assert_eq!(b, [9; 16]);
        // Range to range, across pages and inside one.
        let q = m.pin(2 * PAGE_SIZE, 64).unwrap();
        let s = m.read_stamped(2 * PAGE_SIZE, &mut b).unwrap();
        assert!(p.copy_to(32, &q, 8, 16));
        assert!(!s.is_current(), "a pinned copy bumps the destination");
        m.read(2 * PAGE_SIZE + 8, &mut b);
        assert_eq!(b, [9; 16]);
        assert!(q.copy_to(8, &q, 40, 16));
        m.read(2 * PAGE_SIZE + 40, &mut b);
        assert_eq!(b, [9; 16]);
        assert!(!q.copy_to(60, &p, 0, 16), "past the end of the source");
        assert!(!p.copy_to(0, &q, 60, 16), "past the end of the destination");
        // Line versions: a write elsewhere on the page leaves a line alone.
        let mut w = [0u8; 16];
        let v = q.read_line_versioned(8, &mut w).unwrap();
        assert_eq!(w, [9; 16]);
        m.write(2 * PAGE_SIZE + 4 * LINE_SIZE, &[1; 4]);
        assert_eq!(q.line_version(8), v, "another line of the page");
        m.write(2 * PAGE_SIZE + LINE_SIZE - 2, &[1; 4]);
        assert_eq!(q.line_version(8), v + 1, "a write ending in the line");
        assert!(m.pin(2 * PAGE_SIZE + LINE_SIZE - 8, 16).unwrap().read_line_versioned(0, &mut w).is_none(), "spans two lines");
        let before = q.line_version(8);
        m.clear();
        assert_ne!(q.line_version(8), before, "dropping the page bumps its lines");
        assert!(!p.copy_to(0, &q, 0, 16), "the pages were dropped");
        assert!(!r.read(0, &mut b), "the page was dropped");
        assert!(!p.write(0, &[1]), "the page was dropped");
        assert!(!p.read(0, &mut b));
        m.read(PAGE_SIZE + 4096, &mut b);
        assert_eq!(b, [0; 16]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
        #[test]
        fn copy_between_matches_a_flat_copy(src_off in 0u64..200_000, dst_off in 0u64..200_000, len in 0u64..150_000, same in any::<bool>()) {
            // A sixteenth the size under Miri, as in behaves_like_a_flat_array.
            let shrink = if cfg!(miri) { 16 } else { 1 };
            let (src_off, dst_off, len) = (src_off / shrink, dst_off / shrink, len / shrink);
            let (size, filled) = (400_000 / shrink as usize, 300_000 / shrink as u32);
            let a = SparsePages::new(size as u64);
            let b = SparsePages::new(size as u64);
            let init: Vec<u8> = (0..filled).map(|i| (i % 251) as u8).collect();
            a.write(0, &init);
            let mut flat_a = vec![0u8; size];
            flat_a[..filled as usize].copy_from_slice(&init);
            let mut flat_b = vec![0u8; size];
            if same {
                SparsePages::copy_between(&a, src_off, &a, dst_off, len);
                // Forward page-chunked copy semantics for overlaps.
                let mut done = 0u64;
                while done < len {
                    let (s, d) = (src_off + done, dst_off + done);
                    let n = (PAGE_SIZE - s % PAGE_SIZE).min(PAGE_SIZE - d % PAGE_SIZE).min(len - done) as usize;
                    flat_a.copy_within(s as usize..s as usize + n, d as usize);
                    done += n as u64;
                }
            } else {
                SparsePages::copy_between(&a, src_off, &b, dst_off, len);
                flat_b[dst_off as usize..(dst_off + len) as usize].copy_from_slice(&flat_a[src_off as usize..(src_off + len) as usize]);
            }
            let mut got = vec![0u8; size];
            a.read(0, &mut got);
            prop_assert!(got == flat_a, "source region differs");
            b.read(0, &mut got);
            prop_assert!(got == flat_b, "destination region differs");
        }

        /// A region mapped into the process (before, between or after
        /// the writes) keeps behaving like a flat array, stores through
        /// the mapping included, and the mapping holds the same bytes.
        #[cfg(all(target_os = "linux", not(miri)))]
        #[test]
        fn a_mapped_region_behaves_like_a_flat_array(
            ops in prop::collection::vec((0u64..300_000, 1usize..100_000, any::<u8>(), 0u8..4), 1..12),
            map_at in 0usize..13,
        ) {
            let len = 6 * PAGE_SIZE;
            let m = SparsePages::new(len);
            let mut flat = vec![0u8; len as usize];
            let map = || {
                let cm = Arc::new(ChannelMap::new(len, "pages-test").unwrap());
                m.map_into(Arc::clone(&cm)).unwrap();
                cm
            };
            let mut cm = None;
            for (i, (off, n, v, kind)) in ops.iter().copied().enumerate() {
                if i == map_at {
                    cm = Some(map());
                }
                let n = n.min((len - off) as usize);
                let data: Vec<u8> = (0..n).map(|k| v.wrapping_add(k as u8)).collect();
                match kind {
                    0 => m.fill(off, n as u64, v),
                    1 if cm.is_some() => {
                        // A client's store through the mapping.
                        cm.as_ref().unwrap().store(off, &data);
                    }
                    2 => {
                        let src = (off + 7) % (len - n as u64);
                        SparsePages::copy_between(&m, src, &m, off, n as u64);
                        // Forward page-chunked copy semantics, as the DMA.
                        let mut done = 0u64;
                        while done < n as u64 {
                            let (s, d) = (src + done, off + done);
                            let k = (PAGE_SIZE - s % PAGE_SIZE).min(PAGE_SIZE - d % PAGE_SIZE).min(n as u64 - done) as usize;
                            flat.copy_within(s as usize..s as usize + k, d as usize);
                            done += k as u64;
                        }
                        continue;
                    }
                    _ => m.write(off, &data),
                }
                if kind == 0 {
                    flat[off as usize..off as usize + n].fill(v);
                } else {
                    flat[off as usize..off as usize + n].copy_from_slice(&data);
                }
            }
            let cm = cm.unwrap_or_else(map);
            let mut all = vec![0u8; len as usize];
            m.read(0, &mut all);
            prop_assert!(all == flat, "reads differ from the flat array");
            let mut through = vec![0u8; len as usize];
            cm.read_at(0, &mut through);
            prop_assert!(through == flat, "the mapping differs from the flat array");
        }

        #[test]
        fn behaves_like_a_flat_array(ops in prop::collection::vec((0u64..300_000, 1usize..100_000, any::<u8>(), any::<bool>()), 1..12)) {
            // Under Miri (interpreted, slow) the same shapes a sixteenth
            // the size: still several pages, partial ones at both ends.
            let shrink = if cfg!(miri) { 16 } else { 1 };
            let len = 400_000u64 / shrink;
            let m = SparsePages::new(len);
            let mut flat = vec![0u8; len as usize];
            for (off, n, v, fill) in ops {
                let (off, n) = (off / shrink, n.div_ceil(shrink as usize));
                let n = n.min((len - off) as usize);
                if fill {
                    m.fill(off, n as u64, v);
                    flat[off as usize..off as usize + n].fill(v);
                } else {
                    let data: Vec<u8> = (0..n).map(|i| v.wrapping_add(i as u8)).collect();
                    m.write(off, &data);
                    flat[off as usize..off as usize + n].copy_from_slice(&data);
                }
            }
            let mut all = vec![0u8; len as usize];
            m.read(0, &mut all);
            prop_assert_eq!(all, flat);
        }
    }
}
