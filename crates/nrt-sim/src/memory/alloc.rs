//! A first-fit allocator with a coalescing free list, one per memory pool.
//!
//! The simulator enforces the configured device size through this
//! allocator; the backing bytes are separate ([`super::pages`]). Offsets are
//! pool-relative. Sizes are rounded up to [`GRANULE`] so neighbouring
//! allocations never share a granule.

use std::collections::BTreeMap;

/// Smallest unit of allocation, in bytes.
pub const GRANULE: u64 = 64;
/// Alignment used when the caller asks for "no particular alignment".
pub const DEFAULT_ALIGN: u64 = 4096;

/// Why an allocation or free was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// No free block can hold the request.
    #[error("no free block holds {requested} bytes aligned to {align}; largest free block is {largest_free} bytes")]
    Exhausted {
        /// Rounded size requested.
        requested: u64,
        /// Alignment requested.
        align: u64,
        /// Largest free block.
        largest_free: u64,
    },
    /// The alignment is not a power of two.
    #[error("alignment {0} is not a power of two")]
    BadAlignment(u64),
    /// `free` of an offset that is not the start of a live allocation.
    #[error("offset {0:#x} is not the start of an allocation")]
    NotAllocated(u64),
}

/// First-fit allocator over `0..capacity`.
#[derive(Debug, Clone)]
pub struct FreeListAllocator {
    capacity: u64,
    /// Free blocks: start -> length, never adjacent (always coalesced).
    free: BTreeMap<u64, u64>,
    /// Live allocations: start -> rounded length.
    live: BTreeMap<u64, u64>,
}

fn round_up(v: u64, to: u64) -> Option<u64> {
    v.checked_add(to - 1).map(|x| x & !(to - 1))
}

impl FreeListAllocator {
    /// An allocator with everything free.
    pub fn new(capacity: u64) -> FreeListAllocator {
        let mut free = BTreeMap::new();
        if capacity > 0 {
            free.insert(0, capacity);
        }
        FreeListAllocator { capacity, free, live: BTreeMap::new() }
    }

    /// Total bytes managed.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Bytes currently allocated (after rounding).
    pub fn used(&self) -> u64 {
        self.live.values().sum()
    }

    /// The largest free block.
    pub fn largest_free(&self) -> u64 {
        self.free.values().copied().max().unwrap_or(0)
    }

    /// Allocates `size` bytes aligned to `align` (0 = [`DEFAULT_ALIGN`]),
    /// returning the pool-relative offset.
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<u64, AllocError> {
        if align != 0 && !align.is_power_of_two() {
            return Err(AllocError::BadAlignment(align));
        }
        let align = if align == 0 { DEFAULT_ALIGN } else { align.max(GRANULE) };
        let exhausted = |s: &Self, requested| AllocError::Exhausted {
            requested,
            align,
            largest_free: s.largest_free(),
        };
        let size = match round_up(size.max(1), GRANULE) {
            Some(s) => s,
            None => return Err(exhausted(self, size)),
        };
        let found = self.free.iter().find_map(|(&start, &len)| {
            let aligned = round_up(start, align)?;
            let end = aligned.checked_add(size)?;
            (end <= start + len).then_some((start, len, aligned))
        });
        let Some((start, len, aligned)) = found else {
            return Err(exhausted(self, size));
        };
        self.free.remove(&start);
        if aligned > start {
            self.free.insert(start, aligned - start);
        }
        let end = aligned + size;
        if end < start + len {
            self.free.insert(end, start + len - end);
        }
        self.live.insert(aligned, size);
        Ok(aligned)
    }

    /// Frees the allocation starting at `offset`, merging it with free
    /// neighbours.
    pub fn free(&mut self, offset: u64) -> Result<(), AllocError> {
        let size = self.live.remove(&offset).ok_or(AllocError::NotAllocated(offset))?;
        let mut start = offset;
        let mut len = size;
        if let Some((&ps, &pl)) = self.free.range(..offset).next_back()
            && ps + pl == offset
        {
            self.free.remove(&ps);
            start = ps;
            len += pl;
        }
        if let Some(&nl) = self.free.get(&(offset + size)) {
            self.free.remove(&(offset + size));
            len += nl;
        }
        self.free.insert(start, len);
        Ok(())
    }

    /// The live allocation containing `offset`, as (start, length).
    pub fn allocation_containing(&self, offset: u64) -> Option<(u64, u64)> {
        self.live
            .range(..=offset)
            .next_back()
            .filter(|&(&s, &l)| offset < s + l)
            .map(|(&s, &l)| (s, l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fills_exactly_and_coalesces() {
        let mut a = FreeListAllocator::new(1 << 20);
        let x = a.alloc(1 << 19, 0).unwrap();
        let y = a.alloc(1 << 19, 0).unwrap();
        assert!(matches!(a.alloc(1, 0), Err(AllocError::Exhausted { .. })));
        a.free(x).unwrap();
        a.free(y).unwrap();
        assert_eq!(a.largest_free(), 1 << 20);
        assert_eq!(a.free(y), Err(AllocError::NotAllocated(y)));
        assert_eq!(a.alloc(16, 3), Err(AllocError::BadAlignment(3)));
    }

    #[test]
    fn alignment_and_lookup() {
        let mut a = FreeListAllocator::new(1 << 20);
        let _ = a.alloc(100, 64).unwrap();
        let b = a.alloc(100, 1 << 16).unwrap();
        assert_eq!(b % (1 << 16), 0);
        assert_eq!(a.allocation_containing(b + 50), Some((b, 128)));
        assert_eq!(a.allocation_containing(b + 128), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
        #[test]
        fn never_overlaps_and_returns_everything(
            ops in prop::collection::vec((1u64..50_000, 0u32..8, any::<bool>(), any::<prop::sample::Index>()), 1..60)
        ) {
            let cap = 1u64 << 20;
            let mut a = FreeListAllocator::new(cap);
            let mut live: Vec<(u64, u64)> = Vec::new();
            for (size, align_log, do_free, pick) in ops {
                if do_free && !live.is_empty() {
                    let (off, _) = live.remove(pick.index(live.len()));
                    a.free(off).unwrap();
                } else {
                    let align = 1u64 << (6 + align_log);
                    if let Ok(off) = a.alloc(size, align) {
                        prop_assert_eq!(off % align, 0);
                        prop_assert!(off + size <= cap);
                        for &(o, s) in &live {
                            prop_assert!(off + size <= o || o + s <= off, "overlap");
                        }
                        live.push((off, size));
                    }
                }
            }
            for (off, _) in live { a.free(off).unwrap(); }
            prop_assert_eq!(a.largest_free(), cap);
            prop_assert_eq!(a.used(), 0);
        }
    }
}
