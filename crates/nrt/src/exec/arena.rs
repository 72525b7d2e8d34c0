//! A first-fit sub-allocator over the core's instruction arena (model
//! images must live inside the stream the dispatchers run on).

use std::collections::BTreeMap;

/// Free space of one arena, in bytes from its start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arena {
    size: u64,
    /// Free ranges: start -> length, never adjacent (merged on free).
    free: BTreeMap<u64, u64>,
    /// Live ranges: start -> length.
    live: BTreeMap<u64, u64>,
}

impl Arena {
    /// An arena of `size` bytes with `reserved` bytes at the start in use.
    pub fn new(size: u64, reserved: u64) -> Arena {
        let mut free = BTreeMap::new();
        if size > reserved {
            free.insert(reserved, size - reserved);
        }
        Arena { size, free, live: BTreeMap::new() }
    }

    /// Total size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Bytes free.
    pub fn free_bytes(&self) -> u64 {
        self.free.values().sum()
    }

    /// Takes `len` bytes aligned to `align` (a power of two); the offset, or
    /// `None` when no free range fits.
    pub fn alloc(&mut self, len: u64, align: u64) -> Option<u64> {
        if len == 0 || !align.is_power_of_two() {
            return None;
        }
        let (start, flen, at) = self.free.iter().find_map(|(&s, &l)| {
            let at = s.checked_next_multiple_of(align)?;
            (at.checked_add(len)? <= s + l).then_some((s, l, at))
        })?;
        self.free.remove(&start);
        if at > start {
            self.free.insert(start, at - start);
        }
        let end = at + len;
        if end < start + flen {
            self.free.insert(end, start + flen - end);
        }
        self.live.insert(at, len);
        Some(at)
    }

    /// Returns a range taken by [`Arena::alloc`]; false if `offset` is not live.
    pub fn free(&mut self, offset: u64) -> bool {
        let Some(len) = self.live.remove(&offset) else { return false };
        let (mut start, mut end) = (offset, offset + len);
        if let Some((&s, &l)) = self.free.range(..start).next_back()
            && s + l == start
        {
            self.free.remove(&s);
            start = s;
        }
        if let Some(l) = self.free.remove(&end) {
            end += l;
        }
        self.free.insert(start, end - start);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn alloc_free_merges_back() {
        let mut a = Arena::new(4096, 1024);
        let x = a.alloc(100, 64).unwrap();
        let y = a.alloc(200, 64).unwrap();
        assert_eq!(x, 1024);
        assert!(y >= x + 100 && y.is_multiple_of(64));
        assert!(a.free(x));
        assert!(!a.free(x));
        assert!(a.free(y));
        assert_eq!(a.free_bytes(), 3072);
        assert_eq!(a.alloc(3072, 64), Some(1024));
        assert_eq!(a.alloc(1, 1), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Live ranges never overlap, stay inside the arena, and freeing
        /// everything restores the whole free space.
        #[test]
        fn ranges_are_disjoint(ops in prop::collection::vec((1u64..500, 0u32..7, any::<bool>()), 1..60)) {
            let mut a = Arena::new(8192, 256);
            let mut live: Vec<(u64, u64)> = Vec::new();
            for (len, align_pow, free_one) in ops {
                if free_one && !live.is_empty() {
                    let (o, _) = live.remove(0);
                    prop_assert!(a.free(o));
                } else if let Some(o) = a.alloc(len, 1 << align_pow) {
                    prop_assert!(o >= 256 && o + len <= 8192 && o % (1 << align_pow) == 0);
                    for &(p, l) in &live { prop_assert!(o + len <= p || p + l <= o); }
                    live.push((o, len));
                }
            }
            for (o, _) in live { prop_assert!(a.free(o)); }
            prop_assert_eq!(a.free_bytes(), 8192 - 256);
        }
    }
}
