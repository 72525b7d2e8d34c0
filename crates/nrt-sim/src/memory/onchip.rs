//! On-chip memories (SBUF, PSUM): one contiguous slice per partition.
//!
//! The numerical kernels reach SBUF and PSUM a partition row at a time, a
//! hundred thousand times per millisecond of simulated compute, so their
//! storage is laid out the way they use it: `partitions` independent byte
//! slices, each behind its own lock. A row access is one uncontended lock
//! and one `memcpy`; there is no page table to search and no page to pin.
//! Engines touching different partitions never contend. A partition's slice
//! is allocated (zeroed) on its first write, so an idle core costs nothing,
//! and reads of an untouched partition return zeros.
//!
//! The device also addresses these memories flat, partition-major
//! (`partition * partition_bytes + offset`): [`OnChipMemory::read`],
//! [`OnChipMemory::write`] and [`OnChipMemory::fill`] take such offsets and
//! split them at partition boundaries, and [`copy`] moves bytes between any
//! two regions (on-chip or paged) without a bounce buffer.
//!
//! [`OnChipView`] adapts a memory to the kernels' `OnChipRead` /
//! `OnChipWrite` traits.

use std::sync::{Mutex, MutexGuard};

use crate::memory::copy::copy_bytes;
use crate::kernels::pattern::{MAX_LENT_ROWS, OnChipRead, OnChipWrite, lendable};
use crate::memory::pages::SparsePages;

/// SBUF or PSUM of one core: `partitions` slices of `partition_bytes`.
#[derive(Debug)]
pub struct OnChipMemory {
    partition_bytes: usize,
    parts: Box<[Mutex<Vec<u8>>]>,
}

impl OnChipMemory {
    /// A memory of `partitions` partitions of `partition_bytes` each, all
    /// zero, no partition allocated yet.
    pub fn new(partitions: usize, partition_bytes: usize) -> OnChipMemory {
        OnChipMemory { partition_bytes, parts: (0..partitions).map(|_| Mutex::new(Vec::new())).collect() }
    }

    /// Number of partitions.
    pub fn partitions(&self) -> usize {
        self.parts.len()
    }

    /// Bytes per partition.
    pub fn partition_bytes(&self) -> usize {
        self.partition_bytes
    }

    /// Total bytes (the flat, partition-major length).
    pub fn len(&self) -> u64 {
        (self.parts.len() * self.partition_bytes) as u64
    }

    /// Whether the memory has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Partitions whose storage has been allocated (the memory in use).
    pub fn resident_partitions(&self) -> usize {
        self.parts.iter().filter(|p| !lock(p).is_empty()).count()
    }

