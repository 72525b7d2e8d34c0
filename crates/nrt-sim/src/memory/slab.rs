//! The bytes behind device pages, carved from 2 MiB slabs the OS may back
//! with huge pages.
//!
//! Why: a Q7 kernel (and any DMA) streams through megabytes of HBM pages.
//! Each 64 KiB page used to be its own heap block on 4 KiB OS pages, so
//! every 4 KiB of a streamed tensor cost a TLB miss and a page walk
//! (measured: a 1M-element fp32 relu on the Q7 cores spent 5–8% of its
//! time on them with the data in L3, 10–20% with it in DRAM). Here a page's
//! 64 KiB is one block of a 2 MiB-aligned slab mapped on its own and
//! advised `MADV_HUGEPAGE` on Linux, so one TLB entry covers 32 pages
//! where transparent huge pages are enabled for advised memory (the
//! common `madvise` setting); elsewhere the slab simply uses small pages.
//!
//! A slab whose blocks are all free is unmapped, except one kept spare so
//! that a region dropped and made again does not remap (and, with huge
//! pages, clear 2 MiB) each time. This module and [`super::mapping`] (the
//! pages of an HBM channel mapped into the process, which a [`PageBytes`]
//! can also hold) are the memory core's `unsafe`: raw blocks handed out
//! as owned byte slices.

use super::pages::PAGE_SIZE;
use std::collections::{BTreeMap, BTreeSet};
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard};

/// Bytes per slab: one x86-64 / AArch64 (4 KiB granule) huge page.
pub const SLAB_BYTES: usize = 2 << 20;

/// Bytes per block: one device page.
const BLOCK: usize = PAGE_SIZE as usize;

/// Blocks per slab.
const BLOCKS: usize = SLAB_BYTES / BLOCK;

/// Bit mask of a slab whose blocks are all in use.
const FULL: u32 = if BLOCKS == 32 { u32::MAX } else { (1u32 << BLOCKS) - 1 };

/// Empty slabs kept mapped for reuse.
const SPARE_SLABS: usize = 1;

/// What the pool knows of one mapped slab.
#[derive(Debug)]
struct SlabState {
    /// The slab's base pointer as mapped: every block pointer is derived
    /// from it (never made from an integer), so each keeps the mapping's
    /// provenance (Miri's `-Zmiri-strict-provenance` checks this).
    base: SlabBase,
    /// Bit `i`: block `i` is handed out.
    used: u32,
    /// Bit `i`: block `i` was handed out since the slab was mapped, so it
    /// may hold old bytes (a fresh mapping reads as zero).
    dirty: u32,
}

/// A slab's base pointer, owned by the pool.
#[derive(Debug)]
struct SlabBase(NonNull<u8>);

// SAFETY: the pointer is only an address to derive blocks from and to
// unmap; the pool's mutex orders every use, and the slab is owned by the
// pool, not by a thread.
unsafe impl Send for SlabBase {}

/// The slabs and which of their blocks are free.
#[derive(Debug, Default)]
struct PoolState {
    /// Every mapped slab, by base address.
    slabs: BTreeMap<usize, SlabState>,
    /// Bases of the slabs with at least one free block (lowest first, so
    /// blocks are packed into few slabs).
    avail: BTreeSet<usize>,
    /// Slabs with no block in use.
    empty: usize,
}

/// A source of page blocks. The simulator uses one per process
/// ([`PageBytes::zeroed`] / [`PageBytes::copy_of`]); tests make their own.
#[derive(Debug, Default)]
pub struct SlabPool {
    state: Mutex<PoolState>,
}

/// The process's pool.
static POOL: SlabPool = SlabPool { state: Mutex::new(PoolState { slabs: BTreeMap::new(), avail: BTreeSet::new(), empty: 0 }) };

impl SlabPool {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Slabs currently mapped.
    pub fn mapped_slabs(&self) -> usize {
        self.lock().slabs.len()
    }

