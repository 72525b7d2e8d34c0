//! On-chip memories (SBUF, PSUM) seen as `[partition][bytes]` by the
//! numerical kernels: an adapter from the lazily backed core memory to the
//! kernels' `OnChipRead` / `OnChipWrite` traits.

use crate::kernels::pattern::{OnChipRead, OnChipWrite};
use crate::memory::pages::SparsePages;

/// A partition-major view of SBUF or PSUM. Out-of-range accesses are the
/// kernels' bug; they read zeros and writes are dropped rather than panic.
#[derive(Debug, Clone, Copy)]
pub struct OnChipView<'a> {
    pages: &'a SparsePages,
    partitions: usize,
    partition_bytes: usize,
}

impl<'a> OnChipView<'a> {
    /// A view of `pages` as `partitions` partitions of `partition_bytes`.
    pub fn new(pages: &'a SparsePages, partitions: usize, partition_bytes: usize) -> OnChipView<'a> {
        OnChipView { pages, partitions, partition_bytes }
    }

    fn offset(&self, partition: usize, offset: usize, len: usize) -> Option<u64> {
        (partition < self.partitions && offset.checked_add(len)? <= self.partition_bytes)
            .then(|| (partition * self.partition_bytes + offset) as u64)
    }
}

impl OnChipRead for OnChipView<'_> {
    fn partitions(&self) -> usize {
        self.partitions
    }
    fn partition_bytes(&self) -> usize {
        self.partition_bytes
    }
    fn read_partition(&self, partition: usize, offset: usize, buf: &mut [u8]) {
        match self.offset(partition, offset, buf.len()) {
            Some(o) => self.pages.read(o, buf),
            None => buf.fill(0),
        }
    }
}

impl OnChipWrite for OnChipView<'_> {
    fn write_partition(&mut self, partition: usize, offset: usize, data: &[u8]) {
        if let Some(o) = self.offset(partition, offset, data.len()) {
            self.pages.write(o, data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_major_addressing() {
        let pages = SparsePages::new(4 * 64);
        let mut v = OnChipView::new(&pages, 4, 64);
        v.write_partition(2, 8, &[1, 2, 3]);
        let mut b = [0u8; 3];
        pages.read(2 * 64 + 8, &mut b);
        assert_eq!(b, [1, 2, 3]);
        v.read_partition(2, 8, &mut b);
        assert_eq!(b, [1, 2, 3]);
        v.write_partition(4, 0, &[9]);
        v.write_partition(0, 63, &[9, 9]);
        assert_eq!(pages.resident_pages(), 1, "out-of-range writes are dropped");
        v.read_partition(9, 0, &mut b);
        assert_eq!(b, [0, 0, 0]);
    }
}