    /// The partition's bytes for reading: an empty slice stands for an
    /// untouched, all-zero partition.
    fn part(&self, partition: usize) -> MutexGuard<'_, Vec<u8>> {
        lock(&self.parts[partition])
    }

    /// The partition's bytes for writing, allocated on first use.
    fn part_backed(&self, partition: usize) -> MutexGuard<'_, Vec<u8>> {
        let mut g = lock(&self.parts[partition]);
        if g.is_empty() {
            *g = vec![0u8; self.partition_bytes];
        }
        g
    }

    /// Copies `buf.len()` bytes at `offset` of `partition` into `buf`. The
    /// caller has checked bounds.
    pub fn read_partition(&self, partition: usize, offset: usize, buf: &mut [u8]) {
        let g = self.part(partition);
        if g.is_empty() {
            buf.fill(0);
        } else {
            copy_bytes(buf, &g[offset..offset + buf.len()]);
        }
    }

    /// Stores `data` at `offset` of `partition`. The caller has checked
    /// bounds.
    pub fn write_partition(&self, partition: usize, offset: usize, data: &[u8]) {
        copy_bytes(&mut self.part_backed(partition)[offset..offset + data.len()], data);
    }

    /// Lends bytes `offset..offset + len` of partitions `first..first +
    /// count` to `f` at once (see `OnChipWrite::with_rows_mut`): the
    /// partitions are locked in ascending order, as every holder of more
    /// than one on-chip lock takes them, and allocated if untouched.
    /// Returns false without calling `f` when the range is not lendable.
    pub fn with_rows_mut(&self, first: usize, count: usize, offset: usize, len: usize, f: &mut dyn FnMut(&mut [&mut [u8]])) -> bool {
        if !lendable(self.parts.len(), self.partition_bytes, first, count, offset, len) {
            return false;
        }
        let mut guards: [Option<MutexGuard<'_, Vec<u8>>>; MAX_LENT_ROWS] = std::array::from_fn(|_| None);
        for (g, p) in guards.iter_mut().zip(first..first + count) {
            *g = Some(self.part_backed(p));
        }
        let mut rows: [&mut [u8]; MAX_LENT_ROWS] = std::array::from_fn(|_| Default::default());
        for (r, g) in rows.iter_mut().zip(guards.iter_mut().flatten()) {
            *r = &mut g[offset..offset + len];
        }
        f(&mut rows[..count]);
        true
    }

    /// Walks the flat range `off..off + len` partition by partition, calling
    /// `f(partition, offset in partition, offset in range, length)`.
    fn chunks(&self, off: u64, len: u64, mut f: impl FnMut(usize, usize, usize, usize)) {
        let pb = self.partition_bytes as u64;
        let mut done = 0u64;
        while done < len && pb > 0 {
            let a = off + done;
            let (p, o) = ((a / pb) as usize, a % pb);
            if p >= self.parts.len() {
                return;
            }
            let n = (pb - o).min(len - done);
            f(p, o as usize, done as usize, n as usize);
            done += n;
        }
    }

    /// Copies the bytes at flat offset `off` into `buf`. The caller has
    /// checked bounds; bytes past the end read as zero.
    pub fn read(&self, off: u64, buf: &mut [u8]) {
        buf.fill(0);
        self.chunks(off, buf.len() as u64, |p, po, bo, n| self.read_partition(p, po, &mut buf[bo..bo + n]));
    }

    /// Stores `data` at flat offset `off`. The caller has checked bounds.
    pub fn write(&self, off: u64, data: &[u8]) {
        self.chunks(off, data.len() as u64, |p, po, bo, n| self.write_partition(p, po, &data[bo..bo + n]));
    }

    /// Fills `len` bytes at flat offset `off` with `value`; zero-filling an
    /// untouched partition costs nothing.
    pub fn fill(&self, off: u64, len: u64, value: u8) {
        self.chunks(off, len, |p, po, _, n| {
            let mut g = if value == 0 { self.part(p) } else { self.part_backed(p) };
            if !g.is_empty() {
                g[po..po + n].fill(value);
            }
        });
    }

    /// Drops every partition's storage (all bytes read as zero again).
    pub fn clear(&self) {
        for p in self.parts.iter() {
            *lock(p) = Vec::new();
        }
    }
}