    /// A free block and whether it may hold old bytes.
    fn take(&self) -> (NonNull<u8>, bool) {
        let mut st = self.lock();
        let base = match st.avail.first() {
            Some(&b) => b,
            None => {
                let ptr = map_slab();
                let b = ptr.as_ptr().addr();
                st.slabs.insert(b, SlabState { base: SlabBase(ptr), used: 0, dirty: 0 });
                st.avail.insert(b);
                st.empty += 1;
                b
            }
        };
        let PoolState { slabs, avail, empty } = &mut *st;
        let s = slabs.get_mut(&base).expect("an available slab is mapped");
        let i = (!s.used).trailing_zeros() as usize;
        if s.used == 0 {
            *empty -= 1;
        }
        let bit = 1u32 << i;
        let stale = s.dirty & bit != 0;
        s.used |= bit;
        s.dirty |= bit;
        if s.used == FULL {
            avail.remove(&base);
        }
        // The block lies inside the slab mapped at `base`, never null.
        let p = NonNull::new(s.base.0.as_ptr().wrapping_add(i * BLOCK)).expect("slab blocks are not null");
        (p, stale)
    }

    /// Returns the block at `p` (handed out by [`SlabPool::take`]).
    fn give_back(&self, p: NonNull<u8>) {
        let a = p.as_ptr().addr();
        let base = a & !(SLAB_BYTES - 1);
        let mut st = self.lock();
        let PoolState { slabs, avail, empty } = &mut *st;
        let Some(s) = slabs.get_mut(&base) else { return };
        s.used &= !(1u32 << ((a - base) / BLOCK));
        avail.insert(base);
        if s.used == 0 {
            *empty += 1;
            if *empty > SPARE_SLABS {
                let gone = slabs.remove(&base).expect("the slab is mapped");
                avail.remove(&base);
                *empty -= 1;
                drop(st);
                // SAFETY: the slab was mapped by `map_slab` and no block of
                // it is handed out any more.
                unsafe { unmap_slab(gone.base.0) };
            }
        }
    }
}

/// Where a [`PageBytes`] block lives.
enum Origin {
    /// A slab block, returned to the pool on drop.
    Slab(&'static SlabPool),
    /// A page of a mapped HBM channel; the `Arc` (never read) keeps the
    /// mapping alive while the page points into it.
    Mapped(#[allow(dead_code)] std::sync::Arc<super::mapping::ChannelMap>),
}

/// One page's bytes ([`PAGE_SIZE`] of them): a block of a slab of a
/// [`SlabPool`], returned to it on drop, or a page of a mapped HBM
/// channel ([`PageBytes::mapped`]).
pub struct PageBytes {
    ptr: NonNull<u8>,
    origin: Origin,
}

// SAFETY: a `PageBytes` is the only owner of its block (like a `Box<[u8]>`);
// shared references give only `&[u8]`. A mapped page's bytes may also be
// stored to by the client through its mapping (as device memory changes
// under a DMA); the simulator touches them only by copies.
unsafe impl Send for PageBytes {}
// SAFETY: as above.
unsafe impl Sync for PageBytes {}

impl std::fmt::Debug for PageBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageBytes").field("at", &self.ptr).finish()
    }
}

impl PageBytes {
    /// A page of zeros from the process's pool.
    pub fn zeroed() -> PageBytes {
        PageBytes::zeroed_in(&POOL)
    }

    /// A page from the process's pool holding `bytes` (zeros after them if
    /// they are shorter than a page; only a page's worth is taken).
    pub fn copy_of(bytes: &[u8]) -> PageBytes {
        PageBytes::copy_of_in(&POOL, bytes)
    }

    /// [`PageBytes::zeroed`] from `pool`.
    pub fn zeroed_in(pool: &'static SlabPool) -> PageBytes {
        let (ptr, stale) = pool.take();
        let mut p = PageBytes { ptr, origin: Origin::Slab(pool) };
        if stale {
            p.fill(0);
        }
        p
    }

    /// [`PageBytes::copy_of`] from `pool`.
    pub fn copy_of_in(pool: &'static SlabPool, bytes: &[u8]) -> PageBytes {
        let (ptr, stale) = pool.take();
        let mut p = PageBytes { ptr, origin: Origin::Slab(pool) };
        let n = bytes.len().min(BLOCK);
        p[..n].copy_from_slice(&bytes[..n]);
        if stale {
            p[n..].fill(0);
        }
        p
    }
}

