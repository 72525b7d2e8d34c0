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
                None => dpage.lock().unwrap_or_else(|e| e.into_inner())[doff..doff + n].fill(0),
                Some(spage) if Arc::ptr_eq(&spage, &dpage) => {
                    spage.lock().unwrap_or_else(|e| e.into_inner()).copy_within(so..so + n, doff);
                }
                Some(spage) => {
                    let src_first = Arc::as_ptr(&spage) < Arc::as_ptr(&dpage);
                    let (first, second) = if src_first { (&spage, &dpage) } else { (&dpage, &spage) };
                    let g1 = first.lock().unwrap_or_else(|e| e.into_inner());
                    let g2 = second.lock().unwrap_or_else(|e| e.into_inner());
                    let (sg, mut dg) = if src_first { (g1, g2) } else { (g2, g1) };
                    dg[doff..doff + n].copy_from_slice(&sg[so..so + n]);
                }
            }
            done += n as u64;
        }
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
        fn copy_between_matches_a_flat_copy(src_off in 0u64..200_000, dst_off in 0u64..200_000, len in 0u64..150_000, same in any::<bool>()) {
            let a = SparsePages::new(400_000);
            let b = SparsePages::new(400_000);
            let init: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
            a.write(0, &init);
            let mut flat_a = vec![0u8; 400_000];
            flat_a[..300_000].copy_from_slice(&init);
            let mut flat_b = vec![0u8; 400_000];
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
            let mut got = vec![0u8; 400_000];
            a.read(0, &mut got);
            prop_assert!(got == flat_a, "source region differs");
            b.read(0, &mut got);
            prop_assert!(got == flat_b, "destination region differs");
        }

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