fn lock(m: &Mutex<Vec<u8>>) -> MutexGuard<'_, Vec<u8>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A byte region a device copy can read or write: paged memory (HBM, host)
/// or an on-chip memory.
#[derive(Debug, Clone, Copy)]
pub enum Region<'a> {
    /// Lazily paged memory.
    Paged(&'a SparsePages),
    /// SBUF or PSUM.
    OnChip(&'a OnChipMemory),
}

/// Copies `len` bytes from `src` at `src_off` to `dst` at `dst_off` with no
/// intermediate buffer (the caller has checked both ranges). At most two
/// locks are held at once; two on-chip partitions are locked in address
/// order, so opposite copies cannot deadlock, and a paged region never
/// calls back into on-chip memory while holding a page. Overlapping copies
/// within one region move forward in partition- (or page-) sized chunks,
/// as a DMA engine does.
pub fn copy(src: Region<'_>, src_off: u64, dst: Region<'_>, dst_off: u64, len: u64) {
    match (src, dst) {
        (Region::Paged(s), Region::Paged(d)) => SparsePages::copy_between(s, src_off, d, dst_off, len),
        (Region::Paged(s), Region::OnChip(d)) => d.chunks(dst_off, len, |p, po, bo, n| {
            let mut g = d.part_backed(p);
            s.read(src_off + bo as u64, &mut g[po..po + n]);
        }),
        (Region::OnChip(s), Region::Paged(d)) => s.chunks(src_off, len, |p, po, bo, n| {
            let g = s.part(p);
            if g.is_empty() {
                d.fill(dst_off + bo as u64, n as u64, 0);
            } else {
                d.write(dst_off + bo as u64, &g[po..po + n]);
            }
        }),
        (Region::OnChip(s), Region::OnChip(d)) => copy_onchip(s, src_off, d, dst_off, len),
    }
}

/// On-chip to on-chip: chunks bounded by both sides' partition boundaries.
fn copy_onchip(s: &OnChipMemory, src_off: u64, d: &OnChipMemory, dst_off: u64, len: u64) {
    let (spb, dpb) = (s.partition_bytes as u64, d.partition_bytes as u64);
    if spb == 0 || dpb == 0 {
        return;
    }
    let mut done = 0u64;
    while done < len {
        let (a, b) = (src_off + done, dst_off + done);
        let (sp, so) = ((a / spb) as usize, (a % spb) as usize);
        let (dp, doff) = ((b / dpb) as usize, (b % dpb) as usize);
        if sp >= s.parts.len() || dp >= d.parts.len() {
            return;
        }
        let n = ((spb - so as u64).min(dpb - doff as u64).min(len - done)) as usize;
        let (sm, dm) = (&s.parts[sp], &d.parts[dp]);
        if std::ptr::eq(sm, dm) {
            let mut g = d.part_backed(dp);
            g.copy_within(so..so + n, doff);
        } else {
            // Lock in address order; allocate the destination once locked.
            let src_first = (sm as *const Mutex<Vec<u8>>) < (dm as *const Mutex<Vec<u8>>);
            let (g1, g2) = if src_first { (lock(sm), lock(dm)) } else { (lock(dm), lock(sm)) };
            let (sg, mut dg) = if src_first { (g1, g2) } else { (g2, g1) };
            if dg.is_empty() {
                if sg.is_empty() {
                    done += n as u64;
                    continue;
                }
                *dg = vec![0u8; d.partition_bytes];
            }
            if sg.is_empty() {
                dg[doff..doff + n].fill(0);
            } else {
                copy_bytes(&mut dg[doff..doff + n], &sg[so..so + n]);
            }
        }
        done += n as u64;
    }
}

/// A partition-major view of SBUF or PSUM for the numerical kernels.
/// Out-of-range accesses are the kernels' bug; they read zeros and writes
/// are dropped rather than panic.
#[derive(Debug, Clone, Copy)]
pub struct OnChipView<'a> {
    mem: &'a OnChipMemory,
}

impl<'a> OnChipView<'a> {
    /// A view of `mem`.
    pub fn new(mem: &'a OnChipMemory) -> OnChipView<'a> {
        OnChipView { mem }
    }

    fn in_range(&self, partition: usize, offset: usize, len: usize) -> bool {
        partition < self.mem.partitions() && offset.checked_add(len).is_some_and(|e| e <= self.mem.partition_bytes)
    }
}

impl OnChipRead for OnChipView<'_> {
    fn partitions(&self) -> usize {
        self.mem.partitions()
    }
    fn partition_bytes(&self) -> usize {
        self.mem.partition_bytes
    }
    fn read_partition(&self, partition: usize, offset: usize, buf: &mut [u8]) {
        if self.in_range(partition, offset, buf.len()) {
            self.mem.read_partition(partition, offset, buf);
        } else {
            buf.fill(0);
        }
    }
}