impl PageBytes {
    /// Page `index` of a mapped channel: its bytes are whatever the
    /// channel holds there (nothing is cleared or copied). `None` when the
    /// page lies outside the mapping.
    ///
    /// Only one live `PageBytes` per page of a mapping may be used at a
    /// time: the page table makes at most one page per index, and a page
    /// it dropped is detached (never touched again) before another is
    /// made for the same index.
    pub fn mapped(map: std::sync::Arc<super::mapping::ChannelMap>, index: u64) -> Option<PageBytes> {
        let offset = usize::try_from(index.checked_mul(PAGE_SIZE)?).ok()?;
        if offset.checked_add(BLOCK)? > map.len() as usize {
            return None;
        }
        let ptr = map.at(offset)?;
        Some(PageBytes { ptr, origin: Origin::Mapped(map) })
    }
}

impl std::ops::Deref for PageBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is a live block of BLOCK bytes that only this value
        // owns (initialised: mapped as zeros, or written before reuse; a
        // mapped channel's page is file memory, zero until written, kept
        // mapped by the `Arc` in `origin`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), BLOCK) }
    }
}

impl std::ops::DerefMut for PageBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), BLOCK) }
    }
}

impl Drop for PageBytes {
    fn drop(&mut self) {
        match &self.origin {
            Origin::Slab(pool) => pool.give_back(self.ptr),
            // The bytes stay the channel's; the `Arc` lets the map go.
            Origin::Mapped(_) => {}
        }
    }
}

/// Maps one zero-filled, [`SLAB_BYTES`]-aligned slab (advised for huge
/// pages on Linux); aborts like the global allocator when memory is
/// exhausted.
#[cfg(all(unix, not(miri)))]
fn map_slab() -> NonNull<u8> {
    let layout = std::alloc::Layout::from_size_align(SLAB_BYTES, SLAB_BYTES).expect("the slab layout is valid");
    // Twice the size, so an aligned slab lies inside; the rest is unmapped.
    let span = 2 * SLAB_BYTES;
    // SAFETY: an anonymous private mapping at an address of the kernel's
    // choosing touches no existing memory.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), span, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    if p == libc::MAP_FAILED {
        std::alloc::handle_alloc_error(layout);
    }
    let start = p as usize;
    let base = (start + SLAB_BYTES - 1) & !(SLAB_BYTES - 1);
    let (head, tail) = (base - start, start + span - (base + SLAB_BYTES));
    // SAFETY: both ranges lie in the mapping just made and outside the
    // slab kept; nothing refers to them.
    unsafe {
        if head > 0 {
            libc::munmap(p, head);
        }
        if tail > 0 {
            libc::munmap(p.wrapping_byte_add(base + SLAB_BYTES - start), tail);
        }
    }
    #[cfg(target_os = "linux")]
    // SAFETY: advice on memory this module owns; MADV_HUGEPAGE does not
    // change its contents. Refused advice (huge pages compiled out) leaves
    // small pages, which work the same.
    unsafe {
        libc::madvise(p.wrapping_byte_add(base - start), SLAB_BYTES, libc::MADV_HUGEPAGE);
    }
    // Derived from the mapping's pointer, not made from the integer.
    NonNull::new((p as *mut u8).wrapping_add(base - start)).expect("a mapping is not null")
}

/// Unmaps a slab made by [`map_slab`].
///
/// # Safety
/// No block of the slab may be in use.
#[cfg(all(unix, not(miri)))]
unsafe fn unmap_slab(base: NonNull<u8>) {
    // SAFETY: the caller's promise; the range is exactly the slab mapped.
    unsafe { libc::munmap(base.as_ptr() as *mut libc::c_void, SLAB_BYTES) };
}

#[cfg(any(not(unix), miri))]
fn slab_layout() -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(SLAB_BYTES, SLAB_BYTES).expect("the slab layout is valid")
}

/// Allocates one zero-filled, [`SLAB_BYTES`]-aligned slab (also the slab
/// under Miri, which has no `mmap` of this shape: the blocks' bookkeeping
/// and pointer arithmetic above it are the same).
#[cfg(any(not(unix), miri))]
fn map_slab() -> NonNull<u8> {
    // SAFETY: the layout has a nonzero size.
    let p = unsafe { std::alloc::alloc_zeroed(slab_layout()) };
    NonNull::new(p).unwrap_or_else(|| std::alloc::handle_alloc_error(slab_layout()))
}

