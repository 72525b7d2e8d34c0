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
//! a 4-byte aligned word never spans two pages). No `unsafe` is needed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

/// Bytes per backing page.
pub const PAGE_SIZE: u64 = 64 << 10;

type Page = Mutex<Box<[u8]>>;

/// A sparse, lazily allocated byte array of a fixed length.
#[derive(Debug)]
pub struct SparsePages {
    len: u64,
    pages: RwLock<HashMap<u64, Arc<Page>>>,
}

impl SparsePages {
    /// A region of `len` bytes, all zero, costing no page memory yet.
    pub fn new(len: u64) -> SparsePages {
        SparsePages { len, pages: RwLock::new(HashMap::new()) }
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
        table
            .entry(index)
            .or_insert_with(|| Arc::new(Mutex::new(vec![0u8; PAGE_SIZE as usize].into_boxed_slice())))
            .clone()
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
            match self.page(pi) {
                Some(p) => dst.copy_from_slice(&p.lock().unwrap_or_else(|e| e.into_inner())[po..po + n]),
                None => dst.fill(0),
            }
        });
    }

    /// Copies `data` to `off`, materialising pages as needed. The caller
    /// has checked bounds.
    pub fn write(&self, off: u64, data: &[u8]) {
        Self::chunks(off, data.len() as u64, |pi, po, bo, n| {
            let p = self.page_or_insert(pi);
            p.lock().unwrap_or_else(|e| e.into_inner())[po..po + n].copy_from_slice(&data[bo..bo + n]);
        });
    }

    /// Fills `len` bytes at `off` with `value`. Filling untouched pages with
    /// zero costs nothing.
    pub fn fill(&self, off: u64, len: u64, value: u8) {
        Self::chunks(off, len, |pi, po, _, n| {
            let page = if value == 0 { self.page(pi) } else { Some(self.page_or_insert(pi)) };
            if let Some(p) = page {
                p.lock().unwrap_or_else(|e| e.into_inner())[po..po + n].fill(value);
            }
        });
    }

    /// Drops every page (all bytes read as zero again).
    pub fn clear(&self) {
        self.pages.write().unwrap_or_else(|e| e.into_inner()).clear();
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn behaves_like_a_flat_array(ops in prop::collection::vec((0u64..300_000, 1usize..100_000, any::<u8>(), any::<bool>()), 1..12)) {
            let len = 400_000u64;
            let m = SparsePages::new(len);
            let mut flat = vec![0u8; len as usize];
            for (off, n, v, fill) in ops {
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