impl OnChipWrite for OnChipView<'_> {
    fn write_partition(&mut self, partition: usize, offset: usize, data: &[u8]) {
        if self.in_range(partition, offset, data.len()) {
            self.mem.write_partition(partition, offset, data);
        }
    }

    fn with_rows_mut(&mut self, first: usize, count: usize, offset: usize, len: usize, f: &mut dyn FnMut(&mut [&mut [u8]])) -> bool {
        self.mem.with_rows_mut(first, count, offset, len, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn partition_major_addressing() {
        let mem = OnChipMemory::new(4, 64);
        let mut v = OnChipView::new(&mem);
        v.write_partition(2, 8, &[1, 2, 3]);
        let mut b = [0u8; 3];
        mem.read(2 * 64 + 8, &mut b);
        assert_eq!(b, [1, 2, 3]);
        v.read_partition(2, 8, &mut b);
        assert_eq!(b, [1, 2, 3]);
        v.write_partition(4, 0, &[9]);
        v.write_partition(0, 63, &[9, 9]);
        assert_eq!(mem.resident_partitions(), 1, "out-of-range writes are dropped");
        v.read_partition(9, 0, &mut b);
        assert_eq!(b, [0, 0, 0]);
        mem.fill(0, 256, 0);
        assert_eq!(mem.resident_partitions(), 1, "zero-filling untouched partitions allocates nothing");
        mem.clear();
        assert_eq!(mem.resident_partitions(), 0);
    }

    #[test]
    fn rows_are_lent_in_place_and_only_in_range() {
        let mem = OnChipMemory::new(4, 64);
        let mut v = OnChipView::new(&mem);
        let mut seen = 0;
        assert!(v.with_rows_mut(1, 2, 8, 4, &mut |rows| {
            seen = rows.len();
            for (i, r) in rows.iter_mut().enumerate() {
                r.copy_from_slice(&[i as u8 + 1; 4]);
            }
        }));
        assert_eq!(seen, 2);
        let mut b = [0u8; 4];
        mem.read(64 + 8, &mut b);
        assert_eq!(b, [1; 4]);
        mem.read(2 * 64 + 8, &mut b);
        assert_eq!(b, [2; 4]);
        assert_eq!(mem.resident_partitions(), 2, "lending allocates only the lent partitions");
        let mut called = false;
        for (first, count, offset, len) in [(3, 2, 0, 4), (0, 1, 61, 4), (0, 129, 0, 1)] {
            assert!(!v.with_rows_mut(first, count, offset, len, &mut |_| called = true), "{first} {count} {offset} {len}");
        }
        assert!(!called, "an out-of-range lending never calls back");
    }

    /// A flat model of every region kind, for the copy property.
    fn flat(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
        /// Flat reads, writes and fills behave like one byte array.
        #[test]
        fn behaves_like_a_flat_array(ops in prop::collection::vec((0u64..1000, 1usize..400, any::<u8>(), any::<bool>()), 1..12)) {
            let mem = OnChipMemory::new(8, 128);
            let mut model = vec![0u8; 1024];
            for (off, n, v, fill) in ops {
                let off = off.min(1023);
                let n = n.min(1024 - off as usize);
                if fill {
                    mem.fill(off, n as u64, v);
                    model[off as usize..off as usize + n].fill(v);
                } else {
                    let data = flat(n, v);
                    mem.write(off, &data);
                    model[off as usize..off as usize + n].copy_from_slice(&data);
                }
            }
            let mut all = vec![1u8; 1024];
            mem.read(0, &mut all);
            prop_assert_eq!(all, model);
        }

        /// Copies between any two region kinds (or within one) match a flat
        /// copy done in the same forward chunks.
        #[test]
        fn copies_match_a_flat_copy(kind in 0u8..5, so in 0u64..900, doff in 0u64..900, len in 0u64..600) {
            let len = len.min(1024 - so).min(1024 - doff);
            let a = OnChipMemory::new(8, 128);
            let b = OnChipMemory::new(16, 64);
            let pa = SparsePages::new(1024);
            let pb = SparsePages::new(1024);
            let init_a = flat(1024, 3);
            let init_b = flat(1024, 101);
            a.write(0, &init_a);
            b.write(0, &init_b);
            pa.write(0, &init_a);
            pb.write(0, &init_b);
            let (src, dst, same) = match kind {
                0 => (Region::OnChip(&a), Region::OnChip(&b), false),
                1 => (Region::Paged(&pa), Region::OnChip(&b), false),
                2 => (Region::OnChip(&a), Region::Paged(&pb), false),
                3 => (Region::Paged(&pa), Region::Paged(&pb), false),
                _ => (Region::OnChip(&a), Region::OnChip(&a), true),
            };
            copy(src, so, dst, doff, len);
            let mut want = if same { init_a.clone() } else { init_b.clone() };
            if same {
                // Forward copy in chunks bounded by the 128-byte partitions.
                let mut done = 0u64;
                while done < len {
                    let (s, d) = (so + done, doff + done);
                    let n = (128 - s % 128).min(128 - d % 128).min(len - done) as usize;
                    want.copy_within(s as usize..s as usize + n, d as usize);
                    done += n as u64;
                }
            } else {
                want[doff as usize..(doff + len) as usize].copy_from_slice(&init_a[so as usize..(so + len) as usize]);
            }
            let mut got = vec![0u8; 1024];
            match dst {
                Region::OnChip(m) => m.read(0, &mut got),
                Region::Paged(p) => p.read(0, &mut got),
            }
            prop_assert_eq!(got, want);
        }
    }
}