/// Frees a slab made by [`map_slab`].
///
/// # Safety
/// No block of the slab may be in use.
#[cfg(any(not(unix), miri))]
unsafe fn unmap_slab(base: NonNull<u8>) {
    // SAFETY: allocated by `map_slab` with this layout.
    unsafe { std::alloc::dealloc(base.as_ptr(), slab_layout()) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pool() -> &'static SlabPool {
        Box::leak(Box::default())
    }

    #[test]
    fn blocks_are_zeroed_aligned_distinct_and_slabs_go_back() {
        let pool = pool();
        let mut pages: Vec<PageBytes> = (0..BLOCKS + 3).map(|_| PageBytes::zeroed_in(pool)).collect();
        assert_eq!(pool.mapped_slabs(), 2, "33+ blocks take two slabs");
        let mut starts: Vec<usize> = pages.iter().map(|p| p.as_ptr() as usize).collect();
        starts.sort();
        starts.dedup();
        assert_eq!(starts.len(), pages.len(), "no block is handed out twice");
        for (i, p) in pages.iter_mut().enumerate() {
            assert_eq!(p.len(), BLOCK);
            assert_eq!(p.as_ptr() as usize % BLOCK, 0, "blocks sit on page boundaries");
            assert!(p.iter().all(|&b| b == 0), "a new block reads as zero");
            p.fill(i as u8 + 1);
        }
        // Freed and taken again: old bytes are cleared.
        let reused = pages.swap_remove(5);
        drop(reused);
        let again = PageBytes::zeroed_in(pool);
        assert!(again.iter().all(|&b| b == 0), "a reused block reads as zero");
        let copy = PageBytes::copy_of_in(pool, &[7u8; 100]);
        assert!(copy[..100].iter().all(|&b| b == 7) && copy[100..].iter().all(|&b| b == 0));
        drop((pages, again, copy));
        assert_eq!(pool.mapped_slabs(), SPARE_SLABS, "empty slabs are unmapped but one");
    }

    #[test]
    fn blocks_of_a_slab_share_one_aligned_slab() {
        let pool = pool();
        let pages: Vec<PageBytes> = (0..BLOCKS).map(|_| PageBytes::zeroed_in(pool)).collect();
        let base = pages[0].as_ptr() as usize & !(SLAB_BYTES - 1);
        assert!(pages.iter().all(|p| p.as_ptr() as usize & !(SLAB_BYTES - 1) == base));
        assert_eq!(pool.mapped_slabs(), 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 64 }))]
        /// Any sequence of takes and returns keeps every live block's bytes
        /// and hands out only zeroed or exactly copied blocks.
        #[test]
        fn blocks_keep_their_bytes(ops in proptest::collection::vec((any::<bool>(), any::<u8>(), 0usize..64), 1..120)) {
            let pool = pool();
            let mut live: Vec<(PageBytes, u8)> = Vec::new();
            for (take, tag, pick) in ops {
                if take || live.is_empty() {
                    let mut p = if tag % 2 == 0 { PageBytes::zeroed_in(pool) } else { PageBytes::copy_of_in(pool, &vec![tag; BLOCK / 2]) };
                    if tag % 2 == 0 {
                        prop_assert!(p.iter().all(|&b| b == 0));
                    } else {
                        prop_assert!(p[..BLOCK / 2].iter().all(|&b| b == tag) && p[BLOCK / 2..].iter().all(|&b| b == 0));
                    }
                    p.fill(tag);
                    live.push((p, tag));
                } else {
                    live.swap_remove(pick % live.len());
                }
                for (p, tag) in &live {
                    prop_assert!(p[0] == *tag && p[BLOCK - 1] == *tag && p[BLOCK / 3] == *tag);
                }
                let holding: BTreeSet<usize> = live.iter().map(|(p, _)| p.as_ptr() as usize & !(SLAB_BYTES - 1)).collect();
                prop_assert!(pool.mapped_slabs() <= holding.len() + SPARE_SLABS, "only slabs in use and the spare stay mapped");
            }
        }
    }
}
